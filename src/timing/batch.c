/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * batch.c: timing filter operations on many hashes at once.
 *
 * An insertion's k timer writes are read-modify-writes of k words spread
 * over the array (the sweep's words are sequential and the hardware
 * prefetcher follows them). Past the caches (EBB_ADD_PREFETCH_MIN_BYTES of
 * timers) a batch computes the offsets of item i + AHEAD and prefetches
 * them before it applies item i, so the misses overlap. Offsets depend only
 * on the hash, never on the state, and items are applied in order, so the
 * answers and the final state are the single calls' byte for byte
 * (tests/unit/test_timing.c compares snapshots). In the caches the batch is
 * a loop of single calls' steps.
 *
 * Test-and-add asks then inserts each item before it touches the next, so
 * a key repeated within the batch reads its own earlier copy's timers, as
 * the single calls do; only the prefetches run ahead (with write intent:
 * the query's lines are the insertion's).
 */
#include "core/slice.h"
#include "timing/timing_internal.h"

#define AHEAD 8u
#define RING 16u

void ebb_timing_hash_batch(const ebb_timing *f, const void *const *keys,
                           const size_t *lens, size_t n, ebb_hash128 *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ebb_hash_inline(keys[i], lens[i], f->seed);
}

static inline void prefetch_bits(const ebb_timing *f, const uint64_t *bits,
                                 int write)
{
    for (uint32_t j = 0; j < f->k; j++) {
        if (write)
            __builtin_prefetch(f->timers.words + (bits[j] >> 6), 1, 3);
        else
            __builtin_prefetch(f->timers.words + (bits[j] >> 6), 0, 3);
    }
}

static void add_ahead(ebb_timing *f, const ebb_hash128 *h, size_t n)
{
    uint64_t ring[RING][EBB_TIMING_MAX_K];
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n) {
            timing_bits(f, h[i], ring[i % RING]);
            prefetch_bits(f, ring[i % RING], 1);
        }
        if (i >= AHEAD)
            timing_insert_at(f, ring[(i - AHEAD) % RING]);
    }
}

void ebb_timing_add_batch(ebb_timing *f, const ebb_hash128 *hashes, size_t n)
{
    if (f->prefetch) {
        add_ahead(f, hashes, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t bits[EBB_TIMING_MAX_K];
        timing_bits(f, hashes[i], bits);
        timing_insert_at(f, bits);
    }
}

static size_t contains_ahead(const ebb_timing *f, const ebb_hash128 *h,
                             size_t n, bool *out)
{
    uint64_t ring[RING][EBB_TIMING_MAX_K];
    size_t found = 0;
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n) {
            timing_bits(f, h[i], ring[i % RING]);
            prefetch_bits(f, ring[i % RING], 0);
        }
        if (i >= AHEAD) {
            size_t at = i - AHEAD;
            bool hit = timing_query_at(f, ring[at % RING]);
            if (out != NULL)
                out[at] = hit;
            found += hit;
        }
    }
    return found;
}

size_t ebb_timing_contains_batch(const ebb_timing *f,
                                 const ebb_hash128 *hashes, size_t n,
                                 bool *out)
{
    if (f->prefetch)
        return contains_ahead(f, hashes, n, out);
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        bool hit = ebb_timing_contains_hash(f, hashes[i]);
        if (out != NULL)
            out[i] = hit;
        found += hit;
    }
    return found;
}

/* One item of test-and-add on computed offsets: the query under the state
 * every earlier item left, then the insertion. */
static inline bool test_and_insert_at(ebb_timing *f, const uint64_t *bits)
{
    bool hit = timing_query_at(f, bits);
    timing_insert_at(f, bits);
    return hit;
}

static size_t test_and_add_ahead(ebb_timing *f, const ebb_hash128 *h,
                                 size_t n, bool *seen)
{
    uint64_t ring[RING][EBB_TIMING_MAX_K];
    size_t found = 0;
    for (size_t i = 0; i < n + AHEAD; i++) {
        if (i < n) {
            timing_bits(f, h[i], ring[i % RING]);
            prefetch_bits(f, ring[i % RING], 1);
        }
        if (i >= AHEAD) {
            size_t at = i - AHEAD;
            bool hit = test_and_insert_at(f, ring[at % RING]);
            if (seen != NULL)
                seen[at] = hit;
            found += hit;
        }
    }
    return found;
}

size_t ebb_timing_test_and_add_batch(ebb_timing *f, const ebb_hash128 *hashes,
                                     size_t n, bool *seen)
{
    if (f->prefetch)
        return test_and_add_ahead(f, hashes, n, seen);
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits[EBB_TIMING_MAX_K];
        timing_bits(f, hashes[i], bits);
        bool hit = test_and_insert_at(f, bits);
        if (seen != NULL)
            seen[i] = hit;
        found += hit;
    }
    return found;
}
