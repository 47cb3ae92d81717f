/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recent_stream.c: the lines of `ebb recent`: their key, costs and prior,
 * the filter's answers (query, then insert: the paper's section 5.1.1, so
 * a line is asked about the lines before it), and the output.
 *
 * The key is the line (the bytes before its '\n') or its --key-field. A
 * field given by --prior-field, --cost-fp-field or --cost-fn-field is
 * parsed as a decimal number; a missing field, a number that is not one,
 * a prior outside (0, 1] or a negative cost makes the line bad: an error
 * naming the input and line (exit 1), or with --skip-bad a line skipped
 * (counted, nothing written, not inserted).
 *
 * Output, one line per answered line:
 *   TSV   key, posterior, expected_age, likely_age, decision, standard,
 *         separated by tabs (the key as read: when it is the whole line it
 *         may hold tabs itself, and the answers are the last five fields);
 *   JSON  {"key": ..., "posterior": ..., "expected_age": ...,
 *         "likely_age": ..., "decision": true|false, "standard": ...}; the
 *         key as a JSON string, UTF-8 as is, other bytes as \u00XX.
 * The posterior and the expected age are written with the fewest digits
 * that read back to the same double, so that the decision can be
 * recomputed exactly from the output.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "lines.h"
#include "recent.h"
#include "timestamp.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM RECENT_PROGRAM

/* The longest number field parsed (a number needs far fewer bytes). */
#define NUMBER_BYTES 64u

/* Room for a double written by format_exact. */
#define NUMBER_TEXT 40u

typedef struct recent_run {
    const recent_options *opts;
    ebb_timing *filter;
    recent_counts *counts;
} recent_run;

/* One per-line number: which field, what it is called in messages. */
typedef struct number_field {
    uint32_t field;
    const char *name; /* "prior", "cost-fp", "cost-fn" */
} number_field;

typedef enum field_result {
    FIELD_OK,
    FIELD_MISSING,
    FIELD_SYNTAX,
    FIELD_RANGE
} field_result;

/* ------------------------------------------------------------------------ */
/* Fields                                                                   */
/* ------------------------------------------------------------------------ */

static field_result parse_number_field(const char *line, size_t length,
                                       uint32_t number, cli_field *field,
                                       double *out)
{
    if (!cli_line_field(line, length, number, field))
        return FIELD_MISSING;
    char text[NUMBER_BYTES + 1];
    if (field->length > NUMBER_BYTES)
        return FIELD_SYNTAX;
    memcpy(text, line + field->start, field->length);
    text[field->length] = '\0';
    return cli_parse_real(text, out) ? FIELD_OK : FIELD_SYNTAX;
}

static void report_bad_field(const cli_input *input, const char *line,
                             size_t length, const number_field *which,
                             field_result result, const cli_field *field)
{
    if (result == FIELD_MISSING) {
        uint32_t count = cli_count_fields(line, length);
        cli_error(PROGRAM, "%s: line %" PRIu64 ": no %s field %" PRIu32
                  " (the line has %" PRIu32 " %s)", input->name,
                  input->line_number, which->name, which->field, count,
                  count == 1 ? "field" : "fields");
        return;
    }
    char text[CLI_QUOTE_SIZE];
    cli_quote_bytes(line + field->start, field->length, text);
    const char *requirement = strcmp(which->name, "prior") == 0
                                  ? "a number in (0, 1]"
                                  : "a number >= 0";
    cli_error(PROGRAM, "%s: line %" PRIu64 ": %s field %" PRIu32 " '%s' is "
              "not %s", input->name, input->line_number, which->name,
              which->field, text, requirement);
}

/* The number in the line's field, checked: a prior in (0, 1], a cost
 * >= 0. False, after the message unless skipping, for a bad field. */
static bool read_number(const recent_run *run, const cli_input *input,
                        const char *line, size_t length,
                        const number_field *which, double *out)
{
    cli_field field = {0, 0};
    field_result result = parse_number_field(line, length, which->field,
                                             &field, out);
    if (result == FIELD_OK) {
        bool prior = strcmp(which->name, "prior") == 0;
        bool valid = prior ? *out > 0.0 && *out <= 1.0 : *out >= 0.0;
        if (valid)
            return true;
        result = FIELD_RANGE;
    }
    if (!run->opts->skip_bad)
        report_bad_field(input, line, length, which, result, &field);
    return false;
}

/* The line's key and query. False for a bad line (reported unless
 * skipping). */
static bool examine_line(const recent_run *run, const cli_input *input,
                         const char *line, size_t length, cli_field *key,
                         ebb_timing_query *query)
{
    const recent_options *opts = run->opts;
    *key = (cli_field){0, length};
    if (opts->key_field != 0 &&
        !cli_line_field(line, length, opts->key_field, key)) {
        if (!opts->skip_bad) {
            uint32_t count = cli_count_fields(line, length);
            cli_error(PROGRAM, "%s: line %" PRIu64 ": no key field %" PRIu32
                      " (the line has %" PRIu32 " %s)", input->name,
                      input->line_number, opts->key_field, count,
                      count == 1 ? "field" : "fields");
        }
        return false;
    }
    query->window = 0;
    query->prior = opts->have_prior ? opts->prior : 0.0; /* 0: the model's */
    query->cost_fp = opts->cost_fp;
    query->cost_fn = opts->cost_fn;
    const struct {
        number_field which;
        double *out;
    } fields[] = {
        {{opts->prior_field, "prior"}, &query->prior},
        {{opts->cost_fp_field, "cost-fp"}, &query->cost_fp},
        {{opts->cost_fn_field, "cost-fn"}, &query->cost_fn},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].which.field != 0 &&
            !read_number(run, input, line, length, &fields[i].which,
                         fields[i].out))
            return false;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

/* The fewest significant digits (up to 17) that read back to x; a whole
 * number below 2^53 in full ("700", not "7e+02"). */
static void format_exact(double x, char *out)
{
    if (x == floor(x) && fabs(x) < 9007199254740992.0) {
        snprintf(out, NUMBER_TEXT, "%.0f", x);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, NUMBER_TEXT, "%.*g", digits, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

/* The length of the valid UTF-8 sequence at bytes (at most left bytes),
 * or 0 when there is none. */
static size_t utf8_length(const unsigned char *bytes, size_t left)
{
    unsigned char c = bytes[0];
    size_t n;
    uint32_t code, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, code = c & 0x1fu, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, code = c & 0x0fu, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, code = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((bytes[i] & 0xc0u) != 0x80u)
            return 0;
        code = code << 6 | (bytes[i] & 0x3fu);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
        return 0;
    return n;
}

/* The key as a JSON string: '"', '\\' and control characters escaped,
 * UTF-8 as is, any other byte as \u00XX. */
static void put_json_string(const char *text, size_t length, FILE *out)
{
    const unsigned char *bytes = (const unsigned char *)text;
    putc('"', out);
    for (size_t i = 0; i < length;) {
        unsigned char c = bytes[i];
        size_t n = c >= 0x80 ? utf8_length(bytes + i, length - i) : 1;
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
        } else if (c == '\n') {
            fputs("\\n", out);
        } else if (c == '\t') {
            fputs("\\t", out);
        } else if (c < 0x20 || c == 0x7f || n == 0) {
            fprintf(out, "\\u%04x", c);
        } else {
            fwrite(bytes + i, 1, n, out);
            i += n;
            continue;
        }
        i++;
    }
    putc('"', out);
}

static void put_answer(const recent_options *opts, const char *key,
                       size_t key_length, const ebb_timing_answer *answer)
{
    char posterior[NUMBER_TEXT], age[NUMBER_TEXT];
    format_exact(answer->posterior, posterior);
    format_exact(answer->expected_age, age);
    bool finite_age = isfinite(answer->expected_age);
    if (opts->json) {
        fputs("{\"key\": ", stdout);
        put_json_string(key, key_length, stdout);
        printf(", \"posterior\": %s, \"expected_age\": %s, \"likely_age\": %"
               PRIu64 ", \"decision\": %s, \"standard\": %s}\n",
               posterior, finite_age ? age : "null", answer->likely_age,
               answer->decision ? "true" : "false",
               answer->standard ? "true" : "false");
        return;
    }
    fwrite(key, 1, key_length, stdout);
    printf("\t%s\t%s\t%" PRIu64 "\t%d\t%d\n", posterior,
           finite_age ? age : "inf", answer->likely_age,
           answer->decision ? 1 : 0, answer->standard ? 1 : 0);
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                    */
/* ------------------------------------------------------------------------ */

/* A cli_line_handler: query, insert, write. */
static int take_line(void *context, const cli_input *input,
                     const char *bytes, size_t length)
{
    recent_run *run = context;
    size_t text_length =
        length > 0 && bytes[length - 1] == '\n' ? length - 1 : length;
    run->counts->lines_read++;
    cli_field key;
    ebb_timing_query query;
    if (!examine_line(run, input, bytes, text_length, &key, &query)) {
        if (!run->opts->skip_bad)
            return CLI_EXIT_IO;
        run->counts->bad_lines++;
        return CLI_CONTINUE;
    }
    const void *key_bytes = bytes + key.start;
    ebb_hash128 hash;
    ebb_timing_hash_batch(run->filter, &key_bytes, &key.length, 1, &hash);
    ebb_timing_answer answer;
    ebb_status status = ebb_timing_infer_hash(run->filter, hash, &query,
                                              &answer);
    if (status != EBB_OK) {
        /* Every number was checked as it was read: a refusal here is a
         * bug, not bad input. */
        cli_error(PROGRAM, "%s: line %" PRIu64 ": cannot answer: %s",
                  input->name, input->line_number, ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    ebb_timing_add_hash(run->filter, hash);
    put_answer(run->opts, bytes + key.start, key.length, &answer);
    if (ferror(stdout))
        return cli_write_error(PROGRAM, errno != 0 ? errno : EIO);
    run->counts->answered++;
    run->counts->standard += answer.standard;
    run->counts->decided += answer.decision;
    return CLI_CONTINUE;
}

int recent_inputs(const recent_options *opts, ebb_timing *filter,
                  recent_counts *counts)
{
    recent_run run = {opts, filter, counts};
    if (opts->header)
        fputs("key\tposterior\texpected_age\tlikely_age\tdecision\t"
              "standard\n", stdout);
    int status = cli_read_inputs(PROGRAM, opts->inputs, opts->input_count,
                                 take_line, NULL, &run);
    if (status != CLI_CONTINUE) {
        /* The answers before the bad line are written, as they came. */
        fflush(stdout);
        return status;
    }
    return cli_finish_output(PROGRAM);
}
