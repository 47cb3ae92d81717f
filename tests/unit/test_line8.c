/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_line8.c: the blocked APBF's B = 512, b = 8 block test and write
 * (src/apbf/line8.h) against the bits the format defines.
 *
 * The format (docs/format.md, src/apbf/apbf_internal.h ebb_apbf_part_bit):
 * part p of a 512-bit block is word p, and its bit is the p-th 6-bit field
 * of the scrambled hash counted from the top. line8.h computes these bits
 * with AVX2 when the build has it and a word at a time otherwise; this file
 * is compiled both ways (test_line8 plain, test_line8_avx2 with -mavx2 when
 * the build machine runs AVX2), so both forms are held to the same
 * definition and therefore to each other:
 *
 *   - a write into an empty block sets exactly the eight defined bits;
 *   - a write into a random block ORs in those bits and changes nothing
 *     else;
 *   - the test answers true exactly when all eight bits are set, on random
 *     blocks, on blocks holding all eight bits, and on blocks missing one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "apbf/line8.h"
#include "support.h"

#if defined(EBB_TEST_EXPECT_AVX2) && !defined(__AVX2__)
#error "test_line8_avx2 must be compiled with AVX2"
#endif
#if defined(EBB_TEST_EXPECT_WORDS) && defined(__AVX2__)
#error "test_line8 must test the word-at-a-time form"
#endif

#define ROUNDS 200000u

/* The defined bit of part p: the p-th 6-bit field from the top. */
static uint64_t defined_mask(uint64_t scrambled, uint32_t p)
{
    uint64_t field = (scrambled >> (64u - 6u * (p + 1u))) & 63u;
    return UINT64_C(1) << field;
}

static void random_block(uint64_t *state, uint64_t block[8])
{
    /* Dense enough that a random block holds all eight bits now and then:
     * each word about 7/8 full. */
    for (uint32_t p = 0; p < 8u; p++)
        block[p] = support_splitmix64(state) | support_splitmix64(state) |
                   support_splitmix64(state);
}

static void write_into_empty_block_sets_the_defined_bits(void **state)
{
    (void)state;
    uint64_t seed = 11;
    _Alignas(64) uint64_t block[8];
    for (uint32_t r = 0; r < ROUNDS; r++) {
        uint64_t scrambled = support_splitmix64(&seed);
        memset(block, 0, sizeof block);
        ebb_apbf_line8_set(block, scrambled);
        for (uint32_t p = 0; p < 8u; p++)
            assert_int_equal(block[p], defined_mask(scrambled, p));
    }
}

static void write_ors_in_and_keeps_the_rest(void **state)
{
    (void)state;
    uint64_t seed = 12;
    _Alignas(64) uint64_t block[8];
    uint64_t before[8];
    for (uint32_t r = 0; r < ROUNDS; r++) {
        uint64_t scrambled = support_splitmix64(&seed);
        random_block(&seed, block);
        memcpy(before, block, sizeof before);
        ebb_apbf_line8_set(block, scrambled);
        for (uint32_t p = 0; p < 8u; p++)
            assert_int_equal(block[p], before[p] | defined_mask(scrambled, p));
    }
}

static bool defined_test(const uint64_t block[8], uint64_t scrambled)
{
    for (uint32_t p = 0; p < 8u; p++)
        if ((block[p] & defined_mask(scrambled, p)) == 0)
            return false;
    return true;
}

static void test_answers_all_eight_bits_set(void **state)
{
    (void)state;
    uint64_t seed = 13;
    _Alignas(64) uint64_t block[8];
    uint32_t present = 0, absent = 0;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        uint64_t scrambled = support_splitmix64(&seed);
        random_block(&seed, block);
        bool expected = defined_test(block, scrambled);
        assert_int_equal(ebb_apbf_line8_test(block, scrambled), expected);
        present += expected;
        absent += !expected;

        /* The same block with all eight bits, then with one of them gone. */
        ebb_apbf_line8_set(block, scrambled);
        assert_true(ebb_apbf_line8_test(block, scrambled));
        uint32_t gone = (uint32_t)(support_splitmix64(&seed) & 7u);
        block[gone] &= ~defined_mask(scrambled, gone);
        assert_false(ebb_apbf_line8_test(block, scrambled));
    }
    /* Both answers occur among the random blocks: (7/8)^8 ~ 0.34 of them
     * hold all eight bits. */
    assert_true(present > ROUNDS / 4u);
    assert_true(absent > ROUNDS / 2u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_into_empty_block_sets_the_defined_bits),
        cmocka_unit_test(write_ors_in_and_keeps_the_rest),
        cmocka_unit_test(test_answers_all_eight_bits_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
