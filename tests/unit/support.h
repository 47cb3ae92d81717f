/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * support.h: helpers shared by the unit and statistical tests.
 *
 * - A counting allocator that every test installs through ebb_set_allocator,
 *   so that "nothing leaks" and "nothing was allocated on error" are checked
 *   by numbers, not by hope. It can also be told to fail chosen allocations,
 *   and it fills fresh blocks with garbage so that a filter which forgets to
 *   clear its memory shows it.
 * - Reproducible keys: splitmix64's finaliser is a bijection on 64-bit
 *   words, so distinct (stream, index) pairs give distinct keys, and keys of
 *   different streams never collide (used for "never inserted" probes).
 * - Little-endian field access for reading and forging snapshots.
 *
 * Include cmocka (with its prerequisites) before this header.
 */
#ifndef EBB_TESTS_SUPPORT_H
#define EBB_TESTS_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "ebb/ebb.h"

/* Fails the current cmocka test with a formatted message when cond is false.
 * Always give at least a format string. */
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            print_error("CHECK failed: %s\n  ", #cond);                        \
            print_error(__VA_ARGS__);                                          \
            print_error("\n");                                                 \
            fail();                                                            \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Counting / failing allocator                                             */
/* ------------------------------------------------------------------------ */

/* Requests above this many bytes are refused (NULL) without reaching libc,
 * so tests can ask for absurd filters without the sanitizers aborting. */
#define SUPPORT_ALLOC_CAP ((size_t)1 << 30)

/* Installs the counting allocator and zeroes all counters and failure
 * plans. with_zeroed selects whether the table provides alloc_zeroed (when
 * false the library must clear memory itself). */
void support_alloc_install(bool with_zeroed);

/* Restores libc's allocator (ebb_set_allocator(NULL)). */
void support_alloc_uninstall(void);

/* The table support_alloc_install would install (for comparisons). */
void support_alloc_table(bool with_zeroed, ebb_allocator *out);

/* Blocks handed out and not yet released, and their total size. */
uint64_t support_alloc_live_count(void);
uint64_t support_alloc_live_bytes(void);
/* Calls of alloc + alloc_zeroed since install (failed ones included). */
uint64_t support_alloc_calls(void);
uint64_t support_alloc_zeroed_calls(void);

/* From now on, the n-th allocation call (1-based, counted from this call)
 * returns NULL; with and_after, every later one too. n = 0 cancels. Resets
 * the failure count. */
void support_alloc_fail_nth(uint64_t n, bool and_after);
/* Allocation calls that returned NULL (plan or cap) since the last plan. */
uint64_t support_alloc_failures(void);

/* cmocka fixtures around every test: install the counting allocator, with
 * alloc_zeroed or without it (fresh blocks then hold garbage, so a filter
 * that forgets to clear memory shows it); afterwards check that nothing is
 * left allocated and restore libc's allocator. */
int support_setup_counting(void **state);
int support_setup_counting_unzeroed(void **state);
int support_teardown_counting(void **state);
/* A cmocka test entry between one of those setups and the teardown. */
#define SUPPORT_TEST(f, setup)                                                 \
    cmocka_unit_test_setup_teardown(f, setup, support_teardown_counting)

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */
/* ------------------------------------------------------------------------ */

/* splitmix64: advances *state and returns the next output. */
uint64_t support_splitmix64(uint64_t *state);

/* The bijective finaliser of splitmix64. */
uint64_t support_mix64(uint64_t x);

/* Streams of keys that never collide with each other. */
enum {
    KEYS_INSERTED = 1, /* keys that tests add                      */
    KEYS_FRESH = 2,    /* keys that are never added (fp probes)    */
    KEYS_OTHER = 3
};

/* An 8-byte key: distinct for distinct (stream, index), index < 2^48. */
typedef struct support_key {
    unsigned char bytes[8];
} support_key;

support_key support_key_make(uint32_t stream, uint64_t index);

/* ------------------------------------------------------------------------ */
/* Little-endian fields                                                     */
/* ------------------------------------------------------------------------ */

uint64_t support_get_le(const unsigned char *p, size_t width);
void support_put_le(unsigned char *p, size_t width, uint64_t value);

/* A snapshot's bytes, for the families' snapshot tests: a buffer of `size`
 * bytes (allocation asserted), freed by support_snap_free. */
typedef struct support_snap {
    unsigned char *bytes;
    size_t size;
} support_snap;
support_snap support_snap_alloc(size_t size);
void support_snap_free(support_snap *s);
/* Rewrites the trailing XXH3-64 checksum after a test edited the bytes, so
 * that the decoder's field checks, not its checksum, must refuse them. */
void support_snap_forge_checksum(support_snap *s);
/* Asserts two snapshots are the same bytes, and frees both. */
void support_snap_assert_same(support_snap *a, support_snap *b);

/* Zipf over ranks 0..n-1 (p_r proportional to 1 / (r + 1)^skew): the
 * cumulative table of n doubles, and a draw from it (the smallest rank
 * whose cumulative probability reaches a uniform draw). */
void support_zipf_table(double *cdf, uint32_t n, double skew);
uint32_t support_zipf_draw(const double *cdf, uint32_t n, ebb_rng *rng);

#endif /* EBB_TESTS_SUPPORT_H */
