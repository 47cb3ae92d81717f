/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf_internal.h: the time-limited filter's handle, shared by src/tlbf.
 */
#ifndef EBB_TLBF_INTERNAL_H
#define EBB_TLBF_INTERNAL_H

#include "core/slice.h"
#include "ebb/tlbf.h"

/* Most slices a filter holds: the k + l of a steady rate plus what a burst
 * adds; the analytics handle up to k + EBB_APBF_MAX_L. */
#define EBB_TLBF_MAX_EXTRA EBB_APBF_MAX_L

/* Marks a slice that has never received an insertion. */
#define EBB_TLBF_NEVER INT64_MIN

/* A slice descriptor. At positions >= k, inserted and last_ns are the
 * slice's own; the k newest owe the filter's `pending` adds (read them
 * through ebb_tlbf_inserted and ebb_tlbf_last_ns). */
typedef struct tlbf_slice {
    uint64_t *bits;      /* cache-line aligned words                     */
    void *block;         /* what to free                                 */
    size_t block_bytes;  /* footprint of block                           */
    uint64_t nbits;      /* m_i                                          */
    uint64_t capacity;   /* c_i: insertions that bring it to fill 1/2    */
    uint64_t inserted;   /* n_i                                          */
    int64_t last_ns;     /* t_i: time of its latest insertion            */
    uint32_t hash_index; /* h_i in [0, k)                                */
} tlbf_slice;

/* A slice as the hot paths read it: its bits, size and hash index, copied
 * densely out of its 64-byte ring entry. The handle keeps one for each of
 * the k slices every add writes (f->writes, refreshed whenever the ring
 * changes: reached through the ring instead, the one-call add took a
 * third longer, docs/bench.md); a batch query copies the live slices'. */
typedef struct tlbf_view {
    uint64_t *bits;
    uint64_t nbits;
    uint32_t hash_index;
} tlbf_view;

struct ebb_tlbf {
    uint32_t k, l;
    int64_t span;                /* T in nanoseconds                       */
    size_t max_memory;
    uint64_t seed;
    uint64_t initial_capacity;   /* insertions expected per span           */

    tlbf_slice *ring;            /* slot capacity entries                  */
    uint32_t ring_slots;
    uint32_t head;               /* slot of s_0                            */
    uint32_t count;              /* slices held: s_0 .. s_{count-1}        */
    ebb_tlbf_policy policy;      /* beside count: no padding (the handle's
                                    size counts against max_memory)        */
    size_t bits_bytes;           /* footprints of the slices' blocks       */

    uint64_t left;               /* insertions before the next shift       */
    /* The adds since s_0 .. s_{k-1} last received their count and time:
     * every add writes those same k slices until the next shift, so an add
     * counts here once instead of writing k descriptors (k cache lines);
     * settle (tlbf.c) hands the count over, with latest_ns as their time,
     * before anything moves or empties them. */
    uint64_t pending;
    /* An add recorded before this time, with budget left, does nothing
     * but write: no reset, no overdue generation, no expired slice to free
     * (refresh_due). INT64_MIN: every add takes the full path. */
    int64_t due_ns;
    /* Rate estimation: insertions counted since rate_base_ns, turned into
     * a per-generation estimate once at least a quarter generation of time
     * has passed (a coarse or repeated clock never reads as infinite). */
    uint64_t since_base;
    int64_t rate_base_ns;
    uint64_t estimate;           /* insertions per generation, smoothed    */
    int64_t generation_ns;       /* when the current generation began      */
    int64_t latest_ns;           /* EBB_TLBF_NEVER before the first call   */

    uint64_t insertions, shifts, evicted, refused, clamped, resets;
    tlbf_view writes[];          /* k entries: s_0 .. s_{k-1}              */
};

/* Logical slice i (0 newest, i < count). */
static inline tlbf_slice *ebb_tlbf_at(const ebb_tlbf *f, uint32_t i)
{
    uint32_t slot = f->head + i;
    return &f->ring[slot >= f->ring_slots ? slot - f->ring_slots : slot];
}

/* n_i and t_i of logical slice i, the pending adds of the k newest
 * included: what the descriptors would hold had every add written them. */
static inline uint64_t ebb_tlbf_inserted(const ebb_tlbf *f, uint32_t i)
{
    return ebb_tlbf_at(f, i)->inserted + (i < f->k ? f->pending : 0);
}

static inline int64_t ebb_tlbf_last_ns(const ebb_tlbf *f, uint32_t i)
{
    return i < f->k && f->pending != 0 ? f->latest_ns
                                       : ebb_tlbf_at(f, i)->last_ns;
}

/* What an add or a batch query needs of a slice, copied out of its ring
 * entry. */
static inline tlbf_view ebb_tlbf_view_of(const tlbf_slice *s)
{
    tlbf_view v = {s->bits, s->nbits, s->hash_index};
    return v;
}

/* Where h's bit lies in a viewed slice. */
static inline ebb_slice_probe ebb_tlbf_view_locate(const tlbf_view *v,
                                                   ebb_hash128 h)
{
    return ebb_slice_locate(v->bits, h, v->hash_index, v->nbits);
}

/* Copies the k newest slices' bit arrays, sizes and hash indexes into
 * f->writes: after anything that moves, replaces or creates them. */
static inline void ebb_tlbf_refresh_writes(ebb_tlbf *f)
{
    for (uint32_t i = 0; i < f->k && i < f->count; i++)
        f->writes[i] = ebb_tlbf_view_of(ebb_tlbf_at(f, i));
}

/* Bytes a filter of k written slices holds with a ring of `slots` entries
 * and `bits` bytes of slice blocks. */
size_t ebb_tlbf_footprint(uint32_t k, uint32_t slots, size_t bits);

/* Bits for a capacity: m = ceil(c / ln 2), so floor(m ln 2) >= c. 0 when
 * too large. */
uint64_t ebb_tlbf_bits_for(uint64_t capacity);

/* Bytes of the block holding a slice of nbits: the words rounded up to a
 * size class (1/64 of the largest power of two below, at least one cache
 * line), so blocks of nearly equal slices can be reused, and a function of
 * nbits alone, so a loaded filter holds exactly what the saved one held. */
size_t ebb_tlbf_block_bytes(uint64_t nbits);

/* The largest slice capacity, floor(2^40 ln 2), and the largest
 * per-generation estimate, that over k. */
uint64_t ebb_tlbf_max_capacity(void);
uint64_t ebb_tlbf_max_estimate(uint32_t k);

/* The per-generation estimate the initial capacity gives (clamped). */
uint64_t ebb_tlbf_initial_estimate(const ebb_tlbf *f);

/* A filter with shape (k, l), an empty ring of `slots` entries and no
 * slices. EBB_ENOMEM. */
ebb_status ebb_tlbf_new(uint32_t k, uint32_t l, uint32_t slots,
                        ebb_tlbf **out);

/* Allocates a zeroed slice of nbits. EBB_ENOMEM / EBB_EOVERFLOW. */
ebb_status ebb_tlbf_slice_alloc(tlbf_slice *slice, uint64_t nbits,
                                uint64_t capacity);

/* Number of live slices at time now: the prefix with t_i >= now - T. */
uint32_t ebb_tlbf_live(const ebb_tlbf *f, int64_t now);

/* The next generation size: max(1, min over i < k of
 * floor((c_i - n_i) / (k - i))). */
uint64_t ebb_tlbf_schedule(const ebb_tlbf *f);

/* True when the k written slices (f->writes) hold enough bytes for a batch
 * to prefetch its writes (ebb_add_prefetch_pays). tlbf.c. */
bool ebb_tlbf_writes_staged(const ebb_tlbf *f);

#endif
