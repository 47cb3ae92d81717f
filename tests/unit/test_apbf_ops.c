/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_ops.c: add / contains / clear, the statistics a filter reports
 * after exact numbers of insertions, and the agreement of the key and hash
 * forms of every operation.
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

static ebb_apbf *make_filter(uint32_t k, uint32_t l, uint64_t window,
                             uint64_t seed) {
    ebb_apbf_params params;
    ebb_apbf *filter = NULL;
    assert_int_equal(ebb_apbf_params_from_kl(k, l, window, &params), EBB_OK);
    assert_int_equal(ebb_apbf_create(&params, seed, &filter), EBB_OK);
    assert_non_null(filter);
    return filter;
}

static void add_key(ebb_apbf *filter, uint32_t stream, uint64_t index) {
    support_key key = support_key_make(stream, index);
    ebb_apbf_add(filter, key.bytes, sizeof key.bytes);
}

static bool has_key(const ebb_apbf *filter, uint32_t stream, uint64_t index) {
    support_key key = support_key_make(stream, index);
    return ebb_apbf_contains(filter, key.bytes, sizeof key.bytes);
}

static uint64_t count_present(const ebb_apbf *filter, uint32_t stream,
                              uint64_t first, uint64_t count) {
    uint64_t i, present = 0;
    for (i = first; i < first + count; i++)
        present += has_key(filter, stream, i);
    return present;
}

/* Snapshot bytes, for comparing whole filter states. */
static unsigned char *snapshot_of(const ebb_apbf *filter, size_t *size) {
    unsigned char *buf;
    *size = ebb_apbf_snapshot_size(filter);
    buf = malloc(*size);
    assert_non_null(buf);
    assert_int_equal(ebb_apbf_save(filter, buf, *size, NULL), EBB_OK);
    return buf;
}

static void assert_same_state(const ebb_apbf *a, const ebb_apbf *b) {
    size_t size_a, size_b;
    unsigned char *bytes_a = snapshot_of(a, &size_a);
    unsigned char *bytes_b = snapshot_of(b, &size_b);
    assert_int_equal(size_a, size_b);
    assert_memory_equal(bytes_a, bytes_b, size_a);
    free(bytes_a);
    free(bytes_b);
}

/* ------------------------------------------------------------------------ */

static void empty_filter_contains_nothing(void **state) {
    ebb_apbf *filter = make_filter(4, 3, 1000, 1);
    (void)state;
    /* The counting allocator hands out garbage-filled memory: an empty
     * filter that did not clear its bits would report keys here. */
    assert_int_equal(count_present(filter, KEYS_FRESH, 0, 10000), 0);
    assert_false(ebb_apbf_contains(filter, NULL, 0));
    ebb_apbf_destroy(filter);
}

static void added_keys_are_present(void **state) {
    ebb_apbf *filter = make_filter(7, 5, 1000, 2);
    (void)state;
    ebb_apbf_add(filter, "hello", 5);
    assert_true(ebb_apbf_contains(filter, "hello", 5));
    assert_false(ebb_apbf_contains(filter, "hello", 4));
    assert_false(ebb_apbf_contains(filter, "hellO", 5));
    /* The empty key is a key like any other. */
    assert_false(ebb_apbf_contains(filter, NULL, 0));
    ebb_apbf_add(filter, NULL, 0);
    assert_true(ebb_apbf_contains(filter, NULL, 0));
    assert_true(ebb_apbf_contains(filter, "", 0));
    /* One key sets one bit per slice: nothing else can match k slices. */
    assert_int_equal(count_present(filter, KEYS_FRESH, 0, 10000), 0);
    ebb_apbf_destroy(filter);
}

static void window_of_keys_is_present(void **state) {
    ebb_apbf *filter = make_filter(7, 5, 1000, 3);
    ebb_apbf_stats stats;
    uint64_t i;
    (void)state;
    ebb_apbf_get_stats(filter, &stats);
    for (i = 0; i < stats.params.window; i++)
        add_key(filter, KEYS_INSERTED, i);
    assert_int_equal(count_present(filter, KEYS_INSERTED, 0,
                                   stats.params.window),
                     stats.params.window);
    /* A full window of fresh probes at about the promised rate (0.0128). */
    CHECK(count_present(filter, KEYS_FRESH, 0, 10000) < 300,
          "more than 3%% of never-inserted keys reported present");
    ebb_apbf_destroy(filter);
}

static void clear_forgets_everything(void **state) {
    ebb_apbf *filter = make_filter(4, 3, 300, 77);
    ebb_apbf_stats before, after;
    uint64_t i;
    (void)state;
    ebb_apbf_get_stats(filter, &before);
    for (i = 0; i < 5 * before.params.window + 17; i++)
        add_key(filter, KEYS_INSERTED, i);
    ebb_apbf_clear(filter);
    ebb_apbf_get_stats(filter, &after);
    assert_memory_equal(&after.params, &before.params, sizeof after.params);
    assert_int_equal(after.seed, 77);
    assert_int_equal(after.insertions, 0);
    assert_int_equal(after.generations, 0);
    assert_int_equal(after.in_generation, 0);
    assert_int_equal(after.current_slack, 0);
    assert_int_equal(after.memory_bytes, before.memory_bytes);
    assert_int_equal(count_present(filter, KEYS_INSERTED, 0,
                                   5 * before.params.window + 17),
                     0);
    /* A cleared filter behaves exactly like a new one. */
    {
        ebb_apbf *fresh = make_filter(4, 3, 300, 77);
        assert_same_state(filter, fresh);
        for (i = 0; i < 1000; i++) {
            add_key(filter, KEYS_OTHER, i);
            add_key(fresh, KEYS_OTHER, i);
        }
        assert_same_state(filter, fresh);
        ebb_apbf_destroy(fresh);
    }
    ebb_apbf_destroy(filter);
}

/* ------------------------------------------------------------------------ */
/* Statistics after exact numbers of insertions                             */
/* ------------------------------------------------------------------------ */

/* What the stats must say after n adds, from the rules of the header and
 * docs/format.md: a shift happens on the add that finds the current
 * generation full, so the first add does not shift; in_generation is in
 * 1..g once n > 0. The slack is what the newest k + l - 1 generations hold
 * beyond the window. */
typedef struct expected_counts {
    uint64_t generations, in_generation, slack;
} expected_counts;

static expected_counts expected_after(const ebb_apbf_params *p, uint64_t n) {
    expected_counts want = {0, 0, 0};
    uint64_t held;
    if (n == 0)
        return want;
    want.generations = (n - 1) / p->generation;
    want.in_generation = n - want.generations * p->generation;
    held = want.in_generation +
           (uint64_t)(p->k + p->l - 1) * p->generation;
    if (held > n)
        held = n;
    want.slack = held > p->window ? held - p->window : 0;
    return want;
}

static void check_stats(const ebb_apbf *filter, uint64_t n) {
    ebb_apbf_stats stats;
    expected_counts want;
    ebb_apbf_get_stats(filter, &stats);
    want = expected_after(&stats.params, n);
    CHECK(stats.insertions == n, "insertions %llu after %llu adds",
          (unsigned long long)stats.insertions, (unsigned long long)n);
    CHECK(stats.generations == want.generations,
          "generations %llu after %llu adds, want %llu",
          (unsigned long long)stats.generations, (unsigned long long)n,
          (unsigned long long)want.generations);
    CHECK(stats.in_generation == want.in_generation,
          "in_generation %llu after %llu adds, want %llu",
          (unsigned long long)stats.in_generation, (unsigned long long)n,
          (unsigned long long)want.in_generation);
    CHECK(stats.current_slack == want.slack,
          "current_slack %llu after %llu adds, want %llu",
          (unsigned long long)stats.current_slack, (unsigned long long)n,
          (unsigned long long)want.slack);
    assert_int_equal(stats.memory_bytes, ebb_apbf_memory(filter));
}

static void stats_follow_the_insertions(void **state) {
    ebb_apbf_params params;
    ebb_apbf *filter;
    ebb_apbf_stats stats;
    uint64_t n, g, limit;
    size_t bytes;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_klm(4, 3, 200, &params), EBB_OK);
    g = params.generation; /* floor(200 ln 2 / 4) = 34 */
    assert_int_equal(g, 34);
    assert_int_equal(ebb_apbf_create(&params, 5, &filter), EBB_OK);

    ebb_apbf_get_stats(filter, &stats);
    assert_memory_equal(&stats.params, &params, sizeof params);
    assert_int_equal(stats.seed, 5);
    assert_int_equal(ebb_apbf_params_memory(&params, &bytes), EBB_OK);
    assert_int_equal(stats.memory_bytes, bytes);
    CHECK(support_alloc_live_bytes() == bytes,
          "the filter holds %llu bytes but reports %zu",
          (unsigned long long)support_alloc_live_bytes(), bytes);

    /* Every count from 0 to well past the steady state. */
    limit = (params.k + params.l + 3) * g + 5;
    check_stats(filter, 0);
    for (n = 1; n <= limit; n++) {
        add_key(filter, KEYS_INSERTED, n);
        check_stats(filter, n);
    }
    ebb_apbf_destroy(filter);
}

/* The exact numbers at the moments the paper describes, spelled out. */
static void stats_at_named_moments(void **state) {
    ebb_apbf_params params;
    ebb_apbf *filter;
    ebb_apbf_stats stats;
    uint64_t n = 0, g;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_klm(4, 3, 200, &params), EBB_OK);
    g = params.generation;
    assert_int_equal(ebb_apbf_create(&params, 5, &filter), EBB_OK);

    /* Full first generation: no shift yet. */
    for (; n < g; n++)
        add_key(filter, KEYS_INSERTED, n);
    ebb_apbf_get_stats(filter, &stats);
    assert_int_equal(stats.generations, 0);
    assert_int_equal(stats.in_generation, g);
    assert_int_equal(stats.current_slack, 0);

    /* The next add shifts. */
    add_key(filter, KEYS_INSERTED, n++);
    ebb_apbf_get_stats(filter, &stats);
    assert_int_equal(stats.generations, 1);
    assert_int_equal(stats.in_generation, 1);

    /* Steady state, just before a shift: slack is k generations. */
    for (; n < 20 * g; n++)
        add_key(filter, KEYS_INSERTED, n);
    ebb_apbf_get_stats(filter, &stats);
    assert_int_equal(stats.in_generation, g);
    assert_int_equal(stats.generations, 19);
    assert_int_equal(stats.current_slack, params.k * g);

    /* Just after it: one generation's worth fewer, plus the new item. */
    add_key(filter, KEYS_INSERTED, n++);
    ebb_apbf_get_stats(filter, &stats);
    assert_int_equal(stats.in_generation, 1);
    assert_int_equal(stats.current_slack, (params.k - 1) * g + 1);
    ebb_apbf_destroy(filter);
}

/* Duplicates count toward the window like any other add. */
static void duplicates_count(void **state) {
    ebb_apbf_params params;
    ebb_apbf *filter;
    ebb_apbf_stats stats;
    uint64_t i;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_klm(4, 3, 200, &params), EBB_OK);
    assert_int_equal(ebb_apbf_create(&params, 5, &filter), EBB_OK);
    add_key(filter, KEYS_INSERTED, 0);
    for (i = 0; i < (params.k + params.l + 1) * params.generation; i++)
        ebb_apbf_add(filter, "same", 4);
    ebb_apbf_get_stats(filter, &stats);
    assert_int_equal(stats.insertions, 1 + i);
    assert_true(ebb_apbf_contains(filter, "same", 4));
    /* The first key left long ago; only its slices could remember it and
     * they were all cleared (one key per slice cannot make a false hit). */
    assert_false(has_key(filter, KEYS_INSERTED, 0));
    ebb_apbf_destroy(filter);
}

/* ------------------------------------------------------------------------ */
/* Hash forms                                                               */
/* ------------------------------------------------------------------------ */

static void hash_forms_agree_with_key_forms(void **state) {
    ebb_apbf *by_key = make_filter(7, 5, 600, 11);
    ebb_apbf *by_hash = make_filter(7, 5, 600, 11);
    ebb_apbf_stats stats;
    uint64_t i, present = 0;
    (void)state;
    ebb_apbf_get_stats(by_key, &stats);
    for (i = 0; i < 3 * stats.params.window + 5; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i);
        ebb_hash128 h = ebb_apbf_hash(by_hash, key.bytes, sizeof key.bytes);
        ebb_hash128 want = ebb_hash(key.bytes, sizeof key.bytes, 11);
        assert_true(h.lo == want.lo && h.hi == want.hi);
        ebb_apbf_add(by_key, key.bytes, sizeof key.bytes);
        ebb_apbf_add_hash(by_hash, h);
    }
    assert_same_state(by_key, by_hash);
    /* contains and contains_hash agree on present and absent keys alike. */
    for (i = 0; i < 20000; i++) {
        uint32_t stream = i % 2 ? KEYS_INSERTED : KEYS_FRESH;
        support_key key = support_key_make(stream, i / 2);
        bool direct = ebb_apbf_contains(by_key, key.bytes, sizeof key.bytes);
        bool hashed = ebb_apbf_contains_hash(
            by_key, ebb_apbf_hash(by_key, key.bytes, sizeof key.bytes));
        assert_int_equal(direct, hashed);
        present += direct;
    }
    /* Both outcomes were exercised: the last window of inserted keys is
     * among the probes, and so are 10000 fresh keys. */
    assert_true(present >= stats.params.window && present < 10000);
    /* The empty key, through both forms. */
    assert_true(ebb_apbf_contains_hash(by_key, ebb_hash(NULL, 0, 11)) ==
                ebb_apbf_contains(by_key, NULL, 0));
    ebb_apbf_destroy(by_key);
    ebb_apbf_destroy(by_hash);
}

static void seed_changes_the_bits(void **state) {
    ebb_apbf *a = make_filter(4, 3, 300, 1);
    ebb_apbf *b = make_filter(4, 3, 300, 2);
    size_t size_a, size_b;
    unsigned char *bytes_a, *bytes_b;
    uint64_t i;
    (void)state;
    for (i = 0; i < 100; i++) {
        add_key(a, KEYS_INSERTED, i);
        add_key(b, KEYS_INSERTED, i);
    }
    bytes_a = snapshot_of(a, &size_a);
    bytes_b = snapshot_of(b, &size_b);
    assert_int_equal(size_a, size_b);
    /* Past the frame header (which holds the seed), the bits differ. */
    assert_true(memcmp(bytes_a + 88, bytes_b + 88, size_a - 96) != 0);
    assert_int_equal(count_present(b, KEYS_INSERTED, 0, 100), 100);
    free(bytes_a);
    free(bytes_b);
    ebb_apbf_destroy(a);
    ebb_apbf_destroy(b);
}

static void destroy_null_is_a_no_op(void **state) {
    (void)state;
    ebb_apbf_destroy(NULL);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(empty_filter_contains_nothing),
        TEST(added_keys_are_present),
        TEST(window_of_keys_is_present),
        TEST(clear_forgets_everything),
        TEST(stats_follow_the_insertions),
        TEST(stats_at_named_moments),
        TEST(duplicates_count),
        TEST(hash_forms_agree_with_key_forms),
        TEST(seed_changes_the_bits),
        TEST(destroy_null_is_a_no_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
