/* SPDX-License-Identifier: BSD-2-Clause */
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
#include "apbf/sliced.h"
#include "apbf/wide.h"
#include "core/agequery.h"

/* check_and_add: keys whose lines are prefetched together. */
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

/* Keys whose lines are prefetched ahead of the key being written: a
 * sliding window, so that misses stay in flight continuously rather than
 * chunk by chunk (k lines per key; ~45 misses in flight reach this
 * machine's ceiling, docs/bench.md). */
#define ADD_LOOKAHEAD 16u

/* Prefetches the k lines an add of h writes (pos: the k newest slices). */
static inline void prefetch_add_at(const ebb_apbf *f, ebb_hash128 h,
                                   const uint32_t *pos, ebb_apbf_path path)
{
    for (uint32_t i = 0; i < f->k; i++) {
        ebb_slice_probe ahead;
        ebb_apbf_locate(f, h, pos[i], path, &ahead);
        prefetch_write(ahead.at);
    }
}

/* Adds n keys that all fall into the current generation: the k slices
 * written are the same for every one of them. */
static inline void add_run_on(ebb_apbf *f, const ebb_hash128 *h, size_t n,
                              ebb_apbf_path path, bool prefetch)
{
    uint32_t pos[EBB_APBF_MAX_K];
    for (uint32_t i = 0; i < f->k; i++)
        pos[i] = ebb_apbf_position(f, i);
    /* The window opens full: a batch of a few hundred keys would otherwise
     * write its first ADD_LOOKAHEAD keys with nothing in flight (a third
     * slower at 256 keys per batch, 10^8 items). */
    for (size_t j = 0; prefetch && j < ADD_LOOKAHEAD && j < n; j++)
        prefetch_add_at(f, h[j], pos, path);
    for (size_t j = 0; j < n; j++) {
        if (prefetch && j + ADD_LOOKAHEAD < n)
            prefetch_add_at(f, h[j + ADD_LOOKAHEAD], pos, path);
        for (uint32_t i = 0; i < f->k; i++) {
            ebb_slice_probe probe;
            ebb_apbf_locate(f, h[j], pos[i], path, &probe);
            ebb_apbf_probe_set(f, &probe, path);
        }
    }
    f->in_generation += n;
    f->insertions = ebb_saturating_add(f->insertions, n);
}

#if defined(EBB_HAVE_X8)
/* Plain slices, k <= 16: each key's slices are located once, eight at a
 * time (wide.h), into a ring of ADD_LOOKAHEAD slots, prefetched there, and
 * written from the slot ADD_LOOKAHEAD keys later; the scalar form derives
 * every position twice (once to prefetch, once to write). */
static inline void add_run_plain_wide(ebb_apbf *f, const ebb_hash128 *h,
                                      size_t n, bool prefetch)
{
    _Alignas(64) uint64_t word[ADD_LOOKAHEAD][EBB_APBF_WIDE_MAX_K];
    _Alignas(64) uint64_t mask[ADD_LOOKAHEAD][EBB_APBF_WIDE_MAX_K];
    uint64_t *bits = f->bits;
    uint32_t k = f->k;
    size_t ahead = prefetch ? ADD_LOOKAHEAD : 1u;
    for (size_t j = 0; j < ahead && j < n; j++) {
        ebb_apbf_plain_locate_newest(f, h[j], word[j], mask[j]);
        for (uint32_t i = 0; prefetch && i < k; i++)
            prefetch_write(bits + word[j][i]);
    }
    for (size_t j = 0; j < n; j++) {
        size_t slot = j % ahead;
        for (uint32_t i = 0; i < k; i++)
            bits[word[slot][i]] |= mask[slot][i];
        if (j + ahead < n) {
            ebb_apbf_plain_locate_newest(f, h[j + ahead], word[slot],
                                         mask[slot]);
            for (uint32_t i = 0; prefetch && i < k; i++)
                prefetch_write(bits + word[slot][i]);
        }
    }
    f->in_generation += n;
    f->insertions = ebb_saturating_add(f->insertions, n);
}
#endif

static inline void add_run_prefetching(ebb_apbf *f, const ebb_hash128 *h,
                                       size_t n, bool prefetch)
{
#if defined(EBB_HAVE_X8)
    if (ebb_apbf_adds_located(f)) {
        add_run_plain_wide(f, h, n, prefetch);
        return;
    }
#endif
    switch (f->path) {
    case EBB_APBF_PATH_PLAIN:
        add_run_on(f, h, n, EBB_APBF_PATH_PLAIN, prefetch);
        break;
    case EBB_APBF_PATH_LINE8:
        add_run_on(f, h, n, EBB_APBF_PATH_LINE8, prefetch);
        break;
    default:
        add_run_on(f, h, n, EBB_APBF_PATH_GENERIC, prefetch);
        break;
    }
}

static void add_run(ebb_apbf *f, const ebb_hash128 *h, size_t n)
{
    uint64_t written = (uint64_t)f->k * f->slice_words * 8u;
    if (ebb_add_prefetch_pays(written))
        add_run_prefetching(f, h, n, true);
    else
        add_run_prefetching(f, h, n, false);
}

void ebb_apbf_add_batch(ebb_apbf *f, const ebb_hash128 *hashes, size_t n)
{
    if (f->path == EBB_APBF_PATH_SLICED) {
        ebb_apbf_sliced_add_batch(f, hashes, n);
        return;
    }
    while (n > 0) {
        if (f->in_generation == f->generation)
            ebb_apbf_shift(f);
        uint64_t room = f->generation - f->in_generation;
        size_t run = n > room ? (size_t)room : n;
        add_run(f, hashes, run);
        hashes += run;
        n -= run;
    }
}

/* A batch of queries reads the slices through a table built once per call:
 * logical slice i's ring position (its hash index) and its words, instead
 * of the wrap-around and the multiply that find them on every read. Filters
 * with more slices than the table holds (k + l > 128), and batches too small
 * to repay building it (fewer queries than walks in flight), locate as the
 * one-at-a-time calls do. */
#define VIEW_SLICES 128u

typedef struct query_view {
    const ebb_apbf *filter;
    uint32_t position[VIEW_SLICES];
    uint64_t *slice[VIEW_SLICES];
} query_view;

static void query_view_init(query_view *view, const ebb_apbf *f)
{
    view->filter = f;
    for (uint32_t i = 0; i < f->slices; i++) {
        view->position[i] = ebb_apbf_position(f, i);
        view->slice[i] = ebb_apbf_slice(f, view->position[i]);
    }
}

#define QUERY_VIEW_FUNCTIONS(name, path)                                      \
    static inline void view_##name##_locate(const void *v, ebb_hash128 h,     \
                                            uint32_t i, ebb_slice_probe *probe) \
    {                                                                         \
        const query_view *view = v;                                           \
        ebb_apbf_locate_in(view->filter, view->slice[i], h, view->position[i], \
                           path, probe);                                      \
    }                                                                         \
    static inline bool view_##name##_match(const void *v,                     \
                                           const ebb_slice_probe *probe)      \
    {                                                                         \
        return ebb_apbf_##name##_match(((const query_view *)v)->filter, probe); \
    }

QUERY_VIEW_FUNCTIONS(plain, EBB_APBF_PATH_PLAIN)
QUERY_VIEW_FUNCTIONS(line8, EBB_APBF_PATH_LINE8)
QUERY_VIEW_FUNCTIONS(generic, EBB_APBF_PATH_GENERIC)

/* The batch query on context with the locate and match functions named
 * <prefix>_<path>_locate and _match for f's path. */
#define QUERY_BATCH_ON_PATH(f, context, prefix, h, n, out)                     \
    switch ((f)->path) {                                                      \
    case EBB_APBF_PATH_PLAIN:                                                 \
        return ebb_age_query_batch(context, (f)->k, (f)->l, h, n, out,        \
                                   prefix##_plain_locate, prefix##_plain_match); \
    case EBB_APBF_PATH_LINE8:                                                 \
        return ebb_age_query_batch(context, (f)->k, (f)->l, h, n, out,        \
                                   prefix##_line8_locate, prefix##_line8_match); \
    default:                                                                  \
        return ebb_age_query_batch(context, (f)->k, (f)->l, h, n, out,        \
                                   prefix##_generic_locate,                   \
                                   prefix##_generic_match);                   \
    }

static size_t contains_batch_viewed(const ebb_apbf *f, const ebb_hash128 *h,
                                    size_t n, bool *out)
{
    query_view view;
    query_view_init(&view, f);
    QUERY_BATCH_ON_PATH(f, &view, view, h, n, out)
}

size_t ebb_apbf_contains_batch(const ebb_apbf *f, const ebb_hash128 *hashes,
                               size_t n, bool *out)
{
    if (f->path == EBB_APBF_PATH_SLICED)
        return ebb_apbf_sliced_contains_batch(f, hashes, n, out);
    if (f->slices <= VIEW_SLICES && n >= EBB_AGE_FLIGHTS)
        return contains_batch_viewed(f, hashes, n, out);
    QUERY_BATCH_ON_PATH(f, f, ebb_apbf, hashes, n, out)
}

/* The first reads of Algorithm 1 are slice l, then l + 1 on a match. */
static inline void prefetch_query(const ebb_apbf *f, ebb_hash128 h,
                                  ebb_apbf_path path)
{
    uint32_t last = f->l + 1 < f->k + f->l ? f->l + 1 : f->l;
    for (uint32_t i = f->l; i <= last; i++) {
        ebb_slice_probe probe;
        ebb_apbf_locate(f, h, ebb_apbf_position(f, i), path, &probe);
        prefetch_read(probe.at);
    }
}

/* Prefetches a chunk's first query reads and add lines with today's slice
 * positions; a shift inside the chunk only makes some prefetches useless,
 * never an answer wrong. */
static inline void prefetch_chunk(const ebb_apbf *f, const ebb_hash128 *h,
                                  size_t n, ebb_apbf_path path)
{
    uint32_t pos[EBB_APBF_MAX_K];
    for (uint32_t i = 0; i < f->k; i++)
        pos[i] = ebb_apbf_position(f, i);
    for (size_t j = 0; j < n; j++) {
        prefetch_query(f, h[j], path);
        prefetch_add_at(f, h[j], pos, path);
    }
}

size_t ebb_apbf_check_and_add_batch(ebb_apbf *f, const ebb_hash128 *hashes,
                                    size_t n, bool *seen)
{
    if (f->path == EBB_APBF_PATH_SLICED)
        return ebb_apbf_sliced_check_and_add_batch(f, hashes, n, seen);
    size_t found = 0;
    for (size_t start = 0; start < n; start += CHUNK) {
        size_t end = n - start < CHUNK ? n : start + CHUNK;
        switch (f->path) {
        case EBB_APBF_PATH_PLAIN:
            prefetch_chunk(f, hashes + start, end - start, EBB_APBF_PATH_PLAIN);
            break;
        case EBB_APBF_PATH_LINE8:
            prefetch_chunk(f, hashes + start, end - start, EBB_APBF_PATH_LINE8);
            break;
        default:
            prefetch_chunk(f, hashes + start, end - start,
                           EBB_APBF_PATH_GENERIC);
            break;
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
