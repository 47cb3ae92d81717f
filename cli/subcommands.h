/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * subcommands.h: the entry point of each `ebb` subcommand. argv[0] is the
 * subcommand's name; the return value is the process exit status.
 */
#ifndef EBB_CLI_SUBCOMMANDS_H
#define EBB_CLI_SUBCOMMANDS_H

int ebb_cli_dedup(int argc, char **argv);  /* dedup.c  */
int ebb_cli_recent(int argc, char **argv); /* recent.c */
int ebb_cli_count(int argc, char **argv);  /* count.c  */
int ebb_cli_params(int argc, char **argv); /* params.c */
int ebb_cli_bench(int argc, char **argv);  /* bench.c  */

#endif /* EBB_CLI_SUBCOMMANDS_H */
