/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_internal.h: the pieces of the measurement core (the .c files of
 * bench/), not seen by the front ends.
 *
 *   keys.c      keys, key ranges, query sets, clock and statistics
 *   ceiling.c   the probe of the machine's random cache-line read rate
 *   subjects.c  the filters under test behind one small interface
 *   measure.c   fill, timed adds, counted and timed queries, per subject
 *   suite.c     which filters at which (window, fp), checks and targets
 *   report.c    tables or JSON
 *   options.c   the command line
 */
#ifndef EBB_BENCH_INTERNAL_H
#define EBB_BENCH_INTERNAL_H

#include "benchcore.h"

#include <ebb/ebb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Keys, queries, clock (keys.c)                                            */
/* ------------------------------------------------------------------------ */

/* 16-byte keys; key i is a pure function of i and distinct indices below
 * 2^63 give distinct keys. */
typedef struct bench_key {
    uint64_t half[2];
} bench_key;

/* Indices from here on are never inserted: the absent queries. */
#define BENCH_ABSENT_BASE (UINT64_C(1) << 62)

bench_key bench_key_at(uint64_t index);
void bench_keys_fill(bench_key *keys, uint64_t first_index, size_t count);

/* A buffer of consecutive keys, regenerated (outside every timed region)
 * only when a caller asks for a range it does not hold. */
typedef struct bench_key_source {
    bench_key *keys;
    size_t capacity;
    uint64_t first;
    size_t count;
} bench_key_source;

void bench_key_source_init(bench_key_source *source, size_t capacity);
void bench_key_source_free(bench_key_source *source);
/* Keys [first, first + count), count <= capacity. */
const bench_key *bench_key_source_range(bench_key_source *source,
                                        uint64_t first, size_t count);

/* Half present keys spread evenly over [present_first, present_first +
 * present_span), half absent, shuffled with a fixed seed. */
typedef struct bench_queries {
    bench_key *keys;
    unsigned char *is_present; /* read only by the untimed pass */
    size_t count;
    size_t absent;
} bench_queries;

void bench_queries_build(bench_queries *queries, uint64_t present_first,
                         uint64_t present_span, size_t count);
void bench_queries_free(bench_queries *queries);

/* Keys are hashed and handed to the batch calls this many at a time. */
#define BENCH_BATCH 256u

/* A block of keys for the batch calls, with their hashes and answers. */
typedef struct bench_key_block {
    const void *keys[BENCH_BATCH];
    size_t lens[BENCH_BATCH];
    ebb_hash128 hashes[BENCH_BATCH];
    bool found[BENCH_BATCH];
} bench_key_block;

/* The size of the next block: remaining, at most BENCH_BATCH. */
size_t bench_block_size(size_t remaining);
/* Points block->keys and block->lens at keys[0, n), n <= BENCH_BATCH, for
 * a family's hash_batch (subjects.c). */
void bench_key_block_point(bench_key_block *block, const bench_key *keys,
                           size_t n);
/* Hashes keys[0, n), n <= BENCH_BATCH, with ebb_apbf_hash_batch into
 * block->hashes (subjects.c); returns n. */
size_t bench_apbf_hash_block(const ebb_apbf *f, bench_key_block *block,
                             const bench_key *keys, size_t n);

/* The blocked shapes: B = 512, b = 8 (or b chosen), with the bounds
 * ebb's front ends choose with (EBB_APBF_BLOCKED_MAX_*). */
#define BENCH_BLOCKED_BITS 512u
#define BENCH_BLOCKED_HASHES 8u
/* The goal of a blocked shape at (window, fp) with b = block_hashes (0:
 * chosen by the library), under those bounds (subjects.c). */
ebb_apbf_goal bench_blocked_goal(uint64_t window, double fp,
                                 uint32_t block_hashes);

uint64_t bench_now_ns(void);
void *bench_xmalloc(size_t bytes);
/* Median of values[0..count-1]; sorts them. */
double bench_median(double *values, unsigned count);
/* The most a measured false-positive rate may be over `absent` absent
 * queries: the promise times the subject's factor (1 for ebb's own
 * filters, BENCH_PEER_FP_FACTOR for the peers) plus BENCH_FP_SIGMAS
 * binomial standard deviations. */
#define BENCH_FP_SIGMAS 5.0
/* The peers are sanity-checked against their own formula with this much
 * room; libbloom measures ~6% above its textbook rate at w = 1e8, and the
 * TLBF issue promises its fp within 1.25x of the target at a steady rate. */
#define BENCH_PEER_FP_FACTOR 1.25
double bench_fp_bound(double promise, double factor, size_t absent);
/* The fraction of all CPUs' time the system spent busy (steal included)
 * over the next interval_ms, from /proc/stat; negative when unknown. */
double bench_system_busy(unsigned interval_ms);
void bench_cpu_model(char *out, size_t size);

/* ------------------------------------------------------------------------ */
/* The machine's ceiling (ceiling.c)                                        */
/* ------------------------------------------------------------------------ */

typedef struct bench_ceiling {
    size_t bytes;           /* buffer probed                               */
    double lines_per_s;     /* best rate of random independent line reads  */
    char method[48];        /* the variant that reached it                 */
} bench_ceiling;

/* Random independent 64-byte line reads per second over a buffer of
 * `bytes` allocated and touched like a filter's, best of several access
 * patterns and `repeats` repetitions each. */
bench_ceiling bench_probe_ceiling(size_t bytes, unsigned repeats);

/* ------------------------------------------------------------------------ */
/* Filters under test (subjects.c)                                          */
/* ------------------------------------------------------------------------ */

typedef enum bench_variant {
    BENCH_APBF_DEFAULT = 0, /* ebb_apbf_choose: least memory              */
    BENCH_APBF_FAST,        /* ebb_apbf_choose_goal, max_accesses bound    */
    BENCH_APBBF_B8,         /* blocked, B = 512, b = 8                     */
    BENCH_APBBF_AUTO,       /* blocked, B = 512, b chosen by the library   */
    BENCH_LIBBLOOM,         /* Debian's libbloom, the classic filter       */
    BENCH_TLBF,             /* time-limited filter, simulated time         */
    BENCH_STABLE_CONSECUTIVE, /* stable filter, P consecutive decrements   */
    BENCH_STABLE_INDEPENDENT, /* stable filter, P independent decrements   */
    BENCH_TIMING,           /* Block Timing Bloom filter, equal memory    */
    BENCH_SPECTRAL_MS,      /* Spectral Bloom filter, Minimum Selection   */
    BENCH_SPECTRAL_MI,      /* ... Minimal Increase                       */
    BENCH_SPECTRAL_RM,      /* ... Recurring Minimum (marker on)          */
    BENCH_HASH_TABLE,       /* GLib's GHashTable, an exact count          */
    BENCH_PROTOTYPE_MODEL,  /* issue 17's model of RedisBloom's prototype
                               APBF (prototype.c, ebb-bench-prototype)    */
    BENCH_APBF_RING_KL,     /* an explicit (k, l) shape, ring layout       */
    BENCH_APBF_SLICED_KL,   /* ... bit-sliced layout                       */
    BENCH_VARIANTS
} bench_variant;

const char *bench_variant_name(bench_variant variant);   /* "APBF default" */
const char *bench_variant_family(bench_variant variant); /* "APBF"         */
const char *bench_variant_slug(bench_variant variant);   /* "apbf-default" */

/* Timed repetitions of each phase, at most (--runs). */
#define BENCH_MAX_RUNS 15u

/* Where the lines per contains come from. */
typedef enum bench_lines_source {
    BENCH_LINES_COUNTED = 0,  /* ebb_apbf_contains_counted over the queries */
    BENCH_LINES_EXPECTED = 1  /* computed from the classic fill formula
                                 (libbloom), the access recursion (TLBF)
                                 or the stationary analysis (stable)       */
} bench_lines_source;

typedef struct bench_subject bench_subject;
typedef struct bench_verdict bench_verdict;

/* One filter under test. The timed loops call the libraries directly; the
 * function pointers are crossed once per chunk of keys. */
struct bench_subject {
    bench_variant variant;
    uint64_t window;            /* requested w                             */
    double fp;                  /* requested fp                            */
    char shape[64];             /* "k=12 l=87", "k=2 l=5 B=512 b=8"       */
    char chooser[96];           /* how the shape was obtained              */
    uint32_t k, l, block_bits, block_hashes;
    double fp_promise;          /* worst-case fp the check holds it to     */
    double fp_factor;           /* slack on the promise (peers, TLBF)      */
    uint64_t fill;              /* keys added before timing                */
    uint64_t capacity;          /* 0, or the most keys it takes (libbloom:
                                   w, its design load): fill and timed adds
                                   are then cut to end exactly there       */
    uint64_t inserted;          /* keys [0, inserted) added so far         */
    uint64_t present_span;      /* present queries: the last present_span  */
    void *filter;
    /* For TLBF: simulated time, key i is added at i * 1e9 / window ns. */
    double ns_per_key;
    int64_t latest_ns;
    unsigned add_errors;        /* TLBF adds refused: a failed check       */

    void (*add)(bench_subject *s, const bench_key *keys, size_t n);
    /* Test-and-add, one call at a time and batched: the stable filter's,
     * and the APBF's check-and-add for the explicit shapes of
     * ebb-bench-prototype (NULL for the others): returns how many keys
     * were reported seen (fresh keys: checked against the stable rate for
     * the stable filter, against the fp bound for the APBF). */
    size_t (*test_and_add)(bench_subject *s, const bench_key *keys, size_t n);
    size_t (*test_and_add_batch)(bench_subject *s, const bench_key *keys,
                                 size_t n);
    /* NULL when the library has no batch calls (libbloom). */
    void (*add_batch)(bench_subject *s, const bench_key *keys, size_t n);
    size_t (*contains)(const bench_subject *s, const bench_key *keys,
                       size_t n);
    size_t (*contains_batch)(const bench_subject *s, const bench_key *keys,
                             size_t n);
    /* Untimed: the answer for one key and the lines it read (NaN when the
     * library cannot count them). */
    bool (*probe)(const bench_subject *s, const bench_key *key,
                  double *lines);
    /* Lines per contains when probe cannot count: for a mix with the given
     * share of present keys. */
    double (*expected_contains_lines)(const bench_subject *s,
                                      double present_share);
    /* Lines an add (and a test-and-add) touches when it is not k: the
     * stable filter's decrements add lines. NULL: k. */
    double (*expected_add_lines)(const bench_subject *s);
    /* A filter that forgets (stable): present keys may be missed, and its
     * fp is an equilibrium to be met, not a bound to stay under. When set,
     * the checks hold the false negatives of the present queries (keys
     * [present_first, present_first + present_span), evenly spread) to
     * this expected rate, and the measured fp to fp_promise from both
     * sides; NULL: no false negative allowed, fp at most its bound. */
    double (*expected_fn)(const bench_subject *s, uint64_t present_first,
                          uint64_t present_span);
    /* The BTBF's inferential query (NULL for the others), one call at a
     * time: returns how many answers were standard positives, which must
     * equal the untimed pass's positives. */
    size_t (*infer)(const bench_subject *s, const bench_key *keys, size_t n);
    /* The same query given a prior per key (not the model's cached
     * default), as `ebb recent` does with a prior field: NULL for the
     * others. */
    size_t (*infer_prior)(const bench_subject *s, const bench_key *keys,
                          size_t n);
    /* The false-positive rate expected at the moment of the queries when it
     * differs from fp_promise (the BTBF's depends on the position within
     * its block); NULL: fp_promise. The bound is checked against it. */
    double (*fp_now)(const bench_subject *s);
    /* A counter (the spectral filters, the hash table): its query is an
     * estimate of the key's count, reported as op "estimate"; contains,
     * contains_batch and probe count a hit for an estimate >= 1, and every
     * key of the run is added once, so a present key's estimate below 1 is
     * an answer below the truth (a false negative). */
    bool counts;
    /* Untimed checks after the timed ones (NULL: none); returns the failed
     * ones, each described on log. May insert keys. */
    unsigned (*extra_checks)(bench_subject *s, bench_verdict *v, FILE *log);
    size_t (*memory)(const bench_subject *s);
    void (*destroy)(bench_subject *s);
};

/* True when status is EBB_OK; otherwise false, with "bench: what: error"
 * on stderr (subjects.c). */
bool bench_status_ok(const char *what, ebb_status status);

/* bloom_init(bloom, window, fp); false, with a message on stderr, when
 * libbloom refuses (or w does not fit its int) (subjects.c). */
struct bloom;
bool bench_libbloom_init(struct bloom *bloom, uint64_t window, double fp);

/* A probe for the filters whose reads cannot be counted: *lines = NaN,
 * the answer from s->contains (subjects.c). */
bool bench_probe_uncounted(const bench_subject *s, const bench_key *key,
                           double *lines);

/* The counters beside libbloom (spectral.c): the spectral filters and the
 * hash table, for (window, fp) as bench_subject_create says. */
bool bench_spectral_create(bench_subject *s);
bool bench_hash_table_create(bench_subject *s);

/* An APBF subject of explicit params (ebb-bench-prototype: a (k, l) shape
 * sized for the window, ring or sliced): requested fp = ebb_apbf_fp(k, l),
 * chooser names how p was made. False, with a message on stderr, when the
 * library refuses it (subjects.c). */
bool bench_apbf_subject_create(bench_subject *s, bench_variant variant,
                               uint64_t window, const ebb_apbf_params *p,
                               const char *chooser);

/* Creates the variant's filter for (window, fp); false (with a message on
 * stderr) when the library refuses the shape. */
bool bench_subject_create(bench_subject *s, bench_variant variant,
                          uint64_t window, double fp);

/* ------------------------------------------------------------------------ */
/* Results (measure.c)                                                      */
/* ------------------------------------------------------------------------ */

typedef enum bench_op {
    BENCH_ADD = 0,
    BENCH_CONTAINS = 1,
    BENCH_TEST_AND_ADD = 2, /* the stable filter's query-then-insert */
    BENCH_INFER = 3,        /* the BTBF's posterior query (one call)  */
    BENCH_INFER_PRIOR = 4,  /* the same with a prior per query        */
    BENCH_ESTIMATE = 5      /* a counter's query: the key's count     */
} bench_op;
/* "add", "contains", "test_and_add", "infer", "infer_prior", "estimate" */
const char *bench_op_name(bench_op op);

/* One printed result: an operation of one filter, one call at a time or
 * batched. */
typedef struct bench_row {
    bench_variant variant;
    char shape[64];
    uint64_t window;
    double fp;
    bench_op op;
    bool batch;
    unsigned runs;
    uint64_t ops;              /* operations per run                      */
    double ns_per_op;          /* median                                  */
    double mops;
    double bits_per_item;      /* bytes held * 8 / w                      */
    size_t memory_bytes;
    double lines_per_op;
    bench_lines_source lines_source;
    double ceiling_lines_per_s;
    double ceiling_fraction;   /* ops/s * lines/op / ceiling              */
    double fp_promise;
    double fp_measured;        /* the absent half of the queries          */
} bench_row;

/* What the untimed pass and the checks found for one subject. */
struct bench_verdict {
    size_t queries;
    size_t absent;
    size_t false_negatives;
    double fp_measured;
    double fp_bound;
    uint64_t filled;          /* keys added before timing                 */
    /* Filters that forget (expected_fn set), NaN otherwise: */
    double fn_measured;       /* missed present queries / present queries */
    double fn_expected;       /* the analysis' expectation for them       */
    double fn_bound;          /* most |measured - expected| may be        */
    double fp_low;            /* least the measured fp may be             */
    uint64_t tested_fresh;    /* fresh keys through the timed test-and-add */
    uint64_t tested_seen;     /* ... reported seen (false positives)      */
    double tested_fp;         /* tested_seen / tested_fresh               */
    double fill_ns;           /* time the fill took (batch calls if any)  */
    /* fp_now set (BTBF), NaN otherwise: the rate expected at the queries'
     * moment, which the bound is built on. */
    double fp_now;
    /* The BTBF's extra check, NaN otherwise: the fp of absent keys averaged
     * over positions spread evenly through a block, against ebb_timing_fp
     * (the average over the position), from both sides. */
    double fp_averaged;
    double fp_averaged_bound;  /* most |fp_averaged - fp_promise| may be   */
    uint64_t averaged_probes;  /* absent probes behind fp_averaged         */
    unsigned averaged_positions;
    /* Counters (extra checks of the spectral filters), 0 otherwise: keys
     * added again r = 1..7 more times, how many of their estimates (never
     * below the truth, or the check fails) are above it; for MS also the
     * least the fp (its error ratio on absent keys, E_b) may be: E_b minus
     * 5 sd (NaN for the others). */
    uint64_t recounted_keys;
    uint64_t recounted_over;
    uint64_t recounted_below; /* a failure, except RM's residual risk     */
    double error_low;
    unsigned failed_checks;   /* each also described on the report stream */
};

typedef struct bench_plan {
    unsigned runs;
    uint64_t add_ops;         /* timed adds per run and call style         */
    size_t queries;
} bench_plan;

/* The plan ebb-bench uses at a window: runs, timed adds, queries
 * (suite.c). */
bench_plan bench_plan_for(uint64_t window, const bench_options *options);

/* Rows one subject yields at most: test-and-add, add and contains, each
 * one call at a time and batched (the BTBF: add, contains, infer and
 * infer_prior: 6). */
#define BENCH_MAX_ROWS 6

/* Measures one created subject: writes up to BENCH_MAX_ROWS rows
 * (test-and-add, test-and-add batch, add, add batch, contains, contains
 * batch; those the subject has) and returns how many. Failed checks are
 * described on `log`. */
int bench_measure(bench_subject *s, const bench_plan *plan,
                  bench_key_source *keys, bench_row *rows,
                  bench_verdict *verdict, FILE *log);

/* Fills the ceiling fields of rows[0..count-1]. */
void bench_apply_ceiling(bench_row *rows, int count,
                         const bench_ceiling *ceiling);

/* A key's hash folded to 64 bits, for bench_key_hash_ns. */
typedef uint64_t (*bench_key_hash)(const bench_key *key);

/* `hash` alone on `count` keys of the source: ns per key, median of runs
 * (the sum of the hashes is kept observable so the loop is not removed). */
double bench_key_hash_ns(bench_key_source *keys, size_t count, unsigned runs,
                         bench_key_hash hash);

/* ebb_hash alone on 16-byte keys: ns per key, median of runs. */
double bench_hash_ns(bench_key_source *keys, size_t count, unsigned runs);

/* "1e6" for a power of ten, else the digits of window. */
void bench_window_label(char *out, size_t size, uint64_t window);

/* ------------------------------------------------------------------------ */
/* Report (report.c)                                                        */
/* ------------------------------------------------------------------------ */

typedef struct bench_report {
    FILE *out;
    bool json;
    unsigned json_rows;      /* objects written so far (for the commas)    */
} bench_report;

void bench_report_begin(bench_report *r, const bench_options *options);
void bench_report_section(bench_report *r, uint64_t window, double fp,
                          const bench_plan *plan, double hash_ns);
void bench_report_subject(bench_report *r, const bench_subject *s,
                          const bench_ceiling *ceiling,
                          const bench_row *rows, int count,
                          const bench_verdict *verdict);
/* Free text for the tables only (ratios, targets, notes). */
void bench_report_text(bench_report *r, const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bench_report_end(bench_report *r);
/* One line "<issue> <what> <value><unit> (>= <target><unit>)  target met:
 * yes/no", or "not measured in this run  target met: no" when row is NULL
 * or value not finite (suite.c, the form of every target line). */
void bench_report_verdict(bench_report *r, const char *issue,
                          const char *what, const bench_row *row,
                          double value, double target, const char *unit);

/* ------------------------------------------------------------------------ */
/* The string-array index (strarray.c)                                      */
/* ------------------------------------------------------------------------ */

/* The rows and targets of issue 15 (lookup against a fixed-width read,
 * build, increment per size); returns the failed correctness checks. */
unsigned bench_strarray_run(bench_report *r, const bench_options *options);

#endif /* EBB_BENCH_INTERNAL_H */
