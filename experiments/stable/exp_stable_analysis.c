/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_stable_analysis.c: beyond the paper, the analysis against measurement
 * for several shapes, and the two ways of drawing the P cells.
 *
 * For each shape (m, d, K, P, variant) and draw: REPLICAS filters, each
 * warmed up with fresh keys until the cell chain from all zeros is within
 * 1e-5 of the stationary distribution (stable_exp.h), then MEASURE more
 * fresh keys (importances uniform on 1..50 for the importance-aware
 * variants). After each insertion:
 *   - one never-inserted key is queried (FP, against FPS = (1 - V_0)^K of
 *     ebb_stable_analyse);
 *   - for each gap g, the key inserted g - 1 insertions earlier is queried:
 *     the next item would be its duplicate at gap g (stable.h's definition)
 *     (FN, against ebb_stable_fn_at_gap for the level that key set);
 * and the zero fraction is read at the end of each filter (against V_0).
 * z uses the binomial sd; the probes of one filter share its state, which
 * the binomial sd ignores (see stable.md.in).
 *
 * Writes docs/results/stable/analysis_fp.csv, analysis_fn.csv and the
 * fragments stable_analysis_fp, stable_analysis_fn, stable_draws.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stable_exp.h"

#define REPLICAS 4u
#define MEASURE 100000u
#define EXPERIMENT_ID 40u
#define GAPS 3
#define MAX_WARMUP 2000000u
#define SETTLE_TOL 1e-5
#define ZERO_SAMPLE_EVERY 1000u

typedef struct shape {
    const char *name;
    uint64_t cells;
    uint32_t cell_bits, k, p;
    ebb_stable_variant variant;
    bool chosen; /* from ebb_stable_choose(32 KB, fp 0.01, d = 3) */
} shape;

static const shape shapes[] = {
    {"paper", 43690, 3, 5, 10, EBB_STABLE_PLAIN, false},
    {"d1", 65536, 1, 3, 8, EBB_STABLE_PLAIN, false},
    {"d2", 65536, 2, 4, 16, EBB_STABLE_PLAIN, false},
    {"d4", 65536, 4, 3, 40, EBB_STABLE_PLAIN, false},
    {"chosen", 0, 3, 0, 0, EBB_STABLE_PLAIN, true},
    {"paper-2C", 43690, 3, 5, 10, EBB_STABLE_IBF_2C, false},
    {"paper-MC", 43690, 3, 5, 10, EBB_STABLE_IBF_MC, false},
    {"paper-H", 43690, 3, 5, 10, EBB_STABLE_IBF_H, false},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])
#define DRAWS 2

static const char *const draw_names[DRAWS] = {"independent", "consecutive"};
static const char *const variant_names[] = {"stable", "IBF-2C", "IBF-MC",
                                            "IBF-H"};

typedef struct measurement {
    bool done;
    ebb_stable_params params;
    double probs[SX_MAX_LEVELS];
    ebb_stable_analysis analysis;
    uint64_t warmup;
    uint64_t gaps[GAPS];
    uint64_t probes, fp;
    uint64_t zero_cells, cells; /* final snapshots, summed */
    double zero_mean;           /* over the samples and replicas */
    /* FN per gap and level. */
    uint64_t asked[GAPS][SX_MAX_LEVELS], missed[GAPS][SX_MAX_LEVELS];
    double model_fn[GAPS][SX_MAX_LEVELS];
    uint64_t gap1_asked, gap1_missed;
} measurement;

static measurement results[SHAPES][DRAWS];

static void make_params(const shape *s, ebb_stable_draw draw,
                        ebb_stable_params *out)
{
    if (s->chosen) {
        ebb_stable_goal goal;
        exp_require(ebb_stable_goal_init(32768, 0.01, &goal),
                    "ebb_stable_goal_init");
        goal.cell_bits = s->cell_bits;
        goal.draw = draw;
        exp_require(ebb_stable_choose(&goal, out), "ebb_stable_choose");
    } else {
        exp_require(ebb_stable_params_init(s->cells, s->cell_bits, s->k, s->p,
                                           out),
                    "ebb_stable_params_init");
    }
    out->variant = s->variant;
    out->draw = draw;
    out->importance.low = SX_IMPORTANCE_LOW;
    out->importance.high = SX_IMPORTANCE_HIGH;
    out->importance.threshold = SX_IMPORTANT_ABOVE;
    out->importance.policy = EBB_STABLE_REFUSE;
    exp_require(ebb_stable_params_check(out), "ebb_stable_params_check");
}

/* Gaps at a quarter, half and all of Max m / P insertions: the time a cell
 * set to Max takes to be decremented Max times when nothing sets it again. */
static void choose_gaps(const ebb_stable_params *p, uint64_t *gaps)
{
    double tau = (double)ebb_stable_max_level(p->cell_bits) *
                 (double)p->cells / (double)p->p;
    gaps[0] = (uint64_t)llround(tau / 4.0);
    gaps[1] = (uint64_t)llround(tau / 2.0);
    gaps[2] = (uint64_t)llround(tau);
}

static uint32_t level_of(const ebb_stable_params *p, unsigned imp)
{
    uint32_t level = 0;
    exp_require(ebb_stable_level(p, (double)imp, &level, NULL),
                "ebb_stable_level");
    return level;
}

static void model(measurement *m)
{
    const ebb_stable_params *p = &m->params;
    sx_level_probs(p, m->probs);
    exp_require(ebb_stable_analyse(p, m->probs, &m->analysis),
                "ebb_stable_analyse");
    double stationary[SX_MAX_LEVELS];
    exp_require(ebb_stable_stationary(p, m->probs, stationary),
                "ebb_stable_stationary");
    sx_chain chain;
    sx_chain_init(&chain, p, m->probs);
    m->warmup = sx_chain_settle(&chain, stationary, SETTLE_TOL, MAX_WARMUP);
    choose_gaps(p, m->gaps);
    uint32_t max = ebb_stable_max_level(p->cell_bits);
    for (unsigned g = 0; g < GAPS; g++)
        for (uint32_t v = 1; v <= max; v++)
            if (m->probs[v] > 0.0)
                exp_require(ebb_stable_fn_at_gap(p, m->probs, v, m->gaps[g],
                                                 &m->model_fn[g][v]),
                            "ebb_stable_fn_at_gap");
}

static void measure(const exp_context *ctx, unsigned si, unsigned di,
                    measurement *m)
{
    const ebb_stable_params *p = &m->params;
    uint64_t ring_size = m->gaps[GAPS - 1] + 1;
    uint8_t *levels = malloc(ring_size);
    if (levels == NULL)
        exp_die("out of memory");
    double zero_sum = 0.0;
    uint64_t zero_samples = 0;
    for (unsigned r = 0; r < REPLICAS; r++) {
        uint32_t unit = (si * DRAWS + di) * 16u + r;
        ebb_stable *filter = sx_create(
            p, exp_derive_seed(ctx->seed, EXPERIMENT_ID, si * DRAWS + di, r));
        exp_rng rng;
        exp_rng_seed(&rng, exp_derive_seed(ctx->seed, EXPERIMENT_ID + 1,
                                           si * DRAWS + di, r));
        uint64_t insert = exp_stream(EXP_STREAM_INSERT, EXPERIMENT_ID, unit);
        uint64_t probe = exp_stream(EXP_STREAM_PROBE, EXPERIMENT_ID, unit);
        uint64_t total = m->warmup + MEASURE;
        unsigned char key[16];
        for (uint64_t t = 0; t < total; t++) {
            unsigned imp = SX_IMPORTANCE_LOW +
                           (unsigned)exp_rng_below(&rng, SX_IMPORTANCES);
            levels[t % ring_size] = (uint8_t)level_of(p, imp);
            sx_key(insert, t, key);
            exp_require(ebb_stable_add(filter, key, sizeof key, (double)imp),
                        "ebb_stable_add");
            if (t < m->warmup)
                continue;
            sx_key(probe, t, key);
            m->probes++;
            m->fp += ebb_stable_contains(filter, key, sizeof key);
            /* Gap 1: the duplicate right after its item is never missed. */
            sx_key(insert, t, key);
            m->gap1_asked++;
            m->gap1_missed += !ebb_stable_contains(filter, key, sizeof key);
            for (unsigned g = 0; g < GAPS; g++) {
                uint64_t s = t + 1 - m->gaps[g];
                if (t + 1 < m->gaps[g] || s < m->warmup)
                    continue;
                sx_key(insert, s, key);
                uint8_t v = levels[s % ring_size];
                m->asked[g][v]++;
                m->missed[g][v] += !ebb_stable_contains(filter, key,
                                                        sizeof key);
            }
            if ((t - m->warmup + 1) % ZERO_SAMPLE_EVERY == 0) {
                ebb_stable_stats stats;
                ebb_stable_get_stats(filter, &stats);
                zero_sum += stats.zero_fraction;
                zero_samples++;
            }
        }
        ebb_stable_stats stats;
        ebb_stable_get_stats(filter, &stats);
        m->zero_cells += stats.zero_cells;
        m->cells += p->cells;
        ebb_stable_destroy(filter);
    }
    m->zero_mean = zero_sum / (double)zero_samples;
    free(levels);
}

/* ------------------------------------------------------------------------ */

static const char *variant_name(const ebb_stable_params *p)
{
    return variant_names[p->variant];
}

static double zero_z(const measurement *m)
{
    return exp_binomial_z(m->zero_cells, m->cells, m->analysis.zero_fraction);
}

static bool draw_applies(const shape *s, unsigned di)
{
    /* IBF_H ignores the draw: one row. */
    return s->variant != EBB_STABLE_IBF_H ||
           di == EBB_STABLE_DRAW_INDEPENDENT;
}

static void check_and_tabulate(exp_context *ctx)
{
    FILE *fp_md = exp_open_fragment(ctx, "stable_analysis_fp");
    FILE *fn_md = exp_open_fragment(ctx, "stable_analysis_fn");
    FILE *fp_csv = exp_open_csv(ctx, "analysis_fp.csv");
    FILE *fn_csv = exp_open_csv(ctx, "analysis_fn.csv");
    fprintf(fp_md, "| shape | m | d | K | P | variant | draw | warm-up | "
                   "V_0 analysis | V_0 measured | z | FPS analysis | FP "
                   "measured | probes | sd | z |\n");
    fprintf(fp_md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                   "---|---|---|\n");
    fputs("shape,cells,cell_bits,k,p,variant,draw,warmup,v0_analysis,"
          "v0_measured,v0_z,fps_analysis,probes,fp,fp_measured,fp_sd,fp_z\n",
          fp_csv);
    fprintf(fn_md, "| shape | draw | level | gap | FN analysis | missed / "
                   "asked | FN measured | sd | z |\n");
    fprintf(fn_md, "|---|---|---|---|---|---|---|---|---|\n");
    fputs("shape,draw,level,gap,fn_analysis,asked,missed,fn_measured,fn_sd,"
          "fn_z\n",
          fn_csv);
    for (unsigned si = 0; si < SHAPES; si++)
        for (unsigned di = 0; di < DRAWS; di++) {
            const measurement *m = &results[si][di];
            if (!m->done)
                continue;
            const ebb_stable_params *p = &m->params;
            const char *name = shapes[si].name;
            double fps = m->analysis.fps;
            double rate = (double)m->fp / (double)m->probes;
            double sd = exp_binomial_sd(m->probes, fps);
            double z = exp_binomial_z(m->fp, m->probes, fps);
            double zz = zero_z(m);
            double v0 = (double)m->zero_cells / (double)m->cells;
            fprintf(fp_md, "| %s | %" PRIu64 " | %u | %u | %u | %s | %s | %"
                           PRIu64 " | %.5f | %.5f | %+.2f | %.5f | %.5f | %"
                           PRIu64 " | %.5f | %+.2f |\n",
                    name, p->cells, p->cell_bits, p->k, p->p,
                    variant_name(p), draw_names[di], m->warmup,
                    m->analysis.zero_fraction, v0, zz, fps, rate, m->probes,
                    sd, z);
            fprintf(fp_csv, "%s,%" PRIu64 ",%u,%u,%u,%s,%s,%" PRIu64
                            ",%.6f,%.6f,%.3f,%.6f,%" PRIu64 ",%" PRIu64
                            ",%.6f,%.6f,%.3f\n",
                    name, p->cells, p->cell_bits, p->k, p->p, variant_name(p),
                    draw_names[di], m->warmup, m->analysis.zero_fraction, v0,
                    zz, fps, m->probes, m->fp, rate, sd, z);
            exp_check(ctx, EXP_CHECK_STAT, fabs(zz) <= 3.0,
                      "%s %s: zero fraction %.5f vs V_0 %.5f (z %+.2f)", name,
                      draw_names[di], v0, m->analysis.zero_fraction, zz);
            exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
                      "%s %s: FP %" PRIu64 "/%" PRIu64 " vs FPS %.5f "
                      "(z %+.2f)",
                      name, draw_names[di], m->fp, m->probes, fps, z);
            exp_check(ctx, EXP_CHECK_GUARANTEE, m->gap1_missed == 0,
                      "%s %s: a duplicate right after its item is never "
                      "missed (%" PRIu64 " of %" PRIu64 ")",
                      name, draw_names[di], m->gap1_missed, m->gap1_asked);
            uint32_t max = ebb_stable_max_level(p->cell_bits);
            for (unsigned g = 0; g < GAPS; g++)
                for (uint32_t v = 1; v <= max; v++) {
                    if (m->asked[g][v] == 0)
                        continue;
                    /* The importance-aware rows: the lowest, middle and top
                     * levels set, to keep the table short. */
                    bool shown = p->variant == EBB_STABLE_PLAIN ||
                                 p->variant == EBB_STABLE_IBF_2C || v == 1 ||
                                 v == max || v == (max + 1) / 2;
                    if (!shown)
                        continue;
                    double model_fn = m->model_fn[g][v];
                    double measured = (double)m->missed[g][v] /
                                      (double)m->asked[g][v];
                    double fsd = exp_binomial_sd(m->asked[g][v], model_fn);
                    double fz = exp_binomial_z(m->missed[g][v],
                                               m->asked[g][v], model_fn);
                    fprintf(fn_md, "| %s | %s | %u | %" PRIu64 " | %.5f | %"
                                   PRIu64 " / %" PRIu64 " | %.5f | %.5f | "
                                   "%+.2f |\n",
                            name, draw_names[di], v, m->gaps[g], model_fn,
                            m->missed[g][v], m->asked[g][v], measured, fsd,
                            fz);
                    fprintf(fn_csv, "%s,%s,%u,%" PRIu64 ",%.6f,%" PRIu64
                                    ",%" PRIu64 ",%.6f,%.6f,%.3f\n",
                            name, draw_names[di], v, m->gaps[g], model_fn,
                            m->asked[g][v], m->missed[g][v], measured, fsd,
                            fz);
                    exp_check(ctx, EXP_CHECK_STAT, fabs(fz) <= 3.0,
                              "%s %s level %u gap %" PRIu64 ": FN %" PRIu64
                              "/%" PRIu64 " vs %.5f (z %+.2f)",
                              name, draw_names[di], v, m->gaps[g],
                              m->missed[g][v], m->asked[g][v], model_fn, fz);
                }
        }
    exp_close(fp_md, "stable_analysis_fp");
    exp_close(fn_md, "stable_analysis_fn");
    exp_close(fp_csv, "analysis_fp.csv");
    exp_close(fn_csv, "analysis_fn.csv");
}

/* Two-proportion z of a/n against b/k. */
static double diff_z(uint64_t a, uint64_t n, uint64_t b, uint64_t k)
{
    double pa = (double)a / (double)n, pb = (double)b / (double)k;
    double pool = (double)(a + b) / (double)(n + k);
    double sd = sqrt(pool * (1.0 - pool) * (1.0 / (double)n + 1.0 / (double)k));
    return sd > 0.0 ? (pa - pb) / sd : 0.0;
}

/* FN at the middle gap, every level pooled. */
static void middle_fn(const measurement *m, uint64_t *missed, uint64_t *asked)
{
    uint32_t max = ebb_stable_max_level(m->params.cell_bits);
    *missed = *asked = 0;
    for (uint32_t v = 1; v <= max; v++) {
        *missed += m->missed[1][v];
        *asked += m->asked[1][v];
    }
}

static void tabulate_draws(exp_context *ctx)
{
    FILE *md = exp_open_fragment(ctx, "stable_draws");
    fprintf(md, "| shape | zero fraction: independent / consecutive | z | FP: "
                "independent / consecutive | z | FN at gap (all levels): "
                "independent / consecutive | z |\n");
    fprintf(md, "|---|---|---|---|---|---|---|\n");
    for (unsigned si = 0; si < SHAPES; si++) {
        const measurement *a = &results[si][EBB_STABLE_DRAW_INDEPENDENT];
        const measurement *b = &results[si][EBB_STABLE_DRAW_CONSECUTIVE];
        if (!a->done || !b->done)
            continue;
        double za = diff_z(a->zero_cells, a->cells, b->zero_cells, b->cells);
        double zf = diff_z(a->fp, a->probes, b->fp, b->probes);
        uint64_t ma, na, mb, nb;
        middle_fn(a, &ma, &na);
        middle_fn(b, &mb, &nb);
        double zn = diff_z(ma, na, mb, nb);
        fprintf(md, "| %s | %.5f / %.5f | %+.2f | %.5f / %.5f | %+.2f | "
                    "%" PRIu64 ": %.5f / %.5f | %+.2f |\n",
                shapes[si].name, (double)a->zero_cells / (double)a->cells,
                (double)b->zero_cells / (double)b->cells, za,
                (double)a->fp / (double)a->probes,
                (double)b->fp / (double)b->probes, zf, a->gaps[1],
                (double)ma / (double)na, (double)mb / (double)nb, zn);
        exp_check(ctx, EXP_CHECK_STAT,
                  fabs(za) <= 3.0 && fabs(zf) <= 3.0 && fabs(zn) <= 3.0,
                  "%s: the consecutive draw gives the same zero fraction, FP "
                  "and FN as the independent one (z %+.2f, %+.2f, %+.2f)",
                  shapes[si].name, za, zf, zn);
    }
    exp_close(md, "stable_draws");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "stable_analysis", argc, argv);
    for (unsigned si = 0; si < SHAPES; si++)
        for (unsigned di = 0; di < DRAWS; di++) {
            if (!draw_applies(&shapes[si], di))
                continue;
            measurement *m = &results[si][di];
            make_params(&shapes[si], di, &m->params);
            model(m);
            measure(&ctx, si, di, m);
            m->done = true;
        }
    check_and_tabulate(&ctx);
    tabulate_draws(&ctx);
    fprintf(ctx.md, "%u filters per row, %u measured insertions each after "
                    "the warm-up; one never-inserted key queried per "
                    "insertion.\n",
            REPLICAS, MEASURE);
    return exp_end(&ctx);
}
