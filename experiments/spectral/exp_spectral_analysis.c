/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_spectral_analysis.c: the paper's two analyses against measurement.
 *
 * Figure 1 (section 2.3): the expected relative error (m_i - f_i) / f_i of
 * the i-th most frequent of n = 10,000 Zipf values, given a Bloom error,
 * for skews 0.2 .. 2, k = 5: the paper's bound E'(RE_i) = i^z k /
 * (n - k)^k S_z, S_z = sum_j j^(k - z - 1), and the exact sum of its
 * Equation (1), E(RE_i) = i^z k (n-k-1)!/(n-1)! sum_{j != i} j^-z
 * (j-1)!/(j-k)!. Measured: MS filters at gamma = 0.7 holding f_i =
 * round((n / i)^z) occurrences of value i (one ebb_spectral_add of f_i
 * each), the relative error averaged over the values with an error, by
 * rank bins [2^b, 2^(b+1)), FIG1_RUNS filters per skew.
 *
 * Figure 4 (section 5.2): the ad-hoc iceberg query's error rate (the share
 * of the values present whose true count is below T but whose estimate is
 * not) against T, Zipf data (1,000 values, M = 100,000, 5 runs), k = 5,
 * gamma = n k / m = 1 for the n values present: the paper's formula
 * E = sum_{f < T} d(f) (1 - e^(-k n / m sum_{i >= T - f} d(i)))^k with the
 * data's own d, beside ebb_spectral_iceberg's answers for MS, MI and RM (RM
 * at the same total m).
 *
 * Writes fig1.csv, fig4.csv, the fragments spectral_fig1, spectral_fig4
 * and checks.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectral_exp.h"

#define EXPERIMENT_ID 40u
#define FIG1_N 10000u
#define FIG1_GAMMA 0.7
#define FIG1_RUNS 20u
#define FIG1_BINS 14u /* ranks 1 .. 16383 in powers of two */
#define FIG4_GAMMA 1.0

static const double FIG1_SKEWS[] = {0.2, 0.6, 1.0, 1.4, 1.8, 2.0};
#define FIG1_SKEW_COUNT (sizeof FIG1_SKEWS / sizeof FIG1_SKEWS[0])
static const double FIG4_SKEWS[] = {0.0, 0.5, 1.0, 1.5, 2.0};
#define FIG4_SKEW_COUNT (sizeof FIG4_SKEWS / sizeof FIG4_SKEWS[0])
static const uint64_t THRESHOLDS[] = {1,   2,   3,   4,    5,    7,    10,
                                      15,  20,  30,  50,   70,   100,  150,
                                      200, 300, 500, 700, 1000, 2000, 5000};
#define THRESHOLD_COUNT (sizeof THRESHOLDS / sizeof THRESHOLDS[0])

/* ---- Figure 1 ------------------------------------------------------------ */

static double bound_e_prime(double i, double z, double n, double k)
{
    double s = 0.0;
    for (uint32_t j = 1; j <= (uint32_t)n; j++)
        s += pow((double)j, k - z - 1.0);
    return pow(i, z) * k / pow(n - k, k) * s;
}

/* Equation (1) before the bound; terms with j < k vanish. */
static double exact_e(double i, double z, double n, double k,
                      const double *terms)
{
    (void)n;
    (void)k;
    double s = terms[0] - (i >= k ? terms[(uint32_t)i] : 0.0);
    return pow(i, z) * s;
}

/* terms[j] = k (n-k-1)!/(n-1)! j^-z (j-1)!/(j-k)!, terms[0] their sum. */
static void exact_terms(double z, uint32_t n, uint32_t k, double *terms)
{
    double base = log((double)k) + lgamma((double)(n - k)) -
                  lgamma((double)n);
    terms[0] = 0.0;
    for (uint32_t j = 1; j <= n; j++) {
        terms[j] = j < k ? 0.0
                         : exp(base - z * log((double)j) + lgamma((double)j) -
                               lgamma((double)(j - k + 1)));
        terms[0] += terms[j];
    }
}

static unsigned rank_bin(uint32_t rank)
{
    unsigned b = 0;
    while ((rank >> (b + 1)) != 0)
        b++;
    return b;
}

static void figure1(exp_context *ctx)
{
    FILE *csv = exp_open_csv(ctx, "fig1.csv");
    fputs("skew,bin_low,bin_high,e_prime_mid,exact_mean,measured_mean,"
          "errors,items\n", csv);
    FILE *md = exp_open_fragment(ctx, "spectral_fig1");
    fputs("| skew | ranks | paper's bound E' (mid rank) | Equation (1), mean "
          "over the bin | measured (errors) |\n|---|---|---|---|---|\n", md);
    uint64_t *truth = sp_calloc(FIG1_N + 1, sizeof *truth);
    double *terms = sp_calloc(FIG1_N + 1, sizeof *terms);
    ebb_hash128 *hashes = sp_calloc(FIG1_N, sizeof *hashes);
    uint64_t below = 0;
    uint64_t m = sp_counters_for(FIG1_N, SP_K, FIG1_GAMMA);
    for (size_t s = 0; s < FIG1_SKEW_COUNT; s++) {
        double z = FIG1_SKEWS[s];
        for (uint32_t i = 1; i <= FIG1_N; i++)
            truth[i] = (uint64_t)llround(pow((double)FIG1_N / i, z));
        exact_terms(z, FIG1_N, SP_K, terms);
        double re_sum[FIG1_BINS] = {0};
        uint64_t errors[FIG1_BINS] = {0};
        for (uint32_t r = 0; r < FIG1_RUNS; r++) {
            ebb_spectral *f = sp_create(
                m, SP_K, EBB_SPECTRAL_MS,
                exp_derive_seed(ctx->seed, EXPERIMENT_ID, (uint64_t)s, r));
            sp_value_hashes(f, FIG1_N, hashes);
            for (uint32_t i = 1; i <= FIG1_N; i++)
                exp_require(ebb_spectral_add_hash(f, hashes[i - 1], truth[i]),
                            "ebb_spectral_add_hash");
            for (uint32_t i = 1; i <= FIG1_N; i++) {
                uint64_t est = ebb_spectral_estimate_hash(f, hashes[i - 1]);
                below += est < truth[i];
                if (est > truth[i] && est != EBB_SPECTRAL_SATURATED) {
                    unsigned b = rank_bin(i);
                    re_sum[b] += (double)(est - truth[i]) / (double)truth[i];
                    errors[b]++;
                }
            }
            ebb_spectral_destroy(f);
        }
        for (unsigned b = 0; b < FIG1_BINS; b++) {
            uint32_t lo = 1u << b, hi = (2u << b) - 1u;
            if (hi > FIG1_N)
                hi = FIG1_N;
            double mid = sqrt((double)lo * hi);
            double exact = 0.0;
            for (uint32_t i = lo; i <= hi; i++)
                exact += exact_e(i, z, FIG1_N, SP_K, terms);
            exact /= (double)(hi - lo + 1);
            double eprime = bound_e_prime(mid, z, FIG1_N, SP_K);
            double measured = errors[b] ? re_sum[b] / errors[b] : NAN;
            fprintf(csv, "%g,%u,%u,%.6g,%.6g,%.6g,%" PRIu64 ",%u\n", z, lo,
                    hi, eprime, exact, measured, errors[b], hi - lo + 1);
            if (b % 3 == 0 || b == FIG1_BINS - 1) {
                fprintf(md, "| %g | %u-%u | %.3g | %.3g | ", z, lo, hi,
                        eprime, exact);
                if (errors[b] > 0)
                    fprintf(md, "%.3g (%" PRIu64 ") |\n", measured,
                            errors[b]);
                else
                    fputs("none in error |\n", md);
            }
        }
    }
    fputc('\n', md);
    exp_close(md, "the Figure 1 fragment");
    exp_close(csv, "fig1.csv");
    exp_check(ctx, EXP_CHECK_GUARANTEE, below == 0,
              "Fig. 1: MS never below the true count (%" PRIu64 " below)",
              below);
    /* Section 2.3's example: n = 1000, k = 5, z = 1, T = 0.5 gives
     * 5 (i / 497.5)^5, above 1 for i > 360; z_min = (k + 1) / 2 = 3. */
    double denom = (1000.0 - SP_K) * pow(0.5, 1.0);
    double cross = denom / pow(SP_K, 1.0 / SP_K);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(denom, 497.5, 1) && (unsigned)floor(cross) == 360u,
              "section 2.3: P(RE_i > 0.5) <= 5 (i / %.1f)^5, above 1 for "
              "i > %.1f (printed 497.5 and 360)",
              denom, cross);
    free(truth);
    free(terms);
    free(hashes);
}

/* ---- Figure 4 ------------------------------------------------------------ */

/* The paper's formula for one data set: d from its counts (present values
 * only), gamma_n = k n / m. */
static double iceberg_formula(const uint64_t *truth, uint64_t t,
                              double knm)
{
    uint64_t n = 0;
    for (uint32_t v = 0; v < SP_DISTINCT; v++)
        n += truth[v] > 0;
    double e = 0.0;
    for (uint32_t v = 0; v < SP_DISTINCT; v++) {
        uint64_t f = truth[v];
        if (f == 0 || f >= t)
            continue;
        uint64_t big = 0; /* values with count >= T - f */
        for (uint32_t u = 0; u < SP_DISTINCT; u++)
            big += truth[u] > 0 && truth[u] >= t - f;
        e += pow(1.0 - exp(-knm * (double)big / (double)n), SP_K) / n;
    }
    return e;
}

static void figure4(exp_context *ctx)
{
    FILE *csv = exp_open_csv(ctx, "fig4.csv");
    fputs("skew,threshold,formula,ms,mi,rm,below_threshold\n", csv);
    FILE *md = exp_open_fragment(ctx, "spectral_fig4");
    fputs("| skew | formula's peak (at T) | MS measured peak (at T) | MI "
          "peak | RM peak | E_b |\n|---|---|---|---|---|---|\n", md);
    uint32_t *stream = sp_calloc(SP_ITEMS, sizeof *stream);
    ebb_hash128 hashes[SP_DISTINCT];
    uint64_t missed[SP_METHODS] = {0};
    double formula_peak_all = 0.0, ms_above_eb = 0.0, uniform_peak = 0.0;
    for (size_t s = 0; s < FIG4_SKEW_COUNT; s++) {
        double formula[THRESHOLD_COUNT] = {0};
        double measured[SP_METHODS][THRESHOLD_COUNT] = {{0}};
        double under[THRESHOLD_COUNT] = {0};
        for (uint32_t r = 0; r < SP_RUNS; r++) {
            sp_zipf_stream(stream, SP_ITEMS, SP_DISTINCT, FIG4_SKEWS[s],
                           exp_derive_seed(ctx->seed, EXPERIMENT_ID + 1,
                                           (uint64_t)s, r));
            uint64_t truth[SP_DISTINCT] = {0};
            for (uint32_t i = 0; i < SP_ITEMS; i++)
                truth[stream[i]]++;
            uint64_t n = 0;
            for (uint32_t v = 0; v < SP_DISTINCT; v++)
                n += truth[v] > 0;
            uint64_t m = sp_counters_for((uint32_t)n, SP_K, FIG4_GAMMA);
            double knm = (double)SP_K * (double)n / (double)m;
            for (size_t t = 0; t < THRESHOLD_COUNT; t++)
                formula[t] += iceberg_formula(truth, THRESHOLDS[t], knm) /
                              SP_RUNS;
            uint64_t seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID + 2,
                                            (uint64_t)s, r);
            for (unsigned mi = 0; mi < SP_METHODS; mi++) {
                ebb_spectral *f = sp_create(m, SP_K, SP_METHOD[mi], seed);
                sp_value_hashes(f, SP_DISTINCT, hashes);
                for (uint32_t i = 0; i < SP_ITEMS; i++)
                    exp_require(ebb_spectral_add_hash(f, hashes[stream[i]], 1),
                                "ebb_spectral_add_hash");
                ebb_hash128 present[SP_DISTINCT];
                uint64_t counts[SP_DISTINCT];
                size_t np = 0;
                for (uint32_t v = 0; v < SP_DISTINCT; v++)
                    if (truth[v] > 0) {
                        present[np] = hashes[v];
                        counts[np++] = truth[v];
                    }
                bool out[SP_DISTINCT];
                for (size_t t = 0; t < THRESHOLD_COUNT; t++) {
                    (void)ebb_spectral_iceberg(f, present, np, THRESHOLDS[t],
                                               out);
                    uint64_t wrong = 0, low = 0;
                    for (size_t i = 0; i < np; i++) {
                        bool big = counts[i] >= THRESHOLDS[t];
                        missed[mi] += big && !out[i];
                        wrong += !big && out[i];
                        low += !big;
                    }
                    measured[mi][t] += (double)wrong / (double)np / SP_RUNS;
                    if (mi == 0)
                        under[t] += (double)low / (double)np / SP_RUNS;
                }
                ebb_spectral_destroy(f);
            }
        }
        size_t peak[1 + SP_METHODS] = {0};
        for (size_t t = 0; t < THRESHOLD_COUNT; t++) {
            fprintf(csv, "%g,%" PRIu64 ",%.6g,%.6g,%.6g,%.6g,%.6g\n",
                    FIG4_SKEWS[s], THRESHOLDS[t], formula[t], measured[0][t],
                    measured[1][t], measured[2][t], under[t]);
            if (formula[t] > formula[peak[0]])
                peak[0] = t;
            for (unsigned mi = 0; mi < SP_METHODS; mi++)
                if (measured[mi][t] > measured[mi][peak[1 + mi]])
                    peak[1 + mi] = t;
        }
        double eb = sp_bloom_error(FIG4_GAMMA, SP_K);
        fprintf(md, "| %g | %.4f (%" PRIu64 ")", FIG4_SKEWS[s],
                formula[peak[0]], THRESHOLDS[peak[0]]);
        for (unsigned mi = 0; mi < SP_METHODS; mi++)
            fprintf(md, " | %.4f (%" PRIu64 ")", measured[mi][peak[1 + mi]],
                    THRESHOLDS[peak[1 + mi]]);
        fprintf(md, " | %.3f |\n", eb);
        /* The paper's claims are about its skewed curves: on uniform data
         * the formula reaches E_b for T just above the common count. */
        if (FIG4_SKEWS[s] == 0.0)
            uniform_peak = formula[peak[0]];
        else if (formula[peak[0]] > formula_peak_all)
            formula_peak_all = formula[peak[0]];
        if (FIG4_SKEWS[s] > 0.0 && measured[0][peak[1]] > ms_above_eb)
            ms_above_eb = measured[0][peak[1]];
    }
    fputc('\n', md);
    exp_close(md, "the Figure 4 fragment");
    exp_close(csv, "fig4.csv");
    free(stream);
    for (unsigned mi = 0; mi < SP_METHODS; mi++)
        exp_check(ctx, EXP_CHECK_GUARANTEE, missed[mi] == 0,
                  "Fig. 4: %s's iceberg query misses no value whose true "
                  "count reaches T (%" PRIu64 " missed over all T, skews "
                  "and runs)",
                  sp_method_name(SP_METHOD[mi]), missed[mi]);
    exp_check(ctx, EXP_CHECK_STAT, formula_peak_all <= 0.025,
              "Fig. 4: the formula's error rate never exceeds 0.025 at "
              "k = 5, gamma = 1 on skewed data (the paper's claim; highest "
              "%.4f over skews 0.5..2; %.4f at skew 0)",
              formula_peak_all, uniform_peak);
    exp_check(ctx, EXP_CHECK_STAT,
              ms_above_eb < sp_bloom_error(FIG4_GAMMA, SP_K),
              "Fig. 4: MS's measured iceberg error rate below E_b = %.3f at "
              "every T on skewed data (highest %.4f over skews 0.5..2)",
              sp_bloom_error(FIG4_GAMMA, SP_K), ms_above_eb);
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "spectral_analysis", argc, argv);
    figure1(&ctx);
    figure4(&ctx);
    fputs("(see the Figure 1 and Figure 4 sections)\n", ctx.md);
    return exp_end(&ctx);
}
