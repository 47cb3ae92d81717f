/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * slice.h: one slice of a partitioned Bloom filter, the unit every
 * age-partitioned filter is made of: m bits, one derived hash function.
 * The APBF (equal slices in a ring) and the time-limited filter (slices of
 * varying size) both locate, set and test their bits through these.
 */
#ifndef EBB_CORE_SLICE_H
#define EBB_CORE_SLICE_H

#include "core/bits.h"
#include "core/hash.h"

/* The bit that hash function `index` selects for h in a slice of nbits. */
static inline uint64_t ebb_slice_bit(ebb_hash128 h, uint32_t index,
                                     uint64_t nbits, ebb_index_scheme scheme)
{
    return ebb_reduce(ebb_derive(h, index, scheme), nbits);
}

/* Where one slice read or write lands: the word and the bit's mask (plain
 * slices), or the block and the value its bits come from (blocked APBF).
 * A batch locates its bits before touching any, so that the cache misses
 * overlap. */
typedef struct ebb_slice_probe {
    uint64_t *at;
    uint64_t aux;
} ebb_slice_probe;

/* Below this many bytes in the slices an add writes, they stay in the
 * caches (twice a 1 MiB L2) and a batch add's prefetching only adds
 * instructions: APBF batch adds were 20-40% slower than single ones at
 * w = 10^6 with it, and a TLBF batch add 48.5 ns against 45.0 for single
 * adds (docs/bench.md). */
#define EBB_ADD_PREFETCH_MIN_BYTES (UINT64_C(2) << 20)

/* True when an add's written slices hold enough bytes (written_bytes) for
 * a batch add to pay for locating and prefetching before it writes. */
static inline bool ebb_add_prefetch_pays(uint64_t written_bytes)
{
    return written_bytes >= EBB_ADD_PREFETCH_MIN_BYTES;
}

static inline ebb_slice_probe ebb_slice_locate(uint64_t *words, ebb_hash128 h,
                                               uint32_t index, uint64_t nbits)
{
    uint64_t bit = ebb_slice_bit(h, index, nbits, EBB_INDEX_MIXED);
    ebb_slice_probe probe = {words + (bit >> 6), UINT64_C(1) << (bit & 63u)};
    return probe;
}

static inline bool ebb_slice_probe_test(const ebb_slice_probe *probe)
{
    return (*probe->at & probe->aux) != 0;
}

static inline void ebb_slice_probe_set(const ebb_slice_probe *probe)
{
    *probe->at |= probe->aux;
}

#endif
