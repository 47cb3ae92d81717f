/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing_options.c: the options of timing filters that `ebb dedup
 * --timing`, `ebb recent` and `ebb params --timing` share
 * (timing_options.h). One place, so that the three cannot drift apart in
 * what they accept, which shape they build or how they say no.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "timing_options.h"

#include "common.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

bool cli_is_timing_option(int option)
{
    return option >= CLI_TIMING_OPTION_TIMING &&
           option < CLI_TIMING_OPTION_LAST;
}

int cli_apply_timing_option(const char *program, int option,
                            const char *value, cli_timing_options *timing)
{
    cli_number parsed;
    switch (option) {
    case CLI_TIMING_OPTION_TIMING:
        timing->timing = true;
        return CLI_CONTINUE;
    case CLI_TIMING_OPTION_BITS_PER_ITEM:
        timing->have_bits_per_item = true;
        timing->bits_per_item_text = value;
        return cli_parse_positive_real(program, "--bits-per-item", value,
                                       &timing->bits_per_item);
    case CLI_TIMING_OPTION_K:
        cli_timing_take_k(timing, true, value);
        return CLI_CONTINUE;
    default: /* CLI_TIMING_OPTION_MEMORY */
        parsed = cli_parse_byte_size(value, &timing->memory);
        if (parsed != CLI_NUMBER_OK)
            return cli_invalid_value(program, "--memory", value,
                                     cli_byte_size_requirement(parsed));
        timing->have_memory = true;
        timing->memory_text = value;
        return CLI_CONTINUE;
    }
}

void cli_timing_take_k(cli_timing_options *timing, bool have_k,
                       const char *k_text)
{
    timing->have_k = have_k;
    timing->k_text = k_text;
}

void cli_timing_take_memory(cli_timing_options *timing, bool have_memory,
                            size_t memory, const char *memory_text)
{
    timing->have_memory = have_memory;
    timing->memory = memory;
    timing->memory_text = memory_text;
}

static int usage(const char *program, const char *message)
{
    cli_error(program, "%s", message);
    return CLI_EXIT_USAGE;
}

int cli_timing_check(const char *program, cli_timing_options *timing,
                     bool have_fp)
{
    if (timing->have_k) {
        uint64_t k;
        if (cli_parse_positive_integer(timing->k_text, &k) != CLI_NUMBER_OK ||
            k > EBB_TIMING_MAX_K) {
            char requirement[64];
            snprintf(requirement, sizeof requirement,
                     "must be an integer from 1 to %u", EBB_TIMING_MAX_K);
            return cli_invalid_value(program, "--k", timing->k_text,
                                     requirement);
        }
        timing->k = (uint32_t)k;
    }
    if (timing->have_bits_per_item && timing->have_memory)
        return usage(program, "--bits-per-item cannot be combined with "
                              "--memory");
    if (timing->have_bits_per_item && have_fp)
        return usage(program, "--bits-per-item cannot be combined with --fp");
    if (timing->have_memory && have_fp)
        return usage(program, "--memory cannot be combined with --fp");
    if (timing->have_k && !timing->have_bits_per_item)
        return usage(program, "--k requires --bits-per-item");
    return CLI_CONTINUE;
}

bool cli_timing_option_given(const cli_timing_options *timing,
                             const char **option, const char **value)
{
    const struct {
        bool given;
        const char *option, *value;
    } options[] = {
        {timing->timing, "--timing", ""},
        {timing->have_bits_per_item, "--bits-per-item",
         timing->bits_per_item_text},
        {timing->have_k, "--k", timing->k_text},
        {timing->have_memory, "--memory", timing->memory_text},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (options[i].given) {
            *option = options[i].option;
            *value = options[i].value;
            return true;
        }
    return false;
}

/* The paper's rule at bpi bits per item: with k given, its shape; without,
 * the k in 1..EBB_TIMING_MAX_K of lowest analytic rate (the smallest on a
 * tie). */
static ebb_status choose_paper(uint64_t window, double bpi, bool have_k,
                               uint32_t k, ebb_timing_params *out)
{
    if (have_k)
        return ebb_timing_choose_paper(window, bpi, k, out);
    bool found = false;
    double best_fp = 0.0;
    for (uint32_t candidate = 1; candidate <= EBB_TIMING_MAX_K; candidate++) {
        ebb_timing_params p;
        if (ebb_timing_choose_paper(window, bpi, candidate, &p) != EBB_OK)
            continue;
        double fp = ebb_timing_fp(&p);
        if (!isfinite(fp))
            continue;
        if (!found || fp < best_fp) {
            *out = p;
            best_fp = fp;
            found = true;
        }
    }
    return found ? EBB_OK : EBB_EINVAL;
}

static ebb_status choose(const cli_timing_options *timing,
                         const cli_sizing_options *sizing, uint64_t window,
                         ebb_timing_params *out)
{
    if (timing->have_bits_per_item)
        return choose_paper(window, timing->bits_per_item, timing->have_k,
                            timing->k, out);
    if (timing->have_memory)
        return ebb_timing_choose(window, timing->memory, 0.0, out);
    return ebb_timing_choose(window, 0, sizing->fp, out);
}

/* "--bits-per-item 8 --k 4", "--memory 1M", "--fp 0.01": the options that
 * chose the shape, for messages. */
static void describe_sizing(const cli_timing_options *timing,
                            const cli_sizing_options *sizing, char *out,
                            size_t size)
{
    if (timing->have_bits_per_item)
        snprintf(out, size, "--bits-per-item %s%s%s",
                 timing->bits_per_item_text, timing->have_k ? " --k " : "",
                 timing->have_k ? timing->k_text : "");
    else if (timing->have_memory)
        snprintf(out, size, "--memory %s", timing->memory_text);
    else if (sizing->have_fp)
        snprintf(out, size, "--fp %s", sizing->fp_text);
    else
        snprintf(out, size, "--fp %g", sizing->fp);
}

int cli_timing_choose(const char *program, const cli_timing_options *timing,
                      const cli_sizing_options *sizing, uint64_t window,
                      ebb_timing_params *out)
{
    ebb_status status = choose(timing, sizing, window, out);
    if (status == EBB_OK)
        return CLI_CONTINUE;
    char options[160];
    describe_sizing(timing, sizing, options, sizeof options);
    cli_error(program, "cannot size a timing filter for --window %" PRIu64
              " %s: %s", window, options,
              "no shape fits (too few bits per item for k, too little "
              "memory, or a window too large)");
    return CLI_EXIT_USAGE;
}

static void describe_shape(const ebb_timing_params *p, char *out, size_t size)
{
    snprintf(out, size, "window %" PRIu64 ", %" PRIu64 " timers of %" PRIu32
             " bits, k %" PRIu32 ", block %" PRIu64 ", padding %" PRIu64,
             p->window, p->timers, p->timer_bits, p->k, p->block, p->padding);
}

static bool same_shape(const ebb_timing_params *a, const ebb_timing_params *b)
{
    return a->window == b->window && a->timers == b->timers && a->k == b->k &&
           a->timer_bits == b->timer_bits && a->block == b->block &&
           a->padding == b->padding;
}

int cli_timing_check_state(const char *program,
                           const cli_timing_options *timing,
                           const cli_sizing_options *sizing, const char *path,
                           const ebb_timing_params *loaded)
{
    char what[160];
    describe_shape(loaded, what, sizeof what);
    if (sizing->have_window && sizing->window != loaded->window)
        return cli_disagrees(program, "--window", sizing->window_text, path,
                             what);
    if (!timing->have_bits_per_item && !timing->have_memory &&
        !sizing->have_fp)
        return CLI_CONTINUE;
    ebb_timing_params wanted;
    if (choose(timing, sizing, loaded->window, &wanted) == EBB_OK &&
        same_shape(&wanted, loaded))
        return CLI_CONTINUE;
    if (timing->have_bits_per_item) {
        char both[96];
        snprintf(both, sizeof both, "%s%s%s", timing->bits_per_item_text,
                 timing->have_k ? " --k " : "",
                 timing->have_k ? timing->k_text : "");
        return cli_disagrees(program, "--bits-per-item", both, path, what);
    }
    if (timing->have_memory)
        return cli_disagrees(program, "--memory", timing->memory_text, path,
                             what);
    return cli_disagrees(program, "--fp", sizing->fp_text, path, what);
}

/* Spaces after "label:" so that the value starts at column width (at
 * least one). */
static int label_pad(const char *label, int width)
{
    int pad = width - (int)strlen(label) - 1;
    return pad > 1 ? pad : 1;
}

bool cli_timing_print_shape(FILE *out, const ebb_timing_params *params,
                            size_t memory_bytes, int width)
{
    ebb_timing_shape shape;
    if (ebb_timing_describe(params, &shape) != EBB_OK)
        return false;
    double fp = ebb_timing_fp(params);
    const struct {
        const char *label;
        uint64_t value;
    } counts[] = {
        {"window", params->window},
        {"timers", params->timers},
        {"k", params->k},
        {"timer bits", params->timer_bits},
        {"block", params->block},
        {"padding", params->padding},
        {"t omega", shape.t_omega},
        {"sweep per insertion", shape.sweep_per_add},
        {"memory bytes", memory_bytes},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        fprintf(out, "%s:%*s%" PRIu64 "\n", counts[i].label,
                label_pad(counts[i].label, width), "", counts[i].value);
    fprintf(out, "bits per item:%*s%.10g\n", label_pad("bits per item", width),
            "", shape.bits_per_item);
    fprintf(out, "fp:%*s%.10g\n", label_pad("fp", width), "", fp);
    return true;
}
