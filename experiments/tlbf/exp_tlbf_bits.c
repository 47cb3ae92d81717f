/*
 * exp_tlbf_bits.c: the TLBF paper's Table 2, bits per element at steady
 * state for fp 0.1 ... 1e-5, beside an APBF of the same (k, l).
 *
 * One filter per fp, span T = 60 s, Poisson arrivals at 10,000 items/s
 * (600,000 per span: large enough that the slice descriptors and block
 * rounding stay small beside the bits), created for the right capacity.
 * From 2T to 4T, every T/100, the bits per item of the last T: the filter's
 * memory_bytes * 8 over the exact number of items inserted during the last
 * T, and the slices' bits alone (the paper's notion); every T/20 fresh keys
 * are queried (200 false positives at the target in all) for the measured
 * rate. Every inserted key is queried at its t + T.
 *
 * Writes docs/results/tlbf/table2.csv and the fragment table2.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ebb/apbf.h"
#include "tlbf_sim.h"

#define FPS 5
#define RATE 10000.0
#define SPANS 4
#define SAMPLES_PER_SPAN 100
#define PROBE_EVERY 5 /* samples: T / 20 */
#define STEADY_FROM (2 * TLBF_SIM_SPAN)
#define EXPECTED_HITS 200.0
#define SAMPLES (SPANS * SAMPLES_PER_SPAN)

static const double fps[FPS] = {0.1, 0.01, 0.001, 1e-4, 1e-5};
static const char *const fp_labels[FPS] = {"0.1", "0.01", "0.001", "1e-4",
                                           "1e-5"};
/* Table 2 of the paper: bits per element, min and max. */
static const double paper_min[FPS] = {10, 19, 26, 32, 41};
static const double paper_max[FPS] = {13, 24, 35, 45, 56};

typedef struct row {
    uint32_t k, l;
    double bits, bits_min, bits_max;
    double slice_bits, slice_bits_min, slice_bits_max;
    double slices, slices_min, slices_max;
    double apbf_formula, apbf_memory;
    tlbf_pooled pooled;
    uint64_t oracle_checked, false_negatives, add_errors;
} row;

static double metric_bits(const tlbf_sample *s)
{
    return tlbf_sample_bits_per_item(s);
}

static double metric_slice_bits(const tlbf_sample *s)
{
    return tlbf_sample_slice_bits_per_item(s);
}

/* Bits per window item of ebb's APBF with the same (k, l) for the window
 * of one span at RATE, from the bytes it holds. */
static double apbf_memory_bits(uint32_t k, uint32_t l, uint64_t window)
{
    ebb_apbf_params p;
    size_t bytes;
    exp_require(ebb_apbf_params_from_kl(k, l, window, &p),
                "ebb_apbf_params_from_kl");
    exp_require(ebb_apbf_params_memory(&p, &bytes), "ebb_apbf_params_memory");
    return (double)bytes * 8.0 / (double)window;
}

static void run_row(exp_context *ctx, unsigned f, tlbf_sample *samples,
                    FILE *csv, row *out)
{
    uint64_t per_span = (uint64_t)(RATE * (double)TLBF_SIM_SPAN /
                                   (double)TLBF_SIM_SECOND);
    tlbf_profile profile = tlbf_profile_constant(RATE);
    tlbf_run run;
    tlbf_run_init(&run, ctx, f, fps[f], per_span, &profile);
    size_t probing_samples = (SPANS * SAMPLES_PER_SPAN -
                              (size_t)(STEADY_FROM / (TLBF_SIM_SPAN /
                                                      SAMPLES_PER_SPAN))) /
                             PROBE_EVERY;
    uint64_t probes = tlbf_probes_for(fps[f], EXPECTED_HITS) /
                      probing_samples;
    for (size_t j = 0; j < SAMPLES; j++) {
        int64_t q = (int64_t)(j + 1) * (TLBF_SIM_SPAN / SAMPLES_PER_SPAN);
        bool probing = q > STEADY_FROM && (j + 1) % PROBE_EVERY == 0;
        tlbf_run_sample(&run, q, probing ? probes : 0, &samples[j]);
        fprintf(csv, "%s,", fp_labels[f]);
        tlbf_sample_csv_row(csv, &samples[j], TLBF_SIM_SPAN);
    }
    tlbf_run_finish(&run);

    int64_t end = INT64_MAX;
    out->k = samples[0].stats.k;
    out->l = samples[0].stats.l;
    out->bits = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                 metric_bits);
    out->bits_min = tlbf_series_min(samples, SAMPLES, STEADY_FROM, end,
                                    metric_bits, NULL);
    out->bits_max = tlbf_series_max(samples, SAMPLES, STEADY_FROM, end,
                                    metric_bits, NULL);
    out->slice_bits = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                       metric_slice_bits);
    out->slice_bits_min = tlbf_series_min(samples, SAMPLES, STEADY_FROM, end,
                                          metric_slice_bits, NULL);
    out->slice_bits_max = tlbf_series_max(samples, SAMPLES, STEADY_FROM, end,
                                          metric_slice_bits, NULL);
    out->slices = tlbf_series_mean(samples, SAMPLES, STEADY_FROM, end,
                                   tlbf_metric_slices);
    out->slices_min = tlbf_series_min(samples, SAMPLES, STEADY_FROM, end,
                                      tlbf_metric_slices, NULL);
    out->slices_max = tlbf_series_max(samples, SAMPLES, STEADY_FROM, end,
                                      tlbf_metric_slices, NULL);
    out->apbf_formula = tlbf_apbf_bits_per_item(out->k, out->l);
    out->apbf_memory = apbf_memory_bits(out->k, out->l, per_span);
    out->pooled = tlbf_series_pool(samples, SAMPLES, STEADY_FROM, end);
    out->oracle_checked = run.oracle_checked;
    out->false_negatives = run.false_negatives;
    out->add_errors = run.add_errors;
    tlbf_run_free(&run);
}

static const char *placement(double v, unsigned f)
{
    return v < paper_min[f] ? "below" : v > paper_max[f] ? "above" : "inside";
}

static void check_row(exp_context *ctx, unsigned f, const row *r)
{
    const char *fp = fp_labels[f];
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              r->false_negatives == 0 && r->add_errors == 0,
              "fp %s: no false negative among %" PRIu64
              " keys queried at t + T (%" PRIu64 " missed, %" PRIu64
              " failed adds)",
              fp, r->oracle_checked, r->false_negatives, r->add_errors);
    /* The paper's range for 0.1 and 0.01; our least-memory (k, l) need
     * fewer bits than its range from 0.001 on (docs/apbf.md): documented,
     * so checked to still differ. */
    if (f < 2)
        exp_check(ctx, EXP_CHECK_PAPER,
                  r->slice_bits >= paper_min[f] &&
                      r->slice_bits <= paper_max[f],
                  "fp %s: %.2f slice bits per item inside the paper's "
                  "%.0f-%.0f",
                  fp, r->slice_bits, paper_min[f], paper_max[f]);
    else
        exp_check(ctx, EXP_CHECK_DISCREPANCY, r->slice_bits < paper_min[f],
                  "fp %s: %.2f slice bits per item below the paper's "
                  "%.0f-%.0f (least-memory (k, l) = (%u, %u))",
                  fp, r->slice_bits, paper_min[f], paper_max[f], r->k, r->l);
    exp_check(ctx, EXP_CHECK_STAT,
              fabs(r->slice_bits - r->apbf_formula) <= 0.05 * r->apbf_formula,
              "fp %s: %.2f slice bits per item within 5%% of the APBF's "
              "(k + l) k / (l ln 2) = %.2f",
              fp, r->slice_bits, r->apbf_formula);
    const tlbf_pooled *p = &r->pooled;
    double model = p->expected / (double)p->probes;
    double z = exp_binomial_z(p->hits, p->probes, model);
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              "fp %s: measured fp %" PRIu64 "/%" PRIu64
              " agrees with mean current_fp %.4g (z %+.2f)",
              fp, p->hits, p->probes, model, z);
    double bound = 1.25 * fps[f];
    double allowed = bound * (double)p->probes +
                     3.0 * sqrt(bound * (double)p->probes);
    exp_check(ctx, EXP_CHECK_GUARANTEE, (double)p->hits <= allowed,
              "issue bar: fp %s: measured fp %.4g <= 1.25 x target (%" PRIu64
              " hits, at most %.0f allowed)",
              fp, (double)p->hits / (double)p->probes, p->hits, allowed);
}

/* One line per fp for the plot beside the paper's ranges. */
static void write_summary_csv(exp_context *ctx, const row rows[FPS])
{
    FILE *csv = exp_open_csv(ctx, "table2_summary.csv");
    fputs("fp,k,l,paper_min,paper_max,slice_bits_per_item,slice_bits_min,"
          "slice_bits_max,bits_per_item,apbf_bits_per_item,"
          "apbf_memory_bits_per_item,slices,measured_fp\n",
          csv);
    for (unsigned f = 0; f < FPS; f++) {
        const row *r = &rows[f];
        fprintf(csv, "%g,%u,%u,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,"
                     "%.6g\n",
                fps[f], r->k, r->l, paper_min[f], paper_max[f],
                r->slice_bits, r->slice_bits_min, r->slice_bits_max, r->bits,
                r->apbf_formula, r->apbf_memory, r->slices,
                (double)r->pooled.hits / (double)r->pooled.probes);
    }
    exp_close(csv, "table2_summary.csv");
}

static void write_table(exp_context *ctx, const row rows[FPS])
{
    FILE *md = exp_open_fragment(ctx, "table2");
    fprintf(md, "| fp | (k, l) | paper: bits/element | ours: slice bits "
                "per item, mean (min – max) | vs paper | ours: "
                "memory_bytes·8 per item, mean (min – max) | APBF (k+l)k/(l "
                "ln 2) | ebb APBF, same (k, l), bytes held | slices, mean "
                "(min – max) | k + l | measured fp / target |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < FPS; f++) {
        const row *r = &rows[f];
        double measured = (double)r->pooled.hits / (double)r->pooled.probes;
        fprintf(md,
                "| %s | (%u, %u) | %.0f – %.0f | %.2f (%.2f – %.2f) | %s | "
                "%.2f (%.2f – %.2f) | %.2f | %.2f | %.1f (%.0f – %.0f) | %u | "
                "%.3f |\n",
                fp_labels[f], r->k, r->l, paper_min[f], paper_max[f],
                r->slice_bits, r->slice_bits_min, r->slice_bits_max,
                placement(r->slice_bits, f), r->bits, r->bits_min,
                r->bits_max, r->apbf_formula, r->apbf_memory, r->slices,
                r->slices_min, r->slices_max, r->k + r->l,
                measured / fps[f]);
    }
    exp_close(md, "table2");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "tlbf_bits", argc, argv);
    tlbf_sample *samples = malloc(SAMPLES * sizeof *samples);
    if (samples == NULL)
        exp_die("out of memory");
    FILE *csv = exp_open_csv(&ctx, "table2.csv");
    fputs("fp,", csv);
    tlbf_sample_csv_header(csv);
    row rows[FPS];
    for (unsigned f = 0; f < FPS; f++) {
        run_row(&ctx, f, samples, csv, &rows[f]);
        check_row(&ctx, f, &rows[f]);
    }
    exp_close(csv, "table2.csv");
    free(samples);
    write_table(&ctx, rows);
    write_summary_csv(&ctx, rows);
    fprintf(ctx.md, "Runs: %d fp, %d spans of 60 s at %.0f items/s "
                    "(Poisson), steady state from 2T.\n",
            FPS, SPANS, RATE);
    return exp_end(&ctx);
}
