/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dedup.h: what the parts of `ebb dedup` share.
 *
 *   dedup.c         the command line and the run
 *   dedup_filter.c  the filter: created, loaded from --state and checked
 *                   against the options, saved, and its --stats
 *   dedup_stable.c  the stable filter (--stable): created, checked
 *                   against a state, its --stats
 *   dedup_timing.c  the Block Timing Bloom filter (--timing): created,
 *                   checked against a state, its --stats
 *   dedup_stream.c  reading lines, their keys, times and importances,
 *                   answering them
 *
 * Four kinds of filter answer "did this line occur recently?": an APBF
 * for a window of N lines (--window, the default), a Block Timing Bloom
 * filter for the same window (--timing), a TLBF for a window of time
 * (--time-window), and a stable filter in fixed memory with no window at
 * all (--stable), which forgets at random.
 */
#ifndef EBB_CLI_DEDUP_H
#define EBB_CLI_DEDUP_H

#include "options.h"
#include "stable_options.h"
#include "timestamp.h"
#include "timing_options.h"

#include <ebb/ebb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEDUP_PROGRAM "ebb dedup"

/* Returned by the steps of a run to mean "no error, go on"; every other
 * value is the exit status. */
#define DEDUP_CONTINUE CLI_CONTINUE

#define DEDUP_DEFAULT_WINDOW UINT64_C(1000000)
#define DEDUP_DEFAULT_FP 0.01
#define DEDUP_DEFAULT_RATE 1000.0
#define DEDUP_DEFAULT_MAX_MEMORY ((size_t)1 << 30)
/* The hash seed of filters dedup creates: the ASCII bytes of "ebbdedup".
 * Fixed so that runs are reproducible; a loaded state brings its own. */
#define DEDUP_SEED UINT64_C(0x6562626465647570)

typedef struct dedup_options {
    /* --window, --fp, --max-npws, --max-accesses, the blocked options,
     * --time-window and --rate. Bounds of 0 (max_npws, max_accesses):
     * none; block_hashes 0: the chooser picks b; rate: expected lines per
     * second. */
    cli_sizing_options sizing;

    /* Time windows. */
    size_t max_memory;
    bool have_max_memory;
    ebb_tlbf_policy policy;
    bool have_policy;
    uint32_t time_field; /* 0: the arrival clock */
    cli_time_format time_format;
    bool have_time_format;

    /* Stable filters. */
    cli_stable_options stable;
    uint32_t importance_field; /* 0: none (a plain stable filter) */
    const char *importance_field_text;

    /* Timing filters: --timing, --bits-per-item, and --k and --memory
     * once handed over from the stable options (dedup_timing_requested). */
    cli_timing_options timing;

    /* Lines. */
    uint32_t key_field; /* 0: the key is the line (less its time or
                           importance field) */
    bool skip_bad;
    bool invert;
    bool stats;
    const char *state_path; /* NULL: no state */

    /* The texts as typed, for messages. */
    const char *max_memory_text, *policy_text;
    const char *time_field_text, *time_format_text;

    char **inputs; /* the FILE operands; none means stdin */
    int input_count;
} dedup_options;

typedef enum dedup_kind {
    DEDUP_COUNT_WINDOW,
    DEDUP_TIME_WINDOW,
    DEDUP_STABLE,
    DEDUP_TIMING
} dedup_kind;

typedef struct dedup_filter {
    dedup_kind kind;
    ebb_apbf *apbf; /* DEDUP_COUNT_WINDOW */
    ebb_tlbf *tlbf; /* DEDUP_TIME_WINDOW  */
    ebb_stable *stable; /* DEDUP_STABLE   */
    ebb_timing *timing; /* DEDUP_TIMING   */
    bool loaded;    /* from --state, not created by this run */
    uint64_t evicted_before; /* TLBF slices evicted before this run */
    bool evicts;             /* TLBF with the EVICT policy */
    uint64_t clamped_before; /* stable: importances clamped before this run */
    /* Stable, importance-aware: how many lines of this run set each level
     * 0..max_level (0 unused), for the analysis --stats prints. */
    uint64_t *level_counts;
    uint32_t max_level;
} dedup_filter;

/* What this run did, for --stats. */
typedef struct dedup_counts {
    uint64_t lines_read;
    uint64_t lines_written;
    uint64_t duplicates;    /* lines answered "seen" (printed or not)    */
    uint64_t bad_lines;     /* passed through by --skip-bad              */
    uint64_t clamped;       /* times earlier than the latest remembered  */
    uint64_t refused;       /* not remembered: the memory limit (refuse);
                               stable: an importance out of range       */
} dedup_counts;

/* dedup_filter.c. Each returns DEDUP_CONTINUE or the exit status. */
int dedup_open_filter(const dedup_options *opts, dedup_filter *filter);
int dedup_save_filter(const char *path, const dedup_filter *filter);
void dedup_close_filter(dedup_filter *filter);
void dedup_print_stats(const dedup_options *opts, const dedup_filter *filter,
                       const dedup_counts *counts);

/* dedup_filter.c: "OPTION VALUE disagrees with the state in 'PATH'
 * (WHAT)", returns CLI_EXIT_USAGE. */
int dedup_disagrees(const char *option, const char *value, const char *path,
                    const char *what);

/* dedup_stable.c. Each returns DEDUP_CONTINUE or the exit status. */
int dedup_create_stable(const dedup_options *opts, dedup_filter *filter);
/* A loaded stable state against the options. */
int dedup_check_stable_state(const dedup_options *opts, const char *path,
                             dedup_filter *filter);
/* The options only a stable filter takes (--stable, the stable options,
 * --importance-field): the first given, or false. */
bool dedup_stable_option_given(const dedup_options *opts, const char **option,
                               const char **value);
/* The options of windows (count or time), which a stable filter never
 * takes: the first given, with its text ("" for none), or false. */
bool dedup_window_option_given(const dedup_options *opts, const char **option,
                               const char **value);
/* After the filter is open: the counters --stats reports per run. */
int dedup_prepare_stable(const dedup_options *opts, dedup_filter *filter);
void dedup_print_stable_stats(const dedup_filter *filter,
                              const dedup_counts *counts);

/* dedup_timing.c. Each int function returns DEDUP_CONTINUE or the exit
 * status. */
/* --timing, or --bits-per-item, which implies it. */
bool dedup_timing_requested(const dedup_options *opts);
/* The options a timing filter never takes (time windows, stable filters,
 * blocked slices, NPWS and access bounds): the first given, with its text
 * ("" for none), or false. */
bool dedup_non_timing_option_given(const dedup_options *opts,
                                   const char **option, const char **value);
int dedup_create_timing(const dedup_options *opts, dedup_filter *filter);
int dedup_check_timing_state(const dedup_options *opts, const char *path,
                             dedup_filter *filter);
void dedup_print_timing_stats(const dedup_options *opts,
                              const dedup_filter *filter,
                              const dedup_counts *counts);

/* dedup_stream.c: answers every line of the inputs. */
int dedup_inputs(const dedup_options *opts, dedup_filter *filter,
                 dedup_counts *counts);

#endif /* EBB_CLI_DEDUP_H */
