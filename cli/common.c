/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.c: argument parsing and error reporting shared by the subcommands.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *program, const char *format, ...)
{
    va_list args;

    /* Built in one buffer and written with one call so that the line is
     * not interleaved with another process writing to the same stderr. */
    char line[1024];
    int prefix = snprintf(line, sizeof line, "%s: ", program);
    if (prefix < 0 || (size_t)prefix >= sizeof line)
        prefix = 0;
    va_start(args, format);
    vsnprintf(line + prefix, sizeof line - (size_t)prefix, format, args);
    va_end(args);
    fprintf(stderr, "%s\n", line);
}

static bool all_decimal_digits(const char *text)
{
    if (*text == '\0')
        return false;
    for (const char *c = text; *c != '\0'; c++)
        if (*c < '0' || *c > '9')
            return false;
    return true;
}

/* Only the characters of plain decimal floating-point notation: strtod
 * alone would also take "inf", "nan", hexadecimal and leading spaces. */
static bool decimal_real_syntax(const char *text)
{
    if (*text == '\0')
        return false;
    for (const char *c = text; *c != '\0'; c++) {
        bool digit = *c >= '0' && *c <= '9';
        if (!digit && *c != '.' && *c != 'e' && *c != 'E' && *c != '+' &&
            *c != '-')
            return false;
    }
    return true;
}

static bool parse_whole_double(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value))
        return false;
    *out = value;
    return true;
}

cli_number cli_parse_positive_integer(const char *text, uint64_t *out)
{
    if (all_decimal_digits(text)) {
        char *end = NULL;
        errno = 0;
        unsigned long long value = strtoull(text, &end, 10);
        if (errno == ERANGE)
            return CLI_NUMBER_TOO_LARGE;
        if (*end != '\0' || value == 0)
            return CLI_NUMBER_INVALID;
        *out = (uint64_t)value;
        return CLI_NUMBER_OK;
    }
    /* The first character must be a digit or '.': no sign. */
    if (!(text[0] >= '0' && text[0] <= '9') && text[0] != '.')
        return CLI_NUMBER_INVALID;
    if (!decimal_real_syntax(text))
        return CLI_NUMBER_INVALID;
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || *end != '\0')
        return CLI_NUMBER_INVALID;
    if (errno == ERANGE && value > 1.0)
        return CLI_NUMBER_TOO_LARGE; /* overflow: well-formed but huge */
    if (errno == ERANGE || value < 1.0 || floor(value) != value)
        return CLI_NUMBER_INVALID;
    const double exact_limit = 9007199254740992.0; /* 2^53 */
    if (value > exact_limit)
        return CLI_NUMBER_TOO_LARGE;
    *out = (uint64_t)value;
    return CLI_NUMBER_OK;
}

const char *cli_positive_integer_requirement(cli_number result)
{
    if (result == CLI_NUMBER_TOO_LARGE)
        return "must be a positive integer below 2^64 (at most 2^53 when "
               "written like 1e6)";
    return "must be a positive integer";
}

bool cli_parse_block_bits(const char *text, uint32_t *out)
{
    uint64_t value;
    if (cli_parse_positive_integer(text, &value) != CLI_NUMBER_OK ||
        (value != 64 && value != 512))
        return false;
    *out = (uint32_t)value;
    return true;
}

bool cli_parse_block_hashes(const char *text, uint32_t *out)
{
    uint64_t value;
    if (cli_parse_positive_integer(text, &value) != CLI_NUMBER_OK ||
        (value != 1 && value != 2 && value != 4 && value != 8))
        return false;
    *out = (uint32_t)value;
    return true;
}

bool cli_parse_real(const char *text, double *out)
{
    if (!decimal_real_syntax(text))
        return false;
    return parse_whole_double(text, out);
}

int cli_report_getopt_error(const char *program, int result, char **argv)
{
    /* getopt_long has already stepped past the offending word. */
    const char *word = optind > 0 ? argv[optind - 1] : "";
    bool long_form = strncmp(word, "--", 2) == 0;

    if (result == ':') {
        if (long_form)
            cli_error(program, "option '%s' requires an argument", word);
        else
            cli_error(program, "option '-%c' requires an argument", optopt);
    } else if (long_form && optopt != 0 && strchr(word, '=') != NULL) {
        /* A known option that takes no argument, given "--name=value". */
        int name_length = (int)(strchr(word, '=') - word);
        cli_error(program, "option '%.*s' does not take an argument",
                  name_length, word);
    } else if (!long_form && optopt != 0) {
        cli_error(program, "unknown option '-%c'", optopt);
    } else {
        cli_error(program, "unknown option '%s'", word);
    }
    return CLI_EXIT_USAGE;
}

int cli_report_unexpected_operand(const char *program, const char *operand)
{
    cli_error(program, "unexpected argument '%s'", operand);
    return CLI_EXIT_USAGE;
}

void cli_quote_bytes(const char *bytes, size_t length, char *out)
{
    size_t shown = length < CLI_QUOTE_BYTES ? length : CLI_QUOTE_BYTES;
    char *p = out;
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)bytes[i];
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
            *p++ = (char)c;
        else
            p += sprintf(p, "\\x%02x", c);
    }
    if (shown < length)
        p += sprintf(p, "...");
    *p = '\0';
}
