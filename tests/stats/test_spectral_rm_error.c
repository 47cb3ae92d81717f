/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_spectral_rm_error.c: Recurring Minimum against Minimum Selection on
 * Zipf data as the paper's section 6.1: 1000 distinct values, M = 100,000
 * draws, k = 5, MS at m = 7143 counters of 32 bits (gamma 0.7). Each of
 * the RUNS runs draws its own stream (seed 100 + run) AND its own hash
 * layout (params.seed = run): with one layout every run shares its Bloom
 * errors, and 5 runs of 1000 keys are not 5000 independent queries
 * (/work/notes/spectral-rm-investigation.md).
 *
 * Asserted, at skews 0.5 and 1:
 *  (a) RM with its default exact marker never answers below the truth
 *      (nor does MS);
 *  (b) at equal total memory (params_init's split of 7143 counters, the
 *      fingerprint table's bytes counted on RM's side: MS gets them as
 *      extra counters), RM's additive error (mean estimate - truth over
 *      the keys) is below MS's by more than 3 standard errors of the
 *      paired per-run differences. Its error ratio is NOT below MS's at
 *      equal bytes (measured 0.028 vs 0.022 at skew 0.5, 0.027 vs 0.022
 *      at skew 1: the table costs MS-usable memory), only below MS's on
 *      the counters alone (m = 7143): both asserted, so the paper's claim
 *      (section 3.4, Fig. 6) is recorded as not reproducing;
 *  (c) Table 1's setup, a primary of m = 7143 with k 5 plus a secondary
 *      of m/2 EXTRA counters (k 5) and an exact marker with room for every
 *      key: RM's error ratio below MS's at m by more than 3 binomial sd of
 *      the difference over the pooled runs (measured about 2x below, not
 *      the 18.5x of Table 1).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "core/rng.h"
#include "../unit/support.h"
#include "spectral/spectral_internal.h"

#define VALUES 1000u
#define DRAWS 100000u
#define RUNS 40u
#define TOTAL_COUNTERS 7143u /* ceil(1000 * 5 / 0.7) */

static double cdf[VALUES];

static void zipf_table(double skew)
{
    support_zipf_table(cdf, VALUES, skew);
}

static uint32_t zipf_draw(ebb_rng *rng)
{
    return support_zipf_draw(cdf, VALUES, rng);
}

/* One method's totals over the runs. */
typedef struct tally {
    uint64_t errors;        /* estimate != truth                         */
    uint64_t below;         /* estimate < truth                          */
    double excess[RUNS];    /* per run: mean (estimate - truth) per key  */
    uint64_t moves_refused;
} tally;

static void run(const ebb_spectral_params *shape, uint32_t r, tally *t)
{
    ebb_spectral_params p = *shape;
    ebb_spectral *f = NULL;
    uint64_t truth[VALUES] = {0};
    ebb_rng rng;
    p.seed = r;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    ebb_rng_seed(&rng, 100 + r);
    for (uint32_t i = 0; i < DRAWS; i++) {
        uint64_t v = zipf_draw(&rng);
        truth[v]++;
        ebb_spectral_add(f, &v, sizeof v, 1);
    }
    double excess = 0;
    for (uint64_t v = 0; v < VALUES; v++) {
        uint64_t e = ebb_spectral_estimate(f, &v, sizeof v);
        assert_true(e != EBB_SPECTRAL_SATURATED);
        t->errors += e != truth[v];
        t->below += e < truth[v];
        excess += (double)e - (double)truth[v];
    }
    t->excess[r] = excess / VALUES;
    t->moves_refused += f->stats.moves_refused;
    ebb_spectral_destroy(f);
}

static double mean_of(const double *x)
{
    double s = 0;
    for (uint32_t r = 0; r < RUNS; r++)
        s += x[r];
    return s / RUNS;
}

/* Standard error of the mean of a[r] - b[r]. */
static double paired_se(const double *a, const double *b)
{
    double d[RUNS], m, ss = 0;
    for (uint32_t r = 0; r < RUNS; r++)
        d[r] = a[r] - b[r];
    m = mean_of(d);
    for (uint32_t r = 0; r < RUNS; r++)
        ss += (d[r] - m) * (d[r] - m);
    return sqrt(ss / (RUNS - 1) / RUNS);
}

/* sd of the difference of two binomial counts over n queries each. */
static double diff_sd(uint64_t a, uint64_t b, double n)
{
    double pa = a / n, pb = b / n;
    return sqrt(n * pa * (1 - pa) + n * pb * (1 - pb));
}

static void compare(double skew)
{
    ebb_spectral_params ms, ms_eq, rm, rm_extra;
    assert_int_equal(ebb_spectral_params_init(TOTAL_COUNTERS, 32, 5,
                                              EBB_SPECTRAL_MS, &ms),
                     EBB_OK);
    assert_int_equal(ebb_spectral_params_init(TOTAL_COUNTERS, 32, 5,
                                              EBB_SPECTRAL_RM, &rm),
                     EBB_OK);
    assert_int_equal(rm.marker, EBB_SPECTRAL_MARKER_EXACT);
    /* The table's bytes as 32-bit counters for MS. */
    uint64_t extra = (rm.marker_size * 8 + 3) / 4;
    assert_int_equal(ebb_spectral_params_init(TOTAL_COUNTERS + extra, 32, 5,
                                              EBB_SPECTRAL_MS, &ms_eq),
                     EBB_OK);
    /* Equal memory: the counters' bytes plus RM's table (word rounding
     * of the two counter arrays aside: at most 8 bytes each). */
    uint64_t mem_ms = ebb_spectral_memory_for(&ms_eq);
    uint64_t mem_rm = ebb_spectral_memory_for(&rm);
    assert_true(mem_rm <= mem_ms + 16 && mem_ms <= mem_rm + 16);
    rm_extra = rm;
    rm_extra.counters = TOTAL_COUNTERS;
    rm_extra.secondary = (TOTAL_COUNTERS + 1) / 2;
    rm_extra.secondary_k = 5;
    rm_extra.marker_size = VALUES;

    tally t_ms = {0}, t_eq = {0}, t_rm = {0}, t_extra = {0};
    zipf_table(skew);
    for (uint32_t r = 0; r < RUNS; r++) {
        run(&ms, r, &t_ms);
        run(&ms_eq, r, &t_eq);
        run(&rm, r, &t_rm);
        run(&rm_extra, r, &t_extra);
    }
    double n = (double)RUNS * VALUES;
    double add_eq = mean_of(t_eq.excess), add_rm = mean_of(t_rm.excess);
    double se = paired_se(t_eq.excess, t_rm.excess);
    double sd_eq = diff_sd(t_eq.errors, t_rm.errors, n);
    double sd_m = diff_sd(t_ms.errors, t_rm.errors, n);
    double sd_extra = diff_sd(t_ms.errors, t_extra.errors, n);
    printf("skew %.1f, %u runs x %u keys (hash seed = run):\n"
           "  MS m %llu: errors %llu (%.4f), additive %.3f, below %llu\n"
           "  MS m %llu (= RM's bytes): errors %llu (%.4f), additive %.3f,"
           " below %llu\n"
           "  RM m_p %llu m_s %llu k_s %u exact %llu slots: errors %llu"
           " (%.4f), additive %.3f, below %llu, moves refused %llu\n"
           "  RM m_p %llu + m_s %llu extra, k_s %u, %llu slots: errors %llu"
           " (%.4f), additive %.3f, below %llu\n"
           "  (b) additive MS - RM %.3f = %.1f se; errors RM - MS(equal"
           " bytes) %.1f sd, MS(m) - RM %.1f sd\n"
           "  (c) errors MS(m) - RM(m + m/2) = %.1f sd, ratio %.2f\n",
           skew, RUNS, VALUES, (unsigned long long)ms.counters,
           (unsigned long long)t_ms.errors, t_ms.errors / n,
           mean_of(t_ms.excess), (unsigned long long)t_ms.below,
           (unsigned long long)ms_eq.counters,
           (unsigned long long)t_eq.errors, t_eq.errors / n, add_eq,
           (unsigned long long)t_eq.below, (unsigned long long)rm.counters,
           (unsigned long long)rm.secondary, rm.secondary_k,
           (unsigned long long)rm.marker_size,
           (unsigned long long)t_rm.errors, t_rm.errors / n, add_rm,
           (unsigned long long)t_rm.below,
           (unsigned long long)t_rm.moves_refused,
           (unsigned long long)rm_extra.counters,
           (unsigned long long)rm_extra.secondary, rm_extra.secondary_k,
           (unsigned long long)rm_extra.marker_size,
           (unsigned long long)t_extra.errors, t_extra.errors / n,
           mean_of(t_extra.excess), (unsigned long long)t_extra.below,
           add_eq - add_rm, (add_eq - add_rm) / se,
           ((double)t_rm.errors - (double)t_eq.errors) / sd_eq,
           ((double)t_ms.errors - (double)t_rm.errors) / sd_m,
           ((double)t_ms.errors - (double)t_extra.errors) / sd_extra,
           (double)t_ms.errors / (double)t_extra.errors);
    /* (a) one-sided, every method. */
    assert_int_equal(t_ms.below, 0);
    assert_int_equal(t_eq.below, 0);
    assert_int_equal(t_rm.below, 0);
    assert_int_equal(t_extra.below, 0);
    assert_int_equal(t_extra.moves_refused, 0);
    /* (b) additive error lower. The error ratio: counting the table, MS
     * at equal bytes is better (measured 3.9-5.3 sd); RM is no worse than
     * MS on the same counters without the table (m = 7143). */
    assert_true(add_rm < add_eq - 3 * se);
    assert_true(t_rm.errors > t_eq.errors);
    assert_true(t_rm.errors < t_ms.errors);
    /* (c) Table 1's setup beats MS at m. */
    assert_true((double)t_extra.errors < (double)t_ms.errors - 3 * sd_extra);
    /* MS's own figures (the reference the comparisons stand on). */
    assert_true(t_ms.errors > 0 && t_eq.errors < t_ms.errors);
}

static void test_skew_05(void **state)
{
    (void)state;
    compare(0.5);
}

static void test_skew_1(void **state)
{
    (void)state;
    compare(1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skew_05),
        cmocka_unit_test(test_skew_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
