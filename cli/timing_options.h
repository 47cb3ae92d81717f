/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing_options.h: the options that size a Block Timing Bloom filter
 * (ebb/timing.h), which `ebb dedup --timing`, `ebb recent` and `ebb params
 * --timing` take with the same meaning, values and messages:
 *
 *   --timing, --window N (the shared sizing option, options.h), and one of
 *   --bits-per-item X [--k K]   the paper's rule (ebb_timing_choose_paper)
 *   --memory SIZE               the lowest analytic rate in SIZE bytes
 *   --fp P                      the least memory for the rate P
 *
 * Without --k the paper's rule is run for every k in 1..EBB_TIMING_MAX_K
 * and the shape of lowest analytic false-positive rate (ebb_timing_fp)
 * wins, the smallest k on a tie. Everything else (the shapes, the rates)
 * is the library's.
 *
 * `ebb dedup` and `ebb params` already have a --k and a --memory (the
 * stable filter's, and the APBF's --k): they parse them as before and hand
 * them over with cli_timing_take_k / cli_timing_take_memory once --timing
 * is known. `ebb recent` lists CLI_TIMING_SHAPE_LONG_OPTIONS.
 */
#ifndef EBB_CLI_TIMING_OPTIONS_H
#define EBB_CLI_TIMING_OPTIONS_H

#include "options.h"

#include <ebb/timing.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* getopt_long values of the timing options: above the stable options'
 * (stable_options.h) and every subcommand's own. */
enum {
    CLI_TIMING_OPTION_TIMING = 768,
    CLI_TIMING_OPTION_BITS_PER_ITEM,
    CLI_TIMING_OPTION_K,
    CLI_TIMING_OPTION_MEMORY,
    CLI_TIMING_OPTION_LAST
};

/* --timing and --bits-per-item, for `ebb dedup` and `ebb params`. */
#define CLI_TIMING_LONG_OPTIONS                                                \
    {"timing", no_argument, NULL, CLI_TIMING_OPTION_TIMING},                   \
        {"bits-per-item", required_argument, NULL,                             \
         CLI_TIMING_OPTION_BITS_PER_ITEM}

/* --bits-per-item, --k and --memory, for `ebb recent` (always a timing
 * filter). */
#define CLI_TIMING_SHAPE_LONG_OPTIONS                                          \
    {"bits-per-item", required_argument, NULL,                                 \
     CLI_TIMING_OPTION_BITS_PER_ITEM},                                         \
        {"k", required_argument, NULL, CLI_TIMING_OPTION_K},                   \
        {"memory", required_argument, NULL, CLI_TIMING_OPTION_MEMORY}

/* What the timing options said. A have_ flag tells whether the option was
 * given. */
typedef struct cli_timing_options {
    bool timing; /* --timing */
    double bits_per_item;
    bool have_bits_per_item;
    uint32_t k; /* valid after cli_timing_parse_k */
    bool have_k;
    size_t memory;
    bool have_memory;
    /* The texts as typed, for messages. */
    const char *bits_per_item_text, *k_text, *memory_text;
} cli_timing_options;

/* True for the getopt_long values above. */
bool cli_is_timing_option(int option);

/* Applies one timing option. --k only records its text. Returns
 * CLI_CONTINUE or the exit status. */
int cli_apply_timing_option(const char *program, int option,
                            const char *value, cli_timing_options *timing);

/* Hands over a --k (its text) or a --memory (parsed) that another
 * family's option table read. */
void cli_timing_take_k(cli_timing_options *timing, bool have_k,
                       const char *k_text);
void cli_timing_take_memory(cli_timing_options *timing, bool have_memory,
                            size_t memory, const char *memory_text);

/* Parses the recorded --k text (1..EBB_TIMING_MAX_K), then checks the
 * combinations: at most one of --bits-per-item, --memory and --fp (given
 * have_fp), and --k only with --bits-per-item. Returns CLI_CONTINUE or the
 * exit status (after one message). */
int cli_timing_check(const char *program, cli_timing_options *timing,
                     bool have_fp);

/* The first timing option given (--timing included), with its text ("" for
 * none), or false. */
bool cli_timing_option_given(const cli_timing_options *timing,
                             const char **option, const char **value);

/* The shape the options ask for at this window: --bits-per-item, else
 * --memory, else the rate fp (the option's or the subcommand's default).
 * Returns CLI_CONTINUE, or the usage error after one message naming the
 * options. */
int cli_timing_choose(const char *program, const cli_timing_options *timing,
                      const cli_sizing_options *sizing, uint64_t window,
                      ebb_timing_params *out);

/* A loaded filter's shape against the options: --window must be its
 * window; --bits-per-item (with --k), --memory or --fp, when given, must
 * make the chooser pick exactly its shape. Returns CLI_CONTINUE or the
 * usage error "OPTION VALUE disagrees with the state in 'PATH' (...)". */
int cli_timing_check_state(const char *program,
                           const cli_timing_options *timing,
                           const cli_sizing_options *sizing, const char *path,
                           const ebb_timing_params *loaded);

/* Prints the shape as "label: value" lines, each value starting at column
 * `width` (0: one space after the colon): window, timers, k, timer
 * bits, block, padding, t omega, sweep per insertion, memory bytes (the
 * given value: the timers' or the whole filter's), bits per item and the
 * analytic fp. Returns false (nothing printed) for an invalid shape. */
bool cli_timing_print_shape(FILE *out, const ebb_timing_params *params,
                            size_t memory_bytes, int width);

#endif /* EBB_CLI_TIMING_OPTIONS_H */
