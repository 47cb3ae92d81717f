/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params_stable.c: `ebb params --stable`, the stable filter `ebb dedup
 * --stable` builds (ebb/stable.h):
 *
 *   shape       (m, d, K, P) from ebb_stable_choose for --memory and --fp
 *               (d = --cell-bits or 3), or the explicit --cells,
 *               --cell-bits, --k and --p;
 *   memory      ebb_stable_cell_bytes(m, d), the cell storage;
 *   rates       ebb_stable_analyse: the stable fraction of zero cells V_0,
 *               FPS = (1 - V_0)^K (the rate at which a line never seen is
 *               dropped once the filter has settled) and the mean level;
 *   false negatives
 *               ebb_stable_fn_at_gap: the probability that a line whose
 *               previous occurrence was G lines ago is written again (not
 *               recognised), at the --gap values or m/16, m/4, m, 4m, for
 *               each class of level the variant sets: Max (plain),
 *               important Max and unimportant Half (IBF-2C), and the
 *               lowest, middle and highest level 1, (1 + Max) / 2 and Max
 *               (IBF-MC, IBF-H).
 *
 * The analysis weighs every line's level by a distribution: IBF-2C's is
 * --important-fraction F at Max and 1 - F at Half (F = 0.5 by default);
 * IBF-MC's and IBF-H's are the library's default, uniform over 1..Max. All
 * numbers come from the library; this file only parses and prints.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "params.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM PARAMS_PROGRAM
#define DEFAULT_IMPORTANT_FRACTION 0.5
#define MAX_CLASSES 3u

/* A class of items and the level they set. */
typedef struct level_class {
    const char *name;
    uint32_t level;
} level_class;

typedef struct stable_report {
    ebb_stable_params params;
    uint64_t memory_bytes;
    ebb_stable_analysis analysis;
    level_class classes[MAX_CLASSES];
    size_t class_count;
    uint64_t gaps[PARAMS_MAX_GAPS];
    size_t gap_count;
    double fn[MAX_CLASSES][PARAMS_MAX_GAPS];
} stable_report;

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

int params_stable_option(int option, const char *value, params_request *req)
{
    if (option == PARAMS_OPTION_IMPORTANT_FRACTION) {
        double fraction;
        if (!cli_parse_real(value, &fraction) || !(fraction >= 0.0) ||
            !(fraction <= 1.0))
            return cli_invalid_value(PROGRAM, "--important-fraction", value,
                                     "must be a number from 0 to 1");
        req->important_fraction = fraction;
        req->have_important_fraction = true;
        req->important_fraction_text = value;
        return -1;
    }
    uint64_t gap;
    cli_number parsed = cli_parse_positive_integer(value, &gap);
    if (parsed != CLI_NUMBER_OK)
        return cli_invalid_value(PROGRAM, "--gap", value,
                                 cli_positive_integer_requirement(parsed));
    if (req->gap_count == PARAMS_MAX_GAPS) {
        cli_error(PROGRAM, "at most %u --gap values", PARAMS_MAX_GAPS);
        return CLI_EXIT_USAGE;
    }
    req->gaps[req->gap_count++] = gap;
    return -1;
}

/* The first option given that describes a window, or NULL. */
static const char *window_option_given(const params_request *req)
{
    const cli_sizing_options *s = &req->sizing;
    const struct {
        bool given;
        const char *name;
    } window_options[] = {
        {s->have_window, "--window"},
        {req->have_l, "--l"},
        {req->have_fill, "--fill"},
        {s->have_time_window, "--time-window"},
        {s->have_rate, "--rate"},
        {s->have_max_npws, "--max-npws"},
    };
    for (size_t i = 0; i < sizeof window_options / sizeof window_options[0];
         i++)
        if (window_options[i].given)
            return window_options[i].name;
    return cli_blocked_option_given(s);
}

int params_check_stable_request(params_request *req)
{
    const char *option = window_option_given(req);
    if (option != NULL) {
        cli_error(PROGRAM, "%s cannot be combined with --stable", option);
        return CLI_EXIT_USAGE;
    }
    int status = cli_stable_parse_k(PROGRAM, &req->stable);
    if (status >= 0)
        return status;
    status = cli_stable_check(PROGRAM, &req->stable, req->sizing.have_fp);
    if (status >= 0)
        return status;
    if (req->have_important_fraction &&
        !(req->stable.have_classes &&
          req->stable.classes == CLI_CLASSES_TWO)) {
        cli_error(PROGRAM, "--important-fraction requires "
                           "--importance-classes 2");
        return CLI_EXIT_USAGE;
    }
    if (!cli_stable_explicit_shape(&req->stable) &&
        (!req->stable.have_memory || !req->sizing.have_fp)) {
        cli_error(PROGRAM, "give --memory and --fp, or --cells, --cell-bits, "
                           "--k and --p (run 'ebb params --help')");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* The report                                                               */
/* ------------------------------------------------------------------------ */

static bool importance_aware(const cli_stable_options *s)
{
    return s->have_classes || s->weighted;
}

/* The bits per cell the shape will have: the explicit ones, --cell-bits,
 * or the chooser's default (ebb_stable_goal_init). */
static uint32_t report_cell_bits(const cli_stable_options *s)
{
    ebb_stable_goal defaults;
    if (s->have_cell_bits)
        return s->cell_bits;
    if (ebb_stable_goal_init(1u << 20, 0.01, &defaults) != EBB_OK)
        return 3;
    return defaults.cell_bits;
}

/* IBF-2C's levels: the important fraction at Max, the rest at Half.
 * Other variants take the library's default (NULL). probs has room for
 * 2^16 entries. */
static const double *level_probs(const params_request *req,
                                 ebb_stable_variant variant, double *probs)
{
    if (variant != EBB_STABLE_IBF_2C)
        return NULL;
    uint32_t bits = report_cell_bits(&req->stable);
    uint32_t max = ebb_stable_max_level(bits);
    uint32_t half = ebb_stable_half_level(bits);
    double fraction = req->have_important_fraction
                          ? req->important_fraction
                          : DEFAULT_IMPORTANT_FRACTION;
    memset(probs, 0, ((size_t)max + 1) * sizeof *probs);
    probs[max] += fraction;
    probs[half] += 1.0 - fraction;
    return probs;
}

/* Returns -1 to go on, otherwise the exit status. */
static int choose_shape(const params_request *req, ebb_stable_variant variant,
                        const double *probs, ebb_stable_params *out)
{
    const cli_stable_options *s = &req->stable;
    ebb_status status;
    if (cli_stable_explicit_shape(s)) {
        status = ebb_stable_params_init(s->cells, s->cell_bits, s->k, s->p,
                                        out);
        out->variant = variant;
        out->draw = s->draw;
        if (status == EBB_OK)
            status = ebb_stable_params_check(out);
        if (status != EBB_OK) {
            cli_error(PROGRAM, "cannot describe a stable filter of %" PRIu64
                      " cells of %" PRIu32 " bits with k %" PRIu32
                      " and p %" PRIu32 ": %s", s->cells, s->cell_bits, s->k,
                      s->p, ebb_strerror(status));
            return CLI_EXIT_USAGE;
        }
        return -1;
    }
    ebb_stable_goal goal = cli_stable_goal(s, req->sizing.fp, variant, probs);
    status = ebb_stable_choose(&goal, out);
    if (status != EBB_OK) {
        cli_error(PROGRAM, "cannot size a stable filter for --memory %s "
                  "--fp %s%s%s: %s", s->memory_text, req->sizing.fp_text,
                  s->have_cell_bits ? " --cell-bits " : "",
                  s->have_cell_bits ? s->cell_bits_text : "",
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return -1;
}

static void set_classes(stable_report *r)
{
    uint32_t max = ebb_stable_max_level(r->params.cell_bits);
    switch (r->params.variant) {
    case EBB_STABLE_PLAIN:
        r->classes[0] = (level_class){"max", max};
        r->class_count = 1;
        break;
    case EBB_STABLE_IBF_2C:
        r->classes[0] = (level_class){"important", max};
        r->classes[1] = (level_class){
            "unimportant", ebb_stable_half_level(r->params.cell_bits)};
        r->class_count = 2;
        break;
    default:
        r->classes[0] = (level_class){"lowest", 1};
        r->classes[1] = (level_class){"middle", (1 + max) / 2};
        r->classes[2] = (level_class){"highest", max};
        r->class_count = 3;
        break;
    }
}

static void set_gaps(const params_request *req, stable_report *r)
{
    if (req->gap_count > 0) {
        memcpy(r->gaps, req->gaps, req->gap_count * sizeof req->gaps[0]);
        r->gap_count = req->gap_count;
        return;
    }
    uint64_t m = r->params.cells;
    uint64_t defaults[4] = {m / 16, m / 4, m,
                            m <= UINT64_MAX / 4 ? 4 * m : UINT64_MAX};
    for (size_t i = 0; i < 4; i++)
        r->gaps[i] = defaults[i] > 0 ? defaults[i] : 1;
    r->gap_count = 4;
}

static int analysis_failed(const char *what, ebb_status status)
{
    cli_error(PROGRAM, "cannot compute the %s: %s", what,
              ebb_strerror(status));
    return CLI_EXIT_IO;
}

/* Returns -1 to go on, otherwise the exit status. */
static int build_report(const params_request *req, stable_report *r)
{
    static double probs_storage[1u << EBB_STABLE_MAX_CELL_BITS];
    ebb_stable_variant variant =
        cli_stable_variant(&req->stable, importance_aware(&req->stable));
    const double *probs = level_probs(req, variant, probs_storage);
    int result = choose_shape(req, variant, probs, &r->params);
    if (result >= 0)
        return result;
    r->memory_bytes =
        ebb_stable_cell_bytes(r->params.cells, r->params.cell_bits);
    ebb_status status = ebb_stable_analyse(&r->params, probs, &r->analysis);
    if (status != EBB_OK)
        return analysis_failed("stable state", status);
    set_classes(r);
    set_gaps(req, r);
    for (size_t c = 0; c < r->class_count; c++)
        for (size_t g = 0; g < r->gap_count; g++) {
            status = ebb_stable_fn_at_gap(&r->params, probs,
                                          r->classes[c].level, r->gaps[g],
                                          &r->fn[c][g]);
            if (status != EBB_OK)
                return analysis_failed("false negatives", status);
            if (!isfinite(r->fn[c][g]))
                return analysis_failed("false negatives", EBB_EINVAL);
        }
    if (!isfinite(r->analysis.zero_fraction) || !isfinite(r->analysis.fps) ||
        !isfinite(r->analysis.mean_level))
        return analysis_failed("stable state", EBB_EINVAL);
    return -1;
}

static void print_json(const stable_report *r)
{
    const ebb_stable_params *p = &r->params;
    printf("{\"variant\": \"%s\", \"draw\": \"%s\", \"cells\": %" PRIu64
           ", \"cell_bits\": %" PRIu32 ", \"k\": %" PRIu32 ", \"p\": %" PRIu32
           ", \"memory_bytes\": %" PRIu64 ", \"zero_fraction\": %.10g"
           ", \"fps\": %.10g, \"mean_level\": %.10g, \"fn\": [",
           cli_stable_variant_name(p->variant), cli_stable_draw_name(p->draw),
           p->cells, p->cell_bits, p->k, p->p, r->memory_bytes,
           r->analysis.zero_fraction, r->analysis.fps,
           r->analysis.mean_level);
    const char *separator = "";
    for (size_t c = 0; c < r->class_count; c++)
        for (size_t g = 0; g < r->gap_count; g++) {
            printf("%s{\"class\": \"%s\", \"level\": %" PRIu32
                   ", \"gap\": %" PRIu64 ", \"probability\": %.10g}",
                   separator, r->classes[c].name, r->classes[c].level,
                   r->gaps[g], r->fn[c][g]);
            separator = ", ";
        }
    printf("]}\n");
}

static void print_human(const stable_report *r)
{
    const ebb_stable_params *p = &r->params;
    printf("variant:         %s\n", cli_stable_variant_name(p->variant));
    printf("draw:            %s\n", cli_stable_draw_name(p->draw));
    printf("cells:           %" PRIu64 "\n", p->cells);
    printf("cell bits:       %" PRIu32 "\n", p->cell_bits);
    printf("k:               %" PRIu32 "\n", p->k);
    printf("p:               %" PRIu32 "\n", p->p);
    printf("memory bytes:    %" PRIu64 "\n", r->memory_bytes);
    printf("zero fraction:   %.10g\n", r->analysis.zero_fraction);
    printf("fps:             %.10g\n", r->analysis.fps);
    printf("mean level:      %.10g\n", r->analysis.mean_level);
    printf("false negatives (a repeat G lines after its last occurrence "
           "written again):\n");
    /* Columns of 22 characters; the last one unpadded. */
    printf("  %-14s", "gap G");
    for (size_t c = 0; c < r->class_count; c++) {
        char heading[48];
        snprintf(heading, sizeof heading, "%s (level %" PRIu32 ")",
                 r->classes[c].name, r->classes[c].level);
        printf(" %-*s", c + 1 < r->class_count ? 22 : 0, heading);
    }
    printf("\n");
    for (size_t g = 0; g < r->gap_count; g++) {
        printf("  %-14" PRIu64, r->gaps[g]);
        for (size_t c = 0; c < r->class_count; c++)
            printf(" %-*.10g", c + 1 < r->class_count ? 22 : 0,
                   r->fn[c][g]);
        printf("\n");
    }
}

int params_stable(const params_request *req)
{
    static stable_report report;
    int status = build_report(req, &report);
    if (status >= 0)
        return status;
    if (req->json)
        print_json(&report);
    else
        print_human(&report);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(PROGRAM, "write error: %s", strerror(errno));
        return CLI_EXIT_IO;
    }
    return CLI_EXIT_OK;
}
