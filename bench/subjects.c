/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * subjects.c: the filters under test behind one interface (bench_subject).
 *
 *   APBF default   ebb_apbf_choose(w, fp, 0): the ring's least memory, the
 *                  shape `ebb dedup --layout ring` uses (without --layout,
 *                  ebb dedup builds the bit-sliced shape where it costs
 *                  at most 10% more memory: ebb-bench-prototype measures
 *                  it);
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
 *                  or independent;
 *   BTBF           the Block Timing Bloom filter of issue 13 at the APBF
 *                  default's memory for (w, fp): ebb_timing_choose(w,
 *                  those bytes, 0), the shape of lowest analytic fp; its
 *                  standard add and contains, and its inferential query
 *                  ebb_timing_infer under a uniform model;
 *   spectral       the Spectral Bloom filters of issue 14 (MS, MI, RM with
 *                  its marker) at m = w counters of 32 bits and libbloom's
 *                  k for (w, fp), holding n = w / (libbloom's bits per
 *                  item) distinct keys, added once each: MS's error ratio
 *                  E_b is then libbloom's fp at its capacity (spectral.c);
 *   GHashTable     an exact count of the same n keys in GLib's hash table
 *                  (the paper's comparison), keys copied into an arena.
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
#include <ebb/spectral.h>
#include <ebb/stable.h>
#include <ebb/timing.h>

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
    {"BTBF", "BTBF", "btbf"},
    {"spectral MS", "spectral", "spectral-ms"},
    {"spectral MI", "spectral", "spectral-mi"},
    {"spectral RM", "spectral", "spectral-rm"},
    {"GHashTable exact", "GHashTable", "ghashtable"},
    {"prototype model", "prototype", "prototype-model"},
    {"APBF ring", "APBF", "apbf-ring"},
    {"APBF sliced", "APBF", "apbf-sliced"},
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
    case BENCH_INFER:
        return "infer";
    case BENCH_INFER_PRIOR:
        return "infer_prior";
    case BENCH_ESTIMATE:
        return "estimate";
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

void bench_key_block_point(bench_key_block *block, const bench_key *keys,
                           size_t n)
{
    for (size_t i = 0; i < n; i++) {
        block->keys[i] = &keys[i];
        block->lens[i] = sizeof keys[i];
    }
}

size_t bench_apbf_hash_block(const ebb_apbf *f, bench_key_block *block,
                             const bench_key *keys, size_t n)
{
    bench_key_block_point(block, keys, n);
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

static size_t apbf_check_and_add(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_apbf *f = s->filter;
    size_t seen = 0;
    for (size_t i = 0; i < n; i++)
        seen += ebb_apbf_check_and_add(f, &keys[i], sizeof keys[i]);
    return seen;
}

static size_t apbf_check_and_add_batch(bench_subject *s, const bench_key *keys,
                                       size_t n)
{
    ebb_apbf *f = s->filter;
    bench_key_block block;
    size_t seen = 0;
    for (size_t done = 0; done < n;) {
        size_t m = bench_apbf_hash_block(f, &block, keys + done,
                                         bench_block_size(n - done));
        seen += ebb_apbf_check_and_add_batch(f, block.hashes, m, NULL);
        done += m;
    }
    return seen;
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

bool bench_status_ok(const char *what, ebb_status status)
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
        return bench_status_ok("ebb_apbf_choose",
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
    return bench_status_ok("ebb_apbf_choose_goal", ebb_apbf_choose_goal(&goal, p));
}

/* Creates the filter of params p into s (the shape's fields set). */
static bool apbf_init(bench_subject *s, ebb_apbf_params p)
{
    ebb_apbf *f;
    if (!bench_status_ok("ebb_apbf_create", ebb_apbf_create(&p, BENCH_FILTER_SEED, &f)))
        return false;
    s->filter = f;
    s->k = p.k;
    s->l = p.l;
    s->block_bits = p.block_bits;
    s->block_hashes = p.block_hashes;
    if (p.layout == EBB_APBF_LAYOUT_SLICED)
        snprintf(s->shape, sizeof s->shape, "k=%u l=%u sliced", p.k, p.l);
    else if (p.block_bits == 0)
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

static bool apbf_create(bench_subject *s)
{
    ebb_apbf_params p;
    return apbf_shape(s, &p) && apbf_init(s, p);
}

bool bench_apbf_subject_create(bench_subject *s, bench_variant variant,
                               uint64_t window, const ebb_apbf_params *p,
                               const char *chooser)
{
    memset(s, 0, sizeof *s);
    s->variant = variant;
    s->window = window;
    s->fp = ebb_apbf_fp(p->k, p->l);
    snprintf(s->chooser, sizeof s->chooser, "%s", chooser);
    if (!apbf_init(s, *p))
        return false;
    s->test_and_add = apbf_check_and_add;
    s->test_and_add_batch = apbf_check_and_add_batch;
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

bool bench_libbloom_init(struct bloom *bloom, uint64_t window, double fp)
{
    if (window > (uint64_t)INT32_MAX || bloom_init(bloom, (int)window, fp) != 0) {
        fprintf(stderr, "bench: bloom_init(%llu, %g) failed\n",
                (unsigned long long)window, fp);
        return false;
    }
    return true;
}

bool bench_probe_uncounted(const bench_subject *s, const bench_key *key,
                           double *lines)
{
    *lines = NAN;
    return s->contains(s, key, 1) == 1;
}

static bool libbloom_create(bench_subject *s)
{
    struct bloom *bloom = bench_xmalloc(sizeof *bloom);
    if (!bench_libbloom_init(bloom, s->window, s->fp)) {
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
    s->probe = bench_probe_uncounted;
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
    if (!bench_status_ok("ebb_tlbf_plan_config", ebb_tlbf_plan_config(&config, &plan)))
        return false;
    config.max_memory = TLBF_MEMORY_HEADROOM * plan.steady_bytes;
    if (!bench_status_ok("ebb_tlbf_create", ebb_tlbf_create(&config, BENCH_FILTER_SEED, &f)))
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
    s->probe = bench_probe_uncounted;
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
    bench_key_block_point(block, keys, n);
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

static bool stable_create(bench_subject *s)
{
    ebb_stable_params p;
    ebb_stable_analysis analysis;
    ebb_stable *f;
    /* libbloom's bit array for (w, fp): what bloom_init allocates (its
     * calloc is freed untouched). */
    struct bloom peer;
    if (!bench_libbloom_init(&peer, s->window, s->fp))
        return false;
    uint64_t bytes = (uint64_t)peer.bytes;
    bloom_free(&peer);
    uint64_t cells = bytes * 8 / STABLE_CELL_BITS;
    if (!bench_status_ok("ebb_stable_params_init",
                       ebb_stable_params_init(cells, STABLE_CELL_BITS, STABLE_K, STABLE_P,
                                              &p)))
        return false;
    p.draw = s->variant == BENCH_STABLE_INDEPENDENT ? EBB_STABLE_DRAW_INDEPENDENT
                                                     : EBB_STABLE_DRAW_CONSECUTIVE;
    if (!bench_status_ok("ebb_stable_analyse", ebb_stable_analyse(&p, NULL, &analysis)) ||
        !bench_status_ok("ebb_stable_create", ebb_stable_create(&p, BENCH_FILTER_SEED, &f)))
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
    s->probe = bench_probe_uncounted;
    s->expected_contains_lines = stable_contains_lines;
    s->expected_add_lines = stable_add_lines;
    s->expected_fn = stable_expected_fn;
    s->memory = stable_memory;
    s->destroy = stable_destroy;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Block Timing Bloom filter                                                */
/* ------------------------------------------------------------------------ */

/* The model the inferential query reads: uniform over this many times w
 * items, so the fixed prior of every query (0: the model's default) is
 * 1 / (10 w). The values change no code path's cost: every query pays the
 * same few logarithms and exponentials whatever the prior. */
#define TIMING_UNIVERSE_FACTOR 10u
/* The costs of a false positive and of a false negative, equal. */
#define TIMING_COST_FP 1.0
#define TIMING_COST_FN 1.0
/* The averaged fp check: positions spread through one block (at most B),
 * absent probes at each, present probes (no false negative) at each. */
#define TIMING_FP_POSITIONS 64u
#define TIMING_FP_PROBES ((size_t)1 << 14)
#define TIMING_FN_PROBES ((size_t)1 << 12)
/* Absent keys of that check: indices from here, apart from the queries'. */
#define TIMING_PROBE_BASE (BENCH_ABSENT_BASE + (UINT64_C(1) << 40))
/* Keys generated at once while walking through the block. */
#define TIMING_WALK_CHUNK ((size_t)1 << 16)

static void timing_add(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_timing *f = s->filter;
    for (size_t i = 0; i < n; i++)
        ebb_timing_add(f, &keys[i], sizeof keys[i]);
}

static size_t timing_hash_block(const ebb_timing *f, bench_key_block *block,
                                const bench_key *keys, size_t n)
{
    bench_key_block_point(block, keys, n);
    ebb_timing_hash_batch(f, block->keys, block->lens, n, block->hashes);
    return n;
}

static void timing_add_batch(bench_subject *s, const bench_key *keys, size_t n)
{
    ebb_timing *f = s->filter;
    bench_key_block block;
    for (size_t done = 0; done < n;) {
        size_t m = timing_hash_block(f, &block, keys + done, bench_block_size(n - done));
        ebb_timing_add_batch(f, block.hashes, m);
        done += m;
    }
}

static size_t timing_contains(const bench_subject *s, const bench_key *keys, size_t n)
{
    const ebb_timing *f = s->filter;
    size_t positives = 0;
    for (size_t i = 0; i < n; i++)
        positives += ebb_timing_contains(f, &keys[i], sizeof keys[i]);
    return positives;
}

static size_t timing_contains_batch(const bench_subject *s, const bench_key *keys,
                                    size_t n)
{
    const ebb_timing *f = s->filter;
    bench_key_block block;
    size_t positives = 0;
    for (size_t done = 0; done < n;) {
        size_t m = timing_hash_block(f, &block, keys + done, bench_block_size(n - done));
        positives += ebb_timing_contains_batch(f, block.hashes, m, block.found);
        done += m;
    }
    return positives;
}

/* The posterior, expected and likely age and least-penalty decision of
 * every key, as `ebb recent` asks for them: the key form, the model's
 * prior, the filter's window, fixed costs. Counts the standard answers;
 * a refused query counts as a negative, which the caller's comparison
 * with the untimed pass then reports. */
static size_t timing_infer(const bench_subject *s, const bench_key *keys, size_t n)
{
    const ebb_timing *f = s->filter;
    const ebb_timing_query query = {0.0, 0, TIMING_COST_FP, TIMING_COST_FN};
    size_t positives = 0;
    for (size_t i = 0; i < n; i++) {
        ebb_timing_answer answer;
        if (ebb_timing_infer(f, &keys[i], sizeof keys[i], &query, &answer) == EBB_OK)
            positives += answer.standard;
    }
    return positives;
}

/* The same queries, each with its own prior: a Zipf prior 1 / (r H) over
 * the model's universe, the rank r taken from the key's bits. A prior
 * that is not the model's default costs the logarithm and exponentials
 * the filter caches for the default (docs/timing.md, "Cost"). */
static size_t timing_infer_prior(const bench_subject *s, const bench_key *keys, size_t n)
{
    const ebb_timing *f = s->filter;
    const ebb_timing_model *model = ebb_timing_get_model(f);
    uint64_t universe = model->universe;
    double inv_harmonic = ebb_timing_zipf_prior(universe, 1);
    ebb_timing_query query = {0.0, 0, TIMING_COST_FP, TIMING_COST_FN};
    size_t positives = 0;
    for (size_t i = 0; i < n; i++) {
        ebb_timing_answer answer;
        uint64_t rank = keys[i].half[0] % universe + 1;
        query.prior = inv_harmonic / (double)rank;
        if (ebb_timing_infer(f, &keys[i], sizeof keys[i], &query, &answer) == EBB_OK)
            positives += answer.standard;
    }
    return positives;
}

/* n_b: the insertions a timer may have been touched by and still be live
 * at in-block position b (src/timing/params.c): the block's own b and
 * ceil((w - b) / B) whole blocks. */
static uint64_t timing_live_insertions(const ebb_timing_params *p, uint64_t b)
{
    uint64_t rest = p->window - b;
    return b + p->block * (rest / p->block + (rest % p->block != 0));
}

/* The fp after n distinct insertions live, by the derivation behind
 * ebb_timing_fp: (1 - (1 - 1/m)^(k n))^k. */
static double timing_fp_live(const ebb_timing_params *p, uint64_t n)
{
    double untouched = exp((double)p->k * (double)n * log1p(-1.0 / (double)p->timers));
    return pow(1.0 - untouched, (double)p->k);
}

/* The fp of ebb_timing_fp's average, at the filter's present position b. */
static double timing_fp_now(const bench_subject *s)
{
    ebb_timing_stats stats;
    const ebb_timing_params *p = ebb_timing_get_params(s->filter);
    ebb_timing_get_stats(s->filter, &stats);
    return timing_fp_live(p, timing_live_insertions(p, stats.in_block));
}

/* A query reads timers until the first expired one: k for a present key,
 * sum_{i<k} live^i on average for an absent one, live the share of timers
 * not expired (counted, O(m), outside the timing). */
static double timing_contains_lines(const bench_subject *s, double present_share)
{
    ebb_timing_stats stats;
    const ebb_timing_params *p = ebb_timing_get_params(s->filter);
    ebb_timing_get_stats(s->filter, &stats);
    double live = (double)stats.live_timers / (double)p->timers;
    double absent_lines = 0.0, term = 1.0;
    for (uint32_t i = 0; i < p->k; i++) {
        absent_lines += term;
        term *= live;
    }
    return present_share * p->k + (1.0 - present_share) * absent_lines;
}

/* An insertion writes its k timers and sweeps sweep_per_add consecutive
 * timers (bpt bits each), a new line every 512 bits. */
static double timing_add_lines(const bench_subject *s)
{
    const ebb_timing_params *p = ebb_timing_get_params(s->filter);
    ebb_timing_shape shape;
    if (ebb_timing_describe(p, &shape) != EBB_OK)
        return NAN;
    return (double)p->k + (double)shape.sweep_per_add * p->timer_bits / 512.0;
}

/* Adds the next n fresh keys (batch calls), untimed. */
static void timing_walk(bench_subject *s, bench_key *buffer, uint64_t n)
{
    for (uint64_t done = 0; done < n;) {
        size_t chunk = n - done < TIMING_WALK_CHUNK ? (size_t)(n - done)
                                                     : TIMING_WALK_CHUNK;
        bench_keys_fill(buffer, s->inserted, chunk);
        timing_add_batch(s, buffer, chunk);
        s->inserted += chunk;
        done += chunk;
    }
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The standard deviation of the averaged fp: the probes' binomial spread,
 * and the filter's own: its live share L of m timers varies by about
 * sqrt(L (1 - L) / m) from one stream to another and fp ~ L^k, so by
 * k fp / L times that, taken as the same at every position (the states a
 * block apart share most live timers). The second matters for small m
 * only (w = 3000: 0.0019 against the probes' 0.00026). */
static double timing_averaged_sd(const ebb_timing_params *p, double fp, uint64_t probes)
{
    double live = pow(fp, 1.0 / p->k);
    double state = p->k * fp / live * sqrt(live * (1.0 - live) / (double)p->timers);
    double binomial = sqrt(fp * (1.0 - fp) / (double)probes);
    return sqrt(state * state + binomial * binomial);
}

/* ebb_timing_fp averages over the in-block position b, at which n_b takes
 * each value of w .. w + B - 1 once. The walk adds keys (untimed) to stop
 * at the positions whose n_b are the midpoints of `positions` equal parts
 * of that range, in the order the stream reaches them, and probes fresh
 * absent keys and present keys (the last w) at each: the mean fp must be
 * ebb_timing_fp within 5 sd (both sides; the midpoint rule's own error is
 * orders below), and no present key may be missed. */
static unsigned timing_extra_checks(bench_subject *s, bench_verdict *v, FILE *log)
{
    const ebb_timing_params *p = ebb_timing_get_params(s->filter);
    unsigned positions = p->block < TIMING_FP_POSITIONS ? (unsigned)p->block
                                                         : TIMING_FP_POSITIONS;
    uint64_t remainder = p->window % p->block;
    uint64_t steps[TIMING_FP_POSITIONS];
    ebb_timing_stats stats;
    ebb_timing_get_stats(s->filter, &stats);
    for (unsigned i = 0; i < positions; i++) {
        uint64_t excess = (uint64_t)(((double)i + 0.5) * (double)p->block / positions);
        uint64_t b = (remainder + excess) % p->block;
        steps[i] = (b + p->block - stats.in_block) % p->block; /* adds to reach b */
    }
    qsort(steps, positions, sizeof steps[0], compare_u64);

    bench_key *buffer = bench_xmalloc(TIMING_WALK_CHUNK * sizeof *buffer);
    uint64_t false_positives = 0, misses = 0, reached = 0, probe = 0;
    for (unsigned i = 0; i < positions; i++) {
        timing_walk(s, buffer, steps[i] - reached);
        reached = steps[i];
        for (size_t j = 0; j < TIMING_FP_PROBES; j++, probe++) {
            bench_key key = bench_key_at(TIMING_PROBE_BASE + probe);
            false_positives += ebb_timing_contains(s->filter, &key, sizeof key);
        }
        for (size_t j = 0; j < TIMING_FN_PROBES; j++) {
            uint64_t back = 1 + (uint64_t)j * (p->window - 1) / (TIMING_FN_PROBES - 1);
            bench_key key = bench_key_at(s->inserted - back);
            misses += !ebb_timing_contains(s->filter, &key, sizeof key);
        }
    }
    free(buffer);

    double promise = s->fp_promise;
    v->averaged_positions = positions;
    v->averaged_probes = probe;
    v->fp_averaged = (double)false_positives / (double)probe;
    v->fp_averaged_bound = BENCH_FP_SIGMAS * timing_averaged_sd(p, promise, probe);
    unsigned failed = 0;
    if (!(fabs(v->fp_averaged - promise) <= v->fp_averaged_bound)) {
        fprintf(log, "  check FAILED: %s %s (w = %llu, fp = %g): fp averaged over %u "
                     "positions %.4g, ebb_timing_fp %.4g, more than 5 sd apart\n",
                bench_variant_name(s->variant), s->shape, (unsigned long long)s->window,
                s->fp, positions, v->fp_averaged, promise);
        failed++;
    }
    if (misses != 0) {
        fprintf(log, "  check FAILED: %s %s (w = %llu, fp = %g): %llu false negatives "
                     "among the last w keys over %u positions\n",
                bench_variant_name(s->variant), s->shape, (unsigned long long)s->window,
                s->fp, (unsigned long long)misses, positions);
        failed++;
    }
    return failed;
}

static size_t timing_memory(const bench_subject *s)
{
    return ebb_timing_memory(s->filter);
}

static void timing_destroy(bench_subject *s)
{
    ebb_timing_destroy(s->filter);
    s->filter = NULL;
}

/* The APBF default's bytes for (w, fp), handle included; 0 when refused. */
static size_t apbf_default_bytes(uint64_t window, double fp)
{
    ebb_apbf_params p;
    size_t bytes = 0;
    if (!bench_status_ok("ebb_apbf_choose", ebb_apbf_choose(window, fp, 0, &p)) ||
        !bench_status_ok("ebb_apbf_params_memory", ebb_apbf_params_memory(&p, &bytes)))
        return 0;
    return bytes;
}

static bool timing_create(bench_subject *s)
{
    ebb_timing_params p;
    ebb_timing_model model;
    ebb_timing *f;
    size_t bytes = apbf_default_bytes(s->window, s->fp);
    if (bytes == 0 ||
        !bench_status_ok("ebb_timing_choose", ebb_timing_choose(s->window, bytes, 0.0, &p)))
        return false;
    memset(&model, 0, sizeof model);
    model.kind = EBB_TIMING_MODEL_UNIFORM;
    model.universe = TIMING_UNIVERSE_FACTOR * s->window;
    if (!bench_status_ok("ebb_timing_create",
                       ebb_timing_create(&p, &model, BENCH_FILTER_SEED, &f)))
        return false;
    s->filter = f;
    s->k = p.k;
    snprintf(s->shape, sizeof s->shape, "k=%u bpt=%u B=%llu P=%llu", p.k, p.timer_bits,
             (unsigned long long)p.block, (unsigned long long)p.padding);
    snprintf(s->chooser, sizeof s->chooser,
             "ebb_timing_choose(w, APBF default's %zu bytes, 0), m = %llu", bytes,
             (unsigned long long)p.timers);
    /* The analytic rate, averaged over the in-block position; the queries'
     * bound is built on the rate at their own position (fp_now). */
    s->fp_promise = ebb_timing_fp(&p);
    s->fp_factor = 1.0;
    /* From all-expired, a timer reads live iff one of the last n_b
     * insertions touched it once n_b insertions have been made, and n_b <
     * w + B: after w + B insertions every query sees exactly the steady
     * state. (One whole cycle of T_+, (T_Omega + 1) B = 3.5 w for the
     * shapes chosen at 1e6 and 1e8, would take 37 s more at 1e8.) */
    s->fill = p.window + p.block;
    s->present_span = s->window;
    s->add = timing_add;
    s->add_batch = timing_add_batch;
    s->contains = timing_contains;
    s->contains_batch = timing_contains_batch;
    s->infer = timing_infer;
    s->infer_prior = timing_infer_prior;
    s->probe = bench_probe_uncounted;
    s->expected_contains_lines = timing_contains_lines;
    s->expected_add_lines = timing_add_lines;
    s->fp_now = timing_fp_now;
    s->extra_checks = timing_extra_checks;
    s->memory = timing_memory;
    s->destroy = timing_destroy;
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
    case BENCH_TIMING:
        return timing_create(s);
    case BENCH_SPECTRAL_MS:
    case BENCH_SPECTRAL_MI:
    case BENCH_SPECTRAL_RM:
        return bench_spectral_create(s);
    case BENCH_HASH_TABLE:
        return bench_hash_table_create(s);
    default:
        return apbf_create(s);
    }
}
