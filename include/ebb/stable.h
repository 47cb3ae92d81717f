/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebb/stable.h: the Stable Bloom filter and its importance-aware variants.
 *
 * "Have I seen x before?" over an endless stream, in fixed memory, with a
 * false-positive rate that settles instead of creeping up to 1. The stable
 * filter of Deng and Rafiei (SIGMOD 2006) keeps m cells of d bits
 * (Max = 2^d - 1). For every item it
 *   1. queries: the item is "seen" when all K of its cells are non-zero;
 *   2. decrements P cells drawn at random (a cell at 0 stays 0);
 *   3. sets its K cells: to Max (stable), or to a level that depends on the
 *      item's importance (the importance-aware filters of Kulkarni et al.,
 *      "Importance-aware Bloom Filter for Set Membership Queries in
 *      Streaming Data").
 * In the limit the fraction of zero cells is a constant, so the rate at
 * which a never-seen item is reported seen tends to FPS = (1 - V_0)^K
 * whatever the stream's length. In exchange there are false negatives: a
 * duplicate is missed when one of its cells was decremented to 0 since its
 * last occurrence; the probability grows with that gap and shrinks with the
 * level the item set. Important items set higher levels and are forgotten
 * last.
 *
 * Variants (ebb_stable_variant), one handle:
 *   PLAIN    every item sets its cells to Max (Deng and Rafiei);
 *   IBF_2C   important items set Max, the others Half = ceil(Max / 2)
 *            (cell = max(cell, target), as the paper's Markov chain; see
 *            docs/stable.md for why not Algorithm 1's pseudo-code);
 *   IBF_MC   cell = max(cell, level), the level in 1..Max mapped from the
 *            item's importance;
 *   IBF_H    insert as IBF_MC; each of the P decrements picks a non-zero
 *            cell with probability inversely proportional to its value.
 *
 * Randomness comes from a generator seeded at creation whose state is part
 * of the filter (saved in snapshots): the same stream into two filters of
 * the same parameters and seed leaves byte-identical state, so a restored
 * snapshot or a Redis replica never diverges.
 *
 * Example:
 *   ebb_stable_params p;
 *   ebb_stable *f;
 *   bool seen;
 *   if (ebb_stable_params_init(1u << 20, 3, 5, 10, &p) == EBB_OK &&
 *       ebb_stable_create(&p, 42, &f) == EBB_OK) {
 *       ebb_stable_test_and_add(f, "key", 3, 0.0, &seen);  // seen == false
 *       ebb_stable_test_and_add(f, "key", 3, 0.0, &seen);  // seen == true
 *       ebb_stable_destroy(f);
 *   }
 *
 * Thread safety: a handle is not synchronised; functions taking a const
 * handle may run concurrently with each other, not with a writer.
 */
#ifndef EBB_STABLE_H
#define EBB_STABLE_H

#include "ebb/ebb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on the shape. Values outside are refused with EBB_EINVAL. */
#define EBB_STABLE_MAX_CELL_BITS 16u              /* d: 1..16, Max <= 65535 */
#define EBB_STABLE_MAX_K 32u                      /* K: 1..32               */
#define EBB_STABLE_MAX_CELLS (UINT64_C(1) << 40)  /* m: 1..2^40             */
/* IBF_H draws cells until it accepts one; it gives up on a decrement after
 * this many draws (the filter may be almost all zeros). */
#define EBB_STABLE_H_MAX_DRAWS 64u

typedef struct ebb_stable ebb_stable;

typedef enum ebb_stable_variant {
    EBB_STABLE_PLAIN = 0,  /* set Max                                        */
    EBB_STABLE_IBF_2C = 1, /* set Max (important) or ceil(Max / 2)          */
    EBB_STABLE_IBF_MC = 2, /* cell = max(cell, level(importance))           */
    EBB_STABLE_IBF_H = 3   /* IBF_MC insert, decrements weighted by 1/value */
} ebb_stable_variant;

/* How the P cells decremented per insertion are drawn. Both decrement every
 * cell with probability P/m per insertion, at most once. */
typedef enum ebb_stable_draw {
    /* P distinct cells drawn uniformly (a repeat is drawn again). */
    EBB_STABLE_DRAW_INDEPENDENT = 0,
    /* P consecutive cells from a uniform start, wrapping at m: one or two
     * cache lines instead of P. Ignored by IBF_H, which always draws cells
     * one at a time. */
    EBB_STABLE_DRAW_CONSECUTIVE = 1
} ebb_stable_draw;

/* What to do with an importance outside [low, high] (or NaN, which is always
 * refused). */
typedef enum ebb_stable_range_policy {
    EBB_STABLE_CLAMP = 0, /* clamp to the range, count it in the stats      */
    EBB_STABLE_REFUSE = 1 /* EBB_EINVAL, the filter unchanged, counted      */
} ebb_stable_range_policy;

/* How an item's importance (a double) becomes the level its cells are set
 * to. Ignored by PLAIN, which always sets Max.
 *   IBF_2C: importance > threshold is important (level Max), otherwise
 *           level Half = ceil(Max / 2). low/high only bound the range.
 *   IBF_MC, IBF_H: level = 1 + round((imp - low) / (high - low) * (Max - 1)),
 *           so low maps to 1 and high to Max. */
typedef struct ebb_stable_importance {
    double low;       /* smallest meaningful importance, finite           */
    double high;      /* largest, finite, > low                           */
    double threshold; /* IBF_2C: important when importance > threshold    */
    ebb_stable_range_policy policy;
} ebb_stable_importance;

/* The shape of a filter. Fill it with ebb_stable_params_init (explicit
 * m, d, K, P) or ebb_stable_choose (from memory and a target rate), then
 * change variant, draw or importance if needed; ebb_stable_create
 * validates everything. */
typedef struct ebb_stable_params {
    uint64_t cells;     /* m                                               */
    uint32_t cell_bits; /* d; Max = 2^d - 1                                */
    uint32_t k;         /* K cells per item                                */
    uint32_t p;         /* P cells decremented per insertion, 0..m; 0 never
                           forgets (a classic Bloom filter when d = 1)     */
    ebb_stable_variant variant;
    ebb_stable_draw draw;
    ebb_stable_importance importance;
} ebb_stable_params;

/* Fills *out with m cells of d bits, K and P, the PLAIN variant, the
 * consecutive draw and importance range [0, 1] with threshold 0.5, CLAMP.
 * EBB_EINVAL (out untouched) when a value is outside the limits above or
 * P > m or out is NULL. */
ebb_status ebb_stable_params_init(uint64_t cells, uint32_t cell_bits,
                                  uint32_t k, uint32_t p,
                                  ebb_stable_params *out);

/* EBB_OK when params describe a filter ebb_stable_create accepts, otherwise
 * EBB_EINVAL (also for an unknown variant or draw, a non-finite or empty
 * importance range). */
ebb_status ebb_stable_params_check(const ebb_stable_params *params);

/* Max = 2^d - 1 and the level IBF_2C gives unimportant items,
 * ceil(Max / 2), for d in 1..16 (0 otherwise). */
uint32_t ebb_stable_max_level(uint32_t cell_bits);
uint32_t ebb_stable_half_level(uint32_t cell_bits);

/* The level an item of this importance sets under params (Max for PLAIN).
 * *clamped (may be NULL) tells whether the importance was out of range.
 * EBB_EINVAL for NaN, or out of range under REFUSE. */
ebb_status ebb_stable_level(const ebb_stable_params *params, double importance,
                            uint32_t *level, bool *clamped);

/* Bytes of cell storage for m cells of d bits (what a filter of that shape
 * allocates for its cells, rounded up to whole 64-bit words); 0 when the
 * shape is outside the limits. */
uint64_t ebb_stable_cell_bytes(uint64_t cells, uint32_t cell_bits);

/* ---- Analysis ------------------------------------------------------------
 * The cell as a Markov chain over 0..Max. Per insertion of a new item a
 * given cell is decremented with probability p_v (P/m for every v > 0,
 * except IBF_H where it depends on v and on the whole distribution), then
 * set with probability K/m to max(cell, t), the target t drawn from the
 * distribution of set levels. level_probs has Max + 1 entries, entry v the
 * probability that an insertion's target is v (entry 0 must be 0, the rest
 * sum to 1 within 1e-9); NULL means the variant's default: Max for PLAIN,
 * half Max and half Half for IBF_2C, uniform over 1..Max for IBF_MC/IBF_H.
 * The chain is solved exactly (IBF_H: to a fixed point, within 1e-12).
 * These are the numbers the CLI, the Redis module, the experiments and the
 * tests use; docs/stable.md compares them with the papers' closed forms. */

/* Stationary distribution: dist[v] for v = 0..Max (Max + 1 doubles).
 * EBB_EINVAL for invalid params or level_probs, P = 0 (no stationary
 * state: every cell fills). */
ebb_status ebb_stable_stationary(const ebb_stable_params *params,
                                 const double *level_probs, double *dist);

typedef struct ebb_stable_analysis {
    double zero_fraction; /* V_0: the stable fraction of zero cells       */
    double fps;           /* (1 - V_0)^K: stable false-positive rate      */
    double mean_level;    /* expected cell value in the stable state      */
} ebb_stable_analysis;

ebb_status ebb_stable_analyse(const ebb_stable_params *params,
                              const double *level_probs,
                              ebb_stable_analysis *out);

/* Deng and Rafiei's closed form for PLAIN:
 * Z = (1 / (1 + 1 / (P (1/K - 1/m))))^Max and FPS = (1 - Z)^K. For the
 * tests and docs; ebb_stable_analyse is the exact chain. NaN when
 * the arguments are out of range. */
double ebb_stable_zero_fraction_closed_form(uint64_t cells, uint32_t cell_bits,
                                            uint32_t k, uint32_t p);

/* Probability that a duplicate of an item that set level `level` is missed
 * when its previous occurrence was `gap` insertions ago (gap >= 1: the
 * duplicate is the gap-th item after it), in the stable state: one of its
 * K cells is 0 at the query. EBB_EINVAL for level outside 1..Max or
 * gap 0; EBB_EOVERFLOW when the evolution would take more than 2^28 cell
 * updates (about 0.3 s; only long gaps with d >= 9 come near it). The
 * analysis functions allocate O(Max) doubles: EBB_ENOMEM when that fails. */
ebb_status ebb_stable_fn_at_gap(const ebb_stable_params *params,
                                const double *level_probs, uint32_t level,
                                uint64_t gap, double *out);

/* ---- Sizing --------------------------------------------------------------
 * From a memory budget and a target stable false-positive rate. */
typedef struct ebb_stable_goal {
    uint64_t memory_bytes; /* cell storage budget, >= 8                    */
    double fp;             /* target FPS, in (0, 1)                        */
    uint32_t cell_bits;    /* d; 0 lets the search choose in 1..8           */
    uint32_t max_k;        /* largest K to consider; 0 means 16             */
    /* How false negatives are weighed among the (d, K, P) whose FPS <= fp,
     * for an item at the lowest level the variant sets: with a gap, the
     * smallest FN at that gap wins; 0 (the default) picks the longest
     * memory, the largest gap at which FN is still at most half its limit
     * 1 - FPS. */
    uint64_t gap;
    ebb_stable_variant variant;
    ebb_stable_draw draw;
    ebb_stable_importance importance;
    const double *level_probs; /* as in the analysis; NULL = default;
                                  must fit 2^cell_bits entries when
                                  cell_bits is set, ignored when 0        */
} ebb_stable_goal;

/* Fills goal defaults: the given memory and fp, cell_bits 3, the rest 0 /
 * PLAIN / consecutive / importance [0, 1] threshold 0.5 CLAMP. */
ebb_status ebb_stable_goal_init(uint64_t memory_bytes, double fp,
                                ebb_stable_goal *out);

/* m = as many cells of d bits as the budget holds; for each K the smallest
 * integer P whose exact FPS is at or below the target (not truncated: a
 * truncated P overshoots the target); the pair with the smallest FN at the
 * goal's gap. EBB_EINVAL for an invalid goal or when no (d, K, P) meets
 * the target; *out untouched then. */
ebb_status ebb_stable_choose(const ebb_stable_goal *goal,
                             ebb_stable_params *out);

/* ---- The filter ---------------------------------------------------------- */

/* Allocates a filter of this shape, all cells 0, the generator seeded with
 * `seed` (also the hash seed). EBB_EINVAL for invalid params (nothing
 * allocated), EBB_ENOMEM when the allocator fails (nothing leaked). */
ebb_status ebb_stable_create(const ebb_stable_params *params, uint64_t seed,
                             ebb_stable **out);
void ebb_stable_destroy(ebb_stable *filter); /* NULL is a no-op */

/* All cells to 0, counters to 0; the generator goes on from its state. */
void ebb_stable_clear(ebb_stable *filter);

/* The filter's shape. */
const ebb_stable_params *ebb_stable_get_params(const ebb_stable *filter);

/* Insert: decrement P cells, then set the item's K cells to its level.
 * importance is ignored by PLAIN. EBB_EINVAL (filter unchanged, counted as
 * refused) for NaN or, under REFUSE, an out-of-range importance. */
ebb_status ebb_stable_add(ebb_stable *filter, const void *key, size_t len,
                          double importance);

/* All K cells non-zero. Never changes the filter; no randomness. */
bool ebb_stable_contains(const ebb_stable *filter, const void *key,
                         size_t len);

/* The duplicate-detection step of the papers: *seen = contains, then add.
 * The item is never its own duplicate. Errors as ebb_stable_add (then
 * *seen is still the query's answer and nothing was written). */
ebb_status ebb_stable_test_and_add(ebb_stable *filter, const void *key,
                                   size_t len, double importance, bool *seen);

/* The same on a hash from ebb_hash(key, len, seed of this filter) or
 * ebb_stable_hash_batch. */
ebb_status ebb_stable_add_hash(ebb_stable *filter, ebb_hash128 hash,
                               double importance);
bool ebb_stable_contains_hash(const ebb_stable *filter, ebb_hash128 hash);
ebb_status ebb_stable_test_and_add_hash(ebb_stable *filter, ebb_hash128 hash,
                                        double importance, bool *seen);

/* Batches: the same answers and the same final state (byte for byte,
 * generator included) as the single calls in order. importances may be
 * NULL (every item at the range's high end: Max for every variant). A
 * refused importance stops nothing: that item is skipped (not written;
 * test_and_add still answers its query, as the single call does) and
 * counted; the return value of the
 * adding forms is EBB_EINVAL if any item was refused, else EBB_OK. */
void ebb_stable_hash_batch(const ebb_stable *filter, const void *const *keys,
                           const size_t *lens, size_t n, ebb_hash128 *out);
ebb_status ebb_stable_add_batch(ebb_stable *filter, const ebb_hash128 *hashes,
                                const double *importances, size_t n);
/* Returns how many are present; out[i] (may be NULL) per key. */
size_t ebb_stable_contains_batch(const ebb_stable *filter,
                                 const ebb_hash128 *hashes, size_t n,
                                 bool *out);
/* *seen_count (may be NULL) gets how many were seen; seen[i] may be NULL. */
ebb_status ebb_stable_test_and_add_batch(ebb_stable *filter,
                                         const ebb_hash128 *hashes,
                                         const double *importances, size_t n,
                                         bool *seen, size_t *seen_count);

/* ---- Theorem 1 on a classic filter ----------------------------------------
 * The inferential classic Bloom filter of "Inferential Time-Decaying Bloom
 * Filters" (Theorem 1, Eq. 13), on a filter that never forgets: P = 0,
 * any d and any variant (no cell ever returns to 0, so an inserted item's
 * cells stay set: no false negatives; d = 1 is the classic Bloom filter).
 * *out = P(x is among the n insertions | whether x's K cells are all
 * set), where each insertion is x with probability `prior`:
 *   all set:      (1 - (1 - prior)^n) / (1 - (1 - prior)^n
 *                                        + (1 - prior)^n fp),
 *   not all set:  0,
 * with n = the filter's insertions (refused ones excluded) and fp =
 * fill^K, fill = (cells not 0) / m: the exact probability that the K
 * cells of a key not inserted are all set in the filter as it is now (its
 * K cells are independent and uniform, and may coincide; the draw only
 * concerns decrements, none here). The fill is a counter kept on insert,
 * so a query is O(K) and allocates, prints and reads no clock. n = 0
 * gives 0. The posterior is calibrated when the prior describes the
 * stream (each insertion independently x with that probability).
 * EBB_EINVAL, *out untouched, for a NULL argument, P != 0 (the filter
 * forgets: an inserted item may show a 0 cell) or prior outside (0, 1]
 * (NaN included). */
ebb_status ebb_stable_posterior(const ebb_stable *filter, const void *key,
                                size_t len, double prior, double *out);
ebb_status ebb_stable_posterior_hash(const ebb_stable *filter,
                                     ebb_hash128 hash, double prior,
                                     double *out);

typedef struct ebb_stable_stats {
    uint64_t cells;         /* m                                           */
    uint32_t cell_bits;     /* d                                           */
    uint32_t max_level;     /* Max                                         */
    uint64_t insertions;    /* items added (refused ones excluded)         */
    uint64_t zero_cells;    /* cells at 0 now                              */
    double zero_fraction;   /* zero_cells / m                              */
    uint64_t clamped;       /* importances clamped into the range          */
    uint64_t refused;       /* importances refused                         */
    uint64_t decrements;    /* cells actually decremented (were > 0)       */
    uint64_t h_gave_up;     /* IBF_H decrements abandoned after the draws  */
} ebb_stable_stats;

/* O(m): counts the zero cells. */
void ebb_stable_get_stats(const ebb_stable *filter, ebb_stable_stats *out);

/* counts[v] = cells at value v, for v = 0..Max; n must be >= Max + 1
 * (EBB_EBUFSIZE otherwise, counts untouched). O(m). */
ebb_status ebb_stable_histogram(const ebb_stable *filter, uint64_t *counts,
                                size_t n);

/* Bytes the filter holds: handle, cells and, for the independent draw of
 * P > 16 cells, the scratch set that keeps them distinct (a power of two
 * >= 2 min(P, m - P) of 8 bytes). */
size_t ebb_stable_memory(const ebb_stable *filter);

/* Snapshots (docs/format.md): the shape, the counters, the generator's state
 * and the cells. Loading gives a filter whose every future answer and state
 * equal the saved one's. save: EBB_EBUFSIZE when capacity is too small
 * (*written = bytes needed). load: EBB_EMAGIC, EBB_EVERSION, EBB_EFAMILY,
 * EBB_ETRUNCATED, EBB_ECHECKSUM, EBB_ECORRUPT, EBB_ENOMEM, *out untouched. */
size_t ebb_stable_snapshot_size(const ebb_stable *filter);
ebb_status ebb_stable_save(const ebb_stable *filter, void *buf,
                           size_t capacity, size_t *written);
ebb_status ebb_stable_load(const void *buf, size_t len, ebb_stable **out);

/* Streams the snapshot ebb_stable_save would write to sink in pieces of at
 * most EBB_SAVE_PIECE_MAX bytes (ebb_save_sink, ebb/ebb.h), allocating
 * nothing (a stack stage; the checksum computed as the pieces go).
 * Preconditions: the filter is not modified during the call. Errors:
 * EBB_EINVAL when filter or sink is NULL; otherwise the first status other
 * than EBB_OK that sink returned, the save stopped there. */
ebb_status ebb_stable_save_to(const ebb_stable *filter, ebb_save_sink sink,
                              void *user);

#ifdef __cplusplus
}
#endif

#endif /* EBB_STABLE_H */
