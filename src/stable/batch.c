/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * batch.c: stable filter operations on many hashes at once.
 *
 * One item's update waits on K + 1 cache misses (its K cells and its
 * decrement cells); a batch issues the misses of the next AHEAD items
 * before it updates the current one, so the memory system serves them in
 * parallel. Each item is "prepared" AHEAD items before it is applied: its
 * level (counting a clamp or a refusal), its K cells, and, when the draw
 * depends on the generator alone (the consecutive start, the small
 * independent draws), its decrement cells, drawn from the filter's
 * generator then. Preparing and applying both go in item order, so the
 * generator is consumed exactly as by the single calls, every query sees
 * the updates of the items before it, and answers and final state are the
 * single calls' byte for byte (tests/unit/test_stable.c compares them).
 * A batch keeps the papers' order (query, decrements, set) for every item;
 * the single test-and-add reorders most items (stable_test_and_apply), so
 * that comparison also checks the reordering. The prefetched batch did not
 * measurably gain from it in one noisy bench run, so it was not kept here.
 * Draws that depend on cell values (IBF_H) or use the scratch set are made
 * when the item is applied, as in a single call.
 *
 * Below EBB_ADD_PREFETCH_MIN_BYTES of cells the filter stays in the caches
 * and the batch is a loop of single calls' steps: nothing to prefetch, so
 * nothing to prepare ahead.
 */
#include "core/slice.h"
#include "stable/stable_internal.h"

/* Items prepared ahead of the one applied, and the ring holding them. */
#define AHEAD 8u
#define RING 16u

static inline void prefetch_read(const void *p)
{
    __builtin_prefetch(p, 0, 3);
}

static bool prefetch_pays(const ebb_stable *f)
{
    return ebb_add_prefetch_pays(ebb_cells_bytes(&f->cells));
}

void ebb_stable_hash_batch(const ebb_stable *f, const void *const *keys,
                           const size_t *lens, size_t n, ebb_hash128 *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ebb_hash_inline(keys[i], lens[i], f->seed);
}

/* ---- Queries ---------------------------------------------------------- */

static inline size_t contains_run(const ebb_stable *f, const ebb_hash128 *h,
                                  size_t n, bool *out, bool prefetch)
{
    uint64_t ring[RING][EBB_STABLE_MAX_K];
    size_t found = 0;
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n) {
            uint64_t *pos = ring[i % RING];
            stable_bits(f, h[i], pos);
            for (uint32_t j = 0; prefetch && j < f->k; j++)
                prefetch_read(f->cells.words + (pos[j] >> 6));
        }
        if (i >= AHEAD) {
            size_t at = i - AHEAD;
            bool hit = stable_query_at(f, ring[at % RING]);
            if (out != NULL)
                out[at] = hit;
            found += hit;
        }
    }
    return found;
}

size_t ebb_stable_contains_batch(const ebb_stable *f,
                                 const ebb_hash128 *hashes, size_t n,
                                 bool *out)
{
    if (prefetch_pays(f))
        return contains_run(f, hashes, n, out, true);
    return contains_run(f, hashes, n, out, false);
}

/* ---- Updates ---------------------------------------------------------- */

/* The level (Max without importances; a refusal counted) and the rest of
 * the preparation of one item, in item order. */
static inline void prepare(ebb_stable *f, ebb_hash128 h, const double *imp,
                           stable_item *it, bool prefetch)
{
    it->level = f->cells.max;
    it->refused = imp != NULL &&
                  ebb_stable_level_counted(f, *imp, &it->level) != EBB_OK;
    stable_prepare(f, h, it, prefetch, false);
}

/* The prepared item's query (when asked) and update; false for a refused
 * item, which is answered as the single call answers it (the query, read
 * before anything changes) and not written. */
static inline bool apply(ebb_stable *f, const stable_item *it, bool query,
                         bool *hit)
{
    *hit = query && stable_query_all(f, it->bits);
    if (it->refused)
        return false;
    stable_apply(f, it);
    return true;
}

/* The batch: item i is prepared while item i - AHEAD is applied. */
static inline ebb_status update_run(ebb_stable *f, const ebb_hash128 *h,
                                    const double *imps, size_t n, bool query,
                                    bool *seen, size_t *seen_count)
{
    stable_item ring[RING];
    size_t found = 0;
    bool refused = false;
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n)
            prepare(f, h[i], imps == NULL ? NULL : &imps[i], &ring[i % RING],
                    true);
        if (i >= AHEAD) {
            size_t at = i - AHEAD;
            bool hit;
            refused |= !apply(f, &ring[at % RING], query, &hit);
            if (seen != NULL)
                seen[at] = hit;
            found += hit;
        }
    }
    if (seen_count != NULL)
        *seen_count = found;
    return refused ? EBB_EINVAL : EBB_OK;
}

/* In the caches there is nothing to prefetch ahead: each item is prepared
 * and applied at once, as a single call, without the ring. */
static ebb_status update_each(ebb_stable *f, const ebb_hash128 *h,
                              const double *imps, size_t n, bool query,
                              bool *seen, size_t *seen_count)
{
    size_t found = 0;
    bool refused = false;
    for (size_t i = 0; i < n; i++) {
        stable_item it;
        bool hit;
        prepare(f, h[i], imps == NULL ? NULL : &imps[i], &it, false);
        refused |= !apply(f, &it, query, &hit);
        if (seen != NULL)
            seen[i] = hit;
        found += hit;
    }
    if (seen_count != NULL)
        *seen_count = found;
    return refused ? EBB_EINVAL : EBB_OK;
}

static ebb_status update_batch(ebb_stable *f, const ebb_hash128 *h,
                               const double *imps, size_t n, bool query,
                               bool *seen, size_t *seen_count)
{
    if (prefetch_pays(f))
        return update_run(f, h, imps, n, query, seen, seen_count);
    return update_each(f, h, imps, n, query, seen, seen_count);
}

ebb_status ebb_stable_add_batch(ebb_stable *f, const ebb_hash128 *hashes,
                                const double *importances, size_t n)
{
    return update_batch(f, hashes, importances, n, false, NULL, NULL);
}

ebb_status ebb_stable_test_and_add_batch(ebb_stable *f,
                                         const ebb_hash128 *hashes,
                                         const double *importances, size_t n,
                                         bool *seen, size_t *seen_count)
{
    return update_batch(f, hashes, importances, n, true, seen, seen_count);
}
