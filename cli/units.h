/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * units.h: quantities with units on the command line: durations ("500ms",
 * "1.5h") and byte sizes ("64M"), parsed strictly and exactly (integer
 * arithmetic, overflow checked), and durations printed back.
 */
#ifndef EBB_CLI_UNITS_H
#define EBB_CLI_UNITS_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#define CLI_NS_PER_SECOND INT64_C(1000000000)

/* A positive duration: decimal digits, an optional fraction ('.' and
 * digits), and one of the units ns, us, ms, s, m, h, d; nothing else (no
 * sign, no spaces, no unit-less number: "60" could mean seconds or
 * milliseconds). The value must be a whole number of nanoseconds ("1.5ns"
 * is invalid) and at most 2^63 - 1 ns (CLI_NUMBER_TOO_LARGE beyond). */
cli_number cli_parse_duration(const char *text, int64_t *ns);

/* The end of the message "invalid --opt 'text': ..." for a failed
 * cli_parse_duration. */
const char *cli_duration_requirement(cli_number result);

/* Writes a positive duration in the largest unit that divides it exactly
 * ("90m", "1500ms"): text cli_parse_duration reads back to the same value.
 * size >= 32 always suffices. */
void cli_format_duration(int64_t ns, char *out, size_t size);

/* Writes ns >= 0 as seconds with the fraction it needs: "60s",
 * "0.689655172s". size >= 32 always suffices. */
void cli_format_seconds(int64_t ns, char *out, size_t size);

/* A positive number of bytes: decimal digits, optionally followed by one
 * of k (or K), M, G, T for 2^10, 2^20, 2^30, 2^40. CLI_NUMBER_TOO_LARGE
 * when the value does not fit in size_t. */
cli_number cli_parse_byte_size(const char *text, size_t *bytes);

const char *cli_byte_size_requirement(cli_number result);

#endif /* EBB_CLI_UNITS_H */
