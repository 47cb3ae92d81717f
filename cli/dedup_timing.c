/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dedup_timing.c: the Block Timing Bloom filter of `ebb dedup --timing`
 * (ebb/timing.h): created from the options, a loaded state checked against
 * them, and its --stats.
 *
 * The same count window as the default APBF (--window N, no false
 * negative within it), built the other way: m timers of bpt bits holding
 * the block timestamp of each item's last insertion, an incremental sweep
 * expiring them (docs/timing.md). It answers the standard yes or no only;
 * `ebb recent` asks the same filter for probabilities.
 *
 * The shape comes from --bits-per-item [--k], --memory or --fp
 * (timing_options.c). A state of a timing filter keeps its shape; the
 * sizing options, given, must describe it, and options of other kinds
 * (time windows, stable filters, blocked slices) disagree with it.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "dedup.h"

#include <inttypes.h>
#include <stdio.h>

bool dedup_timing_requested(const dedup_options *opts)
{
    return opts->timing.timing || opts->timing.have_bits_per_item;
}

bool dedup_non_timing_option_given(const dedup_options *opts,
                                   const char **option, const char **value)
{
    const cli_sizing_options *s = &opts->sizing;
    const struct {
        bool given;
        const char *option, *value;
    } others[] = {
        {s->have_time_window, "--time-window", s->time_window_text},
        {s->have_rate, "--rate", s->rate_text},
        {opts->have_max_memory, "--max-memory", opts->max_memory_text},
        {opts->have_policy, "--policy", opts->policy_text},
        {opts->time_field != 0, "--time-field", opts->time_field_text},
        {opts->have_time_format, "--time-format", opts->time_format_text},
        {s->have_max_npws, "--max-npws", s->max_npws_text},
        {s->have_max_accesses, "--max-accesses", s->max_accesses_text},
        {s->have_blocked, "--blocked", ""},
        {s->have_block_bits, "--block-bits", s->block_bits_text},
        {s->have_block_hashes, "--block-hashes", s->block_hashes_text},
        {s->have_layout, "--layout", s->layout_text},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (others[i].given) {
            *option = others[i].option;
            *value = others[i].value;
            return true;
        }
    return dedup_stable_option_given(opts, option, value);
}

int dedup_create_timing(const dedup_options *opts, dedup_filter *filter)
{
    /* dedup.c has refused the other kinds' options with --timing. */
    ebb_timing_params params;
    int result = cli_timing_choose(DEDUP_PROGRAM, &opts->timing,
                                   &opts->sizing, opts->sizing.window,
                                   &params);
    if (result != DEDUP_CONTINUE)
        return result;
    ebb_status status = ebb_timing_create(&params, NULL, DEDUP_SEED,
                                          &filter->timing);
    if (status == EBB_ENOMEM) {
        cli_error(DEDUP_PROGRAM, "cannot allocate the filter: %s",
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    if (status != EBB_OK) {
        cli_error(DEDUP_PROGRAM, "cannot build a timing filter of %" PRIu64
                  " timers for window %" PRIu64 ": %s", params.timers,
                  params.window, ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return DEDUP_CONTINUE;
}

int dedup_check_timing_state(const dedup_options *opts, const char *path,
                             dedup_filter *filter)
{
    const char *option, *value;
    if (dedup_non_timing_option_given(opts, &option, &value))
        return dedup_disagrees(option, value, path, "a timing filter");
    return cli_timing_check_state(DEDUP_PROGRAM, &opts->timing,
                                  &opts->sizing, path,
                                  ebb_timing_get_params(filter->timing));
}

void dedup_print_timing_stats(const dedup_options *opts,
                              const dedup_filter *filter,
                              const dedup_counts *counts)
{
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "duplicates: %" PRIu64 "\n",
            counts->lines_read, counts->lines_written, counts->duplicates);
    cli_timing_print_shape(stderr, ebb_timing_get_params(filter->timing),
                           ebb_timing_memory(filter->timing), 0);
    if (opts->skip_bad)
        fprintf(stderr, "bad lines: %" PRIu64 "\n", counts->bad_lines);
}
