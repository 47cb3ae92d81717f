/*
 * params.h: what the parts of `ebb params` share.
 *
 *   params.c       the command line; count windows (APBF shapes)
 *   params_time.c  time windows (--time-window: the TLBF's sizing)
 */
#ifndef EBB_CLI_PARAMS_H
#define EBB_CLI_PARAMS_H

#include <ebb/ebb.h>

#include <stdbool.h>
#include <stdint.h>

#define PARAMS_PROGRAM "ebb params"

typedef struct params_request {
    bool have_window, have_fp, have_max_npws, have_k, have_l;
    uint64_t window;
    double fp;
    double max_npws;
    uint32_t k, l;
    double max_accesses;
    bool have_max_accesses;
    bool json;
    ebb_fill_model fill;
    bool have_fill;
    /* Blocked slices: --blocked, or implied by --block-bits/--block-hashes.
     * Without --block-hashes the chooser picks b (an explicit (k, l) takes
     * CLI_DEFAULT_BLOCK_HASHES). */
    bool blocked, have_blocked, have_block_bits, have_block_hashes;
    uint32_t block_bits, block_hashes;
    /* Time windows. */
    bool have_time_window, have_rate;
    int64_t span_ns;
    double rate;
    /* The texts as typed, for messages. */
    const char *window_text, *fp_text, *max_npws_text, *max_accesses_text;
    const char *time_window_text, *rate_text;
} params_request;

/* Prints the sizing of a time window (params_time.c). Returns the exit
 * status. */
int params_time_window(const params_request *req);

#endif /* EBB_CLI_PARAMS_H */
