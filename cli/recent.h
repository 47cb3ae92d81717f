/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recent.h: what the parts of `ebb recent` share.
 *
 *   recent.c         the command line, the model of the stream, the filter
 *                    (created or loaded from --state), --stats, the run
 *   recent_stream.c  reading lines, their key, costs and prior, answering
 *                    them (query, then insert) and writing the answers
 *
 * `ebb recent` asks a Block Timing Bloom filter (ebb/timing.h) about
 * every line: the probability that its key is among the last N lines, its
 * expected and most likely age, the decision of least expected penalty for
 * the line's costs, and the standard yes or no; then it inserts the key.
 */
#ifndef EBB_CLI_RECENT_H
#define EBB_CLI_RECENT_H

#include "options.h"
#include "timing_options.h"

#include <ebb/ebb.h>
#include <ebb/timing.h>

#include <stdbool.h>
#include <stdint.h>

#define RECENT_PROGRAM "ebb recent"

#define RECENT_DEFAULT_WINDOW UINT64_C(1000000)
#define RECENT_DEFAULT_FP 0.01
#define RECENT_DEFAULT_COST 1.0
/* The hash seed of new filters: `ebb dedup`'s, so that `ebb dedup
 * --timing` and the standard answers of `ebb recent` agree line by line on
 * the same input and options. A loaded state brings its own. */
#define RECENT_SEED UINT64_C(0x6562626465647570)

typedef struct recent_options {
    cli_sizing_options sizing; /* --window, --fp */
    cli_timing_options timing; /* --bits-per-item, --k, --memory */

    /* The model: --universe, --zipf or --distinct-table (have_model). */
    ebb_timing_model model;
    bool have_model;
    const char *model_option, *model_text;

    /* Per query: a field of the line, else the option, else the default
     * (costs 1; the prior: the model's). Field numbers 0: none. */
    double prior, cost_fp, cost_fn;
    bool have_prior, have_cost_fp, have_cost_fn;
    uint32_t key_field, prior_field, cost_fp_field, cost_fn_field;
    const char *prior_text, *cost_fp_text, *cost_fn_text;

    bool skip_bad, stats, json, header;
    const char *state_path; /* NULL: no state */

    char **inputs; /* the FILE operands; none means stdin */
    int input_count;
} recent_options;

/* What this run did, for --stats. */
typedef struct recent_counts {
    uint64_t lines_read;
    uint64_t answered;  /* lines written (one answer each)       */
    uint64_t bad_lines; /* skipped by --skip-bad                 */
    uint64_t standard;  /* standard answer yes                   */
    uint64_t decided;   /* least-penalty decision yes (positive) */
} recent_counts;

/* recent_stream.c: answers every line of the inputs (and the --header
 * first). Returns CLI_CONTINUE or the exit status. */
int recent_inputs(const recent_options *opts, ebb_timing *filter,
                  recent_counts *counts);

#endif /* EBB_CLI_RECENT_H */
