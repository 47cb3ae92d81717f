/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_window.c: no false negatives, ever, for every shape of the
 * paper's Table 2; and the window is not much longer than promised.
 *
 * Each filter is small (g ~ 16), so the stream runs through the filter many
 * times: at least 10 windows of distinct keys.
 *   - after every insertion, the oldest item of the window (inserted w - 1
 *     insertions ago) and the newest are present;
 *   - at every generation boundary (just before and just after a shift) the
 *     whole window is present, and so is everything the paper's section 5.2
 *     says stays fully visible: the current generation plus l full ones;
 *   - at the end, items older than w + k g (whose slices have all been
 *     cleared) are reported no more often than never-inserted keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "ebb/ebb.h"
#include "support.h"

static const double LN2 = 0.693147180559945309417;

/* The insertions per generation aimed at: small, so that a window is short
 * and the stream laps the filter many times in little time. */
#define TARGET_GENERATION 16u
#define FRESH_PROBES 20000u

static const uint32_t TABLE2_SHAPES[][2] = {
    {4, 3},   {5, 7},   {6, 14},  {7, 28},  {8, 56},  {7, 5},   {8, 8},
    {9, 14},  {10, 25}, {11, 46}, {10, 7},  {11, 9},  {12, 14}, {13, 23},
    {14, 40}, {14, 11}, {15, 15}, {16, 22}, {17, 36}, {18, 63}, {17, 13},
    {18, 16}, {19, 22}, {20, 33}, {21, 54},
};
#define SHAPES (sizeof TABLE2_SHAPES / sizeof TABLE2_SHAPES[0])

/* Half the shapes sized by window (params_from_kl), half by slice bits as
 * in the paper (params_from_klm), so both sizing paths are exercised. */
static ebb_apbf_params shape_params(size_t row) {
    uint32_t k = TABLE2_SHAPES[row][0], l = TABLE2_SHAPES[row][1];
    ebb_apbf_params p;
    if (row % 2 == 0) {
        assert_int_equal(ebb_apbf_params_from_kl(k, l,
                                                 (uint64_t)l *
                                                     TARGET_GENERATION,
                                                 &p),
                         EBB_OK);
        assert_int_equal(p.generation, TARGET_GENERATION);
    } else {
        uint64_t m = (uint64_t)ceil(TARGET_GENERATION * k / LN2) + row;
        assert_int_equal(ebb_apbf_params_from_klm(k, l, m, &p), EBB_OK);
    }
    return p;
}

typedef struct stream_run {
    ebb_apbf *filter;
    ebb_apbf_params params;
    ebb_hash128 *hashes; /* hashes[i]: the i-th inserted key's */
    uint64_t inserted;
} stream_run;

static void expect_present(const stream_run *run, uint64_t index,
                           const char *why) {
    CHECK(ebb_apbf_contains_hash(run->filter, run->hashes[index]),
          "false negative (k=%u, l=%u, g=%llu): item %llu of %llu inserted "
          "(%s)",
          run->params.k, run->params.l,
          (unsigned long long)run->params.generation,
          (unsigned long long)index, (unsigned long long)run->inserted, why);
}

/* The last `count` items (or all of them, if fewer were inserted). */
static void expect_last_present(const stream_run *run, uint64_t count,
                                const char *why) {
    uint64_t first = run->inserted > count ? run->inserted - count : 0, i;
    for (i = first; i < run->inserted; i++)
        expect_present(run, i, why);
}

static void insert_next(stream_run *run) {
    support_key key = support_key_make(KEYS_INSERTED, run->inserted);
    ebb_apbf_add(run->filter, key.bytes, sizeof key.bytes);
    run->inserted++;
}

static void check_after_insertion(const stream_run *run) {
    ebb_apbf_stats stats;
    uint64_t w = run->params.window;
    expect_present(run, run->inserted - 1, "the newest");
    if (run->inserted >= w)
        expect_present(run, run->inserted - w, "the oldest of the window");
    ebb_apbf_get_stats(run->filter, &stats);
    if (stats.in_generation == run->params.generation ||
        stats.in_generation == 1) {
        expect_last_present(run, w, "the whole window at a boundary");
        /* Section 5.2: the current generation and l full ones. */
        expect_last_present(run,
                            stats.in_generation +
                                (uint64_t)run->params.l *
                                    run->params.generation,
                            "the current generation plus l older ones");
    }
}

/* Old items (all slices cleared) vs never-inserted keys on the same filter:
 * both are hits of the same Bernoulli rate. Allow 4 standard deviations of
 * the difference plus a little for the tiny-rate shapes. */
/* Items inserted more than this many insertions ago have no slice left. */
static uint64_t old_horizon(const ebb_apbf_params *p) {
    return p->window + (uint64_t)p->k * p->generation;
}

static void check_old_items_are_forgotten(const stream_run *run) {
    uint64_t horizon = old_horizon(&run->params);
    uint64_t old_count = run->inserted - horizon, old_hits = 0;
    uint64_t fresh_hits = 0, i;
    double p_old, p_fresh, pooled, sd;
    assert_true(run->inserted >= horizon + 4000);
    for (i = 0; i < old_count; i++)
        old_hits += ebb_apbf_contains_hash(run->filter, run->hashes[i]);
    for (i = 0; i < FRESH_PROBES; i++) {
        support_key key = support_key_make(KEYS_FRESH, i);
        fresh_hits += ebb_apbf_contains(run->filter, key.bytes,
                                        sizeof key.bytes);
    }
    p_old = (double)old_hits / (double)old_count;
    p_fresh = (double)fresh_hits / FRESH_PROBES;
    pooled = (double)(old_hits + fresh_hits) / (double)(old_count + FRESH_PROBES);
    sd = sqrt(pooled * (1 - pooled) *
              (1.0 / (double)old_count + 1.0 / FRESH_PROBES));
    CHECK(fabs(p_old - p_fresh) <= 4 * sd + 2.0 / (double)old_count,
          "(k=%u, l=%u): items older than w + k g reported at %.5f, "
          "never-inserted keys at %.5f (sd of difference %.5f)",
          run->params.k, run->params.l, p_old, p_fresh, sd);
    /* And that rate is about the promised one (loose: small slices make the
     * fill ratios noisy). */
    CHECK(p_fresh <= 2.5 * ebb_apbf_fp(run->params.k, run->params.l) + 0.002,
          "(k=%u, l=%u): never-inserted keys reported at %.5f, promised %.5f",
          run->params.k, run->params.l, p_fresh,
          ebb_apbf_fp(run->params.k, run->params.l));
}

static void run_shape(size_t row) {
    stream_run run;
    uint64_t total, i;
    run.params = shape_params(row);
    /* Ten windows (and enough beyond the slack for 4000 forgotten items),
     * rounded up to whole generations so the stream ends just before a
     * shift, the worst moment for false positives. */
    total = 10 * run.params.window;
    if (total < old_horizon(&run.params) + 4000)
        total = old_horizon(&run.params) + 4000;
    total += run.params.generation - total % run.params.generation;
    run.hashes = malloc(total * sizeof *run.hashes);
    assert_non_null(run.hashes);
    assert_int_equal(ebb_apbf_create(&run.params, 1000 + row, &run.filter),
                     EBB_OK);
    for (i = 0; i < total; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i);
        run.hashes[i] = ebb_apbf_hash(run.filter, key.bytes, sizeof key.bytes);
    }
    run.inserted = 0;
    for (i = 0; i < total; i++) {
        insert_next(&run);
        check_after_insertion(&run);
    }
    check_old_items_are_forgotten(&run);
    ebb_apbf_destroy(run.filter);
    free(run.hashes);
}

static void no_false_negatives_for_table2_shapes(void **state) {
    size_t row;
    (void)state;
    for (row = 0; row < SHAPES; row++)
        run_shape(row);
}

/* Shapes at the edges of the limits: k = 1 and l = 1, where every
 * off-by-one in the shift or the query shows. */
static void no_false_negatives_at_the_edges(void **state) {
    static const uint32_t shapes[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 1},
                                         {EBB_APBF_MAX_K, 1},
                                         {EBB_APBF_MAX_K, 3}};
    size_t s;
    (void)state;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        stream_run run;
        uint64_t total, i;
        assert_int_equal(ebb_apbf_params_from_kl(shapes[s][0], shapes[s][1],
                                                 (uint64_t)shapes[s][1] * 3,
                                                 &run.params),
                         EBB_OK);
        total = 40 * run.params.window + 7;
        run.hashes = malloc(total * sizeof *run.hashes);
        assert_non_null(run.hashes);
        assert_int_equal(ebb_apbf_create(&run.params, 9, &run.filter), EBB_OK);
        for (i = 0; i < total; i++) {
            support_key key = support_key_make(KEYS_INSERTED, i);
            run.hashes[i] =
                ebb_apbf_hash(run.filter, key.bytes, sizeof key.bytes);
        }
        run.inserted = 0;
        for (i = 0; i < total; i++) {
            insert_next(&run);
            check_after_insertion(&run);
        }
        ebb_apbf_destroy(run.filter);
        free(run.hashes);
    }
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(no_false_negatives_for_table2_shapes),
        TEST(no_false_negatives_at_the_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
