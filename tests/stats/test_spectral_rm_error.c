/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_spectral_rm_error.c: Recurring Minimum's error ratio against
 * Minimum Selection's at equal total memory, on Zipf data as the paper's
 * section 6.1: 1000 distinct values, M = 100,000 draws, k = 5, gamma 0.7
 * for MS (m = 7143 counters of 32 bits). RM gets the same m split as
 * ebb_spectral_params_init does (primary 4762, secondary 2381) plus its
 * marker (4762 bits); MS gets those bits too (149 more counters), so the
 * memory is equal. Error ratio: the fraction of the 1000 values whose
 * estimate differs from the truth, over 5 fixed seeds (5000 queries per
 * method). The assertion: RM's count of errors below MS's by more than 3
 * binomial standard deviations of the difference (sd from n p (1 - p) of
 * each), at skew 0.5 and 1; and RM never below the truth.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "core/rng.h"
#include "spectral/spectral_internal.h"

#define VALUES 1000u
#define DRAWS 100000u
#define RUNS 5u
#define TOTAL_COUNTERS 7143u /* ceil(1000 * 5 / 0.7) */

static double cdf[VALUES];

static void zipf_table(double skew)
{
    double sum = 0;
    for (uint32_t i = 0; i < VALUES; i++)
        sum += 1.0 / pow(i + 1.0, skew);
    double acc = 0;
    for (uint32_t i = 0; i < VALUES; i++) {
        acc += 1.0 / pow(i + 1.0, skew) / sum;
        cdf[i] = acc;
    }
    cdf[VALUES - 1] = 1.0;
}

static uint32_t zipf_draw(ebb_rng *rng)
{
    double u = ebb_rng_unit(rng);
    uint32_t lo = 0, hi = VALUES - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Errors (estimate != truth) and answers below the truth of one filter
 * over one stream. */
static void run(const ebb_spectral_params *p, uint64_t seed, uint64_t *errors,
                uint64_t *below)
{
    ebb_spectral *f = NULL;
    uint64_t truth[VALUES] = {0};
    ebb_rng rng;
    assert_int_equal(ebb_spectral_create(p, &f), EBB_OK);
    ebb_rng_seed(&rng, seed);
    for (uint32_t i = 0; i < DRAWS; i++) {
        uint64_t v = zipf_draw(&rng);
        truth[v]++;
        ebb_spectral_add(f, &v, sizeof v, 1);
    }
    for (uint64_t v = 0; v < VALUES; v++) {
        uint64_t e = ebb_spectral_estimate(f, &v, sizeof v);
        *errors += e != truth[v];
        *below += e < truth[v];
    }
    ebb_spectral_destroy(f);
}

static void compare(double skew)
{
    ebb_spectral_params ms, rm;
    assert_int_equal(ebb_spectral_params_init(TOTAL_COUNTERS, 32, 5,
                                              EBB_SPECTRAL_RM, &rm),
                     EBB_OK);
    assert_true(rm.marker_bits > 0);
    uint64_t extra = (rm.marker_bits + 31) / 32;
    assert_int_equal(ebb_spectral_params_init(TOTAL_COUNTERS + extra, 32, 5,
                                              EBB_SPECTRAL_MS, &ms),
                     EBB_OK);
    uint64_t ms_err = 0, rm_err = 0, ms_below = 0, rm_below = 0;
    zipf_table(skew);
    for (uint64_t s = 0; s < RUNS; s++) {
        run(&ms, 100 + s, &ms_err, &ms_below);
        run(&rm, 100 + s, &rm_err, &rm_below);
    }
    double n = RUNS * VALUES;
    double p_ms = ms_err / n, p_rm = rm_err / n;
    double sd = sqrt(n * p_ms * (1 - p_ms) + n * p_rm * (1 - p_rm));
    printf("skew %.1f: MS m %llu errors %llu/%.0f (%.4f), RM m_p %llu m_s "
           "%llu marker %llu errors %llu (%.4f), below %llu/%llu, "
           "gap %.1f sd\n",
           skew, (unsigned long long)ms.counters,
           (unsigned long long)ms_err, n, p_ms,
           (unsigned long long)rm.counters, (unsigned long long)rm.secondary,
           (unsigned long long)rm.marker_bits, (unsigned long long)rm_err,
           p_rm, (unsigned long long)ms_below, (unsigned long long)rm_below,
           (ms_err - (double)rm_err) / sd);
    assert_int_equal(ms_below, 0);
    assert_int_equal(rm_below, 0);
    assert_true((double)rm_err < (double)ms_err - 3 * sd);
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
