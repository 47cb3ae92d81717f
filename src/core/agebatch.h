/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * agebatch.h: many age-partitioned queries at once. Shared by the APBF
 * (plain and blocked) and the time-limited filter.
 *
 * Why interleave. One query of Algorithm 1 (agequery.h) is a chain of
 * dependent reads: which slice comes next depends on the bit just read, so
 * a query at 10^8 items waits for one cache miss after another (~0.5 us
 * each on the development VM). A batch keeps EBB_AGE_FLIGHTS walks in
 * flight: every round advances each walk by one read whose line was
 * prefetched a round earlier, and a walk that ends hands its place to the
 * next query of the batch at once, so the memory system always has about
 * EBB_AGE_FLIGHTS independent misses to serve (docs/bench.md measured
 * ~45 needed to run at this machine's random-read ceiling).
 *
 * Reading all k + l slices of a query at once instead, branch-free, was
 * tried and dropped: with the filter beyond L2 (other processes sharing the
 * L3, or 4 KiB pages over hundreds of megabytes) the extra lines cost more
 * than the walk's dependent reads (2.5-4x slower one call at a time,
 * measured on the development VM).
 *
 * The caller supplies, as static inline functions (the compiler
 * specialises these functions for them):
 *   locate(filter, h, i, &probe)  where logical slice i's read lands for
 *                                 hash h (the batch prefetches it);
 *   match(filter, &probe)         the slice test on the located line.
 */
#ifndef EBB_CORE_AGEBATCH_H
#define EBB_CORE_AGEBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/agequery.h"
#include "core/slice.h"

/* Walks in flight at once: enough independent misses to reach the memory
 * system's random-read ceiling, few enough that their lines stay in L1. */
#define EBB_AGE_FLIGHTS 48u

typedef void (*ebb_age_locate_fn)(const void *filter, ebb_hash128 h,
                                  uint32_t i, ebb_slice_probe *probe);
typedef bool (*ebb_age_match_fn)(const void *filter, const ebb_slice_probe *probe);

/* One query of a batch: its walk, its next read, its place in the batch. */
typedef struct ebb_age_flight {
    ebb_age_walk walk;
    ebb_slice_probe probe;
    size_t index;
} ebb_age_flight;

EBB_ALWAYS_INLINE void ebb_age_flight_begin(ebb_age_flight *q, const void *filter,
                                        uint32_t l, ebb_hash128 h, size_t index,
                                        ebb_age_locate_fn locate)
{
    q->walk = ebb_age_walk_begin(l);
    q->index = index;
    locate(filter, h, (uint32_t)q->walk.slice, &q->probe);
    __builtin_prefetch(q->probe.at, 0, 3);
}

/* Advances one walk of a batch by the read its line was prefetched for.
 * When the walk ends, its answer is stored and the flight takes query
 * *next at once, unconditionally written: the caller runs it over every
 * flight in a loop of fixed count, without the general loop's bookkeeping
 * of active flights. Only for rounds in which every flight may take a new
 * query (*next + EBB_AGE_FLIGHTS <= n). The conditional expressions compile
 * to branches, which measured faster than masks (ebb_age_walk_step).
 * Returns 1 for a walk that ended present. */
EBB_ALWAYS_INLINE size_t ebb_age_flight_advance(ebb_age_flight *q,
                                                const void *filter, uint32_t k,
                                                uint32_t l, const ebb_hash128 *h,
                                                size_t *next, bool *out,
                                                ebb_age_locate_fn locate,
                                                ebb_age_match_fn match)
{
    ebb_age_step step = ebb_age_walk_step(&q->walk, k, match(filter, &q->probe));
    bool ended = step != EBB_AGE_READ_NEXT;
    bool present = step == EBB_AGE_FOUND;
    /* Unconditional: before its walk ends a query's answer is false, and
     * the store at its end is the last one to its place. */
    out[q->index] = present;
    ebb_age_walk fresh = ebb_age_walk_begin(l);
    q->walk.slice = ended ? fresh.slice : q->walk.slice;
    q->walk.previous = ended ? fresh.previous : q->walk.previous;
    q->walk.run = ended ? fresh.run : q->walk.run;
    q->walk.reads = ended ? fresh.reads : q->walk.reads;
    q->index = ended ? *next : q->index;
    *next += ended;
    locate(filter, h[q->index], (uint32_t)q->walk.slice, &q->probe);
    __builtin_prefetch(q->probe.at, 0, 3);
    return present;
}

/* Answers n queries into out[] (true: present) and returns how many are
 * present; the answers are those of ebb_age_query, key by key. */
EBB_ALWAYS_INLINE size_t ebb_age_query_batch(const void *filter, uint32_t k,
                                         uint32_t l, const ebb_hash128 *h,
                                         size_t n, bool *out,
                                         ebb_age_locate_fn locate,
                                         ebb_age_match_fn match)
{
    ebb_age_flight q[EBB_AGE_FLIGHTS];
    size_t next = 0, found = 0, active = 0;
    while (active < EBB_AGE_FLIGHTS && next < n) {
        ebb_age_flight_begin(&q[active], filter, l, h[next], next, locate);
        active++, next++;
    }
    /* Every flight busy and a whole round of new queries left: a walk that
     * ends takes its successor in the same step. */
    while (active == EBB_AGE_FLIGHTS && n - next >= EBB_AGE_FLIGHTS)
        for (size_t a = 0; a < EBB_AGE_FLIGHTS; a++)
            found += ebb_age_flight_advance(&q[a], filter, k, l, h, &next, out,
                                            locate, match);
    /* The rest: walks that end take what is left, then drain. */
    while (active > 0) {
        for (size_t a = 0; a < active;) {
            ebb_age_step step = ebb_age_walk_step(&q[a].walk, k,
                                                  match(filter, &q[a].probe));
            if (step == EBB_AGE_READ_NEXT) {
                locate(filter, h[q[a].index], (uint32_t)q[a].walk.slice,
                       &q[a].probe);
                __builtin_prefetch(q[a].probe.at, 0, 3);
                a++;
                continue;
            }
            out[q[a].index] = step == EBB_AGE_FOUND;
            found += step == EBB_AGE_FOUND;
            if (next < n) { /* the next query takes the place at once */
                ebb_age_flight_begin(&q[a], filter, l, h[next], next, locate);
                next++, a++;
            } else {
                q[a] = q[--active];
            }
        }
    }
    return found;
}

#endif
