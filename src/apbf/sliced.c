/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sliced.c: the APBF's bit-sliced layout (EBB_APBF_LAYOUT_SLICED).
 *
 * The idea
 * --------
 * The ring layout (apbf.c) keeps k + l slices of m bits one after another,
 * so a query walks slices and each step is a dependent cache miss: it
 * cannot know which slice to read next before the last read answered.
 * Transposed, the same bits become m cells: cell p holds bit p of every
 * slice. If the slices that can be asked about one key at one bit position
 * share that cell, a query loads a few independent cells (their misses
 * overlap) and finds the answer with shifts and ANDs, without a walk.
 *
 * The layout
 * ----------
 * P = k + l + 1 bit planes (the k + l slices and one spare) in cells of
 * W = 16, 32, 64 or 128 bits, the smallest W >= P unless the params ask for
 * a larger one; bits P..W-1 of every cell stay 0. Planes form a ring like
 * the ring layout's slices: logical slice i (0 = newest) is plane
 * (base + i) mod P, and the spare is plane (base + k + l) mod P.
 *
 *   cell:      0      1      2   ...   m-1        bit b of cell p: bit p of
 *            +------+------+------+ +------+      plane b; W / 8 bytes each,
 *   W bits   |  ..  |  ..  |  ..  | |  ..  |      cache-line aligned, after
 *            +------+------+------+ +------+      the plan (sliced.h)
 *
 *   one cell, k = 3, l = 4, P = 8, W = 16, base = 2:
 *   bit:  15 .. 8 |  7    6    5    4    3    2    1    0
 *          zero   | s_5  s_4  s_3  s_2  s_1  s_0 spare s_6
 *
 * Residue hashing
 * ---------------
 * The ring hashes each buffer position with its own function, so a key's
 * bits lie at k + l unrelated positions. Here logical slice i of generation
 * count G (shifts so far) holds the keys of generation G - i and is hashed
 * with index j = (G - i) mod k: x = ebb_derive(h, j, MIXED), bit =
 * ebb_reduce(x, m). An add writes slices 0..k-1, whose residues are the k
 * distinct values 0..k-1, so it sets one bit in each of k cells; a query
 * loads the same k cells, c_j = cell[bit_j], because every slice with
 * residue j is tested at bit_j.
 * Why the false-positive analysis is unchanged: it needs each slice to be
 * an independent Bloom partition of the keys that wrote it, and a query's
 * tests of distinct slices to be independent for a key never inserted.
 * Slices i and i + k share an index but hold different generations; a slice
 * is only ever written with its own index, by the k generations that write
 * it, so each slice's bits are those of a partitioned filter with one hash
 * function, exactly as in the ring. For a fresh key the k + l tested bits
 * are at k positions, but slices sharing a position were filled by disjoint
 * key sets, so their fill ratios multiply as independent events do. The
 * rate (analytics.c's recursion on the fill ratios) is the same; which keys
 * are false positives differs from the ring's (other hash functions).
 * tests/unit/test_apbf_sliced.c checks that the ring with the residue
 * indices (ebb_apbf_set_residue_hashing) gives every answer identically,
 * and measures the rate against ebb_apbf_shape_fp.
 *
 * Operations
 * ----------
 * add:   if in_generation == g, shift (below); then for j in 0..k-1:
 *        cell[bit_j] |= add_bit[j] (the plane of the slice i < k with
 *        residue j); then clear the spare plane's bit in the next
 *        clear_step = ceil(m / g) cells from the cursor.
 * shift: finish the clearing (only needed after a clear or a load),
 *        base = (base + P - 1) mod P: the spare (all zero by now) becomes
 *        s_0 and the oldest slice s_{k+l-1} the new spare; G += 1,
 *        cursor = 0, and the plan's masks are recomputed: O(k + l) per g
 *        adds. No add ever clears a whole plane at once.
 * query: M = OR_j (c_j & mask[j]) in plane order (mask[j]: the planes whose
 *        slice has residue j); rotate right by base within P bits, so that
 *        bit i is logical slice i; runs of k ones by doubling,
 *        t = L; t &= t >> s for s in 1, 2, 4, .. (summing to k - 1), then
 *        found iff t has a bit among 0..l. The spare plane is in no mask.
 *
 * Worked example: k = 3, l = 4, W = 16, G = 5 (so residues of logical
 * slices 0..6 are 2, 1, 0, 2, 1, 0, 2), base = 2. A key with c_0, c_1, c_2
 * whose masked bits give logical L = 0b0111110 (slices 1..5 match): the
 * doubling gives t = L & L >> 1 = 0b0011110, t & t >> 1 = 0b0001110 (runs
 * of 3 starting at 1, 2, 3); l + 1 = 5 low bits 0b11111 intersect: found.
 *
 * Memory: m cells of W bits against the ring's (k + l) m bits: (8, 8) fills
 * 17 of 32 bits (padding 47 %: the spare plane tips 16 into 32); (7, 8)
 * fills 16 of 16, (20, 43) 64 of 64; the chooser prefers full cells.
 *
 * Measured by ebb-bench-prototype (docs/bench.md, "The layout the front
 * ends choose", has the latest run): the chooser's (13, 114) in 128-bit
 * cells against the ring's least-memory (12, 87) at fp 1%, w = 1e6..1e8,
 * answers queries and check-and-adds several times faster, one call or
 * batched, and adds slower (the k cells written lie anywhere in the
 * filter, the ring's in its k newest slices). (8, 8) in 32-bit cells does
 * not win: twice the ring's bytes, the same query time.
 * Profile of the query at 10^6: three quarters of its samples on the cell
 * loads; the k index derivations (ebb_derive, MIXED) are most of the rest.
 *
 * Invariants kept by this file
 * ----------------------------
 *   bits P..W-1 of every cell are 0; the spare plane's bit is 0 in every
 *   cell below the cursor; cursor <= m; add and contains never allocate.
 */
#include "apbf/sliced.h"

#include <string.h>

#include "apbf/apbf_internal.h"
#include "apbf/wide.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/codec.h"

/* The plan's bytes, rounded so that the cells start on a cache line. */
#define PLAN_BYTES \
    ((sizeof(ebb_apbf_sliced_plan) + EBB_CACHE_LINE - 1u) & \
     ~(size_t)(EBB_CACHE_LINE - 1u))

/* ------------------------------------------------------------------------ */
/* Shape                                                                    */
/* ------------------------------------------------------------------------ */

static bool cell_bits_valid(uint32_t w)
{
    return w == 16u || w == 32u || w == 64u || w == 128u;
}

uint32_t ebb_apbf_sliced_cell_bits(const ebb_apbf_params *p)
{
    uint64_t planes = (uint64_t)p->k + p->l + 1u;
    if (planes > 128u)
        return 0;
    if (p->cell_bits != 0)
        return cell_bits_valid(p->cell_bits) && p->cell_bits >= planes
                   ? p->cell_bits
                   : 0;
    uint32_t w = 16u;
    while (w < planes)
        w *= 2u;
    return w;
}

ebb_status ebb_apbf_sliced_bytes(const ebb_apbf_params *p, size_t *bytes)
{
    uint32_t w = ebb_apbf_sliced_cell_bits(p);
    if (w == 0 || p->block_bits != 0 || p->block_hashes != 0)
        return EBB_EINVAL;
    uint64_t cells = p->slice_bits * (w / 8u); /* m <= 2^40: no overflow */
    cells = (cells + 7u) & ~UINT64_C(7);
    if (cells > (SIZE_MAX - 4096u - PLAN_BYTES))
        return EBB_EOVERFLOW;
    *bytes = PLAN_BYTES + (size_t)cells;
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Plan                                                                     */
/* ------------------------------------------------------------------------ */

static ebb_u128 plane_bit(uint32_t plane)
{
    return (ebb_u128)1 << plane;
}

/* The masks of the current (base, G): recomputed at each shift. */
static void plan_masks(ebb_apbf *f)
{
    ebb_apbf_sliced_plan *plan = f->plan;
    uint32_t k = f->k;
    uint32_t residue = (uint32_t)(f->generations % k);
    for (uint32_t j = 0; j < k; j++)
        plan->mask[j] = 0;

    for (uint32_t i = 0; i < f->slices; i++) {
        uint32_t plane = (f->base + i) % f->planes;
        uint32_t j = (residue + k - i % k) % k;
        plan->mask[j] |= plane_bit(plane);
        if (i < k)
            plan->add_bit[j] = plane_bit(plane);
    }
    for (uint32_t j = 0; j < k; j++)
        plan->mask64[j] = (uint64_t)plan->mask[j];
    plan->keep = ~plane_bit((f->base + f->slices) % f->planes);
}

/* The run-length doubling steps for k and the run starts 0..l. */
static void plan_fixed(ebb_apbf *f)
{
    ebb_apbf_sliced_plan *plan = f->plan;
    uint32_t count = 0;
    for (uint32_t run = 1; run < f->k;) {
        uint32_t s = run < f->k - run ? run : f->k - run;
        plan->shifts[count++] = s;
        run += s;
    }
    plan->shift_count = count;
    plan->window = plane_bit(f->l + 1u) - 1u; /* l + 1 <= 127 */
}

void ebb_apbf_sliced_init(ebb_apbf *f)
{
    ebb_apbf_params p = {.k = f->k, .l = f->l, .cell_bits = f->cell_bits};
    f->cell_bits = ebb_apbf_sliced_cell_bits(&p);
    f->planes = f->slices + 1u;
    f->plan = (ebb_apbf_sliced_plan *)(void *)f->bits;
    f->cells = (unsigned char *)f->bits + PLAN_BYTES;
    f->clear_step = f->slice_bits / f->generation +
                    (f->slice_bits % f->generation != 0);
    f->cursor = f->slice_bits; /* a zeroed spare: nothing to clear */
    plan_fixed(f);
    plan_masks(f);
}

static size_t cells_bytes(const ebb_apbf *f)
{
    return (size_t)f->slice_bits * (f->cell_bits / 8u);
}

void ebb_apbf_sliced_clear(ebb_apbf *f)
{
    memset(f->cells, 0, cells_bytes(f));
    f->base = 0;
    f->insertions = 0;
    f->generations = 0;
    f->in_generation = 0;
    f->cursor = f->slice_bits;
    plan_masks(f);
}

/* ------------------------------------------------------------------------ */
/* Cells                                                                    */
/* ------------------------------------------------------------------------ */

/* Cell access for a constant W: every function below is inlined into one
 * copy per width, chosen once per call by dispatch(). Values are widened
 * to 128 bits; the compiler keeps W <= 64 in one register. */
EBB_ALWAYS_INLINE ebb_u128 cell_get(const void *cells, uint64_t i, unsigned w)
{
    switch (w) {
    case 16:
        return ((const uint16_t *)cells)[i];
    case 32:
        return ((const uint32_t *)cells)[i];
    case 64:
        return ((const uint64_t *)cells)[i];
    default:
        return ((const ebb_u128 *)cells)[i];
    }
}

EBB_ALWAYS_INLINE void cell_or(void *cells, uint64_t i, ebb_u128 v,
                               unsigned w)
{
    switch (w) {
    case 16:
        ((uint16_t *)cells)[i] |= (uint16_t)v;
        break;
    case 32:
        ((uint32_t *)cells)[i] |= (uint32_t)v;
        break;
    case 64:
        ((uint64_t *)cells)[i] |= (uint64_t)v;
        break;
    default:
        ((ebb_u128 *)cells)[i] |= v;
        break;
    }
}

EBB_ALWAYS_INLINE void cells_and(void *cells, uint64_t from, uint64_t to,
                                 ebb_u128 v, unsigned w)
{
    for (uint64_t i = from; i < to; i++) {
        switch (w) {
        case 16:
            ((uint16_t *)cells)[i] &= (uint16_t)v;
            break;
        case 32:
            ((uint32_t *)cells)[i] &= (uint32_t)v;
            break;
        case 64:
            ((uint64_t *)cells)[i] &= (uint64_t)v;
            break;
        default:
            ((ebb_u128 *)cells)[i] &= v;
            break;
        }
    }
}

EBB_ALWAYS_INLINE const void *cell_at(const void *cells, uint64_t i,
                                      unsigned w)
{
    return (const unsigned char *)cells + i * (w / 8u);
}

/* The k cells of a key: independent of the generation, so they can be
 * located (and prefetched) before a shift. */
static inline void locate(const ebb_apbf *f, ebb_hash128 h, uint64_t *idx)
{
#if defined(EBB_HAVE_X8)
    /* Eight indices per vector (wide.h's derivation and reduction, lane j
     * for hash function j): fewer instructions around the k loads, which
     * is what one call at a time out of the caches is short of. */
    if (f->k <= EBB_APBF_WIDE_MAX_K) {
        const __m512i lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        for (uint32_t first = 0; first < f->k; first += 8) {
            __m512i j = _mm512_add_epi64(
                lanes, _mm512_set1_epi64((long long)first));
            _mm512_storeu_si512(
                idx + first,
                ebb_apbf_plain_bits_x8(f, ebb_apbf_derived_x8(h, j)));
        }
        return;
    }
#endif
    for (uint32_t j = 0; j < f->k; j++)
        idx[j] = ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), f->slice_bits);
}

/* ------------------------------------------------------------------------ */
/* Query                                                                    */
/* ------------------------------------------------------------------------ */

/* True iff the logical-order bits (rotation of m) hold a run of k ones
 * starting at 0..l. Bits of m are only in planes < P (the masks), so the
 * wrapped rotation needs no mask; bits it puts at P and above are never
 * reached by a run that starts at <= l. Two shifts for the left part: a
 * shift by P - base would be a shift by the type's width at base 0. */
EBB_ALWAYS_INLINE bool run_found(const ebb_apbf *f, ebb_u128 m, unsigned w)
{
    const ebb_apbf_sliced_plan *plan = f->plan;
    uint32_t right = f->base, left = f->planes - f->base - 1u;
    if (w <= 64u) {
        uint64_t v = (uint64_t)m;
        uint64_t t = (v >> right) | ((v << 1) << left);
        for (uint32_t s = 0; s < plan->shift_count; s++)
            t &= t >> plan->shifts[s];
        return (t & (uint64_t)plan->window) != 0;
    }
    ebb_u128 t = (m >> right) | ((m << 1) << left);
    for (uint32_t s = 0; s < plan->shift_count; s++)
        t &= t >> plan->shifts[s];
    return (t & plan->window) != 0;
}

EBB_ALWAYS_INLINE bool query_at(const ebb_apbf *f, const uint64_t *idx,
                                unsigned w)
{
    const ebb_apbf_sliced_plan *plan = f->plan;
    if (w <= 64u) {
        uint64_t m = 0;
        for (uint32_t j = 0; j < f->k; j++)
            m |= (uint64_t)cell_get(f->cells, idx[j], w) & plan->mask64[j];
        return run_found(f, m, w);
    }
    ebb_u128 m = 0;
    for (uint32_t j = 0; j < f->k; j++)
        m |= cell_get(f->cells, idx[j], w) & plan->mask[j];
    return run_found(f, m, w);
}

/* One call: each cell is loaded as soon as its index is known (one loop,
 * no index array), so the misses start while later indices are derived. */
EBB_ALWAYS_INLINE bool contains_on(const ebb_apbf *f, ebb_hash128 h,
                                   unsigned w)
{
    const ebb_apbf_sliced_plan *plan = f->plan;
    if (w <= 64u) {
        uint64_t m = 0;
        for (uint32_t j = 0; j < f->k; j++) {
            uint64_t at = ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED),
                                     f->slice_bits);
            m |= (uint64_t)cell_get(f->cells, at, w) & plan->mask64[j];
        }
        return run_found(f, m, w);
    }
    uint64_t idx[EBB_APBF_MAX_K];
    locate(f, h, idx);
    return query_at(f, idx, w);
}

bool ebb_apbf_sliced_contains(const ebb_apbf *f, ebb_hash128 h,
                              uint32_t *accesses)
{
    if (accesses != NULL)
        *accesses = f->k;
    switch (f->cell_bits) {
    case 16:
        return contains_on(f, h, 16);
    case 32:
        return contains_on(f, h, 32);
    case 64:
        return contains_on(f, h, 64);
    default:
        return contains_on(f, h, 128);
    }
}

/* ------------------------------------------------------------------------ */
/* Add                                                                      */
/* ------------------------------------------------------------------------ */

EBB_ALWAYS_INLINE void shift_on(ebb_apbf *f, unsigned w)
{
    ebb_apbf_sliced_plan *plan = f->plan;
    cells_and(f->cells, f->cursor, f->slice_bits, plan->keep, w);
    f->base = f->base == 0 ? f->planes - 1u : f->base - 1u;
    f->generations = ebb_saturating_add(f->generations, 1);
    f->in_generation = 0;
    f->cursor = 0;
    plan_masks(f);
}

EBB_ALWAYS_INLINE void add_at(ebb_apbf *f, const uint64_t *idx, unsigned w)
{
    if (f->in_generation == f->generation)
        shift_on(f, w);
    const ebb_apbf_sliced_plan *plan = f->plan;
    for (uint32_t j = 0; j < f->k; j++)
        cell_or(f->cells, idx[j], plan->add_bit[j], w);
    uint64_t end = f->slice_bits - f->cursor > f->clear_step
                       ? f->cursor + f->clear_step
                       : f->slice_bits;
    cells_and(f->cells, f->cursor, end, plan->keep, w);
    f->cursor = end;
    f->in_generation++;
    f->insertions = ebb_saturating_add(f->insertions, 1);
}

EBB_ALWAYS_INLINE void add_on(ebb_apbf *f, ebb_hash128 h, unsigned w)
{
    uint64_t idx[EBB_APBF_MAX_K];
    locate(f, h, idx);
    add_at(f, idx, w);
}

void ebb_apbf_sliced_add(ebb_apbf *f, ebb_hash128 h)
{
    switch (f->cell_bits) {
    case 16:
        add_on(f, h, 16);
        break;
    case 32:
        add_on(f, h, 32);
        break;
    case 64:
        add_on(f, h, 64);
        break;
    default:
        add_on(f, h, 128);
        break;
    }
}

EBB_ALWAYS_INLINE bool check_and_add_on(ebb_apbf *f, ebb_hash128 h,
                                        unsigned w)
{
    uint64_t idx[EBB_APBF_MAX_K];
    locate(f, h, idx);
    bool seen = query_at(f, idx, w);
    add_at(f, idx, w);
    return seen;
}

bool ebb_apbf_sliced_check_and_add(ebb_apbf *f, ebb_hash128 h)
{
    switch (f->cell_bits) {
    case 16:
        return check_and_add_on(f, h, 16);
    case 32:
        return check_and_add_on(f, h, 32);
    case 64:
        return check_and_add_on(f, h, 64);
    default:
        return check_and_add_on(f, h, 128);
    }
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

/* Keys located and prefetched ahead of the one being evaluated: a sliding
 * window, so that k * LOOKAHEAD misses stay in flight. The cells a key
 * reads and writes do not depend on the generation, so a prefetch made
 * before a shift is still the right one. */
#define LOOKAHEAD 8u

enum batch_mode { BATCH_ADD, BATCH_QUERY, BATCH_CHECK_ADD };

EBB_ALWAYS_INLINE void locate_prefetch(const ebb_apbf *f, ebb_hash128 h,
                                       uint64_t *idx, enum batch_mode mode,
                                       unsigned w)
{
    locate(f, h, idx);
    for (uint32_t j = 0; j < f->k; j++) {
        if (mode == BATCH_QUERY)
            __builtin_prefetch(cell_at(f->cells, idx[j], w), 0, 3);
        else
            __builtin_prefetch(cell_at(f->cells, idx[j], w), 1, 3);
    }
}

/* One pipeline for the three batch forms; each key is evaluated exactly as
 * the one-at-a-time calls would, in order. f is read; wf, the same filter,
 * is written by the add modes (NULL for queries, whose filter is const). */
EBB_ALWAYS_INLINE size_t pipeline(ebb_apbf *wf, const ebb_apbf *f,
                                  const ebb_hash128 *h, size_t n, bool *out,
                                  enum batch_mode mode, unsigned w)
{
    uint64_t idx[LOOKAHEAD][EBB_APBF_MAX_K];
    size_t found = 0;
    for (size_t a = 0; a < LOOKAHEAD && a < n; a++)
        locate_prefetch(f, h[a], idx[a], mode, w);
    for (size_t q = 0; q < n; q++) {
        uint64_t *at = idx[q % LOOKAHEAD];
        if (mode != BATCH_ADD) {
            bool hit = query_at(f, at, w);
            if (out != NULL)
                out[q] = hit;
            found += hit;
        }
        if (mode != BATCH_QUERY)
            add_at(wf, at, w);
        if (q + LOOKAHEAD < n)
            locate_prefetch(f, h[q + LOOKAHEAD], at, mode, w);
    }
    return found;
}

#define DISPATCH(wf, f, h, n, out, mode)                                       \
    switch ((f)->cell_bits) {                                                 \
    case 16:                                                                  \
        return pipeline(wf, f, h, n, out, mode, 16);                          \
    case 32:                                                                  \
        return pipeline(wf, f, h, n, out, mode, 32);                          \
    case 64:                                                                  \
        return pipeline(wf, f, h, n, out, mode, 64);                          \
    default:                                                                  \
        return pipeline(wf, f, h, n, out, mode, 128);                         \
    }

static size_t add_batch(ebb_apbf *f, const ebb_hash128 *h, size_t n)
{
    DISPATCH(f, f, h, n, NULL, BATCH_ADD)
}

void ebb_apbf_sliced_add_batch(ebb_apbf *f, const ebb_hash128 *hashes,
                               size_t n)
{
    (void)add_batch(f, hashes, n);
}

size_t ebb_apbf_sliced_contains_batch(const ebb_apbf *f,
                                      const ebb_hash128 *hashes, size_t n,
                                      bool *out)
{
    DISPATCH(NULL, f, hashes, n, out, BATCH_QUERY)
}

size_t ebb_apbf_sliced_check_and_add_batch(ebb_apbf *f,
                                           const ebb_hash128 *hashes,
                                           size_t n, bool *seen)
{
    DISPATCH(f, f, hashes, n, seen, BATCH_CHECK_ADD)
}

/* ------------------------------------------------------------------------ */
/* Snapshots: family 7 (docs/format.md)                                     */
/* ------------------------------------------------------------------------ */

/* Parameter block, 64 bytes little-endian:
 *   0 k (u32)  4 l (u32)  8 slice bits m (u64)  16 generation g (u64)
 *   24 insertions (u64)  32 generations (u64)  40 in generation (u64)
 *   48 base (u32)  52 cell bits W (u32)  56 cursor (u64)
 * Payload: the m cells in order, W / 8 bytes each, little-endian. */
#define SLICED_PARAM_BYTES 64u

size_t ebb_apbf_sliced_snapshot_size(const ebb_apbf *f)
{
    return ebb_frame_size(SLICED_PARAM_BYTES, cells_bytes(f));
}

static void put_cells(ebb_writer *wr, const ebb_apbf *f)
{
    uint64_t m = f->slice_bits;
    switch (f->cell_bits) {
    case 16:
        for (uint64_t i = 0; i < m; i++)
            ebb_put_u16(wr, ((const uint16_t *)f->cells)[i]);
        break;
    case 32:
        for (uint64_t i = 0; i < m; i++)
            ebb_put_u32(wr, ((const uint32_t *)f->cells)[i]);
        break;
    case 64:
        ebb_put_words(wr, f->cells, (size_t)m);
        break;
    default:
        for (uint64_t i = 0; i < m; i++) {
            ebb_u128 c = ((const ebb_u128 *)f->cells)[i];
            ebb_put_u64(wr, (uint64_t)c);
            ebb_put_u64(wr, (uint64_t)(c >> 64));
        }
        break;
    }
}

void ebb_apbf_sliced_put_fields(ebb_writer *wr, const ebb_apbf *f)
{
    ebb_put_u32(wr, f->cell_bits);
    ebb_put_u64(wr, f->cursor);
    put_cells(wr, f);
}

ebb_frame_head ebb_apbf_sliced_head(const ebb_apbf *f)
{
    ebb_frame_head head = {EBB_FAMILY_APBF_SLICED, SLICED_PARAM_BYTES,
                           ebb_apbf_sliced_snapshot_size(f), f->seed};
    return head;
}

typedef struct sliced_header {
    ebb_apbf_params params;
    uint64_t insertions, generations, in_generation, cursor;
    uint32_t base;
} sliced_header;

static bool read_header(ebb_reader *r, sliced_header *h)
{
    memset(h, 0, sizeof *h);
    h->params.layout = EBB_APBF_LAYOUT_SLICED;
    return ebb_get_u32(r, &h->params.k) && ebb_get_u32(r, &h->params.l) &&
           ebb_get_u64(r, &h->params.slice_bits) &&
           ebb_get_u64(r, &h->params.generation) &&
           ebb_get_u64(r, &h->insertions) && ebb_get_u64(r, &h->generations) &&
           ebb_get_u64(r, &h->in_generation) && ebb_get_u32(r, &h->base) &&
           ebb_get_u32(r, &h->params.cell_bits) && ebb_get_u64(r, &h->cursor);
}

/* The counters and the shape, as ebb_apbf_load checks the ring's; a saved
 * cell_bits is never 0 (it is resolved at creation). */
static bool header_valid(sliced_header *h, size_t payload_len)
{
    ebb_apbf_params *p = &h->params;
    if (p->l == 0 || p->generation > UINT64_MAX / p->l || p->cell_bits == 0)
        return false;
    p->window = (uint64_t)p->l * p->generation;
    size_t block;
    if (ebb_apbf_shape_bytes(p, &block) != EBB_OK)
        return false;
    return h->base < p->k + p->l + 1u && h->cursor <= p->slice_bits &&
           h->in_generation <= p->generation &&
           (h->in_generation == 0) == (h->insertions == 0) &&
           h->insertions >= h->in_generation &&
           h->generations <= h->insertions &&
           payload_len == p->slice_bits * (p->cell_bits / 8u);
}

static bool get_cell(ebb_reader *r, uint32_t w, ebb_u128 *c)
{
    uint16_t v16;
    uint32_t v32;
    uint64_t lo, hi = 0;
    bool ok;
    switch (w) {
    case 16:
        ok = ebb_get_u16(r, &v16);
        lo = v16;
        break;
    case 32:
        ok = ebb_get_u32(r, &v32);
        lo = v32;
        break;
    case 64:
        ok = ebb_get_u64(r, &lo);
        break;
    default:
        ok = ebb_get_u64(r, &lo) && ebb_get_u64(r, &hi);
        break;
    }
    *c = ((ebb_u128)hi << 64) | lo;
    return ok;
}

/* No bit in a plane >= P, and no spare-plane bit below the cursor: bits no
 * add leaves, so the snapshot was not written by us. Checked in the input,
 * before anything is allocated. */
static bool cells_valid(ebb_reader r, const sliced_header *h)
{
    uint32_t planes = h->params.k + h->params.l + 1u;
    uint32_t spare = (h->base + planes - 1u) % planes;
    ebb_u128 unused = planes == 128u ? 0 : ~(plane_bit(planes) - 1u);
    for (uint64_t i = 0; i < h->params.slice_bits; i++) {
        ebb_u128 c;
        if (!get_cell(&r, h->params.cell_bits, &c) || (c & unused) != 0)
            return false;
        if (i < h->cursor && (c & plane_bit(spare)) != 0)
            return false;
    }
    return true;
}

static void read_cells(ebb_reader *r, ebb_apbf *f)
{
    for (uint64_t i = 0; i < f->slice_bits; i++) {
        ebb_u128 c = 0;
        (void)get_cell(r, f->cell_bits, &c); /* lengths checked already */
        switch (f->cell_bits) {
        case 16:
            ((uint16_t *)f->cells)[i] = (uint16_t)c;
            break;
        case 32:
            ((uint32_t *)f->cells)[i] = (uint32_t)c;
            break;
        case 64:
            ((uint64_t *)f->cells)[i] = (uint64_t)c;
            break;
        default:
            ((ebb_u128 *)f->cells)[i] = c;
            break;
        }
    }
}

ebb_status ebb_apbf_sliced_load(const void *buf, size_t len, ebb_apbf **out)
{
    ebb_frame frame;
    ebb_status st = ebb_frame_open(buf, len, EBB_FAMILY_APBF_SLICED,
                                   SLICED_PARAM_BYTES, &frame);
    if (st != EBB_OK)
        return st;
    sliced_header h;
    if (!read_header(&frame.params, &h) ||
        !header_valid(&h, ebb_reader_left(&frame.payload)) ||
        !cells_valid(frame.payload, &h))
        return EBB_ECORRUPT;
    ebb_apbf *f;
    st = ebb_apbf_create(&h.params, frame.seed, &f);
    if (st != EBB_OK)
        return st;
    read_cells(&frame.payload, f);
    f->insertions = h.insertions;
    f->generations = h.generations;
    f->in_generation = h.in_generation;
    f->base = h.base;
    f->cursor = h.cursor;
    plan_masks(f);
    *out = f;
    return EBB_OK;
}
