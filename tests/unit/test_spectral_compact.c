/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_spectral_compact.c: the spectral filter on compact counters (issue
 * 15; src/spectral/store.h): every operation answers as on the fixed-width
 * cells of the same params.
 *
 * Each test runs a fixed filter and a compact one (gamma, delta, steps)
 * side by side on the same random stream (fixed seeds) and, after every
 * batch of operations, checks that each call returned the same status,
 * that every estimate, every counter of both parts, the marker, the
 * fingerprint table and every statistic but memory_bytes are equal.
 * Streams: adds (r up to 3, and some above the maximum so counters
 * saturate), removals (refused ones included), MI's unsafe removals,
 * batches; then union (plain and partitioned, src = dest too), join,
 * range trees, iceberg and aggregates. Snapshots of compact filters
 * round-trip. Allocation failure during a counter's growth (a rebuild of
 * the index) and during union leaves the filter as it was, answers and
 * statistics included, and the same call succeeds once memory is back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/rng.h"
#include "spectral/store.h"
#include "support.h"

static const ebb_spectral_storage COMPACT[] = {
    EBB_SPECTRAL_COMPACT_GAMMA, EBB_SPECTRAL_COMPACT_DELTA,
    EBB_SPECTRAL_COMPACT_STEPS};
#define COMPACTS (sizeof COMPACT / sizeof COMPACT[0])

#define KEYS 400u

typedef struct shape {
    ebb_spectral_method method;
    ebb_spectral_marker marker;
    uint64_t counters;
    uint32_t bits;
    uint64_t range;
} shape;

static ebb_spectral_params params_of(const shape *s,
                                     ebb_spectral_storage storage)
{
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_params_init(s->counters, s->bits, 4,
                                              s->method, &p),
                     EBB_OK);
    if (s->method == EBB_SPECTRAL_RM) {
        p.marker = s->marker;
        p.marker_size = s->marker == EBB_SPECTRAL_MARKER_NONE ? 0
                        : s->marker == EBB_SPECTRAL_MARKER_EXACT
                            ? 2u * KEYS
                            : 4u * KEYS;
    }
    p.range = s->range;
    p.seed = 17;
    p.storage = storage;
    assert_int_equal(ebb_spectral_params_check(&p), EBB_OK);
    return p;
}

static ebb_spectral *make(const shape *s, ebb_spectral_storage storage)
{
    ebb_spectral_params p = params_of(s, storage);
    ebb_spectral *f;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    return f;
}

static ebb_hash128 key_hash(const ebb_spectral *f, uint64_t i)
{
    support_key k = support_key_make(KEYS_INSERTED, i);
    return ebb_spectral_hash(f, k.bytes, sizeof k.bytes);
}

static void stats_equal(const ebb_spectral *a, const ebb_spectral *b)
{
    ebb_spectral_stats x, y;
    ebb_spectral_get_stats(a, &x);
    ebb_spectral_get_stats(b, &y);
    assert_int_equal(x.added, y.added);
    assert_int_equal(x.removed, y.removed);
    assert_int_equal(x.refused_removals, y.refused_removals);
    assert_int_equal(x.saturations, y.saturations);
    assert_int_equal(x.nonzero, y.nonzero);
    assert_int_equal(x.moved, y.moved);
    assert_int_equal(x.moves_refused, y.moves_refused);
    assert_int_equal(a->net, b->net);
    assert_int_equal(a->fingerprints_used, b->fingerprints_used);
}

/* Every counter, marker bit, fingerprint, statistic and estimate. */
static void same_filter(const ebb_spectral *fixed, const ebb_spectral *c)
{
    for (unsigned part = 0; part < 2; part++) {
        uint64_t n = spectral_store_count(fixed, (spectral_part)part);
        assert_int_equal(n, spectral_store_count(c, (spectral_part)part));
        for (uint64_t i = 0; i < n; i++)
            CHECK(spectral_store_get(fixed, (spectral_part)part, i) ==
                      spectral_store_get(c, (spectral_part)part, i),
                  "part %u counter %llu", part, (unsigned long long)i);
    }
    if (fixed->marker.words != NULL)
        assert_memory_equal(fixed->marker.words, c->marker.words,
                            ebb_cells_bytes(&fixed->marker));
    if (fixed->fingerprints != NULL)
        assert_memory_equal(fixed->fingerprints, c->fingerprints,
                            fixed->params.marker_size * 8u);
    stats_equal(fixed, c);
    for (uint64_t i = 0; i < KEYS + 50u; i++)
        assert_int_equal(ebb_spectral_estimate_hash(fixed, key_hash(fixed, i)),
                         ebb_spectral_estimate_hash(c, key_hash(c, i)));
}

/* One random operation on both filters; the statuses must agree. */
static void step(ebb_spectral *f, ebb_spectral *c, ebb_rng *rng)
{
    uint64_t key = ebb_rng_below(rng, KEYS);
    ebb_hash128 h = key_hash(f, key);
    uint64_t dice = ebb_rng_below(rng, 100);
    uint64_t r = 1u + ebb_rng_below(rng, 3);
    if (dice == 0)
        r = (uint64_t)f->primary.max + 5u; /* saturates */
    ebb_status a, b;
    if (dice < 60) {
        a = ebb_spectral_add_hash(f, h, r);
        b = ebb_spectral_add_hash(c, h, r);
    } else if (dice < 90) {
        a = ebb_spectral_remove_hash(f, h, r);
        b = ebb_spectral_remove_hash(c, h, r);
    } else {
        a = ebb_spectral_remove_unsafe(f, h, r);
        b = ebb_spectral_remove_unsafe(c, h, r);
    }
    assert_int_equal(a, b);
}

static void run_stream(const shape *s, uint64_t seed, unsigned ops)
{
    for (size_t j = 0; j < COMPACTS; j++) {
        ebb_spectral *f = make(s, EBB_SPECTRAL_FIXED);
        ebb_spectral *c = make(s, COMPACT[j]);
        ebb_rng rng;
        ebb_rng_seed(&rng, seed);
        for (unsigned i = 0; i < ops; i++) {
            step(f, c, &rng);
            if (i % 500 == 499)
                same_filter(f, c);
        }
        /* batches: the same as single calls */
        ebb_hash128 h[64];
        uint64_t counts[64], ef[64], ec[64];
        for (unsigned i = 0; i < 64; i++) {
            h[i] = key_hash(f, ebb_rng_below(&rng, KEYS));
            counts[i] = 1u + ebb_rng_below(&rng, 4);
        }
        assert_int_equal(ebb_spectral_add_batch(f, h, counts, 64), EBB_OK);
        assert_int_equal(ebb_spectral_add_batch(c, h, counts, 64), EBB_OK);
        ebb_spectral_estimate_batch(f, h, 64, ef);
        ebb_spectral_estimate_batch(c, h, 64, ec);
        assert_memory_equal(ef, ec, sizeof ef);
        same_filter(f, c);
        ebb_spectral_stats st;
        ebb_spectral_get_stats(f, &st);
        assert_true(st.saturations > 0); /* the stream did saturate */
        ebb_spectral_clear(f);
        ebb_spectral_clear(c);
        same_filter(f, c);
        ebb_spectral_destroy(f);
        ebb_spectral_destroy(c);
    }
}

static const shape MS = {EBB_SPECTRAL_MS, EBB_SPECTRAL_MARKER_EXACT, 600, 6, 0};
static const shape MI = {EBB_SPECTRAL_MI, EBB_SPECTRAL_MARKER_EXACT, 600, 6, 0};
static const shape RM = {EBB_SPECTRAL_RM, EBB_SPECTRAL_MARKER_EXACT, 700, 6, 0};
static const shape RM_BLOOM = {EBB_SPECTRAL_RM, EBB_SPECTRAL_MARKER_BLOOM,
                               700, 6, 0};
static const shape MS_WIDE = {EBB_SPECTRAL_MS, EBB_SPECTRAL_MARKER_EXACT,
                              300, 32, 0};

static void test_stream_ms(void **state)
{
    (void)state;
    run_stream(&MS, 1, 6000);
    run_stream(&MS_WIDE, 2, 3000);
}

static void test_stream_mi(void **state)
{
    (void)state;
    run_stream(&MI, 3, 6000);
}

static void test_stream_rm(void **state)
{
    (void)state;
    run_stream(&RM, 4, 6000);
    run_stream(&RM_BLOOM, 5, 4000);
}

/* Fills both filters of a pair with the same random adds. */
static void fill(ebb_spectral *f, ebb_spectral *c, uint64_t seed,
                 unsigned adds)
{
    ebb_rng rng;
    ebb_rng_seed(&rng, seed);
    for (unsigned i = 0; i < adds; i++) {
        ebb_hash128 h = key_hash(f, ebb_rng_below(&rng, KEYS));
        uint64_t r = 1u + ebb_rng_below(&rng, 3);
        assert_int_equal(ebb_spectral_add_hash(f, h, r), EBB_OK);
        assert_int_equal(ebb_spectral_add_hash(c, h, r), EBB_OK);
    }
}

static void test_merge_join(void **state)
{
    (void)state;
    const shape *shapes[] = {&MS, &MI, &RM};
    for (size_t s = 0; s < 3; s++) {
        for (size_t j = 0; j < COMPACTS; j++) {
            ebb_spectral *f1 = make(shapes[s], EBB_SPECTRAL_FIXED);
            ebb_spectral *c1 = make(shapes[s], COMPACT[j]);
            ebb_spectral *f2 = make(shapes[s], EBB_SPECTRAL_FIXED);
            ebb_spectral *c2 = make(shapes[s], COMPACT[j]);
            fill(f1, c1, 10 + s, 800);
            fill(f2, c2, 20 + s, 800);
            /* storages differ: incompatible */
            assert_int_equal(ebb_spectral_merge(f1, c2, 1, 0), EBB_EINVAL);
            assert_int_equal(ebb_spectral_merge(f1, f2, 2, 0),
                             ebb_spectral_merge(c1, c2, 2, 0));
            same_filter(f1, c1);
            assert_int_equal(
                ebb_spectral_merge(f1, f2, 1, EBB_SPECTRAL_MERGE_PARTITIONED),
                ebb_spectral_merge(c1, c2, 1, EBB_SPECTRAL_MERGE_PARTITIONED));
            same_filter(f1, c1);
            assert_int_equal(ebb_spectral_merge(f1, f1, 1, 0),
                             ebb_spectral_merge(c1, c1, 1, 0));
            same_filter(f1, c1);
            assert_int_equal(ebb_spectral_join(f2, f1),
                             ebb_spectral_join(c2, c1));
            same_filter(f2, c2);
            assert_int_equal(ebb_spectral_join(f2, f2),
                             ebb_spectral_join(c2, c2));
            same_filter(f2, c2);
            ebb_spectral_destroy(f1);
            ebb_spectral_destroy(c1);
            ebb_spectral_destroy(f2);
            ebb_spectral_destroy(c2);
        }
    }
}

static void test_range_iceberg_aggregate(void **state)
{
    (void)state;
    /* 16 bits: the root's count (~4500) does not saturate, so the
     * aggregates are numbers (a saturated counter makes them NaN) */
    shape ranged = {EBB_SPECTRAL_MS, EBB_SPECTRAL_MARKER_EXACT, 4000, 16,
                    1000};
    shape ranged_rm = {EBB_SPECTRAL_RM, EBB_SPECTRAL_MARKER_EXACT, 4000, 16,
                       1000};
    const shape *shapes[] = {&ranged, &ranged_rm};
    for (size_t s = 0; s < 2; s++) {
        for (size_t j = 0; j < COMPACTS; j++) {
            ebb_spectral *f = make(shapes[s], EBB_SPECTRAL_FIXED);
            ebb_spectral *c = make(shapes[s], COMPACT[j]);
            ebb_rng rng;
            ebb_rng_seed(&rng, 30 + s);
            for (unsigned i = 0; i < 3000; i++) {
                uint64_t x = ebb_rng_below(&rng, 1000);
                uint64_t r = 1u + ebb_rng_below(&rng, 2);
                bool removal = ebb_rng_below(&rng, 4) == 0;
                ebb_status a = removal ? ebb_spectral_remove_int(f, x, r)
                                       : ebb_spectral_add_int(f, x, r);
                ebb_status b = removal ? ebb_spectral_remove_int(c, x, r)
                                       : ebb_spectral_add_int(c, x, r);
                assert_int_equal(a, b);
            }
            same_filter(f, c);
            for (unsigned i = 0; i < 300; i++) {
                uint64_t lo = ebb_rng_below(&rng, 1000);
                uint64_t hi = lo + ebb_rng_below(&rng, 1000 - lo);
                uint64_t a, b;
                assert_int_equal(ebb_spectral_range_count(f, lo, hi, &a),
                                 EBB_OK);
                assert_int_equal(ebb_spectral_range_count(c, lo, hi, &b),
                                 EBB_OK);
                assert_int_equal(a, b);
                assert_int_equal(ebb_spectral_estimate_int(f, lo, &a), EBB_OK);
                assert_int_equal(ebb_spectral_estimate_int(c, lo, &b), EBB_OK);
                assert_int_equal(a, b);
            }
            ebb_hash128 h[KEYS];
            bool hf[KEYS], hc[KEYS];
            for (unsigned i = 0; i < KEYS; i++)
                h[i] = spectral_range_item_hash(f, i);
            size_t nf = ebb_spectral_iceberg(f, h, KEYS, 6, hf);
            assert_int_equal(nf, ebb_spectral_iceberg(c, h, KEYS, 6, hc));
            assert_true(nf > 0 && nf < KEYS);
            assert_memory_equal(hf, hc, sizeof hf);
            ebb_spectral_aggregate af, ac;
            assert_int_equal(ebb_spectral_aggregate_keys(f, h, KEYS, 2, &af),
                             EBB_OK);
            assert_int_equal(ebb_spectral_aggregate_keys(c, h, KEYS, 2, &ac),
                             EBB_OK);
            assert_true(af.sum == ac.sum && af.mean == ac.mean &&
                        af.sum_estimates == ac.sum_estimates); /* not NaN */
            /* the streaming watch */
            ebb_spectral_watch *wf, *wc;
            assert_int_equal(ebb_spectral_watch_create(12, 0, &wf), EBB_OK);
            assert_int_equal(ebb_spectral_watch_create(12, 0, &wc), EBB_OK);
            for (unsigned i = 0; i < 2000; i++) {
                ebb_hash128 k = h[ebb_rng_below(&rng, KEYS)];
                bool rf, rc;
                assert_int_equal(ebb_spectral_watch_add(f, wf, k, 1, &rf),
                                 EBB_OK);
                assert_int_equal(ebb_spectral_watch_add(c, wc, k, 1, &rc),
                                 EBB_OK);
                assert_int_equal(rf, rc);
            }
            assert_int_equal(ebb_spectral_watch_count(wf),
                             ebb_spectral_watch_count(wc));
            same_filter(f, c);
            ebb_spectral_watch_destroy(wf);
            ebb_spectral_watch_destroy(wc);
            ebb_spectral_destroy(f);
            ebb_spectral_destroy(c);
        }
    }
}

static void test_params_memory(void **state)
{
    (void)state;
    ebb_spectral_params p = params_of(&RM, EBB_SPECTRAL_FIXED);
    ebb_spectral_params q = p;
    q.storage = (ebb_spectral_storage)4;
    assert_int_equal(ebb_spectral_params_check(&q), EBB_EINVAL);
    q = params_of(&RM, EBB_SPECTRAL_COMPACT_GAMMA);
    q.trap_slots = 10; /* trapping RM: fixed cells only */
    assert_int_equal(ebb_spectral_params_check(&q), EBB_EINVAL);
    p.trap_slots = 10;
    assert_int_equal(ebb_spectral_params_check(&p), EBB_OK);
    assert_int_equal(ebb_spectral_params_init(100, 8, 3, EBB_SPECTRAL_MS, &p),
                     EBB_OK);
    assert_int_equal(p.storage, EBB_SPECTRAL_FIXED);
    const uint64_t sizes[] = {1, 255, 256, 257, 5000, 100003};
    for (size_t s = 0; s < 6; s++) {
        for (size_t j = 0; j < COMPACTS; j++) {
            shape sh = {EBB_SPECTRAL_MS, EBB_SPECTRAL_MARKER_EXACT, sizes[s],
                        16, 0};
            ebb_spectral *c = make(&sh, COMPACT[j]);
            assert_int_equal(ebb_spectral_memory_for(&c->params),
                             ebb_spectral_memory(c));
            ebb_spectral_destroy(c);
        }
    }
}

static void test_snapshot(void **state)
{
    (void)state;
    const shape *shapes[] = {&MS, &RM, &RM_BLOOM};
    for (size_t s = 0; s < 3; s++) {
        for (size_t j = 0; j < COMPACTS; j++) {
            ebb_spectral *f = make(shapes[s], EBB_SPECTRAL_FIXED);
            ebb_spectral *c = make(shapes[s], COMPACT[j]);
            ebb_spectral *empty = make(shapes[s], COMPACT[j]);
            fill(f, c, 40 + s, 1500);
            ebb_spectral *sources[] = {c, empty};
            for (size_t e = 0; e < 2; e++) {
                size_t size = ebb_spectral_snapshot_size(sources[e]);
                support_snap snap = support_snap_alloc(size);
                size_t written;
                assert_int_equal(ebb_spectral_save(sources[e], snap.bytes,
                                                   size, &written),
                                 EBB_OK);
                assert_int_equal(written, size);
                ebb_spectral *back;
                assert_int_equal(ebb_spectral_load(snap.bytes, size, &back),
                                 EBB_OK);
                assert_int_equal(back->params.storage, COMPACT[j]);
                same_filter(sources[e], back);
                if (e == 0)
                    same_filter(f, back);
                support_snap again = support_snap_alloc(size);
                assert_int_equal(ebb_spectral_save(back, again.bytes, size,
                                                   &written),
                                 EBB_OK);
                assert_memory_equal(snap.bytes, again.bytes, size);
                /* cut short: refused */
                assert_int_not_equal(
                    ebb_spectral_load(snap.bytes, size - 8, &back), EBB_OK);
                ebb_spectral_destroy(back);
                support_snap_free(&again);
                support_snap_free(&snap);
            }
            ebb_spectral_destroy(f);
            ebb_spectral_destroy(c);
            ebb_spectral_destroy(empty);
        }
    }
}

/* Adds with every next allocation failing: each add either succeeds
 * without allocating or fails with EBB_ENOMEM leaving the filter as the
 * fixed twin (which has not had that add) is; then it is retried with
 * memory back. Some adds must have failed (the index rebuilt). Every
 * other add is ebb_spectral_add_estimate_hash, whose estimate must be the
 * filter's next estimate, or on EBB_ENOMEM the unchanged filter's. */
static void test_alloc_failure(void **state)
{
    (void)state;
    const shape *shapes[] = {&MS, &MI, &RM, &RM_BLOOM};
    for (size_t s = 0; s < 4; s++) {
        for (size_t j = 0; j < COMPACTS; j++) {
            shape sh = *shapes[s];
            sh.counters = 300; /* two blocks: the last one fills first */
            sh.bits = 32;
            ebb_spectral *f = make(&sh, EBB_SPECTRAL_FIXED);
            ebb_spectral *c = make(&sh, COMPACT[j]);
            ebb_rng rng;
            ebb_rng_seed(&rng, 50 + s);
            unsigned failed = 0, failed_estimating = 0;
            for (unsigned i = 0; i < 1500; i++) {
                ebb_hash128 h = key_hash(f, ebb_rng_below(&rng, KEYS));
                uint64_t r = 1u + ebb_rng_below(&rng, 1000);
                bool estimating = i % 2 == 1;
                uint64_t estimate = UINT64_MAX;
                support_alloc_fail_nth(1, true);
                ebb_status st =
                    estimating
                        ? ebb_spectral_add_estimate_hash(c, h, r, &estimate)
                        : ebb_spectral_add_hash(c, h, r);
                support_alloc_fail_nth(0, false);
                if (st == EBB_ENOMEM) {
                    failed++;
                    same_filter(f, c);
                    if (estimating) {
                        failed_estimating++;
                        CHECK(estimate == ebb_spectral_estimate_hash(f, h),
                              "add %u: a refused add's estimate is not the "
                              "unchanged filter's", i);
                    }
                    st = ebb_spectral_add_hash(c, h, r);
                } else if (estimating) {
                    CHECK(estimate == ebb_spectral_estimate_hash(c, h),
                          "add %u: the estimate is not the next one", i);
                }
                assert_int_equal(st, EBB_OK);
                assert_int_equal(ebb_spectral_add_hash(f, h, r), EBB_OK);
            }
            same_filter(f, c);
            CHECK(failed > 0, "shape %zu code %zu: no growth failed", s, j);
            CHECK(failed_estimating > 0,
                  "shape %zu code %zu: no add_estimate_hash failed", s, j);
            /* union and join: the new arrays cannot be had */
            ebb_spectral *c2 = make(&sh, COMPACT[j]);
            for (unsigned i = 0; i < 100; i++)
                assert_int_equal(
                    ebb_spectral_add_hash(c2, key_hash(c2, i), 1), EBB_OK);
            support_alloc_fail_nth(1, true);
            assert_int_equal(ebb_spectral_merge(c, c2, 1, 0), EBB_ENOMEM);
            assert_int_equal(ebb_spectral_join(c, c2), EBB_ENOMEM);
            support_alloc_fail_nth(0, false);
            same_filter(f, c);
            ebb_spectral_destroy(f);
            ebb_spectral_destroy(c);
            ebb_spectral_destroy(c2);
        }
    }
}

/* add_int on compact storage: all L + 1 keys or none. */
static void test_alloc_failure_range(void **state)
{
    (void)state;
    shape sh = {EBB_SPECTRAL_MS, EBB_SPECTRAL_MARKER_EXACT, 300, 32, 1024};
    for (size_t j = 0; j < COMPACTS; j++) {
        ebb_spectral *f = make(&sh, EBB_SPECTRAL_FIXED);
        ebb_spectral *c = make(&sh, COMPACT[j]);
        ebb_rng rng;
        ebb_rng_seed(&rng, 70);
        unsigned failed = 0;
        for (unsigned i = 0; i < 600; i++) {
            uint64_t x = ebb_rng_below(&rng, 1024);
            uint64_t r = 1u + ebb_rng_below(&rng, 1000);
            support_alloc_fail_nth(1, true);
            ebb_status st = ebb_spectral_add_int(c, x, r);
            support_alloc_fail_nth(0, false);
            if (st == EBB_ENOMEM) {
                failed++;
                same_filter(f, c);
                st = ebb_spectral_add_int(c, x, r);
            }
            assert_int_equal(st, EBB_OK);
            assert_int_equal(ebb_spectral_add_int(f, x, r), EBB_OK);
        }
        same_filter(f, c);
        CHECK(failed > 0, "code %zu: no growth failed", j);
        ebb_spectral_destroy(f);
        ebb_spectral_destroy(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SUPPORT_TEST(test_params_memory, support_setup_counting),
        SUPPORT_TEST(test_stream_ms, support_setup_counting),
        SUPPORT_TEST(test_stream_mi, support_setup_counting),
        SUPPORT_TEST(test_stream_rm, support_setup_counting),
        SUPPORT_TEST(test_merge_join, support_setup_counting),
        SUPPORT_TEST(test_range_iceberg_aggregate, support_setup_counting),
        SUPPORT_TEST(test_snapshot, support_setup_counting_unzeroed),
        SUPPORT_TEST(test_alloc_failure, support_setup_counting),
        SUPPORT_TEST(test_alloc_failure_range, support_setup_counting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
