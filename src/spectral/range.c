/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * range.c: range counts over integer keys through a dyadic tree (Cohen and
 * Matias, section 5.5, Theorem 11).
 *
 * A filter created with range R > 0 counts integer keys 0..R - 1. Beside
 * the item x itself, each add counts the L = ceil(log2 R) dyadic nodes
 * that hold x: node (l, i) covers [i 2^l, (i + 1) 2^l), and x lies in node
 * (l, x >> l) of every level l = 1..L. Level L's single node (0) covers
 * [0, 2^L) >= [0, R): the root, whose estimate is the total.
 *
 *   level 2:  (2,0) = [0,4)              (2,1) = [4,8)
 *   level 1:  (1,0)=[0,2)  (1,1)=[2,4)   (1,2)=[4,6)  (1,3)=[6,8)
 *   items:     0   1        2   3         4   5        6   7
 *   add 5  ->  item 5, (1,2), (2,1), and the root (3,0) when R = 8
 *
 * Keys. Item x is the 8-byte little-endian string of x under the filter's
 * seed: ebb_spectral_estimate(f, &le64(x), 8) is estimate_int(f, x), and
 * a caller can mix both. Node (l, i) is the 16-byte string le64(l)
 * le64(i) under seed ^ SPECTRAL_RANGE_NODE_TAG. The paper asks that node
 * values V be disjoint from the items R; here they differ in length (so
 * no item key equals a node key) and are hashed under a different seed,
 * so that a node's 128-bit hash is unrelated to any item's: an item and a
 * node meet only where any two keys do, by a Bloom collision of counters.
 *
 * All or none. An add never fails (counters saturate), so add_int simply
 * adds to the L + 1 keys. A removal must not leave the tree half removed
 * when one key is refused, so remove_int first checks the L + 1 keys
 * together (spectral_can_remove_all: each primary counter must hold r
 * times the number of the keys' positions on it; checking them one by one
 * would miss an item and a node sharing a counter), then removes them.
 *
 * Range count. lo..hi is split greedily into the largest aligned block
 * that starts at lo and fits (spectral_range_decompose), which yields the
 * canonical dyadic cover: block sizes rise, then fall, at most two per
 * level, so at most 2 floor(log2(hi - lo + 1)) lookups (1 when lo = hi)
 * against the paper's 2 log |Q|. Each node's estimate is at least the
 * true count of its block (one-sided), so their sum is at least the true
 * count of lo..hi. The sum saturates at EBB_SPECTRAL_SATURATED, and so
 * does any sum with a saturated term (its true value is unknown).
 *
 * Memory (Claim 12): n distinct items bring at most n L node keys, so a
 * filter for range queries is sized for n (L + 1) distinct keys; the
 * caller does it (ebb_spectral_choose knows nothing of the tree).
 */
#include "core/bits.h"
#include "spectral/store.h"

static void put_le64(unsigned char *p, uint64_t v)
{
    for (unsigned b = 0; b < 8; b++)
        p[b] = (unsigned char)(v >> (8 * b));
}

ebb_hash128 spectral_range_item_hash(const ebb_spectral *f, uint64_t x)
{
    unsigned char key[8];
    put_le64(key, x);
    return ebb_hash_inline(key, sizeof key, f->params.seed);
}

ebb_hash128 spectral_range_node_hash(const ebb_spectral *f, uint32_t level,
                                     uint64_t index)
{
    unsigned char key[16];
    put_le64(key, level);
    put_le64(key + 8, index);
    return ebb_hash_inline(key, sizeof key,
                           f->params.seed ^ SPECTRAL_RANGE_NODE_TAG);
}

static ebb_hash128 node_or_item_hash(const ebb_spectral *f,
                                     spectral_range_node node)
{
    return node.level == 0 ? spectral_range_item_hash(f, node.index)
                           : spectral_range_node_hash(f, node.level,
                                                      node.index);
}

static uint32_t floor_log2(uint64_t v) /* v > 0 */
{
    return 63u - (uint32_t)__builtin_clzll(v);
}

size_t spectral_range_decompose(uint64_t lo, uint64_t hi, uint32_t levels,
                                spectral_range_node *out)
{
    size_t n = 0;
    uint64_t at = lo;
    for (;;) {
        /* The largest block aligned at `at` (its level at most the
         * trailing zeros of at) that does not pass hi. */
        uint32_t level = floor_log2(hi - at + 1);
        if (level > levels)
            level = levels;
        if (at != 0 && (uint32_t)__builtin_ctzll(at) < level)
            level = (uint32_t)__builtin_ctzll(at);
        out[n].level = level;
        out[n].index = at >> level;
        n++;
        uint64_t last = at + ((UINT64_C(1) << level) - 1u);
        if (last >= hi)
            return n;
        at = last + 1u;
    }
}

/* ---- All-or-none removal check ----------------------------------------- */

static void sift_down(uint64_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[root] >= a[child])
            return;
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* Heapsort: no allocation, O(n log n) for the <= 64 * 32 positions. */
static void sort_positions(uint64_t *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

bool spectral_can_remove_all(const ebb_spectral *f, const ebb_hash128 *h,
                             size_t n, uint32_t r)
{
    uint64_t pos[SPECTRAL_CAN_REMOVE_MAX_KEYS * EBB_SPECTRAL_MAX_K];
    uint32_t k = f->params.k;
    const ebb_cells *c = &f->primary;
    for (size_t i = 0; i < n; i++)
        spectral_positions(spectral_part_hash(h[i], SPECTRAL_PRIMARY), k,
                           c->count, pos + i * k);
    size_t total = n * k;
    sort_positions(pos, total);
    for (size_t i = 0; i < total;) {
        size_t run = 1;
        while (i + run < total && pos[i + run] == pos[i])
            run++;
        uint32_t v = spectral_store_get(f, SPECTRAL_PRIMARY, pos[i]);
        /* A saturated counter is left as it is, never refused. */
        if (v != c->max && (uint64_t)v < (uint64_t)r * run)
            return false;
        i += run;
    }
    return true;
}

/* ---- Public calls ------------------------------------------------------ */

static bool has_key(const ebb_spectral *f, uint64_t x)
{
    return f != NULL && f->params.range > 0 && x < f->params.range;
}

/* The item x and the L nodes above it, bottom up; returns L + 1. */
static size_t branch_hashes(const ebb_spectral *f, uint64_t x,
                            ebb_hash128 *out)
{
    uint32_t levels = f->range_levels;
    out[0] = spectral_range_item_hash(f, x);
    for (uint32_t l = 1; l <= levels; l++)
        out[l] = spectral_range_node_hash(f, l, x >> l);
    return (size_t)levels + 1u;
}

ebb_status ebb_spectral_add_int(ebb_spectral *f, uint64_t x, uint64_t r)
{
    if (!has_key(f, x))
        return EBB_EINVAL;
    ebb_hash128 h[SPECTRAL_CAN_REMOVE_MAX_KEYS];
    size_t n = branch_hashes(f, x, h);
    /* One transaction (store.h): compact storage adds the L + 1 keys
     * together or, EBB_ENOMEM, none of them. */
    spectral_begin(f);
    for (size_t i = 0; i < n; i++)
        (void)ebb_spectral_add_hash(f, h[i], r); /* nested: EBB_OK */
    return spectral_commit(f);
}

ebb_status ebb_spectral_remove_int(ebb_spectral *f, uint64_t x, uint64_t r)
{
    if (!has_key(f, x) || f->params.method == EBB_SPECTRAL_MI)
        return EBB_EINVAL;
    if (r == 0)
        return EBB_OK;
    ebb_hash128 h[SPECTRAL_CAN_REMOVE_MAX_KEYS];
    size_t n = branch_hashes(f, x, h);
    uint32_t max = f->primary.max;
    uint32_t clamped = r > max ? max : (uint32_t)r;
    if (!spectral_can_remove_all(f, h, n, clamped)) {
        f->stats.refused_removals++;
        return EBB_EUNDERFLOW;
    }
    spectral_begin(f);
    ebb_status st = EBB_OK;
    for (size_t i = 0; i < n && st == EBB_OK; i++)
        st = ebb_spectral_remove_hash(f, h[i], r); /* checked above: OK */
    ebb_status committed = spectral_commit(f); /* shrinks: EBB_OK */
    return st != EBB_OK ? st : committed;
}

ebb_status ebb_spectral_estimate_int(const ebb_spectral *f, uint64_t x,
                                     uint64_t *out)
{
    if (!has_key(f, x) || out == NULL)
        return EBB_EINVAL;
    *out = ebb_spectral_estimate_hash(f, spectral_range_item_hash(f, x));
    return EBB_OK;
}

ebb_status ebb_spectral_range_count(const ebb_spectral *f, uint64_t lo,
                                    uint64_t hi, uint64_t *out)
{
    if (!has_key(f, hi) || lo > hi || out == NULL)
        return EBB_EINVAL;
    spectral_range_node nodes[SPECTRAL_RANGE_MAX_NODES];
    size_t n = spectral_range_decompose(lo, hi, f->range_levels, nodes);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t e =
            ebb_spectral_estimate_hash(f, node_or_item_hash(f, nodes[i]));
        sum = ebb_saturating_add(sum, e);
    }
    *out = sum;
    return EBB_OK;
}
