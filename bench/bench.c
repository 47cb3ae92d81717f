/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench.c: `ebb-bench`, the program `make bench` runs. Everything it
 * measures and prints lives in the measurement core (benchcore.h), shared
 * with `ebb bench`.
 */
#include "benchcore.h"

int main(int argc, char **argv)
{
    return bench_main(argc, argv, "ebb-bench");
}
