/*
 * hash.h: one 128-bit hash per key, and the bit positions derived from it.
 *
 * A key is hashed once with XXH3-128 (the system's libxxhash, inlined from its
 * header so short keys cost no call). Filters derive every position they
 * need from the two 64-bit halves by double hashing (Kirsch and
 * Mitzenmacher, "Less hashing, same performance"): x_j = lo + j * hi, and map
 * x_j onto [0, m) by multiply-high (Lemire's range reduction): the top 64 bits
 * of the 128-bit product x_j * m. No division, no modulo.
 *
 * Two derivations are available; tests/stats/test_index_scheme measures both
 * against the analytic false-positive rate and docs/apbf.md records which
 * one ebb keeps and why:
 *   plain double hashing     x_j = lo + j * hi
 *   enhanced double hashing  x_j = lo + j * hi + (j^3 - j) / 6
 */
#ifndef EBB_CORE_HASH_H
#define EBB_CORE_HASH_H

#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ebb/ebb.h"

typedef enum ebb_index_scheme {
    EBB_INDEX_DOUBLE = 0,
    EBB_INDEX_ENHANCED = 1
} ebb_index_scheme;

static inline ebb_hash128 ebb_hash_inline(const void *key, size_t len,
                                          uint64_t seed)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(key, len, seed);
    ebb_hash128 out = {h.low64, h.high64};
    return out;
}

/* The high 64 bits of the 128-bit product a * b. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 ebb_u128;
static inline uint64_t ebb_mul_high(uint64_t a, uint64_t b)
{
    return (uint64_t)(((ebb_u128)a * b) >> 64);
}
#else
static inline uint64_t ebb_mul_high(uint64_t a, uint64_t b)
{
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32;
    uint64_t b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo;
    uint64_t lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    uint64_t cross = (lo_lo >> 32) + (uint32_t)hi_lo + lo_hi;
    return hi_hi + (hi_lo >> 32) + (cross >> 32);
}
#endif

/* Maps a uniformly random 64-bit x onto [0, range) (Lemire's reduction). */
static inline uint64_t ebb_reduce(uint64_t x, uint64_t range)
{
    return ebb_mul_high(x, range);
}

/* The j-th derived 64-bit value of a hash. */
static inline uint64_t ebb_derive(ebb_hash128 h, uint32_t j,
                                  ebb_index_scheme scheme)
{
    uint64_t x = h.lo + (uint64_t)j * h.hi;
    if (scheme == EBB_INDEX_ENHANCED) {
        uint64_t jj = j;
        x += (jj * jj * jj - jj) / 6u;
    }
    return x;
}

#endif
