/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * subjects.c: the filters under test behind one interface (bench_subject).
 *
 *   APBF default   ebb_apbf_choose(w, fp, 0): the least memory, the shape
 *                  `ebb dedup` uses;
 *   APBF fast      ebb_apbf_choose_goal with max_accesses 3: the least
 *                  memory among shapes whose false query reads <= 3 slices;
 *   APBBF b=8      ebb_apbf_choose_goal, B = 512, b = 8, max_npws 0.25,
 *                  max_accesses 4 (the bounds `ebb dedup --blocked` uses);
 *   APBBF b=auto   the same with b chosen by the library;
 *   libbloom       bloom_init(w, fp), Debian's classic Bloom filter;
 *   TLBF           span T = 1 s at a rate of w keys per second (simulated:
 *                  key i carries the timestamp i * 1e9 / w ns), so that its
 *                  window in items is w, at the same fp.
 *
 * Every call goes through the public API on the 16-byte keys, hashing
 * included, as a user calls it. The batch forms hash blocks of
 * BENCH_BATCH keys (ebb_apbf_hash_batch, or ebb_tlbf_hash per key since the
 * TLBF has no hash_batch), then call the library's batch operation.
 */
#include "bench_internal.h"

#include <bloom.h>
#include <ebb/ebb.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_FILTER_SEED UINT64_C(42)

/* The fast plain shape: a query answering false reads at most this many
 * slices on average. */
#define FAST_MAX_ACCESSES 3.0

#define TLBF_SPAN_NS INT64_C(1000000000)
/* The TLBF may hold this many times its planned steady memory before it
 * refuses an add (it never should at a constant rate). */
#define TLBF_MEMORY_HEADROOM 4u

typedef struct variant_info {
    const char *name;
    const char *family;
    const char *slug;
} variant_info;

static const variant_info variant_table[BENCH_VARIANTS] = {
    {"APBF default", "APBF", "apbf-default"},
    {"APBF fast", "APBF", "apbf-fast"},
    {"APBBF b=8", "APBBF", "apbbf-b8"},
    {"APBBF b=auto", "APBBF", "apbbf-auto"},
    {"libbloom", "libbloom", "libbloom"},
    {"TLBF", "TLBF", "tlbf"},
};

const char *bench_variant_name(bench_variant variant)
{
    return variant_table[variant].name;
}

const char *bench_op_name(bench_op op)
{
    return op == BENCH_ADD ? "add" : "contains";
}

const char *bench_variant_family(bench_variant variant)
{
    return variant_table[variant].family;
}

const char *bench_variant_slug(bench_variant variant)
{
    return variant_table[variant].slug;
}

size_t bench_block_size(size_t remaining)
{
    return remaining < BENCH_BATCH ? remaining : BENCH_BATCH;
}

/* ------------------------------------------------------------------------ */
/* APBF and APBBF                                                           */
/* ------------------------------------------------------------------------ */

static void apbf_add(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_apbf *f = s->filter;
    for (size_t i = 0; i < n; i++)
        ebb_apbf_add(f, &keys[i], sizeof keys[i]);
}

size_t bench_apbf_hash_block(const ebb_apbf *f, bench_key_block *block,
                             const bench_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        block->keys[i] = &keys[i];
        block->lens[i] = sizeof keys[i];
    }
    ebb_apbf_hash_batch(f, block->keys, block->lens, n, block->hashes);
    return n;
}

static void apbf_add_batch(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_apbf *f = s->filter;
    bench_key_block block;
    for (size_t done = 0; done < n;) {
        size_t m = bench_apbf_hash_block(f, &block, keys + done,
                                         bench_block_size(n - done));
        ebb_apbf_add_batch(f, block.hashes, m);
        done += m;
    }
}

static size_t apbf_contains(const bench_subject *s, const bench_key *keys, size_t n)
{
    const ebb_apbf *f = s->filter;
    size_t positives = 0;
    for (size_t i = 0; i < n; i++)
        positives += ebb_apbf_contains(f, &keys[i], sizeof keys[i]);
    return positives;
}

static size_t apbf_contains_batch(const bench_subject *s, const bench_key *keys,
                                  size_t n)
{
    const ebb_apbf *f = s->filter;
    bench_key_block block;
    size_t positives = 0;
    for (size_t done = 0; done < n;) {
        size_t m = bench_apbf_hash_block(f, &block, keys + done,
                                         bench_block_size(n - done));
        positives += ebb_apbf_contains_batch(f, block.hashes, m, block.found);
        done += m;
    }
    return positives;
}

static bool apbf_probe(const bench_subject *s, const bench_key *key, double *lines)
{
    const ebb_apbf *f = s->filter;
    uint32_t accesses = 0;
    bool hit = ebb_apbf_contains_counted(f, ebb_apbf_hash(f, key, sizeof *key),
                                         &accesses);
    *lines = (double)accesses;
    return hit;
}

static size_t apbf_memory(const bench_subject *s)
{
    return ebb_apbf_memory(s->filter);
}

static void apbf_destroy(bench_subject *s)
{
    ebb_apbf_destroy(s->filter);
    s->filter = NULL;
}

static bool report_status(const char *what, ebb_status status)
{
    if (status == EBB_OK)
        return true;
    fprintf(stderr, "bench: %s: %s\n", what, ebb_strerror(status));
    return false;
}

ebb_apbf_goal bench_blocked_goal(uint64_t window, double fp,
                                 uint32_t block_hashes)
{
    ebb_apbf_goal goal;
    memset(&goal, 0, sizeof goal);
    goal.window = window;
    goal.fp = fp;
    goal.max_npws = EBB_APBF_BLOCKED_MAX_NPWS;
    goal.max_accesses = EBB_APBF_BLOCKED_MAX_ACCESSES;
    goal.block_bits = BENCH_BLOCKED_BITS;
    goal.block_hashes = block_hashes;
    return goal;
}

static bool apbf_shape(bench_subject *s, ebb_apbf_params *p)
{
    ebb_apbf_goal goal;
    memset(&goal, 0, sizeof goal);
    goal.window = s->window;
    goal.fp = s->fp;
    switch (s->variant) {
    case BENCH_APBF_DEFAULT:
        snprintf(s->chooser, sizeof s->chooser, "ebb_apbf_choose(w, fp, 0)");
        return report_status("ebb_apbf_choose",
                             ebb_apbf_choose(s->window, s->fp, 0, p));
    case BENCH_APBF_FAST:
        goal.max_accesses = FAST_MAX_ACCESSES;
        snprintf(s->chooser, sizeof s->chooser,
                 "ebb_apbf_choose_goal(max_accesses %g)", FAST_MAX_ACCESSES);
        break;
    default:
        goal = bench_blocked_goal(s->window, s->fp,
                                  s->variant == BENCH_APBBF_B8 ? BENCH_BLOCKED_HASHES
                                                               : 0);
        snprintf(s->chooser, sizeof s->chooser,
                 "ebb_apbf_choose_goal(B %u, b %u, max_npws %g, max_accesses %g)",
                 goal.block_bits, goal.block_hashes, goal.max_npws,
                 goal.max_accesses);
        break;
    }
    return report_status("ebb_apbf_choose_goal", ebb_apbf_choose_goal(&goal, p));
}

static bool apbf_create(bench_subject *s)
{
    ebb_apbf_params p;
    ebb_apbf *f;
    if (!apbf_shape(s, &p) ||
        !report_status("ebb_apbf_create", ebb_apbf_create(&p, BENCH_FILTER_SEED, &f)))
        return false;
    s->filter = f;
    s->k = p.k;
    s->l = p.l;
    s->block_bits = p.block_bits;
    s->block_hashes = p.block_hashes;
    if (p.block_bits == 0)
        snprintf(s->shape, sizeof s->shape, "k=%u l=%u", p.k, p.l);
    else
        snprintf(s->shape, sizeof s->shape, "k=%u l=%u B=%u b=%u", p.k, p.l,
                 p.block_bits, p.block_hashes);
    /* Plain slices: the design's geometric worst case, what ebb promises;
     * blocked: the exact shape's worst case. */
    s->fp_promise = p.block_bits == 0 ? ebb_apbf_fp(p.k, p.l) : ebb_apbf_shape_fp(&p);
    s->fp_factor = 1.0;
    /* (k + l) generations from empty: every slice has been written for its
     * k generations (or cleared) since, the fill pattern of steady state. */
    s->fill = (uint64_t)(p.k + p.l) * p.generation;
    /* The requested w, not p.window (rounded up to whole generations): the
     * present queries are certainly among the last p.window insertions. */
    s->present_span = s->window;
    s->add = apbf_add;
    s->add_batch = apbf_add_batch;
    s->contains = apbf_contains;
    s->contains_batch = apbf_contains_batch;
    s->probe = apbf_probe;
    s->memory = apbf_memory;
    s->destroy = apbf_destroy;
    return true;
}

/* ------------------------------------------------------------------------ */
/* libbloom                                                                 */
/* ------------------------------------------------------------------------ */

static void libbloom_add(bench_subject *s, const bench_key *keys, size_t n)
{
    struct bloom *bloom = s->filter;
    for (size_t i = 0; i < n; i++)
        bloom_add(bloom, &keys[i], (int)sizeof keys[i]);
}

static size_t libbloom_contains(const bench_subject *s, const bench_key *keys,
                                size_t n)
{
    struct bloom *bloom = s->filter;
    size_t positives = 0;
    for (size_t i = 0; i < n; i++)
        positives += bloom_check(bloom, &keys[i], (int)sizeof keys[i]) == 1;
    return positives;
}

static bool libbloom_probe(const bench_subject *s, const bench_key *key,
                           double *lines)
{
    *lines = NAN;
    return libbloom_contains(s, key, 1) == 1;
}

/* The classic filter's bit fill after n insertions into m bits with k
 * hashes: 1 - e^(-kn/m) (libbloom's bit array is private). */
static double classic_fill(const struct bloom *bloom, double inserted)
{
    return 1.0 - exp(-(double)bloom->hashes * inserted / (double)bloom->bits);
}

/* bloom_check reads bits until the first zero: k lines for a key that is
 * present, sum_{i<k} r^i on average for one that is not. */
static double libbloom_contains_lines(const bench_subject *s, double present_share)
{
    const struct bloom *bloom = s->filter;
    double r = classic_fill(bloom, (double)s->inserted);
    double absent_lines = 0.0, term = 1.0;
    for (int i = 0; i < bloom->hashes; i++) {
        absent_lines += term;
        term *= r;
    }
    return present_share * bloom->hashes + (1.0 - present_share) * absent_lines;
}

static size_t libbloom_memory(const bench_subject *s)
{
    const struct bloom *bloom = s->filter;
    return (size_t)bloom->bytes + sizeof *bloom;
}

static void libbloom_destroy(bench_subject *s)
{
    bloom_free(s->filter);
    free(s->filter);
    s->filter = NULL;
}

static bool libbloom_create(bench_subject *s)
{
    struct bloom *bloom = bench_xmalloc(sizeof *bloom);
    if (s->window > (uint64_t)INT32_MAX || bloom_init(bloom, (int)s->window, s->fp) != 0) {
        fprintf(stderr, "bench: bloom_init(%llu, %g) failed\n",
                (unsigned long long)s->window, s->fp);
        free(bloom);
        return false;
    }
    s->filter = bloom;
    s->k = (uint32_t)bloom->hashes;
    snprintf(s->shape, sizeof s->shape, "k=%d", bloom->hashes);
    snprintf(s->chooser, sizeof s->chooser, "bloom_init(w, fp)");
    /* Its rate at capacity by its own formula: (1 - e^(-kn/m))^k. */
    s->fp_promise = pow(classic_fill(bloom, (double)s->window), bloom->hashes);
    s->fp_factor = BENCH_PEER_FP_FACTOR;
    s->capacity = s->window; /* filled to its capacity, no further */
    s->present_span = s->window;
    s->add = libbloom_add;
    s->contains = libbloom_contains;
    s->probe = libbloom_probe;
    s->expected_contains_lines = libbloom_contains_lines;
    s->memory = libbloom_memory;
    s->destroy = libbloom_destroy;
    return true;
}

/* ------------------------------------------------------------------------ */
/* TLBF on simulated time                                                   */
/* ------------------------------------------------------------------------ */

/* The simulated time of key index i. */
static int64_t time_of(const bench_subject *s, uint64_t index)
{
    return (int64_t)((double)index * s->ns_per_key);
}

static void tlbf_add(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_tlbf *f = s->filter;
    unsigned errors = 0;
    int64_t t = s->latest_ns;
    for (size_t i = 0; i < n; i++) {
        t = time_of(s, s->inserted + i);
        errors += ebb_tlbf_add(f, &keys[i], sizeof keys[i], t) != EBB_OK;
    }
    s->latest_ns = t;
    s->add_errors += errors;
}

static size_t tlbf_hash_block(const ebb_tlbf *f, bench_key_block *block,
                              const bench_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        block->hashes[i] = ebb_tlbf_hash(f, &keys[i], sizeof keys[i]);
    return n;
}

/* A batch carries one timestamp: that of its last key, so no key is
 * stamped earlier than its own time and the last w keys stay within T. */
static void tlbf_add_batch(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_tlbf *f = s->filter;
    bench_key_block block;
    for (size_t done = 0; done < n;) {
        size_t m = tlbf_hash_block(f, &block, keys + done, bench_block_size(n - done));
        int64_t t = time_of(s, s->inserted + done + m - 1);
        size_t added = 0;
        if (ebb_tlbf_add_batch(f, block.hashes, m, t, &added) != EBB_OK)
            s->add_errors++;
        s->latest_ns = t;
        done += m;
    }
}

static size_t tlbf_contains(const bench_subject *s, const bench_key *keys, size_t n)
{
    const ebb_tlbf *f = s->filter;
    size_t positives = 0;
    for (size_t i = 0; i < n; i++)
        positives += ebb_tlbf_contains(f, &keys[i], sizeof keys[i], s->latest_ns);
    return positives;
}

static size_t tlbf_contains_batch(const bench_subject *s, const bench_key *keys,
                                  size_t n)
{
    const ebb_tlbf *f = s->filter;
    bench_key_block block;
    size_t positives = 0;
    for (size_t done = 0; done < n;) {
        size_t m = tlbf_hash_block(f, &block, keys + done, bench_block_size(n - done));
        positives += ebb_tlbf_contains_batch(f, block.hashes, m, s->latest_ns,
                                             block.found);
        done += m;
    }
    return positives;
}

static bool tlbf_probe(const bench_subject *s, const bench_key *key, double *lines)
{
    *lines = NAN;
    return tlbf_contains(s, key, 1) == 1;
}

/* The TLBF cannot count its reads; its query is the APBF's walk over the
 * live slices, so the access recursion at the geometric worst-case fill
 * of (k, live - k) predicts them. */
static double tlbf_contains_lines(const bench_subject *s, double present_share)
{
    ebb_tlbf_stats stats;
    ebb_apbf_accesses accesses;
    ebb_tlbf_get_stats(s->filter, &stats);
    if (stats.live_slices <= stats.k)
        return NAN;
    uint32_t l = stats.live_slices - stats.k;
    double *ratios = bench_xmalloc((size_t)stats.live_slices * sizeof *ratios);
    double lines = NAN;
    if (ebb_apbf_worst_fill(stats.k, l, EBB_FILL_GEOMETRIC, ratios) == EBB_OK &&
        ebb_apbf_expected_accesses(stats.k, l, ratios, &accesses) == EBB_OK)
        lines = present_share * accesses.window_item +
                (1.0 - present_share) * accesses.false_query;
    free(ratios);
    return lines;
}

static size_t tlbf_memory(const bench_subject *s)
{
    return ebb_tlbf_memory(s->filter);
}

static void tlbf_destroy(bench_subject *s)
{
    ebb_tlbf_destroy(s->filter);
    s->filter = NULL;
}

static bool tlbf_create(bench_subject *s)
{
    ebb_tlbf_config config;
    ebb_tlbf_plan plan;
    ebb_tlbf *f;
    memset(&config, 0, sizeof config);
    config.span_ns = TLBF_SPAN_NS;
    config.fp = s->fp;
    config.initial_capacity = s->window;
    config.max_memory = SIZE_MAX;
    config.policy = EBB_TLBF_REFUSE;
    if (!report_status("ebb_tlbf_plan_config", ebb_tlbf_plan_config(&config, &plan)))
        return false;
    config.max_memory = TLBF_MEMORY_HEADROOM * plan.steady_bytes;
    if (!report_status("ebb_tlbf_create", ebb_tlbf_create(&config, BENCH_FILTER_SEED, &f)))
        return false;
    s->filter = f;
    s->k = plan.k;
    s->l = plan.l;
    snprintf(s->shape, sizeof s->shape, "k=%u l=%u", plan.k, plan.l);
    snprintf(s->chooser, sizeof s->chooser,
             "ebb_tlbf_create(T 1 s, fp, initial_capacity w), w keys/s");
    s->fp_promise = plan.fp;
    s->fp_factor = BENCH_PEER_FP_FACTOR;
    s->ns_per_key = (double)TLBF_SPAN_NS / (double)s->window;
    s->latest_ns = 0;
    /* One span for the rate estimate to settle, then (k + l) generations
     * as for the APBF: more than a span of inserts before timing. */
    s->fill = s->window + (uint64_t)(plan.k + plan.l) * plan.generation_items;
    s->present_span = s->window;
    s->add = tlbf_add;
    s->add_batch = tlbf_add_batch;
    s->contains = tlbf_contains;
    s->contains_batch = tlbf_contains_batch;
    s->probe = tlbf_probe;
    s->expected_contains_lines = tlbf_contains_lines;
    s->memory = tlbf_memory;
    s->destroy = tlbf_destroy;
    return true;
}

bool bench_subject_create(bench_subject *s, bench_variant variant,
                          uint64_t window, double fp)
{
    memset(s, 0, sizeof *s);
    s->variant = variant;
    s->window = window;
    s->fp = fp;
    switch (variant) {
    case BENCH_LIBBLOOM:
        return libbloom_create(s);
    case BENCH_TLBF:
        return tlbf_create(s);
    default:
        return apbf_create(s);
    }
}
