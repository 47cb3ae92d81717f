/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbbf_fp.c: the false-positive rate of blocked filters (APBBF) at
 * their worst moment (steady state, just before a shift, distinct keys)
 * against ebb_apbf_shape_fp, the block false-positive rate over a Poisson
 * block load fed to the recursion of section 5.3.
 *
 *   1. Rows of the paper's Table 3 whose rate is measurable in a few
 *      million queries (>= 10^-4), slices of 2^18 to 2^19 bits (500 to 4000
 *      blocks), 16 filters each: the measured rate lies within 3 standard
 *      deviations of ebb_apbf_shape_fp, taking the larger of the binomial
 *      sd and the standard error over the filters. (A slice of a few
 *      hundred blocks has a block false-positive rate that varies from
 *      filter to filter by a few percent, about as much as the binomial
 *      noise of one filter's queries: the se over filters sees it, the
 *      binomial sd does not.)
 *   2. Power: the same measurement rejects (z > 3) the rate of the same
 *      (k, l, b) with the other block size, and the rate of the plain APBF
 *      with the same bits per slice-set, (k b, l b) (the paper's "APBF"
 *      column), so test 1 can see a wrong block layout.
 *   3. The chooser's promise: filters from ebb_apbf_choose_blocked for a
 *      small window keep the target (rate within 3 se of the target or
 *      below), over 100 independent filters.
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

#define FILTERS_PER_SHAPE 16u
#define Z_BOUND 3.0
/* Expected hits per shape: binomial sd 1.6% of the rate. */
#define HITS_WANTED 4000.0

typedef struct blocked_shape {
    uint32_t k, l, B, b;
    uint64_t window;
} blocked_shape;

/* Windows chosen for 2^18 to 2^19 bits per slice. */
static const blocked_shape SHAPES[] = {
    {2, 3, 64, 4, 3 * 28000},   {2, 3, 512, 4, 3 * 22000},
    {2, 5, 512, 4, 5 * 22000},  {3, 5, 64, 4, 5 * 14000},
    {3, 8, 512, 4, 8 * 15000},  {2, 3, 64, 8, 3 * 10000},
    {2, 5, 64, 8, 5 * 10000},   {2, 5, 512, 8, 5 * 11000},
};
#define SHAPE_COUNT (sizeof SHAPES / sizeof SHAPES[0])

static fp_result measured[SHAPE_COUNT];
static bool measured_done[SHAPE_COUNT];

static ebb_apbf_params shape_params(const blocked_shape *s) {
    ebb_apbf_params p;
    assert_int_equal(ebb_apbf_params_from_kl_blocked(s->k, s->l, s->window,
                                                     s->B, s->b, &p),
                     EBB_OK);
    return p;
}

static const fp_result *measure_shape(size_t index) {
    if (!measured_done[index]) {
        fp_plan plan;
        plan.params = shape_params(&SHAPES[index]);
        plan.filters = FILTERS_PER_SHAPE;
        plan.queries_per_filter = (uint64_t)ceil(
            fmax(1e6, HITS_WANTED / ebb_apbf_shape_fp(&plan.params)) /
            FILTERS_PER_SHAPE);
        plan.seed = 7000 + 100 * index;
        plan.prepare = NULL;
        plan.context = NULL;
        measured[index] = fp_measure(&plan);
        measured_done[index] = true;
    }
    return &measured[index];
}

static void worst_moment_rate_matches_shape_fp(void **state) {
    bool all_ok = true;
    size_t i;
    (void)state;
    print_message("  k  l   B  b blocks     g    queries       rate   shape fp"
                  " binomial sd  filter se      z\n");
    for (i = 0; i < SHAPE_COUNT; i++) {
        const fp_result *r = measure_shape(i);
        ebb_apbf_params p = shape_params(&SHAPES[i]);
        double shape_fp = ebb_apbf_shape_fp(&p);
        double sd = fmax(r->binomial_sd, r->filter_se);
        double z = (r->rate - shape_fp) / sd;
        bool ok = fabs(z) <= Z_BOUND;
        /* fp_measure's expectation for a blocked shape is the same model. */
        assert_true(r->expected == shape_fp);
        print_message("%3u %2u %3u %2u %6llu %5llu %10llu %.8f %.8f "
                      "%.8f %.8f %6.2f%s\n",
                      p.k, p.l, p.block_bits, p.block_hashes,
                      (unsigned long long)(p.slice_bits / p.block_bits),
                      (unsigned long long)p.generation,
                      (unsigned long long)r->queries, r->rate, shape_fp,
                      r->binomial_sd, r->filter_se, z,
                      ok ? "" : "  <-- FAILS");
        if (!ok) {
            all_ok = false;
            print_error("(k=%u, l=%u, B=%u, b=%u): measured %.8f over %llu "
                        "queries, ebb_apbf_shape_fp %.8f: z = %.2f (sd "
                        "%.8f)\n",
                        p.k, p.l, p.block_bits, p.block_hashes, r->rate,
                        (unsigned long long)r->queries, shape_fp, z, sd);
        }
    }
    assert_true(all_ok);
}

static void other_layouts_are_rejected(void **state) {
    bool all_ok = true;
    size_t i;
    (void)state;
    for (i = 0; i < SHAPE_COUNT; i++) {
        const blocked_shape *s = &SHAPES[i];
        const fp_result *r = measure_shape(i);
        ebb_apbf_params p = shape_params(s), other;
        uint32_t other_B = s->B == 64 ? 512 : 64;
        double other_fp, plain_fp, z_other, z_plain;
        /* The same design (g per block at the design load) with the other
         * block size: same window, blocks sized for it. */
        assert_int_equal(ebb_apbf_params_from_kl_blocked(s->k, s->l, s->window,
                                                         other_B, s->b,
                                                         &other),
                         EBB_OK);
        other_fp = ebb_apbf_shape_fp(&other);
        plain_fp = ebb_apbf_fp(p.k * p.block_hashes, p.l * p.block_hashes);
        z_other = (r->rate - other_fp) / fmax(r->binomial_sd, r->filter_se);
        z_plain = (r->rate - plain_fp) / fmax(r->binomial_sd, r->filter_se);
        print_message("(k=%u, l=%u, B=%u, b=%u) measured %.8f: B=%u's %.8f "
                      "z = %.1f, plain (%u, %u)'s %.8f z = %.1f\n",
                      p.k, p.l, p.block_bits, p.block_hashes, r->rate,
                      other_B, other_fp, z_other, p.k * p.block_hashes,
                      p.l * p.block_hashes, plain_fp, z_plain);
        if (!(fabs(z_other) > Z_BOUND && fabs(z_plain) > Z_BOUND)) {
            all_ok = false;
            print_error("(k=%u, l=%u, B=%u, b=%u): the measurement cannot "
                        "tell the other layouts apart\n",
                        p.k, p.l, p.block_bits, p.block_hashes);
        }
    }
    assert_true(all_ok);
}

#define SMALL_FILTERS 100u

static void chosen_small_filters_keep_the_target(void **state) {
    static const struct {
        uint64_t window;
        double fp;
        uint32_t B, b;
    } targets[] = {{2000, 0.01, 512, 8}, {5000, 0.02, 64, 4},
                   {3000, 0.005, 512, 4}};
    bool all_kept = true;
    size_t t;
    (void)state;
    print_message("window target   B  b  k   l  blocks   g   shape fp      "
                  "rate         se  z(target)\n");
    for (t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        fp_plan plan;
        fp_result r;
        double z;
        assert_int_equal(ebb_apbf_choose_blocked(targets[t].window,
                                                 targets[t].fp, 0,
                                                 targets[t].B, targets[t].b,
                                                 &plan.params),
                         EBB_OK);
        plan.filters = SMALL_FILTERS;
        plan.queries_per_filter = (uint64_t)ceil(
            fmax(1e6, HITS_WANTED / targets[t].fp) / SMALL_FILTERS);
        plan.seed = 90000 + 1000 * t;
        plan.prepare = NULL;
        plan.context = NULL;
        r = fp_measure(&plan);
        z = (r.rate - targets[t].fp) / r.filter_se;
        print_message("%6llu %6g %3u %2u %2u %3u %6llu %4llu %.8f %.8f "
                      "%.8f %8.2f\n",
                      (unsigned long long)targets[t].window, targets[t].fp,
                      targets[t].B, targets[t].b, plan.params.k,
                      plan.params.l,
                      (unsigned long long)(plan.params.slice_bits /
                                           plan.params.block_bits),
                      (unsigned long long)plan.params.generation,
                      r.expected, r.rate, r.filter_se, z);
        if (z > Z_BOUND) {
            all_kept = false;
            print_error("window %llu, fp %g, B=%u, b=%u (k=%u, l=%u): "
                        "measured %.6f, z = %.2f above the target\n",
                        (unsigned long long)targets[t].window, targets[t].fp,
                        targets[t].B, targets[t].b, plan.params.k,
                        plan.params.l, r.rate, z);
        }
    }
    assert_true(all_kept);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worst_moment_rate_matches_shape_fp),
        cmocka_unit_test(other_layouts_are_rejected),
        cmocka_unit_test(chosen_small_filters_keep_the_target),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
