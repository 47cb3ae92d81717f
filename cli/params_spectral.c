/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params_spectral.c: `ebb params --spectral [--method ms|mi|rm]
 * [--distinct N] [--error E | --memory SIZE [--k K] [--counter-bits B]]`,
 * the Spectral Bloom filter that `ebb count` builds (ebb/spectral.h):
 *
 *   shape   from the shared options (spectral_options.c): the least memory
 *           whose MS error ratio after N distinct keys is at most E
 *           (ebb_spectral_choose), or the most counters in SIZE bytes;
 *   gamma   n k / m for the N distinct keys;
 *   error   ebb_spectral_error_ratio: the expected MS error ratio E_b (the
 *           share of keys whose estimate is above the truth) after N
 *           distinct keys; MI and RM measure below it.
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

/* The value column of the human output: after "secondary counters: ". */
#define HUMAN_WIDTH 22

/* The first option given that a spectral filter does not take, or NULL. */
static const char *other_option_given(const params_request *req)
{
    if (req->stable.stable)
        return "--stable";
    if (params_timing_requested(req))
        return req->timing.timing ? "--timing" : "--bits-per-item";
    return params_foreign_option_given(req, true);
}

int params_check_spectral_request(params_request *req)
{
    cli_spectral_take_memory(&req->spectral, req->stable.have_memory,
                             req->stable.memory, req->stable.memory_text);
    req->stable.have_memory = false;
    int status = cli_spectral_take_k(PROGRAM, &req->spectral, req->have_k,
                                     req->k_text);
    req->have_k = false;
    if (status >= 0)
        return status;
    const char *option = other_option_given(req);
    if (option != NULL) {
        cli_error(PROGRAM, "%s cannot be combined with --spectral", option);
        return CLI_EXIT_USAGE;
    }
    status = cli_spectral_check(PROGRAM, &req->spectral);
    return status >= 0 ? status : -1;
}

static void print_json(const ebb_spectral_params *p, uint64_t distinct,
                       double gamma, double error)
{
    printf("{\"method\": \"%s\", \"counters\": %" PRIu64
           ", \"counter_bits\": %" PRIu32 ", \"k\": %" PRIu32
           ", \"secondary\": %" PRIu64 ", \"secondary_k\": %" PRIu32
           ", \"marker\": \"%s\", \"marker_size\": %" PRIu64
           ", \"storage\": \"%s\""
           ", \"memory_bytes\": %" PRIu64 ", \"distinct\": %" PRIu64
           ", \"gamma\": %.10g, \"error_ratio\": %.10g}\n",
           cli_spectral_method_name(p->method), p->counters, p->counter_bits,
           p->k, p->secondary, p->secondary_k,
           p->method == EBB_SPECTRAL_RM ? cli_spectral_marker_name(p->marker)
                                        : "none",
           p->marker_size, cli_spectral_storage_name(p->storage),
           ebb_spectral_memory_for(p),
           distinct, gamma, error);
}

int params_spectral(const params_request *req)
{
    ebb_spectral_params params;
    int status = cli_spectral_choose(PROGRAM, &req->spectral,
                                     CLI_SPECTRAL_SEED, &params);
    if (status >= 0)
        return status;
    uint64_t distinct = req->spectral.distinct;
    double gamma = ebb_spectral_gamma(&params, distinct);
    double error = ebb_spectral_error_ratio(&params, distinct);
    if (!isfinite(gamma) || !isfinite(error)) {
        cli_error(PROGRAM, "the library refused the shape it chose for "
                  "--distinct %" PRIu64, distinct);
        return CLI_EXIT_IO;
    }
    if (req->json) {
        print_json(&params, distinct, gamma, error);
    } else {
        cli_spectral_print_shape(stdout, &params, HUMAN_WIDTH);
        printf("distinct keys:        %" PRIu64 "\n"
               "gamma:                %.6g\n"
               "ms error ratio:       %.6g\n",
               distinct, gamma, error);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(PROGRAM, "write error: %s", strerror(errno));
        return CLI_EXIT_IO;
    }
    return CLI_EXIT_OK;
}
