/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spectral_options.h: the options that shape a Spectral Bloom filter,
 * which `ebb count` and `ebb params --spectral` both take with the same
 * meaning, values and messages:
 *
 *   --method ms|mi|rm       Minimum Selection (default), Minimal Increase,
 *                           Recurring Minimum (ebb/spectral.h)
 *   --distinct N --error E  the least memory whose MS error ratio after N
 *                           distinct keys is at most E (ebb_spectral_choose;
 *                           defaults COUNT_DEFAULT_DISTINCT and _ERROR)
 *   --memory SIZE           the most counters in SIZE bytes (the filter's
 *                           whole allocation), of --counter-bits bits
 *                           (default 32), with --k K or the k of least
 *                           error for --distinct N, else 4
 *   --storage S             fixed (default) or compact counters of the
 *                           string-array index: gamma, delta or steps
 *                           (ebb_spectral_storage); not with --memory
 *
 * `ebb params` lists --memory and --k for several filters: it hands them
 * over with cli_spectral_take_k / cli_spectral_take_memory.
 */
#ifndef EBB_CLI_SPECTRAL_OPTIONS_H
#define EBB_CLI_SPECTRAL_OPTIONS_H

#include "options.h"

#include <ebb/spectral.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_SPECTRAL_DEFAULT_DISTINCT UINT64_C(100000)
#define CLI_SPECTRAL_DEFAULT_ERROR 0.01
#define CLI_SPECTRAL_DEFAULT_K 4u
#define CLI_SPECTRAL_DEFAULT_COUNTER_BITS 32u
/* The hash seed of the filters `ebb count` creates: the ASCII bytes of
 * "ebbcount". A loaded or merged state brings its own. */
#define CLI_SPECTRAL_SEED UINT64_C(0x656262636f756e74)

/* getopt_long values: above the stable (512..) and timing options. */
enum {
    CLI_SPECTRAL_OPTION_SPECTRAL = 640,
    CLI_SPECTRAL_OPTION_METHOD,
    CLI_SPECTRAL_OPTION_DISTINCT,
    CLI_SPECTRAL_OPTION_ERROR,
    CLI_SPECTRAL_OPTION_COUNTER_BITS,
    CLI_SPECTRAL_OPTION_MEMORY,
    CLI_SPECTRAL_OPTION_K,
    CLI_SPECTRAL_OPTION_STORAGE,
    CLI_SPECTRAL_OPTION_LAST
};

/* The entries both commands list (--memory and --k: see above). */
#define CLI_SPECTRAL_LONG_OPTIONS                                              \
    {"method", required_argument, NULL, CLI_SPECTRAL_OPTION_METHOD},           \
        {"distinct", required_argument, NULL, CLI_SPECTRAL_OPTION_DISTINCT},   \
        {"error", required_argument, NULL, CLI_SPECTRAL_OPTION_ERROR},         \
        {"counter-bits", required_argument, NULL,                              \
         CLI_SPECTRAL_OPTION_COUNTER_BITS},                                    \
        {"storage", required_argument, NULL, CLI_SPECTRAL_OPTION_STORAGE}

typedef struct cli_spectral_options {
    ebb_spectral_method method;
    bool have_method;
    uint64_t distinct;
    bool have_distinct;
    double error;
    bool have_error;
    size_t memory;
    bool have_memory;
    uint32_t k;
    bool have_k;
    uint32_t counter_bits;
    bool have_counter_bits;
    ebb_spectral_storage storage;
    bool have_storage;
    const char *method_text, *distinct_text, *error_text, *memory_text;
    const char *k_text, *counter_bits_text, *storage_text;
} cli_spectral_options;

/* Nothing given: MS, the default distinct keys and error ratio. */
void cli_spectral_defaults(cli_spectral_options *spectral);

bool cli_is_spectral_option(int option);

/* Applies one option (CLI_SPECTRAL_OPTION_*, --memory and --k included).
 * Returns CLI_CONTINUE or the exit status. */
int cli_apply_spectral_option(const char *program, int option,
                              const char *value,
                              cli_spectral_options *spectral);

/* For `ebb params`: --k and --memory as it parsed them (texts). Returns
 * CLI_CONTINUE or the exit status. */
int cli_spectral_take_k(const char *program, cli_spectral_options *spectral,
                        bool have_k, const char *k_text);
void cli_spectral_take_memory(cli_spectral_options *spectral,
                              bool have_memory, size_t memory,
                              const char *memory_text);

/* Combinations wrong whatever else is given: --memory with --error or
 * compact --storage; --k or --counter-bits without --memory. Returns
 * CLI_CONTINUE or the exit status. */
int cli_spectral_check(const char *program,
                       const cli_spectral_options *spectral);

/* The shape the options describe, hash seed `seed`. Returns CLI_CONTINUE
 * or the exit status (a usage error when no filter fits). */
int cli_spectral_choose(const char *program,
                        const cli_spectral_options *spectral, uint64_t seed,
                        ebb_spectral_params *out);

/* The first shaping option given, with its text, or false. */
bool cli_spectral_option_given(const cli_spectral_options *spectral,
                               const char **option, const char **value);

/* "ms", "mi", "rm". */
const char *cli_spectral_method_name(ebb_spectral_method method);
/* "fixed", "gamma", "delta" or "steps". */
const char *cli_spectral_storage_name(ebb_spectral_storage storage);
/* "exact", "bloom" or "none": RM's marker kind. */
const char *cli_spectral_marker_name(ebb_spectral_marker marker);

/* The shape as a state message names it: "method ms, 958506 counters of
 * 32 bits, k 7" (", storage gamma" when compact). size >= 160 suffices. */
void cli_spectral_describe(const ebb_spectral_params *params, char *out,
                           size_t size);

/* Prints the shape, one "name: value" a line, the values from column
 * `width` (0: right after ": "): method, counters, counter bits, k, RM's
 * secondary and marker bits, storage, memory bytes and seed. */
void cli_spectral_print_shape(FILE *out, const ebb_spectral_params *params,
                              int width);

#endif /* EBB_CLI_SPECTRAL_OPTIONS_H */
