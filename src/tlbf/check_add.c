/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check_add.c: the TLBF's check-and-add batch, the primitive of
 * deduplication (and of the Redis module's TLBF.MADD).
 *
 * Exactly the one-at-a-time sequence at one time now_ns: for each key in
 * order, seen = contains, then add (whose status is kept, and the batch
 * goes on after a refusal or a failed allocation, as n single calls
 * would). A key repeated inside the batch is therefore seen by its second
 * occurrence, and a shift or a retirement between two keys is seen by the
 * second. What the batch adds over the single calls is memory overlap:
 * while the k written slices are past the caches (ebb_add_prefetch_pays),
 * the lines every key of a chunk will write are prefetched before the
 * first key of the chunk is checked. The views used for that are the ones
 * in force at the chunk's start; a shift inside the chunk only makes some
 * prefetches useless (a prefetch never faults), never an answer wrong.
 */
#include "tlbf/tlbf_internal.h"

/* Keys whose write lines are prefetched together, as add_batch's chunk. */
#define CHECK_ADD_CHUNK 16u

/* True when the k written slices exist and are past the caches. */
static bool writes_prefetched(const ebb_tlbf *f)
{
    return f->count >= f->k && ebb_tlbf_writes_staged(f);
}

static void prefetch_writes(const ebb_tlbf *f, const ebb_hash128 *h, size_t n)
{
    for (size_t j = 0; j < n; j++)
        for (uint32_t i = 0; i < f->k; i++) {
            ebb_slice_probe probe = ebb_tlbf_view_locate(&f->writes[i], h[j]);
            __builtin_prefetch(probe.at, 1, 3);
        }
}

size_t ebb_tlbf_check_and_add_batch(ebb_tlbf *f, const ebb_hash128 *hashes,
                                    size_t n, int64_t now_ns, bool *seen,
                                    ebb_status *statuses)
{
    size_t found = 0;
    for (size_t start = 0; start < n; start += CHECK_ADD_CHUNK) {
        size_t end = n - start < CHECK_ADD_CHUNK ? n : start + CHECK_ADD_CHUNK;
        if (writes_prefetched(f))
            prefetch_writes(f, hashes + start, end - start);
        for (size_t j = start; j < end; j++) {
            bool hit = ebb_tlbf_contains_hash(f, hashes[j], now_ns);
            ebb_status st = ebb_tlbf_add_hash(f, hashes[j], now_ns);
            if (seen != NULL)
                seen[j] = hit;
            if (statuses != NULL)
                statuses[j] = st;
            found += hit;
        }
    }
    return found;
}
