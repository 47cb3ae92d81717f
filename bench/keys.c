/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * keys.c: keys, query sets, the clock and small statistics for the bench.
 *
 * Keys are 16 bytes from splitmix64 with a fixed seed. Key i is the pair
 * of outputs 2i+1 and 2i+2 of the keyed stream, computed directly from i,
 * so any key can be regenerated and ranges of indices never share a key:
 * the first half is splitmix64's bijective mix of a state unique to i (for
 * i < 2^63). Keys are generated outside every timed region.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_KEY_SEED UINT64_C(0x6562622d62656e63)     /* "ebb-benc" */
#define BENCH_SHUFFLE_SEED UINT64_C(0x53485546464c4521) /* "SHUFFLE!" */
#define SPLITMIX_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

bench_key bench_key_at(uint64_t index)
{
    bench_key key;
    key.half[0] = splitmix64_mix(BENCH_KEY_SEED + (2 * index + 1) * SPLITMIX_GAMMA);
    key.half[1] = splitmix64_mix(BENCH_KEY_SEED + (2 * index + 2) * SPLITMIX_GAMMA);
    return key;
}

void bench_keys_fill(bench_key *keys, uint64_t first_index, size_t count)
{
    for (size_t i = 0; i < count; i++)
        keys[i] = bench_key_at(first_index + i);
}

void *bench_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
        exit(EXIT_FAILURE);
    }
    return p;
}

void bench_key_source_init(bench_key_source *source, size_t capacity)
{
    source->keys = bench_xmalloc(capacity * sizeof(bench_key));
    source->capacity = capacity;
    source->first = 0;
    source->count = 0;
}

void bench_key_source_free(bench_key_source *source)
{
    free(source->keys);
    source->keys = NULL;
}

const bench_key *bench_key_source_range(bench_key_source *source,
                                        uint64_t first, size_t count)
{
    if (first >= source->first && first + count <= source->first + source->count)
        return source->keys + (first - source->first);
    source->first = first;
    source->count = source->capacity;
    bench_keys_fill(source->keys, first, source->count);
    return source->keys;
}

/* Uniform in [0, bound); the modulo bias (< bound / 2^64) does not matter
 * for a shuffle, which is not timed. */
static uint64_t random_below(uint64_t *state, uint64_t bound)
{
    *state += SPLITMIX_GAMMA;
    return splitmix64_mix(*state) % bound;
}

static void shuffle_queries(bench_queries *queries)
{
    uint64_t state = BENCH_SHUFFLE_SEED;
    for (size_t i = queries->count - 1; i > 0; i--) {
        size_t j = (size_t)random_below(&state, (uint64_t)i + 1);
        bench_key key = queries->keys[i];
        unsigned char flag = queries->is_present[i];
        queries->keys[i] = queries->keys[j];
        queries->is_present[i] = queries->is_present[j];
        queries->keys[j] = key;
        queries->is_present[j] = flag;
    }
}

void bench_queries_build(bench_queries *queries, uint64_t present_first,
                         uint64_t present_span, size_t count)
{
    size_t present = count / 2;
    queries->keys = bench_xmalloc(count * sizeof(bench_key));
    queries->is_present = bench_xmalloc(count);
    queries->count = count;
    queries->absent = count - present;
    for (size_t i = 0; i < present; i++) {
        /* i * span < 2^63 for every window this bench accepts */
        uint64_t offset = (uint64_t)i * present_span / present;
        queries->keys[i] = bench_key_at(present_first + offset);
        queries->is_present[i] = 1;
    }
    for (size_t i = present; i < count; i++) {
        queries->keys[i] = bench_key_at(BENCH_ABSENT_BASE + (uint64_t)(i - present));
        queries->is_present[i] = 0;
    }
    shuffle_queries(queries);
}

void bench_queries_free(bench_queries *queries)
{
    free(queries->keys);
    free(queries->is_present);
    queries->keys = NULL;
    queries->is_present = NULL;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, unsigned count)
{
    qsort(values, count, sizeof values[0], compare_doubles);
    if (count % 2 == 1)
        return values[count / 2];
    return 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

double bench_fp_bound(double promise, double factor, size_t absent)
{
    return factor * promise +
           BENCH_FP_SIGMAS * sqrt(promise * (1.0 - promise) / (double)absent);
}

/* Busy and total jiffies summed over all CPUs (the "cpu" line). */
static int read_cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 5)
        return -1;
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    *busy = *total - v[3] - v[4]; /* idle and iowait */
    return 0;
}

double bench_system_busy(unsigned interval_ms)
{
    unsigned long long busy0, total0, busy1, total1;
    if (read_cpu_jiffies(&busy0, &total0) != 0)
        return -1.0;
    struct timespec pause = {(time_t)(interval_ms / 1000),
                             (long)(interval_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    if (read_cpu_jiffies(&busy1, &total1) != 0 || total1 <= total0)
        return -1.0;
    return (double)(busy1 - busy0) / (double)(total1 - total0);
}

void bench_cpu_model(char *out, size_t size)
{
    char line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(out, size, "unknown");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, size, "%s", colon);
            break;
        }
    }
    fclose(f);
}
