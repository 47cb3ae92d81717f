/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_tlbf_invariants.c: the Time-limited Bloom Filter's invariants
 * (docs/tlbf.md, "Invariants that tests must hold") at a realistic scale,
 * on simulated time with fixed seeds.
 *
 *   1. No false negatives, tens of thousands of insertions per span, under
 *      a constant rate, a 10x burst, a drop to a tenth, an idle gap longer
 *      than T, a daily-like sine and a clock that steps back: every key is
 *      queried at exactly t + T, plus rounds over the remembered keys.
 *   2. Expiry after an idle gap longer than T: before any new add nothing
 *      at all is reported; after new adds, the old keys are reported at the
 *      rate of never-inserted keys.
 *   3. Expiry at a constant rate: the fraction of keys still reported at
 *      t + T + j T / l, j = 0 .. k + 2, is 1 at j = 0, at most about 2^-j
 *      after (the k slices holding a key leave the span one per
 *      generation; the APBF query still matches the rest with a run through
 *      younger slices, each at fill <= 1/2), and the false-positive rate by
 *      j = k + 2.
 *   4. After a burst has expired (burst end + 2T) the slice count is back
 *      near k + l (within 10%) and the memory within 25% of its level
 *      before the burst, for a 10x and a 2x burst (a 2x burst leaves blocks
 *      that the reuse rule, "at most twice the size needed", keeps
 *      recycling).
 *   5. The memory limit at scale: REFUSE and EVICT never hold more than
 *      max_memory, every accepted (and not evicted) key is kept for T.
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
#define LOTS_OF_MEMORY ((size_t)1 << 30)
#define Z_BOUND 3.0

static ebb_tlbf *create_or_fail(double fp, uint64_t initial,
                                size_t max_memory, ebb_tlbf_policy policy,
                                uint64_t seed) {
    ebb_tlbf_config c = tlbf_config_of(fp, SPAN, initial, max_memory, policy);
    return tlbf_create_or_fail(&c, seed);
}

static bool has(const ebb_tlbf *f, uint32_t stream, uint64_t index,
                int64_t q) {
    support_key key = support_key_make(stream, index);
    return ebb_tlbf_contains(f, key.bytes, sizeof key.bytes, q);
}

static scenario base_scenario(const char *name, scenario_shape shape,
                              double rate, uint64_t seed) {
    scenario s;
    memset(&s, 0, sizeof s);
    s.name = name;
    s.shape = shape;
    s.span = SPAN;
    s.base_rate = rate;
    s.factor = 1.0;
    s.start = EPOCH;
    s.duration = 7 * SPAN;
    s.seed = seed;
    s.key_stream = KEYS_INSERTED;
    return s;
}

/* sqrt(p (1 - p) / n) */
static double binomial_sd(double p, double n) {
    return sqrt(p * (1.0 - p) / n);
}

/* ------------------------------------------------------------------------ */
/* 1. No false negatives at scale                                           */
/* ------------------------------------------------------------------------ */

static void run_scenarios(const scenario *shapes, size_t count) {
    static const double fps[] = {0.1, 0.01, 0.001};
    size_t i, j;
    for (i = 0; i < count; i++) {
        for (j = 0; j < 3; j++) {
            const scenario *s = &shapes[i];
            ebb_tlbf *f = create_or_fail(fps[j], (uint64_t)s->base_rate,
                                         LOTS_OF_MEMORY, EBB_TLBF_REFUSE,
                                         200 + i * 3 + j);
            oracle_plan p;
            scenario_report r;
            ebb_tlbf_stats end;
            memset(&p, 0, sizeof p);
            p.round_every = SPAN / 20;
            p.round_checks = 2000;
            scenario_run(f, s, &p, &r);
            end = tlbf_stats_of(f);
            print_message("  %-20s fp %-6g %7llu adds (%5llu back), "
                          "%7llu at t + T, %8llu in rounds; peak %4u slices "
                          "%9zu bytes; resets %llu\n",
                          s->name, fps[j], (unsigned long long)r.added,
                          (unsigned long long)r.backsteps,
                          (unsigned long long)r.deadline_checks,
                          (unsigned long long)r.round_checks, r.peak_slices,
                          r.peak_memory, (unsigned long long)end.resets);
            assert_int_equal(r.refused, 0);
            assert_int_equal(r.deadline_checks, r.added);
            assert_int_equal(end.insertions, r.added);
            ebb_tlbf_destroy(f);
        }
    }
}

static void no_false_negatives_at_scale(void **state) {
    const double rate = 10000;
    scenario shapes[6];
    (void)state;
    shapes[0] = base_scenario("constant", SHAPE_CONSTANT, rate, 1);
    shapes[1] = base_scenario("10x burst", SHAPE_BURST, rate, 2);
    shapes[1].factor = 10;
    shapes[1].change_start = 3 * SPAN;
    shapes[1].change_end = 4 * SPAN;
    shapes[2] = base_scenario("drop to 1/10", SHAPE_DROP, rate, 3);
    shapes[2].factor = 0.1;
    shapes[2].change_start = 3 * SPAN;
    shapes[3] = base_scenario("idle gap 1.5 T", SHAPE_IDLE, rate, 4);
    shapes[3].change_start = 3 * SPAN;
    shapes[3].change_end = 3 * SPAN + 3 * SPAN / 2;
    shapes[4] = base_scenario("sine, period 3 T", SHAPE_SINE, rate, 5);
    shapes[4].factor = 0.9;
    shapes[4].period = 3 * SPAN;
    shapes[4].duration = 9 * SPAN;
    shapes[5] = base_scenario("clock steps back", SHAPE_CONSTANT, rate, 6);
    shapes[5].backstep_every = 50;
    shapes[5].backstep_max = 3 * SPAN / 2;
    run_scenarios(shapes, 6);
}

/* ------------------------------------------------------------------------ */
/* 2. Expiry after an idle gap                                              */
/* ------------------------------------------------------------------------ */

static void idle_gap_expires_everything(void **state) {
    static const double fps[] = {0.1, 0.01};
    const uint64_t n = 50000; /* keys per span */
    size_t j;
    (void)state;
    for (j = 0; j < 2; j++) {
        ebb_tlbf *f = create_or_fail(fps[j], n, LOTS_OF_MEMORY,
                                     EBB_TLBF_REFUSE, 300 + j);
        const int64_t step = SPAN / (int64_t)n;
        ebb_tlbf_stats st;
        uint64_t i, old_hits = 0, fresh_hits = 0;
        int64_t latest = EPOCH + (int64_t)(2 * n - 1) * step;
        int64_t after_gap = latest + SPAN + SPAN / 2;
        double target, old_rate, fresh_rate, sd;
        for (i = 0; i < 2 * n; i++) {
            support_key key = support_key_make(KEYS_INSERTED, i);
            assert_int_equal(ebb_tlbf_add(f, key.bytes, 8,
                                          EPOCH + (int64_t)i * step),
                             EBB_OK);
        }
        st = tlbf_stats_of(f);
        target = ebb_apbf_fp(st.k, st.l);
        /* Before any new add: no slice is live, nothing is reported. */
        for (i = 0; i < 2 * n; i++)
            old_hits += has(f, KEYS_INSERTED, i, latest + SPAN + 1);
        CHECK(old_hits == 0, "%llu keys reported after T + 1 idle",
              (unsigned long long)old_hits);
        /* A span of new keys after the gap. */
        for (i = 0; i < n; i++) {
            support_key key = support_key_make(KEYS_OTHER, i);
            assert_int_equal(ebb_tlbf_add(f, key.bytes, 8,
                                          after_gap + (int64_t)i * step),
                             EBB_OK);
        }
        st = tlbf_stats_of(f);
        assert_int_equal(st.resets, 1);
        for (i = 0; i < 2 * n; i++) {
            int64_t q = after_gap + SPAN - 1;
            old_hits += has(f, KEYS_INSERTED, i, q);
            fresh_hits += has(f, KEYS_FRESH, i, q);
        }
        old_rate = (double)old_hits / (double)(2 * n);
        fresh_rate = (double)fresh_hits / (double)(2 * n);
        sd = binomial_sd(target, (double)(2 * n));
        print_message("  fp %-5g: after a gap of 1.5 T and a span of new "
                      "keys, old keys reported %.5f, never-inserted %.5f "
                      "(target %.5f, sd %.5f)\n",
                      fps[j], old_rate, fresh_rate, target, sd);
        /* The old keys are no more present than keys never inserted. */
        CHECK(old_rate <= target + Z_BOUND * sd,
              "old keys reported at %.5f > target %.5f + 3 sd", old_rate,
              target);
        CHECK(fabs(old_rate - fresh_rate) <= Z_BOUND * sqrt(2.0) * sd,
              "old keys %.5f vs never-inserted %.5f", old_rate, fresh_rate);
        ebb_tlbf_destroy(f);
    }
}

/* ------------------------------------------------------------------------ */
/* 3. Expiry profile at a constant rate                                     */
/* ------------------------------------------------------------------------ */

#define MAX_OFFSETS 40

static void expiry_profile(double fp, double rate, uint64_t seed) {
    ebb_tlbf *f = create_or_fail(fp, (uint64_t)rate, LOTS_OF_MEMORY,
                                 EBB_TLBF_REFUSE, seed);
    ebb_tlbf_stats st = tlbf_stats_of(f);
    const int64_t step = SPAN / (int64_t)rate;
    const int64_t generation = SPAN / st.l;
    const uint32_t offsets = st.k + 3;
    /* Keys added during [2T, 3T) are probed at t + T + j generation. */
    const uint64_t first = 2 * (uint64_t)rate, last = 3 * (uint64_t)rate;
    uint64_t hits[MAX_OFFSETS] = {0}, probes[MAX_OFFSETS] = {0};
    uint64_t n, total = 5 * (uint64_t)rate;
    double target = ebb_apbf_fp(st.k, st.l);
    uint32_t j;
    assert_true(offsets <= MAX_OFFSETS);
    for (n = 0; n < total; n++) {
        int64_t t = EPOCH + (int64_t)n * step;
        support_key key = support_key_make(KEYS_INSERTED, n);
        assert_int_equal(ebb_tlbf_add(f, key.bytes, 8, t), EBB_OK);
        /* Each probe time in [t, t + step) before the next add. */
        for (j = 0; j < offsets; j++) {
            int64_t offset = SPAN + (int64_t)j * generation;
            int64_t probed_t = t - offset, m;
            if (probed_t < EPOCH + (int64_t)first * step ||
                probed_t >= EPOCH + (int64_t)last * step)
                continue;
            /* The key whose t + offset lies in [t, t + step). */
            m = (probed_t - EPOCH + step - 1) / step;
            if (EPOCH + m * step + offset >= t + step)
                continue;
            hits[j] += has(f, KEYS_INSERTED, (uint64_t)m,
                           EPOCH + m * step + offset);
            probes[j]++;
        }
    }
    print_message("  fp %g (k %u, l %u, target %.5f), %g per span: fraction "
                  "reported at t + T + j T/l\n",
                  fp, st.k, st.l, target, rate);
    for (j = 0; j < offsets; j++) {
        double rate_j = (double)hits[j] / (double)probes[j];
        double bound = ldexp(1.0, -(int)j + 1) + target +
                       Z_BOUND * binomial_sd(target, (double)probes[j]);
        print_message("    j = %2u: %.5f (%llu probes)%s\n", j, rate_j,
                      (unsigned long long)probes[j],
                      j == 2 ? "  <- docs/tlbf.md expects ~fp here" : "");
        assert_true(probes[j] > rate / 2);
        if (j == 0)
            CHECK(hits[0] == probes[0], "false negatives at exactly t + T");
        else
            CHECK(rate_j <= bound,
                  "j = %u: %.5f of the keys still reported > 2^-(j-1) + fp",
                  j, rate_j);
    }
    /* k + 2 generations past t + T every slice holding the key is gone:
     * only false positives remain. */
    {
        double end = (double)hits[offsets - 1] / (double)probes[offsets - 1];
        double sd = binomial_sd(target, (double)probes[offsets - 1]);
        CHECK(end <= 1.25 * target + Z_BOUND * sd,
              "k + 2 generations past t + T: %.5f > 1.25 x target %.5f", end,
              target);
    }
    ebb_tlbf_destroy(f);
}

static void expiry_at_a_constant_rate(void **state) {
    (void)state;
    expiry_profile(0.1, 50000, 400);
    expiry_profile(0.01, 50000, 401);
}

/* ------------------------------------------------------------------------ */
/* 4. Shrinking back after a burst                                          */
/* ------------------------------------------------------------------------ */

typedef struct burst_outcome {
    uint32_t slices_before, slices_after, k, l;
    size_t memory_before, memory_peak, memory_after, memory_later;
} burst_outcome;

static burst_outcome run_burst(double fp, double rate, double factor,
                               uint64_t seed) {
    ebb_tlbf *f = create_or_fail(fp, (uint64_t)rate, LOTS_OF_MEMORY,
                                 EBB_TLBF_REFUSE, seed);
    scenario s = base_scenario("burst", SHAPE_BURST, rate, seed);
    const int64_t burst_start = 3 * SPAN, burst_end = 4 * SPAN;
    burst_outcome o;
    arrivals a;
    int64_t t, given;
    uint64_t index = 0;
    bool before_seen = false, after_seen = false;
    memset(&o, 0, sizeof o);
    s.factor = factor;
    s.change_start = burst_start;
    s.change_end = burst_end;
    s.duration = burst_end + 5 * SPAN;
    arrivals_begin(&a, &s);
    while (arrivals_next(&a, &t, &given)) {
        support_key key = support_key_make(KEYS_INSERTED, index++);
        size_t memory;
        assert_int_equal(ebb_tlbf_add(f, key.bytes, 8, given), EBB_OK);
        memory = ebb_tlbf_memory(f);
        if (memory > o.memory_peak)
            o.memory_peak = memory;
        if (!before_seen && arrivals_peek(&a) >= EPOCH + burst_start) {
            ebb_tlbf_stats st = tlbf_stats_of(f);
            o.slices_before = st.slices;
            o.memory_before = st.memory_bytes;
            before_seen = true;
        }
        if (!after_seen && arrivals_peek(&a) >= EPOCH + burst_end + 2 * SPAN) {
            ebb_tlbf_stats st = tlbf_stats_of(f);
            o.slices_after = st.slices;
            o.memory_after = st.memory_bytes;
            after_seen = true;
        }
    }
    o.memory_later = ebb_tlbf_memory(f);
    o.k = tlbf_stats_of(f).k;
    o.l = tlbf_stats_of(f).l;
    ebb_tlbf_destroy(f);
    return o;
}

static void filter_shrinks_back_after_a_burst(void **state) {
    static const double fps[] = {0.1, 0.01};
    static const double factors[] = {10.0, 2.0};
    const double rate = 50000;
    size_t i, j, failures = 0;
    (void)state;
    for (j = 0; j < 2; j++) {
        for (i = 0; i < 2; i++) {
            burst_outcome o = run_burst(fps[i], rate, factors[j], 500 + i);
            uint32_t steady = o.k + o.l;
            /* "About k + l": Poisson arrivals keep a few more (see
             * test_tlbf_fp.c), so 10% or 2 slices either way. */
            uint32_t tolerance = steady / 10 > 2 ? steady / 10 : 2;
            double grown = (double)o.memory_after / (double)o.memory_before;
            bool slices_ok = o.slices_after + tolerance >= steady &&
                             o.slices_after <= steady + tolerance;
            bool memory_ok = grown <= 1.25;
            print_message("  %gx burst, fp %g: slices %u before, %u at burst "
                          "end + 2T (k + l = %u); memory %zu before, peak "
                          "%zu, %zu at end + 2T (%.2fx), %zu at end + 5T%s\n",
                          factors[j], fps[i], o.slices_before, o.slices_after,
                          steady, o.memory_before, o.memory_peak,
                          o.memory_after, grown, o.memory_later,
                          slices_ok && memory_ok ? "" : "  <- FAILS");
            failures += !slices_ok || !memory_ok;
        }
    }
    CHECK(failures == 0,
          "%zu of 4 bursts: the slice count was not back within 10%% of "
          "k + l, or the memory not within 25%% of its pre-burst level, 2T "
          "after the burst ended",
          failures);
}

/* ------------------------------------------------------------------------ */
/* 5. Memory limit at scale                                                 */
/* ------------------------------------------------------------------------ */

static size_t steady_memory(double fp, double rate) {
    ebb_tlbf *f = create_or_fail(fp, (uint64_t)rate, LOTS_OF_MEMORY,
                                 EBB_TLBF_REFUSE, 1);
    scenario s = base_scenario("steady", SHAPE_CONSTANT, rate, 9);
    arrivals a;
    int64_t t, given;
    uint64_t index = 0;
    size_t memory;
    s.duration = 3 * SPAN;
    arrivals_begin(&a, &s);
    while (arrivals_next(&a, &t, &given)) {
        support_key key = support_key_make(KEYS_OTHER, index++);
        assert_int_equal(ebb_tlbf_add(f, key.bytes, 8, given), EBB_OK);
    }
    memory = ebb_tlbf_memory(f);
    ebb_tlbf_destroy(f);
    return memory;
}

static void memory_limit_at_scale(void **state) {
    static const ebb_tlbf_policy policies[] = {EBB_TLBF_REFUSE,
                                               EBB_TLBF_EVICT};
    const double rate = 20000;
    size_t steady = steady_memory(0.01, rate), p;
    (void)state;
    for (p = 0; p < 2; p++) {
        ebb_tlbf *f = create_or_fail(0.01, (uint64_t)rate, 2 * steady,
                                     policies[p], 600 + p);
        scenario s = base_scenario("limited 10x burst", SHAPE_BURST, rate,
                                   10 + p);
        oracle_plan plan;
        scenario_report r;
        ebb_tlbf_stats end;
        s.factor = 10;
        s.change_start = 3 * SPAN;
        s.change_end = 4 * SPAN;
        memset(&plan, 0, sizeof plan);
        plan.round_every = SPAN / 20;
        plan.round_checks = 2000;
        plan.allow_refusals = policies[p] == EBB_TLBF_REFUSE;
        scenario_run(f, &s, &plan, &r);
        end = tlbf_stats_of(f);
        print_message("  %s at 2x the steady %zu bytes: %llu of %llu adds "
                      "refused, %llu slices evicted in %llu events, peak "
                      "%zu bytes\n",
                      p == 0 ? "REFUSE" : "EVICT ", steady,
                      (unsigned long long)r.refused,
                      (unsigned long long)r.attempted,
                      (unsigned long long)end.evicted_slices,
                      (unsigned long long)r.evictions, r.peak_memory);
        assert_true(r.peak_memory <= 2 * steady);
        if (policies[p] == EBB_TLBF_REFUSE) {
            assert_true(r.refused > 0);
            assert_int_equal(end.refused, r.refused);
            assert_int_equal(r.deadline_checks, r.added);
        } else {
            assert_int_equal(r.refused, 0);
            assert_true(end.evicted_slices > 0);
            /* Evictions stop with the burst: the keys of the last 2 T
             * were all kept until their deadlines. */
            assert_true(r.deadline_checks >= (uint64_t)(2 * rate));
        }
        ebb_tlbf_destroy(f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_false_negatives_at_scale),
        cmocka_unit_test(idle_gap_expires_everything),
        cmocka_unit_test(expiry_at_a_constant_rate),
        cmocka_unit_test(filter_shrinks_back_after_a_burst),
        cmocka_unit_test(memory_limit_at_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
