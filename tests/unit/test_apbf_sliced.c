/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_sliced.c: the APBF's bit-sliced layout (src/apbf/sliced.c).
 *
 *   - creation resolves cell_bits to the smallest of 16/32/64/128 holding
 *     k + l + 1 planes, keeps a larger valid one, and refuses the rest
 *     (EBB_EINVAL); stats, memory and contains_counted (k reads) agree;
 *   - for shapes from (1, 1) to (12, 88) the sliced filter and the ring with
 *     residue hashing (ebb_apbf_set_residue_hashing) give the same answer to
 *     every contains and check-and-add over 12 windows of adds (shifts and
 *     one clear included), and the last w keys are always found;
 *   - the worst-moment false-positive rate on never-inserted keys is within
 *     4 binomial standard deviations of ebb_apbf_shape_fp, as is the
 *     production ring's (position hashing) at the same moments;
 *   - the batch forms and the one-call check_and_add equal the
 *     one-call contains/add sequences (byte-identical snapshots after
 *     adds, identical answers and counts);
 *   - snapshots (family 7) round-trip bit-identically, with identical
 *     answers and identical states after more adds; save_to streams save's
 *     bytes; truncated and forged inputs are refused; allocation failures
 *     leave nothing allocated.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apbf/apbf_internal.h" /* the residue-hashing test hook */
#include "core/codec.h"
#include "ebb/ebb.h"
#include "support.h"

/* ---- Helpers --------------------------------------------------------- */

static ebb_apbf_params klm(uint32_t k, uint32_t l, uint64_t m,
                           uint32_t layout)
{
    ebb_apbf_params p;
    assert_int_equal(ebb_apbf_params_from_klm(k, l, m, &p), EBB_OK);
    p.layout = layout;
    return p;
}

static ebb_apbf *make(const ebb_apbf_params *p, uint64_t seed)
{
    ebb_apbf *f = NULL;
    assert_int_equal(ebb_apbf_create(p, seed, &f), EBB_OK);
    return f;
}

/* Key number i of a stream, as the filter hashes it. */
static ebb_hash128 key_hash(const ebb_apbf *f, uint32_t stream, uint64_t i)
{
    support_key key = support_key_make(stream, i);
    return ebb_apbf_hash(f, key.bytes, sizeof key.bytes);
}

static support_snap snap_of(const ebb_apbf *f)
{
    support_snap s = support_snap_alloc(ebb_apbf_snapshot_size(f));
    size_t written = 0;
    assert_int_equal(ebb_apbf_save(f, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

static void assert_same_state(const ebb_apbf *a, const ebb_apbf *b)
{
    support_snap sa = snap_of(a), sb = snap_of(b);
    support_snap_assert_same(&sa, &sb);
}

/* ---- Creation -------------------------------------------------------- */

static void expect_cell_bits(uint32_t k, uint32_t l, uint32_t asked,
                             uint32_t expected)
{
    ebb_apbf_params p = klm(k, l, 1000, EBB_APBF_LAYOUT_SLICED);
    p.cell_bits = asked;
    ebb_apbf *f = NULL;
    ebb_status st = ebb_apbf_create(&p, 7, &f);
    if (expected == 0) {
        CHECK(st == EBB_EINVAL, "(%u, %u) W %u: status %d", k, l, asked,
              (int)st);
        assert_null(f);
        return;
    }
    assert_int_equal(st, EBB_OK);
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(f, &stats);
    CHECK(stats.params.cell_bits == expected, "(%u, %u) asked %u: W %u", k,
          l, asked, stats.params.cell_bits);
    assert_int_equal(stats.params.layout, EBB_APBF_LAYOUT_SLICED);
    size_t bytes;
    assert_int_equal(ebb_apbf_params_memory(&p, &bytes), EBB_OK);
    assert_int_equal(bytes, ebb_apbf_memory(f));
    assert_int_equal(stats.memory_bytes, bytes);
    assert_true(bytes >= 1000u * expected / 8u);
    uint32_t accesses = 0;
    ebb_apbf_add(f, "x", 1);
    assert_true(ebb_apbf_contains_counted(f, ebb_apbf_hash(f, "x", 1),
                                          &accesses));
    assert_int_equal(accesses, k);
    ebb_apbf_destroy(f);
}

static void create_resolves_and_refuses(void **state)
{
    (void)state;
    expect_cell_bits(8, 8, 0, 32);   /* 17 planes */
    expect_cell_bits(7, 8, 0, 16);   /* 16: full */
    expect_cell_bits(1, 1, 0, 16);
    expect_cell_bits(20, 43, 0, 64); /* 64: full */
    expect_cell_bits(12, 88, 0, 128);
    expect_cell_bits(64, 63, 0, 128); /* 128: the largest */
    expect_cell_bits(8, 8, 64, 64);
    expect_cell_bits(8, 8, 128, 128);
    expect_cell_bits(8, 8, 16, 0);   /* too narrow */
    expect_cell_bits(8, 8, 24, 0);   /* not a width */
    expect_cell_bits(8, 8, 256, 0);
    expect_cell_bits(64, 64, 0, 0);  /* 129 planes */
    expect_cell_bits(10, 1024, 0, 0);

    ebb_apbf_params p;
    ebb_apbf *f = NULL;
    assert_int_equal(ebb_apbf_params_from_kl_blocked(4, 4, 1000, 512, 8, &p),
                     EBB_OK);
    p.layout = EBB_APBF_LAYOUT_SLICED;
    assert_int_equal(ebb_apbf_create(&p, 1, &f), EBB_EINVAL);
    p = klm(4, 4, 1000, 2); /* no such layout */
    assert_int_equal(ebb_apbf_create(&p, 1, &f), EBB_EINVAL);
    p = klm(4, 4, 1000, EBB_APBF_LAYOUT_RING);
    p.cell_bits = 16; /* cells are for SLICED */
    assert_int_equal(ebb_apbf_create(&p, 1, &f), EBB_EINVAL);
    assert_null(f);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* ---- Equivalence with the ring --------------------------------------- */

typedef struct twin {
    ebb_apbf *ring;   /* RING + residue hashing */
    ebb_apbf *sliced;
    uint64_t compared, positives, negatives;
} twin;

static bool twin_contains(twin *t, uint32_t stream, uint64_t i)
{
    ebb_hash128 h = key_hash(t->ring, stream, i);
    bool a = ebb_apbf_contains_hash(t->ring, h);
    bool b = ebb_apbf_contains_hash(t->sliced, h);
    CHECK(a == b, "key (%u, %llu): ring %d, sliced %d", stream,
          (unsigned long long)i, a, b);
    t->compared++;
    t->positives += a;
    t->negatives += !a;
    return a;
}

static void twin_add(twin *t, uint32_t stream, uint64_t i)
{
    ebb_hash128 h = key_hash(t->ring, stream, i);
    ebb_apbf_add_hash(t->ring, h);
    ebb_apbf_add_hash(t->sliced, h);
}

/* The last w insertions (log[0..n)) are all found by both. */
static void twin_window_found(twin *t, const uint64_t *log, uint64_t n,
                              uint64_t w)
{
    for (uint64_t i = n > w ? n - w : 0; i < n; i++) {
        uint32_t stream = (uint32_t)(log[i] >> 48);
        uint64_t index = log[i] & ((UINT64_C(1) << 48) - 1);
        CHECK(twin_contains(t, stream, index), "false negative at %llu of %llu",
              (unsigned long long)i, (unsigned long long)n);
    }
}

static void run_equivalence(uint32_t k, uint32_t l, uint64_t m)
{
    ebb_apbf_params p = klm(k, l, m, EBB_APBF_LAYOUT_RING);
    twin t = {make(&p, 11), NULL, 0, 0, 0};
    ebb_apbf_set_residue_hashing(t.ring);
    assert_int_equal(t.ring->path, EBB_APBF_PATH_GENERIC);
    p.layout = EBB_APBF_LAYOUT_SLICED;
    t.sliced = make(&p, 11);

    uint64_t w = p.window, steps = 12 * w + 3;
    uint64_t *log = malloc((size_t)steps * sizeof *log);
    assert_non_null(log);
    uint64_t logged = 0, fresh = 0, rng = 1000 + k * 131 + l;
    for (uint64_t s = 0; s < steps; s++) {
        uint64_t r = support_splitmix64(&rng);
        uint64_t back = logged == 0 ? 0 : (r >> 8) % (logged < 3 * w ? logged
                                                                     : 3 * w);
        uint64_t old = logged == 0 ? 0 : log[logged - 1 - back];
        uint32_t stream = (uint32_t)(old >> 48);
        uint64_t index = old & ((UINT64_C(1) << 48) - 1);
        switch (r % 8) {
        case 0: case 1: case 2: /* a new key */
            twin_add(&t, KEYS_INSERTED, s);
            log[logged++] = ((uint64_t)KEYS_INSERTED << 48) | s;
            break;
        case 3: /* check-and-add of a recent or older key */
            if (logged == 0)
                break;
            (void)twin_contains(&t, stream, index);
            twin_add(&t, stream, index);
            log[logged++] = old;
            break;
        case 4: case 5: /* a key inserted up to 3 w ago */
            if (logged > 0)
                (void)twin_contains(&t, stream, index);
            break;
        default: /* never inserted */
            (void)twin_contains(&t, KEYS_FRESH, fresh++);
            break;
        }
        if (s == 6 * w) { /* a clear edge: both start over */
            ebb_apbf_clear(t.ring);
            ebb_apbf_clear(t.sliced);
            logged = 0;
        }
        if (s % (w / 2 + 1) == 0)
            twin_window_found(&t, log, logged, w);
        ebb_apbf_stats a, b;
        ebb_apbf_get_stats(t.ring, &a);
        ebb_apbf_get_stats(t.sliced, &b);
        assert_int_equal(a.insertions, b.insertions);
        assert_int_equal(a.generations, b.generations);
        assert_int_equal(a.in_generation, b.in_generation);
    }
    twin_window_found(&t, log, logged, w);
    /* Not a vacuous comparison: both answers occurred, shifts happened. */
    CHECK(t.positives > 0 && t.negatives > 0 && t.compared > 4 * w,
          "(%u, %u): %llu compared, %llu positive", k, l,
          (unsigned long long)t.compared, (unsigned long long)t.positives);
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(t.sliced, &stats);
    CHECK(stats.generations >= (uint64_t)2 * l, "(%u, %u): %llu shifts", k,
          l, (unsigned long long)stats.generations); /* since the clear */
    free(log);
    ebb_apbf_destroy(t.ring);
    ebb_apbf_destroy(t.sliced);
}

static void sliced_answers_as_residue_ring(void **state)
{
    (void)state;
    run_equivalence(1, 1, 40);
    run_equivalence(2, 3, 64);
    run_equivalence(3, 4, 100);
    run_equivalence(7, 5, 200);
    run_equivalence(8, 8, 333);
    run_equivalence(10, 7, 257);
    run_equivalence(5, 58, 128);  /* W = 64 */
    run_equivalence(12, 88, 300); /* W = 128 */
    run_equivalence(64, 63, 500); /* 128 planes, k = MAX_K */
    assert_int_equal(support_alloc_live_count(), 0);
}

/* ---- False positives ------------------------------------------------- */

/* Never-inserted keys at the worst moment (the generation full, just before
 * a shift), pooled over `rounds` moments of a filter fed distinct keys. */
static void fp_at_worst_moments(uint32_t k, uint32_t l, uint64_t m,
                                uint32_t layout)
{
    ebb_apbf_params p = klm(k, l, m, layout);
    ebb_apbf *f = make(&p, 99);
    const uint32_t rounds = 10;
    const uint64_t probes = 20000;
    uint64_t added = 0, hits = 0, fresh = 0;
    for (uint64_t i = 0; i < (uint64_t)(k + l + 1) * p.generation; i++)
        ebb_apbf_add_hash(f, key_hash(f, KEYS_INSERTED, added++));
    for (uint32_t r = 0; r < rounds; r++) {
        while (f->in_generation < f->generation)
            ebb_apbf_add_hash(f, key_hash(f, KEYS_INSERTED, added++));
        for (uint64_t q = 0; q < probes; q++)
            hits += ebb_apbf_contains_hash(f, key_hash(f, KEYS_FRESH,
                                                       fresh++));
        ebb_apbf_add_hash(f, key_hash(f, KEYS_INSERTED, added++)); /* shift */
    }
    double n = (double)rounds * (double)probes;
    double rate = (double)hits / n;
    double expected = ebb_apbf_shape_fp(&p);
    double sd = sqrt(expected * (1 - expected) / n);
    print_message("(%u, %u) m %llu %s: fp %.5f, F %.5f, sd %.5f\n", k, l,
                  (unsigned long long)m,
                  layout == EBB_APBF_LAYOUT_SLICED ? "sliced" : "ring",
                  rate, expected, sd);
    CHECK(fabs(rate - expected) <= 4 * sd, "(%u, %u) %u: fp %.5f, F %.5f", k,
          l, layout, rate, expected);
    ebb_apbf_destroy(f);
}

static void sliced_fp_matches_the_analysis(void **state)
{
    (void)state;
    fp_at_worst_moments(8, 8, 16384, EBB_APBF_LAYOUT_SLICED);
    fp_at_worst_moments(8, 8, 16384, EBB_APBF_LAYOUT_RING);
    fp_at_worst_moments(4, 5, 8192, EBB_APBF_LAYOUT_SLICED);
    fp_at_worst_moments(4, 5, 8192, EBB_APBF_LAYOUT_RING);
    fp_at_worst_moments(10, 40, 8192, EBB_APBF_LAYOUT_SLICED); /* W = 64 */
    fp_at_worst_moments(12, 88, 8192, EBB_APBF_LAYOUT_SLICED); /* W = 128 */
    assert_int_equal(support_alloc_live_count(), 0);
}

/* ---- Batches ----------------------------------------------------------- */

static const size_t CHUNKS[] = {1, 2, 3, 7, 8, 9, 16, 17, 100, 255};
#define CHUNK_KINDS (sizeof CHUNKS / sizeof CHUNKS[0])

static void run_batches(uint32_t k, uint32_t l, uint64_t m)
{
    ebb_apbf_params p = klm(k, l, m, EBB_APBF_LAYOUT_SLICED);
    ebb_apbf *one = make(&p, 5), *batch = make(&p, 5), *fused = make(&p, 5);
    uint64_t total = 6 * p.window, next = 0, rng = k * 7 + l, fresh = 0;
    ebb_hash128 h[255];
    bool out[255];
    for (size_t c = 0; next < total; c++) {
        size_t n = CHUNKS[c % CHUNK_KINDS];
        for (size_t i = 0; i < n; i++) { /* new keys, some repeated */
            uint64_t r = support_splitmix64(&rng);
            h[i] = r % 4 == 0 && next > 0
                       ? key_hash(one, KEYS_INSERTED, (r >> 8) % next)
                   : r % 4 == 1 ? key_hash(one, KEYS_FRESH, fresh++)
                                : key_hash(one, KEYS_INSERTED, next++);
        }
        if (c % 3 == 0) {
            ebb_apbf_add_batch(batch, h, n);
            for (size_t i = 0; i < n; i++) {
                ebb_apbf_add_hash(one, h[i]);
                ebb_apbf_add_hash(fused, h[i]);
            }
        } else if (c % 3 == 1) {
            size_t seen = ebb_apbf_check_and_add_batch(batch, h, n,
                                                       c % 2 ? out : NULL);
            size_t expect = 0;
            for (size_t i = 0; i < n; i++) {
                bool hit = ebb_apbf_contains_hash(one, h[i]);
                ebb_apbf_add_hash(one, h[i]);
                CHECK(ebb_apbf_check_and_add_hash(fused, h[i]) == hit,
                      "one-call check_and_add %zu of %zu", i, n);
                if (c % 2)
                    CHECK(out[i] == hit, "check_and_add %zu of %zu", i, n);
                expect += hit;
            }
            assert_int_equal(seen, expect);
        } else {
            size_t found = ebb_apbf_contains_batch(batch, h, n, out);
            size_t expect = 0;
            for (size_t i = 0; i < n; i++) {
                bool hit = ebb_apbf_contains_hash(one, h[i]);
                CHECK(out[i] == hit, "contains %zu of %zu", i, n);
                expect += hit;
            }
            assert_int_equal(found, expect);
        }
        if (c % 7 == 0) {
            assert_same_state(one, batch);
            assert_same_state(one, fused);
        }
    }
    assert_same_state(one, batch);
    assert_same_state(one, fused);
    ebb_apbf_destroy(one);
    ebb_apbf_destroy(batch);
    ebb_apbf_destroy(fused);
}

static void sliced_batches_are_one_call_sequences(void **state)
{
    (void)state;
    run_batches(3, 4, 300);    /* W = 16 */
    run_batches(8, 8, 512);    /* W = 32 */
    run_batches(20, 43, 1000); /* W = 64 */
    run_batches(12, 88, 700);  /* W = 128 */
    run_batches(1, 1, 50);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* ---- Snapshots --------------------------------------------------------- */

#define AT_K 32u
#define AT_L 36u
#define AT_M 40u
#define AT_G 48u
#define AT_INSERTIONS 56u
#define AT_GENERATIONS 64u
#define AT_IN_GENERATION 72u
#define AT_BASE 80u
#define AT_W 84u
#define AT_CURSOR 88u
#define AT_CELLS 96u

typedef struct collected {
    unsigned char *bytes;
    size_t length;
} collected;

static ebb_status collect(void *user, const void *bytes, size_t len)
{
    collected *c = user;
    assert_true(len >= 1 && len <= EBB_SAVE_PIECE_MAX);
    c->bytes = realloc(c->bytes, c->length + len);
    assert_non_null(c->bytes);
    memcpy(c->bytes + c->length, bytes, len);
    c->length += len;
    return EBB_OK;
}

static void check_round_trip(ebb_apbf *f)
{
    support_snap s = snap_of(f);
    assert_int_equal(support_get_le(s.bytes + 6, 2), EBB_FAMILY_APBF_SLICED);
    collected c = {NULL, 0};
    assert_int_equal(ebb_apbf_save_to(f, collect, &c), EBB_OK);
    assert_int_equal(c.length, s.size);
    assert_memory_equal(c.bytes, s.bytes, s.size);
    free(c.bytes);

    ebb_apbf *g = NULL;
    assert_int_equal(ebb_apbf_load(s.bytes, s.size, &g), EBB_OK);
    support_snap again = snap_of(g);
    support_snap_assert_same(&s, &again);
    for (uint64_t i = 0; i < 400; i++) {
        ebb_hash128 h = key_hash(f, i % 2 ? KEYS_INSERTED : KEYS_FRESH, i);
        assert_int_equal(ebb_apbf_contains_hash(f, h),
                         ebb_apbf_contains_hash(g, h));
    }
    /* The state goes on identically: cursor, plane ring and masks. */
    for (uint64_t i = 0; i < 3 * f->generation + 1; i++) {
        ebb_hash128 h = key_hash(f, KEYS_OTHER, i);
        ebb_apbf_add_hash(f, h);
        ebb_apbf_add_hash(g, h);
    }
    assert_same_state(f, g);
    ebb_apbf_destroy(g);
}

static void add_n(ebb_apbf *f, uint64_t n, uint64_t from)
{
    for (uint64_t i = 0; i < n; i++)
        ebb_apbf_add_hash(f, key_hash(f, KEYS_INSERTED, from + i));
}

static void sliced_snapshots_round_trip(void **state)
{
    (void)state;
    static const uint32_t shapes[][3] = {
        {3, 4, 300}, {8, 8, 512}, {20, 43, 999}, {12, 88, 700}, {1, 1, 9}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ebb_apbf_params p = klm(shapes[s][0], shapes[s][1], shapes[s][2],
                                EBB_APBF_LAYOUT_SLICED);
        ebb_apbf *f = make(&p, 1234 + s);
        check_round_trip(f);                       /* fresh */
        add_n(f, p.generation / 2 + 1, 0);
        check_round_trip(f);                       /* first generation */
        add_n(f, 3 * p.window + p.generation / 3, 100000);
        check_round_trip(f);                       /* cursor mid-way */
        ebb_apbf_clear(f);
        add_n(f, 2, 900000);
        check_round_trip(f);                       /* after a clear */
        ebb_apbf_destroy(f);
    }
    assert_int_equal(support_alloc_live_count(), 0);
}

/* A snapshot of a (8, 8) filter (W = 32, P = 17) with the cursor mid-way. */
static support_snap sample_snapshot(void)
{
    ebb_apbf_params p = klm(8, 8, 200, EBB_APBF_LAYOUT_SLICED);
    ebb_apbf *f = make(&p, 3);
    add_n(f, 4 * p.generation + p.generation / 2, 0);
    assert_true(f->cursor > 0 && f->cursor < f->slice_bits);
    support_snap s = snap_of(f);
    ebb_apbf_destroy(f);
    return s;
}

static void expect_refused(const support_snap *good, size_t at, size_t width,
                           uint64_t value, ebb_status expected)
{
    support_snap s = support_snap_alloc(good->size);
    memcpy(s.bytes, good->bytes, good->size);
    support_put_le(s.bytes + at, width, value);
    support_snap_forge_checksum(&s);
    ebb_apbf *f = NULL;
    ebb_status st = ebb_apbf_load(s.bytes, s.size, &f);
    CHECK(st == expected, "byte %zu := %llu: status %d", at,
          (unsigned long long)value, (int)st);
    assert_null(f);
    support_snap_free(&s);
    assert_int_equal(support_alloc_live_count(), 0);
}

static void sliced_snapshots_refuse_bad_input(void **state)
{
    (void)state;
    support_snap good = sample_snapshot();
    ebb_apbf *f = NULL;
    for (size_t len = 0; len < good.size; len++) {
        ebb_status st = ebb_apbf_load(good.bytes, len, &f);
        CHECK(st != EBB_OK, "prefix of %zu bytes loaded", len);
        assert_null(f);
    }
    good.bytes[AT_CELLS + 5] ^= 1u; /* a cell's bit, checksum not redone */
    assert_int_equal(ebb_apbf_load(good.bytes, good.size, &f), EBB_ECHECKSUM);
    good.bytes[AT_CELLS + 5] ^= 1u;

    uint64_t m = support_get_le(good.bytes + AT_M, 8);
    uint64_t g = support_get_le(good.bytes + AT_G, 8);
    uint64_t ins = support_get_le(good.bytes + AT_INSERTIONS, 8);
    uint64_t cursor = support_get_le(good.bytes + AT_CURSOR, 8);
    uint32_t base = (uint32_t)support_get_le(good.bytes + AT_BASE, 4);
    uint32_t spare = (base + 16u) % 17u;
    expect_refused(&good, AT_K, 4, 0, EBB_ECORRUPT);
    expect_refused(&good, AT_K, 4, 65, EBB_ECORRUPT);
    expect_refused(&good, AT_L, 4, 30, EBB_ECORRUPT); /* 39 planes > W */
    expect_refused(&good, AT_M, 8, m + 1, EBB_ECORRUPT);
    expect_refused(&good, AT_G, 8, g + 1000, EBB_ECORRUPT);
    expect_refused(&good, AT_INSERTIONS, 8, 0, EBB_ECORRUPT);
    expect_refused(&good, AT_GENERATIONS, 8, ins + 1, EBB_ECORRUPT);
    expect_refused(&good, AT_IN_GENERATION, 8, g + 1, EBB_ECORRUPT);
    expect_refused(&good, AT_BASE, 4, 17, EBB_ECORRUPT);
    expect_refused(&good, AT_W, 4, 0, EBB_ECORRUPT);
    expect_refused(&good, AT_W, 4, 16, EBB_ECORRUPT);
    expect_refused(&good, AT_W, 4, 24, EBB_ECORRUPT);
    expect_refused(&good, AT_W, 4, 64, EBB_ECORRUPT); /* payload length */
    expect_refused(&good, AT_CURSOR, 8, m + 1, EBB_ECORRUPT);
    /* A bit in an unused plane (17..31) of the last cell. */
    uint64_t last = support_get_le(good.bytes + AT_CELLS + (m - 1) * 4, 4);
    expect_refused(&good, AT_CELLS + (m - 1) * 4, 4, last | (1u << 20),
                   EBB_ECORRUPT);
    /* The spare plane's bit in a cell the cursor already cleared. */
    uint64_t first = support_get_le(good.bytes + AT_CELLS, 4);
    expect_refused(&good, AT_CELLS, 4, first | (UINT64_C(1) << spare),
                   EBB_ECORRUPT);
    /* ... accepted at and past the cursor. */
    support_snap ok = support_snap_alloc(good.size);
    memcpy(ok.bytes, good.bytes, good.size);
    size_t at = AT_CELLS + cursor * 4;
    support_put_le(ok.bytes + at, 4,
                   support_get_le(ok.bytes + at, 4) | (UINT64_C(1) << spare));
    support_snap_forge_checksum(&ok);
    assert_int_equal(ebb_apbf_load(ok.bytes, ok.size, &f), EBB_OK);
    ebb_apbf_destroy(f);
    support_snap_free(&ok);
    support_snap_free(&good);
    assert_int_equal(support_alloc_live_count(), 0);
}

static void sliced_survives_allocation_failures(void **state)
{
    (void)state;
    ebb_apbf_params p = klm(8, 8, 200, EBB_APBF_LAYOUT_SLICED);
    ebb_apbf *f = NULL;
    for (uint64_t n = 1; n <= 2; n++) {
        support_alloc_fail_nth(n, false);
        assert_int_equal(ebb_apbf_create(&p, 1, &f), EBB_ENOMEM);
        assert_null(f);
        assert_int_equal(support_alloc_live_count(), 0);
    }
    support_snap s = sample_snapshot();
    for (uint64_t n = 1; n <= 2; n++) {
        support_alloc_fail_nth(n, false);
        assert_int_equal(ebb_apbf_load(s.bytes, s.size, &f), EBB_ENOMEM);
        assert_null(f);
        assert_int_equal(support_alloc_live_count(), 0);
    }
    support_alloc_fail_nth(0, false);
    assert_int_equal(ebb_apbf_load(s.bytes, s.size, &f), EBB_OK);
    ebb_apbf_destroy(f);
    support_snap_free(&s);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(create_resolves_and_refuses),
        TEST(sliced_answers_as_residue_ring),
        TEST(sliced_fp_matches_the_analysis),
        TEST(sliced_batches_are_one_call_sequences),
        TEST(sliced_snapshots_round_trip),
        TEST(sliced_snapshots_refuse_bad_input),
        TEST(sliced_survives_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
