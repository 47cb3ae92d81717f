/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_timing_condition.c: one experiment of the paper's section 5 (one
 * stream, one condition of its Table 3), and beyond it.
 *
 * Compiled once per (stream, condition) with TX_PROGRAM_KIND (tx_kind) and
 * TX_PROGRAM_GT (0: [Pos~Neg], 1: [Pos>Neg]); run as
 * exp_timing_<stream>_<eq|gt> <csv-dir> <work-dir> <seed>.
 *
 * The protocol (section 5.1): the same stream of WARM + QUERIES items for
 * every trial; WARM inserts, then each item is queried, then inserted. The
 * costs $FP, $FN of each query are uniform in [1, 10), the same sequence in
 * every trial. A trial is one BTBF of ebb_timing_choose_paper(w, bpi, k):
 * its standard answer and its least-penalty answer (inferential) are read
 * from the same query (ebb_timing_infer_hash gives both), so one trial
 * prices both filters. For each bpi, k runs from 1 upwards and each filter
 * keeps its own k of least total penalty (the paper tried every k in
 * 1..30; we stop once both minima lie PATIENCE k behind, see
 * timing.md.in). Figures 7-12 plot the two minima's ratio and the
 * posterior error (Eq. 28) of the inferential filter's k.
 *
 * Beyond the paper: an APBF at equal memory (the best of the APBF_TRIED
 * shapes of lowest analytic rate, by measured penalty) over the same
 * queries; the calibration table and the expected / most likely age
 * against the true age at REPRESENTATIVE_BPI.
 *
 * Writes docs/results/timing/{penalty,trials,calibration,ages}_<name>.csv,
 * the fragments <name>, <name>_table3, <name>_calibration, <name>_ages,
 * <name>_beyond and the checks.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing_exp.h"

#ifndef TX_PROGRAM_KIND
#error "TX_PROGRAM_KIND must be defined"
#endif
#ifndef TX_PROGRAM_GT
#error "TX_PROGRAM_GT must be defined"
#endif

#define WARM (UINT64_C(1) << 20)
#define QUERIES (UINT64_C(1) << 22)
#define K_MAX 30u
#define PATIENCE 4u
#define APBF_TRIED 4u
#define REPRESENTATIVE_BPI 8.0
#define EXPERIMENT_ID 31u
/* Calibration bar: bins holding at least this many queries. */
#define CALIBRATION_MIN 1000u

static const double BPI[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
#define BPIS (sizeof BPI / sizeof BPI[0])

/* Table 3: w and the paper's Pos/Neg per stream and condition. */
static const unsigned WINDOW_LOG2[TX_KINDS][2] = {{16, 18}, {11, 18},
                                                  {8, 15}};
static const double PAPER_RATIO[TX_KINDS][2] = {
    {1.718, 53.547}, {1.182, 13.451}, {1.171, 8.893}};

typedef struct bpi_result {
    double bpi;
    tx_trial standard;     /* the trial of the standard filter's best k     */
    tx_trial inferential;  /* the trial of the inferential filter's best k  */
    uint32_t k_last;       /* the largest k tried                            */
    tx_apbf_trial apbf;
    unsigned apbf_shapes;
} bpi_result;

static bpi_result RESULTS[BPIS];

static const char *cond_name(int gt) { return gt ? "gt" : "eq"; }
static const char *cond_title(int gt)
{
    return gt ? "[Pos>Neg]" : "[Pos≈Neg]";
}

/* The exact Pos/Neg of an i.i.d. stream: P(I_x < w) over the query's item
 * = sum_x p_x (1 - (1 - p_x)^w) (the history before each query is longer
 * than w). NaN for the bursty stream. */
static double exact_in_fraction(const tx_stream *s, uint64_t w)
{
    if (s->kind == TX_BURSTY)
        return NAN;
    double sum = 0.0;
    for (uint32_t x = 0; x < s->universe; x++) {
        double p = s->prior[x];
        sum += p * -expm1((double)w * log1p(-p));
    }
    return sum;
}

static void run_bpi(exp_context *ctx, const tx_stream *s, uint64_t w,
                    unsigned index, FILE *trials_csv, uint64_t *trials,
                    uint64_t *fn_total)
{
    bpi_result *r = &RESULTS[index];
    double bpi = BPI[index];
    r->bpi = bpi;
    uint64_t cost_seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID,
                                         TX_PROGRAM_KIND, TX_PROGRAM_GT);
    bool have = false;
    uint32_t best_std = 0, best_inf = 0;
    tx_trial *t = malloc(sizeof *t);
    if (t == NULL)
        exp_die("out of memory");
    for (uint32_t k = 1; k <= K_MAX; k++) {
        ebb_timing_params p;
        if (ebb_timing_choose_paper(w, bpi, k, &p) != EBB_OK)
            continue;
        tx_run_trial(s, &p, cost_seed, true, t);
        (*trials)++;
        *fn_total += t->fn_standard;
        r->k_last = k;
        fprintf(trials_csv,
                "%.0f,%" PRIu32 ",%" PRIu64 ",%" PRIu32 ",%" PRIu64
                ",%" PRIu64 ",%.6f,%.6f,%.6f\n",
                bpi, k, p.timers, p.timer_bits, p.block, p.padding,
                t->penalty_standard / (double)s->queries,
                t->penalty_inferential / (double)s->queries,
                tx_posterior_error(t));
        if (!have || t->penalty_standard < r->standard.penalty_standard) {
            r->standard = *t;
            best_std = k;
        }
        if (!have ||
            t->penalty_inferential < r->inferential.penalty_inferential) {
            r->inferential = *t;
            best_inf = k;
        }
        have = true;
        if (k >= best_std + PATIENCE && k >= best_inf + PATIENCE)
            break;
    }
    free(t);
    if (!have)
        exp_die("no BTBF shape for w %" PRIu64 " at %.0f bits per item", w,
                bpi);

    /* The APBF at the same memory: w bpi bits of slices. */
    ebb_apbf_params shapes[APBF_TRIED];
    uint64_t bits = (uint64_t)floor((double)w * bpi);
    double beyond = 1.0 - (double)tx_in_window(s, w) / (double)s->queries;
    double slack = (double)tx_ages_between(s, w, 2 * w) / (double)s->queries;
    r->apbf_shapes =
        tx_apbf_candidates(w, bits, beyond, slack, shapes, APBF_TRIED);
    tx_apbf_trial a;
    for (unsigned i = 0; i < r->apbf_shapes; i++) {
        tx_run_apbf(s, &shapes[i], cost_seed, w, &a);
        *fn_total += a.fn;
        if (i == 0 || a.penalty < r->apbf.penalty)
            r->apbf = a;
    }
}

static double per_query(double penalty, const tx_stream *s)
{
    return penalty / (double)s->queries;
}

static void write_penalty_csv(const exp_context *ctx, const char *name,
                              const tx_stream *s, uint64_t w)
{
    char file[128];
    snprintf(file, sizeof file, "penalty_%s.csv", name);
    FILE *csv = exp_open_csv(ctx, file);
    fputs("bpi,window,std_k,std_penalty,inf_k,inf_penalty,ratio,"
          "posterior_error,k_last,apbf_k,apbf_l,apbf_penalty,"
          "std_fp,inf_fp,inf_fn,apbf_fp\n",
          csv);
    for (unsigned i = 0; i < BPIS; i++) {
        const bpi_result *r = &RESULTS[i];
        fprintf(csv,
                "%.0f,%" PRIu64 ",%" PRIu32 ",%.6f,%" PRIu32
                ",%.6f,%.6f,%.6f,%" PRIu32 ",",
                r->bpi, w, r->standard.params.k,
                per_query(r->standard.penalty_standard, s),
                r->inferential.params.k,
                per_query(r->inferential.penalty_inferential, s),
                r->standard.penalty_standard /
                    r->inferential.penalty_inferential,
                tx_posterior_error(&r->inferential), r->k_last);
        if (r->apbf_shapes)
            fprintf(csv, "%" PRIu32 ",%" PRIu32 ",%.6f,",
                    r->apbf.params.k, r->apbf.params.l,
                    per_query(r->apbf.penalty, s));
        else
            fputs(",,,", csv);
        fprintf(csv, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->standard.fp_standard,
                r->inferential.fp_inferential, r->inferential.fn_inferential);
        if (r->apbf_shapes)
            fprintf(csv, "%" PRIu64 "\n", r->apbf.fp);
        else
            fputs("\n", csv);
    }
    exp_close(csv, file);
}

static const bpi_result *representative(void)
{
    for (unsigned i = 0; i < BPIS; i++)
        if (RESULTS[i].bpi == REPRESENTATIVE_BPI)
            return &RESULTS[i];
    exp_die("the representative bpi is not in the sweep");
    return NULL;
}

static double bin_sd(uint64_t eta, double mid)
{
    return eta ? sqrt(mid * (1.0 - mid) / (double)eta) : NAN;
}

/* The calibration bar on one trial: the largest excess of
 * |f - M| over 3 sd + half a bin among bins of >= CALIBRATION_MIN queries
 * (<= 0 passes), and the bin where it happens. */
static double calibration_excess(const tx_trial *t, unsigned *worst)
{
    double excess = -INFINITY;
    *worst = 0;
    for (unsigned l = 0; l < TX_BINS; l++) {
        if (t->eta[l] < CALIBRATION_MIN)
            continue;
        double mid = (l + 0.5) / TX_BINS;
        double f = (double)t->hits[l] / (double)t->eta[l];
        double e = fabs(f - mid) - 3.0 * bin_sd(t->eta[l], mid) -
                   0.5 / TX_BINS;
        if (e > excess) {
            excess = e;
            *worst = l;
        }
    }
    return excess;
}

static void write_calibration(const exp_context *ctx, const char *name,
                              const tx_trial *t)
{
    char file[128];
    snprintf(file, sizeof file, "calibration_%s.csv", name);
    FILE *csv = exp_open_csv(ctx, file);
    char frag[128];
    snprintf(frag, sizeof frag, "%s_calibration", name);
    FILE *md = exp_open_fragment(ctx, frag);
    fputs("bin,low,high,midpoint,queries,in_window,fraction,mean_posterior,"
          "sd\n",
          csv);
    fprintf(md,
            "BTBF k = %" PRIu32 " (the inferential filter's best at %.0f "
            "bits per item): m = %" PRIu64 ", bpt = %" PRIu32
            ", B = %" PRIu64 ", P = %" PRIu64 ".\n\n",
            t->params.k, REPRESENTATIVE_BPI, t->params.timers,
            t->params.timer_bits, t->params.block, t->params.padding);
    fputs("| bin | posterior | queries | in window | measured fraction f | "
          "midpoint M | mean posterior | binomial sd | \\|f − M\\| / sd |\n"
          "|---|---|---|---|---|---|---|---|---|\n",
          md);
    for (unsigned l = 0; l < TX_BINS; l++) {
        double lo = (double)l / TX_BINS, hi = (double)(l + 1) / TX_BINS;
        double mid = (l + 0.5) / TX_BINS;
        double sd = bin_sd(t->eta[l], mid);
        if (t->eta[l] == 0) {
            fprintf(csv, "%u,%.2f,%.2f,%.3f,0,0,,,\n", l + 1, lo, hi, mid);
            fprintf(md, "| %u | [%.2f, %.2f%s | 0 | 0 | – | %.3f | – | – "
                        "| – |\n",
                    l + 1, lo, hi, l + 1 == TX_BINS ? "]" : ")", mid);
            continue;
        }
        double f = (double)t->hits[l] / (double)t->eta[l];
        double mean = t->posterior_sum[l] / (double)t->eta[l];
        fprintf(csv, "%u,%.2f,%.2f,%.3f,%" PRIu64 ",%" PRIu64
                     ",%.6f,%.6f,%.6f\n",
                l + 1, lo, hi, mid, t->eta[l], t->hits[l], f, mean, sd);
        fprintf(md, "| %u | [%.2f, %.2f%s | %" PRIu64 " | %" PRIu64
                    " | %.4f | %.3f | %.4f | %.4f | %.1f |\n",
                l + 1, lo, hi, l + 1 == TX_BINS ? "]" : ")", t->eta[l],
                t->hits[l], f, mid, mean, sd, fabs(f - mid) / sd);
    }
    fprintf(md, "\nPosterior error (Eq. 28) of this trial: %.4f.\n",
            tx_posterior_error(t));
    exp_close(csv, file);
    exp_close(md, frag);
}

static void write_ages(const exp_context *ctx, const char *name,
                       const tx_trial *t, uint64_t w)
{
    char file[128], frag[128];
    snprintf(file, sizeof file, "ages_%s.csv", name);
    snprintf(frag, sizeof frag, "%s_ages", name);
    FILE *csv = exp_open_csv(ctx, file);
    FILE *md = exp_open_fragment(ctx, frag);
    fputs("bin,age_low,age_high,queries,mean_age,mean_expected,"
          "mae_expected,mae_likely,mae_prior\n",
          csv);
    fputs("| true age | queries | mean true age | mean E[age] | MAE of "
          "E[age] | MAE / mean age | MAE of most likely age | MAE of the "
          "prior's mean |\n|---|---|---|---|---|---|---|---|\n",
          md);
    tx_age_bin in = {0}, out = {0};
    for (unsigned b = 0; b < TX_AGE_BINS; b++) {
        const tx_age_bin *a = &t->age[b];
        uint64_t lo = b == 0 ? 0 : UINT64_C(1) << (b - 1);
        uint64_t hi = b == 0 ? 0 : (UINT64_C(1) << b) - 1;
        if (a->queries == 0)
            continue;
        double n = (double)a->queries;
        fprintf(csv, "%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                     ",%.3f,%.3f,%.3f,%.3f,%.3f\n",
                b, lo, hi, a->queries, a->sum_age / n, a->sum_expected / n,
                a->abs_expected / n, a->abs_likely / n, a->abs_prior / n);
        fprintf(md, "| %" PRIu64 "..%" PRIu64 " | %" PRIu64
                    " | %.0f | %.0f | %.0f | ",
                lo, hi, a->queries, a->sum_age / n, a->sum_expected / n,
                a->abs_expected / n);
        if (a->sum_age > 0.0)
            fprintf(md, "%.2f", a->abs_expected / a->sum_age);
        else
            fputs("–", md);
        fprintf(md, " | %.0f | %.0f |\n", a->abs_likely / n,
                a->abs_prior / n);
        tx_age_bin *acc = hi < w ? &in : &out;
        acc->queries += a->queries;
        acc->sum_age += a->sum_age;
        acc->sum_expected += a->sum_expected;
        acc->abs_expected += a->abs_expected;
        acc->abs_likely += a->abs_likely;
        acc->abs_prior += a->abs_prior;
    }
    if (in.queries) {
        double n = (double)in.queries;
        fprintf(md,
                "\nIn the window (true age < w = %" PRIu64 "): %" PRIu64
                " queries, mean true age %.0f, mean absolute error of the "
                "expected age %.0f (%.2f of the mean age), of the most "
                "likely age %.0f, of the prior's mean (1 − p)/p %.0f.\n",
                w, in.queries, in.sum_age / n, in.abs_expected / n,
                in.abs_expected / in.sum_age, in.abs_likely / n,
                in.abs_prior / n);
    }
    if (out.queries) {
        double n = (double)out.queries;
        fprintf(md,
                "Beyond it: %" PRIu64 " queries, mean true age %.0f, mean "
                "absolute error of the expected age %.0f (%.2f of the mean "
                "age), of the most likely age %.0f, of the prior's mean "
                "%.0f.\n",
                out.queries, out.sum_age / n, out.abs_expected / n,
                out.abs_expected / out.sum_age, out.abs_likely / n,
                out.abs_prior / n);
    }
    exp_close(csv, file);
    exp_close(md, frag);
}

static void write_fragments(exp_context *ctx, const char *name,
                            const tx_stream *s, uint64_t w, uint64_t pos)
{
    /* Table 3 row. */
    char frag[128];
    snprintf(frag, sizeof frag, "%s_table3", name);
    FILE *md = exp_open_fragment(ctx, frag);
    uint64_t neg = s->queries - pos;
    double exact = exact_in_fraction(s, w);
    fprintf(md, "| %s | 2^%u | %s | 2^%u | %.3f | %.3f |",
            tx_kind_title(TX_PROGRAM_KIND),
            TX_PROGRAM_KIND == TX_BURSTY ? 22u : 16u,
            cond_title(TX_PROGRAM_GT), WINDOW_LOG2[TX_PROGRAM_KIND][TX_PROGRAM_GT],
            PAPER_RATIO[TX_PROGRAM_KIND][TX_PROGRAM_GT],
            (double)pos / (double)neg);
    if (isnan(exact))
        fprintf(md, " – (%" PRIu32 " distinct items in the stream) |\n",
                s->distinct);
    else
        fprintf(md, " %.3f |\n", exact / (1.0 - exact));
    exp_close(md, frag);

    /* The figure's table. */
    md = ctx->md;
    fprintf(md, "**%s, %s, w = 2^%u** (%" PRIu64 " queries: %" PRIu64
                " in the window, %" PRIu64 " not). Penalties are per query "
                "(total / %" PRIu64 ").\n\n",
            tx_kind_title(TX_PROGRAM_KIND), cond_title(TX_PROGRAM_GT),
            WINDOW_LOG2[TX_PROGRAM_KIND][TX_PROGRAM_GT], s->queries, pos, neg,
            s->queries);
    fputs("| bpi | standard: best k | its penalty (false positives) | "
          "inferential: best k | its penalty (FP, FN) | standard / "
          "inferential | inferential / standard | posterior error (Eq. 28) "
          "| k tried |\n|---|---|---|---|---|---|---|---|---|\n",
          md);
    double lo = INFINITY, hi = -INFINITY, lo_bpi = 0, hi_bpi = 0;
    double perr_max = 0.0, perr_bpi = 0;
    for (unsigned i = 0; i < BPIS; i++) {
        const bpi_result *r = &RESULTS[i];
        double share = r->inferential.penalty_inferential /
                       r->standard.penalty_standard;
        double perr = tx_posterior_error(&r->inferential);
        fprintf(md,
                "| %.0f | %" PRIu32 " | %.4f (%" PRIu64 ") | %" PRIu32
                " | %.4f (%" PRIu64 ", %" PRIu64 ") | %.3f | %.1f%% | "
                "%.4f | 1..%" PRIu32 " |\n",
                r->bpi, r->standard.params.k,
                per_query(r->standard.penalty_standard, s),
                r->standard.fp_standard, r->inferential.params.k,
                per_query(r->inferential.penalty_inferential, s),
                r->inferential.fp_inferential, r->inferential.fn_inferential,
                1.0 / share, 100.0 * share, perr, r->k_last);
        if (share < lo) {
            lo = share;
            lo_bpi = r->bpi;
        }
        if (share > hi) {
            hi = share;
            hi_bpi = r->bpi;
        }
        if (perr > perr_max) {
            perr_max = perr;
            perr_bpi = r->bpi;
        }
    }
    fprintf(md,
            "\nOurs: the inferential filter incurs from %.1f%% (bpi %.0f) "
            "to %.1f%% (bpi %.0f) of the standard filter's penalties; the "
            "posterior error peaks at %.4f (bpi %.0f).\n\n",
            100.0 * lo, lo_bpi, 100.0 * hi, hi_bpi, perr_max, perr_bpi);

    /* Beyond: the APBF beside them. */
    snprintf(frag, sizeof frag, "%s_beyond", name);
    md = exp_open_fragment(ctx, frag);
    fprintf(md, "**%s, %s, w = 2^%u**, penalty per query:\n\n",
            tx_kind_title(TX_PROGRAM_KIND), cond_title(TX_PROGRAM_GT),
            WINDOW_LOG2[TX_PROGRAM_KIND][TX_PROGRAM_GT]);
    fputs("| bpi | APBF (k, l): penalty (FP) | its analytic worst-case fp "
          "| standard BTBF | inferential BTBF | APBF / inferential |\n"
          "|---|---|---|---|---|---|\n",
          md);
    for (unsigned i = 0; i < BPIS; i++) {
        const bpi_result *r = &RESULTS[i];
        double inf = per_query(r->inferential.penalty_inferential, s);
        if (r->apbf_shapes == 0) {
            fprintf(md, "| %.0f | no shape fits | – | %.4f | %.4f | – |\n",
                    r->bpi, per_query(r->standard.penalty_standard, s), inf);
            continue;
        }
        double ap = per_query(r->apbf.penalty, s);
        fprintf(md,
                "| %.0f | (%" PRIu32 ", %" PRIu32 "): %.4f (%" PRIu64
                ") | %.4f | %.4f | %.4f | %.2f |\n",
                r->bpi, r->apbf.params.k, r->apbf.params.l, ap, r->apbf.fp,
                r->apbf.analytic_fp,
                per_query(r->standard.penalty_standard, s), inf, ap / inf);
    }
    fputc('\n', md);
    exp_close(md, frag);
}

static void check_all(exp_context *ctx, const tx_stream *s,
                      uint64_t w, uint64_t pos, uint64_t trials,
                      uint64_t fn_total)
{
    bool paper_stream = TX_PROGRAM_KIND != TX_BURSTY;
    exp_check(ctx, EXP_CHECK_GUARANTEE, fn_total == 0,
              "no false negative of the standard BTBF nor the APBF "
              "over %" PRIu64 " BTBF trials of %" PRIu64
              " queries and their APBFs (%" PRIu64 " missed)",
              trials, s->queries, fn_total);
    double exact = exact_in_fraction(s, w);
    if (!isnan(exact)) {
        double z = exp_binomial_z(pos, s->queries, exact);
        exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
                  "in-window fraction %.5f against the exact %.5f "
                  "(z %+.2f)",
                  (double)pos / (double)s->queries, exact, z);
    }
    for (unsigned i = 0; i < BPIS; i++) {
        const bpi_result *r = &RESULTS[i];
        double std = r->standard.penalty_standard;
        double inf = r->inferential.penalty_inferential;
        double perr = tx_posterior_error(&r->inferential);
        exp_check(ctx, paper_stream ? EXP_CHECK_GUARANTEE : EXP_CHECK_STAT,
                  inf <= std,
                  "%sbpi %.0f: least-penalty total %.1f (k %" PRIu32
                  ") <= standard %.1f (k %" PRIu32 ")",
                  paper_stream ? "issue bar: " : "", r->bpi, inf,
                  r->inferential.params.k, std, r->standard.params.k);
        exp_check(ctx, paper_stream ? EXP_CHECK_GUARANTEE : EXP_CHECK_STAT,
                  perr < 0.05,
                  "%sbpi %.0f: posterior error %.4f < 0.05 (k %" PRIu32
                  ")",
                  paper_stream ? "issue bar: " : "", r->bpi, perr,
                  r->inferential.params.k);
        unsigned worst;
        double excess = calibration_excess(&r->inferential, &worst);
        unsigned l = worst;
        double f = r->inferential.eta[l]
                       ? (double)r->inferential.hits[l] /
                             (double)r->inferential.eta[l]
                       : NAN;
        exp_check(ctx, paper_stream ? EXP_CHECK_GUARANTEE : EXP_CHECK_STAT,
                  excess <= 0.0,
                  "%sbpi %.0f: every posterior bin of >= %u queries has "
                  "|f - M| <= 3 sd + 0.025 (worst bin %u: %" PRIu64
                  " queries, f %.4f, M %.3f, excess %+.4f)",
                  paper_stream ? "issue bar: " : "", r->bpi,
                  CALIBRATION_MIN, l + 1, r->inferential.eta[l], f,
                  (l + 0.5) / TX_BINS, excess);
    }
}

int main(int argc, char **argv)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%s", tx_kind_name(TX_PROGRAM_KIND),
             cond_name(TX_PROGRAM_GT));
    exp_context ctx;
    exp_begin(&ctx, name, argc, argv);
    uint64_t w = UINT64_C(1) << WINDOW_LOG2[TX_PROGRAM_KIND][TX_PROGRAM_GT];

    tx_stream s;
    tx_stream_make(&s, TX_PROGRAM_KIND, WARM, QUERIES, ctx.seed);
    uint64_t pos = tx_in_window(&s, w);

    char file[128];
    snprintf(file, sizeof file, "trials_%s.csv", name);
    FILE *trials_csv = exp_open_csv(&ctx, file);
    fputs("bpi,k,timers,timer_bits,block,padding,std_penalty,inf_penalty,"
          "posterior_error\n",
          trials_csv);
    uint64_t trials = 0, fn_total = 0;
    for (unsigned i = 0; i < BPIS; i++)
        run_bpi(&ctx, &s, w, i, trials_csv, &trials, &fn_total);
    exp_close(trials_csv, file);

    if (TX_PROGRAM_KIND == TX_BURSTY && TX_PROGRAM_GT == 0) {
        /* The measured D(j), once per stream. */
        FILE *md = exp_open_fragment(&ctx, "bursty_table");
        FILE *csv = exp_open_csv(&ctx, "bursty_distinct.csv");
        fputs("j,distinct\n", csv);
        fputs("| j | D(j) measured |\n|---|---|\n", md);
        for (unsigned i = 0; i < s.model.points; i++) {
            fprintf(csv, "%" PRIu64 ",%.3f\n", s.model.j[i], s.model.d[i]);
            fprintf(md, "| %" PRIu64 " | %.1f |\n", s.model.j[i],
                    s.model.d[i]);
        }
        exp_close(csv, "bursty_distinct.csv");
        exp_close(md, "bursty_table");
    }

    write_penalty_csv(&ctx, name, &s, w);
    write_fragments(&ctx, name, &s, w, pos);
    const bpi_result *rep = representative();
    write_calibration(&ctx, name, &rep->inferential);
    write_ages(&ctx, name, &rep->inferential, w);
    check_all(&ctx, &s, w, pos, trials, fn_total);
    tx_stream_free(&s);
    return exp_end(&ctx);
}
