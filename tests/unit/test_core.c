/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_core.c: status strings, version, the key hash and the allocator table
 * (include/ebb/ebb.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference the library's hash must agree with. */
#include <xxhash.h>

#include "ebb/ebb.h"
#include "support.h"

static const char UNKNOWN_STATUS[] = "unknown ebb status";

static void strerror_is_distinct_for_every_code(void **state) {
    int a, b;
    (void)state;
    for (a = 0; a < EBB_ESTATUS_COUNT_; a++) {
        const char *text = ebb_strerror((ebb_status)a);
        assert_non_null(text);
        CHECK(text[0] != '\0', "status %d has an empty message", a);
        CHECK(strcmp(text, UNKNOWN_STATUS) != 0,
              "status %d is described as unknown", a);
        CHECK(text[strlen(text) - 1] != '\n', "status %d ends in newline", a);
        for (b = 0; b < a; b++)
            CHECK(strcmp(text, ebb_strerror((ebb_status)b)) != 0,
                  "statuses %d and %d share the message \"%s\"", a, b, text);
    }
}

static void strerror_of_unknown_codes(void **state) {
    const int unknown[] = {EBB_ESTATUS_COUNT_, EBB_ESTATUS_COUNT_ + 1, 1000,
                           -1, -1000};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *text = ebb_strerror((ebb_status)unknown[i]);
        assert_non_null(text);
        assert_string_equal(text, UNKNOWN_STATUS);
    }
}

static void version_matches_macros(void **state) {
    char expected[64];
    (void)state;
    assert_int_equal(ebb_version_number(), EBB_VERSION_NUMBER);
    assert_int_equal(EBB_VERSION_NUMBER, EBB_VERSION_MAJOR * 10000 +
                                             EBB_VERSION_MINOR * 100 +
                                             EBB_VERSION_PATCH);
    snprintf(expected, sizeof expected, "%d.%d.%d", EBB_VERSION_MAJOR,
             EBB_VERSION_MINOR, EBB_VERSION_PATCH);
    assert_non_null(ebb_version_string());
    assert_string_equal(ebb_version_string(), expected);
    assert_string_equal(EBB_VERSION_STRING, expected);
}

static bool hash_equal(ebb_hash128 a, ebb_hash128 b) {
    return a.lo == b.lo && a.hi == b.hi;
}

static void hash_is_deterministic_and_seeded(void **state) {
    static const char key[] = "the quick brown fox";
    ebb_hash128 first, again, other_seed;
    (void)state;
    first = ebb_hash(key, sizeof key - 1, 42);
    again = ebb_hash(key, sizeof key - 1, 42);
    other_seed = ebb_hash(key, sizeof key - 1, 43);
    assert_true(hash_equal(first, again));
    assert_false(first.lo == other_seed.lo);
    assert_false(first.hi == other_seed.hi);
    /* A copy of the key at another address hashes the same. */
    {
        char copy[sizeof key];
        memcpy(copy, key, sizeof key);
        assert_true(hash_equal(first, ebb_hash(copy, sizeof key - 1, 42)));
    }
}

static void hash_of_empty_key_accepts_null(void **state) {
    static const char somewhere[] = "ignored";
    ebb_hash128 from_null, from_pointer;
    (void)state;
    from_null = ebb_hash(NULL, 0, 7);
    from_pointer = ebb_hash(somewhere, 0, 7);
    assert_true(hash_equal(from_null, from_pointer));
    assert_false(hash_equal(from_null, ebb_hash(NULL, 0, 8)));
    assert_false(hash_equal(from_null, ebb_hash(somewhere, 1, 7)));
}

static int compare_hash(const void *a, const void *b) {
    const ebb_hash128 *x = a;
    const ebb_hash128 *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return 0;
}

static void hash_differs_for_different_keys(void **state) {
    enum { KEYS = 20000 };
    ebb_hash128 *hashes = calloc(KEYS, sizeof *hashes);
    size_t i;
    (void)state;
    assert_non_null(hashes);
    for (i = 0; i < KEYS; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i);
        hashes[i] = ebb_hash(key.bytes, sizeof key.bytes, 1);
    }
    qsort(hashes, KEYS, sizeof *hashes, compare_hash);
    for (i = 1; i < KEYS; i++)
        CHECK(compare_hash(&hashes[i - 1], &hashes[i]) != 0,
              "two different keys share a 128-bit hash");
    /* Keys that differ only in length (a prefix) differ too. */
    assert_false(hash_equal(ebb_hash("abc", 3, 0), ebb_hash("abc", 2, 0)));
    free(hashes);
}

/* Snapshots depend on the hash: it must be exactly XXH3-128 (lo = low64,
 * hi = high64) for every length class XXH3 treats separately. */
static void hash_is_xxh3_128(void **state) {
    static const size_t lengths[] = {0, 1, 3, 4, 8, 9, 16, 17, 128, 129,
                                     240, 241, 1000, 4096};
    unsigned char data[4096];
    uint64_t rng = 99;
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)support_splitmix64(&rng);
    for (i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        for (j = 0; j < 3; j++) {
            uint64_t seed = j == 0 ? 0 : support_splitmix64(&rng);
            XXH128_hash_t want = XXH3_128bits_withSeed(data, lengths[i], seed);
            ebb_hash128 got = ebb_hash(data, lengths[i], seed);
            CHECK(got.lo == want.low64 && got.hi == want.high64,
                  "len %zu seed %llu: got %016llx%016llx want %016llx%016llx",
                  lengths[i], (unsigned long long)seed,
                  (unsigned long long)got.hi, (unsigned long long)got.lo,
                  (unsigned long long)want.high64,
                  (unsigned long long)want.low64);
        }
    }
}

static bool allocator_equal(const ebb_allocator *a, const ebb_allocator *b) {
    return a->alloc == b->alloc && a->alloc_zeroed == b->alloc_zeroed &&
           a->release == b->release && a->user == b->user;
}

static void set_allocator_rejects_incomplete_tables(void **state) {
    ebb_allocator counting, broken, current;
    (void)state;
    support_alloc_install(true);
    support_alloc_table(true, &counting);

    broken = counting;
    broken.alloc = NULL;
    assert_int_equal(ebb_set_allocator(&broken), EBB_EINVAL);
    ebb_get_allocator(&current);
    assert_true(allocator_equal(&current, &counting));

    broken = counting;
    broken.release = NULL;
    assert_int_equal(ebb_set_allocator(&broken), EBB_EINVAL);
    ebb_get_allocator(&current);
    assert_true(allocator_equal(&current, &counting));

    broken = counting;
    broken.alloc = NULL;
    broken.release = NULL;
    assert_int_equal(ebb_set_allocator(&broken), EBB_EINVAL);
    ebb_get_allocator(&current);
    assert_true(allocator_equal(&current, &counting));

    /* alloc_zeroed is optional. */
    broken = counting;
    broken.alloc_zeroed = NULL;
    assert_int_equal(ebb_set_allocator(&broken), EBB_OK);
    ebb_get_allocator(&current);
    assert_true(allocator_equal(&current, &broken));

    support_alloc_uninstall();
}

static void set_allocator_copies_the_table(void **state) {
    ebb_allocator table, current, expected;
    (void)state;
    support_alloc_table(false, &table);
    expected = table;
    assert_int_equal(ebb_set_allocator(&table), EBB_OK);
    /* The library must have copied the table, not kept the pointer. */
    memset(&table, 0, sizeof table);
    ebb_get_allocator(&current);
    assert_true(allocator_equal(&current, &expected));
    support_alloc_uninstall();
}

static ebb_apbf *small_filter(void) {
    ebb_apbf_params params;
    ebb_apbf *filter = NULL;
    assert_int_equal(ebb_apbf_params_from_kl(4, 3, 300, &params), EBB_OK);
    assert_int_equal(ebb_apbf_create(&params, 1, &filter), EBB_OK);
    return filter;
}

static void null_allocator_restores_libc(void **state) {
    ebb_allocator counting, current;
    ebb_apbf *filter;
    uint64_t calls_before;
    (void)state;

    support_alloc_install(false);
    support_alloc_table(false, &counting);
    filter = small_filter();
    CHECK(support_alloc_live_count() > 0,
          "a filter was created without the installed allocator");
    ebb_apbf_destroy(filter);
    assert_int_equal(support_alloc_live_count(), 0);

    assert_int_equal(ebb_set_allocator(NULL), EBB_OK);
    ebb_get_allocator(&current);
    assert_non_null(current.alloc);
    assert_non_null(current.release);
    assert_false(allocator_equal(&current, &counting));

    calls_before = support_alloc_calls();
    filter = small_filter();
    ebb_apbf_add(filter, "x", 1);
    assert_true(ebb_apbf_contains(filter, "x", 1));
    ebb_apbf_destroy(filter);
    assert_int_equal(support_alloc_calls(), calls_before);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strerror_is_distinct_for_every_code),
        cmocka_unit_test(strerror_of_unknown_codes),
        cmocka_unit_test(version_matches_macros),
        cmocka_unit_test(hash_is_deterministic_and_seeded),
        cmocka_unit_test(hash_of_empty_key_accepts_null),
        cmocka_unit_test(hash_differs_for_different_keys),
        cmocka_unit_test(hash_is_xxh3_128),
        cmocka_unit_test(set_allocator_rejects_incomplete_tables),
        cmocka_unit_test(set_allocator_copies_the_table),
        cmocka_unit_test(null_allocator_restores_libc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
