/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * count_stream.c: the lines of `ebb count` and its output.
 *
 * The key is the line (the bytes before its '\n') or its --key-field.
 * With --delete-field N, field N is the operation: "+" adds one
 * occurrence of the key, "-" removes one; any other value, or no field N,
 * makes the line bad: an error naming the input and line (exit 1), or with
 * --skip-bad a line skipped (counted, nothing changed). With --window N,
 * the occurrence added N lines before leaves the filter as each new line
 * comes (a ring of the last N hashes; a skipped line does not enter it).
 *
 * Without --threshold, --window and --delete-field nothing reads the
 * filter or the table before the end of an input, so the lines are
 * gathered and applied a batch at a time, in order ("Batches" below):
 * the same keys numbered in the same order, the filter in the same state,
 * the same output, with the cache misses of many lines overlapping.
 *
 * Output lines are "count<TAB>key" (a saturated estimate is the counter
 * maximum followed by '+', "at least"), or with --json
 * {"count": N, "saturated": false, "key": "..."}, the key a JSON string
 * (UTF-8 as is, other bytes as \u00XX).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "count.h"
#include "lines.h"
#include "timestamp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM COUNT_PROGRAM

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence starting at bytes (at most left
 * of them), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *bytes, size_t left)
{
    unsigned char lead = bytes[0];
    size_t length;
    uint32_t code, least;
    if (lead >= 0xc2 && lead <= 0xdf)
        length = 2, code = lead & 0x1fu, least = 0x80;
    else if (lead >= 0xe0 && lead <= 0xef)
        length = 3, code = lead & 0x0fu, least = 0x800;
    else if (lead >= 0xf0 && lead <= 0xf4)
        length = 4, code = lead & 0x07u, least = 0x10000;
    else
        return 0;
    if (length > left)
        return 0;
    for (size_t i = 1; i < length; i++) {
        if ((bytes[i] & 0xc0u) != 0x80u)
            return 0;
        code = code << 6 | (bytes[i] & 0x3fu);
    }
    bool surrogate = code >= 0xd800 && code <= 0xdfff;
    return code < least || code > 0x10ffff || surrogate ? 0 : length;
}

static void put_json_key(const char *key, size_t length)
{
    const unsigned char *bytes = (const unsigned char *)key;
    putchar('"');
    size_t i = 0;
    while (i < length) {
        unsigned char c = bytes[i];
        size_t run = c >= 0x80 ? utf8_sequence(bytes + i, length - i) : 1;
        if (c == '"' || c == '\\') {
            putchar('\\');
            putchar(c);
        } else if (c == '\n') {
            fputs("\\n", stdout);
        } else if (c == '\t') {
            fputs("\\t", stdout);
        } else if (c < 0x20 || c == 0x7f || run == 0) {
            printf("\\u%04x", c);
        } else {
            fwrite(bytes + i, 1, run, stdout);
            i += run;
            continue;
        }
        i++;
    }
    putchar('"');
}

void count_put_estimate(const count_run *run, uint64_t estimate,
                        const char *key, size_t length)
{
    bool saturated = estimate == EBB_SPECTRAL_SATURATED;
    if (saturated) {
        uint32_t bits = ebb_spectral_get_params(run->filter)->counter_bits;
        estimate = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    }
    if (run->opts->json) {
        printf("{\"count\": %" PRIu64 ", \"saturated\": %s, \"key\": ",
               estimate, saturated ? "true" : "false");
        put_json_key(key, length);
        fputs("}\n", stdout);
        return;
    }
    printf("%" PRIu64 "%s\t", estimate, saturated ? "+" : "");
    fwrite(key, 1, length, stdout);
    putchar('\n');
}

static int check_output(void)
{
    if (ferror(stdout))
        return cli_write_error(PROGRAM, errno != 0 ? errno : EIO);
    return CLI_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                    */
/* ------------------------------------------------------------------------ */

static void report_missing(const cli_input *input, const char *line,
                           size_t length, const char *what, uint32_t field)
{
    uint32_t count = cli_count_fields(line, length);
    cli_error(PROGRAM, "%s: line %" PRIu64 ": no %s field %" PRIu32
              " (the line has %" PRIu32 " %s)", input->name,
              input->line_number, what, field, count,
              count == 1 ? "field" : "fields");
}

/* The line's key and whether it removes. False for a bad line (reported
 * unless quiet). */
static bool examine_line(const count_run *run, const cli_input *input,
                         const char *line, size_t length, bool quiet,
                         cli_field *key, bool *remove)
{
    const count_options *opts = run->opts;
    *key = (cli_field){0, length};
    *remove = false;
    if (opts->key_field != 0 &&
        !cli_line_field(line, length, opts->key_field, key)) {
        if (!quiet)
            report_missing(input, line, length, "key", opts->key_field);
        return false;
    }
    if (opts->delete_field == 0)
        return true;
    cli_field op;
    if (!cli_line_field(line, length, opts->delete_field, &op)) {
        if (!quiet)
            report_missing(input, line, length, "delete", opts->delete_field);
        return false;
    }
    const char *mark = line + op.start;
    if (op.length == 1 && (*mark == '-' || *mark == '+')) {
        *remove = *mark == '-';
        return true;
    }
    if (!quiet) {
        char text[CLI_QUOTE_SIZE];
        cli_quote_bytes(mark, op.length, text);
        cli_error(PROGRAM, "%s: line %" PRIu64 ": delete field %" PRIu32
                  " '%s' is not '" COUNT_ADD_MARK "' or '" COUNT_REMOVE_MARK
                  "'", input->name, input->line_number, opts->delete_field,
                  text);
    }
    return false;
}

/* Whether the exact table says the key has no occurrence to remove: never
 * seen, or (with --exact-check) all its occurrences removed. Without the
 * table nothing is known. */
static bool known_absent(const count_run *run, ebb_hash128 hash)
{
    if (!run->have_table)
        return false;
    size_t index;
    if (!count_table_find(&run->table, hash, &index))
        return true;
    return run->table.count_exactly && run->table.exact[index] <= 0;
}

/* One occurrence of the key with this hash leaves the filter (and the
 * exact count). A removal the table knows to be of an absent key is
 * refused: subtracted, it would take other keys' counts down (their
 * counters are the only ones it could find above 0). */
static void remove_one(count_run *run, ebb_hash128 hash)
{
    if (known_absent(run, hash)) {
        run->counts.refused++;
        run->counts.absent_removals++;
        return;
    }
    ebb_status status = ebb_spectral_remove_hash(run->filter, hash, 1);
    if (status == EBB_OK)
        run->counts.removed++;
    else
        run->counts.refused++;
    /* The key had an occurrence: the truth loses it either way. */
    if (run->have_table && run->table.count_exactly) {
        size_t index;
        if (count_table_find(&run->table, hash, &index))
            run->table.exact[index]--;
    }
}

/* --window: the occurrence of N lines before leaves, this one enters. */
static void slide_window(count_run *run, ebb_hash128 hash)
{
    uint64_t window = run->opts->window;
    if (run->ring_used == window)
        remove_one(run, run->ring[run->ring_next]);
    else
        run->ring_used++;
    run->ring[run->ring_next] = hash;
    run->ring_next = run->ring_next + 1 == window ? 0 : run->ring_next + 1;
}

static int out_of_memory(const char *input_name, uint64_t line_number)
{
    cli_error(PROGRAM, "%s: line %" PRIu64 ": cannot remember more keys: %s",
              input_name, line_number, ebb_strerror(EBB_ENOMEM));
    return CLI_EXIT_IO;
}

/* Adds one occurrence: to the table, then to the filter (through the
 * watch with --threshold, writing the report). */
static int add_one(count_run *run, const cli_input *input, ebb_hash128 hash,
                   const char *key, size_t length)
{
    if (run->have_table) {
        size_t index;
        if (!count_table_find_or_add(&run->table, hash, key, length, &index))
            return out_of_memory(input->name, input->line_number);
        if (run->table.count_exactly)
            run->table.exact[index]++;
    }
    run->counts.added++;
    if (run->watch == NULL) {
        ebb_spectral_add_hash(run->filter, hash, 1);
        return CLI_CONTINUE;
    }
    bool reported = false;
    if (ebb_spectral_watch_add(run->filter, run->watch, hash, 1,
                               &reported) != EBB_OK)
        return out_of_memory(input->name, input->line_number);
    if (!reported)
        return CLI_CONTINUE;
    run->counts.reported++;
    count_put_estimate(run, ebb_spectral_estimate_hash(run->filter, hash),
                       key, length);
    return check_output();
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Applied as it comes, a line waits on about two cache misses in the
 * table (its home slot, then the hash of the key the slot names) and k in
 * the filter, one after the other: with 10^6 distinct keys both are far
 * larger than the caches. A batch keeps each line's hash and key (copied:
 * the reader's buffer holds one line only), starts loading its home slot
 * when it comes, and at the end of the batch applies the lines in order,
 * loading the key a slot names KEY_AHEAD lines ahead, then gives the
 * filter all the hashes at once (ebb_spectral_add_batch prefetches
 * their counters ahead in the same way).
 */

/* Lines a batch holds: enough that the pipelines' start (the lines not
 * yet prefetched) is a small share of it, few enough that their slots
 * stay in the caches until the batch is applied. */
#define BATCH_LINES 512u
/* The bytes of the kept keys of a batch; a longer key is applied alone. */
#define BATCH_BYTES ((size_t)1 << 16)
/* Lines ahead of the one applied whose key is prefetched. */
#define KEY_AHEAD 16u

typedef struct count_batch {
    const cli_input *input; /* of every line: applied at each input's end */
    size_t lines;
    ebb_hash128 hashes[BATCH_LINES];
    size_t starts[BATCH_LINES], lengths[BATCH_LINES]; /* keys in bytes */
    uint64_t line_numbers[BATCH_LINES];                 /* for a message */
    char bytes[BATCH_BYTES]; /* the keys, when the table keeps lines */
    size_t bytes_used;
} count_batch;

/* The batch's keys into the table, in order. Sets *applied to the lines
 * added: all of them, but for running out of memory (returned). */
static int batch_to_table(count_run *run, size_t *applied)
{
    count_batch *batch = run->batch;
    count_table *table = &run->table;
    size_t n = batch->lines;
    for (size_t i = 0; i < KEY_AHEAD && i < n; i++)
        count_table_prefetch_key(table, batch->hashes[i]);
    for (size_t i = 0; i < n; i++) {
        if (i + KEY_AHEAD < n)
            count_table_prefetch_key(table, batch->hashes[i + KEY_AHEAD]);
        size_t index;
        if (!count_table_find_or_add(table, batch->hashes[i],
                                     batch->bytes + batch->starts[i],
                                     batch->lengths[i], &index)) {
            *applied = i;
            return out_of_memory(batch->input->name, batch->line_numbers[i]);
        }
        if (table->count_exactly)
            table->exact[index]++;
    }
    *applied = n;
    return CLI_CONTINUE;
}

/* Applies the lines gathered (none without a batch) and empties it. */
static int apply_batch(count_run *run)
{
    count_batch *batch = run->batch;
    if (batch == NULL || batch->lines == 0)
        return CLI_CONTINUE;
    size_t applied = batch->lines;
    int status = CLI_CONTINUE;
    if (run->have_table)
        status = batch_to_table(run, &applied);
    ebb_spectral_add_batch(run->filter, batch->hashes, NULL, applied);
    run->counts.added += applied;
    batch->lines = 0;
    batch->bytes_used = 0;
    return status;
}

/* Adds the line to the batch, applying the batch first when full. */
static int gather_line(count_run *run, const cli_input *input,
                       ebb_hash128 hash, const char *key, size_t length)
{
    count_batch *batch = run->batch;
    size_t copied = run->table.keep_lines ? length : 0;
    if (batch->lines == BATCH_LINES ||
        copied > BATCH_BYTES - batch->bytes_used) {
        int status = apply_batch(run);
        if (status != CLI_CONTINUE)
            return status;
        if (copied > BATCH_BYTES)
            return add_one(run, input, hash, key, length);
    }
    size_t i = batch->lines++;
    batch->input = input;
    batch->hashes[i] = hash;
    batch->line_numbers[i] = input->line_number;
    batch->starts[i] = batch->bytes_used;
    batch->lengths[i] = length;
    memcpy(batch->bytes + batch->bytes_used, key, copied);
    batch->bytes_used += copied;
    if (run->have_table)
        count_table_prefetch_slot(&run->table, hash);
    return CLI_CONTINUE;
}

/* A cli_input_end_handler: a batch never holds lines of two inputs (the
 * messages name the input). */
static int end_input(void *context, const cli_input *input)
{
    (void)input;
    return apply_batch(context);
}

/* A bad line: skipped and counted with --skip-bad; else the lines before
 * it are applied (an error of theirs comes first, as it came) and it is
 * reported. */
static int bad_line(count_run *run, const cli_input *input,
                    const char *line, size_t length)
{
    if (run->opts->skip_bad) {
        run->counts.bad_lines++;
        return CLI_CONTINUE;
    }
    int status = apply_batch(run);
    if (status != CLI_CONTINUE)
        return status;
    cli_field key;
    bool remove;
    (void)examine_line(run, input, line, length, false, &key, &remove);
    return CLI_EXIT_IO;
}

/* A cli_line_handler. */
static int take_line(void *context, const cli_input *input,
                     const char *bytes, size_t length)
{
    count_run *run = context;
    if (length > 0 && bytes[length - 1] == '\n')
        length--;
    run->counts.lines_read++;
    cli_field key;
    bool remove;
    /* Quietly: a bad line is reported after the lines gathered before. */
    if (!examine_line(run, input, bytes, length, true, &key, &remove))
        return bad_line(run, input, bytes, length);
    const char *key_bytes = bytes + key.start;
    ebb_hash128 hash = ebb_spectral_hash(run->filter, key_bytes, key.length);
    if (run->batch != NULL)
        return gather_line(run, input, hash, key_bytes, key.length);
    if (remove) {
        remove_one(run, hash);
        return CLI_CONTINUE;
    }
    if (run->opts->window != 0)
        slide_window(run, hash);
    return add_one(run, input, hash, key_bytes, key.length);
}

/* A batch when nothing reads the filter or the table before the end
 * (no --threshold, --window or --delete-field). Without the memory for
 * one, each line is applied as it comes. */
static void open_batch(count_run *run)
{
    const count_options *opts = run->opts;
    run->batch = NULL;
    if (run->watch == NULL && opts->window == 0 && opts->delete_field == 0)
        run->batch = malloc(sizeof *run->batch);
    if (run->batch != NULL) {
        run->batch->lines = 0;
        run->batch->bytes_used = 0;
    }
}

int count_inputs(count_run *run)
{
    open_batch(run);
    int status = cli_read_inputs(PROGRAM, run->opts->inputs,
                                 run->opts->input_count, take_line, end_input,
                                 run);
    free(run->batch); /* empty after the last input's end */
    run->batch = NULL;
    if (status != CLI_CONTINUE)
        fflush(stdout); /* the reports before the bad line, as they came */
    return status;
}

/* ------------------------------------------------------------------------ */
/* The answers at the end                                                   */
/* ------------------------------------------------------------------------ */

/* Keys whose estimates are read at once: ebb_spectral_estimate_batch
 * overlaps their counters' cache misses. */
#define ANSWER_KEYS 256u

/* Every distinct line, first seen first, unless its estimate is 0 (all
 * its occurrences removed, or out of the window). */
static int answer_all(count_run *run)
{
    const count_table *table = &run->table;
    uint64_t estimates[ANSWER_KEYS];
    size_t cursor = 0;
    for (size_t first = 0; first < table->keys; first += ANSWER_KEYS) {
        size_t n = table->keys - first;
        n = n < ANSWER_KEYS ? n : ANSWER_KEYS;
        ebb_spectral_estimate_batch(run->filter, table->hashes + first, n,
                                    estimates);
        for (size_t i = 0; i < n; i++) {
            const char *line;
            size_t length;
            count_table_next_line(table, &cursor, &line, &length);
            if (estimates[i] == 0)
                continue;
            count_put_estimate(run, estimates[i], line, length);
            int status = check_output();
            if (status != CLI_CONTINUE)
                return status;
        }
    }
    return CLI_CONTINUE;
}

/* A cli_line_handler for the lines of --query: each line is a key. */
static int take_query(void *context, const cli_input *input,
                      const char *bytes, size_t length)
{
    (void)input;
    count_run *run = context;
    if (length > 0 && bytes[length - 1] == '\n')
        length--;
    run->counts.queried++;
    count_put_estimate(run, ebb_spectral_estimate(run->filter, bytes, length),
                       bytes, length);
    return check_output();
}

int count_answer(count_run *run)
{
    int status = CLI_CONTINUE;
    if (run->opts->output == COUNT_OUTPUT_ALL) {
        status = answer_all(run);
    } else if (run->opts->output == COUNT_OUTPUT_QUERY) {
        /* cli_read_inputs takes operands as argv holds them. */
        char *path = strdup(run->opts->query_path);
        if (path == NULL) {
            cli_error(PROGRAM, "%s", strerror(ENOMEM));
            return CLI_EXIT_IO;
        }
        status = cli_read_inputs(PROGRAM, &path, 1, take_query, NULL, run);
        free(path);
    }
    if (status != CLI_CONTINUE) {
        fflush(stdout);
        return status;
    }
    return cli_finish_output(PROGRAM);
}
