/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stable_options.h: the options that describe a stable (or
 * importance-aware) filter, which `ebb dedup --stable` and `ebb params
 * --stable` both take with the same meaning, values and messages:
 *
 *   --stable, --memory SIZE, --cells M, --cell-bits d, --k K, --p P,
 *   --draw independent|consecutive, --importance-classes 2|levels,
 *   --decrement uniform|weighted
 *
 * and the ones only dedup takes (it has an importance field to read):
 *
 *   --importance-range LOW:HIGH, --important-above X,
 *   --importance-out-of-range clamp|refuse
 *
 * --fp is the shared sizing option (options.h). --k is parsed late
 * (cli_stable_parse_k): `ebb params` also has the APBF's --k, whose range
 * differs, and which one it is depends on --stable, given anywhere.
 *
 * Everything about the filter itself (which K and P a budget buys, the
 * level an importance sets) is the library's (ebb/stable.h).
 */
#ifndef EBB_CLI_STABLE_OPTIONS_H
#define EBB_CLI_STABLE_OPTIONS_H

#include "options.h"

#include <ebb/stable.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* getopt_long values of the stable options: far above every subcommand's
 * own (CLI_OPTION_FIRST_OWN + a few). */
enum {
    CLI_STABLE_OPTION_STABLE = 512,
    CLI_STABLE_OPTION_MEMORY,
    CLI_STABLE_OPTION_CELLS,
    CLI_STABLE_OPTION_CELL_BITS,
    CLI_STABLE_OPTION_K,
    CLI_STABLE_OPTION_P,
    CLI_STABLE_OPTION_DRAW,
    CLI_STABLE_OPTION_CLASSES,
    CLI_STABLE_OPTION_DECREMENT,
    /* dedup only */
    CLI_STABLE_OPTION_RANGE,
    CLI_STABLE_OPTION_ABOVE,
    CLI_STABLE_OPTION_OUT_OF_RANGE,
    CLI_STABLE_OPTION_LAST
};

/* The struct option entries both subcommands take (not --k: each lists
 * its own, see above). */
#define CLI_STABLE_LONG_OPTIONS                                                \
    {"stable", no_argument, NULL, CLI_STABLE_OPTION_STABLE},                   \
        {"memory", required_argument, NULL, CLI_STABLE_OPTION_MEMORY},         \
        {"cells", required_argument, NULL, CLI_STABLE_OPTION_CELLS},           \
        {"cell-bits", required_argument, NULL, CLI_STABLE_OPTION_CELL_BITS},   \
        {"p", required_argument, NULL, CLI_STABLE_OPTION_P},                   \
        {"draw", required_argument, NULL, CLI_STABLE_OPTION_DRAW},             \
        {"importance-classes", required_argument, NULL,                        \
         CLI_STABLE_OPTION_CLASSES},                                           \
        {"decrement", required_argument, NULL, CLI_STABLE_OPTION_DECREMENT}

/* The options only `ebb dedup` takes. */
#define CLI_STABLE_DEDUP_LONG_OPTIONS                                          \
    {"importance-range", required_argument, NULL, CLI_STABLE_OPTION_RANGE},    \
        {"important-above", required_argument, NULL, CLI_STABLE_OPTION_ABOVE}, \
        {"importance-out-of-range", required_argument, NULL,                   \
         CLI_STABLE_OPTION_OUT_OF_RANGE}

/* The default budget of `ebb dedup --stable` (cell storage). */
#define CLI_STABLE_DEFAULT_MEMORY ((size_t)16 << 20)

typedef enum cli_importance_classes {
    CLI_CLASSES_LEVELS = 0, /* one class per level 1..Max (IBF-MC, IBF-H) */
    CLI_CLASSES_TWO = 2     /* important or not (IBF-2C)                  */
} cli_importance_classes;

/* What the stable options said. A have_ flag tells whether the option was
 * given; the value is the default until then. */
typedef struct cli_stable_options {
    bool stable; /* --stable */
    size_t memory;
    bool have_memory;
    uint64_t cells;
    bool have_cells;
    uint32_t cell_bits;
    bool have_cell_bits;
    uint32_t k; /* valid after cli_stable_parse_k */
    bool have_k;
    uint32_t p;
    bool have_p;
    ebb_stable_draw draw;
    bool have_draw;
    cli_importance_classes classes;
    bool have_classes;
    bool weighted; /* --decrement weighted: IBF-H */
    bool have_decrement;
    double low, high; /* --importance-range */
    bool have_range;
    double important_above;
    bool have_above;
    ebb_stable_range_policy policy;
    bool have_policy;

    /* The texts as typed, for messages. */
    const char *memory_text, *cells_text, *cell_bits_text, *k_text, *p_text;
    const char *draw_text, *classes_text, *decrement_text, *range_text;
    const char *above_text, *policy_text;
} cli_stable_options;

/* Defaults: nothing given, memory CLI_STABLE_DEFAULT_MEMORY, consecutive
 * draw, uniform decrements, clamp. */
void cli_stable_defaults(cli_stable_options *stable);

/* True for the getopt_long values above. */
bool cli_is_stable_option(int option);

/* Applies one stable option. --k only records its text. Returns
 * CLI_CONTINUE or the exit status. */
int cli_apply_stable_option(const char *program, int option,
                            const char *value, cli_stable_options *stable);

/* Parses the recorded --k text as a stable K (1..EBB_STABLE_MAX_K).
 * Returns CLI_CONTINUE or the exit status. */
int cli_stable_parse_k(const char *program, cli_stable_options *stable);

/* The first of --cells, --cell-bits, --k, --p given, or NULL; and whether
 * all four were. */
const char *cli_stable_shape_option(const cli_stable_options *stable);
bool cli_stable_explicit_shape(const cli_stable_options *stable);

/* The first stable option given (other than --stable), with its text
 * ("" for none), or false. For "requires --stable" and state mismatches. */
bool cli_stable_option_given(const cli_stable_options *stable,
                             const char **option, const char **value);

/* Checks that do not depend on a state: an explicit shape is all four of
 * --cells, --cell-bits, --k, --p and excludes --memory and --fp (given
 * have_fp); --decrement weighted excludes --importance-classes 2;
 * --important-above requires --importance-classes 2. Returns CLI_CONTINUE
 * or the exit status (after one message). */
int cli_stable_check(const char *program, const cli_stable_options *stable,
                     bool have_fp);

/* The variant the options ask for, given whether items have an
 * importance at all (an importance field, or `ebb params` asked about an
 * importance-aware variant). */
ebb_stable_variant cli_stable_variant(const cli_stable_options *stable,
                                      bool importance);

/* "plain", "ibf-2c", "ibf-mc", "ibf-h"; "independent", "consecutive". */
const char *cli_stable_variant_name(ebb_stable_variant variant);
const char *cli_stable_draw_name(ebb_stable_draw draw);

/* The sizing goal (memory, fp, --cell-bits if given, variant, draw,
 * importance mapping, level_probs) for ebb_stable_choose. */
ebb_stable_goal cli_stable_goal(const cli_stable_options *stable, double fp,
                                ebb_stable_variant variant,
                                const double *level_probs);

/* The importance mapping the options describe (the library's defaults
 * for what was not given; the threshold defaults to the middle of the
 * range). */
ebb_stable_importance cli_stable_importance(const cli_stable_options *stable);

#endif /* EBB_CLI_STABLE_OPTIONS_H */
