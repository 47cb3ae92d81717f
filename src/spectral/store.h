/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store.h: where a spectral filter keeps its counters (issue 15), so that
 * spectral.c, rm.c, batch.c, merge.c, aggregate.c and range.c read and
 * write them one way whatever the storage.
 *
 *   FIXED    f->primary, f->secondary: packed cells (core/cells.h), as
 *            before this layer; every call is the ebb_cells one.
 *   COMPACT  f->compact->parts[part]: the string-array index
 *            (core/strarray.h) with gamma, delta or steps codes. The
 *            ebb_cells structs keep count, width and max (no words), so
 *            the maximum, 2^counter_bits - 1, and with it every answer,
 *            clip and statistic are the fixed store's.
 *
 * All or none on compact storage. A counter whose code grows may need a
 * rebuild of its array, a new allocation, which can fail; shrinking never
 * allocates (strarray.c). An update therefore runs between spectral_begin
 * and spectral_commit: its writes go to a small table of pending counters
 * (read back by spectral_store_get), and the commit applies first every
 * counter that grows, then every one that shrinks. If a growth fails, the
 * growths already applied are set back (shrinks: they cannot fail), the
 * marker bits and fingerprints the update set are cleared, the statistics
 * restored, and the commit returns EBB_ENOMEM: the filter is as it was.
 * Transactions nest (add_int wraps its keys' adds); only the outermost
 * commit applies. Outside a transaction (clear, forget) writes go to the
 * array directly; they only shrink counters. The table holds
 * (2 k + k_s + 4) (L + 1) entries (L the range levels), more than one
 * update can touch; were it ever full the update would be refused as
 * EBB_ENOMEM, unchanged, never applied half.
 *
 * Union and join on compact storage build each part's result in a new
 * array (spectral_stage_*), swapped in only when every part is built.
 *
 * Measured (scratch run, shared 2-core machine, -O2, not a benchmark):
 * MS, m = 1e6, k = 4, 32-bit counters, 4e6 adds of 2e5 keys then 4e6
 * more by batch: fixed 4.0 MB, 30 ns per add, 18 ns per estimate;
 * gamma 1.02 MB, delta 0.92 MB, steps 1.15 MB, ~1 us per add and ~300 ns
 * per estimate (the index's get and set), the same answers.
 */
#ifndef EBB_SPECTRAL_STORE_H
#define EBB_SPECTRAL_STORE_H

#include "core/strarray.h"
#include "spectral/spectral_internal.h"

typedef enum spectral_note_kind {
    SPECTRAL_NOTE_COUNTER = 0,     /* a pending counter value            */
    SPECTRAL_NOTE_MARKER_BIT = 1,  /* a Bloom marker bit set 0 -> 1      */
    SPECTRAL_NOTE_FINGERPRINT = 2  /* an exact marker slot filled        */
} spectral_note_kind;

typedef struct spectral_pending {
    uint64_t index;
    uint32_t old;    /* COUNTER: the array's value                      */
    uint32_t value;  /* COUNTER: the value to commit                    */
    uint8_t part;    /* COUNTER: SPECTRAL_PRIMARY or SPECTRAL_SECONDARY */
    uint8_t kind;    /* spectral_note_kind                              */
} spectral_pending;

struct spectral_compact {
    ebb_strarray parts[2];      /* primary, secondary (RM)             */
    spectral_pending *pending;  /* capacity entries                    */
    size_t used, capacity;
    bool overflow;              /* an update needed more entries       */
    uint32_t depth;             /* nested spectral_begin calls         */
    /* What an update changes besides counters, kept at its begin. */
    ebb_spectral_stats saved_stats;
    uint64_t saved_net, saved_fingerprints_used;
};

/* ---- Shape ---------------------------------------------------------------- */

static inline const ebb_cells *spectral_store_cells(const ebb_spectral *f,
                                                    spectral_part part)
{
    return part == SPECTRAL_PRIMARY ? &f->primary : &f->secondary;
}

static inline uint64_t spectral_store_count(const ebb_spectral *f,
                                            spectral_part part)
{
    return spectral_store_cells(f, part)->count;
}

static inline uint32_t spectral_store_max(const ebb_spectral *f,
                                          spectral_part part)
{
    return spectral_store_cells(f, part)->max;
}

/* ---- Counters (compact ones in store.c) ----------------------------------- */

uint32_t spectral_compact_get(const ebb_spectral *f, spectral_part part,
                              uint64_t i);
void spectral_compact_set(ebb_spectral *f, spectral_part part, uint64_t i,
                          uint32_t v);

static inline uint32_t spectral_store_get(const ebb_spectral *f,
                                          spectral_part part, uint64_t i)
{
    if (f->compact == NULL)
        return ebb_cells_get(spectral_store_cells(f, part), i);
    return spectral_compact_get(f, part, i);
}

/* Counter i = v, a v above max stored as max. */
static inline void spectral_store_set(ebb_spectral *f, spectral_part part,
                                      uint64_t i, uint32_t v)
{
    if (f->compact == NULL) {
        ebb_cells_set(part == SPECTRAL_PRIMARY ? &f->primary : &f->secondary,
                      i, v);
        return;
    }
    uint32_t max = spectral_store_max(f, part);
    spectral_compact_set(f, part, i, v < max ? v : max);
}

/* Counter i += by, stopping at max; true when part of by was lost
 * (ebb_cells_increment). */
static inline bool spectral_store_add(ebb_spectral *f, spectral_part part,
                                      uint64_t i, uint32_t by)
{
    uint32_t old = spectral_store_get(f, part, i);
    uint32_t room = spectral_store_max(f, part) - old;
    spectral_store_set(f, part, i, by < room ? old + by : old + room);
    return by > room;
}

/* Counter i -= by, stopping at 0; true when by > old. */
static inline bool spectral_store_sub(ebb_spectral *f, spectral_part part,
                                      uint64_t i, uint32_t by)
{
    uint32_t old = spectral_store_get(f, part, i);
    spectral_store_set(f, part, i, by < old ? old - by : 0u);
    return by > old;
}

/* Minimum over the counters at pos[0..k-1]; *count (may be NULL) gets how
 * many hold it (spectral_min of spectral_internal.h). */
static inline uint32_t spectral_store_min(const ebb_spectral *f,
                                          spectral_part part,
                                          const uint64_t *pos, uint32_t k,
                                          uint32_t *count)
{
    if (f->compact == NULL)
        return spectral_min(spectral_store_cells(f, part), pos, k, count);
    uint32_t lo = UINT32_MAX, n = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = spectral_compact_get(f, part, pos[j]);
        n = v < lo ? 1u : n + (v == lo);
        lo = v < lo ? v : lo;
    }
    if (count != NULL)
        *count = n;
    return lo;
}

/* A counter value as an estimate: EBB_SPECTRAL_SATURATED at the max. */
static inline uint64_t spectral_store_value(const ebb_spectral *f,
                                            spectral_part part, uint32_t v)
{
    return spectral_value(spectral_store_cells(f, part), v);
}

/* ---- Transactions (compact storage; no-ops for FIXED) ---------------------- */

void spectral_compact_begin(ebb_spectral *f);
ebb_status spectral_compact_commit(ebb_spectral *f);
void spectral_compact_note(ebb_spectral *f, spectral_note_kind kind,
                           uint64_t index);

static inline void spectral_begin(ebb_spectral *f)
{
    if (f->compact != NULL)
        spectral_compact_begin(f);
}

/* EBB_OK, or (compact) EBB_ENOMEM with the update undone. */
static inline ebb_status spectral_commit(ebb_spectral *f)
{
    return f->compact == NULL ? EBB_OK : spectral_compact_commit(f);
}

/* Records a marker bit about to go from 0 to 1 or a fingerprint slot about
 * to be filled, so that a failed commit clears it. */
static inline void spectral_note(ebb_spectral *f, spectral_note_kind kind,
                                 uint64_t index)
{
    if (f->compact != NULL && f->compact->depth > 0)
        spectral_compact_note(f, kind, index);
}

/* ---- Life cycle, sizes ------------------------------------------------------ */

/* Allocates the counters of both parts (secondary when m_s > 0), all 0. */
ebb_status spectral_store_alloc(ebb_spectral *f);
void spectral_store_free(ebb_spectral *f);
/* Every counter of the part to 0 (never fails). */
void spectral_store_clear(ebb_spectral *f, spectral_part part);
/* Counters of the part above 0 (O(m)). */
uint64_t spectral_store_nonzero(const ebb_spectral *f, spectral_part part);
/* Bytes the counters take (both parts; compact: arrays and the pending
 * table). */
size_t spectral_store_bytes(const ebb_spectral *f);
/* The same for a new, empty filter of valid params (saturating). */
uint64_t spectral_store_bytes_for(const ebb_spectral_params *p);
/* The code of a compact storage. */
ebb_code spectral_storage_code(ebb_spectral_storage storage);

/* ---- Rebuilding a part (union, join) ----------------------------------------
 * begin: FIXED writes in place; compact prepares an empty array of the
 * part's shape (EBB_ENOMEM possible). put: counter i of the result = v
 * (compact: every counter not 0 must be put, in any order). end: keep
 * replaces the part's array by the result, else drops the result. */
typedef struct spectral_stage {
    ebb_strarray next;
    bool active;
} spectral_stage;

ebb_status spectral_stage_begin(ebb_spectral *f, spectral_part part,
                                spectral_stage *s);
ebb_status spectral_stage_put(ebb_spectral *f, spectral_part part,
                              spectral_stage *s, uint64_t i, uint32_t v);
void spectral_stage_end(ebb_spectral *f, spectral_part part,
                        spectral_stage *s, bool keep);

#endif
