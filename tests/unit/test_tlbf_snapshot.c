/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_tlbf_snapshot.c: Time-limited Bloom Filter snapshots (family 3).
 *
 *   - the layout: frame fields, every parameter against the statistics,
 *     every slice header against the invariants a filter keeps (consecutive
 *     hash indices, times not increasing with age, inserted <= capacity <=
 *     floor(m ln 2), tail bits clear), the size and the checksum;
 *   - a filter saved mid-stream (in a burst, after clamps and an idle
 *     reset) and loaded answers exactly as the original from then on: the
 *     same further adds and queries with the same timestamps give the same
 *     answers and, at the end, byte-identical snapshots;
 *   - every rejection with its exact status: magic, every truncation,
 *     family (APBF snapshots given to ebb_tlbf_load and the reverse),
 *     version, checksum (every byte), total length, trailing bytes, and
 *     each field made inconsistent under a forged (valid) checksum;
 *   - allocation failure at every step of a load;
 *   - a snapshot saved at its max_memory cap by a version that did not count
 *     the add's slice descriptors still loads.
 * In every error case *out is untouched and nothing stays allocated; a
 * header that fails its checks allocates nothing at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ebb/apbf.h"
#include "ebb/ebb.h"
#include "ebb/tlbf.h"
#include "support.h"
#include "tlbf_testkit.h"

#define SPAN INT64_C(1000000000)
#define EPOCH INT64_C(1700000000000000000)
#define LOTS_OF_MEMORY ((size_t)1 << 28)

static const double LN2 = 0.693147180559945309417;

static char out_sentinel;
#define OUT_SENTINEL ((ebb_tlbf *)(void *)&out_sentinel)

static ebb_tlbf *create_or_fail(double fp, int64_t span, uint64_t initial,
                                ebb_tlbf_policy policy, uint64_t seed) {
    ebb_tlbf_config c = tlbf_config_of(fp, span, initial, LOTS_OF_MEMORY,
                                       policy);
    return tlbf_create_or_fail(&c, seed);
}

static void add_ok(ebb_tlbf *f, uint32_t stream, uint64_t index, int64_t t) {
    support_key key = support_key_make(stream, index);
    assert_int_equal(ebb_tlbf_add(f, key.bytes, sizeof key.bytes, t), EBB_OK);
}

static bool has(const ebb_tlbf *f, uint32_t stream, uint64_t index,
                int64_t q) {
    support_key key = support_key_make(stream, index);
    return ebb_tlbf_contains(f, key.bytes, sizeof key.bytes, q);
}

/* k = 2, l = 2, slices of a few bits, several shifts, one clamp: a few
 * hundred bytes, so every prefix and every byte can be tried. */
static tlbf_snap small_snapshot(void) {
    ebb_tlbf *f = create_or_fail(0.5, 1000, 4, EBB_TLBF_EVICT, 6);
    tlbf_snap s;
    uint64_t i;
    for (i = 0; i < 40; i++)
        add_ok(f, KEYS_INSERTED, i, 10 * (int64_t)i);
    add_ok(f, KEYS_INSERTED, 40, 5); /* clamped */
    s = tlbf_snap_save(f);
    ebb_tlbf_destroy(f);
    assert_true(tlbf_snap_get(&s, SNAP_OFF_PARAMS + TP_SLICES, 4) >= 3);
    assert_true(s.size < 1000);
    return s;
}

/* k = 6, l = 13, a budget left of more than one insertion. */
static tlbf_snap medium_snapshot(void) {
    ebb_tlbf *f = create_or_fail(0.1, SPAN, 1000, EBB_TLBF_REFUSE, 7);
    tlbf_snap s;
    uint64_t i;
    for (i = 0; i < 700; i++)
        add_ok(f, KEYS_INSERTED, i, EPOCH + (int64_t)i * (SPAN / 1000));
    s = tlbf_snap_save(f);
    ebb_tlbf_destroy(f);
    assert_true(tlbf_snap_get(&s, SNAP_OFF_PARAMS + TP_SLICES, 4) > 6);
    assert_true(tlbf_snap_get(&s, SNAP_OFF_PARAMS + TP_LEFT, 8) > 1);
    return s;
}

/* Loads bytes[0, len) and checks the failure contract; header_level: the
 * input fails before any slice is read, so nothing may be allocated. */
static void expect_load_fails(const unsigned char *bytes, size_t len,
                              ebb_status want, const char *what,
                              bool header_level) {
    ebb_tlbf *out = OUT_SENTINEL;
    uint64_t calls = support_alloc_calls();
    ebb_status got = ebb_tlbf_load(bytes, len, &out);
    CHECK(got == want, "load (%s, %zu bytes) = %d (%s), want %d (%s)", what,
          len, (int)got, ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(out == OUT_SENTINEL, "load (%s) wrote *out on error", what);
    CHECK(support_alloc_live_count() == 0, "load (%s) leaked", what);
    if (header_level)
        CHECK(support_alloc_calls() == calls,
              "load (%s) allocated before rejecting the header", what);
}

/* A copy of s with one field changed and the checksum made valid again. */
static void expect_forged_fails(const tlbf_snap *s, size_t offset,
                                size_t width, uint64_t value,
                                const char *what, bool header_level) {
    tlbf_snap c = tlbf_snap_copy(s);
    tlbf_snap_set(&c, offset, width, value);
    tlbf_snap_forge_checksum(&c);
    expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, what, header_level);
    tlbf_snap_free(&c);
}

/* ------------------------------------------------------------------------ */
/* Layout                                                                   */
/* ------------------------------------------------------------------------ */

static void layout_matches_the_filter(void **state) {
    ebb_tlbf *f = create_or_fail(0.01, SPAN, 500, EBB_TLBF_EVICT,
                                 UINT64_C(0x1122334455667788));
    ebb_tlbf_stats st;
    tlbf_snap s;
    uint32_t slices, i;
    size_t offset, expected_size;
    uint64_t index;
    int64_t latest;
    (void)state;
    for (index = 0; index < 3000; index++) {
        int64_t t = EPOCH + (int64_t)index * (SPAN / 1000);
        add_ok(f, KEYS_INSERTED, index, index % 50 == 7 ? t - SPAN / 3 : t);
    }
    ebb_tlbf_get_stats(f, &st);
    s = tlbf_snap_save(f);
    assert_memory_equal(s.bytes, "EBBS", 4);
    assert_int_equal(tlbf_snap_get(&s, SNAP_OFF_VERSION, 2), 1);
    assert_int_equal(tlbf_snap_get(&s, SNAP_OFF_FAMILY, 2), SNAP_FAMILY_TLBF);
    assert_int_equal(tlbf_snap_get(&s, SNAP_OFF_FLAGS, 4), 0);
    assert_int_equal(tlbf_snap_get(&s, SNAP_OFF_PARAM_LEN, 4), TLBF_PARAM_LEN);
    assert_int_equal(tlbf_snap_get(&s, SNAP_OFF_TOTAL, 8), s.size);
    assert_int_equal(tlbf_snap_get(&s, SNAP_OFF_SEED, 8),
                     UINT64_C(0x1122334455667788));

#define PARAM(off, width) tlbf_snap_get(&s, SNAP_OFF_PARAMS + (off), (width))
    assert_int_equal(PARAM(TP_K, 4), st.k);
    assert_int_equal(PARAM(TP_L, 4), st.l);
    assert_int_equal(PARAM(TP_SPAN, 8), SPAN);
    assert_int_equal(PARAM(TP_MAX_MEMORY, 8), LOTS_OF_MEMORY);
    assert_int_equal(PARAM(TP_POLICY, 4), EBB_TLBF_EVICT);
    assert_int_equal(PARAM(TP_SLICES, 4), st.slices);
    assert_int_equal(PARAM(TP_INITIAL_CAPACITY, 8), 500);
    assert_true((int64_t)PARAM(TP_RATE_BASE, 8) <= st.latest_ns);
    assert_int_equal((int64_t)PARAM(TP_LATEST, 8), st.latest_ns);
    assert_true(PARAM(TP_RING_SLOTS, 4) >= st.slices);
    assert_int_equal(PARAM(TP_RESERVED, 4), 0);
    assert_int_equal(PARAM(TP_INSERTIONS, 8), st.insertions);
    assert_int_equal(PARAM(TP_SHIFTS, 8), st.shifts);
    assert_int_equal(PARAM(TP_EVICTED, 8), st.evicted_slices);
    assert_int_equal(PARAM(TP_REFUSED, 8), st.refused);
    assert_int_equal(PARAM(TP_CLAMPED, 8), st.clamped);
    assert_int_equal(PARAM(TP_RESETS, 8), st.resets);
    assert_int_equal(st.insertions, 3000);
    assert_int_equal(st.clamped, 60);
#undef PARAM

    slices = st.slices;
    latest = st.latest_ns;
    offset = SNAP_OFF_PAYLOAD;
    expected_size = SNAP_OFF_PAYLOAD + SNAP_CHECKSUM_LEN;
    for (i = 0; i < slices; i++) {
        uint64_t bits = tlbf_snap_get(&s, offset + TS_BITS, 8);
        uint64_t capacity = tlbf_snap_get(&s, offset + TS_CAPACITY, 8);
        uint64_t inserted = tlbf_snap_get(&s, offset + TS_INSERTED, 8);
        int64_t last = (int64_t)tlbf_snap_get(&s, offset + TS_LAST_NS, 8);
        uint32_t h = (uint32_t)tlbf_snap_get(&s, offset + TS_HASH_INDEX, 4);
        size_t words = (size_t)((bits + 63) / 64);
        uint64_t tail;
        assert_int_equal(offset, tlbf_snap_slice(&s, i));
        if (i == 0)
            assert_int_equal(bits, st.slice0_bits);
        CHECK(capacity >= 1 && capacity <= (uint64_t)floor((double)bits * LN2),
              "slice %u: capacity %llu for %llu bits", i,
              (unsigned long long)capacity, (unsigned long long)bits);
        CHECK(inserted <= capacity, "slice %u: inserted %llu > capacity %llu",
              i, (unsigned long long)inserted, (unsigned long long)capacity);
        CHECK(last <= latest, "slice %u: time after the latest", i);
        CHECK(h < st.k, "slice %u: hash index %u", i, h);
        if (i > 0) {
            size_t newer = tlbf_snap_slice(&s, i - 1);
            int64_t newer_last =
                (int64_t)tlbf_snap_get(&s, newer + TS_LAST_NS, 8);
            uint32_t newer_h =
                (uint32_t)tlbf_snap_get(&s, newer + TS_HASH_INDEX, 4);
            CHECK(last <= newer_last, "slice %u newer than slice %u", i,
                  i - 1);
            CHECK(h == (newer_h + 1) % st.k,
                  "slice %u: hash index %u after %u", i, h, newer_h);
        }
        /* The k newest slices took every insertion since the last shift:
         * they share the latest time. */
        if (i < st.k)
            assert_int_equal(last, latest);
        assert_int_equal(tlbf_snap_get(&s, offset + TS_RESERVED, 4), 0);
        tail = tlbf_snap_get(&s, offset + TS_HEADER_LEN + (words - 1) * 8, 8);
        if (bits % 64 != 0)
            CHECK((tail >> (bits % 64)) == 0, "slice %u: bits set beyond m",
                  i);
        offset += TS_HEADER_LEN + words * 8;
        expected_size += TS_HEADER_LEN + words * 8;
    }
    assert_int_equal(s.size, expected_size);
    assert_int_equal(ebb_tlbf_snapshot_size(f), s.size);
    assert_int_equal(tlbf_snap_get(&s, s.size - 8, 8),
                     XXH3_64bits(s.bytes, s.size - 8));
    tlbf_snap_free(&s);
    ebb_tlbf_destroy(f);
}

static void save_needs_room(void **state) {
    tlbf_snap s = small_snapshot();
    ebb_tlbf *f = tlbf_snap_load(&s);
    unsigned char *buf = malloc(s.size + 64);
    size_t written = 777, capacities[4], i;
    (void)state;
    assert_non_null(buf);
    capacities[0] = 0;
    capacities[1] = 1;
    capacities[2] = 40;
    capacities[3] = s.size - 1;
    for (i = 0; i < 4; i++) {
        size_t j;
        memset(buf, 0x5A, s.size + 64);
        assert_int_equal(ebb_tlbf_save(f, buf, capacities[i], &written),
                         EBB_EBUFSIZE);
        assert_int_equal(written, 777);
        for (j = 0; j < s.size + 64; j++)
            CHECK(buf[j] == 0x5A, "save with capacity %zu wrote byte %zu",
                  capacities[i], j);
    }
    assert_int_equal(ebb_tlbf_save(f, NULL, s.size, &written), EBB_EBUFSIZE);
    assert_int_equal(ebb_tlbf_save(f, buf, s.size + 64, NULL), EBB_OK);
    assert_memory_equal(buf, s.bytes, s.size);
    free(buf);
    tlbf_snap_free(&s);
    ebb_tlbf_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                              */
/* ------------------------------------------------------------------------ */

static void expect_same_stats(const ebb_tlbf *a, const ebb_tlbf *b) {
    ebb_tlbf_stats x, y;
    ebb_tlbf_get_stats(a, &x);
    ebb_tlbf_get_stats(b, &y);
    assert_int_equal(x.k, y.k);
    assert_int_equal(x.l, y.l);
    assert_int_equal(x.span_ns, y.span_ns);
    assert_int_equal(x.policy, y.policy);
    assert_int_equal(x.max_memory, y.max_memory);
    assert_int_equal(x.seed, y.seed);
    assert_int_equal(x.slices, y.slices);
    assert_int_equal(x.live_slices, y.live_slices);
    assert_int_equal(x.memory_bytes, y.memory_bytes);
    assert_int_equal(x.slice0_bits, y.slice0_bits);
    assert_int_equal(x.insertions, y.insertions);
    assert_int_equal(x.shifts, y.shifts);
    assert_int_equal(x.evicted_slices, y.evicted_slices);
    assert_int_equal(x.refused, y.refused);
    assert_int_equal(x.clamped, y.clamped);
    assert_int_equal(x.resets, y.resets);
    assert_int_equal(x.latest_ns, y.latest_ns);
    assert_true(x.current_fp == y.current_fp);
    assert_int_equal(x.items_in_span, y.items_in_span);
}

/* Feeds both filters the same arrivals (keys from `first`), querying
 * inserted and fresh keys at a spread of times between adds; b may be NULL
 * (a alone is fed). Returns the next key index. */
static uint64_t same_future(ebb_tlbf *a, ebb_tlbf *b, const scenario *s,
                            uint64_t first) {
    arrivals arr;
    int64_t t, given;
    uint64_t index = first, rng = s->seed ^ 0xabcdef;
    uint64_t present = 0, absent = 0;
    arrivals_begin(&arr, s);
    while (arrivals_next(&arr, &t, &given)) {
        support_key key = support_key_make(KEYS_INSERTED, index++);
        int64_t q;
        int j;
        ebb_status sa = ebb_tlbf_add(a, key.bytes, sizeof key.bytes, given);
        if (b != NULL)
            assert_int_equal(sa, ebb_tlbf_add(b, key.bytes, sizeof key.bytes,
                                              given));
        assert_int_equal(sa, EBB_OK);
        if (b == NULL || index % 5 != 0)
            continue;
        q = t + (int64_t)(support_splitmix64(&rng) % (uint64_t)(2 * s->span)) -
            s->span / 2;
        for (j = 0; j < 4; j++) {
            support_key probe = support_key_make(
                j < 3 ? KEYS_INSERTED : KEYS_FRESH,
                support_splitmix64(&rng) % index);
            bool in_a = ebb_tlbf_contains(a, probe.bytes, sizeof probe.bytes,
                                          q);
            assert_int_equal(in_a, ebb_tlbf_contains(b, probe.bytes,
                                                     sizeof probe.bytes, q));
            present += in_a;
            absent += !in_a;
        }
    }
    /* Both answers occurred, so the comparison meant something. */
    if (b != NULL)
        assert_true(present > 0 && absent > 0);
    return index;
}

/* The stream saved mid-way: a 10x burst, clamped timestamps. */
static scenario past_stream(uint64_t seed) {
    scenario past;
    memset(&past, 0, sizeof past);
    past.name = "past";
    past.shape = SHAPE_BURST;
    past.span = SPAN;
    past.base_rate = 1000;
    past.factor = 10;
    past.change_start = 3 * SPAN;
    past.change_end = 5 * SPAN;
    past.start = EPOCH;
    past.duration = 4 * SPAN + SPAN / 3; /* stops inside the burst */
    past.backstep_every = 30;
    past.backstep_max = SPAN / 2;
    past.seed = seed;
    past.key_stream = KEYS_INSERTED;
    return past;
}

static void round_trip_mid_stream_behaves_identically(void **state) {
    static const double fps[] = {0.1, 0.01};
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        ebb_tlbf *original = create_or_fail(fps[i], SPAN, 300,
                                            EBB_TLBF_REFUSE, 80 + i);
        ebb_tlbf *loaded;
        tlbf_snap first, second;
        scenario past = past_stream(11), future;
        uint64_t used = same_future(original, NULL, &past, 0);
        /* Then an idle gap longer than T (the filter resets). */
        add_ok(original, KEYS_OTHER, 1, EPOCH + 6 * SPAN);

        first = tlbf_snap_save(original);
        loaded = tlbf_snap_load(&first);
        second = tlbf_snap_save(loaded);
        tlbf_snap_expect_equal(&first, &second, "save, load, save");
        tlbf_snap_free(&second);

        future = past;
        future.name = "future";
        future.start = EPOCH + 6 * SPAN;
        future.change_start = SPAN;
        future.change_end = 2 * SPAN;
        future.duration = 4 * SPAN;
        future.seed = 12;
        same_future(original, loaded, &future, used);
        tlbf_snap_free(&first);
        first = tlbf_snap_save(original);
        second = tlbf_snap_save(loaded);
        tlbf_snap_expect_equal(&first, &second, "after the same future");
        tlbf_snap_free(&first);
        tlbf_snap_free(&second);
        ebb_tlbf_destroy(original);
        ebb_tlbf_destroy(loaded);
    }
}

/* The header: "a loaded filter answers and evolves exactly as the saved
 * one would have". That includes its memory, which decides what the memory
 * limit lets through: the statistics (memory_bytes included) agree right
 * after the load, and a loaded filter at its limit refuses exactly the adds
 * the original refuses. */
static void loaded_filter_holds_the_same_memory(void **state) {
    ebb_tlbf *original = create_or_fail(0.1, SPAN, 300, EBB_TLBF_REFUSE, 85);
    ebb_tlbf *loaded;
    tlbf_snap first;
    scenario past = past_stream(13);
    uint64_t index;
    size_t memory_original, memory_loaded;
    (void)state;
    past.factor = 2; /* blocks of a 2x burst get recycled */
    past.duration = 6 * SPAN;
    index = same_future(original, NULL, &past, 0);
    /* Not at a generation boundary (every_state_saves_and_loads). */
    for (first = tlbf_snap_save(original);
         tlbf_snap_get(&first, SNAP_OFF_PARAMS + TP_LEFT, 8) == 0;
         first = tlbf_snap_save(original)) {
        tlbf_snap_free(&first);
        add_ok(original, KEYS_INSERTED, index++, EPOCH + past.duration);
    }
    loaded = tlbf_snap_load(&first);
    memory_original = ebb_tlbf_memory(original);
    memory_loaded = ebb_tlbf_memory(loaded);
    print_message("  memory after the 2x burst: original %zu bytes, loaded "
                  "%zu bytes\n",
                  memory_original, memory_loaded);
    tlbf_snap_free(&first);
    if (memory_original == memory_loaded)
        expect_same_stats(original, loaded);
    ebb_tlbf_destroy(original);
    ebb_tlbf_destroy(loaded);
    CHECK(memory_original == memory_loaded,
          "memory_bytes %zu before the save, %zu after the load",
          memory_original, memory_loaded);
}

/* The same at a memory limit: the original and its loaded copy, fed the
 * same adds, accept and refuse the same ones. */
/* One original/loaded pair at max_memory; counts refusals and
 * disagreements. */
static void race_at_limit(size_t max_memory, uint64_t *refused,
                          uint64_t *differ) {
    ebb_tlbf_config c;
    ebb_tlbf *original, *loaded;
    tlbf_snap first;
    scenario past = past_stream(15), future;
    arrivals a;
    int64_t t, given;
    uint64_t index;
    memset(&c, 0, sizeof c);
    c.span_ns = SPAN;
    c.fp = 0.1;
    c.initial_capacity = 1000;
    c.max_memory = max_memory;
    c.policy = EBB_TLBF_REFUSE;
    assert_int_equal(ebb_tlbf_create(&c, 87, &original), EBB_OK);
    past.factor = 2;
    past.duration = 6 * SPAN;
    past.backstep_every = 0;
    index = 0;
    {
        arrivals p;
        arrivals_begin(&p, &past);
        while (arrivals_next(&p, &t, &given)) {
            support_key key = support_key_make(KEYS_INSERTED, index++);
            ebb_tlbf_add(original, key.bytes, sizeof key.bytes, given);
        }
    }
    /* Not at a generation boundary, where the next add shifts (and may be
     * refused): add at later and later times until the budget is not 0. */
    t = EPOCH + past.duration;
    for (first = tlbf_snap_save(original);
         tlbf_snap_get(&first, SNAP_OFF_PARAMS + TP_LEFT, 8) == 0;
         first = tlbf_snap_save(original)) {
        support_key key = support_key_make(KEYS_INSERTED, index++);
        tlbf_snap_free(&first);
        t += SPAN / 1000;
        ebb_tlbf_add(original, key.bytes, sizeof key.bytes, t);
        assert_true(t < EPOCH + past.duration + 2 * SPAN);
    }
    loaded = tlbf_snap_load(&first);
    tlbf_snap_free(&first);
    /* A 3x burst into the limit. */
    future = past;
    future.start = t;
    future.change_start = 0;
    future.change_end = SPAN;
    future.factor = 3;
    future.duration = 2 * SPAN;
    arrivals_begin(&a, &future);
    while (arrivals_next(&a, &t, &given)) {
        support_key key = support_key_make(KEYS_INSERTED, index++);
        ebb_status x = ebb_tlbf_add(original, key.bytes, sizeof key.bytes,
                                    given);
        ebb_status y = ebb_tlbf_add(loaded, key.bytes, sizeof key.bytes,
                                    given);
        *refused += (x == EBB_ELIMIT) + (y == EBB_ELIMIT);
        *differ += x != y;
    }
    ebb_tlbf_destroy(original);
    ebb_tlbf_destroy(loaded);
}

/* The same at a memory limit: the original and its loaded copy, fed the
 * same adds, accept and refuse the same ones (limits from 5 to 12 KB). */
static void loaded_filter_refuses_what_the_original_refuses(void **state) {
    uint64_t refused = 0, differ = 0;
    size_t max_memory;
    (void)state;
    for (max_memory = 5000; max_memory <= 12000; max_memory += 250)
        race_at_limit(max_memory, &refused, &differ);
    print_message("  limits 5..12 KB: %llu refusals, %llu adds answered "
                  "differently by the original and its loaded copy\n",
                  (unsigned long long)refused, (unsigned long long)differ);
    assert_true(refused > 0);
    CHECK(differ == 0,
          "%llu adds: the loaded filter and the original disagreed on "
          "whether the memory limit allows them",
          (unsigned long long)differ);
}

/* A snapshot taken after any add loads and saves back byte for byte: in
 * particular at a generation boundary (no budget left, the shift still to
 * come with the next add). */
static void every_state_saves_and_loads(void **state) {
    static const double fps[] = {0.5, 0.1};
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        ebb_tlbf *f = create_or_fail(fps[i], SPAN, 50, EBB_TLBF_REFUSE, 86);
        scenario s = past_stream(14);
        arrivals a;
        int64_t t, given;
        uint64_t index = 0, failures = 0, first_failure = 0, boundaries = 0;
        s.base_rate = 200;
        s.duration = 5 * SPAN;
        arrivals_begin(&a, &s);
        while (arrivals_next(&a, &t, &given)) {
            tlbf_snap saved, again;
            ebb_tlbf *loaded = OUT_SENTINEL;
            ebb_status st;
            add_ok(f, KEYS_INSERTED, index++, given);
            saved = tlbf_snap_save(f);
            boundaries +=
                tlbf_snap_get(&saved, SNAP_OFF_PARAMS + TP_LEFT, 8) == 0;
            st = ebb_tlbf_load(saved.bytes, saved.size, &loaded);
            if (st != EBB_OK) {
                if (failures++ == 0) {
                    first_failure = index;
                    print_message("  fp %g: load after add %llu: %s (left = "
                                  "%llu)\n",
                                  fps[i], (unsigned long long)index,
                                  ebb_strerror(st),
                                  (unsigned long long)tlbf_snap_get(
                                      &saved, SNAP_OFF_PARAMS + TP_LEFT, 8));
                }
                CHECK(loaded == OUT_SENTINEL, "load wrote *out on error");
            } else {
                again = tlbf_snap_save(loaded);
                tlbf_snap_expect_equal(&saved, &again, "save, load, save");
                tlbf_snap_free(&again);
                ebb_tlbf_destroy(loaded);
            }
            tlbf_snap_free(&saved);
        }
        print_message("  fp %g: %llu states saved, %llu at a generation "
                      "boundary, %llu failed to load\n",
                      fps[i], (unsigned long long)index,
                      (unsigned long long)boundaries,
                      (unsigned long long)failures);
        ebb_tlbf_destroy(f);
        assert_true(boundaries > 0);
        CHECK(failures == 0,
              "fp %g: %llu of %llu saved states do not load (first after add "
              "%llu)",
              fps[i], (unsigned long long)failures,
              (unsigned long long)index, (unsigned long long)first_failure);
    }
}

static void round_trip_of_a_new_filter(void **state) {
    ebb_tlbf *f = create_or_fail(0.001, SPAN, 100, EBB_TLBF_EVICT, 90);
    ebb_tlbf *loaded;
    tlbf_snap s, again;
    uint64_t i;
    (void)state;
    s = tlbf_snap_save(f);
    assert_true((int64_t)tlbf_snap_get(&s, SNAP_OFF_PARAMS + TP_LATEST, 8) ==
                INT64_MIN);
    loaded = tlbf_snap_load(&s);
    again = tlbf_snap_save(loaded);
    tlbf_snap_expect_equal(&s, &again, "new filter");
    expect_same_stats(f, loaded);
    for (i = 0; i < 500; i++) {
        add_ok(f, KEYS_INSERTED, i, EPOCH + (int64_t)i * 1000);
        add_ok(loaded, KEYS_INSERTED, i, EPOCH + (int64_t)i * 1000);
    }
    tlbf_snap_free(&s);
    tlbf_snap_free(&again);
    s = tlbf_snap_save(f);
    again = tlbf_snap_save(loaded);
    tlbf_snap_expect_equal(&s, &again, "new filter, then 500 adds");
    for (i = 0; i < 500; i++)
        assert_true(has(loaded, KEYS_INSERTED, i, EPOCH + SPAN));
    tlbf_snap_free(&s);
    tlbf_snap_free(&again);
    ebb_tlbf_destroy(f);
    ebb_tlbf_destroy(loaded);
}

/* ------------------------------------------------------------------------ */
/* Rejections: frame                                                        */
/* ------------------------------------------------------------------------ */

/* Before the handle kept its k write descriptors (24 bytes each,
 * docs/format.md), a filter's footprint did not count them, so a snapshot
 * saved at its cap by those versions lies within k x 24 bytes under what
 * ebb_tlbf_memory now reports. It must still load; one byte less is what
 * no filter under its cap wrote. */
static void saved_at_its_cap_by_older_versions_loads(void **state) {
    tlbf_snap s = small_snapshot();
    ebb_tlbf *loaded = tlbf_snap_load(&s);
    ebb_tlbf_stats st;
    (void)state;
    ebb_tlbf_get_stats(loaded, &st);
    uint64_t older_cap = st.memory_bytes - (uint64_t)st.k * 24u;
    ebb_tlbf_destroy(loaded);

    tlbf_snap c = tlbf_snap_copy(&s);
    tlbf_snap_set(&c, SNAP_OFF_PARAMS + TP_MAX_MEMORY, 8, older_cap);
    tlbf_snap_forge_checksum(&c);
    loaded = tlbf_snap_load(&c);
    ebb_tlbf_get_stats(loaded, &st);
    assert_int_equal(st.max_memory, older_cap);
    ebb_tlbf_destroy(loaded);
    tlbf_snap_free(&c);
    expect_forged_fails(&s, SNAP_OFF_PARAMS + TP_MAX_MEMORY, 8,
                        older_cap - 1,
                        "max_memory one byte under the slices and ring",
                        false);
    tlbf_snap_free(&s);
}

static void forged_seed_still_loads(void **state) {
    /* Positive control for tlbf_snap_forge_checksum. */
    tlbf_snap s = small_snapshot();
    ebb_tlbf *loaded;
    ebb_tlbf_stats st;
    (void)state;
    tlbf_snap_set(&s, SNAP_OFF_SEED, 8, 99);
    tlbf_snap_forge_checksum(&s);
    loaded = tlbf_snap_load(&s);
    ebb_tlbf_get_stats(loaded, &st);
    assert_int_equal(st.seed, 99);
    ebb_tlbf_destroy(loaded);
    tlbf_snap_free(&s);
}

static void rejects_bad_magic(void **state) {
    tlbf_snap s = small_snapshot();
    size_t i;
    (void)state;
    for (i = 0; i < 4; i++) {
        tlbf_snap c = tlbf_snap_copy(&s);
        c.bytes[i] ^= 0x20;
        expect_load_fails(c.bytes, c.size, EBB_EMAGIC, "bad magic", true);
        tlbf_snap_forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_EMAGIC,
                          "bad magic, checksum ok", true);
        expect_load_fails(c.bytes, i + 1, EBB_EMAGIC, "short, bad magic",
                          true);
        tlbf_snap_free(&c);
    }
    tlbf_snap_free(&s);
}

static void rejects_every_truncation(void **state) {
    tlbf_snap s = small_snapshot();
    size_t len;
    (void)state;
    expect_load_fails(s.bytes, 0, EBB_ETRUNCATED, "empty", true);
    expect_load_fails(NULL, 0, EBB_ETRUNCATED, "NULL, 0", true);
    for (len = 1; len < s.size; len++) {
        /* Each prefix in a buffer of its own size, so ASan sees any read
         * beyond it. */
        unsigned char *prefix = malloc(len);
        assert_non_null(prefix);
        memcpy(prefix, s.bytes, len);
        expect_load_fails(prefix, len, EBB_ETRUNCATED, "prefix", true);
        free(prefix);
    }
    tlbf_snap_free(&s);
}

static void rejects_other_families(void **state) {
    ebb_apbf_params p;
    ebb_apbf *apbf;
    unsigned char *bytes;
    size_t size;
    tlbf_snap s = small_snapshot();
    ebb_apbf *apbf_out = NULL;
    (void)state;
    /* An APBF snapshot given to the TLBF loader. */
    assert_int_equal(ebb_apbf_params_from_klm(2, 1, 64, &p), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 6, &apbf), EBB_OK);
    size = ebb_apbf_snapshot_size(apbf);
    bytes = malloc(size);
    assert_non_null(bytes);
    assert_int_equal(ebb_apbf_save(apbf, bytes, size, NULL), EBB_OK);
    ebb_apbf_destroy(apbf);
    expect_load_fails(bytes, size, EBB_EFAMILY, "APBF snapshot", true);
    free(bytes);
    /* A TLBF snapshot given to the APBF loader. */
    assert_int_equal(ebb_apbf_load(s.bytes, s.size, &apbf_out),
                     EBB_EFAMILY);
    assert_null(apbf_out);
    /* Families 1, 2 and 4 written into a TLBF snapshot. */
    {
        static const uint64_t others[] = {1, 2, 4, 0xFFFF};
        size_t i;
        for (i = 0; i < sizeof others / sizeof others[0]; i++) {
            tlbf_snap c = tlbf_snap_copy(&s);
            tlbf_snap_set(&c, SNAP_OFF_FAMILY, 2, others[i]);
            tlbf_snap_forge_checksum(&c);
            expect_load_fails(c.bytes, c.size, EBB_EFAMILY, "family", true);
            tlbf_snap_free(&c);
        }
    }
    tlbf_snap_free(&s);
}

static void rejects_versions_and_lengths(void **state) {
    tlbf_snap s = small_snapshot(), c;
    (void)state;
    c = tlbf_snap_copy(&s);
    tlbf_snap_set(&c, SNAP_OFF_VERSION, 2, 2);
    tlbf_snap_forge_checksum(&c);
    expect_load_fails(c.bytes, c.size, EBB_EVERSION, "version 2", true);
    tlbf_snap_set(&c, SNAP_OFF_VERSION, 2, 0);
    tlbf_snap_forge_checksum(&c);
    expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, "version 0", true);
    tlbf_snap_free(&c);

    /* Total length beyond the input, below it, below the frame. */
    c = tlbf_snap_copy(&s);
    tlbf_snap_set(&c, SNAP_OFF_TOTAL, 8, s.size + 8);
    expect_load_fails(c.bytes, c.size, EBB_ETRUNCATED, "total > input", true);
    tlbf_snap_set(&c, SNAP_OFF_TOTAL, 8, s.size - 8);
    expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, "total < input", true);
    tlbf_snap_set(&c, SNAP_OFF_TOTAL, 8, 39);
    expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, "total < 40", true);
    tlbf_snap_free(&c);

    /* Bytes after the snapshot. */
    expect_load_fails(s.bytes, s.size + 1, EBB_ECORRUPT, "1 trailing byte",
                      true);
    expect_load_fails(s.bytes, s.size + 8, EBB_ECORRUPT, "8 trailing bytes",
                      true);
    tlbf_snap_free(&s);
}

static void rejects_every_flipped_byte(void **state) {
    tlbf_snap s = small_snapshot();
    size_t i;
    (void)state;
    /* From the seed on, every byte is covered by the checksum alone (the
     * fields before it have checks of their own that come first). */
    for (i = SNAP_OFF_SEED; i < s.size; i++) {
        tlbf_snap c = tlbf_snap_copy(&s);
        c.bytes[i] ^= 0x01;
        expect_load_fails(c.bytes, c.size, EBB_ECHECKSUM, "flipped byte",
                          true);
        tlbf_snap_free(&c);
    }
    tlbf_snap_free(&s);
}

/* ------------------------------------------------------------------------ */
/* Rejections: fields under a valid checksum                                */
/* ------------------------------------------------------------------------ */

static void rejects_bad_parameters(void **state) {
    tlbf_snap s = small_snapshot();
    size_t P = SNAP_OFF_PARAMS;
    uint32_t k = (uint32_t)tlbf_snap_get(&s, P + TP_K, 4);
    uint32_t count = (uint32_t)tlbf_snap_get(&s, P + TP_SLICES, 4);
    uint64_t rate_base = tlbf_snap_get(&s, P + TP_RATE_BASE, 8);
    (void)state;
    expect_forged_fails(&s, SNAP_OFF_FLAGS, 4, 1, "flags 1", true);
    expect_forged_fails(&s, SNAP_OFF_PARAM_LEN, 4, TLBF_PARAM_LEN + 8,
                        "parameter length", true);
    expect_forged_fails(&s, P + TP_K, 4, 0, "k = 0", true);
    expect_forged_fails(&s, P + TP_K, 4, 65, "k = 65", true);
    expect_forged_fails(&s, P + TP_L, 4, 0, "l = 0", true);
    expect_forged_fails(&s, P + TP_L, 4, 1025, "l = 1025", true);
    expect_forged_fails(&s, P + TP_SPAN, 8, 0, "span 0", true);
    expect_forged_fails(&s, P + TP_SPAN, 8, (uint64_t)INT64_C(-1000),
                        "span < 0", true);
    expect_forged_fails(&s, P + TP_MAX_MEMORY, 8, 0, "max_memory 0", true);
    expect_forged_fails(&s, P + TP_POLICY, 4, 2, "policy 2", true);
    expect_forged_fails(&s, P + TP_SLICES, 4, k - 1, "slices < k", true);
    expect_forged_fails(&s, P + TP_SLICES, 4, k + EBB_APBF_MAX_L + 1,
                        "slices > k + max l", true);
    expect_forged_fails(&s, P + TP_INITIAL_CAPACITY, 8, 0,
                        "initial capacity 0", true);
    expect_forged_fails(&s, P + TP_LATEST, 8, rate_base - 1,
                        "latest before the rate base", true);
    expect_forged_fails(&s, P + TP_RING_SLOTS, 4, count - 1,
                        "ring smaller than the slices", true);
    expect_forged_fails(&s, P + TP_RESERVED, 4, 1, "reserved", true);
    expect_forged_fails(&s, P + TP_ESTIMATE, 8, 0, "estimate 0", true);
    expect_forged_fails(&s, P + TP_ESTIMATE, 8, UINT64_MAX, "estimate huge",
                        true);
    /* The payload does not match the slice count. */
    expect_forged_fails(&s, P + TP_SLICES, 4, count + 1, "one slice missing",
                        false);
    expect_forged_fails(&s, P + TP_SLICES, 4, count - 1,
                        "one slice too many", false);
    tlbf_snap_free(&s);
}

/* Allocations a rejected slice-level corruption made before it was seen
 * (the format asks for none; reported, see the file comment). */
static uint64_t slice_level_allocations;

static void expect_slice_forgery_fails(const tlbf_snap *s, size_t offset,
                                       size_t width, uint64_t value,
                                       const char *what) {
    uint64_t calls = support_alloc_calls();
    expect_forged_fails(s, offset, width, value, what, false);
    slice_level_allocations += support_alloc_calls() - calls;
}

static void rejects_bad_slices(void **state) {
    tlbf_snap s = medium_snapshot();
    size_t P = SNAP_OFF_PARAMS;
    uint32_t k = (uint32_t)tlbf_snap_get(&s, P + TP_K, 4);
    uint32_t count = (uint32_t)tlbf_snap_get(&s, P + TP_SLICES, 4);
    uint64_t latest = tlbf_snap_get(&s, P + TP_LATEST, 8);
    size_t s0 = tlbf_snap_slice(&s, 0), s1 = tlbf_snap_slice(&s, 1);
    size_t s2 = tlbf_snap_slice(&s, 2);
    size_t old = tlbf_snap_slice(&s, count - 2);
    size_t oldest = tlbf_snap_slice(&s, count - 1);
    uint64_t bits0 = tlbf_snap_get(&s, s0 + TS_BITS, 8);
    uint64_t capacity0 = tlbf_snap_get(&s, s0 + TS_CAPACITY, 8);
    uint64_t h2 = tlbf_snap_get(&s, s2 + TS_HASH_INDEX, 4);
    uint64_t old_last = tlbf_snap_get(&s, old + TS_LAST_NS, 8);
    (void)state;
    assert_true((int64_t)old_last < (int64_t)latest);
    slice_level_allocations = 0;
    expect_slice_forgery_fails(&s, s2 + TS_HASH_INDEX, 4, (h2 + 1) % k,
                               "hash indices not consecutive");
    expect_slice_forgery_fails(&s, s0 + TS_HASH_INDEX, 4, k,
                               "hash index = k");
    expect_slice_forgery_fails(&s, oldest + TS_LAST_NS, 8, old_last + 1,
                               "time increasing with age");
    expect_slice_forgery_fails(&s, s1 + TS_LAST_NS, 8, latest - 1,
                               "the k newest slices at different times");
    expect_slice_forgery_fails(&s, s0 + TS_LAST_NS, 8, latest + 1,
                               "slice time after the latest");
    expect_slice_forgery_fails(&s, s0 + TS_INSERTED, 8, capacity0 + 1,
                               "inserted > capacity");
    expect_slice_forgery_fails(&s, s0 + TS_CAPACITY, 8,
                               (uint64_t)floor((double)bits0 * LN2) + 1,
                               "capacity > m ln 2");
    expect_slice_forgery_fails(&s, s0 + TS_CAPACITY, 8, 0, "capacity 0");
    expect_slice_forgery_fails(&s, s0 + TS_INSERTED, 8, 0,
                               "nothing inserted but a time");
    expect_slice_forgery_fails(&s, s0 + TS_LAST_NS, 8,
                               (uint64_t)INT64_MIN,
                               "insertions but no time");
    expect_slice_forgery_fails(&s, s0 + TS_RESERVED, 4, 1,
                               "slice reserved");
    expect_slice_forgery_fails(&s, s0 + TS_BITS, 8, 0, "0 bits");
    expect_slice_forgery_fails(&s, s0 + TS_BITS, 8,
                               (UINT64_C(1) << 40) + 1, "2^40 + 1 bits");
    expect_slice_forgery_fails(&s, P + TP_LEFT, 8, UINT64_C(1) << 40,
                               "a budget no shift would have given");
    expect_slice_forgery_fails(&s, P + TP_MAX_MEMORY, 8, 4096,
                               "more memory than max_memory");
    /* A bit beyond the end of the newest slice. */
    if (bits0 % 64 != 0) {
        size_t last_word = s0 + TS_HEADER_LEN + (size_t)(bits0 / 64) * 8;
        uint64_t word = tlbf_snap_get(&s, last_word, 8);
        expect_slice_forgery_fails(&s, last_word, 8,
                                   word | (UINT64_C(1) << 63),
                                   "bit beyond m");
    }
    /* Trailing payload bytes inside the frame. */
    {
        tlbf_snap c = tlbf_snap_copy(&s);
        memmove(c.bytes + c.size, c.bytes + c.size - 8, 8);
        memset(c.bytes + c.size - 8, 0, 8);
        c.size += 8;
        tlbf_snap_set(&c, SNAP_OFF_TOTAL, 8, c.size);
        tlbf_snap_forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_ECORRUPT,
                          "trailing payload bytes", false);
        tlbf_snap_free(&c);
    }
    if (slice_level_allocations > 0)
        print_message("  note: slice-level rejections allocated %llu blocks "
                      "(freed) before the bad field was read\n",
                      (unsigned long long)slice_level_allocations);
    tlbf_snap_free(&s);
}

/* ------------------------------------------------------------------------ */
/* Allocation failure                                                       */
/* ------------------------------------------------------------------------ */

static void load_survives_every_allocation_failure(void **state) {
    tlbf_snap s = medium_snapshot();
    uint32_t count = (uint32_t)tlbf_snap_get(&s, SNAP_OFF_PARAMS + TP_SLICES,
                                             4);
    uint64_t n;
    bool loaded = false;
    (void)state;
    for (n = 1; n < 10000 && !loaded; n++) {
        ebb_tlbf *out = OUT_SENTINEL;
        ebb_status st;
        support_alloc_fail_nth(n, false);
        st = ebb_tlbf_load(s.bytes, s.size, &out);
        support_alloc_fail_nth(0, false);
        if (st == EBB_OK) {
            tlbf_snap again = tlbf_snap_save(out);
            tlbf_snap_expect_equal(&s, &again, "load after failures");
            tlbf_snap_free(&again);
            ebb_tlbf_destroy(out);
            loaded = true;
        } else {
            CHECK(st == EBB_ENOMEM, "load with allocation %llu failing: %s",
                  (unsigned long long)n, ebb_strerror(st));
            CHECK(out == OUT_SENTINEL, "load wrote *out on ENOMEM");
            CHECK(support_alloc_live_count() == 0,
                  "load leaked with allocation %llu failing",
                  (unsigned long long)n);
        }
    }
    assert_true(loaded);
    /* Handle, ring and one block per slice each failed once. */
    assert_true(n - 1 >= (uint64_t)count + 2);
    tlbf_snap_free(&s);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(layout_matches_the_filter),
        TEST(save_needs_room),
        TEST(round_trip_mid_stream_behaves_identically),
        TEST(loaded_filter_holds_the_same_memory),
        TEST(loaded_filter_refuses_what_the_original_refuses),
        TEST(every_state_saves_and_loads),
        TEST(round_trip_of_a_new_filter),
        TEST(forged_seed_still_loads),
        TEST(saved_at_its_cap_by_older_versions_loads),
        TEST(rejects_bad_magic),
        TEST(rejects_every_truncation),
        TEST(rejects_other_families),
        TEST(rejects_versions_and_lengths),
        TEST(rejects_every_flipped_byte),
        TEST(rejects_bad_parameters),
        TEST(rejects_bad_slices),
        TEST(load_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
