/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * state_file.h: reading a state file whole and replacing it atomically
 * (temporary file in the same directory, fsync, rename, fsync of the
 * directory), for `ebb dedup --state FILE`.
 */
#ifndef EBB_CLI_STATE_FILE_H
#define EBB_CLI_STATE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <ebb/ebb.h>

/* Reads the whole file into a malloc'ed buffer. Returns 0, or an errno
 * value (ENOENT when the file does not exist, EISDIR for a directory). */
int cli_read_whole_file(const char *path, unsigned char **bytes,
                        size_t *length);

/* Writes bytes to a new temporary file next to path and renames it over
 * path, keeping path's permissions (a new file: 0666 minus the umask).
 * Returns 0 or an errno value; on error path is untouched and the
 * temporary file is gone. */
int cli_replace_file(const char *path, const unsigned char *bytes,
                     size_t length);

/* fsync of path's directory, which makes a rename durable. Returns 0 or
 * an errno value (filesystems that cannot sync a directory count as 0). */
int cli_sync_parent_directory(const char *path);

/* The steps above with their messages ("<program>: <path>: <reason>", one
 * line), for every subcommand that keeps a --state. Each returns
 * CLI_CONTINUE or CLI_EXIT_IO. */

/* Reads the state file into a malloc'ed buffer; *found is false (and
 * nothing allocated) when there is no such file. */
int cli_read_state(const char *program, const char *path,
                   unsigned char **bytes, size_t *length, bool *found);

/* Replaces the state file with the snapshot and syncs its directory. */
int cli_save_state(const char *program, const char *path,
                   const unsigned char *bytes, size_t length);

/* The end of every command's save: `bytes` (malloc'd, NULL when that
 * failed) holds a snapshot of `length` bytes, `status` is what the
 * library's save returned (EBB_ENOMEM for the NULL). Reports a failure,
 * else saves with cli_save_state; frees bytes either way. */
int cli_save_snapshot(const char *program, const char *path,
                      unsigned char *bytes, size_t length,
                      ebb_status status);

#endif /* EBB_CLI_STATE_FILE_H */
