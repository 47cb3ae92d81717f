/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params_timing.c: `ebb params --timing --window N (--bits-per-item X
 * [--k K] | --memory SIZE | --fp P)`, the Block Timing Bloom filter that
 * `ebb dedup --timing` and `ebb recent` build (ebb/timing.h):
 *
 *   shape   (m, k, bpt, B, P) from the shared chooser (timing_options.c):
 *           the paper's rule at X bits per item (with --k, or the k of
 *           lowest rate), the lowest rate in SIZE bytes, or the least
 *           memory for the rate P;
 *   derived ebb_timing_describe: T_Omega, the timers the sweep examines
 *           per insertion, the timers' memory and the bits per item;
 *   fp      ebb_timing_fp: the analytic false-positive rate of the
 *           standard query for a line not among the last N.
 *
 * All numbers come from the library; this file only checks the options
 * and prints.
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
#include <string.h>

#define PROGRAM PARAMS_PROGRAM

/* The value column of the human output: after "sweep per insertion: ". */
#define HUMAN_WIDTH 22

bool params_timing_requested(const params_request *req)
{
    return req->timing.timing || req->timing.have_bits_per_item;
}

const char *params_foreign_option_given(const params_request *req,
                                        bool window_too)
{
    const cli_sizing_options *s = &req->sizing;
    const char *option, *value;
    if (cli_stable_option_given(&req->stable, &option, &value))
        return option;
    const struct {
        bool given;
        const char *name;
    } others[] = {
        {req->have_important_fraction, "--important-fraction"},
        {req->gap_count > 0, "--gap"},
        {req->have_l, "--l"},
        {req->have_fill, "--fill"},
        {window_too && s->have_window, "--window"},
        {window_too && s->have_fp, "--fp"},
        {s->have_max_npws, "--max-npws"},
        {s->have_time_window, "--time-window"},
        {s->have_rate, "--rate"},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (others[i].given)
            return others[i].name;
    return cli_blocked_option_given(s);
}

/* The first option given that a timing filter does not take, or NULL. */
static const char *other_option_given(const params_request *req)
{
    if (req->stable.stable)
        return "--stable";
    return params_foreign_option_given(req, false);
}

int params_check_timing_request(params_request *req)
{
    cli_timing_take_k(&req->timing, req->have_k, req->k_text);
    cli_timing_take_memory(&req->timing, req->stable.have_memory,
                           req->stable.memory, req->stable.memory_text);
    req->have_k = false;
    req->stable.have_memory = false;
    const char *option = other_option_given(req);
    if (option != NULL) {
        cli_error(PROGRAM, "%s cannot be combined with --timing", option);
        return CLI_EXIT_USAGE;
    }
    int status = cli_timing_check(PROGRAM, &req->timing, req->sizing.have_fp);
    if (status >= 0)
        return status;
    const cli_timing_options *t = &req->timing;
    if (!req->sizing.have_window ||
        !(t->have_bits_per_item || t->have_memory || req->sizing.have_fp)) {
        cli_error(PROGRAM, "give --window and one of --bits-per-item, "
                           "--memory or --fp (run 'ebb params --help')");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

static void print_json(const ebb_timing_params *p, const ebb_timing_shape *s,
                       double fp)
{
    printf("{\"window\": %" PRIu64 ", \"timers\": %" PRIu64 ", \"k\": %" PRIu32
           ", \"timer_bits\": %" PRIu32 ", \"block\": %" PRIu64
           ", \"padding\": %" PRIu64 ", \"t_omega\": %" PRIu64
           ", \"sweep_per_add\": %" PRIu64 ", \"memory_bytes\": %" PRIu64
           ", \"bits_per_item\": %.10g, \"fp\": %.10g}\n",
           p->window, p->timers, p->k, p->timer_bits, p->block, p->padding,
           s->t_omega, s->sweep_per_add, s->memory_bytes, s->bits_per_item,
           fp);
}

int params_timing(const params_request *req)
{
    ebb_timing_params params;
    int status = cli_timing_choose(PROGRAM, &req->timing, &req->sizing,
                                   req->sizing.window, &params);
    if (status >= 0)
        return status;
    ebb_timing_shape shape;
    double fp = ebb_timing_fp(&params);
    if (ebb_timing_describe(&params, &shape) != EBB_OK || !isfinite(fp) ||
        !isfinite(shape.bits_per_item)) {
        cli_error(PROGRAM, "the library refused the shape it chose for "
                  "--window %" PRIu64, req->sizing.window);
        return CLI_EXIT_IO;
    }
    if (req->json)
        print_json(&params, &shape, fp);
    else
        cli_timing_print_shape(stdout, &params, shape.memory_bytes,
                               HUMAN_WIDTH);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(PROGRAM, "write error: %s", strerror(errno));
        return CLI_EXIT_IO;
    }
    return CLI_EXIT_OK;
}
