/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * benchcore.h: the measurement core shared by `ebb-bench` (bench/bench.c)
 * and `ebb bench` (cli/bench.c). Both front ends parse the same options,
 * run the same measurements and print the same report (tables, or a JSON
 * array with --json); only the program name and the exit conventions of
 * each front end differ.
 */
#ifndef EBB_BENCHCORE_H
#define EBB_BENCHCORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct bench_options {
    unsigned runs;   /* repetitions per measurement; 0: the default of each
                        window (3 up to 1e7, 1 above)                     */
    bool quick;      /* w = 1e6 only                                      */
    bool full;       /* every row at w = 1e8 too (slow)                   */
    bool json;       /* a JSON array of rows instead of the tables        */
    uint64_t window; /* 0: the default windows; else only this one       */
} bench_options;

typedef enum bench_parse_result {
    BENCH_PARSE_RUN = 0,  /* options filled: run the benchmark            */
    BENCH_PARSE_HELP = 1, /* --help: print the usage and exit 0           */
    BENCH_PARSE_ERROR = 2 /* a bad command line: message says which       */
} bench_parse_result;

/* Parses argv[1..argc-1]. On BENCH_PARSE_ERROR, message receives one line
 * (no newline) naming the bad argument. Uses getopt_long (resets optind). */
bench_parse_result bench_parse_options(int argc, char **argv,
                                       bench_options *out, char *message,
                                       size_t message_size);

/* The usage text; program is "ebb-bench" or "ebb bench". */
void bench_print_usage(FILE *out, const char *program);

/* Runs the benchmark and prints the report on out (progress and failed
 * checks go to out in text mode, to stderr with --json). Returns 0, or 1
 * when a correctness check failed (a false negative, a false-positive rate
 * above its bound, or the timed and untimed passes disagreeing). A missed
 * speed target is reported, never a failure. */
int bench_run(const bench_options *options, FILE *out);

/* The whole command for both front ends (`ebb-bench`, `ebb bench`):
 * parses argv, prints the usage or "<program>: <message>" on stderr, runs
 * the benchmark on stdout. Returns 0; 1 when a correctness check failed or
 * stdout could not be written; 2 for a bad command line (the exit statuses
 * of the ebb command). */
int bench_main(int argc, char **argv, const char *program);

#endif /* EBB_BENCHCORE_H */
