/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * count.c: `ebb count`, an approximate `sort | uniq -c` whose counts live
 * in a Spectral Bloom filter of fixed memory (Cohen and Matias, "Spectral
 * Bloom Filters"; ebb/spectral.h).
 *
 * This file reads the command line, opens the filter (created from the
 * sizing options, or loaded from --state and checked against them), adds
 * the --merge states to it (union: counters add), runs count_stream.c
 * over the inputs, writes the answers of the end, prints --stats (with
 * --exact-check, the error ratio and additive error against an exact
 * count kept beside the filter) and saves the state.
 *
 * Memory: the filter's is fixed. The default output (every distinct line,
 * first seen first) must also remember each distinct line once, in an
 * exact set of their 128-bit hashes (count_table.c): that part grows with
 * the distinct lines. --threshold keeps only the watch (the hashes of the
 * lines reported), --query nothing but the filter; --exact-check adds an
 * exact count per distinct key; --window N a ring of N hashes.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "count.h"
#include "lines.h"
#include "state_file.h"
#include "subcommands.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROGRAM COUNT_PROGRAM

/* getopt_long values of count's own options. */
enum {
    OPTION_KEY_FIELD = CLI_OPTION_FIRST_OWN,
    OPTION_DELETE_FIELD,
    OPTION_WINDOW,
    OPTION_SKIP_BAD,
    OPTION_THRESHOLD,
    OPTION_QUERY,
    OPTION_JSON,
    OPTION_STATS,
    OPTION_EXACT_CHECK,
    OPTION_STATE,
    OPTION_MERGE
};

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: ebb count [--method ms|mi|rm]\n"
            "                 [--distinct N] [--error E | --memory SIZE\n"
            "                 [--k K] [--counter-bits B]]\n"
            "                 [--storage fixed|gamma|delta|steps]\n"
            "                 [--key-field N] [--delete-field N | --window N]\n"
            "                 [--skip-bad] [--threshold T | --query FILE]\n"
            "                 [--json] [--stats [--exact-check]]\n"
            "                 [--state FILE] [--merge STATE]... [FILE...]\n"
            "\n"
            "Counts the lines of the FILEs (standard input when none is given,\n"
            "or for '-') in a Spectral Bloom filter of fixed memory, like an\n"
            "approximate 'sort | uniq' with counts. At the end writes\n"
            "'count<TAB>line'\n"
            "for every distinct line with a count above 0, in the order they\n"
            "first came. A count is never below the true count with ms and rm\n"
            "(and mi, which refuses deletions), and above it for about the\n"
            "error ratio of the lines. The counts take fixed memory; this\n"
            "output also keeps each distinct line once (memory that grows\n"
            "with the distinct lines), which --threshold and --query do not.\n"
            "\n"
            "The filter (which 'ebb params' describes):\n"
            "  --method M     ms (Minimum Selection, the default), mi (Minimal\n"
            "                 Increase: smaller errors, refuses deletions) or rm\n"
            "                 (Recurring Minimum: a secondary filter for likely\n"
            "                 errors)\n"
            "  --distinct N   distinct lines expected (default %" PRIu64 ")\n"
            "  --error E      the least memory whose error ratio (the share of\n"
            "                 lines counted too high, for ms) is at most E\n"
            "                 after N distinct lines, 0 < E < 1 (default %g)\n"
            "  --memory SIZE  instead: the most counters in SIZE bytes (k, M,\n"
            "                 G or T for powers of 1024)\n"
            "  --k K          with --memory: counters per line (1..%u;\n"
            "                 default: the best for --distinct if given, else\n"
            "                 %u)\n"
            "  --counter-bits B\n"
            "                 with --memory: bits per counter (1..%u, default\n"
            "                 %u); a counter saturates at 2^B - 1\n"
            "  --storage S    fixed (default: --counter-bits bits a counter) or\n"
            "                 compact counters of about log2 of their value in\n"
            "                 the string-array index: gamma, delta or steps\n"
            "                 (the same counts in less memory, slower; memory\n"
            "                 grows with the counts, so not with --memory)\n"
            "\n",
            CLI_SPECTRAL_DEFAULT_DISTINCT, CLI_SPECTRAL_DEFAULT_ERROR,
            EBB_SPECTRAL_MAX_K, CLI_SPECTRAL_DEFAULT_K,
            EBB_SPECTRAL_MAX_COUNTER_BITS, CLI_SPECTRAL_DEFAULT_COUNTER_BITS);
    fprintf(out,
            "Lines:\n"
            "  --key-field N  count the N-th field (fields are separated by\n"
            "                 spaces and tabs), not the whole line\n"
            "  --delete-field N\n"
            "                 field N is the operation: '+' adds one occurrence\n"
            "                 of the key, '-' removes one (refused and counted\n"
            "                 when the key's counters hold less); requires\n"
            "                 --key-field\n"
            "  --window N     count the last N lines only: the line N lines\n"
            "                 back is removed as each line comes (a ring of\n"
            "                 N hashes: 16 N bytes allocated up front)\n"
            "  --skip-bad     skip a line whose key or delete field is missing\n"
            "                 or invalid (counted) instead of stopping with an\n"
            "                 error\n"
            "\n"
            "Output:\n"
            "  --threshold T  instead, as the lines come: each line once, when\n"
            "                 its count first reaches T (no line whose true\n"
            "                 count reaches T is missed)\n"
            "  --query FILE   instead, at the end: the count of each line of\n"
            "                 FILE (a whole line is a key), 0 included; '-'\n"
            "                 needs FILE operands other than '-'\n"
            "  --json         one JSON object per line: count, saturated, key\n"
            "  --stats        after the run, print counters and the filter's\n"
            "                 shape and statistics to stderr\n"
            "  --exact-check  with --stats: also count exactly (memory that\n"
            "                 grows with the distinct keys) and print the\n"
            "                 error ratio and additive error of the counts\n"
            "  --state FILE   load the filter from FILE if it exists, save it\n"
            "                 there (atomically) after a successful run\n"
            "  --merge STATE  add the counts of a saved filter (union; may be\n"
            "                 repeated; the filters must have the same shape\n"
            "                 and seed)\n"
            "  -h, --help     show this help\n"
            "\n"
            "New filters hash with the fixed seed 0x%016" PRIx64 ".\n"
            "Exit status: 0 success, 1 I/O error or bad input line, 2 usage error.\n",
            COUNT_SEED);
}

static int usage(const char *message)
{
    cli_error(PROGRAM, "%s", message);
    return CLI_EXIT_USAGE;
}

static int file_name(const char *option, const char *value, const char **out)
{
    if (value[0] == '\0')
        return cli_invalid_value(PROGRAM, option, value,
                                 "must be a file name");
    *out = value;
    return CLI_CONTINUE;
}

static int add_merge(count_options *opts, const char *value)
{
    if (value[0] == '\0')
        return cli_invalid_value(PROGRAM, "--merge", value,
                                 "must be a file name");
    const char **paths = realloc(opts->merge_paths, (opts->merge_count + 1) *
                                                        sizeof *paths);
    if (paths == NULL) {
        cli_error(PROGRAM, "%s", strerror(ENOMEM));
        return CLI_EXIT_IO;
    }
    paths[opts->merge_count++] = value;
    opts->merge_paths = paths;
    return CLI_CONTINUE;
}

static int positive(const char *option, const char *value, uint64_t *out)
{
    cli_number parsed = cli_parse_positive_integer(value, out);
    if (parsed != CLI_NUMBER_OK)
        return cli_invalid_value(PROGRAM, option, value,
                                 cli_positive_integer_requirement(parsed));
    return CLI_CONTINUE;
}

/* A cli_option_handler: returns CLI_CONTINUE or the exit status. */
static int apply_option(int option, const char *value, void *context)
{
    count_options *opts = context;
    switch (option) {
    case OPTION_KEY_FIELD:
        return cli_parse_field_number(PROGRAM, "--key-field", value,
                                      &opts->key_field);
    case OPTION_DELETE_FIELD:
        return cli_parse_field_number(PROGRAM, "--delete-field", value,
                                      &opts->delete_field);
    case OPTION_WINDOW:
        return positive("--window", value, &opts->window);
    case OPTION_SKIP_BAD:
        opts->skip_bad = true;
        return CLI_CONTINUE;
    case OPTION_THRESHOLD:
        opts->output = COUNT_OUTPUT_THRESHOLD;
        return positive("--threshold", value, &opts->threshold);
    case OPTION_QUERY:
        opts->output = COUNT_OUTPUT_QUERY;
        return file_name("--query", value, &opts->query_path);
    case OPTION_JSON:
        opts->json = true;
        return CLI_CONTINUE;
    case OPTION_STATS:
        opts->stats = true;
        return CLI_CONTINUE;
    case OPTION_EXACT_CHECK:
        opts->exact_check = true;
        return CLI_CONTINUE;
    case OPTION_STATE:
        return file_name("--state", value, &opts->state_path);
    case OPTION_MERGE:
        return add_merge(opts, value);
    default:
        return cli_apply_spectral_option(PROGRAM, option, value,
                                         &opts->spectral);
    }
}

/* Whether the lines to count come (in part) from standard input: no FILE
 * operand, or a "-" one. */
static bool reads_stdin(const count_options *opts)
{
    if (opts->input_count == 0)
        return true;
    for (int i = 0; i < opts->input_count; i++)
        if (strcmp(opts->inputs[i], "-") == 0)
            return true;
    return false;
}

/* Combinations that are wrong whatever the state holds. */
static int check_combinations(const count_options *opts)
{
    int status = cli_spectral_check(PROGRAM, &opts->spectral);
    if (status != CLI_CONTINUE)
        return status;
    if (opts->threshold != 0 && opts->query_path != NULL)
        return usage("--threshold cannot be combined with --query");
    if (opts->delete_field != 0 && opts->key_field == 0)
        return usage("--delete-field requires --key-field");
    if (opts->delete_field != 0 && opts->delete_field == opts->key_field)
        return usage("--delete-field must differ from --key-field");
    if (opts->window != 0) {
        /* The lines that leave are those of this run: a state or a merged
         * filter would hold counts that never leave. */
        const char *other = opts->delete_field != 0 ? "--delete-field"
                            : opts->state_path != NULL ? "--state"
                            : opts->merge_count > 0    ? "--merge"
                                                       : NULL;
        if (other != NULL) {
            cli_error(PROGRAM, "--window cannot be combined with %s", other);
            return CLI_EXIT_USAGE;
        }
    }
    if (opts->skip_bad && opts->key_field == 0)
        return usage("--skip-bad requires --key-field");
    if (opts->exact_check && !opts->stats)
        return usage("--exact-check requires --stats");
    if (opts->query_path != NULL && strcmp(opts->query_path, "-") == 0 &&
        reads_stdin(opts))
        return usage("--query - cannot read standard input: the lines to "
                     "count come from it");
    return CLI_CONTINUE;
}

/* Whether a and b name the same file (device and inode). */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* --merge of the --state file (its counts would be added to themselves)
 * or of one file twice: a usage error. Files that do not exist are left
 * to the loading, which reports them. */
static int check_merge_files(const count_options *opts)
{
    struct stat state, merged, earlier;
    bool have_state = opts->state_path != NULL &&
                      stat(opts->state_path, &state) == 0;
    for (size_t i = 0; i < opts->merge_count; i++) {
        const char *path = opts->merge_paths[i];
        if (stat(path, &merged) != 0)
            continue;
        if (have_state && same_file(&merged, &state)) {
            cli_error(PROGRAM, "--merge '%s' is the --state file '%s'", path,
                      opts->state_path);
            return CLI_EXIT_USAGE;
        }
        for (size_t j = 0; j < i; j++) {
            if (stat(opts->merge_paths[j], &earlier) == 0 &&
                same_file(&merged, &earlier)) {
                cli_error(PROGRAM, "--merge '%s' is the same file as "
                          "--merge '%s'", path, opts->merge_paths[j]);
                return CLI_EXIT_USAGE;
            }
        }
    }
    return CLI_CONTINUE;
}

/* A --query file that cannot be opened stops the run before any input
 * is read or the state touched. */
static int check_query_file(const count_options *opts)
{
    if (opts->query_path == NULL || strcmp(opts->query_path, "-") == 0)
        return CLI_CONTINUE;
    FILE *file = fopen(opts->query_path, "r");
    if (file == NULL) {
        cli_error(PROGRAM, "%s: %s", opts->query_path, strerror(errno));
        return CLI_EXIT_IO;
    }
    fclose(file);
    return CLI_CONTINUE;
}

/* Returns CLI_CONTINUE or the exit status. */
static int parse_command_line(int argc, char **argv, count_options *opts)
{
    static const struct option options[] = {
        CLI_SPECTRAL_LONG_OPTIONS,
        {"memory", required_argument, NULL, CLI_SPECTRAL_OPTION_MEMORY},
        {"k", required_argument, NULL, CLI_SPECTRAL_OPTION_K},
        {"key-field", required_argument, NULL, OPTION_KEY_FIELD},
        {"delete-field", required_argument, NULL, OPTION_DELETE_FIELD},
        {"window", required_argument, NULL, OPTION_WINDOW},
        {"skip-bad", no_argument, NULL, OPTION_SKIP_BAD},
        {"threshold", required_argument, NULL, OPTION_THRESHOLD},
        {"query", required_argument, NULL, OPTION_QUERY},
        {"json", no_argument, NULL, OPTION_JSON},
        {"stats", no_argument, NULL, OPTION_STATS},
        {"exact-check", no_argument, NULL, OPTION_EXACT_CHECK},
        {"state", required_argument, NULL, OPTION_STATE},
        {"merge", required_argument, NULL, OPTION_MERGE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cli_spectral_defaults(&opts->spectral);
    int status = cli_parse_options(PROGRAM, argc, argv, options, print_usage,
                                   apply_option, opts);
    if (status != CLI_CONTINUE)
        return status;
    opts->inputs = argv + optind;
    opts->input_count = argc - optind;
    status = check_combinations(opts);
    if (status == CLI_CONTINUE)
        status = check_merge_files(opts);
    if (status == CLI_CONTINUE)
        status = check_query_file(opts);
    return status;
}

/* ------------------------------------------------------------------------ */
/* The filter                                                               */
/* ------------------------------------------------------------------------ */

static int create_filter(const count_options *opts,
                         const ebb_spectral_params *params,
                         ebb_spectral **filter)
{
    (void)opts;
    ebb_status status = ebb_spectral_create(params, filter);
    if (status == EBB_OK)
        return CLI_CONTINUE;
    char shape[160];
    cli_spectral_describe(params, shape, sizeof shape);
    cli_error(PROGRAM, "cannot build the filter (%s): %s", shape,
              ebb_strerror(status));
    return status == EBB_ENOMEM ? CLI_EXIT_IO : CLI_EXIT_USAGE;
}

/* Reads a saved filter (--state or --merge). *filter stays NULL when the
 * file does not exist and may be missing (--state). */
static int load_file(const char *path, bool may_be_missing,
                     ebb_spectral **filter)
{
    unsigned char *bytes = NULL;
    size_t length = 0;
    bool found;
    int result = cli_read_state(PROGRAM, path, &bytes, &length, &found);
    if (result != CLI_CONTINUE)
        return result;
    if (!found) {
        if (may_be_missing)
            return CLI_CONTINUE;
        cli_error(PROGRAM, "%s: %s", path, strerror(ENOENT));
        return CLI_EXIT_IO;
    }
    ebb_status status = ebb_spectral_load(bytes, length, filter);
    free(bytes);
    /* Another family's snapshot is a state error like a damaged one (as
     * in `ebb dedup`): "snapshot is of another filter family", exit 1. */
    if (status != EBB_OK) {
        cli_error(PROGRAM, "%s: %s", path, ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    return CLI_CONTINUE;
}

/* The shape fields the options decide (all but the seed, which a state
 * brings). */
static bool same_shape(const ebb_spectral_params *a,
                       const ebb_spectral_params *b)
{
    return a->counters == b->counters && a->counter_bits == b->counter_bits &&
           a->k == b->k && a->method == b->method &&
           a->secondary == b->secondary && a->secondary_k == b->secondary_k &&
           a->marker == b->marker && a->marker_size == b->marker_size &&
           a->trap_slots == b->trap_slots && a->range == b->range &&
           a->storage == b->storage;
}

/* The option given that disagrees with the held filter, or NULL: the
 * method, counter bits and k given are compared as they are; a sizing
 * option (--memory, --distinct, --error) by the shape it chooses with the
 * held method, counter bits and k for the options not given. Sets
 * *status on a usage error of the choice. */
static const char *disagreeing_option(const cli_spectral_options *given,
                                      const ebb_spectral_params *held,
                                      const char **value, int *status)
{
    *status = CLI_CONTINUE;
    if (given->have_method && given->method != held->method)
        return *value = given->method_text, "--method";
    if (given->have_counter_bits && given->counter_bits != held->counter_bits)
        return *value = given->counter_bits_text, "--counter-bits";
    if (given->have_k && given->k != held->k)
        return *value = given->k_text, "--k";
    if (given->have_storage && given->storage != held->storage)
        return *value = given->storage_text, "--storage";
    if (!given->have_memory && !given->have_distinct && !given->have_error)
        return NULL;
    cli_spectral_options spectral = *given;
    spectral.method = held->method;
    spectral.storage = held->storage;
    if (spectral.have_memory) {
        spectral.counter_bits = held->counter_bits;
        spectral.k = held->k;
        spectral.have_k = true; /* not the best k for --distinct */
    }
    ebb_spectral_params wanted;
    *status = cli_spectral_choose(PROGRAM, &spectral, COUNT_SEED, &wanted);
    if (*status != CLI_CONTINUE || same_shape(&wanted, held))
        return NULL;
    if (given->have_memory)
        return *value = given->memory_text, "--memory";
    if (given->have_distinct)
        return *value = given->distinct_text, "--distinct";
    return *value = given->error_text, "--error";
}

/* A loaded filter against the options given: those not given are the
 * held filter's. */
static int check_loaded(const count_options *opts, const char *path,
                        const ebb_spectral *filter)
{
    const ebb_spectral_params *held = ebb_spectral_get_params(filter);
    const char *value = NULL;
    int status;
    const char *option = disagreeing_option(&opts->spectral, held, &value,
                                            &status);
    if (option == NULL)
        return status;
    char shape[160];
    cli_spectral_describe(held, shape, sizeof shape);
    return cli_disagrees(PROGRAM, option, value, path, shape);
}

/* Adds every --merge state to the filter. Without a filter yet (no state,
 * no sizing option), the first merged state becomes it. */
static int merge_states(const count_options *opts, ebb_spectral **filter)
{
    for (size_t i = 0; i < opts->merge_count; i++) {
        const char *path = opts->merge_paths[i];
        ebb_spectral *other = NULL;
        int result = load_file(path, false, &other);
        if (result != CLI_CONTINUE)
            return result;
        if (*filter == NULL) {
            *filter = other;
            continue;
        }
        ebb_status status = ebb_spectral_merge(*filter, other, 1, 0);
        ebb_spectral_destroy(other);
        if (status == EBB_EINVAL) {
            char shape[160];
            cli_spectral_describe(ebb_spectral_get_params(*filter), shape,
                                  sizeof shape);
            cli_error(PROGRAM, "cannot merge '%s': its filter is not %s with "
                      "the same seed", path, shape);
            return CLI_EXIT_USAGE;
        }
        if (status != EBB_OK) {
            cli_error(PROGRAM, "cannot merge '%s': %s", path,
                      ebb_strerror(status));
            return CLI_EXIT_IO;
        }
    }
    return CLI_CONTINUE;
}

/* The filter: loaded from --state, else the first --merge state when no
 * sizing option is given, else created; then the merges. */
static int open_filter(const count_options *opts, ebb_spectral **filter)
{
    *filter = NULL;
    int status = CLI_CONTINUE;
    if (opts->state_path != NULL) {
        status = load_file(opts->state_path, true, filter);
        if (status == CLI_CONTINUE && *filter != NULL)
            status = check_loaded(opts, opts->state_path, *filter);
    }
    const char *option, *value;
    bool sized = cli_spectral_option_given(&opts->spectral, &option, &value);
    if (status == CLI_CONTINUE && *filter == NULL &&
        (opts->merge_count == 0 || sized)) {
        ebb_spectral_params params;
        status = cli_spectral_choose(PROGRAM, &opts->spectral, COUNT_SEED,
                                     &params);
        if (status == CLI_CONTINUE)
            status = create_filter(opts, &params, filter);
    }
    if (status == CLI_CONTINUE)
        status = merge_states(opts, filter);
    if (status == CLI_CONTINUE &&
        ebb_spectral_get_params(*filter)->method == EBB_SPECTRAL_MI &&
        (opts->delete_field != 0 || opts->window != 0))
        status = usage(opts->window != 0
                           ? "--window needs deletions, which --method mi "
                             "refuses"
                           : "--delete-field needs deletions, which --method "
                             "mi refuses");
    if (status != CLI_CONTINUE) {
        ebb_spectral_destroy(*filter);
        *filter = NULL;
    }
    return status;
}

static int save_filter(const char *path, const ebb_spectral *filter)
{
    size_t length = ebb_spectral_snapshot_size(filter);
    unsigned char *bytes = malloc(length);
    ebb_status status = bytes != NULL
                            ? ebb_spectral_save(filter, bytes, length, NULL)
                            : EBB_ENOMEM;
    return cli_save_snapshot(PROGRAM, path, bytes, length, status);
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

/* The watch, the table and the ring the options need. */
static int prepare_run(count_run *run)
{
    const count_options *opts = run->opts;
    bool keep_lines = opts->output == COUNT_OUTPUT_ALL;
    bool ok = true;
    if (keep_lines || opts->exact_check) {
        ok = count_table_init(&run->table, keep_lines, opts->exact_check);
        run->have_table = ok;
    }
    if (ok && opts->output == COUNT_OUTPUT_THRESHOLD)
        ok = ebb_spectral_watch_create(opts->threshold, 0, &run->watch) ==
             EBB_OK;
    if (ok && opts->window != 0) {
        ok = opts->window <= SIZE_MAX / sizeof *run->ring;
        run->ring = ok ? malloc((size_t)opts->window * sizeof *run->ring)
                       : NULL;
        ok = run->ring != NULL;
    }
    if (!ok) {
        cli_error(PROGRAM, "cannot allocate the run's memory: %s",
                  ebb_strerror(EBB_ENOMEM));
        return CLI_EXIT_IO;
    }
    return CLI_CONTINUE;
}

static void finish_run(count_run *run)
{
    if (run->have_table)
        count_table_free(&run->table);
    ebb_spectral_watch_destroy(run->watch);
    free(run->ring);
    ebb_spectral_destroy(run->filter);
}

/* --exact-check: every key whose exact count is above 0 against its
 * estimate; saturated estimates are counted apart. */
static void print_exact_check(const count_run *run)
{
    const count_table *table = &run->table;
    uint64_t keys = 0, saturated = 0, above = 0, below = 0;
    double squares = 0.0;
    for (size_t i = 0; i < table->keys; i++) {
        if (table->exact[i] <= 0)
            continue;
        keys++;
        uint64_t estimate = ebb_spectral_estimate_hash(run->filter,
                                                       table->hashes[i]);
        /* A saturated estimate says "at least the maximum": its error is
         * unknown, so it is left out of the figures. */
        if (estimate == EBB_SPECTRAL_SATURATED) {
            saturated++;
            continue;
        }
        double difference = (double)estimate - (double)table->exact[i];
        above += difference > 0.0;
        below += difference < 0.0;
        squares += difference * difference;
    }
    double n = keys > saturated ? (double)(keys - saturated) : 1.0;
    fprintf(stderr,
            "exact keys: %" PRIu64 "\n"
            "keys saturated: %" PRIu64 "\n"
            "keys above truth: %" PRIu64 "\n"
            "keys below truth: %" PRIu64 "\n"
            "squared error sum: %.17g\n"
            "error ratio: %.9g\n"
            "additive error: %.9g\n"
            "removals of absent keys: %" PRIu64 "\n",
            keys, saturated, above, below, squares, (double)(above + below) / n,
            sqrt(squares / n), run->counts.absent_removals);
}

static void print_stats(const count_run *run)
{
    const count_counts *c = &run->counts;
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "occurrences added: %" PRIu64 "\n"
            "occurrences removed: %" PRIu64 "\n"
            "removals refused: %" PRIu64 "\n"
            "bad lines: %" PRIu64 "\n",
            c->lines_read, c->added, c->removed, c->refused, c->bad_lines);
    if (run->opts->output == COUNT_OUTPUT_THRESHOLD)
        fprintf(stderr, "lines reported: %" PRIu64 "\n", c->reported);
    if (run->opts->output == COUNT_OUTPUT_QUERY)
        fprintf(stderr, "lines queried: %" PRIu64 "\n", c->queried);
    const ebb_spectral_params *params = ebb_spectral_get_params(run->filter);
    if (run->have_table) {
        uint64_t distinct = run->table.keys;
        fprintf(stderr,
                "distinct keys: %" PRIu64 "\n"
                "key table bytes: %zu\n"
                "gamma: %.6g\n"
                "expected ms error ratio: %.6g\n",
                distinct, count_table_memory(&run->table),
                ebb_spectral_gamma(params, distinct),
                ebb_spectral_error_ratio(params, distinct));
    }
    cli_spectral_print_shape(stderr, params, 0);
    ebb_spectral_stats s;
    ebb_spectral_get_stats(run->filter, &s);
    fprintf(stderr,
            "filter added: %" PRIu64 "\n"
            "filter removed: %" PRIu64 "\n"
            "filter refused removals: %" PRIu64 "\n"
            "saturations: %" PRIu64 "\n"
            "nonzero counters: %" PRIu64 "\n",
            s.added, s.removed, s.refused_removals, s.saturations, s.nonzero);
    /* Compact counters grow: what the filter holds now, beside the empty
     * filter's "memory bytes" of the shape. */
    if (params->storage != EBB_SPECTRAL_FIXED)
        fprintf(stderr, "filter memory bytes now: %zu\n",
                ebb_spectral_memory(run->filter));
    if (params->method == EBB_SPECTRAL_RM)
        fprintf(stderr,
                "moved to secondary: %" PRIu64 "\n"
                "moves refused (marker full): %" PRIu64 "\n",
                s.moved, s.moves_refused);
    if (run->opts->exact_check)
        print_exact_check(run);
}

int ebb_cli_count(int argc, char **argv)
{
    count_options opts;
    memset(&opts, 0, sizeof opts);
    int status = parse_command_line(argc, argv, &opts);
    count_run run;
    memset(&run, 0, sizeof run);
    run.opts = &opts;
    if (status == CLI_CONTINUE)
        status = open_filter(&opts, &run.filter);
    if (status == CLI_CONTINUE)
        status = prepare_run(&run);
    if (status == CLI_CONTINUE) {
        cli_prepare_output();
        status = count_inputs(&run);
    }
    if (status == CLI_CONTINUE)
        status = count_answer(&run);
    if (status == CLI_CONTINUE && opts.stats)
        print_stats(&run);
    if (status == CLI_CONTINUE && opts.state_path != NULL)
        status = save_filter(opts.state_path, run.filter);
    finish_run(&run);
    free(opts.merge_paths);
    return status == CLI_CONTINUE ? CLI_EXIT_OK : status;
}
