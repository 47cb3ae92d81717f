/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbbf.c: the blocked variant (APBBF, section 6 of the paper).
 *
 *   - sizing and create refuse every bad block shape (B not 64 or 512, b
 *     not 1, 2, 4 or 8, b without B, slices that are not whole blocks, a
 *     generation above the blocked capacity, a window that is not l g) and
 *     overflowing windows, leaving their outputs untouched;
 *   - params_from_kl_blocked gives the fewest whole blocks per slice;
 *   - no false negatives for every row of the paper's Table 3, over more
 *     than 10 windows of distinct keys: the oldest item of the window after
 *     every insertion, the whole window at every generation boundary;
 *   - snapshots of blocked filters use family 2 with a 64-byte parameter
 *     block, round-trip bit-identically, and forged block fields are
 *     EBB_ECORRUPT;
 *   - statistics report the block shape;
 *   - ebb_apbf_choose_blocked meets its target (ebb_apbf_shape_fp) and
 *     picks the least memory, checked against a brute-force scan.
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

#define SENTINEL_BYTE 0x5C

/* Frame and parameter offsets of docs/format.md. */
enum {
    OFF_FAMILY = 6,
    OFF_PARAM_LEN = 12,
    OFF_TOTAL = 16,
    OFF_PARAMS = 32,
    FRAME_BYTES = 40,
    APBF_PARAM_LEN = 56,
    APBBF_PARAM_LEN = 64,
    P_GENERATION = 16,
    P_BLOCK_BITS = 56,
    P_BLOCK_HASHES = 60
};

/* The rows (k, l, B, b) of the paper's Table 3. */
static const uint32_t TABLE3[][4] = {
    {2, 3, 64, 4},  {2, 3, 512, 4}, {2, 5, 64, 4},  {2, 5, 512, 4},
    {3, 5, 64, 4},  {3, 5, 512, 4}, {3, 8, 64, 4},  {3, 8, 512, 4},
    {2, 3, 64, 8},  {2, 3, 512, 8}, {2, 5, 64, 8},  {2, 5, 512, 8},
    {3, 5, 64, 8},  {3, 5, 512, 8}, {3, 8, 64, 8},  {3, 8, 512, 8},
};
#define TABLE3_ROWS (sizeof TABLE3 / sizeof TABLE3[0])

static char out_sentinel;
#define OUT_SENTINEL ((ebb_apbf *)(void *)&out_sentinel)

static void sentinel_params(ebb_apbf_params *params) {
    memset(params, SENTINEL_BYTE, sizeof *params);
}

static bool params_untouched(const ebb_apbf_params *params) {
    const unsigned char *bytes = (const unsigned char *)params;
    size_t i;
    for (i = 0; i < sizeof *params; i++)
        if (bytes[i] != SENTINEL_BYTE)
            return false;
    return true;
}

/* The blocked capacity of docs/format.md: floor(n ln(1/2) / ln(1 - b/B) / k)
 * insertions per generation for n blocks per slice. */
static uint64_t blocked_capacity(uint64_t blocks, uint32_t k, uint32_t B,
                                 uint32_t b) {
    double per_block = log(0.5) / log1p(-(double)b / (double)B);
    return (uint64_t)floor((double)blocks * per_block / (double)k);
}

static ebb_apbf_params blocked_params(uint32_t k, uint32_t l, uint64_t window,
                                      uint32_t B, uint32_t b) {
    ebb_apbf_params p;
    ebb_status st = ebb_apbf_params_from_kl_blocked(k, l, window, B, b, &p);
    CHECK(st == EBB_OK, "params_from_kl_blocked(%u, %u, %llu, %u, %u) = %s",
          k, l, (unsigned long long)window, B, b, ebb_strerror(st));
    return p;
}

/* ------------------------------------------------------------------------ */
/* Validation                                                               */
/* ------------------------------------------------------------------------ */

static void expect_from_kl_blocked_fails(uint32_t k, uint32_t l,
                                         uint64_t window, uint32_t B,
                                         uint32_t b, ebb_status want) {
    ebb_apbf_params out;
    ebb_status got;
    sentinel_params(&out);
    got = ebb_apbf_params_from_kl_blocked(k, l, window, B, b, &out);
    CHECK(got == want,
          "params_from_kl_blocked(%u, %u, %llu, B=%u, b=%u) = %d (%s), want "
          "%d (%s)",
          k, l, (unsigned long long)window, B, b, (int)got, ebb_strerror(got),
          (int)want, ebb_strerror(want));
    CHECK(params_untouched(&out), "params_from_kl_blocked wrote on error");
}

static void expect_choose_blocked_fails(uint64_t window, double fp,
                                        double max_npws, uint32_t B,
                                        uint32_t b, ebb_status want) {
    ebb_apbf_params out;
    ebb_status got;
    sentinel_params(&out);
    got = ebb_apbf_choose_blocked(window, fp, max_npws, B, b, &out);
    CHECK(got == want,
          "choose_blocked(%llu, %g, %g, B=%u, b=%u) = %d (%s), want %d (%s)",
          (unsigned long long)window, fp, max_npws, B, b, (int)got,
          ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(params_untouched(&out), "choose_blocked wrote on error");
}

/* Block shapes that are not (64 | 512, 1 | 2 | 4 | 8), nor (0, 0). */
static const uint32_t BAD_BLOCKS[][2] = {
    {0, 1},    {0, 4},   {0, 8},  /* b without B                  */
    {1, 1},    {32, 4},  {63, 4}, {65, 4}, {128, 4}, {256, 4},
    {511, 8},  {1024, 8}, {4096, 8}, {UINT32_MAX, 8}, /* bad B   */
    {64, 0},   {512, 0},  {64, 3},  {512, 3},  {64, 5}, {512, 6},
    {64, 16},  {512, 16}, {512, 32}, {64, 64}, {512, 512},
    {512, UINT32_MAX},                               /* bad b      */
};
#define BAD_BLOCK_COUNT (sizeof BAD_BLOCKS / sizeof BAD_BLOCKS[0])

static void sizing_rejects_bad_block_shapes(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < BAD_BLOCK_COUNT; i++) {
        expect_from_kl_blocked_fails(2, 5, 100000, BAD_BLOCKS[i][0],
                                     BAD_BLOCKS[i][1], EBB_EINVAL);
        expect_choose_blocked_fails(100000, 0.01, 0, BAD_BLOCKS[i][0],
                                    BAD_BLOCKS[i][1], EBB_EINVAL);
    }
    assert_int_equal(support_alloc_live_count(), 0);
}

static void sizing_rejects_bad_arguments_and_overflow(void **state) {
    const double bad_fp[] = {0.0, -0.01, 1.0, 1.5, NAN, INFINITY};
    size_t i;
    (void)state;
    expect_from_kl_blocked_fails(0, 5, 1000, 512, 8, EBB_EINVAL);
    expect_from_kl_blocked_fails(EBB_APBF_MAX_K + 1, 5, 1000, 512, 8,
                                 EBB_EINVAL);
    expect_from_kl_blocked_fails(2, 0, 1000, 512, 8, EBB_EINVAL);
    expect_from_kl_blocked_fails(2, EBB_APBF_MAX_L + 1, 1000, 64, 4,
                                 EBB_EINVAL);
    expect_from_kl_blocked_fails(2, 5, 0, 512, 8, EBB_EINVAL);
    expect_from_kl_blocked_fails(4, 3, UINT64_MAX, 512, 8, EBB_EOVERFLOW);
    expect_from_kl_blocked_fails(4, 3, UINT64_MAX, 64, 4, EBB_EOVERFLOW);
    expect_from_kl_blocked_fails(EBB_APBF_MAX_K, EBB_APBF_MAX_L, UINT64_MAX,
                                 64, 8, EBB_EOVERFLOW);
    /* 2^40 / 3 insertions per generation need about 2^40 / 3 * 2 / 44 * 512
     * > 2^40 bits per slice. */
    expect_from_kl_blocked_fails(2, 3, UINT64_C(1) << 42, 512, 8,
                                 EBB_EOVERFLOW);
    expect_choose_blocked_fails(0, 0.01, 0, 512, 8, EBB_EINVAL);
    for (i = 0; i < sizeof bad_fp / sizeof bad_fp[0]; i++)
        expect_choose_blocked_fails(1000, bad_fp[i], 0, 512, 8, EBB_EINVAL);
    expect_choose_blocked_fails(1000, 0.01, NAN, 512, 8, EBB_EINVAL);
    expect_choose_blocked_fails(1000, 0.01, 1e-9, 512, 8, EBB_EINVAL);
    expect_choose_blocked_fails(UINT64_MAX, 0.01, 0, 512, 8, EBB_EOVERFLOW);
    expect_choose_blocked_fails(UINT64_MAX, 0.01, 0, 64, 4, EBB_EOVERFLOW);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* (0, 0) through the blocked entry points is the plain filter. */
static void blocked_entry_points_with_no_block_are_plain(void **state) {
    ebb_apbf_params plain, via_blocked;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(7, 5, 12345, &plain), EBB_OK);
    assert_int_equal(ebb_apbf_params_from_kl_blocked(7, 5, 12345, 0, 0,
                                                     &via_blocked),
                     EBB_OK);
    assert_memory_equal(&plain, &via_blocked, sizeof plain);
    assert_int_equal(ebb_apbf_choose(50000, 0.001, 0, &plain), EBB_OK);
    assert_int_equal(
        ebb_apbf_choose_blocked(50000, 0.001, 0, 0, 0, &via_blocked), EBB_OK);
    assert_memory_equal(&plain, &via_blocked, sizeof plain);
    assert_int_equal(plain.block_bits, 0);
    assert_int_equal(plain.block_hashes, 0);
}

static void expect_create_fails(const ebb_apbf_params *p, ebb_status want,
                                const char *what) {
    ebb_apbf *out = OUT_SENTINEL;
    size_t bytes = 12345;
    ebb_status got = ebb_apbf_create(p, 1, &out);
    CHECK(got == want, "create (%s) = %d (%s), want %d (%s)", what, (int)got,
          ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(out == OUT_SENTINEL, "create (%s) wrote *out on error", what);
    CHECK(support_alloc_live_count() == 0, "create (%s) leaked", what);
    got = ebb_apbf_params_memory(p, &bytes);
    CHECK(got == want, "params_memory (%s) = %d (%s), want %d", what,
          (int)got, ebb_strerror(got), (int)want);
    CHECK(bytes == 12345, "params_memory (%s) wrote on error", what);
}

static void expect_create_works(const ebb_apbf_params *p, const char *what) {
    ebb_apbf *filter = NULL;
    ebb_status got = ebb_apbf_create(p, 1, &filter);
    CHECK(got == EBB_OK, "create (%s) = %s", what, ebb_strerror(got));
    ebb_apbf_destroy(filter);
}

static void create_rejects_inconsistent_blocked_shapes(void **state) {
    const ebb_apbf_params valid = blocked_params(3, 5, 1000, 512, 4);
    uint64_t blocks = valid.slice_bits / 512, cap;
    ebb_apbf_params p;
    size_t i;
    (void)state;
    expect_create_works(&valid, "valid");
    for (i = 0; i < BAD_BLOCK_COUNT; i++) {
        p = valid;
        p.block_bits = BAD_BLOCKS[i][0];
        p.block_hashes = BAD_BLOCKS[i][1];
        expect_create_fails(&p, EBB_EINVAL, "bad block shape");
    }
    /* Slices that are not whole blocks (the capacity only grows). */
    p = valid;
    p.slice_bits += 64;
    expect_create_fails(&p, EBB_EINVAL, "slice bits not a multiple of 512");
    p.slice_bits += 1;
    expect_create_fails(&p, EBB_EINVAL, "slice bits not a multiple of 64");
    p = blocked_params(3, 5, 1000, 64, 4);
    p.slice_bits += 32;
    expect_create_fails(&p, EBB_EINVAL, "slice bits not a multiple of 64 (B=64)");
    /* The generation at the capacity is accepted, one more is not. */
    cap = blocked_capacity(blocks, 3, 512, 4);
    assert_true(cap >= valid.generation);
    p = valid;
    p.generation = cap;
    p.window = 5 * cap;
    expect_create_works(&p, "generation at the blocked capacity");
    p.generation = cap + 1;
    p.window = 5 * (cap + 1);
    expect_create_fails(&p, EBB_EINVAL, "generation above the capacity");
    p.generation = 0;
    p.window = 0;
    expect_create_fails(&p, EBB_EINVAL, "generation 0");
    /* The plain capacity of the same bits is higher than the blocked one:
     * a blocked filter must not accept it. */
    p = valid;
    p.generation = (uint64_t)floor((double)valid.slice_bits * log(2.0) / 3);
    p.window = 5 * p.generation;
    assert_true(p.generation > cap);
    expect_create_fails(&p, EBB_EINVAL, "plain capacity on blocked slices");
    p = valid;
    p.window += 1;
    expect_create_fails(&p, EBB_EINVAL, "window != l g");
    p = valid;
    p.slice_bits = EBB_APBF_MAX_SLICE_BITS + 512;
    expect_create_fails(&p, EBB_EINVAL, "slice bits above the limit");
}

static void sizing_gives_the_fewest_blocks(void **state) {
    static const uint64_t windows[] = {1, 7, 100, 999, 12345, 1000000};
    size_t row, w;
    (void)state;
    for (row = 0; row < TABLE3_ROWS; row++) {
        for (w = 0; w < sizeof windows / sizeof windows[0]; w++) {
            uint32_t k = TABLE3[row][0], l = TABLE3[row][1];
            uint32_t B = TABLE3[row][2], b = TABLE3[row][3];
            ebb_apbf_params p = blocked_params(k, l, windows[w], B, b);
            uint64_t g = (windows[w] + l - 1) / l, blocks;
            assert_int_equal(p.k, k);
            assert_int_equal(p.l, l);
            assert_int_equal(p.block_bits, B);
            assert_int_equal(p.block_hashes, b);
            assert_int_equal(p.generation, g);
            assert_int_equal(p.window, (uint64_t)l * g);
            CHECK(p.slice_bits % B == 0, "slice bits %llu not whole blocks",
                  (unsigned long long)p.slice_bits);
            blocks = p.slice_bits / B;
            CHECK(blocked_capacity(blocks, k, B, b) >= g,
                  "(%u, %u, %u, %u): %llu blocks hold %llu < g = %llu", k, l,
                  B, b, (unsigned long long)blocks,
                  (unsigned long long)blocked_capacity(blocks, k, B, b),
                  (unsigned long long)g);
            CHECK(blocks == 1 || blocked_capacity(blocks - 1, k, B, b) < g,
                  "(%u, %u, %u, %u) window %llu: %llu blocks, one fewer would "
                  "do",
                  k, l, B, b, (unsigned long long)windows[w],
                  (unsigned long long)blocks);
            expect_create_works(&p, "sized shape");
        }
    }
}

/* ------------------------------------------------------------------------ */
/* No false negatives                                                       */
/* ------------------------------------------------------------------------ */

typedef struct stream_run {
    ebb_apbf *filter;
    ebb_apbf_params params;
    ebb_hash128 *hashes; /* hashes[i]: the i-th inserted key's */
    uint64_t inserted;
} stream_run;

static void expect_present(const stream_run *run, uint64_t index,
                           const char *why) {
    CHECK(ebb_apbf_contains_hash(run->filter, run->hashes[index]),
          "false negative (k=%u, l=%u, B=%u, b=%u, g=%llu): item %llu of "
          "%llu inserted (%s)",
          run->params.k, run->params.l, run->params.block_bits,
          run->params.block_hashes,
          (unsigned long long)run->params.generation,
          (unsigned long long)index, (unsigned long long)run->inserted, why);
}

static void check_after_insertion(const stream_run *run) {
    ebb_apbf_stats stats;
    uint64_t w = run->params.window, i;
    expect_present(run, run->inserted - 1, "the newest");
    if (run->inserted >= w)
        expect_present(run, run->inserted - w, "the oldest of the window");
    ebb_apbf_get_stats(run->filter, &stats);
    if (stats.in_generation == run->params.generation ||
        stats.in_generation == 1)
        for (i = run->inserted > w ? run->inserted - w : 0; i < run->inserted;
             i++)
            expect_present(run, i, "the whole window at a boundary");
}

static void run_stream(const ebb_apbf_params *params, uint64_t seed) {
    stream_run run;
    uint64_t total, i;
    run.params = *params;
    total = 10 * run.params.window + 3 * run.params.generation + 5;
    run.hashes = malloc(total * sizeof *run.hashes);
    assert_non_null(run.hashes);
    assert_int_equal(ebb_apbf_create(&run.params, seed, &run.filter), EBB_OK);
    for (i = 0; i < total; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i);
        run.hashes[i] = ebb_apbf_hash(run.filter, key.bytes, sizeof key.bytes);
    }
    for (run.inserted = 0; run.inserted < total;) {
        ebb_apbf_add_hash(run.filter, run.hashes[run.inserted]);
        run.inserted++;
        check_after_insertion(&run);
    }
    ebb_apbf_destroy(run.filter);
    free(run.hashes);
}

/* g = 16 (one or a few blocks per slice: crowded blocks) and g = 150
 * (about ten blocks per slice) for every row of Table 3. */
static void no_false_negatives_for_table3_shapes(void **state) {
    static const uint64_t generations[] = {16, 150};
    size_t row, s;
    (void)state;
    for (row = 0; row < TABLE3_ROWS; row++) {
        for (s = 0; s < 2; s++) {
            uint32_t l = TABLE3[row][1];
            ebb_apbf_params p =
                blocked_params(TABLE3[row][0], l, l * generations[s],
                               TABLE3[row][2], TABLE3[row][3]);
            assert_int_equal(p.generation, generations[s]);
            run_stream(&p, 100 + 2 * row + s);
        }
    }
}

/* The edges: k = 1, l = 1, b = 1 and 2, and a generation at the exact
 * blocked capacity (every block as full as the shape allows). */
static void no_false_negatives_at_the_edges(void **state) {
    static const uint32_t shapes[][4] = {{1, 1, 64, 1},  {1, 1, 512, 2},
                                         {1, 4, 64, 2},  {4, 1, 512, 1},
                                         {5, 2, 64, 8},  {2, 2, 512, 8}};
    size_t s;
    (void)state;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ebb_apbf_params p = blocked_params(shapes[s][0], shapes[s][1],
                                           shapes[s][1] * 20, shapes[s][2],
                                           shapes[s][3]);
        uint64_t cap = blocked_capacity(p.slice_bits / p.block_bits, p.k,
                                        p.block_bits, p.block_hashes);
        run_stream(&p, 7 + s);
        p.generation = cap;
        p.window = (uint64_t)p.l * cap;
        run_stream(&p, 70 + s);
    }
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                */
/* ------------------------------------------------------------------------ */

typedef struct snapshot {
    unsigned char *bytes;
    size_t size;
} snapshot;

static snapshot save(const ebb_apbf *filter) {
    snapshot s;
    size_t written = 0;
    s.size = ebb_apbf_snapshot_size(filter);
    s.bytes = malloc(s.size);
    assert_non_null(s.bytes);
    assert_int_equal(ebb_apbf_save(filter, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

static void assert_same_snapshot(const snapshot *a, const snapshot *b) {
    assert_int_equal(a->size, b->size);
    assert_memory_equal(a->bytes, b->bytes, a->size);
}

static uint64_t field(const snapshot *s, size_t offset, size_t width) {
    return support_get_le(s->bytes + offset, width);
}

static void add_keys(ebb_apbf *filter, uint32_t stream, uint64_t first,
                     uint64_t count) {
    uint64_t i;
    for (i = first; i < first + count; i++) {
        support_key key = support_key_make(stream, i);
        ebb_apbf_add(filter, key.bytes, sizeof key.bytes);
    }
}

static ebb_apbf *blocked_filter(uint32_t k, uint32_t l, uint64_t window,
                                uint32_t B, uint32_t b, uint64_t seed) {
    ebb_apbf_params p = blocked_params(k, l, window, B, b);
    ebb_apbf *filter = NULL;
    assert_int_equal(ebb_apbf_create(&p, seed, &filter), EBB_OK);
    return filter;
}

/* docs/format.md's worked example of family 2: k = 2, l = 3, B = 512,
 * b = 8, one block per slice: N = 32 + 64 + 5 * 64 + 8 = 424. */
static void layout_of_the_blocked_worked_example(void **state) {
    ebb_apbf *filter = blocked_filter(2, 3, 3, 512, 8, 99);
    snapshot s;
    (void)state;
    add_keys(filter, KEYS_INSERTED, 0, 5);
    assert_int_equal(ebb_apbf_snapshot_size(filter), 424);
    s = save(filter);
    assert_memory_equal(s.bytes, "EBBS", 4);
    assert_int_equal(field(&s, OFF_FAMILY, 2), 2);
    assert_int_equal(field(&s, OFF_PARAM_LEN, 4), APBBF_PARAM_LEN);
    assert_int_equal(field(&s, OFF_TOTAL, 8), 424);
    assert_int_equal(field(&s, OFF_PARAMS + 8, 8), 512);
    assert_int_equal(field(&s, OFF_PARAMS + P_BLOCK_BITS, 4), 512);
    assert_int_equal(field(&s, OFF_PARAMS + P_BLOCK_HASHES, 4), 8);
    assert_int_equal(field(&s, 416, 8), XXH3_64bits(s.bytes, 416));
    free(s.bytes);
    ebb_apbf_destroy(filter);
}

/* Both filters answer alike on the newest window keys and on fresh ones;
 * the window keys are all present. */
static void assert_same_answers(const ebb_apbf *a, const ebb_apbf *b,
                                uint64_t inserted, uint64_t window) {
    uint64_t i;
    for (i = 0; i < 4000; i++) {
        bool recent = i % 2 == 0;
        support_key key = recent
                              ? support_key_make(KEYS_INSERTED,
                                                 inserted - 1 - (i / 2) % window)
                              : support_key_make(KEYS_FRESH, i);
        bool in_a = ebb_apbf_contains(a, key.bytes, sizeof key.bytes);
        assert_int_equal(in_a, ebb_apbf_contains(b, key.bytes,
                                                 sizeof key.bytes));
        if (recent)
            assert_true(in_a);
    }
}

static void round_trip_is_bit_identical(void **state) {
    static const uint32_t shapes[][4] = {{3, 5, 64, 4}, {2, 5, 512, 8},
                                         {1, 2, 512, 1}, {4, 7, 64, 2}};
    size_t s;
    (void)state;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ebb_apbf *original = blocked_filter(shapes[s][0], shapes[s][1], 1000,
                                            shapes[s][2], shapes[s][3],
                                            4242 + s);
        ebb_apbf *loaded = OUT_SENTINEL;
        ebb_apbf_stats before, after;
        snapshot first, second;
        uint64_t inserted = 2500 + 37 * s, window;
        add_keys(original, KEYS_INSERTED, 0, inserted);
        ebb_apbf_get_stats(original, &before);
        window = before.params.window;
        first = save(original);
        assert_int_equal(field(&first, OFF_FAMILY, 2), 2);
        assert_int_equal(field(&first, OFF_PARAM_LEN, 4), APBBF_PARAM_LEN);
        assert_int_equal(field(&first, OFF_PARAMS + P_BLOCK_BITS, 4),
                         shapes[s][2]);
        assert_int_equal(field(&first, OFF_PARAMS + P_BLOCK_HASHES, 4),
                         shapes[s][3]);
        assert_int_equal(first.size,
                         FRAME_BYTES + APBBF_PARAM_LEN +
                             (shapes[s][0] + shapes[s][1]) *
                                 (before.params.slice_bits / 8));
        assert_int_equal(ebb_apbf_load(first.bytes, first.size, &loaded),
                         EBB_OK);
        assert_true(loaded != OUT_SENTINEL && loaded != NULL);
        second = save(loaded);
        assert_same_snapshot(&first, &second);
        ebb_apbf_get_stats(loaded, &after);
        assert_memory_equal(&before.params, &after.params,
                            sizeof before.params);
        assert_int_equal(before.insertions, after.insertions);
        assert_int_equal(before.in_generation, after.in_generation);
        assert_int_equal(before.memory_bytes, after.memory_bytes);
        assert_same_answers(original, loaded, inserted, window);

        /* The same future: the loaded filter writes the same blocks. */
        add_keys(original, KEYS_OTHER, 0, 777);
        add_keys(loaded, KEYS_OTHER, 0, 777);
        free(first.bytes);
        free(second.bytes);
        first = save(original);
        second = save(loaded);
        assert_same_snapshot(&first, &second);
        free(first.bytes);
        free(second.bytes);
        ebb_apbf_destroy(original);
        ebb_apbf_destroy(loaded);
    }
}

/* The control: a plain filter still writes family 1 with 56 bytes. */
static void plain_snapshots_stay_family_1(void **state) {
    ebb_apbf_params p;
    ebb_apbf *filter = NULL;
    snapshot s;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(3, 5, 1000, &p), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 5, &filter), EBB_OK);
    add_keys(filter, KEYS_INSERTED, 0, 100);
    s = save(filter);
    assert_int_equal(field(&s, OFF_FAMILY, 2), 1);
    assert_int_equal(field(&s, OFF_PARAM_LEN, 4), APBF_PARAM_LEN);
    free(s.bytes);
    ebb_apbf_destroy(filter);
}

static void forge_checksum(snapshot *s) {
    support_put_le(s->bytes + s->size - 8, 8,
                   XXH3_64bits(s->bytes, s->size - 8));
}

static void expect_load_fails(const snapshot *s, ebb_status want,
                              const char *what) {
    ebb_apbf *out = OUT_SENTINEL;
    uint64_t calls = support_alloc_calls();
    ebb_status got = ebb_apbf_load(s->bytes, s->size, &out);
    CHECK(got == want, "load (%s) = %d (%s), want %d (%s)", what, (int)got,
          ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(out == OUT_SENTINEL, "load (%s) wrote *out on error", what);
    CHECK(support_alloc_live_count() == 0, "load (%s) leaked", what);
    CHECK(support_alloc_calls() == calls, "load (%s) allocated", what);
}

static void expect_forged_corrupt(const snapshot *original, size_t offset,
                                  size_t width, uint64_t value,
                                  const char *what) {
    snapshot c;
    c.size = original->size;
    c.bytes = malloc(c.size);
    assert_non_null(c.bytes);
    memcpy(c.bytes, original->bytes, c.size);
    support_put_le(c.bytes + offset, width, value);
    forge_checksum(&c);
    expect_load_fails(&c, EBB_ECORRUPT, what);
    free(c.bytes);
}

static void rejects_corrupt_block_fields(void **state) {
    /* B = 512, b = 4 with g at the blocked capacity: more than 64-bit
     * blocks of the same bits could hold. */
    const size_t bits = OFF_PARAMS + P_BLOCK_BITS;
    const size_t hashes = OFF_PARAMS + P_BLOCK_HASHES;
    ebb_apbf_params p = blocked_params(3, 5, 2000, 512, 4);
    ebb_apbf *filter = NULL;
    snapshot s;
    (void)state;
    p.generation = blocked_capacity(p.slice_bits / 512, 3, 512, 4);
    p.window = 5 * p.generation;
    assert_int_equal(ebb_apbf_create(&p, 17, &filter), EBB_OK);
    add_keys(filter, KEYS_INSERTED, 0, 3 * p.generation + 7);
    s = save(filter);
    ebb_apbf_destroy(filter);

    /* Control: the forged checksum alone changes nothing. */
    {
        ebb_apbf *loaded = NULL;
        forge_checksum(&s);
        assert_int_equal(ebb_apbf_load(s.bytes, s.size, &loaded), EBB_OK);
        ebb_apbf_destroy(loaded);
    }
    expect_forged_corrupt(&s, bits, 4, 0, "B = 0");
    expect_forged_corrupt(&s, bits, 4, 128, "B = 128");
    expect_forged_corrupt(&s, bits, 4, 32, "B = 32");
    expect_forged_corrupt(&s, bits, 4, 1024, "B = 1024");
    expect_forged_corrupt(&s, bits, 4, 0xFFFFFFFFu, "B = 2^32-1");
    expect_forged_corrupt(&s, hashes, 4, 0, "b = 0");
    expect_forged_corrupt(&s, hashes, 4, 3, "b = 3");
    expect_forged_corrupt(&s, hashes, 4, 16, "b = 16");
    expect_forged_corrupt(&s, hashes, 4, 0xFFFFFFFFu, "b = 2^32-1");
    /* B = 0 and b = 0 together is the plain shape, but family 2 must carry
     * blocks. */
    {
        snapshot c;
        c.size = s.size;
        c.bytes = malloc(c.size);
        assert_non_null(c.bytes);
        memcpy(c.bytes, s.bytes, c.size);
        support_put_le(c.bytes + bits, 4, 0);
        support_put_le(c.bytes + hashes, 4, 0);
        forge_checksum(&c);
        expect_load_fails(&c, EBB_ECORRUPT, "B = 0, b = 0 in family 2");
        free(c.bytes);
    }
    /* 64-bit blocks: same bits, but the generation exceeds their capacity. */
    assert_true(blocked_capacity(p.slice_bits / 64, 3, 64, 4) < p.generation);
    expect_forged_corrupt(&s, bits, 4, 64, "B = 64 below the generation");
    /* A generation one above the blocked capacity. */
    expect_forged_corrupt(
        &s, OFF_PARAMS + P_GENERATION, 8,
        blocked_capacity(p.slice_bits / 512, 3, 512, 4) + 1,
        "g above the blocked capacity");
    /* Relabelled family 1: the parameter block is then the wrong length. */
    expect_forged_corrupt(&s, OFF_FAMILY, 2, 1, "blocked snapshot as family 1");
    expect_forged_corrupt(&s, OFF_PARAM_LEN, 4, APBF_PARAM_LEN, "P = 56");
    free(s.bytes);
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

static void stats_report_the_block_shape(void **state) {
    size_t row;
    (void)state;
    for (row = 0; row < TABLE3_ROWS; row += 3) {
        ebb_apbf_params p = blocked_params(TABLE3[row][0], TABLE3[row][1],
                                           5000, TABLE3[row][2],
                                           TABLE3[row][3]);
        ebb_apbf *filter = NULL;
        ebb_apbf_stats stats;
        size_t bytes;
        assert_int_equal(ebb_apbf_create(&p, 3, &filter), EBB_OK);
        add_keys(filter, KEYS_INSERTED, 0, 123);
        ebb_apbf_get_stats(filter, &stats);
        assert_memory_equal(&stats.params, &p, sizeof p);
        assert_int_equal(stats.params.block_bits, TABLE3[row][2]);
        assert_int_equal(stats.params.block_hashes, TABLE3[row][3]);
        assert_int_equal(stats.insertions, 123);
        assert_int_equal(ebb_apbf_params_memory(&p, &bytes), EBB_OK);
        assert_int_equal(stats.memory_bytes, bytes);
        assert_int_equal(ebb_apbf_memory(filter), bytes);
        CHECK(bytes >= (p.k + p.l) * (p.slice_bits / 8),
              "memory %zu below the bits", bytes);
        ebb_apbf_destroy(filter);
    }
}

/* ------------------------------------------------------------------------ */
/* Chooser                                                                  */
/* ------------------------------------------------------------------------ */

/* The chooser sizes with the design load (every block at the load where
 * its parts are half full after k generations). A window of 2^30
 * insertions per generation puts a shape within one block in ~10^8 of that
 * load, so its exact figures are the design figures. */
#define DESIGN_GENERATION (UINT64_C(1) << 30)
#define BRUTE_MAX_K 10u
#define BRUTE_MAX_L 64u

typedef struct design {
    double fp, npws;
} design;

static design design_of(uint32_t k, uint32_t l, uint32_t B, uint32_t b) {
    ebb_apbf_params p = blocked_params(k, l, l * DESIGN_GENERATION, B, b);
    design d;
    d.fp = ebb_apbf_shape_fp(&p);
    d.npws = ebb_apbf_shape_npws(&p);
    return d;
}

/* The design figures of (k, l) for every l <= BRUTE_MAX_L at once: every
 * such shape has g = 2^30 on the same number of blocks, so its k + l match
 * probabilities are the first k + l of (k, BRUTE_MAX_L)'s, and its peak
 * NPWS, sum_{i<k} r^i / l, scales as 1 / l. */
static void design_row(uint32_t k, uint32_t B, uint32_t b, design *row) {
    static double ratios[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    ebb_apbf_params p =
        blocked_params(k, BRUTE_MAX_L, BRUTE_MAX_L * DESIGN_GENERATION, B, b);
    double npws_at_max = ebb_apbf_shape_npws(&p);
    uint32_t l;
    assert_int_equal(ebb_apbf_shape_ratios(&p, ratios), EBB_OK);
    for (l = 1; l <= BRUTE_MAX_L; l++) {
        row[l].fp = ebb_apbf_fp_ratios(k, l, ratios);
        row[l].npws = npws_at_max * BRUTE_MAX_L / l;
    }
}

typedef struct target {
    uint64_t window;
    double fp, max_npws;
    uint32_t B, b;
} target;

static size_t memory_of(const ebb_apbf_params *p) {
    size_t bytes = 0;
    assert_int_equal(ebb_apbf_params_memory(p, &bytes), EBB_OK);
    return bytes;
}

/* The least memory of every (k <= 10, l <= 64) meeting the target. */
static size_t brute_force_least_memory(const target *t, uint32_t *best_k,
                                       uint32_t *best_l) {
    design row[BRUTE_MAX_L + 1];
    size_t best = SIZE_MAX;
    uint32_t k, l;
    for (k = 1; k <= BRUTE_MAX_K; k++) {
        design_row(k, t->B, t->b, row);
        for (l = 1; l <= BRUTE_MAX_L; l++) {
            ebb_apbf_params p;
            size_t bytes;
            if (!(row[l].fp <= t->fp) ||
                (t->max_npws > 0 && !(row[l].npws <= t->max_npws)))
                continue;
            p = blocked_params(k, l, t->window, t->B, t->b);
            bytes = memory_of(&p);
            if (bytes < best) {
                best = bytes;
                *best_k = k;
                *best_l = l;
            }
        }
    }
    return best;
}

static void check_choice(const target *t) {
    ebb_apbf_params chosen;
    uint32_t brute_k = 0, brute_l = 0;
    size_t brute, chosen_bytes;
    double fp;
    design d;
    ebb_status st = ebb_apbf_choose_blocked(t->window, t->fp, t->max_npws,
                                            t->B, t->b, &chosen);
    CHECK(st == EBB_OK, "choose_blocked(%llu, %g, %g, %u, %u) = %s",
          (unsigned long long)t->window, t->fp, t->max_npws, t->B, t->b,
          ebb_strerror(st));
    assert_int_equal(chosen.block_bits, t->B);
    assert_int_equal(chosen.block_hashes, t->b);
    CHECK(chosen.window >= t->window, "window %llu below %llu",
          (unsigned long long)chosen.window, (unsigned long long)t->window);
    expect_create_works(&chosen, "chosen shape");
    fp = ebb_apbf_shape_fp(&chosen);
    d = design_of(chosen.k, chosen.l, t->B, t->b);
    print_message("target w=%llu fp=%g npws<=%g B=%u b=%u: k=%u l=%u "
                  "shape fp %.6g design fp %.6g npws %.4g\n",
                  (unsigned long long)t->window, t->fp, t->max_npws, t->B,
                  t->b, chosen.k, chosen.l, fp, d.fp,
                  ebb_apbf_shape_npws(&chosen));
    CHECK(fp <= t->fp * 1.03, "(k=%u, l=%u): shape fp %.6g above the target "
          "%g", chosen.k, chosen.l, fp, t->fp);
    CHECK(d.fp <= t->fp, "(k=%u, l=%u): design fp %.6g above the target %g",
          chosen.k, chosen.l, d.fp, t->fp);
    if (t->max_npws > 0)
        CHECK(ebb_apbf_shape_npws(&chosen) <= t->max_npws,
              "(k=%u, l=%u): npws %.4g above %g", chosen.k, chosen.l,
              ebb_apbf_shape_npws(&chosen), t->max_npws);
    chosen_bytes = memory_of(&chosen);
    brute = brute_force_least_memory(t, &brute_k, &brute_l);
    CHECK(brute != SIZE_MAX, "no brute-force shape meets the target");
    CHECK(chosen_bytes <= brute,
          "choose_blocked(%llu, %g, %g, %u, %u) picked (k=%u, l=%u) with %zu "
          "bytes; (k=%u, l=%u) meets the target with %zu bytes",
          (unsigned long long)t->window, t->fp, t->max_npws, t->B, t->b,
          chosen.k, chosen.l, chosen_bytes, brute_k, brute_l, brute);
}

static void chooser_meets_its_target_with_least_memory(void **state) {
    static const target targets[] = {
        {100000, 0.01, 0, 512, 8},
        {100000, 0.001, 0, 64, 4},
        {1000000, 0.02, 0, 512, 4},
    };
    size_t t;
    (void)state;
    for (t = 0; t < sizeof targets / sizeof targets[0]; t++)
        check_choice(&targets[t]);
}

/* With an NPWS bound the chooser must still find the least memory among
 * the shapes whose peak NPWS (ebb_apbf_shape_npws, the paper's Table 3
 * column) meets it. */
static void chooser_with_npws_bound_has_least_memory(void **state) {
    static const target targets[] = {
        {100000, 0.01, 0.15, 64, 4},
        {1000000, 0.02, 0.25, 512, 4},
    };
    size_t t;
    (void)state;
    for (t = 0; t < sizeof targets / sizeof targets[0]; t++)
        check_choice(&targets[t]);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(sizing_rejects_bad_block_shapes),
        TEST(sizing_rejects_bad_arguments_and_overflow),
        TEST(blocked_entry_points_with_no_block_are_plain),
        TEST(create_rejects_inconsistent_blocked_shapes),
        TEST(sizing_gives_the_fewest_blocks),
        TEST(no_false_negatives_for_table3_shapes),
        TEST(no_false_negatives_at_the_edges),
        TEST(layout_of_the_blocked_worked_example),
        TEST(round_trip_is_bit_identical),
        TEST(plain_snapshots_stay_family_1),
        TEST(rejects_corrupt_block_fields),
        TEST(stats_report_the_block_shape),
        TEST(chooser_meets_its_target_with_least_memory),
        TEST(chooser_with_npws_bound_has_least_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
