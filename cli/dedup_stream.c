/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dedup_stream.c: reading the input lines of `ebb dedup`, finding their
 * keys and times, and answering them.
 *
 * For every input line (the bytes before its '\n'; any byte may occur, NUL
 * and '\r' included) the filter is asked whether the line's key occurred
 * recently, and the key is then always added, so every line counts as an
 * occurrence whether it is printed or not. The line is printed exactly as
 * read when it was not seen (--invert: when it was).
 *
 * The key is the line, or with --key-field N its N-th field, or with
 * --time-field N (and no --key-field) the line with its timestamp cut out:
 * two log lines that differ only in their time are the same event. An
 * --importance-field is cut out the same way: the importance says how
 * long to remember the line, not which line it is.
 *
 * Lines are taken in batches: up to BATCH_LINES lines are read (each with
 * its key and time found as it is read), then answered in order. A count
 * window hands the batch to ebb_apbf_check_and_add_batch, which overlaps
 * the memory accesses and gives exactly the one-at-a-time answers; a
 * stable filter to ebb_stable_test_and_add_batch, with the same promise
 * (answers and final state, generator included); a timing filter to
 * ebb_timing_test_and_add_batch, with the same promise. A time window asks
 * and adds line by line: contains at the line's time, then add.
 *
 * Stable filters with an importance field: the field is parsed as a
 * decimal number as the line is read, and ebb_stable_level says which
 * level it sets; an importance outside the range under
 * --importance-out-of-range refuse makes the line bad (never handed to the
 * filter, so the library's own refusal is never reached).
 *
 * Time windows: a line's time is its --time-field, or the arrival clock
 * (CLOCK_REALTIME read as the line is read: exact whatever the batching).
 * A time earlier than the latest one remembered is clamped to it and
 * counted, exactly as the library does; the run passes the clamped time to
 * both contains and add, so every answer is "was the key added at most T
 * before this line's (clamped) time?".
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "dedup.h"
#include "lines.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Lines per batch, and the bytes after which a batch is answered early
 * (so that a batch of long lines does not hold much memory). On a terminal
 * each line is answered as soon as it is read. */
#define BATCH_LINES 256u
#define BATCH_BYTES ((size_t)1 << 16)

/* Lines read but not yet answered: their bytes one after the other in
 * arena (each with its '\n', if it had one, and its key after it when the
 * key is not a part of the line), and what the filter says. */
typedef struct line_batch {
    char *arena;
    size_t arena_used, arena_capacity;
    size_t count, capacity; /* lines held; lines per batch (<= BATCH_LINES) */
    size_t start[BATCH_LINES];  /* offset of each line in arena          */
    size_t length[BATCH_LINES]; /* bytes as read, '\n' included          */
    size_t key_start[BATCH_LINES];
    size_t key_length[BATCH_LINES];
    int64_t time[BATCH_LINES];  /* time windows: the line's time (ns)   */
    double importance[BATCH_LINES]; /* stable: the line's importance   */
    uint64_t number[BATCH_LINES]; /* line number in its input           */
    bool bad[BATCH_LINES];      /* passed through (--skip-bad)           */
    /* Scratch for answering: the good lines' keys, compacted. */
    const void *key[BATCH_LINES];
    size_t good_length[BATCH_LINES];
    double good_importance[BATCH_LINES];
    ebb_hash128 hash[BATCH_LINES];
    bool seen[BATCH_LINES];
} line_batch;

/* One run over all the inputs. */
typedef struct dedup_run {
    const dedup_options *opts;
    dedup_filter *filter;
    dedup_counts *counts;
    line_batch *batch;
    const char *input;   /* the input being read, for messages          */
    uint64_t line_number; /* of the last line read from it              */
    int64_t latest_ns;   /* time windows: the latest time remembered,
                            INT64_MIN before any                         */
    bool refusal_reported, eviction_reported;
} dedup_run;

/* A line as read, with what was found in it. */
typedef struct read_line {
    const char *bytes;
    size_t length;      /* '\n' included when present */
    size_t text_length; /* without the '\n'           */
    int64_t time;
    double importance;  /* stable filters             */
    cli_field key;      /* when key_cut is false      */
    bool key_cut;       /* the key is the line less cut */
    cli_field cut;
    bool bad;
    bool refused;       /* bad: an importance out of range (refuse) */
} read_line;

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */
/* ------------------------------------------------------------------------ */

/* A reader that went away (EPIPE, e.g. `ebb dedup | head`) is not worth a
 * message; any other write error is. */
static int report_write_error(int error)
{
    return cli_write_error(DEDUP_PROGRAM, error);
}

static const char *fields_word(uint32_t count)
{
    return count == 1 ? "field" : "fields";
}

static void report_missing_field(const dedup_run *run, const char *what,
                                 uint32_t number, const read_line *line)
{
    uint32_t count = cli_count_fields(line->bytes, line->text_length);
    cli_error(DEDUP_PROGRAM, "%s: line %" PRIu64 ": no %s field %" PRIu32
              " (the line has %" PRIu32 " %s)", run->input, run->line_number,
              what, number, count, fields_word(count));
}

static void report_bad_time(const dedup_run *run, cli_time_result result,
                            const read_line *line, const cli_field *span)
{
    const dedup_options *opts = run->opts;
    if (result == CLI_TIME_MISSING) {
        report_missing_field(run, "time", opts->time_field, line);
        return;
    }
    char text[CLI_QUOTE_SIZE];
    cli_quote_bytes(line->bytes + span->start, span->length, text);
    const char *format = cli_time_format_name(opts->time_format);
    if (result == CLI_TIME_RANGE)
        cli_error(DEDUP_PROGRAM, "%s: line %" PRIu64 ": time field %" PRIu32
                  " '%s' is out of range for %s (years 1677 to 2262)",
                  run->input, run->line_number, opts->time_field, text,
                  format);
    else
        cli_error(DEDUP_PROGRAM, "%s: line %" PRIu64 ": cannot parse time "
                  "field %" PRIu32 " '%s' as %s", run->input,
                  run->line_number, opts->time_field, text, format);
}

/* "importance field N '7'": the field's text, quoted. out needs
 * CLI_QUOTE_SIZE bytes. */
static void quote_field(const read_line *line, const cli_field *field,
                        char *out)
{
    cli_quote_bytes(line->bytes + field->start, field->length, out);
}

static void report_bad_importance(const dedup_run *run, const read_line *line,
                                  const cli_field *field, bool out_of_range)
{
    const dedup_options *opts = run->opts;
    char text[CLI_QUOTE_SIZE];
    quote_field(line, field, text);
    if (!out_of_range) {
        cli_error(DEDUP_PROGRAM, "%s: line %" PRIu64 ": cannot parse "
                  "importance field %" PRIu32 " '%s' as a number", run->input,
                  run->line_number, opts->importance_field, text);
        return;
    }
    const ebb_stable_importance *imp =
        &ebb_stable_get_params(run->filter->stable)->importance;
    cli_error(DEDUP_PROGRAM, "%s: line %" PRIu64 ": importance field %" PRIu32
              " '%s' is outside the importance range %.10g:%.10g "
              "(--importance-out-of-range refuse)", run->input,
              run->line_number, opts->importance_field, text, imp->low,
              imp->high);
}

/* ------------------------------------------------------------------------ */
/* Keys, times and importances                                              */
/* ------------------------------------------------------------------------ */

/* The longest importance field parsed (a number needs far fewer bytes). */
#define IMPORTANCE_BYTES 64u

/* The decimal number in the field, as cli_parse_real reads it. */
static bool parse_importance(const read_line *line, const cli_field *field,
                             double *out)
{
    char text[IMPORTANCE_BYTES + 1];
    if (field->length > IMPORTANCE_BYTES)
        return false;
    memcpy(text, line->bytes + field->start, field->length);
    text[field->length] = '\0';
    return cli_parse_real(text, out);
}

typedef enum importance_result {
    IMPORTANCE_OK,
    IMPORTANCE_MISSING,
    IMPORTANCE_SYNTAX,
    IMPORTANCE_REFUSED /* out of the range under refuse */
} importance_result;

/* The line's importance and the level it sets (counted for --stats). */
static importance_result line_importance(const dedup_run *run,
                                         read_line *line)
{
    if (!cli_line_field(line->bytes, line->text_length,
                        run->opts->importance_field, &line->cut))
        return IMPORTANCE_MISSING;
    if (!parse_importance(line, &line->cut, &line->importance))
        return IMPORTANCE_SYNTAX;
    uint32_t level;
    if (ebb_stable_level(ebb_stable_get_params(run->filter->stable),
                         line->importance, &level, NULL) != EBB_OK)
        return IMPORTANCE_REFUSED;
    return IMPORTANCE_OK;
}

/* Counts the level a good line sets, for the analysis of --stats. */
static void count_level(dedup_run *run, const read_line *line)
{
    dedup_filter *filter = run->filter;
    uint32_t level;
    if (filter->level_counts != NULL &&
        ebb_stable_level(ebb_stable_get_params(filter->stable),
                         line->importance, &level, NULL) == EBB_OK &&
        level <= filter->max_level)
        filter->level_counts[level]++;
}

/* Finds a stable filter's importance. Returns false, after the message,
 * for a bad line without --skip-bad; with it, marks it bad (a refused one
 * counted as refused). */
static bool examine_importance(dedup_run *run, read_line *line)
{
    const dedup_options *opts = run->opts;
    importance_result result = line_importance(run, line);
    if (result == IMPORTANCE_OK) {
        line->key_cut = true;
        return true;
    }
    if (opts->skip_bad) {
        line->bad = true;
        line->refused = result == IMPORTANCE_REFUSED;
        return true;
    }
    if (result == IMPORTANCE_MISSING)
        report_missing_field(run, "importance", opts->importance_field, line);
    else
        report_bad_importance(run, line, &line->cut,
                              result == IMPORTANCE_REFUSED);
    return false;
}

/* Finds the line's time (time windows) and key. Returns false, after the
 * message, for a bad line without --skip-bad; with it, marks it bad. */
static bool examine_line(dedup_run *run, read_line *line)
{
    const dedup_options *opts = run->opts;
    bool time_window = run->filter->kind == DEDUP_TIME_WINDOW;
    line->bad = false;
    line->refused = false;
    line->importance = 0.0;
    line->key_cut = false;
    line->key = (cli_field){0, line->text_length};
    if (time_window && opts->time_field == 0)
        line->time = ebb_tlbf_clock_now();
    if (time_window && opts->time_field != 0) {
        cli_time_result result =
            cli_line_time(line->bytes, line->text_length, opts->time_field,
                          opts->time_format, &line->cut, &line->time);
        if (result != CLI_TIME_OK) {
            if (!opts->skip_bad) {
                report_bad_time(run, result, line, &line->cut);
                return false;
            }
            line->bad = true;
            return true;
        }
        line->key_cut = true;
    }
    if (run->filter->kind == DEDUP_STABLE && opts->importance_field != 0 &&
        !examine_importance(run, line))
        return false;
    if (opts->key_field != 0 && !line->bad) {
        line->key_cut = false;
        if (!cli_line_field(line->bytes, line->text_length, opts->key_field,
                            &line->key)) {
            if (!opts->skip_bad) {
                report_missing_field(run, "key", opts->key_field, line);
                return false;
            }
            line->bad = true;
        }
    }
    if (!line->bad && opts->importance_field != 0)
        count_level(run, line);
    return true;
}

/* ------------------------------------------------------------------------ */
/* The batch                                                                */
/* ------------------------------------------------------------------------ */

/* Room for `more` bytes in the arena. Returns 0 or ENOMEM. */
static int arena_reserve(line_batch *batch, size_t more)
{
    if (more <= batch->arena_capacity - batch->arena_used)
        return 0;
    size_t capacity =
        batch->arena_capacity > 0 ? batch->arena_capacity : BATCH_BYTES;
    while (capacity - batch->arena_used < more) {
        if (capacity > SIZE_MAX / 2)
            return ENOMEM;
        capacity *= 2;
    }
    char *grown = realloc(batch->arena, capacity);
    if (grown == NULL)
        return ENOMEM;
    batch->arena = grown;
    batch->arena_capacity = capacity;
    return 0;
}

static void arena_put(line_batch *batch, const char *bytes, size_t length)
{
    if (length > 0)
        memcpy(batch->arena + batch->arena_used, bytes, length);
    batch->arena_used += length;
}

/* Appends the line, and its key when that is not a part of the line.
 * Returns 0 or ENOMEM. */
static int batch_append(line_batch *batch, const read_line *line,
                        uint64_t number)
{
    size_t key_bytes = line->key_cut ? line->text_length - line->cut.length
                                     : 0;
    if (key_bytes > SIZE_MAX - line->length ||
        arena_reserve(batch, line->length + key_bytes) != 0)
        return ENOMEM;
    size_t i = batch->count++;
    batch->start[i] = batch->arena_used;
    batch->length[i] = line->length;
    arena_put(batch, line->bytes, line->length);
    if (line->key_cut) {
        size_t after = line->cut.start + line->cut.length;
        batch->key_start[i] = batch->arena_used;
        arena_put(batch, line->bytes, line->cut.start);
        arena_put(batch, line->bytes + after, line->text_length - after);
        batch->key_length[i] = key_bytes;
    } else {
        batch->key_start[i] = batch->start[i] + line->key.start;
        batch->key_length[i] = line->key.length;
    }
    batch->time[i] = line->time;
    batch->importance[i] = line->importance;
    batch->number[i] = number;
    batch->bad[i] = line->bad;
    return 0;
}

static bool batch_full(const line_batch *batch)
{
    return batch->count == batch->capacity || batch->arena_used >= BATCH_BYTES;
}

/* Prints line i if its answer is the one wanted. */
static int emit_line(dedup_run *run, size_t i, bool seen)
{
    line_batch *batch = run->batch;
    run->counts->duplicates += seen;
    if (seen != run->opts->invert)
        return DEDUP_CONTINUE;
    if (fwrite(batch->arena + batch->start[i], 1, batch->length[i], stdout) !=
        batch->length[i])
        return report_write_error(errno);
    run->counts->lines_written++;
    return DEDUP_CONTINUE;
}

/* The good lines of the batch, in order, packed to the front of key,
 * good_length and good_importance (importance is 0 without a field); how
 * many. */
static size_t gather_good(line_batch *batch, size_t n)
{
    size_t good = 0;
    for (size_t i = 0; i < n; i++) {
        if (batch->bad[i])
            continue;
        batch->key[good] = batch->arena + batch->key_start[i];
        batch->good_importance[good] = batch->importance[i];
        batch->good_length[good++] = batch->key_length[i];
    }
    return good;
}

/* Prints the batch's lines in order from the good lines' answers in seen (a
 * bad line as one not seen). */
static int emit_batch(dedup_run *run, size_t n)
{
    line_batch *batch = run->batch;
    for (size_t i = 0, j = 0; i < n; i++) {
        bool seen = batch->bad[i] ? false : batch->seen[j++];
        int status = emit_line(run, i, seen);
        if (status != DEDUP_CONTINUE)
            return status;
    }
    return DEDUP_CONTINUE;
}

/* Count windows: hashes the good lines, asks and adds them in one call,
 * and prints in order (a bad line as one not seen). */
static int answer_count_batch(dedup_run *run, size_t n)
{
    line_batch *batch = run->batch;
    ebb_apbf *apbf = run->filter->apbf;
    size_t good = gather_good(batch, n);
    ebb_apbf_hash_batch(apbf, batch->key, batch->good_length, good,
                        batch->hash);
    ebb_apbf_check_and_add_batch(apbf, batch->hash, good, batch->seen);
    return emit_batch(run, n);
}

/* Stable filters: hashes the good lines, tests and adds them (with their
 * importances) in one call, and prints in order. */
static int answer_stable_batch(dedup_run *run, size_t n)
{
    line_batch *batch = run->batch;
    ebb_stable *filter = run->filter->stable;
    bool importance = run->opts->importance_field != 0;
    size_t good = gather_good(batch, n);
    ebb_stable_hash_batch(filter, batch->key, batch->good_length, good,
                          batch->hash);
    ebb_status status = ebb_stable_test_and_add_batch(
        filter, batch->hash, importance ? batch->good_importance : NULL, good,
        batch->seen, NULL);
    if (status != EBB_OK) {
        /* Every importance was checked against the filter's own mapping
         * as it was read: a refusal here is a bug, not bad input. */
        cli_error(DEDUP_PROGRAM, "%s: cannot remember the lines: %s",
                  run->input, ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    return emit_batch(run, n);
}

/* Timing filters: hashes the good lines, tests and adds them in one call
 * (a line repeated within the batch sees its earlier copy, as in single
 * calls), and prints in order. */
static int answer_timing_batch(dedup_run *run, size_t n)
{
    line_batch *batch = run->batch;
    ebb_timing *filter = run->filter->timing;
    size_t good = gather_good(batch, n);
    ebb_timing_hash_batch(filter, batch->key, batch->good_length, good,
                          batch->hash);
    ebb_timing_test_and_add_batch(filter, batch->hash, good, batch->seen);
    return emit_batch(run, n);
}

static void warn_refused(dedup_run *run, uint64_t number)
{
    if (run->refusal_reported)
        return;
    run->refusal_reported = true;
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(run->filter->tlbf, &stats);
    cli_error(DEDUP_PROGRAM, "warning: %s: line %" PRIu64 ": the memory "
              "limit of %zu bytes is reached (--policy refuse): new lines "
              "are written but not remembered until old ones expire "
              "(--stats counts them as refused)",
              run->input, number, stats.max_memory);
}

/* EVICT loses items before their time; say so once, when it happens. */
static void check_evictions(dedup_run *run)
{
    if (!run->filter->evicts || run->eviction_reported)
        return;
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(run->filter->tlbf, &stats);
    if (stats.evicted_slices == run->filter->evicted_before)
        return;
    run->eviction_reported = true;
    char span[32];
    cli_format_duration(stats.span_ns, span, sizeof span);
    cli_error(DEDUP_PROGRAM, "warning: %s: by line %" PRIu64 " the memory "
              "limit of %zu bytes made the filter evict live slices "
              "(--policy evict): lines seen less than %s ago may be written "
              "again", run->input, run->line_number, stats.max_memory, span);
}

/* Time windows: contains at the line's (clamped) time, then add. */
static int answer_time_line(dedup_run *run, size_t i, bool *seen)
{
    line_batch *batch = run->batch;
    ebb_tlbf *tlbf = run->filter->tlbf;
    int64_t now = batch->time[i];
    if (run->latest_ns != INT64_MIN && now < run->latest_ns) {
        now = run->latest_ns;
        run->counts->clamped++;
    }
    ebb_hash128 hash = ebb_tlbf_hash(tlbf, batch->arena + batch->key_start[i],
                                     batch->key_length[i]);
    *seen = ebb_tlbf_contains_hash(tlbf, hash, now);
    ebb_status status = ebb_tlbf_add_hash(tlbf, hash, now);
    if (status == EBB_OK) {
        run->latest_ns = now;
        return DEDUP_CONTINUE;
    }
    if (status == EBB_ELIMIT) {
        run->counts->refused++;
        warn_refused(run, batch->number[i]);
        return DEDUP_CONTINUE;
    }
    cli_error(DEDUP_PROGRAM, "%s: line %" PRIu64 ": cannot remember the "
              "line: %s", run->input, batch->number[i], ebb_strerror(status));
    return CLI_EXIT_IO;
}

static int answer_time_batch(dedup_run *run, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        int status = DEDUP_CONTINUE;
        if (!run->batch->bad[i])
            status = answer_time_line(run, i, &seen);
        if (status == DEDUP_CONTINUE)
            status = emit_line(run, i, seen);
        if (status != DEDUP_CONTINUE)
            return status;
    }
    check_evictions(run);
    return DEDUP_CONTINUE;
}

/* Answers and prints the lines held. */
static int flush_batch(dedup_run *run)
{
    line_batch *batch = run->batch;
    size_t n = batch->count;
    if (n == 0)
        return DEDUP_CONTINUE;
    int status;
    switch (run->filter->kind) {
    case DEDUP_COUNT_WINDOW:
        status = answer_count_batch(run, n);
        break;
    case DEDUP_TIME_WINDOW:
        status = answer_time_batch(run, n);
        break;
    case DEDUP_TIMING:
        status = answer_timing_batch(run, n);
        break;
    default:
        status = answer_stable_batch(run, n);
        break;
    }
    batch->count = 0;
    batch->arena_used = 0;
    return status;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */
/* ------------------------------------------------------------------------ */

/* Takes one line read: examines it, holds it, answers the batch when full.
 * A bad line first answers the lines before it (as one at a time would). */
static int take_line(dedup_run *run, const char *bytes, size_t length)
{
    read_line line;
    line.bytes = bytes;
    line.length = length;
    line.text_length =
        length > 0 && bytes[length - 1] == '\n' ? length - 1 : length;
    line.time = 0;
    run->counts->lines_read++;
    if (!examine_line(run, &line)) {
        int status = flush_batch(run);
        return status != DEDUP_CONTINUE ? status : CLI_EXIT_IO;
    }
    run->counts->bad_lines += line.bad && !line.refused;
    run->counts->refused += line.refused;
    if (batch_append(run->batch, &line, run->line_number) != 0) {
        cli_error(DEDUP_PROGRAM, "cannot hold a line of %zu bytes: %s",
                  length, strerror(ENOMEM));
        return CLI_EXIT_IO;
    }
    return batch_full(run->batch) ? flush_batch(run) : DEDUP_CONTINUE;
}

/* A cli_line_handler: takes the line as the input's. */
static int take_input_line(void *context, const cli_input *input,
                           const char *bytes, size_t length)
{
    dedup_run *run = context;
    run->input = input->name;
    run->line_number = input->line_number;
    return take_line(run, bytes, length);
}

/* A cli_input_end_handler: the lines of an input are answered before the
 * next is opened (and before its read error is reported), as they would
 * be one at a time. */
static int end_of_input(void *context, const cli_input *input)
{
    (void)input;
    return flush_batch(context);
}

/* The latest time the filter remembers: a loaded state continues from
 * there, so that runs over the parts of a log clamp as one run would. */
static int64_t remembered_latest(const dedup_filter *filter)
{
    if (filter->kind != DEDUP_TIME_WINDOW)
        return INT64_MIN;
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(filter->tlbf, &stats);
    return stats.latest_ns;
}

int dedup_inputs(const dedup_options *opts, dedup_filter *filter,
                 dedup_counts *counts)
{
    line_batch *batch = calloc(1, sizeof *batch);
    if (batch == NULL) {
        cli_error(DEDUP_PROGRAM, "cannot allocate the line batch: %s",
                  strerror(ENOMEM));
        return CLI_EXIT_IO;
    }
    /* On a terminal every line is answered before the next is read. */
    batch->capacity = isatty(STDOUT_FILENO) ? 1 : BATCH_LINES;
    dedup_run run = {opts, filter, counts, batch, "", 0,
                     remembered_latest(filter), false, false};
    int status = cli_read_inputs(DEDUP_PROGRAM, opts->inputs,
                                 opts->input_count, take_input_line,
                                 end_of_input, &run);
    free(batch->arena);
    free(batch);
    if (status != DEDUP_CONTINUE)
        return status;
    return cli_finish_output(DEDUP_PROGRAM);
}
