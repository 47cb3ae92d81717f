/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * posterior.c: Theorem 1 of "Inferential Time-Decaying Bloom Filters"
 * (Eq. 13) on a stable filter that never forgets (P = 0), i.e. a classic
 * Bloom filter when d = 1 (include/ebb/stable.h states the formula).
 *
 * The theorem needs n, the insertions, and fp, the probability that a key
 * that was not inserted finds its K cells all set. A key's K cells are
 * independent uniform positions (stable_position; they may coincide), so
 * given the filter as it is, fp = fill^K exactly, fill = (cells not 0) / m
 * over the key's hash. The filter keeps the count of non-zero cells when
 * P = 0 (stable_set_counted, recounted on load), so the query is the K
 * cell reads of contains plus a pow: O(K), no allocation.
 *
 * The formula itself is ebb_classic_posterior (src/timing/inference.c,
 * declared in ebb/timing.h), the free function the timing family already
 * exports and tests against a brute-force sum; it depends on nothing of
 * the timing filter, so calling it from here adds a link between two
 * files of the same library, not between the families' data structures.
 */
#include <math.h>

#include "ebb/timing.h"
#include "stable/stable_internal.h"

ebb_status ebb_stable_posterior_hash(const ebb_stable *f, ebb_hash128 hash,
                                     double prior, double *out)
{
    if (f == NULL || out == NULL || f->p != 0 ||
        !(prior > 0.0 && prior <= 1.0))
        return EBB_EINVAL;
    bool all_set = ebb_stable_contains_hash(f, hash);
    if (f->insertions == 0) {
        *out = 0.0; /* nothing inserted: every cell is 0, x is not there */
        return EBB_OK;
    }
    double fill = (double)f->filled / (double)f->cells.count;
    double fp = pow(fill, (double)f->k);
    *out = ebb_classic_posterior(prior, f->insertions, fp, all_set);
    return EBB_OK;
}

ebb_status ebb_stable_posterior(const ebb_stable *f, const void *key,
                                size_t len, double prior, double *out)
{
    if (f == NULL || (key == NULL && len != 0))
        return EBB_EINVAL;
    return ebb_stable_posterior_hash(f, ebb_hash_inline(key, len, f->seed),
                                     prior, out);
}
