/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stable_options.c: the options of stable filters that `ebb dedup` and
 * `ebb params` share (stable_options.h). One place, so that the two
 * subcommands cannot drift apart in what they accept or how they say no.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "stable_options.h"

#include "common.h"
#include "units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_stable_defaults(cli_stable_options *stable)
{
    memset(stable, 0, sizeof *stable);
    stable->memory = CLI_STABLE_DEFAULT_MEMORY;
    stable->draw = EBB_STABLE_DRAW_CONSECUTIVE;
    stable->classes = CLI_CLASSES_LEVELS;
    stable->policy = EBB_STABLE_CLAMP;
}

bool cli_is_stable_option(int option)
{
    return option >= CLI_STABLE_OPTION_STABLE &&
           option < CLI_STABLE_OPTION_LAST;
}

/* An integer from 1 to max, or the usage error naming option. */
static int parse_bounded(const char *program, const char *option,
                         const char *text, uint64_t max, uint64_t *out)
{
    uint64_t value;
    if (cli_parse_positive_integer(text, &value) != CLI_NUMBER_OK ||
        value > max) {
        char requirement[64];
        snprintf(requirement, sizeof requirement,
                 "must be an integer from 1 to %" PRIu64, max);
        return cli_invalid_value(program, option, text, requirement);
    }
    *out = value;
    return CLI_CONTINUE;
}

static int parse_u32(const char *program, const char *option,
                     const char *text, uint32_t max, uint32_t *out)
{
    uint64_t value = 0;
    int status = parse_bounded(program, option, text, max, &value);
    if (status == CLI_CONTINUE)
        *out = (uint32_t)value;
    return status;
}

/* LOW:HIGH, two finite decimal numbers with LOW < HIGH. */
static int parse_range(const char *program, const char *text,
                       cli_stable_options *stable)
{
    const char *colon = strchr(text, ':');
    char *low_text = colon != NULL ? strndup(text, (size_t)(colon - text))
                                   : NULL;
    bool ok = low_text != NULL && cli_parse_real(low_text, &stable->low) &&
              cli_parse_real(colon + 1, &stable->high) &&
              stable->low < stable->high;
    free(low_text);
    if (!ok)
        return cli_invalid_value(program, "--importance-range", text,
                                 "must be LOW:HIGH, two numbers with "
                                 "LOW < HIGH");
    stable->have_range = true;
    stable->range_text = text;
    return CLI_CONTINUE;
}

/* --stable, --memory, --cells, --cell-bits, --k, --p. */
static int apply_shape_option(const char *program, int option,
                              const char *value, cli_stable_options *stable)
{
    cli_number parsed;
    switch (option) {
    case CLI_STABLE_OPTION_STABLE:
        stable->stable = true;
        return CLI_CONTINUE;
    case CLI_STABLE_OPTION_MEMORY:
        parsed = cli_parse_byte_size(value, &stable->memory);
        if (parsed != CLI_NUMBER_OK)
            return cli_invalid_value(program, "--memory", value,
                                     cli_byte_size_requirement(parsed));
        stable->have_memory = true;
        stable->memory_text = value;
        return CLI_CONTINUE;
    case CLI_STABLE_OPTION_CELLS:
        stable->have_cells = true;
        stable->cells_text = value;
        return parse_bounded(program, "--cells", value, EBB_STABLE_MAX_CELLS,
                             &stable->cells);
    case CLI_STABLE_OPTION_CELL_BITS:
        stable->have_cell_bits = true;
        stable->cell_bits_text = value;
        return parse_u32(program, "--cell-bits", value,
                         EBB_STABLE_MAX_CELL_BITS, &stable->cell_bits);
    case CLI_STABLE_OPTION_K:
        stable->have_k = true;
        stable->k_text = value;
        return CLI_CONTINUE;
    default: /* CLI_STABLE_OPTION_P */
        stable->have_p = true;
        stable->p_text = value;
        return parse_u32(program, "--p", value, UINT32_MAX, &stable->p);
    }
}

/* --draw, --importance-classes, --decrement. */
static int apply_kind_option(const char *program, int option,
                             const char *value, cli_stable_options *stable)
{
    switch (option) {
    case CLI_STABLE_OPTION_DRAW:
        if (strcmp(value, "independent") == 0)
            stable->draw = EBB_STABLE_DRAW_INDEPENDENT;
        else if (strcmp(value, "consecutive") == 0)
            stable->draw = EBB_STABLE_DRAW_CONSECUTIVE;
        else
            return cli_invalid_value(program, "--draw", value,
                                     "must be independent or consecutive");
        stable->have_draw = true;
        stable->draw_text = value;
        return CLI_CONTINUE;
    case CLI_STABLE_OPTION_CLASSES:
        if (strcmp(value, "2") == 0)
            stable->classes = CLI_CLASSES_TWO;
        else if (strcmp(value, "levels") == 0)
            stable->classes = CLI_CLASSES_LEVELS;
        else
            return cli_invalid_value(program, "--importance-classes", value,
                                     "must be 2 or levels");
        stable->have_classes = true;
        stable->classes_text = value;
        return CLI_CONTINUE;
    default: /* CLI_STABLE_OPTION_DECREMENT */
        if (strcmp(value, "weighted") == 0)
            stable->weighted = true;
        else if (strcmp(value, "uniform") == 0)
            stable->weighted = false;
        else
            return cli_invalid_value(program, "--decrement", value,
                                     "must be uniform or weighted");
        stable->have_decrement = true;
        stable->decrement_text = value;
        return CLI_CONTINUE;
    }
}

/* --importance-range, --important-above, --importance-out-of-range. */
static int apply_importance_option(const char *program, int option,
                                   const char *value,
                                   cli_stable_options *stable)
{
    switch (option) {
    case CLI_STABLE_OPTION_RANGE:
        return parse_range(program, value, stable);
    case CLI_STABLE_OPTION_ABOVE:
        if (!cli_parse_real(value, &stable->important_above))
            return cli_invalid_value(program, "--important-above", value,
                                     "must be a number");
        stable->have_above = true;
        stable->above_text = value;
        return CLI_CONTINUE;
    default: /* CLI_STABLE_OPTION_OUT_OF_RANGE */
        if (strcmp(value, "clamp") == 0)
            stable->policy = EBB_STABLE_CLAMP;
        else if (strcmp(value, "refuse") == 0)
            stable->policy = EBB_STABLE_REFUSE;
        else
            return cli_invalid_value(program, "--importance-out-of-range",
                                     value, "must be clamp or refuse");
        stable->have_policy = true;
        stable->policy_text = value;
        return CLI_CONTINUE;
    }
}

int cli_apply_stable_option(const char *program, int option,
                            const char *value, cli_stable_options *stable)
{
    switch (option) {
    case CLI_STABLE_OPTION_STABLE:
    case CLI_STABLE_OPTION_MEMORY:
    case CLI_STABLE_OPTION_CELLS:
    case CLI_STABLE_OPTION_CELL_BITS:
    case CLI_STABLE_OPTION_K:
    case CLI_STABLE_OPTION_P:
        return apply_shape_option(program, option, value, stable);
    case CLI_STABLE_OPTION_DRAW:
    case CLI_STABLE_OPTION_CLASSES:
    case CLI_STABLE_OPTION_DECREMENT:
        return apply_kind_option(program, option, value, stable);
    default:
        return apply_importance_option(program, option, value, stable);
    }
}

int cli_stable_parse_k(const char *program, cli_stable_options *stable)
{
    if (!stable->have_k)
        return CLI_CONTINUE;
    return parse_u32(program, "--k", stable->k_text, EBB_STABLE_MAX_K,
                     &stable->k);
}

const char *cli_stable_shape_option(const cli_stable_options *stable)
{
    if (stable->have_cells)
        return "--cells";
    if (stable->have_cell_bits)
        return "--cell-bits";
    if (stable->have_k)
        return "--k";
    if (stable->have_p)
        return "--p";
    return NULL;
}

bool cli_stable_explicit_shape(const cli_stable_options *stable)
{
    return stable->have_cells || stable->have_k || stable->have_p;
}

bool cli_stable_option_given(const cli_stable_options *stable,
                             const char **option, const char **value)
{
    const struct {
        bool given;
        const char *option, *value;
    } options[] = {
        {stable->have_memory, "--memory", stable->memory_text},
        {stable->have_cells, "--cells", stable->cells_text},
        {stable->have_cell_bits, "--cell-bits", stable->cell_bits_text},
        {stable->have_k, "--k", stable->k_text},
        {stable->have_p, "--p", stable->p_text},
        {stable->have_draw, "--draw", stable->draw_text},
        {stable->have_classes, "--importance-classes", stable->classes_text},
        {stable->have_decrement, "--decrement", stable->decrement_text},
        {stable->have_range, "--importance-range", stable->range_text},
        {stable->have_above, "--important-above", stable->above_text},
        {stable->have_policy, "--importance-out-of-range",
         stable->policy_text},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (options[i].given) {
            *option = options[i].option;
            *value = options[i].value;
            return true;
        }
    return false;
}

static int usage(const char *program, const char *message)
{
    cli_error(program, "%s", message);
    return CLI_EXIT_USAGE;
}

int cli_stable_check(const char *program, const cli_stable_options *stable,
                     bool have_fp)
{
    if (cli_stable_explicit_shape(stable)) {
        if (!stable->have_cells || !stable->have_cell_bits ||
            !stable->have_k || !stable->have_p)
            return usage(program, "--cells, --cell-bits, --k and --p must "
                                  "be given together");
        if (stable->have_memory)
            return usage(program, "--memory cannot be combined with "
                                  "--cells, --cell-bits, --k and --p");
        if (have_fp)
            return usage(program, "--fp cannot be combined with --cells, "
                                  "--cell-bits, --k and --p");
    }
    if (stable->weighted && stable->have_classes &&
        stable->classes == CLI_CLASSES_TWO)
        return usage(program, "--decrement weighted cannot be combined "
                              "with --importance-classes 2");
    if (stable->have_above &&
        !(stable->have_classes && stable->classes == CLI_CLASSES_TWO))
        return usage(program, "--important-above requires "
                              "--importance-classes 2");
    return CLI_CONTINUE;
}

ebb_stable_variant cli_stable_variant(const cli_stable_options *stable,
                                      bool importance)
{
    if (!importance)
        return EBB_STABLE_PLAIN;
    if (stable->classes == CLI_CLASSES_TWO)
        return EBB_STABLE_IBF_2C;
    return stable->weighted ? EBB_STABLE_IBF_H : EBB_STABLE_IBF_MC;
}

const char *cli_stable_variant_name(ebb_stable_variant variant)
{
    switch (variant) {
    case EBB_STABLE_PLAIN:
        return "plain";
    case EBB_STABLE_IBF_2C:
        return "ibf-2c";
    case EBB_STABLE_IBF_MC:
        return "ibf-mc";
    default:
        return "ibf-h";
    }
}

const char *cli_stable_draw_name(ebb_stable_draw draw)
{
    return draw == EBB_STABLE_DRAW_INDEPENDENT ? "independent"
                                               : "consecutive";
}

ebb_stable_importance cli_stable_importance(const cli_stable_options *stable)
{
    ebb_stable_importance importance = {0.0, 1.0, 0.5, stable->policy};
    if (stable->have_range) {
        importance.low = stable->low;
        importance.high = stable->high;
        importance.threshold = stable->low / 2 + stable->high / 2;
    }
    if (stable->have_above)
        importance.threshold = stable->important_above;
    return importance;
}

ebb_stable_goal cli_stable_goal(const cli_stable_options *stable, double fp,
                                ebb_stable_variant variant,
                                const double *level_probs)
{
    ebb_stable_goal goal;
    if (ebb_stable_goal_init(stable->memory, fp, &goal) != EBB_OK)
        memset(&goal, 0, sizeof goal); /* choose refuses it, with a message */
    goal.memory_bytes = stable->memory;
    goal.fp = fp;
    if (stable->have_cell_bits)
        goal.cell_bits = stable->cell_bits;
    goal.variant = variant;
    goal.draw = stable->draw;
    goal.importance = cli_stable_importance(stable);
    goal.level_probs = level_probs;
    return goal;
}
