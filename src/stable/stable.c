/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stable.c: the Stable Bloom filter and its importance-aware variants.
 *
 * The papers
 * ----------
 * Deng and Rafiei, "Approximately detecting duplicates for streaming data
 * using stable Bloom filters" (SIGMOD 2006): a Bloom filter of m cells of
 * d bits instead of bits, which forgets at random so that its fraction of
 * zero cells, and with it the false-positive rate, settles at a constant
 * however long the stream (the "stable" property). Not among the project's
 * papers; ../shared/spec/stable.md (docs/stable.md) states the facts used.
 * Kulkarni et al., "Importance-aware Bloom Filter for Set Membership
 * Queries in Streaming Data" (the IBF paper): the same filter where an
 * item sets its cells to a level that grows with its importance, so that
 * important items survive more decrements. The analysis of both, the
 * cell's Markov chain, is analysis.c's; this file is the data structure.
 *
 * The structure
 * -------------
 * m cells of d bits (1 <= d <= 16, Max = 2^d - 1), packed into one
 * little-endian bit stream of 64-bit words (src/core/cells.h): cell i is
 * bits [i d, i d + d), and a cell may straddle two words. m = 16, d = 2:
 *
 *   word 0, bit 63 .......................... 32 31 30 29 28 ... 3 2 1 0
 *              [ zero: past m d = 32 bits      | c15 | c14 | ... | c1| c0]
 *
 * With d = 3, 21 cells fill 63 bits of a word and cell 21 straddles words
 * 0 and 1; the bits of the last word past m d are always 0 (snapshots
 * check it). The handle also holds K, P, the variant, the importance range,
 * the hash seed, the generator (xoshiro256**, src/core/rng.h) whose state
 * is part of the filter, and the counters.
 *
 * An item's K cells are ebb_reduce(ebb_derive(h, j), m) for j < K, from its
 * 128-bit hash: K independent uniform cells, which may coincide (the
 * analysis takes a cell to be among an item's K with probability
 * 1 - (1 - 1/m)^K, which is what independent positions give; distinct
 * positions would make it K/m exactly and need a redraw loop).
 *
 * The update, for each item of the stream (ebb_stable_test_and_add):
 *   1. query: "seen" when all K cells are non-zero, read before anything
 *      changes (so an item is never its own duplicate);
 *   2. the level: Max (PLAIN), Max or Half (IBF_2C), 1 + round((imp - low)
 *      / (high - low) (Max - 1)) (IBF_MC, IBF_H), from params.c's
 *      ebb_stable_level; an importance refused there (NaN, or out of range
 *      under REFUSE) stops here: nothing written, counted;
 *   3. P decrements (a cell at 0 stays 0), drawn
 *        consecutive:  one uniform start s, the cells s .. s + P - 1
 *                      wrapping at m (one draw per insertion);
 *        independent:  P distinct uniform cells (a repeat is drawn again);
 *        IBF_H:        P times: draw uniform cells, rejecting a 0 and
 *                      accepting a value v with probability 1/v, until one
 *                      is accepted (then decrement it) or 64 draws were
 *                      made (EBB_STABLE_H_MAX_DRAWS: given up, counted);
 *   4. set: cell = max(cell, level) for the K cells (PLAIN: cell = Max).
 * add is steps 2-4; contains is step 1 alone and draws nothing.
 *
 * Worked example: m = 16, d = 2 (Max = 3), K = 2, P = 3, consecutive,
 * PLAIN; cells listed as c_i = value, all others 0.
 *   x -> cells 3, 12. Query: c3 = 0, not seen. Start 14: cells 14, 15, 0
 *      (wrapping) are 0 and stay 0. Set: c3 = 3, c12 = 3.
 *   y -> cells 5, 12. Query: c5 = 0, not seen. Start 2: cells 2, 3, 4;
 *      c3 = 2. Set: c5 = 3, c12 = 3.                 {c3 2, c5 3, c12 3}
 *   x -> cells 3, 12. Query: both non-zero: seen. Start 11: cells 11, 12,
 *      13; c12 = 2. Set: c3 = 3, c12 = 3.            {c3 3, c5 3, c12 3}
 * Under IBF_2C with x unimportant (level Half = 2) the last step sets
 * max(2, 2) = 2 in both: {c3 2, c5 3, c12 2}; had a cell been 3 it would
 * have stayed 3 (an unimportant item never lowers a cell).
 *
 * Invariants
 * ----------
 * There are false negatives: a duplicate is missed when one of its cells
 * was decremented to 0 since its last occurrence. What is guaranteed:
 *   - the query precedes the update: the answer for an item depends only
 *     on the items before it;
 *   - right after add(x) (no insertion in between) contains(x) is true:
 *     the decrements come before the set, and every level is >= 1;
 *   - with the consecutive or the independent draw a cell loses at most 1
 *     per insertion, so a duplicate at gap delta <= L (the delta-th
 *     insertion after an occurrence that set level L) is always seen; for
 *     PLAIN, every duplicate within Max insertions. IBF_H may decrement a
 *     cell several times in one insertion and promises only the first two;
 *   - a refused item changes nothing but the refused counter; queries
 *     change nothing and draw nothing; the same stream into two filters of
 *     the same params and seed leaves them byte-identical (the generator
 *     is the only randomness and is saved in snapshots);
 *   - bits past m d in the last word are 0; counters saturate.
 *
 * Variants
 * --------
 *   PLAIN   Deng and Rafiei: every item sets Max.
 *   IBF_2C  important (importance > threshold) sets Max, the rest Half.
 *   IBF_MC  cell = max(cell, level), level in 1..Max from the importance.
 *   IBF_H   IBF_MC's insert; decrements weighted by 1 / value.
 *
 * Where the papers are wrong or silent, and what this file does
 * ------------------------------------------------------------
 *   - IBF paper, Algorithm 1: its pseudo-code sets DupFlag = yes then
 *     always overwrites it with no, and (no `else`) always writes M after
 *     the M/2 branch, which would make IBF-2C the plain filter. Its Markov
 *     chain (Fig. 1) and text say an unimportant item takes a cell to M/2
 *     only when it is below M/2. We follow the chain: max(cell, target),
 *     and DupFlag is the query's answer.
 *   - M/2 for odd M (M = 7 in the experiments) is undefined: Half =
 *     ceil(Max / 2) = 2^(d-1) (params.c), so with d = 1 Half = Max = 1 and
 *     IBF_2C is PLAIN rather than an item that sets nothing.
 *   - "Probabilistic delete val" (IBF_H) has no procedure in the paper. A
 *     rejection sampler picks a non-zero cell with probability exactly
 *     proportional to 1 / value: a uniform draw is accepted with
 *     probability 1/v, so a cell of value v is accepted with probability
 *     (1/m)(1/v) per draw. The P decrements are made one after the other,
 *     each seeing the values the previous ones left, and need not be
 *     distinct cells (the paper says nothing; distinctness would bias the
 *     weights). A value 1 is accepted without spending a draw on the coin.
 *     After 64 draws (a filter of almost only zeros, or only high values)
 *     the decrement is given up and counted in h_gave_up.
 *   - "Select P cells uniformly at random": Deng and Rafiei's analysis
 *     decrements each cell with probability P/m per insertion, which needs
 *     P distinct cells (P draws with repeats give 1 - (1 - 1/m)^P < P/m);
 *     libbf draws them distinct, and so does the independent draw here.
 *     Cost: a repeat is drawn again, so P distinct cells out of m take
 *     sum_{i<P} m / (m - i) draws, at most 2P while P <= m/2. For
 *     P > m/2 the filter draws the m - P cells to spare instead and
 *     decrements all the others (O(m) = O(P) work either way). Up to 16
 *     distinct cells are kept in a local array; more in a scratch set of
 *     min(P, m - P) entries allocated at creation (ebb_stable_memory
 *     counts it), cleared after each insertion.
 *   - The consecutive draw (used by other implementations, not by either
 *     paper) decrements each cell with the same probability P/m, but the
 *     cells of one insertion are neighbours: whether that changes the
 *     rates is measured in experiments/stable, not assumed.
 *   - IBF paper, Theorem III.3 writes p = P/M and k = K/M; the chain's
 *     per-step probabilities are P/m and K/m. analysis.c uses P/m and K/m.
 *
 * Speed
 * -----
 * One test-and-add is one hash, K multiply-highs, K cell reads, one
 * generator draw and one or two words of decrement (consecutive: a run of
 * up to floor(64/d) cells is one field of a word or two, decremented at
 * once with a lane-parallel ("SWAR") saturating subtract: no loop over its
 * cells), K writes. Nothing is divided at run time, nothing allocated.
 * A test-and-add whose consecutive run neither wraps nor holds one of its
 * K cells (all but about K P / m of the items; decided while the positions
 * are computed) makes the run's decrements first and then reads each K
 * cell once, in the pass that sets it (stable_test_and_apply): the same
 * answer and bytes as query, decrements, set, since the run touches none
 * of the query's cells. Out of the caches the K extra loads of a separate
 * query, not its instructions, were what made test-and-add dearer than
 * add: in one process at 1e8 items' memory, 192 extra ALU instructions a
 * call cost nothing measurable, the K = 5 extra loads of lines already
 * being fetched about 60 ns wherever they stood in the call.
 * batch.c prefetches items ahead: their K cells, and, since the
 * consecutive and the small independent draws depend only on the
 * generator, their decrement cells too (drawn ahead, in order, so the
 * stream of draws is the single calls').
 *
 * A filter with P = 0 never forgets (d = 1: a classic Bloom filter). Its
 * inserts also count the cells they take from 0 (`filled`, recounted from
 * the cells on load, so snapshots do not carry it), which gives
 * posterior.c the fill behind Theorem 1's fp = fill^K in O(K); filters
 * with P > 0 skip that read.
 *
 * Measured numbers
 * ----------------
 * `make bench` at f58f216 (build-bench/bench/ebb-bench, Release,
 * -DEBB_NATIVE=ON; AMD EPYC, 2 vCPUs, the machine idle: "CPUs busy" 1%,
 * medians of 3). K = 5, P = 10, d = 3, PLAIN, consecutive draw, m =
 * 319.5 M cells (libbloom's 119.8 MB for 1e8 items at 1%, k = 7),
 * 16-byte keys, ns per item, one call / batch of 256:
 *
 *   test-and-add     188.60 / 87.43
 *   add              147.97 / 84.72
 *   contains         142.41 / 63.26
 *   libbloom add     239.36
 *
 * At w = 1e6 one-call test-and-add took 40.58 ns against libbloom's add
 * 74.77: 1.84x; at 1e8 1.27x one call, 2.74x batched (targets >= 1x and
 * >= 2x). Interleaved in one process (a scratch program, the papers'
 * order compiled beside the library's, best of 10 rounds of 5e5 calls at
 * load 4, before f58f216): 271 ns against 322 ns, add 221 ns. batch.c
 * keeps the papers' order (no measurable gain). docs/bench.md holds the
 * run at both sizes.
 *
 * Instructions (callgrind, the library built -O2 -march=x86-64-v3, a
 * filter in the caches, 16-byte keys): one-call test-and-add 492 (526
 * before), add 409 (420), contains 229; of a test-and-add the XXH3 hash
 * and its call 81, the K mixed positions 72 (two multiplies and three
 * shift-xors each, then a multiply-high), the generator 24.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/slice.h"
#include "stable/stable_internal.h"

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

static stable_decrement_form decrement_for(const ebb_stable_params *p)
{
    if (p->p == 0)
        return STABLE_DECREMENT_NONE;
    if (p->variant == EBB_STABLE_IBF_H)
        return STABLE_DECREMENT_WEIGHTED;
    if (p->draw == EBB_STABLE_DRAW_CONSECUTIVE)
        return STABLE_DECREMENT_RUN;
    if ((uint64_t)p->p > p->cells - p->p)
        return STABLE_DECREMENT_ALL_BUT;
    return p->p <= EBB_STABLE_FEW_DRAWS ? STABLE_DECREMENT_FEW
                                        : STABLE_DECREMENT_MANY;
}

/* Lane masks of the consecutive draw for d-bit cells. */
static void set_lanes(ebb_stable *f, uint32_t d)
{
    f->lanes = 64u / d;
    f->aligned = 64u % d == 0;
    f->width_log2 = f->aligned ? ebb_log2_u32(d) : 0;
    f->lane_low = 0;
    for (uint32_t i = 0; i < f->lanes; i++)
        f->lane_low |= UINT64_C(1) << (i * d);
    f->lane_high = f->lane_low << (d - 1u);
    f->run_bits = 0;
    if (f->p >= 1 && f->p <= f->lanes) {
        uint64_t field = stable_low_mask(f->p * d);
        f->run_bits = f->p * d;
        f->run_high = f->lane_high & field;
        f->run_low = field & ~f->run_high;
    }
}

/* The scratch set of the independent draw of many distinct cells. */
static ebb_status alloc_table(ebb_stable *f)
{
    if (f->decrement != STABLE_DECREMENT_MANY &&
        f->decrement != STABLE_DECREMENT_ALL_BUT)
        return EBB_OK;
    uint64_t slots = 2;
    uint32_t log = 1;
    while (slots < 2u * f->distinct) {
        slots *= 2u;
        log++;
    }
    if (slots > SIZE_MAX / sizeof(uint64_t))
        return EBB_EOVERFLOW;
    f->table = ebb_mem_alloc((size_t)slots * sizeof(uint64_t));
    if (f->table == NULL)
        return EBB_ENOMEM;
    memset(f->table, 0xFF, (size_t)slots * sizeof(uint64_t));
    f->table_slots = slots;
    f->table_shift = 64u - log;
    return EBB_OK;
}

ebb_status ebb_stable_new(const ebb_stable_params *params, uint64_t seed,
                          ebb_stable **out)
{
    ebb_stable *f = ebb_mem_alloc(sizeof *f);
    if (f == NULL)
        return EBB_ENOMEM;
    memset(f, 0, sizeof *f);
    f->k = params->k;
    f->p = params->p;
    f->variant = params->variant;
    f->seed = seed;
    f->params = *params;
    f->decrement = decrement_for(params);
    f->distinct = params->p < params->cells - params->p
                      ? params->p
                      : params->cells - params->p;
    set_lanes(f, params->cell_bits);
    ebb_rng_seed(&f->rng, seed ^ EBB_STABLE_RNG_SALT);
    ebb_status st = alloc_table(f);
    if (st == EBB_OK)
        st = ebb_cells_init(&f->cells, params->cells, params->cell_bits);
    /* A single call's K cells and decrement cells are requested together
     * before any is read, so their misses overlap; in the caches the
     * prefetches would only add instructions. */
    f->prefetch = st == EBB_OK &&
                  ebb_add_prefetch_pays(ebb_cells_bytes(&f->cells));
    if (st != EBB_OK) {
        ebb_mem_free(f->table);
        ebb_mem_free(f);
        return st;
    }
    *out = f;
    return EBB_OK;
}

ebb_status ebb_stable_create(const ebb_stable_params *params, uint64_t seed,
                             ebb_stable **out)
{
    if (out == NULL || ebb_stable_params_check(params) != EBB_OK)
        return EBB_EINVAL;
    return ebb_stable_new(params, seed, out);
}

void ebb_stable_destroy(ebb_stable *filter)
{
    if (filter == NULL)
        return;
    ebb_cells_free(&filter->cells);
    ebb_mem_free(filter->table);
    ebb_mem_free(filter);
}

void ebb_stable_clear(ebb_stable *f)
{
    ebb_cells_clear(&f->cells);
    f->filled = 0;
    f->insertions = 0;
    f->clamped = 0;
    f->refused = 0;
    f->decrements = 0;
    f->h_gave_up = 0;
}

const ebb_stable_params *ebb_stable_get_params(const ebb_stable *f)
{
    return &f->params;
}

/* ------------------------------------------------------------------------ */
/* The slow decrement forms                                                 */
/* ------------------------------------------------------------------------ */

/* Inserts x into the scratch set; false when it was there already. */
static bool table_insert(ebb_stable *f, uint64_t x)
{
    uint64_t mask = f->table_slots - 1u;
    uint64_t slot = (x * UINT64_C(0x9e3779b97f4a7c15)) >> f->table_shift;
    while (f->table[slot] != STABLE_EMPTY_SLOT) {
        if (f->table[slot] == x)
            return false;
        slot = (slot + 1u) & mask;
    }
    f->table[slot] = x;
    return true;
}

static bool table_contains(const ebb_stable *f, uint64_t x)
{
    uint64_t mask = f->table_slots - 1u;
    uint64_t slot = (x * UINT64_C(0x9e3779b97f4a7c15)) >> f->table_shift;
    while (f->table[slot] != STABLE_EMPTY_SLOT) {
        if (f->table[slot] == x)
            return true;
        slot = (slot + 1u) & mask;
    }
    return false;
}

/* Fills the scratch set with `distinct` distinct uniform cells, calling
 * decrement on each as it is drawn when asked. */
static uint64_t draw_into_table(ebb_stable *f, bool decrement)
{
    uint64_t m = f->cells.count;
    uint64_t done = 0;
    for (uint64_t drawn = 0; drawn < f->distinct;) {
        uint64_t x = ebb_rng_below(&f->rng, m);
        if (!table_insert(f, x))
            continue;
        drawn++;
        if (decrement)
            done += !ebb_cells_decrement(&f->cells, x, 1u);
    }
    return done;
}

static void table_empty(ebb_stable *f)
{
    memset(f->table, 0xFF, (size_t)f->table_slots * sizeof(uint64_t));
}

uint64_t ebb_stable_decrement_many(ebb_stable *f)
{
    uint64_t done = draw_into_table(f, true);
    table_empty(f);
    return done;
}

uint64_t ebb_stable_decrement_all_but(ebb_stable *f)
{
    uint64_t done = 0;
    draw_into_table(f, false);
    for (uint64_t i = 0; i < f->cells.count; i++)
        if (!table_contains(f, i))
            done += !ebb_cells_decrement(&f->cells, i, 1u);
    table_empty(f);
    return done;
}

/* One IBF_H decrement: true when a cell was decremented. */
static bool decrement_one_weighted(ebb_stable *f)
{
    uint64_t m = f->cells.count;
    for (uint32_t draws = 0; draws < EBB_STABLE_H_MAX_DRAWS; draws++) {
        uint64_t i = ebb_rng_below(&f->rng, m);
        uint32_t v = ebb_cells_get(&f->cells, i);
        if (v == 0)
            continue;
        if (v > 1u && ebb_rng_below(&f->rng, v) != 0)
            continue;
        ebb_cells_set(&f->cells, i, v - 1u);
        return true;
    }
    return false;
}

uint64_t ebb_stable_decrement_weighted(ebb_stable *f)
{
    uint64_t done = 0;
    for (uint32_t a = 0; a < f->p; a++) {
        if (decrement_one_weighted(f))
            done++;
        else
            f->h_gave_up = ebb_saturating_add(f->h_gave_up, 1u);
    }
    return done;
}

/* ------------------------------------------------------------------------ */
/* Items                                                                    */
/* ------------------------------------------------------------------------ */

ebb_status ebb_stable_level_counted(ebb_stable *f, double importance,
                                    uint32_t *level)
{
    bool clamped = false;
    ebb_status st;
    if (f->variant == EBB_STABLE_PLAIN) {
        *level = f->cells.max;
        st = isnan(importance) ? EBB_EINVAL : EBB_OK;
    } else {
        st = ebb_stable_level(&f->params, importance, level, &clamped);
    }
    if (st != EBB_OK) {
        f->refused = ebb_saturating_add(f->refused, 1u);
        return EBB_EINVAL;
    }
    if (clamped)
        f->clamped = ebb_saturating_add(f->clamped, 1u);
    return EBB_OK;
}


ebb_status ebb_stable_add_hash(ebb_stable *f, ebb_hash128 hash,
                               double importance)
{
    stable_item it;
    it.refused = stable_level_refused(f, importance, &it.level);
    if (it.refused)
        return EBB_EINVAL;
    stable_prepare(f, hash, &it, f->prefetch, false);
    stable_apply(f, &it);
    return EBB_OK;
}

bool ebb_stable_contains_hash(const ebb_stable *f, ebb_hash128 hash)
{
    uint64_t bits[EBB_STABLE_MAX_K];
    stable_bits(f, hash, bits);
    return stable_query_at(f, bits);
}

ebb_status ebb_stable_test_and_add_hash(ebb_stable *f, ebb_hash128 hash,
                                        double importance, bool *seen)
{
    stable_item it;
    it.refused = stable_level_refused(f, importance, &it.level);
    stable_prepare(f, hash, &it, f->prefetch, true);
    if (it.refused) {
        *seen = stable_query_all(f, it.bits);
        return EBB_EINVAL;
    }
    *seen = stable_test_and_apply(f, &it);
    return EBB_OK;
}

ebb_status ebb_stable_add(ebb_stable *f, const void *key, size_t len,
                          double importance)
{
    return ebb_stable_add_hash(f, ebb_hash_inline(key, len, f->seed),
                               importance);
}

bool ebb_stable_contains(const ebb_stable *f, const void *key, size_t len)
{
    return ebb_stable_contains_hash(f, ebb_hash_inline(key, len, f->seed));
}

ebb_status ebb_stable_test_and_add(ebb_stable *f, const void *key,
                                   size_t len, double importance, bool *seen)
{
    return ebb_stable_test_and_add_hash(f, ebb_hash_inline(key, len, f->seed),
                                        importance, seen);
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

void ebb_stable_get_stats(const ebb_stable *f, ebb_stable_stats *out)
{
    uint64_t zeros = ebb_cells_count_zero(&f->cells);
    *out = (ebb_stable_stats){
        .cells = f->cells.count,
        .cell_bits = f->cells.width,
        .max_level = f->cells.max,
        .insertions = f->insertions,
        .zero_cells = zeros,
        .zero_fraction = (double)zeros / (double)f->cells.count,
        .clamped = f->clamped,
        .refused = f->refused,
        .decrements = f->decrements,
        .h_gave_up = f->h_gave_up,
    };
}

ebb_status ebb_stable_histogram(const ebb_stable *f, uint64_t *counts,
                                size_t n)
{
    if (counts == NULL || n < (size_t)f->cells.max + 1u)
        return EBB_EBUFSIZE;
    memset(counts, 0, ((size_t)f->cells.max + 1u) * sizeof *counts);
    return ebb_cells_histogram(&f->cells, counts);
}

size_t ebb_stable_memory(const ebb_stable *f)
{
    return sizeof *f + ebb_cells_bytes(&f->cells) +
           (size_t)f->table_slots * sizeof(uint64_t);
}
