/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * measure.c: one filter under test, measured.
 *
 *   1. fill: keys [0, fill) added untimed (with the batch call when there
 *      is one, the fastest way in), so the timed part runs in steady state:
 *      for the APBF (k + l) generations, every slice written and aged as in
 *      a long-running filter; libbloom up to its design load minus the
 *      timed adds;
 *   2. add: `runs` times, add_ops fresh keys one call at a time, then
 *      add_ops fresh keys with the batch call (and, for the stable filter,
 *      as many with test-and-add, one call and batched); only the calls
 *      are timed; the median per operation is reported;
 *   3. queries: half present (spread over the last present_span keys
 *      added), half absent (never added), shuffled; an untimed pass counts
 *      false negatives, false positives and the lines each query read;
 *   4. contains: `runs` timed passes over the queries, one at a time and
 *      batched; each pass must find exactly the positives the untimed pass
 *      found; for the BTBF also its inferential query, one call at a time,
 *      whose standard answers must find them too. A counter (s->counts:
 *      the spectral filters, the hash table) is queried for its estimate,
 *      the rows' op "estimate", a hit being an estimate >= 1.
 *
 * A filter with a capacity (libbloom, the counters) takes exactly that many
 * keys: the fill is cut so that it and the timed adds of every call style
 * end there.
 *
 * A filter that forgets (the stable filter, expected_fn set) is held to
 * its analysis instead of "no false negative, fp under a bound": the
 * missed present queries within 5 sd of the expected rate, the fp of the
 * absent queries and of the timed test-and-adds (fresh keys: every "seen"
 * is a false positive) within 5 sd of the stable rate on both sides. A
 * filter that answers "no" too often, or "yes" too often, fails.
 */
#include "bench_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef void (*add_call)(bench_subject *s, const bench_key *keys, size_t n);
typedef size_t (*test_add_call)(bench_subject *s, const bench_key *keys,
                                size_t n);
typedef size_t (*contains_call)(const bench_subject *s, const bench_key *keys,
                                size_t n);

/* An inserting call: an add, or a test-and-add whose "seen" answers are
 * summed into *seen. */
typedef struct insert_call {
    add_call add;
    test_add_call test_and_add;
} insert_call;

static insert_call adding(add_call add)
{
    insert_call call = {add, NULL};
    return call;
}

static insert_call testing(test_add_call test_and_add)
{
    insert_call call = {NULL, test_and_add};
    return call;
}

/* Inserts the next n keys with `call`; returns the nanoseconds spent in
 * it. */
static double add_keys(bench_subject *s, insert_call call, bench_key_source *keys,
                       uint64_t n, uint64_t *seen)
{
    uint64_t elapsed = 0;
    for (uint64_t done = 0; done < n;) {
        size_t chunk = keys->capacity;
        size_t hits = 0;
        if (n - done < chunk)
            chunk = (size_t)(n - done);
        const bench_key *batch = bench_key_source_range(keys, s->inserted, chunk);
        uint64_t start = bench_now_ns();
        if (call.add != NULL)
            call.add(s, batch, chunk);
        else
            hits = call.test_and_add(s, batch, chunk);
        elapsed += bench_now_ns() - start;
        *seen += hits;
        s->inserted += chunk;
        done += chunk;
    }
    return (double)elapsed;
}

typedef struct add_timing {
    double single_ns;
    double batch_ns; /* NaN without a batch call */
    double test_single_ns; /* NaN without test-and-add */
    double test_batch_ns;
    uint64_t ops;
    uint64_t tested;  /* keys through test-and-add, all fresh */
    uint64_t seen;    /* ... reported seen */
    double fill_ns;  /* the whole untimed fill, for the log */
} add_timing;

static add_timing time_adds(bench_subject *s, const bench_plan *plan,
                            bench_key_source *keys)
{
    double single[BENCH_MAX_RUNS], batch[BENCH_MAX_RUNS];
    double test_single[BENCH_MAX_RUNS], test_batch[BENCH_MAX_RUNS];
    uint64_t ignored = 0;
    add_timing t = {NAN, NAN, NAN, NAN, plan->add_ops, 0, 0, 0.0};
    /* A filter with a capacity takes exactly that many keys: the timed adds
     * of every call style (one for libbloom, two for the spectral filters)
     * fit in it, the fill makes up the rest. */
    uint64_t styles = s->add_batch != NULL ? 2 : 1;
    if (s->capacity != 0 && t.ops * plan->runs * styles > s->capacity)
        t.ops = s->capacity / (plan->runs * styles);
    if (s->capacity != 0)
        s->fill = s->capacity - t.ops * plan->runs * styles;
    t.fill_ns = add_keys(s, adding(s->add_batch ? s->add_batch : s->add), keys,
                         s->fill, &ignored);
    if (t.ops == 0)
        return t;
    /* Alternating the call styles exposes all to the same moments of a
     * shared machine. */
    for (unsigned run = 0; run < plan->runs; run++) {
        if (s->test_and_add != NULL) {
            test_single[run] = add_keys(s, testing(s->test_and_add), keys, t.ops,
                                        &t.seen) / (double)t.ops;
            test_batch[run] = add_keys(s, testing(s->test_and_add_batch), keys,
                                       t.ops, &t.seen) / (double)t.ops;
            t.tested += 2 * t.ops;
        }
        single[run] = add_keys(s, adding(s->add), keys, t.ops, &ignored) / (double)t.ops;
        if (s->add_batch != NULL)
            batch[run] = add_keys(s, adding(s->add_batch), keys, t.ops, &ignored) /
                         (double)t.ops;
    }
    t.single_ns = bench_median(single, plan->runs);
    if (s->add_batch != NULL)
        t.batch_ns = bench_median(batch, plan->runs);
    if (s->test_and_add != NULL) {
        t.test_single_ns = bench_median(test_single, plan->runs);
        t.test_batch_ns = bench_median(test_batch, plan->runs);
    }
    return t;
}

typedef struct query_pass {
    size_t positives;    /* hits of the untimed pass */
    size_t false_negatives;
    size_t false_positives;
    double lines_sum;    /* NaN when the subject cannot count */
} query_pass;

static query_pass untimed_pass(const bench_subject *s, const bench_queries *q)
{
    query_pass p = {0, 0, 0, 0.0};
    for (size_t i = 0; i < q->count; i++) {
        double lines;
        bool hit = s->probe(s, &q->keys[i], &lines);
        p.lines_sum += lines;
        p.positives += hit;
        p.false_negatives += q->is_present[i] && !hit;
        p.false_positives += !q->is_present[i] && hit;
    }
    return p;
}

/* Median ns per query over `runs` timed passes; counts the passes whose
 * positives differ from `expected`. */
static double time_contains(const bench_subject *s, contains_call call,
                            const bench_queries *q, unsigned runs,
                            size_t expected, unsigned *mismatches)
{
    double samples[BENCH_MAX_RUNS];
    for (unsigned run = 0; run < runs; run++) {
        uint64_t start = bench_now_ns();
        size_t positives = call(s, q->keys, q->count);
        samples[run] = (double)(bench_now_ns() - start) / (double)q->count;
        *mismatches += positives != expected;
    }
    return bench_median(samples, runs);
}

static unsigned check(FILE *log, const bench_subject *s, bool ok,
                      const char *what)
{
    if (ok)
        return 0;
    fprintf(log, "  check FAILED: %s %s (w = %llu, fp = %g): %s\n",
            bench_variant_name(s->variant), s->shape,
            (unsigned long long)s->window, s->fp, what);
    return 1;
}

/* Five binomial standard deviations of a rate p over n trials. */
static double five_sd(double p, double n)
{
    return BENCH_FP_SIGMAS * sqrt(p * (1.0 - p) / n);
}

/* The checks of a filter that forgets (see the top of this file). */
static unsigned check_forgetting(FILE *log, const bench_subject *s,
                                 const bench_queries *q, const query_pass *pass,
                                 bench_verdict *v, uint64_t present_first)
{
    double present = (double)(q->count - q->absent);
    double fp = s->fp_promise;
    double fp_margin = five_sd(fp, (double)q->absent);
    unsigned failed = 0;

    v->fn_measured = (double)pass->false_negatives / present;
    v->fn_expected = s->expected_fn(s, present_first, s->present_span);
    /* Where the expectation is under one miss, room for a few anyway: five
     * sd of a rate of one miss. */
    v->fn_bound = five_sd(fmax(v->fn_expected, 1.0 / present), present);
    v->fp_low = fp - fp_margin;
    failed += check(log, s, isfinite(v->fn_expected) &&
                                fabs(v->fn_measured - v->fn_expected) <= v->fn_bound,
                    "missed present keys off the analysis by more than 5 sd");
    failed += check(log, s, v->fp_measured <= v->fp_bound,
                    "false-positive rate above its bound");
    failed += check(log, s, v->fp_measured >= v->fp_low,
                    "false-positive rate below the stable rate by more than 5 sd");
    if (v->tested_fresh > 0)
        failed += check(log, s,
                        fabs(v->tested_fp - fp) <= five_sd(fp, (double)v->tested_fresh),
                        "test-and-add of fresh keys: seen rate off the stable rate "
                        "by more than 5 sd");
    return failed;
}

static void fill_row(bench_row *row, const bench_subject *s, const bench_plan *plan,
                     bench_op op, bool batch,
                     double ns, double lines)
{
    memset(row, 0, sizeof *row);
    row->variant = s->variant;
    snprintf(row->shape, sizeof row->shape, "%s", s->shape);
    row->window = s->window;
    row->fp = s->fp;
    row->op = op;
    row->batch = batch;
    row->runs = plan->runs;
    row->ns_per_op = ns;
    row->mops = 1e3 / ns;
    row->memory_bytes = s->memory(s);
    row->bits_per_item = (double)row->memory_bytes * 8.0 / (double)s->window;
    row->lines_per_op = lines;
    if (op == BENCH_INFER || op == BENCH_INFER_PRIOR)
        row->lines_source = BENCH_LINES_EXPECTED; /* the k timers, read all */
    else if (op == BENCH_CONTAINS || op == BENCH_ESTIMATE)
        row->lines_source = s->expected_contains_lines != NULL ? BENCH_LINES_EXPECTED
                                                               : BENCH_LINES_COUNTED;
    else
        row->lines_source = s->expected_add_lines != NULL ? BENCH_LINES_EXPECTED
                                                          : BENCH_LINES_COUNTED;
    row->fp_promise = s->fp_promise;
}

int bench_measure(bench_subject *s, const bench_plan *plan,
                  bench_key_source *keys,
                  bench_row *rows, bench_verdict *verdict, FILE *log)
{
    bench_queries q;
    unsigned mismatches = 0;
    int n = 0;
    /* A counter's query is its estimate (a hit: >= 1). */
    bench_op query_op = s->counts ? BENCH_ESTIMATE : BENCH_CONTAINS;
    memset(verdict, 0, sizeof *verdict);
    verdict->error_low = NAN;

    add_timing adds = time_adds(s, plan, keys);
    double add_lines = s->expected_add_lines != NULL ? s->expected_add_lines(s)
                                                     : (double)s->k;
    if (adds.ops > 0 && s->test_and_add != NULL) {
        fill_row(&rows[n++], s, plan, BENCH_TEST_AND_ADD, false, adds.test_single_ns,
                 add_lines);
        rows[n - 1].ops = adds.ops;
        fill_row(&rows[n++], s, plan, BENCH_TEST_AND_ADD, true, adds.test_batch_ns,
                 add_lines);
        rows[n - 1].ops = adds.ops;
    }
    if (adds.ops > 0) {
        fill_row(&rows[n++], s, plan, BENCH_ADD, false, adds.single_ns, add_lines);
        rows[n - 1].ops = adds.ops;
        if (s->add_batch != NULL) {
            fill_row(&rows[n++], s, plan, BENCH_ADD, true, adds.batch_ns, add_lines);
            rows[n - 1].ops = adds.ops;
        }
    }

    bench_queries_build(&q, s->inserted - s->present_span, s->present_span,
                        plan->queries);
    query_pass pass = untimed_pass(s, &q);
    double present_share = (double)(q.count - q.absent) / (double)q.count;
    double lines = s->expected_contains_lines != NULL
                       ? s->expected_contains_lines(s, present_share)
                       : pass.lines_sum / (double)q.count;
    double single_ns = time_contains(s, s->contains, &q, plan->runs,
                                     pass.positives, &mismatches);
    fill_row(&rows[n++], s, plan, query_op, false, single_ns, lines);
    rows[n - 1].ops = q.count;
    if (s->contains_batch != NULL) {
        double batch_ns = time_contains(s, s->contains_batch, &q, plan->runs,
                                        pass.positives, &mismatches);
        fill_row(&rows[n++], s, plan, query_op, true, batch_ns, lines);
        rows[n - 1].ops = q.count;
    }
    if (s->infer != NULL) {
        double infer_ns = time_contains(s, s->infer, &q, plan->runs,
                                        pass.positives, &mismatches);
        /* The posterior query reads x's timers as contains does, stopping at
         * the first expired one (timing_observe in src/timing). */
        fill_row(&rows[n++], s, plan, BENCH_INFER, false, infer_ns, lines);
        rows[n - 1].ops = q.count;
    }
    if (s->infer_prior != NULL) {
        double prior_ns = time_contains(s, s->infer_prior, &q, plan->runs,
                                        pass.positives, &mismatches);
        fill_row(&rows[n++], s, plan, BENCH_INFER_PRIOR, false, prior_ns, lines);
        rows[n - 1].ops = q.count;
    }

    verdict->filled = s->fill;
    verdict->fill_ns = adds.fill_ns;
    verdict->queries = q.count;
    verdict->absent = q.absent;
    verdict->false_negatives = pass.false_negatives;
    verdict->fp_measured = (double)pass.false_positives / (double)q.absent;
    verdict->fp_now = s->fp_now != NULL ? s->fp_now(s) : NAN;
    verdict->fp_bound = bench_fp_bound(s->fp_now != NULL ? verdict->fp_now
                                                          : s->fp_promise,
                                       s->fp_factor, q.absent);
    verdict->fp_averaged = verdict->fp_averaged_bound = NAN;
    verdict->tested_fresh = adds.tested;
    verdict->tested_seen = adds.seen;
    verdict->tested_fp = adds.tested ? (double)adds.seen / (double)adds.tested : NAN;
    for (int i = 0; i < n; i++)
        if (rows[i].op == BENCH_CONTAINS || rows[i].op == BENCH_ESTIMATE ||
            rows[i].op == BENCH_INFER || rows[i].op == BENCH_INFER_PRIOR)
            rows[i].fp_measured = verdict->fp_measured;
        else if (rows[i].op == BENCH_TEST_AND_ADD)
            rows[i].fp_measured = verdict->tested_fp;
        else
            rows[i].fp_measured = NAN;
    if (s->expected_fn != NULL)
        verdict->failed_checks +=
            check_forgetting(log, s, &q, &pass, verdict,
                             s->inserted - s->present_span);
    else {
        verdict->fn_measured = verdict->fn_expected = verdict->fn_bound = NAN;
        verdict->fp_low = NAN;
        verdict->failed_checks +=
            check(log, s, pass.false_negatives == 0, "false negatives");
        verdict->failed_checks +=
            check(log, s, verdict->fp_measured <= verdict->fp_bound,
                  "false-positive rate above its bound");
        /* Fresh keys through test-and-add are absent queries too: the
         * promise is a worst case, an upper bound. */
        if (adds.tested > 0)
            verdict->failed_checks +=
                check(log, s,
                      verdict->tested_fp <=
                          bench_fp_bound(s->fp_promise, s->fp_factor, adds.tested),
                      "test-and-add of fresh keys: seen rate above the bound");
    }
    verdict->failed_checks += check(log, s, mismatches == 0,
                                    "a timed contains pass disagreed with the untimed one");
    verdict->failed_checks += check(log, s, s->add_errors == 0, "an add failed");
    bench_queries_free(&q);
    if (s->extra_checks != NULL)
        verdict->failed_checks += s->extra_checks(s, verdict, log);
    return n;
}

void bench_apply_ceiling(bench_row *rows, int count, const bench_ceiling *ceiling)
{
    for (int i = 0; i < count; i++) {
        rows[i].ceiling_lines_per_s = ceiling->lines_per_s;
        rows[i].ceiling_fraction =
            1e9 / rows[i].ns_per_op * rows[i].lines_per_op / ceiling->lines_per_s;
    }
}

double bench_key_hash_ns(bench_key_source *keys, size_t count, unsigned runs,
                         bench_key_hash hash)
{
    double samples[BENCH_MAX_RUNS];
    if (count > keys->capacity)
        count = keys->capacity;
    const bench_key *batch = bench_key_source_range(keys, 0, count);
    uint64_t sink = 0;
    for (unsigned run = 0; run < runs; run++) {
        uint64_t start = bench_now_ns();
        for (size_t i = 0; i < count; i++)
            sink += hash(&batch[i]);
        samples[run] = (double)(bench_now_ns() - start) / (double)count;
    }
    if (sink == 1) /* practically never; keeps the sum observable */
        fprintf(stderr, "bench: hash sink %llu\n", (unsigned long long)sink);
    return bench_median(samples, runs);
}

static uint64_t ebb_key_hash(const bench_key *key)
{
    ebb_hash128 h = ebb_hash(key, sizeof *key, 42);
    return h.lo ^ h.hi;
}

double bench_hash_ns(bench_key_source *keys, size_t count, unsigned runs)
{
    return bench_key_hash_ns(keys, count, runs, ebb_key_hash);
}
