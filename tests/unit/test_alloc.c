/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_alloc.c: behaviour under allocation failure and accounting of every
 * byte.
 *
 * For each entry point that allocates (create, load, choose), the n-th
 * allocation is made to fail, for n = 1, 2, ... until the call succeeds
 * without any failure being injected: each failing call must return
 * EBB_ENOMEM, leave *out untouched and hold nothing. The same is repeated
 * with every allocation from the n-th on failing. Both allocator tables are
 * exercised: with alloc_zeroed and without it (the library clears memory).
 * The built-in allocator's large zeroed blocks are checked for zeros.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ebb/ebb.h"
#include "support.h"

/* Far more allocations than any entry point needs: reaching it means the
 * call keeps failing for another reason. */
#define MAX_INJECTIONS 64u

static char out_sentinel;
#define OUT_SENTINEL ((ebb_apbf *)(void *)&out_sentinel)

/* An entry point that produces a filter. */
typedef ebb_status (*make_fn)(ebb_apbf **out, const void *context);

static ebb_status make_by_create(ebb_apbf **out, const void *context) {
    return ebb_apbf_create(context, 21, out);
}

typedef struct bytes_ref {
    const unsigned char *bytes;
    size_t size;
} bytes_ref;

static ebb_status make_by_load(ebb_apbf **out, const void *context) {
    const bytes_ref *snapshot = context;
    return ebb_apbf_load(snapshot->bytes, snapshot->size, out);
}

/* Fails the n-th allocation (and, with and_after, all later ones) for
 * n = 1, 2, ... until make succeeds with no failure injected. Returns the
 * filter from that success. */
static ebb_apbf *make_under_failures(make_fn make, const void *context,
                                     bool and_after) {
    uint64_t n;
    for (n = 1; n <= MAX_INJECTIONS; n++) {
        ebb_apbf *out = OUT_SENTINEL;
        ebb_status st;
        support_alloc_fail_nth(n, and_after);
        st = make(&out, context);
        if (support_alloc_failures() == 0) {
            /* The n-th allocation was never reached: full success. */
            support_alloc_fail_nth(0, false);
            assert_int_equal(st, EBB_OK);
            /* Every entry point here allocates: n = 1 must have failed. */
            assert_true(n > 1);
            assert_true(out != OUT_SENTINEL && out != NULL);
            return out;
        }
        CHECK(st == EBB_ENOMEM,
              "allocation %llu failed but the call returned %d (%s)",
              (unsigned long long)n, (int)st, ebb_strerror(st));
        CHECK(out == OUT_SENTINEL, "allocation %llu failed but *out written",
              (unsigned long long)n);
        CHECK(support_alloc_live_count() == 0 &&
                  support_alloc_live_bytes() == 0,
              "allocation %llu failed and %llu blocks (%llu bytes) stayed",
              (unsigned long long)n,
              (unsigned long long)support_alloc_live_count(),
              (unsigned long long)support_alloc_live_bytes());
    }
    fail_msg("still failing after %u injected failures", MAX_INJECTIONS);
    return NULL;
}

static void exercise(ebb_apbf *filter) {
    uint64_t i;
    for (i = 0; i < 2000; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i);
        ebb_apbf_add(filter, key.bytes, sizeof key.bytes);
    }
    for (i = 1500; i < 2000; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i);
        assert_true(ebb_apbf_contains(filter, key.bytes, sizeof key.bytes));
    }
}

static void create_survives_every_failure(bool with_zeroed) {
    ebb_apbf_params params;
    ebb_apbf *filter;
    bool and_after;
    assert_int_equal(ebb_apbf_params_from_kl(7, 5, 1000, &params), EBB_OK);
    for (and_after = false;; and_after = true) {
        support_alloc_install(with_zeroed);
        filter = make_under_failures(make_by_create, &params, and_after);
        /* A new filter is empty even when the allocator hands out garbage. */
        {
            uint64_t i, present = 0;
            for (i = 0; i < 5000; i++) {
                support_key key = support_key_make(KEYS_FRESH, i);
                present += ebb_apbf_contains(filter, key.bytes,
                                             sizeof key.bytes);
            }
            assert_int_equal(present, 0);
        }
        exercise(filter);
        ebb_apbf_destroy(filter);
        assert_int_equal(support_alloc_live_count(), 0);
        assert_int_equal(support_alloc_live_bytes(), 0);
        if (and_after)
            break;
    }
}

static void create_under_failures_with_zeroed(void **state) {
    (void)state;
    create_survives_every_failure(true);
}

static void create_under_failures_without_zeroed(void **state) {
    (void)state;
    create_survives_every_failure(false);
}

static void load_survives_every_failure(bool with_zeroed) {
    ebb_apbf_params params;
    ebb_apbf *original, *loaded;
    unsigned char *bytes, *again;
    bytes_ref snapshot;
    bool and_after;
    assert_int_equal(ebb_apbf_params_from_kl(7, 5, 1000, &params), EBB_OK);
    assert_int_equal(ebb_apbf_create(&params, 5, &original), EBB_OK);
    exercise(original);
    snapshot.size = ebb_apbf_snapshot_size(original);
    bytes = malloc(snapshot.size);
    again = malloc(snapshot.size);
    assert_non_null(bytes);
    assert_non_null(again);
    assert_int_equal(ebb_apbf_save(original, bytes, snapshot.size, NULL),
                     EBB_OK);
    ebb_apbf_destroy(original);
    snapshot.bytes = bytes;
    for (and_after = false;; and_after = true) {
        support_alloc_install(with_zeroed);
        loaded = make_under_failures(make_by_load, &snapshot, and_after);
        assert_int_equal(ebb_apbf_save(loaded, again, snapshot.size, NULL),
                         EBB_OK);
        assert_memory_equal(bytes, again, snapshot.size);
        ebb_apbf_destroy(loaded);
        assert_int_equal(support_alloc_live_count(), 0);
        if (and_after)
            break;
    }
    free(bytes);
    free(again);
}

static void load_under_failures_with_zeroed(void **state) {
    (void)state;
    load_survives_every_failure(true);
}

static void load_under_failures_without_zeroed(void **state) {
    (void)state;
    load_survives_every_failure(false);
}

/* choose may or may not allocate; if it does, a failure must be ENOMEM and
 * leave nothing behind, and the answer must not depend on the failures. */
static void choose_under_failures(void **state) {
    ebb_apbf_params reference, out;
    uint64_t n;
    (void)state;
    assert_int_equal(ebb_apbf_choose(100000, 0.001, 0.2, &reference), EBB_OK);
    for (n = 1; n <= MAX_INJECTIONS; n++) {
        ebb_status st;
        memset(&out, 0x5C, sizeof out);
        support_alloc_install(true);
        support_alloc_fail_nth(n, true);
        st = ebb_apbf_choose(100000, 0.001, 0.2, &out);
        if (support_alloc_failures() == 0) {
            assert_int_equal(st, EBB_OK);
            assert_memory_equal(&out, &reference, sizeof out);
            break;
        }
        assert_int_equal(st, EBB_ENOMEM);
        assert_int_equal(support_alloc_live_count(), 0);
    }
    assert_true(n <= MAX_INJECTIONS);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* Every byte comes back, through the installed table only. */
static void every_byte_is_accounted(void) {
    ebb_apbf_params params;
    ebb_apbf *filters[5];
    size_t i, expected_bytes = 0, bytes;
    for (i = 0; i < 5; i++) {
        assert_int_equal(ebb_apbf_params_from_kl(4 + (uint32_t)i, 3,
                                                 1000 * (i + 1), &params),
                         EBB_OK);
        assert_int_equal(ebb_apbf_create(&params, i, &filters[i]), EBB_OK);
        assert_int_equal(ebb_apbf_params_memory(&params, &bytes), EBB_OK);
        expected_bytes += bytes;
        assert_int_equal(ebb_apbf_memory(filters[i]), bytes);
    }
    CHECK(support_alloc_live_bytes() == expected_bytes,
          "live %llu bytes, filters report %zu",
          (unsigned long long)support_alloc_live_bytes(), expected_bytes);
    for (i = 0; i < 5; i++) {
        exercise(filters[i]);
        ebb_apbf_clear(filters[i]);
    }
    /* add, contains and clear never allocate. */
    CHECK(support_alloc_live_bytes() == expected_bytes,
          "operations changed the live bytes");
    for (i = 0; i < 5; i++)
        ebb_apbf_destroy(filters[i]);
    assert_int_equal(support_alloc_live_count(), 0);
    assert_int_equal(support_alloc_live_bytes(), 0);
}

static void accounting_with_zeroed(void **state) {
    (void)state;
    every_byte_is_accounted();
}

static void accounting_without_zeroed(void **state) {
    (void)state;
    every_byte_is_accounted();
}

static void operations_never_allocate(void **state) {
    ebb_apbf_params params;
    ebb_apbf *filter;
    uint64_t calls;
    unsigned char *buf;
    size_t size;
    ebb_apbf_stats stats;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(7, 5, 1000, &params), EBB_OK);
    assert_int_equal(ebb_apbf_create(&params, 5, &filter), EBB_OK);
    calls = support_alloc_calls();
    exercise(filter);
    ebb_apbf_add_hash(filter, ebb_apbf_hash(filter, "x", 1));
    assert_true(ebb_apbf_contains_hash(filter, ebb_apbf_hash(filter, "x", 1)));
    ebb_apbf_get_stats(filter, &stats);
    size = ebb_apbf_snapshot_size(filter);
    buf = malloc(size);
    assert_non_null(buf);
    assert_int_equal(ebb_apbf_save(filter, buf, size, NULL), EBB_OK);
    ebb_apbf_clear(filter);
    (void)ebb_apbf_fp(10, 7);
    (void)ebb_apbf_accesses_false(10, 7);
    assert_int_equal(support_alloc_calls(), calls);
    free(buf);
    ebb_apbf_destroy(filter);
}

/* The built-in allocator's zeroed blocks of 2 MiB and more (marked for huge
 * pages on Linux, src/core/alloc.c) are zero and writable, also when the C
 * library hands back memory a previous round dirtied: each round fills its
 * block before releasing it, and the 8 MiB rounds raise the C library's
 * adaptive mmap threshold, so the smaller rounds come from reused heap
 * memory (with malloc in place of calloc the test fails). A filter of that
 * size created with the built-in allocator works. */
static void built_in_large_blocks_are_zeroed(void **state) {
    const size_t sizes[] = {(size_t)8 << 20, (size_t)2 << 20,
                            ((size_t)5 << 20) + 100};
    ebb_allocator built_in;
    size_t s, round, i;
    (void)state;
    assert_int_equal(ebb_set_allocator(NULL), EBB_OK);
    ebb_get_allocator(&built_in);
    assert_non_null(built_in.alloc_zeroed);
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (round = 0; round < 4; round++) {
            unsigned char *block = built_in.alloc_zeroed(sizes[s], built_in.user);
            size_t nonzero = 0;
            assert_non_null(block);
            for (i = 0; i < sizes[s]; i++)
                nonzero += block[i] != 0;
            assert_int_equal(nonzero, 0);
            memset(block, 0xA5, sizes[s]);
            built_in.release(block, built_in.user);
        }
    }
    ebb_apbf_params params;
    ebb_apbf *filter = NULL;
    assert_int_equal(ebb_apbf_choose(1000000, 0.01, 0, &params), EBB_OK);
    assert_int_equal(ebb_apbf_create(&params, 5, &filter), EBB_OK);
    assert_true(ebb_apbf_memory(filter) > ((size_t)2 << 20));
    for (i = 0; i < 1000; i++)
        ebb_apbf_add(filter, &i, sizeof i);
    for (i = 0; i < 1000; i++)
        assert_true(ebb_apbf_contains(filter, &i, sizeof i));
    ebb_apbf_destroy(filter);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(create_under_failures_with_zeroed,
                                  support_teardown_counting),
        cmocka_unit_test_teardown(create_under_failures_without_zeroed,
                                  support_teardown_counting),
        cmocka_unit_test_teardown(load_under_failures_with_zeroed,
                                  support_teardown_counting),
        cmocka_unit_test_teardown(load_under_failures_without_zeroed,
                                  support_teardown_counting),
        cmocka_unit_test_teardown(choose_under_failures,
                                  support_teardown_counting),
        SUPPORT_TEST(accounting_with_zeroed, support_setup_counting),
        SUPPORT_TEST(accounting_without_zeroed,
                     support_setup_counting_unzeroed),
        cmocka_unit_test(built_in_large_blocks_are_zeroed),
        SUPPORT_TEST(operations_never_allocate,
                     support_setup_counting_unzeroed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
