/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_stable.c: the stable filter and its importance-aware variants
 * (src/stable/stable.c, batch.c, snapshot.c).
 *
 *   - creation: every invalid field refused with nothing allocated;
 *     allocation failure at every step of create and load, nothing leaked;
 *   - each variant's update rule on hand-built cells (read through the
 *     handle, src/stable/stable_internal.h): PLAIN sets Max, IBF_2C sets Max
 *     or Half and never lowers a cell, IBF_MC sets max(cell, level), IBF_H
 *     decrements only non-zero cells, low ones more often (a binomial check
 *     with a fixed seed), and gives up on an empty filter;
 *   - the decrements: P per insertion for every draw; the consecutive run
 *     wraps at m and its lane-parallel decrement equals a cell-by-cell
 *     reference for every width 1..16; independent cells are distinct;
 *     P > m/2 decrements all but m - P;
 *   - the query precedes the update (an item is never its own duplicate,
 *     and a duplicate within Max insertions is always seen);
 *   - the generator: same seed and stream, byte-identical snapshots;
 *     different seeds differ;
 *   - batches equal single calls in order (answers and snapshot bytes) for
 *     every variant and draw, random batch sizes, NULL importances and
 *     refusals, with and without prefetching;
 *   - snapshots: layout, round trips byte-identical, a loaded filter
 *     continues as the saved one; every rejection with its status;
 *   - clear, statistics, histogram, memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ebb/apbf.h"
#include "ebb/ebb.h"
#include "ebb/stable.h"
#include "stable/stable_internal.h"
#include "support.h"

static char out_sentinel;
#define OUT_SENTINEL ((ebb_stable *)(void *)&out_sentinel)

/* Frame and parameter-block offsets (docs/format.md, family 4). */
enum {
    OFF_VERSION = 4,
    OFF_FAMILY = 6,
    OFF_PARAM_LEN = 12,
    OFF_TOTAL = 16,
    OFF_SEED = 24,
    OFF_PARAMS = 32,
    P_CELLS = 0,
    P_BITS = 8,
    P_K = 12,
    P_P = 16,
    P_VARIANT = 20,
    P_DRAW = 24,
    P_POLICY = 28,
    P_LOW = 32,
    P_HIGH = 40,
    P_THRESHOLD = 48,
    P_INSERTIONS = 56,
    P_CLAMPED = 64,
    P_REFUSED = 72,
    P_DECREMENTS = 80,
    P_GAVE_UP = 88,
    P_RNG = 96,
    PARAM_LEN = 128,
    OFF_PAYLOAD = OFF_PARAMS + PARAM_LEN,
    FAMILY_STABLE = 4
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static ebb_stable_params shape(uint64_t m, uint32_t d, uint32_t k, uint32_t p,
                               ebb_stable_variant variant,
                               ebb_stable_draw draw) {
    ebb_stable_params params;
    assert_int_equal(ebb_stable_params_init(m, d, k, p, &params), EBB_OK);
    params.variant = variant;
    params.draw = draw;
    return params;
}

static ebb_stable *create_or_fail(const ebb_stable_params *params,
                                  uint64_t seed) {
    ebb_stable *f = NULL;
    assert_int_equal(ebb_stable_create(params, seed, &f), EBB_OK);
    assert_non_null(f);
    return f;
}

static ebb_hash128 key_hash(const ebb_stable *f, uint32_t stream,
                            uint64_t index) {
    support_key key = support_key_make(stream, index);
    return ebb_hash(key.bytes, sizeof key.bytes, f->seed);
}

static bool tad(ebb_stable *f, uint32_t stream, uint64_t index, double imp) {
    support_key key = support_key_make(stream, index);
    bool seen = false;
    assert_int_equal(ebb_stable_test_and_add(f, key.bytes, sizeof key.bytes,
                                             imp, &seen),
                     EBB_OK);
    return seen;
}

static void fill_cells(ebb_stable *f, uint32_t value) {
    for (uint64_t i = 0; i < f->cells.count; i++)
        ebb_cells_set(&f->cells, i, value);
}

typedef support_snap snap;

static snap snap_save(const ebb_stable *f) {
    snap s = support_snap_alloc(ebb_stable_snapshot_size(f));
    size_t written = 0;
    assert_int_equal(ebb_stable_save(f, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

static void assert_same_state(const ebb_stable *a, const ebb_stable *b) {
    snap x = snap_save(a), y = snap_save(b);
    support_snap_assert_same(&x, &y);
}

static uint64_t get_at(const snap *s, size_t offset, size_t width) {
    return support_get_le(s->bytes + offset, width);
}


/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static void expect_create_refused(const ebb_stable_params *params,
                                  const char *what) {
    ebb_stable *out = OUT_SENTINEL;
    uint64_t calls = support_alloc_calls();
    ebb_status st = ebb_stable_create(params, 1, &out);
    CHECK(st == EBB_EINVAL, "create (%s) = %d, want EBB_EINVAL", what, (int)st);
    CHECK(out == OUT_SENTINEL, "create (%s) wrote *out", what);
    CHECK(support_alloc_calls() == calls, "create (%s) allocated", what);
}

static void create_refuses_every_invalid_field(void **state) {
    (void)state;
    ebb_stable_params good = shape(100, 3, 4, 10, EBB_STABLE_IBF_MC,
                                   EBB_STABLE_DRAW_INDEPENDENT);
    ebb_stable_params p;
    ebb_stable *out = OUT_SENTINEL;
    assert_int_equal(ebb_stable_create(NULL, 1, &out), EBB_EINVAL);
    assert_ptr_equal(out, OUT_SENTINEL);
    assert_int_equal(ebb_stable_create(&good, 1, NULL), EBB_EINVAL);
#define REFUSE(field, value)                                                   \
    do {                                                                       \
        p = good;                                                              \
        p.field = value;                                                       \
        expect_create_refused(&p, #field " = " #value);                        \
    } while (0)
    REFUSE(cells, 0);
    REFUSE(cells, EBB_STABLE_MAX_CELLS + 1);
    REFUSE(cell_bits, 0);
    REFUSE(cell_bits, EBB_STABLE_MAX_CELL_BITS + 1);
    REFUSE(k, 0);
    REFUSE(k, EBB_STABLE_MAX_K + 1);
    REFUSE(p, 101);
    REFUSE(variant, (ebb_stable_variant)4);
    REFUSE(draw, (ebb_stable_draw)2);
    REFUSE(importance.low, NAN);
    REFUSE(importance.low, 1.0);
    REFUSE(importance.high, INFINITY);
    REFUSE(importance.threshold, NAN);
    REFUSE(importance.policy, (ebb_stable_range_policy)2);
#undef REFUSE
    assert_int_equal(support_alloc_live_count(), 0);
}

/* Allocation n fails, for every n until creation needs no more. */
static void create_survives_allocation_failure(void **state) {
    (void)state;
    const ebb_stable_params shapes[] = {
        shape(1000, 3, 5, 10, EBB_STABLE_PLAIN, EBB_STABLE_DRAW_CONSECUTIVE),
        shape(1000, 3, 5, 40, EBB_STABLE_IBF_MC, EBB_STABLE_DRAW_INDEPENDENT),
        shape(16, 2, 2, 12, EBB_STABLE_PLAIN, EBB_STABLE_DRAW_INDEPENDENT),
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        uint64_t n;
        for (n = 1;; n++) {
            ebb_stable *out = OUT_SENTINEL;
            support_alloc_fail_nth(n, false);
            ebb_status st = ebb_stable_create(&shapes[s], 3, &out);
            support_alloc_fail_nth(0, false);
            if (st == EBB_OK) {
                ebb_stable_destroy(out);
                break;
            }
            CHECK(st == EBB_ENOMEM, "shape %zu, failure %llu: %d", s,
                  (unsigned long long)n, (int)st);
            CHECK(out == OUT_SENTINEL, "shape %zu: *out written", s);
            CHECK(support_alloc_live_count() == 0, "shape %zu: leak at %llu",
                  s, (unsigned long long)n);
        }
        CHECK(n >= 3 - (s == 0), "shape %zu: only %llu allocations", s,
              (unsigned long long)n);
    }
}

static void memory_is_what_was_allocated(void **state) {
    (void)state;
    const ebb_stable_params shapes[] = {
        shape(12345, 3, 5, 10, EBB_STABLE_PLAIN, EBB_STABLE_DRAW_CONSECUTIVE),
        shape(1000, 5, 5, 40, EBB_STABLE_IBF_MC, EBB_STABLE_DRAW_INDEPENDENT),
        shape(64, 16, 3, 60, EBB_STABLE_IBF_2C, EBB_STABLE_DRAW_INDEPENDENT),
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ebb_stable *f = create_or_fail(&shapes[s], 1);
        CHECK(ebb_stable_memory(f) == support_alloc_live_bytes(),
              "shape %zu: memory %zu, allocated %llu", s,
              ebb_stable_memory(f),
              (unsigned long long)support_alloc_live_bytes());
        CHECK(f->cells.word_count * 8 ==
                  ebb_stable_cell_bytes(shapes[s].cells, shapes[s].cell_bits),
              "shape %zu: cell bytes", s);
        assert_int_equal(ebb_stable_get_params(f)->k, shapes[s].k);
        ebb_stable_destroy(f);
    }
    ebb_stable_destroy(NULL);
}

/* ------------------------------------------------------------------------ */
/* Update rules                                                             */
/* ------------------------------------------------------------------------ */

/* The K cells of an item, distinct, in *n. */
static void cells_of(const ebb_stable *f, ebb_hash128 h, uint64_t *out,
                     uint32_t *n) {
    uint64_t pos[EBB_STABLE_MAX_K];
    stable_positions(f, h, pos);
    *n = 0;
    for (uint32_t j = 0; j < f->k; j++) {
        bool repeat = false;
        for (uint32_t i = 0; i < *n; i++)
            repeat |= out[i] == pos[j];
        if (!repeat)
            out[(*n)++] = pos[j];
    }
}

static bool among(const uint64_t *cells, uint32_t n, uint64_t c) {
    for (uint32_t i = 0; i < n; i++)
        if (cells[i] == c)
            return true;
    return false;
}

/* One item added with P = 0 (no decrements) onto cells all at `before`:
 * its cells become `want`, the others stay. */
static void expect_sets(ebb_stable *f, uint32_t before, double imp,
                        uint32_t want, uint64_t index) {
    uint64_t cells[EBB_STABLE_MAX_K];
    uint32_t n;
    ebb_hash128 h = key_hash(f, KEYS_INSERTED, index);
    fill_cells(f, before);
    cells_of(f, h, cells, &n);
    assert_int_equal(ebb_stable_add_hash(f, h, imp), EBB_OK);
    for (uint64_t c = 0; c < f->cells.count; c++) {
        uint32_t v = ebb_cells_get(&f->cells, c);
        uint32_t expected = among(cells, n, c) ? want : before;
        CHECK(v == expected, "cell %llu = %u, want %u (before %u, imp %g)",
              (unsigned long long)c, v, expected, before, imp);
    }
}

static void plain_sets_max(void **state) {
    (void)state;
    ebb_stable_params p = shape(200, 3, 4, 0, EBB_STABLE_PLAIN,
                                EBB_STABLE_DRAW_CONSECUTIVE);
    ebb_stable *f = create_or_fail(&p, 5);
    for (uint32_t before = 0; before <= 7; before++)
        expect_sets(f, before, 0.0, 7, before);
    /* PLAIN ignores the importance, even out of range, but refuses NaN. */
    expect_sets(f, 2, 1e300, 7, 99);
    assert_int_equal(ebb_stable_add(f, "x", 1, NAN), EBB_EINVAL);
    ebb_stable_stats st;
    ebb_stable_get_stats(f, &st);
    assert_int_equal(st.refused, 1);
    assert_int_equal(st.clamped, 0);
    assert_int_equal(st.insertions, 9);
    ebb_stable_destroy(f);
}

static void ibf_2c_sets_max_or_half_and_never_lowers(void **state) {
    (void)state;
    ebb_stable_params p = shape(200, 3, 4, 0, EBB_STABLE_IBF_2C,
                                EBB_STABLE_DRAW_CONSECUTIVE);
    p.importance = (ebb_stable_importance){0.0, 10.0, 5.0, EBB_STABLE_CLAMP};
    ebb_stable *f = create_or_fail(&p, 6);
    assert_int_equal(ebb_stable_half_level(3), 4);
    for (uint32_t before = 0; before <= 7; before++) {
        expect_sets(f, before, 9.0, 7, before);              /* important */
        expect_sets(f, before, 5.0, before > 4 ? before : 4, /* not: Half */
                    100 + before);
    }
    /* Out of range: clamped to the range and counted. */
    expect_sets(f, 0, 50.0, 7, 200);
    expect_sets(f, 0, -3.0, 4, 201);
    ebb_stable_stats st;
    ebb_stable_get_stats(f, &st);
    assert_int_equal(st.clamped, 2);
    ebb_stable_destroy(f);
}

static void ibf_mc_sets_max_of_cell_and_level(void **state) {
    (void)state;
    ebb_stable_params p = shape(300, 3, 5, 0, EBB_STABLE_IBF_MC,
                                EBB_STABLE_DRAW_INDEPENDENT);
    p.importance = (ebb_stable_importance){0.0, 6.0, 0.5, EBB_STABLE_REFUSE};
    ebb_stable *f = create_or_fail(&p, 7);
    uint64_t index = 0;
    for (uint32_t before = 0; before <= 7; before++)
        for (uint32_t level = 1; level <= 7; level++)
            expect_sets(f, before, (double)(level - 1), /* level = 1 + imp */
                        before > level ? before : level, index++);
    /* REFUSE: out of range and NaN change nothing but the counter. */
    fill_cells(f, 3);
    snap before = snap_save(f);
    bool seen = true;
    assert_int_equal(ebb_stable_add(f, "k", 1, 6.5), EBB_EINVAL);
    assert_int_equal(ebb_stable_test_and_add(f, "k", 1, NAN, &seen),
                     EBB_EINVAL);
    assert_true(seen); /* the query's answer: every cell is 3 */
    ebb_stable_stats st;
    ebb_stable_get_stats(f, &st);
    assert_int_equal(st.refused, 2);
    snap after = snap_save(f);
    /* Only the refused counter differs. */
    support_put_le(after.bytes + OFF_PARAMS + P_REFUSED, 8,
                   get_at(&before, OFF_PARAMS + P_REFUSED, 8));
    support_snap_forge_checksum(&after);
    assert_memory_equal(before.bytes, after.bytes, before.size);
    support_snap_free(&before);
    support_snap_free(&after);
    ebb_stable_destroy(f);
}

/* IBF_H: 300 cells at 1, 300 at 6, 400 at 0; one decrement at a time. A
 * cell is picked with probability proportional to 1 / value, so a 1 with
 * probability (300 / 1) / (300 / 1 + 300 / 6) = 6 / 7. A draw is accepted
 * with probability 0.35, so 64 draws all fail with probability 1e-12. */
static void ibf_h_prefers_low_cells_and_skips_zeros(void **state) {
    (void)state;
    ebb_stable_params p = shape(1000, 3, 1, 1, EBB_STABLE_IBF_H,
                                EBB_STABLE_DRAW_CONSECUTIVE);
    ebb_stable *f = create_or_fail(&p, 8);
    const uint32_t trials = 4000;
    uint32_t ones = 0, sixes = 0;
    for (uint32_t t = 0; t < trials; t++) {
        fill_cells(f, 0);
        for (uint64_t c = 0; c < 1000; c++)
            ebb_cells_set(&f->cells, c, c % 10 < 3 ? 1 : c % 10 < 6 ? 6 : 0);
        assert_int_equal(ebb_stable_decrement_weighted(f), 1);
        uint64_t hist[8] = {0};
        assert_int_equal(ebb_cells_histogram(&f->cells, hist), EBB_OK);
        CHECK(hist[0] + hist[1] + hist[5] + hist[6] == 1000,
              "trial %u: a value other than 0, 1, 5, 6 appeared", t);
        if (hist[1] == 299) {
            assert_int_equal(hist[0], 401);
            ones++;
        } else {
            assert_int_equal(hist[5], 1);
            assert_int_equal(hist[0], 400); /* a zero is never decremented */
            sixes++;
        }
    }
    assert_int_equal(ones + sixes, trials);
    double expect = 6.0 / 7.0;
    double sd = sqrt(expect * (1 - expect) / trials);
    double got = (double)ones / trials;
    CHECK(fabs(got - expect) <= 3 * sd,
          "1-cells picked %.4f, want %.4f +- %.4f", got, expect, 3 * sd);

    /* An empty filter: every decrement is given up after its draws. */
    ebb_stable_clear(f);
    ebb_stable_params p2 = shape(1000, 3, 2, 5, EBB_STABLE_IBF_H,
                                 EBB_STABLE_DRAW_INDEPENDENT);
    ebb_stable *g = create_or_fail(&p2, 9);
    assert_int_equal(ebb_stable_add(g, "a", 1, 1.0), EBB_OK);
    ebb_stable_stats st;
    ebb_stable_get_stats(g, &st);
    assert_int_equal(st.h_gave_up, 5);
    assert_int_equal(st.decrements, 0);
    /* With every cell at Max = 7 nothing is given up (1/7 per draw, 64
     * draws: given up with probability (6/7)^64 < 6e-5 per decrement). */
    fill_cells(g, 7);
    for (int i = 0; i < 20; i++)
        assert_int_equal(ebb_stable_add(g, "b", 1, 1.0), EBB_OK);
    ebb_stable_get_stats(g, &st);
    assert_int_equal(st.h_gave_up, 5);
    assert_int_equal(st.decrements, 100);
    ebb_stable_destroy(g);
    ebb_stable_destroy(f);
}

/* IBF_H's decrements against a model of the documented sampler, draw for
 * draw (the generator's state compared after each insertion): a uniform
 * cell, a 0 rejected, a value v > 1 kept only when below(v) is 0, at most
 * EBB_STABLE_H_MAX_DRAWS cells per decrement, then given up. Patterns: all
 * zeros (every decrement given up after exactly the maximum of draws),
 * all 2 (the coin of the smallest v that has one), and a mix. */
static void ibf_h_draws_match_model(void **state) {
    (void)state;
    const uint64_t m = 50;
    ebb_stable_params p = shape(m, 3, 1, 3, EBB_STABLE_IBF_H,
                                EBB_STABLE_DRAW_INDEPENDENT);
    ebb_stable *f = create_or_fail(&p, 31);
    for (int pattern = 0; pattern < 3; pattern++) {
        for (int t = 0; t < 50; t++) {
            uint32_t ref[50];
            for (uint64_t c = 0; c < m; c++) {
                ref[c] = pattern == 0 ? 0 : pattern == 1 ? 2 : (c * 7 + t) % 8;
                ebb_cells_set(&f->cells, c, ref[c]);
            }
            ebb_rng copy = f->rng;
            uint64_t gave_up = f->h_gave_up, done = 0;
            for (uint32_t a = 0; a < p.p; a++) {
                bool ok = false;
                for (uint32_t d = 0; d < EBB_STABLE_H_MAX_DRAWS && !ok; d++) {
                    uint64_t i = ebb_rng_below(&copy, m);
                    if (ref[i] == 0 ||
                        (ref[i] > 1 && ebb_rng_below(&copy, ref[i]) != 0))
                        continue;
                    ref[i]--;
                    ok = true;
                }
                done += ok;
                gave_up += !ok;
            }
            assert_int_equal(ebb_stable_decrement_weighted(f), done);
            assert_int_equal(f->h_gave_up, gave_up);
            assert_memory_equal(&copy, &f->rng, sizeof copy);
            for (uint64_t c = 0; c < m; c++)
                CHECK(ebb_cells_get(&f->cells, c) == ref[c],
                      "pattern %d trial %d: cell %llu = %u, want %u", pattern,
                      t, (unsigned long long)c, ebb_cells_get(&f->cells, c),
                      ref[c]);
        }
    }
    ebb_stable_destroy(f);
}

/* IBF_MC's mapping rounds to the nearest level, ties away from zero:
 * [0, 12] onto 1..7 is level 1 + round(imp / 2). */
static void ibf_mc_levels_round_to_nearest(void **state) {
    (void)state;
    ebb_stable_params p = shape(64, 3, 2, 1, EBB_STABLE_IBF_MC,
                                EBB_STABLE_DRAW_CONSECUTIVE);
    p.importance = (ebb_stable_importance){0.0, 12.0, 6.0, EBB_STABLE_CLAMP};
    const struct {
        double imp;
        uint32_t level;
    } cases[] = {{0.0, 1}, {0.9, 1}, {1.0, 2}, {2.9, 2}, {3.0, 3},
                 {6.0, 4}, {10.9, 6}, {11.0, 7}, {12.0, 7}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t level = 0;
        assert_int_equal(ebb_stable_level(&p, cases[c].imp, &level, NULL),
                         EBB_OK);
        CHECK(level == cases[c].level, "importance %g: level %u, want %u",
              cases[c].imp, level, cases[c].level);
    }
}

/* Cells all at Max, P decrements: stats.decrements grows by P per
 * insertion, and (by calling the decrement step alone) exactly P distinct
 * cells lose exactly 1. */
static void p_decrements_per_insertion(void **state) {
    (void)state;
    struct {
        uint64_t m;
        uint32_t p;
        ebb_stable_draw draw;
        stable_decrement_form form;
    } cases[] = {
        {64, 10, EBB_STABLE_DRAW_CONSECUTIVE, STABLE_DECREMENT_RUN},
        {64, 64, EBB_STABLE_DRAW_CONSECUTIVE, STABLE_DECREMENT_RUN},
        {64, 10, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_FEW},
        {64, 16, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_FEW},
        {64, 17, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_MANY},
        {64, 32, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_MANY},
        {64, 33, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_ALL_BUT},
        {64, 64, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_ALL_BUT},
        {5, 3, EBB_STABLE_DRAW_INDEPENDENT, STABLE_DECREMENT_ALL_BUT},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ebb_stable_params p = shape(cases[c].m, 4, 3, cases[c].p,
                                    EBB_STABLE_PLAIN, cases[c].draw);
        ebb_stable *f = create_or_fail(&p, 10 + c);
        uint64_t hits[64] = {0};
        const uint32_t trials = 2000;
        CHECK(f->decrement == cases[c].form, "case %zu: form %d", c,
              (int)f->decrement);
        for (uint32_t t = 0; t < trials; t++) {
            fill_cells(f, 15);
            stable_make_decrements(f);
            uint32_t lowered = 0;
            for (uint64_t i = 0; i < f->cells.count; i++) {
                uint32_t v = ebb_cells_get(&f->cells, i);
                CHECK(v == 15 || v == 14, "case %zu: cell %llu = %u", c,
                      (unsigned long long)i, v);
                lowered += v == 14;
                hits[i] += v == 14;
            }
            CHECK(lowered == cases[c].p, "case %zu: %u cells decremented", c,
                  lowered);
        }
        /* Each cell is hit with probability P/m: within 5 sd of it. */
        double q = (double)cases[c].p / (double)cases[c].m;
        double sd = sqrt(trials * q * (1 - q));
        for (uint64_t i = 0; i < cases[c].m; i++)
            CHECK(fabs((double)hits[i] - trials * q) <= 5 * sd + 1e-9,
                  "case %zu: cell %llu hit %llu times, want %.0f +- %.0f", c,
                  (unsigned long long)i, (unsigned long long)hits[i],
                  trials * q, 5 * sd);
        /* Through add: the counter grows by P on a full filter. */
        ebb_stable_clear(f);
        fill_cells(f, 15);
        assert_int_equal(ebb_stable_add(f, "x", 1, 0.0), EBB_OK);
        ebb_stable_stats st;
        ebb_stable_get_stats(f, &st);
        CHECK(st.decrements == cases[c].p, "case %zu: decrements %llu", c,
              (unsigned long long)st.decrements);
        ebb_stable_destroy(f);
    }
}

/* The consecutive run: the start is the generator's next draw below m;
 * the cells start .. start + P - 1 mod m lose 1 (0 stays 0). Checked
 * against a cell-by-cell reference for every width, on random values,
 * for runs that wrap and runs longer than a word. */
static void consecutive_run_matches_reference_and_wraps(void **state) {
    (void)state;
    uint64_t rs = 77;
    const uint64_t ms[] = {1, 7, 64, 100, 257};
    uint32_t wrapped = 0;
    for (uint32_t d = 1; d <= 16; d++) {
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
            uint64_t m = ms[mi];
            uint32_t ps[] = {1, 3, 10, (uint32_t)(m / 2), (uint32_t)m};
            for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
                if (ps[pi] == 0 || ps[pi] > m)
                    continue;
                ebb_stable_params p = shape(m, d, 2, ps[pi], EBB_STABLE_PLAIN,
                                            EBB_STABLE_DRAW_CONSECUTIVE);
                ebb_stable *f = create_or_fail(&p, d * 1000 + m + pi);
                uint32_t *ref = malloc(m * sizeof *ref);
                assert_non_null(ref);
                for (int t = 0; t < 20; t++) {
                    uint64_t expected_done = 0;
                    for (uint64_t i = 0; i < m; i++) {
                        uint64_t r = support_splitmix64(&rs);
                        /* a third of the cells 0, the rest any value */
                        ref[i] = r % 3 == 0
                                     ? 0
                                     : (uint32_t)(r >> 32) & f->cells.max;
                        ebb_cells_set(&f->cells, i, ref[i]);
                    }
                    ebb_rng copy = f->rng;
                    uint64_t start = ebb_rng_below(&copy, m);
                    wrapped += start + ps[pi] > m;
                    for (uint32_t j = 0; j < ps[pi]; j++) {
                        uint64_t c = (start + j) % m;
                        if (ref[c] > 0) {
                            ref[c]--;
                            expected_done++;
                        }
                    }
                    uint64_t before = f->decrements;
                    stable_make_decrements(f);
                    CHECK(f->decrements - before == expected_done,
                          "d %u m %llu P %u: %llu decrements, want %llu", d,
                          (unsigned long long)m, ps[pi],
                          (unsigned long long)(f->decrements - before),
                          (unsigned long long)expected_done);
                    for (uint64_t i = 0; i < m; i++)
                        CHECK(ebb_cells_get(&f->cells, i) == ref[i],
                              "d %u m %llu P %u start %llu: cell %llu = %u, "
                              "want %u", d, (unsigned long long)m, ps[pi],
                              (unsigned long long)start, (unsigned long long)i,
                              ebb_cells_get(&f->cells, i), ref[i]);
                    assert_memory_equal(&copy, &f->rng, sizeof copy);
                    /* bits past m d stay clear */
                    uint64_t tail = ebb_bits_tail_mask(m * d);
                    uint64_t last = f->cells.words[f->cells.word_count - 1];
                    assert_int_equal(last & tail, 0);
                }
                free(ref);
                ebb_stable_destroy(f);
            }
        }
    }
    CHECK(wrapped > 100, "only %u runs wrapped", wrapped);
}

/* ------------------------------------------------------------------------ */
/* Query before update, guarantees                                          */
/* ------------------------------------------------------------------------ */

static void query_comes_before_update(void **state) {
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        for (int draw = 0; draw < 2; draw++) {
            /* A small filter that forgets fast: P = 20 of 64 cells. */
            ebb_stable_params p =
                shape(64, 3, 3, 20, (ebb_stable_variant)variant,
                      (ebb_stable_draw)draw);
            ebb_stable *f = create_or_fail(&p, 20 + variant * 2 + draw);
            uint64_t fresh = 0;
            for (uint64_t i = 0; i < 300; i++) {
                ebb_stable_clear(f);
                /* never its own duplicate, seen the second time */
                assert_false(tad(f, KEYS_INSERTED, i, 1.0));
                support_key key = support_key_make(KEYS_INSERTED, i);
                assert_true(ebb_stable_contains(f, key.bytes, 8));
                assert_true(tad(f, KEYS_INSERTED, i, 1.0));
                /* A duplicate at gap <= Max is always seen (not IBF_H:
                 * it may decrement a cell more than once an insertion). */
                if (variant == EBB_STABLE_IBF_H)
                    continue;
                for (uint32_t gap = 1; gap <= 7; gap++) {
                    for (uint32_t g = 1; g < gap; g++)
                        tad(f, KEYS_FRESH, fresh++, 1.0);
                    CHECK(tad(f, KEYS_INSERTED, i, 1.0),
                          "variant %d draw %d: duplicate at gap %u missed",
                          variant, draw, gap);
                }
            }
            ebb_stable_destroy(f);
        }
    }
}

/* test_and_add against a cell-by-cell model of the papers' order: query
 * the K cells, decrement the run (the generator's next start), set
 * max(cell, level). Small m makes the run meet or wrap past the K cells
 * often, so both of stable_test_and_apply's paths are checked, at a width
 * that divides 64 and two that straddle words, with levels below Max.
 * "Decisive" items have a K cell at 1 inside the run: reading it after the
 * decrement would answer wrongly, so a wrong choice of path fails here. */
static void test_and_add_matches_model(void **state) {
    (void)state;
    const uint32_t widths[] = {2, 4, 5};
    uint32_t met = 0, apart = 0, decisive = 0;
    for (size_t wi = 0; wi < 3; wi++) {
        for (int variant = 0; variant < 3; variant++) {
            const uint64_t m = 64;
            ebb_stable_params p = shape(m, widths[wi], 4, 6,
                                        (ebb_stable_variant)variant,
                                        EBB_STABLE_DRAW_CONSECUTIVE);
            p.importance = (ebb_stable_importance){0.0, 10.0, 5.0,
                                                   EBB_STABLE_CLAMP};
            ebb_stable *f = create_or_fail(&p, 300 + wi * 3 + variant);
            uint32_t ref[64] = {0};
            uint64_t decrements = 0;
            for (uint64_t i = 0; i < 3000; i++) {
                double imp = (double)(i % 11);
                ebb_hash128 h = key_hash(f, KEYS_INSERTED, i % 400);
                uint64_t pos[EBB_STABLE_MAX_K];
                uint32_t level;
                bool want = true, seen, meets = false;
                stable_positions(f, h, pos);
                assert_int_equal(ebb_stable_level(&p, imp, &level, NULL),
                                 EBB_OK);
                for (uint32_t j = 0; j < f->k; j++)
                    want &= ref[pos[j]] != 0;
                ebb_rng copy = f->rng;
                uint64_t start = ebb_rng_below(&copy, m);
                for (uint32_t j = 0; j < p.p; j++) {
                    uint64_t c = (start + j) % m;
                    bool mine = false;
                    for (uint32_t q = 0; q < f->k; q++)
                        mine |= pos[q] == c;
                    meets |= mine;
                    decisive += mine && ref[c] == 1;
                    decrements += ref[c] > 0;
                    ref[c] -= ref[c] > 0;
                }
                for (uint32_t j = 0; j < f->k; j++)
                    ref[pos[j]] = ref[pos[j]] > level ? ref[pos[j]] : level;
                met += meets;
                apart += !meets;
                assert_int_equal(ebb_stable_test_and_add_hash(f, h, imp, &seen),
                                 EBB_OK);
                CHECK(seen == want, "d %u variant %d item %llu: seen %d",
                      widths[wi], variant, (unsigned long long)i, seen);
                for (uint64_t c = 0; c < m; c++)
                    CHECK(ebb_cells_get(&f->cells, c) == ref[c],
                          "d %u variant %d item %llu: cell %llu = %u, want %u",
                          widths[wi], variant, (unsigned long long)i,
                          (unsigned long long)c, ebb_cells_get(&f->cells, c),
                          ref[c]);
            }
            assert_int_equal(f->decrements, decrements);
            ebb_stable_destroy(f);
        }
    }
    /* Both paths taken often: the run meets a K cell for 1 - (1 - P/m)^K
     * = 33% of the items; wraps (5 starts of 64) hide some of them. */
    CHECK(met > 5000 && apart > 10000 && decisive > 200,
          "met %u, apart %u, decisive %u", met, apart, decisive);
}

/* ------------------------------------------------------------------------ */
/* Determinism, batches                                                     */
/* ------------------------------------------------------------------------ */

static void same_seed_same_state(void **state) {
    (void)state;
    ebb_stable_params p = shape(5000, 3, 5, 10, EBB_STABLE_IBF_H,
                                EBB_STABLE_DRAW_INDEPENDENT);
    p.importance = (ebb_stable_importance){1.0, 50.0, 25.0, EBB_STABLE_CLAMP};
    ebb_stable *a = create_or_fail(&p, 42);
    ebb_stable *b = create_or_fail(&p, 42);
    ebb_stable *c = create_or_fail(&p, 43);
    for (uint64_t i = 0; i < 3000; i++) {
        double imp = (double)(i % 60);
        bool sa = tad(a, KEYS_INSERTED, i % 2000, imp);
        bool sb = tad(b, KEYS_INSERTED, i % 2000, imp);
        tad(c, KEYS_INSERTED, i % 2000, imp);
        assert_int_equal(sa, sb);
    }
    assert_same_state(a, b);
    snap x = snap_save(a), y = snap_save(c);
    assert_int_equal(x.size, y.size);
    CHECK(memcmp(x.bytes + OFF_PAYLOAD, y.bytes + OFF_PAYLOAD,
                 x.size - OFF_PAYLOAD - 8) != 0,
          "different seeds left the same cells");
    support_snap_free(&x);
    support_snap_free(&y);
    ebb_stable_destroy(a);
    ebb_stable_destroy(b);
    ebb_stable_destroy(c);
}

/* Importance of item i in the batch tests: in range, out of range, NaN. */
static double batch_importance(uint64_t i) {
    switch (i % 13) {
    case 3:
        return NAN;
    case 7:
        return 11.0; /* above high: refused or clamped */
    default:
        return (double)(i % 11);
    }
}

/* The single calls a batch must equal: a refused item is not written, and
 * test_and_add still answers its query. */
static void singles(ebb_stable *f, const ebb_hash128 *h, const double *imps,
                    size_t n, bool query, bool *seen, ebb_status *status) {
    *status = EBB_OK;
    for (size_t i = 0; i < n; i++) {
        double imp = imps == NULL ? f->params.importance.high : imps[i];
        ebb_status st;
        bool hit = false;
        if (query)
            st = ebb_stable_test_and_add_hash(f, h[i], imp, &hit);
        else
            st = ebb_stable_add_hash(f, h[i], imp);
        if (st != EBB_OK)
            *status = st;
        seen[i] = hit;
    }
}

static void batch_case(const ebb_stable_params *p, uint64_t seed,
                       uint64_t items, uint64_t *rs) {
    ebb_stable *single = create_or_fail(p, seed);
    ebb_stable *batch = create_or_fail(p, seed);
    ebb_hash128 *h = malloc(4096 * sizeof *h);
    double *imps = malloc(4096 * sizeof *imps);
    bool *want = malloc(4096), *got = malloc(4096);
    assert_true(h && imps && want && got);
    uint64_t done = 0;
    int round = 0;
    while (done < items) {
        size_t n = (size_t)(support_splitmix64(rs) % 700);
        int mode = round++ % 4; /* add, test_and_add, contains, NULL imps */
        for (size_t i = 0; i < n; i++) {
            uint64_t index = (done + i) % (items / 2 + 1);
            h[i] = key_hash(single, KEYS_INSERTED, index);
            imps[i] = batch_importance(done + i);
        }
        const double *use = mode == 3 ? NULL : imps;
        if (mode == 2) {
            size_t a = 0, b;
            for (size_t i = 0; i < n; i++) {
                want[i] = ebb_stable_contains_hash(single, h[i]);
                a += want[i];
            }
            b = ebb_stable_contains_batch(batch, h, n, got);
            assert_int_equal(a, b);
            assert_int_equal(ebb_stable_contains_batch(batch, h, n, NULL), a);
        } else {
            ebb_status want_st, got_st;
            size_t count = 0, want_count = 0;
            bool query = mode != 0;
            singles(single, h, use, n, query, want, &want_st);
            if (query)
                got_st = ebb_stable_test_and_add_batch(batch, h, use, n, got,
                                                       &count);
            else
                got_st = ebb_stable_add_batch(batch, h, use, n);
            assert_int_equal(got_st, want_st);
            for (size_t i = 0; query && i < n; i++)
                want_count += want[i];
            if (query)
                assert_int_equal(count, want_count);
            else
                memset(got, 0, n), memset(want, 0, n);
        }
        for (size_t i = 0; i < n; i++)
            CHECK(got[i] == want[i], "item %llu of batch (mode %d): %d vs %d",
                  (unsigned long long)(done + i), mode, got[i], want[i]);
        done += n;
    }
    assert_same_state(single, batch);
    free(h);
    free(imps);
    free(want);
    free(got);
    ebb_stable_destroy(single);
    ebb_stable_destroy(batch);
}

static void batches_equal_single_calls(void **state) {
    (void)state;
    uint64_t rs = 2024;
    for (int variant = 0; variant < 4; variant++) {
        for (int draw = 0; draw < 2; draw++) {
            for (int policy = 0; policy < 2; policy++) {
                const uint32_t ps[] = {0, 10, 30, 700};
                for (size_t pi = 0; pi < 4; pi++) {
                    ebb_stable_params p = shape(1000, 3, 4, ps[pi],
                                                (ebb_stable_variant)variant,
                                                (ebb_stable_draw)draw);
                    p.importance = (ebb_stable_importance){
                        0.0, 10.0, 5.0, (ebb_stable_range_policy)policy};
                    batch_case(&p, 100 + pi, 3000, &rs);
                }
            }
        }
    }
    /* Large enough for the prefetching path (2 MiB of cells). */
    for (int draw = 0; draw < 2; draw++) {
        ebb_stable_params p = shape(UINT64_C(1) << 23, 2, 5, 10,
                                    EBB_STABLE_IBF_MC, (ebb_stable_draw)draw);
        p.importance = (ebb_stable_importance){0.0, 10.0, 5.0,
                                               EBB_STABLE_REFUSE};
        batch_case(&p, 7, 20000, &rs);
    }
}

static void hash_batch_is_the_hash(void **state) {
    (void)state;
    ebb_stable_params p = shape(100, 3, 3, 3, EBB_STABLE_PLAIN,
                                EBB_STABLE_DRAW_CONSECUTIVE);
    ebb_stable *f = create_or_fail(&p, 99);
    support_key keys[20];
    const void *ptrs[20];
    size_t lens[20];
    ebb_hash128 out[20];
    for (int i = 0; i < 20; i++) {
        keys[i] = support_key_make(KEYS_OTHER, (uint64_t)i);
        ptrs[i] = keys[i].bytes;
        lens[i] = (size_t)i % 9;
    }
    ebb_stable_hash_batch(f, ptrs, lens, 20, out);
    for (int i = 0; i < 20; i++) {
        ebb_hash128 h = ebb_hash(ptrs[i], lens[i], 99);
        assert_true(h.lo == out[i].lo && h.hi == out[i].hi);
    }
    ebb_stable_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Statistics, clear                                                        */
/* ------------------------------------------------------------------------ */

static void stats_histogram_and_clear(void **state) {
    (void)state;
    ebb_stable_params p = shape(777, 3, 4, 12, EBB_STABLE_IBF_MC,
                                EBB_STABLE_DRAW_CONSECUTIVE);
    p.importance = (ebb_stable_importance){0.0, 6.0, 3.0, EBB_STABLE_CLAMP};
    ebb_stable *fresh = create_or_fail(&p, 3);
    ebb_stable *f = create_or_fail(&p, 3);
    for (uint64_t i = 0; i < 500; i++)
        tad(f, KEYS_INSERTED, i, (double)(i % 9)); /* 7, 8 clamped */
    uint64_t counts[9];
    memset(counts, 0xFF, sizeof counts);
    assert_int_equal(ebb_stable_histogram(f, counts, 7), EBB_EBUFSIZE);
    assert_true(counts[0] == UINT64_MAX);
    assert_int_equal(ebb_stable_histogram(f, counts, 9), EBB_OK);
    assert_true(counts[8] == UINT64_MAX); /* only Max + 1 entries written */
    uint64_t total = 0, nonzero_mass = 0;
    for (int v = 0; v <= 7; v++) {
        total += counts[v];
        nonzero_mass += counts[v] * (uint64_t)v;
    }
    assert_int_equal(total, 777);
    ebb_stable_stats st;
    ebb_stable_get_stats(f, &st);
    assert_int_equal(st.cells, 777);
    assert_int_equal(st.cell_bits, 3);
    assert_int_equal(st.max_level, 7);
    assert_int_equal(st.insertions, 500);
    assert_int_equal(st.zero_cells, counts[0]);
    assert_true(st.zero_fraction == (double)counts[0] / 777.0);
    assert_int_equal(st.clamped, 500 / 9 * 2 + (500 % 9 > 7));
    assert_int_equal(st.refused, 0);
    assert_int_equal(st.h_gave_up, 0);
    assert_true(st.decrements <= 500 * 12 && st.decrements > 0);
    assert_true(nonzero_mass > 0);

    /* clear: cells and counters 0, the generator goes on. */
    ebb_stable_clear(f);
    ebb_stable_get_stats(f, &st);
    assert_int_equal(st.zero_cells, 777);
    assert_int_equal(st.insertions + st.clamped + st.refused + st.decrements +
                         st.h_gave_up, 0);
    snap a = snap_save(f), b = snap_save(fresh);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.bytes, b.bytes, OFF_PARAMS + P_RNG);
    assert_memory_equal(a.bytes + OFF_PAYLOAD, b.bytes + OFF_PAYLOAD,
                        a.size - OFF_PAYLOAD - 8);
    CHECK(memcmp(a.bytes + OFF_PARAMS + P_RNG, b.bytes + OFF_PARAMS + P_RNG,
                 32) != 0, "clear reset the generator");
    support_snap_free(&a);
    support_snap_free(&b);
    ebb_stable_destroy(f);
    ebb_stable_destroy(fresh);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                */
/* ------------------------------------------------------------------------ */

static ebb_stable *used_filter(ebb_stable_variant variant,
                               ebb_stable_draw draw, uint64_t items) {
    ebb_stable_params p = shape(301, 5, 3, 9, variant, draw);
    p.importance = (ebb_stable_importance){-1.5, 2.25, 0.125,
                                           EBB_STABLE_REFUSE};
    ebb_stable *f = create_or_fail(&p, UINT64_C(0xfeedface12345678));
    for (uint64_t i = 0; i < items; i++) {
        support_key key = support_key_make(KEYS_INSERTED, i % 200);
        bool seen;
        ebb_stable_test_and_add(f, key.bytes, 8, (double)(i % 5) - 1.5, &seen);
    }
    return f;
}

static void snapshot_layout(void **state) {
    (void)state;
    ebb_stable *f = used_filter(EBB_STABLE_IBF_2C, EBB_STABLE_DRAW_INDEPENDENT,
                                400);
    ebb_stable_stats st;
    ebb_stable_get_stats(f, &st);
    snap s = snap_save(f);
    assert_memory_equal(s.bytes, "EBBS", 4);
    assert_int_equal(get_at(&s, OFF_VERSION, 2), 1);
    assert_int_equal(get_at(&s, OFF_FAMILY, 2), FAMILY_STABLE);
    assert_int_equal(get_at(&s, OFF_PARAM_LEN, 4), PARAM_LEN);
    assert_int_equal(get_at(&s, OFF_TOTAL, 8), s.size);
    assert_true(get_at(&s, OFF_SEED, 8) == UINT64_C(0xfeedface12345678));
#define PARAM(off, w) get_at(&s, OFF_PARAMS + (off), (w))
    assert_int_equal(PARAM(P_CELLS, 8), 301);
    assert_int_equal(PARAM(P_BITS, 4), 5);
    assert_int_equal(PARAM(P_K, 4), 3);
    assert_int_equal(PARAM(P_P, 4), 9);
    assert_int_equal(PARAM(P_VARIANT, 4), EBB_STABLE_IBF_2C);
    assert_int_equal(PARAM(P_DRAW, 4), EBB_STABLE_DRAW_INDEPENDENT);
    assert_int_equal(PARAM(P_POLICY, 4), EBB_STABLE_REFUSE);
    assert_true(PARAM(P_LOW, 8) == UINT64_C(0xBFF8000000000000));  /* -1.5 */
    assert_true(PARAM(P_HIGH, 8) == UINT64_C(0x4002000000000000)); /* 2.25 */
    assert_true(PARAM(P_THRESHOLD, 8) == UINT64_C(0x3FC0000000000000));
    assert_int_equal(PARAM(P_INSERTIONS, 8), st.insertions);
    assert_int_equal(PARAM(P_CLAMPED, 8), st.clamped);
    assert_int_equal(PARAM(P_REFUSED, 8), st.refused);
    assert_int_equal(PARAM(P_DECREMENTS, 8), st.decrements);
    assert_int_equal(PARAM(P_GAVE_UP, 8), st.h_gave_up);
    for (int i = 0; i < 4; i++)
        assert_true(PARAM(P_RNG + 8 * i, 8) == f->rng.s[i]);
#undef PARAM
    /* importances -1.5 .. 2.5: 2.5 is above the range and refused */
    assert_int_equal(st.insertions, 320);
    assert_int_equal(st.refused, 80);
    assert_int_equal(s.size, OFF_PAYLOAD + (301 * 5 + 63) / 64 * 8 + 8);
    assert_memory_equal(s.bytes + OFF_PAYLOAD, f->cells.words,
                        f->cells.word_count * 8);
    assert_true(get_at(&s, s.size - 8, 8) == XXH3_64bits(s.bytes, s.size - 8));

    /* A short buffer: EBB_EBUFSIZE, the size needed, nothing written. */
    size_t written = 0;
    memset(s.bytes, 0xA5, s.size);
    assert_int_equal(ebb_stable_save(f, s.bytes, s.size - 1, &written),
                     EBB_EBUFSIZE);
    assert_int_equal(written, s.size);
    for (size_t i = 0; i < s.size; i++)
        assert_int_equal(s.bytes[i], 0xA5);
    assert_int_equal(ebb_stable_save(f, NULL, 0, NULL), EBB_EBUFSIZE);
    support_snap_free(&s);
    ebb_stable_destroy(f);
}

/* Saved mid-stream and loaded, the copy answers and ends exactly as the
 * original, for every variant and draw. */
static void snapshot_round_trip_continues(void **state) {
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        for (int draw = 0; draw < 2; draw++) {
            ebb_stable *f = used_filter((ebb_stable_variant)variant,
                                        (ebb_stable_draw)draw, 700);
            snap s = snap_save(f);
            ebb_stable *g = NULL;
            assert_int_equal(ebb_stable_load(s.bytes, s.size, &g), EBB_OK);
            snap t = snap_save(g);
            assert_int_equal(s.size, t.size);
            assert_memory_equal(s.bytes, t.bytes, s.size);
            assert_int_equal(ebb_stable_memory(g), ebb_stable_memory(f));
            for (uint64_t i = 0; i < 500; i++) {
                double imp = (double)(i % 7) - 2.0;
                support_key key = support_key_make(KEYS_OTHER, i % 150);
                bool a = false, b = false;
                ebb_status sa =
                    ebb_stable_test_and_add(f, key.bytes, 8, imp, &a);
                ebb_status sb =
                    ebb_stable_test_and_add(g, key.bytes, 8, imp, &b);
                assert_int_equal(sa, sb);
                assert_int_equal(a, b);
            }
            assert_same_state(f, g);
            support_snap_free(&s);
            support_snap_free(&t);
            ebb_stable_destroy(f);
            ebb_stable_destroy(g);
        }
    }
}

static void expect_load_fails(const unsigned char *bytes, size_t len,
                              ebb_status want, const char *what,
                              bool header_level) {
    ebb_stable *out = OUT_SENTINEL;
    uint64_t calls = support_alloc_calls();
    ebb_status got = ebb_stable_load(bytes, len, &out);
    CHECK(got == want, "load (%s, %zu bytes) = %d (%s), want %d (%s)", what,
          len, (int)got, ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(out == OUT_SENTINEL, "load (%s) wrote *out on error", what);
    CHECK(support_alloc_live_count() == 0, "load (%s) leaked", what);
    if (header_level)
        CHECK(support_alloc_calls() == calls,
              "load (%s) allocated before rejecting", what);
}

static void expect_forged_fails(const snap *s, size_t offset, size_t width,
                                uint64_t value, const char *what) {
    snap c = {malloc(s->size), s->size};
    assert_non_null(c.bytes);
    memcpy(c.bytes, s->bytes, s->size);
    support_put_le(c.bytes + offset, width, value);
    support_snap_forge_checksum(&c);
    expect_load_fails(c.bytes, c.size, EBB_ECORRUPT, what, true);
    support_snap_free(&c);
}

static uint64_t bits_of(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static void snapshot_rejections(void **state) {
    (void)state;
    ebb_stable *f = used_filter(EBB_STABLE_IBF_MC, EBB_STABLE_DRAW_INDEPENDENT,
                                300);
    snap s = snap_save(f);
    ebb_stable_destroy(f);
    ebb_stable *out = OUT_SENTINEL;

    assert_int_equal(ebb_stable_load(s.bytes, s.size, NULL), EBB_EINVAL);
    assert_int_equal(ebb_stable_load(NULL, 0, &out), EBB_ETRUNCATED);
    assert_ptr_equal(out, OUT_SENTINEL);
    /* Every truncation. */
    for (size_t len = 0; len < s.size; len++) {
        ebb_status want = EBB_ETRUNCATED;
        expect_load_fails(s.bytes, len, want, "truncated", true);
    }
    /* Magic, version, family, checksum, trailing bytes. */
    snap c = {malloc(s.size + 1), s.size};
    assert_non_null(c.bytes);
    memcpy(c.bytes, s.bytes, s.size);
    c.bytes[0] = 'X';
    expect_load_fails(c.bytes, c.size, EBB_EMAGIC, "magic", true);
    memcpy(c.bytes, s.bytes, s.size);
    support_put_le(c.bytes + OFF_VERSION, 2, 2);
    expect_load_fails(c.bytes, c.size, EBB_EVERSION, "version 2", true);
    memcpy(c.bytes, s.bytes, s.size);
    support_put_le(c.bytes + OFF_FAMILY, 2, 3);
    expect_load_fails(c.bytes, c.size, EBB_EFAMILY, "family 3", true);
    for (size_t i = 0; i < s.size; i += 7) {
        memcpy(c.bytes, s.bytes, s.size);
        c.bytes[i] ^= 0x10;
        if (i < 4 || (i >= OFF_VERSION && i < OFF_VERSION + 4) ||
            (i >= OFF_TOTAL && i < OFF_TOTAL + 8))
            continue; /* those fail earlier, tested above and below */
        expect_load_fails(c.bytes, c.size, EBB_ECHECKSUM, "flipped byte", true);
    }
    memcpy(c.bytes, s.bytes, s.size);
    c.bytes[s.size] = 0;
    expect_load_fails(c.bytes, s.size + 1, EBB_ECORRUPT, "trailing byte", true);
    support_snap_free(&c);

    /* An APBF snapshot is another family, and the reverse. */
    ebb_apbf_params ap;
    ebb_apbf *apbf;
    assert_int_equal(ebb_apbf_params_from_klm(2, 1, 64, &ap), EBB_OK);
    assert_int_equal(ebb_apbf_create(&ap, 1, &apbf), EBB_OK);
    unsigned char abytes[256];
    size_t alen = 0;
    assert_int_equal(ebb_apbf_save(apbf, abytes, sizeof abytes, &alen), EBB_OK);
    ebb_apbf_destroy(apbf);
    expect_load_fails(abytes, alen, EBB_EFAMILY, "APBF snapshot", true);
    ebb_apbf *aout = NULL;
    assert_int_equal(ebb_apbf_load(s.bytes, s.size, &aout), EBB_EFAMILY);

    /* Every field out of range, checksum made valid. */
#define FORGE(off, w, v)                                                       \
    expect_forged_fails(&s, OFF_PARAMS + (off), (w), (v), #off " = " #v)
    FORGE(P_CELLS, 8, 0);
    FORGE(P_CELLS, 8, 200);             /* payload length no longer fits */
    FORGE(P_CELLS, 8, 400);
    FORGE(P_CELLS, 8, EBB_STABLE_MAX_CELLS + 1);
    FORGE(P_BITS, 4, 0);
    FORGE(P_BITS, 4, 4);
    FORGE(P_BITS, 4, 17);
    FORGE(P_K, 4, 0);
    FORGE(P_K, 4, 33);
    FORGE(P_P, 4, 302);
    FORGE(P_VARIANT, 4, 4);
    FORGE(P_VARIANT, 4, UINT32_MAX);
    FORGE(P_DRAW, 4, 2);
    FORGE(P_POLICY, 4, 2);
    FORGE(P_LOW, 8, bits_of(NAN));
    FORGE(P_LOW, 8, bits_of(3.0));      /* low >= high */
    FORGE(P_HIGH, 8, bits_of(INFINITY));
    FORGE(P_THRESHOLD, 8, bits_of(NAN));
    FORGE(P_INSERTIONS, 8, 0);          /* cells set with no insertion */
    FORGE(P_CLAMPED, 8, 301);           /* more clamps than insertions */
    FORGE(P_DECREMENTS, 8, 300 * 9 + 1);
    FORGE(P_GAVE_UP, 8, 1);             /* not IBF_H */
#undef FORGE
    /* Cells set with no insertion counted (every counter 0): only the
     * cells are wrong, and the load refuses them before allocating. */
    {
        ebb_stable_params q = shape(300, 3, 2, 1, EBB_STABLE_PLAIN,
                                    EBB_STABLE_DRAW_CONSECUTIVE);
        ebb_stable *g = create_or_fail(&q, 5);
        ebb_cells_set(&g->cells, 17, 1);
        snap t = snap_save(g);
        ebb_stable_destroy(g);
        expect_load_fails(t.bytes, t.size, EBB_ECORRUPT,
                          "a cell set, no insertion", true);
        support_snap_free(&t);
    }
    /* The generator all zero. */
    {
        snap z = {malloc(s.size), s.size};
        memcpy(z.bytes, s.bytes, s.size);
        memset(z.bytes + OFF_PARAMS + P_RNG, 0, 32);
        support_snap_forge_checksum(&z);
        expect_load_fails(z.bytes, z.size, EBB_ECORRUPT, "zero generator",
                          true);
        /* A bit past m d = 1505 in the last word. */
        memcpy(z.bytes, s.bytes, s.size);
        z.bytes[s.size - 9] |= 0x80;
        support_snap_forge_checksum(&z);
        expect_load_fails(z.bytes, z.size, EBB_ECORRUPT, "tail bit", true);
        /* A frame whose parameter length is not 128. */
        memcpy(z.bytes, s.bytes, s.size);
        support_put_le(z.bytes + OFF_PARAM_LEN, 4, 120);
        support_snap_forge_checksum(&z);
        expect_load_fails(z.bytes, z.size, EBB_ECORRUPT, "param length", true);
        support_snap_free(&z);
    }
    /* A PLAIN filter never clamps; IBF_H's gave-up + decrements <= n P. */
    {
        ebb_stable *g = used_filter(EBB_STABLE_PLAIN,
                                    EBB_STABLE_DRAW_CONSECUTIVE, 50);
        snap t = snap_save(g);
        ebb_stable_destroy(g);
        expect_forged_fails(&t, OFF_PARAMS + P_CLAMPED, 8, 1, "PLAIN clamped");
        support_snap_free(&t);
        g = used_filter(EBB_STABLE_IBF_H, EBB_STABLE_DRAW_CONSECUTIVE, 50);
        t = snap_save(g);
        uint64_t attempts = g->insertions * 9;
        assert_int_equal(g->decrements + g->h_gave_up, attempts);
        ebb_stable_destroy(g);
        uint64_t decrements = get_at(&t, OFF_PARAMS + P_DECREMENTS, 8);
        expect_forged_fails(&t, OFF_PARAMS + P_GAVE_UP, 8,
                            attempts - decrements + 1, "IBF_H attempts");
        support_snap_free(&t);
    }
    /* Counters at their saturation still load (they saturate). */
    {
        snap t = {malloc(s.size), s.size};
        memcpy(t.bytes, s.bytes, s.size);
        support_put_le(t.bytes + OFF_PARAMS + P_INSERTIONS, 8, UINT64_MAX);
        support_put_le(t.bytes + OFF_PARAMS + P_DECREMENTS, 8, UINT64_MAX);
        support_put_le(t.bytes + OFF_PARAMS + P_REFUSED, 8, UINT64_MAX);
        support_snap_forge_checksum(&t);
        ebb_stable *g = NULL;
        assert_int_equal(ebb_stable_load(t.bytes, t.size, &g), EBB_OK);
        assert_int_equal(ebb_stable_add(g, "x", 1, 0.0), EBB_OK);
        ebb_stable_stats st;
        ebb_stable_get_stats(g, &st);
        assert_true(st.insertions == UINT64_MAX);
        ebb_stable_destroy(g);
        support_snap_free(&t);
    }
    support_snap_free(&s);
}

static void load_survives_allocation_failure(void **state) {
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        ebb_stable_params p = shape(100, 4, 3, 60, (ebb_stable_variant)variant,
                                    EBB_STABLE_DRAW_INDEPENDENT);
        ebb_stable *f = create_or_fail(&p, 4);
        for (uint64_t i = 0; i < 50; i++)
            tad(f, KEYS_INSERTED, i, 0.7);
        snap s = snap_save(f);
        ebb_stable_destroy(f);
        uint64_t n;
        for (n = 1;; n++) {
            ebb_stable *out = OUT_SENTINEL;
            support_alloc_fail_nth(n, false);
            ebb_status st = ebb_stable_load(s.bytes, s.size, &out);
            support_alloc_fail_nth(0, false);
            if (st == EBB_OK) {
                snap t = snap_save(out);
                assert_memory_equal(t.bytes, s.bytes, s.size);
                support_snap_free(&t);
                ebb_stable_destroy(out);
                break;
            }
            CHECK(st == EBB_ENOMEM, "failure %llu: %d", (unsigned long long)n,
                  (int)st);
            CHECK(out == OUT_SENTINEL, "*out written at failure %llu",
                  (unsigned long long)n);
            CHECK(support_alloc_live_count() == 0, "leak at failure %llu",
                  (unsigned long long)n);
        }
        assert_true(n >= 3); /* handle, table (P = 60 > 16), cells */
        support_snap_free(&s);
    }
}

int main(void) {
#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)
    const struct CMUnitTest tests[] = {
        TEST(create_refuses_every_invalid_field),
        TEST(create_survives_allocation_failure),
        TEST(memory_is_what_was_allocated),
        TEST(plain_sets_max),
        TEST(ibf_2c_sets_max_or_half_and_never_lowers),
        TEST(ibf_mc_sets_max_of_cell_and_level),
        TEST(ibf_h_prefers_low_cells_and_skips_zeros),
        TEST(ibf_h_draws_match_model),
        TEST(ibf_mc_levels_round_to_nearest),
        TEST(p_decrements_per_insertion),
        TEST(consecutive_run_matches_reference_and_wraps),
        TEST(query_comes_before_update),
        TEST(test_and_add_matches_model),
        TEST(same_seed_same_state),
        TEST(batches_equal_single_calls),
        TEST(hash_batch_is_the_hash),
        TEST(stats_histogram_and_clear),
        TEST(snapshot_layout),
        TEST(snapshot_round_trip_continues),
        TEST(snapshot_rejections),
        TEST(load_survives_allocation_failure),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
