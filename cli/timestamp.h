/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timestamp.h: fields of a line and the timestamps in them, for
 * `ebb dedup --time-field N --time-format F` (docs/cli.md).
 *
 * Fields are the maximal runs of bytes other than space and tab, numbered
 * from 1, as awk splits them by default (leading separators do not start an
 * empty field). Timestamps become int64 nanoseconds since 1970-01-01T00:00Z
 * without the C library's time functions: nothing depends on the locale or
 * on TZ, so a replayed log gives the same answers everywhere.
 */
#ifndef EBB_CLI_TIMESTAMP_H
#define EBB_CLI_TIMESTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cli_time_format {
    CLI_TIME_EPOCH,    /* seconds, optional fraction of 1 to 9 digits     */
    CLI_TIME_EPOCH_MS, /* integer milliseconds                            */
    CLI_TIME_ISO8601   /* 2024-03-01T12:34:56.123456789+02:00 and kin      */
} cli_time_format;

/* "epoch", "epoch-ms" or "iso8601". */
bool cli_parse_time_format(const char *text, cli_time_format *out);
const char *cli_time_format_name(cli_time_format format);

/* A run of bytes of a line: [start, start + length). */
typedef struct cli_field {
    size_t start, length;
} cli_field;

/* Field `number` (1-based) of the line. False when the line has fewer. */
bool cli_line_field(const char *line, size_t length, uint32_t number,
                    cli_field *field);

/* How many fields the line has. */
uint32_t cli_count_fields(const char *line, size_t length);

typedef enum cli_time_result {
    CLI_TIME_OK,
    CLI_TIME_MISSING, /* the line has no field `number`                  */
    CLI_TIME_SYNTAX,  /* the field is not a timestamp of the format      */
    CLI_TIME_RANGE    /* it is, but outside int64 nanoseconds (years
                         1677 to 2262)                                    */
} cli_time_result;

/* The timestamp in field `number` of the line. For iso8601 a field that is
 * a date alone (YYYY-MM-DD) takes the next field as its time of day
 * ("2024-03-01 12:34:56Z"). *span receives the bytes the timestamp covers
 * (both fields and what separates them, in that case), also on failure
 * other than CLI_TIME_MISSING. */
cli_time_result cli_line_time(const char *line, size_t length,
                              uint32_t number, cli_time_format format,
                              cli_field *span, int64_t *ns);

/* The timestamp text itself, one format (no field splitting). */
cli_time_result cli_parse_timestamp(const char *text, size_t length,
                                    cli_time_format format, int64_t *ns);

/* Days from 1970-01-01 to the given proleptic Gregorian date (negative
 * before). month 1..12, day 1..31. */
int64_t cli_days_from_civil(int64_t year, unsigned month, unsigned day);

#endif /* EBB_CLI_TIMESTAMP_H */
