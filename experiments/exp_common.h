/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_common.h: what every experiment of `make experiments` shares.
 *
 * The experiments reproduce the tables and figures of Shtul, Baquero and
 * Almeida, "Age-Partitioned Bloom Filters" (2020) with libebb, and write
 * three kinds of output:
 *   - CSV files with every number (docs/results/apbf/<name>.csv),
 *   - a Markdown fragment per table or figure, which run.sh splices into
 *     docs/results/apbf.md,
 *   - a checks file: one line per verdict, read by run.sh to decide its
 *     exit status (see exp_check_kind).
 *
 * Everything is deterministic given the seed on the command line: keys are
 * built from counters, filters are seeded from the run seed with splitmix64,
 * random choices come from xoshiro256**.
 */
#ifndef EBB_EXPERIMENTS_COMMON_H
#define EBB_EXPERIMENTS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ebb/ebb.h"

#if defined(__GNUC__) || defined(__clang__)
#define EXP_PRINTF(fmt_index, first_arg)                                       \
    __attribute__((format(printf, fmt_index, first_arg)))
#else
#define EXP_PRINTF(fmt_index, first_arg)
#endif

#define EXP_MAX_SLICES (EBB_APBF_MAX_K + EBB_APBF_MAX_L)

/* ------------------------------------------------------------------------ */
/* Command line and output files                                            */
/* ------------------------------------------------------------------------ */

/* Every experiment is run as: exp_<name> <csv-dir> <work-dir> <seed>. */
typedef struct exp_context {
    const char *name;     /* e.g. "table2"                               */
    const char *csv_dir;  /* committed outputs: CSV (and PNG, by run.sh) */
    const char *work_dir; /* fragments and checks, in the build tree     */
    uint64_t seed;
    FILE *md;             /* <work-dir>/<name>.md                        */
    FILE *checks;         /* <work-dir>/<name>.checks                    */
    unsigned failed_fatal;
    unsigned failed_stat;
    unsigned passed;
} exp_context;

/* Parses the command line and opens the fragment and checks files; exits
 * with status 2 and a usage line on bad arguments or I/O errors. */
void exp_begin(exp_context *ctx, const char *name, int argc, char **argv);

/* Opens a second Markdown fragment, <work-dir>/<name>.md, for an experiment
 * that fills two sections of the page (exits on failure). */
FILE *exp_open_fragment(const exp_context *ctx, const char *name);

/* Opens <csv-dir>/<file> for writing (exits on failure). */
FILE *exp_open_csv(const exp_context *ctx, const char *file);

/* Closes a file, exiting with status 2 if anything failed to be written. */
void exp_close(FILE *file, const char *what);

/* Closes the outputs and returns the process exit status: 1 when a fatal
 * check failed, else 0 (statistical failures are reported, not fatal). */
int exp_end(exp_context *ctx);

/* Exits with status 2 after printing the message, for API errors. */
void exp_die(const char *fmt, ...) EXP_PRINTF(1, 2);

/* Exits unless st is EBB_OK. */
void exp_require(ebb_status st, const char *what);

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

/* Table 2 of the APBF paper (Shtul, Baquero, Almeida 2020) as printed: for
 * each aimed fp, five (k, l), the actual fp with 6 decimals, the rest with
 * 2. exp_table2 reproduces it; the TLBF's bits-per-element experiment runs
 * its (k, l), as the TLBF paper's Table 2 did. */
typedef struct exp_apbf_table2_row {
    double aimed;
    unsigned k, l;
    double fp, eff, window, fp_reads, false_reads, npws;
} exp_apbf_table2_row;

#define EXP_APBF_TABLE2_ROWS 25
extern const exp_apbf_table2_row EXP_APBF_TABLE2[EXP_APBF_TABLE2_ROWS];

typedef enum exp_check_kind {
    /* A number computed here must agree with the paper's printed one.
     * Fatal when it does not. */
    EXP_CHECK_PAPER,
    /* A documented discrepancy with the paper: the number must still differ
     * (if it suddenly agreed, the documentation would be wrong). Fatal. */
    EXP_CHECK_DISCREPANCY,
    /* A guarantee of the structure (no false negatives, ours < SWAMP).
     * Fatal. */
    EXP_CHECK_GUARANTEE,
    /* A measured value against its prediction (3 sd, 5%). Reported. */
    EXP_CHECK_STAT
} exp_check_kind;

/* Records one verdict as a line "PASS|FAIL <kind> <name>: <text>" and
 * returns ok. */
bool exp_check(exp_context *ctx, exp_check_kind kind, bool ok,
               const char *fmt, ...) EXP_PRINTF(4, 5);

/* True when ours agrees with a number the paper printed with `decimals`
 * digits after the point: within one unit of the last printed digit (the
 * paper sometimes rounds and sometimes truncates). */
bool exp_agrees(double ours, double printed, int decimals);

/* ------------------------------------------------------------------------ */
/* Randomness and keys                                                      */
/* ------------------------------------------------------------------------ */

/* splitmix64: advances *state and returns the next output. Used to seed
 * things; a bijection of the counter, so distinct inputs never collide. */
uint64_t exp_splitmix64(uint64_t *state);

/* A seed derived from the run seed and up to three labels. */
uint64_t exp_derive_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/* xoshiro256** generator. */
typedef struct exp_rng {
    uint64_t s[4];
} exp_rng;

void exp_rng_seed(exp_rng *rng, uint64_t seed);
uint64_t exp_rng_next(exp_rng *rng);
double exp_rng_unit(exp_rng *rng);                /* uniform in [0, 1) */
uint64_t exp_rng_below(exp_rng *rng, uint64_t n); /* uniform in [0, n) */

/* Keys are 16 bytes: a stream number and an index, so keys of different
 * streams, or different indices of one stream, are distinct by
 * construction. Inserted and probed keys always come from different
 * streams: a probe is never a key that was inserted. */
typedef enum exp_stream_tag {
    EXP_STREAM_INSERT = 1,
    EXP_STREAM_PROBE = 2
} exp_stream_tag;

uint64_t exp_stream(exp_stream_tag tag, uint32_t experiment, uint32_t unit);
ebb_hash128 exp_key_hash(const ebb_apbf *filter, uint64_t stream,
                         uint64_t index);
/* The same key hashed with a bare seed (for the classic Bloom filter). */
ebb_hash128 exp_key_hash_seeded(uint64_t seed, uint64_t stream,
                                uint64_t index);

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

/* Binomial z of observing hits in trials when each succeeds with p. */
double exp_binomial_z(uint64_t hits, uint64_t trials, double p);
double exp_binomial_sd(uint64_t trials, double p); /* of the rate */

/* |measured - predicted| / predicted. */
double exp_relative_error(double measured, double predicted);

/* ------------------------------------------------------------------------ */
/* APBF helpers                                                             */
/* ------------------------------------------------------------------------ */

/* Creates a filter or exits. */
ebb_apbf *exp_create(const ebb_apbf_params *params, uint64_t seed);

/* Adds g * (k + l + 3) distinct keys of `stream` (indices from 0), which
 * leaves the filter at its worst moment: k + l + 2 shifts done (every slice
 * cleared and refilled at least once) and the current generation full, the
 * next insertion would shift. Exits if the stats say otherwise. Returns the
 * number of keys added. */
uint64_t exp_fill_to_worst_moment(ebb_apbf *filter, uint64_t stream);

/* Measurements at the worst moment of `filters` filters of one shape: the
 * fresh keys probed, the false positives, and the slice (block) reads of
 * Algorithm 1 for the window items, the false positives and the queries
 * that answered false. */
typedef struct exp_worst {
    uint64_t probes, hits;
    uint64_t false_reads;          /* summed over probes answering false */
    uint64_t fp_reads;             /* summed over the false positives    */
    uint64_t window_items, window_reads, window_missed;
} exp_worst;

/* Splits `probes` fresh keys evenly over the filters; every item of the
 * last l generations of every filter is queried too. experiment and row
 * name the key streams and seeds. */
void exp_measure_worst(const ebb_apbf_params *params, unsigned filters,
                       uint64_t probes, uint64_t seed, uint32_t experiment,
                       uint32_t row, exp_worst *out);

/* What the measurements mean: the false-positive rate and the mean reads
 * of window items, of false positives (NaN without any) and of queries
 * answering false. */
double exp_worst_rate(const exp_worst *w);
double exp_worst_window_reads(const exp_worst *w);
double exp_worst_fp_reads(const exp_worst *w);
double exp_worst_false_reads(const exp_worst *w);

/* Probes for about target_hits false positives at rate fp, within
 * [least, most]. */
uint64_t exp_probes_for(double fp, double target_hits, double least,
                        double most);

/* A measured mean of reads within 5% of the prediction (the bar). */
bool exp_reads_close(double measured, double predicted);

/* All three measured means of w within 5% of the predicted ones. */
bool exp_worst_reads_close(const exp_worst *w, const ebb_apbf_accesses *predicted);

/* The three access cells of a Table 2 or 3 markdown row (window items,
 * false positives, false answers), each "paper / model / exact shape /
 * measured", followed by the within-5% mark. paper holds the paper's three
 * values in that order. */
void exp_md_reads_cells(FILE *md, const double paper[3],
                        const ebb_apbf_accesses *model,
                        const ebb_apbf_accesses *shape, const exp_worst *w);

/* "yes", or a bold "no" that stands out in a table. */
const char *exp_mark(bool ok);

/* ------------------------------------------------------------------------ */
/* Generation tracker: the exact model of a filter under any key stream     */
/* ------------------------------------------------------------------------ */

/*
 * Mirrors the filter's generations on the side: the key ids added in each of
 * the last k + l generations. Logical slice i holds the keys of generations
 * c - i .. min(c, c - i + k - 1) (c the current one, those that exist), so
 * its expected fill ratio, with ideal hashing, is 1 - (1 - 1/m)^n_i with n_i
 * the number of DISTINCT keys among them (a repeated key sets the same bit).
 * The slices are filled by independent hash functions, so the expected
 * false-positive rate of the filter in this state is exactly
 * ebb_apbf_fp_ratios on those ratios: the model the figures are drawn with,
 * for distinct keys and for duplicates alike.
 */
typedef struct exp_tracker {
    uint32_t k, l, slices;
    uint64_t g, m;
    uint64_t generations;   /* shifts so far (the current generation c) */
    uint64_t in_generation; /* adds into the current generation          */
    uint64_t *ids;          /* slices rings of g ids                     */
    uint64_t *count;        /* ids held per ring slot                    */
    uint64_t *scratch;      /* k * g ids for counting distinct keys      */
} exp_tracker;

void exp_tracker_init(exp_tracker *t, const ebb_apbf_params *params);
void exp_tracker_free(exp_tracker *t);
/* Records an add, shifting exactly when the library does (the current
 * generation holds g items and one more arrives). */
void exp_tracker_add(exp_tracker *t, uint64_t id);
/* Expected false-positive rate of the filter in the tracked state. */
double exp_tracker_model_fp(exp_tracker *t);
/* Exits unless the library's counters agree with the tracker's. */
void exp_tracker_verify(const exp_tracker *t, const ebb_apbf *filter);

/* Distinct values among n (sorts the array). */
uint64_t exp_count_distinct(uint64_t *values, uint64_t n);

#endif
