/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_timing_fp.c: the standard BTBF's measured false-positive rate
 * against ebb_timing_fp (docs/timing.md, "Sizing and the false-positive
 * rate").
 *
 * For each shape a stream of distinct keys is inserted; after a warm-up of
 * 3 w + 2 B insertions (the state is stationary after w + B), every
 * insertion is followed by one query of a key never inserted, so the
 * queries fall uniformly on the positions b of the block, as the formula's
 * average assumes. The measured fraction of positives must lie within 3
 * binomial standard deviations of the analytic rate. Shapes: the TBF
 * (B = 1), blocks dividing w and not, B = w, and two shapes of the paper's
 * rule. Fixed seeds: every run measures the same numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "ebb/timing.h"
#include "../unit/support.h"

#define QUERIES 1000000u

/* The smallest bpt that holds T_Omega + 2 values. */
static uint32_t bits_for(uint64_t w, uint64_t block, uint64_t p) {
    uint64_t values = (w + block - 1) / block + 3 + p;
    uint32_t bpt = 2;
    while ((UINT64_C(1) << bpt) < values)
        bpt++;
    return bpt;
}

/* The shape with the paper's padding for this B (at most k swept). */
static ebb_timing_params explicit_shape(uint64_t w, uint64_t m, uint32_t k,
                                        uint64_t block) {
    uint64_t need = ((m + k - 1) / k + block - 1) / block;
    uint64_t p = need > 0 ? need - 1 : 0;
    ebb_timing_params params;
    assert_int_equal(ebb_timing_params_init(w, m, k, bits_for(w, block, p),
                                            block, p, &params),
                     EBB_OK);
    return params;
}

static void measure(const ebb_timing_params *p, uint64_t seed) {
    ebb_timing *f = NULL;
    assert_int_equal(ebb_timing_create(p, NULL, seed, &f), EBB_OK);
    uint64_t warm = 3 * p->window + 2 * p->block;
    uint64_t index = 0;
    for (; index < warm; index++) {
        support_key key = support_key_make(KEYS_INSERTED, index);
        ebb_timing_add(f, key.bytes, sizeof key.bytes);
    }
    uint64_t positives = 0;
    for (uint64_t q = 0; q < QUERIES; q++, index++) {
        support_key key = support_key_make(KEYS_INSERTED, index);
        ebb_timing_add(f, key.bytes, sizeof key.bytes);
        support_key fresh = support_key_make(KEYS_FRESH, q);
        positives += ebb_timing_contains(f, fresh.bytes, sizeof fresh.bytes);
    }
    double want = ebb_timing_fp(p);
    double got = (double)positives / QUERIES;
    double sd = sqrt(want * (1 - want) / QUERIES);
    print_message("w %6llu m %6llu k %2u bpt %2u B %5llu P %5llu: "
                  "fp %.5f analytic %.5f (%+.2f sd)\n",
                  (unsigned long long)p->window, (unsigned long long)p->timers,
                  (unsigned)p->k, (unsigned)p->timer_bits,
                  (unsigned long long)p->block,
                  (unsigned long long)p->padding, got, want,
                  (got - want) / sd);
    CHECK(fabs(got - want) <= 3 * sd, "measured %.5f, analytic %.5f, sd %.5f",
          got, want, sd);
    ebb_timing_destroy(f);
}

static void explicit_shapes_match(void **state) {
    (void)state;
    const struct {
        uint64_t w, m;
        uint32_t k;
        uint64_t block;
    } shapes[] = {
        {1000, 6000, 4, 1},   /* the TBF                       */
        {1000, 6000, 4, 50},  /* B divides w                   */
        {1000, 6000, 4, 333}, /* w = 3 B + 1                   */
        {500, 3000, 3, 500},  /* B = w: the coarsest window    */
        {2000, 9000, 2, 7},   /* k = 2, w = 285 B + 5          */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        ebb_timing_params p = explicit_shape(shapes[i].w, shapes[i].m,
                                             shapes[i].k, shapes[i].block);
        measure(&p, 100 + i);
    }
}

static void paper_shapes_match(void **state) {
    (void)state;
    ebb_timing_params p;
    /* bpt = k = 4: B = 123 for w = 2000 at 8 bits per item. */
    assert_int_equal(ebb_timing_choose_paper(2000, 8.0, 4, &p), EBB_OK);
    assert_true(p.block > 1);
    measure(&p, 7);
    /* bpt = 12: B = 1 (the TBF) for w = 1000, m = 8000. */
    assert_int_equal(ebb_timing_choose_paper(1000, 96.0, 12, &p), EBB_OK);
    assert_int_equal(p.block, 1);
    measure(&p, 8);
    /* Sized from a memory budget. */
    assert_int_equal(ebb_timing_choose(4000, 4000, 0.0, &p), EBB_OK);
    measure(&p, 9);
}

int main(void) {
#define TEST(f) SUPPORT_TEST(f, support_setup_counting)
    const struct CMUnitTest tests[] = {
        TEST(explicit_shapes_match),
        TEST(paper_shapes_match),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
