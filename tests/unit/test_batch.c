/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_batch.c: the batch operations are exactly their one-at-a-time
 * sequences, for plain and blocked shapes.
 *
 *   - ebb_apbf_add_batch over batch sizes from 1 to 1000 (BATCH_SIZES), on
 *     filters whose generations are 5 to 100 insertions (so batches cross
 *     generation boundaries, start and end anywhere in a generation), leaves
 *     a snapshot byte-identical to one ebb_apbf_add_hash per key, after
 *     every batch;
 *   - ebb_apbf_contains_batch writes out[i] = contains_hash for every i and
 *     returns how many are true;
 *   - ebb_apbf_check_and_add_batch gives, for every key in order, contains
 *     then add: a key repeated inside one batch is seen by its second
 *     occurrence; the filter ends in the same state; seen may be NULL;
 *   - ebb_apbf_hash_batch equals ebb_apbf_hash (and ebb_hash with the
 *     filter's seed), empty keys included;
 *   - the fast paths (plain slices, B = 512 with b = 8) leave the same
 *     bits and answers as the general path, and filters of 128 to 135
 *     slices (around the batch query's slice table) answer as single calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apbf/apbf_internal.h" /* the path test hook: filter->path */
#include "ebb/ebb.h"
#include "support.h"

typedef struct shape {
    uint32_t k, l;
    uint64_t window;
    uint32_t B, b;
} shape;

/* Plain and blocked, generations of 5 to 100 insertions, one to many
 * blocks per slice, the B = 512, b = 8 fast path at four shapes, and
 * filters around the batch query's table size. */
static const shape SHAPES[] = {
    {4, 3, 3 * 16, 0, 0},   {7, 5, 5 * 37, 0, 0},     {1, 1, 5, 0, 0},
    {2, 3, 3 * 16, 512, 8}, {3, 5, 5 * 37, 64, 4},    {2, 5, 5 * 100, 512, 4},
    {1, 2, 2 * 23, 64, 1},  {5, 4, 4 * 60, 512, 2},   {6, 14, 14 * 20, 0, 0},
    {3, 14, 14 * 20, 512, 8},
    /* Slices around the batch query's table size (batch.c, 128): 128, 129,
     * 135 and 133. */
    {10, 118, 118 * 8, 0, 0}, {3, 126, 126 * 8, 512, 8},
    {10, 125, 125 * 8, 0, 0}, {3, 130, 130 * 8, 512, 8},
};
#define SHAPE_COUNT (sizeof SHAPES / sizeof SHAPES[0])

/* Around the walks in flight (48): below, at and above the size from which
 * the batch query builds its slice table, and a round more or less of new
 * queries left after the first flights. */
static const size_t BATCH_SIZES[] = {1,  3,  16, 17,  47,  48,
                                     95, 96, 97, 100, 144, 1000};
#define BATCH_SIZE_COUNT (sizeof BATCH_SIZES / sizeof BATCH_SIZES[0])

/* Keys per stream: many generations of every shape. */
#define STREAM 3000u

static ebb_apbf *make_filter(const shape *s, uint64_t seed) {
    ebb_apbf_params p;
    ebb_apbf *filter = NULL;
    assert_int_equal(ebb_apbf_params_from_kl_blocked(s->k, s->l, s->window,
                                                     s->B, s->b, &p),
                     EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, seed, &filter), EBB_OK);
    return filter;
}

static const char *describe(const shape *s) {
    static char text[80];
    snprintf(text, sizeof text, "k=%u l=%u w=%llu B=%u b=%u", s->k, s->l,
             (unsigned long long)s->window, s->B, s->b);
    return text;
}

static ebb_hash128 *stream_hashes(const ebb_apbf *filter, uint32_t stream,
                                  size_t count) {
    ebb_hash128 *hashes = malloc(count * sizeof *hashes);
    size_t i;
    assert_non_null(hashes);
    for (i = 0; i < count; i++) {
        support_key key = support_key_make(stream, i);
        hashes[i] = ebb_apbf_hash(filter, key.bytes, sizeof key.bytes);
    }
    return hashes;
}

static unsigned char *snapshot_of(const ebb_apbf *filter, size_t *size) {
    unsigned char *bytes;
    *size = ebb_apbf_snapshot_size(filter);
    bytes = malloc(*size);
    assert_non_null(bytes);
    assert_int_equal(ebb_apbf_save(filter, bytes, *size, NULL), EBB_OK);
    return bytes;
}

/* Byte-identical snapshots: same bits, counters and slice positions. */
static void expect_same_state(const ebb_apbf *reference,
                              const ebb_apbf *batched, const char *what,
                              size_t batch, size_t done) {
    size_t size_a, size_b;
    unsigned char *a = snapshot_of(reference, &size_a);
    unsigned char *b = snapshot_of(batched, &size_b);
    CHECK(size_a == size_b && memcmp(a, b, size_a) == 0,
          "%s, batches of %zu: state differs from one-at-a-time after %zu "
          "keys",
          what, batch, done);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------------ */
/* add_batch                                                                */
/* ------------------------------------------------------------------------ */

static void add_batch_run(const shape *s, size_t batch, uint64_t lead_in) {
    ebb_apbf *reference = make_filter(s, 11), *batched = make_filter(s, 11);
    ebb_hash128 *hashes = stream_hashes(reference, KEYS_INSERTED, STREAM);
    size_t done = 0, i;
    /* Start lead_in insertions into a generation. */
    for (i = 0; i < lead_in; i++) {
        support_key key = support_key_make(KEYS_OTHER, i);
        ebb_apbf_add(reference, key.bytes, sizeof key.bytes);
        ebb_apbf_add(batched, key.bytes, sizeof key.bytes);
    }
    ebb_apbf_add_batch(batched, hashes, 0);
    expect_same_state(reference, batched, describe(s), 0, 0);
    while (done < STREAM) {
        size_t n = STREAM - done < batch ? STREAM - done : batch;
        for (i = done; i < done + n; i++)
            ebb_apbf_add_hash(reference, hashes[i]);
        ebb_apbf_add_batch(batched, hashes + done, n);
        done += n;
        expect_same_state(reference, batched, describe(s), batch, done);
    }
    free(hashes);
    ebb_apbf_destroy(reference);
    ebb_apbf_destroy(batched);
}

static void add_batch_equals_one_at_a_time(void **state) {
    size_t s, b;
    (void)state;
    for (s = 0; s < SHAPE_COUNT; s++)
        for (b = 0; b < BATCH_SIZE_COUNT; b++) {
            add_batch_run(&SHAPES[s], BATCH_SIZES[b], 0);
            add_batch_run(&SHAPES[s], BATCH_SIZES[b], 5);
        }
}

/* ------------------------------------------------------------------------ */
/* contains_batch                                                           */
/* ------------------------------------------------------------------------ */

/* Window items, items just beyond the window, old items and fresh keys,
 * interleaved: both answers occur. */
static ebb_hash128 *query_mix(const ebb_apbf *filter, uint64_t window,
                              size_t count) {
    ebb_hash128 *hashes = malloc(count * sizeof *hashes);
    size_t i;
    assert_non_null(hashes);
    for (i = 0; i < count; i++) {
        uint64_t back = 1 + (i * 7) % (2 * window);
        support_key key = i % 3 == 2
                              ? support_key_make(KEYS_FRESH, i)
                              : support_key_make(KEYS_INSERTED, STREAM - back);
        hashes[i] = ebb_apbf_hash(filter, key.bytes, sizeof key.bytes);
    }
    return hashes;
}

static void contains_batch_run(const shape *s) {
    const size_t queries = 2000;
    ebb_apbf *filter = make_filter(s, 23);
    ebb_hash128 *inserted = stream_hashes(filter, KEYS_INSERTED, STREAM);
    ebb_hash128 *hashes;
    bool *expected = malloc(queries * sizeof *expected);
    bool *out = malloc(queries * sizeof *out);
    size_t b, i, present = 0;
    ebb_apbf_stats stats;
    assert_non_null(expected);
    assert_non_null(out);
    for (i = 0; i < STREAM; i++)
        ebb_apbf_add_hash(filter, inserted[i]);
    ebb_apbf_get_stats(filter, &stats);
    hashes = query_mix(filter, stats.params.window, queries);
    for (i = 0; i < queries; i++) {
        expected[i] = ebb_apbf_contains_hash(filter, hashes[i]);
        present += expected[i];
    }
    CHECK(present > 0 && present < queries,
          "%s: the queries must have both answers (%zu of %zu present)",
          describe(s), present, queries);
    assert_int_equal(ebb_apbf_contains_batch(filter, hashes, 0, out), 0);
    for (b = 0; b < BATCH_SIZE_COUNT; b++) {
        size_t done = 0;
        /* Every out[i] starts wrong, so an unwritten one shows. */
        for (i = 0; i < queries; i++)
            out[i] = !expected[i];
        while (done < queries) {
            size_t n = queries - done < BATCH_SIZES[b] ? queries - done
                                                       : BATCH_SIZES[b];
            size_t want = 0, got;
            for (i = done; i < done + n; i++)
                want += expected[i];
            got = ebb_apbf_contains_batch(filter, hashes + done, n,
                                          out + done);
            CHECK(got == want, "%s, batch of %zu at %zu: returned %zu, %zu "
                  "are present", describe(s), n, done, got, want);
            done += n;
        }
        for (i = 0; i < queries; i++)
            CHECK(out[i] == expected[i],
                  "%s, batches of %zu: out[%zu] = %d, contains_hash says %d",
                  describe(s), BATCH_SIZES[b], i, out[i], expected[i]);
    }
    free(inserted);
    free(hashes);
    free(expected);
    free(out);
    ebb_apbf_destroy(filter);
}

static void contains_batch_equals_one_at_a_time(void **state) {
    size_t s;
    (void)state;
    for (s = 0; s < SHAPE_COUNT; s++)
        contains_batch_run(&SHAPES[s]);
}

/* ------------------------------------------------------------------------ */
/* check_and_add_batch                                                      */
/* ------------------------------------------------------------------------ */

/* Key indices of a deduplication stream: new keys, repeats of one of the
 * previous 5 keys (often inside the same batch), repeats from about one
 * window back (at the edge of the window). */
static size_t *repeating_sequence(size_t count, uint64_t window) {
    size_t *sequence = malloc(count * sizeof *sequence);
    uint64_t rng = 99;
    size_t i, fresh = 0;
    assert_non_null(sequence);
    for (i = 0; i < count; i++) {
        uint64_t r = support_splitmix64(&rng);
        size_t choice = (size_t)(r % 6);
        if (choice <= 1 && i >= 5)
            sequence[i] = sequence[i - 1 - (size_t)((r >> 8) % 5)];
        else if (choice == 2 && i > window + 1)
            sequence[i] = sequence[i - window - 1 + (size_t)((r >> 8) % 3)];
        else
            sequence[i] = fresh++;
    }
    return sequence;
}

static void check_and_add_run(const shape *s, size_t batch) {
    ebb_apbf *reference = make_filter(s, 31), *batched = make_filter(s, 31);
    ebb_apbf *unreported = make_filter(s, 31);
    ebb_apbf_stats stats;
    ebb_hash128 *keys = stream_hashes(reference, KEYS_INSERTED, STREAM);
    ebb_hash128 *hashes = malloc(STREAM * sizeof *hashes);
    bool *expected = malloc(STREAM * sizeof *expected);
    bool *seen = malloc(STREAM * sizeof *seen);
    size_t *sequence, i, done = 0, seen_count = 0;
    assert_non_null(hashes);
    assert_non_null(expected);
    assert_non_null(seen);
    ebb_apbf_get_stats(reference, &stats);
    sequence = repeating_sequence(STREAM, stats.params.window);
    for (i = 0; i < STREAM; i++) {
        hashes[i] = keys[sequence[i]];
        expected[i] = ebb_apbf_contains_hash(reference, hashes[i]);
        ebb_apbf_add_hash(reference, hashes[i]);
        seen_count += expected[i];
        seen[i] = !expected[i];
    }
    CHECK(seen_count > STREAM / 4 && seen_count < STREAM,
          "%s: %zu of %u seen: the stream must repeat keys", describe(s),
          seen_count, STREAM);
    while (done < STREAM) {
        size_t n = STREAM - done < batch ? STREAM - done : batch;
        size_t want = 0, got;
        for (i = done; i < done + n; i++)
            want += expected[i];
        got = ebb_apbf_check_and_add_batch(batched, hashes + done, n,
                                           seen + done);
        CHECK(got == want, "%s, batch of %zu at %zu: returned %zu, want %zu",
              describe(s), n, done, got, want);
        got = ebb_apbf_check_and_add_batch(unreported, hashes + done, n,
                                           NULL);
        CHECK(got == want, "%s, batch of %zu at %zu (seen NULL): returned "
              "%zu, want %zu", describe(s), n, done, got, want);
        for (i = done; i < done + n; i++)
            CHECK(seen[i] == expected[i],
                  "%s, batches of %zu: key %zu (index %zu) seen = %d, "
                  "contains-then-add says %d",
                  describe(s), batch, i, sequence[i], seen[i], expected[i]);
        done += n;
    }
    expect_same_state(reference, batched, describe(s), batch, done);
    expect_same_state(reference, unreported, describe(s), batch, done);
    assert_int_equal(ebb_apbf_check_and_add_batch(batched, hashes, 0, seen),
                     0);
    expect_same_state(reference, batched, describe(s), 0, done);
    free(sequence);
    free(keys);
    free(hashes);
    free(expected);
    free(seen);
    ebb_apbf_destroy(reference);
    ebb_apbf_destroy(batched);
    ebb_apbf_destroy(unreported);
}

static void check_and_add_batch_is_contains_then_add(void **state) {
    size_t s, b;
    (void)state;
    for (s = 0; s < SHAPE_COUNT; s++)
        for (b = 0; b < BATCH_SIZE_COUNT; b++)
            check_and_add_run(&SHAPES[s], BATCH_SIZES[b]);
}

/* The smallest case of the rule, spelled out: in one batch x, x, y, x, y
 * on an empty filter, the second x and everything after the first y is
 * seen. */
static void repeat_inside_one_batch_is_seen(void **state) {
    static const shape shapes[] = {{4, 3, 100000, 0, 0},
                                   {2, 5, 100000, 512, 8},
                                   {3, 5, 100000, 64, 4}};
    size_t s;
    (void)state;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ebb_apbf *filter = make_filter(&shapes[s], 5);
        ebb_hash128 hashes[5];
        bool seen[5];
        static const bool want[5] = {false, true, false, true, true};
        size_t i;
        hashes[0] = hashes[1] = hashes[3] = ebb_apbf_hash(filter, "x", 1);
        hashes[2] = hashes[4] = ebb_apbf_hash(filter, "y", 1);
        assert_int_equal(ebb_apbf_check_and_add_batch(filter, hashes, 5, seen),
                         3);
        for (i = 0; i < 5; i++)
            CHECK(seen[i] == want[i], "%s: seen[%zu] = %d, want %d",
                  describe(&shapes[s]), i, seen[i], want[i]);
        ebb_apbf_destroy(filter);
    }
}

/* ------------------------------------------------------------------------ */
/* hash_batch                                                               */
/* ------------------------------------------------------------------------ */

static void hash_batch_equals_hash(void **state) {
    enum { KEYS = 64 };
    const uint64_t seed = UINT64_C(0xFEEDFACE12345678);
    unsigned char bytes[KEYS + 8];
    const void *keys[KEYS];
    size_t lens[KEYS], i;
    ebb_hash128 out[KEYS + 1];
    ebb_apbf *filter = make_filter(&SHAPES[3], seed);
    (void)state;
    for (i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 37 + 1);
    /* Every length from 0 to 63 at various offsets; the empty key once as
     * NULL. */
    for (i = 0; i < KEYS; i++) {
        keys[i] = i == 0 ? NULL : bytes + i % 5;
        lens[i] = i;
    }
    memset(out, 0xAB, sizeof out);
    ebb_apbf_hash_batch(filter, keys, lens, 0, out);
    CHECK(out[0].lo == UINT64_C(0xABABABABABABABAB), "n = 0 wrote out[0]");
    ebb_apbf_hash_batch(filter, keys, lens, KEYS, out);
    for (i = 0; i < KEYS; i++) {
        ebb_hash128 one = ebb_apbf_hash(filter, keys[i], lens[i]);
        ebb_hash128 raw = ebb_hash(keys[i], lens[i], seed);
        CHECK(out[i].lo == one.lo && out[i].hi == one.hi,
              "hash_batch[%zu] (len %zu) differs from ebb_apbf_hash", i,
              lens[i]);
        CHECK(one.lo == raw.lo && one.hi == raw.hi,
              "ebb_apbf_hash[%zu] differs from ebb_hash with the seed", i);
        /* Each key was really hashed: no two consecutive ones alike. */
        CHECK(i == 0 || out[i].lo != out[i - 1].lo,
              "keys %zu and %zu hash alike", i - 1, i);
    }
    CHECK(out[KEYS].lo == UINT64_C(0xABABABABABABABAB),
          "hash_batch wrote beyond n");
    ebb_apbf_destroy(filter);
}

/* ------------------------------------------------------------------------ */
/* Specialised paths                                                        */
/* ------------------------------------------------------------------------ */

/* The plain and B = 512, b = 8 paths compute the bits the general code
 * computes (snapshots must not depend on which path wrote them): the same
 * keys through a filter forced onto the general path leave byte-identical
 * state and give the same answers. */
static void fast_paths_set_the_general_bits(void **state) {
    const size_t queries = 3000;
    size_t s, i, compared = 0;
    (void)state;
    for (s = 0; s < SHAPE_COUNT; s++) {
        ebb_apbf *fast = make_filter(&SHAPES[s], 5);
        if (fast->path == EBB_APBF_PATH_GENERIC) {
            ebb_apbf_destroy(fast); /* nothing to compare it with */
            continue;
        }
        compared++;
        ebb_apbf *general = make_filter(&SHAPES[s], 5);
        ebb_hash128 *hashes = stream_hashes(fast, KEYS_INSERTED, STREAM);
        ebb_hash128 *probes = stream_hashes(fast, KEYS_FRESH, queries);
        bool *out_fast = malloc(queries * sizeof *out_fast);
        bool *out_general = malloc(queries * sizeof *out_general);
        assert_non_null(out_fast);
        assert_non_null(out_general);
        general->path = EBB_APBF_PATH_GENERIC;
        for (i = 0; i < STREAM; i++) {
            ebb_apbf_add_hash(fast, hashes[i]);
            ebb_apbf_add_hash(general, hashes[i]);
        }
        char what[120];
        snprintf(what, sizeof what, "%s, fast path against the general path",
                 describe(&SHAPES[s]));
        expect_same_state(general, fast, what, 1, STREAM);
        for (i = 0; i < queries; i++) {
            ebb_hash128 h = i % 2 ? probes[i] : hashes[STREAM - 1 - i];
            CHECK(ebb_apbf_contains_hash(fast, h) ==
                      ebb_apbf_contains_hash(general, h),
                  "%s: query %zu answered differently", describe(&SHAPES[s]),
                  i);
            probes[i] = h;
        }
        assert_int_equal(
            ebb_apbf_contains_batch(fast, probes, queries, out_fast),
            ebb_apbf_contains_batch(general, probes, queries, out_general));
        assert_memory_equal(out_fast, out_general, queries * sizeof *out_fast);
        free(hashes);
        free(probes);
        free(out_fast);
        free(out_general);
        ebb_apbf_destroy(fast);
        ebb_apbf_destroy(general);
    }
    /* Plain slices (6 shapes) and B = 512, b = 8 (4 shapes) have fast
     * paths; if path selection ever sent them to the general path, there
     * would be nothing left to compare. */
    assert_int_equal(compared, 10);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(add_batch_equals_one_at_a_time),
        TEST(contains_batch_equals_one_at_a_time),
        TEST(check_and_add_batch_is_contains_then_add),
        TEST(repeat_inside_one_batch_is_seen),
        TEST(hash_batch_equals_hash),
        TEST(fast_paths_set_the_general_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
