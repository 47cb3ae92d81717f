/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_stable_importance.c: the paper's Figures 11-19 (false positives and
 * false negatives per importance on its three synthetic distributions) and
 * Table I's metrics (FP, FN, wFP, wFN) on the synthetic data, for the five
 * filters of its Table III at equal memory, under both readings of its
 * memory (stable_exp.h).
 *
 * The stream (one per distribution and repeat fraction, the same for every
 * filter; stable.md.in states it in full): STREAM items; item i repeats
 * with probability r (10, 30, 50%), otherwise it is a fresh key whose
 * importance is uniform on 1..50. A repeat draws one of the last POOL fresh
 * keys: a slot uniformly, accepted with probability w(importance) / w_max,
 * w = 1 (uniform), importance (proportional) or 1 / importance (inversely
 * proportional), drawn again otherwise. Ground truth comes from an exact set
 * (a bitmap over the key ids): an item is never-seen or repeated by it, and
 * it must agree with what the generator meant.
 *
 * Every item goes through ebb_stable_test_and_add with its importance. FP:
 * a never-seen item reported seen; FN: a repeated item reported unseen.
 * Counted over the steady part (after WARMUP items) for the figures, and
 * over the whole stream from empty filters too for the table.
 *
 * Writes docs/results/stable/importance_<reading>_<distribution>.csv (per
 * importance bucket), table1.csv, and the fragments stable_streams,
 * stable_table1_<reading>, stable_claims.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stable_exp.h"

#define STREAM 500000u
#define WARMUP 100000u
#define POOL 10000u
#define EXPERIMENT_ID 11u
#define BUCKET 5u
#define BUCKETS (SX_IMPORTANCES / BUCKET)

typedef enum sx_dist {
    SX_UNIFORM = 0,
    SX_PROPORTIONAL = 1,
    SX_INVERSE = 2,
    SX_DISTS = 3
} sx_dist;

static const char *const dist_names[SX_DISTS] = {"uniform", "proportional",
                                                 "inverse"};
#define REPEATS 3
static const unsigned repeat_pcts[REPEATS] = {10, 30, 50};

typedef struct stream {
    uint32_t key[STREAM];
    uint8_t imp[STREAM];
    uint8_t fresh[STREAM];
    uint32_t distinct;
    uint64_t gap_sum, gaps; /* repeats' distance to the key's previous item */
    uint64_t occurrences[SX_IMPORTANCES + 1]; /* steady part */
} stream;

/* Counts of one filter on one stream. Index 0 of the per-importance arrays
 * is unused. */
typedef struct tally {
    uint64_t fresh[SX_IMPORTANCES + 1], fp[SX_IMPORTANCES + 1];
    uint64_t rep[SX_IMPORTANCES + 1], fn[SX_IMPORTANCES + 1];
    /* Whole stream from empty. */
    uint64_t all_fresh, all_fp, all_rep, all_fn;
    double all_fresh_w, all_fp_w, all_rep_w, all_fn_w;
} tally;

static double weight(sx_dist d, unsigned imp)
{
    switch (d) {
    case SX_PROPORTIONAL:
        return (double)imp / SX_IMPORTANCE_HIGH;
    case SX_INVERSE:
        return (double)SX_IMPORTANCE_LOW / imp;
    default:
        return 1.0;
    }
}

static void generate(exp_context *ctx, sx_dist d, unsigned r, stream *s)
{
    static uint32_t ring[POOL];
    static uint8_t key_imp[STREAM];
    static uint8_t seen[STREAM];
    static uint32_t last[STREAM];
    exp_rng rng;
    exp_rng_seed(&rng, exp_derive_seed(ctx->seed, EXPERIMENT_ID, d, r));
    double repeat = repeat_pcts[r] / 100.0;
    uint32_t introduced = 0;
    uint64_t disagreements = 0;
    memset(seen, 0, sizeof seen);
    memset(s->occurrences, 0, sizeof s->occurrences);
    s->gap_sum = s->gaps = 0;
    for (uint32_t i = 0; i < STREAM; i++) {
        bool want_repeat = introduced > 0 && exp_rng_unit(&rng) < repeat;
        uint32_t id;
        if (want_repeat) {
            uint32_t held = introduced < POOL ? introduced : POOL;
            do {
                uint32_t age = (uint32_t)exp_rng_below(&rng, held);
                id = ring[(introduced - 1u - age) % POOL];
            } while (exp_rng_unit(&rng) >= weight(d, key_imp[id]));
        } else {
            id = introduced;
            key_imp[id] = (uint8_t)(SX_IMPORTANCE_LOW +
                                    exp_rng_below(&rng, SX_IMPORTANCES));
            ring[introduced % POOL] = id;
            introduced++;
        }
        /* The exact set decides; the generator's intention must agree. */
        bool fresh = !seen[id];
        seen[id] = 1;
        disagreements += fresh == want_repeat;
        if (!fresh) {
            s->gap_sum += i - last[id];
            s->gaps++;
        }
        last[id] = i;
        s->key[i] = id;
        s->imp[i] = key_imp[id];
        s->fresh[i] = fresh;
        if (i >= WARMUP)
            s->occurrences[key_imp[id]]++;
    }
    s->distinct = introduced;
    exp_check(ctx, EXP_CHECK_GUARANTEE, disagreements == 0,
              "stream %s %u%%: the exact set agrees with the generator on "
              "every item (%" PRIu64 " disagreements)",
              dist_names[d], repeat_pcts[r], disagreements);
}

static void run_filter(const stream *s, ebb_stable *filter, uint64_t key_stream,
                       tally *t)
{
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < STREAM; i++) {
        unsigned char key[16];
        sx_key(key_stream, s->key[i], key);
        unsigned imp = s->imp[i];
        bool seen = false;
        exp_require(ebb_stable_test_and_add(filter, key, sizeof key,
                                            (double)imp, &seen),
                    "ebb_stable_test_and_add");
        bool fresh = s->fresh[i];
        bool error = fresh ? seen : !seen;
        if (fresh) {
            t->all_fresh++;
            t->all_fresh_w += imp;
            t->all_fp += error;
            t->all_fp_w += error ? imp : 0;
        } else {
            t->all_rep++;
            t->all_rep_w += imp;
            t->all_fn += error;
            t->all_fn_w += error ? imp : 0;
        }
        if (i < WARMUP)
            continue;
        if (fresh) {
            t->fresh[imp]++;
            t->fp[imp] += error;
        } else {
            t->rep[imp]++;
            t->fn[imp] += error;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Aggregates                                                               */
/* ------------------------------------------------------------------------ */

typedef struct rates {
    double fp, fn, wfp, wfn;
} rates;

static double ratio(double a, double b)
{
    return b > 0.0 ? a / b : NAN;
}

/* Steady part, importances lo..hi. */
static rates range_rates(const tally *t, unsigned lo, unsigned hi)
{
    double fresh = 0, fp = 0, rep = 0, fn = 0;
    double fresh_w = 0, fp_w = 0, rep_w = 0, fn_w = 0;
    for (unsigned i = lo; i <= hi; i++) {
        fresh += t->fresh[i];
        fp += t->fp[i];
        rep += t->rep[i];
        fn += t->fn[i];
        fresh_w += (double)t->fresh[i] * i;
        fp_w += (double)t->fp[i] * i;
        rep_w += (double)t->rep[i] * i;
        fn_w += (double)t->fn[i] * i;
    }
    rates out = {ratio(fp, fresh), ratio(fn, rep), ratio(fp_w, fresh_w),
                 ratio(fn_w, rep_w)};
    return out;
}

/* z of the rise of the FP rate from importances 1-5 to 46-50 (two
 * proportions, pooled sd). */
static double fp_rise_z(const tally *t)
{
    double n1 = 0, x1 = 0, n2 = 0, x2 = 0;
    for (unsigned i = 1; i <= BUCKET; i++) {
        n1 += t->fresh[i];
        x1 += t->fp[i];
    }
    for (unsigned i = SX_IMPORTANCES - BUCKET + 1; i <= SX_IMPORTANCES; i++) {
        n2 += t->fresh[i];
        x2 += t->fp[i];
    }
    double pool = (x1 + x2) / (n1 + n2);
    double sd = sqrt(pool * (1.0 - pool) * (1.0 / n1 + 1.0 / n2));
    return sd > 0.0 ? (x2 / n2 - x1 / n1) / sd : 0.0;
}

static rates steady_rates(const tally *t)
{
    return range_rates(t, SX_IMPORTANCE_LOW, SX_IMPORTANCE_HIGH);
}

static rates whole_rates(const tally *t)
{
    rates out = {ratio((double)t->all_fp, (double)t->all_fresh),
                 ratio((double)t->all_fn, (double)t->all_rep),
                 ratio(t->all_fp_w, t->all_fresh_w),
                 ratio(t->all_fn_w, t->all_rep_w)};
    return out;
}

/* Results of every run: [reading][dist][repeats][filter]. */
static tally results[SX_READINGS][SX_DISTS][REPEATS][SX_FILTERS];
static stream streams_info[SX_DISTS][REPEATS]; /* only the summary fields */

/* ------------------------------------------------------------------------ */
/* Outputs                                                                  */
/* ------------------------------------------------------------------------ */

static void write_bucket_csv(const exp_context *ctx, sx_reading rd, sx_dist d)
{
    char name[128];
    snprintf(name, sizeof name, "importance_%s_%s.csv", sx_reading_name(rd),
             dist_names[d]);
    FILE *csv = exp_open_csv(ctx, name);
    fputs("importance_low,importance_high,importance_mid", csv);
    for (unsigned r = 0; r < REPEATS; r++)
        fprintf(csv, ",occurrences_r%u", repeat_pcts[r]);
    for (unsigned r = 0; r < REPEATS; r++)
        for (unsigned f = 0; f < SX_FILTERS; f++)
            fprintf(csv, ",fp_%s_r%u,fn_%s_r%u", sx_filter_name(f),
                    repeat_pcts[r], sx_filter_name(f), repeat_pcts[r]);
    fputc('\n', csv);
    for (unsigned b = 0; b < BUCKETS; b++) {
        unsigned lo = SX_IMPORTANCE_LOW + b * BUCKET, hi = lo + BUCKET - 1;
        fprintf(csv, "%u,%u,%.1f", lo, hi, (lo + hi) / 2.0);
        for (unsigned r = 0; r < REPEATS; r++) {
            uint64_t occ = 0;
            for (unsigned i = lo; i <= hi; i++)
                occ += streams_info[d][r].occurrences[i];
            fprintf(csv, ",%" PRIu64, occ);
        }
        for (unsigned r = 0; r < REPEATS; r++)
            for (unsigned f = 0; f < SX_FILTERS; f++) {
                rates x = range_rates(&results[rd][d][r][f], lo, hi);
                fprintf(csv, ",%.5f,%.5f", x.fp, x.fn);
            }
        fputc('\n', csv);
    }
    exp_close(csv, name);
}

static void write_table1_csv(const exp_context *ctx)
{
    FILE *csv = exp_open_csv(ctx, "table1.csv");
    fputs("reading,distribution,repeats_pct,filter,never_seen,fp,repeated,fn,"
          "FP,FN,wFP,wFN,whole_FP,whole_FN,whole_wFP,whole_wFN\n",
          csv);
    for (unsigned rd = 0; rd < SX_READINGS; rd++)
        for (unsigned d = 0; d < SX_DISTS; d++)
            for (unsigned r = 0; r < REPEATS; r++)
                for (unsigned f = 0; f < SX_FILTERS; f++) {
                    const tally *t = &results[rd][d][r][f];
                    uint64_t fresh = 0, fp = 0, rep = 0, fn = 0;
                    for (unsigned i = 1; i <= SX_IMPORTANCES; i++) {
                        fresh += t->fresh[i];
                        fp += t->fp[i];
                        rep += t->rep[i];
                        fn += t->fn[i];
                    }
                    rates s = steady_rates(t), w = whole_rates(t);
                    fprintf(csv,
                            "%s,%s,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                            ",%" PRIu64 ",%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,"
                            "%.5f\n",
                            sx_reading_name(rd), dist_names[d],
                            repeat_pcts[r], sx_filter_name(f), fresh, fp, rep,
                            fn, s.fp, s.fn, s.wfp, s.wfn, w.fp, w.fn, w.wfp,
                            w.wfn);
                }
    exp_close(csv, "table1.csv");
}

static double pct(double x)
{
    return 100.0 * x;
}

static void write_table1_md(const exp_context *ctx, sx_reading rd)
{
    char name[64];
    snprintf(name, sizeof name, "stable_table1_%s",
             rd == SX_READING_MEMORY ? "memory" : "cells");
    FILE *md = exp_open_fragment(ctx, name);
    fprintf(md, "| distribution | repeats | filter | FP %% | FN %% | wFP %% | "
                "wFN %% | whole stream: FP %% | FN %% | wFP %% | wFN %% |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned d = 0; d < SX_DISTS; d++)
        for (unsigned r = 0; r < REPEATS; r++)
            for (unsigned f = 0; f < SX_FILTERS; f++) {
                rates s = steady_rates(&results[rd][d][r][f]);
                rates w = whole_rates(&results[rd][d][r][f]);
                fprintf(md, "| %s | %u%% | %s | %.2f | %.2f | %.2f | %.2f | "
                            "%.2f | %.2f | %.2f | %.2f |\n",
                        f == 0 ? dist_names[d] : "",
                        repeat_pcts[r], sx_filter_name(f), pct(s.fp),
                        pct(s.fn), pct(s.wfp), pct(s.wfn), pct(w.fp),
                        pct(w.fn), pct(w.wfp), pct(w.wfn));
            }
    exp_close(md, name);
}

static void write_streams_md(const exp_context *ctx)
{
    FILE *md = exp_open_fragment(ctx, "stable_streams");
    fprintf(md, "| distribution | r | repeated items (whole stream) | "
                "distinct keys | mean gap of a repeat (items) |\n");
    fprintf(md, "|---|---|---|---|---|\n");
    for (unsigned d = 0; d < SX_DISTS; d++)
        for (unsigned r = 0; r < REPEATS; r++) {
            const stream *s = &streams_info[d][r];
            fprintf(md, "| %s | %u%% | %.2f%% | %u | %.0f |\n", dist_names[d],
                    repeat_pcts[r], 100.0 * (STREAM - s->distinct) / STREAM,
                    s->distinct, (double)s->gap_sum / (double)s->gaps);
        }
    exp_close(md, "stable_streams");
}

/* ------------------------------------------------------------------------ */
/* The paper's claims, in numbers                                           */
/* ------------------------------------------------------------------------ */

/* Pools the three repeat fractions' steady tallies of one filter. */
static void pooled(sx_reading rd, sx_dist d, sx_filter f, tally *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned r = 0; r < REPEATS; r++) {
        const tally *t = &results[rd][d][r][f];
        for (unsigned i = 1; i <= SX_IMPORTANCES; i++) {
            out->fresh[i] += t->fresh[i];
            out->fp[i] += t->fp[i];
            out->rep[i] += t->rep[i];
            out->fn[i] += t->fn[i];
        }
    }
}

static void claim(exp_context *ctx, FILE *md, bool ok, const char *figs,
                  const char *paper, const char *ours)
{
    fprintf(md, "| %s | %s | %s | %s |\n", figs, paper, ours,
            ok ? "yes" : "**no**");
    exp_check(ctx, EXP_CHECK_STAT, ok, "paper's claim (%s): %s; ours: %s",
              figs, paper, ours);
}

static void write_claims(exp_context *ctx)
{
    const sx_reading rd = SX_READING_MEMORY;
    FILE *md = exp_open_fragment(ctx, "stable_claims");
    fprintf(md, "| figures | the paper says | ours (16 KB, steady part, the "
                "three repeat fractions pooled) | holds |\n");
    fprintf(md, "|---|---|---|---|\n");
    char buf[512];
    tally t[SX_FILTERS];

    /* Synthetic 1: lower FP than SBF at almost every importance. */
    for (unsigned f = 0; f < SX_FILTERS; f++)
        pooled(rd, SX_UNIFORM, f, &t[f]);
    unsigned lower = 0;
    for (unsigned b = 0; b < BUCKETS; b++) {
        unsigned lo = 1 + b * BUCKET, hi = lo + BUCKET - 1;
        lower += range_rates(&t[SX_IBF_MC], lo, hi).fp <
                 range_rates(&t[SX_STABLE], lo, hi).fp;
    }
    rates st = steady_rates(&t[SX_STABLE]), mc = steady_rates(&t[SX_IBF_MC]);
    snprintf(buf, sizeof buf,
             "IBF-MC's FP below stable's in %u of %u importance buckets "
             "(%.2f%% against %.2f%% overall)",
             lower, BUCKETS, pct(mc.fp), pct(st.fp));
    claim(ctx, md, lower >= BUCKETS - 1, "12",
          "IBF has lower FP than SBF for almost all importance values", buf);

    /* Synthetic 1: about the same or lower FN for the more important. */
    rates st_top = range_rates(&t[SX_STABLE], 36, 50);
    rates mc_top = range_rates(&t[SX_IBF_MC], 36, 50);
    rates c2_top = range_rates(&t[SX_IBF_2C], 36, 50);
    snprintf(buf, sizeof buf,
             "FN for importance 36-50: stable %.2f%%, IBF-2C %.2f%%, IBF-MC "
             "%.2f%%",
             pct(st_top.fn), pct(c2_top.fn), pct(mc_top.fn));
    claim(ctx, md, mc_top.fn <= st_top.fn * 1.5 + 0.005, "13",
          "IBF has about the same or lower FN than SBF for items of more "
          "importance",
          buf);

    /* Synthetic 3: FP goes up with importance for BF and SBF. */
    for (unsigned f = 0; f < SX_FILTERS; f++)
        pooled(rd, SX_INVERSE, f, &t[f]);
    rates bf_lo = range_rates(&t[SX_BF], 1, 5), bf_hi = range_rates(&t[SX_BF], 46, 50);
    rates st_lo = range_rates(&t[SX_STABLE], 1, 5),
          st_hi = range_rates(&t[SX_STABLE], 46, 50);
    double bf_z = fp_rise_z(&t[SX_BF]), st_z = fp_rise_z(&t[SX_STABLE]);
    snprintf(buf, sizeof buf,
             "FP at importance 1-5 / 46-50: BF %.2f%% / %.2f%% (z of the "
             "rise %+.2f), stable %.2f%% / %.2f%% (z %+.2f)",
             pct(bf_lo.fp), pct(bf_hi.fp), bf_z, pct(st_lo.fp),
             pct(st_hi.fp), st_z);
    claim(ctx, md, bf_z > 3.0 && st_z > 3.0, "15",
          "BF's and SBF's FP rates go up as importance increases", buf);

    /* Synthetic 3: IBF-MC low FP and FN for high importance. */
    rates mc_hi = range_rates(&t[SX_IBF_MC], 36, 50);
    rates s_hi = range_rates(&t[SX_STABLE], 36, 50);
    rates c2_hi = range_rates(&t[SX_IBF_2C], 36, 50);
    rates h_hi = range_rates(&t[SX_IBF_H], 36, 50);
    snprintf(buf, sizeof buf,
             "importance 36-50: FP stable %.2f%%, IBF-2C %.2f%%, IBF-MC "
             "%.2f%%; FN stable %.2f%%, IBF-2C %.2f%%, IBF-MC %.2f%%",
             pct(s_hi.fp), pct(c2_hi.fp), pct(mc_hi.fp), pct(s_hi.fn),
             pct(c2_hi.fn), pct(mc_hi.fn));
    claim(ctx, md, c2_hi.fp < s_hi.fp && c2_hi.fn < s_hi.fn, "15, 16",
          "for importance above 35, IBF has about 4% lower FN and about 8% "
          "lower FP than SBF",
          buf);

    /* IBF-H: similar to IBF-MC, with higher FN. */
    rates h_all = steady_rates(&t[SX_IBF_H]);
    rates mc_all = steady_rates(&t[SX_IBF_MC]);
    snprintf(buf, sizeof buf,
             "overall FN IBF-H %.2f%% vs IBF-MC %.2f%% (importance 36-50: "
             "%.2f%% vs %.2f%%); FP %.2f%% vs %.2f%%",
             pct(h_all.fn), pct(mc_all.fn), pct(h_hi.fn), pct(mc_hi.fn),
             pct(h_all.fp), pct(mc_all.fp));
    claim(ctx, md, h_all.fn > mc_all.fn, "16",
          "IBF-H behaves like IBF-MC but with higher FN", buf);

    /* IBF-2C: two classes in FN. */
    rates c2_low = range_rates(&t[SX_IBF_2C], 1, 25);
    rates c2_high = range_rates(&t[SX_IBF_2C], 26, 50);
    snprintf(buf, sizeof buf,
             "IBF-2C FN at importance 1-25: %.2f%%, 26-50: %.2f%%",
             pct(c2_low.fn), pct(c2_high.fn));
    claim(ctx, md, c2_high.fn < c2_low.fn, "16",
          "IBF-2C shows a clear distinction between the two classes in FN",
          buf);

    /* Synthetic 2: as good as SBF for the high importances. */
    for (unsigned f = 0; f < SX_FILTERS; f++)
        pooled(rd, SX_PROPORTIONAL, f, &t[f]);
    rates p_st = range_rates(&t[SX_STABLE], 36, 50);
    rates p_mc = range_rates(&t[SX_IBF_MC], 36, 50);
    rates p_2c = range_rates(&t[SX_IBF_2C], 36, 50);
    snprintf(buf, sizeof buf,
             "importance 36-50: FP stable %.2f%%, IBF-2C %.2f%%, IBF-MC "
             "%.2f%%; FN stable %.2f%%, IBF-2C %.2f%%, IBF-MC %.2f%%",
             pct(p_st.fp), pct(p_2c.fp), pct(p_mc.fp), pct(p_st.fn),
             pct(p_2c.fn), pct(p_mc.fn));
    claim(ctx, md,
          p_mc.fp <= p_st.fp && p_mc.fn <= p_st.fn * 1.5 + 0.005, "18, 19",
          "IBF performs as well as SBF in FP and FN for higher importance",
          buf);
    exp_close(md, "stable_claims");
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "stable_importance", argc, argv);
    static stream s;
    for (unsigned d = 0; d < SX_DISTS; d++)
        for (unsigned r = 0; r < REPEATS; r++) {
            generate(&ctx, d, r, &s);
            streams_info[d][r].distinct = s.distinct;
            streams_info[d][r].gap_sum = s.gap_sum;
            streams_info[d][r].gaps = s.gaps;
            memcpy(streams_info[d][r].occurrences, s.occurrences,
                   sizeof s.occurrences);
            uint32_t unit = d * REPEATS + r;
            uint64_t key_stream = exp_stream(EXP_STREAM_INSERT,
                                             EXPERIMENT_ID, unit);
            for (unsigned rd = 0; rd < SX_READINGS; rd++)
                for (unsigned f = 0; f < SX_FILTERS; f++) {
                    ebb_stable_params params;
                    sx_params(f, rd, EBB_STABLE_DRAW_CONSECUTIVE, &params);
                    ebb_stable *filter = sx_create(
                        &params, exp_derive_seed(ctx.seed, EXPERIMENT_ID,
                                                 unit * 8u + rd, f));
                    tally *t = &results[rd][d][r][f];
                    run_filter(&s, filter, key_stream, t);
                    ebb_stable_destroy(filter);
                    if (f == SX_BF)
                        exp_check(&ctx, EXP_CHECK_GUARANTEE, t->all_fn == 0,
                                  "%s %s %u%%: the BF (P = 0) never misses "
                                  "a repeat (%" PRIu64 " of %" PRIu64 ")",
                                  sx_reading_name(rd), dist_names[d],
                                  repeat_pcts[r], t->all_fn, t->all_rep);
                }
        }
    for (unsigned rd = 0; rd < SX_READINGS; rd++) {
        for (unsigned d = 0; d < SX_DISTS; d++)
            write_bucket_csv(&ctx, rd, d);
        write_table1_md(&ctx, rd);
    }
    write_table1_csv(&ctx);
    write_streams_md(&ctx);
    write_claims(&ctx);
    fprintf(ctx.md, "%u items per stream, %u of them warm-up; a repeat draws "
                    "among the last %u fresh keys.\n",
            STREAM, WARMUP, POOL);
    return exp_end(&ctx);
}
