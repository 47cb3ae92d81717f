/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stable_internal.h: the stable filter's handle and the steps of an update,
 * shared by stable.c (one item), batch.c (many) and snapshot.c. The steps
 * are inline so that both callers compile them into their loops; stable.c's
 * essay says what they do and why.
 */
#ifndef EBB_STABLE_INTERNAL_H
#define EBB_STABLE_INTERNAL_H

#include <math.h>

#include "core/bits.h"
#include "core/cells.h"
#include "core/hash.h"
#include "core/rng.h"
#include "ebb/stable.h"

/* The generator's seed is the filter's seed xor this ("Stable" in ASCII),
 * so its stream is not the one a caller seeding their own splitmix64 or
 * xoshiro with the same number would see. */
#define EBB_STABLE_RNG_SALT UINT64_C(0x537461626c65)

/* Independent draws of at most this many distinct cells keep them in a
 * local array and find repeats by a linear scan (at most 15 comparisons a
 * draw); more use the handle's scratch table. */
#define EBB_STABLE_FEW_DRAWS 16u

/* How the P decrements of an insertion are made, fixed at creation. */
typedef enum stable_decrement {
    STABLE_DECREMENT_NONE = 0,    /* P = 0                                  */
    STABLE_DECREMENT_RUN = 1,     /* consecutive: P cells from one start    */
    STABLE_DECREMENT_FEW = 2,     /* independent, P <= FEW_DRAWS, P <= m/2  */
    STABLE_DECREMENT_MANY = 3,    /* independent, P distinct via the table  */
    STABLE_DECREMENT_ALL_BUT = 4, /* independent, P > m/2: m - P spared     */
    STABLE_DECREMENT_WEIGHTED = 5 /* IBF_H: draws weighted by 1 / value     */
} stable_decrement_form;

struct ebb_stable {
    /* Read by every operation. */
    ebb_cells cells;         /* m cells of d bits                         */
    uint32_t k;              /* K                                         */
    uint32_t p;              /* P                                         */
    stable_decrement_form decrement;
    ebb_stable_variant variant;
    uint64_t seed;           /* hash seed                                  */
    ebb_rng rng;             /* the decrements' generator                  */

    /* The consecutive draw decrements up to `lanes` cells at once: the
     * low and the high bit of each of `lanes` d-bit lanes of a word. */
    uint32_t lanes;          /* floor(64 / d)                              */
    uint32_t width_log2;     /* log2 d when d divides 64, else 0           */
    bool aligned;            /* d divides 64: chunks can follow words      */
    /* The cells pass the caches' size: single calls prefetch an item's
     * cells before reading them (EBB_ADD_PREFETCH_MIN_BYTES). */
    bool prefetch;
    uint64_t lane_low;
    uint64_t lane_high;
    /* A run of P <= lanes cells is one field of run_bits = P d bits with
     * these lane masks (run_bits = 0 when P > lanes). */
    uint32_t run_bits;
    uint64_t run_high;      /* top bit of each of the P lanes             */
    uint64_t run_low;       /* the other bits of the P lanes              */

    /* Independent draws of more than FEW_DRAWS distinct cells: an open
     * addressing set of table_slots (a power of two >= 2 * distinct)
     * cell indices, EMPTY_SLOT when free, emptied after every insertion. */
    uint64_t distinct;       /* min(P, m - P): cells drawn distinct        */
    uint64_t *table;
    uint64_t table_slots;
    uint32_t table_shift;    /* 64 - log2 table_slots                      */

    /* P = 0 only (else 0): cells not 0. Such a filter never decrements,
     * so a cell leaves 0 at most once; counted on insert (stable_apply),
     * recounted on load (not in the snapshot), 0 after a clear. It gives
     * ebb_stable_posterior its fill in O(1). */
    uint64_t filled;

    /* Counters (saturating). */
    uint64_t insertions;
    uint64_t clamped;
    uint64_t refused;
    uint64_t decrements;
    uint64_t h_gave_up;

    ebb_stable_params params;
};

#define STABLE_EMPTY_SLOT UINT64_MAX

/* The steps of one update are inlined into each caller's loop: left out of
 * line (gcc does for the larger ones) each costs a call and the saving of
 * the registers the caller keeps across it. */
#define STABLE_INLINE static inline __attribute__((always_inline))

/* ---- Positions and the query ---------------------------------------- */

/* Cell of the item's j-th hash function: uniform in [0, m), independent
 * across j (the K cells may coincide). */
STABLE_INLINE uint64_t stable_position(const ebb_stable *f, ebb_hash128 h,
                                       uint32_t j)
{
    return ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), f->cells.count);
}

static inline void stable_positions(const ebb_stable *f, ebb_hash128 h,
                                    uint64_t *pos)
{
    for (uint32_t j = 0; j < f->k; j++)
        pos[j] = stable_position(f, h, j);
}

/* Where the K cells start in the bit stream: position times d, computed
 * once per item and used by every read and write of it. */
STABLE_INLINE void stable_bits(const ebb_stable *f, ebb_hash128 h,
                               uint64_t *bits)
{
    for (uint32_t j = 0; j < f->k; j++)
        bits[j] = stable_position(f, h, j) * f->cells.width;
}

/* All K cells non-zero, stopping at the first 0 (a query alone). */
static inline bool stable_query_at(const ebb_stable *f, const uint64_t *bits)
{
    for (uint32_t j = 0; j < f->k; j++)
        if (ebb_cells_read_(&f->cells, bits[j]) == 0)
            return false;
    return true;
}

/* ---- Setting the K cells --------------------------------------------- */

/* The cell at bit offset bit = Max: its bits ORed in, no read needed. */
STABLE_INLINE void stable_fill_at(ebb_stable *f, uint64_t bit)
{
    uint64_t word = bit >> 6;
    unsigned off = (unsigned)(bit & 63u);
    uint64_t max = f->cells.max;
    f->cells.words[word] |= max << off;
    if (off + f->cells.width > 64u)
        f->cells.words[word + 1] |= max >> (64u - off);
}

/* cell = max(cell, level) for the K cells; level = Max fills them. */
STABLE_INLINE void stable_set_at(ebb_stable *f, const uint64_t *bits,
                                 uint32_t level)
{
    if (level >= f->cells.max) {
        for (uint32_t j = 0; j < f->k; j++)
            stable_fill_at(f, bits[j]);
        return;
    }
    for (uint32_t j = 0; j < f->k; j++)
        if (ebb_cells_read_(&f->cells, bits[j]) < level)
            ebb_cells_write_(&f->cells, bits[j], level);
}

/* ---- The consecutive draw: lanes of d bits, several at a time --------- */

/* Set bits of x. Written out: without -mpopcnt the builtin is a call. */
STABLE_INLINE unsigned stable_popcount(uint64_t x)
{
    x -= (x >> 1) & UINT64_C(0x5555555555555555);
    x = (x & UINT64_C(0x3333333333333333)) +
        ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

static inline uint64_t stable_low_mask(unsigned nbits)
{
    return nbits >= 64u ? ~UINT64_C(0) : (UINT64_C(1) << nbits) - 1u;
}

/* Bits [bit, bit + nbits) of the cell stream, nbits in 1..64. */
STABLE_INLINE uint64_t stable_field_read(const uint64_t *words, uint64_t bit,
                                         unsigned nbits)
{
    uint64_t word = bit >> 6;
    unsigned off = (unsigned)(bit & 63u);
    uint64_t v = words[word] >> off;
    if (off + nbits > 64u)
        v |= words[word + 1] << (64u - off);
    return v & stable_low_mask(nbits);
}

STABLE_INLINE void stable_field_write(uint64_t *words, uint64_t bit,
                                      unsigned nbits, uint64_t v)
{
    uint64_t word = bit >> 6;
    unsigned off = (unsigned)(bit & 63u);
    uint64_t mask = stable_low_mask(nbits);
    words[word] = (words[word] & ~(mask << off)) | (v << off);
    if (off + nbits > 64u) {
        unsigned low = 64u - off;
        words[word + 1] = (words[word + 1] & ~(mask >> low)) | (v >> low);
    }
}

/* Decrements cells first .. first + n - 1 (no wrap, first + n <= m) that
 * are not 0; returns how many were. Each chunk of up to `lanes` cells is
 * one field: a lane is non-zero when its low d - 1 bits plus 2^(d-1) - 1
 * carry into its top bit or its top bit is set; subtracting 1 from exactly
 * those lanes borrows across no lane boundary. */
static inline uint64_t stable_decrement_range(ebb_stable *f, uint64_t first,
                                              uint64_t n)
{
    uint32_t w = f->cells.width;
    uint64_t bit = first * w;
    uint64_t done = 0;
    while (n > 0) {
        unsigned lanes = n < f->lanes ? (unsigned)n : f->lanes;
        if (f->aligned) {
            unsigned room = (64u - (unsigned)(bit & 63u)) >> f->width_log2;
            if (lanes > room)
                lanes = room; /* the next chunk starts a word */
        }
        unsigned nbits = lanes * w;
        uint64_t field = stable_low_mask(nbits);
        uint64_t high = f->lane_high & field;
        uint64_t low_bits = field & ~high;
        uint64_t x = stable_field_read(f->cells.words, bit, nbits);
        uint64_t nonzero = (((x & low_bits) + low_bits) | x) & high;
        stable_field_write(f->cells.words, bit, nbits,
                           x - (nonzero >> (w - 1u)));
        done += stable_popcount(nonzero);
        bit += nbits;
        n -= lanes;
    }
    return done;
}

/* The P cells start .. start + P - 1, wrapping at m. When P <= lanes and
 * the run does not wrap (almost always), it is one field whose masks were
 * computed at creation. */
STABLE_INLINE uint64_t stable_decrement_run(ebb_stable *f, uint64_t start)
{
    uint64_t m = f->cells.count;
    uint64_t to_end = m - start;
    if (f->run_bits != 0 && f->p <= to_end) {
        uint64_t bit = start * f->cells.width;
        uint64_t x = stable_field_read(f->cells.words, bit, f->run_bits);
        uint64_t nonzero = (((x & f->run_low) + f->run_low) | x) & f->run_high;
        stable_field_write(f->cells.words, bit, f->run_bits,
                           x - (nonzero >> (f->cells.width - 1u)));
        return stable_popcount(nonzero);
    }
    if (f->p <= to_end)
        return stable_decrement_range(f, start, f->p);
    return stable_decrement_range(f, start, to_end) +
           stable_decrement_range(f, 0, f->p - to_end);
}

/* ---- Independent draws ------------------------------------------------ */

/* n distinct uniform cells into out (n <= FEW_DRAWS, n <= m / 2): a
 * repeat is drawn again. The draws depend on the generator only, so a
 * batch may make them ahead of the decrements. */
static inline void stable_draw_few(ebb_rng *rng, uint64_t m, uint32_t n,
                                   uint64_t *out)
{
    uint32_t drawn = 0;
    while (drawn < n) {
        uint64_t x = ebb_rng_below(rng, m);
        bool repeat = false;
        for (uint32_t j = 0; j < drawn; j++)
            repeat |= out[j] == x;
        if (!repeat)
            out[drawn++] = x;
    }
}

/* Decrements the cells at pos[0..n) (distinct) that are not 0. */
static inline uint64_t stable_decrement_cells(ebb_stable *f,
                                              const uint64_t *pos, uint32_t n)
{
    uint64_t done = 0;
    for (uint32_t j = 0; j < n; j++)
        done += !ebb_cells_decrement(&f->cells, pos[j], 1u);
    return done;
}

/* The slow forms (stable.c): P distinct through the scratch table, all but
 * m - P, and IBF_H's weighted draws. Return the cells decremented. */
uint64_t ebb_stable_decrement_many(ebb_stable *f);
uint64_t ebb_stable_decrement_all_but(ebb_stable *f);
uint64_t ebb_stable_decrement_weighted(ebb_stable *f);

/* The P decrements of one insertion, drawing as the filter draws. */
STABLE_INLINE void stable_make_decrements(ebb_stable *f)
{
    uint64_t done;
    switch (f->decrement) {
    case STABLE_DECREMENT_RUN:
        done = stable_decrement_run(f, ebb_rng_below(&f->rng, f->cells.count));
        break;
    case STABLE_DECREMENT_FEW: {
        uint64_t pos[EBB_STABLE_FEW_DRAWS];
        stable_draw_few(&f->rng, f->cells.count, f->p, pos);
        done = stable_decrement_cells(f, pos, f->p);
        break;
    }
    case STABLE_DECREMENT_MANY:
        done = ebb_stable_decrement_many(f);
        break;
    case STABLE_DECREMENT_ALL_BUT:
        done = ebb_stable_decrement_all_but(f);
        break;
    case STABLE_DECREMENT_WEIGHTED:
        done = ebb_stable_decrement_weighted(f);
        break;
    default:
        return;
    }
    f->decrements = ebb_saturating_add(f->decrements, done);
}

/* ---- One item, prepared then applied ---------------------------------- */

/* Everything an update needs before it touches the cells: the level, the
 * K cells and, when the generator alone decides them (the consecutive
 * start, the small independent draws), the decrement cells. Preparing
 * draws from the generator, so items are prepared in stream order; a
 * batch prepares a few items ahead of the one it applies. */
typedef struct stable_item {
    uint64_t bits[EBB_STABLE_MAX_K];      /* the K cells' bit offsets      */
    uint64_t draws[EBB_STABLE_FEW_DRAWS]; /* RUN: draws[0] is the start */
    uint32_t level;
    bool refused;
    /* RUN: the run neither wraps nor meets a K cell (stable_test_and_apply
     * may then read each K cell once). */
    bool run_apart;
} stable_item;

static inline void stable_prefetch_bit(const ebb_stable *f, uint64_t bit)
{
    __builtin_prefetch(f->cells.words + (bit >> 6), 1, 3);
}

static inline void stable_prefetch(const ebb_stable *f, uint64_t cell)
{
    stable_prefetch_bit(f, cell * f->cells.width);
}

/* Prepares an item whose level is known (or refused); prefetches the
 * cells it will read and write when asked, each as soon as it is known
 * (the decrement cells first: they need no hashing), so that the misses
 * start while the rest is computed; for a query, whether the run is apart
 * from the K cells. The handle's fields are copied to locals: the stores
 * to it->bits could otherwise alias them. */
STABLE_INLINE void stable_prepare(ebb_stable *f, ebb_hash128 h,
                                  stable_item *it, bool prefetch, bool query)
{
    uint64_t m = f->cells.count;
    uint64_t width = f->cells.width;
    uint32_t k = f->k;
    /* The run's bits [first, first + run): a K cell at bit b lies in it
     * when b - first < run (unsigned); a wrapping run counts as met. */
    uint64_t first = 0, run = 0;
    bool met = true;
    if (!it->refused) {
        if (f->decrement == STABLE_DECREMENT_RUN) {
            uint64_t start = ebb_rng_below(&f->rng, m);
            uint64_t last = start + f->p - 1u;
            it->draws[0] = start;
            if (prefetch) {
                stable_prefetch(f, start);
                stable_prefetch(f, last < m ? last : last - m);
            }
            first = start * width;
            run = (uint64_t)f->p * width;
            met = !query || last >= m;
        } else if (f->decrement == STABLE_DECREMENT_FEW) {
            stable_draw_few(&f->rng, m, f->p, it->draws);
            for (uint32_t j = 0; prefetch && j < f->p; j++)
                stable_prefetch(f, it->draws[j]);
        }
    }
    for (uint32_t j = 0; j < k; j++) {
        uint64_t bit = ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), m) * width;
        it->bits[j] = bit;
        if (query)
            met |= bit - first < run;
        if (prefetch)
            stable_prefetch_bit(f, bit);
    }
    it->run_apart = !met;
}

/* All K cells non-zero, reading every one (no early exit: the K reads go
 * out together, and the update that follows writes the same words). */
STABLE_INLINE bool stable_query_all(const ebb_stable *f,
                                    const uint64_t *bits)
{
    bool all = true;
    for (uint32_t j = 0; j < f->k; j++)
        all &= ebb_cells_read_(&f->cells, bits[j]) != 0;
    return all;
}

/* Steps 1 and 4 in one pass: each of the K cells is read once, for the
 * query and for cell = max(cell, level). A cell coinciding with an earlier
 * one reads the level written there, not its old value; the answer is the
 * same (the earlier read was 0, so the answer is already false, or it was
 * not 0 and neither is the level). */
STABLE_INLINE bool stable_query_set_at(ebb_stable *f, const uint64_t *bits,
                                       uint32_t level)
{
    bool all = true;
    uint32_t k = f->k;
    if (level >= f->cells.max) {
        for (uint32_t j = 0; j < k; j++) {
            all &= ebb_cells_read_(&f->cells, bits[j]) != 0;
            stable_fill_at(f, bits[j]);
        }
        return all;
    }
    for (uint32_t j = 0; j < k; j++) {
        uint32_t old = ebb_cells_read_(&f->cells, bits[j]);
        all &= old != 0;
        if (old < level)
            ebb_cells_write_(&f->cells, bits[j], level);
    }
    return all;
}

/* Step 4 of a filter that never decrements (P = 0): cell = max(cell,
 * level), counting in `filled` each cell that was 0. A K cell coinciding
 * with an earlier one reads the level written there: counted once. */
STABLE_INLINE void stable_set_counted(ebb_stable *f, const uint64_t *bits,
                                      uint32_t level)
{
    uint64_t filled = 0;
    for (uint32_t j = 0; j < f->k; j++) {
        uint32_t old = ebb_cells_read_(&f->cells, bits[j]);
        filled += old == 0;
        if (old < level)
            ebb_cells_write_(&f->cells, bits[j], level);
    }
    f->filled += filled;
}

/* Steps 3 and 4 of a prepared item that was not refused. */
STABLE_INLINE void stable_apply(ebb_stable *f, const stable_item *it)
{
    uint64_t done;
    switch (f->decrement) {
    case STABLE_DECREMENT_NONE:
        stable_set_counted(f, it->bits, it->level);
        f->insertions = ebb_saturating_add(f->insertions, 1u);
        return;
    case STABLE_DECREMENT_RUN:
        done = stable_decrement_run(f, it->draws[0]);
        f->decrements = ebb_saturating_add(f->decrements, done);
        break;
    case STABLE_DECREMENT_FEW:
        done = stable_decrement_cells(f, it->draws, f->p);
        f->decrements = ebb_saturating_add(f->decrements, done);
        break;
    default:
        stable_make_decrements(f);
        break;
    }
    stable_set_at(f, it->bits, it->level);
    f->insertions = ebb_saturating_add(f->insertions, 1u);
}

/* Steps 1, 3 and 4 of a prepared item that was not refused: the answer.
 * When the consecutive run misses the K cells (all but about K P / m of
 * the items) the two touch different cells, so the run goes first and the
 * query reads each K cell once, in the pass that sets it: the same answer
 * and the same state as query, run, set, with K loads fewer. Out of the
 * caches that order measured 10-15% faster (stable.c's essay, "Speed"). */
STABLE_INLINE bool stable_test_and_apply(ebb_stable *f, const stable_item *it)
{
    if (!it->run_apart) {
        bool seen = stable_query_all(f, it->bits);
        stable_apply(f, it);
        return seen;
    }
    uint64_t done = stable_decrement_run(f, it->draws[0]);
    bool seen = stable_query_set_at(f, it->bits, it->level);
    f->decrements = ebb_saturating_add(f->decrements, done);
    f->insertions = ebb_saturating_add(f->insertions, 1u);
    return seen;
}

/* ---- Importance ------------------------------------------------------- */

/* The level an item of this importance sets (ebb_stable_level, with
 * PLAIN's answer computed here: Max, NaN refused). Counts a clamp or a
 * refusal; EBB_EINVAL when refused. */
ebb_status ebb_stable_level_counted(ebb_stable *f, double importance,
                                    uint32_t *level);

/* The same, without a call for PLAIN's usual case (a number: Max). True
 * when the importance was refused. */
STABLE_INLINE bool stable_level_refused(ebb_stable *f, double importance,
                                        uint32_t *level)
{
    if (f->variant == EBB_STABLE_PLAIN && !isnan(importance)) {
        *level = f->cells.max;
        return false;
    }
    return ebb_stable_level_counted(f, importance, level) != EBB_OK;
}

/* Allocates a filter of valid params with every cell 0 (stable.c). */
ebb_status ebb_stable_new(const ebb_stable_params *params, uint64_t seed,
                          ebb_stable **out);

#endif
