/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spectral.c: the Spectral Bloom filter: one key's add, removal and
 * estimate under Minimum Selection and Minimal Increase, and the handle.
 *
 * The paper
 * ---------
 * Cohen and Matias, "Spectral Bloom Filters" (SIGMOD 2003), sections 2, 3
 * and 5; ../shared/spec/spectral.md marks its gaps. A Bloom filter whose m
 * bits are counters: inserting x adds to its k counters, and the estimate
 * of x's multiplicity f_x is read from them. This file holds Minimum
 * Selection (MS, section 2.1) and Minimal Increase (MI, section 3.2);
 * Recurring Minimum (RM, section 3.3) is rm.c's, called from here.
 * batch.c, merge.c (union and join), params.c (sizing), snapshot.c
 * (family 6) and the operations of section 5 have their own files.
 *
 * The structure
 * -------------
 * m counters of w bits (1 <= w <= 32, max = 2^w - 1), packed into one
 * little-endian bit stream of 64-bit words (src/core/cells.h): counter i
 * is bits [i w, i w + w). m = 20, w = 3, a key x at positions 2, 7, 17:
 *
 *   counter   0   1   2   3   4   5   6   7  ...  17  18  19
 *   value   [ 0 | 1 | 3 | 0 | 0 | 2 | 0 | 4 | ... | 3 | 0 | 0 ]
 *                     ^               ^            ^
 *   word 0: bits 0..59 hold counters 0..19, bits 60..63 are 0.
 *
 * Here f_x <= min(3, 4, 3) = 3 = m_x, the estimate. A key's positions
 * are ebb_reduce(ebb_derive(h', j), m), j < k, h' its 128-bit hash tweaked
 * per part (spectral_internal.h): k independent uniform counters, which
 * may coincide when m is small. RM adds a secondary of m_s counters of the
 * same width and a marker of 1-bit cells; trapping RM a table of
 * (counter, key hash) entries. Nothing is allocated after creation.
 *
 * Compact storage (ebb_spectral_storage, issue 15) keeps the counters in
 * the paper's string-array index instead (section 4; src/core/strarray.h)
 * with the same maximum 2^w - 1, so every answer, clip and statistic is
 * the fixed cells'. All access goes through store.h; an update there is
 * a transaction whose growth may allocate (a rebuild of the index) and,
 * failing, is undone whole (EBB_ENOMEM). tests/unit/
 * test_spectral_compact.c runs both storages side by side.
 *
 * The formulas
 * ------------
 * After n distinct keys (whatever their multiplicities), a key's k
 * counters are all shared with other keys with the Bloom error
 *   E_b = (1 - (1 - 1/m)^(k n))^k ~ (1 - e^-gamma)^k,  gamma = n k / m,
 * and MS answers above f_x at most that often: the error ratio E_b
 * (ebb_spectral_error_ratio). For a key that was itself inserted, the
 * other n - 1 keys must cover its counters: (1 - (1 - 1/m)^(k (n-1)))^k,
 * what tests/stats/test_spectral_error checks. MI raises only the
 * minimal counters: each counter is then the largest count among the keys
 * on it that it must bound, so an error needs the same coverage but is
 * smaller and rarer (Claim 5: E_b / k on uniform data); the bound ebb
 * promises for MI is MS's.
 *
 * The updates (r occurrences; r = 0 changes nothing)
 * -------------------------------------------------
 *   MS add:     every position j: counter += r. A counter that two of
 *               the key's positions share gets 2r: each position alone
 *               must bound f_x, and the key's removal takes 2r back.
 *   MI add:     target = m_x + r; every position: counter = max(counter,
 *               target). Shared positions take the target once.
 *   MS remove:  for each distinct counter c of the key, its multiplicity
 *               t among the k positions: c >= t r must hold for every one
 *               (else EBB_EUNDERFLOW, nothing written, counted), then
 *               c -= t r. A saturated counter is neither checked nor
 *               changed (its true sum is unknown, and at least max).
 *   MI remove:  refused (EBB_EINVAL): subtracting r from counters that MI
 *               did not raise for x takes other keys below their counts
 *               (section 3.4, Fig. 8). ebb_spectral_remove_unsafe makes
 *               MS's removal on an MI filter, for the experiments.
 *   estimate:   m_x, the minimum over the positions; a minimum at max is
 *               EBB_SPECTRAL_SATURATED ("at least max").
 *
 * Invariants
 * ----------
 *   - One-sided (Claim 1): with removals only of what was added, every
 *     counter of x is at least f_x under MS, so m_x >= f_x. Under MI the
 *     same holds for insert-only streams (each counter bounds the largest
 *     f_y it was raised for). Saturation keeps it: a counter at max reads
 *     "at least max", never a number.
 *   - All or none: an add never fails (a counter that would pass max
 *     stops there, the clip counted once per position in
 *     stats.saturations, a clamp of r itself included); a removal checks
 *     every counter before it writes one.
 *   - Sticky saturation: a counter at max is never decremented and never
 *     reads as a count again until clear.
 *   - Queries never write; no operation allocates; the same operations in
 *     the same order leave two filters of the same params byte-identical.
 *
 * Decisions where the paper is silent
 * -----------------------------------
 *   - Coincident positions (m small): as above; the paper assumes k
 *     distinct counters. MS counts a shared counter once per position on
 *     add and removal alike, so its removal is the exact inverse; a
 *     coincidence is not a "recurring minimum" (rm.c counts distinct
 *     counters).
 *   - Saturation: the paper's counters are unbounded (its string-array
 *     index grows them); fixed-width counters stop at max and say so.
 *   - r above max: taken as max for the counters (any counter it touches
 *     saturates); the statistics count the r asked for.
 *   - Statistics: added and removed are the r of successful calls; net
 *     N = added - removed is Lemma 3's N (aggregates).
 *
 * Measured numbers
 * ----------------
 * Error ratio (tests/stats/test_spectral_error: 60,000 distinct keys of
 * counts 1..4, 32-bit counters; expected (1-(1-1/m)^(k(n-1)))^k):
 *
 *   gamma  k   MS ratio   expected   z       MI ratio
 *   0.25   6   0.00017    0.00012    +1.12   0.00005
 *   0.5    4   0.02382    0.02397    -0.24   0.00790
 *   1      3   0.25167    0.25257    -0.51   0.12725
 *   2      2   0.74765    0.74764    +0.00   0.63633
 *   3      1   0.95107    0.95021    +0.96   0.95107  (k = 1: MI is MS)
 *
 * Time: `make bench` (docs/bench.md, "Spectral filters") against
 * libbloom at equal k on the same keys, idle, at 7f261bb: MS add 0.78x /
 * 0.95x libbloom's time one call and 0.56x / 0.42x batched at m = 1e6 /
 * 1e8; estimate 1.35x / 1.31x one call (it stops at the first counter at
 * 0, as bloom_check stops at the first 0 bit) and 1.07x / 0.66x batched.
 * The batch's prefetching pays out of the caches (2.2x on MS adds at
 * 1e8).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/bits.h"
#include "spectral/store.h"

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

uint32_t spectral_range_levels(uint64_t range)
{
    uint32_t levels = 0;
    while (levels < 64u && (UINT64_C(1) << levels) < range)
        levels++;
    return range == 0 ? 0 : levels;
}

void spectral_clear_traps(ebb_spectral *f)
{
    for (uint64_t i = 0; i < f->params.trap_slots; i++) {
        f->traps[i].counter = UINT64_MAX;
        f->traps[i].key.lo = 0;
        f->traps[i].key.hi = 0;
    }
    f->traps_used = 0;
}

static void free_parts(ebb_spectral *f)
{
    spectral_store_free(f);
    ebb_cells_free(&f->marker);
    ebb_mem_free(f->fingerprints);
    ebb_mem_free(f->traps);
}

static ebb_status alloc_traps(ebb_spectral *f, uint64_t slots)
{
    if (slots == 0)
        return EBB_OK;
    if (slots > SIZE_MAX / sizeof(spectral_trap))
        return EBB_EOVERFLOW;
    f->traps = ebb_mem_alloc((size_t)slots * sizeof(spectral_trap));
    if (f->traps == NULL)
        return EBB_ENOMEM;
    spectral_clear_traps(f);
    return EBB_OK;
}

/* RM's exact marker: `slots` 64-bit fingerprints, all 0 (empty). */
static ebb_status alloc_fingerprints(ebb_spectral *f, uint64_t slots)
{
    if (slots > SIZE_MAX / sizeof(uint64_t))
        return EBB_EOVERFLOW;
    f->fingerprints = ebb_mem_alloc((size_t)slots * sizeof(uint64_t));
    if (f->fingerprints == NULL)
        return EBB_ENOMEM;
    memset(f->fingerprints, 0, (size_t)slots * sizeof(uint64_t));
    return EBB_OK;
}

static ebb_status alloc_parts(ebb_spectral *f)
{
    const ebb_spectral_params *p = &f->params;
    ebb_status st = spectral_store_alloc(f);
    if (st == EBB_OK && p->marker == EBB_SPECTRAL_MARKER_BLOOM)
        st = ebb_cells_init(&f->marker, p->marker_size, 1);
    if (st == EBB_OK && p->method == EBB_SPECTRAL_RM &&
        p->marker == EBB_SPECTRAL_MARKER_EXACT)
        st = alloc_fingerprints(f, p->marker_size);
    if (st == EBB_OK)
        st = alloc_traps(f, p->trap_slots);
    return st;
}

ebb_status ebb_spectral_create(const ebb_spectral_params *params,
                               ebb_spectral **out)
{
    if (out == NULL || ebb_spectral_params_check(params) != EBB_OK)
        return EBB_EINVAL;
    ebb_spectral *f = ebb_mem_alloc(sizeof *f);
    if (f == NULL)
        return EBB_ENOMEM;
    memset(f, 0, sizeof *f);
    f->params = *params;
    f->range_levels = spectral_range_levels(params->range);
    ebb_status st = alloc_parts(f);
    if (st != EBB_OK) {
        free_parts(f);
        ebb_mem_free(f);
        return st;
    }
    *out = f;
    return EBB_OK;
}

void ebb_spectral_destroy(ebb_spectral *filter)
{
    if (filter == NULL)
        return;
    free_parts(filter);
    ebb_mem_free(filter);
}

void ebb_spectral_clear(ebb_spectral *f)
{
    spectral_store_clear(f, SPECTRAL_PRIMARY);
    spectral_store_clear(f, SPECTRAL_SECONDARY);
    if (f->marker.words != NULL)
        ebb_cells_clear(&f->marker);
    spectral_rm_forget(f);
    f->net = 0;
    memset(&f->stats, 0, sizeof f->stats);
}

const ebb_spectral_params *ebb_spectral_get_params(const ebb_spectral *f)
{
    return &f->params;
}

ebb_hash128 ebb_spectral_hash(const ebb_spectral *f, const void *key,
                              size_t len)
{
    return ebb_hash_inline(key, len, f->params.seed);
}

/* ------------------------------------------------------------------------ */
/* Minimum Selection and Minimal Increase                                   */
/* ------------------------------------------------------------------------ */

/* r as the counters take it: at most max. */
static inline uint32_t clamp_r(const ebb_cells *c, uint64_t r)
{
    return r < c->max ? (uint32_t)r : c->max;
}

/* MS: counter += r at every position (twice at a shared one). A clip is
 * counted when old + r passes max, r as asked. */
static inline void ms_add(ebb_spectral *f, const uint64_t *pos, uint64_t r)
{
    ebb_cells *c = &f->primary;
    uint32_t by = clamp_r(c, r);
    uint64_t clipped = 0;
    if (f->compact != NULL) {
        for (uint32_t j = 0; j < f->params.k; j++) {
            uint32_t old = spectral_compact_get(f, SPECTRAL_PRIMARY, pos[j]);
            uint32_t room = c->max - old;
            clipped += r > room;
            spectral_compact_set(f, SPECTRAL_PRIMARY, pos[j],
                                 by < room ? old + by : c->max);
        }
    } else {
        for (uint32_t j = 0; j < f->params.k; j++) {
            uint64_t bit = ebb_cells_bit_(c, pos[j]);
            uint32_t old = ebb_cells_read_(c, bit);
            uint32_t room = c->max - old;
            clipped += r > room;
            ebb_cells_write_(c, bit, by < room ? old + by : c->max);
        }
    }
    f->stats.saturations = ebb_saturating_add(f->stats.saturations, clipped);
}

/* MI: every position to max(counter, m_x + r). */
static inline void mi_add(ebb_spectral *f, const uint64_t *pos, uint64_t r)
{
    const ebb_cells *c = &f->primary;
    uint64_t target =
        spectral_store_min(f, SPECTRAL_PRIMARY, pos, f->params.k, NULL);
    target = ebb_saturating_add(target, r);
    uint32_t value = target < c->max ? (uint32_t)target : c->max;
    uint64_t clipped = 0;
    for (uint32_t j = 0; j < f->params.k; j++) {
        uint32_t old = spectral_store_get(f, SPECTRAL_PRIMARY, pos[j]);
        if (old >= target)
            continue;
        clipped += target > c->max;
        spectral_store_set(f, SPECTRAL_PRIMARY, pos[j], value);
    }
    f->stats.saturations = ebb_saturating_add(f->stats.saturations, clipped);
}

void spectral_add_at(ebb_spectral *f, ebb_hash128 h, const uint64_t *pos,
                     uint64_t r)
{
    if (r == 0)
        return;
    f->stats.added = ebb_saturating_add(f->stats.added, r);
    f->net = ebb_saturating_add(f->net, r);
    switch (f->params.method) {
    case EBB_SPECTRAL_MS:
        ms_add(f, pos, r);
        break;
    case EBB_SPECTRAL_MI:
        mi_add(f, pos, r);
        break;
    case EBB_SPECTRAL_RM:
        if (r > f->primary.max)
            f->stats.saturations = ebb_saturating_add(f->stats.saturations,
                                                      1u);
        spectral_rm_add(f, h, clamp_r(&f->primary, r));
        break;
    }
}

uint64_t spectral_estimate_at(const ebb_spectral *f, ebb_hash128 h,
                              const uint64_t *pos)
{
    if (f->params.method == EBB_SPECTRAL_RM)
        return spectral_rm_estimate(f, h);
    uint32_t lo =
        spectral_store_min(f, SPECTRAL_PRIMARY, pos, f->params.k, NULL);
    return spectral_value(&f->primary, lo);
}

/* The first of the key's positions equal to pos[j] (j itself when the
 * counter is not shared with an earlier position). */
static inline uint32_t first_of(const uint64_t *pos, uint32_t j)
{
    uint32_t i = 0;
    while (pos[i] != pos[j])
        i++;
    return i;
}

/* MS's removal, for MS and remove_unsafe on MI: checks every distinct
 * counter (its value against r times its multiplicity) in a local copy,
 * then writes. Saturated counters are skipped. */
static ebb_status ms_remove(ebb_spectral *f, const uint64_t *pos, uint64_t r)
{
    const ebb_cells *c = &f->primary;
    uint32_t by = clamp_r(c, r);
    uint32_t k = f->params.k;
    uint32_t left[EBB_SPECTRAL_MAX_K];
    for (uint32_t j = 0; j < k; j++)
        left[j] = spectral_store_get(f, SPECTRAL_PRIMARY, pos[j]);
    for (uint32_t j = 0; j < k; j++) {
        uint32_t i = first_of(pos, j);
        if (left[i] == c->max)
            continue; /* saturated: sticky, its sum unknown */
        if (left[i] < by || r > c->max) {
            f->stats.refused_removals =
                ebb_saturating_add(f->stats.refused_removals, 1u);
            return EBB_EUNDERFLOW;
        }
        left[i] -= by;
    }
    for (uint32_t j = 0; j < k; j++)
        if (first_of(pos, j) == j &&
            spectral_store_get(f, SPECTRAL_PRIMARY, pos[j]) != c->max)
            spectral_store_set(f, SPECTRAL_PRIMARY, pos[j], left[j]);
    return EBB_OK;
}

static void count_removed(ebb_spectral *f, uint64_t r)
{
    f->stats.removed = ebb_saturating_add(f->stats.removed, r);
    f->net = f->net > r ? f->net - r : 0;
}

/* A removal by the method's rule; unsafe: MI removes as MS does. */
static ebb_status remove_hash(ebb_spectral *f, ebb_hash128 h, uint64_t r,
                              bool unsafe)
{
    if (f->params.method == EBB_SPECTRAL_MI && !unsafe)
        return EBB_EINVAL;
    if (r == 0)
        return EBB_OK;
    ebb_status st;
    spectral_begin(f);
    if (f->params.method == EBB_SPECTRAL_RM) {
        /* Above max, only saturated counters can hold r: rm.c sees max,
         * which its unsaturated counters (all below max) refuse too. */
        st = spectral_rm_remove(f, h, clamp_r(&f->primary, r));
    } else {
        uint64_t pos[EBB_SPECTRAL_MAX_K];
        spectral_positions(h, f->params.k, f->primary.count, pos);
        st = ms_remove(f, pos, r);
    }
    if (st == EBB_OK)
        count_removed(f, r);
    /* a removal only shrinks counters: its commit cannot fail */
    ebb_status committed = spectral_commit(f);
    return st != EBB_OK ? st : committed;
}

/* ------------------------------------------------------------------------ */
/* The public calls                                                         */
/* ------------------------------------------------------------------------ */

/* One add, its positions left in pos (unset for RM) for the caller. */
static ebb_status add_hash_at(ebb_spectral *f, ebb_hash128 hash, uint64_t r,
                              uint64_t *pos)
{
    if (f->params.method != EBB_SPECTRAL_RM)
        spectral_positions(hash, f->params.k, f->primary.count, pos);
    spectral_begin(f);
    spectral_add_at(f, hash, pos, r);
    return spectral_commit(f);
}

ebb_status ebb_spectral_add_hash(ebb_spectral *f, ebb_hash128 hash,
                                 uint64_t r)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    return add_hash_at(f, hash, r, pos);
}

ebb_status ebb_spectral_add_estimate_hash(ebb_spectral *f, ebb_hash128 hash,
                                          uint64_t r, uint64_t *estimate)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    ebb_status st = add_hash_at(f, hash, r, pos);
    /* After the commit: a refused compact update was rolled back, and
     * the estimate is the unchanged filter's. */
    *estimate = spectral_estimate_at(f, hash, pos);
    return st;
}

void ebb_spectral_prefetch_hash(const ebb_spectral *f, ebb_hash128 hash)
{
    if (f->params.method == EBB_SPECTRAL_RM || f->compact != NULL)
        return;
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    spectral_positions(hash, f->params.k, f->primary.count, pos);
    spectral_prefetch_words(f, pos, 1);
}

ebb_status ebb_spectral_add(ebb_spectral *f, const void *key, size_t len,
                            uint64_t r)
{
    return ebb_spectral_add_hash(f, ebb_hash_inline(key, len, f->params.seed),
                                 r);
}

ebb_status ebb_spectral_remove_hash(ebb_spectral *f, ebb_hash128 hash,
                                    uint64_t r)
{
    return remove_hash(f, hash, r, false);
}

ebb_status ebb_spectral_remove(ebb_spectral *f, const void *key, size_t len,
                               uint64_t r)
{
    return remove_hash(f, ebb_hash_inline(key, len, f->params.seed), r,
                       false);
}

ebb_status ebb_spectral_remove_unsafe(ebb_spectral *f, ebb_hash128 hash,
                                      uint64_t r)
{
    return remove_hash(f, hash, r, true);
}

/* MS and MI, one key: the minimum, position by position, stopping at the
 * first counter at 0 (the answer then is 0 whatever the others hold). A
 * key never added (most queries of a dedup or an iceberg test) is then
 * answered after about 1 / (1 - fill) reads instead of k, as a Bloom
 * filter's check; batches read all k, which their prefetching has in
 * flight already. */
static uint64_t min_until_zero_compact(const ebb_spectral *f, ebb_hash128 h)
{
    const ebb_cells *c = &f->primary;
    uint32_t lo = UINT32_MAX;
    for (uint32_t j = 0; j < f->params.k; j++) {
        uint64_t at = ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), c->count);
        uint32_t v = spectral_compact_get(f, SPECTRAL_PRIMARY, at);
        if (v == 0)
            return 0;
        lo = v < lo ? v : lo;
    }
    return spectral_value(c, lo);
}

static uint64_t min_until_zero(const ebb_spectral *f, ebb_hash128 h)
{
    if (f->compact != NULL)
        return min_until_zero_compact(f, h);
    const ebb_cells *c = &f->primary;
    uint32_t lo = UINT32_MAX;
    for (uint32_t j = 0; j < f->params.k; j++) {
        uint64_t at = ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), c->count);
        uint32_t v = ebb_cells_get(c, at);
        if (v == 0)
            return 0;
        lo = v < lo ? v : lo;
    }
    return spectral_value(c, lo);
}

uint64_t ebb_spectral_estimate_hash(const ebb_spectral *f, ebb_hash128 hash)
{
    if (f->params.method != EBB_SPECTRAL_RM)
        return min_until_zero(f, hash);
    return spectral_rm_estimate(f, hash);
}

uint64_t ebb_spectral_estimate(const ebb_spectral *f, const void *key,
                               size_t len)
{
    return ebb_spectral_estimate_hash(
        f, ebb_hash_inline(key, len, f->params.seed));
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

size_t ebb_spectral_memory(const ebb_spectral *f)
{
    return sizeof *f + spectral_store_bytes(f) + ebb_cells_bytes(&f->marker) +
           (f->fingerprints != NULL
                ? (size_t)f->params.marker_size * sizeof(uint64_t)
                : 0) +
           (size_t)f->params.trap_slots * sizeof(spectral_trap);
}

void ebb_spectral_get_stats(const ebb_spectral *f, ebb_spectral_stats *out)
{
    *out = f->stats;
    out->nonzero = spectral_store_nonzero(f, SPECTRAL_PRIMARY);
    out->memory_bytes = ebb_spectral_memory(f);
}
