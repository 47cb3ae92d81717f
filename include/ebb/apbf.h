/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebb/apbf.h: Age-Partitioned Bloom Filter (APBF).
 *
 * "Was x among the last w insertions?" answered with no false negatives,
 * a tunable false-positive rate and fixed memory. Implements section 5 of
 * Shtul, Baquero and Almeida, "Age-Partitioned Bloom Filters" (2020):
 * k + l slices of m bits in a circular buffer; every insertion sets one bit
 * in each of the k newest slices; every g = floor(m ln 2 / k) insertions the
 * oldest slice is cleared and becomes the newest; a query looks for k
 * consecutive matching slices starting at any of the l + 1 newest positions.
 *
 * The blocked variant (APBBF, section 6 of the paper) makes every slice a
 * blocked Bloom filter: one hash picks a block of B bits (a 64-bit word or
 * a 64-byte cache line), and b bits are set in it, one in each of b equal
 * parts. An add then touches k blocks and a query 2-4 on average, at a small
 * cost in memory. Same handle, same operations; choose it with
 * ebb_apbf_choose_blocked or ebb_apbf_params_from_kl_blocked.
 *
 * Guarantees (for every parameter set this API accepts):
 *   - no false negatives: an item added among the last w = l * g insertions
 *     is always reported present;
 *   - items older than w + k * g insertions are reported at the false-
 *     positive rate ebb_apbf_fp(k, l) or lower (worst case, distinct keys);
 *   - between the two ("slack") reporting decays geometrically.
 *
 * Example:
 *   ebb_apbf_params p;
 *   ebb_apbf *f;
 *   if (ebb_apbf_choose(1000000, 0.01, 0, &p) == EBB_OK &&
 *       ebb_apbf_create(&p, 42, &f) == EBB_OK) {
 *       ebb_apbf_add(f, "key", 3);
 *       bool seen = ebb_apbf_contains(f, "key", 3);   // true
 *       ebb_apbf_destroy(f);
 *   }
 */
#ifndef EBB_APBF_H
#define EBB_APBF_H

#include "ebb/ebb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on the shape. Larger values are refused with EBB_EINVAL. */
#define EBB_APBF_MAX_K 64u     /* slices written per insertion           */
#define EBB_APBF_MAX_L 1024u   /* extra slices that set the window        */
#define EBB_APBF_MAX_SLICE_BITS (UINT64_C(1) << 40) /* bits per slice      */

typedef struct ebb_apbf ebb_apbf;

/* Block sizes of the blocked variant, in bits. */
#define EBB_APBF_BLOCK_WORD 64u
#define EBB_APBF_BLOCK_LINE 512u

/* How a filter stores its slices (ebb_apbf_params.layout). RING: k + l
 * bit arrays of m bits in a circular buffer, the paper's layout. SLICED:
 * m cells of 16, 32, 64 or 128 bits, cell p holding bit p of every slice
 * (plus one spare plane cleared a little at each add), so a query loads k
 * cells; plain slices only, k + l + 1 <= 128 (docs/apbf.md). */
#define EBB_APBF_LAYOUT_RING 0u
#define EBB_APBF_LAYOUT_SLICED 1u

/* The shape of a filter. Fill it with ebb_apbf_choose[_blocked] or
 * ebb_apbf_params_from_kl[_blocked] rather than by hand; ebb_apbf_create
 * validates. */
typedef struct ebb_apbf_params {
    uint32_t k;          /* slices written per insertion, 1..MAX_K          */
    uint32_t l;          /* the window spans l generations, 1..MAX_L        */
    uint64_t slice_bits; /* m, bits per slice, 1..MAX_SLICE_BITS; blocked:
                            a multiple of block_bits                        */
    uint64_t generation; /* g, insertions between shifts, >= 1             */
    uint64_t window;     /* w = l * g, the guaranteed window                */
    uint32_t block_bits; /* 0: plain slices; 64 or 512: blocked (B)         */
    uint32_t block_hashes; /* blocked: bits set per block (b): 1, 2, 4 or
                              8; plain: 0                                   */
    uint32_t layout;     /* EBB_APBF_LAYOUT_RING (0) or _SLICED             */
    uint32_t cell_bits;  /* SLICED: bits per cell, 16, 32, 64 or 128, at
                            least k + l + 1 (0 on input: the smallest);
                            RING: 0                                         */
} ebb_apbf_params;

/* ------------------------------------------------------------------------ */
/* Sizing                                                                   */
/* ------------------------------------------------------------------------ */

/* Chooses the (k, l) with the least memory whose worst-case false-positive
 * rate ebb_apbf_fp(k, l) is <= fp and whose peak NPWS is <= max_npws, and
 * sizes slices so that l * g >= window with every slice ending at fill ratio
 * 1/2 or less. max_npws <= 0 means "no bound".
 * Errors: EBB_EINVAL for window 0, fp outside (0, 1), a NaN, or a max_npws
 * no shape within the limits meets; EBB_EOVERFLOW when the memory would not
 * be addressable. */
ebb_status ebb_apbf_choose(uint64_t window, double fp, double max_npws,
                           ebb_apbf_params *out);

/* Everything a shape can be asked to meet. */
typedef struct ebb_apbf_goal {
    uint64_t window;       /* items the filter must remember, >= 1          */
    double fp;             /* worst-case false-positive rate, in (0, 1)     */
    double max_npws;       /* bound on the peak NPWS (shape NPWS for blocked
                              slices); <= 0: none                           */
    double max_accesses;   /* bound on the expected slice (block) reads of a
                              query that answers false; <= 0: none          */
    uint32_t block_bits;   /* 0 plain; 64 or 512 blocked                    */
    uint32_t block_hashes; /* blocked: 1, 2, 4 or 8, or 0 to let the chooser
                              pick b too; plain: 0                          */
    uint32_t layout;       /* EBB_APBF_LAYOUT_RING (0) or _SLICED: memory
                              counted in whole cells for SLICED             */
} ebb_apbf_goal;

/* The least-memory shape meeting every bound of the goal (ties: smaller k,
 * then smaller l), with layout and cell_bits set. For the SLICED layout
 * only plain shapes with k + l + 1 <= 128 are considered, each costing m
 * cells of the smallest W in {16, 32, 64, 128} >= k + l + 1, so shapes
 * that fill their cells win by themselves; its access bound compares k
 * (a query loads k cells). Without an access bound the least memory often means
 * many slices (plain) or very few (blocked: k = l = 1, whose slack is the
 * whole window); bounding NPWS and accesses keeps a shape both tight and
 * fast. ebb_apbf_choose and ebb_apbf_choose_blocked are this with no access
 * bound and the RING layout. Errors: EBB_EINVAL (bad field, an unknown
 * layout, SLICED with blocked slices, or no shape within the limits meets
 * the goal), EBB_EOVERFLOW. */
ebb_status ebb_apbf_choose_goal(const ebb_apbf_goal *goal,
                                ebb_apbf_params *out);

/* The bounds ebb's front ends (`ebb dedup --blocked`, `ebb params
 * --blocked`, APBF.RESERVE ... BLOCKED) put on a blocked shape unless the
 * caller gives others: with neither, the least memory is degenerate (with
 * b = 8, k = l = 1: one slice written and one retired, whose slack is the
 * whole window; with b free, about 15 block reads per false query). */
#define EBB_APBF_BLOCKED_MAX_NPWS 0.25
#define EBB_APBF_BLOCKED_MAX_ACCESSES 4.0

/* Sizes an explicit (k, l) for a window (same rules as ebb_apbf_choose).
 * Errors: EBB_EINVAL, EBB_EOVERFLOW. */
ebb_status ebb_apbf_params_from_kl(uint32_t k, uint32_t l, uint64_t window,
                                   ebb_apbf_params *out);

/* Shape from explicit (k, l, m) as in the paper: g = floor(m ln 2 / k),
 * w = l * g. Errors: EBB_EINVAL (out of range, or g would be 0). */
ebb_status ebb_apbf_params_from_klm(uint32_t k, uint32_t l,
                                    uint64_t slice_bits, ebb_apbf_params *out);

/* The blocked counterparts. A slice is a whole number of blocks; g is the
 * number of insertions that brings the average block to the load where each
 * of its parts is half full, ln(1/2) / ln(1 - b/B) items per block, after k
 * generations. Errors: EBB_EINVAL (also for a block size other than 64 or
 * 512, or a bad b), EBB_EOVERFLOW. */
ebb_status ebb_apbf_choose_blocked(uint64_t window, double fp,
                                   double max_npws, uint32_t block_bits,
                                   uint32_t block_hashes,
                                   ebb_apbf_params *out);
ebb_status ebb_apbf_params_from_kl_blocked(uint32_t k, uint32_t l,
                                           uint64_t window,
                                           uint32_t block_bits,
                                           uint32_t block_hashes,
                                           ebb_apbf_params *out);

/* Bytes a filter of this shape holds (including the handle). Errors:
 * EBB_EINVAL, EBB_EOVERFLOW. */
ebb_status ebb_apbf_params_memory(const ebb_apbf_params *params,
                                  size_t *bytes);

/* Gives a sized shape (k and l set, from ebb_apbf_params_from_kl[_blocked]
 * or a chooser) the layout: RING sets cell_bits 0; SLICED sets cell_bits
 * to the smallest of 16, 32, 64 and 128 that holds the k + l + 1 planes.
 * Nothing else changes (the same m, g and window). Errors: EBB_EINVAL (NULL,
 * k or l out of range, an unknown layout, SLICED with blocked slices or
 * with k + l + 1 > 128); *params is untouched on error. */
ebb_status ebb_apbf_params_set_layout(ebb_apbf_params *params,
                                      uint32_t layout);

/* The memory cost of the bit-sliced layout's padding: the planes of a cell
 * that hold no slice, W - (k + l + 1) (the spare plane is part of the
 * layout, not padding), and the bytes they take over the m cells,
 * ceil(m (W - k - l - 1) / 8). cell_bits 0 reads as the smallest cell.
 * Both are 0 for the ring, and for a SLICED shape whose k + l + 1 fills its
 * cells ((8, 7) in 16 bits). Preconditions: params valid for
 * ebb_apbf_params_memory. Errors: EBB_EINVAL (NULL, invalid shape),
 * EBB_EOVERFLOW; outputs untouched on error. */
ebb_status ebb_apbf_layout_padding(const ebb_apbf_params *params,
                                   uint32_t *padding_bits_per_cell,
                                   uint64_t *padding_bytes);

/* The layout ebb's front ends (`ebb dedup`, `ebb params`, APBF.RESERVE)
 * build a plain filter with unless told otherwise. ring_goal is the goal
 * of the ring the front end would build (its window, fp and any bounds
 * it applies by default, layout ignored). Returns
 * EBB_APBF_LAYOUT_SLICED when the bit-sliced chooser's least memory for
 * (window, fp) (ebb_apbf_choose_goal with layout SLICED, no bounds) is at
 * most EBB_APBF_SLICED_MAX_MEMORY times the memory of that ring, or the
 * ring cannot be built; EBB_APBF_LAYOUT_RING otherwise, for a blocked
 * goal, for NULL, and when the sliced chooser refuses. The benchmark
 * behind the rule (docs/bench.md, "The layout the front ends choose"): at
 * fp 1% the sliced shape costs 7% more memory than the ring's least
 * memory and answers queries and check-and-adds several times faster from
 * w = 1e6 to 1e8. Never fails. */
#define EBB_APBF_SLICED_MAX_MEMORY 1.10
uint32_t ebb_apbf_preferred_layout(const ebb_apbf_goal *ring_goal);

/* ------------------------------------------------------------------------ */
/* Analytics (section 5.3 and 5.4 of the paper)                             */
/* ------------------------------------------------------------------------ */

/* Worst-case fill ratios (just before a shift, distinct keys), newest slice
 * first. The paper (section 5.3) draws the k slices being filled as a linear
 * gradient i/(2k); a real slice after j of its k generations is filled to
 * 1 - 2^(-j/k), which is higher, so the linear model understates the false-
 * positive rate by up to ~27% (docs/apbf.md). ebb sizes filters with the
 * geometric model; the linear one exists to reproduce the paper's tables. */
typedef enum ebb_fill_model {
    EBB_FILL_GEOMETRIC = 0, /* r_i = 1 - 2^(-(i+1)/k) for i < k, then 1/2  */
    EBB_FILL_LINEAR = 1     /* r_i = (i+1)/(2k) for i < k, then 1/2 (paper) */
} ebb_fill_model;

/* Writes the k + l worst-case fill ratios of the model into ratios[].
 * Errors: EBB_EINVAL (k or l outside the limits, unknown model, NULL). */
ebb_status ebb_apbf_worst_fill(uint32_t k, uint32_t l, ebb_fill_model model,
                               double *ratios);

/* The false-positive rate F(k, l, 0, 0) of section 5.3 for fill ratios
 * r[0..k+l-1] (r[0] newest), each in [0, 1]: the probability that some run
 * of k consecutive slices starting at positions 0..l all match.
 * Returns NaN for k or l outside the limits or a ratio outside [0, 1]. */
double ebb_apbf_fp_ratios(uint32_t k, uint32_t l, const double *ratios);

/* ebb_apbf_fp_ratios at the geometric worst case: the rate ebb promises. */
double ebb_apbf_fp(uint32_t k, uint32_t l);

/* Expected slice accesses of a query that returns false with Algorithm 1,
 * A(k,l,0,0,0,l) / (1 - F(k,l,0,0)) of section 5.4, for the given ratios.
 * NaN on bad arguments. */
double ebb_apbf_accesses_false_ratios(uint32_t k, uint32_t l,
                                      const double *ratios);

/* ebb_apbf_accesses_false_ratios at the geometric worst case. */
double ebb_apbf_accesses_false(uint32_t k, uint32_t l);

/* Peak normalised probability-weighted slack: sum_{i<k} 2^-i / l. NaN for
 * k or l outside the limits. */
double ebb_apbf_npws(uint32_t k, uint32_t l);

/* The probability that each slice of this exact shape matches a key never
 * inserted, at the worst moment (just before a shift, distinct keys):
 * plain slices 1 - (1 - 1/m)^(min(i+1, k) g); blocked slices the expected
 * block false-positive rate over a Poisson block load. Writes k + l values.
 * Errors: EBB_EINVAL. */
ebb_status ebb_apbf_shape_ratios(const ebb_apbf_params *params,
                                 double *ratios);

/* Peak NPWS of this exact shape: sum_{i<k} r^i / l with r the match
 * probability of a full slice (1/2 for plain slices, which is
 * ebb_apbf_npws; the block false-positive rate for blocked ones, as in the
 * paper's Table 3). NaN on an invalid shape. */
double ebb_apbf_shape_npws(const ebb_apbf_params *params);

/* ebb_apbf_fp_ratios on ebb_apbf_shape_ratios: the worst-case false-
 * positive rate of this exact shape. NaN on an invalid shape. */
double ebb_apbf_shape_fp(const ebb_apbf_params *params);

/* Expected slice (or block) reads of Algorithm 1, section 5.4 of the paper
 * and its counterparts, for the given match probabilities r (r[0] newest):
 *   false_query:  a query that returns false;
 *   window_item:  a query for an item of the window at the worst moment,
 *                 averaged over the l generations the window holds (the
 *                 item's k slices match for sure, the others with r_i), as
 *                 in the paper's Table 2;
 *   false_positive: a query that returns true for a key never inserted. */
typedef struct ebb_apbf_accesses {
    double false_query;
    double window_item;
    double false_positive;
} ebb_apbf_accesses;

/* Errors: EBB_EINVAL (k, l outside the limits, NULL, a ratio outside
 * [0, 1]). A figure whose event has probability 0 is NaN. */
ebb_status ebb_apbf_expected_accesses(uint32_t k, uint32_t l,
                                      const double *ratios,
                                      ebb_apbf_accesses *out);

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

/* Creates an empty filter of the given shape; keys are hashed with seed.
 * Errors: EBB_EINVAL (shape out of range or inconsistent: window must equal
 * l * generation and generation <= floor(slice_bits ln 2 / k)),
 * EBB_EOVERFLOW, EBB_ENOMEM. *out is written only on success. */
ebb_status ebb_apbf_create(const ebb_apbf_params *params, uint64_t seed,
                           ebb_apbf **out);

/* Frees the filter. NULL is a no-op. */
void ebb_apbf_destroy(ebb_apbf *filter);

/* Forgets everything (all bits and counters), keeping shape and seed. */
void ebb_apbf_clear(ebb_apbf *filter);

/* ------------------------------------------------------------------------ */
/* Operations (no allocation, no failure)                                   */
/* ------------------------------------------------------------------------ */

/* Records one occurrence of the len bytes at key (key may be NULL if len is
 * 0). Every call counts toward the window, duplicates included. */
void ebb_apbf_add(ebb_apbf *filter, const void *key, size_t len);

/* True when key occurred among the last w insertions (always) or is a false
 * positive (rarely); false means it certainly did not occur in the window. */
bool ebb_apbf_contains(const ebb_apbf *filter, const void *key, size_t len);

/* The hash this filter gives key: ebb_hash(key, len, seed). */
ebb_hash128 ebb_apbf_hash(const ebb_apbf *filter, const void *key, size_t len);

/* add and contains on a precomputed ebb_apbf_hash, so a caller that needs
 * the hash for something else never hashes twice. */
void ebb_apbf_add_hash(ebb_apbf *filter, ebb_hash128 hash);
bool ebb_apbf_contains_hash(const ebb_apbf *filter, ebb_hash128 hash);

/* contains_hash then add_hash, in one call: whether the key was in the
 * window before this occurrence, which is then recorded (the step of a
 * deduplication; ebb_apbf_check_and_add_batch for many keys). The
 * bit-sliced layout reads the key's k cells once for both. */
bool ebb_apbf_check_and_add(ebb_apbf *filter, const void *key, size_t len);
bool ebb_apbf_check_and_add_hash(ebb_apbf *filter, ebb_hash128 hash);

/* contains_hash that also reports how many slices (or blocks) it read:
 * the measured counterpart of ebb_apbf_expected_accesses. */
bool ebb_apbf_contains_counted(const ebb_apbf *filter, ebb_hash128 hash,
                               uint32_t *accesses);

/* ------------------------------------------------------------------------ */
/* Batches: hash everything, keep many memory accesses in flight            */
/* ------------------------------------------------------------------------ */

/* Hashes n keys (keys[i] of lens[i] bytes) with the filter's seed. */
void ebb_apbf_hash_batch(const ebb_apbf *filter, const void *const *keys,
                         const size_t *lens, size_t n, ebb_hash128 *out);

/* Exactly n calls of ebb_apbf_add_hash in order (generation boundaries
 * inside the batch included). When the k slices an add writes exceed the
 * caches (2 MiB), the lines of the key 16 places ahead are prefetched while
 * a key is written. */
void ebb_apbf_add_batch(ebb_apbf *filter, const ebb_hash128 *hashes,
                        size_t n);

/* out[i] = ebb_apbf_contains_hash(filter, hashes[i]); returns how many are
 * true. The walks of up to 48 queries advance together, one prefetched
 * read per round each, so their cache misses overlap. */
size_t ebb_apbf_contains_batch(const ebb_apbf *filter,
                               const ebb_hash128 *hashes, size_t n,
                               bool *out);

/* For each key in order: seen[i] = contains, then add. Exactly the
 * one-at-a-time sequence (a key repeated inside the batch is seen by its
 * second occurrence), with the memory accesses overlapped: the primitive of
 * deduplication. seen may be NULL. Returns how many were seen. */
size_t ebb_apbf_check_and_add_batch(ebb_apbf *filter,
                                    const ebb_hash128 *hashes, size_t n,
                                    bool *seen);

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

typedef struct ebb_apbf_stats {
    ebb_apbf_params params;
    uint64_t seed;
    uint64_t insertions;    /* adds since creation or clear (saturates at
                               UINT64_MAX, never wraps)                    */
    uint64_t generations;   /* shifts performed (saturates likewise)       */
    uint64_t in_generation; /* insertions into the current generation      */
    /* Items beyond the window whose generation still has slices in the
     * filter (the paper's slack, right now); 0 until the filter is full. */
    uint64_t current_slack;
    size_t memory_bytes;    /* bytes held, handle included                 */
} ebb_apbf_stats;

void ebb_apbf_get_stats(const ebb_apbf *filter, ebb_apbf_stats *out);

/* Bytes held by the filter, handle included. */
size_t ebb_apbf_memory(const ebb_apbf *filter);

/* ------------------------------------------------------------------------ */
/* Snapshots (byte layout in docs/format.md)                                */
/* ------------------------------------------------------------------------ */

/* Exact size in bytes of the snapshot ebb_apbf_save writes. */
size_t ebb_apbf_snapshot_size(const ebb_apbf *filter);

/* Writes a snapshot into buf. Errors: EBB_EBUFSIZE when capacity is smaller
 * than ebb_apbf_snapshot_size (nothing written). *written may be NULL. */
ebb_status ebb_apbf_save(const ebb_apbf *filter, void *buf, size_t capacity,
                         size_t *written);

/* Streams the snapshot ebb_apbf_save would write (plain, blocked or
 * bit-sliced, the same bytes) to sink, in pieces of at most EBB_SAVE_PIECE_MAX bytes (see
 * ebb_save_sink in ebb/ebb.h), without allocating: a stage of
 * EBB_SAVE_PIECE_MAX bytes on the stack, the checksum computed as the
 * pieces go. For saving a large filter where a second copy of it does not
 * fit. Preconditions: the filter is not modified during the call. Errors:
 * EBB_EINVAL when filter or sink is NULL (sink not called); otherwise the
 * first status other than EBB_OK that sink returned, the save stopped
 * there. */
ebb_status ebb_apbf_save_to(const ebb_apbf *filter, ebb_save_sink sink,
                            void *user);

/* Builds a new filter from a snapshot of family 1 (plain), 2 (blocked) or
 * 7 (bit-sliced: the filter keeps that layout). The input is treated as
 * hostile: every length is checked before it is read. Errors: EBB_EMAGIC, EBB_EVERSION,
 * EBB_EFAMILY, EBB_ETRUNCATED, EBB_ECHECKSUM, EBB_ECORRUPT, EBB_ENOMEM,
 * EBB_EOVERFLOW. Nothing is allocated or written on error. */
ebb_status ebb_apbf_load(const void *buf, size_t len, ebb_apbf **out);

#ifdef __cplusplus
}
#endif

#endif /* EBB_APBF_H */
