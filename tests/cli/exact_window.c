/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exact_window.c: checks `ebb dedup` against an exact sliding window, of
 * lines or of time.
 *
 *   ebb-exact-window INPUT WINDOW FP PRINTED SUPPRESSED
 *   ebb-exact-window --time SPAN_NS TIMES INPUT FP PRINTED SUPPRESSED
 *
 * INPUT is what ebb dedup read, PRINTED its output and SUPPRESSED its
 * output with --invert (run on the same input with the same options).
 * An exact hash table (key: the line bytes, value: the position of the
 * key's last occurrence) classifies every input line i:
 *
 *   in-window  its previous occurrence is among lines i-WINDOW .. i-1: ebb
 *              must suppress it (an APBF has no false negatives);
 *   new        it never occurred before: ebb suppresses it only as a false
 *              positive, which must happen at most
 *              p * new + 3 * sqrt(p * (1 - p) * new) + 1 times with p = FP
 *              (three binomial standard deviations above the target);
 *   older      its previous occurrence is further back: either answer is
 *              allowed (the filter's slack).
 *
 * With --time the window is one of time (ebb dedup --time-window with
 * --time-field 1): TIMES holds each input line's time in nanoseconds, one
 * per line (ebb-gen-stream --times writes it from what it printed, so the
 * oracle does not share ebb's timestamp parser). Times are clamped to be
 * non-decreasing, e_i = max(t_i, e_{i-1}), exactly as the library clamps
 * them; line i is in-window when its key's previous occurrence j has
 * e_i - e_j <= SPAN_NS. The key is what follows the line's first space
 * (the time field), and p = 1.25 FP: a TLBF keeps its target at a steady
 * rate but exceeds it for a while after the rate jumps (docs/tlbf.md). The
 * run must also have probed the edge: clamped times, repeats in the last
 * 5% of the span, exactly SPAN_NS old, and at most 5% past it.
 *
 * PRINTED and SUPPRESSED must interleave to exactly INPUT. Where a line
 * could come from either (both next lines equal it), the checker takes the
 * answer the exact window says is right, so a correct ebb is never blamed;
 * a wrong one still is as soon as its outputs stop interleaving.
 *
 * Exit 0 when every check holds, 1 when one fails, 2 on bad usage or I/O.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define PROGRAM "ebb-exact-window"

/* ------------------------------------------------------------------------ */
/* Exact table: open addressing, linear probing, keys in one arena           */
/* ------------------------------------------------------------------------ */

typedef struct slot {
    uint64_t hash; /* 0 marks an empty slot (real hashes are forced odd) */
    uint64_t key_offset;
    uint64_t key_length;
    uint64_t last; /* line index, or effective time (time windows) */
} slot;

typedef struct exact_table {
    slot *slots;
    uint64_t capacity; /* a power of two */
    uint64_t count;
    char *arena;
    uint64_t arena_used, arena_capacity;
} exact_table;

/* FNV-1a followed by a final avalanche: independent of ebb's XXH3, so a
 * hashing bug in ebb cannot hide in the oracle as well. */
static uint64_t hash_bytes(const char *bytes, size_t length)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < length; i++) {
        h ^= (unsigned char)bytes[i];
        h *= UINT64_C(0x100000001b3);
    }
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return h | 1;
}

static void *checked_calloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (p == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        exit(2);
    }
    return p;
}

static void table_init(exact_table *t)
{
    t->capacity = 1u << 16;
    t->count = 0;
    t->slots = checked_calloc(t->capacity, sizeof *t->slots);
    t->arena_capacity = 1u << 20;
    t->arena_used = 0;
    t->arena = checked_calloc(t->arena_capacity, 1);
}

static void table_free(exact_table *t)
{
    free(t->slots);
    free(t->arena);
}

static void table_grow(exact_table *t)
{
    uint64_t capacity = t->capacity * 2;
    slot *slots = checked_calloc(capacity, sizeof *slots);
    for (uint64_t i = 0; i < t->capacity; i++) {
        if (t->slots[i].hash == 0)
            continue;
        uint64_t at = t->slots[i].hash & (capacity - 1);
        while (slots[at].hash != 0)
            at = (at + 1) & (capacity - 1);
        slots[at] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
}

static uint64_t arena_store(exact_table *t, const char *bytes, size_t length)
{
    while (t->arena_capacity - t->arena_used < length) {
        t->arena_capacity *= 2;
        t->arena = realloc(t->arena, t->arena_capacity);
        if (t->arena == NULL) {
            fprintf(stderr, PROGRAM ": out of memory\n");
            exit(2);
        }
    }
    uint64_t offset = t->arena_used;
    if (length > 0)
        memcpy(t->arena + offset, bytes, length);
    t->arena_used += length;
    return offset;
}

/* Records that key occurs at index. Returns true and sets *previous when it
 * occurred before. */
static bool table_record(exact_table *t, const char *key, size_t length,
                         uint64_t index, uint64_t *previous)
{
    if (2 * (t->count + 1) > t->capacity)
        table_grow(t);
    uint64_t hash = hash_bytes(key, length);
    uint64_t at = hash & (t->capacity - 1);
    for (;; at = (at + 1) & (t->capacity - 1)) {
        slot *s = &t->slots[at];
        if (s->hash == 0) {
            s->hash = hash;
            s->key_offset = arena_store(t, key, length);
            s->key_length = length;
            s->last = index;
            t->count++;
            return false;
        }
        if (s->hash == hash && s->key_length == length &&
            memcmp(t->arena + s->key_offset, key, length) == 0) {
            *previous = s->last;
            s->last = index;
            return true;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Walking the three files                                                  */
/* ------------------------------------------------------------------------ */

/* One line of a file, '\n' included when present. */
typedef struct line_reader {
    FILE *file;
    const char *name;
    char *bytes;
    size_t capacity;
    ssize_t length; /* -1 at end of file */
} line_reader;

static FILE *open_or_die(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, PROGRAM ": %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return f;
}

static void reader_advance(line_reader *r)
{
    r->length = getline(&r->bytes, &r->capacity, r->file);
    if (r->length < 0 && ferror(r->file)) {
        fprintf(stderr, PROGRAM ": %s: read error\n", r->name);
        exit(2);
    }
}

static void reader_open(line_reader *r, const char *path)
{
    r->file = open_or_die(path);
    r->name = path;
    r->bytes = NULL;
    r->capacity = 0;
    reader_advance(r);
}

static void reader_close(line_reader *r)
{
    fclose(r->file);
    free(r->bytes);
}

static bool reader_holds(const line_reader *r, const line_reader *input)
{
    return r->length == input->length &&
           memcmp(r->bytes, input->bytes, (size_t)r->length) == 0;
}

/* How a line's previous occurrence is judged: by lines (count windows) or
 * by time (time windows: the times file gives each input line's time in
 * ns, and times are clamped to be non-decreasing, as ebb does). */
typedef struct window_rule {
    bool by_time;
    uint64_t window;   /* lines, count windows                       */
    int64_t span_ns;   /* time windows                               */
    double fp_factor;  /* the false-positive bound's multiple of FP  */
    line_reader times; /* time windows                               */
    int64_t latest;    /* the latest (effective) time so far         */
} window_rule;

typedef struct window_tally {
    uint64_t lines;
    uint64_t in_window, in_window_printed; /* printed = false negative */
    uint64_t fresh, fresh_suppressed;      /* suppressed = false positive */
    uint64_t older, older_suppressed;
    /* Time windows: how well the edge of the span was probed. */
    uint64_t clamped;      /* times earlier than the latest             */
    uint64_t near_edge;    /* in the window, in its last 5%             */
    uint64_t at_edge;      /* previous occurrence exactly the span ago  */
    uint64_t just_outside; /* older, by at most 5% of the span          */
} window_tally;

typedef enum line_class { LINE_IN_WINDOW, LINE_NEW, LINE_OLDER } line_class;

static void tally_line(window_tally *t, line_class class, bool suppressed)
{
    t->lines++;
    if (class == LINE_IN_WINDOW) {
        t->in_window++;
        t->in_window_printed += !suppressed;
    } else if (class == LINE_NEW) {
        t->fresh++;
        t->fresh_suppressed += suppressed;
    } else {
        t->older++;
        t->older_suppressed += suppressed;
    }
}

/* The next line's time from the times file, clamped to the latest. */
static int64_t next_time(window_rule *rule, uint64_t index, window_tally *t)
{
    line_reader *r = &rule->times;
    char *end = NULL;
    errno = 0;
    long long value = r->length > 0 ? strtoll(r->bytes, &end, 10) : 0;
    if (r->length <= 0 || errno != 0 || end == r->bytes ||
        (*end != '\n' && *end != '\0')) {
        fprintf(stderr, PROGRAM ": %s: no time for input line %" PRIu64 "\n",
                r->name, index + 1);
        exit(2);
    }
    reader_advance(r);
    int64_t time = (int64_t)value;
    if (index > 0 && time < rule->latest) {
        t->clamped++;
        time = rule->latest;
    }
    rule->latest = time;
    return time;
}

/* The key: the whole line for count windows; for time windows what
 * follows the first space (ebb-gen-stream writes the time first). */
static void line_key(const window_rule *rule, const line_reader *input,
                     const char **key, size_t *length)
{
    size_t n = (size_t)input->length;
    if (n > 0 && input->bytes[n - 1] == '\n')
        n--;
    *key = input->bytes;
    *length = n;
    const char *space = rule->by_time ? memchr(input->bytes, ' ', n) : NULL;
    if (space != NULL) {
        *key = space + 1;
        *length = n - (size_t)(space + 1 - input->bytes);
    }
}

/* The class of input line `index` from its previous occurrence. */
static line_class classify(window_rule *rule, exact_table *table,
                           const line_reader *input, uint64_t index,
                           window_tally *t)
{
    const char *key;
    size_t length;
    line_key(rule, input, &key, &length);
    uint64_t position =
        rule->by_time ? (uint64_t)next_time(rule, index, t) : index;
    uint64_t previous = 0;
    if (!table_record(table, key, length, position, &previous))
        return LINE_NEW;
    if (!rule->by_time)
        return index - previous <= rule->window ? LINE_IN_WINDOW : LINE_OLDER;
    int64_t age = (int64_t)position - (int64_t)previous;
    int64_t margin = rule->span_ns / 20;
    t->at_edge += age == rule->span_ns;
    if (age <= rule->span_ns) {
        t->near_edge += age >= rule->span_ns - margin;
        return LINE_IN_WINDOW;
    }
    t->just_outside += age <= rule->span_ns + margin;
    return LINE_OLDER;
}

/* Returns false when the outputs do not interleave to the input. */
static bool walk(const char *input_path, window_rule *rule,
                 const char *printed_path, const char *suppressed_path,
                 window_tally *tally)
{
    exact_table table;
    table_init(&table);
    line_reader input, printed, suppressed;
    reader_open(&input, input_path);
    reader_open(&printed, printed_path);
    reader_open(&suppressed, suppressed_path);
    bool interleaved = true;

    for (uint64_t index = 0; input.length >= 0; index++) {
        line_class class = classify(rule, &table, &input, index, tally);
        bool in_printed = reader_holds(&printed, &input);
        bool in_suppressed = reader_holds(&suppressed, &input);
        if (!in_printed && !in_suppressed) {
            /* Also what a wrong answer on a line that occurs again soon
             * looks like: the walk took its twin for it earlier. */
            fprintf(stderr, PROGRAM ": input line %" PRIu64 " is in neither "
                    "output: the outputs do not interleave to the input, or "
                    "a repeated line got the wrong answer\n", index + 1);
            interleaved = false;
            break;
        }
        bool suppressed_here = in_suppressed &&
                               (!in_printed || class == LINE_IN_WINDOW);
        tally_line(tally, class, suppressed_here);
        reader_advance(suppressed_here ? &suppressed : &printed);
        reader_advance(&input);
    }
    if (interleaved && (printed.length >= 0 || suppressed.length >= 0)) {
        fprintf(stderr, PROGRAM ": an output has lines beyond the input\n");
        interleaved = false;
    }
    reader_close(&input);
    reader_close(&printed);
    reader_close(&suppressed);
    table_free(&table);
    return interleaved;
}

/* ------------------------------------------------------------------------ */
/* Verdict                                                                  */
/* ------------------------------------------------------------------------ */

/* A check that a run would pass without exercising anything fails. */
static bool exercised(const char *what, uint64_t count)
{
    if (count > 0)
        return true;
    printf("FAIL: the input exercises nothing: no %s\n", what);
    return false;
}

/* Time windows: the edge of the span and the clamping were probed. */
static bool judge_time_edges(const window_tally *t)
{
    printf("clamped times: %" PRIu64 "; in the last 5%% of the span: %" PRIu64
           "; exactly the span old: %" PRIu64 "; at most 5%% past it: %" PRIu64
           "\n", t->clamped, t->near_edge, t->at_edge, t->just_outside);
    bool ok = exercised("clamped time", t->clamped);
    ok = exercised("repeat near the edge of the span", t->near_edge) && ok;
    ok = exercised("repeat exactly the span old", t->at_edge) && ok;
    return exercised("repeat just past the span", t->just_outside) && ok;
}

static bool judge(const window_tally *t, const window_rule *rule, double fp)
{
    double n = (double)t->fresh;
    double p = rule->fp_factor * fp;
    double bound = p * n + 3.0 * sqrt(p * (1.0 - p) * n) + 1.0;
    double rate = n > 0 ? (double)t->fresh_suppressed / n : 0.0;
    bool ok = true;

    printf("lines: %" PRIu64 "\n", t->lines);
    printf("in window: %" PRIu64 ", printed (false negatives): %" PRIu64
           " (must be 0)\n", t->in_window, t->in_window_printed);
    printf("new: %" PRIu64 ", suppressed (false positives): %" PRIu64
           " (at most %.1f), rate %.6f (target %g)\n",
           t->fresh, t->fresh_suppressed, bound, rate, fp);
    printf("older than the window: %" PRIu64 ", suppressed: %" PRIu64 "\n",
           t->older, t->older_suppressed);

    if (t->in_window_printed != 0) {
        printf("FAIL: %" PRIu64 " lines repeated within the window were "
               "printed\n", t->in_window_printed);
        ok = false;
    }
    if ((double)t->fresh_suppressed > bound) {
        printf("FAIL: false positives %" PRIu64 " exceed the bound %.1f\n",
               t->fresh_suppressed, bound);
        ok = false;
    }
    /* A stream without both kinds of line would make the checks vacuous. */
    ok = exercised("line repeated within the window", t->in_window) && ok;
    ok = exercised("new line", t->fresh) && ok;
    if (rule->by_time)
        ok = judge_time_edges(t) && ok;
    return ok;
}

static bool parse_positive(const char *text, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value == 0 ||
        text[0] == '-')
        return false;
    *out = (uint64_t)value;
    return true;
}

static bool parse_fp(const char *text, double *fp)
{
    char *end = NULL;
    *fp = strtod(text, &end);
    return end != text && *end == '\0' && *fp > 0.0 && *fp < 1.0;
}

int main(int argc, char **argv)
{
    window_rule rule;
    memset(&rule, 0, sizeof rule);
    rule.fp_factor = 1.0;
    int first = 1;
    uint64_t value;
    if (argc == 8 && strcmp(argv[1], "--time") == 0) {
        /* --time SPAN_NS TIMES: the remaining arguments as below. */
        if (!parse_positive(argv[2], &value) || value > INT64_MAX) {
            fprintf(stderr, PROGRAM ": bad SPAN_NS\n");
            return 2;
        }
        rule.by_time = true;
        rule.span_ns = (int64_t)value;
        /* A TLBF's rate sits near its target at a steady rate and above it
         * for a while after the rate jumps (docs/tlbf.md). */
        rule.fp_factor = 1.25;
        reader_open(&rule.times, argv[3]);
        first = 4;
    } else if (argc == 6 && parse_positive(argv[2], &value)) {
        rule.window = value;
    } else {
        fprintf(stderr,
                "usage: " PROGRAM " INPUT WINDOW FP PRINTED SUPPRESSED\n"
                "       " PROGRAM " --time SPAN_NS TIMES INPUT FP PRINTED "
                "SUPPRESSED\n");
        return 2;
    }
    const char *input = argv[first];
    int rest = rule.by_time ? first + 1 : first + 2;
    double fp;
    if (!parse_fp(argv[rest], &fp)) {
        fprintf(stderr, PROGRAM ": bad FP\n");
        return 2;
    }
    window_tally tally;
    memset(&tally, 0, sizeof tally);
    bool interleaved = walk(input, &rule, argv[rest + 1], argv[rest + 2],
                            &tally);
    if (rule.by_time)
        reader_close(&rule.times);
    if (!interleaved)
        return 1;
    return judge(&tally, &rule, fp) ? 0 : 1;
}
