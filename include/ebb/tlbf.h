/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebb/tlbf.h: Time-limited Bloom Filter (TLBF).
 *
 * "Was x inserted during the last T seconds?", with no false negatives, at
 * an insertion rate that is unknown and changes: bursts, quiet nights, idle
 * hours. The filter keeps the APBF's shape (slices, k consecutive matches)
 * but sizes each new slice from the rate it observes and retires slices by
 * their timestamps. Reconstructed from Ferreira, Baquero, Almeida et al.,
 * "Time-limited Bloom Filter" (ACM SAC 2023) per docs/tlbf.md, which fixes
 * the paper's gaps (an idle gap no longer revives stale items; expired
 * slices are dropped down to k; memory is capped).
 *
 * Time is int64 nanoseconds on any clock the caller likes (the convenience
 * forms use CLOCK_REALTIME); only differences matter. A timestamp earlier
 * than the latest one seen is clamped to it and counted: time never runs
 * backwards inside the filter, and every answer depends only on the
 * sequence of calls and their timestamps (replicas given the same calls
 * agree bit for bit).
 *
 * Guarantees:
 *   - no false negatives: x added at time t is reported present by every
 *     query at time q with q - t <= T (unless the EVICT policy evicted the
 *     slices holding it, which the statistics count);
 *   - expiry: from t + T + T / l on, x is reported with a probability that
 *     halves each generation (T / l) down to the false-positive rate, as an
 *     APBF's slack; after an idle gap longer than T nothing old is
 *     reported;
 *   - false positives near the target at a steady rate; higher for a while
 *     after the rate jumps up (measured in docs/results/tlbf.md);
 *   - memory never exceeds max_memory.
 *
 * add may allocate (a new slice, at most once per generation) and so can
 * fail; contains never allocates and never fails.
 */
#ifndef EBB_TLBF_H
#define EBB_TLBF_H

#include "ebb/ebb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ebb_tlbf ebb_tlbf;

/* What add does when a new slice would take the filter past max_memory. */
typedef enum ebb_tlbf_policy {
    /* Refuse the insertion with EBB_ELIMIT; the filter is unchanged. */
    EBB_TLBF_REFUSE = 0,
    /* Drop the oldest live slices until the new one fits (shrinking it if
     * even k - 1 others leave too little room; EBB_ELIMIT only when not
     * even a slice of capacity k fits). Items in evicted slices may be
     * reported absent before T: counted in stats.evicted_slices. Between
     * calls memory stays within max_memory; inside the add that evicts, the
     * new slice is allocated before the evicted ones are freed. */
    EBB_TLBF_EVICT = 1
} ebb_tlbf_policy;

/* Zero the whole struct before filling it (`ebb_tlbf_config c = {0};` or a
 * designated initializer): fields added in later versions take their
 * defaults at 0. */
typedef struct ebb_tlbf_config {
    int64_t span_ns;           /* T, > 0                                    */
    double fp;                 /* target false-positive rate, in (0, 1)    */
    double max_npws;           /* bound on the peak NPWS; <= 0: none        */
    uint64_t initial_capacity; /* insertions expected per span T, >= 1: the
                                  first slices are sized for it; later ones
                                  follow the observed rate                   */
    size_t max_memory;         /* bytes the filter may hold, required       */
    ebb_tlbf_policy policy;
    /* An explicit shape: both 0 (the default) lets the APBF chooser pick the
     * least-memory (k, l) for fp and max_npws; both set (1 <= k <=
     * EBB_APBF_MAX_K, 1 <= l <= EBB_APBF_MAX_L) uses them as given, and fp
     * and max_npws are then not read. One set without the other: EINVAL. */
    uint32_t k, l;
} ebb_tlbf_config;

/* Creates a filter; (k, l) come from the config or from the APBF chooser
 * for fp (and max_npws), keys are hashed with seed. Errors: EBB_EINVAL (a field out of
 * range, unknown policy), EBB_ELIMIT (max_memory cannot hold the k first
 * slices sized for initial_capacity), EBB_EOVERFLOW, EBB_ENOMEM. */
ebb_status ebb_tlbf_create(const ebb_tlbf_config *config, uint64_t seed,
                           ebb_tlbf **out);

/* What ebb_tlbf_create would build for a config, and the steady state at
 * the rate it implies (initial_capacity per span), without allocating. */
typedef struct ebb_tlbf_plan {
    uint32_t k, l;              /* as given, or from the APBF chooser       */
    int64_t generation_ns;      /* T / l: a generation's target duration    */
    int64_t slack_ns;           /* k T / l: the fading zone after T         */
    uint64_t generation_items;  /* ceil(initial_capacity / l)               */
    uint64_t slice_bits;        /* m = ceil(k g / ln 2)                     */
    size_t slice_bytes;         /* the block one slice takes (size class)   */
    size_t initial_bytes;       /* what create holds: k slices, ring, handle */
    size_t steady_bytes;        /* k + l slices, ring, handle               */
    double bits_per_item;       /* (k + l) m / (l g): slice bits per item   */
    double fp;                  /* ebb_apbf_fp(k, l): the worst case        */
    double npws;                /* ebb_apbf_npws(k, l)                      */
} ebb_tlbf_plan;

/* Errors: as ebb_tlbf_create, except EBB_ELIMIT (the plan says whether
 * initial_bytes fits max_memory) and EBB_ENOMEM. */
ebb_status ebb_tlbf_plan_config(const ebb_tlbf_config *config,
                                ebb_tlbf_plan *out);

/* The insertions expected per span at a rate: ceil(rate_per_second x span),
 * at least 1; what initial_capacity takes when the caller knows a rate
 * rather than a count (`ebb dedup --rate`, `ebb params --rate`,
 * TLBF.RESERVE ... RATE). Errors: EBB_EINVAL (out NULL, a rate that is not
 * a finite positive number, span_ns <= 0), EBB_EOVERFLOW (2^64 or more per
 * span); *out is written only on success. */
ebb_status ebb_tlbf_capacity_for_rate(double rate_per_second, int64_t span_ns,
                                      uint64_t *out);

/* Frees the filter. NULL is a no-op. */
void ebb_tlbf_destroy(ebb_tlbf *filter);

/* The hash this filter gives key: ebb_hash(key, len, seed). */
ebb_hash128 ebb_tlbf_hash(const ebb_tlbf *filter, const void *key,
                          size_t len);

/* Records key at time now_ns. Errors: EBB_ELIMIT (REFUSE policy, a new
 * slice would pass max_memory: nothing changed), EBB_ENOMEM (the allocator
 * failed: nothing changed). */
ebb_status ebb_tlbf_add(ebb_tlbf *filter, const void *key, size_t len,
                        int64_t now_ns);
ebb_status ebb_tlbf_add_hash(ebb_tlbf *filter, ebb_hash128 hash,
                             int64_t now_ns);

/* True when key was added at a time t with t >= max(now_ns, latest) - T
 * (always; latest is the latest time seen by add), or was added at a time
 * within [now_ns - T, latest - T) and its slices have not been retired yet
 * (only when now_ns is earlier than the latest time), or is a false
 * positive. Reads no clock, changes nothing. INT64_MIN is read as
 * INT64_MIN + 1 (the filter uses it to mean "never"), for add as well. */
bool ebb_tlbf_contains(const ebb_tlbf *filter, const void *key, size_t len,
                       int64_t now_ns);
bool ebb_tlbf_contains_hash(const ebb_tlbf *filter, ebb_hash128 hash,
                            int64_t now_ns);

/* Batches: exactly n calls in order at the same time now_ns. add_batch
 * stops at the first error and returns it; *added (may be NULL) receives
 * how many were added. While the k written slices hold 2 MiB or more,
 * add_batch locates and prefetches 16 keys' bits at a time before writing
 * any (about 16 KiB of stack); below, it writes key by key. contains_batch
 * advances up to 48 queries' walks together so their cache misses overlap;
 * it uses about 28 KiB of stack and, from 8 queries on, copies the live
 * slices' descriptors once per call (prefer batches of dozens of keys). */
ebb_status ebb_tlbf_add_batch(ebb_tlbf *filter, const ebb_hash128 *hashes,
                              size_t n, int64_t now_ns, size_t *added);
size_t ebb_tlbf_contains_batch(const ebb_tlbf *filter,
                               const ebb_hash128 *hashes, size_t n,
                               int64_t now_ns, bool *out);

/* For each key in order at time now_ns: seen[i] = contains, then
 * statuses[i] = add. Exactly n one-at-a-time pairs (a key repeated inside
 * the batch is seen by its second occurrence; an add refused (EBB_ELIMIT)
 * or failed (EBB_ENOMEM) changes nothing and the batch goes on with the
 * next key), with the lines the adds write prefetched a chunk ahead while
 * the written slices are past the caches. seen and statuses may be NULL.
 * Returns how many were seen. */
size_t ebb_tlbf_check_and_add_batch(ebb_tlbf *filter,
                                    const ebb_hash128 *hashes, size_t n,
                                    int64_t now_ns, bool *seen,
                                    ebb_status *statuses);

/* Convenience forms on CLOCK_REALTIME (nanoseconds since the epoch). */
int64_t ebb_tlbf_clock_now(void);
ebb_status ebb_tlbf_add_now(ebb_tlbf *filter, const void *key, size_t len);
bool ebb_tlbf_contains_now(const ebb_tlbf *filter, const void *key,
                           size_t len);

typedef struct ebb_tlbf_stats {
    uint32_t k, l;
    int64_t span_ns;
    ebb_tlbf_policy policy;
    size_t max_memory;
    uint64_t seed;
    uint32_t slices;          /* slices held                                */
    uint32_t live_slices;     /* of which live at the latest time seen      */
    size_t memory_bytes;      /* bytes held, handle included                */
    uint64_t slice0_bits;     /* size of the newest slice                   */
    uint64_t insertions;      /* adds accepted (saturating)                 */
    uint64_t shifts;          /* generations started (saturating)           */
    uint64_t evicted_slices;  /* live slices dropped by the EVICT policy    */
    uint64_t refused;         /* adds refused by the REFUSE policy          */
    uint64_t clamped;         /* timestamps earlier than the latest seen    */
    uint64_t resets;          /* idle gaps longer than T that emptied it    */
    int64_t latest_ns;        /* latest time seen (INT64_MIN before any)    */
    /* The false-positive rate now, from the recursion of the APBF paper on
     * the live slices' expected fill ratios 1 - (1 - 1/m_i)^(n_i). */
    double current_fp;
    /* Insertions held in the live slices' k newest positions' window: the
     * items of the last span, as far as the filter can tell. */
    uint64_t items_in_span;
} ebb_tlbf_stats;

/* Statistics as of the latest time seen. */
void ebb_tlbf_get_stats(const ebb_tlbf *filter, ebb_tlbf_stats *out);

/* Bytes held, handle included. */
size_t ebb_tlbf_memory(const ebb_tlbf *filter);

/* Snapshots (family 3 of docs/format.md), with every slice's timestamps,
 * counters and the rate-estimation state: a loaded filter answers and
 * evolves exactly as the saved one would have. Errors as for APBF. */
size_t ebb_tlbf_snapshot_size(const ebb_tlbf *filter);
ebb_status ebb_tlbf_save(const ebb_tlbf *filter, void *buf, size_t capacity,
                         size_t *written);
ebb_status ebb_tlbf_load(const void *buf, size_t len, ebb_tlbf **out);

/* Streams the snapshot ebb_tlbf_save would write to sink in pieces of at
 * most EBB_SAVE_PIECE_MAX bytes (ebb_save_sink, ebb/ebb.h), allocating
 * nothing (a stack stage; the checksum computed as the pieces go).
 * Preconditions: the filter is not modified during the call. Errors:
 * EBB_EINVAL when filter or sink is NULL; otherwise the first status other
 * than EBB_OK that sink returned, the save stopped there. */
ebb_status ebb_tlbf_save_to(const ebb_tlbf *filter, ebb_save_sink sink,
                            void *user);

#ifdef __cplusplus
}
#endif

#endif /* EBB_TLBF_H */
