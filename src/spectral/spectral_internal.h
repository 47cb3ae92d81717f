/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spectral_internal.h: the spectral filter's handle and the steps of an
 * update, shared by spectral.c (one key, MS and MI), rm.c (Recurring
 * Minimum, its marker and traps), batch.c, merge.c, aggregate.c, range.c
 * and snapshot.c. spectral.c's essay says what they do and why.
 *
 * Position j (0..k-1) of a key in a part of the filter is
 * ebb_reduce(ebb_derive(hash', j, EBB_INDEX_MIXED), size) with hash' the
 * key's hash, tweaked per part (spectral_part_hash) so that the primary,
 * the secondary and the marker probe unrelated positions.
 */
#ifndef EBB_SPECTRAL_INTERNAL_H
#define EBB_SPECTRAL_INTERNAL_H

#include "core/cells.h"
#include "core/hash.h"
#include "ebb/spectral.h"

/* The parts of a filter; spectral_part_hash tweaks the key's hash by part. */
typedef enum spectral_part {
    SPECTRAL_PRIMARY = 0,
    SPECTRAL_SECONDARY = 1,
    SPECTRAL_MARKER = 2
} spectral_part;

/* One entry of the trapping RM's table L: a trapped primary counter and
 * the hash of the key that set the trap. `counter` = UINT64_MAX: empty. */
typedef struct spectral_trap {
    uint64_t counter;
    ebb_hash128 key;
} spectral_trap;

/* Compact storage's arrays and pending updates (store.h). */
typedef struct spectral_compact spectral_compact;

struct ebb_spectral {
    ebb_spectral_params params;
    /* FIXED storage: the counters. Compact: count, width and max only
     * (words NULL, word_count 0); the counters are in compact->parts.
     * Read and write them through store.h, which serves both. */
    ebb_cells primary;       /* m counters of counter_bits                  */
    ebb_cells secondary;     /* RM: m_s counters (count 0 otherwise)        */
    spectral_compact *compact; /* NULL for FIXED storage                    */
    ebb_cells marker;        /* RM, BLOOM marker: marker_size 1-bit cells   */
    uint64_t *fingerprints;  /* RM, EXACT marker: marker_size slots, 0 empty */
    uint64_t fingerprints_used;
    spectral_trap *traps;    /* trapping RM: trap_slots entries, else NULL  */
    uint64_t traps_used;     /* entries of `traps` in use                   */
    uint32_t range_levels;   /* ceil(log2 range) when range > 0, else 0     */
    uint64_t net;            /* N: occurrences added minus removed          */
    ebb_spectral_stats stats;/* memory_bytes filled on demand              */
};

/* The key's hash for a part: the primary uses it as it is; the others
 * xor fixed odd constants into both halves (documented in spectral.c). */
static inline ebb_hash128 spectral_part_hash(ebb_hash128 h, spectral_part part)
{
    static const uint64_t tweak_lo[3] = {
        0, UINT64_C(0x9e3779b97f4a7c15), UINT64_C(0xbf58476d1ce4e5b9)};
    static const uint64_t tweak_hi[3] = {
        0, UINT64_C(0x94d049bb133111eb), UINT64_C(0xd6e8feb86659fd93)};
    ebb_hash128 out = {h.lo ^ tweak_lo[part], h.hi ^ tweak_hi[part]};
    return out;
}

/* The k positions of a key in a part of `size` cells. */
static inline void spectral_positions(ebb_hash128 h, uint32_t k,
                                      uint64_t size, uint64_t *out)
{
    for (uint32_t j = 0; j < k; j++)
        out[j] = ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), size);
}

/* Prefetches the words of the primary counters at pos[0..k-1] (FIXED
 * storage), for writing or reading. */
static inline void spectral_prefetch_words(const ebb_spectral *f,
                                           const uint64_t *pos, int write)
{
    const ebb_cells *c = &f->primary;
    for (uint32_t j = 0; j < f->params.k; j++) {
        const uint64_t *at = c->words + ((pos[j] * c->width) >> 6);
        if (write)
            __builtin_prefetch(at, 1, 3);
        else
            __builtin_prefetch(at, 0, 3);
    }
}

/* Minimum over the counters at positions pos[0..k-1]; *count gets how
 * many of them hold it (1: a single minimum, RM's signal). */
static inline uint32_t spectral_min(const ebb_cells *c, const uint64_t *pos,
                                    uint32_t k, uint32_t *count)
{
    uint32_t lo = UINT32_MAX, n = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = ebb_cells_get(c, pos[j]);
        n = v < lo ? 1u : n + (v == lo);
        lo = v < lo ? v : lo;
    }
    if (count != NULL)
        *count = n;
    return lo;
}

/* ---- Recurring Minimum (rm.c) -------------------------------------------
 * Called by spectral.c's public functions when params.method is RM, with r
 * already clamped to the counters' maximum (the clamp counted). Each
 * applies to all the counters it touches or to none, and keeps stats. */
void spectral_rm_add(ebb_spectral *f, ebb_hash128 h, uint32_t r);
/* EBB_EUNDERFLOW (nothing changed, counted) when a primary counter of the
 * key is below r. */
ebb_status spectral_rm_remove(ebb_spectral *f, ebb_hash128 h, uint32_t r);
uint64_t spectral_rm_estimate(const ebb_spectral *f, ebb_hash128 h);
/* Clears the secondary, the marker and the traps (merge without
 * EBB_SPECTRAL_MERGE_PARTITIONED, join). */
void spectral_rm_forget(ebb_spectral *f);

/* Counter value read as an estimate: EBB_SPECTRAL_SATURATED at the max. */
static inline uint64_t spectral_value(const ebb_cells *c, uint32_t v)
{
    return v == c->max ? EBB_SPECTRAL_SATURATED : v;
}

/* ---- Shared by spectral.c, batch.c, merge.c, snapshot.c --------------
 * Statistics: spectral.c keeps stats.added, stats.removed and net for
 * every method (added before the method's update, removed and net after a
 * removal that succeeded) and, for MS and MI, saturations and
 * refused_removals; for RM it counts one saturation when r itself is
 * above the counters' maximum, and rm.c keeps the rest (its counters'
 * clips, refused_removals, moved, traps_*). */

/* MS and MI: the update and the estimate at the key's primary positions
 * pos (spectral_positions of h); RM: the rm.c call for h (pos unused). */
void spectral_add_at(ebb_spectral *f, ebb_hash128 h, const uint64_t *pos,
                     uint64_t r);
uint64_t spectral_estimate_at(const ebb_spectral *f, ebb_hash128 h,
                              const uint64_t *pos);
/* Empties the trap table (every entry empty, traps_used 0). */
void spectral_clear_traps(ebb_spectral *f);
/* ceil(log2 range) for range > 0, else 0. */
uint32_t spectral_range_levels(uint64_t range);

/* ---- Range trees (range.c) ----------------------------------------------
 * Item x (0 <= x < range) is the 8-byte little-endian key x under the
 * filter's seed, so ebb_spectral_estimate(f, &le64, 8) answers for it.
 * The dyadic node (level l >= 1, index i), covering [i 2^l, (i + 1) 2^l),
 * is the 16-byte key le64(l) le64(i) under the seed params.seed ^
 * SPECTRAL_RANGE_NODE_TAG: a key of another length under another seed, a
 * domain disjoint from the items' (range.c). */
#define SPECTRAL_RANGE_NODE_TAG UINT64_C(0x5a3c9d2f71e86b41)
/* Most nodes a decomposition of lo..hi takes: 2 floor(log2(hi - lo + 1))
 * <= 122 for a range of at most 2^62 keys; 1 when lo = hi. */
#define SPECTRAL_RANGE_MAX_NODES 128u

typedef struct spectral_range_node {
    uint32_t level;  /* 0: the item itself, else a dyadic node            */
    uint64_t index;  /* covers [index 2^level, (index + 1) 2^level)       */
} spectral_range_node;

ebb_hash128 spectral_range_item_hash(const ebb_spectral *f, uint64_t x);
ebb_hash128 spectral_range_node_hash(const ebb_spectral *f, uint32_t level,
                                     uint64_t index);
/* The fewest dyadic nodes of levels 0..levels covering lo..hi exactly, in
 * increasing order; returns how many. lo <= hi < 2^levels (or lo = hi = 0
 * with levels = 0), levels <= 62. */
size_t spectral_range_decompose(uint64_t lo, uint64_t hi, uint32_t levels,
                                spectral_range_node *out);

/* True when removing r (already clamped) from every one of the n keys, as
 * the method's removal would, takes no primary counter below zero: each
 * counter not saturated holds at least r times the number of positions,
 * over all n keys, that fall on it. n <= SPECTRAL_CAN_REMOVE_MAX_KEYS.
 * Checking the keys together is what lets a multi-key removal (the item
 * and its tree nodes) apply to all of them or none. (range.c) */
#define SPECTRAL_CAN_REMOVE_MAX_KEYS 64u
bool spectral_can_remove_all(const ebb_spectral *f, const ebb_hash128 *h,
                             size_t n, uint32_t r);

/* ---- RM's exact marker (rm.c, merge.c, snapshot.c) ----------------------
 * The table `fingerprints` holds marker_size slots, 0 an empty one. A key's
 * fingerprint is the high half of its marker-part hash, 0 mapped to 1; its
 * home slot is ebb_reduce(fingerprint, slots); linear probing, no
 * deletion (forget and clear empty the whole table). */
static inline uint64_t spectral_fingerprint(ebb_hash128 h)
{
    uint64_t fp = spectral_part_hash(h, SPECTRAL_MARKER).hi;
    return fp == 0 ? 1u : fp;
}

static inline uint64_t spectral_fingerprint_home(uint64_t fp, uint64_t slots)
{
    return ebb_reduce(fp, slots);
}

/* The slot holding fp, or the empty slot where it would go, or
 * UINT64_MAX when fp is absent and the table is full. */
static inline uint64_t spectral_fingerprint_slot(const uint64_t *table,
                                                 uint64_t slots, uint64_t fp)
{
    uint64_t i = spectral_fingerprint_home(fp, slots);
    for (uint64_t n = 0; n < slots; n++) {
        if (table[i] == fp || table[i] == 0)
            return i;
        i = i + 1 == slots ? 0 : i + 1;
    }
    return UINT64_MAX;
}

/* Most fingerprints a table of `slots` holds: three quarters (at least one
 * slot stays empty), so a probe for an absent key ends after about
 * (1 + 1/(1 - 3/4)^2) / 2 = 8.5 slots at worst load, never a scan. */
static inline uint64_t spectral_fingerprint_capacity(uint64_t slots)
{
    return slots - (slots + 3u) / 4u;
}

/* Inserts fp into f's table unless there: false when the table holds
 * spectral_fingerprint_capacity fingerprints already ("full"). */
bool spectral_fingerprint_insert(ebb_spectral *f, uint64_t fp);

#endif
