/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dedup.c: `ebb dedup`, drop lines that occurred recently: among the
 * previous N lines (an APBF, --window, or a Block Timing Bloom filter,
 * --timing), within the previous DUR of time (a TLBF, --time-window), or,
 * in fixed memory without a window, as far back as a stable filter
 * remembers (--stable).
 *
 * This file reads the command line and runs the steps: open the filter
 * (dedup_filter.c: created, or loaded from --state), answer every line
 * (dedup_stream.c), print --stats, save the state.
 *
 * --state FILE keeps the filter between runs. It is loaded before the first
 * line and saved after the last one, atomically (temporary file, fsync,
 * rename, fsync of the directory), and only when the whole run succeeded:
 * a run that fails (unreadable input, a bad line, a write error) leaves
 * FILE as it was, so repeating the run over the same input gives the same
 * output.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "dedup.h"
#include "lines.h"
#include "subcommands.h"
#include "units.h"

#include <ebb/ebb.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* getopt_long values of dedup's own options without a short form
 * character. */
enum {
    OPTION_MAX_MEMORY = CLI_OPTION_FIRST_OWN,
    OPTION_POLICY,
    OPTION_TIME_FIELD,
    OPTION_TIME_FORMAT,
    OPTION_KEY_FIELD,
    OPTION_SKIP_BAD,
    OPTION_IMPORTANCE_FIELD
};

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

/* The stable filter's part of --help (a string literal of its own: C
 * compilers need only take 4095 characters in one). */
static void print_stable_usage(FILE *out)
{
    fprintf(out,
            "Stable filters (no window: fixed memory, forgets at random; a\n"
            "repeat long after its last occurrence may be written again, and\n"
            "'ebb params --stable' gives the odds):\n"
            "  --stable       a stable Bloom filter instead of a window\n"
            "  --memory SIZE  bytes of cells, with k, M, G or T for powers of\n"
            "                 1024 (default 16M)\n"
            "  --fp P         the stable false-positive rate: the most a line\n"
            "                 never seen is dropped, once the filter has\n"
            "                 settled (default %g)\n"
            "  --cell-bits d  bits per cell, 1..%u (default 3)\n"
            "  --cells M      an explicit shape instead of --memory and --fp,\n"
            "                 with --cell-bits, --k and --p: M cells (1..2^40)\n"
            "  --k K          cells per key (1..%u)\n"
            "  --p P          cells decremented per line (1..M)\n"
            "  --draw D       how the P cells are drawn: consecutive (default,\n"
            "                 from a random start) or independent\n"
            "  --importance-field N\n"
            "                 the line's importance is its N-th field, an\n"
            "                 integer or decimal number; important lines are\n"
            "                 forgotten last. The key is the line without that\n"
            "                 field\n"
            "  --importance-range LOW:HIGH\n"
            "                 the importances that matter (required for a new\n"
            "                 filter with --importance-field); LOW sets the\n"
            "                 lowest cell level, HIGH the highest\n"
            "  --importance-classes C\n"
            "                 levels (default: one class per cell level) or 2\n"
            "                 (important or not)\n"
            "  --important-above X\n"
            "                 with --importance-classes 2: lines of importance\n"
            "                 above X are important (default: the middle of\n"
            "                 the range)\n"
            "  --decrement D  uniform (default) or weighted: cells of low\n"
            "                 levels are decremented first\n"
            "  --importance-out-of-range A\n"
            "                 clamp (default: into the range, counted) or\n"
            "                 refuse (the line is bad)\n"
            "\n",
            DEDUP_DEFAULT_FP, EBB_STABLE_MAX_CELL_BITS, EBB_STABLE_MAX_K);
}

/* The timing filter's part of --help. */
static void print_timing_usage(FILE *out)
{
    fprintf(out,
            "Timing filters (the same count window of N lines, as a Block\n"
            "Timing Bloom filter: timers instead of generations; 'ebb params\n"
            "--timing' shows the shape, 'ebb recent' the probabilities):\n"
            "  --timing       a Block Timing Bloom filter for --window N\n"
            "  --bits-per-item X\n"
            "                 the paper's sizing: X bits per window line, timers\n"
            "                 of max(k, 3) bits; implies --timing\n"
            "  --k K          with --bits-per-item: timers per line (1..%u;\n"
            "                 default: the k of lowest false-positive rate)\n"
            "  --memory SIZE  with --timing: the lowest false-positive rate in\n"
            "                 SIZE bytes of timers\n"
            "  --fp P         with --timing: the least memory for the rate P\n"
            "                 (the default, %g, when none of the three is given)\n"
            "\n",
            EBB_TIMING_MAX_K, DEDUP_DEFAULT_FP);
}

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: ebb dedup [--window N] [--fp P] [--max-npws F] [--max-accesses A]\n"
            "                 [--blocked] [--block-bits B] [--block-hashes b]\n"
            "                 [--layout ring|sliced] [LINE OPTIONS] [FILE...]\n"
            "       ebb dedup --time-window DUR [--rate R] [--max-memory BYTES]\n"
            "                 [--policy refuse|evict] [--fp P] [--max-npws F]\n"
            "                 [--time-field N] [--time-format FORMAT]\n"
            "                 [LINE OPTIONS] [FILE...]\n"
            "       ebb dedup --timing [--window N]\n"
            "                 [--bits-per-item X [--k K] | --memory SIZE | --fp P]\n"
            "                 [LINE OPTIONS] [FILE...]\n"
            "       ebb dedup --stable [--memory SIZE] [--fp P] [--cell-bits d]\n"
            "                 [--cells M --cell-bits d --k K --p P]\n"
            "                 [--draw independent|consecutive]\n"
            "                 [--importance-field N --importance-range LOW:HIGH\n"
            "                  [--importance-classes 2 [--important-above X]]\n"
            "                  [--importance-classes levels]\n"
            "                  [--decrement uniform|weighted]\n"
            "                  [--importance-out-of-range clamp|refuse]]\n"
            "                 [LINE OPTIONS] [FILE...]\n"
            "  LINE OPTIONS: [--key-field N] [--skip-bad] [--invert] [--stats]\n"
            "                [--state FILE]\n"
            "\n"
            "Writes each line of the FILEs (standard input when none is given,\n"
            "or for '-') unless it occurred among the previous N input lines\n"
            "or, with --time-window, within the previous DUR, or, with\n"
            "--stable, as far back as a stable filter remembers. Every input line\n"
            "counts as an occurrence, printed or not. Lines are bytes: '\\r' and\n"
            "NUL are part of the line, and a last line without '\\n' is written\n"
            "back without one.\n"
            "\n"
            "A line repeated within the window is always dropped. A line not\n"
            "seen before is dropped by mistake with probability at most P; one\n"
            "last seen a little longer ago may still be dropped (the filter's\n"
            "slack, see 'ebb params').\n"
            "\n"
            "Count windows:\n"
            "  --window N     lines to remember (positive integer, 1e6 notation\n"
            "                 accepted; default %" PRIu64 ")\n"
            "  --fp P         false-positive rate, 0 < P < 1 (default %g)\n"
            "  --max-npws F   bound on the peak NPWS, > 0 (default: none; %g\n"
            "                 for blocked filters)\n"
            "  --max-accesses A\n"
            "                 bound on the expected slice (block) reads of a\n"
            "                 query answering false, > 0 (default: none; %g for\n"
            "                 blocked filters); a ring unless --layout sliced,\n"
            "                 where it bounds k\n"
            "  --blocked      blocked slices (APBBF): a few cache-line reads per\n"
            "                 line instead of one per slice, a little more memory\n"
            "  --block-bits B  bits per block, 64 or 512 (default %u);\n"
            "                 implies --blocked\n"
            "  --block-hashes b\n"
            "                 bits set per block, 1, 2, 4 or 8 (default: the\n"
            "                 chooser picks); implies --blocked\n"
            "  --layout L     how the slices are stored: ring (k + l bit arrays)\n"
            "                 or sliced (m cells of 16 to 128 bits, one bit per\n"
            "                 slice: a query loads k cells; plain slices,\n"
            "                 k + l + 1 <= 128). Default: sliced where it costs\n"
            "                 at most 10%% more memory than the ring (10^6 at 1%%:\n"
            "                 7%%), else the ring; the ring with --blocked,\n"
            "                 --max-npws or --max-accesses\n"
            "\n"
            "Time windows:\n"
            "  --time-window DUR\n"
            "                 remember lines for DUR: a number and a unit, ns,\n"
            "                 us, ms, s, m, h or d (500ms, 30s, 1.5h, 7d)\n"
            "  --rate R       expected lines per second, sizes the first slices;\n"
            "                 later ones follow the observed rate (default %g)\n"
            "  --max-memory BYTES\n"
            "                 most memory the filter may hold, with k, M, G or T\n"
            "                 for powers of 1024 (default 1G)\n"
            "  --policy P     at the memory limit: refuse (default; the line is\n"
            "                 not remembered) or evict (the oldest slices go)\n"
            "  --fp P, --max-npws F  as for count windows\n"
            "  --time-field N  the line's time is its N-th field (fields are\n"
            "                 separated by spaces and tabs), not the arrival\n"
            "                 clock; the key is the line without that field\n"
            "  --time-format FORMAT\n"
            "                 epoch (seconds, default), epoch-ms or iso8601\n"
            "\n",
            DEDUP_DEFAULT_WINDOW, DEDUP_DEFAULT_FP,
            EBB_APBF_BLOCKED_MAX_NPWS, EBB_APBF_BLOCKED_MAX_ACCESSES,
            CLI_DEFAULT_BLOCK_BITS, DEDUP_DEFAULT_RATE);
    print_timing_usage(out);
    print_stable_usage(out);
    fprintf(out,
            "Line options:\n"
            "  --key-field N  the key is the N-th field, not the whole line\n"
            "  --skip-bad     write a line whose time, importance or key field\n"
            "                 is missing or unparsable (without remembering it)\n"
            "                 instead of stopping with an error\n"
            "  --invert       print only the lines that are dropped\n"
            "  --stats        after the run, print counters and the filter's\n"
            "                 shape to stderr\n"
            "  --state FILE   load the filter from FILE if it exists, save it\n"
            "                 there (atomically) after a successful run\n"
            "  -h, --help     show this help\n"
            "\n"
            "New filters hash with the fixed seed 0x%016" PRIx64 ".\n"
            "Exit status: 0 success, 1 I/O error or bad input line, 2 usage error.\n",
            DEDUP_SEED);
}

/* A field number: a positive integer below 2^32. */
static int parse_field_number(const char *option, const char *text,
                              uint32_t *out)
{
    return cli_parse_field_number(DEDUP_PROGRAM, option, text, out);
}

/* The options of time windows that only dedup takes. */
static int apply_time_option(int option, const char *value,
                             dedup_options *opts)
{
    cli_number parsed;
    switch (option) {
    case OPTION_MAX_MEMORY:
        parsed = cli_parse_byte_size(value, &opts->max_memory);
        if (parsed != CLI_NUMBER_OK)
            return cli_invalid_value(DEDUP_PROGRAM, "--max-memory", value,
                                     cli_byte_size_requirement(parsed));
        opts->have_max_memory = true;
        opts->max_memory_text = value;
        return DEDUP_CONTINUE;
    case OPTION_POLICY:
        if (strcmp(value, "refuse") == 0)
            opts->policy = EBB_TLBF_REFUSE;
        else if (strcmp(value, "evict") == 0)
            opts->policy = EBB_TLBF_EVICT;
        else
            return cli_invalid_value(DEDUP_PROGRAM, "--policy", value,
                                     "must be refuse or evict");
        opts->have_policy = true;
        opts->policy_text = value;
        return DEDUP_CONTINUE;
    case OPTION_TIME_FIELD:
        opts->time_field_text = value;
        return parse_field_number("--time-field", value, &opts->time_field);
    default: /* OPTION_TIME_FORMAT */
        if (!cli_parse_time_format(value, &opts->time_format))
            return cli_invalid_value(DEDUP_PROGRAM, "--time-format", value,
                                     "must be epoch, epoch-ms or iso8601");
        opts->have_time_format = true;
        opts->time_format_text = value;
        return DEDUP_CONTINUE;
    }
}

/* A cli_option_handler: returns DEDUP_CONTINUE or the exit status. */
static int apply_option(int option, const char *value, void *context)
{
    dedup_options *opts = context;
    switch (option) {
    case OPTION_MAX_MEMORY:
    case OPTION_POLICY:
    case OPTION_TIME_FIELD:
    case OPTION_TIME_FORMAT:
        return apply_time_option(option, value, opts);
    case OPTION_KEY_FIELD:
        return parse_field_number("--key-field", value, &opts->key_field);
    case OPTION_IMPORTANCE_FIELD:
        opts->importance_field_text = value;
        return parse_field_number("--importance-field", value,
                                  &opts->importance_field);
    case OPTION_SKIP_BAD:
        opts->skip_bad = true;
        return DEDUP_CONTINUE;
    case 'i':
        opts->invert = true;
        return DEDUP_CONTINUE;
    case 's':
        opts->stats = true;
        return DEDUP_CONTINUE;
    case 'S':
        if (value[0] == '\0')
            return cli_invalid_value(DEDUP_PROGRAM, "--state", value,
                                     "must be a file name");
        opts->state_path = value;
        return DEDUP_CONTINUE;
    default:
        if (cli_is_stable_option(option))
            return cli_apply_stable_option(DEDUP_PROGRAM, option, value,
                                           &opts->stable);
        if (cli_is_timing_option(option))
            return cli_apply_timing_option(DEDUP_PROGRAM, option, value,
                                           &opts->timing);
        return cli_apply_sizing_option(DEDUP_PROGRAM, option, value,
                                       &opts->sizing);
    }
}

/* The importance mapping's options need an importance to map. */
static const char *importance_option_given(const cli_stable_options *s)
{
    if (s->have_range)
        return "--importance-range";
    if (s->have_classes)
        return "--importance-classes";
    if (s->have_above)
        return "--important-above";
    if (s->have_decrement)
        return "--decrement";
    if (s->have_policy)
        return "--importance-out-of-range";
    return NULL;
}

/* Combinations of stable options that are wrong whatever the state. */
static int check_stable_combinations(const dedup_options *opts)
{
    const char *option, *value;
    if (opts->stable.stable &&
        dedup_window_option_given(opts, &option, &value)) {
        cli_error(DEDUP_PROGRAM, "%s cannot be combined with --stable",
                  option);
        return CLI_EXIT_USAGE;
    }
    option = importance_option_given(&opts->stable);
    if (option != NULL && opts->importance_field == 0) {
        cli_error(DEDUP_PROGRAM, "%s requires --importance-field", option);
        return CLI_EXIT_USAGE;
    }
    return cli_stable_check(DEDUP_PROGRAM, &opts->stable,
                            opts->sizing.have_fp);
}

/* The count-window options that a time window cannot take, whatever the
 * state: the first one given, or NULL. */
static const char *count_option_given(const dedup_options *opts)
{
    if (opts->sizing.have_window)
        return "--window";
    return cli_blocked_option_given(&opts->sizing);
}

/* Combinations that are wrong whatever the state holds. Whether a
 * count-window run got time-window options depends on the state's kind,
 * so dedup_filter.c checks that. */
static int check_combinations(const dedup_options *opts)
{
    const char *option, *value;
    if (dedup_timing_requested(opts) &&
        dedup_non_timing_option_given(opts, &option, &value)) {
        cli_error(DEDUP_PROGRAM, "%s cannot be combined with --timing",
                  option);
        return CLI_EXIT_USAGE;
    }
    const char *count_option = count_option_given(opts);
    if (opts->sizing.have_time_window && count_option != NULL) {
        cli_error(DEDUP_PROGRAM, "%s cannot be combined with --time-window",
                  count_option);
        return CLI_EXIT_USAGE;
    }
    int layout = cli_check_layout(DEDUP_PROGRAM, &opts->sizing);
    if (layout != CLI_CONTINUE)
        return layout;
    if (opts->have_time_format && opts->time_field == 0) {
        cli_error(DEDUP_PROGRAM, "--time-format requires --time-field");
        return CLI_EXIT_USAGE;
    }
    if (opts->skip_bad && opts->time_field == 0 && opts->key_field == 0 &&
        opts->importance_field == 0) {
        cli_error(DEDUP_PROGRAM, "--skip-bad requires %s",
                  opts->stable.stable ? "--importance-field or --key-field"
                                      : "--time-field or --key-field");
        return CLI_EXIT_USAGE;
    }
    return check_stable_combinations(opts);
}

/* With --timing (or --bits-per-item), --k and --memory, which the stable
 * options read, are the timing filter's. Returns DEDUP_CONTINUE or the
 * exit status. */
static int take_timing_options(dedup_options *opts)
{
    if (!dedup_timing_requested(opts))
        return DEDUP_CONTINUE;
    cli_stable_options *s = &opts->stable;
    cli_timing_take_k(&opts->timing, s->have_k, s->k_text);
    cli_timing_take_memory(&opts->timing, s->have_memory, s->memory,
                           s->memory_text);
    s->have_k = false;
    s->have_memory = false;
    return cli_timing_check(DEDUP_PROGRAM, &opts->timing,
                            opts->sizing.have_fp);
}

/* Returns DEDUP_CONTINUE or the exit status. */
static int parse_command_line(int argc, char **argv, dedup_options *opts)
{
    static const struct option options[] = {
        CLI_SIZING_LONG_OPTIONS,
        CLI_STABLE_LONG_OPTIONS,
        CLI_STABLE_DEDUP_LONG_OPTIONS,
        CLI_TIMING_LONG_OPTIONS,
        {"k", required_argument, NULL, CLI_STABLE_OPTION_K},
        {"importance-field", required_argument, NULL,
         OPTION_IMPORTANCE_FIELD},
        {"invert", no_argument, NULL, 'i'},
        {"max-memory", required_argument, NULL, OPTION_MAX_MEMORY},
        {"policy", required_argument, NULL, OPTION_POLICY},
        {"time-field", required_argument, NULL, OPTION_TIME_FIELD},
        {"time-format", required_argument, NULL, OPTION_TIME_FORMAT},
        {"key-field", required_argument, NULL, OPTION_KEY_FIELD},
        {"skip-bad", no_argument, NULL, OPTION_SKIP_BAD},
        {"stats", no_argument, NULL, 's'},
        {"state", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };

    opts->sizing.window = DEDUP_DEFAULT_WINDOW;
    opts->sizing.fp = DEDUP_DEFAULT_FP;
    opts->sizing.block_bits = CLI_DEFAULT_BLOCK_BITS;
    opts->sizing.block_hashes = 0; /* the chooser picks */
    opts->sizing.rate = DEDUP_DEFAULT_RATE;
    opts->max_memory = DEDUP_DEFAULT_MAX_MEMORY;
    opts->policy = EBB_TLBF_REFUSE;
    opts->time_format = CLI_TIME_EPOCH;
    cli_stable_defaults(&opts->stable);

    int status = cli_parse_options(DEDUP_PROGRAM, argc, argv, options,
                                   print_usage, apply_option, opts);
    if (status != DEDUP_CONTINUE)
        return status;
    opts->inputs = argv + optind;
    opts->input_count = argc - optind;
    status = take_timing_options(opts);
    if (status != DEDUP_CONTINUE)
        return status;
    status = cli_stable_parse_k(DEDUP_PROGRAM, &opts->stable);
    if (status != DEDUP_CONTINUE)
        return status;
    return check_combinations(opts);
}

int ebb_cli_dedup(int argc, char **argv)
{
    dedup_options opts;
    memset(&opts, 0, sizeof opts);
    int status = parse_command_line(argc, argv, &opts);
    if (status != DEDUP_CONTINUE)
        return status;

    dedup_filter filter;
    status = dedup_open_filter(&opts, &filter);
    if (status != DEDUP_CONTINUE)
        return status;

    /* Write errors are reported through errno (EPIPE), not a signal, and
     * a file-size limit gives EFBIG instead of killing us half-way through
     * saving the state. */
    cli_prepare_output();

    dedup_counts counts;
    memset(&counts, 0, sizeof counts);
    status = dedup_inputs(&opts, &filter, &counts);
    if (status == DEDUP_CONTINUE && opts.stats)
        dedup_print_stats(&opts, &filter, &counts);
    if (status == DEDUP_CONTINUE && opts.state_path != NULL)
        status = dedup_save_filter(opts.state_path, &filter);
    dedup_close_filter(&filter);
    return status == DEDUP_CONTINUE ? CLI_EXIT_OK : status;
}
