/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * units.c: durations and byte sizes. Everything is integer arithmetic:
 * "0.1s" must be exactly 100000000 ns, which a double would not promise.
 */
#include "units.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct duration_unit {
    const char *name;
    int64_t ns;
} duration_unit;

/* Largest first: cli_format_duration picks the first that divides. */
static const duration_unit DURATION_UNITS[] = {
    {"d", INT64_C(86400000000000)}, {"h", INT64_C(3600000000000)},
    {"m", INT64_C(60000000000)},    {"s", INT64_C(1000000000)},
    {"ms", INT64_C(1000000)},       {"us", INT64_C(1000)},
    {"ns", INT64_C(1)},
};
#define DURATION_UNIT_COUNT (sizeof DURATION_UNITS / sizeof DURATION_UNITS[0])

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The end of the run of decimal digits starting at text. */
static const char *skip_digits(const char *text)
{
    while (is_digit(*text))
        text++;
    return text;
}

/* The value of digits [begin, end) if it is at most limit. */
static bool digits_value(const char *begin, const char *end, uint64_t limit,
                         uint64_t *out)
{
    uint64_t value = 0;
    for (const char *c = begin; c < end; c++) {
        uint64_t digit = (uint64_t)(*c - '0');
        if (value > (limit - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    *out = value;
    return true;
}

static const duration_unit *find_unit(const char *name)
{
    for (size_t i = 0; i < DURATION_UNIT_COUNT; i++)
        if (strcmp(DURATION_UNITS[i].name, name) == 0)
            return &DURATION_UNITS[i];
    return NULL;
}

/* 10^digits for digits <= 18, else 0. */
static int64_t power_of_ten(size_t digits)
{
    if (digits > 18)
        return 0;
    int64_t p = 1;
    while (digits-- > 0)
        p *= 10;
    return p;
}

cli_number cli_parse_duration(const char *text, int64_t *ns)
{
    const char *whole_end = skip_digits(text);
    if (whole_end == text)
        return CLI_NUMBER_INVALID;
    const char *fraction = whole_end, *fraction_end = whole_end;
    if (*whole_end == '.') {
        fraction = whole_end + 1;
        fraction_end = skip_digits(fraction);
        if (fraction_end == fraction)
            return CLI_NUMBER_INVALID;
    }
    const duration_unit *unit = find_unit(fraction_end);
    if (unit == NULL)
        return CLI_NUMBER_INVALID;
    /* Trailing zeros of the fraction change nothing: "1.50ms" = "1.5ms". */
    while (fraction_end > fraction && fraction_end[-1] == '0')
        fraction_end--;
    size_t digits = (size_t)(fraction_end - fraction);
    int64_t scale = power_of_ten(digits);
    if (scale == 0 || unit->ns % scale != 0)
        return CLI_NUMBER_INVALID; /* not a whole number of nanoseconds */

    uint64_t whole, part = 0;
    if (!digits_value(text, whole_end, (uint64_t)(INT64_MAX / unit->ns),
                      &whole))
        return CLI_NUMBER_TOO_LARGE;
    if (digits > 0 && !digits_value(fraction, fraction_end, UINT64_MAX, &part))
        return CLI_NUMBER_INVALID;
    /* part < 10^digits, so part * (unit / 10^digits) < unit: no overflow. */
    int64_t value = (int64_t)whole * unit->ns;
    int64_t extra = (int64_t)part * (unit->ns / scale);
    if (value > INT64_MAX - extra)
        return CLI_NUMBER_TOO_LARGE;
    value += extra;
    if (value == 0)
        return CLI_NUMBER_INVALID;
    *ns = value;
    return CLI_NUMBER_OK;
}

const char *cli_duration_requirement(cli_number result)
{
    if (result == CLI_NUMBER_TOO_LARGE)
        return "must be at most 106751d (2^63 - 1 nanoseconds)";
    return "must be a positive duration with a unit (ns, us, ms, s, m, h, "
           "d), e.g. 500ms, 30s, 1.5h";
}

void cli_format_duration(int64_t ns, char *out, size_t size)
{
    for (size_t i = 0; i < DURATION_UNIT_COUNT; i++) {
        if (ns % DURATION_UNITS[i].ns == 0) {
            snprintf(out, size, "%" PRId64 "%s", ns / DURATION_UNITS[i].ns,
                     DURATION_UNITS[i].name);
            return;
        }
    }
}

void cli_format_seconds(int64_t ns, char *out, size_t size)
{
    int64_t seconds = ns / CLI_NS_PER_SECOND;
    int64_t rest = ns % CLI_NS_PER_SECOND;
    if (rest == 0) {
        snprintf(out, size, "%" PRId64 "s", seconds);
        return;
    }
    char fraction[16];
    snprintf(fraction, sizeof fraction, "%09" PRId64, rest);
    size_t length = strlen(fraction);
    while (length > 0 && fraction[length - 1] == '0')
        fraction[--length] = '\0';
    snprintf(out, size, "%" PRId64 ".%ss", seconds, fraction);
}

cli_number cli_parse_byte_size(const char *text, size_t *bytes)
{
    const char *end = skip_digits(text);
    if (end == text)
        return CLI_NUMBER_INVALID;
    unsigned shift = 0;
    if (*end != '\0') {
        const char *suffixes = "kKMGT";
        static const unsigned shifts[] = {10, 10, 20, 30, 40};
        const char *found = strchr(suffixes, *end);
        if (found == NULL || end[1] != '\0')
            return CLI_NUMBER_INVALID;
        shift = shifts[found - suffixes];
    }
    uint64_t count;
    if (!digits_value(text, end, UINT64_MAX, &count))
        return CLI_NUMBER_TOO_LARGE;
    if (count == 0)
        return CLI_NUMBER_INVALID;
    if (count > (UINT64_MAX >> shift))
        return CLI_NUMBER_TOO_LARGE;
#if SIZE_MAX < UINT64_MAX
    if ((count << shift) > SIZE_MAX)
        return CLI_NUMBER_TOO_LARGE;
#endif
    *bytes = (size_t)(count << shift);
    return CLI_NUMBER_OK;
}

const char *cli_byte_size_requirement(cli_number result)
{
    if (result == CLI_NUMBER_TOO_LARGE)
        return "must fit in the address space";
    return "must be a positive number of bytes, optionally followed by k, "
           "M, G or T (powers of 1024)";
}
