/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wide.h: a ring APBF's plain slices located eight at a time.
 *
 * Where the build has AVX-512 F and DQ (EBB_HAVE_X8, core/hash.h), a key's
 * slices are located one per vector lane: the scalar locate's derivation
 * (h.lo + pos * h.hi, mix64) and reduction (the high half of x * m) done for
 * eight slices per instruction, the word index and the bit's mask stored to
 * two arrays the caller then reads or writes through. The same bits as
 * ebb_apbf_locate on the plain path, lane for lane (test_apbf_paths).
 *
 * Why: a one-call operation out of the caches is limited by how many
 * calls' loads the core has in flight at once, and that is set by the
 * instructions per call. A load that misses holds up retirement; the next
 * calls' loads start only while their instructions still fit behind it in
 * the core's reorder buffer. The scalar locate is about 25 instructions per
 * slice; eight lanes take about as many per vector. A one-call add at
 * (7, 5), median of 9 interleaved chunks of 200,000 adds (scratch driver,
 * 16-byte keys, this machine): w = 10^6 29.7 -> 22.5 ns, w = 10^7 135 ->
 * 77-92 ns (the model of the prototype: 23.5 and about 110).
 */
#ifndef EBB_APBF_WIDE_H
#define EBB_APBF_WIDE_H

#include "apbf/apbf_internal.h"
#include "core/hash.h"

#if defined(EBB_HAVE_X8)

/* The most slices an add writes through the located form: two vectors. */
#define EBB_APBF_WIDE_MAX_K 16u
_Static_assert(EBB_APBF_MAX_K >= EBB_APBF_WIDE_MAX_K,
               "arrays of EBB_APBF_MAX_K hold a located add's lanes");

/* Past this many bytes of slices a one-call query walks on located slices
 * instead of reading every slice at once (apbf.c says why and how it was
 * measured); test_apbf_paths builds filters on both sides of it. */
#define EBB_APBF_WIDE_QUERY_MAX_BYTES (UINT64_C(8) << 20)

/* The high 64 bits of each a * m for one m below 2^32 (every slice short of
 * 4 Gbit): a_hi * m + (a_lo * m >> 32) fits 64 bits, so two 32 x 32-bit
 * products give the exact value. */
static inline __m512i ebb_apbf_mul_high_small_x8(__m512i a, __m512i m)
{
    __m512i low = _mm512_srli_epi64(_mm512_mul_epu32(a, m), 32);
    __m512i high = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
    return _mm512_srli_epi64(_mm512_add_epi64(high, low), 32);
}

/* Each lane's h.lo + index * h.hi: ebb_derive's input for hash function
 * `index` (a buffer position for the ring, j for the bit-sliced cells). */
static inline __m512i ebb_apbf_derived_x8(ebb_hash128 h, __m512i index)
{
    return _mm512_add_epi64(
        _mm512_set1_epi64((long long)h.lo),
        _mm512_mullo_epi64(index, _mm512_set1_epi64((long long)h.hi)));
}

/* Each lane's bit in its slice: the scalar locate's ebb_reduce(mix64(x)). */
static inline __m512i ebb_apbf_plain_bits_x8(const ebb_apbf *f, __m512i x)
{
    __m512i m = _mm512_set1_epi64((long long)f->slice_bits);
    return f->slice_bits >> 32 == 0
               ? ebb_apbf_mul_high_small_x8(ebb_mix64_x8(x), m)
               : ebb_mul_high_x8(ebb_mix64_x8(x), m);
}

/* Logical slices first .. first + 7 located for h: word[j] indexes f->bits,
 * mask[j] is the bit in it, for slice first + j. Both arrays are 64-byte
 * aligned with room for 8. Lanes past the last slice are computed and must
 * not be used. */
static inline void ebb_apbf_plain_locate_x8(const ebb_apbf *f, ebb_hash128 h,
                                            uint32_t first, uint64_t *word,
                                            uint64_t *mask)
{
    const __m512i lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i n = _mm512_set1_epi64((long long)f->slices);
    __m512i pos = _mm512_add_epi64(
        lanes, _mm512_set1_epi64((long long)(f->base + first)));
    /* base < n and first + j < n in the lanes used: one wrap suffices. */
    pos = _mm512_mask_sub_epi64(pos, _mm512_cmpge_epu64_mask(pos, n), pos, n);
    __m512i bit = ebb_apbf_plain_bits_x8(f, ebb_apbf_derived_x8(h, pos));
    __m512i at = _mm512_add_epi64(
        _mm512_mullo_epi64(pos,
                           _mm512_set1_epi64((long long)f->slice_words)),
        _mm512_srli_epi64(bit, 6));
    __m512i one = _mm512_sllv_epi64(
        _mm512_set1_epi64(1), _mm512_and_si512(bit, _mm512_set1_epi64(63)));
    _mm512_store_si512(word, at);
    _mm512_store_si512(mask, one);
}

/* True when f's adds take the located form: plain slices, k <= 16 (the
 * one-call add and the batch add ask the same question). */
static inline bool ebb_apbf_adds_located(const ebb_apbf *f)
{
    return f->path == EBB_APBF_PATH_PLAIN && f->k <= EBB_APBF_WIDE_MAX_K;
}

/* The k newest slices (those an add writes), k <= EBB_APBF_WIDE_MAX_K, into
 * 64-byte aligned arrays of EBB_APBF_WIDE_MAX_K. */
static inline void ebb_apbf_plain_locate_newest(const ebb_apbf *f,
                                                ebb_hash128 h, uint64_t *word,
                                                uint64_t *mask)
{
    for (uint32_t first = 0; first < f->k; first += 8)
        ebb_apbf_plain_locate_x8(f, h, first, word + first, mask + first);
}

#endif
#endif
