/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.h: what every `ebb` subcommand shares: exit codes, the one-line
 * error printer, strict number parsing and getopt_long error reporting.
 *
 * Every subcommand reports a bad command line with exactly ONE line on
 * stderr naming the offending argument, and exits 2, so scripts (and the
 * golden tests) can rely on the message.
 */
#ifndef EBB_CLI_COMMON_H
#define EBB_CLI_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses of every subcommand. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_IO = 1,    /* input, output or state file could not be used */
    CLI_EXIT_USAGE = 2  /* the command line is wrong                     */
};

#if defined(__GNUC__) || defined(__clang__)
#define CLI_PRINTF(fmt_index, first_arg)                                       \
    __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CLI_PRINTF(fmt_index, first_arg)
#endif

/* Prints "<program>: <message>\n" to stderr, where program is e.g.
 * "ebb dedup". One call, one line. */
void cli_error(const char *program, const char *format, ...) CLI_PRINTF(2, 3);

typedef enum cli_number {
    CLI_NUMBER_OK = 0,
    CLI_NUMBER_INVALID,  /* not a number of the required kind */
    CLI_NUMBER_TOO_LARGE /* of the right kind, but out of range */
} cli_number;

/* A positive integer: all decimal digits ("1000000", below 2^64), or a
 * decimal number in floating-point notation that is exactly an integer
 * ("1e6", "2.5e3") and at most 2^53 (beyond that a double no longer holds
 * every integer). The whole text must be consumed; no sign, no spaces. */
cli_number cli_parse_positive_integer(const char *text, uint64_t *out);

/* The end of the message "invalid --opt 'text': ..." for a failed
 * cli_parse_positive_integer. */
const char *cli_positive_integer_requirement(cli_number result);

/* The blocked variant (--blocked, --block-bits B, --block-hashes b) shared
 * by `ebb dedup` and `ebb params`: B bits per block, b bits set in each.
 * The chooser picks b unless --block-hashes is given; an explicit (k, l)
 * (`ebb params --k K --l L --blocked`) takes CLI_DEFAULT_BLOCK_HASHES. */
#define CLI_DEFAULT_BLOCK_BITS 512u
#define CLI_DEFAULT_BLOCK_HASHES 8u
/* A blocked shape is chosen with EBB_APBF_BLOCKED_MAX_NPWS and
 * EBB_APBF_BLOCKED_MAX_ACCESSES (ebb/apbf.h) unless --max-npws and
 * --max-accesses give others. */
#define CLI_BLOCK_BITS_REQUIREMENT "must be 64 or 512"
#define CLI_BLOCK_HASHES_REQUIREMENT "must be 1, 2, 4 or 8"

/* A block size the library accepts: "64" or "512" (any notation
 * cli_parse_positive_integer takes). */
bool cli_parse_block_bits(const char *text, uint32_t *out);

/* Bits per block the library accepts: 1, 2, 4 or 8. */
bool cli_parse_block_hashes(const char *text, uint32_t *out);

/* A finite real number; the whole text must be consumed, no spaces. */
bool cli_parse_real(const char *text, double *out);

/* Reports the error getopt_long signalled by returning '?' or ':' (the
 * subcommand's optstring must start with ':' and opterr must be 0), as one
 * line, and returns CLI_EXIT_USAGE. */
int cli_report_getopt_error(const char *program, int result, char **argv);

/* The most bytes of an input quoted in a message, and the room the
 * quoted text needs. */
#define CLI_QUOTE_BYTES 64u
#define CLI_QUOTE_SIZE (4u * CLI_QUOTE_BYTES + 4u)

/* Copies bytes into out as printable text for a one-line message: other
 * bytes (and the quote and backslash) as \xHH, at most CLI_QUOTE_BYTES of
 * the input, "..." after a cut. out needs CLI_QUOTE_SIZE bytes. */
void cli_quote_bytes(const char *bytes, size_t length, char *out);

/* Reports an operand a subcommand does not accept. Returns CLI_EXIT_USAGE. */
int cli_report_unexpected_operand(const char *program, const char *operand);

#endif /* EBB_CLI_COMMON_H */
