/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_spectral_rm.c: the paper's Tables 1 and 2 (Recurring Minimum).
 *
 * Table 1: k = 5, n = 1,000 values, Zipf skew 0.5, M = 100,000 items, a
 * primary of m = n k / gamma counters and a secondary of m_s = m / 2, for
 * gamma = 1, 0.83, 0.7, 0.625, 0.5. Its columns P(R_x) (the share of the
 * values in the data whose minimum counter recurs) and P(E_x | R_x) (the
 * share of those whose minimum is still wrong) are properties of the
 * primary's counters, which the public API does not expose: they are
 * measured on a plain counter vector kept here beside the filter (m
 * counters, k positions (h1 + i h2) mod m from ebb_hash, distinct positions
 * counted once), updated as MS is. From them the paper's formulas:
 * gamma_s = n (1 - P(R_x)) k / m_s, E_b^s = (1 - e^-gamma_s)^k,
 * E_RM = P(R_x) P(E_x | R_x) + (1 - P(R_x)) E_b^s. Beside them, measured
 * with the library: the error ratio of MS at m and of RM at (m, m/2), with
 * its marker (m bits) and without.
 *
 * Table 2: the extra memory a m given to MS (m (1 + a) counters, k raised
 * to floor(5 (1 + a)) to keep gamma near 0.7) or to RM as its secondary
 * (primary m, k = 5, secondary a m): MS's error ratio over RM's.
 *
 * Both tables: the mean of TABLE_RUNS runs (the paper's 5 leave RM's few
 * errors too noisy to read a ratio from). Writes table1.csv, table2.csv,
 * the fragments spectral_table1, spectral_table2, and checks.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectral_exp.h"

#define EXPERIMENT_ID 100u
#define SKEW 0.5
#define TABLE_RUNS 20u
#define T1_ROWS 5u
#define T2_COLS 6u

/* Table 1 as printed: gamma, E_b, P(R_x), P(E_x|R_x), gamma_s, E_b^s,
 * E_RM, E_b/E_RM; with the decimals printed for E_b^s and E_RM. */
typedef struct t1_row {
    double gamma, eb, pr, per, gamma_s, ebs, erm, gain;
    int ebs_decimals, erm_decimals;
} t1_row;

static const t1_row PAPER_T1[T1_ROWS] = {
    {1.0, 0.101, 0.657, 0.0045, 0.686, 0.03, 0.0132, 7.59, 2, 4},
    {0.83, 0.057, 0.697, 0.0028, 0.502, 0.0096, 0.0048, 11.7, 4, 4},
    {0.7, 0.032, 0.812, 0.002, 0.263, 0.0006, 0.0017, 18.48, 4, 4},
    {0.625, 0.021, 0.799, 0.0012, 0.251, 0.00054, 0.001, 20.3, 5, 3},
    {0.5, 0.009, 0.969, 0.0, 0.031, 2.65e-8, 8.21e-10, 11480352.0, 10, 12},
};

static const double T2_INCREASE[T2_COLS] = {1, 0.5, 0.33, 0.25, 0.2, 0.1};
static const double T2_PAPER_RATIO[T2_COLS] = {0.641, 3.341, 4.546,
                                                3.628, 2.496, 0.562};
static const unsigned T2_PAPER_K[T2_COLS] = {10, 7, 6, 6, 6, 5};

/* The plain counter vector of the primary (for P(R_x), P(E_x | R_x)). */
typedef struct model {
    uint64_t m;
    uint32_t k;
    uint64_t seed;
    uint32_t *c;
} model;

static void model_positions(const model *md, uint32_t v, uint64_t *pos)
{
    unsigned char key[8];
    for (unsigned b = 0; b < 8; b++)
        key[b] = (unsigned char)((uint64_t)v >> (8 * b));
    ebb_hash128 h = ebb_hash(key, sizeof key, md->seed);
    for (uint32_t i = 0; i < md->k; i++)
        pos[i] = (h.lo + (uint64_t)i * (h.hi | 1u)) % md->m;
}

/* Whether the minimum over the key's DISTINCT counters recurs; *min. */
static bool model_recurring(const model *md, uint32_t v, uint64_t *min)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    model_positions(md, v, pos);
    uint64_t best = UINT64_MAX;
    unsigned at_best = 0;
    for (uint32_t i = 0; i < md->k; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < i; j++)
            seen = seen || pos[j] == pos[i];
        if (seen)
            continue;
        uint64_t c = md->c[pos[i]];
        if (c < best) {
            best = c;
            at_best = 1;
        } else if (c == best) {
            at_best++;
        }
    }
    *min = best;
    return at_best >= 2;
}

typedef struct t1_result {
    double pr, per, gamma_s, ebs, erm, gain, eb;
    double ms_ratio, rm_ratio, rm_plain_ratio, moved_share;
    uint64_t ms_wrong, rm_wrong, rm_plain_wrong, queries, below;
    uint64_t rm_below, rm_plain_below; /* of the two RM filters */
} t1_result;

/* Error counts of one filter over the values present. */
static void count_errors(const ebb_spectral *f, const uint32_t *stream,
                         const uint64_t *truth, uint64_t *wrong,
                         uint64_t *below, uint64_t *queries)
{
    ebb_hash128 hashes[SP_DISTINCT];
    sp_value_hashes(f, SP_DISTINCT, hashes);
    (void)stream;
    for (uint32_t v = 0; v < SP_DISTINCT; v++) {
        if (truth[v] == 0)
            continue;
        uint64_t est = ebb_spectral_estimate_hash(f, hashes[v]);
        *wrong += est != truth[v];
        *below += est < truth[v];
        (*queries)++;
    }
}

static ebb_spectral *filled(const ebb_spectral_params *params, uint64_t seed,
                            const uint32_t *stream)
{
    ebb_spectral *f = sp_create_params(*params, seed);
    ebb_hash128 hashes[SP_DISTINCT];
    sp_value_hashes(f, SP_DISTINCT, hashes);
    for (uint32_t i = 0; i < SP_ITEMS; i++)
        exp_require(ebb_spectral_add_hash(f, hashes[stream[i]], 1),
                    "ebb_spectral_add_hash");
    return f;
}

static ebb_spectral_params rm_params(uint64_t m, uint64_t secondary,
                                     uint64_t marker)
{
    ebb_spectral_params p;
    exp_require(ebb_spectral_params_init(3 * m, SP_BITS, SP_K,
                                         EBB_SPECTRAL_RM, &p),
                "ebb_spectral_params_init");
    p.counters = m;
    p.secondary = secondary;
    p.marker_bits = marker;
    exp_require(ebb_spectral_params_check(&p), "ebb_spectral_params_check");
    return p;
}

static ebb_spectral_params plain_params(uint64_t m, uint32_t k)
{
    ebb_spectral_params p;
    exp_require(ebb_spectral_params_init(m, SP_BITS, k, EBB_SPECTRAL_MS, &p),
                "ebb_spectral_params_init");
    return p;
}

static void table1_row(const exp_context *ctx, unsigned row, t1_result *res)
{
    double gamma = PAPER_T1[row].gamma;
    uint64_t m = sp_counters_for(SP_DISTINCT, SP_K, gamma);
    uint64_t ms = m / 2;
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    model md = {m, SP_K, 0, sp_calloc(m, sizeof(uint32_t))};
    uint64_t present_sum = 0, recurring = 0, recurring_wrong = 0;
    uint64_t moved = 0;
    memset(res, 0, sizeof *res);
    for (uint32_t r = 0; r < TABLE_RUNS; r++) {
        sp_zipf_stream(stream, SP_ITEMS, SP_DISTINCT, SKEW,
                       exp_derive_seed(ctx->seed, EXPERIMENT_ID, row, r));
        uint64_t truth[SP_DISTINCT] = {0};
        for (uint32_t i = 0; i < SP_ITEMS; i++)
            truth[stream[i]]++;
        uint64_t seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID + 1, row, r);
        md.seed = seed;
        memset(md.c, 0, m * sizeof(uint32_t));
        for (uint32_t i = 0; i < SP_ITEMS; i++) {
            uint64_t pos[EBB_SPECTRAL_MAX_K];
            model_positions(&md, stream[i], pos);
            for (uint32_t j = 0; j < SP_K; j++)
                md.c[pos[j]]++;
        }
        for (uint32_t v = 0; v < SP_DISTINCT; v++) {
            if (truth[v] == 0)
                continue;
            uint64_t min;
            present_sum++;
            if (model_recurring(&md, v, &min)) {
                recurring++;
                recurring_wrong += min != truth[v];
            }
        }
        ebb_spectral_params pm = plain_params(m, SP_K);
        ebb_spectral_params pr = rm_params(m, ms, m);
        ebb_spectral_params pp = rm_params(m, ms, 0);
        ebb_spectral *f = filled(&pm, seed, stream);
        count_errors(f, stream, truth, &res->ms_wrong, &res->below,
                     &res->queries);
        ebb_spectral_destroy(f);
        uint64_t q = 0;
        f = filled(&pr, seed, stream);
        count_errors(f, stream, truth, &res->rm_wrong, &res->rm_below, &q);
        ebb_spectral_stats st;
        ebb_spectral_get_stats(f, &st);
        moved += st.moved;
        ebb_spectral_destroy(f);
        f = filled(&pp, seed, stream);
        count_errors(f, stream, truth, &res->rm_plain_wrong,
                     &res->rm_plain_below, &q);
        ebb_spectral_destroy(f);
    }
    double n = (double)present_sum / TABLE_RUNS;
    res->eb = sp_bloom_error(gamma, SP_K);
    res->pr = (double)recurring / (double)present_sum;
    res->per = recurring ? (double)recurring_wrong / (double)recurring : 0.0;
    res->gamma_s = n * (1.0 - res->pr) * SP_K / (double)ms;
    res->ebs = sp_bloom_error(res->gamma_s, SP_K);
    res->erm = res->pr * res->per + (1.0 - res->pr) * res->ebs;
    res->gain = res->eb / res->erm;
    double qn = (double)res->queries;
    res->ms_ratio = (double)res->ms_wrong / qn;
    res->rm_ratio = (double)res->rm_wrong / qn;
    res->rm_plain_ratio = (double)res->rm_plain_wrong / qn;
    res->moved_share = (double)moved / (double)present_sum;
    free(md.c);
    free(stream);
}

typedef struct t2_result {
    unsigned k;
    double ms_ratio, rm_ratio, ratio;
    uint64_t ms_wrong, rm_wrong, below;
} t2_result;

static void table2_col(const exp_context *ctx, unsigned col, t2_result *res)
{
    double a = T2_INCREASE[col];
    uint64_t m = sp_counters_for(SP_DISTINCT, SP_K, 0.7);
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    uint64_t queries = 0, q = 0;
    memset(res, 0, sizeof *res);
    res->k = (unsigned)floor(SP_K * (1.0 + a) + 1e-9);
    ebb_spectral_params pm =
        plain_params((uint64_t)llround((double)m * (1.0 + a)), res->k);
    ebb_spectral_params pr =
        rm_params(m, (uint64_t)llround((double)m * a), m);
    for (uint32_t r = 0; r < TABLE_RUNS; r++) {
        sp_zipf_stream(stream, SP_ITEMS, SP_DISTINCT, SKEW,
                       exp_derive_seed(ctx->seed, EXPERIMENT_ID + 2, col, r));
        uint64_t truth[SP_DISTINCT] = {0};
        for (uint32_t i = 0; i < SP_ITEMS; i++)
            truth[stream[i]]++;
        uint64_t seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID + 3, col, r);
        ebb_spectral *f = filled(&pm, seed, stream);
        count_errors(f, stream, truth, &res->ms_wrong, &res->below,
                     &queries);
        ebb_spectral_destroy(f);
        f = filled(&pr, seed, stream);
        count_errors(f, stream, truth, &res->rm_wrong, &res->below, &q);
        ebb_spectral_destroy(f);
    }
    res->ms_ratio = (double)res->ms_wrong / (double)queries;
    res->rm_ratio = (double)res->rm_wrong / (double)queries;
    res->ratio = res->rm_wrong ? (double)res->ms_wrong / (double)res->rm_wrong
                               : INFINITY;
    free(stream);
}

static void paper_arithmetic(exp_context *ctx)
{
    for (unsigned i = 0; i < T1_ROWS; i++) {
        const t1_row *p = &PAPER_T1[i];
        double eb = sp_bloom_error(p->gamma, SP_K);
        double gs = 2.0 * p->gamma * (1.0 - p->pr); /* n k / (m/2) = 2 gamma */
        double ebs = sp_bloom_error(p->gamma_s, SP_K);
        double erm = p->pr * p->per + (1.0 - p->pr) * p->ebs;
        exp_check(ctx, EXP_CHECK_PAPER,
                  exp_agrees(eb, p->eb, 3) && exp_agrees(gs, p->gamma_s, 3) &&
                      exp_agrees(ebs, p->ebs, p->ebs_decimals) &&
                      exp_agrees(erm, p->erm, p->erm_decimals),
                  "Table 1, gamma %g: E_b %.4g, gamma_s %.4g, E_b^s %.4g, "
                  "E_RM %.4g from the printed P(R_x), P(E_x|R_x) (printed "
                  "%g, %g, %g, %g)",
                  p->gamma, eb, gs, ebs, erm, p->eb, p->gamma_s, p->ebs,
                  p->erm);
    }
    bool ok = true;
    for (unsigned c = 0; c < T2_COLS; c++)
        ok = ok && (unsigned)floor(SP_K * (1.0 + T2_INCREASE[c]) + 1e-9) ==
                       T2_PAPER_K[c];
    exp_check(ctx, EXP_CHECK_PAPER, ok,
              "Table 2: k = floor(5 (1 + increase)) gives the printed "
              "modified k (10, 7, 6, 6, 6, 5)");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "spectral_rm", argc, argv);
    paper_arithmetic(&ctx);

    t1_result t1[T1_ROWS];
    FILE *csv = exp_open_csv(&ctx, "table1.csv");
    fputs("gamma,eb,p_recurring,p_error_given_recurring,gamma_s,eb_s,e_rm,"
          "gain,moved_share,ms_ratio,rm_ratio,rm_plain_ratio,ms_wrong,"
          "rm_wrong,rm_plain_wrong,queries,ms_below,rm_below,"
          "rm_plain_below\n", csv);
    fputs("| gamma | E_b | P(R_x) | P(E_x\\|R_x) | gamma_s | E_b^s | E_RM | "
          "E_b/E_RM | measured: MS | RM | RM without marker |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n", ctx.md);
    uint64_t below = 0;
    for (unsigned i = 0; i < T1_ROWS; i++) {
        const t1_row *p = &PAPER_T1[i];
        t1_result *r = &t1[i];
        table1_row(&ctx, i, r);
        below += r->below;
        fprintf(csv, "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
                     "%.6g,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                p->gamma, r->eb, r->pr, r->per, r->gamma_s, r->ebs, r->erm,
                r->gain, r->moved_share, r->ms_ratio, r->rm_ratio,
                r->rm_plain_ratio, r->ms_wrong, r->rm_wrong, r->rm_plain_wrong,
                r->queries, r->below, r->rm_below, r->rm_plain_below);
        fprintf(ctx.md, "| %g | %g / %.4f | %g / %.3f | %g / %.4f | %g / %.3f "
                        "| %g / %.3g | %g / %.3g | %g / %.3g | %.4f | %.4f | "
                        "%.4f |\n",
                p->gamma, p->eb, r->eb, p->pr, r->pr, p->per, r->per,
                p->gamma_s, r->gamma_s, p->ebs, r->ebs, p->erm, r->erm,
                p->gain, r->gain, r->ms_ratio, r->rm_ratio, r->rm_plain_ratio);
    }
    exp_close(csv, "table1.csv");
    uint64_t rm_below = 0, rm_plain_below = 0;
    for (unsigned i = 0; i < T1_ROWS; i++) {
        rm_below += t1[i].rm_below;
        rm_plain_below += t1[i].rm_plain_below;
    }
    exp_check(&ctx, EXP_CHECK_GUARANTEE, below == 0,
              "Table 1: MS never below the true count (%" PRIu64 " below)",
              below);
    exp_check(&ctx, EXP_CHECK_GUARANTEE, rm_below == 0,
              "Table 1: RM with its marker never below the true count "
              "(%" PRIu64 " below)", rm_below);
    exp_check(&ctx, EXP_CHECK_GUARANTEE, rm_plain_below == 0,
              "Table 1: RM without marker never below the true count "
              "(%" PRIu64 " below)", rm_plain_below);
    below = 0;
    unsigned lower = 0;
    for (unsigned i = 0; i < T1_ROWS; i++)
        lower += t1[i].rm_wrong < t1[i].ms_wrong || t1[i].ms_wrong == 0;
    exp_check(&ctx, EXP_CHECK_STAT, lower == T1_ROWS,
              "Table 1: RM (m + m/2) errs less often than MS (m) at every "
              "gamma (%u of %u)", lower, T1_ROWS);

    FILE *md = exp_open_fragment(&ctx, "spectral_table2");
    csv = exp_open_csv(&ctx, "table2.csv");
    fputs("increase,k,paper_k,ms_ratio,rm_ratio,ms_over_rm,paper_ms_over_rm,"
          "ms_wrong,rm_wrong\n", csv);
    fputs("| memory increase | MS's k (paper / ours) | MS error ratio | RM "
          "error ratio | MS / RM (paper / ours) |\n|---|---|---|---|---|\n",
          md);
    unsigned same_side = 0;
    for (unsigned c = 0; c < T2_COLS; c++) {
        t2_result r;
        table2_col(&ctx, c, &r);
        below += r.below;
        same_side += (r.ratio > 1.0) == (T2_PAPER_RATIO[c] > 1.0);
        fprintf(csv, "%g,%u,%u,%.6g,%.6g,%.6g,%g,%" PRIu64 ",%" PRIu64 "\n",
                T2_INCREASE[c], r.k, T2_PAPER_K[c], r.ms_ratio, r.rm_ratio,
                r.ratio, T2_PAPER_RATIO[c], r.ms_wrong, r.rm_wrong);
        fprintf(md, "| %g | %u / %u | %.4f | %.4f | %g / %.3f |\n",
                T2_INCREASE[c], T2_PAPER_K[c], r.k, r.ms_ratio, r.rm_ratio,
                T2_PAPER_RATIO[c], r.ratio);
    }
    fputc('\n', md);
    exp_close(csv, "table2.csv");
    exp_close(md, "the Table 2 fragment");
    exp_check(&ctx, EXP_CHECK_GUARANTEE, below == 0,
              "Table 2: MS and RM never below the true count (%" PRIu64
              " below)", below);
    exp_check(&ctx, EXP_CHECK_STAT, same_side == T2_COLS,
              "Table 2: the better of MS and RM is the paper's at every "
              "memory increase (%u of %u)", same_side, T2_COLS);
    return exp_end(&ctx);
}
