/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lines.c: input lines and standard output for the subcommands that read
 * streams (lines.h).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "lines.h"

#include "common.h"
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* One read system call per 256 KiB, one write per MiB. */
#define INPUT_BUFFER_BYTES ((size_t)1 << 18)
#define OUTPUT_BUFFER_BYTES ((size_t)1 << 20)

typedef struct line_reader {
    const char *program;
    cli_line_handler take;
    cli_input_end_handler end;
    void *context;
    char *buffer;
    size_t capacity;
} line_reader;

/* Reads one open input to its end. */
static int read_stream(line_reader *reader, FILE *in, cli_input *input)
{
    int read_error;
    input->line_number = 0;
    for (;;) {
        errno = 0;
        ssize_t length = getline(&reader->buffer, &reader->capacity, in);
        if (length < 0) {
            read_error = errno;
            break;
        }
        input->line_number++;
        int status = reader->take(reader->context, input, reader->buffer,
                                  (size_t)length);
        if (status != CLI_CONTINUE)
            return status;
    }
    if (reader->end != NULL) {
        int status = reader->end(reader->context, input);
        if (status != CLI_CONTINUE)
            return status;
    }
    if (ferror(in)) {
        int error = read_error != 0 ? read_error : EIO;
        cli_error(reader->program, "%s: %s", input->name, strerror(error));
        return CLI_EXIT_IO;
    }
    return CLI_CONTINUE;
}

/* Opens one operand ("-" is standard input) and reads it. */
static int read_operand(line_reader *reader, const char *operand)
{
    cli_input input = {operand, 0};
    if (strcmp(operand, "-") == 0) {
        input.name = "standard input";
        int status = read_stream(reader, stdin, &input);
        /* "-" may be given again: a terminal can then be read once more. */
        clearerr(stdin);
        return status;
    }
    FILE *in = fopen(operand, "r");
    if (in == NULL) {
        cli_error(reader->program, "%s: %s", operand, strerror(errno));
        return CLI_EXIT_IO;
    }
    setvbuf(in, NULL, _IOFBF, INPUT_BUFFER_BYTES);
    int status = read_stream(reader, in, &input);
    fclose(in);
    return status;
}

int cli_read_inputs(const char *program, char **operands, int count,
                    cli_line_handler take, cli_input_end_handler end,
                    void *context)
{
    line_reader reader = {program, take, end, context, NULL, 0};
    int status = CLI_CONTINUE;
    if (count == 0)
        status = read_operand(&reader, "-");
    for (int i = 0; i < count && status == CLI_CONTINUE; i++)
        status = read_operand(&reader, operands[i]);
    free(reader.buffer);
    return status;
}

void cli_prepare_output(void)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, OUTPUT_BUFFER_BYTES);
}

int cli_write_error(const char *program, int error)
{
    if (error != EPIPE)
        cli_error(program, "write error: %s", strerror(error));
    return CLI_EXIT_IO;
}

int cli_finish_output(const char *program)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_write_error(program, errno != 0 ? errno : EIO);
    return CLI_CONTINUE;
}
