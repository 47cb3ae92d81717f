/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_tlbf_burst.c: beyond the paper, a 10x burst for one span and a drop
 * to a tenth of the rate.
 *
 * Filters of span T = 60 s for fp 0.1, 0.01 and 0.001, created for the base
 * rate of 1,000 items/s (Poisson). Burst: 10,000 items/s during [3T, 4T),
 * the base rate before and after, until 8T. Drop: 100 items/s from 3T on,
 * until 8T. Every T/100: the slice count, the memory, stats.current_fp;
 * every T/20 fresh keys (100 false positives at the target) for the
 * measured rate. Every inserted key is queried at its t + T.
 *
 * For the burst: the peaks of fp and memory against the span before it, and
 * the time from the end of the burst until they stay within 1.25x of their
 * pre-burst level (the issue asks for 2T at most). For the drop: how long
 * the memory takes to come down, and the fp meanwhile.
 *
 * Writes docs/results/tlbf/scenario_{burst,drop}_fp<fp>.csv, the fragments
 * burst and drop, and work/burst.plot.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tlbf_scenario.h"

#define T TLBF_SIM_SPAN
#define STEP (T / 100)
#define PROBE_EVERY 5 /* T / 20 */
#define EVENT_START (3 * T)
#define BURST_END (4 * T)
#define DURATION (8 * T)
#define KIB 1024.0

typedef struct burst_row {
    uint32_t k, l;
    tlbf_disturbance d;
} burst_row;

typedef struct drop_row {
    uint32_t k, l;
    tlbf_disturbance d;
    double fp_max_after, fp_min_after;
    int64_t memory_settled;
    tlbf_pooled final_pool;
} drop_row;

static double spans(int64_t t)
{
    return (double)t / (double)T;
}

/* "0.84 T", or "never" when the value did not come back by the end. */
static void format_recovery(char *buf, size_t size, double after)
{
    if (isnan(after))
        snprintf(buf, size, "not by %.0f T", spans(DURATION));
    else
        snprintf(buf, size, "%.2f T", after);
}

static void run_burst(exp_context *ctx, unsigned f, burst_row *row)
{
    tlbf_profile profile = tlbf_profile_step(TLBF_SCENARIO_RATE, 10.0,
                                             EVENT_START, BURST_END);
    tlbf_scenario sc;
    tlbf_scenario_open(&sc, ctx, "burst", f, f, &profile, DURATION, STEP,
                       PROBE_EVERY);
    tlbf_scenario_sample_until(&sc, DURATION);
    tlbf_scenario_finish(&sc);
    tlbf_scenario_check_oracle(ctx, &sc);
    row->k = sc.samples[0].stats.k;
    row->l = sc.samples[0].stats.l;
    tlbf_disturbance_analyse(&sc, EVENT_START, BURST_END, &row->d);
    tlbf_scenario_free(&sc);
}

static void check_burst(exp_context *ctx, unsigned f, const burst_row *r)
{
    const char *fp = tlbf_scenario_fp_labels[f];
    const tlbf_disturbance *d = &r->d;
    double fp_after = tlbf_recovery_after(d, d->fp_back);
    double memory_after = tlbf_recovery_after(d, d->memory_back);
    double measured_after = tlbf_recovery_after(d, d->measured_back);
    exp_check(ctx, EXP_CHECK_GUARANTEE, fp_after <= 2.0,
              "issue bar: burst fp %s: current_fp back within 1.25x of its "
              "pre-burst peak %.4g %.2f T after the burst (<= 2T)",
              fp, d->ref_fp, fp_after);
    exp_check(ctx, EXP_CHECK_GUARANTEE, memory_after <= 2.0,
              "issue bar: burst fp %s: memory back within 1.25x of its "
              "pre-burst peak %.0f bytes %.2f T after the burst (<= 2T)",
              fp, d->ref_memory, memory_after);
    exp_check(ctx, EXP_CHECK_STAT, measured_after <= 2.0,
              "burst fp %s: measured fp back within 1.25x of its pre-burst "
              "rate %.4g (+3 sd) %.2f T after the burst (<= 2T)",
              fp, d->ref_measured, measured_after);
    double kl = (double)(r->k + r->l);
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              fabs(d->final_slices - kl) <= 0.1 * kl,
              "issue bar: burst fp %s: slices over the last span %.1f within "
              "10%% of k + l = %.0f",
              fp, d->final_slices, kl);
}

static void write_burst(exp_context *ctx, const burst_row rows[])
{
    FILE *md = exp_open_fragment(ctx, "burst");
    fprintf(md, "| fp | (k, l) | before: current_fp peak · measured · memory "
                "peak · slices | current_fp peak (at) | measured peak "
                "(hits/probes, at) | memory peak (at) | slices peak (at) | "
                "current_fp back within 1.25x | measured back | memory "
                "back | slices, last span |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        const burst_row *r = &rows[f];
        const tlbf_disturbance *d = &r->d;
        char fp_back[32], measured_back[32], memory_back[32];
        format_recovery(fp_back, sizeof fp_back,
                        tlbf_recovery_after(d, d->fp_back));
        format_recovery(measured_back, sizeof measured_back,
                        tlbf_recovery_after(d, d->measured_back));
        format_recovery(memory_back, sizeof memory_back,
                        tlbf_recovery_after(d, d->memory_back));
        fprintf(md,
                "| %s | (%u, %u) | %.4g · %.4g · %.0f KiB · %.1f | %.4g "
                "(%.2fx, %.2f T) | %.4g (%" PRIu64 "/%" PRIu64 ", %.2fx, "
                "%.2f T) | %.0f KiB (%.1fx, %.2f T) | %.0f (%.2f T) | %s | "
                "%s | %s | %.1f (k + l = %u) |\n",
                tlbf_scenario_fp_labels[f], r->k, r->l, d->ref_fp,
                d->ref_measured, d->ref_memory / KIB, d->ref_slices,
                d->peak_fp, d->peak_fp / d->ref_fp, spans(d->peak_fp_at),
                d->peak_measured, d->peak_measured_hits,
                d->peak_measured_probes, d->peak_measured / d->ref_measured,
                spans(d->peak_measured_at), d->peak_memory / KIB,
                d->peak_memory / d->ref_memory, spans(d->peak_memory_at),
                d->peak_slices, spans(d->peak_slices_at), fp_back,
                measured_back, memory_back, d->final_slices, r->k + r->l);
    }
    fprintf(md, "\n");
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        const tlbf_disturbance *d = &rows[f].d;
        double fp_after = tlbf_recovery_after(d, d->fp_back);
        double memory_after = tlbf_recovery_after(d, d->memory_back);
        double worst = isnan(fp_after) || isnan(memory_after)
                           ? NAN
                           : fmax(fp_after, memory_after);
        char back[32];
        format_recovery(back, sizeof back, worst);
        double early = (double)d->early.hits / (double)d->early.probes;
        double early_model = d->early.expected / (double)d->early.probes;
        fprintf(md,
                "- fp %s: stats.current_fp peaks at %.2fx its pre-burst "
                "peak; over the first quarter of the burst the measured rate "
                "is %.4g (%" PRIu64 "/%" PRIu64 ", %.2fx the pre-burst "
                "measured rate; current_fp there averages %.4g). The memory "
                "peaks at %.1fx. Both are back within 1.25x of their "
                "pre-burst level %s after the burst ends: the issue's bar "
                "of 2T %s.\n",
                tlbf_scenario_fp_labels[f], d->peak_fp / d->ref_fp, early,
                d->early.hits, d->early.probes, early / d->ref_measured,
                early_model, d->peak_memory / d->ref_memory, back,
                worst <= 2.0 ? "holds" : "is NOT met");
    }
    exp_close(md, "burst");
}

static void run_drop(exp_context *ctx, unsigned f, drop_row *row)
{
    tlbf_profile profile = tlbf_profile_step(TLBF_SCENARIO_RATE, 0.1,
                                             EVENT_START, INT64_MAX);
    tlbf_scenario sc;
    tlbf_scenario_open(&sc, ctx, "drop", TLBF_SCENARIO_FPS + f, f, &profile,
                       DURATION, STEP, PROBE_EVERY);
    tlbf_scenario_sample_until(&sc, DURATION);
    tlbf_scenario_finish(&sc);
    tlbf_scenario_check_oracle(ctx, &sc);
    row->k = sc.samples[0].stats.k;
    row->l = sc.samples[0].stats.l;
    tlbf_disturbance *d = &row->d;
    tlbf_disturbance_analyse(&sc, EVENT_START, EVENT_START, d);
    row->fp_max_after = tlbf_series_max(sc.samples, sc.count, EVENT_START,
                                        INT64_MAX, tlbf_metric_current_fp,
                                        NULL);
    row->fp_min_after = tlbf_series_min(sc.samples, sc.count, EVENT_START,
                                        INT64_MAX, tlbf_metric_current_fp,
                                        NULL);
    row->memory_settled = tlbf_series_settled(
        sc.samples, sc.count, EVENT_START, 0.8 * d->final_memory,
        1.25 * d->final_memory, tlbf_metric_memory);
    row->final_pool = tlbf_series_pool(sc.samples, sc.count, DURATION - 2 * T,
                                       INT64_MAX);
    tlbf_scenario_free(&sc);
}

static void check_drop(exp_context *ctx, unsigned f, const drop_row *r)
{
    const char *fp = tlbf_scenario_fp_labels[f];
    double target = tlbf_scenario_fps[f];
    double settled = tlbf_recovery_after(&r->d, r->memory_settled);
    exp_check(ctx, EXP_CHECK_STAT, settled <= 2.0,
              "drop fp %s: memory within 0.8x-1.25x of its final level %.2f "
              "T after the drop (<= 2T)",
              fp, settled);
    exp_check(ctx, EXP_CHECK_STAT, r->fp_max_after <= 1.25 * target,
              "drop fp %s: current_fp after the drop at most %.4g <= 1.25 x "
              "target",
              fp, r->fp_max_after);
    double kl = (double)(r->k + r->l);
    exp_check(ctx, EXP_CHECK_STAT, fabs(r->d.final_slices - kl) <= 0.1 * kl,
              "drop fp %s: slices over the last span %.1f within 10%% of k "
              "+ l = %.0f",
              fp, r->d.final_slices, kl);
}

static void write_drop(exp_context *ctx, const drop_row rows[])
{
    FILE *md = exp_open_fragment(ctx, "drop");
    fprintf(md, "| fp | (k, l) | memory before (peak) | memory, last span "
                "(mean) | ratio | memory within 0.8x–1.25x of its final "
                "level | current_fp after the drop, min – max / target | "
                "measured fp, last 2T / target | slices, last span |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        const drop_row *r = &rows[f];
        const tlbf_disturbance *d = &r->d;
        double target = tlbf_scenario_fps[f];
        char settled[32];
        format_recovery(settled, sizeof settled,
                        tlbf_recovery_after(d, r->memory_settled));
        double measured = (double)r->final_pool.hits /
                          (double)r->final_pool.probes;
        fprintf(md,
                "| %s | (%u, %u) | %.0f KiB | %.1f KiB | %.3f | %s after the "
                "drop | %.3f – %.3f | %.3f (%" PRIu64 "/%" PRIu64 ") | %.1f "
                "(k + l = %u) |\n",
                tlbf_scenario_fp_labels[f], r->k, r->l, d->ref_memory / KIB,
                d->final_memory / KIB, d->final_memory / d->ref_memory,
                settled, r->fp_min_after / target, r->fp_max_after / target,
                measured / target, r->final_pool.hits, r->final_pool.probes,
                d->final_slices, r->k + r->l);
    }
    exp_close(md, "drop");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "tlbf_burst", argc, argv);
    burst_row bursts[TLBF_SCENARIO_FPS];
    drop_row drops[TLBF_SCENARIO_FPS];
    uint32_t k[TLBF_SCENARIO_FPS], l[TLBF_SCENARIO_FPS];
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++) {
        run_burst(&ctx, f, &bursts[f]);
        check_burst(&ctx, f, &bursts[f]);
        run_drop(&ctx, f, &drops[f]);
        check_drop(&ctx, f, &drops[f]);
        k[f] = bursts[f].k;
        l[f] = bursts[f].l;
    }
    write_burst(&ctx, bursts);
    write_drop(&ctx, drops);
    tlbf_scenario_plot_meta(&ctx, "burst", k, l);
    fprintf(ctx.md, "Runs: burst and drop for %d fp, 8 spans of 60 s, base "
                    "rate %.0f items/s (Poisson).\n",
            TLBF_SCENARIO_FPS, TLBF_SCENARIO_RATE);
    return exp_end(&ctx);
}
