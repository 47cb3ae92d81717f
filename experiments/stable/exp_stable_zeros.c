/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_stable_zeros.c: the paper's Figure 20, the fraction of zero cells over
 * iterations, against the analysis; and beyond it, the transient.
 *
 * The five filters of Table III at 16 KB (43,690 cells of 3 bits, the BF
 * 131,072 bits), K = 5, P = 10, the consecutive draw. Each is fed
 * ITERATIONS distinct keys (the analysis' assumption: every insertion a new
 * item) with importances uniform on 1..50; REPLICAS filters per variant
 * (different seeds), the zero fraction read every SAMPLE_EVERY insertions
 * and averaged over the replicas. Beside it: the stationary V_0 of
 * ebb_stable_analyse (the horizontal line), and the expected zero fraction
 * after t insertions from the cell chain iterated from all zeros
 * (stable_exp.h); for the BF, (1 - 1/m)^(K t).
 *
 * Writes docs/results/stable/zeros.csv, the fragment stable_zeros and the
 * plot metadata work/zeros.plot.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stable_exp.h"

#define ITERATIONS 300000u
#define SAMPLE_EVERY 1000u
#define SAMPLES (ITERATIONS / SAMPLE_EVERY)
#define REPLICAS 4u
#define EXPERIMENT_ID 20u
/* The chain's distribution is "settled" within this of the stationary. */
#define SETTLE_TOL 1e-4

typedef struct variant_run {
    ebb_stable_params params;
    double probs[SX_MAX_LEVELS];
    double measured[SAMPLES + 1]; /* mean over replicas, at t = i * every */
    double chain[SAMPLES + 1];    /* expected, from the chain / BF formula */
    double stationary;            /* NaN for the BF                        */
    double closed_form;           /* Deng and Rafiei, stable only          */
    double chain_gap;             /* chain limit vs ebb_stable_stationary  */
    uint64_t settle;              /* chain steps to within SETTLE_TOL      */
    uint64_t tail_zero_cells;     /* summed over the replicas' last sample */
    double tail_mean;             /* over the second half and replicas     */
    double max_transient_z;       /* largest |z| of measured vs chain      */
} variant_run;

static void measure(const exp_context *ctx, sx_filter f, variant_run *run)
{
    double sums[SAMPLES + 1] = {0};
    for (unsigned r = 0; r < REPLICAS; r++) {
        ebb_stable *filter = sx_create(
            &run->params, exp_derive_seed(ctx->seed, EXPERIMENT_ID, f, r));
        exp_rng rng;
        exp_rng_seed(&rng, exp_derive_seed(ctx->seed, EXPERIMENT_ID + 1, f, r));
        uint64_t stream = exp_stream(EXP_STREAM_INSERT, EXPERIMENT_ID,
                                     f * 256u + r);
        sums[0] += 1.0;
        ebb_stable_stats stats;
        for (uint32_t t = 1; t <= ITERATIONS; t++) {
            unsigned char key[16];
            sx_key(stream, t, key);
            double imp = (double)(SX_IMPORTANCE_LOW +
                                  exp_rng_below(&rng, SX_IMPORTANCES));
            exp_require(ebb_stable_add(filter, key, sizeof key, imp),
                        "ebb_stable_add");
            if (t % SAMPLE_EVERY == 0) {
                ebb_stable_get_stats(filter, &stats);
                sums[t / SAMPLE_EVERY] += stats.zero_fraction;
            }
        }
        run->tail_zero_cells += stats.zero_cells;
        ebb_stable_destroy(filter);
    }
    double tail = 0.0;
    for (unsigned i = 0; i <= SAMPLES; i++) {
        run->measured[i] = sums[i] / REPLICAS;
        if (i > SAMPLES / 2)
            tail += run->measured[i];
    }
    run->tail_mean = tail / (SAMPLES - SAMPLES / 2);
}

static void model(sx_filter f, variant_run *run)
{
    const ebb_stable_params *p = &run->params;
    double m = (double)p->cells;
    if (f == SX_BF) {
        for (unsigned i = 0; i <= SAMPLES; i++)
            run->chain[i] = pow(1.0 - 1.0 / m,
                                (double)p->k * i * SAMPLE_EVERY);
        run->stationary = NAN;
        run->closed_form = NAN;
        run->chain_gap = NAN;
        run->settle = 0;
        return;
    }
    ebb_stable_analysis a;
    exp_require(ebb_stable_analyse(p, run->probs, &a), "ebb_stable_analyse");
    double stationary[SX_MAX_LEVELS];
    exp_require(ebb_stable_stationary(p, run->probs, stationary),
                "ebb_stable_stationary");
    run->stationary = a.zero_fraction;
    run->closed_form = f == SX_STABLE
                           ? ebb_stable_zero_fraction_closed_form(
                                 p->cells, p->cell_bits, p->k, p->p)
                           : NAN;
    sx_chain chain;
    sx_chain_init(&chain, p, run->probs);
    run->chain[0] = 1.0;
    for (unsigned i = 1; i <= SAMPLES; i++) {
        for (unsigned s = 0; s < SAMPLE_EVERY; s++)
            sx_chain_step(&chain);
        run->chain[i] = chain.dist[0];
    }
    /* Long enough for any of these shapes to settle to round-off. */
    for (unsigned s = 0; s < 40u * ITERATIONS; s++)
        sx_chain_step(&chain);
    run->chain_gap = sx_max_abs_diff(chain.dist, stationary, chain.max);
    sx_chain_init(&chain, p, run->probs);
    run->settle = sx_chain_settle(&chain, stationary, SETTLE_TOL,
                                  40u * ITERATIONS);
}

/* z of the replicas' mean zero fraction against the expectation, with the
 * binomial sd of m * REPLICAS independent cells. */
static double zero_z(double measured, double expected, uint64_t cells)
{
    double sd = sqrt(expected * (1.0 - expected) /
                     ((double)cells * REPLICAS));
    return sd > 0.0 ? (measured - expected) / sd : NAN;
}

static void check(exp_context *ctx, sx_filter f, variant_run *run)
{
    const ebb_stable_params *p = &run->params;
    double worst = 0.0;
    for (unsigned i = 1; i <= SAMPLES; i++) {
        double z = zero_z(run->measured[i], run->chain[i], p->cells);
        if (fabs(z) > fabs(worst))
            worst = z;
    }
    run->max_transient_z = worst;
    if (f == SX_BF) {
        exp_check(ctx, EXP_CHECK_PAPER, run->measured[SAMPLES] < 0.01,
                  "Fig. 20: the BF fills up: zero fraction %.5f < 0.01 "
                  "after %u insertions",
                  run->measured[SAMPLES], ITERATIONS);
        exp_check(ctx, EXP_CHECK_STAT, fabs(worst) <= 4.0,
                  "BF: zero fraction at every sample within 4 sd of "
                  "(1 - 1/m)^(Kt) (largest |z| %.2f over %u samples)",
                  fabs(worst), SAMPLES);
        return;
    }
    double final = (double)run->tail_zero_cells /
                   ((double)p->cells * REPLICAS);
    double z = zero_z(final, run->stationary, p->cells);
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              "%s: zero fraction after %u insertions %.5f agrees with the "
              "stationary V_0 %.5f (z %+.2f, %u filters)",
              sx_filter_name(f), ITERATIONS, final, run->stationary, z,
              REPLICAS);
    exp_check(ctx, EXP_CHECK_STAT, fabs(worst) <= 4.0,
              "%s: zero fraction at every sample within 4 sd of the chain "
              "from all zeros (largest |z| %.2f over %u samples)",
              sx_filter_name(f), fabs(worst), SAMPLES);
    /* IBF_H: the chain here weighs decrements by 1/v in the mean field; the
     * library's fixed point may be computed differently. The others must
     * agree to round-off. */
    bool exact = p->variant != EBB_STABLE_IBF_H;
    exp_check(ctx, exact ? EXP_CHECK_GUARANTEE : EXP_CHECK_STAT,
              run->chain_gap <= (exact ? 1e-9 : 1e-5),
              "%s: the chain iterated from all zeros converges to "
              "ebb_stable_stationary (largest difference %.2e)",
              sx_filter_name(f), run->chain_gap);
}

static void write_csv(const exp_context *ctx, variant_run *runs)
{
    FILE *csv = exp_open_csv(ctx, "zeros.csv");
    fputs("iterations", csv);
    for (unsigned f = 0; f < SX_FILTERS; f++)
        fprintf(csv, ",%s_measured,%s_expected,%s_stationary",
                sx_filter_name(f), sx_filter_name(f), sx_filter_name(f));
    fputc('\n', csv);
    for (unsigned i = 0; i <= SAMPLES; i++) {
        fprintf(csv, "%u", i * SAMPLE_EVERY);
        for (unsigned f = 0; f < SX_FILTERS; f++) {
            if (isnan(runs[f].stationary))
                fprintf(csv, ",%.6f,%.6f,", runs[f].measured[i],
                        runs[f].chain[i]);
            else
                fprintf(csv, ",%.6f,%.6f,%.6f", runs[f].measured[i],
                        runs[f].chain[i], runs[f].stationary);
        }
        fputc('\n', csv);
    }
    exp_close(csv, "zeros.csv");
}

static void write_md(exp_context *ctx, variant_run *runs)
{
    FILE *md = ctx->md;
    fprintf(md, "| filter | cells × bits | V_0, analysis | closed form "
                "(Deng–Rafiei) | measured, last half | measured at %u | z | "
                "chain from zeros: iterations to within 10^-4 | largest "
                "\\|z\\| vs the chain over %u samples |\n",
            ITERATIONS, SAMPLES);
    fprintf(md, "|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned f = 0; f < SX_FILTERS; f++) {
        const variant_run *r = &runs[f];
        const ebb_stable_params *p = &r->params;
        double final = (double)r->tail_zero_cells /
                       ((double)p->cells * REPLICAS);
        if (f == SX_BF) {
            fprintf(md, "| %s | %" PRIu64 " × %u | — (fills up) | — | %.5f "
                        "| %.5f | — | — | %.2f |\n",
                    sx_filter_name(f), p->cells, p->cell_bits, r->tail_mean,
                    final, fabs(r->max_transient_z));
            continue;
        }
        char closed[32] = "—";
        if (!isnan(r->closed_form))
            snprintf(closed, sizeof closed, "%.5f", r->closed_form);
        fprintf(md, "| %s | %" PRIu64 " × %u | %.5f | %s | %.5f | %.5f | "
                    "%+.2f | %" PRIu64 " | %.2f |\n",
                sx_filter_name(f), p->cells, p->cell_bits, r->stationary,
                closed, r->tail_mean, final,
                zero_z(final, r->stationary, p->cells), r->settle,
                fabs(r->max_transient_z));
    }
    fprintf(md, "\n%u filters per row (seeds derived from the run seed), "
                "%u distinct keys each, importance uniform on 1..50; the "
                "zero fraction read every %u insertions. z: the %u filters' "
                "zero cells after the last insertion against V_0, binomial "
                "sd of %u × m cells.\n",
            REPLICAS, ITERATIONS, SAMPLE_EVERY, REPLICAS, REPLICAS);
}

static void write_plot_meta(const exp_context *ctx)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/zeros.plot", ctx->work_dir);
    FILE *meta = fopen(path, "w");
    if (meta == NULL)
        exp_die("cannot write %s", path);
    fprintf(meta, "filters = %u\ntitles = \"", SX_FILTERS);
    for (unsigned f = 0; f < SX_FILTERS; f++)
        fprintf(meta, "%s%s", f ? " " : "", sx_filter_name(f));
    fprintf(meta, "\"\niterations = %u\n", ITERATIONS);
    exp_close(meta, "zeros.plot");
}

/* The stationary state of the four stable variants under both readings of
 * the paper's memory: what its Table I's FP and FN would tend to on an
 * endless stream of distinct items. */
static void write_fps(const exp_context *ctx)
{
    FILE *md = exp_open_fragment(ctx, "stable_fps");
    fprintf(md, "| filter | reading | m | V_0 | FPS = (1 − V_0)^K | mean cell "
                "value |\n");
    fprintf(md, "|---|---|---|---|---|---|\n");
    for (unsigned rd = 0; rd < SX_READINGS; rd++)
        for (unsigned f = SX_STABLE; f < SX_FILTERS; f++) {
            ebb_stable_params p;
            double probs[SX_MAX_LEVELS];
            ebb_stable_analysis a;
            sx_params(f, rd, EBB_STABLE_DRAW_CONSECUTIVE, &p);
            sx_level_probs(&p, probs);
            exp_require(ebb_stable_analyse(&p, probs, &a),
                        "ebb_stable_analyse");
            fprintf(md, "| %s | %s | %" PRIu64 " | %.5f | %.2f%% | %.3f |\n",
                    sx_filter_name(f), sx_reading_name(rd), p.cells,
                    a.zero_fraction, 100.0 * a.fps, a.mean_level);
        }
    exp_close(md, "stable_fps");
}

/* Which importances set which level, as ebb_stable_level maps them. */
static void write_levels(const exp_context *ctx)
{
    FILE *md = exp_open_fragment(ctx, "stable_levels");
    fprintf(md, "| filter | level set (cell value) ← importances |\n");
    fprintf(md, "|---|---|\n");
    for (unsigned f = SX_STABLE; f <= SX_IBF_MC; f++) {
        ebb_stable_params p;
        sx_params(f, SX_READING_MEMORY, EBB_STABLE_DRAW_CONSECUTIVE, &p);
        fprintf(md, "| %s%s |", sx_filter_name(f),
                f == SX_IBF_MC ? ", IBF-H" : "");
        uint32_t first = SX_IMPORTANCE_LOW, current = 0;
        for (uint32_t imp = SX_IMPORTANCE_LOW; imp <= SX_IMPORTANCE_HIGH + 1;
             imp++) {
            uint32_t level = 0;
            if (imp <= SX_IMPORTANCE_HIGH)
                exp_require(ebb_stable_level(&p, (double)imp, &level, NULL),
                            "ebb_stable_level");
            if (imp > SX_IMPORTANCE_LOW && level != current) {
                fprintf(md, " %u ← %u–%u%s", current, first, imp - 1,
                            imp <= SX_IMPORTANCE_HIGH ? ";" : "");
                first = imp;
            }
            current = level;
        }
        fprintf(md, " |\n");
    }
    exp_close(md, "stable_levels");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "stable_zeros", argc, argv);
    static variant_run runs[SX_FILTERS];
    for (unsigned f = 0; f < SX_FILTERS; f++) {
        variant_run *run = &runs[f];
        sx_params(f, SX_READING_MEMORY, EBB_STABLE_DRAW_CONSECUTIVE,
                  &run->params);
        sx_level_probs(&run->params, run->probs);
        model(f, run);
        measure(&ctx, f, run);
        check(&ctx, f, run);
    }
    write_csv(&ctx, runs);
    write_md(&ctx, runs);
    write_plot_meta(&ctx);
    write_fps(&ctx);
    write_levels(&ctx);
    return exp_end(&ctx);
}
