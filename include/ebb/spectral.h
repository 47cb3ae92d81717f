/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebb/spectral.h: Spectral Bloom filters: how often, not just whether.
 *
 * Cohen and Matias, "Spectral Bloom Filters" (SIGMOD 2003) replace a Bloom
 * filter's bits by m counters. Inserting x adds to its k counters; the
 * estimate of x's multiplicity f_x is read from them. With no deletion
 * below zero the estimate is one-sided: never below f_x (Claim 1), wrong
 * with about the Bloom error E_b = (1 - e^-gamma)^k, gamma = n k / m for n
 * distinct keys. Three ways to update and read the counters
 * (ebb_spectral_method):
 *
 *   MS  Minimum Selection: add to every counter, estimate = their minimum
 *       m_x. Deletions subtract. Union adds counters, join multiplies.
 *   MI  Minimal Increase (section 3.2): an add of r raises each counter to
 *       max(counter, m_x + r), so only the minimal ones move. Fewer and
 *       smaller errors (Claim 5: E_b / k on uniform data), but a deletion
 *       can then take a counter below another key's count (false
 *       negatives, Fig. 8): ebb refuses deletions under MI except through
 *       ebb_spectral_remove_unsafe, which exists for the experiments.
 *   RM  Recurring Minimum (section 3.3): a primary filter updated as MS and
 *       a smaller secondary filter for the keys whose primary minimum is
 *       single (a likely Bloom error). Which keys were moved is kept by a
 *       marker: by default an exact one (the moved keys' 64-bit
 *       fingerprints in a fixed table), which makes RM provably one-sided;
 *       the paper's marker Bloom filter B_f and its plain RM (no marker)
 *       are options, and answer below the truth when the marker gives a
 *       false positive after a key's first add (measured in
 *       docs/spectral.md). Optionally the trapping refinement (Fig. 2),
 *       which is not one-sided. At equal memory RM's error ratio is about
 *       MS's and its additive error about half (docs/results/spectral.md:
 *       the paper's 18x of Table 1 does not reproduce).
 *
 * Counters are packed fixed-width cells of 1..32 bits (src/core/cells.h)
 * or, as an option (ebb_spectral_storage), compact codes of about log2 of
 * their value in the paper's string-array index (section 4).
 * A counter that would pass 2^bits - 1 saturates there, sticks (a
 * saturated counter is never decremented: its true sum is unknown) and is
 * counted in the statistics; an estimate read from a saturated counter is
 * EBB_SPECTRAL_SATURATED, "at least 2^bits - 1", never a wrong number. An
 * update touching k counters applies to all of them or to none.
 *
 * Example (count lines):
 *   ebb_spectral_params p;
 *   ebb_spectral *f;
 *   if (ebb_spectral_choose(100000, 0.01, EBB_SPECTRAL_MI, &p) == EBB_OK &&
 *       ebb_spectral_create(&p, &f) == EBB_OK) {
 *       ebb_spectral_add(f, "GET /", 5, 1);
 *       ebb_spectral_add(f, "GET /", 5, 2);
 *       uint64_t n = ebb_spectral_estimate(f, "GET /", 5);   // n >= 3
 *       ebb_spectral_destroy(f);
 *   }
 *
 * Thread safety: a handle is not synchronised; functions taking a const
 * handle may run concurrently with each other, not with a writer.
 */
#ifndef EBB_SPECTRAL_H
#define EBB_SPECTRAL_H

#include "ebb/ebb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on the shape; values outside are EBB_EINVAL. */
#define EBB_SPECTRAL_MAX_K 32u                        /* k: 1..32          */
#define EBB_SPECTRAL_MAX_COUNTER_BITS 32u             /* 1..32             */
#define EBB_SPECTRAL_MAX_COUNTERS (UINT64_C(1) << 40) /* per filter part   */
/* Range trees cover integer keys 0..range - 1, range <= 2^62. */
#define EBB_SPECTRAL_MAX_RANGE (UINT64_C(1) << 62)
/* An estimate read from a saturated counter: "at least 2^bits - 1". */
#define EBB_SPECTRAL_SATURATED UINT64_MAX

typedef struct ebb_spectral ebb_spectral;

typedef enum ebb_spectral_method {
    EBB_SPECTRAL_MS = 0, /* Minimum Selection                              */
    EBB_SPECTRAL_MI = 1, /* Minimal Increase (deletions refused)           */
    EBB_SPECTRAL_RM = 2  /* Recurring Minimum with a secondary filter      */
} ebb_spectral_method;

/* How RM remembers which keys it moved to the secondary filter. */
typedef enum ebb_spectral_marker {
    /* A fixed open-addressing table of marker_size 64-bit fingerprints of
     * the moved keys: a key is directed to the secondary iff it was moved
     * (up to a 2^-64 fingerprint collision), so RM never answers below
     * the truth. Full table: a key that would move stays in the primary
     * (its MS answer, one-sided), counted in stats.moves_refused. */
    EBB_SPECTRAL_MARKER_EXACT = 0,
    /* The paper's marker Bloom filter B_f: marker_size bits, k probes. */
    EBB_SPECTRAL_MARKER_BLOOM = 1,
    /* No marker (the paper's plain RM): a key is directed when its
     * secondary minimum is above 0. marker_size = 0. */
    EBB_SPECTRAL_MARKER_NONE = 2
} ebb_spectral_marker;

/* Where the counters live (issue 15). Answers, statistics (but
 * memory_bytes) and saturation are the same for every storage on the
 * same input: the compact counters also stop at 2^counter_bits - 1.
 *
 *   FIXED          packed cells of counter_bits bits (src/core/cells.h):
 *                  fixed memory, no allocation after creation.
 *   COMPACT_GAMMA  the string-array index (src/core/strarray.h, section 4
 *   COMPACT_DELTA  of the paper): each counter in a prefix-free code of
 *   COMPACT_STEPS  about log2 of its value (Elias gamma or delta of n + 1,
 *                  or ebb's "steps" code for small counters), so memory
 *                  grows with the counts. An update whose code outgrows
 *                  the index's slack may have to rebuild the array in a
 *                  new allocation: the calls marked "compact:
 *                  EBB_ENOMEM" below can then fail, leaving the filter
 *                  exactly as it was. Not with trapping RM (trap_slots >
 *                  0: EBB_EINVAL). */
typedef enum ebb_spectral_storage {
    EBB_SPECTRAL_FIXED = 0,
    EBB_SPECTRAL_COMPACT_GAMMA = 1,
    EBB_SPECTRAL_COMPACT_DELTA = 2,
    EBB_SPECTRAL_COMPACT_STEPS = 3
} ebb_spectral_storage;

/* The shape of a filter. Fill it with ebb_spectral_params_init or
 * ebb_spectral_choose, then change fields if needed. Two filters are
 * compatible (union, join) when every field is equal. */
typedef struct ebb_spectral_params {
    uint64_t counters;       /* m: counters of the (primary) filter, >= 1   */
    uint32_t counter_bits;   /* bits per counter, 1..32                     */
    uint32_t k;              /* counters per key, 1..EBB_SPECTRAL_MAX_K     */
    ebb_spectral_method method;
    /* RM only (0 for MS and MI): */
    uint64_t secondary;      /* m_s: counters of the secondary filter, >= 1 */
    uint32_t secondary_k;    /* counters per key in the secondary, 1..MAX_K */
    ebb_spectral_marker marker;
    uint64_t marker_size;    /* EXACT: fingerprint slots; BLOOM: bits (k
                                probes); NONE: 0                            */
    uint64_t trap_slots;     /* trapping RM (Fig. 2): capacity of the table
                                L from trapped counter to key; 0: no traps  */
    /* Range trees (section 5.5): 0, or integer keys in 0..range - 1 are
     * counted through the ebb_spectral_*_int calls, each also counting the
     * ceil(log2 range) dyadic nodes above it. */
    uint64_t range;
    uint64_t seed;           /* hash seed: keys map to counters through it  */
    ebb_spectral_storage storage; /* FIXED (the default) or COMPACT_*       */
} ebb_spectral_params;

/* Fills *out: `counters` counters of `counter_bits` bits in all, k, the
 * method, range 0, seed 0, FIXED storage. For RM the counters are split as the paper's
 * experiments do, primary and secondary together m, with the split that
 * measured best (docs/spectral.md): secondary m_s = ceil(m / 10),
 * secondary_k = min(2, k), and an EXACT marker of ceil(m_s / 2) slots
 * (the keys a secondary of m_s counters holds at gamma_s ~ 1 with k_s =
 * 2), which the memory counts beside the counters. EBB_EINVAL for values
 * outside the limits or m < 2 under RM. */
ebb_status ebb_spectral_params_init(uint64_t counters, uint32_t counter_bits,
                                    uint32_t k, ebb_spectral_method method,
                                    ebb_spectral_params *out);

/* EBB_OK when params describe a filter ebb_spectral_create accepts. */
ebb_status ebb_spectral_params_check(const ebb_spectral_params *params);

/* Sizing from the number of distinct keys n and a target error ratio (the
 * fraction of keys whose estimate is above the truth): the smallest m,
 * with its best k, whose Minimum Selection error E_b = (1 - (1 - 1/m)^(kn))
 * ^k is at most error_ratio, 32-bit counters. For RM that m is the
 * primary's, and the secondary (ceil(m / 9), so a tenth of the two) and
 * its exact marker come on top: RM with an exact marker errs only where
 * MS on its primary errs, so the bound holds for it too, at about 1.22x
 * the memory (32-bit counters: m/9 more counters and m/18 8-byte slots). MI is measured below MS's ratio (docs/results/spectral.md);
 * the bound promised is MS's. EBB_EINVAL for n = 0, error_ratio outside
 * (0, 1), or no m within the limits. */
ebb_status ebb_spectral_choose(uint64_t distinct, double error_ratio,
                               ebb_spectral_method method,
                               ebb_spectral_params *out);

/* The Minimum Selection error ratio E_b of the (primary) filter after n
 * distinct keys, and gamma = n k / m. NaN for invalid params. */
double ebb_spectral_error_ratio(const ebb_spectral_params *params,
                                uint64_t distinct);
double ebb_spectral_gamma(const ebb_spectral_params *params,
                          uint64_t distinct);

/* Bytes the filter of this shape allocates (counters, marker, traps,
 * handle); what ebb_spectral_memory reports once created. Compact
 * storage: the bytes of the empty filter (its index, one code per
 * counter, the slack, and the table of an update's pending counters);
 * ebb_spectral_memory grows with the counts. 0 for invalid params. */
uint64_t ebb_spectral_memory_for(const ebb_spectral_params *params);

/* ---- The filter ---------------------------------------------------------- */

/* Allocates a filter, every counter 0. EBB_EINVAL (params_check),
 * EBB_EOVERFLOW, EBB_ENOMEM; *out untouched on error. */
ebb_status ebb_spectral_create(const ebb_spectral_params *params,
                               ebb_spectral **out);
void ebb_spectral_destroy(ebb_spectral *filter); /* NULL is a no-op */
/* Every counter, marker bit, trap and statistic to 0. */
void ebb_spectral_clear(ebb_spectral *filter);
const ebb_spectral_params *ebb_spectral_get_params(const ebb_spectral *filter);

/* The hash a key maps through (ebb_hash with the filter's seed), for the
 * _hash forms below. */
ebb_hash128 ebb_spectral_hash(const ebb_spectral *filter, const void *key,
                              size_t len);

/* Adds r >= 0 occurrences of the key (r = 0: no change). Counters that
 * would pass the maximum saturate (counted). FIXED storage: EBB_OK always
 * for valid arguments (trapping RM's table is allocated at creation: when
 * full, no trap is set, counted). Compact: EBB_ENOMEM when a counter's
 * growth needs memory that cannot be had; the filter, statistics
 * included, is then as it was. */
ebb_status ebb_spectral_add(ebb_spectral *filter, const void *key, size_t len,
                            uint64_t r);
ebb_status ebb_spectral_add_hash(ebb_spectral *filter, ebb_hash128 hash,
                                 uint64_t r);

/* ebb_spectral_add_hash, then the key's estimate after the add (what
 * ebb_spectral_estimate_hash would answer next) in *estimate, from the
 * positions and counters the add just touched: one derivation of the
 * positions and one trip to memory instead of two. On an error *estimate
 * is the estimate of the unchanged filter. */
ebb_status ebb_spectral_add_estimate_hash(ebb_spectral *filter,
                                          ebb_hash128 hash, uint64_t r,
                                          uint64_t *estimate);

/* Starts loading the counters a later add or estimate of the key reads
 * (a software prefetch, for writing): no effect on any answer. A caller
 * with other work to do between learning a key and updating it (a server
 * parsing the rest of a command) hides part of the cache misses of a
 * filter larger than the caches behind that work. Compact storage and RM
 * prefetch nothing. */
void ebb_spectral_prefetch_hash(const ebb_spectral *filter, ebb_hash128 hash);

/* Removes r occurrences (compact: never EBB_ENOMEM, counters only
 * shrink). EBB_EINVAL under MI (use the unsafe form);
 * EBB_EUNDERFLOW when one of the key's counters is below r (more deletes
 * than inserts, or a key never added): nothing changes, counted in
 * stats.refused_removals. Saturated counters are left as they are. */
ebb_status ebb_spectral_remove(ebb_spectral *filter, const void *key,
                               size_t len, uint64_t r);
ebb_status ebb_spectral_remove_hash(ebb_spectral *filter, ebb_hash128 hash,
                                    uint64_t r);
/* The same for every method, MI included: subtracts r from each of the k
 * counters (MI's deletion of Fig. 8, which can make other keys' estimates
 * fall below their counts). EBB_EUNDERFLOW as above. */
ebb_status ebb_spectral_remove_unsafe(ebb_spectral *filter, ebb_hash128 hash,
                                      uint64_t r);

/* The estimate of the key's multiplicity by the filter's method, or
 * EBB_SPECTRAL_SATURATED. Never writes. */
uint64_t ebb_spectral_estimate(const ebb_spectral *filter, const void *key,
                               size_t len);
uint64_t ebb_spectral_estimate_hash(const ebb_spectral *filter,
                                    ebb_hash128 hash);

/* Batches: the same answers and final state as single calls in order.
 * add_batch: EBB_OK; compact: EBB_ENOMEM at the first add that fails,
 * the adds before it applied, it and the later ones not. */
void ebb_spectral_hash_batch(const ebb_spectral *filter,
                             const void *const *keys, const size_t *lens,
                             size_t n, ebb_hash128 *out);
/* counts may be NULL (1 each). */
ebb_status ebb_spectral_add_batch(ebb_spectral *filter,
                                  const ebb_hash128 *hashes,
                                  const uint64_t *counts, size_t n);
void ebb_spectral_estimate_batch(const ebb_spectral *filter,
                                 const ebb_hash128 *hashes, size_t n,
                                 uint64_t *out);

/* ---- Aggregates (section 3.1) --------------------------------------------
 * Lemma 3's unbiased estimator, (mean of the k counters - k N / m) /
 * (1 - 1 / m), N the total occurrences added minus removed. The paper's
 * denominator is 1 - k/m; it assumes x's k counters are distinct, but
 * ebb's may coincide (MS then adds once per position), which makes a
 * counter's expectation f_x (1 - 1/m) + k N / m, so 1 - 1/m is the
 * unbiased one (docs/spectral.md; the paper's form measured 11 sd
 * high). Unbiased only with groups = 1, with a variance near k N / m, so
 * it serves sums and means over many keys, never one key's answer (it
 * falls below the truth about half the time). `groups` (1..k, dividing
 * k) takes the median over `groups` groups of k / groups counters' means
 * (section 3.1.1, median of means; an even count takes the mean of the
 * two middle ones). MS, and RM's primary filter; EBB_EINVAL for MI (its
 * counters are not k N / m on average), trapping RM (moves and sprung
 * traps shift counts out of the primary), m < 2, groups not dividing k,
 * n = 0. */
typedef struct ebb_spectral_aggregate {
    double sum;            /* sum of the unbiased estimates               */
    double mean;           /* sum / n                                     */
    double sum_estimates;  /* sum of the method's estimates (an upper
                              bound; NaN when one is saturated)            */
} ebb_spectral_aggregate;
ebb_status ebb_spectral_aggregate_keys(const ebb_spectral *filter,
                                       const ebb_hash128 *hashes, size_t n,
                                       uint32_t groups,
                                       ebb_spectral_aggregate *out);

/* ---- Union and join (sections 2.2, 5.3) ----------------------------------
 * Both need compatible filters (params equal: m, bits, k, method, RM's
 * parts, range, seed, storage); otherwise EBB_EINVAL and neither changes.
 * Compact storage: the result is built in new arrays that replace dest's
 * (memory for both meanwhile); EBB_ENOMEM leaves dest unchanged.
 *
 * Union: dest += weight * src, counter by counter, saturating (counted).
 * Exactly the filter built from both streams for MS; for MI the sum still
 * never answers below the truth (MI only loses tightness). RM: primaries
 * add; with EBB_SPECTRAL_MERGE_PARTITIONED (the caller promises that each
 * key occurred in at most one of the two, e.g. keys sharded by hash) the
 * secondaries add and the markers unite (Bloom: OR; exact: src's
 * fingerprints inserted, EBB_ELIMIT with neither changed when dest's
 * table cannot hold them), keeping RM's accuracy; without it
 * the secondary, marker and traps are cleared, so estimates fall back to
 * the primary's minimum (one-sided) until keys recur. Traps are always
 * cleared. weight >= 1. */
#define EBB_SPECTRAL_MERGE_PARTITIONED 1u
ebb_status ebb_spectral_merge(ebb_spectral *dest, const ebb_spectral *src,
                              uint64_t weight, unsigned flags);
/* Join: dest = dest * src counter by counter (saturating, counted): the
 * estimate of x is at least f_x(dest) f_x(src) (Spectral Bloomjoin). RM:
 * primaries multiply, the secondary, marker and traps are cleared. dest
 * keeps its statistics, occurrences rather than products, so Lemma 3's
 * N no longer describes its counters: ebb_spectral_aggregate_keys on a
 * joined filter answers nothing meaningful (the filter cannot tell; the
 * caller must not ask). */
ebb_status ebb_spectral_join(ebb_spectral *dest, const ebb_spectral *src);

/* ---- Iceberg queries (section 5.2) ---------------------------------------
 * Ad hoc: out[i] (out may be NULL) = estimate(hashes[i]) >= threshold;
 * returns how many. Under a one-sided method no key whose true count
 * reaches the threshold is missed; some below it are reported (the
 * iceberg error, Fig. 4). */
size_t ebb_spectral_iceberg(const ebb_spectral *filter,
                            const ebb_hash128 *hashes, size_t n,
                            uint64_t threshold, bool *out);

/* Streaming: a watch remembers the keys it reported (their 128-bit
 * hashes, in an open-addressing set that grows by doubling), so that each
 * key is reported once: at the first add after which its estimate is at
 * least the threshold. Under a one-sided method it never misses a key
 * whose true count reaches the threshold. `expected` sizes the set (0:
 * 1024; threshold 0 reports every key at its first add). EBB_EINVAL (out
 * NULL), EBB_EOVERFLOW (expected too large), EBB_ENOMEM.
 */
typedef struct ebb_spectral_watch ebb_spectral_watch;
ebb_status ebb_spectral_watch_create(uint64_t threshold, size_t expected,
                                     ebb_spectral_watch **out);
void ebb_spectral_watch_destroy(ebb_spectral_watch *watch);
/* Adds r occurrences of the key to the filter, then *reported = true when
 * this add is the key's report. EBB_ENOMEM when the set must grow and
 * cannot, or (compact) the filter's add fails: the filter and the set of
 * reported keys do not change. */
ebb_status ebb_spectral_watch_add(ebb_spectral *filter,
                                  ebb_spectral_watch *watch,
                                  ebb_hash128 hash, uint64_t r,
                                  bool *reported);
size_t ebb_spectral_watch_count(const ebb_spectral_watch *watch);

/* ---- Range queries (section 5.5) -----------------------------------------
 * For a filter created with range R > 0: integer keys 0..R - 1. An add of
 * x also adds r to the ceil(log2 R) dyadic nodes [i 2^l, (i + 1) 2^l)
 * that hold it (levels l >= 1), whose keys are hashed apart from every
 * item key (a distinct tag), so a range lo..hi of len = hi - lo + 1 keys
 * is the sum of at most max(1, 2 floor(log2 len)) node and item
 * estimates; each is one-sided under MS and MI, so the sum is too. EBB_EINVAL without a range, for x >= R, or lo > hi or
 * hi >= R. The memory the nodes take is the caller's to size (Claim 12:
 * at most n log2 R node keys for n distinct items). */
/* add_int: the item and its nodes are added together or (compact,
 * EBB_ENOMEM) not at all. */
ebb_status ebb_spectral_add_int(ebb_spectral *filter, uint64_t x,
                                uint64_t r);
ebb_status ebb_spectral_remove_int(ebb_spectral *filter, uint64_t x,
                                   uint64_t r);
ebb_status ebb_spectral_estimate_int(const ebb_spectral *filter, uint64_t x,
                                     uint64_t *out);
/* *out = estimated occurrences of keys lo..hi (inclusive), saturating at
 * EBB_SPECTRAL_SATURATED. */
ebb_status ebb_spectral_range_count(const ebb_spectral *filter, uint64_t lo,
                                    uint64_t hi, uint64_t *out);

/* ---- Statistics, memory, snapshots --------------------------------------- */

typedef struct ebb_spectral_stats {
    uint64_t added;            /* occurrences added (sum of r)             */
    uint64_t removed;          /* occurrences removed                      */
    uint64_t refused_removals; /* removals refused (EBB_EUNDERFLOW)        */
    uint64_t saturations;      /* counter updates clipped at the maximum   */
    uint64_t nonzero;          /* (primary) counters above 0 (O(m) count)  */
    uint64_t moved;            /* RM: keys sent to the secondary filter    */
    uint64_t moves_refused;    /* RM, exact marker: moves refused, full    */
    uint64_t traps_set;        /* trapping RM: traps set                   */
    uint64_t traps_sprung;     /* trapping RM: traps triggered             */
    uint64_t traps_full;       /* trapping RM: traps not set, table full   */
    size_t memory_bytes;       /* ebb_spectral_memory                      */
} ebb_spectral_stats;
void ebb_spectral_get_stats(const ebb_spectral *filter,
                            ebb_spectral_stats *out);
size_t ebb_spectral_memory(const ebb_spectral *filter);

/* Snapshots (family 6, docs/format.md): params, statistics, counters,
 * secondary, marker and trap table; compact counters as the string-array
 * index's own image (FIXED snapshots are byte for byte as before). Loading validates every field and
 * length before reading. Errors as the other families: EBB_EBUFSIZE
 * (*written = bytes needed), EBB_EMAGIC, EBB_EVERSION, EBB_EFAMILY,
 * EBB_ETRUNCATED, EBB_ECHECKSUM, EBB_ECORRUPT, EBB_ENOMEM; *out untouched
 * on error. */
size_t ebb_spectral_snapshot_size(const ebb_spectral *filter);
ebb_status ebb_spectral_save(const ebb_spectral *filter, void *buf,
                             size_t capacity, size_t *written);
ebb_status ebb_spectral_load(const void *buf, size_t len,
                             ebb_spectral **out);

/* Streams the snapshot ebb_spectral_save would write (either storage,
 * compact included) to sink in pieces of at most EBB_SAVE_PIECE_MAX bytes
 * (ebb_save_sink, ebb/ebb.h), allocating nothing (a stack stage; the
 * checksum computed as the pieces go). Preconditions: the filter is not
 * modified during the call. Errors: EBB_EINVAL when filter or sink is NULL;
 * otherwise the first status other than EBB_OK that sink returned, the save
 * stopped there. */
ebb_status ebb_spectral_save_to(const ebb_spectral *filter,
                                ebb_save_sink sink, void *user);

#ifdef __cplusplus
}
#endif

#endif /* EBB_SPECTRAL_H */
