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
