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

/* The shapes the walk and its analytics accept: 1 <= k <= EBB_APBF_MAX_K,
 * 1 <= l <= EBB_APBF_MAX_L. */
static inline bool ebb_age_kl_valid(uint32_t k, uint32_t l)
{
    return k >= 1 && k <= EBB_APBF_MAX_K && l >= 1 && l <= EBB_APBF_MAX_L;
}

/* Tests logical slice i (0 <= i < k + l) for hash h. */
typedef bool (*ebb_slice_predicate)(const void *filter, ebb_hash128 h, uint32_t i);

/* True when some run of k matching slices starts at 0..l. When accesses is
 * not NULL it receives the number of slice tests performed. */
static inline bool ebb_age_query(uint32_t k, uint32_t l, ebb_slice_predicate test,
                                 const void *filter, ebb_hash128 h,
                                 uint32_t *accesses)
{
    int64_t i = l; /* signed: a jump below slice 0 ends the walk */
    uint32_t previous = 0, run = 0, reads = 0;
    bool found = false;
    while (i >= 0) {
        reads++;
        if (test(filter, h, (uint32_t)i)) {
            run++;
            i++;
            if (previous + run == k) {
                found = true;
                break;
            }
        } else {
            i -= k;
            previous = run;
            run = 0;
        }
    }
    if (accesses != NULL)
        *accesses = reads;
    return found;
}

#endif
