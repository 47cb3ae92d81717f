/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_paths.c: the ring's one-call forms against the scalar code they
 * stand for. Where the build has AVX-512 (make test's native run, make
 * bench) a plain add with k <= 16 locates its slices eight at a time, and a
 * one-call query reads every slice at once (slices in at most 8 MiB) or
 * walks on slices located eight at a time (more); elsewhere all of them are
 * the scalar code and these checks hold trivially.
 *
 *   - the add sets exactly the bits of the scalar locate (ebb_apbf_locate,
 *     ebb_apbf_probe_set): a twin filter written by those functions ends in
 *     the same snapshot bytes, shifts included; so does the batch add, with
 *     its prefetching lookahead at the large size (k newest slices of more
 *     than 2 MiB);
 *   - the one-call check-and-add (which past 8 MiB reuses its query's
 *     located slices for the add) answers as the counting walk before the
 *     scalar add, and leaves the same snapshot;
 *   - ebb_apbf_contains gives the walk's answer (ebb_apbf_contains_counted
 *     with a read count, which always walks with the scalar locate) for the
 *     window's keys, the slack's (runs cut short) and fresh keys;
 *   - both at sizes below and above the query's 8 MiB switch
 *     (EBB_APBF_WIDE_QUERY_MAX_BYTES, asserted), for k below, at and above
 *     8 and 16, and k + l up to 100, with the batch add's prefetching
 *     lookahead asserted on at the large size;
 *   - the bit-sliced layout, whose k cells are located eight per vector,
 *     answers every check-and-add and query as the ring with residue
 *     hashing (scalar locate) at m of millions of cells, where a carry lost
 *     in the vector mul-high would move a cell.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "apbf/apbf_internal.h" /* the scalar locate, the twin's writes */
#include "apbf/wide.h"            /* the query's size switch */
#include "core/slice.h"           /* when the batch add prefetches */
#include "ebb/ebb.h"
#include "support.h"

#define GENERATION 1000u

/* (k, l) with m chosen for `bytes` of slices, g = GENERATION, so that a
 * stream of a few thousand keys shifts many times. */
static ebb_apbf_params shape(uint32_t k, uint32_t l, uint64_t bytes)
{
    ebb_apbf_params p;
    uint64_t m = bytes * 8u / (k + l);
    assert_int_equal(ebb_apbf_params_from_klm(k, l, m, &p), EBB_OK);
    assert_true(p.generation >= GENERATION);
    p.generation = GENERATION;
    p.window = (uint64_t)l * GENERATION;
    return p;
}

static ebb_hash128 key_hash(const ebb_apbf *f, uint32_t stream, uint64_t i)
{
    support_key key = support_key_make(stream, i);
    return ebb_apbf_hash(f, key.bytes, sizeof key.bytes);
}

/* The key added at step i: every fourth step repeats the key of half a
 * window back, so that the dedup step answers both ways. */
static uint64_t added_index(uint64_t i, uint64_t window)
{
    return i % 4u == 3u && i > window ? i - window / 2u : i;
}

/* An add written with the scalar locate, as add_on's plain path. */
static void scalar_add(ebb_apbf *f, ebb_hash128 h)
{
    if (f->in_generation == f->generation)
        ebb_apbf_shift(f);
    for (uint32_t i = 0; i < f->k; i++) {
        ebb_slice_probe probe;
        ebb_apbf_locate(f, h, ebb_apbf_position(f, i), EBB_APBF_PATH_PLAIN,
                        &probe);
        ebb_apbf_probe_set(f, &probe, EBB_APBF_PATH_PLAIN);
    }
    f->in_generation++;
    f->insertions++;
}

static unsigned char *snapshot_of(const ebb_apbf *f, size_t *size)
{
    *size = ebb_apbf_snapshot_size(f);
    unsigned char *buf = malloc(*size);
    assert_non_null(buf);
    assert_int_equal(ebb_apbf_save(f, buf, *size, NULL), EBB_OK);
    return buf;
}

/* Checks one shape at `bytes` of slices; returns whether the batch add
 * prefetched (its written slices past EBB_ADD_PREFETCH_MIN_BYTES). */
static bool check_shape(uint32_t k, uint32_t l, uint64_t bytes)
{
    ebb_apbf_params p = shape(k, l, bytes);
    ebb_apbf *f = NULL, *twin = NULL, *batched = NULL, *stepped = NULL;
    assert_int_equal(ebb_apbf_create(&p, 5, &f), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 5, &twin), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 5, &batched), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 5, &stepped), EBB_OK);
    assert_int_equal(f->path, EBB_APBF_PATH_PLAIN);
    assert_true(f->block_bytes >= bytes - 64u * (k + l));
#if defined(EBB_HAVE_X8)
    /* Each size is on its side of the query's switch. */
    assert_int_equal(f->block_bytes > EBB_APBF_WIDE_QUERY_MAX_BYTES,
                     bytes > EBB_APBF_WIDE_QUERY_MAX_BYTES);
#endif
    bool prefetched =
        ebb_add_prefetch_pays((uint64_t)k * f->slice_words * 8u);

    /* 2 (k + l) generations and a half: the buffer wraps twice and the
     * newest generation is part full. */
    uint64_t adds = 2u * (k + l) * GENERATION + GENERATION / 2u;
    ebb_hash128 *hashes = malloc(adds * sizeof *hashes);
    assert_non_null(hashes);
    uint64_t repeats_seen = 0;
    for (uint64_t i = 0; i < adds; i++) {
        uint64_t index = added_index(i, p.window);
        hashes[i] = key_hash(f, KEYS_INSERTED, index);
        ebb_apbf_add_hash(f, hashes[i]);
        /* The dedup step: the walk's answer before the scalar add, and the
         * same state after it. */
        uint32_t reads = 0;
        bool walked = ebb_apbf_contains_counted(twin, hashes[i], &reads);
        assert_int_equal(ebb_apbf_check_and_add_hash(stepped, hashes[i]),
                         walked);
        repeats_seen += walked && index != i;
        scalar_add(twin, hashes[i]);
    }
    assert_true(repeats_seen > 0);
    /* The batch add, in runs of assorted lengths (shorter and longer than
     * its lookahead of 16 keys, across shifts). */
    static const size_t runs[] = {1, 15, 16, 17, 256, 1000, 3};
    for (uint64_t done = 0, r = 0; done < adds; r++) {
        size_t n = runs[r % (sizeof runs / sizeof runs[0])];
        if (n > adds - done)
            n = (size_t)(adds - done);
        ebb_apbf_add_batch(batched, hashes + done, n);
        done += n;
    }
    free(hashes);
    size_t size_f, size_twin, size_batched;
    unsigned char *bytes_f = snapshot_of(f, &size_f);
    unsigned char *bytes_twin = snapshot_of(twin, &size_twin);
    unsigned char *bytes_batched = snapshot_of(batched, &size_batched);
    size_t size_stepped;
    unsigned char *bytes_stepped = snapshot_of(stepped, &size_stepped);
    assert_int_equal(size_f, size_stepped);
    assert_memory_equal(bytes_f, bytes_stepped, size_f);
    free(bytes_stepped);
    assert_int_equal(size_f, size_twin);
    assert_memory_equal(bytes_f, bytes_twin, size_f);
    assert_int_equal(size_f, size_batched);
    assert_memory_equal(bytes_f, bytes_batched, size_f);
    free(bytes_f);
    free(bytes_twin);
    free(bytes_batched);

    /* Every key still with a slice (window and slack), then as many fresh
     * keys: the query's answer is the walk's. */
    uint64_t held = (uint64_t)(k + l) * GENERATION;
    uint64_t present = 0, window_found = 0, fresh_found = 0;
    for (uint64_t i = adds - held; i < adds; i++) {
        ebb_hash128 h = key_hash(f, KEYS_INSERTED, added_index(i, p.window));
        uint32_t reads = 0;
        bool walked = ebb_apbf_contains_counted(f, h, &reads);
        assert_int_equal(ebb_apbf_contains_hash(f, h), walked);
        present += walked;
        window_found += i >= adds - p.window && walked;
    }
    for (uint64_t i = 0; i < held; i++) {
        ebb_hash128 h = key_hash(f, KEYS_FRESH, i);
        uint32_t reads = 0;
        bool walked = ebb_apbf_contains_counted(f, h, &reads);
        assert_int_equal(ebb_apbf_contains_hash(f, h), walked);
        fresh_found += walked;
    }
    /* The window is found whole (no false negative); of the slack's k
     * generations some are lost (each shift cuts their runs), so both
     * answers came up among the keys with a slice. */
    assert_int_equal(window_found, p.window);
    assert_true(present < held);
    /* Fresh keys are found at most at the shape's rate (below 1% for
     * these shapes at g = GENERATION): a query answering "present" to
     * everything fails here. */
    assert_true(fresh_found < held / 10u);
    ebb_apbf_destroy(f);
    ebb_apbf_destroy(twin);
    ebb_apbf_destroy(batched);
    ebb_apbf_destroy(stepped);
    return prefetched;
}

#define SMALL_BYTES (UINT64_C(256) << 10) /* the wide query           */
#define LARGE_BYTES (UINT64_C(9) << 20)   /* past the 8 MiB switch    */

static void small_filters(void **state)
{
    (void)state;
    (void)check_shape(7, 5, SMALL_BYTES);
    (void)check_shape(8, 8, SMALL_BYTES);
    (void)check_shape(10, 7, SMALL_BYTES);
    (void)check_shape(12, 88, SMALL_BYTES);
    (void)check_shape(16, 16, SMALL_BYTES);
    (void)check_shape(17, 3, SMALL_BYTES); /* k > 16: the scalar add */
    (void)check_shape(1, 1, SMALL_BYTES);
}

static void large_filters(void **state)
{
    (void)state;
    /* The batch add prefetches where its k slices exceed 2 MiB: here all
     * but (12, 88), whose 12 of 100 slices take about 1 MiB. */
    assert_true(check_shape(7, 5, LARGE_BYTES));
    assert_true(check_shape(9, 4, LARGE_BYTES)); /* 13 slices: two vectors */
    assert_true(check_shape(10, 7, LARGE_BYTES)); /* 17: not prefetched */
    assert_false(check_shape(12, 88, LARGE_BYTES));
    assert_true(check_shape(16, 16, LARGE_BYTES));
    assert_true(check_shape(2, 1, LARGE_BYTES));
}

/* A bit-sliced filter of m cells and the ring of the same (k, l, m, g) and
 * seed with residue hashing (the same hash function per slice, located by
 * the scalar code) give the same answer to every step of a stream: fresh
 * keys and repeats through check-and-add, then queries of the keys still
 * held and of fresh ones. */
static void check_sliced(uint32_t k, uint32_t l, uint64_t m)
{
    ebb_apbf_params p;
    assert_int_equal(ebb_apbf_params_from_klm(k, l, m, &p), EBB_OK);
    p.generation = GENERATION;
    p.window = (uint64_t)l * GENERATION;
    ebb_apbf *ring = NULL, *sliced = NULL;
    assert_int_equal(ebb_apbf_create(&p, 9, &ring), EBB_OK);
    ebb_apbf_set_residue_hashing(ring);
    p.layout = EBB_APBF_LAYOUT_SLICED;
    assert_int_equal(ebb_apbf_create(&p, 9, &sliced), EBB_OK);

    uint64_t adds = 2u * (k + l) * GENERATION + GENERATION / 2u;
    uint64_t seen = 0;
    for (uint64_t i = 0; i < adds; i++) {
        /* Every fourth step repeats a key from about a window back. */
        uint64_t index = i % 4u == 3u && i > p.window ? i - p.window / 2u : i;
        ebb_hash128 h = key_hash(ring, KEYS_INSERTED, index);
        bool ring_seen = ebb_apbf_contains_hash(ring, h);
        ebb_apbf_add_hash(ring, h);
        assert_int_equal(ebb_apbf_check_and_add_hash(sliced, h), ring_seen);
        seen += ring_seen;
    }
    uint64_t found = 0;
    for (uint64_t i = 0; i < adds; i++) {
        ebb_hash128 h = key_hash(ring, i % 2u ? KEYS_INSERTED : KEYS_FRESH, i);
        bool answer = ebb_apbf_contains_hash(ring, h);
        assert_int_equal(ebb_apbf_contains_hash(sliced, h), answer);
        found += answer;
    }
    /* Both answers occurred in both phases. */
    assert_true(seen > 0 && seen < adds);
    assert_true(found > 0 && found < adds);
    ebb_apbf_destroy(ring);
    ebb_apbf_destroy(sliced);
}

static void sliced_large_m(void **state)
{
    (void)state;
    check_sliced(7, 8, UINT64_C(3) << 21);    /* 16-bit cells, 6 Mi cells */
    check_sliced(13, 114, UINT64_C(1) << 20); /* 128-bit cells, 2 lanes */
    check_sliced(16, 16, (UINT64_C(1) << 21) + 12345);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_filters),
        cmocka_unit_test(large_filters),
        cmocka_unit_test(sliced_large_m),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
