/*
 * gen_stream.c: ebb-gen-stream, a deterministic generator of line streams
 * for the `make run` sample and the cli tests.
 *
 * The same options and seed give the same bytes on every machine (the
 * generator is xoshiro256** seeded through splitmix64, and lines are
 * formatted without locale), so tests do not depend on awk's RNG.
 *
 * Every line names one item id: "user<id> /item/<6 hex digits>\n". Distinct
 * ids give distinct lines. Modes choose the ids:
 *
 *   uniform  each line an id drawn uniformly from [0, distinct)
 *   clicks   a click stream: 25% of lines repeat one of the previous 64
 *            lines (double clicks, reloads), the others are uniform over
 *            [0, distinct)
 *   window   probes a sliding window of W lines: 40% never-seen ids, 20%
 *            repeats of a line 1..W back, 20% of a line just inside the
 *            window (W - W/20 .. W back), 20% just outside it
 *            (W + 1 .. W + W/20 + 1 back); a repeat that would reach before
 *            the first line is a new id instead
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "ebb-gen-stream"
#define CLICKS_RECENT 64u

typedef enum stream_mode { MODE_UNIFORM, MODE_CLICKS, MODE_WINDOW } stream_mode;

typedef struct generator_options {
    uint64_t lines;
    uint64_t distinct;
    uint64_t seed;
    uint64_t window;
    stream_mode mode;
} generator_options;

/* ------------------------------------------------------------------------ */
/* Random numbers                                                           */
/* ------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rotate_left(uint64_t x, int bits)
{
    return (x << bits) | (x >> (64 - bits));
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64_next(&seed);
}

/* xoshiro256** (Blackman and Vigna). */
static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

/* Uniform in [0, bound) by 128-bit multiply-high (bias below 2^-64 * bound,
 * irrelevant here and identical on every platform). */
static uint64_t rng_below(rng *r, uint64_t bound)
{
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)rng_next(r) * bound) >> 64);
}

/* Uniform in [low, high]. */
static uint64_t rng_between(rng *r, uint64_t low, uint64_t high)
{
    return low + rng_below(r, high - low + 1);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

/* Appends the decimal digits of value at out; returns the end. */
static char *put_decimal(char *out, uint64_t value)
{
    char digits[20];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0)
        *out++ = digits[--count];
    return out;
}

/* Writes the line of item id into out (at least 48 bytes); returns its
 * length. The path is a scramble of the id so lines do not look sorted. */
static size_t format_line(char *out, uint64_t id)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t scramble = id;
    uint32_t path = (uint32_t)(splitmix64_next(&scramble) & 0xffffffu);
    char *p = out;
    memcpy(p, "user", 4);
    p = put_decimal(p + 4, id);
    memcpy(p, " /item/", 7);
    p += 7;
    for (int shift = 20; shift >= 0; shift -= 4)
        *p++ = hex[(path >> shift) & 0xfu];
    *p++ = '\n';
    return (size_t)(p - out);
}

/* ------------------------------------------------------------------------ */
/* Modes                                                                    */
/* ------------------------------------------------------------------------ */

/* The last `size` ids, so that a mode can repeat a line d lines back. */
typedef struct id_history {
    uint64_t *ids;
    uint64_t size;
} id_history;

static uint64_t history_back(const id_history *h, uint64_t position,
                             uint64_t distance)
{
    return h->ids[(position - distance) % h->size];
}

static uint64_t clicks_next(rng *r, const generator_options *o,
                            const id_history *h, uint64_t position)
{
    bool repeat = rng_below(r, 4) == 0;
    if (repeat && position > 0) {
        uint64_t reach = position < CLICKS_RECENT ? position : CLICKS_RECENT;
        return history_back(h, position, rng_between(r, 1, reach));
    }
    return rng_below(r, o->distinct);
}

static uint64_t window_next(rng *r, const generator_options *o,
                            const id_history *h, uint64_t position,
                            uint64_t *next_fresh)
{
    uint64_t w = o->window;
    uint64_t margin = w / 20;
    uint64_t choice = rng_below(r, 10);
    uint64_t distance = 0;
    if (choice >= 4 && choice < 6)
        distance = rng_between(r, 1, w);
    else if (choice >= 6 && choice < 8)
        distance = rng_between(r, w - margin, w);
    else if (choice >= 8)
        distance = rng_between(r, w + 1, w + margin + 1);
    if (distance == 0 || distance > position)
        return (*next_fresh)++;
    return history_back(h, position, distance);
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: " PROGRAM " [--lines N] [--distinct D] [--seed S]\n"
            "                      [--mode uniform|clicks|window] [--window W]\n"
            "\n"
            "Writes N lines \"user<id> /item/<hex>\" to stdout, the same for\n"
            "the same options on every machine.\n"
            "  --lines N      lines to write (default 1000)\n"
            "  --distinct D   ids to draw from in uniform and clicks modes\n"
            "                 (default 1000)\n"
            "  --seed S       random seed (default 1)\n"
            "  --mode M       uniform (default): ids uniform over [0, D)\n"
            "                 clicks: 25%% repeats of the last 64 lines\n"
            "                 window: new ids and repeats just inside and just\n"
            "                 outside a window of W lines\n"
            "  --window W     the window of mode window (default 1000)\n");
}

static bool parse_u64(const char *text, uint64_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = (uint64_t)value;
    return true;
}

static int usage_error(const char *what, const char *value)
{
    fprintf(stderr, PROGRAM ": invalid %s '%s'\n", what, value);
    return 2;
}

/* Returns -1 to go on, otherwise the exit status. */
static int parse_command_line(int argc, char **argv, generator_options *o)
{
    static const struct option options[] = {
        {"lines", required_argument, NULL, 'n'},
        {"distinct", required_argument, NULL, 'd'},
        {"seed", required_argument, NULL, 's'},
        {"mode", required_argument, NULL, 'm'},
        {"window", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (generator_options){1000, 1000, 1, 1000, MODE_UNIFORM};
    int option;
    while ((option = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (option) {
        case 'n':
            if (!parse_u64(optarg, &o->lines))
                return usage_error("--lines", optarg);
            break;
        case 'd':
            if (!parse_u64(optarg, &o->distinct) || o->distinct == 0)
                return usage_error("--distinct", optarg);
            break;
        case 's':
            if (!parse_u64(optarg, &o->seed))
                return usage_error("--seed", optarg);
            break;
        case 'w':
            if (!parse_u64(optarg, &o->window) || o->window == 0 ||
                o->window > (UINT64_C(1) << 32))
                return usage_error("--window", optarg);
            break;
        case 'm':
            if (strcmp(optarg, "uniform") == 0)
                o->mode = MODE_UNIFORM;
            else if (strcmp(optarg, "clicks") == 0)
                o->mode = MODE_CLICKS;
            else if (strcmp(optarg, "window") == 0)
                o->mode = MODE_WINDOW;
            else
                return usage_error("--mode", optarg);
            break;
        case 'h':
            print_usage(stdout);
            return 0;
        default:
            return 2; /* getopt_long has printed the message */
        }
    }
    if (optind < argc)
        return usage_error("argument", argv[optind]);
    return -1;
}

static int generate(const generator_options *o)
{
    rng r;
    rng_seed(&r, o->seed);
    id_history history = {NULL, 1};
    if (o->mode == MODE_CLICKS)
        history.size = CLICKS_RECENT;
    else if (o->mode == MODE_WINDOW)
        history.size = o->window + o->window / 20 + 1;
    history.ids = calloc(history.size, sizeof *history.ids);
    if (history.ids == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        return 1;
    }
    uint64_t next_fresh = 0;

    static char buffer[1 << 16];
    size_t used = 0;
    int status = 0;
    for (uint64_t position = 0; position < o->lines && status == 0;
         position++) {
        uint64_t id;
        if (o->mode == MODE_UNIFORM)
            id = rng_below(&r, o->distinct);
        else if (o->mode == MODE_CLICKS)
            id = clicks_next(&r, o, &history, position);
        else
            id = window_next(&r, o, &history, position, &next_fresh);
        history.ids[position % history.size] = id;

        used += format_line(buffer + used, id);
        if (sizeof buffer - used < 64) {
            if (fwrite(buffer, 1, used, stdout) != used)
                status = 1;
            used = 0;
        }
    }
    if (status == 0 && fwrite(buffer, 1, used, stdout) != used)
        status = 1;
    if (fflush(stdout) != 0)
        status = 1;
    if (status != 0)
        fprintf(stderr, PROGRAM ": write error: %s\n", strerror(errno));
    free(history.ids);
    return status;
}

int main(int argc, char **argv)
{
    generator_options options;
    int status = parse_command_line(argc, argv, &options);
    if (status >= 0)
        return status;
    return generate(&options);
}
