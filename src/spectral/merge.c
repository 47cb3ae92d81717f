/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * merge.c: union (section 2.2) and join (section 5.3) of two compatible
 * spectral filters, counter by counter.
 *
 * Union adds: dest_i += weight * src_i, saturating at max (each clipped
 * counter counted). Counters are sums of the keys' counts on them under
 * MS, so the sum is exactly the filter built from both streams (the
 * statistics add too). Under MI each counter is at least the largest
 * count among its keys, in each filter, so the sum is at least the
 * combined count: one-sided, only less tight. Union by cell-wise maximum
 * would not be (2 + 3 would merge to 3). RM: the primaries add; the
 * secondaries add and the markers unite (Bloom: OR; exact: src's
 * fingerprints inserted into dest's table, after checking that they fit:
 * EBB_ELIMIT with neither filter changed otherwise) only when the caller
 * promises that the two streams share no key (EBB_SPECTRAL_MERGE_PARTITIONED), because
 * a key recurring in both would have secondary counts from each side that
 * miss the other side's occurrences; without the promise the secondary,
 * marker and traps are cleared (spectral_rm_forget), so RM answers from
 * the primary, as MS, until keys recur. Traps name counters of a primary
 * that the merge changes: always cleared.
 *
 * Join multiplies: dest_i = dest_i src_i. A key's counters are at least
 * f_x in each filter, so their product is at least f_x(dest) f_x(src)
 * (the Spectral Bloomjoin's estimate of the join size per key). A
 * saturated counter times a non-zero one stays saturated, times 0 is 0
 * (the key is absent from the other side). The statistics are dest's,
 * clips added; RM's secondary, marker and traps are cleared.
 *
 * Both refuse (EBB_EINVAL) incompatible filters, weight 0 and unknown
 * flags before anything is written: neither filter changes.
 *
 * Compact storage (store.h): each part's result is written into a new
 * array (spectral_stage_*) and the new arrays replace dest's only when
 * all were built, so EBB_ENOMEM leaves dest as it was; src may be dest
 * (its old arrays are read while the new ones are written). FIXED
 * storage writes in place, as before.
 */
#include <string.h>

#include "core/bits.h"
#include "spectral/store.h"

static bool compatible(const ebb_spectral_params *a,
                       const ebb_spectral_params *b)
{
    return a->counters == b->counters && a->counter_bits == b->counter_bits &&
           a->k == b->k && a->method == b->method &&
           a->secondary == b->secondary && a->secondary_k == b->secondary_k &&
           a->marker == b->marker && a->marker_size == b->marker_size &&
           a->trap_slots == b->trap_slots && a->range == b->range &&
           a->seed == b->seed && a->storage == b->storage;
}

/* dest += weight * src over a part, into stage; *clipped gets the clips.
 * EBB_ENOMEM (compact) when the stage cannot grow. */
static ebb_status add_part(ebb_spectral *dest, const ebb_spectral *src,
                           spectral_part part, spectral_stage *stage,
                           uint64_t weight, uint64_t *clipped)
{
    uint32_t max = spectral_store_max(dest, part);
    uint64_t count = spectral_store_count(dest, part);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t s = spectral_store_get(src, part, i);
        uint32_t d = spectral_store_get(dest, part, i);
        uint32_t v = d; /* s = 0: kept (a new array must receive it) */
        if (s != 0) {
            uint32_t room = max - d;
            bool clip = weight > room / s;
            *clipped += clip;
            v = clip ? max : d + (uint32_t)(weight * s);
        } else if (!stage->active) {
            continue;
        }
        ebb_status st = spectral_stage_put(dest, part, stage, i, v);
        if (st != EBB_OK)
            return st;
    }
    return EBB_OK;
}

/* dest *= src over a part, into stage; *clipped gets the clips. */
static ebb_status multiply_part(ebb_spectral *dest, const ebb_spectral *src,
                                spectral_part part, spectral_stage *stage,
                                uint64_t *clipped)
{
    uint32_t max = spectral_store_max(dest, part);
    uint64_t count = spectral_store_count(dest, part);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t d = spectral_store_get(dest, part, i);
        if (d == 0)
            continue;
        uint32_t s = spectral_store_get(src, part, i);
        uint64_t product = (uint64_t)d * s;
        bool clip = product > max || (d == max && s != 0);
        *clipped += clip;
        ebb_status st = spectral_stage_put(dest, part, stage, i,
                                           clip ? max : (uint32_t)product);
        if (st != EBB_OK)
            return st;
    }
    return EBB_OK;
}

/* Marker bits: dest |= src, word by word (1-bit cells, tails clear). */
static void or_cells(ebb_cells *dest, const ebb_cells *src)
{
    for (uint64_t w = 0; w < dest->word_count; w++)
        dest->words[w] |= src->words[w];
}

static uint64_t scaled(uint64_t v, uint64_t weight)
{
    return v != 0 && weight > UINT64_MAX / v ? UINT64_MAX : v * weight;
}

/* The statistics of a union: dest's plus weight times src's. */
static void add_stats(ebb_spectral *dest, const ebb_spectral *src,
                      uint64_t weight)
{
    ebb_spectral_stats *d = &dest->stats;
    const ebb_spectral_stats *s = &src->stats;
    d->added = ebb_saturating_add(d->added, scaled(s->added, weight));
    d->removed = ebb_saturating_add(d->removed, scaled(s->removed, weight));
    d->refused_removals = ebb_saturating_add(d->refused_removals,
                                             s->refused_removals);
    d->saturations = ebb_saturating_add(d->saturations, s->saturations);
    d->moved = ebb_saturating_add(d->moved, s->moved);
    d->moves_refused = ebb_saturating_add(d->moves_refused, s->moves_refused);
    dest->net = ebb_saturating_add(dest->net, scaled(src->net, weight));
}

/* How many of src's fingerprints dest's table lacks. */
static uint64_t fingerprints_missing(const ebb_spectral *dest,
                                     const ebb_spectral *src)
{
    uint64_t missing = 0, slots = dest->params.marker_size;
    for (uint64_t i = 0; i < slots; i++) {
        uint64_t fp = src->fingerprints[i];
        if (fp == 0)
            continue;
        uint64_t at = spectral_fingerprint_slot(dest->fingerprints, slots, fp);
        missing += at == UINT64_MAX || dest->fingerprints[at] != fp;
    }
    return missing;
}

/* EBB_ELIMIT when a partitioned RM union cannot keep every moved key of
 * both sides in dest's exact marker. */
static ebb_status merge_room(const ebb_spectral *dest, const ebb_spectral *src,
                             unsigned flags)
{
    if (dest->fingerprints == NULL || dest == src ||
        (flags & EBB_SPECTRAL_MERGE_PARTITIONED) == 0)
        return EBB_OK;
    /* inserts stop at the table's capacity (3/4 of its slots), not at
     * its size */
    uint64_t room = spectral_fingerprint_capacity(dest->params.marker_size) -
                    dest->fingerprints_used;
    return fingerprints_missing(dest, src) <= room ? EBB_OK : EBB_ELIMIT;
}

ebb_status ebb_spectral_merge(ebb_spectral *dest, const ebb_spectral *src,
                              uint64_t weight, unsigned flags)
{
    if (dest == NULL || src == NULL || weight == 0 ||
        (flags & ~EBB_SPECTRAL_MERGE_PARTITIONED) != 0 ||
        !compatible(&dest->params, &src->params))
        return EBB_EINVAL;
    ebb_status st = merge_room(dest, src, flags);
    if (st != EBB_OK)
        return st;
    bool rm = dest->params.method == EBB_SPECTRAL_RM;
    bool partitioned = (flags & EBB_SPECTRAL_MERGE_PARTITIONED) != 0;
    /* src may be dest: add_stats reads each field before it writes it,
     * add_part each counter (compact: from the old arrays). */
    uint64_t clipped = 0;
    spectral_stage primary, secondary;
    memset(&secondary, 0, sizeof secondary);
    st = spectral_stage_begin(dest, SPECTRAL_PRIMARY, &primary);
    if (st == EBB_OK)
        st = add_part(dest, src, SPECTRAL_PRIMARY, &primary, weight,
                      &clipped);
    if (st == EBB_OK && rm && partitioned) {
        st = spectral_stage_begin(dest, SPECTRAL_SECONDARY, &secondary);
        if (st == EBB_OK)
            st = add_part(dest, src, SPECTRAL_SECONDARY, &secondary, weight,
                          &clipped);
    }
    spectral_stage_end(dest, SPECTRAL_PRIMARY, &primary, st == EBB_OK);
    spectral_stage_end(dest, SPECTRAL_SECONDARY, &secondary, st == EBB_OK);
    if (st != EBB_OK)
        return st;
    add_stats(dest, src, weight);
    if (rm && partitioned) {
        if (dest->marker.words != NULL)
            or_cells(&dest->marker, &src->marker);
        if (dest->fingerprints != NULL && dest != src)
            for (uint64_t i = 0; i < src->params.marker_size; i++)
                if (src->fingerprints[i] != 0) /* room checked */
                    (void)spectral_fingerprint_insert(dest,
                                                      src->fingerprints[i]);
        if (dest->traps != NULL)
            spectral_clear_traps(dest);
    } else if (rm) {
        spectral_rm_forget(dest);
    }
    dest->stats.saturations =
        ebb_saturating_add(dest->stats.saturations, clipped);
    return EBB_OK;
}

ebb_status ebb_spectral_join(ebb_spectral *dest, const ebb_spectral *src)
{
    if (dest == NULL || src == NULL ||
        !compatible(&dest->params, &src->params))
        return EBB_EINVAL;
    uint64_t clipped = 0;
    spectral_stage primary;
    ebb_status st = spectral_stage_begin(dest, SPECTRAL_PRIMARY, &primary);
    if (st == EBB_OK)
        st = multiply_part(dest, src, SPECTRAL_PRIMARY, &primary, &clipped);
    spectral_stage_end(dest, SPECTRAL_PRIMARY, &primary, st == EBB_OK);
    if (st != EBB_OK)
        return st;
    if (dest->params.method == EBB_SPECTRAL_RM)
        spectral_rm_forget(dest);
    dest->stats.saturations =
        ebb_saturating_add(dest->stats.saturations, clipped);
    return EBB_OK;
}
