/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.h: what the parts of `ebb params` share.
 *
 *   params.c         the command line; count windows (APBF shapes)
 *   params_time.c    time windows (--time-window: the TLBF's sizing)
 *   params_stable.c  stable filters (--stable: shape, FPS, false
 *                    negatives by gap)
 *   params_timing.c  timing filters (--timing: the Block Timing Bloom
 *                    filter's shape and analytic false-positive rate)
 *   params_spectral.c  spectral filters (--spectral: the counting filter
 *                    of `ebb count`, its shape and expected error ratio)
 */
#ifndef EBB_CLI_PARAMS_H
#define EBB_CLI_PARAMS_H

#include "options.h"
#include "spectral_options.h"
#include "stable_options.h"
#include "timing_options.h"

#include <ebb/ebb.h>

#include <stdbool.h>
#include <stdint.h>

#define PARAMS_PROGRAM "ebb params"

/* The most --gap values `ebb params --stable` takes. */
#define PARAMS_MAX_GAPS 16u

typedef struct params_request {
    /* --window, --fp, --max-npws, --max-accesses, the blocked options,
     * --time-window and --rate. Without --block-hashes the chooser picks
     * b (an explicit (k, l) takes CLI_DEFAULT_BLOCK_HASHES). */
    cli_sizing_options sizing;
    bool have_k, have_l;
    uint32_t k, l;
    const char *k_text; /* --k is parsed once --stable is known */
    bool json;
    ebb_fill_model fill;
    bool have_fill;

    /* --stable and its options; --k goes to stable.k then. */
    cli_stable_options stable;
    double important_fraction; /* IBF-2C: share of important items   */
    bool have_important_fraction;
    const char *important_fraction_text;
    uint64_t gaps[PARAMS_MAX_GAPS];
    size_t gap_count;

    /* --timing, --bits-per-item; --k and --memory go to timing then. */
    cli_timing_options timing;

    /* --spectral and its options; --k and --memory go to it then. */
    bool spectral_requested;
    cli_spectral_options spectral;
} params_request;

/* Prints the sizing of a time window (params_time.c). Returns the exit
 * status. */
int params_time_window(const params_request *req);

/* Applies --important-fraction or --gap. Returns -1 to go on, otherwise
 * the exit status. */
int params_stable_option(int option, const char *value, params_request *req);

/* Checks the combinations of `ebb params --stable` (after parsing). Returns
 * -1 to go on, otherwise the exit status. */
int params_check_stable_request(params_request *req);

/* Prints the stable filter (params_stable.c). Returns the exit status. */
int params_stable(const params_request *req);

/* --timing, or --bits-per-item, which implies it. */
bool params_timing_requested(const params_request *req);

/* The first option given that neither a timing nor a spectral filter takes
 * (the stable filter's, the APBF's and the TLBF's; with window_too --window
 * and --fp as well), or NULL (params_timing.c). */
const char *params_foreign_option_given(const params_request *req,
                                        bool window_too);

/* Hands --k and --memory to the timing options and checks the
 * combinations of `ebb params --timing`. Returns -1 to go on, otherwise
 * the exit status. */
int params_check_timing_request(params_request *req);

/* Prints the timing filter (params_timing.c). Returns the exit status. */
int params_timing(const params_request *req);

/* Hands --k and --memory to the spectral options and checks the
 * combinations of `ebb params --spectral`. Returns -1 to go on, otherwise
 * the exit status. */
int params_check_spectral_request(params_request *req);

/* Prints the spectral filter (params_spectral.c). Returns the exit
 * status. */
int params_spectral(const params_request *req);

/* getopt_long values of params_stable.c's options. */
enum {
    PARAMS_OPTION_IMPORTANT_FRACTION = CLI_STABLE_OPTION_LAST + 1,
    PARAMS_OPTION_GAP
};

#endif /* EBB_CLI_PARAMS_H */
