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
 *                  window in items is w, at the same fp;
 *   stable         the Stable Bloom filter of issue 12 at libbloom's memory
 *                  for (w, fp): d = 3, K = 5, P = 10, m = floor(bytes * 8
 *                  / 3), the P decrements drawn consecutive (the default)
 *                  or independent.
 *
 * Every call goes through the public API on the 16-byte keys, hashing
 * included, as a user calls it. The batch forms hash blocks of
 * BENCH_BATCH keys (ebb_apbf_hash_batch, ebb_stable_hash_batch, or
 * ebb_tlbf_hash per key since the TLBF has no hash_batch), then call the
 * library's batch operation.
 */
#include "bench_internal.h"

#include <bloom.h>
#include <ebb/ebb.h>
#include <ebb/stable.h>

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

/* The stable filter's shape in issue 12's targets. */
#define STABLE_CELL_BITS 3u
#define STABLE_K 5u
#define STABLE_P 10u
/* Warm-up, in units of m / K insertions (each cell is set once per m / K
 * insertions on average). From empty, a cell was never set with
 * probability e^-6 after 6 m / K; for (d, K, P) = (3, 5, 10) the zero
 * fraction is then within 6e-5 of its stationary 0.0585 and FPS within
 * 3e-4 of its 0.7397 (the chain integrated from all zeros), under the
 * 5 sd of the fp checks (3e-3 over 2^19 absent queries). */
#define STABLE_WARMUP 6u
/* The expected false negatives of the present queries: the analysis at
 * this many gaps evenly spread over their span, averaged. */
#define STABLE_FN_SAMPLES 257u

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
    {"stable consecutive", "stable", "stable-consecutive"},
    {"stable independent", "stable", "stable-independent"},
};

const char *bench_variant_name(bench_variant variant)
{
    return variant_table[variant].name;
}

const char *bench_op_name(bench_op op)
{
    switch (op) {
    case BENCH_ADD:
        return "add";
    case BENCH_TEST_AND_ADD:
        return "test_and_add";
    default:
        return "contains";
    }
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

/* ------------------------------------------------------------------------ */
/* Stable filter                                                            */
/* ------------------------------------------------------------------------ */

/* importance is ignored by the PLAIN variant; 0 is as good as any. */
static size_t stable_test_and_add(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_stable *f = s->filter;
    size_t seen_count = 0;
    unsigned errors = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        errors += ebb_stable_test_and_add(f, &keys[i], sizeof keys[i], 0.0, &seen) !=
                  EBB_OK;
        seen_count += seen;
    }
    s->add_errors += errors;
    return seen_count;
}

static void stable_add(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_stable *f = s->filter;
    unsigned errors = 0;
    for (size_t i = 0; i < n; i++)
        errors += ebb_stable_add(f, &keys[i], sizeof keys[i], 0.0) != EBB_OK;
    s->add_errors += errors;
}

static size_t stable_hash_block(const ebb_stable *f, bench_key_block *block,
                                const bench_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        block->keys[i] = &keys[i];
        block->lens[i] = sizeof keys[i];
    }
    ebb_stable_hash_batch(f, block->keys, block->lens, n, block->hashes);
    return n;
}

/* Each key's answer is asked for (block.found), as a deduplicator needs. */
static size_t stable_test_and_add_batch(bench_subject *s, const bench_key *keys,
                                        size_t n)
{
    ebb_stable *f = s->filter;
    bench_key_block block;
    size_t seen_total = 0;
    for (size_t done = 0; done < n;) {
        size_t m = stable_hash_block(f, &block, keys + done, bench_block_size(n - done));
        size_t seen = 0;
        if (ebb_stable_test_and_add_batch(f, block.hashes, NULL, m, block.found,
                                          &seen) != EBB_OK)
            s->add_errors++;
        seen_total += seen;
        done += m;
    }
    return seen_total;
}

static void stable_add_batch(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_stable *f = s->filter;
    bench_key_block block;
    for (size_t done = 0; done < n;) {
        size_t m = stable_hash_block(f, &block, keys + done, bench_block_size(n - done));
        if (ebb_stable_add_batch(f, block.hashes, NULL, m) != EBB_OK)
            s->add_errors++;
        done += m;
    }
}

static size_t stable_contains(const bench_subject *s, const bench_key *keys, size_t n)
{
    const ebb_stable *f = s->filter;
    size_t positives = 0;
    for (size_t i = 0; i < n; i++)
        positives += ebb_stable_contains(f, &keys[i], sizeof keys[i]);
    return positives;
}

static size_t stable_contains_batch(const bench_subject *s, const bench_key *keys,
                                    size_t n)
{
    const ebb_stable *f = s->filter;
    bench_key_block block;
    size_t positives = 0;
    for (size_t done = 0; done < n;) {
        size_t m = stable_hash_block(f, &block, keys + done, bench_block_size(n - done));
        positives += ebb_stable_contains_batch(f, block.hashes, m, block.found);
        done += m;
    }
    return positives;
}

static bool stable_probe(const bench_subject *s, const bench_key *key, double *lines)
{
    *lines = NAN;
    return stable_contains(s, key, 1) == 1;
}

/* The stable zero fraction V_0 of the filter's shape (NaN if refused). */
static double stable_zero_fraction(const bench_subject *s)
{
    ebb_stable_analysis a;
    if (ebb_stable_analyse(ebb_stable_get_params(s->filter), NULL, &a) != EBB_OK)
        return NAN;
    return a.zero_fraction;
}

/* A query reads its K cells (K random lines) until the first zero: K for a
 * present key, sum_{i<K} (1 - V_0)^i on average for an absent one. */
static double stable_contains_lines(const bench_subject *s, double present_share)
{
    double nonzero = 1.0 - stable_zero_fraction(s);
    double absent_lines = 0.0, term = 1.0;
    for (uint32_t i = 0; i < s->k; i++) {
        absent_lines += term;
        term *= nonzero;
    }
    return present_share * s->k + (1.0 - present_share) * absent_lines;
}

/* An insertion writes its K cells and decrements P: P random lines drawn
 * independently; drawn consecutive, P * d bits from a random cell, which
 * cross a 512-bit line boundary with probability (P d - 1) / 512 (d odd:
 * the start bit falls evenly on every residue modulo 512). */
static double stable_add_lines(const bench_subject *s)
{
    const ebb_stable_params *p = ebb_stable_get_params(s->filter);
    double decrement_lines = p->draw == EBB_STABLE_DRAW_INDEPENDENT
                                 ? (double)p->p
                                 : 1.0 + ((double)p->p * p->cell_bits - 1.0) / 512.0;
    return (double)p->k + decrement_lines;
}

/* The mean of the analysis' false-negative probability over the present
 * queries: keys spread evenly over [first, first + span), each queried
 * after the insertions up to s->inserted, so its gap (the query is the
 * gap-th item after it) is s->inserted - index. */
static double stable_expected_fn(const bench_subject *s, uint64_t first, uint64_t span)
{
    const ebb_stable_params *p = ebb_stable_get_params(s->filter);
    uint32_t level = ebb_stable_max_level(p->cell_bits);
    double sum = 0.0;
    for (uint32_t j = 0; j < STABLE_FN_SAMPLES; j++) {
        uint64_t offset = (uint64_t)(((double)j + 0.5) * (double)span / STABLE_FN_SAMPLES);
        double fn;
        if (ebb_stable_fn_at_gap(p, NULL, level, s->inserted - (first + offset), &fn) !=
            EBB_OK)
            return NAN;
        sum += fn;
    }
    return sum / STABLE_FN_SAMPLES;
}

static size_t stable_memory(const bench_subject *s)
{
    return ebb_stable_memory(s->filter);
}

static void stable_destroy(bench_subject *s)
{
    ebb_stable_destroy(s->filter);
    s->filter = NULL;
}

/* The bytes of libbloom's bit array for (w, fp): what bloom_init allocates
 * (its calloc is freed untouched); 0 when it refuses. */
static uint64_t libbloom_bytes(uint64_t window, double fp)
{
    struct bloom peer;
    if (window > (uint64_t)INT32_MAX || bloom_init(&peer, (int)window, fp) != 0)
        return 0;
    uint64_t bytes = (uint64_t)peer.bytes;
    bloom_free(&peer);
    return bytes;
}

static bool stable_create(bench_subject *s)
{
    ebb_stable_params p;
    ebb_stable_analysis analysis;
    ebb_stable *f;
    uint64_t bytes = libbloom_bytes(s->window, s->fp);
    uint64_t cells = bytes * 8 / STABLE_CELL_BITS;
    if (bytes == 0) {
        fprintf(stderr, "bench: bloom_init(%llu, %g) failed\n",
                (unsigned long long)s->window, s->fp);
        return false;
    }
    if (!report_status("ebb_stable_params_init",
                       ebb_stable_params_init(cells, STABLE_CELL_BITS, STABLE_K, STABLE_P,
                                              &p)))
        return false;
    p.draw = s->variant == BENCH_STABLE_INDEPENDENT ? EBB_STABLE_DRAW_INDEPENDENT
                                                     : EBB_STABLE_DRAW_CONSECUTIVE;
    if (!report_status("ebb_stable_analyse", ebb_stable_analyse(&p, NULL, &analysis)) ||
        !report_status("ebb_stable_create", ebb_stable_create(&p, BENCH_FILTER_SEED, &f)))
        return false;
    s->filter = f;
    s->k = p.k;
    snprintf(s->shape, sizeof s->shape, "d=%u K=%u P=%u", p.cell_bits, p.k, p.p);
    snprintf(s->chooser, sizeof s->chooser,
             "ebb_stable_params_init(m = %llu: libbloom's %llu bytes, d, K, P)",
             (unsigned long long)p.cells, (unsigned long long)bytes);
    /* An equilibrium, held from both sides (measure.c), not a bound. */
    s->fp_promise = analysis.fps;
    s->fp_factor = 1.0;
    s->fill = STABLE_WARMUP * p.cells / p.k;
    s->present_span = s->window;
    s->test_and_add = stable_test_and_add;
    s->test_and_add_batch = stable_test_and_add_batch;
    s->add = stable_add;
    s->add_batch = stable_add_batch;
    s->contains = stable_contains;
    s->contains_batch = stable_contains_batch;
    s->probe = stable_probe;
    s->expected_contains_lines = stable_contains_lines;
    s->expected_add_lines = stable_add_lines;
    s->expected_fn = stable_expected_fn;
    s->memory = stable_memory;
    s->destroy = stable_destroy;
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
    case BENCH_STABLE_CONSECUTIVE:
    case BENCH_STABLE_INDEPENDENT:
        return stable_create(s);
    default:
        return apbf_create(s);
    }
}
