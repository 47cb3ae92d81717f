/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dedup_stable.c: the stable filter of `ebb dedup --stable`: created from
 * the options, checked against a loaded --state, and described by --stats.
 *
 * A stable filter has no window: it keeps m cells of d bits in fixed
 * memory and forgets at random (P cells decremented per line), so its
 * false-positive rate settles at the analysis' FPS however long the stream
 * (ebb/stable.h). With --importance-field the lines carry an importance
 * and the filter is one of the importance-aware variants: IBF-MC (a level
 * per importance, the default), IBF-2C (--importance-classes 2) or IBF-H
 * (--decrement weighted). Which K and P the memory buys, the level an
 * importance sets and the rates are the library's; this file only maps
 * options onto its calls.
 *
 * A stable state records everything the options describe (shape, variant,
 * draw, importance mapping and policy), so they may be left out when
 * continuing one; given, they must agree, as for the windows
 * (dedup_filter.c). --memory and --fp must make the chooser pick the
 * loaded shape. Only --importance-field, --key-field, --skip-bad and
 * --invert are free, and an importance-aware state needs an importance
 * field to read.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "dedup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dedup_window_option_given(const dedup_options *opts, const char **option,
                               const char **value)
{
    const cli_sizing_options *s = &opts->sizing;
    const struct {
        bool given;
        const char *option, *value;
    } window_options[] = {
        {s->have_window, "--window", s->window_text},
        {s->have_time_window, "--time-window", s->time_window_text},
        {s->have_max_npws, "--max-npws", s->max_npws_text},
        {s->have_max_accesses, "--max-accesses", s->max_accesses_text},
        {s->have_blocked, "--blocked", ""},
        {s->have_block_bits, "--block-bits", s->block_bits_text},
        {s->have_block_hashes, "--block-hashes", s->block_hashes_text},
        {s->have_layout, "--layout", s->layout_text},
        {s->have_rate, "--rate", s->rate_text},
        {opts->have_max_memory, "--max-memory", opts->max_memory_text},
        {opts->have_policy, "--policy", opts->policy_text},
        {opts->time_field != 0, "--time-field", opts->time_field_text},
        {opts->have_time_format, "--time-format", opts->time_format_text},
    };
    for (size_t i = 0; i < sizeof window_options / sizeof window_options[0];
         i++)
        if (window_options[i].given) {
            *option = window_options[i].option;
            *value = window_options[i].value;
            return true;
        }
    /* A timing filter's options (--k and --memory only once handed over
     * to it). */
    return cli_timing_option_given(&opts->timing, option, value);
}

bool dedup_stable_option_given(const dedup_options *opts, const char **option,
                               const char **value)
{
    if (opts->stable.stable) {
        *option = "--stable";
        *value = "";
        return true;
    }
    if (opts->importance_field != 0) {
        *option = "--importance-field";
        *value = opts->importance_field_text;
        return true;
    }
    return cli_stable_option_given(&opts->stable, option, value);
}

/* ------------------------------------------------------------------------ */
/* Creating                                                                 */
/* ------------------------------------------------------------------------ */

static int creation_failed(const dedup_options *opts, ebb_status status)
{
    const cli_stable_options *s = &opts->stable;
    if (status == EBB_ENOMEM) {
        cli_error(DEDUP_PROGRAM, "cannot allocate the filter: %s",
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    if (cli_stable_explicit_shape(s))
        cli_error(DEDUP_PROGRAM, "cannot build a stable filter of %" PRIu64
                  " cells of %" PRIu32 " bits with k %" PRIu32 " and p %"
                  PRIu32 ": %s", s->cells, s->cell_bits, s->k, s->p,
                  ebb_strerror(status));
    else
        cli_error(DEDUP_PROGRAM, "cannot build a stable filter in %zu bytes "
                  "with fp %g%s%s: %s", s->memory, opts->sizing.fp,
                  s->have_cell_bits ? " and cell bits " : "",
                  s->have_cell_bits ? s->cell_bits_text : "",
                  ebb_strerror(status));
    return CLI_EXIT_USAGE;
}

int dedup_create_stable(const dedup_options *opts, dedup_filter *filter)
{
    const cli_stable_options *s = &opts->stable;
    bool importance = opts->importance_field != 0;
    if (importance && !s->have_range) {
        cli_error(DEDUP_PROGRAM, "--importance-field requires "
                                 "--importance-range LOW:HIGH for a new "
                                 "filter");
        return CLI_EXIT_USAGE;
    }
    ebb_stable_variant variant = cli_stable_variant(s, importance);
    ebb_stable_params params;
    ebb_status status;
    if (cli_stable_explicit_shape(s)) {
        status = ebb_stable_params_init(s->cells, s->cell_bits, s->k, s->p,
                                        &params);
        params.variant = variant;
        params.draw = s->draw;
        params.importance = cli_stable_importance(s);
    } else {
        ebb_stable_goal goal = cli_stable_goal(s, opts->sizing.fp, variant,
                                               NULL);
        status = ebb_stable_choose(&goal, &params);
    }
    if (status == EBB_OK)
        status = ebb_stable_create(&params, DEDUP_SEED, &filter->stable);
    if (status != EBB_OK)
        return creation_failed(opts, status);
    return DEDUP_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* A loaded state against the options                                       */
/* ------------------------------------------------------------------------ */

/* The importance field and the variant options against the state's
 * variant. */
static int check_variant(const dedup_options *opts, const char *path,
                         const ebb_stable_params *loaded)
{
    const cli_stable_options *s = &opts->stable;
    const char *name = cli_stable_variant_name(loaded->variant);
    char what[64];
    snprintf(what, sizeof what, "variant %s", name);
    if (loaded->variant == EBB_STABLE_PLAIN) {
        if (opts->importance_field != 0)
            return dedup_disagrees("--importance-field",
                                   opts->importance_field_text, path,
                                   "a plain stable filter");
        return DEDUP_CONTINUE;
    }
    if (opts->importance_field == 0) {
        cli_error(DEDUP_PROGRAM, "the state in '%s' is an importance-aware "
                  "filter (%s): give --importance-field", path, name);
        return CLI_EXIT_USAGE;
    }
    bool two = loaded->variant == EBB_STABLE_IBF_2C;
    if (s->have_classes && (s->classes == CLI_CLASSES_TWO) != two)
        return dedup_disagrees("--importance-classes", s->classes_text, path,
                               what);
    if (s->have_decrement &&
        s->weighted != (loaded->variant == EBB_STABLE_IBF_H))
        return dedup_disagrees("--decrement", s->decrement_text, path, what);
    return DEDUP_CONTINUE;
}

/* --draw and the importance mapping. */
static int check_mapping(const dedup_options *opts, const char *path,
                         const ebb_stable_params *loaded)
{
    const cli_stable_options *s = &opts->stable;
    const ebb_stable_importance *imp = &loaded->importance;
    char what[96];
    if (s->have_draw && s->draw != loaded->draw) {
        snprintf(what, sizeof what, "draw %s",
                 cli_stable_draw_name(loaded->draw));
        return dedup_disagrees("--draw", s->draw_text, path, what);
    }
    if (s->have_range && (s->low != imp->low || s->high != imp->high)) {
        snprintf(what, sizeof what, "importance range %.17g:%.17g", imp->low,
                 imp->high);
        return dedup_disagrees("--importance-range", s->range_text, path,
                               what);
    }
    if (s->have_above && s->important_above != imp->threshold) {
        snprintf(what, sizeof what, "important above %.17g", imp->threshold);
        return dedup_disagrees("--important-above", s->above_text, path,
                               what);
    }
    if (s->have_policy && s->policy != imp->policy) {
        snprintf(what, sizeof what, "importance out of range: %s",
                 imp->policy == EBB_STABLE_REFUSE ? "refuse" : "clamp");
        return dedup_disagrees("--importance-out-of-range", s->policy_text,
                               path, what);
    }
    return DEDUP_CONTINUE;
}

static void describe_shape(const ebb_stable_params *p, char *out, size_t size)
{
    snprintf(out, size, "%" PRIu64 " cells of %" PRIu32 " bits, k %" PRIu32
             ", p %" PRIu32, p->cells, p->cell_bits, p->k, p->p);
}

/* The explicit shape options, and --memory and --fp through the chooser. */
static int check_shape(const dedup_options *opts, const char *path,
                       const ebb_stable_params *loaded)
{
    const cli_stable_options *s = &opts->stable;
    char what[128];
    describe_shape(loaded, what, sizeof what);
    if (s->have_cells && s->cells != loaded->cells)
        return dedup_disagrees("--cells", s->cells_text, path, what);
    if (s->have_cell_bits && s->cell_bits != loaded->cell_bits)
        return dedup_disagrees("--cell-bits", s->cell_bits_text, path, what);
    if (s->have_k && s->k != loaded->k)
        return dedup_disagrees("--k", s->k_text, path, what);
    if (s->have_p && s->p != loaded->p)
        return dedup_disagrees("--p", s->p_text, path, what);
    if (!s->have_memory && !opts->sizing.have_fp)
        return DEDUP_CONTINUE;

    /* What the chooser picks for these options and the loaded kind. */
    cli_stable_options wanted = *s;
    wanted.have_cell_bits = true;
    wanted.cell_bits = loaded->cell_bits;
    wanted.draw = loaded->draw;
    if (!s->have_memory)
        wanted.memory = (size_t)ebb_stable_cell_bytes(loaded->cells,
                                                      loaded->cell_bits);
    ebb_stable_goal goal = cli_stable_goal(&wanted, opts->sizing.fp,
                                           loaded->variant, NULL);
    goal.importance = loaded->importance;
    ebb_stable_params chosen;
    ebb_status status = ebb_stable_choose(&goal, &chosen);
    if (status == EBB_OK && chosen.cells == loaded->cells &&
        chosen.cell_bits == loaded->cell_bits && chosen.k == loaded->k &&
        chosen.p == loaded->p)
        return DEDUP_CONTINUE;
    if (s->have_memory && opts->sizing.have_fp) {
        char both[160];
        snprintf(both, sizeof both, "%s --fp %s", s->memory_text,
                 opts->sizing.fp_text);
        return dedup_disagrees("--memory", both, path, what);
    }
    if (s->have_memory)
        return dedup_disagrees("--memory", s->memory_text, path, what);
    return dedup_disagrees("--fp", opts->sizing.fp_text, path, what);
}

int dedup_check_stable_state(const dedup_options *opts, const char *path,
                             dedup_filter *filter)
{
    const char *option, *value;
    if (dedup_window_option_given(opts, &option, &value))
        return dedup_disagrees(option, value, path, "a stable filter");
    const ebb_stable_params *loaded = ebb_stable_get_params(filter->stable);
    int status = check_variant(opts, path, loaded);
    if (status == DEDUP_CONTINUE)
        status = check_mapping(opts, path, loaded);
    if (status == DEDUP_CONTINUE)
        status = check_shape(opts, path, loaded);
    return status;
}

/* ------------------------------------------------------------------------ */
/* --stats                                                                  */
/* ------------------------------------------------------------------------ */

int dedup_prepare_stable(const dedup_options *opts, dedup_filter *filter)
{
    if (!opts->stats)
        return DEDUP_CONTINUE;
    const ebb_stable_params *params = ebb_stable_get_params(filter->stable);
    ebb_stable_stats stats;
    ebb_stable_get_stats(filter->stable, &stats);
    filter->clamped_before = stats.clamped;
    if (params->variant == EBB_STABLE_PLAIN)
        return DEDUP_CONTINUE;
    filter->max_level = ebb_stable_max_level(params->cell_bits);
    filter->level_counts = calloc((size_t)filter->max_level + 1,
                                  sizeof *filter->level_counts);
    if (filter->level_counts == NULL) {
        cli_error(DEDUP_PROGRAM, "cannot allocate the level counts: %s",
                  ebb_strerror(EBB_ENOMEM));
        return CLI_EXIT_IO;
    }
    return DEDUP_CONTINUE;
}

/* The levels this run's lines set, as the analysis' level_probs; false
 * (the variant's default distribution) when none was added or the filter
 * is plain. probs has max_level + 1 entries. */
static bool observed_levels(const dedup_filter *filter, double *probs)
{
    if (filter->level_counts == NULL)
        return false;
    uint64_t total = 0;
    for (uint32_t v = 0; v <= filter->max_level; v++)
        total += filter->level_counts[v];
    if (total == 0)
        return false;
    for (uint32_t v = 0; v <= filter->max_level; v++)
        probs[v] = (double)filter->level_counts[v] / (double)total;
    return true;
}

/* The analysis for the levels of this run (or the default ones). */
static ebb_status analyse(const dedup_filter *filter,
                          ebb_stable_analysis *out)
{
    const ebb_stable_params *params = ebb_stable_get_params(filter->stable);
    double *probs = NULL;
    if (filter->level_counts != NULL) {
        probs = malloc(((size_t)filter->max_level + 1) * sizeof *probs);
        if (probs == NULL)
            return EBB_ENOMEM;
        if (!observed_levels(filter, probs)) {
            free(probs);
            probs = NULL;
        }
    }
    ebb_status status = ebb_stable_analyse(params, probs, out);
    free(probs);
    return status;
}

static void print_rate(const char *label, ebb_status status, double value)
{
    if (status == EBB_OK)
        fprintf(stderr, "%s: %.10g\n", label, value);
    else
        fprintf(stderr, "%s: n/a\n", label);
}

void dedup_print_stable_stats(const dedup_filter *filter,
                              const dedup_counts *counts)
{
    const ebb_stable_params *p = ebb_stable_get_params(filter->stable);
    ebb_stable_stats stats;
    ebb_stable_get_stats(filter->stable, &stats);
    ebb_stable_analysis analysis;
    ebb_status status = analyse(filter, &analysis);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "duplicates: %" PRIu64 "\n"
            "variant: %s\n"
            "draw: %s\n"
            "cells: %" PRIu64 "\n"
            "cell bits: %" PRIu32 "\n"
            "k: %" PRIu32 "\n"
            "p: %" PRIu32 "\n",
            counts->lines_read, counts->lines_written, counts->duplicates,
            cli_stable_variant_name(p->variant),
            cli_stable_draw_name(p->draw), p->cells, p->cell_bits, p->k,
            p->p);
    if (p->variant != EBB_STABLE_PLAIN)
        fprintf(stderr, "importance range: %.10g:%.10g\n",
                p->importance.low, p->importance.high);
    if (p->variant == EBB_STABLE_IBF_2C)
        fprintf(stderr, "important above: %.10g\n", p->importance.threshold);
    fprintf(stderr, "memory bytes: %zu\n"
                    "zero fraction: %.10g\n",
            ebb_stable_memory(filter->stable), stats.zero_fraction);
    print_rate("stable zero fraction", status, analysis.zero_fraction);
    print_rate("fps", status, analysis.fps);
    fprintf(stderr,
            "clamped: %" PRIu64 "\n"
            "refused: %" PRIu64 "\n"
            "bad lines: %" PRIu64 "\n",
            stats.clamped - filter->clamped_before, counts->refused,
            counts->bad_lines);
}
