/* SPDX-License-Identifier: BSD-2-Clause */
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
 *   timed    a log of "<time> user<id> /item/<hex>" lines probing a window
 *            of time (--span-ms): the clock advances at --rate lines a
 *            second, with (--profile bursty, the default) phases of 10x
 *            bursts, drops to 1/10 and idle gaps longer than the span; 1%
 *            of the lines are stamped up to half a span early (out of
 *            order). --fresh percent (default 40) new ids, the others
 *            repeats from within the span, just inside its edge, just
 *            outside it, exactly at it, and of the last 64 lines. Times
 *            are epoch-ms or iso8601 (assorted precisions and UTC
 *            offsets); --times FILE writes the nanoseconds each line's
 *            timestamp stands for, one per line, for the oracle.
 *   gaps     probes forgetting at an exact gap (the stable filters):
 *            "user<id> <importance> <kind>" lines, kind "new" (an id never
 *            seen again), "first" (a probe) or "repeat" (the probe of
 *            exactly --gap lines before, same id and importance). A line
 *            that is not a repeat is a probe with --probes percent, else
 *            new. Each id is important with --important percent: its
 *            importance is uniform in 0.501..1.000, else 0.000..0.500
 *            (three decimals). With --probes 0 no line repeats.
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

typedef enum stream_mode {
    MODE_UNIFORM,
    MODE_CLICKS,
    MODE_WINDOW,
    MODE_TIMED,
    MODE_GAPS
} stream_mode;

typedef enum time_format { TIME_EPOCH_MS, TIME_ISO8601 } time_format;
typedef enum rate_profile { PROFILE_BURSTY, PROFILE_STEADY } rate_profile;

typedef struct generator_options {
    uint64_t lines;
    uint64_t distinct;
    uint64_t seed;
    uint64_t window;
    stream_mode mode;
    /* Mode timed. */
    time_format time_format;
    rate_profile profile;
    uint64_t span_ms;
    uint64_t rate;     /* lines per second at the normal rate */
    uint64_t start_ms; /* the first line's time */
    uint64_t fresh_percent; /* new ids, the rest repeats */
    const char *times_path;
    /* Mode gaps. */
    uint64_t gap;
    uint64_t probe_percent;
    uint64_t important_percent;
    bool verbose;
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
/* Mode timed: a timestamped log with bursts, drops and idle gaps            */
/* ------------------------------------------------------------------------ */

/* Every time below is in microseconds since 1970 (integers only, so the
 * output is the same on every machine). The clock runs forward; a line's
 * printed time is the clock, or, for a few lines, a time before it (out
 * of order), and it is cut to the precision its format prints. */

#define US_PER_MS UINT64_C(1000)
#define US_PER_SECOND UINT64_C(1000000)
#define TIMED_RECENT 64u

typedef enum rate_phase {
    PHASE_NORMAL,
    PHASE_BURST, /* 10x the rate  */
    PHASE_DROP,  /* 1/10 the rate */
    PHASE_IDLE   /* no line at all, for 1.5 to 3 spans */
} rate_phase;

/* The lines of the last while: the clock of each and its id, oldest
 * first from (count - size). */
typedef struct timed_history {
    uint64_t *clock_us;
    uint64_t *ids;
    uint64_t size;  /* a power of two */
    uint64_t count; /* lines recorded */
} timed_history;

typedef struct timed_state {
    rng r;
    uint64_t clock_us;
    uint64_t span_us;
    uint64_t mean_gap_us; /* at the normal rate, at least 1 */
    rate_phase phase;
    uint64_t phase_end_us;
    uint64_t next_fresh;
    uint64_t idle_gaps;
    timed_history history;
} timed_state;

/* Bursty: normal 45% of the phases, a burst or a drop a fifth each, an
 * idle gap 15%. A normal phase lasts 1/2 to 3 spans, a burst 1/4 to 1
 * (ten times the lines of a normal phase of the same length already), a
 * drop 1 to 3. Steady: always normal. */
static void next_phase(timed_state *s, bool bursty)
{
    uint64_t choice = bursty ? rng_below(&s->r, 20) : 0;
    s->phase = choice < 9    ? PHASE_NORMAL
               : choice < 13 ? PHASE_BURST
               : choice < 17 ? PHASE_DROP
                             : PHASE_IDLE;
    if (s->phase == PHASE_IDLE) {
        /* Longer than the span: everything before it has expired. */
        s->idle_gaps++;
        s->clock_us += rng_between(&s->r, s->span_us * 3 / 2, s->span_us * 3);
        s->phase = PHASE_NORMAL;
    }
    uint64_t span = s->span_us;
    uint64_t length = s->phase == PHASE_BURST ? rng_between(&s->r, span / 4, span)
                      : s->phase == PHASE_DROP
                          ? rng_between(&s->r, span, span * 3)
                          : rng_between(&s->r, span / 2, span * 3);
    s->phase_end_us = s->clock_us + length;
}

/* Advances the clock by one gap between lines of the current phase:
 * uniform in [0, 2 mean], so the mean is the phase's. */
static void advance_clock(timed_state *s, bool bursty)
{
    if (s->clock_us >= s->phase_end_us)
        next_phase(s, bursty);
    uint64_t mean = s->mean_gap_us;
    if (s->phase == PHASE_BURST)
        mean = mean / 10 > 0 ? mean / 10 : 1;
    else if (s->phase == PHASE_DROP)
        mean *= 10;
    s->clock_us += rng_below(&s->r, 2 * mean + 1);
}

/* The id of the latest line at or before clock `at`, or false when the
 * history does not reach that far back. */
static bool history_at(const timed_history *h, uint64_t at, uint64_t *id)
{
    uint64_t first = h->count > h->size ? h->count - h->size : 0;
    if (h->count == 0 || h->clock_us[first & (h->size - 1)] > at)
        return false;
    uint64_t lo = first, hi = h->count - 1; /* clock[lo] <= at */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (h->clock_us[mid & (h->size - 1)] <= at)
            lo = mid;
        else
            hi = mid - 1;
    }
    *id = h->ids[lo & (h->size - 1)];
    return true;
}

/* --fresh percent of the lines (default 40) are new ids; the repeats are
 * a quarter each from anywhere in the span, just inside its edge and just
 * outside it, a twelfth exactly at the edge or 1 ms past it, a sixth one
 * of the last 64 lines. Distances are on the clock, so the oracle (which
 * sees the printed, clamped times) decides what is inside. */
static uint64_t timed_id(timed_state *s, uint64_t fresh_percent)
{
    uint64_t span = s->span_us, margin = span / 20;
    if (rng_below(&s->r, 100) < fresh_percent)
        return s->next_fresh++;
    uint64_t choice = rng_below(&s->r, 12);
    uint64_t distance;
    if (choice < 3)
        distance = rng_between(&s->r, 0, span);
    else if (choice < 6)
        distance = rng_between(&s->r, span - margin, span);
    else if (choice < 9)
        distance = rng_between(&s->r, span + 1, span + margin);
    else if (choice < 10)
        distance = span + (rng_below(&s->r, 2) ? US_PER_MS : 0);
    else {
        uint64_t reach = s->history.count < TIMED_RECENT ? s->history.count
                                                         : TIMED_RECENT;
        if (reach == 0)
            return s->next_fresh++;
        uint64_t back = rng_between(&s->r, 1, reach);
        const timed_history *h = &s->history;
        return h->ids[(h->count - back) & (h->size - 1)];
    }
    uint64_t id;
    if (distance > s->clock_us ||
        !history_at(&s->history, s->clock_us - distance, &id))
        return s->next_fresh++;
    return id;
}

static void history_record(timed_history *h, uint64_t clock_us, uint64_t id)
{
    h->clock_us[h->count & (h->size - 1)] = clock_us;
    h->ids[h->count & (h->size - 1)] = id;
    h->count++;
}

/* Days since 1970-01-01 to a proleptic Gregorian date: the inverse of the
 * CLI's days-from-civil, written from the same March-based calendar (eras
 * of 400 years, 146097 days) so that the generator checks the parser
 * rather than copies it. */
static void civil_from_days(int64_t days, int64_t *year, unsigned *month,
                            unsigned *day)
{
    int64_t z = days + 719468; /* days since 0000-03-01 */
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t day_of_era = z - era * 146097;                   /* 0..146096 */
    int64_t year_of_era = (day_of_era - day_of_era / 1460 +
                           day_of_era / 36524 - day_of_era / 146096) /
                          365;                               /* 0..399 */
    int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 -
                                        year_of_era / 100); /* 0..365 */
    int64_t month_from_march = (5 * day_of_year + 2) / 153; /* 0..11 */
    *day = (unsigned)(day_of_year - (153 * month_from_march + 2) / 5 + 1);
    *month = (unsigned)(month_from_march < 10 ? month_from_march + 3
                                              : month_from_march - 9);
    *year = year_of_era + era * 400 + (*month <= 2);
}

/* Zero-padded decimal of exactly `width` digits. */
static char *put_padded(char *out, uint64_t value, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        out[i] = (char)('0' + value % 10);
        value /= 10;
    }
    return out + width;
}

typedef struct utc_offset {
    int minutes; /* east of UTC */
    const char *text;
} utc_offset;

static const utc_offset OFFSETS[] = {
    {0, "Z"},        {0, "+00:00"},    {120, "+02:00"}, {-300, "-05:00"},
    {330, "+05:30"}, {345, "+0545"},   {-210, "-03:30"}, {60, "+01"},
    {0, "z"},        {-720, "-12:00"}, {840, "+14:00"},
};

/* Writes an iso8601 time of at most microsecond precision; returns the
 * end, and in *printed_us the time it stands for (cut to its precision). */
static char *put_iso8601(char *out, rng *r, uint64_t time_us,
                         uint64_t *printed_us)
{
    /* Precision: milliseconds half the time, microseconds (6 or 9 digits)
     * most of the rest, whole seconds now and then. */
    uint64_t choice = rng_below(r, 20);
    uint64_t unit = choice < 10 ? US_PER_MS : choice < 19 ? 1 : US_PER_SECOND;
    uint64_t cut = time_us - time_us % unit;
    *printed_us = cut;
    const utc_offset *zone =
        &OFFSETS[rng_below(r, sizeof OFFSETS / sizeof OFFSETS[0])];
    int64_t local_s = (int64_t)(cut / US_PER_SECOND) + zone->minutes * 60;
    int64_t days = local_s / 86400, second_of_day = local_s % 86400;
    int64_t year;
    unsigned month, day;
    civil_from_days(days, &year, &month, &day);
    char *p = put_padded(out, (uint64_t)year, 4);
    *p++ = '-';
    p = put_padded(p, month, 2);
    *p++ = '-';
    p = put_padded(p, day, 2);
    *p++ = 'T';
    p = put_padded(p, (uint64_t)(second_of_day / 3600), 2);
    *p++ = ':';
    p = put_padded(p, (uint64_t)(second_of_day / 60 % 60), 2);
    *p++ = ':';
    p = put_padded(p, (uint64_t)(second_of_day % 60), 2);
    uint64_t fraction_us = cut % US_PER_SECOND;
    if (unit == US_PER_MS) {
        *p++ = '.';
        p = put_padded(p, fraction_us / US_PER_MS, 3);
    } else if (unit == 1) {
        *p++ = '.';
        p = put_padded(p, fraction_us, 6);
        if (rng_below(r, 2) == 0)
            p = put_padded(p, 0, 3); /* nanoseconds */
    }
    size_t zone_length = strlen(zone->text);
    memcpy(p, zone->text, zone_length);
    return p + zone_length;
}

/* Writes one timed line; returns its length. *printed_ns is the time its
 * timestamp stands for. */
static size_t format_timed_line(char *out, timed_state *s,
                                const generator_options *o, uint64_t id,
                                int64_t *printed_ns)
{
    uint64_t time_us = s->clock_us;
    /* 1% of the lines arrive late: stamped up to half a span earlier. */
    if (rng_below(&s->r, 100) == 0) {
        uint64_t late = rng_below(&s->r, s->span_us / 2 + 1);
        time_us = late < time_us ? time_us - late : 0;
    }
    char *p = out;
    uint64_t printed_us;
    if (o->time_format == TIME_ISO8601) {
        p = put_iso8601(p, &s->r, time_us, &printed_us);
    } else {
        printed_us = time_us - time_us % US_PER_MS;
        p = put_decimal(p, printed_us / US_PER_MS);
    }
    *printed_ns = (int64_t)printed_us * 1000;
    *p++ = ' ';
    return (size_t)(p - out) + format_line(p, id);
}

static bool timed_init(timed_state *s, const generator_options *o)
{
    rng_seed(&s->r, o->seed);
    s->clock_us = o->start_ms * US_PER_MS;
    s->span_us = o->span_ms * US_PER_MS;
    s->mean_gap_us = US_PER_SECOND / o->rate > 0 ? US_PER_SECOND / o->rate : 1;
    s->phase = PHASE_NORMAL;
    s->phase_end_us = s->clock_us + s->span_us;
    s->next_fresh = 0;
    s->idle_gaps = 0;
    /* Enough lines for a span and its margin at the burst rate. */
    uint64_t need = (s->span_us + s->span_us / 20) /
                        (s->mean_gap_us / 10 > 0 ? s->mean_gap_us / 10 : 1) *
                        2 + TIMED_RECENT;
    uint64_t size = 1024;
    while (size < need && size < (UINT64_C(1) << 26))
        size *= 2;
    s->history = (timed_history){calloc(size, sizeof(uint64_t)),
                                 calloc(size, sizeof(uint64_t)), size, 0};
    return s->history.clock_us != NULL && s->history.ids != NULL;
}

static int generate_timed(const generator_options *o, FILE *times)
{
    timed_state s;
    if (!timed_init(&s, o)) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        free(s.history.clock_us);
        free(s.history.ids);
        return 1;
    }
    static char buffer[1 << 16];
    size_t used = 0;
    int status = 0;
    uint64_t phase_lines[4] = {0, 0, 0, 0};
    for (uint64_t position = 0; position < o->lines && status == 0;
         position++) {
        advance_clock(&s, o->profile == PROFILE_BURSTY);
        uint64_t id = timed_id(&s, o->fresh_percent);
        history_record(&s.history, s.clock_us, id);
        phase_lines[s.phase]++;
        int64_t printed_ns;
        used += format_timed_line(buffer + used, &s, o, id, &printed_ns);
        if (times != NULL && fprintf(times, "%" PRId64 "\n", printed_ns) < 0)
            status = 1;
        if (sizeof buffer - used < 256) {
            if (fwrite(buffer, 1, used, stdout) != used)
                status = 1;
            used = 0;
        }
    }
    if (status == 0 && fwrite(buffer, 1, used, stdout) != used)
        status = 1;
    if (fflush(stdout) != 0 || (times != NULL && fflush(times) != 0))
        status = 1;
    if (status != 0)
        fprintf(stderr, PROGRAM ": write error: %s\n", strerror(errno));
    else if (o->verbose)
        fprintf(stderr, "lines normal %" PRIu64 ", burst %" PRIu64
                ", drop %" PRIu64 ", idle gaps %" PRIu64 "; clock %" PRIu64 " s\n",
                phase_lines[PHASE_NORMAL], phase_lines[PHASE_BURST],
                phase_lines[PHASE_DROP], s.idle_gaps,
                (s.clock_us - o->start_ms * US_PER_MS) / US_PER_SECOND);
    free(s.history.clock_us);
    free(s.history.ids);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Mode gaps: probes repeated exactly --gap lines later                      */
/* ------------------------------------------------------------------------ */

/* Writes "user<id> <importance> <kind>\n"; returns its length. */
static size_t format_gap_line(char *out, uint64_t id, uint32_t importance,
                              const char *kind)
{
    char *p = out;
    memcpy(p, "user", 4);
    p = put_decimal(p + 4, id);
    *p++ = ' ';
    p = put_decimal(p, importance / 1000);
    *p++ = '.';
    *p++ = (char)('0' + importance / 100 % 10);
    *p++ = (char)('0' + importance / 10 % 10);
    *p++ = (char)('0' + importance % 10);
    *p++ = ' ';
    size_t kind_length = strlen(kind);
    memcpy(p, kind, kind_length);
    p += kind_length;
    *p++ = '\n';
    return (size_t)(p - out);
}

/* An importance in thousandths: important 501..1000, else 0..500. */
static uint32_t draw_importance(rng *r, uint64_t important_percent)
{
    if (rng_below(r, 100) < important_percent)
        return (uint32_t)rng_between(r, 501, 1000);
    return (uint32_t)rng_below(r, 501);
}

static int generate_gaps(const generator_options *o)
{
    rng r;
    rng_seed(&r, o->seed);
    /* The probes of the last gap lines: position % gap holds the id and
     * importance of a probe written there, or UINT64_MAX. */
    uint64_t *ids = malloc(o->gap * sizeof *ids);
    uint32_t *importances = malloc(o->gap * sizeof *importances);
    if (ids == NULL || importances == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        free(ids);
        free(importances);
        return 1;
    }
    for (uint64_t i = 0; i < o->gap; i++)
        ids[i] = UINT64_MAX;
    static char buffer[1 << 16];
    size_t used = 0;
    int status = 0;
    uint64_t next_id = 0;
    for (uint64_t position = 0; position < o->lines && status == 0;
         position++) {
        uint64_t slot = position % o->gap;
        if (ids[slot] != UINT64_MAX) {
            used += format_gap_line(buffer + used, ids[slot],
                                    importances[slot], "repeat");
            ids[slot] = UINT64_MAX;
        } else {
            bool probe = rng_below(&r, 100) < o->probe_percent;
            uint32_t importance = draw_importance(&r, o->important_percent);
            used += format_gap_line(buffer + used, next_id, importance,
                                    probe ? "first" : "new");
            if (probe) {
                ids[slot] = next_id;
                importances[slot] = importance;
            }
            next_id++;
        }
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
    free(ids);
    free(importances);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: " PROGRAM " [--lines N] [--distinct D] [--seed S]\n"
            "                      [--mode uniform|clicks|window|timed|gaps] [--window W]\n"
            "                      [--time-format epoch-ms|iso8601] [--span-ms S]\n"
            "                      [--rate R] [--profile bursty|steady]\n"
            "                      [--start-ms T] [--times FILE] [--fresh P] [--verbose]\n"
            "                      [--gap G] [--probes P] [--important P]\n"
            "\n"
            "Writes N lines \"user<id> /item/<hex>\" to stdout (mode timed:\n"
            "\"<time> user<id> /item/<hex>\"), the same for the same options on\n"
            "every machine.\n"
            "  --lines N      lines to write (default 1000)\n"
            "  --distinct D   ids to draw from in uniform and clicks modes\n"
            "                 (default 1000)\n"
            "  --seed S       random seed (default 1)\n"
            "  --mode M       uniform (default): ids uniform over [0, D)\n"
            "                 clicks: 25%% repeats of the last 64 lines\n"
            "                 window: new ids and repeats just inside and just\n"
            "                 outside a window of W lines\n"
            "                 timed: a timestamped log probing a window of time\n"
            "                 gaps: \"user<id> <importance> <kind>\", probes\n"
            "                 repeated exactly G lines later\n"
            "  --window W     the window of mode window (default 1000)\n"
            "  --time-format F  epoch-ms (default) or iso8601 (mode timed)\n"
            "  --span-ms S    the window of time probed, ms (default 10000)\n"
            "  --rate R       lines per second at the normal rate (default 1000)\n"
            "  --profile P    bursty (default: bursts, drops, idle gaps) or steady\n"
            "  --start-ms T   the clock at the first line, ms since 1970\n"
            "                 (default 1709251200000, 2024-03-01T00:00:00Z)\n"
            "  --times FILE   write each line's time in ns to FILE, one a line\n"
            "  --fresh P      percent of new ids in mode timed (default 40)\n"
            "  --verbose      print the lines of each phase to stderr\n"
            "  --gap G        mode gaps: lines from a probe to its repeat\n"
            "                 (default 1000)\n"
            "  --probes P     mode gaps: percent of the lines (other than\n"
            "                 repeats) that are probes (default 1)\n"
            "  --important P  mode gaps: percent of important ids (default 50)\n");
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

/* Times stay within microseconds that fit in 62 bits whatever the run. */
#define MAX_TIME_MS (UINT64_C(1) << 42)

/* The options of mode timed. Returns -1 to go on, or the exit status. */
static int parse_timed_option(int option, const char *value,
                              generator_options *o)
{
    switch (option) {
    case 'f':
        if (strcmp(value, "epoch-ms") == 0)
            o->time_format = TIME_EPOCH_MS;
        else if (strcmp(value, "iso8601") == 0)
            o->time_format = TIME_ISO8601;
        else
            return usage_error("--time-format", value);
        return -1;
    case 'p':
        if (strcmp(value, "bursty") == 0)
            o->profile = PROFILE_BURSTY;
        else if (strcmp(value, "steady") == 0)
            o->profile = PROFILE_STEADY;
        else
            return usage_error("--profile", value);
        return -1;
    case 'S':
        if (!parse_u64(value, &o->span_ms) || o->span_ms < 20 ||
            o->span_ms > MAX_TIME_MS / 8)
            return usage_error("--span-ms", value);
        return -1;
    case 'r':
        if (!parse_u64(value, &o->rate) || o->rate == 0 || o->rate > 100000000)
            return usage_error("--rate", value);
        return -1;
    case 'T':
        if (!parse_u64(value, &o->start_ms) || o->start_ms > MAX_TIME_MS)
            return usage_error("--start-ms", value);
        return -1;
    case 't':
        o->times_path = value;
        return -1;
    case 'F':
        if (!parse_u64(value, &o->fresh_percent) || o->fresh_percent > 100)
            return usage_error("--fresh", value);
        return -1;
    case 'g':
        if (!parse_u64(value, &o->gap) || o->gap == 0 ||
            o->gap > (UINT64_C(1) << 32))
            return usage_error("--gap", value);
        return -1;
    case 'P':
        if (!parse_u64(value, &o->probe_percent) || o->probe_percent > 100)
            return usage_error("--probes", value);
        return -1;
    case 'I':
        if (!parse_u64(value, &o->important_percent) ||
            o->important_percent > 100)
            return usage_error("--important", value);
        return -1;
    default: /* 'v' */
        o->verbose = true;
        return -1;
    }
}

static int parse_option(int option, const char *value, generator_options *o)
{
    switch (option) {
    case 'n':
        if (!parse_u64(value, &o->lines))
            return usage_error("--lines", value);
        return -1;
    case 'd':
        if (!parse_u64(value, &o->distinct) || o->distinct == 0)
            return usage_error("--distinct", value);
        return -1;
    case 's':
        if (!parse_u64(value, &o->seed))
            return usage_error("--seed", value);
        return -1;
    case 'w':
        if (!parse_u64(value, &o->window) || o->window == 0 ||
            o->window > (UINT64_C(1) << 32))
            return usage_error("--window", value);
        return -1;
    case 'm':
        if (strcmp(value, "uniform") == 0)
            o->mode = MODE_UNIFORM;
        else if (strcmp(value, "clicks") == 0)
            o->mode = MODE_CLICKS;
        else if (strcmp(value, "window") == 0)
            o->mode = MODE_WINDOW;
        else if (strcmp(value, "timed") == 0)
            o->mode = MODE_TIMED;
        else if (strcmp(value, "gaps") == 0)
            o->mode = MODE_GAPS;
        else
            return usage_error("--mode", value);
        return -1;
    default:
        return parse_timed_option(option, value, o);
    }
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
        {"time-format", required_argument, NULL, 'f'},
        {"span-ms", required_argument, NULL, 'S'},
        {"rate", required_argument, NULL, 'r'},
        {"profile", required_argument, NULL, 'p'},
        {"start-ms", required_argument, NULL, 'T'},
        {"times", required_argument, NULL, 't'},
        {"fresh", required_argument, NULL, 'F'},
        {"verbose", no_argument, NULL, 'v'},
        {"gap", required_argument, NULL, 'g'},
        {"probes", required_argument, NULL, 'P'},
        {"important", required_argument, NULL, 'I'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (generator_options){.lines = 1000,
                             .distinct = 1000,
                             .seed = 1,
                             .window = 1000,
                             .mode = MODE_UNIFORM,
                             .time_format = TIME_EPOCH_MS,
                             .profile = PROFILE_BURSTY,
                             .span_ms = 10000,
                             .rate = 1000,
                             .start_ms = UINT64_C(1709251200000),
                             .fresh_percent = 40,
                             .times_path = NULL,
                             .gap = 1000,
                             .probe_percent = 1,
                             .important_percent = 50,
                             .verbose = false};
    int option;
    while ((option = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (option == 'h') {
            print_usage(stdout);
            return 0;
        }
        if (option == '?' || option == ':')
            return 2; /* getopt_long has printed the message */
        int status = parse_option(option, optarg, o);
        if (status >= 0)
            return status;
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
    if (options.mode == MODE_GAPS)
        return generate_gaps(&options);
    if (options.mode != MODE_TIMED)
        return generate(&options);
    FILE *times = NULL;
    if (options.times_path != NULL) {
        times = fopen(options.times_path, "w");
        if (times == NULL) {
            fprintf(stderr, PROGRAM ": %s: %s\n", options.times_path,
                    strerror(errno));
            return 1;
        }
    }
    status = generate_timed(&options, times);
    if (times != NULL && fclose(times) != 0 && status == 0) {
        fprintf(stderr, PROGRAM ": %s: %s\n", options.times_path,
                strerror(errno));
        status = 1;
    }
    return status;
}
