/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main.c: the `ebb` command. Dispatches to one subcommand per file
 * (dedup.c, recent.c, count.c, params.c) and answers --help and --version itself.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "subcommands.h"

#include <ebb/ebb.h>

#include <getopt.h>
#include <stdio.h>
#include <string.h>

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"dedup", ebb_cli_dedup,
     "write each line unless it occurred in the last N lines or T seconds"},
    {"recent", ebb_cli_recent,
     "how recent is each line: P(seen in the last N lines), its age"},
    {"count", ebb_cli_count,
     "approximate 'sort | uniq -c' in fixed memory (spectral filter)"},
    {"params", ebb_cli_params,
     "show the shape, memory and error rates of a filter"},
    {"bench", ebb_cli_bench,
     "measure the filters beside libbloom (--json for a JSON array)"},
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: ebb <command> [options] [arguments]\n"
            "       ebb --help | --version\n"
            "\n"
            "Bloom filters for sliding windows over streams.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        fprintf(out, "  %-8s %s\n", subcommands[i].name,
                subcommands[i].summary);
    fprintf(out, "\n"
                 "Run 'ebb <command> --help' for the options of a command.\n"
                 "Exit status: 0 success, 1 I/O error or bad input line, 2 usage "
                 "error.\n");
}

static const subcommand *find_subcommand(const char *name)
{
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };

    /* '+' stops at the first operand: everything after the subcommand's
     * name belongs to the subcommand. */
    opterr = 0;
    int option;
    while ((option = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
        switch (option) {
        case 'h':
            print_usage(stdout);
            return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_IO;
        case 'V':
            printf("ebb %s\n", ebb_version_string());
            return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_IO;
        default:
            return cli_report_getopt_error("ebb", option, argv);
        }
    }

    if (optind >= argc) {
        cli_error("ebb", "missing command (run 'ebb --help' for the list)");
        return CLI_EXIT_USAGE;
    }
    const subcommand *command = find_subcommand(argv[optind]);
    if (command == NULL) {
        cli_error("ebb", "unknown command '%s' (run 'ebb --help' for the list)",
                  argv[optind]);
        return CLI_EXIT_USAGE;
    }

    /* The subcommand parses its own argv (its name is argv[0]) from the
     * start, so getopt's scanning state is reset. */
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    optind = 0;
    return command->run(sub_argc, sub_argv);
}
