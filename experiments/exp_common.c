/* SPDX-License-Identifier: BSD-2-Clause */
/* exp_common.c: see exp_common.h. */
#include "exp_common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Command line and output files                                            */
/* ------------------------------------------------------------------------ */

void exp_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("experiment error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

void exp_require(ebb_status st, const char *what)
{
    if (st != EBB_OK)
        exp_die("%s: %s", what, ebb_strerror(st));
}

static FILE *open_in(const char *dir, const char *name, const char *suffix)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= sizeof path)
        exp_die("path too long: %s/%s%s", dir, name, suffix);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        exp_die("cannot write %s: %s", path, strerror(errno));
    return f;
}

void exp_begin(exp_context *ctx, const char *name, int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s <csv-dir> <work-dir> <seed>\n",
                argc > 0 ? argv[0] : "exp");
        exit(2);
    }
    char *end = NULL;
    errno = 0;
    unsigned long long seed = strtoull(argv[3], &end, 10);
    if (errno != 0 || end == argv[3] || *end != '\0')
        exp_die("seed must be a decimal integer, not '%s'", argv[3]);
    memset(ctx, 0, sizeof *ctx);
    ctx->name = name;
    ctx->csv_dir = argv[1];
    ctx->work_dir = argv[2];
    ctx->seed = (uint64_t)seed;
    ctx->md = open_in(ctx->work_dir, name, ".md");
    ctx->checks = open_in(ctx->work_dir, name, ".checks");
}

FILE *exp_open_fragment(const exp_context *ctx, const char *name)
{
    return open_in(ctx->work_dir, name, ".md");
}

FILE *exp_open_csv(const exp_context *ctx, const char *file)
{
    return open_in(ctx->csv_dir, file, "");
}

void exp_close(FILE *file, const char *what)
{
    bool failed = ferror(file) != 0;
    if (fclose(file) != 0 || failed)
        exp_die("writing %s failed", what);
}

int exp_end(exp_context *ctx)
{
    exp_close(ctx->md, "the Markdown fragment");
    exp_close(ctx->checks, "the checks file");
    printf("%s: %u checks passed, %u fatal failures, %u statistical "
           "failures\n",
           ctx->name, ctx->passed, ctx->failed_fatal, ctx->failed_stat);
    return ctx->failed_fatal ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

static const char *kind_name(exp_check_kind kind)
{
    switch (kind) {
    case EXP_CHECK_PAPER:
        return "paper";
    case EXP_CHECK_DISCREPANCY:
        return "discrepancy";
    case EXP_CHECK_GUARANTEE:
        return "guarantee";
    case EXP_CHECK_STAT:
        return "stat";
    }
    return "?";
}

bool exp_check(exp_context *ctx, exp_check_kind kind, bool ok,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(ctx->checks, "%s %s %s: ", ok ? "PASS" : "FAIL", kind_name(kind),
            ctx->name);
    vfprintf(ctx->checks, fmt, ap);
    fputc('\n', ctx->checks);
    va_end(ap);
    if (ok)
        ctx->passed++;
    else if (kind == EXP_CHECK_STAT)
        ctx->failed_stat++;
    else
        ctx->failed_fatal++;
    return ok;
}

bool exp_agrees(double ours, double printed, int decimals)
{
    /* One unit of the last digit, plus a hair for binary representation. */
    double unit = pow(10.0, -decimals);
    return fabs(ours - printed) < unit * (1.0 + 1e-9);
}

/* ------------------------------------------------------------------------ */
/* Randomness and keys                                                      */
/* ------------------------------------------------------------------------ */

uint64_t exp_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t exp_derive_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t state = seed;
    uint64_t x = exp_splitmix64(&state);
    state = x ^ a;
    x = exp_splitmix64(&state);
    state = x ^ b;
    x = exp_splitmix64(&state);
    state = x ^ c;
    return exp_splitmix64(&state);
}

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

void exp_rng_seed(exp_rng *rng, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = exp_splitmix64(&state);
}

uint64_t exp_rng_next(exp_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5u, 7) * 9u;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double exp_rng_unit(exp_rng *rng)
{
    return (double)(exp_rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t exp_rng_below(exp_rng *rng, uint64_t n)
{
    /* Rejection keeps it exactly uniform; n is tiny next to 2^64. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = exp_rng_next(rng);
    while (x >= limit);
    return x % n;
}

uint64_t exp_stream(exp_stream_tag tag, uint32_t experiment, uint32_t unit)
{
    return ((uint64_t)tag << 56) | ((uint64_t)(experiment & 0xffffffu) << 32) |
           unit;
}

static void key_bytes(uint64_t stream, uint64_t index, unsigned char out[16])
{
    /* Little-endian whatever the machine: the keys, hence the results, are
     * the same everywhere. */
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(stream >> (8 * i));
        out[8 + i] = (unsigned char)(index >> (8 * i));
    }
}

ebb_hash128 exp_key_hash(const ebb_apbf *filter, uint64_t stream,
                         uint64_t index)
{
    unsigned char bytes[16];
    key_bytes(stream, index, bytes);
    return ebb_apbf_hash(filter, bytes, sizeof bytes);
}

ebb_hash128 exp_key_hash_seeded(uint64_t seed, uint64_t stream,
                                uint64_t index)
{
    unsigned char bytes[16];
    key_bytes(stream, index, bytes);
    return ebb_hash(bytes, sizeof bytes, seed);
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

double exp_binomial_sd(uint64_t trials, double p)
{
    return sqrt(p * (1.0 - p) / (double)trials);
}

double exp_binomial_z(uint64_t hits, uint64_t trials, double p)
{
    double expected = (double)trials * p;
    double sd = sqrt((double)trials * p * (1.0 - p));
    return sd > 0.0 ? ((double)hits - expected) / sd : NAN;
}

double exp_relative_error(double measured, double predicted)
{
    return fabs(measured - predicted) / predicted;
}

/* ------------------------------------------------------------------------ */
/* APBF helpers                                                             */
/* ------------------------------------------------------------------------ */

ebb_apbf *exp_create(const ebb_apbf_params *params, uint64_t seed)
{
    ebb_apbf *filter = NULL;
    exp_require(ebb_apbf_create(params, seed, &filter), "ebb_apbf_create");
    return filter;
}

uint64_t exp_fill_to_worst_moment(ebb_apbf *filter, uint64_t stream)
{
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    const ebb_apbf_params *p = &stats.params;
    uint64_t total = (uint64_t)(p->k + p->l + 3) * p->generation;
    for (uint64_t i = 0; i < total; i++)
        ebb_apbf_add_hash(filter, exp_key_hash(filter, stream, i));
    ebb_apbf_get_stats(filter, &stats);
    if (stats.in_generation != stats.params.generation ||
        stats.generations < (uint64_t)stats.params.k + stats.params.l + 2)
        exp_die("filter not at its worst moment: %" PRIu64 " of %" PRIu64
                " in generation, %" PRIu64 " shifts",
                stats.in_generation, stats.params.generation,
                stats.generations);
    return total;
}

/* The items of the last l generations: the window at the worst moment. */
static void query_window(const ebb_apbf *filter, uint64_t stream,
                         uint64_t inserted, uint64_t window, exp_worst *out)
{
    for (uint64_t i = inserted - window; i < inserted; i++) {
        uint32_t reads = 0;
        bool found = ebb_apbf_contains_counted(
            filter, exp_key_hash(filter, stream, i), &reads);
        out->window_items++;
        out->window_reads += reads;
        out->window_missed += !found;
    }
}

static void probe_fresh(const ebb_apbf *filter, uint64_t stream,
                        uint64_t probes, exp_worst *out)
{
    for (uint64_t i = 0; i < probes; i++) {
        uint32_t reads = 0;
        bool found = ebb_apbf_contains_counted(
            filter, exp_key_hash(filter, stream, i), &reads);
        if (found) {
            out->hits++;
            out->fp_reads += reads;
        } else {
            out->false_reads += reads;
        }
    }
    out->probes += probes;
}

void exp_measure_worst(const ebb_apbf_params *params, unsigned filters,
                       uint64_t probes, uint64_t seed, uint32_t experiment,
                       uint32_t row, exp_worst *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned f = 0; f < filters; f++) {
        uint32_t unit = row * 256u + f;
        ebb_apbf *filter =
            exp_create(params, exp_derive_seed(seed, experiment, row, f));
        uint64_t inserted = exp_fill_to_worst_moment(
            filter, exp_stream(EXP_STREAM_INSERT, experiment, unit));
        query_window(filter, exp_stream(EXP_STREAM_INSERT, experiment, unit),
                     inserted, params->window, out);
        uint64_t share = probes / filters + (f < probes % filters);
        probe_fresh(filter, exp_stream(EXP_STREAM_PROBE, experiment, unit),
                    share, out);
        ebb_apbf_destroy(filter);
    }
}

/* ------------------------------------------------------------------------ */
/* Generation tracker                                                       */
/* ------------------------------------------------------------------------ */

static void *checked_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL)
        exp_die("out of memory");
    return p;
}

void exp_tracker_init(exp_tracker *t, const ebb_apbf_params *params)
{
    memset(t, 0, sizeof *t);
    t->k = params->k;
    t->l = params->l;
    t->slices = params->k + params->l;
    t->g = params->generation;
    t->m = params->slice_bits;
    t->ids = checked_calloc((size_t)t->slices * t->g, sizeof *t->ids);
    t->count = checked_calloc(t->slices, sizeof *t->count);
    t->scratch = checked_calloc((size_t)t->k * t->g, sizeof *t->scratch);
}

void exp_tracker_free(exp_tracker *t)
{
    free(t->ids);
    free(t->count);
    free(t->scratch);
    memset(t, 0, sizeof *t);
}

void exp_tracker_add(exp_tracker *t, uint64_t id)
{
    if (t->in_generation == t->g) {
        t->generations++;
        t->in_generation = 0;
        t->count[t->generations % t->slices] = 0;
    }
    uint64_t slot = t->generations % t->slices;
    t->ids[slot * t->g + t->count[slot]] = id;
    t->count[slot]++;
    t->in_generation++;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t exp_count_distinct(uint64_t *values, uint64_t n)
{
    if (n == 0)
        return 0;
    qsort(values, (size_t)n, sizeof *values, compare_u64);
    uint64_t distinct = 1;
    for (uint64_t i = 1; i < n; i++)
        distinct += values[i] != values[i - 1];
    return distinct;
}

/* Distinct keys in logical slice i: generations c - i .. c - i + k - 1
 * that exist (0 .. c). */
static uint64_t slice_distinct(exp_tracker *t, uint32_t i)
{
    int64_t c = (int64_t)t->generations;
    int64_t first = c - (int64_t)i, last = first + (int64_t)t->k - 1;
    if (first < 0)
        first = 0;
    if (last > c)
        last = c;
    uint64_t n = 0;
    for (int64_t gen = first; gen <= last; gen++) {
        uint64_t slot = (uint64_t)gen % t->slices;
        memcpy(t->scratch + n, t->ids + slot * t->g,
               (size_t)t->count[slot] * sizeof *t->scratch);
        n += t->count[slot];
    }
    return exp_count_distinct(t->scratch, n);
}

double exp_tracker_model_fp(exp_tracker *t)
{
    double ratios[EXP_MAX_SLICES];
    double log_keep = log1p(-1.0 / (double)t->m);
    for (uint32_t i = 0; i < t->slices; i++)
        ratios[i] = -expm1((double)slice_distinct(t, i) * log_keep);
    return ebb_apbf_fp_ratios(t->k, t->l, ratios);
}

void exp_tracker_verify(const exp_tracker *t, const ebb_apbf *filter)
{
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    if (stats.generations != t->generations ||
        stats.in_generation != t->in_generation)
        exp_die("tracker out of step with the filter: %" PRIu64 "/%" PRIu64
                " shifts, %" PRIu64 "/%" PRIu64 " in generation",
                t->generations, stats.generations, t->in_generation,
                stats.in_generation);
}

double exp_worst_rate(const exp_worst *w)
{
    return (double)w->hits / (double)w->probes;
}

double exp_worst_window_reads(const exp_worst *w)
{
    return (double)w->window_reads / (double)w->window_items;
}

double exp_worst_fp_reads(const exp_worst *w)
{
    return w->hits ? (double)w->fp_reads / (double)w->hits : NAN;
}

double exp_worst_false_reads(const exp_worst *w)
{
    return (double)w->false_reads / (double)(w->probes - w->hits);
}

uint64_t exp_probes_for(double fp, double target_hits, double least,
                        double most)
{
    double wanted = ceil(target_hits / fp);
    if (wanted < least)
        wanted = least;
    if (wanted > most)
        wanted = most;
    return (uint64_t)wanted;
}

bool exp_reads_close(double measured, double predicted)
{
    return exp_relative_error(measured, predicted) <= 0.05;
}

bool exp_worst_reads_close(const exp_worst *w, const ebb_apbf_accesses *predicted)
{
    return exp_reads_close(exp_worst_window_reads(w), predicted->window_item) &&
           exp_reads_close(exp_worst_fp_reads(w), predicted->false_positive) &&
           exp_reads_close(exp_worst_false_reads(w), predicted->false_query);
}

const char *exp_mark(bool ok)
{
    return ok ? "yes" : "**no**";
}

void exp_md_reads_cells(FILE *md, const double paper[3],
                        const ebb_apbf_accesses *model,
                        const ebb_apbf_accesses *shape, const exp_worst *w)
{
    fprintf(md,
            " %.2f / %.3f / %.3f / %.3f | %.2f / %.3f / %.3f / %.3f | "
            "%.2f / %.3f / %.3f / %.3f | %s |\n",
            paper[0], model->window_item, shape->window_item,
            exp_worst_window_reads(w), paper[1], model->false_positive,
            shape->false_positive, exp_worst_fp_reads(w), paper[2],
            model->false_query, shape->false_query, exp_worst_false_reads(w),
            exp_mark(exp_worst_reads_close(w, shape)));
}

const exp_apbf_table2_row EXP_APBF_TABLE2[EXP_APBF_TABLE2_ROWS] = {
    {0.1, 4, 3, 0.100586, 0.36, 4.71, 4.38, 2.16, 0.58},
    {0.1, 5, 7, 0.101603, 0.38, 6.17, 5.76, 3.42, 0.28},
    {0.1, 6, 14, 0.098623, 0.39, 8.04, 7.58, 5.42, 0.14},
    {0.1, 7, 28, 0.099033, 0.38, 10.73, 10.25, 9.10, 0.07},
    {0.1, 8, 56, 0.100234, 0.36, 14.87, 14.39, 15.60, 0.04},
    {0.01, 7, 5, 0.011232, 0.39, 7.81, 7.40, 2.02, 0.40},
    {0.01, 8, 8, 0.010244, 0.41, 8.88, 8.62, 3.09, 0.25},
    {0.01, 9, 14, 0.010212, 0.45, 10.50, 9.89, 3.79, 0.14},
    {0.01, 10, 25, 0.010076, 0.47, 12.46, 11.80, 5.85, 0.08},
    {0.01, 11, 46, 0.009948, 0.49, 15.24, 14.56, 9.55, 0.04},
    {0.001, 10, 7, 0.001211, 0.40, 10.86, 10.42, 1.85, 0.28},
    {0.001, 11, 9, 0.000918, 0.41, 11.89, 11.52, 2.15, 0.22},
    {0.001, 12, 14, 0.000981, 0.45, 13.11, 12.75, 3.21, 0.14},
    {0.001, 13, 23, 0.000928, 0.50, 14.74, 14.06, 4.20, 0.09},
    {0.001, 14, 40, 0.000988, 0.53, 16.85, 16.16, 6.75, 0.05},
    {0.0001, 14, 11, 0.000099, 0.42, 14.91, 14.51, 1.93, 0.18},
    {0.0001, 15, 15, 0.000100, 0.44, 15.93, 15.69, 3.08, 0.13},
    {0.0001, 16, 22, 0.000097, 0.48, 17.41, 16.84, 3.36, 0.09},
    {0.0001, 17, 36, 0.000099, 0.53, 19.09, 18.46, 5.19, 0.06},
    {0.0001, 18, 63, 0.000099, 0.57, 21.56, 20.79, 7.68, 0.03},
    {0.00001, 17, 13, 0.000011, 0.42, 17.92, 17.51, 1.81, 0.15},
    {0.00001, 18, 16, 0.000009, 0.44, 18.93, 18.62, 2.20, 0.12},
    {0.00001, 19, 22, 0.000010, 0.56, 20.15, 19.80, 3.16, 0.09},
    {0.00001, 20, 33, 0.000010, 0.62, 21.70, 20.94, 3.68, 0.06},
    {0.00001, 21, 54, 0.000010, 0.68, 23.61, 22.83, 5.63, 0.04},
};
