/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lines.h: reading the input lines of a subcommand (`ebb dedup`, `ebb
 * recent`) from its
 * FILE operands or standard input, and writing its output, with the
 * conventions of `ebb dedup` (docs/cli.md): "-" or no operand is standard
 * input, lines are bytes up to '\n' (any byte, NUL included), large
 * buffers, a reader that went away (EPIPE) is no error worth a message.
 */
#ifndef EBB_CLI_LINES_H
#define EBB_CLI_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The input being read: its name for messages ("standard input" for "-")
 * and the number (from 1) of the line last read from it. */
typedef struct cli_input {
    const char *name;
    uint64_t line_number;
} cli_input;

/* Takes one line: its bytes, '\n' included when present. Returns
 * CLI_CONTINUE or the exit status, which stops the reading. */
typedef int (*cli_line_handler)(void *context, const cli_input *input,
                                const char *bytes, size_t length);

/* Called after the last line of each input (before a read error of it is
 * reported), e.g. to answer the lines held. Returns CLI_CONTINUE or the
 * exit status. */
typedef int (*cli_input_end_handler)(void *context, const cli_input *input);

/* Reads every operand in order (none: standard input) and hands each line
 * to take, then calls end (when not NULL) for that input. An operand that
 * cannot be opened or read is reported ("<program>: <name>: <reason>") and
 * is CLI_EXIT_IO; the lines read before a read error have been taken.
 * Returns CLI_CONTINUE or the exit status. */
int cli_read_inputs(const char *program, char **operands, int count,
                    cli_line_handler take, cli_input_end_handler end,
                    void *context);

/* Before the first output: write errors come back as EPIPE, not a signal,
 * a file-size limit as EFBIG, and standard output is fully buffered
 * (1 MiB) unless it is a terminal. */
void cli_prepare_output(void);

/* After the last output: flushes standard output. Returns CLI_CONTINUE, or
 * CLI_EXIT_IO after a message (none for EPIPE). */
int cli_finish_output(const char *program);

/* A write error (errno value) on standard output: reported unless it is
 * EPIPE. Returns CLI_EXIT_IO. */
int cli_write_error(const char *program, int error);

#endif /* EBB_CLI_LINES_H */
