/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * state_file.c: whole-file reads and atomic replacement, for
 * `ebb dedup --state FILE` (the rules are in docs/cli.md, --state).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "state_file.h"

#include "common.h"
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Reads the whole file into a malloc'ed buffer. Returns 0, or an errno
 * value (ENOENT when the file does not exist). */
int cli_read_whole_file(const char *path, unsigned char **bytes,
                        size_t *length)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    struct stat info;
    int error = fstat(fd, &info) != 0 ? errno : 0;
    if (error == 0 && S_ISDIR(info.st_mode))
        error = EISDIR;
    if (error != 0) {
        close(fd);
        return error;
    }

    size_t capacity = info.st_size > 0 ? (size_t)info.st_size + 1 : 4096;
    size_t used = 0;
    unsigned char *buffer = malloc(capacity);
    if (buffer == NULL)
        error = ENOMEM;
    while (error == 0) {
        if (used == capacity) {
            unsigned char *grown = realloc(buffer, capacity * 2);
            if (grown == NULL) {
                error = ENOMEM;
                break;
            }
            buffer = grown;
            capacity *= 2;
        }
        ssize_t got = read(fd, buffer + used, capacity - used);
        if (got == 0)
            break;
        if (got < 0) {
            if (errno != EINTR)
                error = errno;
            continue;
        }
        used += (size_t)got;
    }
    close(fd);
    if (error != 0) {
        free(buffer);
        return error;
    }
    *bytes = buffer;
    *length = used;
    return 0;
}

static int write_all(int fd, const unsigned char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t put = write(fd, bytes, length);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        bytes += put;
        length -= (size_t)put;
    }
    return 0;
}

/* The permissions the saved file gets: those of the file it replaces, or
 * what a plain creat() would give (mkstemp alone would give 0600). */
static mode_t state_file_mode(const char *path)
{
    struct stat info;
    if (stat(path, &info) == 0)
        return info.st_mode & 07777;
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* fsync of the directory makes the rename itself durable. Filesystems
 * that cannot sync a directory say EINVAL; nothing more can be done there. */
int cli_sync_parent_directory(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *directory;
    if (slash == NULL)
        directory = strdup(".");
    else if (slash == path)
        directory = strdup("/");
    else
        directory = strndup(path, (size_t)(slash - path));
    if (directory == NULL)
        return ENOMEM;
    int fd = open(directory, O_RDONLY | O_DIRECTORY);
    free(directory);
    if (fd < 0)
        return errno;
    int error = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
    close(fd);
    return error;
}

/* Writes snapshot to a new temporary file next to path and renames it over
 * path. Returns 0 or an errno value; on error path is untouched and the
 * temporary file is gone. */
int cli_replace_file(const char *path, const unsigned char *snapshot,
                     size_t length)
{
    size_t path_length = strlen(path);
    static const char suffix[] = ".tmp.XXXXXX";
    char *temporary = malloc(path_length + sizeof suffix);
    if (temporary == NULL)
        return ENOMEM;
    memcpy(temporary, path, path_length);
    memcpy(temporary + path_length, suffix, sizeof suffix);

    mode_t mode = state_file_mode(path);
    int fd = mkstemp(temporary);
    if (fd < 0) {
        int error = errno;
        free(temporary);
        return error;
    }
    int error = 0;
    if (fchmod(fd, mode) != 0)
        error = errno;
    if (error == 0)
        error = write_all(fd, snapshot, length);
    if (error == 0 && fsync(fd) != 0)
        error = errno;
    if (close(fd) != 0 && error == 0)
        error = errno;
    if (error == 0 && rename(temporary, path) != 0)
        error = errno;
    if (error != 0)
        unlink(temporary);
    free(temporary);
    return error;
}


int cli_read_state(const char *program, const char *path,
                   unsigned char **bytes, size_t *length, bool *found)
{
    *found = false;
    int error = cli_read_whole_file(path, bytes, length);
    if (error == ENOENT)
        return CLI_CONTINUE;
    if (error != 0) {
        cli_error(program, "%s: %s", path, strerror(error));
        return CLI_EXIT_IO;
    }
    *found = true;
    return CLI_CONTINUE;
}

int cli_save_snapshot(const char *program, const char *path,
                      unsigned char *bytes, size_t length,
                      ebb_status status)
{
    int result = CLI_EXIT_IO;
    if (status == EBB_OK)
        result = cli_save_state(program, path, bytes, length);
    else
        cli_error(program, "%s: cannot save state: %s", path,
                  ebb_strerror(status));
    free(bytes);
    return result;
}

int cli_save_state(const char *program, const char *path,
                   const unsigned char *bytes, size_t length)
{
    int error = cli_replace_file(path, bytes, length);
    if (error != 0) {
        cli_error(program, "%s: cannot save state: %s", path,
                  strerror(error));
        return CLI_EXIT_IO;
    }
    /* The new state is in place; only its durability is in doubt. */
    error = cli_sync_parent_directory(path);
    if (error != 0) {
        cli_error(program, "%s: state saved, but syncing its directory "
                  "failed: %s", path, strerror(error));
        return CLI_EXIT_IO;
    }
    return CLI_CONTINUE;
}
