/*
 * dedup.c: `ebb dedup`, drop lines that occurred among the previous N lines.
 *
 * For every input line (the bytes before its '\n'; any byte may occur, NUL
 * and '\r' included) the filter is asked whether the line occurred among
 * the previous N lines, and the line is then always added, so every line
 * counts toward the window whether it is printed or not. The line is
 * printed exactly as read when it was not seen (--invert: when it was).
 * An APBF has no false negatives, so a line repeated within the window is
 * always dropped; a fresh line is dropped at the filter's false-positive
 * rate.
 *
 * --blocked (or --block-bits / --block-hashes) builds the blocked variant
 * (APBBF): each slice a blocked Bloom filter, so a line costs a few cache
 * lines instead of one per slice.
 *
 * Lines are processed in batches: up to BATCH_LINES lines are read, hashed,
 * and handed to ebb_apbf_check_and_add_batch in one call, which overlaps
 * their memory accesses and gives exactly the one-at-a-time answers (each
 * line tested, then added, in order; a line repeated inside a batch is seen
 * by its second occurrence). So the output is the same as line by line.
 *
 * --state FILE keeps the filter between runs. It is loaded before the first
 * line and saved after the last one, atomically (temporary file, fsync,
 * rename, fsync of the directory), and only when the whole run succeeded:
 * a run that fails (unreadable input, write error) leaves FILE as it was,
 * so repeating the run over the same input gives the same output.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "subcommands.h"

#include <ebb/ebb.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PROGRAM "ebb dedup"

#define DEDUP_DEFAULT_WINDOW UINT64_C(1000000)
#define DEDUP_DEFAULT_FP 0.01
/* The hash seed of filters dedup creates: the ASCII bytes of "ebbdedup".
 * Fixed so that runs are reproducible; a loaded state brings its own. */
#define DEDUP_SEED UINT64_C(0x6562626465647570)

/* Lines per batch, and the bytes after which a batch is processed early
 * (so that a batch of long lines does not hold much memory). On a terminal
 * each line is answered as soon as it is read. */
#define BATCH_LINES 256u
#define BATCH_BYTES ((size_t)1 << 16)

/* Large buffers: one write or read system call per MiB, not per line. */
#define OUTPUT_BUFFER_BYTES ((size_t)1 << 20)
#define INPUT_BUFFER_BYTES ((size_t)1 << 18)

/* Returned by the steps below to mean "no error, go on"; every other value
 * is the exit status. */
#define CONTINUE (-1)

/* getopt_long values of the options without a short form character. */
enum {
    OPTION_BLOCKED = 256,
    OPTION_BLOCK_BITS,
    OPTION_BLOCK_HASHES
};

typedef struct dedup_options {
    uint64_t window;
    double fp;
    double max_npws; /* 0: no bound */
    bool have_window, have_fp, have_max_npws;
    bool invert;
    bool stats;
    /* Blocked slices: --blocked, or implied by --block-bits/--block-hashes. */
    bool blocked, have_blocked, have_block_bits, have_block_hashes;
    uint32_t block_bits, block_hashes;
    const char *state_path; /* NULL: no state */
    const char *window_text, *fp_text, *max_npws_text;
    const char *block_bits_text, *block_hashes_text;
    char **inputs; /* the FILE operands; none means stdin */
    int input_count;
} dedup_options;

typedef struct dedup_counts {
    uint64_t lines_read;
    uint64_t lines_written;
} dedup_counts;

/* The line buffer getline grows; reused across all inputs. */
typedef struct line_buffer {
    char *bytes;
    size_t capacity;
} line_buffer;

/* Lines read but not yet answered: their bytes one after the other in
 * arena (each with its '\n', if it had one), and what the filter says. */
typedef struct line_batch {
    char *arena;
    size_t arena_used, arena_capacity;
    size_t count, capacity; /* lines held; lines per batch (<= BATCH_LINES) */
    size_t start[BATCH_LINES];  /* offset of each line in arena          */
    size_t length[BATCH_LINES]; /* bytes as read, '\n' included          */
    size_t key_length[BATCH_LINES];
    const void *key[BATCH_LINES];
    ebb_hash128 hash[BATCH_LINES];
    bool seen[BATCH_LINES];
} line_batch;

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: ebb dedup [--window N] [--fp P] [--max-npws F] [--invert]\n"
            "                 [--blocked] [--block-bits B] [--block-hashes b]\n"
            "                 [--stats] [--state FILE] [FILE...]\n"
            "\n"
            "Writes each line of the FILEs (standard input when none is given,\n"
            "or for '-') unless it occurred among the previous N input lines.\n"
            "Every input line counts toward the window, printed or not. Lines\n"
            "are bytes: '\\r' and NUL are part of the line, and a last line\n"
            "without '\\n' is written back without one.\n"
            "\n"
            "A line repeated within the window is always dropped. A line not\n"
            "seen before is dropped by mistake with probability at most P; one\n"
            "last seen a little more than N lines ago may still be dropped (the\n"
            "filter's slack, see 'ebb params').\n"
            "\n"
            "Options:\n"
            "  --window N     lines to remember (positive integer, 1e6 notation\n"
            "                 accepted; default %" PRIu64 ")\n"
            "  --fp P         false-positive rate, 0 < P < 1 (default %g)\n"
            "  --max-npws F   bound on the peak NPWS, > 0 (default: none)\n"
            "  --invert       print only the lines that are dropped\n"
            "  --blocked      blocked slices (APBBF): a few cache-line reads per\n"
            "                 line instead of one per slice, a little more memory\n"
            "  --block-bits B  bits per block, 64 or 512 (default %u);\n"
            "                 implies --blocked\n"
            "  --block-hashes b\n"
            "                 bits set per block, 1, 2, 4 or 8 (default %u);\n"
            "                 implies --blocked\n"
            "  --stats        after the run, print to stderr: lines read, lines\n"
            "                 written, k, l, window, memory bytes, fp (and block\n"
            "                 bits, block hashes for a blocked filter)\n"
            "  --state FILE   load the filter from FILE if it exists, save it\n"
            "                 there (atomically) after a successful run\n"
            "  -h, --help     show this help\n"
            "\n"
            "New filters hash with the fixed seed 0x%016" PRIx64 ".\n"
            "Exit status: 0 success, 1 I/O error, 2 usage error.\n",
            DEDUP_DEFAULT_WINDOW, DEDUP_DEFAULT_FP, CLI_DEFAULT_BLOCK_BITS,
            CLI_DEFAULT_BLOCK_HASHES, DEDUP_SEED);
}

static int invalid_value(const char *option, const char *text,
                         const char *requirement)
{
    cli_error(PROGRAM, "invalid %s '%s': %s", option, text, requirement);
    return CLI_EXIT_USAGE;
}

/* Returns CONTINUE or the exit status. */
static int apply_option(int option, char *value, dedup_options *opts)
{
    cli_number parsed;
    switch (option) {
    case 'w':
        parsed = cli_parse_positive_integer(value, &opts->window);
        if (parsed != CLI_NUMBER_OK)
            return invalid_value("--window", value,
                                 cli_positive_integer_requirement(parsed));
        opts->have_window = true;
        opts->window_text = value;
        return CONTINUE;
    case 'f':
        if (!cli_parse_real(value, &opts->fp) || !(opts->fp > 0.0) ||
            !(opts->fp < 1.0))
            return invalid_value("--fp", value,
                                 "must be a number between 0 and 1 "
                                 "(exclusive)");
        opts->have_fp = true;
        opts->fp_text = value;
        return CONTINUE;
    case 'n':
        if (!cli_parse_real(value, &opts->max_npws) ||
            !(opts->max_npws > 0.0))
            return invalid_value("--max-npws", value,
                                 "must be a positive number");
        opts->have_max_npws = true;
        opts->max_npws_text = value;
        return CONTINUE;
    case 'i':
        opts->invert = true;
        return CONTINUE;
    case OPTION_BLOCKED:
        opts->blocked = opts->have_blocked = true;
        return CONTINUE;
    case OPTION_BLOCK_BITS:
        if (!cli_parse_block_bits(value, &opts->block_bits))
            return invalid_value("--block-bits", value,
                                 CLI_BLOCK_BITS_REQUIREMENT);
        opts->blocked = opts->have_block_bits = true;
        opts->block_bits_text = value;
        return CONTINUE;
    case OPTION_BLOCK_HASHES:
        if (!cli_parse_block_hashes(value, &opts->block_hashes))
            return invalid_value("--block-hashes", value,
                                 CLI_BLOCK_HASHES_REQUIREMENT);
        opts->blocked = opts->have_block_hashes = true;
        opts->block_hashes_text = value;
        return CONTINUE;
    case 's':
        opts->stats = true;
        return CONTINUE;
    case 'S':
        if (value[0] == '\0') {
            cli_error(PROGRAM, "invalid --state '': must be a file name");
            return CLI_EXIT_USAGE;
        }
        opts->state_path = value;
        return CONTINUE;
    default:
        cli_error(PROGRAM, "internal error: option %d not handled", option);
        return CLI_EXIT_USAGE;
    }
}

/* Returns CONTINUE or the exit status. */
static int parse_command_line(int argc, char **argv, dedup_options *opts)
{
    static const struct option options[] = {
        {"window", required_argument, NULL, 'w'},
        {"fp", required_argument, NULL, 'f'},
        {"max-npws", required_argument, NULL, 'n'},
        {"invert", no_argument, NULL, 'i'},
        {"blocked", no_argument, NULL, OPTION_BLOCKED},
        {"block-bits", required_argument, NULL, OPTION_BLOCK_BITS},
        {"block-hashes", required_argument, NULL, OPTION_BLOCK_HASHES},
        {"stats", no_argument, NULL, 's'},
        {"state", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };

    opts->window = DEDUP_DEFAULT_WINDOW;
    opts->fp = DEDUP_DEFAULT_FP;
    opts->max_npws = 0.0;
    opts->block_bits = CLI_DEFAULT_BLOCK_BITS;
    opts->block_hashes = CLI_DEFAULT_BLOCK_HASHES;

    opterr = 0;
    int option;
    while ((option = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (option == 'h') {
            print_usage(stdout);
            return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_IO;
        }
        if (option == '?' || option == ':')
            return cli_report_getopt_error(PROGRAM, option, argv);
        int status = apply_option(option, optarg, opts);
        if (status != CONTINUE)
            return status;
    }
    opts->inputs = argv + optind;
    opts->input_count = argc - optind;
    return CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* The filter: created, or loaded from --state                              */
/* ------------------------------------------------------------------------ */

/* Returns CONTINUE or the exit status. */
static int create_filter(const dedup_options *opts, ebb_apbf **filter)
{
    ebb_apbf_params shape;
    ebb_status status = ebb_apbf_choose_blocked(
        opts->window, opts->fp, opts->max_npws,
        opts->blocked ? opts->block_bits : 0,
        opts->blocked ? opts->block_hashes : 0, &shape);
    if (status == EBB_OK)
        status = ebb_apbf_create(&shape, DEDUP_SEED, filter);
    if (status == EBB_ENOMEM) {
        cli_error(PROGRAM, "cannot allocate the filter: %s",
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    if (status != EBB_OK) {
        char blocks[64] = "";
        if (opts->blocked)
            snprintf(blocks, sizeof blocks,
                     " (blocked, %" PRIu32 "-bit blocks, %" PRIu32
                     " bits per block)",
                     opts->block_bits, opts->block_hashes);
        cli_error(PROGRAM, "cannot build a filter for window %" PRIu64
                  " and fp %g%s%s%s: %s", opts->window, opts->fp,
                  opts->have_max_npws ? " with max-npws " : "",
                  opts->have_max_npws ? opts->max_npws_text : "", blocks,
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return CONTINUE;
}

/* Reads the whole file into a malloc'ed buffer. Returns 0, or an errno
 * value (ENOENT when the file does not exist). */
static int read_whole_file(const char *path, unsigned char **bytes,
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

/* Sets *filter to the snapshot in path, or to NULL when there is no such
 * file. Returns CONTINUE or the exit status; never modifies the file. */
static int load_state(const char *path, ebb_apbf **filter)
{
    unsigned char *snapshot = NULL;
    size_t length = 0;
    int error = read_whole_file(path, &snapshot, &length);
    if (error == ENOENT) {
        *filter = NULL;
        return CONTINUE;
    }
    if (error != 0) {
        cli_error(PROGRAM, "%s: %s", path, strerror(error));
        return CLI_EXIT_IO;
    }
    ebb_status status = ebb_apbf_load(snapshot, length, filter);
    free(snapshot);
    if (status != EBB_OK) {
        cli_error(PROGRAM, "%s: %s", path, ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    return CONTINUE;
}

/* The block options, if given, must describe the loaded filter's slices.
 * Left out, the kind comes from the state. Returns CONTINUE or the exit
 * status. */
static int check_state_blocks(const dedup_options *opts, const char *path,
                              const ebb_apbf_params *loaded)
{
    if (opts->blocked && loaded->block_bits == 0) {
        const char *option = opts->have_blocked      ? "--blocked"
                             : opts->have_block_bits ? "--block-bits"
                                                     : "--block-hashes";
        const char *value = opts->have_blocked      ? ""
                            : opts->have_block_bits ? opts->block_bits_text
                                                    : opts->block_hashes_text;
        cli_error(PROGRAM, "%s%s%s disagrees with the state in '%s' (a plain "
                  "filter)", option, opts->have_blocked ? "" : " ", value,
                  path);
        return CLI_EXIT_USAGE;
    }
    if (opts->have_block_bits && opts->block_bits != loaded->block_bits) {
        cli_error(PROGRAM, "--block-bits %s disagrees with the state in '%s' "
                  "(block bits %" PRIu32 ")", opts->block_bits_text, path,
                  loaded->block_bits);
        return CLI_EXIT_USAGE;
    }
    if (opts->have_block_hashes && opts->block_hashes != loaded->block_hashes) {
        cli_error(PROGRAM, "--block-hashes %s disagrees with the state in '%s' "
                  "(block hashes %" PRIu32 ")", opts->block_hashes_text, path,
                  loaded->block_hashes);
        return CLI_EXIT_USAGE;
    }
    return CONTINUE;
}

/* Shape options given together with an existing state must describe the
 * loaded filter: silently ignoring them would hide a changed window or
 * error rate. Returns CONTINUE or the exit status. */
static int check_state_shape(const dedup_options *opts, const char *path,
                             const ebb_apbf *filter)
{
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    const ebb_apbf_params *loaded = &stats.params;
    ebb_apbf_params wanted;

    int status = check_state_blocks(opts, path, loaded);
    if (status != CONTINUE)
        return status;
    /* The window sizes slices the same way for a given (k, l) and block
     * shape in both ebb_apbf_choose_blocked and
     * ebb_apbf_params_from_kl_blocked. */
    if (opts->have_window) {
        ebb_status result = ebb_apbf_params_from_kl_blocked(
            loaded->k, loaded->l, opts->window, loaded->block_bits,
            loaded->block_hashes, &wanted);
        if (result != EBB_OK || wanted.window != loaded->window ||
            wanted.slice_bits != loaded->slice_bits ||
            wanted.generation != loaded->generation) {
            cli_error(PROGRAM, "--window %s disagrees with the state in '%s' "
                      "(window %" PRIu64 ")", opts->window_text, path,
                      loaded->window);
            return CLI_EXIT_USAGE;
        }
    }
    if (opts->have_fp || opts->have_max_npws) {
        uint64_t window = opts->have_window ? opts->window : loaded->window;
        ebb_status result = ebb_apbf_choose_blocked(
            window, opts->fp, opts->max_npws, loaded->block_bits,
            loaded->block_hashes, &wanted);
        if (result != EBB_OK || wanted.k != loaded->k ||
            wanted.l != loaded->l) {
            cli_error(PROGRAM, "--%s %s disagrees with the state in '%s' "
                      "(k=%" PRIu32 ", l=%" PRIu32 ")",
                      opts->have_fp ? "fp" : "max-npws",
                      opts->have_fp ? opts->fp_text : opts->max_npws_text,
                      path, loaded->k, loaded->l);
            return CLI_EXIT_USAGE;
        }
    }
    return CONTINUE;
}

/* Returns CONTINUE or the exit status. */
static int open_filter(const dedup_options *opts, ebb_apbf **filter,
                       bool *loaded)
{
    *filter = NULL;
    *loaded = false;
    if (opts->state_path != NULL) {
        int status = load_state(opts->state_path, filter);
        if (status != CONTINUE)
            return status;
        if (*filter != NULL) {
            *loaded = true;
            status = check_state_shape(opts, opts->state_path, *filter);
            if (status != CONTINUE) {
                ebb_apbf_destroy(*filter);
                *filter = NULL;
            }
            return status;
        }
    }
    return create_filter(opts, filter);
}

/* ------------------------------------------------------------------------ */
/* Saving the state atomically                                              */
/* ------------------------------------------------------------------------ */

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
static int sync_parent_directory(const char *path)
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
static int replace_file(const char *path, const unsigned char *snapshot,
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

/* Returns CONTINUE or the exit status. */
static int save_state(const char *path, const ebb_apbf *filter)
{
    size_t length = ebb_apbf_snapshot_size(filter);
    unsigned char *snapshot = malloc(length);
    if (snapshot == NULL) {
        cli_error(PROGRAM, "%s: cannot save state: %s", path,
                  strerror(ENOMEM));
        return CLI_EXIT_IO;
    }
    ebb_status status = ebb_apbf_save(filter, snapshot, length, NULL);
    if (status != EBB_OK) {
        free(snapshot);
        cli_error(PROGRAM, "%s: cannot save state: %s", path,
                  ebb_strerror(status));
        return CLI_EXIT_IO;
    }
    int error = replace_file(path, snapshot, length);
    free(snapshot);
    if (error != 0) {
        cli_error(PROGRAM, "%s: cannot save state: %s", path,
                  strerror(error));
        return CLI_EXIT_IO;
    }
    /* The new state is in place; only its durability is in doubt. */
    error = sync_parent_directory(path);
    if (error != 0) {
        cli_error(PROGRAM, "%s: state saved, but syncing its directory "
                  "failed: %s", path, strerror(error));
        return CLI_EXIT_IO;
    }
    return CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                */
/* ------------------------------------------------------------------------ */

/* A reader that went away (EPIPE, e.g. `ebb dedup | head`) is not worth a
 * message; any other write error is. */
static int report_write_error(int error)
{
    if (error != EPIPE)
        cli_error(PROGRAM, "write error: %s", strerror(error));
    return CLI_EXIT_IO;
}

/* Answers the lines held: hashes them, asks and adds them in one call, and
 * prints those whose answer is the one wanted. Returns CONTINUE or the exit
 * status. */
static int flush_batch(line_batch *batch, ebb_apbf *filter, bool invert,
                       dedup_counts *counts)
{
    size_t n = batch->count;
    batch->count = 0;
    batch->arena_used = 0;
    if (n == 0)
        return CONTINUE;
    /* The arena may have moved while it grew: take the addresses now. */
    for (size_t i = 0; i < n; i++)
        batch->key[i] = batch->arena + batch->start[i];
    ebb_apbf_hash_batch(filter, batch->key, batch->key_length, n,
                        batch->hash);
    ebb_apbf_check_and_add_batch(filter, batch->hash, n, batch->seen);
    for (size_t i = 0; i < n; i++) {
        if (batch->seen[i] != invert)
            continue;
        if (fwrite(batch->arena + batch->start[i], 1, batch->length[i],
                   stdout) != batch->length[i])
            return report_write_error(errno);
        counts->lines_written++;
    }
    return CONTINUE;
}

/* Appends one line (length bytes, '\n' included if present) to the batch.
 * Returns 0 or ENOMEM. */
static int batch_append(line_batch *batch, const char *bytes, size_t length)
{
    if (length > batch->arena_capacity - batch->arena_used) {
        size_t capacity = batch->arena_capacity > 0 ? batch->arena_capacity
                                                    : BATCH_BYTES;
        while (capacity - batch->arena_used < length) {
            if (capacity > SIZE_MAX / 2)
                return ENOMEM;
            capacity *= 2;
        }
        char *grown = realloc(batch->arena, capacity);
        if (grown == NULL)
            return ENOMEM;
        batch->arena = grown;
        batch->arena_capacity = capacity;
    }
    size_t i = batch->count++;
    memcpy(batch->arena + batch->arena_used, bytes, length);
    batch->start[i] = batch->arena_used;
    batch->length[i] = length;
    batch->key_length[i] =
        length > 0 && bytes[length - 1] == '\n' ? length - 1 : length;
    batch->arena_used += length;
    return 0;
}

static bool batch_full(const line_batch *batch)
{
    return batch->count == batch->capacity || batch->arena_used >= BATCH_BYTES;
}

/* Dedups one open input. Lines read before a read error are still
 * answered and printed, as they would be one at a time. Returns CONTINUE or
 * the exit status. */
static int dedup_stream(FILE *in, const char *name, ebb_apbf *filter,
                        bool invert, line_buffer *line, line_batch *batch,
                        dedup_counts *counts)
{
    int read_error;
    for (;;) {
        errno = 0;
        ssize_t length = getline(&line->bytes, &line->capacity, in);
        if (length < 0) {
            read_error = errno;
            break;
        }
        counts->lines_read++;
        if (batch_append(batch, line->bytes, (size_t)length) != 0) {
            cli_error(PROGRAM, "cannot hold a line of %zd bytes: %s", length,
                      strerror(ENOMEM));
            return CLI_EXIT_IO;
        }
        if (batch_full(batch)) {
            int status = flush_batch(batch, filter, invert, counts);
            if (status != CONTINUE)
                return status;
        }
    }
    int status = flush_batch(batch, filter, invert, counts);
    if (status != CONTINUE)
        return status;
    if (ferror(in)) {
        int error = read_error != 0 ? read_error : EIO;
        cli_error(PROGRAM, "%s: %s", name, strerror(error));
        return CLI_EXIT_IO;
    }
    return CONTINUE;
}

/* Opens one operand ("-" is stdin) and dedups it. Returns CONTINUE or the
 * exit status. */
static int dedup_operand(const char *operand, ebb_apbf *filter, bool invert,
                         line_buffer *line, line_batch *batch,
                         dedup_counts *counts)
{
    if (strcmp(operand, "-") == 0) {
        int status = dedup_stream(stdin, "standard input", filter, invert,
                                  line, batch, counts);
        /* "-" may be given again: a terminal can then be read once more. */
        clearerr(stdin);
        return status;
    }
    FILE *in = fopen(operand, "r");
    if (in == NULL) {
        cli_error(PROGRAM, "%s: %s", operand, strerror(errno));
        return CLI_EXIT_IO;
    }
    setvbuf(in, NULL, _IOFBF, INPUT_BUFFER_BYTES);
    int status = dedup_stream(in, operand, filter, invert, line, batch,
                              counts);
    fclose(in);
    return status;
}

/* Returns CONTINUE or the exit status. */
static int dedup_inputs(const dedup_options *opts, ebb_apbf *filter,
                        dedup_counts *counts)
{
    line_buffer line = {NULL, 0};
    line_batch *batch = calloc(1, sizeof *batch);
    if (batch == NULL) {
        cli_error(PROGRAM, "cannot allocate the line batch: %s",
                  strerror(ENOMEM));
        return CLI_EXIT_IO;
    }
    /* On a terminal every line is answered before the next is read. */
    batch->capacity = isatty(STDOUT_FILENO) ? 1 : BATCH_LINES;
    int status = CONTINUE;
    if (opts->input_count == 0)
        status = dedup_operand("-", filter, opts->invert, &line, batch,
                               counts);
    for (int i = 0; i < opts->input_count && status == CONTINUE; i++)
        status = dedup_operand(opts->inputs[i], filter, opts->invert, &line,
                               batch, counts);
    free(line.bytes);
    free(batch->arena);
    free(batch);
    if (status != CONTINUE)
        return status;
    if (fflush(stdout) != 0 || ferror(stdout))
        return report_write_error(errno != 0 ? errno : EIO);
    return CONTINUE;
}

static void print_stats(const dedup_options *opts, const ebb_apbf *filter,
                        const dedup_counts *counts, bool loaded)
{
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    bool blocked = stats.params.block_bits != 0;
    /* A loaded filter without --fp has no target of its own: report the
     * worst-case rate its shape guarantees. */
    double fp = opts->have_fp || !loaded
                    ? opts->fp
                : blocked ? ebb_apbf_shape_fp(&stats.params)
                          : ebb_apbf_fp(stats.params.k, stats.params.l);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "k: %" PRIu32 "\n"
            "l: %" PRIu32 "\n"
            "window: %" PRIu64 "\n"
            "memory bytes: %zu\n"
            "fp: %.10g\n",
            counts->lines_read, counts->lines_written, stats.params.k,
            stats.params.l, stats.params.window, stats.memory_bytes, fp);
    if (blocked)
        fprintf(stderr,
                "block bits: %" PRIu32 "\n"
                "block hashes: %" PRIu32 "\n",
                stats.params.block_bits, stats.params.block_hashes);
}

int ebb_cli_dedup(int argc, char **argv)
{
    dedup_options opts;
    memset(&opts, 0, sizeof opts);
    int status = parse_command_line(argc, argv, &opts);
    if (status != CONTINUE)
        return status;

    ebb_apbf *filter = NULL;
    bool loaded = false;
    status = open_filter(&opts, &filter, &loaded);
    if (status != CONTINUE)
        return status;

    /* Write errors are reported through errno (EPIPE), not a signal, and
     * a file-size limit gives EFBIG instead of killing us half-way through
     * saving the state. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, OUTPUT_BUFFER_BYTES);

    dedup_counts counts = {0, 0};
    status = dedup_inputs(&opts, filter, &counts);
    if (status == CONTINUE && opts.stats)
        print_stats(&opts, filter, &counts, loaded);
    if (status == CONTINUE && opts.state_path != NULL)
        status = save_state(opts.state_path, filter);
    ebb_apbf_destroy(filter);
    return status == CONTINUE ? CLI_EXIT_OK : status;
}
