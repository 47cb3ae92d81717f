/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_spectral_sweeps.c: the paper's Figure 6: the additive error
 * sqrt(sum (f^ - f)^2 / n) and the error ratio of MS, MI and RM against
 * gamma = n k / m (k = 5) and against k (gamma = 0.7), on Zipf data of skew
 * 0.5: 1,000 distinct values, M = 100,000 items, the mean of 5 runs. RM
 * gets the same total m as the others (primary and secondary together,
 * split by ebb_spectral_params_init), its marker on top.
 *
 * Queries: every one of the 1,000 values. Each run draws its own data and
 * seeds; within a run the three methods see the same stream and seed.
 *
 * Writes fig6_gamma.csv, fig6_k.csv, the fragment spectral_sweeps and
 * checks: no estimate below the truth (guarantee); MI's and RM's error
 * ratios below MS's (the bar); MS's error ratio against E_b.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectral_exp.h"

#define EXPERIMENT_ID 60u
#define SKEW 0.5
#define K_GAMMA 0.7
#define K_MAX 10u
/* A point counts for "below MS" once MS made this many errors there. */
#define MIN_MS_ERRORS 20u

static const double GAMMAS[] = {0.125, 0.25, 0.4, 0.5, 0.6,  0.7,
                                0.83,  1.0,  1.25, 1.5, 1.75, 2.0};
#define GAMMA_COUNT (sizeof GAMMAS / sizeof GAMMAS[0])

typedef struct point {
    double x;            /* gamma or k                                */
    uint64_t counters;
    double eb_exact;     /* MS's predicted error ratio, mean over runs */
    sp_mean mean[SP_METHODS];
} point;

/* One point: SP_RUNS runs of the three methods at m counters, k. */
static void run_point(const exp_context *ctx, uint32_t sweep, uint32_t index,
                      uint64_t counters, uint32_t k, point *out)
{
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    uint64_t truth[SP_DISTINCT];
    ebb_hash128 hashes[SP_DISTINCT];
    memset(out->mean, 0, sizeof out->mean);
    out->counters = counters;
    out->eb_exact = 0.0;
    for (uint32_t r = 0; r < SP_RUNS; r++) {
        sp_zipf_stream(stream, SP_ITEMS, SP_DISTINCT, SKEW,
                       exp_derive_seed(ctx->seed, EXPERIMENT_ID, 1000u + r,
                                       sweep));
        memset(truth, 0, sizeof truth);
        for (uint32_t i = 0; i < SP_ITEMS; i++)
            truth[stream[i]]++;
        uint64_t present = 0;
        for (uint32_t v = 0; v < SP_DISTINCT; v++)
            present += truth[v] > 0;
        uint64_t seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID + 1,
                                        sweep * 100u + index, r);
        for (unsigned mi = 0; mi < SP_METHODS; mi++) {
            ebb_spectral *f = sp_create(counters, k, SP_METHOD[mi], seed);
            if (mi == 0)
                out->eb_exact += ebb_spectral_error_ratio(
                                     ebb_spectral_get_params(f), present) /
                                 SP_RUNS;
            sp_value_hashes(f, SP_DISTINCT, hashes);
            for (uint32_t i = 0; i < SP_ITEMS; i++)
                exp_require(ebb_spectral_add_hash(f, hashes[stream[i]], 1),
                            "ebb_spectral_add_hash");
            sp_errors e;
            sp_measure(f, hashes, truth, SP_DISTINCT, &e);
            sp_mean_add(&out->mean[mi], &e);
            ebb_spectral_destroy(f);
        }
    }
    free(stream);
}

static void write_csv(const exp_context *ctx, const char *file,
                      const char *xname, const point *pts, size_t count)
{
    FILE *csv = exp_open_csv(ctx, file);
    fprintf(csv, "%s,counters,eb_exact,ms_additive,mi_additive,rm_additive,"
                 "ms_ratio,mi_ratio,rm_ratio,ms_below,mi_below,rm_below\n",
            xname);
    for (size_t i = 0; i < count; i++) {
        const point *p = &pts[i];
        fprintf(csv, "%g,%" PRIu64 ",%.6g", p->x, p->counters, p->eb_exact);
        for (unsigned m = 0; m < SP_METHODS; m++)
            fprintf(csv, ",%.6g", sp_mean_additive(&p->mean[m]));
        for (unsigned m = 0; m < SP_METHODS; m++)
            fprintf(csv, ",%.6g", sp_mean_ratio(&p->mean[m]));
        for (unsigned m = 0; m < SP_METHODS; m++)
            fprintf(csv, ",%" PRIu64, p->mean[m].below);
        fputc('\n', csv);
    }
    exp_close(csv, file);
}

static void write_table(FILE *md, const char *xname, const point *pts,
                        size_t count)
{
    fprintf(md, "| %s | m | E_b | additive MS | MI | RM | error ratio MS | "
                "MI | RM |\n|---|---|---|---|---|---|---|---|---|\n",
            xname);
    for (size_t i = 0; i < count; i++) {
        const point *p = &pts[i];
        fprintf(md, "| %g | %" PRIu64 " | %.4f", p->x, p->counters,
                p->eb_exact);
        for (unsigned m = 0; m < SP_METHODS; m++)
            fprintf(md, " | %.3f", sp_mean_additive(&p->mean[m]));
        for (unsigned m = 0; m < SP_METHODS; m++)
            fprintf(md, " | %.4f", sp_mean_ratio(&p->mean[m]));
        fputs(" |\n", md);
    }
    fputc('\n', md);
}

/* The bar: method mi's error ratio never above MS's and below it
 * wherever MS erred at least MIN_MS_ERRORS times. */
static void check_below_ms(exp_context *ctx, const char *figure,
                           const char *xname, const point *pts, size_t count,
                           unsigned mi)
{
    bool ok = true;
    double worst = 0.0, worst_x = NAN;
    for (size_t i = 0; i < count; i++) {
        double ms = sp_mean_ratio(&pts[i].mean[0]);
        double other = sp_mean_ratio(&pts[i].mean[mi]);
        bool counted = pts[i].mean[0].wrong >= MIN_MS_ERRORS;
        if (other > ms || (counted && !(other < ms)))
            ok = false;
        double share = ms > 0.0 ? other / ms : 0.0;
        if (counted && share >= worst) {
            worst = share;
            worst_x = pts[i].x;
        }
    }
    exp_check(ctx, EXP_CHECK_STAT, ok,
              "issue bar: %s: %s error ratio below MS's at every %s "
              "(highest %s/MS %.3f at %s %g)",
              figure, sp_method_name(SP_METHOD[mi]), xname,
              sp_method_name(SP_METHOD[mi]), worst, xname, worst_x);
}

/* bar_from: the first point of the bar (k = 1 is the same for all). */
static void check_points(exp_context *ctx, const char *figure,
                         const char *xname, const point *pts, size_t count,
                         size_t bar_from)
{
    for (unsigned m = 0; m < SP_METHODS; m++) {
        uint64_t below = 0;
        for (size_t i = 0; i < count; i++)
            below += pts[i].mean[m].below;
        exp_check(ctx, EXP_CHECK_GUARANTEE, below == 0,
                  "%s: %s never below the true count on insert-only data "
                  "(%" PRIu64 " estimates below)",
                  figure, sp_method_name(SP_METHOD[m]), below);
    }
    check_below_ms(ctx, figure, xname, pts + bar_from, count - bar_from, 1);
    check_below_ms(ctx, figure, xname, pts + bar_from, count - bar_from, 2);
}

static void check_eb(exp_context *ctx, const point *pts, size_t count)
{
    double worst = 0.0, at = NAN;
    for (size_t i = 0; i < count; i++) {
        const sp_mean *ms = &pts[i].mean[0];
        double z = fabs(exp_binomial_z(ms->wrong, ms->queries,
                                       pts[i].eb_exact));
        if (pts[i].eb_exact > 0.0 && z >= worst) {
            worst = z;
            at = pts[i].x;
        }
    }
    exp_check(ctx, EXP_CHECK_STAT, worst <= 3.0,
              "Fig. 6: MS error ratio within 3 binomial sd of E_b at every "
              "gamma (largest |z| %.2f at gamma %g)",
              worst, at);
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "spectral_sweeps", argc, argv);

    point gamma_pts[GAMMA_COUNT];
    for (size_t i = 0; i < GAMMA_COUNT; i++) {
        gamma_pts[i].x = GAMMAS[i];
        run_point(&ctx, 1, (uint32_t)i,
                  sp_counters_for(SP_DISTINCT, SP_K, GAMMAS[i]), SP_K,
                  &gamma_pts[i]);
    }
    point k_pts[K_MAX];
    for (uint32_t k = 1; k <= K_MAX; k++) {
        k_pts[k - 1].x = k;
        run_point(&ctx, 2, k, sp_counters_for(SP_DISTINCT, k, K_GAMMA), k,
                  &k_pts[k - 1]);
    }

    write_csv(&ctx, "fig6_gamma.csv", "gamma", gamma_pts, GAMMA_COUNT);
    write_csv(&ctx, "fig6_k.csv", "k", k_pts, K_MAX);

    fputs("Against gamma (k = 5; Figure 6a and 6b):\n\n", ctx.md);
    write_table(ctx.md, "gamma", gamma_pts, GAMMA_COUNT);
    fputs("Against k (gamma = 0.7; Figure 6c):\n\n", ctx.md);
    write_table(ctx.md, "k", k_pts, K_MAX);

    check_points(&ctx, "Fig. 6 (gamma)", "gamma", gamma_pts, GAMMA_COUNT, 0);
    check_points(&ctx, "Fig. 6 (k >= 2)", "k", k_pts, K_MAX, 1);
    check_eb(&ctx, gamma_pts, GAMMA_COUNT);
    return exp_end(&ctx);
}
