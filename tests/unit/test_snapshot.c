/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_snapshot.c: APBF snapshots against docs/format.md.
 *
 *   - the layout, field by field, of a small snapshot (the worked example);
 *   - round trips are bit-identical and the loaded filter behaves
 *     identically;
 *   - every rejection path of the decoding order with its exact status:
 *     magic, truncation (every prefix), trailing bytes, version, family,
 *     total length, checksum (every byte flipped), and each field corrupted
 *     under a valid (recomputed) checksum.
 * In every error case *out is untouched and nothing stays allocated.
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

#include "ebb/ebb.h"
#include "support.h"

static const double LN2 = 0.693147180559945309417;

/* Frame offsets (docs/format.md). */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_FAMILY = 6,
    OFF_FLAGS = 8,
    OFF_PARAM_LEN = 12,
    OFF_TOTAL = 16,
    OFF_SEED = 24,
    OFF_PARAMS = 32,
    FRAME_BYTES = 40, /* header + checksum */
    APBF_PARAM_LEN = 56
};

/* APBF parameter block offsets, relative to OFF_PARAMS. */
enum {
    P_K = 0,
    P_L = 4,
    P_SLICE_BITS = 8,
    P_GENERATION = 16,
    P_INSERTIONS = 24,
    P_GENERATIONS = 32,
    P_IN_GENERATION = 40,
    P_BASE = 48,
    P_RESERVED = 52,
    OFF_PAYLOAD = OFF_PARAMS + APBF_PARAM_LEN
};

static char out_sentinel;
#define OUT_SENTINEL ((ebb_apbf *)(void *)&out_sentinel)

/* A snapshot in a malloc'd buffer (not the counting allocator: the test's
 * own memory must not look like a leak of the library). */
typedef struct snapshot {
    unsigned char *bytes;
    size_t size;
} snapshot;

static snapshot save(const ebb_apbf *filter) {
    snapshot s;
    size_t written = 0;
    s.size = ebb_apbf_snapshot_size(filter);
    s.bytes = malloc(s.size + 16);
    assert_non_null(s.bytes);
    assert_int_equal(ebb_apbf_save(filter, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

static snapshot copy_of(const snapshot *s) {
    snapshot c;
    c.size = s->size;
    c.bytes = malloc(s->size + 16);
    assert_non_null(c.bytes);
    memcpy(c.bytes, s->bytes, s->size);
    return c;
}

static ebb_apbf *filter_from_klm(uint32_t k, uint32_t l, uint64_t m,
                                 uint64_t seed) {
    ebb_apbf_params p;
    ebb_apbf *filter = NULL;
    assert_int_equal(ebb_apbf_params_from_klm(k, l, m, &p), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, seed, &filter), EBB_OK);
    return filter;
}

static void add_keys(ebb_apbf *filter, uint32_t stream, uint64_t first,
                     uint64_t count) {
    uint64_t i;
    for (i = first; i < first + count; i++) {
        support_key key = support_key_make(stream, i);
        ebb_apbf_add(filter, key.bytes, sizeof key.bytes);
    }
}

/* Rewrites the checksum so that only the field a test changed is wrong. */
static void forge_checksum(snapshot *s) {
    support_put_le(s->bytes + s->size - 8, 8,
                   XXH3_64bits(s->bytes, s->size - 8));
}

static void set_field(snapshot *s, size_t offset, size_t width,
                      uint64_t value) {
    support_put_le(s->bytes + offset, width, value);
}

static uint64_t get_field(const snapshot *s, size_t offset, size_t width) {
    return support_get_le(s->bytes + offset, width);
}

/* Loads bytes[0, len) and checks the failure contract. */
static void expect_load_fails(const unsigned char *bytes, size_t len,
                              ebb_status want, const char *what) {
    ebb_apbf *out = OUT_SENTINEL;
    uint64_t calls = support_alloc_calls();
    ebb_status got = ebb_apbf_load(bytes, len, &out);
    CHECK(got == want, "load (%s, %zu bytes) = %d (%s), want %d (%s)", what,
          len, (int)got, ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(out == OUT_SENTINEL, "load (%s) wrote *out on error", what);
    CHECK(support_alloc_live_count() == 0, "load (%s) leaked", what);
    /* Format rule: nothing is allocated before the fields are validated. */
    if (want != EBB_ENOMEM && want != EBB_EOVERFLOW)
        CHECK(support_alloc_calls() == calls, "load (%s) allocated", what);
}

/* ------------------------------------------------------------------------ */
/* Layout                                                                   */
/* ------------------------------------------------------------------------ */

/* docs/format.md's worked example: k = 2, l = 1, m = 64 gives N = 120. */
static void layout_of_the_worked_example(void **state) {
    ebb_apbf *filter = filter_from_klm(2, 1, 64, UINT64_C(0x1122334455667788));
    uint64_t g = (uint64_t)floor(64 * LN2 / 2);
    snapshot s;
    (void)state;
    add_keys(filter, KEYS_INSERTED, 0, g + 3); /* one shift */
    assert_int_equal(ebb_apbf_snapshot_size(filter), 120);
    s = save(filter);
    assert_memory_equal(s.bytes, "EBBS", 4);
    assert_int_equal(get_field(&s, OFF_VERSION, 2), 1);
    assert_int_equal(get_field(&s, OFF_FAMILY, 2), 1);
    assert_int_equal(get_field(&s, OFF_FLAGS, 4), 0);
    assert_int_equal(get_field(&s, OFF_PARAM_LEN, 4), 56);
    assert_int_equal(get_field(&s, OFF_TOTAL, 8), 120);
    assert_int_equal(get_field(&s, OFF_SEED, 8), UINT64_C(0x1122334455667788));
    assert_int_equal(get_field(&s, OFF_PARAMS + P_K, 4), 2);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_L, 4), 1);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_SLICE_BITS, 8), 64);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_GENERATION, 8), g);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_INSERTIONS, 8), g + 3);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_GENERATIONS, 8), 1);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_IN_GENERATION, 8), 3);
    assert_true(get_field(&s, OFF_PARAMS + P_BASE, 4) < 3);
    assert_int_equal(get_field(&s, OFF_PARAMS + P_RESERVED, 4), 0);
    assert_int_equal(get_field(&s, 112, 8), XXH3_64bits(s.bytes, 112));
    free(s.bytes);
    ebb_apbf_destroy(filter);
}

/* Slices whose m is not a multiple of 64 keep their tail bits at zero. */
static void tail_bits_are_zero(void **state) {
    ebb_apbf *filter = filter_from_klm(3, 2, 100, 4);
    snapshot s;
    uint32_t slice;
    (void)state;
    add_keys(filter, KEYS_INSERTED, 0, 500);
    s = save(filter);
    assert_int_equal(s.size, FRAME_BYTES + APBF_PARAM_LEN + 5 * 2 * 8);
    for (slice = 0; slice < 5; slice++) {
        uint64_t last = get_field(&s, OFF_PAYLOAD + (slice * 2 + 1) * 8, 8);
        CHECK((last >> 36) == 0, "slice %u has bits set beyond m", slice);
    }
    free(s.bytes);
    ebb_apbf_destroy(filter);
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                              */
/* ------------------------------------------------------------------------ */

static void assert_same_stats(const ebb_apbf *a, const ebb_apbf *b) {
    ebb_apbf_stats x, y;
    ebb_apbf_get_stats(a, &x);
    ebb_apbf_get_stats(b, &y);
    assert_memory_equal(&x.params, &y.params, sizeof x.params);
    assert_int_equal(x.seed, y.seed);
    assert_int_equal(x.insertions, y.insertions);
    assert_int_equal(x.generations, y.generations);
    assert_int_equal(x.in_generation, y.in_generation);
    assert_int_equal(x.current_slack, y.current_slack);
    assert_int_equal(x.memory_bytes, y.memory_bytes);
}

/* 5000 of the last inserted keys and 5000 fresh ones give the same answers
 * on both filters; at least min_present of them are present. */
static void assert_same_answers(const ebb_apbf *a, const ebb_apbf *b,
                                uint64_t inserted, uint64_t min_present) {
    uint64_t i, present = 0;
    for (i = 0; i < 10000; i++) {
        uint32_t stream = i % 2 ? KEYS_INSERTED : KEYS_FRESH;
        uint64_t index = stream == KEYS_INSERTED ? inserted - 1 - i / 2 : i;
        support_key key = support_key_make(stream, index);
        bool in_a = ebb_apbf_contains(a, key.bytes, sizeof key.bytes);
        assert_int_equal(in_a, ebb_apbf_contains(b, key.bytes,
                                                 sizeof key.bytes));
        present += in_a;
    }
    /* Both answers occurred. */
    assert_true(present >= min_present && present < 10000);
}

static void round_trip_is_bit_identical(void **state) {
    ebb_apbf_params p;
    ebb_apbf *original, *loaded = OUT_SENTINEL;
    snapshot first, second;
    uint64_t inserted;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(7, 5, 6000, &p), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 31337, &original), EBB_OK);
    inserted = 3 * p.window + 123;
    add_keys(original, KEYS_INSERTED, 0, inserted);

    first = save(original);
    assert_int_equal(ebb_apbf_load(first.bytes, first.size, &loaded), EBB_OK);
    assert_true(loaded != OUT_SENTINEL && loaded != NULL);
    second = save(loaded);
    assert_int_equal(first.size, second.size);
    assert_memory_equal(first.bytes, second.bytes, first.size);
    assert_same_stats(original, loaded);
    assert_same_answers(original, loaded, inserted, 5000);

    /* The same future for both. */
    add_keys(original, KEYS_OTHER, 0, 1500);
    add_keys(loaded, KEYS_OTHER, 0, 1500);
    free(first.bytes);
    free(second.bytes);
    first = save(original);
    second = save(loaded);
    assert_int_equal(first.size, second.size);
    assert_memory_equal(first.bytes, second.bytes, first.size);
    /* 1500 later, the newest 4500 of those keys are still in the window. */
    assert_same_answers(original, loaded, inserted, 4500);

    free(first.bytes);
    free(second.bytes);
    ebb_apbf_destroy(original);
    ebb_apbf_destroy(loaded);
}

static void round_trip_of_empty_and_cleared_filters(void **state) {
    ebb_apbf *filter = filter_from_klm(4, 3, 1000, 8);
    ebb_apbf *loaded = NULL;
    snapshot empty, again;
    (void)state;
    empty = save(filter);
    assert_int_equal(get_field(&empty, OFF_PARAMS + P_INSERTIONS, 8), 0);
    assert_int_equal(get_field(&empty, OFF_PARAMS + P_IN_GENERATION, 8), 0);
    assert_int_equal(ebb_apbf_load(empty.bytes, empty.size, &loaded), EBB_OK);
    ebb_apbf_destroy(loaded);

    add_keys(filter, KEYS_INSERTED, 0, 5000);
    ebb_apbf_clear(filter);
    again = save(filter);
    assert_int_equal(again.size, empty.size);
    assert_memory_equal(again.bytes, empty.bytes, empty.size);
    free(empty.bytes);
    free(again.bytes);
    ebb_apbf_destroy(filter);
}

static void save_needs_room(void **state) {
    ebb_apbf *filter = filter_from_klm(2, 1, 64, 1);
    unsigned char buf[200];
    size_t written = 777, i, capacities[] = {0, 1, 40, 119};
    (void)state;
    add_keys(filter, KEYS_INSERTED, 0, 10);
    for (i = 0; i < sizeof capacities / sizeof capacities[0]; i++) {
        size_t j;
        memset(buf, 0x5A, sizeof buf);
        assert_int_equal(ebb_apbf_save(filter, buf, capacities[i], &written),
                         EBB_EBUFSIZE);
        assert_int_equal(written, 777);
        for (j = 0; j < sizeof buf; j++)
            CHECK(buf[j] == 0x5A, "save with capacity %zu wrote byte %zu",
                  capacities[i], j);
    }
    /* More room than needed is fine; written may be NULL. */
    assert_int_equal(ebb_apbf_save(filter, buf, sizeof buf, NULL), EBB_OK);
    assert_int_equal(ebb_apbf_save(filter, buf, 120, &written), EBB_OK);
    assert_int_equal(written, 120);
    ebb_apbf_destroy(filter);
}

/* ------------------------------------------------------------------------ */
/* Rejections: frame                                                        */
/* ------------------------------------------------------------------------ */

/* A small snapshot with some bits set, for the corruption tests. */
static snapshot small_snapshot(void) {
    ebb_apbf *filter = filter_from_klm(2, 1, 64, 6);
    snapshot s;
    add_keys(filter, KEYS_INSERTED, 0, 30); /* g = 22: one shift */
    s = save(filter);
    ebb_apbf_destroy(filter);
    assert_int_equal(s.size, 120);
    return s;
}

static void forged_snapshot_loads(void **state) {
    /* Positive control for forge_checksum: change the seed only, and the
     * snapshot is still valid (with that seed). */
    snapshot s = small_snapshot();
    ebb_apbf *loaded = NULL;
    ebb_apbf_stats stats;
    (void)state;
    set_field(&s, OFF_SEED, 8, 99);
    forge_checksum(&s);
    assert_int_equal(ebb_apbf_load(s.bytes, s.size, &loaded), EBB_OK);
    ebb_apbf_get_stats(loaded, &stats);
    assert_int_equal(stats.seed, 99);
    ebb_apbf_destroy(loaded);
    free(s.bytes);
}

static void rejects_bad_magic(void **state) {
    snapshot s = small_snapshot();
    size_t i;
    (void)state;
    for (i = 0; i < 4; i++) {
        snapshot c = copy_of(&s);
        c.bytes[i] ^= 0x20;
        expect_load_fails(c.bytes, c.size, EBB_EMAGIC, "bad magic");
        forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_EMAGIC, "bad magic, checksum ok");
        /* Short inputs that do not start like the magic. */
        expect_load_fails(c.bytes, i + 1, EBB_EMAGIC, "short, bad magic");
        free(c.bytes);
    }
    expect_load_fails((const unsigned char *)"ebbs", 4, EBB_EMAGIC, "ebbs");
    free(s.bytes);
}

static void rejects_every_truncation(void **state) {
    snapshot s = small_snapshot();
    size_t len;
    (void)state;
    /* The empty input is a prefix of the magic: truncated. */
    expect_load_fails(s.bytes, 0, EBB_ETRUNCATED, "empty");
    expect_load_fails(NULL, 0, EBB_ETRUNCATED, "NULL, 0");
    for (len = 1; len < s.size; len++) {
        /* Each prefix in a buffer of its own size, so ASan sees any read
         * beyond it. */
        unsigned char *prefix = malloc(len);
        assert_non_null(prefix);
        memcpy(prefix, s.bytes, len);
        expect_load_fails(prefix, len, EBB_ETRUNCATED, "prefix");
        free(prefix);
    }
    free(s.bytes);
}

static void rejects_trailing_bytes(void **state) {
    snapshot s = small_snapshot();
    (void)state;
    s.bytes[s.size] = 0;
    expect_load_fails(s.bytes, s.size + 1, EBB_ECORRUPT, "one trailing byte");
    expect_load_fails(s.bytes, s.size + 8, EBB_ECORRUPT, "8 trailing bytes");
    free(s.bytes);
}

static void rejects_versions(void **state) {
    static const uint64_t newer[] = {2, 3, 0x100, 0xFFFF};
    snapshot s = small_snapshot();
    size_t i;
    (void)state;
    for (i = 0; i < sizeof newer / sizeof newer[0]; i++) {
        snapshot c = copy_of(&s);
        set_field(&c, OFF_VERSION, 2, newer[i]);
        expect_load_fails(c.bytes, c.size, EBB_EVERSION, "newer version");
        forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_EVERSION,
                          "newer version, checksum ok");
        free(c.bytes);
    }
    set_field(&s, OFF_VERSION, 2, 0);
    expect_load_fails(s.bytes, s.size, EBB_ECORRUPT, "version 0");
    forge_checksum(&s);
    expect_load_fails(s.bytes, s.size, EBB_ECORRUPT, "version 0, checksum ok");
    free(s.bytes);
}

/* Families 1 (APBF) and 2 (blocked APBF) load as ebb_apbf; any other id is
 * another family. A plain snapshot relabelled 2 lacks the block fields:
 * that is corrupt, not another family. */
static void rejects_other_families(void **state) {
    static const uint64_t others[] = {0, 3, 0x101, 0xFFFF};
    snapshot s = small_snapshot();
    size_t i;
    (void)state;
    for (i = 0; i < sizeof others / sizeof others[0]; i++) {
        snapshot c = copy_of(&s);
        set_field(&c, OFF_FAMILY, 2, others[i]);
        forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_EFAMILY, "other family");
        free(c.bytes);
    }
    {
        snapshot c = copy_of(&s);
        set_field(&c, OFF_FAMILY, 2, 2);
        forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_ECORRUPT,
                          "plain snapshot labelled blocked");
        free(c.bytes);
    }
    free(s.bytes);
}

static void rejects_wrong_total_length(void **state) {
    static const struct {
        uint64_t total;
        ebb_status want;
    } cases[] = {{121, EBB_ETRUNCATED}, {UINT64_MAX, EBB_ETRUNCATED},
                 {119, EBB_ECORRUPT},   {40, EBB_ECORRUPT},
                 {39, EBB_ECORRUPT},    {0, EBB_ECORRUPT}};
    snapshot s = small_snapshot();
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snapshot c = copy_of(&s);
        set_field(&c, OFF_TOTAL, 8, cases[i].total);
        forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, cases[i].want, "total length");
        free(c.bytes);
    }
    free(s.bytes);
}

/* The status a snapshot with byte `offset` changed must get, following the
 * decoding order: only the frame fields checked before the checksum can
 * give something other than EBB_ECHECKSUM. */
static ebb_status status_for_changed_byte(const snapshot *c, size_t offset) {
    if (offset < OFF_VERSION)
        return EBB_EMAGIC;
    if (offset < OFF_FAMILY) {
        uint64_t version = get_field(c, OFF_VERSION, 2);
        return version == 0 ? EBB_ECORRUPT : EBB_EVERSION;
    }
    if (offset < OFF_FLAGS)
        return EBB_EFAMILY;
    if (offset >= OFF_TOTAL && offset < OFF_SEED)
        return get_field(c, OFF_TOTAL, 8) > c->size ? EBB_ETRUNCATED
                                                    : EBB_ECORRUPT;
    return EBB_ECHECKSUM;
}

static void rejects_every_flipped_byte(void **state) {
    static const unsigned char masks[] = {0x01, 0x80, 0xFF};
    snapshot s = small_snapshot();
    size_t offset, m;
    (void)state;
    for (offset = 0; offset < s.size; offset++) {
        for (m = 0; m < sizeof masks; m++) {
            snapshot c = copy_of(&s);
            ebb_status want;
            c.bytes[offset] ^= masks[m];
            want = status_for_changed_byte(&c, offset);
            expect_load_fails(c.bytes, c.size, want, "flipped byte");
            free(c.bytes);
        }
    }
    free(s.bytes);
}

/* ------------------------------------------------------------------------ */
/* Rejections: fields under a valid checksum                                */
/* ------------------------------------------------------------------------ */

static void expect_forged_field_corrupt(size_t offset, size_t width,
                                        uint64_t value, const char *what) {
    snapshot s = small_snapshot();
    set_field(&s, offset, width, value);
    forge_checksum(&s);
    expect_load_fails(s.bytes, s.size, EBB_ECORRUPT, what);
    free(s.bytes);
}

static void rejects_corrupt_fields(void **state) {
    /* The small snapshot: k = 2, l = 1, m = 64, g = 22, n = 30. */
    const uint64_t g_max = (uint64_t)floor(64 * LN2 / 2);
    (void)state;
    assert_int_equal(g_max, 22);
    expect_forged_field_corrupt(OFF_FLAGS, 4, 1, "flags = 1");
    expect_forged_field_corrupt(OFF_FLAGS, 4, 0x80000000u, "flags high bit");
    expect_forged_field_corrupt(OFF_PARAM_LEN, 4, 55, "P = 55");
    expect_forged_field_corrupt(OFF_PARAM_LEN, 4, 57, "P = 57");
    expect_forged_field_corrupt(OFF_PARAM_LEN, 4, 0, "P = 0");
    expect_forged_field_corrupt(OFF_PARAM_LEN, 4, 0xFFFFFFFFu, "P = 2^32-1");
    expect_forged_field_corrupt(OFF_PARAMS + P_K, 4, 0, "k = 0");
    expect_forged_field_corrupt(OFF_PARAMS + P_K, 4, 65, "k = 65");
    expect_forged_field_corrupt(OFF_PARAMS + P_K, 4, 0xFFFFFFFFu, "k = 2^32-1");
    expect_forged_field_corrupt(OFF_PARAMS + P_L, 4, 0, "l = 0");
    expect_forged_field_corrupt(OFF_PARAMS + P_L, 4, 1025, "l = 1025");
    expect_forged_field_corrupt(OFF_PARAMS + P_SLICE_BITS, 8, 0, "m = 0");
    expect_forged_field_corrupt(OFF_PARAMS + P_SLICE_BITS, 8,
                                EBB_APBF_MAX_SLICE_BITS + 1, "m > 2^40");
    expect_forged_field_corrupt(OFF_PARAMS + P_SLICE_BITS, 8, UINT64_MAX,
                                "m = 2^64-1");
    expect_forged_field_corrupt(OFF_PARAMS + P_GENERATION, 8, 0, "g = 0");
    expect_forged_field_corrupt(OFF_PARAMS + P_GENERATION, 8, g_max + 1,
                                "g > floor(m ln 2 / k)");
    expect_forged_field_corrupt(OFF_PARAMS + P_GENERATION, 8, UINT64_MAX,
                                "g = 2^64-1");
    expect_forged_field_corrupt(OFF_PARAMS + P_IN_GENERATION, 8, 23,
                                "in_generation > g");
    expect_forged_field_corrupt(OFF_PARAMS + P_IN_GENERATION, 8, 0,
                                "in_generation 0 with insertions");
    expect_forged_field_corrupt(OFF_PARAMS + P_BASE, 4, 3, "base = k + l");
    expect_forged_field_corrupt(OFF_PARAMS + P_BASE, 4, 0xFFFFFFFFu,
                                "base = 2^32-1");
    expect_forged_field_corrupt(OFF_PARAMS + P_RESERVED, 4, 1, "reserved");
    expect_forged_field_corrupt(OFF_PARAMS + P_RESERVED, 4, 0x80000000u,
                                "reserved high bit");
    /* Shapes that are valid but imply another payload length. */
    expect_forged_field_corrupt(OFF_PARAMS + P_SLICE_BITS, 8, 65,
                                "m = 65 (2 words per slice)");
    expect_forged_field_corrupt(OFF_PARAMS + P_L, 4, 2, "l = 2 (4 slices)");
    expect_forged_field_corrupt(OFF_PARAMS + P_K, 4, 1, "k = 1 (2 slices)");
}

/* Payloads one word longer or shorter than the parameters imply, framed
 * consistently (N and checksum right). */
static void rejects_payload_length_mismatch(void **state) {
    snapshot s = small_snapshot();
    int delta;
    (void)state;
    for (delta = -16; delta <= 16; delta += 1) {
        snapshot c;
        size_t size;
        if (delta == 0)
            continue;
        size = (size_t)((long)s.size + delta);
        c.size = size;
        c.bytes = calloc(1, size + 16);
        assert_non_null(c.bytes);
        /* Everything but the old checksum, then a new one. */
        memcpy(c.bytes, s.bytes, (delta < 0 ? size : s.size) - 8);
        set_field(&c, OFF_TOTAL, 8, size);
        forge_checksum(&c);
        expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, "payload length");
        free(c.bytes);
    }
    free(s.bytes);
}

static void rejects_bits_beyond_a_slice(void **state) {
    /* k = 3, l = 2, m = 100: 2 words per slice, bits 36..63 of each
     * slice's second word lie beyond m. */
    ebb_apbf *filter = filter_from_klm(3, 2, 100, 4);
    snapshot s;
    uint32_t slice;
    unsigned bit;
    (void)state;
    add_keys(filter, KEYS_INSERTED, 0, 40);
    s = save(filter);
    ebb_apbf_destroy(filter);
    for (slice = 0; slice < 5; slice++) {
        for (bit = 36; bit < 64; bit += 27) {
            snapshot c = copy_of(&s);
            size_t word = OFF_PAYLOAD + (slice * 2 + 1) * 8;
            set_field(&c, word, 8,
                      get_field(&c, word, 8) | (UINT64_C(1) << bit));
            forge_checksum(&c);
            expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, "bit beyond m");
            free(c.bytes);
        }
    }
    /* Control: bit 35 (m - 1) is a real bit. */
    {
        snapshot c = copy_of(&s);
        ebb_apbf *loaded = NULL;
        size_t word = OFF_PAYLOAD + 8;
        set_field(&c, word, 8, get_field(&c, word, 8) | (UINT64_C(1) << 35));
        forge_checksum(&c);
        assert_int_equal(ebb_apbf_load(c.bytes, c.size, &loaded), EBB_OK);
        ebb_apbf_destroy(loaded);
        free(c.bytes);
    }
    free(s.bytes);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(layout_of_the_worked_example),
        TEST(tail_bits_are_zero),
        TEST(round_trip_is_bit_identical),
        TEST(round_trip_of_empty_and_cleared_filters),
        TEST(save_needs_room),
        TEST(forged_snapshot_loads),
        TEST(rejects_bad_magic),
        TEST(rejects_every_truncation),
        TEST(rejects_trailing_bytes),
        TEST(rejects_versions),
        TEST(rejects_other_families),
        TEST(rejects_wrong_total_length),
        TEST(rejects_every_flipped_byte),
        TEST(rejects_corrupt_fields),
        TEST(rejects_payload_length_mismatch),
        TEST(rejects_bits_beyond_a_slice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
