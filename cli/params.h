/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.h: what the parts of `ebb params` share.
 *
 *   params.c       the command line; count windows (APBF shapes)
 *   params_time.c  time windows (--time-window: the TLBF's sizing)
 */
#ifndef EBB_CLI_PARAMS_H
#define EBB_CLI_PARAMS_H

#include "options.h"

#include <ebb/ebb.h>

#include <stdbool.h>
#include <stdint.h>

#define PARAMS_PROGRAM "ebb params"

typedef struct params_request {
    /* --window, --fp, --max-npws, --max-accesses, the blocked options,
     * --time-window and --rate. Without --block-hashes the chooser picks
     * b (an explicit (k, l) takes CLI_DEFAULT_BLOCK_HASHES). */
    cli_sizing_options sizing;
    bool have_k, have_l;
    uint32_t k, l;
    bool json;
    ebb_fill_model fill;
    bool have_fill;
} params_request;

/* Prints the sizing of a time window (params_time.c). Returns the exit
 * status. */
int params_time_window(const params_request *req);

#endif /* EBB_CLI_PARAMS_H */
