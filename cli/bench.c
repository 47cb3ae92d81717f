/*
 * bench.c: `ebb bench [--json] [--quick | --full] [--runs N] [--window N]`.
 *
 * The same measurements and report as `ebb-bench` (make bench): the code
 * lives in the measurement core (bench/benchcore.h); this file only maps
 * its results onto the conventions of the ebb command (one-line usage
 * errors, exit 2; exit 1 when a correctness check failed).
 */
#include "subcommands.h"
#include "common.h"

#include "benchcore.h"

#include <stdio.h>

#define PROGRAM "ebb bench"

int ebb_cli_bench(int argc, char **argv)
{
    bench_options options;
    char message[256];
    switch (bench_parse_options(argc, argv, &options, message, sizeof message)) {
    case BENCH_PARSE_HELP:
        bench_print_usage(stdout, PROGRAM);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_IO;
    case BENCH_PARSE_ERROR:
        cli_error(PROGRAM, "%s", message);
        return CLI_EXIT_USAGE;
    case BENCH_PARSE_RUN:
    default:
        break;
    }
    int failed = bench_run(&options, stdout);
    if (fflush(stdout) != 0)
        return CLI_EXIT_IO;
    return failed ? CLI_EXIT_IO : CLI_EXIT_OK;
}
