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

/* Plain slices: each bit's word is computed once, prefetched, then set. */
static void add_chunk_plain(ebb_apbf *f, const ebb_hash128 *h, size_t n)
{
    uint64_t *words[CHUNK * EBB_APBF_MAX_K];
    uint64_t masks[CHUNK * EBB_APBF_MAX_K];
    size_t at = 0;
    for (uint32_t i = 0; i < f->k; i++) {
        uint32_t pos = ebb_apbf_position(f, i);
        uint64_t *slice = ebb_apbf_slice(f, pos);
        for (size_t j = 0; j < n; j++, at++) {
            uint64_t bit = ebb_slice_bit(h[j], pos, f->slice_bits,
                                         EBB_INDEX_MIXED);
            words[at] = slice + (bit >> 6);
            masks[at] = UINT64_C(1) << (bit & 63u);
            prefetch_write(words[at]);
        }
    }
    for (size_t a = 0; a < at; a++)
        *words[a] |= masks[a];
}

static void add_chunk(ebb_apbf *f, const ebb_hash128 *h, size_t n)
{
    if (f->block_bits == 0 && f->scheme == EBB_INDEX_MIXED) {
        add_chunk_plain(f, h, n);
    } else {
        for (size_t j = 0; j < n; j++)
            for (uint32_t i = 0; i < f->k; i++)
                prefetch_write(
                    ebb_apbf_line_of(f, h[j], ebb_apbf_position(f, i)));
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

/* One query of an interleaved batch: its walk and where its next read is. */
typedef struct in_flight {
    ebb_age_walk walk;
    const uint64_t *word;
    uint64_t mask;
    size_t index;
} in_flight;

/* Points q at the word its next slice read needs, and prefetches it. */
static inline void locate(const ebb_apbf *f, ebb_hash128 h, in_flight *q)
{
    uint32_t pos = ebb_apbf_position(f, (uint32_t)q->walk.slice);
    uint64_t bit = ebb_slice_bit(h, pos, f->slice_bits, EBB_INDEX_MIXED);
    q->word = ebb_apbf_slice(f, pos) + (bit >> 6);
    q->mask = UINT64_C(1) << (bit & 63u);
    prefetch_read(q->word);
}

/* Plain slices: the walks of a chunk advance one read per round, each
 * read prefetched a round ahead, so the chunk's cache misses overlap
 * instead of following one another down each walk. */
static size_t contains_interleaved(const ebb_apbf *f, const ebb_hash128 *h,
                                   size_t n, bool *out)
{
    size_t found = 0;
    for (size_t start = 0; start < n; start += CHUNK) {
        in_flight q[CHUNK];
        size_t active = n - start < CHUNK ? n - start : CHUNK;
        for (size_t j = 0; j < active; j++) {
            q[j].walk = ebb_age_walk_begin(f->l);
            q[j].index = start + j;
            locate(f, h[start + j], &q[j]);
        }
        while (active > 0) {
            for (size_t a = 0; a < active;) {
                bool match = (*q[a].word & q[a].mask) != 0;
                ebb_age_step step = ebb_age_walk_step(&q[a].walk, f->k, match);
                if (step == EBB_AGE_READ_NEXT) {
                    locate(f, h[q[a].index], &q[a]);
                    a++;
                    continue;
                }
                out[q[a].index] = step == EBB_AGE_FOUND;
                found += step == EBB_AGE_FOUND;
                q[a] = q[--active]; /* done: the last one takes its place */
            }
        }
    }
    return found;
}

size_t ebb_apbf_contains_batch(const ebb_apbf *f, const ebb_hash128 *hashes,
                               size_t n, bool *out)
{
    if (f->block_bits == 0 && f->scheme == EBB_INDEX_MIXED)
        return contains_interleaved(f, hashes, n, out);
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
