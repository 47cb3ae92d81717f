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
 * unless skipping). */
static bool examine_line(const count_run *run, const cli_input *input,
                         const char *line, size_t length, cli_field *key,
                         bool *remove)
{
    const count_options *opts = run->opts;
    bool quiet = opts->skip_bad;
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

/* One occurrence of the key with this hash leaves the filter (and the
 * exact count). */
static void remove_one(count_run *run, ebb_hash128 hash)
{
    ebb_status status = ebb_spectral_remove_hash(run->filter, hash, 1);
    if (status == EBB_OK)
        run->counts.removed++;
    else
        run->counts.refused++;
    if (!run->have_table || !run->table.count_exactly)
        return;
    size_t index;
    if (count_table_find(&run->table, hash, &index) &&
        run->table.exact[index] > 0)
        run->table.exact[index]--;
    else
        run->counts.absent_removals++;
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

static int out_of_memory(const cli_input *input)
{
    cli_error(PROGRAM, "%s: line %" PRIu64 ": cannot remember more keys: %s",
              input->name, input->line_number, ebb_strerror(EBB_ENOMEM));
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
            return out_of_memory(input);
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
        return out_of_memory(input);
    if (!reported)
        return CLI_CONTINUE;
    run->counts.reported++;
    count_put_estimate(run, ebb_spectral_estimate_hash(run->filter, hash),
                       key, length);
    return check_output();
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
    if (!examine_line(run, input, bytes, length, &key, &remove)) {
        if (!run->opts->skip_bad)
            return CLI_EXIT_IO;
        run->counts.bad_lines++;
        return CLI_CONTINUE;
    }
    const char *key_bytes = bytes + key.start;
    ebb_hash128 hash = ebb_spectral_hash(run->filter, key_bytes, key.length);
    if (remove) {
        remove_one(run, hash);
        return CLI_CONTINUE;
    }
    if (run->opts->window != 0)
        slide_window(run, hash);
    return add_one(run, input, hash, key_bytes, key.length);
}

int count_inputs(count_run *run)
{
    int status = cli_read_inputs(PROGRAM, run->opts->inputs,
                                 run->opts->input_count, take_line, NULL,
                                 run);
    if (status != CLI_CONTINUE)
        fflush(stdout); /* the reports before the bad line, as they came */
    return status;
}

/* ------------------------------------------------------------------------ */
/* The answers at the end                                                   */
/* ------------------------------------------------------------------------ */

/* Every distinct line, first seen first, unless its estimate is 0 (all
 * its occurrences removed, or out of the window). */
static int answer_all(count_run *run)
{
    const count_table *table = &run->table;
    size_t cursor = 0;
    for (size_t i = 0; i < table->keys; i++) {
        const char *line;
        size_t length;
        count_table_next_line(table, &cursor, &line, &length);
        uint64_t estimate = ebb_spectral_estimate_hash(run->filter,
                                                       table->hashes[i]);
        if (estimate == 0)
            continue;
        count_put_estimate(run, estimate, line, length);
        int status = check_output();
        if (status != CLI_CONTINUE)
            return status;
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
