/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench.c: `ebb bench [--json] [--quick | --full] [--runs N] [--window N]`.
 *
 * The same measurements and report as `ebb-bench` (make bench): the code
 * lives in the measurement core (bench/benchcore.h), whose bench_main
 * already follows the conventions of the ebb command (one-line usage
 * errors, exit 2; exit 1 when a correctness check failed).
 */
#include "subcommands.h"

#include "benchcore.h"

int ebb_cli_bench(int argc, char **argv)
{
    return bench_main(argc, argv, "ebb bench");
}
