/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_tlbf_rates.c: beyond the paper, steady state across rates.
 *
 * The paper measures one rate. The filter sizes its slices from the rate it
 * observes, so at a low rate a generation (T / l) holds only a few items
 * and Poisson noise, rounding and the per-slice overheads weigh more. One
 * filter per (fp, rate), span T = 60 s, Poisson arrivals at a constant
 * rate from 10 to 30,000 items/s, created for the right capacity; from 2T
 * to 4T, every T/100, the bits per item of the last span (slice bits and
 * memory_bytes) and current_fp, and fresh keys every T/20 (200 false
 * positives at the target in all). Every inserted key is queried at its
 * t + T.
 *
 * Writes docs/results/tlbf/rates.csv (one row per run), the fragment rates
 * and work/rates.plot.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tlbf_sim.h"

#define FPS 3
#define RATES 8
#define SPANS 4
#define SAMPLES_PER_SPAN 100
#define PROBE_EVERY 5
#define STEADY_FROM (2 * TLBF_SIM_SPAN)
#define EXPECTED_HITS 200.0
#define SAMPLES (SPANS * SAMPLES_PER_SPAN)

static const double fps[FPS] = {0.1, 0.01, 0.001};
static const char *const fp_labels[FPS] = {"0.1", "0.01", "0.001"};
static const double rates[RATES] = {10, 30, 100, 300, 1000, 3000, 10000,
                                    30000};

typedef struct rate_row {
    uint32_t k, l;
    double rate, per_generation;
    double slice_bits, bits, slices, current_fp;
    tlbf_pooled pooled;
    double apbf;
    double mean_fill, capacity_spread; /* of the finished slices at 4T */
} rate_row;

static double metric_bits(const tlbf_sample *s)
{
    return tlbf_sample_bits_per_item(s);
}

static double metric_slice_bits(const tlbf_sample *s)
{
    return tlbf_sample_slice_bits_per_item(s);
}

static void run_rate(exp_context *ctx, unsigned f, unsigned r,
                     tlbf_sample *samples, rate_row *out)
{
    double per_span = rates[r] * (double)TLBF_SIM_SPAN /
                      (double)TLBF_SIM_SECOND;
    tlbf_profile profile = tlbf_profile_constant(rates[r]);
    tlbf_run run;
    tlbf_run_init(&run, ctx, f * RATES + r, fps[f], (uint64_t)per_span,
                  &profile);
    size_t probing = (SAMPLES - (size_t)(STEADY_FROM / (TLBF_SIM_SPAN /
                                                        SAMPLES_PER_SPAN))) /
                     PROBE_EVERY;
    uint64_t probes = tlbf_probes_for(fps[f], EXPECTED_HITS) / probing;
    for (size_t j = 0; j < SAMPLES; j++) {
        int64_t q = (int64_t)(j + 1) * (TLBF_SIM_SPAN / SAMPLES_PER_SPAN);
        bool probe = q > STEADY_FROM && (j + 1) % PROBE_EVERY == 0;
        tlbf_run_sample(&run, q, probe ? probes : 0, &samples[j]);
    }
    tlbf_run_fill_stats(&run, &out->mean_fill, &out->capacity_spread);
    tlbf_run_finish(&run);
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              run.false_negatives == 0 && run.add_errors == 0,
              "fp %s at %.0f/s: no false negative among %" PRIu64
              " keys queried at t + T (%" PRIu64 " missed, %" PRIu64
              " failed adds)",
              fp_labels[f], rates[r], run.oracle_checked,
              run.false_negatives, run.add_errors);

    int64_t end = INT64_MAX;
    out->k = samples[0].stats.k;
    out->l = samples[0].stats.l;
    out->rate = rates[r];
    out->per_generation = per_span / (double)out->l;
    out->slice_bits = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                       metric_slice_bits);
    out->bits = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                 metric_bits);
    out->slices = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                   tlbf_metric_slices);
    out->current_fp = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                       tlbf_metric_current_fp);
    out->pooled = tlbf_series_pool(samples, SAMPLES, STEADY_FROM, end);
    out->apbf = tlbf_apbf_bits_per_item(out->k, out->l);
    tlbf_run_free(&run);
}

static double measured(const rate_row *r)
{
    return (double)r->pooled.hits / (double)r->pooled.probes;
}

static void write_outputs(exp_context *ctx, rate_row rows[FPS][RATES])
{
    FILE *csv = exp_open_csv(ctx, "rates.csv");
    fputs("fp,k,l,rate_per_s,items_per_generation,slice_bits_per_item,"
          "bits_per_item,apbf_bits_per_item,slices,current_fp,probes,hits,"
          "measured_fp,measured_over_target,current_over_target,mean_fill,"
          "capacity_spread\n",
          csv);
    FILE *md = exp_open_fragment(ctx, "rates");
    fprintf(md, "| fp | (k, l) | rate /s | items per generation | slice "
                "bits per item (APBF) | memory_bytes·8 per item | slices | "
                "measured fp / target | current_fp / target | finished slices: "
                "mean n/c · largest c / smallest c |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < FPS; f++)
        for (unsigned r = 0; r < RATES; r++) {
            const rate_row *x = &rows[f][r];
            fprintf(csv,
                    "%s,%u,%u,%.0f,%.2f,%.4f,%.4f,%.4f,%.2f,%.6g,%" PRIu64
                    ",%" PRIu64 ",%.6g,%.4f,%.4f,%.4f,%.4f\n",
                    fp_labels[f], x->k, x->l, x->rate, x->per_generation,
                    x->slice_bits, x->bits, x->apbf, x->slices, x->current_fp,
                    x->pooled.probes, x->pooled.hits, measured(x),
                    measured(x) / fps[f], x->current_fp / fps[f], x->mean_fill,
                    x->capacity_spread);
            fprintf(md,
                    "| %s | (%u, %u) | %.0f | %.1f | %.2f (%.2f) | %.2f | "
                    "%.1f | %.3f | %.3f | %.3f · %.2f |\n",
                    fp_labels[f], x->k, x->l, x->rate, x->per_generation,
                    x->slice_bits, x->apbf, x->bits, x->slices,
                    measured(x) / fps[f], x->current_fp / fps[f],
                    x->mean_fill, x->capacity_spread);
        }
    exp_close(csv, "rates.csv");
    exp_close(md, "rates");
}

static void check_rates(exp_context *ctx, rate_row rows[FPS][RATES])
{
    for (unsigned f = 0; f < FPS; f++)
        for (unsigned r = 0; r < RATES; r++) {
            const rate_row *x = &rows[f][r];
            double model = x->pooled.expected / (double)x->pooled.probes;
            double z = exp_binomial_z(x->pooled.hits, x->pooled.probes,
                                      model);
            exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
                      "fp %s at %.0f/s: measured fp %" PRIu64 "/%" PRIu64
                      " agrees with mean current_fp %.4g (z %+.2f)",
                      fp_labels[f], x->rate, x->pooled.hits,
                      x->pooled.probes, model, z);
            double bound = 1.25 * fps[f];
            double allowed = bound * (double)x->pooled.probes +
                             3.0 * sqrt(bound * (double)x->pooled.probes);
            exp_check(ctx, EXP_CHECK_GUARANTEE,
                      (double)x->pooled.hits <= allowed,
                      "issue bar: fp %s at %.0f/s: measured fp %.4g <= 1.25 "
                      "x target (%" PRIu64 " hits, at most %.0f allowed)",
                      fp_labels[f], x->rate, measured(x), x->pooled.hits,
                      allowed);
        }
}

static void write_plot_meta(const exp_context *ctx)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rates.plot", ctx->work_dir);
    FILE *meta = fopen(path, "w");
    if (meta == NULL)
        exp_die("cannot write %s", path);
    fprintf(meta, "array fps[%d] = [", FPS);
    for (unsigned f = 0; f < FPS; f++)
        fprintf(meta, "%s\"%s\"", f ? ", " : "", fp_labels[f]);
    fprintf(meta, "]\n");
    exp_close(meta, "rates.plot");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "tlbf_rates", argc, argv);
    tlbf_sample *samples = malloc(SAMPLES * sizeof *samples);
    if (samples == NULL)
        exp_die("out of memory");
    static rate_row rows[FPS][RATES];
    for (unsigned f = 0; f < FPS; f++)
        for (unsigned r = 0; r < RATES; r++)
            run_rate(&ctx, f, r, samples, &rows[f][r]);
    free(samples);
    check_rates(&ctx, rows);
    write_outputs(&ctx, rows);
    write_plot_meta(&ctx);
    fprintf(ctx.md, "Runs: %d fp x %d rates, %d spans of 60 s (Poisson), "
                    "steady state from 2T.\n",
            FPS, RATES, SPANS);
    return exp_end(&ctx);
}
