/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebb/timing.h: Timing and Block Timing Bloom filters, standard and
 * inferential.
 *
 * "Was x among the last w insertions?" answered two ways by one structure:
 *   - the standard answer, yes or no, with no false negatives (Zhang and
 *     Guan's Timing Bloom Filter; its block form, the BTBF);
 *   - the inferential answers of Dautrich and Ravishankar, "Inferential
 *     Time-Decaying Bloom Filters" (2013): the posterior P(I_x < w | R_x)
 *     that x is in the window given its cells, for the filter's window or any
 *     shorter one asked at query time; the expected and the most likely
 *     insertion age (derived by ebb, not in the paper); and the decision of
 *     least expected penalty for this query's costs of a false positive and
 *     a false negative.
 *
 * The structure (section 3 of the paper): m timers of bpt bits, k per item.
 * A current timestamp T_+ cycles through 0..T_Omega and advances once per
 * block of B insertions (B = 1 is the TBF); b counts the insertions since it
 * last advanced. An insertion writes T_+ into the item's k timers. A timer
 * whose age reaches ceil((w - b) / B) + 1 has expired and reads as absent;
 * an incremental sweep rewrites expired timers to the expired mark
 * T_eps = T_Omega + 1 before T_+ can wrap onto them, touching about
 * m / (B (P + 1)) timers per insertion, where the padding P is the slack in
 * T_Omega = ceil(w / B) + 1 + P. So 2^bpt >= T_Omega + 2.
 *
 * The posterior needs the item's prior p_x, its probability of being the
 * next insertion, and D(j), the expected number of distinct items among j
 * insertions (the paper's section 2.5). The filter holds a model of the
 * stream (uniform over a universe, Zipf over a universe, or a measured D(j)
 * table), which gives D(j) and a default p_x; a query may give its own p_x.
 * With a wrong prior the answer is only as good as the prior: the
 * posterior is calibrated only when p_x and D(j) describe the stream.
 *
 * Queries never write, never allocate, never read a clock. Thread safety as
 * every ebb handle: const functions may run concurrently, not with a writer.
 */
#ifndef EBB_TIMING_H
#define EBB_TIMING_H

#include "ebb/ebb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on the shape. Values outside are refused with EBB_EINVAL. */
#define EBB_TIMING_MAX_K 32u                       /* timers per item     */
#define EBB_TIMING_MIN_TIMER_BITS 2u               /* bpt                 */
#define EBB_TIMING_MAX_TIMER_BITS 32u
#define EBB_TIMING_MAX_TIMERS (UINT64_C(1) << 40)  /* m                   */
#define EBB_TIMING_MAX_WINDOW (UINT64_C(1) << 48)  /* w                   */
#define EBB_TIMING_MAX_TABLE 64u                   /* D(j) table points   */

typedef struct ebb_timing ebb_timing;

/* The shape. Fill it with ebb_timing_params_init (explicit) or one of the
 * choosers; ebb_timing_create validates. */
typedef struct ebb_timing_params {
    uint64_t window;     /* w: insertions remembered with no false negative */
    uint64_t timers;     /* m                                              */
    uint32_t k;          /* timers per item                                */
    uint32_t timer_bits; /* bpt                                            */
    uint64_t block;      /* B: insertions per advance of T_+ (1: the TBF)  */
    uint64_t padding;    /* P                                              */
} ebb_timing_params;

/* Derived quantities of a valid shape. */
typedef struct ebb_timing_shape {
    uint64_t t_omega;        /* largest timestamp: ceil(w / B) + 1 + P      */
    uint64_t expired_mark;   /* T_eps = T_Omega + 1                         */
    uint64_t sweep_per_add;  /* timers the sweep examines per insertion     */
    uint64_t memory_bytes;   /* what ebb_timing_create allocates for timers */
    double bits_per_item;    /* m bpt / w                                   */
} ebb_timing_shape;

/* Fills *out with the explicit shape. EBB_EINVAL (out untouched) when a
 * value is outside the limits, B = 0, B > w, or the timers cannot hold
 * T_Omega + 2 values (2^bpt < ceil(w / B) + 3 + P). */
ebb_status ebb_timing_params_init(uint64_t window, uint64_t timers, uint32_t k,
                                  uint32_t timer_bits, uint64_t block,
                                  uint64_t padding, ebb_timing_params *out);

/* EBB_OK when params describe a filter ebb_timing_create accepts. */
ebb_status ebb_timing_params_check(const ebb_timing_params *params);

/* The derived quantities; EBB_EINVAL for invalid params. */
ebb_status ebb_timing_describe(const ebb_timing_params *params,
                               ebb_timing_shape *out);

/* The paper's rule (section 5.1.2): bpt = max(k, 3); m = floor(w bpi / bpt)
 * timers (bpi bits per window item); B the smallest block for which
 * T_Omega fits bpt bits with the P below; P the smallest padding whose sweep
 * examines at most k timers per insertion. EBB_EINVAL when no shape fits
 * (bpi too small for k, or w too large). */
ebb_status ebb_timing_choose_paper(uint64_t window, double bits_per_item,
                                   uint32_t k, ebb_timing_params *out);

/* Sizing from a window and either a memory budget (fp = 0: the shape with
 * the lowest analytic false-positive rate that fits) or a target rate
 * (memory_bytes = 0: the smallest memory whose analytic rate is at most fp).
 * Searches k in 1..EBB_TIMING_MAX_K and, for each, bpt, B and P by the
 * paper's constraints. EBB_EINVAL when both or neither are given, or no
 * shape meets the goal (by memory: also when the best analytic rate is 1,
 * a filter answering every query positive). */
ebb_status ebb_timing_choose(uint64_t window, uint64_t memory_bytes, double fp,
                             ebb_timing_params *out);

/* The analytic false-positive rate of the standard query for an item not
 * inserted in the last w insertions, averaged over the position b within
 * the block, on a stream of distinct items (D(j) = j): every one of the k
 * timers touched by other items recently enough not to have expired,
 * including the block's own early items (section 3.2.2). Derived in
 * docs/timing.md and held against simulation in the tests. NaN for
 * invalid params. */
double ebb_timing_fp(const ebb_timing_params *params);

/* ---- The stream model (priors) ----------------------------------------- */

typedef enum ebb_timing_model_kind {
    /* D(j) = j (every insertion distinct); no default p_x: a query must
     * give one. */
    EBB_TIMING_MODEL_DISTINCT = 0,
    /* Uniform over |U| items: D(j) = |U| (1 - (1 - 1/|U|)^j) (Eq. 16),
     * default p_x = 1/|U|. */
    EBB_TIMING_MODEL_UNIFORM = 1,
    /* Zipf p_x = 1 / (x H_|U|): D(j) by Eq. 15, evaluated in O(1) within
     * 1.5e-5 relative (not the paper's approximation Eq. 17, 10% low at
     * j = 4 |U|: docs/timing.md); no default p_x (it is the item's rank's):
     * a query gives p_x, e.g. from ebb_timing_zipf_prior. */
    EBB_TIMING_MODEL_ZIPF = 2,
    /* D(j) measured at a few j and interpolated on a log-log scale
     * (Eq. 18), D(j) = j below 1 and on the log-log line from (1, 1) to
     * the first point, extended along the last segment's slope above the
     * last, never above j; default p_x as given. */
    EBB_TIMING_MODEL_TABLE = 3
} ebb_timing_model_kind;

typedef struct ebb_timing_model {
    ebb_timing_model_kind kind;
    uint64_t universe;       /* |U| for UNIFORM and ZIPF, >= 1           */
    double default_prior;    /* TABLE: p_x when a query gives none; 0 =
                                none (queries must give p_x)              */
    uint32_t points;         /* TABLE: 2..EBB_TIMING_MAX_TABLE           */
    uint64_t j[EBB_TIMING_MAX_TABLE];   /* increasing, j[0] >= 1         */
    double d[EBB_TIMING_MAX_TABLE];     /* D(j): 1 <= d[i] <= j[i], non-
                                           decreasing                      */
} ebb_timing_model;

/* D(j) under the model; NaN when the model is invalid. */
double ebb_timing_distinct(const ebb_timing_model *model, double j);

/* p_x of the item of rank x (1-based) in a Zipf law over |U| items; NaN
 * for |U| = 0, rank 0 or rank > |U|. */
double ebb_timing_zipf_prior(uint64_t universe, uint64_t rank);

/* The prior p_x a query takes when it gives none: 1/|U| for UNIFORM (and
 * ZIPF's would need the item's rank: 0), a TABLE's default_prior; 0 when
 * the model has none (queries must then give p_x). */
double ebb_timing_model_prior(const ebb_timing_model *model);

/* "distinct", "uniform", "zipf" or "table" (never NULL). */
const char *ebb_timing_model_name(ebb_timing_model_kind kind);

/* ---- The filter ---------------------------------------------------------- */

/* Allocates a filter, every timer expired, T_+ = 0, b = 0, with the model
 * (copied; NULL means DISTINCT). The seed is the hash seed. EBB_EINVAL for
 * invalid params or model, EBB_ENOMEM (nothing leaked). */
ebb_status ebb_timing_create(const ebb_timing_params *params,
                             const ebb_timing_model *model, uint64_t seed,
                             ebb_timing **out);
void ebb_timing_destroy(ebb_timing *filter); /* NULL is a no-op */

/* Every timer expired, T_+ = 0, b = 0, counters 0; the model is kept. */
void ebb_timing_clear(ebb_timing *filter);

const ebb_timing_params *ebb_timing_get_params(const ebb_timing *filter);
const ebb_timing_model *ebb_timing_get_model(const ebb_timing *filter);
/* Replaces the model; EBB_EINVAL (unchanged) for an invalid one. */
ebb_status ebb_timing_set_model(ebb_timing *filter,
                                const ebb_timing_model *model);

/* Insert: the k timers get T_+, the sweep advances, b and T_+ advance. */
void ebb_timing_add(ebb_timing *filter, const void *key, size_t len);
/* The standard query: false iff one of the k timers has expired (its age
 * is at least ceil((w - b) / B) + 1, or it holds the mark). No false
 * negatives: true for every item among the last w insertions. */
bool ebb_timing_contains(const ebb_timing *filter, const void *key,
                         size_t len);
void ebb_timing_add_hash(ebb_timing *filter, ebb_hash128 hash);
bool ebb_timing_contains_hash(const ebb_timing *filter, ebb_hash128 hash);

/* Batches: the same answers and final state as single calls in order. */
void ebb_timing_hash_batch(const ebb_timing *filter, const void *const *keys,
                           const size_t *lens, size_t n, ebb_hash128 *out);
void ebb_timing_add_batch(ebb_timing *filter, const ebb_hash128 *hashes,
                          size_t n);
/* Returns how many are present; out[i] (may be NULL) per key. */
size_t ebb_timing_contains_batch(const ebb_timing *filter,
                                 const ebb_hash128 *hashes, size_t n,
                                 bool *out);
/* The duplicate-detection step on many hashes: for each in order, seen[i]
 * = the standard query, then the insertion; the same answers and final
 * state (byte for byte) as ebb_timing_contains_hash then
 * ebb_timing_add_hash on each in order, so a hash repeated within the
 * batch is seen by its later copies (an item is never its own duplicate).
 * The hashes come from ebb_timing_hash_batch (this filter's seed). Returns
 * how many were seen; seen (may be NULL) gets one answer per hash. n = 0
 * reads and writes nothing. No errors: every hash is accepted. */
size_t ebb_timing_test_and_add_batch(ebb_timing *filter,
                                     const ebb_hash128 *hashes, size_t n,
                                     bool *seen);

typedef struct ebb_timing_stats {
    uint64_t insertions;    /* adds since creation or clear                */
    uint64_t current;       /* T_+                                         */
    uint64_t in_block;      /* b                                           */
    uint64_t live_timers;   /* timers not expired now (O(m) count)         */
    uint64_t swept;         /* timers the sweep rewrote to the mark        */
    size_t memory_bytes;    /* ebb_timing_memory                           */
} ebb_timing_stats;
void ebb_timing_get_stats(const ebb_timing *filter, ebb_timing_stats *out);
size_t ebb_timing_memory(const ebb_timing *filter); /* handle and timers */

/* Snapshots (docs/format.md): the shape, the model, T_+, b, the sweep
 * cursor, the counters and the timers. Loading validates every field (a
 * timer above T_Omega that is not the mark, a cursor outside the array,
 * b >= B, an invalid model are EBB_ECORRUPT). Errors as the other
 * families: EBB_EBUFSIZE (*written = bytes needed), EBB_EMAGIC,
 * EBB_EVERSION, EBB_EFAMILY, EBB_ETRUNCATED, EBB_ECHECKSUM, EBB_ECORRUPT,
 * EBB_ENOMEM; *out untouched on error. */
size_t ebb_timing_snapshot_size(const ebb_timing *filter);
ebb_status ebb_timing_save(const ebb_timing *filter, void *buf,
                           size_t capacity, size_t *written);
ebb_status ebb_timing_load(const void *buf, size_t len, ebb_timing **out);

/* Streams the snapshot ebb_timing_save would write to sink in pieces of at
 * most EBB_SAVE_PIECE_MAX bytes (ebb_save_sink, ebb/ebb.h), allocating
 * nothing (a stack stage; the checksum computed as the pieces go).
 * Preconditions: the filter is not modified during the call. Errors:
 * EBB_EINVAL when filter or sink is NULL; otherwise the first status other
 * than EBB_OK that sink returned, the save stopped there. */
ebb_status ebb_timing_save_to(const ebb_timing *filter, ebb_save_sink sink,
                              void *user);

/* ---- Inference ------------------------------------------------------------
 * What a query sees of x's cells (the paper's R_x summary): r_x timers
 * (distinct positions among the k), the age lambda_x of the oldest
 * timestamp among them (or expired), c_x the timers holding it, and the
 * filter's b at the time of the query. */
typedef struct ebb_timing_evidence {
    uint32_t r;       /* r_x: distinct timers of x, 1..k                  */
    uint32_t c;       /* c_x: timers with the oldest timestamp, 1..r      */
    bool expired;     /* some timer has expired (lambda_x infinite)       */
    uint64_t lambda;  /* lambda_x when not expired                        */
    uint64_t b;       /* insertions since T_+ last advanced               */
} ebb_timing_evidence;

/* Reads x's timers. Never writes. */
void ebb_timing_observe_hash(const ebb_timing *filter, ebb_hash128 hash,
                             ebb_timing_evidence *out);

/* One query's parameters. */
typedef struct ebb_timing_query {
    double prior;     /* p_x in [DBL_MIN, 1]; 0 takes the model's default
                         (EBB_EINVAL when the model has none)             */
    uint64_t window;  /* w' in 1..w; 0 means the filter's w               */
    double cost_fp;   /* $FP >= 0, finite: penalty of a false positive    */
    double cost_fn;   /* $FN >= 0, finite: penalty of a false negative    */
} ebb_timing_query;

typedef struct ebb_timing_answer {
    bool standard;        /* the standard query's answer (window w)        */
    double posterior;     /* P(I_x < w' | R_x), in [0, 1]                  */
    double expected_age;  /* E[I_x | R_x] in insertions (continuous
                             stream, Eq. 8); for expired evidence the
                             prior's mean beyond the smallest age it
                             allows, ceil((w - b) / B) B + b             */
    uint64_t likely_age;  /* argmax_i P(I_x = i | R_x) (the smallest on a
                             tie)                                          */
    bool decision;        /* least expected penalty: true (Pos) iff
                             $FP (1 - posterior) <= $FN posterior          */
} ebb_timing_answer;

/* The inferential query on a key, a hash, or evidence (the last is pure:
 * it lets tests feed any cells). The posterior uses Theorems 2-5
 * (Eqs. 23, 26, 27, with F of Eq. 21, G of Eq. 25 and the model's D(j)),
 * generalised to any w' <= w by the same geometric sums; G counts the
 * block's items that did not return since, D(j0 + B) - D(j0), not D(B)
 * (calibration; docs/timing.md, "Choices"), and docs/timing.md derives
 * the expected and most likely age. Evidence no filter of the shape can
 * show is EBB_EINVAL: e.g. lambda = 0 with b = 0 (never for the TBF), or
 * with m = 1 (every insertion rewrites the only timer) unexpired evidence
 * other than lambda = 0 or lambda = 1 with b = 0. EBB_EINVAL for a prior
 * outside [DBL_MIN, 1] (a subnormal prior's mean age 1/p overflows; none
 * available), a NaN, infinite or negative cost, w' outside 1..w, or
 * evidence inconsistent with the shape; *out untouched then. No answer
 * field is NaN or infinite. */
ebb_status ebb_timing_infer(const ebb_timing *filter, const void *key,
                            size_t len, const ebb_timing_query *query,
                            ebb_timing_answer *out);
ebb_status ebb_timing_infer_hash(const ebb_timing *filter, ebb_hash128 hash,
                                 const ebb_timing_query *query,
                                 ebb_timing_answer *out);
ebb_status ebb_timing_infer_evidence(const ebb_timing_params *params,
                                     const ebb_timing_model *model,
                                     const ebb_timing_evidence *evidence,
                                     const ebb_timing_query *query,
                                     ebb_timing_answer *out);

/* The inferential classic Bloom filter (Theorem 1, Eq. 13): the posterior
 * that x is among the n insertions of a Bloom filter whose false-positive
 * rate is fp, given whether all of x's bits are set. Use it with any
 * classic Bloom filter, e.g. ebb's stable filter with d = 1 and P = 0 and
 * its measured fill (docs/timing.md). NaN for prior outside (0, 1], fp
 * outside [0, 1] or n = 0. */
double ebb_classic_posterior(double prior, uint64_t n, double fp,
                             bool all_set);

#ifdef __cplusplus
}
#endif

#endif /* EBB_TIMING_H */
