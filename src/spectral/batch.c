/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * batch.c: spectral filter operations on many hashes at once.
 *
 * One key's add or estimate waits on its k counters' cache misses; a
 * batch computes the positions of the key AHEAD places later and
 * prefetches their words before it updates or reads the current one, so
 * the memory system serves the misses in parallel. Positions depend only
 * on the hash, and updates are applied in order, so answers and final
 * state are the single calls' byte for byte (tests/unit/test_spectral.c
 * compares them). RM's own steps (secondary, marker, traps) run in rm.c
 * as in a single call; only its primary counters are prefetched.
 *
 * Below EBB_ADD_PREFETCH_MIN_BYTES of primary counters the filter stays
 * in the caches and a batch is a loop of single calls' steps. Compact
 * storage (store.h) has no word to prefetch before its offsets are read,
 * and each add must commit or fail on its own: a loop of single calls,
 * stopping at the first that fails.
 */
#include "core/slice.h"
#include "spectral/store.h"

/* Keys prepared ahead of the one applied, and the ring holding them. */
#define AHEAD 8u
#define RING 16u

static bool prefetch_pays(const ebb_spectral *f)
{
    return f->compact == NULL &&
           ebb_add_prefetch_pays(ebb_cells_bytes(&f->primary));
}

static inline void positions(const ebb_spectral *f, ebb_hash128 h,
                             uint64_t *pos)
{
    spectral_positions(h, f->params.k, f->primary.count, pos);
}

void ebb_spectral_hash_batch(const ebb_spectral *f, const void *const *keys,
                             const size_t *lens, size_t n, ebb_hash128 *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ebb_hash_inline(keys[i], lens[i], f->params.seed);
}

/* ---- Adds --------------------------------------------------------------- */

static void add_run(ebb_spectral *f, const ebb_hash128 *h,
                    const uint64_t *counts, size_t n)
{
    uint64_t ring[RING][EBB_SPECTRAL_MAX_K];
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n) {
            positions(f, h[i], ring[i % RING]);
            spectral_prefetch_words(f, ring[i % RING], 1);
        }
        if (i >= AHEAD) {
            size_t at = i - AHEAD;
            spectral_add_at(f, h[at], ring[at % RING],
                            counts == NULL ? 1u : counts[at]);
        }
    }
}

static void add_each(ebb_spectral *f, const ebb_hash128 *h,
                     const uint64_t *counts, size_t n)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    bool rm = f->params.method == EBB_SPECTRAL_RM;
    for (size_t i = 0; i < n; i++) {
        if (!rm)
            positions(f, h[i], pos);
        spectral_add_at(f, h[i], pos, counts == NULL ? 1u : counts[i]);
    }
}

/* Compact storage: single adds, each committed; the first failure
 * stops the batch. */
static ebb_status add_compact(ebb_spectral *f, const ebb_hash128 *h,
                              const uint64_t *counts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ebb_status st =
            ebb_spectral_add_hash(f, h[i], counts == NULL ? 1u : counts[i]);
        if (st != EBB_OK)
            return st;
    }
    return EBB_OK;
}

ebb_status ebb_spectral_add_batch(ebb_spectral *f, const ebb_hash128 *hashes,
                                  const uint64_t *counts, size_t n)
{
    if (f->compact != NULL)
        return add_compact(f, hashes, counts, n);
    if (prefetch_pays(f))
        add_run(f, hashes, counts, n);
    else
        add_each(f, hashes, counts, n);
    return EBB_OK;
}

/* ---- Estimates ---------------------------------------------------------- */

static void estimate_run(const ebb_spectral *f, const ebb_hash128 *h,
                         size_t n, uint64_t *out)
{
    uint64_t ring[RING][EBB_SPECTRAL_MAX_K];
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n) {
            positions(f, h[i], ring[i % RING]);
            spectral_prefetch_words(f, ring[i % RING], 0);
        }
        if (i >= AHEAD) {
            size_t at = i - AHEAD;
            out[at] = spectral_estimate_at(f, h[at], ring[at % RING]);
        }
    }
}

static void estimate_each(const ebb_spectral *f, const ebb_hash128 *h,
                          size_t n, uint64_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ebb_spectral_estimate_hash(f, h[i]);
}

void ebb_spectral_estimate_batch(const ebb_spectral *f,
                                 const ebb_hash128 *hashes, size_t n,
                                 uint64_t *out)
{
    if (prefetch_pays(f))
        estimate_run(f, hashes, n, out);
    else
        estimate_each(f, hashes, n, out);
}
