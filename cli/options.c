/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.c: the sizing options `ebb dedup` and `ebb params` share, and the
 * getopt_long loop of every subcommand. One place, so that the two
 * subcommands cannot drift apart in what they accept or how they say no.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "options.h"

#include <string.h>

#include "common.h"
#include "units.h"

int cli_invalid_value(const char *program, const char *option,
                      const char *text, const char *requirement)
{
    cli_error(program, "invalid %s '%s': %s", option, text, requirement);
    return CLI_EXIT_USAGE;
}

int cli_disagrees(const char *program, const char *option, const char *value,
                  const char *path, const char *what)
{
    cli_error(program, "%s%s%s disagrees with the state in '%s' (%s)", option,
              value[0] != '\0' ? " " : "", value, path, what);
    return CLI_EXIT_USAGE;
}

int cli_parse_field_number(const char *program, const char *option,
                           const char *text, uint32_t *out)
{
    uint64_t value;
    if (cli_parse_positive_integer(text, &value) != CLI_NUMBER_OK ||
        value > UINT32_MAX)
        return cli_invalid_value(program, option, text,
                                 "must be a field number from 1 to "
                                 "4294967295");
    *out = (uint32_t)value;
    return CLI_CONTINUE;
}

int cli_parse_positive_real(const char *program, const char *option,
                            const char *text, double *out)
{
    if (!cli_parse_real(text, out) || !(*out > 0.0))
        return cli_invalid_value(program, option, text,
                                 "must be a positive number");
    return CLI_CONTINUE;
}

/* --window, --fp and --max-npws. */
static int apply_core_option(const char *program, int option,
                             const char *value, cli_sizing_options *sizing)
{
    cli_number parsed;
    switch (option) {
    case 'w':
        parsed = cli_parse_positive_integer(value, &sizing->window);
        if (parsed != CLI_NUMBER_OK)
            return cli_invalid_value(program, "--window", value,
                                     cli_positive_integer_requirement(parsed));
        sizing->have_window = true;
        sizing->window_text = value;
        return CLI_CONTINUE;
    case 'f':
        if (!cli_parse_real(value, &sizing->fp) || !(sizing->fp > 0.0) ||
            !(sizing->fp < 1.0))
            return cli_invalid_value(program, "--fp", value,
                                     "must be a number between 0 and 1 "
                                     "(exclusive)");
        sizing->have_fp = true;
        sizing->fp_text = value;
        return CLI_CONTINUE;
    default: /* 'n' */
        sizing->have_max_npws = true;
        sizing->max_npws_text = value;
        return cli_parse_positive_real(program, "--max-npws", value,
                                       &sizing->max_npws);
    }
}

/* --blocked, --block-bits, --block-hashes and --max-accesses. */
static int apply_blocked_option(const char *program, int option,
                                const char *value, cli_sizing_options *sizing)
{
    switch (option) {
    case CLI_OPTION_BLOCKED:
        sizing->blocked = sizing->have_blocked = true;
        return CLI_CONTINUE;
    case CLI_OPTION_BLOCK_BITS:
        if (!cli_parse_block_bits(value, &sizing->block_bits))
            return cli_invalid_value(program, "--block-bits", value,
                                     CLI_BLOCK_BITS_REQUIREMENT);
        sizing->blocked = sizing->have_block_bits = true;
        sizing->block_bits_text = value;
        return CLI_CONTINUE;
    case CLI_OPTION_BLOCK_HASHES:
        if (!cli_parse_block_hashes(value, &sizing->block_hashes))
            return cli_invalid_value(program, "--block-hashes", value,
                                     CLI_BLOCK_HASHES_REQUIREMENT);
        sizing->blocked = sizing->have_block_hashes = true;
        sizing->block_hashes_text = value;
        return CLI_CONTINUE;
    default: /* CLI_OPTION_MAX_ACCESSES */
        sizing->have_max_accesses = true;
        sizing->max_accesses_text = value;
        return cli_parse_positive_real(program, "--max-accesses", value,
                                       &sizing->max_accesses);
    }
}

/* --time-window and --rate. */
static int apply_time_option(const char *program, int option,
                             const char *value, cli_sizing_options *sizing)
{
    if (option == CLI_OPTION_RATE) {
        sizing->have_rate = true;
        sizing->rate_text = value;
        return cli_parse_positive_real(program, "--rate", value,
                                       &sizing->rate);
    }
    cli_number parsed = cli_parse_duration(value, &sizing->span_ns);
    if (parsed != CLI_NUMBER_OK)
        return cli_invalid_value(program, "--time-window", value,
                                 cli_duration_requirement(parsed));
    sizing->have_time_window = true;
    sizing->time_window_text = value;
    return CLI_CONTINUE;
}

/* --layout ring|sliced. */
static int apply_layout_option(const char *program, const char *value,
                               cli_sizing_options *sizing)
{
    if (strcmp(value, "ring") == 0)
        sizing->layout = EBB_APBF_LAYOUT_RING;
    else if (strcmp(value, "sliced") == 0)
        sizing->layout = EBB_APBF_LAYOUT_SLICED;
    else
        return cli_invalid_value(program, "--layout", value,
                                 "must be ring or sliced");
    sizing->have_layout = true;
    sizing->layout_text = value;
    return CLI_CONTINUE;
}

int cli_apply_sizing_option(const char *program, int option,
                            const char *value, cli_sizing_options *sizing)
{
    switch (option) {
    case 'w':
    case 'f':
    case 'n':
        return apply_core_option(program, option, value, sizing);
    case CLI_OPTION_BLOCKED:
    case CLI_OPTION_BLOCK_BITS:
    case CLI_OPTION_BLOCK_HASHES:
    case CLI_OPTION_MAX_ACCESSES:
        return apply_blocked_option(program, option, value, sizing);
    case CLI_OPTION_TIME_WINDOW:
    case CLI_OPTION_RATE:
        return apply_time_option(program, option, value, sizing);
    case CLI_OPTION_LAYOUT:
        return apply_layout_option(program, value, sizing);
    default:
        cli_error(program, "internal error: option %d not handled", option);
        return CLI_EXIT_USAGE;
    }
}

const char *cli_blocked_option_given(const cli_sizing_options *sizing)
{
    if (sizing->have_blocked)
        return "--blocked";
    if (sizing->have_block_bits)
        return "--block-bits";
    if (sizing->have_block_hashes)
        return "--block-hashes";
    if (sizing->have_max_accesses)
        return "--max-accesses";
    if (sizing->have_layout)
        return "--layout";
    return NULL;
}

uint32_t cli_sizing_layout(const cli_sizing_options *sizing, uint64_t window,
                           bool blocked)
{
    if (sizing->have_layout)
        return sizing->layout;
    /* NPWS and access bounds describe a ring's walk: a shape asked for
     * with them stays a ring unless --layout says otherwise. */
    if (blocked || sizing->have_max_npws || sizing->have_max_accesses)
        return EBB_APBF_LAYOUT_RING;
    /* The ring it would otherwise build: the least memory, no bounds. */
    ebb_apbf_goal ring = {window, sizing->fp, 0.0, 0.0, 0, 0,
                          EBB_APBF_LAYOUT_RING};
    return ebb_apbf_preferred_layout(&ring);
}

uint32_t cli_explicit_layout(const cli_sizing_options *sizing)
{
    return sizing->have_layout ? sizing->layout : EBB_APBF_LAYOUT_RING;
}

const char *cli_layout_name(uint32_t layout)
{
    return layout == EBB_APBF_LAYOUT_SLICED ? "sliced" : "ring";
}

int cli_check_layout(const char *program, const cli_sizing_options *sizing)
{
    if (!sizing->have_layout || sizing->layout != EBB_APBF_LAYOUT_SLICED ||
        !sizing->blocked)
        return CLI_CONTINUE;
    const char *blocked = sizing->have_blocked       ? "--blocked"
                          : sizing->have_block_bits ? "--block-bits"
                                                    : "--block-hashes";
    cli_error(program, "--layout sliced cannot be combined with %s "
                       "(the bit-sliced layout holds plain slices)",
              blocked);
    return CLI_EXIT_USAGE;
}

int cli_parse_options(const char *program, int argc, char **argv,
                      const struct option *options,
                      void (*print_usage)(FILE *out),
                      cli_option_handler apply, void *context)
{
    opterr = 0;
    int option;
    while ((option = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (option == 'h') {
            print_usage(stdout);
            /* A long text may have failed in an earlier write: the error
             * flag remembers it, fflush alone may not. */
            return fflush(stdout) == 0 && !ferror(stdout) ? CLI_EXIT_OK
                                                          : CLI_EXIT_IO;
        }
        if (option == '?' || option == ':')
            return cli_report_getopt_error(program, option, argv);
        int status = apply(option, optarg, context);
        if (status != CLI_CONTINUE)
            return status;
    }
    return CLI_CONTINUE;
}

ebb_apbf_goal cli_sizing_goal(const cli_sizing_options *sizing,
                              uint64_t window, uint32_t block_bits,
                              uint32_t block_hashes)
{
    bool blocked = block_bits != 0;
    ebb_apbf_goal goal;
    goal.window = window;
    goal.fp = sizing->fp;
    goal.max_npws = sizing->have_max_npws ? sizing->max_npws
                    : blocked             ? EBB_APBF_BLOCKED_MAX_NPWS
                                          : 0.0;
    goal.max_accesses = sizing->have_max_accesses ? sizing->max_accesses
                        : blocked ? EBB_APBF_BLOCKED_MAX_ACCESSES
                                  : 0.0;
    goal.block_bits = block_bits;
    goal.block_hashes = blocked ? block_hashes : 0;
    goal.layout = cli_sizing_layout(sizing, window, blocked);
    return goal;
}
