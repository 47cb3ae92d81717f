/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bits.h: bit arrays as 64-bit words. Bit j lives in word j / 64 at bit
 * j % 64 (shifts and masks, no division at run time).
 */
#ifndef EBB_CORE_BITS_H
#define EBB_CORE_BITS_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t ebb_bits_words(uint64_t nbits)
{
    return (nbits >> 6) + ((nbits & 63u) != 0);
}

static inline void ebb_bit_set(uint64_t *words, uint64_t bit)
{
    words[bit >> 6] |= UINT64_C(1) << (bit & 63u);
}

static inline bool ebb_bit_test(const uint64_t *words, uint64_t bit)
{
    return (words[bit >> 6] >> (bit & 63u)) & 1u;
}

/* Mask of the bits of the last word that lie beyond nbits (0 if none). */
static inline uint64_t ebb_bits_tail_mask(uint64_t nbits)
{
    unsigned used = (unsigned)(nbits & 63u);
    return used ? ~((UINT64_C(1) << used) - 1u) : 0;
}

/* The low n bits (0..64) set. */
static inline uint64_t ebb_low_mask(uint32_t n)
{
    return n >= 64u ? UINT64_MAX : (UINT64_C(1) << n) - 1u;
}

/* The n bits (1..64) of a little-endian bit stream from bit pos (bit b is
 * bit b % 64 of word b / 64), low bit first; touches the next word only
 * when they straddle. */
static inline uint64_t ebb_bits_field_get(const uint64_t *words, uint64_t pos,
                                          uint32_t n)
{
    uint64_t word = pos >> 6;
    uint32_t shift = (uint32_t)(pos & 63u);
    uint64_t v = words[word] >> shift;
    if (shift + n > 64u)
        v |= words[word + 1] << (64u - shift);
    return v & ebb_low_mask(n);
}

/* Writes the low n bits (0..64) of v at pos, the same layout; the bits
 * around them are kept. */
static inline void ebb_bits_field_put(uint64_t *words, uint64_t pos,
                                      uint32_t n, uint64_t v)
{
    if (n == 0)
        return;
    uint64_t word = pos >> 6;
    uint32_t shift = (uint32_t)(pos & 63u);
    uint64_t mask = ebb_low_mask(n);
    v &= mask;
    words[word] = (words[word] & ~(mask << shift)) | (v << shift);
    if (shift + n > 64u) {
        uint32_t done = 64u - shift;
        words[word + 1] = (words[word + 1] & ~(mask >> done)) | (v >> done);
    }
}

/* Counters saturate rather than wrap: a count that wrapped to 0 would make
 * a full filter look new (and its snapshot inconsistent). */
static inline uint64_t ebb_saturating_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* log2 of a power of two. */
static inline uint32_t ebb_log2_u32(uint32_t power_of_two)
{
    uint32_t log = 0;
    while ((UINT32_C(1) << log) < power_of_two)
        log++;
    return log;
}

#endif
