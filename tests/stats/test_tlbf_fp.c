/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_tlbf_fp.c: the Time-limited Bloom Filter's false-positive rate and
 * memory, measured on simulated time with fixed seeds.
 *
 *   1. Constant rate (Poisson arrivals, 100,000 per span), after two spans
 *      of warm-up: the rate of never-inserted keys, averaged over 200 query
 *      times spread over two spans, lies within [0.8, 1.25] x the target
 *      (ebb_apbf_fp(k, l), the APBF analytic value the chooser picked), the
 *      sample is large enough for that to mean something (3 binomial sd <
 *      0.25 x target), and the filter's own current_fp agrees with the
 *      measured rate within 3 sd. fp 0.1, 0.01, 0.001, 1e-4.
 *   2. Bits per element at a constant rate (500,000 per span): memory_bytes
 *      x 8 / the insertions of the last T (counted exactly from the
 *      stream), averaged over ten query times, for fp 0.1 .. 1e-5, against
 *      the paper's ranges (docs/tlbf.md). Asserted: at most the range's
 *      upper bound, at least 90% of what an APBF with the same (k, l)
 *      needs, (k + l) k / (l ln 2) (less would mean slices fuller than 1/2),
 *      and the bit arrays alone within 2% of the APBF's bits per element.
 *      Rows below the paper's lower bound are flagged in the output.
 *   3. A 10x burst (100,000 per span, then 10^6 for one span), the rate in
 *      windows of T/10: before the burst within [0.8, 1.25] x the target;
 *      its peak at most 2 x the target; back below 1.25 x target + 3 sd
 *      for good within 2T after the burst ends; and, averaged over the span
 *      from 2T to 3T after it, within [0.8, 1.25] x the target.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/support.h"
#include "../unit/tlbf_testkit.h"
#include "ebb/apbf.h"
#include "ebb/ebb.h"
#include "ebb/tlbf.h"

#define SPAN INT64_C(1000000000)
#define EPOCH INT64_C(1700000000000000000)
#define LOTS_OF_MEMORY ((size_t)1 << 31)
#define Z_BOUND 3.0

static const double LN2 = 0.693147180559945309417;

static ebb_tlbf *create_or_fail(double fp, uint64_t initial, uint64_t seed) {
    ebb_tlbf_config c = tlbf_config_of(fp, SPAN, initial, LOTS_OF_MEMORY,
                                       EBB_TLBF_REFUSE);
    return tlbf_create_or_fail(&c, seed);
}

static scenario constant_stream(double rate, int64_t duration,
                                uint64_t seed) {
    scenario s;
    memset(&s, 0, sizeof s);
    s.name = "constant";
    s.shape = SHAPE_CONSTANT;
    s.span = SPAN;
    s.base_rate = rate;
    s.factor = 1.0;
    s.start = EPOCH;
    s.duration = duration;
    s.seed = seed;
    s.key_stream = KEYS_INSERTED;
    return s;
}

/* Never-inserted keys probed at q; *next_fresh advances. */
static uint64_t probe_fresh(const ebb_tlbf *f, uint64_t count, int64_t q,
                            uint64_t *next_fresh) {
    uint64_t hits = 0, i;
    for (i = 0; i < count; i++) {
        support_key key = support_key_make(KEYS_FRESH, (*next_fresh)++);
        hits += ebb_tlbf_contains(f, key.bytes, sizeof key.bytes, q);
    }
    return hits;
}

static double binomial_sd(double p, double n) {
    return sqrt(p * (1.0 - p) / n);
}

/* ------------------------------------------------------------------------ */
/* 1. Constant rate                                                         */
/* ------------------------------------------------------------------------ */

#define FP_POINTS 200u

static unsigned constant_rate_fp(double fp, uint64_t seed) {
    const double rate = 100000;
    ebb_tlbf *f = create_or_fail(fp, (uint64_t)rate, seed);
    ebb_tlbf_stats st = tlbf_stats_of(f);
    const double target = ebb_apbf_fp(st.k, st.l);
    /* 1000 expected hits at the target (sd 3% of it), at least 2 10^5
     * queries. */
    const uint64_t per_point =
        (uint64_t)ceil(fmax(2e5, 1000.0 / target) / FP_POINTS);
    const int64_t warm = 2 * SPAN, every = 2 * SPAN / FP_POINTS;
    scenario s = constant_stream(rate, warm + 2 * SPAN, seed);
    arrivals a;
    int64_t t, given, next_query = EPOCH + warm;
    uint64_t index = 0, hits = 0, queries = 0, fresh = 0;
    double model = 0.0, measured, sd;
    arrivals_begin(&a, &s);
    while (arrivals_next(&a, &t, &given)) {
        support_key key = support_key_make(KEYS_INSERTED, index++);
        while (next_query <= t) {
            hits += probe_fresh(f, per_point, next_query, &fresh);
            queries += per_point;
            model += tlbf_stats_of(f).current_fp;
            next_query += every;
        }
        assert_int_equal(ebb_tlbf_add(f, key.bytes, sizeof key.bytes, given),
                         EBB_OK);
    }
    measured = (double)hits / (double)queries;
    sd = binomial_sd(target, (double)queries);
    st = tlbf_stats_of(f);
    model /= FP_POINTS;
    print_message("  fp %-6g (k %2u, l %3u): measured %.6f over %llu "
                  "queries at %u times, target %.6f (%.3fx), library's "
                  "current_fp %.6f; %u slices\n",
                  fp, st.k, st.l, measured, (unsigned long long)queries,
                  FP_POINTS, target, measured / target, model, st.slices);
    CHECK(Z_BOUND * sd <= 0.25 * target, "sample too small: sd %g", sd);
    /* The statistic the library reports is the rate it delivers. */
    CHECK(fabs(measured - model) <= Z_BOUND * binomial_sd(model,
                                                         (double)queries),
          "fp %g: measured %.6f against current_fp %.6f, beyond %g sd", fp,
          measured, model, Z_BOUND);
    ebb_tlbf_destroy(f);
    if (measured > 1.25 * target || measured < 0.8 * target) {
        print_message("    ^ outside [0.8, 1.25] x target\n");
        return 1;
    }
    return 0;
}

/* "Near the target" (docs/tlbf.md): within a factor 1.25 either way. Above
 * it the promise is broken; below it the slices are sized for more than
 * they receive (memory spent on a rate nobody asked for). */
static void fp_at_a_constant_rate(void **state) {
    unsigned failures = 0;
    (void)state;
    failures += constant_rate_fp(0.1, 700);
    failures += constant_rate_fp(0.01, 701);
    failures += constant_rate_fp(0.001, 702);
    failures += constant_rate_fp(1e-4, 703);
    CHECK(failures == 0, "%u of 4 rates outside [0.8, 1.25] x target",
          failures);
}

/* ------------------------------------------------------------------------ */
/* 2. Bits per element                                                      */
/* ------------------------------------------------------------------------ */

typedef struct bpe_row {
    double fp, low, high;
} bpe_row;

static const bpe_row BPE_ROWS[] = {
    {0.1, 10, 13}, {0.01, 19, 24}, {0.001, 26, 35}, {1e-4, 32, 45},
    {1e-5, 41, 56},
};
#define BPE_POINTS 10

static unsigned bits_per_element_row(const bpe_row *row, uint64_t seed,
                                     uint32_t *below) {
    const double rate = 500000;
    const int64_t warm = 2 * SPAN, every = SPAN / BPE_POINTS;
    ebb_tlbf *f = create_or_fail(row->fp, (uint64_t)rate, seed);
    scenario s = constant_stream(rate, warm + SPAN, seed);
    size_t capacity = (size_t)(4 * rate), count = 0, oldest = 0;
    int64_t *times = malloc(capacity * sizeof *times);
    arrivals a;
    int64_t t, given, next_query = EPOCH + warm;
    double memory_bpe = 0.0, bits_bpe = 0.0, ideal;
    int points = 0;
    ebb_tlbf_stats st = tlbf_stats_of(f);
    assert_non_null(times);
    arrivals_begin(&a, &s);
    while (arrivals_next(&a, &t, &given)) {
        support_key key = support_key_make(KEYS_INSERTED, count);
        while (next_query <= t) {
            /* Insertions at times in [q - T, q]: exactly the keys the
             * filter must still report at q. */
            size_t in_span;
            while (oldest < count && times[oldest] < next_query - SPAN)
                oldest++;
            in_span = count - oldest;
            st = tlbf_stats_of(f);
            memory_bpe += (double)st.memory_bytes * 8.0 / (double)in_span;
            if (points == BPE_POINTS - 1) {
                tlbf_snap snap = tlbf_snap_save(f);
                bits_bpe = (double)tlbf_snap_total_bits(&snap) /
                           (double)in_span;
                tlbf_snap_free(&snap);
            }
            points++;
            next_query += every;
        }
        assert_true(count < capacity);
        times[count++] = given;
        assert_int_equal(ebb_tlbf_add(f, key.bytes, sizeof key.bytes, given),
                         EBB_OK);
    }
    assert_int_equal(points, BPE_POINTS);
    memory_bpe /= BPE_POINTS;
    ideal = (double)(st.k + st.l) * st.k / ((double)st.l * LN2);
    print_message("  fp %-6g (k %2u, l %3u): %.2f bits per element "
                  "(memory_bytes; bit arrays alone %.2f; an APBF of the same "
                  "shape %.2f), paper %g-%g%s\n",
                  row->fp, st.k, st.l, memory_bpe, bits_bpe, ideal, row->low,
                  row->high,
                  memory_bpe < row->low ? "  <- BELOW the paper's range" : "");
    *below += memory_bpe < row->low;
    free(times);
    ebb_tlbf_destroy(f);
    /* The bit arrays alone hold what an APBF of the shape holds: slices
     * sized for the rate (the estimate settles within 1% of it, docs/tlbf.md
     * rule 5, which moves the bits per element by no more than that: the
     * bound is that 1%; measured within 0.25%). */
    CHECK(fabs(bits_bpe / ideal - 1.0) <= 0.01,
          "fp %g: bit arrays %.2f bits per element, the APBF's %.2f", row->fp,
          bits_bpe, ideal);
    if (memory_bpe > row->high || memory_bpe < 0.9 * ideal) {
        print_message("    ^ above the paper's range or below 90%% of the "
                      "APBF's\n");
        return 1;
    }
    return 0;
}

static void bits_per_element_at_a_constant_rate(void **state) {
    size_t i;
    uint32_t below = 0;
    unsigned failures = 0;
    (void)state;
    for (i = 0; i < sizeof BPE_ROWS / sizeof BPE_ROWS[0]; i++)
        failures += bits_per_element_row(&BPE_ROWS[i], 800 + i, &below);
    if (below > 0)
        print_message("  %u row(s) use less memory than the paper's range\n",
                      below);
    CHECK(failures == 0,
          "%u of 5 rows above the paper's range (or below 90%% of an APBF)",
          failures);
}

/* ------------------------------------------------------------------------ */
/* 3. During and after a burst                                              */
/* ------------------------------------------------------------------------ */

#define WINDOW_QUERY_TIMES 10

static void fp_through_a_burst(double fp, uint64_t seed) {
    const double rate = 100000;
    const int64_t burst_start = 3 * SPAN, burst_end = 4 * SPAN;
    const int64_t window = SPAN / 10, first = 2 * SPAN, last = 8 * SPAN;
    enum { WINDOWS = 60 };
    ebb_tlbf *f = create_or_fail(fp, (uint64_t)rate, seed);
    ebb_tlbf_stats st = tlbf_stats_of(f);
    const double target = ebb_apbf_fp(st.k, st.l);
    /* 200 expected hits per window at the target. */
    const uint64_t per_time =
        (uint64_t)ceil(200.0 / target / WINDOW_QUERY_TIMES);
    scenario s = constant_stream(rate, last, seed);
    uint64_t hits[WINDOWS] = {0}, queries[WINDOWS] = {0};
    uint32_t slices[WINDOWS] = {0};
    arrivals a;
    int64_t t, given, next_query = EPOCH + first;
    uint64_t index = 0, fresh = 0, after_hits = 0, after_queries = 0;
    double peak = 0.0, before = 0.0, after, window_sd;
    int w, peak_window = 0, recovered = -1;
    s.shape = SHAPE_BURST;
    s.factor = 10;
    s.change_start = burst_start;
    s.change_end = burst_end;
    arrivals_begin(&a, &s);
    while (arrivals_next(&a, &t, &given)) {
        support_key key = support_key_make(KEYS_INSERTED, index++);
        while (next_query <= t) {
            int slot = (int)((next_query - EPOCH - first) / window);
            if (slot < WINDOWS) {
                hits[slot] += probe_fresh(f, per_time, next_query, &fresh);
                queries[slot] += per_time;
                slices[slot] = tlbf_stats_of(f).slices;
            }
            next_query += window / WINDOW_QUERY_TIMES;
        }
        assert_int_equal(ebb_tlbf_add(f, key.bytes, sizeof key.bytes, given),
                         EBB_OK);
    }
    window_sd = binomial_sd(target, (double)queries[0]);
    for (w = 0; w < WINDOWS; w++) {
        double r = (double)hits[w] / (double)queries[w];
        int64_t start = first + w * window;
        assert_true(queries[w] > 0);
        if (r > peak) {
            peak = r;
            peak_window = w;
        }
        if (start < burst_start)
            before += r / (double)((burst_start - first) / window);
        if (start >= burst_end + 2 * SPAN && start < burst_end + 3 * SPAN) {
            after_hits += hits[w];
            after_queries += queries[w];
        }
    }
    /* Recovery: the first window from burst end on after which no window
     * exceeds 1.25 x target + 3 sd. */
    for (w = WINDOWS - 1; w >= 0; w--) {
        double r = (double)hits[w] / (double)queries[w];
        if (first + w * window < burst_end ||
            r > 1.25 * target + Z_BOUND * window_sd)
            break;
        recovered = w;
    }
    after = (double)after_hits / (double)after_queries;
    print_message("  fp %-6g (target %.6f): before the burst %.6f; peak "
                  "%.6f (%.2fx) in the window at %.1f T (burst %.0f..%.0f "
                  "T); end + 2T..3T %.6f (%.2fx); back below 1.25x from "
                  "%.1f T (%.1f T after the burst)\n",
                  fp, target, before, peak, peak / target,
                  (double)(first + peak_window * window) / SPAN,
                  (double)burst_start / SPAN, (double)burst_end / SPAN,
                  after, after / target,
                  recovered < 0 ? -1.0
                                : (double)(first + recovered * window) / SPAN,
                  recovered < 0 ? -1.0
                                : (double)(first + recovered * window -
                                           burst_end) /
                                      SPAN);
    {
        char line[WINDOWS * 8 + 1];
        size_t used = 0;
        for (w = 0; w < WINDOWS; w++)
            used += (size_t)snprintf(line + used, sizeof line - used, " %.2f",
                                     (double)hits[w] / (double)queries[w] /
                                         target);
        print_message("    rate / target per T/10 from 2 T:%s\n", line);
        used = 0;
        for (w = 0; w < WINDOWS; w += 5)
            used += (size_t)snprintf(line + used, sizeof line - used, " %u",
                                     slices[w]);
        print_message("    slices every T/2 from 2 T:%s\n", line);
    }
    CHECK(before >= 0.8 * target && before <= 1.25 * target,
          "fp %g: before the burst the rate is %.6f, not within [0.8, 1.25] x "
          "%.6f", fp, before, target);
    CHECK(peak <= 2.0 * target,
          "fp %g: the rate peaked at %.6f > 2 x %.6f", fp, peak, target);
    CHECK(recovered >= 0 &&
              first + recovered * window - burst_end <= 2 * SPAN,
          "fp %g: not back below 1.25 x target within 2 T of the burst", fp);
    CHECK(after >= 0.8 * target && after <= 1.25 * target,
          "fp %g: 2T after the burst the rate is %.6f, not within [0.8, "
          "1.25] x %.6f", fp,
          after, target);
    ebb_tlbf_destroy(f);
}

static void fp_during_and_after_a_burst(void **state) {
    (void)state;
    fp_through_a_burst(0.1, 900);
    fp_through_a_burst(0.01, 901);
    fp_through_a_burst(0.001, 902);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fp_at_a_constant_rate),
        cmocka_unit_test(bits_per_element_at_a_constant_rate),
        cmocka_unit_test(fp_during_and_after_a_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
