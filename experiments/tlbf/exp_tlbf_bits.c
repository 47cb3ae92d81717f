/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_tlbf_bits.c: the TLBF paper's Table 2, bits per element at steady
 * state for fp 0.1 ... 1e-5, the way the paper measured it: filters of
 * several (k, l) combinations per fp, created under- and over-dimensioned,
 * and the range of what they hold.
 *
 * The paper names neither its combinations nor its initial capacities, but
 * its ranges are those of the APBF paper's Table 2 combinations (five
 * (k, l) per fp, docs/results/apbf.md): an APBF or a TLBF at a steady rate
 * holds (k + l) k / (l ln 2) bits per element. So, per fp:
 *
 *   - each of those five (k, l), given explicitly (ebb_tlbf_config.k, .l),
 *     created for 0.5x and for 2x the real rate: 10 runs at 2,000 items/s
 *     (T = 60 s; slice bits per item do not depend on the rate once a
 *     generation holds a few hundred items), each measured for 2T after
 *     a warm-up that grows with k / l (paper_warm_up);
 *   - ebb's own default, the (k, l) the chooser picks for the fp (least
 *     memory), created for the right rate: 4 spans at 10,000 items/s (its
 *     l reaches 348, and a generation should hold thousands of items),
 *     measured from 2T to 4T.
 *
 * Every T/100, the bits per item of the last T: the filter's memory_bytes
 * * 8 over the exact number of items inserted during the last T, and the
 * slices' bits alone (the paper's notion); every T/20 fresh keys are
 * queried (200 false positives in all at the shape's ebb_apbf_fp(k, l),
 * or at the target for the default shape) for the measured
 * rate. Every inserted key is queried at its t + T.
 *
 * Writes docs/results/tlbf/table2.csv (the default runs' time series),
 * table2_runs.csv (one line per run), table2_summary.csv (one per fp) and
 * the fragment table2.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ebb/apbf.h"
#include "tlbf_sim.h"

#define FPS 5
#define COMBOS 5
#define DIMS 2
#define PAPER_RUNS (FPS * COMBOS * DIMS)
#define RUNS (PAPER_RUNS + FPS)
#define SAMPLES_PER_SPAN 100
#define PROBE_EVERY 5 /* samples: T / 20 */
#define EXPECTED_HITS 200.0

/* The runs of the paper's combinations and of ebb's default shape. */
#define PAPER_RATE 2000.0
#define STEADY_SPANS 2
/* Shifts the rate estimate needs, at most, to come within 1/8 of the rate
 * from 2x or 0.5x: a first measurement, then quarter steps, each leaving
 * 3/4 of the gap (0.75^7 < 1/7). Inside 1/8, a significant departure is
 * taken at once (next_estimate in src/tlbf/tlbf.c). */
#define CONVERGENCE_SHIFTS 8
#define DEFAULT_RATE 10000.0
#define DEFAULT_STEADY_FROM (2 * TLBF_SIM_SPAN)

/* Within 1/8 of the rate, the estimate moves only when the count since
 * its base (which then spans up to T) departs from the estimate's by more
 * than three Poisson standard deviations (docs/tlbf.md, rule 5). So at a
 * steady rate it settles within about 3 / sqrt(N) of the rate, N the items
 * of a span, give or take the spread of the observation it last took:
 * the sizing f = estimate / rate is held to 1 +- SIZING_SIGMAS / sqrt(N)
 * (1.2% at PAPER_RATE). */
#define SIZING_SIGMAS 4.0

static const double fps[FPS] = {0.1, 0.01, 0.001, 1e-4, 1e-5};
static const char *const fp_labels[FPS] = {"0.1", "0.01", "0.001", "1e-4",
                                           "1e-5"};
/* Table 2 of the paper: bits per element, min and max. */
static const double paper_min[FPS] = {10, 19, 26, 32, 41};
static const double paper_max[FPS] = {13, 24, 35, 45, 56};
/* Whether the paper's minimum is, within one bit, the least analytic value
 * of the five combinations (its maximum always is the largest): only at
 * 0.01. Elsewhere it is lower than any combination's, a documented
 * discrepancy. */
static const bool paper_min_is_analytic[FPS] = {false, true, false, false,
                                                false};
/* Initial capacity over the items of a span: under- and over-dimensioned. */
static const double dims[DIMS] = {0.5, 2.0};

typedef struct run_spec {
    unsigned f;          /* index of the fp                               */
    uint32_t k, l;       /* 0, 0: the library's choice                    */
    double dim;          /* initial capacity / items per span             */
    double rate;         /* items per second                              */
    int64_t steady_from; /* relative ns: the end of the warm-up          */
    int64_t end;         /* relative ns: steady_from + 2T                 */
    uint32_t unit;       /* tells the runs' streams and seeds apart       */
} run_spec;

typedef struct row {
    run_spec spec;
    uint32_t k, l;
    double bits, bits_min, bits_max;
    double slice_bits, slice_bits_min, slice_bits_max;
    double slices, slices_min, slices_max;
    double sizing;       /* f: estimate / true items per generation, end  */
    double sizing_tol;   /* what f is held to: SIZING_SIGMAS / sqrt(N)    */
    double analytic;     /* (k + l) k / (l ln 2)                          */
    double model;        /* (f k + l) k / (l ln 2)                        */
    double apbf_memory;
    double shape_fp;     /* ebb_apbf_fp(k, l)                             */
    tlbf_pooled pooled;
    uint64_t oracle_checked, false_negatives, add_errors;
} row;

/* Slice bits per item of a steady filter whose slices are sized for f
 * times the items of a generation: a generation then lasts f T / l, about
 * k + l / f slices are live, each f times larger. f = 1 is the APBF's
 * (k + l) k / (l ln 2). */
static double sized_bits_per_item(uint32_t k, uint32_t l, double f)
{
    return tlbf_apbf_bits_per_item(k, l) * (f * (double)k + (double)l) /
           (double)(k + l);
}

static bool is_default(const run_spec *s)
{
    return s->k == 0;
}

static uint64_t items_per_span(const run_spec *s)
{
    return (uint64_t)(s->rate * (double)TLBF_SIM_SPAN /
                      (double)TLBF_SIM_SECOND);
}

/* Bits per window item of ebb's APBF with the same (k, l) for the window
 * of one span, from the bytes it holds. */
static double apbf_memory_bits(uint32_t k, uint32_t l, uint64_t window)
{
    ebb_apbf_params p;
    size_t bytes;
    exp_require(ebb_apbf_params_from_kl(k, l, window, &p),
                "ebb_apbf_params_from_kl");
    exp_require(ebb_apbf_params_memory(&p, &bytes), "ebb_apbf_params_memory");
    return (double)bytes * 8.0 / (double)window;
}

/* Mean, min and max of a metric over the steady state. */
static void steady_series(const tlbf_sample *samples, size_t n, int64_t from,
                          tlbf_metric metric, double *mean, double *least,
                          double *most)
{
    *mean = tlbf_series_mean(samples, n, from, INT64_MAX, metric);
    *least = tlbf_series_min(samples, n, from, INT64_MAX, metric, NULL);
    *most = tlbf_series_max(samples, n, from, INT64_MAX, metric, NULL);
}

static void run_row(exp_context *ctx, const run_spec *spec, FILE *series_csv,
                    row *out)
{
    uint64_t per_span = items_per_span(spec);
    uint64_t initial = (uint64_t)llround(spec->dim * (double)per_span);
    tlbf_profile profile = tlbf_profile_constant(spec->rate);
    tlbf_run run;
    tlbf_run_init_shape(&run, ctx, spec->unit, fps[spec->f], spec->k,
                        spec->l, initial, &profile);
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(run.filter, &stats);
    double shape_fp = ebb_apbf_fp(stats.k, stats.l);
    /* 200 false positives at what the run is held to (check_row). */
    double aim = is_default(spec) ? fps[spec->f] : shape_fp;

    int64_t step = TLBF_SIM_SPAN / SAMPLES_PER_SPAN;
    size_t n = (size_t)(spec->end / step);
    tlbf_sample *samples = malloc(n * sizeof *samples);
    if (samples == NULL)
        exp_die("out of memory");
    size_t probing_samples =
        (n - (size_t)(spec->steady_from / step)) / PROBE_EVERY;
    uint64_t probes =
        tlbf_probes_for(aim, EXPECTED_HITS) / probing_samples;
    for (size_t j = 0; j < n; j++) {
        int64_t q = (int64_t)(j + 1) * step;
        bool probing = q > spec->steady_from && (j + 1) % PROBE_EVERY == 0;
        tlbf_run_sample(&run, q, probing ? probes : 0, &samples[j]);
        if (series_csv != NULL) {
            fprintf(series_csv, "%s,", fp_labels[spec->f]);
            tlbf_sample_csv_row(series_csv, &samples[j], TLBF_SIM_SPAN);
        }
    }
    tlbf_run_finish(&run);

    int64_t from = spec->steady_from;
    out->spec = *spec;
    out->k = stats.k;
    out->l = stats.l;
    steady_series(samples, n, from, tlbf_sample_bits_per_item, &out->bits, &out->bits_min,
                  &out->bits_max);
    steady_series(samples, n, from, tlbf_sample_slice_bits_per_item, &out->slice_bits,
                  &out->slice_bits_min, &out->slice_bits_max);
    steady_series(samples, n, from, tlbf_metric_slices, &out->slices,
                  &out->slices_min, &out->slices_max);
    out->sizing = (double)tlbf_run_estimate(&run) * (double)out->l /
                  (double)per_span;
    out->sizing_tol = SIZING_SIGMAS / sqrt((double)per_span);
    out->analytic = tlbf_apbf_bits_per_item(out->k, out->l);
    out->model = sized_bits_per_item(out->k, out->l, out->sizing);
    out->apbf_memory = apbf_memory_bits(out->k, out->l, per_span);
    out->shape_fp = shape_fp;
    out->pooled = tlbf_series_pool(samples, n, from, INT64_MAX);
    out->oracle_checked = run.oracle_checked;
    out->false_negatives = run.false_negatives;
    out->add_errors = run.add_errors;
    tlbf_run_free(&run);
    free(samples);
}

/* ------------------------------------------------------------------------ */
/* Verdicts                                                                 */
/* ------------------------------------------------------------------------ */

static bool inside_paper(double v, unsigned f)
{
    return v >= paper_min[f] && v <= paper_max[f];
}

static const char *placement(double v, unsigned f)
{
    return v < paper_min[f] ? "below" : v > paper_max[f] ? "above" : "inside";
}

/* "(k, l) 0.5x", "(k, l) 2x" or "(k, l) default", for the check lines. */
static void describe(const row *r, char *buf, size_t size)
{
    if (is_default(&r->spec))
        snprintf(buf, size, "fp %s: (%u, %u) ebb default",
                 fp_labels[r->spec.f], r->k, r->l);
    else
        snprintf(buf, size, "fp %s: (%u, %u) %gx", fp_labels[r->spec.f], r->k,
                 r->l, r->spec.dim);
}

/* The paper's Table 2 for one run of a paper combination (the rule on the
 * page): inside the printed range; or, as a documented discrepancy, only
 * where the combination's own analytic value lies outside it (the paper
 * truncates: (4, 3) at fp 0.1 holds 13.47 bits, printed as a maximum of
 * 13), and then at that value within the sizing tolerance. */
static void check_paper_bits(exp_context *ctx, const row *r, const char *who)
{
    unsigned f = r->spec.f;
    double low = sized_bits_per_item(r->k, r->l, 1.0 - r->sizing_tol);
    double high = sized_bits_per_item(r->k, r->l, 1.0 + r->sizing_tol);
    bool inside = inside_paper(r->slice_bits, f);
    bool at_analytic = !inside_paper(r->analytic, f) &&
                       r->slice_bits >= low && r->slice_bits <= high;
    exp_check(ctx, inside ? EXP_CHECK_PAPER : EXP_CHECK_DISCREPANCY,
              inside || at_analytic,
              "%s: %.2f slice bits per item %s the paper's %.0f-%.0f; "
              "(k + l) k / (l ln 2) = %.2f is %s it, and the sizing "
              "1 +- %.4f gives %.2f-%.2f",
              who, r->slice_bits, placement(r->slice_bits, f), paper_min[f],
              paper_max[f], r->analytic, placement(r->analytic, f),
              r->sizing_tol, low, high);
}

/* ebb's default shape: inside the range at 0.1 and 0.01; below it from
 * 0.001 on (least memory, docs/apbf.md), documented, so checked to still
 * differ. */
static void check_default_bits(exp_context *ctx, const row *r,
                               const char *who)
{
    unsigned f = r->spec.f;
    if (f < 2)
        exp_check(ctx, EXP_CHECK_PAPER, inside_paper(r->slice_bits, f),
                  "%s: %.2f slice bits per item inside the paper's %.0f-%.0f",
                  who, r->slice_bits, paper_min[f], paper_max[f]);
    else
        exp_check(ctx, EXP_CHECK_DISCREPANCY, r->slice_bits < paper_min[f],
                  "%s: %.2f slice bits per item below the paper's %.0f-%.0f "
                  "(least memory)",
                  who, r->slice_bits, paper_min[f], paper_max[f]);
}

static void check_row(exp_context *ctx, const row *r)
{
    char who[64];
    describe(r, who, sizeof who);
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              r->false_negatives == 0 && r->add_errors == 0,
              "%s: no false negative among %" PRIu64
              " keys queried at t + T (%" PRIu64 " missed, %" PRIu64
              " failed adds)",
              who, r->oracle_checked, r->false_negatives, r->add_errors);
    if (is_default(&r->spec))
        check_default_bits(ctx, r, who);
    else
        check_paper_bits(ctx, r, who);
    /* Fatal: the Table 2 verdict (check_paper_bits) relies on it. */
    exp_check(ctx, EXP_CHECK_GUARANTEE, fabs(r->sizing - 1.0) <= r->sizing_tol,
              "%s: the rate estimate settled at %.4f of the rate (held to "
              "1 +- %.4f)",
              who, r->sizing, r->sizing_tol);
    exp_check(ctx, EXP_CHECK_STAT,
              fabs(r->slice_bits - r->model) <= 0.05 * r->model,
              "%s: %.2f slice bits per item within 5%% of (f k + l) k / "
              "(l ln 2) = %.2f at the filter's sizing f = %.3f",
              who, r->slice_bits, r->model, r->sizing);
    const tlbf_pooled *p = &r->pooled;
    double model = p->expected / (double)p->probes;
    double z = exp_binomial_z(p->hits, p->probes, model);
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              "%s: measured fp %" PRIu64 "/%" PRIu64
              " agrees with mean current_fp %.4g (z %+.2f)",
              who, p->hits, p->probes, model, z);
    /* The bar, against the target for ebb's default and against
     * the shape's own worst case ebb_apbf_fp(k, l) for a given shape (the
     * library does not read fp then). */
    double target = is_default(&r->spec) ? fps[r->spec.f] : r->shape_fp;
    double bound = 1.25 * target;
    double allowed = bound * (double)p->probes +
                     3.0 * sqrt(bound * (double)p->probes);
    exp_check(ctx, EXP_CHECK_GUARANTEE, (double)p->hits <= allowed,
              "issue bar: %s: measured fp %.4g <= 1.25 x %s %.4g (%" PRIu64
              " hits, at most %.0f allowed)",
              who, (double)p->hits / (double)p->probes,
              is_default(&r->spec) ? "target" : "ebb_apbf_fp(k, l)", target,
              p->hits, allowed);
}

/* ------------------------------------------------------------------------ */
/* Per fp: the range of the combinations                                    */
/* ------------------------------------------------------------------------ */

typedef struct fp_range {
    double analytic_min, analytic_max;
    double slice_min, slice_max; /* means of the runs                      */
    double bits_min, bits_max;
    unsigned inside;             /* runs inside the paper's range          */
} fp_range;

static fp_range range_of(const row *rows, unsigned f)
{
    fp_range g = {INFINITY, -INFINITY, INFINITY, -INFINITY, INFINITY,
                  -INFINITY, 0};
    for (unsigned i = 0; i < PAPER_RUNS; i++) {
        const row *r = &rows[i];
        if (r->spec.f != f)
            continue;
        g.analytic_min = fmin(g.analytic_min, r->analytic);
        g.analytic_max = fmax(g.analytic_max, r->analytic);
        g.slice_min = fmin(g.slice_min, r->slice_bits);
        g.slice_max = fmax(g.slice_max, r->slice_bits);
        g.bits_min = fmin(g.bits_min, r->bits);
        g.bits_max = fmax(g.bits_max, r->bits);
        g.inside += inside_paper(r->slice_bits, f);
    }
    return g;
}

/* Do the paper's printed min and max come from the five combinations'
 * analytic values (within one bit: it truncates)? The maximum always
 * does; the minimum only where paper_min_is_analytic says. */
static void check_range(exp_context *ctx, unsigned f, const fp_range *g)
{
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(g->analytic_max, paper_max[f], 0),
              "fp %s: the paper's max %.0f is the largest (k + l) k / "
              "(l ln 2) of its five (k, l), %.2f, within one bit",
              fp_labels[f], paper_max[f], g->analytic_max);
    bool agrees = exp_agrees(g->analytic_min, paper_min[f], 0);
    if (paper_min_is_analytic[f])
        exp_check(ctx, EXP_CHECK_PAPER, agrees,
                  "fp %s: the paper's min %.0f is the least (k + l) k / "
                  "(l ln 2) of its five (k, l), %.2f, within one bit",
                  fp_labels[f], paper_min[f], g->analytic_min);
    else
        exp_check(ctx, EXP_CHECK_DISCREPANCY,
                  !agrees && paper_min[f] < g->analytic_min,
                  "fp %s: the paper's min %.0f is more than one bit below "
                  "the least (k + l) k / (l ln 2) of its five (k, l), %.2f",
                  fp_labels[f], paper_min[f], g->analytic_min);
}

/* ------------------------------------------------------------------------ */
/* Outputs                                                                  */
/* ------------------------------------------------------------------------ */

static double measured_fp(const row *r)
{
    return (double)r->pooled.hits / (double)r->pooled.probes;
}

static void write_runs_csv(exp_context *ctx, const row rows[RUNS])
{
    FILE *csv = exp_open_csv(ctx, "table2_runs.csv");
    fputs("fp,combination,k,l,initial_capacity_over_rate,rate_per_s,"
          "paper_min,paper_max,analytic_bits_per_item,sizing,"
          "model_bits_per_item,slice_bits_per_item,slice_bits_min,"
          "slice_bits_max,bits_per_item,bits_min,bits_max,"
          "apbf_memory_bits_per_item,slices,slices_min,slices_max,"
          "shape_fp,measured_fp,probes,hits\n",
          csv);
    for (unsigned i = 0; i < RUNS; i++) {
        const row *r = &rows[i];
        unsigned f = r->spec.f;
        /* combination 1..5 for the paper's, 0 for ebb's default. */
        unsigned combo = is_default(&r->spec) ? 0 : (i / DIMS) % COMBOS + 1;
        fprintf(csv,
                "%g,%u,%u,%u,%g,%.0f,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,"
                "%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.0f,%.0f,%.6g,%.6g,%" PRIu64
                ",%" PRIu64 "\n",
                fps[f], combo, r->k, r->l, r->spec.dim, r->spec.rate,
                paper_min[f], paper_max[f], r->analytic, r->sizing, r->model,
                r->slice_bits, r->slice_bits_min, r->slice_bits_max, r->bits,
                r->bits_min, r->bits_max, r->apbf_memory, r->slices,
                r->slices_min, r->slices_max, r->shape_fp, measured_fp(r),
                r->pooled.probes, r->pooled.hits);
    }
    exp_close(csv, "table2_runs.csv");
}

static void write_summary_csv(exp_context *ctx, const fp_range ranges[FPS],
                              const row defaults[FPS])
{
    FILE *csv = exp_open_csv(ctx, "table2_summary.csv");
    fputs("fp,paper_min,paper_max,analytic_min,analytic_max,"
          "slice_bits_min,slice_bits_max,bits_min,bits_max,default_k,"
          "default_l,default_slice_bits_per_item\n",
          csv);
    for (unsigned f = 0; f < FPS; f++) {
        const fp_range *g = &ranges[f];
        fprintf(csv, "%g,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%u,%u,%.4f\n",
                fps[f], paper_min[f], paper_max[f], g->analytic_min,
                g->analytic_max, g->slice_min, g->slice_max, g->bits_min,
                g->bits_max, defaults[f].k, defaults[f].l,
                defaults[f].slice_bits);
    }
    exp_close(csv, "table2_summary.csv");
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

static void write_range_table(FILE *md, const fp_range ranges[FPS],
                              const row defaults[FPS])
{
    fprintf(md, "| fp | paper: bits/element, min – max | (k+l)k/(l ln 2) of "
                "the APBF paper's 5 (k, l), min – max | paper = analytic "
                "within one bit, min / max | ours: slice bits per item, 10 "
                "runs, min – max | runs inside the paper's range | ours: "
                "memory_bytes·8 per item, min – max | ebb default (k, l): "
                "slice bits per item |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < FPS; f++) {
        const fp_range *g = &ranges[f];
        const row *d = &defaults[f];
        fprintf(md,
                "| %s | %.0f – %.0f | %.2f – %.2f | %s / %s | %.2f – %.2f | "
                "%u of %d | %.2f – %.2f | (%u, %u): %.2f (%s) |\n",
                fp_labels[f], paper_min[f], paper_max[f], g->analytic_min,
                g->analytic_max,
                yes_no(exp_agrees(g->analytic_min, paper_min[f], 0)),
                yes_no(exp_agrees(g->analytic_max, paper_max[f], 0)),
                g->slice_min, g->slice_max, g->inside, COMBOS * DIMS,
                g->bits_min, g->bits_max, d->k, d->l, d->slice_bits,
                placement(d->slice_bits, f));
    }
}

/* The "vs paper" cell: where the run lies, and why when expected outside. */
static void write_verdict(const row *r, char *buf, size_t size)
{
    unsigned f = r->spec.f;
    const char *where = placement(r->slice_bits, f);
    if (is_default(&r->spec))
        snprintf(buf, size, "%s%s", where,
                 r->slice_bits < paper_min[f] ? " (least memory)" : "");
    else if (inside_paper(r->analytic, f))
        snprintf(buf, size, "%s", where);
    else
        snprintf(buf, size, "%s (analytic %s by %.2f: checked against it)",
                 where, placement(r->analytic, f),
                 r->analytic > paper_max[f] ? r->analytic - paper_max[f]
                                            : paper_min[f] - r->analytic);
}

static void write_row(FILE *md, const row *r)
{
    unsigned f = r->spec.f;
    char verdict[96];
    write_verdict(r, verdict, sizeof verdict);
    char dim[32];
    if (is_default(&r->spec))
        snprintf(dim, sizeof dim, "ebb default, 1x");
    else
        snprintf(dim, sizeof dim, "%gx", r->spec.dim);
    fprintf(md,
            "| %s | (%u, %u) | %s | %.2fT | %.2f | %.3f | %.2f | "
            "%.2f (%.2f – %.2f) "
            "| %s | %.2f | %.1f | %.3f | %.3f |\n",
            fp_labels[f], r->k, r->l, dim,
            (double)r->spec.steady_from / (double)TLBF_SIM_SPAN, r->analytic,
            r->sizing, r->model,
            r->slice_bits, r->slice_bits_min, r->slice_bits_max, verdict,
            r->bits, r->slices, measured_fp(r) / r->shape_fp,
            measured_fp(r) / fps[f]);
}

static void write_run_table(FILE *md, const row rows[RUNS])
{
    fprintf(md, "| fp | (k, l) | initial capacity / rate | measured from | "
                "(k+l)k/(l ln 2) "
                "| sizing f | (fk+l)k/(l ln 2) | ours: slice bits per item, "
                "mean (min – max) | vs paper | ours: memory_bytes·8 per "
                "item | slices, mean | measured fp / ebb_apbf_fp(k, l) | "
                "measured fp / target |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < FPS; f++) {
        for (unsigned i = 0; i < PAPER_RUNS; i++)
            if (rows[i].spec.f == f)
                write_row(md, &rows[i]);
        write_row(md, &rows[PAPER_RUNS + f]);
    }
}

static void write_tables(exp_context *ctx, const row rows[RUNS],
                         const fp_range ranges[FPS])
{
    FILE *md = exp_open_fragment(ctx, "table2");
    write_range_table(md, ranges, &rows[PAPER_RUNS]);
    fprintf(md, "\nPer run (the APBF paper's five (k, l) per fp, each "
                "created for 0.5x and for 2x the real rate, then ebb's "
                "default shape):\n\n");
    write_run_table(md, rows);
    exp_close(md, "table2");
}

/* ------------------------------------------------------------------------ */
/* The runs                                                                 */
/* ------------------------------------------------------------------------ */

/* The end of the warm-up of a paper run, on the sampling grid: every slice
 * live from then on was created after the rate estimate settled. The
 * estimate settles within CONVERGENCE_SHIFTS generations, a slice created
 * before is written for at most k more, each generation lasts at most
 * 2T / l (ebb ends generations by time too), and a slice expires T after
 * its last write. */
static int64_t paper_warm_up(uint32_t k, uint32_t l)
{
    int64_t step = TLBF_SIM_SPAN / SAMPLES_PER_SPAN;
    double generations = (double)(CONVERGENCE_SHIFTS + k);
    double warm = (double)TLBF_SIM_SPAN +
                  generations * 2.0 * (double)TLBF_SIM_SPAN / (double)l;
    return (int64_t)ceil(warm / (double)step) * step;
}

static run_spec paper_spec(unsigned f, unsigned c, unsigned d)
{
    /* The APBF paper's five (k, l) for fps[f] (exp_common.h). */
    const exp_apbf_table2_row *paper = &EXP_APBF_TABLE2[f * COMBOS + c];
    if (paper->aimed != fps[f])
        exp_die("APBF Table 2 row %u is for fp %g, not %g", f * COMBOS + c,
                paper->aimed, fps[f]);
    uint32_t k = paper->k, l = paper->l;
    int64_t from = paper_warm_up(k, l);
    run_spec s = {f,    k,    l,    dims[d], PAPER_RATE,
                  from, from + STEADY_SPANS * TLBF_SIM_SPAN,
                  100u + (f * COMBOS + c) * DIMS + d};
    return s;
}

/* Created for the right rate, ebb's default is steady once its first
 * slices have expired. */
static run_spec default_spec(unsigned f)
{
    int64_t from = DEFAULT_STEADY_FROM;
    run_spec s = {f,    0,    0, 1.0, DEFAULT_RATE,
                  from, from + STEADY_SPANS * TLBF_SIM_SPAN, f};
    return s;
}

/* The closing line of the fragment: what was run. */
static void write_runs_note(exp_context *ctx, const row rows[RUNS])
{
    double span = (double)TLBF_SIM_SPAN;
    double first = INFINITY, last = 0.0;
    for (unsigned i = 0; i < PAPER_RUNS; i++) {
        first = fmin(first, (double)rows[i].spec.steady_from / span);
        last = fmax(last, (double)rows[i].spec.steady_from / span);
    }
    fprintf(ctx->md,
            "Runs: %d of the APBF paper's (k, l) at %.0f items/s (Poisson, T "
            "= 60 s), each measured for %dT after a warm-up of T + (%d + k) "
            "2T / l (%.2fT to %.2fT); %d of ebb's default shape at %.0f "
            "items/s, measured from %.0fT to %.0fT.\n",
            PAPER_RUNS, PAPER_RATE, STEADY_SPANS, CONVERGENCE_SHIFTS, first,
            last, FPS, DEFAULT_RATE, (double)DEFAULT_STEADY_FROM / span,
            (double)DEFAULT_STEADY_FROM / span + STEADY_SPANS);
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "tlbf_bits", argc, argv);
    row *rows = malloc(RUNS * sizeof *rows);
    if (rows == NULL)
        exp_die("out of memory");

    for (unsigned f = 0; f < FPS; f++)
        for (unsigned c = 0; c < COMBOS; c++)
            for (unsigned d = 0; d < DIMS; d++) {
                run_spec s = paper_spec(f, c, d);
                row *r = &rows[(f * COMBOS + c) * DIMS + d];
                run_row(&ctx, &s, NULL, r);
                check_row(&ctx, r);
            }
    FILE *series = exp_open_csv(&ctx, "table2.csv");
    fputs("fp,", series);
    tlbf_sample_csv_header(series);
    for (unsigned f = 0; f < FPS; f++) {
        run_spec s = default_spec(f);
        run_row(&ctx, &s, series, &rows[PAPER_RUNS + f]);
        check_row(&ctx, &rows[PAPER_RUNS + f]);
    }
    exp_close(series, "table2.csv");

    fp_range ranges[FPS];
    for (unsigned f = 0; f < FPS; f++) {
        ranges[f] = range_of(rows, f);
        check_range(&ctx, f, &ranges[f]);
    }
    write_tables(&ctx, rows, ranges);
    write_runs_csv(&ctx, rows);
    write_summary_csv(&ctx, ranges, &rows[PAPER_RUNS]);
    write_runs_note(&ctx, rows);
    free(rows);
    return exp_end(&ctx);
}
