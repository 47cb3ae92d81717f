/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * line8.h: the block test and the block write of the blocked APBF's most
 * used shape, B = 512 and b = 8: one 64-byte line whose eight 64-bit words
 * are the eight parts, one bit set in each.
 *
 * Part p's bit is bit (field p) of word p, the field being 6 bits of the
 * scrambled hash read from the top down (ebb_apbf_line8_shift). With AVX2
 * the eight bits are built as two vectors of four words and tested or set
 * in four instructions a half (vptest answers "every bit present" at once);
 * without, a word at a time. Both compute the same bits: the AVX2 form is
 * chosen at compile time (-march=native or -mavx2) and the unit tests run
 * whichever the build has.
 */
#ifndef EBB_APBF_LINE8_H
#define EBB_APBF_LINE8_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

/* The in-word bit of part p (0..7). */
static inline uint64_t ebb_apbf_line8_shift(uint64_t scrambled, uint32_t p)
{
    return (scrambled >> (58u - 6u * p)) & 63u;
}

#if defined(__AVX2__)

/* The masks of parts 0-3 (low) and 4-7 (high). */
static inline void ebb_apbf_line8_masks(uint64_t scrambled, __m256i *low,
                                        __m256i *high)
{
    const __m256i fields = _mm256_set1_epi64x((long long)scrambled);
    const __m256i six_bits = _mm256_set1_epi64x(63);
    const __m256i one = _mm256_set1_epi64x(1);
    __m256i at_low = _mm256_srlv_epi64(fields, _mm256_setr_epi64x(58, 52, 46, 40));
    __m256i at_high = _mm256_srlv_epi64(fields, _mm256_setr_epi64x(34, 28, 22, 16));
    *low = _mm256_sllv_epi64(one, _mm256_and_si256(at_low, six_bits));
    *high = _mm256_sllv_epi64(one, _mm256_and_si256(at_high, six_bits));
}

static inline bool ebb_apbf_line8_test(const uint64_t *block, uint64_t scrambled)
{
    __m256i low, high;
    ebb_apbf_line8_masks(scrambled, &low, &high);
    __m256i words_low = _mm256_loadu_si256((const __m256i *)(const void *)block);
    __m256i words_high = _mm256_loadu_si256((const __m256i *)(const void *)(block + 4));
    return _mm256_testc_si256(words_low, low) & _mm256_testc_si256(words_high, high);
}

static inline void ebb_apbf_line8_set(uint64_t *block, uint64_t scrambled)
{
    __m256i low, high;
    ebb_apbf_line8_masks(scrambled, &low, &high);
    __m256i *at_low = (__m256i *)(void *)block;
    __m256i *at_high = (__m256i *)(void *)(block + 4);
    _mm256_storeu_si256(at_low, _mm256_or_si256(_mm256_loadu_si256(at_low), low));
    _mm256_storeu_si256(at_high, _mm256_or_si256(_mm256_loadu_si256(at_high), high));
}

#else

static inline bool ebb_apbf_line8_test(const uint64_t *block, uint64_t scrambled)
{
    uint64_t all = 1;
    for (uint32_t p = 0; p < 8u; p++)
        all &= block[p] >> ebb_apbf_line8_shift(scrambled, p);
    return all & 1u;
}

static inline void ebb_apbf_line8_set(uint64_t *block, uint64_t scrambled)
{
    for (uint32_t p = 0; p < 8u; p++)
        block[p] |= UINT64_C(1) << ebb_apbf_line8_shift(scrambled, p);
}

#endif

#endif
