/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recent.c: `ebb recent`, how recent is each line's key: for every input
 * line, the inferential answers of a Block Timing Bloom filter over the
 * last N lines (Dautrich and Ravishankar, "Inferential Time-Decaying Bloom
 * Filters"; ebb/timing.h), then the key is inserted.
 *
 * This file reads the command line, builds the model of the stream (the
 * prior behind the posterior), opens the filter (created, or loaded from
 * --state and checked against the options), runs recent_stream.c over
 * the inputs, prints --stats and saves the state. All sizing and
 * inference is the library's.
 *
 * The model: --universe N (uniform over N keys: D(j) of Eq. 16, prior
 * 1/N), --zipf N (Zipf over N keys, D(j) by Eq. 15; the prior comes per line or
 * from --prior), --distinct-table FILE (D(j) measured at a few j,
 * interpolated as Eq. 18), or none (every line distinct, D(j) = j; the
 * prior must be given). A loaded state keeps its model unless one of
 * these options replaces it: the model only says how to read the timers,
 * which it never changes.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "lines.h"
#include "recent.h"
#include "state_file.h"
#include "subcommands.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM RECENT_PROGRAM

/* getopt_long values of recent's own options. */
enum {
    OPTION_UNIVERSE = CLI_OPTION_FIRST_OWN,
    OPTION_ZIPF,
    OPTION_DISTINCT_TABLE,
    OPTION_PRIOR,
    OPTION_PRIOR_FIELD,
    OPTION_COST_FP,
    OPTION_COST_FP_FIELD,
    OPTION_COST_FN,
    OPTION_COST_FN_FIELD,
    OPTION_KEY_FIELD,
    OPTION_SKIP_BAD,
    OPTION_HEADER,
    OPTION_JSON,
    OPTION_STATS,
    OPTION_STATE
};

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: ebb recent [--window N] [--bits-per-item X [--k K] |\n"
            "                  --memory SIZE | --fp P]\n"
            "                  [--universe N | --zipf N | --distinct-table FILE]\n"
            "                  [--prior P | --prior-field N]\n"
            "                  [--cost-fp X | --cost-fp-field N]\n"
            "                  [--cost-fn Y | --cost-fn-field N]\n"
            "                  [--key-field N] [--skip-bad] [--json | --header]\n"
            "                  [--stats] [--state FILE] [FILE...]\n"
            "\n"
            "For each line of the FILEs (standard input when none is given, or\n"
            "for '-'), asks a Block Timing Bloom filter over the last N lines\n"
            "about the line's key, then inserts the key. Writes the key and the\n"
            "answers, tab-separated: the probability that the key is among the\n"
            "last N lines (posterior), its expected age and most likely age in\n"
            "lines, the decision of least expected penalty (1: in the window,\n"
            "when cost-fp * (1 - posterior) <= cost-fn * posterior) and the\n"
            "standard answer (1: maybe in the window, 0: certainly not; never 0\n"
            "for a key of the last N lines). The posterior is as good as the\n"
            "prior and the model: calibrated when they describe the stream.\n"
            "\n"
            "The filter (the timing filter of 'ebb dedup', whose 'ebb params'\n"
            "shows the shape):\n"
            "  --window N     lines to remember (default %" PRIu64 ")\n"
            "  --bits-per-item X\n"
            "                 the paper's sizing: X bits per window line\n"
            "  --k K          with --bits-per-item: timers per key (1..%u;\n"
            "                 default: the k of lowest false-positive rate)\n"
            "  --memory SIZE  the lowest false-positive rate in SIZE bytes, with\n"
            "                 k, M, G or T for powers of 1024\n"
            "  --fp P         the least memory for the false-positive rate P\n"
            "                 (the default, %g, when none of the three is given)\n"
            "\n"
            "The model of the stream (the prior behind the posterior):\n"
            "  --universe N   keys drawn uniformly from N; the prior is 1/N\n"
            "  --zipf N       keys drawn from a Zipf law over N ranks; give the\n"
            "                 key's prior (1 / (rank H_N)) per line or --prior\n"
            "  --distinct-table FILE\n"
            "                 distinct keys D(j) among j lines, measured: lines\n"
            "                 'j D(j)' ('#' comments), 2 to %u of them\n"
            "  (none)         every line a new key (D(j) = j); give the prior\n"
            "\n",
            RECENT_DEFAULT_WINDOW, EBB_TIMING_MAX_K, RECENT_DEFAULT_FP,
            EBB_TIMING_MAX_TABLE);
    fprintf(out,
            "Each query:\n"
            "  --prior P      the probability that a line's key is the next line,\n"
            "                 0 < P <= 1 (default: the model's)\n"
            "  --prior-field N  the prior is the line's N-th field\n"
            "  --cost-fp X    the penalty of a false positive, >= 0 (default 1)\n"
            "  --cost-fp-field N  the false-positive cost is the N-th field\n"
            "  --cost-fn Y    the penalty of a false negative, >= 0 (default 1)\n"
            "  --cost-fn-field N  the false-negative cost is the N-th field\n"
            "\n"
            "Lines and output:\n"
            "  --key-field N  the key is the N-th field (fields are separated by\n"
            "                 spaces and tabs), not the whole line; required\n"
            "                 with the field options above\n"
            "  --skip-bad     skip a line whose key, prior or cost field is\n"
            "                 missing or invalid (counted, nothing written, not\n"
            "                 inserted) instead of stopping with an error\n"
            "  --header       first write the line 'key posterior expected_age\n"
            "                 likely_age decision standard' (tab-separated)\n"
            "  --json         one JSON object per line instead: key, posterior,\n"
            "                 expected_age, likely_age, decision, standard\n"
            "  --stats        after the run, print counters, the model and the\n"
            "                 filter's shape to stderr\n"
            "  --state FILE   load the filter (and its model) from FILE if it\n"
            "                 exists, save it there (atomically) after a\n"
            "                 successful run\n"
            "  -h, --help     show this help\n"
            "\n"
            "New filters hash with the fixed seed 0x%016" PRIx64 ".\n"
            "Exit status: 0 success, 1 I/O error or bad input line, 2 usage error.\n",
            RECENT_SEED);
}

/* A prior: a number in (0, 1]. */
static bool valid_prior(double prior)
{
    return prior > 0.0 && prior <= 1.0;
}

/* --universe N or --zipf N. */
static int apply_universe(int option, const char *value,
                          recent_options *opts)
{
    const char *name = option == OPTION_UNIVERSE ? "--universe" : "--zipf";
    cli_number parsed = cli_parse_positive_integer(value,
                                                   &opts->model.universe);
    if (parsed != CLI_NUMBER_OK)
        return cli_invalid_value(PROGRAM, name, value,
                                 cli_positive_integer_requirement(parsed));
    opts->model.kind = option == OPTION_UNIVERSE ? EBB_TIMING_MODEL_UNIFORM
                                                 : EBB_TIMING_MODEL_ZIPF;
    return CLI_CONTINUE;
}

/* The model options: one of them, once. */
static int apply_model_option(int option, const char *value,
                              recent_options *opts)
{
    const char *name = option == OPTION_UNIVERSE ? "--universe"
                       : option == OPTION_ZIPF   ? "--zipf"
                                                 : "--distinct-table";
    if (opts->have_model && strcmp(opts->model_option, name) != 0) {
        cli_error(PROGRAM, "%s cannot be combined with %s", name,
                  opts->model_option);
        return CLI_EXIT_USAGE;
    }
    opts->have_model = true;
    opts->model_option = name;
    opts->model_text = value;
    if (option == OPTION_DISTINCT_TABLE) {
        if (value[0] == '\0')
            return cli_invalid_value(PROGRAM, name, value,
                                     "must be a file name");
        return CLI_CONTINUE; /* read once the command line is parsed */
    }
    return apply_universe(option, value, opts);
}

/* --cost-fp X or --cost-fn Y: a number >= 0. */
static int apply_cost(const char *option, const char *value, double *out,
                      bool *given, const char **text)
{
    if (!cli_parse_real(value, out) || !(*out >= 0.0))
        return cli_invalid_value(PROGRAM, option, value,
                                 "must be a number >= 0");
    *given = true;
    *text = value;
    return CLI_CONTINUE;
}

/* The options of one query. */
static int apply_query_option(int option, const char *value,
                              recent_options *opts)
{
    switch (option) {
    case OPTION_PRIOR:
        if (!cli_parse_real(value, &opts->prior) || !valid_prior(opts->prior))
            return cli_invalid_value(PROGRAM, "--prior", value,
                                     "must be a number in (0, 1]");
        opts->have_prior = true;
        opts->prior_text = value;
        return CLI_CONTINUE;
    case OPTION_PRIOR_FIELD:
        return cli_parse_field_number(PROGRAM, "--prior-field", value,
                                      &opts->prior_field);
    case OPTION_COST_FP:
        return apply_cost("--cost-fp", value, &opts->cost_fp,
                          &opts->have_cost_fp, &opts->cost_fp_text);
    case OPTION_COST_FP_FIELD:
        return cli_parse_field_number(PROGRAM, "--cost-fp-field", value,
                                      &opts->cost_fp_field);
    case OPTION_COST_FN:
        return apply_cost("--cost-fn", value, &opts->cost_fn,
                          &opts->have_cost_fn, &opts->cost_fn_text);
    default: /* OPTION_COST_FN_FIELD */
        return cli_parse_field_number(PROGRAM, "--cost-fn-field", value,
                                      &opts->cost_fn_field);
    }
}

/* A cli_option_handler: returns CLI_CONTINUE or the exit status. */
static int apply_option(int option, const char *value, void *context)
{
    recent_options *opts = context;
    switch (option) {
    case OPTION_UNIVERSE:
    case OPTION_ZIPF:
    case OPTION_DISTINCT_TABLE:
        return apply_model_option(option, value, opts);
    case OPTION_PRIOR:
    case OPTION_PRIOR_FIELD:
    case OPTION_COST_FP:
    case OPTION_COST_FP_FIELD:
    case OPTION_COST_FN:
    case OPTION_COST_FN_FIELD:
        return apply_query_option(option, value, opts);
    case OPTION_KEY_FIELD:
        return cli_parse_field_number(PROGRAM, "--key-field", value,
                                      &opts->key_field);
    case OPTION_SKIP_BAD:
        opts->skip_bad = true;
        return CLI_CONTINUE;
    case OPTION_HEADER:
        opts->header = true;
        return CLI_CONTINUE;
    case OPTION_JSON:
        opts->json = true;
        return CLI_CONTINUE;
    case OPTION_STATS:
        opts->stats = true;
        return CLI_CONTINUE;
    case OPTION_STATE:
        if (value[0] == '\0')
            return cli_invalid_value(PROGRAM, "--state", value,
                                     "must be a file name");
        opts->state_path = value;
        return CLI_CONTINUE;
    default:
        if (cli_is_timing_option(option))
            return cli_apply_timing_option(PROGRAM, option, value,
                                           &opts->timing);
        return cli_apply_sizing_option(PROGRAM, option, value,
                                       &opts->sizing);
    }
}

static int usage(const char *message)
{
    cli_error(PROGRAM, "%s", message);
    return CLI_EXIT_USAGE;
}

/* The first per-line field option given, or NULL. */
static const char *field_option_given(const recent_options *opts)
{
    if (opts->prior_field != 0)
        return "--prior-field";
    if (opts->cost_fp_field != 0)
        return "--cost-fp-field";
    if (opts->cost_fn_field != 0)
        return "--cost-fn-field";
    return NULL;
}

/* Combinations that are wrong whatever the state holds. */
static int check_combinations(recent_options *opts)
{
    int status = cli_timing_check(PROGRAM, &opts->timing,
                                  opts->sizing.have_fp);
    if (status != CLI_CONTINUE)
        return status;
    if (opts->have_prior && opts->prior_field != 0)
        return usage("--prior cannot be combined with --prior-field");
    if (opts->have_cost_fp && opts->cost_fp_field != 0)
        return usage("--cost-fp cannot be combined with --cost-fp-field");
    if (opts->have_cost_fn && opts->cost_fn_field != 0)
        return usage("--cost-fn cannot be combined with --cost-fn-field");
    if (opts->json && opts->header)
        return usage("--header cannot be combined with --json");
    const char *field_option = field_option_given(opts);
    /* A key that held its own cost or prior would change with them. */
    if (field_option != NULL && opts->key_field == 0) {
        cli_error(PROGRAM, "%s requires --key-field", field_option);
        return CLI_EXIT_USAGE;
    }
    if (opts->skip_bad && opts->key_field == 0)
        return usage("--skip-bad requires --key-field, --prior-field, "
                     "--cost-fp-field or --cost-fn-field");
    return CLI_CONTINUE;
}

/* Returns CLI_CONTINUE or the exit status. */
static int parse_command_line(int argc, char **argv, recent_options *opts)
{
    static const struct option options[] = {
        {"window", required_argument, NULL, 'w'},
        {"fp", required_argument, NULL, 'f'},
        CLI_TIMING_SHAPE_LONG_OPTIONS,
        {"universe", required_argument, NULL, OPTION_UNIVERSE},
        {"zipf", required_argument, NULL, OPTION_ZIPF},
        {"distinct-table", required_argument, NULL, OPTION_DISTINCT_TABLE},
        {"prior", required_argument, NULL, OPTION_PRIOR},
        {"prior-field", required_argument, NULL, OPTION_PRIOR_FIELD},
        {"cost-fp", required_argument, NULL, OPTION_COST_FP},
        {"cost-fp-field", required_argument, NULL, OPTION_COST_FP_FIELD},
        {"cost-fn", required_argument, NULL, OPTION_COST_FN},
        {"cost-fn-field", required_argument, NULL, OPTION_COST_FN_FIELD},
        {"key-field", required_argument, NULL, OPTION_KEY_FIELD},
        {"skip-bad", no_argument, NULL, OPTION_SKIP_BAD},
        {"header", no_argument, NULL, OPTION_HEADER},
        {"json", no_argument, NULL, OPTION_JSON},
        {"stats", no_argument, NULL, OPTION_STATS},
        {"state", required_argument, NULL, OPTION_STATE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };

    opts->sizing.window = RECENT_DEFAULT_WINDOW;
    opts->sizing.fp = RECENT_DEFAULT_FP;
    opts->cost_fp = RECENT_DEFAULT_COST;
    opts->cost_fn = RECENT_DEFAULT_COST;
    opts->model.kind = EBB_TIMING_MODEL_DISTINCT;
    int status = cli_parse_options(PROGRAM, argc, argv, options, print_usage,
                                   apply_option, opts);
    if (status != CLI_CONTINUE)
        return status;
    opts->inputs = argv + optind;
    opts->input_count = argc - optind;
    return check_combinations(opts);
}

/* ------------------------------------------------------------------------ */
/* --distinct-table FILE                                                    */
/* ------------------------------------------------------------------------ */

/* The longest line of a table. */
#define TABLE_LINE_BYTES 256u

static int table_error(const char *path, uint64_t line, const char *what)
{
    cli_error(PROGRAM, "%s: line %" PRIu64 ": %s", path, line, what);
    return CLI_EXIT_IO;
}

/* One line "j D(j)" (blank lines and '#' comments are skipped: *points
 * unchanged). Returns CLI_CONTINUE or the exit status. */
static int table_line(const char *path, uint64_t number, char *text,
                      ebb_timing_model *model)
{
    char *hash = strchr(text, '#');
    if (hash != NULL)
        *hash = '\0';
    char *save = NULL;
    char *j_text = strtok_r(text, " \t\r", &save);
    if (j_text == NULL)
        return CLI_CONTINUE;
    char *d_text = strtok_r(NULL, " \t\r", &save);
    uint64_t j;
    double d;
    if (d_text == NULL || strtok_r(NULL, " \t\r", &save) != NULL)
        return table_error(path, number, "must be 'j D(j)': two numbers");
    if (cli_parse_positive_integer(j_text, &j) != CLI_NUMBER_OK)
        return table_error(path, number, "j must be a positive integer");
    if (!cli_parse_real(d_text, &d))
        return table_error(path, number, "D(j) must be a number");
    if (model->points == EBB_TIMING_MAX_TABLE) {
        char what[64];
        snprintf(what, sizeof what, "more than %u points",
                 EBB_TIMING_MAX_TABLE);
        return table_error(path, number, what);
    }
    model->j[model->points] = j;
    model->d[model->points] = d;
    model->points++;
    return CLI_CONTINUE;
}

/* Splits the file into lines and reads each. */
static int parse_table(const char *path, const unsigned char *bytes,
                       size_t length, ebb_timing_model *model)
{
    uint64_t number = 0;
    size_t start = 0;
    while (start < length) {
        const unsigned char *end = memchr(bytes + start, '\n', length - start);
        size_t line_length = end != NULL ? (size_t)(end - (bytes + start))
                                         : length - start;
        char text[TABLE_LINE_BYTES + 1];
        number++;
        if (line_length > TABLE_LINE_BYTES ||
            memchr(bytes + start, '\0', line_length) != NULL)
            return table_error(path, number, "not a line of text 'j D(j)'");
        memcpy(text, bytes + start, line_length);
        text[line_length] = '\0';
        int status = table_line(path, number, text, model);
        if (status != CLI_CONTINUE)
            return status;
        start += line_length + 1;
    }
    return CLI_CONTINUE;
}

/* Reads --distinct-table into the model; the library judges the table
 * (ebb_timing_distinct is NaN for a model it refuses). */
static int read_table(recent_options *opts)
{
    const char *path = opts->model_text;
    unsigned char *bytes = NULL;
    size_t length = 0;
    bool found;
    int status = cli_read_state(PROGRAM, path, &bytes, &length, &found);
    if (status != CLI_CONTINUE)
        return status;
    if (!found) {
        cli_error(PROGRAM, "%s: %s", path, strerror(ENOENT));
        return CLI_EXIT_IO;
    }
    ebb_timing_model *model = &opts->model;
    model->kind = EBB_TIMING_MODEL_TABLE;
    model->default_prior = 0.0; /* --prior is given per query */
    model->points = 0;
    status = parse_table(path, bytes, length, model);
    free(bytes);
    if (status != CLI_CONTINUE)
        return status;
    if (isnan(ebb_timing_distinct(model, 1.0))) {
        cli_error(PROGRAM, "%s: not a table of D(j): 2 to %u lines 'j D(j)', "
                  "j increasing from 1, 1 <= D(j) <= j, D(j) "
                  "non-decreasing", path, EBB_TIMING_MAX_TABLE);
        return CLI_EXIT_IO;
    }
    return CLI_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* The filter                                                               */
/* ------------------------------------------------------------------------ */

static int create_filter(const recent_options *opts, ebb_timing **filter)
{
    ebb_timing_params params;
    int result = cli_timing_choose(PROGRAM, &opts->timing, &opts->sizing,
                                   opts->sizing.window, &params);
    if (result != CLI_CONTINUE)
        return result;
    ebb_status status = ebb_timing_create(&params, &opts->model, RECENT_SEED,
                                          filter);
    if (status == EBB_ENOMEM) {
        cli_error(PROGRAM, "cannot allocate the filter: %s",
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    if (status != EBB_OK) {
        cli_error(PROGRAM, "cannot build a timing filter for window %" PRIu64
                  " with %s %s: %s", params.window,
                  opts->have_model ? opts->model_option : "the model",
                  opts->have_model ? opts->model_text : "of distinct lines",
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return CLI_CONTINUE;
}

/* Loads --state if the file exists (*filter stays NULL otherwise) and
 * checks it against the options; a model option replaces its model. */
static int load_filter(const recent_options *opts, ebb_timing **filter)
{
    const char *path = opts->state_path;
    unsigned char *bytes = NULL;
    size_t length = 0;
    bool found;
    int result = cli_read_state(PROGRAM, path, &bytes, &length, &found);
    if (result != CLI_CONTINUE || !found)
        return result;
    ebb_status status = ebb_timing_load(bytes, length, filter);
    free(bytes);
    if (status == EBB_EFAMILY) {
        cli_error(PROGRAM, "the state in '%s' is not a timing filter (the "
                  "states of 'ebb recent' and 'ebb dedup --timing' are)",
                  path);
        return CLI_EXIT_USAGE;
    }
    if (status != EBB_OK) {
        cli_error(PROGRAM, "%s: %s", path, ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    result = cli_timing_check_state(PROGRAM, &opts->timing, &opts->sizing,
                                    path, ebb_timing_get_params(*filter));
    if (result == CLI_CONTINUE && opts->have_model) {
        status = ebb_timing_set_model(*filter, &opts->model);
        if (status != EBB_OK) {
            cli_error(PROGRAM, "cannot use %s %s: %s", opts->model_option,
                      opts->model_text, ebb_strerror(status));
            result = CLI_EXIT_USAGE;
        }
    }
    return result;
}

/* Every query needs a prior: a field, --prior, or the model's. */
static int check_prior_source(const recent_options *opts,
                              const ebb_timing *filter)
{
    const ebb_timing_model *model = ebb_timing_get_model(filter);
    if (opts->prior_field != 0 || opts->have_prior ||
        ebb_timing_model_prior(model) > 0.0)
        return CLI_CONTINUE;
    cli_error(PROGRAM, "the %s model has no prior of its own: give --prior "
              "or --prior-field%s", ebb_timing_model_name(model->kind),
              model->kind == EBB_TIMING_MODEL_ZIPF ? ""
                                                   : ", or --universe N");
    return CLI_EXIT_USAGE;
}

static int open_filter(recent_options *opts, ebb_timing **filter)
{
    *filter = NULL;
    int status = CLI_CONTINUE;
    if (opts->have_model &&
        strcmp(opts->model_option, "--distinct-table") == 0)
        status = read_table(opts);
    if (status == CLI_CONTINUE && opts->state_path != NULL)
        status = load_filter(opts, filter);
    if (status == CLI_CONTINUE && *filter == NULL)
        status = create_filter(opts, filter);
    if (status == CLI_CONTINUE)
        status = check_prior_source(opts, *filter);
    if (status != CLI_CONTINUE) {
        ebb_timing_destroy(*filter);
        *filter = NULL;
    }
    return status;
}

static int save_filter(const char *path, const ebb_timing *filter)
{
    size_t length = ebb_timing_snapshot_size(filter);
    unsigned char *bytes = malloc(length);
    ebb_status status = bytes != NULL
                            ? ebb_timing_save(filter, bytes, length, NULL)
                            : EBB_ENOMEM;
    return cli_save_snapshot(PROGRAM, path, bytes, length, status);
}

static void print_stats(const recent_counts *counts, const ebb_timing *filter)
{
    const ebb_timing_model *model = ebb_timing_get_model(filter);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "bad lines: %" PRIu64 "\n"
            "standard yes: %" PRIu64 "\n"
            "decisions yes: %" PRIu64 "\n"
            "model: %s\n",
            counts->lines_read, counts->answered, counts->bad_lines,
            counts->standard, counts->decided,
            ebb_timing_model_name(model->kind));
    if (model->kind == EBB_TIMING_MODEL_UNIFORM ||
        model->kind == EBB_TIMING_MODEL_ZIPF)
        fprintf(stderr, "universe: %" PRIu64 "\n", model->universe);
    if (model->kind == EBB_TIMING_MODEL_TABLE)
        fprintf(stderr, "table points: %" PRIu32 "\n", model->points);
    cli_timing_print_shape(stderr, ebb_timing_get_params(filter),
                           ebb_timing_memory(filter), 0);
}

int ebb_cli_recent(int argc, char **argv)
{
    static recent_options opts; /* the model's table is large */
    memset(&opts, 0, sizeof opts);
    int status = parse_command_line(argc, argv, &opts);
    if (status != CLI_CONTINUE)
        return status;
    ebb_timing *filter;
    status = open_filter(&opts, &filter);
    if (status != CLI_CONTINUE)
        return status;

    cli_prepare_output();
    recent_counts counts;
    memset(&counts, 0, sizeof counts);
    status = recent_inputs(&opts, filter, &counts);
    if (status == CLI_CONTINUE && opts.stats)
        print_stats(&counts, filter);
    if (status == CLI_CONTINUE && opts.state_path != NULL)
        status = save_filter(opts.state_path, filter);
    ebb_timing_destroy(filter);
    return status == CLI_CONTINUE ? CLI_EXIT_OK : status;
}
