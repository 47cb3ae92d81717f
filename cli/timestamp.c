/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timestamp.c: fields and timestamps (see timestamp.h).
 *
 * The three formats, exactly (docs/cli.md has the user's version):
 *
 *   epoch     DIGITS [ "." 1-9 DIGITS ]          seconds since 1970
 *   epoch-ms  DIGITS                             milliseconds since 1970
 *   iso8601   YYYY-MM-DD ("T" | "t" | " ") hh:mm:ss [ "." 1-9 DIGITS ]
 *             [ "Z" | "z" | ("+" | "-") hh [ [":"] mm ] ]
 *
 * No signs, no spaces inside a field, no locale: the parsers read bytes.
 * An iso8601 time without an offset is UTC (never local time, which would
 * make the answer depend on the machine's TZ). Seconds may be 60 (a leap
 * second reads as the first second of the next minute: only differences
 * of times matter, and they stay non-negative).
 */
#include "timestamp.h"

#include <string.h>

#define NS_PER_SECOND INT64_C(1000000000)
#define NS_PER_MS INT64_C(1000000)
#define SECONDS_PER_DAY INT64_C(86400)

bool cli_parse_time_format(const char *text, cli_time_format *out)
{
    if (strcmp(text, "epoch") == 0)
        *out = CLI_TIME_EPOCH;
    else if (strcmp(text, "epoch-ms") == 0)
        *out = CLI_TIME_EPOCH_MS;
    else if (strcmp(text, "iso8601") == 0)
        *out = CLI_TIME_ISO8601;
    else
        return false;
    return true;
}

const char *cli_time_format_name(cli_time_format format)
{
    switch (format) {
    case CLI_TIME_EPOCH:
        return "epoch";
    case CLI_TIME_EPOCH_MS:
        return "epoch-ms";
    default:
        return "iso8601";
    }
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                   */
/* ------------------------------------------------------------------------ */

static bool is_separator(char c)
{
    return c == ' ' || c == '\t';
}

/* The next field at or after *at; false at the end of the line. */
static bool next_field(const char *line, size_t length, size_t *at,
                       cli_field *field)
{
    size_t i = *at;
    while (i < length && is_separator(line[i]))
        i++;
    if (i == length)
        return false;
    size_t start = i;
    while (i < length && !is_separator(line[i]))
        i++;
    field->start = start;
    field->length = i - start;
    *at = i;
    return true;
}

bool cli_line_field(const char *line, size_t length, uint32_t number,
                    cli_field *field)
{
    size_t at = 0;
    for (uint32_t seen = 0; seen < number; seen++)
        if (!next_field(line, length, &at, field))
            return false;
    return true;
}

uint32_t cli_count_fields(const char *line, size_t length)
{
    size_t at = 0;
    uint32_t count = 0;
    cli_field field;
    while (count < UINT32_MAX && next_field(line, length, &at, &field))
        count++;
    return count;
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                  */
/* ------------------------------------------------------------------------ */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Exactly `count` digits at text; their value in *out. */
static bool fixed_digits(const char *text, size_t count, unsigned *out)
{
    unsigned value = 0;
    for (size_t i = 0; i < count; i++) {
        if (!is_digit(text[i]))
            return false;
        value = value * 10u + (unsigned)(text[i] - '0');
    }
    *out = value;
    return true;
}

/* All of [text, text + length) are digits (at least one), with a value
 * at most limit. *overflow tells the two failures apart. */
static bool bounded_digits(const char *text, size_t length, uint64_t limit,
                           uint64_t *out, bool *overflow)
{
    uint64_t value = 0;
    *overflow = false;
    if (length == 0)
        return false;
    for (size_t i = 0; i < length; i++)
        if (!is_digit(text[i]))
            return false;
    for (size_t i = 0; i < length; i++) {
        uint64_t digit = (uint64_t)(text[i] - '0');
        if (value > (limit - digit) / 10) {
            *overflow = true;
            return false;
        }
        value = value * 10 + digit;
    }
    *out = value;
    return true;
}

/* "." and 1 to 9 digits at text (length bytes, '.' included): the
 * nanoseconds they stand for. */
static bool fraction_ns(const char *text, size_t length, int64_t *ns)
{
    if (length < 2 || length > 10 || text[0] != '.')
        return false;
    int64_t value = 0, scale = NS_PER_SECOND;
    for (size_t i = 1; i < length; i++) {
        if (!is_digit(text[i]))
            return false;
        scale /= 10;
        value += (int64_t)(text[i] - '0') * scale;
    }
    *ns = value;
    return true;
}

/* seconds * 10^9 + fraction (0 <= fraction < 10^9) as int64. */
static cli_time_result combine(int64_t seconds, int64_t fraction, int64_t *ns)
{
    if (seconds > INT64_MAX / NS_PER_SECOND ||
        seconds < INT64_MIN / NS_PER_SECOND)
        return CLI_TIME_RANGE;
    int64_t whole = seconds * NS_PER_SECOND;
    if (whole > INT64_MAX - fraction)
        return CLI_TIME_RANGE;
    *ns = whole + fraction;
    return CLI_TIME_OK;
}

/* ------------------------------------------------------------------------ */
/* epoch, epoch-ms                                                          */
/* ------------------------------------------------------------------------ */

static cli_time_result parse_epoch(const char *text, size_t length,
                                   int64_t *ns)
{
    const char *dot = memchr(text, '.', length);
    size_t whole_length = dot != NULL ? (size_t)(dot - text) : length;
    int64_t fraction = 0;
    if (dot != NULL && !fraction_ns(dot, length - whole_length, &fraction))
        return CLI_TIME_SYNTAX;
    uint64_t seconds;
    bool overflow;
    if (!bounded_digits(text, whole_length, (uint64_t)INT64_MAX, &seconds,
                        &overflow))
        return overflow ? CLI_TIME_RANGE : CLI_TIME_SYNTAX;
    return combine((int64_t)seconds, fraction, ns);
}

static cli_time_result parse_epoch_ms(const char *text, size_t length,
                                      int64_t *ns)
{
    uint64_t ms;
    bool overflow;
    if (!bounded_digits(text, length, (uint64_t)INT64_MAX, &ms, &overflow))
        return overflow ? CLI_TIME_RANGE : CLI_TIME_SYNTAX;
    if (ms > (uint64_t)(INT64_MAX / NS_PER_MS))
        return CLI_TIME_RANGE;
    *ns = (int64_t)ms * NS_PER_MS;
    return CLI_TIME_OK;
}

/* ------------------------------------------------------------------------ */
/* iso8601                                                                  */
/* ------------------------------------------------------------------------ */

int64_t cli_days_from_civil(int64_t year, unsigned month, unsigned day)
{
    /* Count years from March, so that the leap day ends a year: then a
     * 400-year era has 146097 days, and the day of the year follows from
     * the month by the line (153 m + 2) / 5 (months of 31 30 31 30 31
     * days repeating from March). */
    int64_t y = year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t year_of_era = y - era * 400;                    /* 0 .. 399 */
    unsigned month_from_march = (month + 9u) % 12u;         /* 0 .. 11  */
    int64_t day_of_year = (153 * (int64_t)month_from_march + 2) / 5 +
                          (int64_t)day - 1;                 /* 0 .. 365 */
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 -
                         year_of_era / 100 + day_of_year;
    /* 719468: days from 0000-03-01 to 1970-01-01. */
    return era * 146097 + day_of_era - 719468;
}

static bool leap_year(unsigned year)
{
    return year % 4u == 0 && (year % 100u != 0 || year % 400u == 0);
}

static unsigned days_in_month(unsigned year, unsigned month)
{
    static const unsigned days[12] = {31, 28, 31, 30, 31, 30,
                                      31, 31, 30, 31, 30, 31};
    return month == 2 && leap_year(year) ? 29u : days[month - 1];
}

/* "YYYY-MM-DD": days since 1970-01-01. */
static bool parse_date(const char *text, size_t length, int64_t *days)
{
    unsigned year, month, day;
    if (length != 10 || text[4] != '-' || text[7] != '-' ||
        !fixed_digits(text, 4, &year) || !fixed_digits(text + 5, 2, &month) ||
        !fixed_digits(text + 8, 2, &day))
        return false;
    if (month < 1 || month > 12 || day < 1 ||
        day > days_in_month(year, month))
        return false;
    *days = cli_days_from_civil((int64_t)year, month, day);
    return true;
}

/* The offset east of UTC in seconds: "", "Z", "z", "+hh", "+hh:mm",
 * "+hhmm" (or "-"). */
static bool parse_offset(const char *text, size_t length, int64_t *seconds)
{
    *seconds = 0;
    if (length == 0)
        return true;
    if (length == 1)
        return text[0] == 'Z' || text[0] == 'z';
    if (text[0] != '+' && text[0] != '-')
        return false;
    unsigned hours, minutes = 0;
    if (!fixed_digits(text + 1, 2, &hours))
        return false;
    if (length == 6 && text[3] == ':') {
        if (!fixed_digits(text + 4, 2, &minutes))
            return false;
    } else if (length == 5) {
        if (!fixed_digits(text + 3, 2, &minutes))
            return false;
    } else if (length != 3) {
        return false;
    }
    if (hours > 23 || minutes > 59)
        return false;
    int64_t east = (int64_t)hours * 3600 + (int64_t)minutes * 60;
    *seconds = text[0] == '-' ? -east : east;
    return true;
}

/* "hh:mm:ss[.fraction][offset]": seconds since midnight UTC (may be
 * negative or beyond a day: the offset moves it) and the fraction. */
static bool parse_clock(const char *text, size_t length, int64_t *seconds,
                        int64_t *fraction)
{
    unsigned hours, minutes, secs;
    if (length < 8 || text[2] != ':' || text[5] != ':' ||
        !fixed_digits(text, 2, &hours) || !fixed_digits(text + 3, 2, &minutes) ||
        !fixed_digits(text + 6, 2, &secs))
        return false;
    if (hours > 23 || minutes > 59 || secs > 60)
        return false;
    size_t at = 8;
    *fraction = 0;
    if (at < length && text[at] == '.') {
        size_t end = at + 1;
        while (end < length && is_digit(text[end]))
            end++;
        if (!fraction_ns(text + at, end - at, fraction))
            return false;
        at = end;
    }
    int64_t east;
    if (!parse_offset(text + at, length - at, &east))
        return false;
    *seconds = (int64_t)hours * 3600 + (int64_t)minutes * 60 + (int64_t)secs -
               east;
    return true;
}

/* A date and a time of day given apart (the 'T' form splits one field,
 * the space form is two fields). */
static cli_time_result parse_iso_parts(const char *date, size_t date_length,
                                       const char *clock, size_t clock_length,
                                       int64_t *ns)
{
    int64_t days, seconds, fraction;
    if (!parse_date(date, date_length, &days) ||
        !parse_clock(clock, clock_length, &seconds, &fraction))
        return CLI_TIME_SYNTAX;
    /* Years 0000..9999 keep this far inside int64 seconds. */
    return combine(days * SECONDS_PER_DAY + seconds, fraction, ns);
}

static cli_time_result parse_iso8601(const char *text, size_t length,
                                     int64_t *ns)
{
    if (length < 11 || (text[10] != 'T' && text[10] != 't' && text[10] != ' '))
        return CLI_TIME_SYNTAX;
    return parse_iso_parts(text, 10, text + 11, length - 11, ns);
}

cli_time_result cli_parse_timestamp(const char *text, size_t length,
                                    cli_time_format format, int64_t *ns)
{
    switch (format) {
    case CLI_TIME_EPOCH:
        return parse_epoch(text, length, ns);
    case CLI_TIME_EPOCH_MS:
        return parse_epoch_ms(text, length, ns);
    default:
        return parse_iso8601(text, length, ns);
    }
}

/* "YYYY-MM-DD" by its shape alone: such a field is the first half of a
 * timestamp written with a space. */
static bool looks_like_date(const char *text, size_t length)
{
    if (length != 10)
        return false;
    for (size_t i = 0; i < 10; i++) {
        bool dash = i == 4 || i == 7;
        if (dash ? text[i] != '-' : !is_digit(text[i]))
            return false;
    }
    return true;
}

cli_time_result cli_line_time(const char *line, size_t length,
                              uint32_t number, cli_time_format format,
                              cli_field *span, int64_t *ns)
{
    cli_field field;
    if (!cli_line_field(line, length, number, &field))
        return CLI_TIME_MISSING;
    *span = field;
    const char *text = line + field.start;
    if (format == CLI_TIME_ISO8601 && looks_like_date(text, field.length)) {
        size_t at = field.start + field.length;
        cli_field clock;
        if (!next_field(line, length, &at, &clock))
            return CLI_TIME_SYNTAX;
        span->length = clock.start + clock.length - field.start;
        return parse_iso_parts(text, field.length, line + clock.start,
                               clock.length, ns);
    }
    return cli_parse_timestamp(text, field.length, format, ns);
}
