/*
 * ebb-bench: single-thread throughput of the Age-Partitioned Bloom Filter
 * beside Debian's libbloom (a classic Bloom filter), in the same process, on
 * the same keys.
 *
 * Why this shape
 * --------------
 * A sliding-window filter is only worth its bits if it is not slower than the
 * plain filter people already use, so every APBF number is printed next to
 * libbloom's and as a ratio. Both libraries hash the key bytes themselves
 * (libbloom: MurmurHash2, libebb: XXH3-128), so the primary numbers go through
 * ebb_apbf_add / ebb_apbf_contains on the raw 16-byte keys, as a user calls
 * them.
 *
 * Keys are 16 bytes derived from splitmix64 with a fixed seed. Key i is a
 * pure function of i, so any key can be regenerated and key ranges never
 * collide: the first half of key i is splitmix64's bijective mix of a state
 * that is unique to i. Keys are generated into an array outside the timed
 * region (in chunks when 2w keys would not fit the memory budget).
 *
 *   indices [0, w)      APBF only: fills the window once so the timed run
 *                       includes w insertions of steady state with shifts
 *   indices [w, 2w)     inserted by APBF (second half) and by libbloom (all)
 *   indices [2w, ...)   never inserted: the absent queries
 *
 * Queries: half of them are present keys spread over [w, 2w) (the last w
 * insertions of both filters), half are absent keys, shuffled together with a
 * fixed seed. The same query array is used for every filter.
 *
 * Each measurement is repeated and the median reported. The bench never fails
 * on a missed speed target (it is informative); it does fail on a false
 * negative or a false-positive rate above its bound, since those are bugs.
 */
#define _POSIX_C_SOURCE 200809L

#include <bloom.h>
#include <ebb/ebb.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_KEY_SEED UINT64_C(0x6562622d62656e63)   /* "ebb-benc" */
#define BENCH_SHUFFLE_SEED UINT64_C(0x53485546464c4521) /* "SHUFFLE!" */
#define BENCH_FILTER_SEED UINT64_C(42)
#define BENCH_FP 0.01
#define BENCH_DEFAULT_RUNS 3
/* At w = 1e8 one insert pass of 2w keys into filters far beyond the caches
 * takes tens of seconds, so by default it runs once to keep the whole bench
 * within ~3 minutes. */
#define BENCH_LARGE_RUNS 1
#define LARGE_WINDOW UINT64_C(100000000)
#define BENCH_MAX_RUNS 15
/* Keys generated at once for the insert phase: 64 MiB, larger than the L3
 * cache, so streaming them behaves like reading a big pre-built array. */
#define BENCH_CHUNK_KEYS ((size_t)1 << 22)
/* Cap on the contains queries: 1 Mi queries (16 MiB of keys) give a false-
 * positive estimate with a standard deviation of 1.4e-4 at 1%. */
#define BENCH_MAX_QUERIES ((size_t)1 << 20)
/* Bounds on the measured false-positive rate are the promise plus this many
 * binomial standard deviations. */
#define BENCH_FP_SIGMAS 5.0
/* The peer is not ours to hold to its formula; see libbloom_contender. */
#define LIBBLOOM_FP_FACTOR 1.25

/* The targets, checked at w = n = 1e6. */
#define TARGET_WINDOW UINT64_C(1000000)
#define TARGET_ADD_RATIO 1.5
#define TARGET_CONTAINS_RATIO 1.0

typedef struct bench_key {
    uint64_t half[2];
} bench_key;

/* ------------------------------------------------------------------------ */
/* Keys and random numbers                                                  */
/* ------------------------------------------------------------------------ */

#define SPLITMIX_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t splitmix64_next(uint64_t *state)
{
    *state += SPLITMIX_GAMMA;
    return splitmix64_mix(*state);
}

/* Key i is the (2i+1)-th and (2i+2)-th outputs of the keyed splitmix64
 * stream, computed directly from i. */
static bench_key key_at(uint64_t index)
{
    bench_key key;
    key.half[0] = splitmix64_mix(BENCH_KEY_SEED + (2 * index + 1) * SPLITMIX_GAMMA);
    key.half[1] = splitmix64_mix(BENCH_KEY_SEED + (2 * index + 2) * SPLITMIX_GAMMA);
    return key;
}

static void fill_keys(bench_key *keys, uint64_t first_index, size_t count)
{
    for (size_t i = 0; i < count; i++)
        keys[i] = key_at(first_index + i);
}

/* Uniform in [0, bound). The modulo bias (< bound / 2^64) is irrelevant for
 * a shuffle, and this runs outside every timed region. */
static uint64_t random_below(uint64_t *state, uint64_t bound)
{
    return splitmix64_next(state) % bound;
}

/* ------------------------------------------------------------------------ */
/* Clock, allocation, statistics                                            */
/* ------------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "ebb-bench: out of memory (%zu bytes)\n", bytes);
        exit(EXIT_FAILURE);
    }
    return p;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of values[0..count-1]; sorts the array in place. */
static double median(double *values, unsigned count)
{
    qsort(values, count, sizeof values[0], compare_doubles);
    if (count % 2 == 1)
        return values[count / 2];
    return 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

/* Upper bound on the false-positive rate measured over `trials` absent
 * queries when the true rate is at most `promise`. Sampling noise is
 * added to factor * promise. */
static double fp_upper_bound(double promise, double factor, size_t trials)
{
    return factor * promise + BENCH_FP_SIGMAS * sqrt(promise * (1.0 - promise) / (double)trials);
}

/* ------------------------------------------------------------------------ */
/* Key supply for the insert phase                                          */
/* ------------------------------------------------------------------------ */

/* A buffer of consecutive keys [first, first + count), regenerated only when
 * a caller asks for a range it does not hold. */
typedef struct key_buffer {
    bench_key *keys;
    size_t capacity;
    uint64_t first;
    size_t count;
} key_buffer;

static void key_buffer_init(key_buffer *buffer, size_t capacity)
{
    buffer->keys = checked_malloc(capacity * sizeof(bench_key));
    buffer->capacity = capacity;
    buffer->first = 0;
    buffer->count = 0;
}

static void key_buffer_free(key_buffer *buffer)
{
    free(buffer->keys);
    buffer->keys = NULL;
}

/* Keys [first, first + count) with count <= capacity. Generation happens
 * here, outside the caller's timed region. */
static const bench_key *key_buffer_range(key_buffer *buffer, uint64_t first,
                                         size_t count)
{
    if (first >= buffer->first && first + count <= buffer->first + buffer->count)
        return buffer->keys + (first - buffer->first);
    buffer->first = first;
    buffer->count = buffer->capacity;
    fill_keys(buffer->keys, first, buffer->count);
    return buffer->keys;
}

/* ------------------------------------------------------------------------ */
/* Query set                                                                */
/* ------------------------------------------------------------------------ */

typedef struct query_set {
    bench_key *keys;
    unsigned char *is_present; /* read only by the untimed verification */
    size_t count;
    size_t absent;
} query_set;

static void shuffle_queries(query_set *queries)
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

/* count/2 present keys spread evenly over [w, 2w), count/2 absent keys from
 * [2w, ...), shuffled. */
static void query_set_build(query_set *queries, uint64_t window, size_t count)
{
    size_t present = count / 2;
    queries->keys = checked_malloc(count * sizeof(bench_key));
    queries->is_present = checked_malloc(count);
    queries->count = count;
    queries->absent = count - present;
    for (size_t i = 0; i < present; i++) {
        /* i * window < 2^63 for every window this bench uses */
        queries->keys[i] = key_at(window + (uint64_t)i * window / present);
        queries->is_present[i] = 1;
    }
    for (size_t i = present; i < count; i++) {
        queries->keys[i] = key_at(2 * window + (uint64_t)(i - present));
        queries->is_present[i] = 0;
    }
    shuffle_queries(queries);
}

static void query_set_free(query_set *queries)
{
    free(queries->keys);
    free(queries->is_present);
}

/* ------------------------------------------------------------------------ */
/* The two libraries behind one small interface                             */
/* ------------------------------------------------------------------------ */

/* One filter under test. The hot loops call the libraries directly; the
 * function pointers are crossed once per chunk of keys, not per key. */
typedef struct contender {
    const char *label;
    char shape[64];
    ebb_apbf_params params; /* APBF only */
    uint64_t first_insert;  /* index of the first key inserted */
    uint64_t inserts;       /* keys inserted by the add measurement */
    double fp_promise;      /* worst-case false-positive rate at the end */
    double fp_factor;       /* how far above the promise the check allows */
    void *(*create)(const struct contender *self, uint64_t window);
    void (*destroy)(void *filter);
    void (*insert)(void *filter, const bench_key *keys, size_t count);
    size_t (*count_positives)(void *filter, const bench_key *keys, size_t count);
    size_t (*memory)(void *filter);
} contender;

static void *apbf_create(const contender *self, uint64_t window)
{
    ebb_apbf *filter;
    ebb_status status = ebb_apbf_create(&self->params, BENCH_FILTER_SEED, &filter);
    (void)window;
    if (status != EBB_OK) {
        fprintf(stderr, "ebb-bench: ebb_apbf_create: %s\n", ebb_strerror(status));
        exit(EXIT_FAILURE);
    }
    return filter;
}

static void apbf_destroy(void *filter)
{
    ebb_apbf_destroy(filter);
}

static void apbf_insert(void *filter, const bench_key *keys, size_t count)
{
    ebb_apbf *apbf = filter;
    for (size_t i = 0; i < count; i++)
        ebb_apbf_add(apbf, &keys[i], sizeof keys[i]);
}

static size_t apbf_count_positives(void *filter, const bench_key *keys, size_t count)
{
    const ebb_apbf *apbf = filter;
    size_t positives = 0;
    for (size_t i = 0; i < count; i++)
        positives += ebb_apbf_contains(apbf, &keys[i], sizeof keys[i]);
    return positives;
}

/* The batch entry points, as a caller holding many keys uses them: hash a
 * block of keys, then add or query the block (the library prefetches). */
#define BENCH_BATCH 256u

typedef struct key_block {
    const void *keys[BENCH_BATCH];
    size_t lens[BENCH_BATCH];
    ebb_hash128 hashes[BENCH_BATCH];
    bool found[BENCH_BATCH];
} key_block;

static size_t hash_block(const ebb_apbf *apbf, key_block *block,
                         const bench_key *keys, size_t count)
{
    size_t n = count < BENCH_BATCH ? count : BENCH_BATCH;
    for (size_t i = 0; i < n; i++) {
        block->keys[i] = &keys[i];
        block->lens[i] = sizeof keys[i];
    }
    ebb_apbf_hash_batch(apbf, block->keys, block->lens, n, block->hashes);
    return n;
}

static void apbf_batch_insert(void *filter, const bench_key *keys, size_t count)
{
    ebb_apbf *apbf = filter;
    key_block block;
    for (size_t done = 0; done < count;) {
        size_t n = hash_block(apbf, &block, keys + done, count - done);
        ebb_apbf_add_batch(apbf, block.hashes, n);
        done += n;
    }
}

static size_t apbf_batch_count_positives(void *filter, const bench_key *keys,
                                         size_t count)
{
    const ebb_apbf *apbf = filter;
    key_block block;
    size_t positives = 0;
    for (size_t done = 0; done < count;) {
        size_t n = hash_block(apbf, &block, keys + done, count - done);
        positives += ebb_apbf_contains_batch(apbf, block.hashes, n, block.found);
        done += n;
    }
    return positives;
}

static size_t apbf_memory(void *filter)
{
    return ebb_apbf_memory(filter);
}

static void *libbloom_create(const contender *self, uint64_t window)
{
    struct bloom *bloom = checked_malloc(sizeof *bloom);
    (void)self;
    if (bloom_init(bloom, (int)window, BENCH_FP) != 0) {
        fprintf(stderr, "ebb-bench: bloom_init(%llu, %g) failed\n",
                (unsigned long long)window, BENCH_FP);
        exit(EXIT_FAILURE);
    }
    return bloom;
}

static void libbloom_destroy(void *filter)
{
    bloom_free(filter);
    free(filter);
}

static void libbloom_insert(void *filter, const bench_key *keys, size_t count)
{
    struct bloom *bloom = filter;
    for (size_t i = 0; i < count; i++)
        bloom_add(bloom, &keys[i], (int)sizeof keys[i]);
}

static size_t libbloom_count_positives(void *filter, const bench_key *keys, size_t count)
{
    struct bloom *bloom = filter;
    size_t positives = 0;
    for (size_t i = 0; i < count; i++)
        positives += bloom_check(bloom, &keys[i], (int)sizeof keys[i]) == 1;
    return positives;
}

static size_t libbloom_memory(void *filter)
{
    const struct bloom *bloom = filter;
    return (size_t)bloom->bytes + sizeof *bloom;
}

/* The classic filter's false-positive rate after n insertions into m bits
 * with k hashes: (1 - e^(-kn/m))^k. */
static double classic_fp(double bits, double hashes, double inserted)
{
    return pow(1.0 - exp(-hashes * inserted / bits), hashes);
}

/* APBF inserts keys [0, 2w): the requested w, not params->window, which is
 * rounded up to whole generations, so that the present queries [w, 2w) are
 * always among the last params->window insertions. */
static void apbf_contender(contender *c, const char *label,
                           const ebb_apbf_params *params, uint64_t window,
                           bool batched)
{
    memset(c, 0, sizeof *c);
    c->label = label;
    snprintf(c->shape, sizeof c->shape, "k=%u l=%u", (unsigned)params->k,
             (unsigned)params->l);
    c->params = *params;
    c->first_insert = 0;
    c->inserts = 2 * window;
    c->fp_promise = ebb_apbf_fp(params->k, params->l);
    c->fp_factor = 1.0;
    c->create = apbf_create;
    c->destroy = apbf_destroy;
    c->insert = batched ? apbf_batch_insert : apbf_insert;
    c->count_positives = batched ? apbf_batch_count_positives : apbf_count_positives;
    c->memory = apbf_memory;
}

static void libbloom_contender(contender *c, uint64_t window)
{
    struct bloom probe;
    memset(c, 0, sizeof *c);
    if (bloom_init(&probe, (int)window, BENCH_FP) != 0) {
        fprintf(stderr, "ebb-bench: bloom_init(%llu) failed\n",
                (unsigned long long)window);
        exit(EXIT_FAILURE);
    }
    c->label = "libbloom";
    snprintf(c->shape, sizeof c->shape, "k=%d", probe.hashes);
    c->fp_promise = classic_fp(probe.bits, probe.hashes, (double)window);
    /* libbloom is only sanity-checked (a broken bench would show far more):
     * at w = 1e8 it measures about 5% above the textbook rate. */
    c->fp_factor = LIBBLOOM_FP_FACTOR;
    bloom_free(&probe);
    c->first_insert = window;
    c->inserts = window;
    c->create = libbloom_create;
    c->destroy = libbloom_destroy;
    c->insert = libbloom_insert;
    c->count_positives = libbloom_count_positives;
    c->memory = libbloom_memory;
}

/* ------------------------------------------------------------------------ */
/* Measurements                                                             */
/* ------------------------------------------------------------------------ */

typedef struct result {
    double add_ns;      /* median ns per insertion */
    double contains_ns; /* median ns per query */
    double bits_per_item;
    double fp_measured;
    double fp_bound;
    size_t false_negatives;
    size_t positives_timed; /* keeps the timed contains loop observable */
    size_t positives_expected;
} result;

/* Inserts the contender's keys into `filter`, timing only the insert calls. */
static double timed_insert_ns(const contender *c, void *filter, key_buffer *keys)
{
    uint64_t elapsed = 0;
    for (uint64_t done = 0; done < c->inserts;) {
        size_t chunk = keys->capacity;
        if (c->inserts - done < chunk)
            chunk = (size_t)(c->inserts - done);
        const bench_key *batch = key_buffer_range(keys, c->first_insert + done, chunk);
        uint64_t start = now_ns();
        c->insert(filter, batch, chunk);
        elapsed += now_ns() - start;
        done += chunk;
    }
    return (double)elapsed;
}

/* Untimed pass over the queries: false negatives and the measured false-
 * positive rate. It also warms caches and TLB before the timed passes. */
static void verify_queries(const contender *c, void *filter,
                           const query_set *queries, result *r)
{
    size_t false_positives = 0;
    r->false_negatives = 0;
    for (size_t i = 0; i < queries->count; i++) {
        bool hit = c->count_positives(filter, &queries->keys[i], 1) == 1;
        if (queries->is_present[i] && !hit)
            r->false_negatives++;
        if (!queries->is_present[i] && hit)
            false_positives++;
    }
    r->fp_measured = (double)false_positives / (double)queries->absent;
    r->fp_bound = fp_upper_bound(c->fp_promise, c->fp_factor, queries->absent);
    r->positives_expected = (queries->count - queries->absent) + false_positives;
}

static result measure(const contender *c, uint64_t window, unsigned runs,
                      key_buffer *keys, const query_set *queries)
{
    double samples[BENCH_MAX_RUNS];
    result r;
    void *filter = NULL;
    memset(&r, 0, sizeof r);

    for (unsigned run = 0; run < runs; run++) {
        if (filter != NULL)
            c->destroy(filter);
        filter = c->create(c, window);
        samples[run] = timed_insert_ns(c, filter, keys) / (double)c->inserts;
    }
    r.add_ns = median(samples, runs);
    r.bits_per_item = (double)c->memory(filter) * 8.0 / (double)window;

    verify_queries(c, filter, queries, &r);
    for (unsigned run = 0; run < runs; run++) {
        uint64_t start = now_ns();
        r.positives_timed = c->count_positives(filter, queries->keys, queries->count);
        samples[run] = (double)(now_ns() - start) / (double)queries->count;
    }
    r.contains_ns = median(samples, runs);
    c->destroy(filter);
    return r;
}

/* Cost of ebb_hash alone on the same keys: the share of every APBF
 * operation that is hashing. */
static double hash_ns(key_buffer *keys, uint64_t count, unsigned runs)
{
    double samples[BENCH_MAX_RUNS];
    if (count > keys->capacity)
        count = keys->capacity;
    const bench_key *batch = key_buffer_range(keys, 0, (size_t)count);
    for (unsigned run = 0; run < runs; run++) {
        uint64_t sink = 0;
        uint64_t start = now_ns();
        for (size_t i = 0; i < count; i++) {
            ebb_hash128 h = ebb_hash(&batch[i], sizeof batch[i], BENCH_FILTER_SEED);
            sink += h.lo ^ h.hi;
        }
        samples[run] = (double)(now_ns() - start) / (double)count;
        if (sink == 1) /* practically never; makes the sum observable */
            printf("(hash sink %llu)\n", (unsigned long long)sink);
    }
    return median(samples, runs);
}

/* ------------------------------------------------------------------------ */
/* Report                                                                   */
/* ------------------------------------------------------------------------ */

static double mops(double ns_per_op)
{
    return 1e3 / ns_per_op;
}

static void print_table_header(void)
{
    printf("  %-18s %-10s %9s %11s %9s %11s %9s %11s %11s\n", "filter", "shape",
           "bits/item", "add Mops/s", "add ns/op", "cont Mops/s", "cont ns/op",
           "fp measured", "fp bound");
}

static void print_row(const contender *c, const result *r)
{
    printf("  %-18s %-10s %9.2f %11.2f %9.2f %11.2f %9.2f %11.5f %11.5f\n", c->label,
           c->shape, r->bits_per_item, mops(r->add_ns), r->add_ns,
           mops(r->contains_ns), r->contains_ns, r->fp_measured, r->fp_bound);
}

/* Prints the checks that are bugs when they fail; returns 0 when all pass. */
static int check_row(const contender *c, const result *r)
{
    int failures = 0;
    if (r->false_negatives != 0) {
        printf("  check FAILED: %s has %zu false negatives\n", c->label,
               r->false_negatives);
        failures++;
    }
    if (r->fp_measured > r->fp_bound) {
        printf("  check FAILED: %s fp %.5f above bound %.5f\n", c->label,
               r->fp_measured, r->fp_bound);
        failures++;
    }
    if (r->positives_timed != r->positives_expected) {
        printf("  check FAILED: %s timed pass found %zu positives, verify pass %zu\n",
               c->label, r->positives_timed, r->positives_expected);
        failures++;
    }
    return failures;
}

static void print_target(const char *what, const contender *apbf, double ratio,
                         double target)
{
    printf("    %-18s %-10s %-9s >= %.1fx libbloom: %5.2fx  target met: %s\n",
           apbf->label, apbf->shape, what, target, ratio,
           ratio >= target ? "yes" : "no");
}

/* ------------------------------------------------------------------------ */
/* Driver                                                                   */
/* ------------------------------------------------------------------------ */

/* At most four APBF rows (two shapes, each one at a time and batched), then
 * libbloom. */
#define APBF_ROWS_MAX 4

typedef struct bench_options {
    unsigned runs;      /* 0: the per-window default */
    bool quick;         /* w = 1e6 only */
    bool full;          /* every row at w = 1e8 too */
} bench_options;

static void die_status(const char *what, ebb_status status)
{
    fprintf(stderr, "ebb-bench: %s: %s\n", what, ebb_strerror(status));
    exit(EXIT_FAILURE);
}

/* Fills contenders[] (APBF rows, then libbloom); returns how many. Without
 * `all`, only the primary row: the library default, one call per key. */
static int choose_contenders(uint64_t window, bool all, contender *contenders)
{
    ebb_apbf_params least, fast;
    int n = 0;
    ebb_status status = ebb_apbf_choose(window, BENCH_FP, 0, &least);
    if (status != EBB_OK)
        die_status("ebb_apbf_choose", status);
    status = ebb_apbf_params_from_kl(7, 5, window, &fast);
    if (status != EBB_OK)
        die_status("ebb_apbf_params_from_kl", status);
    apbf_contender(&contenders[n++], "APBF least memory", &least, window, false);
    if (all) {
        apbf_contender(&contenders[n++], "APBF least, batch", &least, window, true);
        apbf_contender(&contenders[n++], "APBF fast (paper)", &fast, window, false);
        apbf_contender(&contenders[n++], "APBF fast, batch", &fast, window, true);
    }
    libbloom_contender(&contenders[n++], window);
    return n;
}

static void print_ratios_and_targets(uint64_t window, const contender *contenders,
                                     const result *results, int count)
{
    const result *bloom = &results[count - 1];
    printf("  throughput ratio APBF/libbloom:\n");
    for (int i = 0; i < count - 1; i++)
        printf("    %-18s %-10s add %5.2fx   contains %5.2fx\n", contenders[i].label,
               contenders[i].shape, bloom->add_ns / results[i].add_ns,
               bloom->contains_ns / results[i].contains_ns);
    if (window != TARGET_WINDOW)
        return;
    printf("  targets (w = n = 1e6):\n");
    for (int i = 0; i < count - 1; i++) {
        print_target("add", &contenders[i], bloom->add_ns / results[i].add_ns,
                     TARGET_ADD_RATIO);
        print_target("contains", &contenders[i],
                     bloom->contains_ns / results[i].contains_ns,
                     TARGET_CONTAINS_RATIO);
    }
}

/* Runs every contender at one window; returns the number of failed checks. */
static int bench_window(uint64_t window, unsigned runs, bool all)
{
    contender contenders[APBF_ROWS_MAX + 1];
    result results[APBF_ROWS_MAX + 1];
    key_buffer keys;
    query_set queries;
    size_t query_count = 2 * window < BENCH_MAX_QUERIES ? (size_t)(2 * window)
                                                        : BENCH_MAX_QUERIES;
    int failures = 0;
    int count = choose_contenders(window, all, contenders);

    key_buffer_init(&keys, 2 * window < BENCH_CHUNK_KEYS ? (size_t)(2 * window)
                                                         : BENCH_CHUNK_KEYS);
    query_set_build(&queries, window, query_count);

    printf("\nw = %llu, fp = %g, runs: %u (median reported); contains: %zu queries, "
           "half present (last w), half absent, shuffled\n",
           (unsigned long long)window, BENCH_FP, runs, query_count);
    printf("  ebb_hash alone (XXH3-128 of 16 bytes): %.2f ns/op\n",
           hash_ns(&keys, 2 * window, runs));
    print_table_header();
    fflush(stdout);
    for (int i = 0; i < count; i++) {
        results[i] = measure(&contenders[i], window, runs, &keys, &queries);
        print_row(&contenders[i], &results[i]);
        fflush(stdout);
    }
    for (int i = 0; i < count; i++)
        failures += check_row(&contenders[i], &results[i]);
    print_ratios_and_targets(window, contenders, results, count);

    query_set_free(&queries);
    key_buffer_free(&keys);
    return failures;
}

/* The "model name" line of /proc/cpuinfo, or "unknown". */
static void cpu_model(char *out, size_t size)
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

static void usage(FILE *to)
{
    fprintf(to,
            "usage: ebb-bench [--runs N] [--quick | --full]\n"
            "  --runs N  repetitions per measurement, median reported\n"
            "            (1..%d; default %d at w = 1e6, %d at w = 1e8)\n"
            "  --quick   only w = 1e6 (a few seconds)\n"
            "  --full    at w = 1e8 too, the batch calls and the fast shape k=7 l=5\n"
            "            (several more minutes on a 2-core VM)\n",
            BENCH_MAX_RUNS, BENCH_DEFAULT_RUNS, BENCH_LARGE_RUNS);
}

static int parse_runs(const char *text, unsigned *runs)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || n < 1 || n > BENCH_MAX_RUNS)
        return -1;
    *runs = (unsigned)n;
    return 0;
}

static int parse_args(int argc, char **argv, bench_options *options)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            options->quick = true;
        } else if (strcmp(argv[i], "--full") == 0) {
            options->full = true;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            if (parse_runs(argv[++i], &options->runs) != 0)
                return -1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(EXIT_SUCCESS);
        } else {
            return -1;
        }
    }
    return options->quick && options->full ? -1 : 0;
}

static void print_preamble(void)
{
    char model[128];
    cpu_model(model, sizeof model);
    printf("ebb-bench: libebb %s vs libbloom %s, single thread, 16-byte keys\n",
           ebb_version_string(), bloom_version());
    printf("machine: %s\n", model);
    printf("APBF add inserts 2w keys into a fresh filter (w to fill, w in steady "
           "state with shifts), reported per insertion;\n"
           "libbloom add inserts w keys (its capacity, bloom_init(w, %g)). "
           "Keys, hashes included, go through the public calls;\n"
           "rows marked batch hash blocks of %u keys with ebb_apbf_hash_batch, then call "
           "ebb_apbf_add_batch / ebb_apbf_contains_batch.\n",
           BENCH_FP, BENCH_BATCH);
}

int main(int argc, char **argv)
{
    bench_options options = {0, false, false};
    int failures = 0;

    if (parse_args(argc, argv, &options) != 0) {
        usage(stderr);
        return 2;
    }
    print_preamble();
    failures += bench_window(TARGET_WINDOW,
                             options.runs ? options.runs : BENCH_DEFAULT_RUNS, true);
    if (!options.quick) {
        if (!options.full)
            printf("\n(w = 1e8: only the library default, one call per key, and "
                   "libbloom, to stay within ~3 minutes; --full adds the other rows)\n");
        failures += bench_window(LARGE_WINDOW,
                                 options.runs ? options.runs : BENCH_LARGE_RUNS,
                                 options.full);
    }

    if (failures != 0) {
        printf("\n%d correctness check(s) FAILED\n", failures);
        return EXIT_FAILURE;
    }
    printf("\nall correctness checks passed (no false negatives, fp within bounds)\n");
    return EXIT_SUCCESS;
}
