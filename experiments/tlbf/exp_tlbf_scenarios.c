/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_tlbf_scenarios.c: beyond the paper, an idle gap of 3T and a daily
 * sinusoidal rate.
 *
 * Filters of span T = 60 s for fp 0.1, 0.01 and 0.001, created for the base
 * rate of 1,000 items/s (Poisson).
 *
 * Idle: the base rate until 3T, nothing during [3T, 6T), the base rate
 * again until 9T. Every T/100 the slices, memory and current_fp, every T/20
 * fresh keys. The keys of the last span before the gap are queried again
 * at 4.5T (inside the gap, more than T after the last add: the filter must
 * report none of them) and at 6.5T (after the restart: they must come back
 * only at the rate of never-inserted keys, queried beside them).
 *
 * Sine: rate(t) = 1000 (1 + 0.8 sin(2 pi t / 20T)) items/s, a day
 * compressed to 20 spans (20 minutes), for two days (40T). Every T/25 the
 * slices, memory and current_fp, every T/5 fresh keys. Memory is compared
 * with what an APBF of the same (k, l) sized for the items of the last span
 * would need.
 *
 * Every inserted key is queried at its t + T.
 *
 * Writes docs/results/tlbf/scenario_{idle,sine}_fp<fp>.csv, the fragments
 * idle and sine, and work/scenarios.plot.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tlbf_scenario.h"

#define T TLBF_SIM_SPAN
#define KIB 1024.0

#define IDLE_START (3 * T)
#define IDLE_END (6 * T)
#define IDLE_DURATION (9 * T)
#define IDLE_STEP (T / 100)
#define IDLE_PROBE_EVERY 5 /* T / 20 */
#define IDLE_INSIDE (IDLE_START + 3 * T / 2)
#define IDLE_AFTER (IDLE_END + T / 2)

#define SINE_PERIOD (20 * T)
#define SINE_AMPLITUDE 0.8
#define SINE_DURATION (40 * T)
#define SINE_STEP (T / 25)
#define SINE_PROBE_EVERY 5 /* T / 5 */
#define SINE_FROM T         /* the first span is warm-up */

typedef struct idle_row {
    uint32_t k, l;
    tlbf_disturbance d;
    uint64_t old_keys, inside_hits;   /* at 4.5T                     */
    uint64_t after_old_hits;          /* at 6.5T, same keys          */
    uint64_t after_probes, after_probe_hits;
    uint64_t resets;
    double memory_in_gap;             /* memory_bytes during the gap */
    double memory_after_min;          /* lowest memory after restart */
    int64_t slices_back, memory_back; /* after the restart           */
    double fp_max_after;              /* current_fp from 7T          */
} idle_row;

typedef struct sine_row {
    uint32_t k, l;
    double fp_max, fp_min;
    int64_t fp_max_at;
    double measured_max;
    int64_t measured_max_at;
    uint64_t measured_max_hits, measured_max_probes;
    tlbf_pooled pooled;
    double memory_max, memory_min, slices_max, slices_min;
    double over_ideal_max, over_ideal_mean, over_ideal_min;
} sine_row;

static double spans(int64_t t)
{
    return t == INT64_MAX ? NAN : (double)t / (double)T;
}

/* ------------------------------------------------------------------------ */
/* Idle gap                                                                 */
/* ------------------------------------------------------------------------ */

static void run_idle(exp_context *ctx, unsigned f, idle_row *row)
{
    tlbf_profile profile = tlbf_profile_step(TLBF_SCENARIO_RATE, 0.0,
                                             IDLE_START, IDLE_END);
    tlbf_scenario sc;
    tlbf_scenario_open(&sc, ctx, "idle", f, f, &profile, IDLE_DURATION,
                       IDLE_STEP, IDLE_PROBE_EVERY);
    tlbf_scenario_sample_until(&sc, IDLE_INSIDE);
    row->inside_hits = tlbf_run_requery(&sc.run, IDLE_START - T, IDLE_START,
                                        IDLE_INSIDE, &row->old_keys);
    tlbf_scenario_sample_until(&sc, IDLE_AFTER);
    uint64_t asked;
    row->after_old_hits = tlbf_run_requery(&sc.run, IDLE_START - T,
                                           IDLE_START, IDLE_AFTER, &asked);
    row->after_probes = asked;
    row->after_probe_hits = tlbf_run_probe(&sc.run, IDLE_AFTER, asked);
    tlbf_scenario_sample_until(&sc, IDLE_DURATION);
    tlbf_scenario_finish(&sc);
    tlbf_scenario_check_oracle(ctx, &sc);

    const tlbf_sample *s = sc.samples;
    size_t n = sc.count;
    row->k = s[0].stats.k;
    row->l = s[0].stats.l;
    row->resets = s[n - 1].stats.resets;
    tlbf_disturbance_analyse(&sc, IDLE_START, IDLE_END, &row->d);
    row->memory_in_gap = tlbf_series_max(s, n, IDLE_START + T, IDLE_END,
                                         tlbf_metric_memory, NULL);
    row->memory_after_min = tlbf_series_min(s, n, IDLE_END, INT64_MAX,
                                            tlbf_metric_memory, NULL);
    double kl = (double)(row->k + row->l);
    row->slices_back = tlbf_series_settled(s, n, IDLE_END, 0.9 * kl,
                                           1.1 * kl, tlbf_metric_slices);
    row->memory_back = tlbf_series_settled(s, n, IDLE_END,
                                           0.8 * row->d.ref_memory,
                                           1.25 * row->d.ref_memory,
                                           tlbf_metric_memory);
    row->fp_max_after = tlbf_series_max(s, n, IDLE_END + T, INT64_MAX,
                                        tlbf_metric_current_fp, NULL);
    tlbf_scenario_free(&sc);
}

static void check_idle(exp_context *ctx, unsigned f, const idle_row *r)
{
    const char *fp = tlbf_scenario_fp_labels[f];
    exp_check(ctx, EXP_CHECK_GUARANTEE, r->inside_hits == 0,
              "idle fp %s: %" PRIu64 " of the %" PRIu64 " keys of the span "
              "before the gap reported at 4.5T, T after the last add (must "
              "be 0)",
              fp, r->inside_hits, r->old_keys);
    exp_check(ctx, EXP_CHECK_GUARANTEE, r->resets == 1,
              "idle fp %s: the first add after the gap reset the filter "
              "(%" PRIu64 " resets, 1 expected)",
              fp, r->resets);
    /* After the restart the old keys are just keys the filter never saw:
     * their rate must match that of fresh probes at the same moment. */
    double n = (double)r->old_keys;
    double p1 = (double)r->after_old_hits / n;
    double p2 = (double)r->after_probe_hits / (double)r->after_probes;
    double pooled = (p1 * n + p2 * (double)r->after_probes) /
                    (n + (double)r->after_probes);
    double sd = sqrt(pooled * (1.0 - pooled) *
                     (1.0 / n + 1.0 / (double)r->after_probes));
    double z = sd > 0.0 ? (p1 - p2) / sd : 0.0;
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              "idle fp %s: pre-gap keys at 6.5T reported at %.4g, fresh keys "
              "at %.4g (z %+.2f)",
              fp, p1, p2, z);
    double kl = (double)(r->k + r->l);
    exp_check(ctx, EXP_CHECK_STAT, fabs(r->d.final_slices - kl) <= 0.1 * kl,
              "idle fp %s: slices over the last span %.1f within 10%% of k + "
              "l = %.0f",
              fp, r->d.final_slices, kl);
}

static void write_idle(exp_context *ctx, const idle_row rows[])
{
    FILE *md = exp_open_fragment(ctx, "idle");
    fprintf(md, "| fp | (k, l) | pre-gap keys reported at 4.5T (in the "
                "gap) | at 6.5T (after the restart) | fresh keys at 6.5T | "
                "resets | memory before · held in the gap · lowest after | "
                "slices within 10%% of k + l | memory within 0.8x–1.25x of "
                "before | current_fp from 7T, peak / target |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        const idle_row *r = &rows[f];
        fprintf(md,
                "| %s | (%u, %u) | %" PRIu64 " / %" PRIu64 " | %" PRIu64
                " / %" PRIu64 " (%.4g) | %" PRIu64 " / %" PRIu64
                " (%.4g) | %" PRIu64 " | %.0f · %.0f · %.0f KiB | %.2f T "
                "after the gap | %.2f T after the gap | %.3f |\n",
                tlbf_scenario_fp_labels[f], r->k, r->l, r->inside_hits,
                r->old_keys, r->after_old_hits, r->old_keys,
                (double)r->after_old_hits / (double)r->old_keys,
                r->after_probe_hits, r->after_probes,
                (double)r->after_probe_hits / (double)r->after_probes,
                r->resets, r->d.ref_memory / KIB, r->memory_in_gap / KIB,
                r->memory_after_min / KIB,
                spans(r->slices_back) - spans(IDLE_END),
                spans(r->memory_back) - spans(IDLE_END),
                r->fp_max_after / tlbf_scenario_fps[f]);
    }
    exp_close(md, "idle");
}

/* ------------------------------------------------------------------------ */
/* Daily sinusoid                                                           */
/* ------------------------------------------------------------------------ */

/* memory_bytes over what the APBF formula asks for the items of the last
 * span: how far the filter is from one sized for the current load. */
static uint32_t ideal_k, ideal_l;

static double metric_over_ideal(const tlbf_sample *s)
{
    if (s->items_in_span == 0)
        return NAN;
    double ideal = tlbf_apbf_bits_per_item(ideal_k, ideal_l) *
                   (double)s->items_in_span / 8.0;
    return (double)s->stats.memory_bytes / ideal;
}

static double metric_measured(const tlbf_sample *s)
{
    return tlbf_sample_measured_fp(s);
}

static void run_sine(exp_context *ctx, unsigned f, sine_row *row)
{
    tlbf_profile profile = tlbf_profile_sine(TLBF_SCENARIO_RATE,
                                             SINE_AMPLITUDE, SINE_PERIOD);
    tlbf_scenario sc;
    tlbf_scenario_open(&sc, ctx, "sine", TLBF_SCENARIO_FPS + f, f, &profile,
                       SINE_DURATION, SINE_STEP, SINE_PROBE_EVERY);
    tlbf_scenario_sample_until(&sc, SINE_DURATION);
    tlbf_scenario_finish(&sc);
    tlbf_scenario_check_oracle(ctx, &sc);

    const tlbf_sample *s = sc.samples;
    size_t n = sc.count;
    int64_t end = INT64_MAX;
    row->k = ideal_k = s[0].stats.k;
    row->l = ideal_l = s[0].stats.l;
    row->fp_max = tlbf_series_max(s, n, SINE_FROM, end,
                                  tlbf_metric_current_fp, &row->fp_max_at);
    row->fp_min = tlbf_series_min(s, n, SINE_FROM, end,
                                  tlbf_metric_current_fp, NULL);
    row->measured_max = tlbf_series_max(s, n, SINE_FROM, end,
                                        metric_measured,
                                        &row->measured_max_at);
    for (size_t i = 0; i < n; i++)
        if (s[i].t == row->measured_max_at) {
            row->measured_max_hits = s[i].hits;
            row->measured_max_probes = s[i].probes;
        }
    row->pooled = tlbf_series_pool(s, n, SINE_FROM, end);
    row->memory_max = tlbf_series_max(s, n, SINE_FROM, end,
                                      tlbf_metric_memory, NULL);
    row->memory_min = tlbf_series_min(s, n, SINE_FROM, end,
                                      tlbf_metric_memory, NULL);
    row->slices_max = tlbf_series_max(s, n, SINE_FROM, end,
                                      tlbf_metric_slices, NULL);
    row->slices_min = tlbf_series_min(s, n, SINE_FROM, end,
                                      tlbf_metric_slices, NULL);
    row->over_ideal_max = tlbf_series_max(s, n, SINE_FROM, end,
                                          metric_over_ideal, NULL);
    row->over_ideal_min = tlbf_series_min(s, n, SINE_FROM, end,
                                          metric_over_ideal, NULL);
    row->over_ideal_mean = tlbf_series_mean(s, n, SINE_FROM, end,
                                            metric_over_ideal);
    tlbf_scenario_free(&sc);
}

static void check_sine(exp_context *ctx, unsigned f, const sine_row *r)
{
    const char *fp = tlbf_scenario_fp_labels[f];
    double target = tlbf_scenario_fps[f];
    exp_check(ctx, EXP_CHECK_STAT, r->fp_max <= 1.25 * target,
              "sine fp %s: current_fp from T at most %.4g <= 1.25 x target",
              fp, r->fp_max);
    const tlbf_pooled *p = &r->pooled;
    double model = p->expected / (double)p->probes;
    double z = exp_binomial_z(p->hits, p->probes, model);
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              "sine fp %s: measured fp %" PRIu64 "/%" PRIu64
              " agrees with mean current_fp %.4g (z %+.2f)",
              fp, p->hits, p->probes, model, z);
}

static void write_sine(exp_context *ctx, const sine_row rows[])
{
    FILE *md = exp_open_fragment(ctx, "sine");
    fprintf(md, "| fp | (k, l) | current_fp / target, min – max (peak at) "
                "| measured fp (pooled) / target | highest sample / target "
                "(hits/probes) | memory, min – max | slices, min – max | "
                "memory / ideal APBF for the last span's items, min · mean "
                "· max |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        const sine_row *r = &rows[f];
        double target = tlbf_scenario_fps[f];
        const tlbf_pooled *p = &r->pooled;
        fprintf(md,
                "| %s | (%u, %u) | %.3f – %.3f (%.2f T) | %.3f (%" PRIu64
                "/%" PRIu64 ") | %.3f (%" PRIu64 "/%" PRIu64 ") | %.0f – "
                "%.0f KiB | %.0f – %.0f | %.2f · %.2f · %.2f |\n",
                tlbf_scenario_fp_labels[f], r->k, r->l, r->fp_min / target,
                r->fp_max / target, spans(r->fp_max_at),
                (double)p->hits / (double)p->probes / target, p->hits,
                p->probes, r->measured_max / target, r->measured_max_hits,
                r->measured_max_probes, r->memory_min / KIB,
                r->memory_max / KIB, r->slices_min, r->slices_max,
                r->over_ideal_min, r->over_ideal_mean, r->over_ideal_max);
    }
    exp_close(md, "sine");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "tlbf_scenarios", argc, argv);
    idle_row idles[TLBF_SCENARIO_FPS];
    sine_row sines[TLBF_SCENARIO_FPS];
    uint32_t k[TLBF_SCENARIO_FPS], l[TLBF_SCENARIO_FPS];
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        run_idle(&ctx, f, &idles[f]);
        check_idle(&ctx, f, &idles[f]);
        run_sine(&ctx, f, &sines[f]);
        check_sine(&ctx, f, &sines[f]);
        k[f] = idles[f].k;
        l[f] = idles[f].l;
    }
    write_idle(&ctx, idles);
    write_sine(&ctx, sines);
    tlbf_scenario_plot_meta(&ctx, "scenarios", k, l);
    fprintf(ctx.md, "Runs: idle gap (9 spans) and sinusoid (40 spans) for "
                    "%d fp, base rate %.0f items/s (Poisson).\n",
            TLBF_SCENARIO_FPS, TLBF_SCENARIO_RATE);
    return exp_end(&ctx);
}
