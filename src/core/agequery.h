/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * agequery.h: the age-partitioned query (Algorithm 1 of Shtul, Baquero and
 * Almeida, "Age-Partitioned Bloom Filters", section 5.4), shared by every
 * filter made of aging slices: the APBF and its blocked variant, and the
 * time-limited filter whose slices differ in size.
 *
 * Slices are numbered by age, 0 newest. A key is present when some run of k
 * consecutive slices starting at 0..l all match. The walk starts at slice l
 * and moves towards older slices counting matches; on a miss it jumps k
 * slices towards the new end, carrying the matches it had (they sit just
 * above the new position and can complete a run from below).
 *
 * The caller supplies the slice test as a static inline function; the
 * compiler specialises this function for it, so the indirection costs
 * nothing.
 */
#ifndef EBB_CORE_AGEQUERY_H
#define EBB_CORE_AGEQUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "ebb/ebb.h"

/* For the functions that take the slice test as a function pointer: they
 * must be inlined into their caller for the pointer to become a direct,
 * inlined call; left out of line (gcc does for large ones) every slice read
 * becomes an indirect call. */
#define EBB_ALWAYS_INLINE static inline __attribute__((always_inline))

/* The shapes the walk and its analytics accept: 1 <= k <= EBB_APBF_MAX_K,
 * 1 <= l <= EBB_APBF_MAX_L. */
static inline bool ebb_age_kl_valid(uint32_t k, uint32_t l)
{
    return k >= 1 && k <= EBB_APBF_MAX_K && l >= 1 && l <= EBB_APBF_MAX_L;
}

/* Tests logical slice i (0 <= i < k + l) for hash h. */
typedef bool (*ebb_slice_predicate)(const void *filter, ebb_hash128 h, uint32_t i);

/* Algorithm 1 as a resumable walk, so that a batch can advance many
 * queries one slice read at a time and overlap their cache misses. */
typedef struct ebb_age_walk {
    int64_t slice;     /* the slice to read next (signed: a jump below 0
                          ends the walk)                                  */
    uint32_t previous; /* matches carried from before the last jump       */
    uint32_t run;      /* matches since                                   */
    uint32_t reads;
} ebb_age_walk;

typedef enum ebb_age_step {
    EBB_AGE_READ_NEXT = 0, /* read walk->slice next                        */
    EBB_AGE_FOUND = 1,     /* k consecutive matches: present               */
    EBB_AGE_ABSENT = 2     /* walked off the new end: absent               */
} ebb_age_step;

static inline ebb_age_walk ebb_age_walk_begin(uint32_t l)
{
    ebb_age_walk walk = {(int64_t)l, 0, 0, 0};
    return walk;
}

/* Feeds the outcome of reading walk->slice. The conditional expressions
 * compile to branches (gcc 12), and that is the faster form: predicted, a
 * branch lets the core compute and issue the next read before the bit just
 * read arrives. A form without branches (masks) made one call 2.1-3.0x
 * slower and a batch 1.1-1.9x slower (w = 10^6, (8, 7) and (2, 5) b = 8,
 * three interleaved runs of a scratch driver): every read then waits for
 * the one before, and the masks cost 33-42% more instructions. A miss
 * cannot complete a run: the carried run is below k, or the walk would
 * have ended at the match that made it. */
static inline ebb_age_step ebb_age_walk_step(ebb_age_walk *w, uint32_t k,
                                             bool match)
{
    uint32_t run = match ? w->run + 1u : 0u;
    uint32_t previous = match ? w->previous : w->run;
    w->reads++;
    w->slice += match ? 1 : -(int64_t)k;
    w->run = run;
    w->previous = previous;
    if (previous + run == k)
        return EBB_AGE_FOUND;
    return w->slice < 0 ? EBB_AGE_ABSENT : EBB_AGE_READ_NEXT;
}

/* The same answer from every slice's test at once: bit i of `matches` is
 * logical slice i's. Present when k consecutive ones start at 0..l: the
 * run lengths double, t &= t >> s, until they cover k. Written once for
 * 64 slices and once for 128, where the compiler has 128-bit integers
 * (the 128-bit form costs more even on 64 slices' worth of bits). */
#define EBB_AGE_RUN_PRESENT(name, type, width)                                 \
    static inline bool name(type matches, uint32_t k, uint32_t l)            \
    {                                                                        \
        type t = matches;                                                    \
        uint32_t covered = 1;                                                \
        while (covered < k) {                                                \
            uint32_t step = covered < k - covered ? covered : k - covered;   \
            t &= t >> step;                                                  \
            covered += step;                                                 \
        }                                                                    \
        type starts = l + 1u >= (width) ? (type)~(type)0                     \
                                        : ((type)1 << (l + 1u)) - 1u;        \
        return (t & starts) != 0;                                            \
    }

EBB_AGE_RUN_PRESENT(ebb_age_run_present, uint64_t, 64u)
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 ebb_age_bits128;
EBB_AGE_RUN_PRESENT(ebb_age_run_present128, ebb_age_bits128, 128u)
#define EBB_AGE_RUN_MAX_SLICES 128u
#else
#define EBB_AGE_RUN_MAX_SLICES 64u
#endif

/* True when some run of k matching slices starts at 0..l. When accesses is
 * not NULL it receives the number of slice tests performed. */
EBB_ALWAYS_INLINE bool ebb_age_query(uint32_t k, uint32_t l,
                                 ebb_slice_predicate test, const void *filter,
                                 ebb_hash128 h, uint32_t *accesses)
{
    ebb_age_walk walk = ebb_age_walk_begin(l);
    ebb_age_step step;
    do {
        step = ebb_age_walk_step(&walk, k,
                                 test(filter, h, (uint32_t)walk.slice));
    } while (step == EBB_AGE_READ_NEXT);
    if (accesses != NULL)
        *accesses = walk.reads;
    return step == EBB_AGE_FOUND;
}

#endif
