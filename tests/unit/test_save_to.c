/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_save_to.c: streaming saves (ebb_<family>_save_to) of every family.
 *
 * For several shapes of each family, with payloads from under one piece to
 * many pieces: the pieces are the bytes ebb_<family>_save writes, in order,
 * each 1 to EBB_SAVE_PIECE_MAX bytes; the library allocates nothing while
 * streaming (counted, and every allocation made to fail); a sink that
 * refuses piece i stops the save there with its status and is not called
 * again; NULL arguments are EBB_EINVAL before the sink is called.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ebb/spectral.h"
#include "support.h"

/* ---- A sink that collects the pieces (on libc's heap, not counted) ------ */

typedef struct collector {
    unsigned char *bytes;
    size_t length, capacity;
    size_t pieces;
    size_t fail_at;        /* 1-based piece to refuse; 0: never       */
    size_t calls_after;    /* calls after the refusal (must stay 0)  */
    bool refused;
} collector;

#define REFUSAL EBB_ELIMIT

static ebb_status collect(void *user, const void *bytes, size_t len)
{
    collector *c = user;
    if (c->refused) {
        c->calls_after++;
        return REFUSAL;
    }
    assert_true(len >= 1 && len <= EBB_SAVE_PIECE_MAX);
    c->pieces++;
    if (c->pieces == c->fail_at) {
        c->refused = true;
        return REFUSAL;
    }
    if (c->length + len > c->capacity) {
        c->capacity = (c->length + len) * 2;
        c->bytes = realloc(c->bytes, c->capacity);
        assert_non_null(c->bytes);
    }
    memcpy(c->bytes + c->length, bytes, len);
    c->length += len;
    return EBB_OK;
}

/* ---- Each family behind one interface ----------------------------------- */

typedef struct family {
    size_t (*size)(const void *filter);
    ebb_status (*save)(const void *filter, void *buf, size_t capacity,
                       size_t *written);
    ebb_status (*save_to)(const void *filter, ebb_save_sink sink,
                          void *user);
} family;

#define FAMILY(prefix)                                                         \
    static size_t prefix##_size(const void *f)                                 \
    {                                                                          \
        return ebb_##prefix##_snapshot_size(f);                                \
    }                                                                          \
    static ebb_status prefix##_save(const void *f, void *buf, size_t cap,      \
                                    size_t *written)                           \
    {                                                                          \
        return ebb_##prefix##_save(f, buf, cap, written);                      \
    }                                                                          \
    static ebb_status prefix##_save_to(const void *f, ebb_save_sink sink,      \
                                       void *user)                             \
    {                                                                          \
        return ebb_##prefix##_save_to(f, sink, user);                          \
    }                                                                          \
    static const family prefix##_family = {prefix##_size, prefix##_save,       \
                                           prefix##_save_to}

FAMILY(apbf);
FAMILY(tlbf);
FAMILY(stable);
FAMILY(timing);
FAMILY(spectral);

/* ---- The checks ---------------------------------------------------------- */

/* save_to gives save's bytes, in pieces, allocating nothing; returns the
 * number of pieces. */
static size_t check_identical(const family *fam, const void *f)
{
    size_t size = fam->size(f);
    support_snap want = support_snap_alloc(size);
    size_t written = 0;
    assert_int_equal(fam->save(f, want.bytes, want.size, &written), EBB_OK);
    assert_int_equal(written, size);

    collector c = {0};
    uint64_t calls = support_alloc_calls();
    uint64_t live = support_alloc_live_count();
    support_alloc_fail_nth(1, true); /* any allocation would fail the save */
    assert_int_equal(fam->save_to(f, collect, &c), EBB_OK);
    support_alloc_fail_nth(0, false);
    assert_int_equal(support_alloc_calls(), calls);
    assert_int_equal(support_alloc_live_count(), live);

    assert_int_equal(c.length, size);
    assert_memory_equal(c.bytes, want.bytes, size);
    assert_true(c.pieces >= (size + EBB_SAVE_PIECE_MAX - 1) /
                                EBB_SAVE_PIECE_MAX);
    free(c.bytes);
    support_snap_free(&want);
    return c.pieces;
}

/* A sink refusing piece i, for every i from 1 to the last: the save returns
 * the refusal, the sink is not called again, the bytes before i are save's
 * first bytes. */
static void check_refusals(const family *fam, const void *f, size_t pieces)
{
    size_t size = fam->size(f);
    support_snap want = support_snap_alloc(size);
    assert_int_equal(fam->save(f, want.bytes, want.size, NULL), EBB_OK);
    for (size_t i = 1; i <= pieces; i++) {
        collector c = {0};
        c.fail_at = i;
        assert_int_equal(fam->save_to(f, collect, &c), REFUSAL);
        assert_true(c.refused);
        assert_int_equal(c.calls_after, 0);
        assert_int_equal(c.pieces, i);
        assert_true(c.length < size);
        if (c.length > 0)
            assert_memory_equal(c.bytes, want.bytes, c.length);
        free(c.bytes);
    }
    support_snap_free(&want);
}

static void check_nulls(const family *fam, const void *f)
{
    collector c = {0};
    assert_int_equal(fam->save_to(NULL, collect, &c), EBB_EINVAL);
    assert_int_equal(fam->save_to(f, NULL, &c), EBB_EINVAL);
    assert_int_equal(c.pieces, 0);
}

/* All of the above; many_pieces: the shape was chosen to span several. */
static void check_all(const family *fam, const void *f, bool many_pieces)
{
    size_t pieces = check_identical(fam, f);
    if (many_pieces)
        assert_true(pieces >= 4);
    check_refusals(fam, f, pieces);
    check_nulls(fam, f);
}

/* ---- APBF, plain and blocked --------------------------------------------- */

static void apbf_fill(ebb_apbf *f, uint64_t items)
{
    for (uint64_t i = 0; i < items; i++) {
        support_key k = support_key_make(KEYS_INSERTED, i);
        ebb_apbf_add(f, k.bytes, sizeof k.bytes);
    }
}

static void apbf_case(const ebb_apbf_params *p, uint64_t items, bool many)
{
    ebb_apbf *f;
    assert_int_equal(ebb_apbf_create(p, 7, &f), EBB_OK);
    apbf_fill(f, items);
    check_all(&apbf_family, f, many);
    ebb_apbf_destroy(f);
}

static void test_apbf(void **state)
{
    (void)state;
    ebb_apbf_params p;
    assert_int_equal(ebb_apbf_params_from_kl(4, 8, 100, &p), EBB_OK);
    apbf_case(&p, 250, false); /* one piece */
    assert_int_equal(ebb_apbf_params_from_kl(4, 8, 200000, &p), EBB_OK);
    apbf_case(&p, 30000, true);
    assert_int_equal(ebb_apbf_params_from_kl(10, 3, 50000, &p), EBB_OK);
    apbf_case(&p, 70000, true);
}

static void test_apbf_blocked(void **state)
{
    (void)state;
    ebb_apbf_params p;
    assert_int_equal(ebb_apbf_params_from_kl_blocked(4, 8, 1000, 512, 8, &p),
                     EBB_OK);
    apbf_case(&p, 3000, false);
    assert_int_equal(
        ebb_apbf_params_from_kl_blocked(4, 8, 300000, 512, 8, &p), EBB_OK);
    apbf_case(&p, 50000, true);
    assert_int_equal(
        ebb_apbf_params_from_kl_blocked(6, 6, 100000, 64, 2, &p), EBB_OK);
    apbf_case(&p, 120000, true);
}

/* ---- Time-limited -------------------------------------------------------- */

#define SPAN INT64_C(1000000000)

static void tlbf_case(uint64_t initial, uint64_t items, bool many)
{
    ebb_tlbf_config c;
    memset(&c, 0, sizeof c);
    c.span_ns = SPAN;
    c.fp = 0.001;
    c.initial_capacity = initial;
    c.max_memory = (size_t)1 << 28;
    c.policy = EBB_TLBF_EVICT;
    ebb_tlbf *f;
    assert_int_equal(ebb_tlbf_create(&c, 11, &f), EBB_OK);
    /* Items over two spans: slices fill, shift and age. */
    for (uint64_t i = 0; i < items; i++) {
        support_key k = support_key_make(KEYS_INSERTED, i);
        int64_t t = (int64_t)(i * (uint64_t)(2 * SPAN) / (items + 1));
        assert_int_equal(ebb_tlbf_add(f, k.bytes, sizeof k.bytes, t), EBB_OK);
    }
    check_all(&tlbf_family, f, many);
    ebb_tlbf_destroy(f);
}

static void test_tlbf(void **state)
{
    (void)state;
    tlbf_case(100, 0, false);
    tlbf_case(100, 300, false);
    tlbf_case(100000, 150000, true);
}

/* ---- Stable -------------------------------------------------------------- */

static void stable_case(uint64_t cells, uint32_t bits, uint64_t items,
                        bool many)
{
    ebb_stable_params p;
    assert_int_equal(ebb_stable_params_init(cells, bits, 3, 5, &p), EBB_OK);
    ebb_stable *f;
    assert_int_equal(ebb_stable_create(&p, 5, &f), EBB_OK);
    for (uint64_t i = 0; i < items; i++) {
        support_key k = support_key_make(KEYS_INSERTED, i);
        assert_int_equal(ebb_stable_add(f, k.bytes, sizeof k.bytes, 0.5),
                         EBB_OK);
    }
    check_all(&stable_family, f, many);
    ebb_stable_destroy(f);
}

static void test_stable(void **state)
{
    (void)state;
    stable_case(1000, 3, 500, false);
    stable_case(1u << 18, 3, 20000, true);
    stable_case(100003, 7, 20000, true); /* cells straddle words */
}

/* ---- Timing -------------------------------------------------------------- */

static void timing_case(uint64_t window, uint64_t timers, uint32_t bits,
                        uint64_t block, uint64_t items, bool many)
{
    ebb_timing_params p;
    assert_int_equal(
        ebb_timing_params_init(window, timers, 4, bits, block, 0, &p),
        EBB_OK);
    ebb_timing *f;
    assert_int_equal(ebb_timing_create(&p, NULL, 3, &f), EBB_OK);
    for (uint64_t i = 0; i < items; i++) {
        support_key k = support_key_make(KEYS_INSERTED, i);
        ebb_timing_add(f, k.bytes, sizeof k.bytes);
    }
    check_all(&timing_family, f, many);
    ebb_timing_destroy(f);
}

static void test_timing(void **state)
{
    (void)state;
    timing_case(100, 1000, 8, 1, 300, false);
    timing_case(20000, 1u << 18, 16, 100, 50000, true);
    timing_case(5000, 200003, 7, 50, 12000, true); /* timers straddle */
}

/* ---- Spectral, fixed and compact ----------------------------------------- */

static void spectral_case(uint64_t counters, ebb_spectral_method method,
                          ebb_spectral_storage storage, uint64_t items,
                          bool many)
{
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_params_init(counters, 8, 4, method, &p),
                     EBB_OK);
    p.seed = 13;
    p.storage = storage;
    if (method == EBB_SPECTRAL_RM) {
        p.marker = EBB_SPECTRAL_MARKER_EXACT;
        p.marker_size = 2 * items + 2;
    }
    assert_int_equal(ebb_spectral_params_check(&p), EBB_OK);
    ebb_spectral *f;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    for (uint64_t i = 0; i < items; i++) {
        support_key k = support_key_make(KEYS_INSERTED, i % (items / 3 + 1));
        assert_int_equal(
            ebb_spectral_add(f, k.bytes, sizeof k.bytes, 1 + i % 3), EBB_OK);
    }
    check_all(&spectral_family, f, many);
    ebb_spectral_destroy(f);
}

static void test_spectral(void **state)
{
    (void)state;
    spectral_case(1000, EBB_SPECTRAL_MS, EBB_SPECTRAL_FIXED, 300, false);
    spectral_case(200000, EBB_SPECTRAL_MS, EBB_SPECTRAL_FIXED, 30000, true);
    spectral_case(100000, EBB_SPECTRAL_RM, EBB_SPECTRAL_FIXED, 5000, true);
}

static void test_spectral_compact(void **state)
{
    (void)state;
    spectral_case(1000, EBB_SPECTRAL_MS, EBB_SPECTRAL_COMPACT_GAMMA, 300,
                  false);
    spectral_case(400000, EBB_SPECTRAL_MS, EBB_SPECTRAL_COMPACT_DELTA, 60000,
                  true);
    spectral_case(400000, EBB_SPECTRAL_MI, EBB_SPECTRAL_COMPACT_STEPS, 60000,
                  true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SUPPORT_TEST(test_apbf, support_setup_counting),
        SUPPORT_TEST(test_apbf_blocked, support_setup_counting),
        SUPPORT_TEST(test_tlbf, support_setup_counting),
        SUPPORT_TEST(test_stable, support_setup_counting),
        SUPPORT_TEST(test_timing, support_setup_counting),
        SUPPORT_TEST(test_spectral, support_setup_counting),
        SUPPORT_TEST(test_spectral_compact, support_setup_counting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
