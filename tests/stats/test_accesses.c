/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_accesses.c: the slices (or blocks) a query reads, measured with
 * ebb_apbf_contains_counted, against ebb_apbf_expected_accesses on the
 * shape's match probabilities (ebb_apbf_shape_ratios).
 *
 * At the worst moment (steady state, just before a shift, distinct keys:
 * fp_measure.h) every filter is queried with
 *   (a) never-inserted keys; those answering false give the mean reads of a
 *       false query (the paper's "false" column; the first 100,000 keys of
 *       each filter);
 *   (b) the never-inserted keys answering true: a false positive's reads
 *       ("fp" column);
 *   (c) every item of the window (the last l generations, so uniformly over
 *       them): a window item's reads ("window" column); all must be found.
 * Each mean must lie within 5% of the analytic figure and within 3 standard
 * errors of it (the standard error of the mean over the queries, so the
 * bound tightens with the sample). Plain shapes of the paper's Table 2 and
 * blocked shapes of its Table 3 are measured. Seeds are fixed.
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
#define FILTERS 4u
#define RELATIVE_BOUND 0.05
#define Z_BOUND 3.0
/* False positives wanted in all, and never-inserted queries at least. */
#define FALSE_POSITIVES_WANTED 2000.0
#define MIN_FRESH_QUERIES 400000.0
/* False queries are averaged over the first this many never-inserted keys
 * of each filter (a standard error near 0.05%): the rest are only there to
 * find false positives, and tens of millions of samples would make the
 * 3-se bound sensitive to the model's second-order approximations (Poisson
 * block loads, fill ratios that vary between filters). */
#define FALSE_QUERY_SAMPLE 100000u
/* A measured mean needs at least this many queries to mean anything. */
#define MIN_SAMPLE 500u

typedef struct access_shape {
    uint32_t k, l;
    uint32_t B, b;       /* 0, 0: plain, sized by slice_bits           */
    uint64_t size;       /* plain: slice bits; blocked: window         */
} access_shape;

static const access_shape SHAPES[] = {
    {4, 3, 0, 0, UINT64_C(1) << 17},
    {7, 5, 0, 0, UINT64_C(1) << 17},
    {10, 7, 0, 0, UINT64_C(1) << 17},
    {12, 14, 0, 0, UINT64_C(1) << 17},
    /* Blocked: about 2^18 bits per slice (512 blocks of a cache line or
     * 4096 words). */
    {2, 3, 512, 8, 3 * 11000},
    {3, 5, 64, 4, 5 * 14000},
    {2, 5, 512, 4, 5 * 22000},
};
#define SHAPE_COUNT (sizeof SHAPES / sizeof SHAPES[0])

/* Running sums of one kind of query's access counts. */
typedef struct sample {
    uint64_t n;
    double sum, sum_squares;
} sample;

static void sample_add(sample *s, uint32_t accesses) {
    s->n++;
    s->sum += accesses;
    s->sum_squares += (double)accesses * accesses;
}

static double sample_mean(const sample *s) {
    return s->sum / (double)s->n;
}

/* The standard error of the mean (0 when it cannot be computed). */
static double sample_se(const sample *s) {
    double mean, variance;
    if (s->n < 2)
        return 0;
    mean = sample_mean(s);
    variance = (s->sum_squares - (double)s->n * mean * mean) / (double)(s->n - 1);
    return variance > 0 ? sqrt(variance / (double)s->n) : 0;
}

static ebb_apbf_params shape_params(const access_shape *s) {
    ebb_apbf_params p;
    if (s->B == 0)
        assert_int_equal(ebb_apbf_params_from_klm(s->k, s->l, s->size, &p),
                         EBB_OK);
    else
        assert_int_equal(ebb_apbf_params_from_kl_blocked(s->k, s->l, s->size,
                                                         s->B, s->b, &p),
                         EBB_OK);
    return p;
}

typedef struct measured {
    sample false_query, false_positive, window_item;
} measured;

static void query_window(const ebb_apbf *filter, unsigned id,
                         const ebb_apbf_params *p, sample *out) {
    uint64_t total = fp_worst_moment_insertions(p), i;
    for (i = total - p->window; i < total; i++) {
        support_key key = fp_inserted_key(id, i);
        uint32_t accesses = 0;
        bool found = ebb_apbf_contains_counted(
            filter, ebb_apbf_hash(filter, key.bytes, sizeof key.bytes),
            &accesses);
        CHECK(found, "(k=%u, l=%u, B=%u, b=%u): window item %llu missing",
              p->k, p->l, p->block_bits, p->block_hashes,
              (unsigned long long)i);
        sample_add(out, accesses);
    }
}

static void query_fresh(const ebb_apbf *filter, unsigned id, uint64_t queries,
                        measured *out) {
    uint64_t i;
    for (i = 0; i < queries; i++) {
        support_key key = fp_fresh_key(id, i);
        uint32_t accesses = 0;
        bool found = ebb_apbf_contains_counted(
            filter, ebb_apbf_hash(filter, key.bytes, sizeof key.bytes),
            &accesses);
        if (found)
            sample_add(&out->false_positive, accesses);
        else if (i < FALSE_QUERY_SAMPLE)
            sample_add(&out->false_query, accesses);
    }
}

static measured measure(const ebb_apbf_params *p, double fp, uint64_t seed) {
    measured m = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    uint64_t queries =
        (uint64_t)ceil(fmax(MIN_FRESH_QUERIES, FALSE_POSITIVES_WANTED / fp) /
                       FILTERS);
    unsigned f;
    for (f = 0; f < FILTERS; f++) {
        ebb_apbf *filter = NULL;
        assert_int_equal(ebb_apbf_create(p, seed + f, &filter), EBB_OK);
        fp_fill_to_worst_moment(filter, f);
        query_window(filter, f, p, &m.window_item);
        query_fresh(filter, f, queries, &m);
        ebb_apbf_destroy(filter);
    }
    return m;
}

static measured results[SHAPE_COUNT];
static bool results_done[SHAPE_COUNT];

/* Measures shape i once; both tests use the numbers. */
static const measured *measure_shape(size_t i) {
    if (!results_done[i]) {
        ebb_apbf_params p = shape_params(&SHAPES[i]);
        results[i] = measure(&p, ebb_apbf_shape_fp(&p), 5000 + 100 * i);
        results_done[i] = true;
    }
    return &results[i];
}

/* Prints one comparison and returns whether it holds. */
static bool compare(const ebb_apbf_params *p, const char *what,
                    const sample *s, double expected) {
    double mean = sample_mean(s), se = sample_se(s);
    double relative = (mean - expected) / expected;
    double z = se > 0 ? (mean - expected) / se : 0;
    bool ok = s->n >= MIN_SAMPLE && fabs(relative) <= RELATIVE_BOUND &&
              (se == 0 || fabs(z) <= Z_BOUND);
    print_message("%3u %3u %4u %2u %-15s %9llu %8.4f %8.4f %7.4f %+7.2f%% "
                  "%+6.2f %s\n",
                  p->k, p->l, p->block_bits, p->block_hashes, what,
                  (unsigned long long)s->n, mean, expected, se,
                  100 * relative, z, ok ? "" : "  <-- FAILS");
    if (!ok)
        print_error("(k=%u, l=%u, B=%u, b=%u) %s: measured mean %.4f over "
                    "%llu queries (se %.4f), expected %.4f: %+.2f%%, z = "
                    "%.2f (bounds: %.0f%%, %.0f se, >= %u queries)\n",
                    p->k, p->l, p->block_bits, p->block_hashes, what, mean,
                    (unsigned long long)s->n, se, expected, 100 * relative,
                    z, 100 * RELATIVE_BOUND, Z_BOUND, MIN_SAMPLE);
    return ok;
}

static void measured_accesses_match_the_analytics(void **state) {
    static double ratios[MAX_SLICES];
    bool all_ok = true;
    size_t i;
    (void)state;
    print_message("  k   l    B  b query               n     mean expected"
                  "      se    diff      z\n");
    for (i = 0; i < SHAPE_COUNT; i++) {
        ebb_apbf_params p = shape_params(&SHAPES[i]);
        ebb_apbf_accesses expected;
        const measured *m;
        assert_int_equal(ebb_apbf_shape_ratios(&p, ratios), EBB_OK);
        assert_int_equal(ebb_apbf_expected_accesses(p.k, p.l, ratios,
                                                    &expected),
                         EBB_OK);
        m = measure_shape(i);
        all_ok &= compare(&p, "false query", &m->false_query,
                          expected.false_query);
        all_ok &= compare(&p, "false positive", &m->false_positive,
                          expected.false_positive);
        all_ok &= compare(&p, "window item", &m->window_item,
                          expected.window_item);
    }
    assert_true(all_ok);
}

/* The bounds can tell shapes apart: the window-item reads of (2, 5, 512, 4)
 * reject the analytics of (2, 4, 512, 4), which differ by about half a
 * block, by far more than 3 standard errors. */
static void comparison_has_power(void **state) {
    static double ratios[MAX_SLICES];
    const measured *m = measure_shape(SHAPE_COUNT - 1);
    ebb_apbf_params other;
    ebb_apbf_accesses wrong;
    double z;
    (void)state;
    assert_int_equal(SHAPES[SHAPE_COUNT - 1].k, 2);
    assert_int_equal(SHAPES[SHAPE_COUNT - 1].l, 5);
    assert_int_equal(ebb_apbf_params_from_kl_blocked(2, 4, 4 * 22000, 512, 4,
                                                     &other),
                     EBB_OK);
    assert_int_equal(ebb_apbf_shape_ratios(&other, ratios), EBB_OK);
    assert_int_equal(ebb_apbf_expected_accesses(2, 4, ratios, &wrong), EBB_OK);
    z = (sample_mean(&m->window_item) - wrong.window_item) /
        sample_se(&m->window_item);
    print_message("(2, 5, 512, 4) window item: measured %.4f, the analytics "
                  "of (2, 4) %.4f, z = %.1f\n",
                  sample_mean(&m->window_item), wrong.window_item, z);
    CHECK(fabs(z) > 10 * Z_BOUND,
          "the (2, 4) analytics %.4f are not rejected by the measured %.4f "
          "(z = %.1f)",
          wrong.window_item, sample_mean(&m->window_item), z);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_accesses_match_the_analytics),
        cmocka_unit_test(comparison_has_power),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
