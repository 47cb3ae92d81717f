/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dedup_filter.c: the filter of `ebb dedup`: created from the options or
 * loaded from --state (and then checked against the options), saved after
 * a successful run, and described by --stats.
 *
 * A state file records its kind: a count window (APBF, snapshot families 1
 * and 2), a time window (TLBF, family 3), a stable filter (dedup_stable.c)
 * or a timing filter (dedup_timing.c). The kind and shape come from
 * the file, so options describing them may be left out; given, they must
 * agree, because silently ignoring them would hide a changed window, error
 * rate or memory limit. Options that only say how to read this run's input
 * (--time-field, --time-format, --key-field, --skip-bad) are free.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "dedup.h"
#include "state_file.h"
#include "units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------------ */
/* Count windows (APBF)                                                     */
/* ------------------------------------------------------------------------ */

/* " (blocked, 512-bit blocks, any bits per block, max-npws 0.25,
 * max-accesses 4)" for a blocked goal; " with max-npws F" and
 * " with max-accesses A" for the bounds a plain one was given. */
static void describe_goal(const ebb_apbf_goal *goal, char *out, size_t size)
{
    if (goal->block_bits == 0) {
        char npws[48] = "", accesses[48] = "";
        if (goal->max_npws > 0.0)
            snprintf(npws, sizeof npws, " with max-npws %g", goal->max_npws);
        if (goal->max_accesses > 0.0)
            snprintf(accesses, sizeof accesses, " with max-accesses %g",
                     goal->max_accesses);
        snprintf(out, size, "%s%s%s", npws, accesses,
                 goal->layout == EBB_APBF_LAYOUT_SLICED
                     ? " in the sliced layout (k + l + 1 <= 128)"
                     : "");
        return;
    }
    char hashes[32] = "any";
    if (goal->block_hashes != 0)
        snprintf(hashes, sizeof hashes, "%" PRIu32, goal->block_hashes);
    snprintf(out, size,
             " (blocked, %" PRIu32 "-bit blocks, %s bits per block, "
             "max-npws %g, max-accesses %g)",
             goal->block_bits, hashes, goal->max_npws, goal->max_accesses);
}

static int create_count_filter(const dedup_options *opts, ebb_apbf **filter)
{
    const cli_sizing_options *s = &opts->sizing;
    ebb_apbf_goal goal = cli_sizing_goal(s, s->window,
                                         s->blocked ? s->block_bits : 0,
                                         s->block_hashes);
    ebb_apbf_params shape;
    ebb_status status = ebb_apbf_choose_goal(&goal, &shape);
    if (status == EBB_OK)
        status = ebb_apbf_create(&shape, DEDUP_SEED, filter);
    if (status == EBB_ENOMEM) {
        cli_error(DEDUP_PROGRAM, "cannot allocate the filter: %s",
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    if (status != EBB_OK) {
        char bounds[160];
        describe_goal(&goal, bounds, sizeof bounds);
        cli_error(DEDUP_PROGRAM, "cannot build a filter for window %" PRIu64
                  " and fp %g%s: %s", opts->sizing.window, opts->sizing.fp, bounds,
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return DEDUP_CONTINUE;
}

static int disagrees(const char *option, const char *value, const char *path,
                     const char *what)
{
    return cli_disagrees(DEDUP_PROGRAM, option, value, path, what);
}

int dedup_disagrees(const char *option, const char *value, const char *path,
                    const char *what)
{
    return disagrees(option, value, path, what);
}

/* The block options, if given, must describe the loaded filter's slices.
 * Left out, the kind comes from the state. */
static int check_state_blocks(const dedup_options *opts, const char *path,
                              const ebb_apbf_params *loaded)
{
    char what[48];
    if (opts->sizing.blocked && loaded->block_bits == 0) {
        if (opts->sizing.have_blocked)
            return disagrees("--blocked", "", path, "a plain filter");
        if (opts->sizing.have_block_bits)
            return disagrees("--block-bits", opts->sizing.block_bits_text, path,
                             "a plain filter");
        return disagrees("--block-hashes", opts->sizing.block_hashes_text, path,
                         "a plain filter");
    }
    if (opts->sizing.have_block_bits && opts->sizing.block_bits != loaded->block_bits) {
        snprintf(what, sizeof what, "block bits %" PRIu32, loaded->block_bits);
        return disagrees("--block-bits", opts->sizing.block_bits_text, path, what);
    }
    if (opts->sizing.have_block_hashes && opts->sizing.block_hashes != loaded->block_hashes) {
        snprintf(what, sizeof what, "block hashes %" PRIu32,
                 loaded->block_hashes);
        return disagrees("--block-hashes", opts->sizing.block_hashes_text, path,
                         what);
    }
    if (opts->sizing.have_layout && opts->sizing.layout != loaded->layout) {
        snprintf(what, sizeof what, "layout %s",
                 cli_layout_name(loaded->layout));
        return disagrees("--layout", opts->sizing.layout_text, path, what);
    }
    return DEDUP_CONTINUE;
}

/* The options a time window has and a count window has not, in the order
 * they are named when they disagree with a count-window state. */
static bool first_time_option(const dedup_options *opts, const char **option,
                              const char **value)
{
    const struct {
        bool given;
        const char *option, *value;
    } time_options[] = {
        {opts->sizing.have_time_window, "--time-window", opts->sizing.time_window_text},
        {opts->sizing.have_rate, "--rate", opts->sizing.rate_text},
        {opts->have_max_memory, "--max-memory", opts->max_memory_text},
        {opts->have_policy, "--policy", opts->policy_text},
        {opts->time_field != 0, "--time-field", opts->time_field_text},
        {opts->have_time_format, "--time-format", opts->time_format_text},
    };
    for (size_t i = 0; i < sizeof time_options / sizeof time_options[0]; i++)
        if (time_options[i].given) {
            *option = time_options[i].option;
            *value = time_options[i].value;
            return true;
        }
    return false;
}

/* The fp, NPWS and access options, if given, must make the chooser pick
 * the loaded (k, l) for its window and block shape. */
static int check_state_bounds(const dedup_options *opts, const char *path,
                              const ebb_apbf_params *loaded)
{
    if (!opts->sizing.have_fp && !opts->sizing.have_max_npws && !opts->sizing.have_max_accesses)
        return DEDUP_CONTINUE;
    uint64_t window = opts->sizing.have_window ? opts->sizing.window : loaded->window;
    ebb_apbf_goal goal = cli_sizing_goal(&opts->sizing, window,
                                         loaded->block_bits,
                                         loaded->block_hashes);
    goal.layout = loaded->layout; /* the chooser's (k, l) depend on it */
    ebb_apbf_params wanted;
    ebb_status result = ebb_apbf_choose_goal(&goal, &wanted);
    if (result == EBB_OK && wanted.k == loaded->k && wanted.l == loaded->l)
        return DEDUP_CONTINUE;
    char what[64];
    snprintf(what, sizeof what, "k=%" PRIu32 ", l=%" PRIu32, loaded->k,
             loaded->l);
    if (opts->sizing.have_fp)
        return disagrees("--fp", opts->sizing.fp_text, path, what);
    if (opts->sizing.have_max_npws)
        return disagrees("--max-npws", opts->sizing.max_npws_text, path, what);
    return disagrees("--max-accesses", opts->sizing.max_accesses_text, path, what);
}

static int check_count_state(const dedup_options *opts, const char *path,
                             const ebb_apbf *filter)
{
    const char *option, *value;
    if (first_time_option(opts, &option, &value) ||
        dedup_stable_option_given(opts, &option, &value) ||
        cli_timing_option_given(&opts->timing, &option, &value))
        return disagrees(option, value, path, "a count-window filter");
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    const ebb_apbf_params *loaded = &stats.params;

    int status = check_state_blocks(opts, path, loaded);
    if (status != DEDUP_CONTINUE)
        return status;
    /* The window sizes slices the same way for a given (k, l) and block
     * shape in both the chooser and ebb_apbf_params_from_kl_blocked. */
    if (opts->sizing.have_window) {
        ebb_apbf_params wanted;
        ebb_status result = ebb_apbf_params_from_kl_blocked(
            loaded->k, loaded->l, opts->sizing.window, loaded->block_bits,
            loaded->block_hashes, &wanted);
        if (result != EBB_OK || wanted.window != loaded->window ||
            wanted.slice_bits != loaded->slice_bits ||
            wanted.generation != loaded->generation) {
            char what[48];
            snprintf(what, sizeof what, "window %" PRIu64, loaded->window);
            return disagrees("--window", opts->sizing.window_text, path, what);
        }
    }
    return check_state_bounds(opts, path, loaded);
}

/* ------------------------------------------------------------------------ */
/* Time windows (TLBF)                                                      */
/* ------------------------------------------------------------------------ */

static const char *policy_name(ebb_tlbf_policy policy)
{
    return policy == EBB_TLBF_EVICT ? "evict" : "refuse";
}

static int create_time_filter(const dedup_options *opts, ebb_tlbf **filter)
{
    char span[32];
    cli_format_duration(opts->sizing.span_ns, span, sizeof span);
    ebb_tlbf_config config = {0}; /* fields added later stay 0 (defaults) */
    config.span_ns = opts->sizing.span_ns;
    config.fp = opts->sizing.fp;
    config.max_npws = opts->sizing.max_npws;
    config.max_memory = opts->max_memory;
    config.policy = opts->policy;
    if (ebb_tlbf_capacity_for_rate(opts->sizing.rate, opts->sizing.span_ns,
                                   &config.initial_capacity) != EBB_OK) {
        cli_error(DEDUP_PROGRAM, "cannot build a filter for time window %s "
                  "at rate %g: more than 2^64 lines per window", span,
                  opts->sizing.rate);
        return CLI_EXIT_USAGE;
    }
    ebb_status status = ebb_tlbf_create(&config, DEDUP_SEED, filter);
    if (status == EBB_ENOMEM) {
        cli_error(DEDUP_PROGRAM, "cannot allocate the filter: %s",
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    if (status != EBB_OK) {
        cli_error(DEDUP_PROGRAM, "cannot build a filter for time window %s "
                  "at rate %g and fp %g%s%s within %zu bytes: %s", span,
                  opts->sizing.rate, opts->sizing.fp,
                  opts->sizing.have_max_npws ? " with max-npws " : "",
                  opts->sizing.have_max_npws ? opts->sizing.max_npws_text : "",
                  opts->max_memory, ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return DEDUP_CONTINUE;
}

/* The options a count window has and a time window has not. */
static bool first_count_option(const dedup_options *opts, const char **option,
                               const char **value)
{
    const struct {
        bool given;
        const char *option, *value;
    } count_options[] = {
        {opts->sizing.have_window, "--window", opts->sizing.window_text},
        {opts->sizing.have_blocked, "--blocked", ""},
        {opts->sizing.have_block_bits, "--block-bits", opts->sizing.block_bits_text},
        {opts->sizing.have_block_hashes, "--block-hashes", opts->sizing.block_hashes_text},
        {opts->sizing.have_max_accesses, "--max-accesses", opts->sizing.max_accesses_text},
        {opts->sizing.have_layout, "--layout", opts->sizing.layout_text},
    };
    for (size_t i = 0; i < sizeof count_options / sizeof count_options[0]; i++)
        if (count_options[i].given) {
            *option = count_options[i].option;
            *value = count_options[i].value;
            return true;
        }
    return false;
}

/* --rate is not checked: it only sizes the first slices of a new filter,
 * and a loaded one follows the rate it has observed. Accepting it lets the
 * same command line create the state and continue it. */
static int check_time_state(const dedup_options *opts, const char *path,
                            const ebb_tlbf *filter)
{
    const char *option, *value;
    if (first_count_option(opts, &option, &value) ||
        dedup_stable_option_given(opts, &option, &value) ||
        cli_timing_option_given(&opts->timing, &option, &value))
        return disagrees(option, value, path, "a time-window filter");
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(filter, &stats);
    char what[64];
    if (opts->sizing.have_time_window && opts->sizing.span_ns != stats.span_ns) {
        char span[32];
        cli_format_duration(stats.span_ns, span, sizeof span);
        snprintf(what, sizeof what, "span %s", span);
        return disagrees("--time-window", opts->sizing.time_window_text, path, what);
    }
    if (opts->sizing.have_fp || opts->sizing.have_max_npws) {
        ebb_tlbf_config wanted_config = {
            .span_ns = stats.span_ns,
            .fp = opts->sizing.fp,
            .max_npws = opts->sizing.max_npws,
            .initial_capacity = 1,
            .max_memory = SIZE_MAX,
            .policy = stats.policy,
        };
        ebb_tlbf_plan wanted;
        ebb_status result = ebb_tlbf_plan_config(&wanted_config, &wanted);
        if (result != EBB_OK || wanted.k != stats.k || wanted.l != stats.l) {
            snprintf(what, sizeof what, "k=%" PRIu32 ", l=%" PRIu32, stats.k,
                     stats.l);
            return opts->sizing.have_fp
                       ? disagrees("--fp", opts->sizing.fp_text, path, what)
                       : disagrees("--max-npws", opts->sizing.max_npws_text, path,
                                   what);
        }
    }
    if (opts->have_max_memory && opts->max_memory != stats.max_memory) {
        snprintf(what, sizeof what, "max memory %zu bytes", stats.max_memory);
        return disagrees("--max-memory", opts->max_memory_text, path, what);
    }
    if (opts->have_policy && opts->policy != stats.policy) {
        snprintf(what, sizeof what, "policy %s", policy_name(stats.policy));
        return disagrees("--policy", opts->policy_text, path, what);
    }
    return DEDUP_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Opening, saving, closing                                                 */
/* ------------------------------------------------------------------------ */

/* Loads the snapshot in path into filter (kind from its family); leaves
 * filter empty when there is no such file. Never modifies the file. */
static int load_state(const char *path, dedup_filter *filter)
{
    unsigned char *snapshot = NULL;
    size_t length = 0;
    bool found;
    int read = cli_read_state(DEDUP_PROGRAM, path, &snapshot, &length, &found);
    if (read != DEDUP_CONTINUE || !found)
        return read;
    /* The loaders check the family after the magic and the version, so a
     * snapshot of the other kind is told apart from a damaged one. */
    ebb_status status = ebb_apbf_load(snapshot, length, &filter->apbf);
    if (status == EBB_OK) {
        filter->kind = DEDUP_COUNT_WINDOW;
    } else if (status == EBB_EFAMILY) {
        status = ebb_tlbf_load(snapshot, length, &filter->tlbf);
        filter->kind = DEDUP_TIME_WINDOW;
    }
    if (status == EBB_EFAMILY) {
        status = ebb_stable_load(snapshot, length, &filter->stable);
        filter->kind = DEDUP_STABLE;
    }
    if (status == EBB_EFAMILY) {
        status = ebb_timing_load(snapshot, length, &filter->timing);
        filter->kind = DEDUP_TIMING;
    }
    free(snapshot);
    if (status != EBB_OK) {
        cli_error(DEDUP_PROGRAM, "%s: %s", path, ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    filter->loaded = true;
    return DEDUP_CONTINUE;
}

/* A count window asked for (or defaulted to) with options only a time
 * window has, or a window with options only a stable filter has. */
static int reject_time_options(const dedup_options *opts)
{
    const char *option, *value;
    if (dedup_stable_option_given(opts, &option, &value)) {
        cli_error(DEDUP_PROGRAM, "%s requires --stable", option);
        return CLI_EXIT_USAGE;
    }
    if (!first_time_option(opts, &option, &value))
        return DEDUP_CONTINUE;
    cli_error(DEDUP_PROGRAM, "%s requires --time-window", option);
    return CLI_EXIT_USAGE;
}

/* A time window asked for with options only a stable filter has. */
static int reject_stable_options(const dedup_options *opts)
{
    const char *option, *value;
    if (!dedup_stable_option_given(opts, &option, &value))
        return DEDUP_CONTINUE;
    cli_error(DEDUP_PROGRAM, "%s requires --stable", option);
    return CLI_EXIT_USAGE;
}

static int check_state(const dedup_options *opts, dedup_filter *filter)
{
    switch (filter->kind) {
    case DEDUP_COUNT_WINDOW:
        return check_count_state(opts, opts->state_path, filter->apbf);
    case DEDUP_TIME_WINDOW:
        return check_time_state(opts, opts->state_path, filter->tlbf);
    case DEDUP_TIMING:
        return dedup_check_timing_state(opts, opts->state_path, filter);
    default:
        return dedup_check_stable_state(opts, opts->state_path, filter);
    }
}

int dedup_open_filter(const dedup_options *opts, dedup_filter *filter)
{
    memset(filter, 0, sizeof *filter);
    int status = DEDUP_CONTINUE;
    if (opts->state_path != NULL)
        status = load_state(opts->state_path, filter);
    if (status != DEDUP_CONTINUE)
        return status;
    if (filter->loaded) {
        status = check_state(opts, filter);
    } else if (opts->stable.stable) {
        filter->kind = DEDUP_STABLE;
        status = dedup_create_stable(opts, filter);
    } else if (dedup_timing_requested(opts)) {
        filter->kind = DEDUP_TIMING;
        status = dedup_create_timing(opts, filter);
    } else if (opts->sizing.have_time_window) {
        filter->kind = DEDUP_TIME_WINDOW;
        status = reject_stable_options(opts);
        if (status == DEDUP_CONTINUE)
            status = create_time_filter(opts, &filter->tlbf);
    } else {
        filter->kind = DEDUP_COUNT_WINDOW;
        status = reject_time_options(opts);
        if (status == DEDUP_CONTINUE)
            status = create_count_filter(opts, &filter->apbf);
    }
    if (status != DEDUP_CONTINUE) {
        dedup_close_filter(filter);
        return status;
    }
    if (filter->kind == DEDUP_STABLE)
        status = dedup_prepare_stable(opts, filter);
    if (status != DEDUP_CONTINUE) {
        dedup_close_filter(filter);
        return status;
    }
    if (filter->kind == DEDUP_TIME_WINDOW) {
        ebb_tlbf_stats stats;
        ebb_tlbf_get_stats(filter->tlbf, &stats);
        filter->evicted_before = stats.evicted_slices;
        filter->evicts = stats.policy == EBB_TLBF_EVICT;
    }
    return DEDUP_CONTINUE;
}

void dedup_close_filter(dedup_filter *filter)
{
    ebb_apbf_destroy(filter->apbf);
    ebb_tlbf_destroy(filter->tlbf);
    ebb_stable_destroy(filter->stable);
    ebb_timing_destroy(filter->timing);
    free(filter->level_counts);
    filter->apbf = NULL;
    filter->tlbf = NULL;
    filter->stable = NULL;
    filter->timing = NULL;
    filter->level_counts = NULL;
}

static size_t snapshot_size(const dedup_filter *filter)
{
    switch (filter->kind) {
    case DEDUP_COUNT_WINDOW:
        return ebb_apbf_snapshot_size(filter->apbf);
    case DEDUP_TIME_WINDOW:
        return ebb_tlbf_snapshot_size(filter->tlbf);
    case DEDUP_TIMING:
        return ebb_timing_snapshot_size(filter->timing);
    default:
        return ebb_stable_snapshot_size(filter->stable);
    }
}

static ebb_status save_snapshot(const dedup_filter *filter,
                                unsigned char *bytes, size_t length)
{
    switch (filter->kind) {
    case DEDUP_COUNT_WINDOW:
        return ebb_apbf_save(filter->apbf, bytes, length, NULL);
    case DEDUP_TIME_WINDOW:
        return ebb_tlbf_save(filter->tlbf, bytes, length, NULL);
    case DEDUP_TIMING:
        return ebb_timing_save(filter->timing, bytes, length, NULL);
    default:
        return ebb_stable_save(filter->stable, bytes, length, NULL);
    }
}

static ebb_status snapshot_filter(const dedup_filter *filter,
                                  unsigned char **bytes, size_t *length)
{
    *length = snapshot_size(filter);
    *bytes = malloc(*length);
    if (*bytes == NULL)
        return EBB_ENOMEM;
    ebb_status status = save_snapshot(filter, *bytes, *length);
    if (status != EBB_OK) {
        free(*bytes);
        *bytes = NULL;
    }
    return status;
}

int dedup_save_filter(const char *path, const dedup_filter *filter)
{
    unsigned char *snapshot;
    size_t length;
    ebb_status status = snapshot_filter(filter, &snapshot, &length);
    return cli_save_snapshot(DEDUP_PROGRAM, path, snapshot, length, status);
}

/* ------------------------------------------------------------------------ */
/* --stats                                                                  */
/* ------------------------------------------------------------------------ */

/* The bit-sliced layout, its cells and their padding (nothing for the
 * ring, as the block lines are printed for blocked filters only). */
static void print_layout(const ebb_apbf_params *params)
{
    uint32_t padding_bits;
    uint64_t padding_bytes;
    if (params->layout != EBB_APBF_LAYOUT_SLICED ||
        ebb_apbf_layout_padding(params, &padding_bits, &padding_bytes) !=
            EBB_OK)
        return;
    fprintf(stderr,
            "layout: sliced\n"
            "cell bits: %" PRIu32 "\n"
            "padding bits per cell: %" PRIu32 "\n"
            "padding bytes: %" PRIu64 "\n",
            params->cell_bits, padding_bits, padding_bytes);
}

static void print_count_stats(const dedup_options *opts, const ebb_apbf *apbf,
                              const dedup_counts *counts, bool loaded)
{
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(apbf, &stats);
    bool blocked = stats.params.block_bits != 0;
    /* A loaded filter without --fp has no target of its own: report the
     * worst-case rate its shape guarantees. */
    double fp = opts->sizing.have_fp || !loaded
                    ? opts->sizing.fp
                : blocked ? ebb_apbf_shape_fp(&stats.params)
                          : ebb_apbf_fp(stats.params.k, stats.params.l);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "k: %" PRIu32 "\n"
            "l: %" PRIu32 "\n"
            "window: %" PRIu64 "\n"
            "memory bytes: %zu\n"
            "fp: %.10g\n",
            counts->lines_read, counts->lines_written, stats.params.k,
            stats.params.l, stats.params.window, stats.memory_bytes, fp);
    if (blocked)
        fprintf(stderr,
                "block bits: %" PRIu32 "\n"
                "block hashes: %" PRIu32 "\n",
                stats.params.block_bits, stats.params.block_hashes);
    print_layout(&stats.params);
    if (opts->skip_bad)
        fprintf(stderr, "bad lines: %" PRIu64 "\n", counts->bad_lines);
}

static void print_time_stats(const dedup_options *opts, const dedup_filter *f,
                             const dedup_counts *counts)
{
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(f->tlbf, &stats);
    double fp = opts->sizing.have_fp || !f->loaded ? opts->sizing.fp
                                            : ebb_apbf_fp(stats.k, stats.l);
    char span[32];
    cli_format_duration(stats.span_ns, span, sizeof span);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "k: %" PRIu32 "\n"
            "l: %" PRIu32 "\n"
            "span: %s\n"
            "slices: %" PRIu32 "\n"
            "memory bytes: %zu\n"
            "fp: %.10g\n"
            "current fp: %.10g\n"
            "clamped: %" PRIu64 "\n"
            "refused: %" PRIu64 "\n"
            "evicted slices: %" PRIu64 "\n"
            "bad lines: %" PRIu64 "\n",
            counts->lines_read, counts->lines_written, stats.k, stats.l, span,
            stats.slices, stats.memory_bytes, fp, stats.current_fp,
            counts->clamped, counts->refused,
            stats.evicted_slices - f->evicted_before, counts->bad_lines);
    /* Where a replay ended: the latest time the filter remembers. */
    if (stats.latest_ns == INT64_MIN)
        fprintf(stderr, "latest ns: none\n");
    else
        fprintf(stderr, "latest ns: %" PRId64 "\n", stats.latest_ns);
}

void dedup_print_stats(const dedup_options *opts, const dedup_filter *filter,
                       const dedup_counts *counts)
{
    if (filter->kind == DEDUP_COUNT_WINDOW)
        print_count_stats(opts, filter->apbf, counts, filter->loaded);
    else if (filter->kind == DEDUP_TIME_WINDOW)
        print_time_stats(opts, filter, counts);
    else if (filter->kind == DEDUP_TIMING)
        dedup_print_timing_stats(opts, filter, counts);
    else
        dedup_print_stable_stats(filter, counts);
}
