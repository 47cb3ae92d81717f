/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_fp.c: the false-positive rate of real filters at their worst
 * moment (just before a shift, steady state, distinct keys) against the
 * analytics.
 *
 *   1. Large slices (m = 2^17, fill noise negligible), six shapes of the
 *      paper's Table 2 at fp 0.1 / 0.01 / 0.001: the measured rate lies
 *      within 3 binomial standard deviations of ebb_apbf_fp_ratios on the
 *      exact expected fill ratios, and is not above the promised
 *      ebb_apbf_fp(k, l) by more than 3 sd.
 *   2. Power: at the same sample sizes the paper's LINEAR fill model is
 *      rejected (z > 3) for every one of those shapes, so test 1 can tell
 *      the models apart.
 *   3. The fill ratio of every slice, counted in the snapshot, matches its
 *      exact expectation (so 1 tests the rate, not luck in the fill).
 *   4. Small windows sized by ebb_apbf_choose (slices of a few hundred bits)
 *      keep the header's promise: rate <= ebb_apbf_fp(k, l), within 3
 *      standard errors of the mean over 200 independent filters.
 * Seeds are fixed, so every run measures the same numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "../unit/support.h"
#include "ebb/ebb.h"
#include "fp_measure.h"

#define MAX_SLICES (EBB_APBF_MAX_K + EBB_APBF_MAX_L)
#define LARGE_SLICE_BITS (UINT64_C(1) << 17)
#define FILTERS_PER_SHAPE 4u
#define Z_BOUND 3.0

typedef struct shape {
    uint32_t k, l;
} shape;

static const shape SHAPES[] = {{4, 3}, {5, 7}, {6, 14}, {7, 5}, {8, 8}, {10, 7}};
#define SHAPE_COUNT (sizeof SHAPES / sizeof SHAPES[0])

static fp_result measured[SHAPE_COUNT];
static bool measured_done[SHAPE_COUNT];

static double linear_rate(uint32_t k, uint32_t l) {
    static double ratios[MAX_SLICES];
    assert_int_equal(ebb_apbf_worst_fill(k, l, EBB_FILL_LINEAR, ratios),
                     EBB_OK);
    return ebb_apbf_fp_ratios(k, l, ratios);
}

static ebb_apbf_params large_params(const shape *s) {
    ebb_apbf_params p;
    assert_int_equal(ebb_apbf_params_from_klm(s->k, s->l, LARGE_SLICE_BITS,
                                              &p),
                     EBB_OK);
    return p;
}

/* At least 10^6 queries, and at least 4000 expected hits (binomial sd 1.6%
 * of the rate). */
static uint64_t queries_for(double rate) {
    double wanted = fmax(1e6, 4000.0 / rate);
    return (uint64_t)ceil(wanted / FILTERS_PER_SHAPE);
}

static const fp_result *measure_shape(size_t index) {
    if (!measured_done[index]) {
        fp_plan plan;
        plan.params = large_params(&SHAPES[index]);
        plan.filters = FILTERS_PER_SHAPE;
        plan.queries_per_filter = queries_for(fp_exact_rate(&plan.params));
        plan.seed = 1000 * (index + 1);
        plan.prepare = NULL;
        plan.context = NULL;
        measured[index] = fp_measure(&plan);
        measured_done[index] = true;
    }
    return &measured[index];
}

static void worst_moment_rate_matches_exact_fill(void **state) {
    size_t i;
    (void)state;
    print_message("  k  l       m     g   queries     rate     exact   "
                  "promised    z(exact) z(promised)\n");
    for (i = 0; i < SHAPE_COUNT; i++) {
        const fp_result *r = measure_shape(i);
        ebb_apbf_params p = large_params(&SHAPES[i]);
        double promised = ebb_apbf_fp(p.k, p.l);
        double z_exact = fp_z(r, r->expected);
        double z_promised = fp_z(r, promised);
        print_message("%3u %2u %7llu %5llu %9llu %.6f %.6f %.6f %8.2f %8.2f\n",
                      p.k, p.l, (unsigned long long)p.slice_bits,
                      (unsigned long long)p.generation,
                      (unsigned long long)r->queries, r->rate, r->expected,
                      promised, z_exact, z_promised);
        CHECK(fabs(z_exact) <= Z_BOUND,
              "(k=%u, l=%u): measured %.6f, exact-fill F %.6f: z = %.2f", p.k,
              p.l, r->rate, r->expected, z_exact);
        CHECK(z_promised <= Z_BOUND,
              "(k=%u, l=%u): measured %.6f above the promised %.6f: z = %.2f",
              p.k, p.l, r->rate, promised, z_promised);
    }
}

static void linear_model_is_rejected(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < SHAPE_COUNT; i++) {
        const fp_result *r = measure_shape(i);
        double linear = linear_rate(SHAPES[i].k, SHAPES[i].l);
        double z_linear = fp_z(r, linear);
        print_message("(k=%u, l=%u): linear F %.6f, z = %.2f\n", SHAPES[i].k,
                      SHAPES[i].l, linear, z_linear);
        CHECK(z_linear > Z_BOUND,
              "(k=%u, l=%u): the linear model's %.6f is not rejected by the "
              "measured %.6f (z = %.2f)",
              SHAPES[i].k, SHAPES[i].l, linear, r->rate, z_linear);
    }
}

static uint64_t popcount64(uint64_t x) {
    uint64_t count = 0;
    while (x != 0) {
        x &= x - 1;
        count++;
    }
    return count;
}

/* Set bits of each slice in age order, read from a snapshot: slice s_i is
 * at buffer position (base + i) mod (k + l), base being s_0's position. */
static void slice_popcounts(const ebb_apbf *filter, uint64_t *counts) {
    ebb_apbf_stats stats;
    size_t size = ebb_apbf_snapshot_size(filter);
    unsigned char *bytes = malloc(size);
    uint32_t slices, base, i;
    uint64_t words, w;
    assert_non_null(bytes);
    assert_int_equal(ebb_apbf_save(filter, bytes, size, NULL), EBB_OK);
    ebb_apbf_get_stats(filter, &stats);
    slices = stats.params.k + stats.params.l;
    words = (stats.params.slice_bits + 63) / 64;
    base = (uint32_t)support_get_le(bytes + 32 + 48, 4);
    for (i = 0; i < slices; i++) {
        uint32_t position = (base + i) % slices;
        const unsigned char *slice = bytes + 32 + 56 + position * words * 8;
        counts[i] = 0;
        for (w = 0; w < words; w++)
            counts[i] += popcount64(support_get_le(slice + w * 8, 8));
    }
    free(bytes);
}

static void fill_ratios_match_expectation(void **state) {
    static double ratios[MAX_SLICES];
    static uint64_t counts[MAX_SLICES];
    size_t s;
    uint32_t i;
    (void)state;
    for (s = 0; s < SHAPE_COUNT; s++) {
        ebb_apbf_params p = large_params(&SHAPES[s]);
        ebb_apbf *filter = NULL;
        double m = (double)p.slice_bits;
        assert_int_equal(ebb_apbf_create(&p, 77 + s, &filter), EBB_OK);
        fp_fill_to_worst_moment(filter, 100 + (unsigned)s);
        slice_popcounts(filter, counts);
        fp_exact_ratios(&p, ratios);
        for (i = 0; i < p.k + p.l; i++) {
            double want = m * ratios[i];
            /* The binomial sd bounds the occupancy sd from above. */
            double sd = sqrt(m * ratios[i] * (1 - ratios[i]));
            CHECK(fabs((double)counts[i] - want) <= 4 * sd,
                  "(k=%u, l=%u) slice s_%u holds %llu bits, expected %.1f "
                  "(sd %.1f)",
                  p.k, p.l, i, (unsigned long long)counts[i], want, sd);
        }
        ebb_apbf_destroy(filter);
    }
}

/* ------------------------------------------------------------------------ */
/* Small windows                                                            */
/* ------------------------------------------------------------------------ */

#define SMALL_FILTERS 200u

static void small_windows_keep_the_promise(void **state) {
    static const struct {
        uint64_t window;
        double fp;
    } targets[] = {{100, 0.01}, {300, 0.001}, {1000, 0.01}, {1000, 0.001},
                   {10000, 0.01}};
    size_t t;
    bool all_kept = true;
    (void)state;
    print_message("window target   k   l     m    g  promised    exact     "
                  "rate       se  z(promised)\n");
    for (t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        fp_plan plan;
        fp_result r;
        double promised, z;
        assert_int_equal(ebb_apbf_choose(targets[t].window, targets[t].fp, 0,
                                         &plan.params),
                         EBB_OK);
        promised = ebb_apbf_fp(plan.params.k, plan.params.l);
        plan.filters = SMALL_FILTERS;
        plan.queries_per_filter =
            (uint64_t)ceil(fmax(1e6, 4000.0 / promised) / SMALL_FILTERS);
        plan.seed = 50000 + 1000 * t;
        plan.prepare = NULL;
        plan.context = NULL;
        r = fp_measure(&plan);
        z = (r.rate - promised) / r.filter_se;
        print_message("%6llu %6g %3u %3u %5llu %4llu %.6f %.6f %.6f %.6f %8.2f\n",
                      (unsigned long long)targets[t].window, targets[t].fp,
                      plan.params.k, plan.params.l,
                      (unsigned long long)plan.params.slice_bits,
                      (unsigned long long)plan.params.generation, promised,
                      r.expected, r.rate, r.filter_se, z);
        if (z > Z_BOUND) {
            all_kept = false;
            print_error("window %llu, fp %g (k=%u, l=%u, m=%llu): measured "
                        "%.6f, promised %.6f, z = %.2f\n",
                        (unsigned long long)targets[t].window, targets[t].fp,
                        plan.params.k, plan.params.l,
                        (unsigned long long)plan.params.slice_bits, r.rate,
                        promised, z);
        }
    }
    assert_true(all_kept);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worst_moment_rate_matches_exact_fill),
        cmocka_unit_test(linear_model_is_rejected),
        cmocka_unit_test(fill_ratios_match_expectation),
        cmocka_unit_test(small_windows_keep_the_promise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
