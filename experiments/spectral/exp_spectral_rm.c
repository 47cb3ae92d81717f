/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_spectral_rm.c: the paper's Tables 1 and 2 (Recurring Minimum), and
 * why its Table 1 gains do not reproduce.
 *
 * Table 1: k = 5, n = 1,000 values, Zipf skew 0.5, M = 100,000 items, a
 * primary of m = n k / gamma counters and a secondary of m_s = m / 2 on
 * top (k_s = 5), for gamma = 1, 0.83, 0.7, 0.625, 0.5. Its columns P(R_x)
 * (the share of the values in the data whose minimum counter recurs) and
 * P(E_x | R_x) (the share of those whose minimum is still wrong) are
 * properties of the primary's counters, which the public API does not
 * expose: they are measured on a plain counter vector kept here beside the
 * filter (m counters, k positions (h1 + i h2) mod m from ebb_hash,
 * distinct positions counted once), updated as MS is. From them the
 * paper's formulas: gamma_s = n (1 - P(R_x)) k / m_s, E_b^s =
 * (1 - e^-gamma_s)^k, E_RM = P(R_x) P(E_x | R_x) + (1 - P(R_x)) E_b^s.
 *
 * Beside the formula, measured with the library: MS at m, and RM at
 * (m, m/2) with each marker: EXACT, the paper's B_f (m bits) and NONE.
 * The same counter vector replays RM's move rule (a value not yet moved
 * whose minimum is single after an add moves, with that minimum as its
 * secondary count) with an exact secondary: it counts the LATE moves (the
 * minimum moved was already above the value's count: its counters were
 * all stepped on before its minimum became single), which the formula
 * leaves out and which make up RM's error.
 *
 * Table 2: the extra memory a m given to MS (m (1 + a) counters, k raised
 * to floor(5 (1 + a)) to keep gamma near 0.7) or to RM as its secondary
 * (primary m, k = 5, secondary a m, k_s = 5; B_f of m bits as the paper,
 * and the exact marker): MS's error ratio over RM's.
 *
 * The marker B_f's error: the paper's 3.8e-5 assumes 20% of the values
 * moved at gamma 0.7; measured at Table 1's load and at equal memory with
 * the paper's split (spectral_exp.h).
 *
 * All: the mean of TABLE_RUNS runs, each with its own data and hash seed.
 * Writes table1.csv, table2.csv, the fragments spectral_rm (Table 1),
 * spectral_table2, spectral_marker, spectral_rm_verdict, and checks.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectral_exp.h"

#define EXPERIMENT_ID 100u
#define SKEW 0.5
#define TABLE_RUNS 40u
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

/* The plain counter vector of the primary, updated as MS (for P(R_x),
 * P(E_x | R_x)), with RM's move rule replayed on it beside an exact
 * secondary (for the late moves). */
typedef struct model {
    uint64_t m;
    uint32_t *c;
    uint64_t pos[SP_DISTINCT][SP_K];
    uint64_t seen[SP_DISTINCT];      /* adds so far (the true count)     */
    uint64_t secondary[SP_DISTINCT]; /* exact secondary of a moved value */
    bool moved[SP_DISTINCT], late[SP_DISTINCT];
} model;

static void model_reset(model *md, uint64_t seed)
{
    memset(md->c, 0, md->m * sizeof *md->c);
    memset(md->seen, 0, sizeof md->seen);
    memset(md->secondary, 0, sizeof md->secondary);
    memset(md->moved, 0, sizeof md->moved);
    memset(md->late, 0, sizeof md->late);
    for (uint32_t v = 0; v < SP_DISTINCT; v++) {
        unsigned char key[8];
        for (unsigned b = 0; b < 8; b++)
            key[b] = (unsigned char)((uint64_t)v >> (8 * b));
        ebb_hash128 h = ebb_hash(key, sizeof key, seed);
        for (uint32_t i = 0; i < SP_K; i++)
            md->pos[v][i] = (h.lo + (uint64_t)i * (h.hi | 1u)) % md->m;
    }
}

/* The minimum over v's DISTINCT counters; whether it recurs. */
static bool model_recurring(const model *md, uint32_t v, uint64_t *min)
{
    const uint64_t *pos = md->pos[v];
    uint64_t best = UINT64_MAX;
    unsigned at_best = 0;
    for (uint32_t i = 0; i < SP_K; i++) {
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

/* One add of v: MS on the primary, then RM's rule with an exact
 * secondary. */
static void model_add(model *md, uint32_t v)
{
    for (uint32_t i = 0; i < SP_K; i++) /* once per position, as MS */
        md->c[md->pos[v][i]]++;
    md->seen[v]++;
    if (md->moved[v]) {
        md->secondary[v]++;
        return;
    }
    uint64_t min;
    if (!model_recurring(md, v, &min)) {
        md->moved[v] = true;
        md->secondary[v] = min;
        md->late[v] = min > md->seen[v];
    }
}

/* RM's answer with an exact secondary: min(secondary, primary minimum). */
static uint64_t model_rm_answer(const model *md, uint32_t v)
{
    uint64_t min;
    (void)model_recurring(md, v, &min);
    return md->moved[v] && md->secondary[v] < min ? md->secondary[v] : min;
}

/* The RM filters measured in Table 1 and 2. */
enum { RM_EXACT = 0, RM_BLOOM = 1, RM_NONE = 2, RM_KINDS = 3 };

/* RM with a primary of m, a secondary of `secondary` (k_s = 5), marker. */
static ebb_spectral_params rm_params(uint64_t m, uint64_t secondary,
                                     int kind)
{
    ebb_spectral_params p;
    exp_require(ebb_spectral_params_init(m + secondary, SP_BITS, SP_K,
                                         EBB_SPECTRAL_RM, &p),
                "ebb_spectral_params_init");
    p.counters = m;
    p.secondary = secondary;
    p.secondary_k = SP_K;
    switch (kind) {
    case RM_EXACT: /* room for every value: no move is ever refused */
        p.marker = EBB_SPECTRAL_MARKER_EXACT;
        p.marker_size = 2u * SP_DISTINCT;
        break;
    case RM_BLOOM:
        p.marker = EBB_SPECTRAL_MARKER_BLOOM;
        p.marker_size = m;
        break;
    default:
        p.marker = EBB_SPECTRAL_MARKER_NONE;
        p.marker_size = 0;
        break;
    }
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

/* Error counts of a filter (or of the model, f NULL) over the values
 * present. */
typedef struct tally {
    uint64_t wrong, below, queries, moved, moves_refused;
} tally;

static void tally_filter(const ebb_spectral *f, const uint64_t *truth,
                         tally *t)
{
    ebb_hash128 hashes[SP_DISTINCT];
    sp_value_hashes(f, SP_DISTINCT, hashes);
    for (uint32_t v = 0; v < SP_DISTINCT; v++) {
        if (truth[v] == 0)
            continue;
        uint64_t est = ebb_spectral_estimate_hash(f, hashes[v]);
        t->wrong += est != truth[v];
        t->below += est < truth[v];
        t->queries++;
    }
    ebb_spectral_stats st;
    ebb_spectral_get_stats(f, &st);
    t->moved += st.moved;
    t->moves_refused += st.moves_refused;
}

static double tally_ratio(const tally *t)
{
    return t->queries ? (double)t->wrong / (double)t->queries : NAN;
}

/* A filter of these params and seed after the whole stream. */
static void run_filter(const ebb_spectral_params *params, uint64_t seed,
                       const uint32_t *stream, const uint64_t *truth,
                       tally *t)
{
    ebb_spectral *f = sp_create_params(*params, seed);
    ebb_hash128 hashes[SP_DISTINCT];
    sp_value_hashes(f, SP_DISTINCT, hashes);
    for (uint32_t i = 0; i < SP_ITEMS; i++)
        exp_require(ebb_spectral_add_hash(f, hashes[stream[i]], 1),
                    "ebb_spectral_add_hash");
    tally_filter(f, truth, t);
    ebb_spectral_destroy(f);
}

/* The stream and true counts of run r of a table's row or column. */
static void make_stream(const exp_context *ctx, uint32_t id, uint32_t row,
                        uint32_t r, uint32_t *stream, uint64_t *truth)
{
    sp_zipf_stream(stream, SP_ITEMS, SP_DISTINCT, SKEW,
                   exp_derive_seed(ctx->seed, id, row, r));
    memset(truth, 0, SP_DISTINCT * sizeof *truth);
    for (uint32_t i = 0; i < SP_ITEMS; i++)
        truth[stream[i]]++;
}

typedef struct t1_result {
    double eb, pr, per, gamma_s, ebs, erm, gain;  /* the paper's columns */
    tally ms, rm[RM_KINDS], model;
    uint64_t present, late, moved_model;
} t1_result;

static void table1_row(const exp_context *ctx, unsigned row, t1_result *res)
{
    double gamma = PAPER_T1[row].gamma;
    uint64_t m = sp_counters_for(SP_DISTINCT, SP_K, gamma);
    uint64_t ms = m / 2;
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    model *md = sp_calloc(1, sizeof *md);
    md->m = m;
    md->c = sp_calloc(m, sizeof *md->c);
    uint64_t recurring = 0, recurring_wrong = 0;
    uint64_t truth[SP_DISTINCT];
    memset(res, 0, sizeof *res);
    ebb_spectral_params pm = plain_params(m, SP_K);
    ebb_spectral_params prm[RM_KINDS];
    for (int kind = 0; kind < RM_KINDS; kind++)
        prm[kind] = rm_params(m, ms, kind);
    for (uint32_t r = 0; r < TABLE_RUNS; r++) {
        make_stream(ctx, EXPERIMENT_ID, row, r, stream, truth);
        uint64_t seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID + 1, row, r);
        model_reset(md, seed);
        for (uint32_t i = 0; i < SP_ITEMS; i++)
            model_add(md, stream[i]);
        for (uint32_t v = 0; v < SP_DISTINCT; v++) {
            if (truth[v] == 0)
                continue;
            uint64_t min;
            res->present++;
            if (model_recurring(md, v, &min)) {
                recurring++;
                recurring_wrong += min != truth[v];
            }
            uint64_t answer = model_rm_answer(md, v);
            res->model.wrong += answer != truth[v];
            res->model.below += answer < truth[v];
            res->model.queries++;
            res->moved_model += md->moved[v];
            res->late += md->late[v];
        }
        run_filter(&pm, seed, stream, truth, &res->ms);
        for (int kind = 0; kind < RM_KINDS; kind++)
            run_filter(&prm[kind], seed, stream, truth, &res->rm[kind]);
    }
    double n = (double)res->present / TABLE_RUNS;
    res->eb = sp_bloom_error(gamma, SP_K);
    res->pr = (double)recurring / (double)res->present;
    res->per = recurring ? (double)recurring_wrong / (double)recurring : 0.0;
    res->gamma_s = n * (1.0 - res->pr) * SP_K / (double)ms;
    res->ebs = sp_bloom_error(res->gamma_s, SP_K);
    res->erm = res->pr * res->per + (1.0 - res->pr) * res->ebs;
    res->gain = res->eb / res->erm;
    free(md->c);
    free(md);
    free(stream);
}

typedef struct t2_result {
    unsigned k;
    tally ms, rm[2]; /* RM_EXACT, RM_BLOOM */
} t2_result;

static void table2_col(const exp_context *ctx, unsigned col, t2_result *res)
{
    double a = T2_INCREASE[col];
    uint64_t m = sp_counters_for(SP_DISTINCT, SP_K, 0.7);
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    uint64_t truth[SP_DISTINCT];
    memset(res, 0, sizeof *res);
    res->k = (unsigned)floor(SP_K * (1.0 + a) + 1e-9);
    ebb_spectral_params pm =
        plain_params((uint64_t)llround((double)m * (1.0 + a)), res->k);
    ebb_spectral_params prm[2];
    for (int kind = 0; kind < 2; kind++)
        prm[kind] = rm_params(m, (uint64_t)llround((double)m * a), kind);
    for (uint32_t r = 0; r < TABLE_RUNS; r++) {
        make_stream(ctx, EXPERIMENT_ID + 2, col, r, stream, truth);
        uint64_t seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID + 3, col, r);
        run_filter(&pm, seed, stream, truth, &res->ms);
        for (int kind = 0; kind < 2; kind++)
            run_filter(&prm[kind], seed, stream, truth, &res->rm[kind]);
    }
    free(stream);
}

static double share(const tally *a, const tally *b) /* a's ratio / b's */
{
    return b->wrong ? tally_ratio(a) / tally_ratio(b) : INFINITY;
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

static void write_table1(exp_context *ctx, const t1_result *t1)
{
    FILE *csv = exp_open_csv(ctx, "table1.csv");
    fputs("gamma,eb,p_recurring,p_error_given_recurring,gamma_s,eb_s,"
          "e_rm_formula,gain_formula,paper_gain,ms_ratio,rm_exact_ratio,"
          "rm_bloom_ratio,rm_none_ratio,model_rm_ratio,moved_share,"
          "late_share,gain_measured,ms_wrong,rm_exact_wrong,rm_bloom_wrong,"
          "rm_none_wrong,queries,ms_below,rm_exact_below,rm_bloom_below,"
          "rm_none_below,rm_exact_moves_refused\n", csv);
    fputs("The paper's columns, *paper / ours*:\n\n"
          "| gamma | E_b | P(R_x) | P(E_x\\|R_x) | gamma_s | E_b^s | E_RM "
          "(formula) | E_b/E_RM (formula) |\n|---|---|---|---|---|---|---|"
          "---|\n", ctx->md);
    for (unsigned i = 0; i < T1_ROWS; i++) {
        const t1_row *p = &PAPER_T1[i];
        const t1_result *r = &t1[i];
        fprintf(ctx->md, "| %g | %g / %.4f | %g / %.3f | %g / %.4f | %g / "
                         "%.3f | %g / %.3g | %g / %.3g | %g / %.3g |\n",
                p->gamma, p->eb, r->eb, p->pr, r->pr, p->per, r->per,
                p->gamma_s, r->gamma_s, p->ebs, r->ebs, p->erm, r->erm,
                p->gain, r->gain);
    }
    fputs("\nMeasured (error ratios over the values present; RM's primary m "
          "and secondary m/2, k_s 5):\n\n"
          "| gamma | MS | E_RM formula | RM exact marker | RM B_f (m bits) "
          "| RM no marker | below: B_f / none | moved | moved late | model: "
          "RM, exact secondary | E_b/E_RM paper / formula / measured |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n", ctx->md);
    for (unsigned i = 0; i < T1_ROWS; i++) {
        const t1_row *p = &PAPER_T1[i];
        const t1_result *r = &t1[i];
        double q = (double)r->present;
        double gain = share(&r->ms, &r->rm[RM_EXACT]);
        fprintf(ctx->md, "| %g | %.4f | %.4f | %.4f | %.4f | %.4f | %" PRIu64
                         " / %" PRIu64 " | %.3f | %.4f | %.4f | %.3g / %.3g "
                         "/ %.2f |\n",
                p->gamma, tally_ratio(&r->ms), r->erm,
                tally_ratio(&r->rm[RM_EXACT]), tally_ratio(&r->rm[RM_BLOOM]),
                tally_ratio(&r->rm[RM_NONE]), r->rm[RM_BLOOM].below,
                r->rm[RM_NONE].below, (double)r->moved_model / q,
                (double)r->late / q, tally_ratio(&r->model), p->gain, r->gain,
                gain);
        fprintf(csv, "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%g,%.6g,%.6g,"
                     "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%" PRIu64 ",%" PRIu64
                     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                p->gamma, r->eb, r->pr, r->per, r->gamma_s, r->ebs, r->erm,
                r->gain, p->gain, tally_ratio(&r->ms),
                tally_ratio(&r->rm[RM_EXACT]), tally_ratio(&r->rm[RM_BLOOM]),
                tally_ratio(&r->rm[RM_NONE]), tally_ratio(&r->model),
                (double)r->moved_model / q, (double)r->late / q, gain,
                r->ms.wrong, r->rm[RM_EXACT].wrong, r->rm[RM_BLOOM].wrong,
                r->rm[RM_NONE].wrong, r->present, r->ms.below,
                r->rm[RM_EXACT].below, r->rm[RM_BLOOM].below,
                r->rm[RM_NONE].below, r->rm[RM_EXACT].moves_refused);
    }
    fputc('\n', ctx->md);
    exp_close(csv, "table1.csv");
}

static void check_table1(exp_context *ctx, const t1_result *t1)
{
    uint64_t below = 0, exact_below = 0, bloom_below = 0, none_below = 0;
    uint64_t queries = 0;
    unsigned lower = 0, explained = 0;
    double gain_lo = INFINITY, gain_hi = 0.0;
    for (unsigned i = 0; i < T1_ROWS; i++) {
        const t1_result *r = &t1[i];
        below += r->ms.below;
        exact_below += r->rm[RM_EXACT].below;
        bloom_below += r->rm[RM_BLOOM].below;
        none_below += r->rm[RM_NONE].below;
        queries += r->present;
        lower += r->rm[RM_EXACT].wrong < r->ms.wrong || r->ms.wrong == 0;
        double g = share(&r->ms, &r->rm[RM_EXACT]);
        gain_lo = g < gain_lo ? g : gain_lo;
        gain_hi = g > gain_hi ? g : gain_hi;
        /* Late moves explain RM's error: the model's error (late moves
         * plus values never moved and wrong) is within 3 binomial sd of
         * the library's exact-marker RM. */
        double pm = tally_ratio(&r->model);
        double sd = exp_binomial_sd(r->present, pm > 0.0 ? pm : 1e-9);
        explained += fabs(tally_ratio(&r->rm[RM_EXACT]) - pm) <=
                     3.0 * sqrt(2.0) * sd + 1e-12;
    }
    exp_check(ctx, EXP_CHECK_GUARANTEE, below == 0,
              "Table 1: MS never below the true count (%" PRIu64 " below)",
              below);
    exp_check(ctx, EXP_CHECK_GUARANTEE, exact_below == 0,
              "Table 1: RM with the exact marker never below the true count "
              "(%" PRIu64 " below)", exact_below);
    exp_check(ctx, EXP_CHECK_STAT, bloom_below == 0 && none_below == 0,
              "Table 1: RM with B_f (m bits) or without a marker, not "
              "one-sided (a marker false positive or a stepped-on secondary "
              "directs a value to a secondary that lacks its count): %" PRIu64
              " and %" PRIu64 " of %" PRIu64 " answers below the true count",
              bloom_below, none_below, queries);
    exp_check(ctx, EXP_CHECK_STAT, lower == T1_ROWS,
              "Table 1: RM (m + m/2, exact marker) errs less often than MS "
              "(m) at every gamma (%u of %u; MS/RM %.2f to %.2f)",
              lower, T1_ROWS, gain_lo, gain_hi);
    exp_check(ctx, EXP_CHECK_STAT, gain_hi < 5.0,
              "Table 1: the paper's gains E_b/E_RM of 7.6 to 20 (formula) do "
              "not reproduce: measured MS/RM %.2f to %.2f",
              gain_lo, gain_hi);
    exp_check(ctx, EXP_CHECK_STAT, explained == T1_ROWS,
              "Table 1: late moves explain RM's error: the replayed rule "
              "with an exact secondary errs within 3 sd of the library's "
              "exact-marker RM at every gamma (%u of %u)",
              explained, T1_ROWS);
}

static void write_table2(exp_context *ctx, const t2_result *t2)
{
    FILE *md = exp_open_fragment(ctx, "spectral_table2");
    FILE *csv = exp_open_csv(ctx, "table2.csv");
    fputs("increase,k,paper_k,ms_ratio,rm_bloom_ratio,rm_exact_ratio,"
          "ms_over_rm_bloom,ms_over_rm_exact,paper_ms_over_rm,ms_wrong,"
          "rm_bloom_wrong,rm_exact_wrong,rm_bloom_below,rm_exact_below\n",
          csv);
    fputs("| memory increase | MS's k (paper / ours) | MS error ratio | RM, "
          "B_f | RM, exact marker | MS / RM: paper / ours B_f / ours exact "
          "| RM B_f below the truth |\n|---|---|---|---|---|---|---|\n", md);
    for (unsigned c = 0; c < T2_COLS; c++) {
        const t2_result *r = &t2[c];
        fprintf(csv, "%g,%u,%u,%.6g,%.6g,%.6g,%.6g,%.6g,%g,%" PRIu64
                     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                T2_INCREASE[c], r->k, T2_PAPER_K[c], tally_ratio(&r->ms),
                tally_ratio(&r->rm[RM_BLOOM]), tally_ratio(&r->rm[RM_EXACT]),
                share(&r->ms, &r->rm[RM_BLOOM]),
                share(&r->ms, &r->rm[RM_EXACT]), T2_PAPER_RATIO[c],
                r->ms.wrong, r->rm[RM_BLOOM].wrong, r->rm[RM_EXACT].wrong,
                r->rm[RM_BLOOM].below, r->rm[RM_EXACT].below);
        fprintf(md, "| %g | %u / %u | %.4f | %.4f | %.4f | %g / %.2f / %.2f "
                    "| %" PRIu64 " |\n",
                T2_INCREASE[c], T2_PAPER_K[c], r->k, tally_ratio(&r->ms),
                tally_ratio(&r->rm[RM_BLOOM]), tally_ratio(&r->rm[RM_EXACT]),
                T2_PAPER_RATIO[c], share(&r->ms, &r->rm[RM_BLOOM]),
                share(&r->ms, &r->rm[RM_EXACT]), r->rm[RM_BLOOM].below);
    }
    fputc('\n', md);
    exp_close(csv, "table2.csv");
    exp_close(md, "the Table 2 fragment");
}

static void check_table2(exp_context *ctx, const t2_result *t2)
{
    uint64_t below = 0, bloom_below = 0;
    unsigned same_side = 0;
    double lo = INFINITY, hi = 0.0;
    for (unsigned c = 0; c < T2_COLS; c++) {
        const t2_result *r = &t2[c];
        below += r->ms.below + r->rm[RM_EXACT].below;
        bloom_below += r->rm[RM_BLOOM].below;
        double s = share(&r->ms, &r->rm[RM_BLOOM]);
        same_side += (s > 1.0) == (T2_PAPER_RATIO[c] > 1.0);
        if (T2_PAPER_RATIO[c] > 3.0) {
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
        }
    }
    exp_check(ctx, EXP_CHECK_GUARANTEE, below == 0,
              "Table 2: MS and RM with the exact marker never below the true "
              "count (%" PRIu64 " below)", below);
    exp_check(ctx, EXP_CHECK_STAT, bloom_below == 0,
              "Table 2: RM with B_f (not one-sided): %" PRIu64
              " answers below the true count", bloom_below);
    exp_check(ctx, EXP_CHECK_STAT, same_side == T2_COLS,
              "Table 2: the better of MS and RM is the paper's at every "
              "memory increase (%u of %u; where the paper has RM 3.3 to "
              "4.5x better, ours MS/RM is %.2f to %.2f)",
              same_side, T2_COLS, lo, hi);
}

/* The marker B_f's false-positive rate at a load: values moved into its
 * bits with k probes. */
typedef struct marker_load {
    const char *what;
    uint64_t bits;       /* per filter */
    tally t;             /* over TABLE_RUNS runs */
} marker_load;

static double marker_fp(const marker_load *l)
{
    double moved = (double)l->t.moved / TABLE_RUNS;
    return sp_bloom_error(moved * SP_K / (double)l->bits, SP_K);
}

/* Fills rates[2] (B_f's false-positive rate) and moved[2] (share of
 * the values moved) at the two loads. */
static void marker_section(exp_context *ctx, const t1_result *t1,
                           double *rates, double *moved_share)
{
    /* Table 1's load at gamma 0.7 (row 2), and equal memory with the
     * paper's split at gamma 0.7: its own runs. */
    marker_load l[2];
    l[0].what = "Table 1's load: gamma 0.7, B_f of m bits, secondary m/2 "
                "on top";
    l[0].bits = sp_counters_for(SP_DISTINCT, SP_K, 0.7);
    l[0].t = t1[2].rm[RM_BLOOM];
    l[1].what = "equal memory, the paper's split: m' = m_p + m_s in the "
                "bytes of MS's m at gamma 0.7, m_s = m'/3, B_f of m_p bits";
    memset(&l[1].t, 0, sizeof l[1].t);
    ebb_spectral_params p = sp_config_params(
        SP_CFG_RM_PAPER, sp_counters_for(SP_DISTINCT, SP_K, 0.7), SP_K);
    l[1].bits = p.marker_size;
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    uint64_t truth[SP_DISTINCT];
    for (uint32_t r = 0; r < TABLE_RUNS; r++) {
        make_stream(ctx, EXPERIMENT_ID + 4, 0, r, stream, truth);
        run_filter(&p, exp_derive_seed(ctx->seed, EXPERIMENT_ID + 5, 0, r),
                   stream, truth, &l[1].t);
    }
    free(stream);

    FILE *md = exp_open_fragment(ctx, "spectral_marker");
    fputs("| load | values moved (share) | B_f's gamma | B_f's false-positive "
          "rate (1 − e^−gamma)^k | RM answers below the truth (rate) |\n"
          "|---|---|---|---|---|\n", md);
    for (int i = 0; i < 2; i++) {
        double moved = (double)l[i].t.moved / TABLE_RUNS;
        rates[i] = marker_fp(&l[i]);
        moved_share[i] = (double)l[i].t.moved / (double)l[i].t.queries;
        fprintf(md, "| %s | %.0f (%.3f) | %.3f | %.2g | %" PRIu64 " of %"
                    PRIu64 " (%.2g) |\n",
                l[i].what, moved, (double)l[i].t.moved / (double)l[i].t.queries,
                moved * SP_K / (double)l[i].bits, rates[i], l[i].t.below,
                l[i].t.queries,
                (double)l[i].t.below / (double)l[i].t.queries);
    }
    fprintf(md, "\nThe paper's 3.8e-5 is the rate for a fifth of the "
                "values moved (B_f's gamma 0.14); ours: %.2g at Table 1's "
                "load and %.2g at equal memory with the paper's split.\n",
            rates[0], rates[1]);
    exp_close(md, "the marker fragment");
    exp_check(ctx, EXP_CHECK_STAT, rates[1] > 10.0 * 3.8e-5,
              "B_f: the paper's error of 3.8e-5 holds only at a fifth of "
              "the values moved; measured loads give %.2g (Table 1, gamma "
              "0.7) and %.2g (equal memory, the paper's split)",
              rates[0], rates[1]);
}

static void write_verdict(exp_context *ctx, const t1_result *t1,
                          const t2_result *t2, const double *rates,
                          const double *moved_share)
{
    FILE *md = exp_open_fragment(ctx, "spectral_rm_verdict");
    const t1_result *r = &t1[2]; /* gamma 0.7 */
    double lo = INFINITY, hi = 0.0;
    for (unsigned i = 0; i < T1_ROWS; i++) {
        double g = share(&t1[i].ms, &t1[i].rm[RM_EXACT]);
        lo = g < lo ? g : lo;
        hi = g > hi ? g : hi;
    }
    fprintf(md,
            "- **Table 1's E_RM and gain columns.** At gamma 0.7 the paper "
            "prints E_RM 0.0017 and a gain E_b/E_RM of 18.5. Our formula "
            "from our measured P(R_x) and P(E_x|R_x) gives %.4f (gain %.3g), "
            "but RM measured (exact marker, the secondary m/2 on top) errs on "
            "%.4f of "
            "the values against MS's %.4f: a gain of %.2f. Over the five "
            "gammas the measured gain is %.2f to %.2f (paper 7.6 to 20, and "
            "1.1e7 at gamma 0.5). The formula leaves out late moves: %.4f "
            "of the values were moved with a minimum already above their "
            "count (their counters were all stepped on before the minimum "
            "became single), and replaying the move rule with an exact "
            "secondary errs on %.4f, as the library does.\n",
            r->erm, r->gain, tally_ratio(&r->rm[RM_EXACT]),
            tally_ratio(&r->ms), share(&r->ms, &r->rm[RM_EXACT]),
            lo, hi,
            (double)r->late / (double)r->present, tally_ratio(&r->model));
    fprintf(md,
            "- **Table 2's 3.3 to 4.5x.** With a secondary of 0.5, 0.33 and "
            "0.25 m on top, the paper has RM 3.3, 4.5 and 3.6 times better "
            "than MS given the same memory; we measure MS/RM (B_f) %.2f, "
            "%.2f and %.2f: RM's error stays at its primary's late-move "
            "floor while MS keeps improving with memory.\n",
            share(&t2[1].ms, &t2[1].rm[RM_BLOOM]),
            share(&t2[2].ms, &t2[2].rm[RM_BLOOM]),
            share(&t2[3].ms, &t2[3].rm[RM_BLOOM]));
    fprintf(md,
            "- **The marker B_f's error of 3.8e-5** (section 3.3) assumes a "
            "fifth of the values moved (B_f's gamma 0.14). At Table 1's load "
            "(secondary m/2 on top, gamma 0.7) %.3f of the values move and "
            "B_f's rate is %.2g, as the paper says; at equal memory with the "
            "paper's split (gamma 0.7) the primary runs fuller, %.3f of the "
            "values move into its m_p bits and B_f's rate is %.2g, which is "
            "what makes RM with B_f answer below the truth (\"The marker "
            "B_f\" below).\n",
            moved_share[0], rates[0], moved_share[1], rates[1]);
    exp_close(md, "the RM verdict fragment");
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "spectral_rm", argc, argv);
    paper_arithmetic(&ctx);

    t1_result t1[T1_ROWS];
    for (unsigned i = 0; i < T1_ROWS; i++)
        table1_row(&ctx, i, &t1[i]);
    write_table1(&ctx, t1);
    check_table1(&ctx, t1);

    t2_result t2[T2_COLS];
    for (unsigned c = 0; c < T2_COLS; c++)
        table2_col(&ctx, c, &t2[c]);
    write_table2(&ctx, t2);
    check_table2(&ctx, t2);

    double rates[2], moved_share[2];
    marker_section(&ctx, t1, rates, moved_share);
    write_verdict(&ctx, t1, t2, rates, moved_share);
    return exp_end(&ctx);
}
