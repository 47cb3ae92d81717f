/*
 * bench.c: `ebb-bench`, the program `make bench` runs. Everything it
 * measures and prints lives in the measurement core (benchcore.h), shared
 * with `ebb bench`.
 */
#include "benchcore.h"

#include <stdio.h>
#include <stdlib.h>

#define PROGRAM "ebb-bench"

int main(int argc, char **argv)
{
    bench_options options;
    char message[256];
    switch (bench_parse_options(argc, argv, &options, message, sizeof message)) {
    case BENCH_PARSE_HELP:
        bench_print_usage(stdout, PROGRAM);
        return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    case BENCH_PARSE_ERROR:
        fprintf(stderr, "%s: %s\n", PROGRAM, message);
        return 2;
    case BENCH_PARSE_RUN:
    default:
        return bench_run(&options, stdout);
    }
}
