/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_duplicates: the paper's Figures 7 and 8 (false positives under
 * duplicated keys) and the Zipf workload the paper predicts but does not
 * show.
 *
 * Streams. Item t of a stream is, with probability d, a repeat, else a key
 * never seen before. A repeat is chosen:
 *   uniform     the item at a uniformly random position among the last w
 *               items of the stream (Figures 7 and 8);
 *   recency     the item r positions back, r in 1..w drawn from Zipf(s),
 *               P(r) ~ r^-s: recent items are repeated most (temporal
 *               locality, an LRU stack-distance model);
 *   population  a key of a fixed population of w "popular" keys, rank r in
 *               1..w drawn from Zipf(s): a few keys recur very often.
 * The duplicate rate on the x axis is the paper's, 1 - |unique(W)| / |W|
 * for W the last w items, measured at every probing moment and averaged; d
 * is only the generator's knob.
 *
 * Measurement. Filters sized for w = 10^3 (ebb_apbf_params_from_kl) are fed
 * the stream through k + l + 2 generations, then probed with fresh keys at
 * MOMENTS worst moments (just before a shift), k + l generations apart so
 * that every slice is renewed between two of them. The model beside each
 * measurement is F on the exact expected fill ratios given the distinct
 * keys each slice received (exp_tracker), averaged over the same moments:
 * it shows the rate where too few false positives remain to be counted.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exp_common.h"

#define EXPERIMENT_ID 7u
#define WINDOW 1000u
#define MOMENTS 10u
#define POINTS 11
#define MAX_CURVES 8
#define POPULATION_BASE (UINT64_C(1) << 62)
#define MIN_EXPECTED_FOR_RATIO 10.0

static const double REPEAT_PROBABILITY[POINTS] = {
    0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95,
};

/* ------------------------------------------------------------------------ */
/* Stream generators                                                        */
/* ------------------------------------------------------------------------ */

typedef enum generator_kind {
    GEN_UNIFORM,
    GEN_RECENCY_ZIPF,
    GEN_POPULATION_ZIPF
} generator_kind;

typedef struct generator {
    generator_kind kind;
    double repeat; /* d */
    exp_rng rng;
    uint64_t history[WINDOW]; /* ids of the last WINDOW items, a ring */
    uint64_t items;           /* items generated so far                */
    uint64_t next_new;        /* ids of new keys count up from 0      */
    double zipf_cdf[WINDOW];  /* P(rank <= r + 1)                     */
} generator;

static void generator_init(generator *gen, generator_kind kind, double repeat,
                           double s, uint64_t seed)
{
    memset(gen, 0, sizeof *gen);
    gen->kind = kind;
    gen->repeat = repeat;
    exp_rng_seed(&gen->rng, seed);
    double total = 0.0;
    for (unsigned r = 0; r < WINDOW; r++) {
        total += pow((double)(r + 1), -s);
        gen->zipf_cdf[r] = total;
    }
    for (unsigned r = 0; r < WINDOW; r++)
        gen->zipf_cdf[r] /= total;
}

/* A rank in 1..WINDOW from Zipf(s), by binary search of the CDF. */
static unsigned zipf_rank(generator *gen)
{
    double u = exp_rng_unit(&gen->rng);
    unsigned lo = 0, hi = WINDOW - 1;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (gen->zipf_cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo + 1;
}

/* The item `back` positions before the next one (1 = the last item). */
static uint64_t history_back(const generator *gen, uint64_t back)
{
    return gen->history[(gen->items - back) % WINDOW];
}

static uint64_t pick_repeat(generator *gen, bool *is_repeat)
{
    uint64_t available = gen->items < WINDOW ? gen->items : WINDOW;
    *is_repeat = true;
    switch (gen->kind) {
    case GEN_UNIFORM:
        return history_back(gen, 1 + exp_rng_below(&gen->rng, available));
    case GEN_RECENCY_ZIPF: {
        unsigned back = zipf_rank(gen);
        if (back <= available)
            return history_back(gen, back);
        break; /* the very first items: nothing that old yet */
    }
    case GEN_POPULATION_ZIPF:
        return POPULATION_BASE + zipf_rank(gen);
    }
    *is_repeat = false;
    return 0;
}

static uint64_t generator_next(generator *gen)
{
    bool repeated = false;
    uint64_t id = 0;
    if (gen->items > 0 && exp_rng_unit(&gen->rng) < gen->repeat)
        id = pick_repeat(gen, &repeated);
    if (!repeated)
        id = gen->next_new++;
    gen->history[gen->items % WINDOW] = id;
    gen->items++;
    return id;
}

/* The paper's duplicate rate of the last WINDOW items. */
static double duplicate_rate(const generator *gen)
{
    uint64_t ids[WINDOW];
    uint64_t n = gen->items < WINDOW ? gen->items : WINDOW;
    for (uint64_t i = 0; i < n; i++)
        ids[i] = history_back(gen, i + 1);
    return n ? 1.0 - (double)exp_count_distinct(ids, n) / (double)n : 0.0;
}

/* ------------------------------------------------------------------------ */
/* Figures and curves                                                       */
/* ------------------------------------------------------------------------ */

typedef struct curve_spec {
    const char *label; /* CSV column suffix                     */
    const char *name;  /* in the Markdown tables                */
    const char *title; /* plot legend, gnuplot enhanced text    */
    unsigned k, l;
    generator_kind kind;
    double s;
    uint64_t probes; /* per point, over all moments */
} curve_spec;

typedef struct figure_spec {
    const char *name, *caption;
    const char *heading; /* plot title, gnuplot enhanced text */
    double ymin;         /* lower end of the plot's y axis, 0 for auto */
    unsigned curves;
    curve_spec curve[MAX_CURVES];
} figure_spec;

#define UNIFORM_CURVE(k, l, title, probes)                                     \
    {#k "_" #l, "(" #k "," #l ")", title, k, l, GEN_UNIFORM, 0, probes}
#define ZIPF_CURVE(label, name, kind, s)                                       \
    {label, name, name, 7, 5, kind, s, 4000000}

static const figure_spec FIGURES[] = {
    {"fig7",
     "Figure 7: uniform duplicates, the lowest (k, l) of each precision",
     "Figure 7: uniform duplicates, w = 10^3, the lowest (k,l) of each "
     "precision",
     1e-12,
     5,
     {UNIFORM_CURVE(4, 3, "(4,3) fp 10^{-1}", 1000000),
      UNIFORM_CURVE(7, 5, "(7,5) fp 10^{-2}", 10000000),
      UNIFORM_CURVE(10, 7, "(10,7) fp 10^{-3}", 10000000),
      UNIFORM_CURVE(14, 11, "(14,11) fp 10^{-4}", 10000000),
      UNIFORM_CURVE(17, 13, "(17,13) fp 10^{-5}", 10000000)}},
    {"fig8",
     "Figure 8: uniform duplicates, (k, l) pairs of Table 2 at fp 0.1",
     "Figure 8: uniform duplicates, w = 10^3, (k,l) pairs at fp 0.1",
     0,
     5,
     {UNIFORM_CURVE(4, 3, "(4,3)", 1000000),
      UNIFORM_CURVE(5, 7, "(5,7)", 1000000),
      UNIFORM_CURVE(6, 14, "(6,14)", 1000000),
      UNIFORM_CURVE(7, 28, "(7,28)", 1000000),
      UNIFORM_CURVE(8, 56, "(8,56)", 1000000)}},
    {"zipf",
     "Zipf duplicates beside uniform ones, (k, l) = (7, 5), fp 0.01",
     "Zipf and uniform duplicates, w = 10^3, (k,l) = (7,5), fp 10^{-2}",
     0,
     7,
     {{"uniform", "uniform", "uniform", 7, 5, GEN_UNIFORM, 0, 4000000},
      ZIPF_CURVE("recency_s08", "recency Zipf s=0.8", GEN_RECENCY_ZIPF, 0.8),
      ZIPF_CURVE("recency_s10", "recency Zipf s=1.0", GEN_RECENCY_ZIPF, 1.0),
      ZIPF_CURVE("recency_s12", "recency Zipf s=1.2", GEN_RECENCY_ZIPF, 1.2),
      ZIPF_CURVE("population_s08", "population Zipf s=0.8",
                 GEN_POPULATION_ZIPF, 0.8),
      ZIPF_CURVE("population_s10", "population Zipf s=1.0",
                 GEN_POPULATION_ZIPF, 1.0),
      ZIPF_CURVE("population_s12", "population Zipf s=1.2",
                 GEN_POPULATION_ZIPF, 1.2)}},
};

#define FIGURE_COUNT (sizeof FIGURES / sizeof FIGURES[0])

typedef struct point {
    double repeat, dup_rate, model, expected_hits;
    uint64_t probes, hits;
} point;

typedef struct curve_result {
    ebb_apbf_params shape;
    double worst;
    point points[POINTS];
} curve_result;

/* Adds stream items until the filter has done at least `shifts` shifts and
 * its current generation is full: the worst moment. */
static void advance_to_worst(ebb_apbf *filter, exp_tracker *tracker,
                             generator *gen, uint64_t stream, uint64_t shifts)
{
    while (tracker->generations < shifts ||
           tracker->in_generation != tracker->g) {
        uint64_t id = generator_next(gen);
        ebb_apbf_add_hash(filter, exp_key_hash(filter, stream, id));
        exp_tracker_add(tracker, id);
    }
    exp_tracker_verify(tracker, filter);
}

static uint64_t probe(const ebb_apbf *filter, uint64_t stream,
                      uint64_t first, uint64_t count)
{
    uint64_t hits = 0;
    for (uint64_t i = first; i < first + count; i++)
        hits += ebb_apbf_contains_hash(filter,
                                       exp_key_hash(filter, stream, i));
    return hits;
}

static void run_point(const exp_context *ctx, const curve_spec *spec,
                      const ebb_apbf_params *shape, uint32_t unit,
                      double repeat, point *out)
{
    static generator gen;
    generator_init(&gen, spec->kind, repeat, spec->s,
                   exp_derive_seed(ctx->seed, EXPERIMENT_ID, unit, 1));
    ebb_apbf *filter =
        exp_create(shape, exp_derive_seed(ctx->seed, EXPERIMENT_ID, unit, 0));
    exp_tracker tracker;
    exp_tracker_init(&tracker, shape);
    uint64_t inserts = exp_stream(EXP_STREAM_INSERT, EXPERIMENT_ID, unit);
    uint64_t fresh = exp_stream(EXP_STREAM_PROBE, EXPERIMENT_ID, unit);
    uint64_t shifts = shape->k + shape->l + 2;
    memset(out, 0, sizeof *out);
    out->repeat = repeat;
    for (unsigned m = 0; m < MOMENTS; m++, shifts += shape->k + shape->l) {
        advance_to_worst(filter, &tracker, &gen, inserts, shifts);
        uint64_t share = spec->probes / MOMENTS;
        double model = exp_tracker_model_fp(&tracker);
        out->dup_rate += duplicate_rate(&gen) / MOMENTS;
        out->model += model / MOMENTS;
        out->expected_hits += model * (double)share;
        out->hits += probe(filter, fresh, out->probes, share);
        out->probes += share;
    }
    exp_tracker_free(&tracker);
    ebb_apbf_destroy(filter);
}

static void run_curve(const exp_context *ctx, unsigned figure, unsigned c,
                      curve_result *out)
{
    const curve_spec *spec = &FIGURES[figure].curve[c];
    exp_require(ebb_apbf_params_from_kl(spec->k, spec->l, WINDOW, &out->shape),
                "ebb_apbf_params_from_kl");
    out->worst = ebb_apbf_shape_fp(&out->shape);
    for (unsigned p = 0; p < POINTS; p++) {
        uint32_t unit = (figure << 16) | (c << 8) | p;
        run_point(ctx, spec, &out->shape, unit, REPEAT_PROBABILITY[p],
                  &out->points[p]);
    }
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

/* The model rate at duplicate rate x, interpolating log(rate) between the
 * two points that bracket x; NaN when no pair does. */
static double model_at(const curve_result *r, double x)
{
    for (unsigned p = 0; p + 1 < POINTS; p++) {
        const point *a = &r->points[p], *b = &r->points[p + 1];
        if (a->dup_rate <= x && x <= b->dup_rate && b->dup_rate > a->dup_rate) {
            double t = (x - a->dup_rate) / (b->dup_rate - a->dup_rate);
            return exp((1.0 - t) * log(a->model) + t * log(b->model));
        }
    }
    return NAN;
}

static void write_csv(const exp_context *ctx, const figure_spec *fig,
                      const curve_result *results)
{
    char file[64];
    snprintf(file, sizeof file, "%s.csv", fig->name);
    FILE *csv = exp_open_csv(ctx, file);
    fputs("repeat_probability", csv);
    for (unsigned c = 0; c < fig->curves; c++) {
        const char *s = fig->curve[c].label;
        fprintf(csv, ",dup_%s,fp_%s,model_%s,hits_%s,probes_%s", s, s, s, s,
                s);
    }
    fputc('\n', csv);
    for (unsigned p = 0; p < POINTS; p++) {
        fprintf(csv, "%.2f", REPEAT_PROBABILITY[p]);
        for (unsigned c = 0; c < fig->curves; c++) {
            const point *x = &results[c].points[p];
            fprintf(csv, ",%.6f,%.9g,%.9g,%" PRIu64 ",%" PRIu64, x->dup_rate,
                    (double)x->hits / (double)x->probes, x->model, x->hits,
                    x->probes);
        }
        fputc('\n', csv);
    }
    exp_close(csv, file);
}

/* Titles for the plot script: a gnuplot word list. */
static void write_plot_meta(const exp_context *ctx, const figure_spec *fig)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.plot", ctx->work_dir, fig->name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        exp_die("cannot write %s", path);
    fprintf(f, "curves = %u\nheading = '%s'\nymin = %g\ntitles = '",
            fig->curves, fig->heading, fig->ymin);
    for (unsigned c = 0; c < fig->curves; c++)
        fprintf(f, "%s\"%s\"", c ? " " : "", fig->curve[c].title);
    /* Line dash per curve: solid for uniform repeats, dashed for the
     * recency model, dotted for the population model. */
    fputs("'\ndashes = '", f);
    for (unsigned c = 0; c < fig->curves; c++)
        fprintf(f, "%s%d", c ? " " : "", (int)fig->curve[c].kind + 1);
    fputs("'\n", f);
    exp_close(f, path);
}

static void md_value(FILE *md, double v)
{
    if (isnan(v))
        fputs(" – |", md);
    else
        fprintf(md, " %.3g |", v);
}

static double measured_over_model(const curve_result *r)
{
    uint64_t hits = 0;
    double expected = 0.0;
    for (unsigned p = 0; p < POINTS; p++)
        if (r->points[p].expected_hits >= MIN_EXPECTED_FOR_RATIO) {
            hits += r->points[p].hits;
            expected += r->points[p].expected_hits;
        }
    return expected > 0.0 ? (double)hits / expected : NAN;
}

static void md_curve_row(FILE *md, const curve_spec *spec,
                         const curve_result *r)
{
    const point *last = &r->points[POINTS - 1];
    fprintf(md, "| %s | %" PRIu64 " | %" PRIu64 " |", spec->name,
            r->shape.slice_bits, r->shape.generation);
    md_value(md, r->points[0].model);
    md_value(md, model_at(r, 0.2));
    md_value(md, model_at(r, 0.4));
    md_value(md, model_at(r, 0.6));
    md_value(md, model_at(r, 0.6) / r->points[0].model);
    fprintf(md, " %.3f |", last->dup_rate);
    md_value(md, last->model);
    md_value(md, measured_over_model(r));
    fputc('\n', md);
}

/* At the top repeat probability: the duplicate rate each generator
 * reaches, uniform (the first curve) and the range of each Zipf model. */
static void md_top_repeat(FILE *md, const figure_spec *fig,
                          const curve_result *results)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {0, 0, 0};
    double fp_lo[3] = {INFINITY, INFINITY, INFINITY}, fp_hi[3] = {0, 0, 0};
    for (unsigned c = 0; c < fig->curves; c++) {
        const point *top = &results[c].points[POINTS - 1];
        unsigned kind = (unsigned)fig->curve[c].kind;
        lo[kind] = fmin(lo[kind], top->dup_rate);
        hi[kind] = fmax(hi[kind], top->dup_rate);
        fp_lo[kind] = fmin(fp_lo[kind], top->model);
        fp_hi[kind] = fmax(fp_hi[kind], top->model);
    }
    fprintf(md,
            "At the same repeat probability d = %.2f, uniform repeats reach "
            "a duplicate rate of %.3f (rate %.3g), recency Zipf %.3f to "
            "%.3f (rate %.3g to %.3g), population Zipf %.3f to %.3f (rate "
            "%.3g to %.3g).\n",
            REPEAT_PROBABILITY[POINTS - 1], hi[GEN_UNIFORM],
            fp_hi[GEN_UNIFORM], lo[GEN_RECENCY_ZIPF], hi[GEN_RECENCY_ZIPF],
            fp_lo[GEN_RECENCY_ZIPF], fp_hi[GEN_RECENCY_ZIPF],
            lo[GEN_POPULATION_ZIPF], hi[GEN_POPULATION_ZIPF],
            fp_lo[GEN_POPULATION_ZIPF], fp_hi[GEN_POPULATION_ZIPF]);
}

/* The Zipf figure: how far the Zipf curves lie from the uniform one (the
 * first curve) at equal duplicate rate, the range of their ratios at 0.2,
 * 0.4 and 0.6, and what that says about the paper's expectation. */
static void md_zipf_verdict(FILE *md, const figure_spec *fig,
                            const curve_result *results)
{
    static const double at[] = {0.2, 0.4, 0.6};
    double lo = INFINITY, hi = 0.0;
    for (unsigned c = 1; c < fig->curves; c++)
        for (unsigned i = 0; i < sizeof at / sizeof at[0]; i++) {
            double ratio =
                model_at(&results[c], at[i]) / model_at(&results[0], at[i]);
            if (!isnan(ratio)) {
                lo = fmin(lo, ratio);
                hi = fmax(hi, ratio);
            }
        }
    fprintf(md,
            "\nAt equal duplicate rate (0.2, 0.4, 0.6, where reached) the "
            "Zipf curves' model rate is %.2f to %.2f times the uniform "
            "curve's: ",
            lo, hi);
    if (lo >= 1.0)
        fputs("Zipf duplicates do **not** lower the rate more than uniform "
              "ones at the same duplicate rate, contrary to the paper's "
              "expectation.\n",
              md);
    else if (hi <= 1.0)
        fputs("Zipf duplicates lower the rate more than uniform ones, as "
              "the paper expects.\n",
              md);
    else
        fputs("neither consistently lower nor higher than with uniform "
              "duplicates.\n",
              md);
    md_top_repeat(md, fig, results);
}

/* Figure 8: the paper says configurations with more slices lose less of
 * their rate to duplicates. Compares fp(0.6) / fp(none) along the curves,
 * which come in order of growing k + l. */
static void md_slices_verdict(FILE *md, const figure_spec *fig,
                              const curve_result *results)
{
    bool growing = true;
    double previous = 0.0;
    for (unsigned c = 0; c < fig->curves; c++) {
        double kept = model_at(&results[c], 0.6) / results[c].points[0].model;
        growing = growing && !isnan(kept) && kept > previous;
        previous = kept;
    }
    fprintf(md,
            "\nAt duplicate rate 0.6 the share of the duplicate-free rate "
            "that remains (column \"0.6 / none\") %s with the number of "
            "slices k + l%s.\n",
            growing ? "grows" : "does **not** grow steadily",
            growing ? ", as the paper observes" : ", unlike the paper's "
                                                  "observation");
}

static void write_markdown(exp_context *ctx, const figure_spec *fig,
                           const curve_result *results)
{
    FILE *md = ctx->md;
    fprintf(md, "\n### %s\n\n![%s](apbf/%s.png)\n\n", fig->caption,
            fig->name, fig->name);
    fprintf(md,
            "Model rates; the ones at a given duplicate rate are "
            "interpolated (log-linearly) between the two points around "
            "it. The last columns are the point d = %.2f.\n\n",
            REPEAT_PROBABILITY[POINTS - 1]);
    fputs("| curve | m | g | no duplicates | dup rate 0.2 | 0.4 | 0.6 | "
          "0.6 / none | dup rate at top d | fp there | measured / model |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n",
          md);
    for (unsigned c = 0; c < fig->curves; c++)
        md_curve_row(md, &fig->curve[c], &results[c]);
    if (strcmp(fig->name, "zipf") == 0)
        md_zipf_verdict(md, fig, results);
    if (strcmp(fig->name, "fig8") == 0)
        md_slices_verdict(md, fig, results);
}

static void check_curve(exp_context *ctx, const figure_spec *fig,
                        unsigned c, const curve_result *r)
{
    const curve_spec *spec = &fig->curve[c];
    const point *first = &r->points[0];
    /* Without repeats the stream is all distinct keys: the model must be the
     * shape's worst-moment rate exactly, and the duplicate rate 0. */
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              first->dup_rate == 0.0 &&
                  fabs(first->model - r->worst) <= 1e-9 * r->worst,
              "%s %s: d=0 gives dup rate %.4f and model %.6g = worst %.6g",
              fig->name, spec->name, first->dup_rate, first->model,
              r->worst);
    bool falling = true;
    for (unsigned p = 1; p < POINTS; p++)
        falling = falling && r->points[p].model < r->points[p - 1].model &&
                  r->points[p].dup_rate > r->points[p - 1].dup_rate;
    exp_check(ctx, EXP_CHECK_STAT, falling,
              "%s %s: more repeats, higher dup rate, lower fp (fp %.3g at "
              "dup rate %.3f)",
              fig->name, spec->name, r->points[POINTS - 1].model,
              r->points[POINTS - 1].dup_rate);
}

int main(int argc, char **argv)
{
    static curve_result results[MAX_CURVES];
    exp_context ctx;
    exp_begin(&ctx, "duplicates", argc, argv);
    fprintf(ctx.md,
            "Streams into filters sized for w = %u; %u worst moments per "
            "point, %u values of the repeat probability d from %.2f to "
            "%.2f. Points: measured (left out of the plot when fewer than "
            "10 false positives were seen); lines: the model. \"measured / model\" pools the points "
            "where at least %.0f false positives were expected.\n",
            WINDOW, MOMENTS, POINTS, REPEAT_PROBABILITY[0],
            REPEAT_PROBABILITY[POINTS - 1], MIN_EXPECTED_FOR_RATIO);
    for (unsigned f = 0; f < FIGURE_COUNT; f++) {
        const figure_spec *fig = &FIGURES[f];
        for (unsigned c = 0; c < fig->curves; c++) {
            run_curve(&ctx, f, c, &results[c]);
            check_curve(&ctx, fig, c, &results[c]);
        }
        write_csv(&ctx, fig, results);
        write_plot_meta(&ctx, fig);
        write_markdown(&ctx, fig, results);
    }
    return exp_end(&ctx);
}
