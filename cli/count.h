/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * count.h: what the parts of `ebb count` share.
 *
 *   count.c         the command line, the filter (created, loaded from
 *                   --state, merged with --merge), --stats, the run
 *   count_stream.c  reading lines, their key and operation, the three
 *                   outputs (every distinct line, --threshold, --query)
 *   count_table.c   the exact set of distinct keys (count_table.h)
 *
 * `ebb count` is an approximate `sort | uniq -c`: the counts live in a
 * Spectral Bloom filter (ebb/spectral.h) of fixed memory; an estimate is
 * never below the true count for MS and RM (insert-only streams, or
 * deletions of what was inserted), and MI's on insert-only streams.
 */
#ifndef EBB_CLI_COUNT_H
#define EBB_CLI_COUNT_H

#include "count_table.h"
#include "options.h"
#include "spectral_options.h"

#include <ebb/ebb.h>
#include <ebb/spectral.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COUNT_PROGRAM "ebb count"

#define COUNT_SEED CLI_SPECTRAL_SEED
/* --delete-field: the field's value that removes, and the one that adds. */
#define COUNT_REMOVE_MARK "-"
#define COUNT_ADD_MARK "+"

typedef enum count_output {
    COUNT_OUTPUT_ALL,       /* every distinct line at the end          */
    COUNT_OUTPUT_THRESHOLD, /* each line once, when it reaches T       */
    COUNT_OUTPUT_QUERY      /* the estimates of the lines of --query   */
} count_output;

typedef struct count_options {
    cli_spectral_options spectral; /* --method, --memory, ... */

    /* Lines. */
    uint32_t key_field;    /* 0: the key is the line                */
    uint32_t delete_field; /* 0: every line adds                     */
    uint64_t window;       /* 0: no window                           */
    bool skip_bad;

    /* Output. */
    count_output output;
    uint64_t threshold;
    const char *query_path;
    bool json, stats, exact_check;

    const char *state_path; /* NULL: no state */
    const char **merge_paths;
    size_t merge_count;

    char **inputs; /* the FILE operands; none means stdin */
    int input_count;
} count_options;

/* What this run did, for --stats. */
typedef struct count_counts {
    uint64_t lines_read;
    uint64_t added;     /* lines that added an occurrence            */
    uint64_t removed;   /* occurrences removed (--delete-field, --window) */
    uint64_t refused;   /* removals the filter refused (underflow)   */
    uint64_t bad_lines; /* skipped by --skip-bad                     */
    uint64_t reported;  /* --threshold: lines written                */
    uint64_t queried;   /* --query: lines answered                   */
    /* Removals refused (also counted in refused) because the table knew
     * the key absent: never seen, or (--exact-check) its exact count 0. */
    uint64_t absent_removals;
} count_counts;

/* Everything a run works on. */
typedef struct count_run {
    const count_options *opts;
    ebb_spectral *filter;
    ebb_spectral_watch *watch; /* --threshold                         */
    count_table table;         /* default output or --exact-check     */
    bool have_table;
    ebb_hash128 *ring;         /* --window: the last N hashes         */
    uint64_t ring_next, ring_used;
    /* count_stream.c: the lines read but not yet applied, when nothing
     * reads the filter before the end (NULL: each line as it comes). */
    struct count_batch *batch;
    count_counts counts;
} count_run;

/* count_stream.c: reads the inputs into the filter, writing the
 * --threshold reports as they come. Returns CLI_CONTINUE or the exit
 * status. */
int count_inputs(count_run *run);

/* count_stream.c: writes the answers of the end of the run (every
 * distinct line, or those of --query). Returns CLI_CONTINUE or the exit
 * status. */
int count_answer(count_run *run);

/* count_stream.c: writes one answer line ("4294967295+" when saturated at
 * the counter maximum, for the TSV). */
void count_put_estimate(const count_run *run, uint64_t estimate,
                        const char *key, size_t length);

#endif /* EBB_CLI_COUNT_H */
