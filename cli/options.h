/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.h: the options that size a filter, which `ebb dedup` and `ebb
 * params` both take with the same meaning, values and messages: --window,
 * --fp, --max-npws, --max-accesses, --blocked, --block-bits,
 * --block-hashes, --layout, --time-window and --rate. Also the getopt_long loop
 * every subcommand runs.
 *
 * A subcommand lists CLI_SIZING_LONG_OPTIONS in its option table, numbers
 * its own long-only options from CLI_OPTION_FIRST_OWN, and hands every
 * option it does not know itself to cli_apply_sizing_option.
 */
#ifndef EBB_CLI_OPTIONS_H
#define EBB_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ebb/apbf.h"

/* Returned by option handlers to mean "no error, go on"; every other
 * value is the exit status. */
#define CLI_CONTINUE (-1)

/* getopt_long values of the sizing options without a short form
 * character ('w', 'f' and 'n' are --window, --fp and --max-npws). */
enum {
    CLI_OPTION_BLOCKED = 256,
    CLI_OPTION_BLOCK_BITS,
    CLI_OPTION_BLOCK_HASHES,
    CLI_OPTION_MAX_ACCESSES,
    CLI_OPTION_TIME_WINDOW,
    CLI_OPTION_RATE,
    CLI_OPTION_LAYOUT,
    CLI_OPTION_FIRST_OWN /* a subcommand's own options start here */
};

/* The struct option entries of the sizing options. */
#define CLI_SIZING_LONG_OPTIONS                                                \
    {"window", required_argument, NULL, 'w'},                                  \
        {"fp", required_argument, NULL, 'f'},                                  \
        {"max-npws", required_argument, NULL, 'n'},                            \
        {"max-accesses", required_argument, NULL, CLI_OPTION_MAX_ACCESSES},    \
        {"blocked", no_argument, NULL, CLI_OPTION_BLOCKED},                    \
        {"block-bits", required_argument, NULL, CLI_OPTION_BLOCK_BITS},        \
        {"block-hashes", required_argument, NULL, CLI_OPTION_BLOCK_HASHES},    \
        {"time-window", required_argument, NULL, CLI_OPTION_TIME_WINDOW},      \
        {"rate", required_argument, NULL, CLI_OPTION_RATE},                    \
        {"layout", required_argument, NULL, CLI_OPTION_LAYOUT}

/* What the sizing options said. A have_ flag tells whether the option was
 * given; the value is the default the subcommand set until then. */
typedef struct cli_sizing_options {
    /* Count windows. */
    uint64_t window;
    bool have_window;
    double max_accesses;
    bool have_max_accesses;
    /* Blocked slices: --blocked, or implied by --block-bits/--block-hashes. */
    bool blocked, have_blocked, have_block_bits, have_block_hashes;
    uint32_t block_bits, block_hashes;
    /* --layout ring|sliced; without it ebb_apbf_preferred_layout decides
     * (cli_sizing_layout). */
    uint32_t layout;
    bool have_layout;

    /* Both kinds. */
    double fp;
    bool have_fp;
    double max_npws;
    bool have_max_npws;

    /* Time windows. */
    int64_t span_ns;
    bool have_time_window;
    double rate;
    bool have_rate;

    /* The texts as typed, for messages. */
    const char *window_text, *fp_text, *max_npws_text, *max_accesses_text;
    const char *block_bits_text, *block_hashes_text, *layout_text;
    const char *time_window_text, *rate_text;
} cli_sizing_options;

/* Prints "<program>: invalid <option> '<text>': <requirement>" and returns
 * CLI_EXIT_USAGE. */
int cli_invalid_value(const char *program, const char *option,
                      const char *text, const char *requirement);

/* Prints "<program>: <option>[ <value>] disagrees with the state in
 * '<path>' (<what>)" and returns CLI_EXIT_USAGE: an option given with
 * --state must describe the filter the state holds. */
int cli_disagrees(const char *program, const char *option, const char *value,
                  const char *path, const char *what);

/* A field number (--key-field N and kin): a positive integer below 2^32,
 * or the usage error naming option. Returns CLI_CONTINUE or the exit
 * status. */
int cli_parse_field_number(const char *program, const char *option,
                           const char *text, uint32_t *out);

/* A positive real number, or the usage error naming option. Returns
 * CLI_CONTINUE or the exit status. */
int cli_parse_positive_real(const char *program, const char *option,
                            const char *text, double *out);

/* Applies one sizing option (a getopt_long value of
 * CLI_SIZING_LONG_OPTIONS) with its argument. Returns CLI_CONTINUE or the
 * exit status; any other option is an internal error. */
int cli_apply_sizing_option(const char *program, int option,
                            const char *value, cli_sizing_options *sizing);

/* What the APBF chooser must meet for a count window of `window` items
 * with the given blocks (block_bits 0: plain slices; block_hashes 0: the
 * chooser picks b): the options' bounds, and for a blocked shape without
 * them EBB_APBF_BLOCKED_MAX_NPWS and EBB_APBF_BLOCKED_MAX_ACCESSES. Shared
 * by `ebb dedup` and `ebb params`. */
ebb_apbf_goal cli_sizing_goal(const cli_sizing_options *sizing,
                              uint64_t window, uint32_t block_bits,
                              uint32_t block_hashes);

/* The first of --blocked, --block-bits, --block-hashes, --max-accesses
 * and --layout given (options only a count window takes), or NULL. */
const char *cli_blocked_option_given(const cli_sizing_options *sizing);

/* The layout a new count-window filter gets: --layout if given; else the
 * ring for blocked slices (the bit-sliced layout holds plain ones only)
 * and for shapes bounded by --max-npws or --max-accesses (bounds on a
 * ring's walk), ebb_apbf_preferred_layout against the least-memory ring
 * for the rest. An explicit --k/--l shape is a ring unless --layout is
 * given (cli_explicit_layout). */
uint32_t cli_sizing_layout(const cli_sizing_options *sizing, uint64_t window,
                           bool blocked);

uint32_t cli_explicit_layout(const cli_sizing_options *sizing);

/* "ring" or "sliced". */
const char *cli_layout_name(uint32_t layout);

/* --layout sliced with a blocked option: the usage error naming the
 * blocked option (returns CLI_EXIT_USAGE), or CLI_CONTINUE. */
int cli_check_layout(const char *program, const cli_sizing_options *sizing);

/* How a subcommand applies one of its options: returns CLI_CONTINUE or the
 * exit status. */
typedef int (*cli_option_handler)(int option, const char *value,
                                  void *context);

/* Runs getopt_long over argv with the optstring ":h" ('h' must be in
 * options): --help prints the usage to stdout; getopt errors are
 * reported; every other option goes to apply. Returns CLI_CONTINUE with
 * optind at the first operand, or the exit status. */
int cli_parse_options(const char *program, int argc, char **argv,
                      const struct option *options,
                      void (*print_usage)(FILE *out),
                      cli_option_handler apply, void *context);

#endif /* EBB_CLI_OPTIONS_H */
