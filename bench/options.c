/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.c: the command line both front ends share.
 *
 *   [--json] [--quick | --full] [--runs N] [--window N]
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A window below this leaves too few keys per generation to say anything.
 * Above the largest, libbloom's int bit count overflows at fp 1e-4 (and
 * the filters with the probe would pass this bench's ~6 GB budget). */
#define MIN_WINDOW UINT64_C(1000)
#define MAX_WINDOW UINT64_C(100000000)

void bench_print_usage(FILE *out, const char *program)
{
    fprintf(out,
            "Usage: %s [--json] [--quick | --full] [--runs N] [--window N]\n"
            "\n"
            "Single-thread throughput of the APBF (library default and fast shapes),\n"
            "the blocked APBF (B = 512, b = 8 and b chosen by the library) and the\n"
            "time-limited filter, beside Debian's libbloom in the same process, at\n"
            "w = 1e6 and 1e8, fp = 1e-2 and 1e-4, the stable filter at libbloom's\n"
            "memory for (w, 1%%) and the Block Timing Bloom filter (add, contains and\n"
            "its posterior query) at the APBF's, the Spectral Bloom filters (MS, MI,\n"
            "RM: add and estimate) at w counters and libbloom's k beside an exact\n"
            "count in GLib's hash table: M ops/s, ns/op, bits per item,\n"
            "cache lines per operation and the fraction of the machine's random\n"
            "cache-line read rate, then the issues' targets (target met: yes/no).\n"
            "\n"
            "Options:\n"
            "  --json      print a JSON array, one object per filter, operation and\n"
            "              call style (keys name, window, fp, mops, ns_per_op,\n"
            "              bits_per_item, lines_per_op, ceiling_fraction, ...)\n"
            "  --quick     w = 1e6 only (under a minute)\n"
            "  --full      every filter at w = 1e8 too (tens of minutes)\n"
            "  --runs N    repetitions per measurement, median reported (1..%u;\n"
            "              default 3)\n"
            "  --window N  measure at this window only (%llu..%llu)\n"
            "  --help      show this help\n"
            "\n"
            "Exit status: 0, 1 when a correctness check failed (a false negative,\n"
            "a false-positive rate above its bound), 2 on a usage error. A missed\n"
            "speed target is reported, never an error.\n",
            program, BENCH_MAX_RUNS, (unsigned long long)MIN_WINDOW,
            (unsigned long long)MAX_WINDOW);
}

/* A whole number in [low, high], written as digits or as 1e6. */
static bool parse_count(const char *text, uint64_t low, uint64_t high, uint64_t *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value) ||
        value != floor(value) || value < (double)low || value > (double)high)
        return false;
    *out = (uint64_t)value;
    return true;
}

bench_parse_result bench_parse_options(int argc, char **argv, bench_options *out,
                                       char *message, size_t message_size)
{
    static const struct option long_options[] = {
        {"json", no_argument, NULL, 'j'},   {"quick", no_argument, NULL, 'q'},
        {"full", no_argument, NULL, 'f'},   {"runs", required_argument, NULL, 'r'},
        {"window", required_argument, NULL, 'w'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t number;
    int option;

    memset(out, 0, sizeof *out);
    opterr = 0;
    optind = 0;
    while ((option = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (option) {
        case 'j':
            out->json = true;
            break;
        case 'q':
            out->quick = true;
            break;
        case 'f':
            out->full = true;
            break;
        case 'r':
            if (!parse_count(optarg, 1, BENCH_MAX_RUNS, &number)) {
                snprintf(message, message_size,
                         "invalid --runs '%s': must be an integer from 1 to %u", optarg,
                         BENCH_MAX_RUNS);
                return BENCH_PARSE_ERROR;
            }
            out->runs = (unsigned)number;
            break;
        case 'w':
            if (!parse_count(optarg, MIN_WINDOW, MAX_WINDOW, &out->window)) {
                snprintf(message, message_size,
                         "invalid --window '%s': must be an integer from %llu to %llu",
                         optarg, (unsigned long long)MIN_WINDOW,
                         (unsigned long long)MAX_WINDOW);
                return BENCH_PARSE_ERROR;
            }
            break;
        case 'h':
            return BENCH_PARSE_HELP;
        case ':':
            snprintf(message, message_size, "option '%s' needs an argument",
                     argv[optind - 1]);
            return BENCH_PARSE_ERROR;
        default:
            snprintf(message, message_size, "unknown option '%s'", argv[optind - 1]);
            return BENCH_PARSE_ERROR;
        }
    }
    if (optind < argc) {
        snprintf(message, message_size, "unexpected argument '%s'", argv[optind]);
        return BENCH_PARSE_ERROR;
    }
    if (out->quick && out->full) {
        snprintf(message, message_size, "--quick and --full exclude each other");
        return BENCH_PARSE_ERROR;
    }
    return BENCH_PARSE_RUN;
}

int bench_main(int argc, char **argv, const char *program)
{
    bench_options options;
    char message[256];
    switch (bench_parse_options(argc, argv, &options, message, sizeof message)) {
    case BENCH_PARSE_HELP:
        bench_print_usage(stdout, program);
        return fflush(stdout) == 0 ? 0 : 1;
    case BENCH_PARSE_ERROR:
        fprintf(stderr, "%s: %s\n", program, message);
        return 2;
    case BENCH_PARSE_RUN:
    default:
        break;
    }
    int failed = bench_run(&options, stdout);
    return fflush(stdout) != 0 || failed ? 1 : 0;
}
