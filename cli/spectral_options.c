/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spectral_options.c: the options that shape a Spectral Bloom filter
 * (spectral_options.h). The sizing itself is the library's
 * (ebb_spectral_choose, ebb_spectral_params_init, ebb_spectral_memory_for,
 * ebb_spectral_error_ratio); this file reads the options and searches the
 * largest filter that fits a --memory budget.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "spectral_options.h"

#include "common.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void cli_spectral_defaults(cli_spectral_options *spectral)
{
    memset(spectral, 0, sizeof *spectral);
    spectral->method = EBB_SPECTRAL_MS;
    spectral->distinct = CLI_SPECTRAL_DEFAULT_DISTINCT;
    spectral->error = CLI_SPECTRAL_DEFAULT_ERROR;
    spectral->k = CLI_SPECTRAL_DEFAULT_K;
    spectral->counter_bits = CLI_SPECTRAL_DEFAULT_COUNTER_BITS;
}

bool cli_is_spectral_option(int option)
{
    return option > CLI_SPECTRAL_OPTION_SPECTRAL &&
           option < CLI_SPECTRAL_OPTION_LAST;
}

const char *cli_spectral_method_name(ebb_spectral_method method)
{
    switch (method) {
    case EBB_SPECTRAL_MI:
        return "mi";
    case EBB_SPECTRAL_RM:
        return "rm";
    default:
        return "ms";
    }
}

static int parse_method(const char *program, const char *value,
                        cli_spectral_options *spectral)
{
    static const ebb_spectral_method methods[] = {
        EBB_SPECTRAL_MS, EBB_SPECTRAL_MI, EBB_SPECTRAL_RM};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        if (strcmp(value, cli_spectral_method_name(methods[i])) == 0) {
            spectral->method = methods[i];
            spectral->have_method = true;
            spectral->method_text = value;
            return CLI_CONTINUE;
        }
    }
    return cli_invalid_value(program, "--method", value,
                             "must be ms, mi or rm");
}

/* An integer from 1 to max, or the usage error naming option. */
static int parse_small(const char *program, const char *option,
                       const char *value, uint32_t max, uint32_t *out)
{
    uint64_t parsed;
    if (cli_parse_positive_integer(value, &parsed) != CLI_NUMBER_OK ||
        parsed > max) {
        char requirement[64];
        snprintf(requirement, sizeof requirement,
                 "must be an integer from 1 to %" PRIu32, max);
        return cli_invalid_value(program, option, value, requirement);
    }
    *out = (uint32_t)parsed;
    return CLI_CONTINUE;
}

const char *cli_spectral_storage_name(ebb_spectral_storage storage)
{
    switch (storage) {
    case EBB_SPECTRAL_FIXED:
        return "fixed";
    case EBB_SPECTRAL_COMPACT_GAMMA:
        return "gamma";
    case EBB_SPECTRAL_COMPACT_DELTA:
        return "delta";
    case EBB_SPECTRAL_COMPACT_STEPS:
        return "steps";
    }
    return "?";
}

static int parse_storage(const char *program, const char *value,
                         cli_spectral_options *spectral)
{
    static const ebb_spectral_storage storages[] = {
        EBB_SPECTRAL_FIXED, EBB_SPECTRAL_COMPACT_GAMMA,
        EBB_SPECTRAL_COMPACT_DELTA, EBB_SPECTRAL_COMPACT_STEPS};
    for (size_t i = 0; i < sizeof storages / sizeof storages[0]; i++) {
        if (strcmp(value, cli_spectral_storage_name(storages[i])) == 0) {
            spectral->storage = storages[i];
            spectral->have_storage = true;
            spectral->storage_text = value;
            return CLI_CONTINUE;
        }
    }
    return cli_invalid_value(program, "--storage", value,
                             "must be fixed, gamma, delta or steps");
}

int cli_apply_spectral_option(const char *program, int option,
                              const char *value,
                              cli_spectral_options *spectral)
{
    switch (option) {
    case CLI_SPECTRAL_OPTION_METHOD:
        return parse_method(program, value, spectral);
    case CLI_SPECTRAL_OPTION_STORAGE:
        return parse_storage(program, value, spectral);
    case CLI_SPECTRAL_OPTION_DISTINCT: {
        cli_number parsed = cli_parse_positive_integer(value,
                                                       &spectral->distinct);
        if (parsed != CLI_NUMBER_OK)
            return cli_invalid_value(program, "--distinct", value,
                                     cli_positive_integer_requirement(parsed));
        spectral->have_distinct = true;
        spectral->distinct_text = value;
        return CLI_CONTINUE;
    }
    case CLI_SPECTRAL_OPTION_ERROR:
        if (!cli_parse_real(value, &spectral->error) ||
            !(spectral->error > 0.0 && spectral->error < 1.0))
            return cli_invalid_value(program, "--error", value,
                                     "must be a number in (0, 1)");
        spectral->have_error = true;
        spectral->error_text = value;
        return CLI_CONTINUE;
    case CLI_SPECTRAL_OPTION_COUNTER_BITS:
        spectral->have_counter_bits = true;
        spectral->counter_bits_text = value;
        return parse_small(program, "--counter-bits", value,
                           EBB_SPECTRAL_MAX_COUNTER_BITS,
                           &spectral->counter_bits);
    case CLI_SPECTRAL_OPTION_MEMORY: {
        cli_number parsed = cli_parse_byte_size(value, &spectral->memory);
        if (parsed != CLI_NUMBER_OK)
            return cli_invalid_value(program, "--memory", value,
                                     cli_byte_size_requirement(parsed));
        spectral->have_memory = true;
        spectral->memory_text = value;
        return CLI_CONTINUE;
    }
    default: /* CLI_SPECTRAL_OPTION_K */
        spectral->have_k = true;
        spectral->k_text = value;
        return parse_small(program, "--k", value, EBB_SPECTRAL_MAX_K,
                           &spectral->k);
    }
}

int cli_spectral_take_k(const char *program, cli_spectral_options *spectral,
                        bool have_k, const char *k_text)
{
    if (!have_k)
        return CLI_CONTINUE;
    return cli_apply_spectral_option(program, CLI_SPECTRAL_OPTION_K, k_text,
                                     spectral);
}

void cli_spectral_take_memory(cli_spectral_options *spectral,
                              bool have_memory, size_t memory,
                              const char *memory_text)
{
    if (!have_memory)
        return;
    spectral->have_memory = true;
    spectral->memory = memory;
    spectral->memory_text = memory_text;
}

int cli_spectral_check(const char *program,
                       const cli_spectral_options *spectral)
{
    if (spectral->have_memory && spectral->have_error) {
        cli_error(program, "--error cannot be combined with --memory");
        return CLI_EXIT_USAGE;
    }
    if (spectral->have_memory && spectral->storage != EBB_SPECTRAL_FIXED) {
        /* A compact filter's memory grows with its counts: no number of
         * counters fits a budget in advance. */
        cli_error(program, "--storage %s cannot be combined with --memory: "
                  "compact counters grow with the counts (size them with "
                  "--distinct and --error)", spectral->storage_text);
        return CLI_EXIT_USAGE;
    }
    if (!spectral->have_memory && (spectral->have_k ||
                                   spectral->have_counter_bits)) {
        cli_error(program, "%s requires --memory",
                  spectral->have_k ? "--k" : "--counter-bits");
        return CLI_EXIT_USAGE;
    }
    return CLI_CONTINUE;
}

/* The shape of m counters, or false when the library refuses it. */
static bool shape_of(const cli_spectral_options *spectral, uint64_t m,
                     uint32_t k, ebb_spectral_params *out)
{
    return ebb_spectral_params_init(m, spectral->counter_bits, k,
                                    spectral->method, out) == EBB_OK;
}

/* The largest m whose filter fits the budget: memory_for grows with m, so
 * a binary search; false when not even the smallest fits. */
static bool largest_fitting(const cli_spectral_options *spectral, uint32_t k,
                            ebb_spectral_params *out)
{
    uint64_t low = spectral->method == EBB_SPECTRAL_RM ? 3 : 1;
    uint64_t high = EBB_SPECTRAL_MAX_COUNTERS;
    ebb_spectral_params p;
    if (!shape_of(spectral, low, k, &p) ||
        ebb_spectral_memory_for(&p) > spectral->memory)
        return false;
    *out = p;
    while (low < high) { /* invariant: low fits */
        uint64_t mid = low + (high - low + 1) / 2;
        if (shape_of(spectral, mid, k, &p) && ebb_spectral_memory_for(&p) > 0 &&
            ebb_spectral_memory_for(&p) <= spectral->memory) {
            low = mid;
            *out = p;
        } else {
            high = mid - 1;
        }
    }
    return true;
}

/* The k of least MS error ratio for the distinct keys in this shape. */
static uint32_t best_k(ebb_spectral_params params, uint64_t distinct)
{
    uint32_t best = 1;
    double least = INFINITY;
    for (uint32_t k = 1; k <= EBB_SPECTRAL_MAX_K; k++) {
        params.k = k;
        double e = ebb_spectral_error_ratio(&params, distinct);
        if (e < least) {
            least = e;
            best = k;
        }
    }
    return best;
}

static int from_memory(const char *program,
                       const cli_spectral_options *spectral,
                       ebb_spectral_params *out)
{
    uint32_t k = spectral->k;
    bool fits = largest_fitting(spectral, k, out);
    if (fits && !spectral->have_k && spectral->have_distinct) {
        k = best_k(*out, spectral->distinct);
        fits = largest_fitting(spectral, k, out);
    }
    if (!fits) {
        cli_error(program, "--memory %s holds no %s filter of %" PRIu32
                  "-bit counters", spectral->memory_text,
                  cli_spectral_method_name(spectral->method),
                  spectral->counter_bits);
        return CLI_EXIT_USAGE;
    }
    return CLI_CONTINUE;
}

int cli_spectral_choose(const char *program,
                        const cli_spectral_options *spectral, uint64_t seed,
                        ebb_spectral_params *out)
{
    int status = CLI_CONTINUE;
    if (spectral->have_memory) {
        status = from_memory(program, spectral, out);
    } else if (ebb_spectral_choose(spectral->distinct, spectral->error,
                                   spectral->method, out) != EBB_OK) {
        cli_error(program, "no filter within the limits counts %" PRIu64
                  " distinct keys with error ratio %g", spectral->distinct,
                  spectral->error);
        status = CLI_EXIT_USAGE;
    }
    if (status == CLI_CONTINUE) {
        out->seed = seed;
        out->storage = spectral->storage;
    }
    return status;
}

bool cli_spectral_option_given(const cli_spectral_options *spectral,
                               const char **option, const char **value)
{
    const struct {
        bool given;
        const char *name, *text;
    } options[] = {
        {spectral->have_method, "--method", spectral->method_text},
        {spectral->have_memory, "--memory", spectral->memory_text},
        {spectral->have_distinct, "--distinct", spectral->distinct_text},
        {spectral->have_error, "--error", spectral->error_text},
        {spectral->have_k, "--k", spectral->k_text},
        {spectral->have_counter_bits, "--counter-bits",
         spectral->counter_bits_text},
        {spectral->have_storage, "--storage", spectral->storage_text},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        if (options[i].given) {
            *option = options[i].name;
            *value = options[i].text;
            return true;
        }
    }
    return false;
}

void cli_spectral_describe(const ebb_spectral_params *params, char *out,
                           size_t size)
{
    snprintf(out, size, "method %s, %" PRIu64 " counters of %" PRIu32
             " bits, k %" PRIu32 "%s%s",
             cli_spectral_method_name(params->method), params->counters,
             params->counter_bits, params->k,
             params->storage == EBB_SPECTRAL_FIXED ? "" : ", storage ",
             params->storage == EBB_SPECTRAL_FIXED
                 ? ""
                 : cli_spectral_storage_name(params->storage));
}

const char *cli_spectral_marker_name(ebb_spectral_marker marker)
{
    switch (marker) {
    case EBB_SPECTRAL_MARKER_EXACT:
        return "exact";
    case EBB_SPECTRAL_MARKER_BLOOM:
        return "bloom";
    case EBB_SPECTRAL_MARKER_NONE:
        return "none";
    }
    return "?";
}

/* "exact, N slots", "bloom, N bits" or "none". */
static const char *cli_spectral_marker_text(const ebb_spectral_params *params,
                                            char *text, size_t size)
{
    const char *name = cli_spectral_marker_name(params->marker);
    if (params->marker == EBB_SPECTRAL_MARKER_NONE)
        snprintf(text, size, "%s", name);
    else
        snprintf(text, size, "%s, %" PRIu64 " %s", name, params->marker_size,
                 params->marker == EBB_SPECTRAL_MARKER_EXACT ? "slots"
                                                             : "bits");
    return text;
}

static void print_field(FILE *out, int width, const char *name,
                        const char *value)
{
    int pad = width - (int)strlen(name) - 2;
    fprintf(out, "%s: %*s%s\n", name, pad > 0 ? pad : 0, "", value);
}

void cli_spectral_print_shape(FILE *out, const ebb_spectral_params *params,
                              int width)
{
    char text[64];
    print_field(out, width, "method", cli_spectral_method_name(params->method));
    snprintf(text, sizeof text, "%" PRIu64, params->counters);
    print_field(out, width, "counters", text);
    snprintf(text, sizeof text, "%" PRIu32, params->counter_bits);
    print_field(out, width, "counter bits", text);
    snprintf(text, sizeof text, "%" PRIu32, params->k);
    print_field(out, width, "k", text);
    if (params->method == EBB_SPECTRAL_RM) {
        snprintf(text, sizeof text, "%" PRIu64, params->secondary);
        print_field(out, width, "secondary counters", text);
        snprintf(text, sizeof text, "%" PRIu32, params->secondary_k);
        print_field(out, width, "secondary k", text);
        print_field(out, width, "marker",
                    cli_spectral_marker_text(params, text, sizeof text));
    }
    if (params->storage != EBB_SPECTRAL_FIXED) {
        snprintf(text, sizeof text, "%s (memory below: empty, grows)",
                 cli_spectral_storage_name(params->storage));
        print_field(out, width, "storage", text);
    }
    snprintf(text, sizeof text, "%" PRIu64, ebb_spectral_memory_for(params));
    print_field(out, width, "memory bytes", text);
    snprintf(text, sizeof text, "0x%016" PRIx64, params->seed);
    print_field(out, width, "seed", text);
}
