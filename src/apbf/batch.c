/*
 * batch.c: APBF operations on many keys at once.
 *
 * One key's add or query waits on k (or a few) independent cache misses; a
 * batch issues the misses of many keys before using any of them, so the
 * memory system serves them in parallel. Results are exactly those of the
 * one-at-a-time calls: adds never cross a generation boundary inside a
 * chunk (the shift changes which slices a key writes), and queries do not
 * modify anything.
 */
#include "apbf/apbf_internal.h"
#include "core/agequery.h"

/* Keys whose lines are in flight at once: enough to cover memory latency
 * with the ~10 outstanding misses a core sustains, few enough that the
 * prefetched lines are still in L1 when they are used. */
#define CHUNK 16u

static inline void prefetch_write(const void *p)
{
    __builtin_prefetch(p, 1, 3);
}

static inline void prefetch_read(const void *p)
{
    __builtin_prefetch(p, 0, 3);
}

void ebb_apbf_hash_batch(const ebb_apbf *f, const void *const *keys,
                         const size_t *lens, size_t n, ebb_hash128 *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ebb_apbf_hash(f, keys[i], lens[i]);
}

static void add_chunk(ebb_apbf *f, const ebb_hash128 *h, size_t n)
{
    for (size_t j = 0; j < n; j++)
        for (uint32_t i = 0; i < f->k; i++)
            prefetch_write(ebb_apbf_line_of(f, h[j], ebb_apbf_position(f, i)));
    if (f->block_bits == 0 && f->scheme == EBB_INDEX_MIXED) {
        for (size_t j = 0; j < n; j++)
            for (uint32_t i = 0; i < f->k; i++) {
                uint32_t pos = ebb_apbf_position(f, i);
                ebb_slice_set(ebb_apbf_slice(f, pos), h[j], pos,
                              f->slice_bits);
            }
    } else {
        for (size_t j = 0; j < n; j++)
            for (uint32_t i = 0; i < f->k; i++)
                ebb_apbf_slice_set(f, h[j], ebb_apbf_position(f, i));
    }
    f->in_generation += n;
    f->insertions = ebb_saturating_add(f->insertions, n);
}

void ebb_apbf_add_batch(ebb_apbf *f, const ebb_hash128 *hashes, size_t n)
{
    while (n > 0) {
        if (f->in_generation == f->generation)
            ebb_apbf_shift(f);
        uint64_t room = f->generation - f->in_generation;
        size_t chunk = n < CHUNK ? n : CHUNK;
        if (chunk > room)
            chunk = (size_t)room;
        add_chunk(f, hashes, chunk);
        hashes += chunk;
        n -= chunk;
    }
}

/* The first reads of Algorithm 1 are slice l, then l + 1 on a match. */
static void prefetch_query(const ebb_apbf *f, ebb_hash128 h)
{
    uint32_t last = f->l + 1 < f->k + f->l ? f->l + 1 : f->l;
    for (uint32_t i = f->l; i <= last; i++)
        prefetch_read(ebb_apbf_line_of(f, h, ebb_apbf_position(f, i)));
}

size_t ebb_apbf_contains_batch(const ebb_apbf *f, const ebb_hash128 *hashes,
                               size_t n, bool *out)
{
    size_t found = 0;
    for (size_t start = 0; start < n; start += CHUNK) {
        size_t end = n - start < CHUNK ? n : start + CHUNK;
        for (size_t j = start; j < end; j++)
            prefetch_query(f, hashes[j]);
        for (size_t j = start; j < end; j++) {
            out[j] = ebb_apbf_contains_hash(f, hashes[j]);
            found += out[j];
        }
    }
    return found;
}

size_t ebb_apbf_check_and_add_batch(ebb_apbf *f, const ebb_hash128 *hashes,
                                    size_t n, bool *seen)
{
    size_t found = 0;
    for (size_t start = 0; start < n; start += CHUNK) {
        size_t end = n - start < CHUNK ? n : start + CHUNK;
        /* Prefetch with today's slice positions; a shift inside the chunk
         * only makes some prefetches useless, never an answer wrong. */
        for (size_t j = start; j < end; j++) {
            prefetch_query(f, hashes[j]);
            for (uint32_t i = 0; i < f->k; i++)
                prefetch_write(ebb_apbf_line_of(f, hashes[j],
                                                ebb_apbf_position(f, i)));
        }
        for (size_t j = start; j < end; j++) {
            bool hit = ebb_apbf_contains_hash(f, hashes[j]);
            ebb_apbf_add_hash(f, hashes[j]);
            if (seen != NULL)
                seen[j] = hit;
            found += hit;
        }
    }
    return found;
}
