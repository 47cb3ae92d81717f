/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iceberg.c: iceberg queries (Cohen and Matias, section 5.2), ad hoc over a
 * list of candidate keys and streaming through a watch.
 *
 * Ad hoc: the threshold T is chosen at query time; a key is reported when
 * its estimate is at least T. Estimates that never fall below the truth
 * (MS with removals only of what was added, MI without removals) miss no
 * key whose count reaches T; the keys wrongly reported are those whose
 * Bloom error lifts them from below T to T or above (the iceberg error of
 * Fig. 4, a part of E_b). RM is one-sided except for its residual risk (a
 * key's marker and secondary turning false positive after its first add,
 * rm.c): on overloaded filters it can answer below the truth, and then
 * miss (tests/unit/test_spectral_ops.c counts such misses on filters of
 * 300 counters for 400 keys).
 *
 * Streaming: a watch reports each key once, at the first add after which
 * its estimate is at least T. At the add that brings a key's true count
 * to T a one-sided estimate is at least T, so the key is reported then or
 * at an earlier add: never missed. To report once the watch keeps the
 * 128-bit hashes of the keys it reported, in an open-addressing set with
 * linear probing:
 *
 *   slots:  [ h7 | 0 | h2 | h9 | 0 | 0 | h4 | 0 ]   capacity 2^c
 *            home slot of h: mix(h) mod 2^c, then the next slots in turn
 *
 * The all-zero hash marks an empty slot, so that key (probability 2^-128)
 * is kept aside in a flag. The set doubles before an insert would take
 * it past 3/4 full. Growth is the only allocation, and it happens before
 * the add is applied: an add of a key the watch has not reported grows
 * the set first if one more key would pass the load limit, so that
 * EBB_ENOMEM can be returned with neither the filter nor the watch
 * changed (the price: a set may grow one doubling before it needs to).
 * A watch is not tied to a filter; the caller passes the filter it
 * counts with at every add.
 */
#include "core/alloc.h"
#include "spectral/spectral_internal.h"

#define WATCH_DEFAULT_EXPECTED 1024u
#define WATCH_MIN_CAPACITY 8u

struct ebb_spectral_watch {
    uint64_t threshold;
    ebb_hash128 *slots;  /* capacity entries; {0, 0}: empty               */
    size_t capacity;     /* a power of two                                 */
    size_t used;         /* non-zero hashes in slots                       */
    bool holds_zero;     /* the hash {0, 0} was reported                   */
};

size_t ebb_spectral_iceberg(const ebb_spectral *f, const ebb_hash128 *hashes,
                            size_t n, uint64_t threshold, bool *out)
{
    if (f == NULL || hashes == NULL)
        return 0;
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        bool hit = ebb_spectral_estimate_hash(f, hashes[i]) >= threshold;
        if (out != NULL)
            out[i] = hit;
        found += hit;
    }
    return found;
}

/* ---- The set of reported hashes ---------------------------------------- */

static bool is_zero(ebb_hash128 h)
{
    return (h.lo | h.hi) == 0;
}

static bool same(ebb_hash128 a, ebb_hash128 b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

/* Mixed so that structured hashes (small integers) still spread. */
static size_t home(ebb_hash128 h, size_t capacity)
{
    uint64_t x = ebb_mix64(h.lo ^ ebb_mix64(h.hi));
    return (size_t)(x & (capacity - 1u));
}

/* The slot holding h, or the empty slot where it would go. */
static size_t probe(const ebb_hash128 *slots, size_t capacity, ebb_hash128 h)
{
    size_t i = home(h, capacity);
    while (!is_zero(slots[i]) && !same(slots[i], h))
        i = (i + 1u) & (capacity - 1u);
    return i;
}

static bool watch_holds(const ebb_spectral_watch *w, ebb_hash128 h)
{
    if (is_zero(h))
        return w->holds_zero;
    return !is_zero(w->slots[probe(w->slots, w->capacity, h)]);
}

/* Precondition: h not held, and room for it (watch_grow first). */
static void watch_insert(ebb_spectral_watch *w, ebb_hash128 h)
{
    if (is_zero(h)) {
        w->holds_zero = true;
        return;
    }
    w->slots[probe(w->slots, w->capacity, h)] = h;
    w->used++;
}

/* True when one more hash would take the set past 3/4 full. */
static bool watch_full(const ebb_spectral_watch *w)
{
    return (w->used + 1u) > w->capacity / 4u * 3u;
}

static ebb_hash128 *slots_alloc(size_t capacity)
{
    if (capacity > SIZE_MAX / sizeof(ebb_hash128))
        return NULL;
    return ebb_mem_alloc_zeroed(capacity * sizeof(ebb_hash128));
}

/* Doubles the set; EBB_ENOMEM leaves it as it was. */
static ebb_status watch_grow(ebb_spectral_watch *w)
{
    if (w->capacity > SIZE_MAX / 2u)
        return EBB_ENOMEM;
    size_t capacity = w->capacity * 2u;
    ebb_hash128 *slots = slots_alloc(capacity);
    if (slots == NULL)
        return EBB_ENOMEM;
    for (size_t i = 0; i < w->capacity; i++)
        if (!is_zero(w->slots[i]))
            slots[probe(slots, capacity, w->slots[i])] = w->slots[i];
    ebb_mem_free(w->slots);
    w->slots = slots;
    w->capacity = capacity;
    return EBB_OK;
}

/* The smallest power of two holding `expected` hashes at most 3/4 full. */
static size_t capacity_for(size_t expected)
{
    size_t capacity = WATCH_MIN_CAPACITY;
    while (capacity / 4u * 3u < expected) {
        if (capacity > SIZE_MAX / 2u)
            return 0;
        capacity *= 2u;
    }
    return capacity;
}

/* ---- The watch --------------------------------------------------------- */

ebb_status ebb_spectral_watch_create(uint64_t threshold, size_t expected,
                                     ebb_spectral_watch **out)
{
    if (out == NULL)
        return EBB_EINVAL;
    size_t capacity =
        capacity_for(expected ? expected : WATCH_DEFAULT_EXPECTED);
    if (capacity == 0 || capacity > SIZE_MAX / sizeof(ebb_hash128))
        return EBB_EOVERFLOW;
    ebb_spectral_watch *w = ebb_mem_alloc(sizeof *w);
    if (w == NULL)
        return EBB_ENOMEM;
    w->slots = slots_alloc(capacity);
    if (w->slots == NULL) {
        ebb_mem_free(w);
        return EBB_ENOMEM;
    }
    w->threshold = threshold;
    w->capacity = capacity;
    w->used = 0;
    w->holds_zero = false;
    *out = w;
    return EBB_OK;
}

void ebb_spectral_watch_destroy(ebb_spectral_watch *w)
{
    if (w == NULL)
        return;
    ebb_mem_free(w->slots);
    ebb_mem_free(w);
}

size_t ebb_spectral_watch_count(const ebb_spectral_watch *w)
{
    return w == NULL ? 0 : w->used + (w->holds_zero ? 1u : 0u);
}

ebb_status ebb_spectral_watch_add(ebb_spectral *f, ebb_spectral_watch *w,
                                  ebb_hash128 h, uint64_t r, bool *reported)
{
    if (f == NULL || w == NULL || reported == NULL)
        return EBB_EINVAL;
    *reported = false;
    bool held = watch_holds(w, h);
    if (!held && !is_zero(h) && watch_full(w)) {
        ebb_status s = watch_grow(w);
        if (s != EBB_OK)
            return s;
    }
    ebb_status s = ebb_spectral_add_hash(f, h, r);
    if (s != EBB_OK)
        return s;
    if (!held && ebb_spectral_estimate_hash(f, h) >= w->threshold) {
        watch_insert(w, h);
        *reported = true;
    }
    return EBB_OK;
}
