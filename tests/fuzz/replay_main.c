/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay_main.c: runs the snapshot fuzz target without libFuzzer.
 *
 * Every ordinary build (gcc, clang, ASan) gets the decoder properties of
 * fuzz_snapshot.c checked over the committed seed corpus and over simple
 * deterministic mutations of each seed: every truncation and every single-bit
 * flip. The flips go through the harness's checksum repair, so each one
 * reaches the parameter and payload checks. libFuzzer explores further in
 * the fuzz build; this keeps the basics guarded where libFuzzer is absent.
 *
 * Usage: fuzz_snapshot_replay PATH...   (files, or directories read one
 * level deep). Fails when no input was found: an empty corpus must not pass.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

typedef struct replay_counts {
    size_t files;
    size_t inputs;
} replay_counts;

/* Reads a whole file; returns NULL on error. *size_out receives the length.
 * The buffer is never NULL for an empty file (the target gets a valid
 * pointer, as libFuzzer gives it). */
static uint8_t *read_file(const char *path, size_t *size_out)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        return NULL;
    }
    size_t capacity = 4096, size = 0;
    uint8_t *bytes = malloc(capacity);
    while (bytes != NULL) {
        size += fread(bytes + size, 1, capacity - size, file);
        if (size < capacity) {
            break;
        }
        capacity *= 2;
        uint8_t *grown = realloc(bytes, capacity);
        if (grown == NULL) {
            free(bytes);
        }
        bytes = grown;
    }
    if (bytes != NULL && ferror(file)) {
        free(bytes);
        bytes = NULL;
    }
    fclose(file);
    *size_out = size;
    return bytes;
}

static void replay_mutations(uint8_t *bytes, size_t size, replay_counts *counts)
{
    LLVMFuzzerTestOneInput(bytes, size);
    counts->inputs++;
    for (size_t prefix = 0; prefix < size; prefix++) {
        LLVMFuzzerTestOneInput(bytes, prefix);
        counts->inputs++;
    }
    for (size_t bit = 0; bit < size * 8; bit++) {
        uint8_t mask = (uint8_t)(1u << (bit % 8));
        bytes[bit / 8] ^= mask;
        LLVMFuzzerTestOneInput(bytes, size);
        bytes[bit / 8] ^= mask;
        counts->inputs++;
    }
}

static int replay_file(const char *path, replay_counts *counts)
{
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    if (bytes == NULL) {
        fprintf(stderr, "fuzz_snapshot_replay: cannot read %s\n", path);
        return -1;
    }
    replay_mutations(bytes, size, counts);
    counts->files++;
    free(bytes);
    return 0;
}

static int replay_directory(const char *path, replay_counts *counts)
{
    DIR *dir = opendir(path);
    if (dir == NULL) {
        fprintf(stderr, "fuzz_snapshot_replay: cannot open %s\n", path);
        return -1;
    }
    int result = 0;
    const struct dirent *entry;
    while (result == 0 && (entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(length);
        if (child == NULL) {
            result = -1;
            break;
        }
        snprintf(child, length, "%s/%s", path, entry->d_name);
        result = replay_file(child, counts);
        free(child);
    }
    closedir(dir);
    return result;
}

static int replay_path(const char *path, replay_counts *counts)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        fprintf(stderr, "fuzz_snapshot_replay: no such path %s\n", path);
        return -1;
    }
    return S_ISDIR(info.st_mode) ? replay_directory(path, counts)
                                 : replay_file(path, counts);
}

int main(int argc, char **argv)
{
    replay_counts counts = {0, 0};
    for (int i = 1; i < argc; i++) {
        if (replay_path(argv[i], &counts) != 0) {
            return 1;
        }
    }
    if (counts.files == 0) {
        fprintf(stderr, "fuzz_snapshot_replay: no input files\n");
        return 1;
    }
    printf("replayed %zu files, %zu inputs\n", counts.files, counts.inputs);
    return 0;
}
