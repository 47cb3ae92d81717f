/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash.h: one 128-bit hash per key, and the bit positions derived from it.
 *
 * A key is hashed once with XXH3-128 (the system's libxxhash, inlined from its
 * header so short keys cost no call). Filters derive every position they
 * need from the two 64-bit halves, x_j = lo + j * hi (double hashing,
 * Kirsch and Mitzenmacher, "Less hashing, same performance"), and map a
 * value onto [0, m) by multiply-high (Lemire's range reduction): the top 64
 * bits of the 128-bit product x * m. No division, no modulo.
 *
 * Why x_j is finalised before the reduction. Multiply-high keeps only the
 * top bits of x_j, and the top bits of lo + j * hi are fixed by the top bits
 * of lo and hi: two keys whose lo and hi agree in their top ~log2(m) bits
 * collide in every slice at once. With small slices that makes a false
 * positive far likelier than independent slices would (tests/stats/
 * test_index_scheme measured twice the promised rate for a window of 1000
 * at 0.1%). Enhanced double hashing (adding (j^3 - j) / 6) does not help
 * here: the term stays below 2^28, under the bits the reduction keeps, so it
 * sets the same bits as plain double hashing. Passing x_j through the
 * murmur3 64-bit finaliser, a bijection whose every output bit depends on
 * every input bit, removes the correlation for two multiplications per
 * slice; that is the derivation ebb keeps (EBB_INDEX_MIXED). The other two
 * remain selectable so that the measurement can be repeated.
 */
#ifndef EBB_CORE_HASH_H
#define EBB_CORE_HASH_H

#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ebb/ebb.h"

typedef enum ebb_index_scheme {
    EBB_INDEX_MIXED = 0,    /* finalise(lo + j * hi): the one in use       */
    EBB_INDEX_DOUBLE = 1,   /* lo + j * hi                                 */
    EBB_INDEX_ENHANCED = 2  /* lo + j * hi + (j^3 - j) / 6                 */
} ebb_index_scheme;

/* The hash of a key as every filter takes it; a key of length 0 may be
 * NULL (XXH3 is handed a valid address either way). Inlined into each
 * filter's hash function so a short key costs no call. */
static inline ebb_hash128 ebb_hash_inline(const void *key, size_t len,
                                          uint64_t seed)
{
    static const unsigned char empty = 0;
    XXH128_hash_t h = XXH3_128bits_withSeed(len ? key : &empty, len, seed);
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

/* The murmur3 64-bit finaliser: a bijection with full avalanche. */
static inline uint64_t ebb_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* Eight lanes at once, where the build has AVX-512 F and DQ (64-bit
 * multiplies): the same values as ebb_mix64 and ebb_mul_high, lane by
 * lane, for the queries that read every slice of a filter in one go. */
#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define EBB_HAVE_X8 1
#include <immintrin.h>

static inline __m512i ebb_mix64_x8(__m512i x)
{
    const __m512i c1 = _mm512_set1_epi64((long long)UINT64_C(0xff51afd7ed558ccd));
    const __m512i c2 = _mm512_set1_epi64((long long)UINT64_C(0xc4ceb9fe1a85ec53));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 33));
    x = _mm512_mullo_epi64(x, c1);
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 33));
    x = _mm512_mullo_epi64(x, c2);
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 33));
}

/* The high 64 bits of each a * b, from four 32 x 32-bit products (the
 * portable ebb_mul_high's schoolbook sum). */
static inline __m512i ebb_mul_high_x8(__m512i a, __m512i b)
{
    const __m512i low32 = _mm512_set1_epi64((long long)UINT64_C(0xffffffff));
    __m512i a_hi = _mm512_srli_epi64(a, 32), b_hi = _mm512_srli_epi64(b, 32);
    __m512i lo_lo = _mm512_mul_epu32(a, b), hi_lo = _mm512_mul_epu32(a_hi, b);
    __m512i lo_hi = _mm512_mul_epu32(a, b_hi), hi_hi = _mm512_mul_epu32(a_hi, b_hi);
    __m512i cross = _mm512_add_epi64(
        _mm512_add_epi64(_mm512_srli_epi64(lo_lo, 32),
                         _mm512_and_si512(hi_lo, low32)),
        _mm512_and_si512(lo_hi, low32));
    return _mm512_add_epi64(
        _mm512_add_epi64(hi_hi, _mm512_srli_epi64(hi_lo, 32)),
        _mm512_add_epi64(_mm512_srli_epi64(lo_hi, 32),
                         _mm512_srli_epi64(cross, 32)));
}
#endif

/* The j-th derived 64-bit value of a hash. */
static inline uint64_t ebb_derive(ebb_hash128 h, uint32_t j,
                                  ebb_index_scheme scheme)
{
    uint64_t x = h.lo + (uint64_t)j * h.hi;
    if (scheme == EBB_INDEX_MIXED)
        return ebb_mix64(x);
    if (scheme == EBB_INDEX_ENHANCED) {
        uint64_t jj = j;
        x += (jj * jj * jj - jj) / 6u;
    }
    return x;
}

#endif
