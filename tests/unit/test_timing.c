/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_timing.c: the Timing / Block Timing Bloom filter's data structure
 * (src/timing/timing.c, params.c, batch.c, snapshot.c).
 *
 *   - shapes: every invalid field refused by params_init, params_check and
 *     create (nothing allocated); describe's numbers; allocation failure at
 *     every step of create and load, nothing leaked;
 *   - the paper's Figure 5 shape replayed by hand (timing.c's worked
 *     example), timer by timer;
 *   - the sweep invariant as a property: after every insertion, every
 *     timer's read expiry equals the expiry of its true age (a shadow array
 *     holds the insertion that last wrote each timer), and every item of
 *     the last w insertions is found: over streams of >= 10 w insertions
 *     that wrap T_+, for explicit shapes (P = 0, 1, 2, 5; B = 1, B > 1, w
 *     not a multiple of B) and every shape the choosers return on small
 *     windows. A sweep one timer slower than the rule fails the same
 *     property (the check can fail);
 *   - the choosers and the analytic rate (its integral form against the
 *     direct sum);
 *   - batches equal single calls, with and without prefetching;
 *     test-and-add also on in-batch repeats, empty batches, batches
 *     across a block boundary and across the wrap of T_+;
 *   - snapshots: layout, byte-identical round trips, a loaded filter
 *     continues as the saved one, every rejection with its status;
 *   - clear, statistics, memory, the model's canonical copy, and the
 *     evidence (r, c, lambda, expired, b) on hand-built timers against a
 *     brute-force reading.
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

#include <xxhash.h>

#include "ebb/ebb.h"
#include "ebb/timing.h"
#include "timing/timing_internal.h"
#include "support.h"

static char out_sentinel;
#define OUT_SENTINEL ((ebb_timing *)(void *)&out_sentinel)

/* Frame and parameter-block offsets (docs/format.md, family 5). */
enum {
    OFF_FAMILY = 6,
    OFF_PARAM_LEN = 12,
    OFF_TOTAL = 16,
    OFF_PARAMS = 32,
    P_WINDOW = 0,
    P_TIMERS = 8,
    P_K = 16,
    P_BPT = 20,
    P_BLOCK = 24,
    P_PADDING = 32,
    P_CURRENT = 40,
    P_IN_BLOCK = 48,
    P_CURSOR = 56,
    P_INSERTIONS = 64,
    P_SWEPT = 72,
    P_KIND = 80,
    P_POINTS = 84,
    P_UNIVERSE = 88,
    P_PRIOR = 96,
    P_J = 104,
    P_D = 616,
    PARAM_LEN = 1128,
    OFF_PAYLOAD = OFF_PARAMS + PARAM_LEN,
    FAMILY_TIMING = 5
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static ebb_timing_params shape(uint64_t w, uint64_t m, uint32_t k,
                               uint32_t bpt, uint64_t block, uint64_t p) {
    ebb_timing_params params;
    assert_int_equal(ebb_timing_params_init(w, m, k, bpt, block, p, &params),
                     EBB_OK);
    return params;
}

/* The smallest bpt that holds T_Omega + 2 values. */
static uint32_t bits_for(uint64_t w, uint64_t block, uint64_t p) {
    uint64_t values = (w + block - 1) / block + 3 + p;
    uint32_t bpt = 2;
    while ((UINT64_C(1) << bpt) < values)
        bpt++;
    return bpt;
}

static ebb_timing *create_or_fail(const ebb_timing_params *params,
                                  uint64_t seed) {
    ebb_timing *f = NULL;
    assert_int_equal(ebb_timing_create(params, NULL, seed, &f), EBB_OK);
    assert_non_null(f);
    return f;
}

static ebb_hash128 key_hash(const ebb_timing *f, uint32_t stream,
                            uint64_t index) {
    support_key key = support_key_make(stream, index);
    return ebb_hash(key.bytes, sizeof key.bytes, f->seed);
}

static void add_key(ebb_timing *f, uint32_t stream, uint64_t index) {
    support_key key = support_key_make(stream, index);
    ebb_timing_add(f, key.bytes, sizeof key.bytes);
}

static bool has_key(const ebb_timing *f, uint32_t stream, uint64_t index) {
    support_key key = support_key_make(stream, index);
    return ebb_timing_contains(f, key.bytes, sizeof key.bytes);
}

typedef support_snap snap;

static snap snap_save(const ebb_timing *f) {
    snap s = support_snap_alloc(ebb_timing_snapshot_size(f));
    size_t written = 0;
    assert_int_equal(ebb_timing_save(f, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

static void assert_same_state(const ebb_timing *a, const ebb_timing *b) {
    snap x = snap_save(a), y = snap_save(b);
    support_snap_assert_same(&x, &y);
}


static uint64_t timer(const ebb_timing *f, uint64_t i) {
    return ebb_cells_get(&f->timers, i);
}

/* ------------------------------------------------------------------------ */
/* Shapes and creation                                                      */
/* ------------------------------------------------------------------------ */

static void expect_init_refused(uint64_t w, uint64_t m, uint32_t k,
                                uint32_t bpt, uint64_t block, uint64_t p,
                                const char *what) {
    ebb_timing_params out = {7, 7, 7, 7, 7, 7};
    ebb_status st = ebb_timing_params_init(w, m, k, bpt, block, p, &out);
    CHECK(st == EBB_EINVAL, "params_init (%s) = %d", what, (int)st);
    CHECK(out.window == 7 && out.padding == 7, "params_init (%s) wrote", what);
    ebb_timing_params raw = {w, m, k, bpt, block, p};
    CHECK(ebb_timing_params_check(&raw) == EBB_EINVAL, "check (%s)", what);
    ebb_timing *f = OUT_SENTINEL;
    uint64_t calls = support_alloc_calls();
    CHECK(ebb_timing_create(&raw, NULL, 1, &f) == EBB_EINVAL, "create (%s)",
          what);
    CHECK(f == OUT_SENTINEL && support_alloc_calls() == calls,
          "create (%s) wrote or allocated", what);
    ebb_timing_shape sh;
    CHECK(ebb_timing_describe(&raw, &sh) == EBB_EINVAL, "describe (%s)", what);
    CHECK(isnan(ebb_timing_fp(&raw)), "fp (%s) not NaN", what);
}

static void params_refuse_every_invalid_field(void **state) {
    (void)state;
    /* w = 6, B = 3, P = 0: T_Omega = 3, 5 values: bpt 3 holds 8. */
    ebb_timing_params ok;
    assert_int_equal(ebb_timing_params_init(6, 6, 2, 3, 3, 0, &ok), EBB_OK);
    assert_int_equal(ebb_timing_params_check(&ok), EBB_OK);
    assert_int_equal(ebb_timing_params_init(6, 6, 2, 3, 3, 0, NULL),
                     EBB_EINVAL);
    assert_int_equal(ebb_timing_params_check(NULL), EBB_EINVAL);
    expect_init_refused(0, 6, 2, 3, 1, 0, "w = 0");
    expect_init_refused(EBB_TIMING_MAX_WINDOW + 1, 6, 2, 32,
                        EBB_TIMING_MAX_WINDOW, 0, "w > max");
    expect_init_refused(6, 0, 2, 3, 3, 0, "m = 0");
    expect_init_refused(6, EBB_TIMING_MAX_TIMERS + 1, 2, 3, 3, 0, "m > max");
    expect_init_refused(6, 6, 0, 3, 3, 0, "k = 0");
    expect_init_refused(6, 6, EBB_TIMING_MAX_K + 1, 3, 3, 0, "k > max");
    expect_init_refused(6, 6, 2, 1, 6, 0, "bpt = 1");
    expect_init_refused(6, 6, 2, 33, 3, 0, "bpt = 33");
    expect_init_refused(6, 6, 2, 3, 0, 0, "B = 0");
    expect_init_refused(6, 6, 2, 3, 7, 0, "B > w");
    /* T_Omega + 2 = 2 + 1 + P + 2 <= 8 iff P <= 3. */
    assert_int_equal(ebb_timing_params_init(6, 6, 2, 3, 3, 3, &ok), EBB_OK);
    expect_init_refused(6, 6, 2, 3, 3, 4, "P = 4 (T_Omega = 7, bpt 3)");
    expect_init_refused(6, 6, 2, 3, 3, UINT64_MAX, "P = max");
    expect_init_refused(6, 6, 2, 3, 1, 0, "B = 1 (T_Omega = 7, bpt 3)");
    /* The window at its limit with B = 1 needs 49 bits: too many. */
    expect_init_refused(EBB_TIMING_MAX_WINDOW, 6, 2, 32, 1, 0, "2^48, B 1");
    assert_int_equal(ebb_timing_params_init(EBB_TIMING_MAX_WINDOW, 6, 2, 32,
                                            UINT64_C(1) << 20, 0, &ok),
                     EBB_OK);
}

static void describe_gives_the_derived_shape(void **state) {
    (void)state;
    ebb_timing_params p = shape(6, 6, 2, 3, 3, 0);
    ebb_timing_shape s;
    assert_int_equal(ebb_timing_describe(&p, &s), EBB_OK);
    assert_int_equal(s.t_omega, 3);
    assert_int_equal(s.expired_mark, 4);
    assert_int_equal(s.sweep_per_add, 2);
    assert_int_equal(s.memory_bytes, 8);
    assert_true(fabs(s.bits_per_item - 3.0) < 1e-12);
    assert_int_equal(ebb_timing_describe(&p, NULL), EBB_EINVAL);
    /* w = 100, B = 7, P = 2, m = 1000: T_Omega = 15 + 1 + 2 = 18,
     * sweep ceil(1000 / 21) = 48, 1000 * 5 bits = 79 words. */
    p = shape(100, 1000, 4, 5, 7, 2);
    assert_int_equal(ebb_timing_describe(&p, &s), EBB_OK);
    assert_int_equal(s.t_omega, 18);
    assert_int_equal(s.sweep_per_add, 48);
    assert_int_equal(s.memory_bytes, 79 * 8);
    /* A padding beyond m / B sweeps one timer per insertion. */
    p = shape(100, 10, 4, 8, 10, 50);
    assert_int_equal(ebb_timing_describe(&p, &s), EBB_OK);
    assert_int_equal(s.sweep_per_add, 1);
}

static void create_refuses_invalid_model_and_out(void **state) {
    (void)state;
    ebb_timing_params p = shape(6, 6, 2, 3, 3, 0);
    ebb_timing *f = OUT_SENTINEL;
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_UNIFORM, .universe = 0};
    assert_int_equal(ebb_timing_create(&p, &model, 1, &f), EBB_EINVAL);
    model.kind = (ebb_timing_model_kind)9;
    assert_int_equal(ebb_timing_create(&p, &model, 1, &f), EBB_EINVAL);
    assert_ptr_equal(f, OUT_SENTINEL);
    assert_int_equal(ebb_timing_create(&p, NULL, 1, NULL), EBB_EINVAL);
    assert_int_equal(ebb_timing_create(NULL, NULL, 1, &f), EBB_EINVAL);
    assert_int_equal(support_alloc_calls(), 0);
    ebb_timing_destroy(NULL);
}

/* Runs make(ctx) with its n-th allocation failing, n = 1, 2, ... until
 * it succeeds: every failure must be EBB_ENOMEM with *out untouched and
 * nothing leaked. Returns the handle made and sets *calls to that n. */
typedef ebb_status (*make_fn)(const void *ctx, ebb_timing **out);

static ebb_timing *make_under_failures(make_fn make, const void *ctx,
                                       uint64_t *calls) {
    for (uint64_t n = 1;; n++) {
        ebb_timing *out = OUT_SENTINEL;
        support_alloc_fail_nth(n, false);
        ebb_status st = make(ctx, &out);
        support_alloc_fail_nth(0, false);
        if (st == EBB_OK) {
            *calls = n;
            return out;
        }
        CHECK(st == EBB_ENOMEM, "failure %llu: %d", (unsigned long long)n,
              (int)st);
        CHECK(out == OUT_SENTINEL, "*out written at failure %llu",
              (unsigned long long)n);
        CHECK(support_alloc_live_count() == 0, "leak at failure %llu",
              (unsigned long long)n);
    }
}

static ebb_status make_created(const void *ctx, ebb_timing **out) {
    return ebb_timing_create(ctx, NULL, 3, out);
}

static void create_survives_allocation_failure(void **state) {
    (void)state;
    ebb_timing_params p = shape(100, 1000, 4, 5, 7, 2);
    uint64_t n;
    ebb_timing_destroy(make_under_failures(make_created, &p, &n));
    assert_int_equal(n, 3); /* handle, timers */
}

static void new_filter_is_all_marks(void **state) {
    (void)state;
    /* Widths that divide 64 and that do not; m past one 64-timer pattern. */
    const uint32_t widths[] = {3, 4, 5, 7, 8, 13, 16, 31, 32};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        ebb_timing_params p = shape(6, 200, 2, widths[w], 3, 0);
        ebb_timing *f = create_or_fail(&p, 1);
        for (uint64_t i = 0; i < 200; i++)
            CHECK(timer(f, i) == 4, "bpt %u timer %llu = %llu",
                  (unsigned)widths[w], (unsigned long long)i,
                  (unsigned long long)timer(f, i));
        uint64_t used = 200u * widths[w];
        uint64_t last = f->timers.words[f->timers.word_count - 1];
        CHECK((last & ebb_bits_tail_mask(used)) == 0, "tail bits at bpt %u",
              (unsigned)widths[w]);
        assert_false(has_key(f, KEYS_FRESH, 1));
        ebb_timing_destroy(f);
    }
}

/* ------------------------------------------------------------------------ */
/* The worked example                                                       */
/* ------------------------------------------------------------------------ */

static void insert_at(ebb_timing *f, uint64_t a, uint64_t b) {
    uint64_t bits[2] = {a * f->timers.width, b * f->timers.width};
    timing_insert_at(f, bits);
}

static bool query_at(const ebb_timing *f, uint64_t a, uint64_t b) {
    uint64_t bits[2] = {a * f->timers.width, b * f->timers.width};
    return timing_query_at(f, bits);
}

static void expect_timers(const ebb_timing *f, const uint64_t *want,
                          const char *when) {
    for (uint64_t i = 0; i < 6; i++)
        CHECK(timer(f, i) == want[i], "%s: t%llu = %llu, want %llu", when,
              (unsigned long long)i, (unsigned long long)timer(f, i),
              (unsigned long long)want[i]);
}

static void figure5_trace(void **state) {
    (void)state;
    ebb_timing_params p = shape(6, 6, 2, 3, 3, 0);
    ebb_timing *f = create_or_fail(&p, 1);
    assert_int_equal(f->sweep, 2);
    assert_int_equal(f->limit, 3);
    insert_at(f, 0, 1); /* x1 */
    insert_at(f, 2, 3); /* x2 */
    insert_at(f, 4, 5); /* x3 */
    expect_timers(f, (const uint64_t[]){0, 0, 0, 0, 0, 0}, "x3");
    assert_int_equal(f->current, 1);
    insert_at(f, 0, 1); /* x4 */
    insert_at(f, 0, 2); /* x5 */
    insert_at(f, 1, 2); /* x6 */
    expect_timers(f, (const uint64_t[]){1, 1, 1, 0, 0, 0}, "x6");
    assert_int_equal(f->current, 2);
    for (int i = 0; i < 3; i++) /* x7, x8, x9 */
        insert_at(f, 0, 1);
    expect_timers(f, (const uint64_t[]){2, 2, 1, 0, 4, 4}, "x9");
    assert_int_equal(f->current, 3);
    assert_int_equal(f->in_block, 0);
    assert_int_equal(f->cursor, 0);
    assert_false(query_at(f, 4, 5)); /* x3: marked            */
    assert_false(query_at(f, 2, 3)); /* x2: t3 at age 3       */
    assert_true(query_at(f, 0, 1));  /* x4: ages 1            */
    assert_true(query_at(f, 0, 2));  /* x5: t2 at age 2 (x6)  */
    insert_at(f, 0, 1); /* x10 */
    insert_at(f, 0, 1); /* x11: sweeps t2 (age 2), marks t3 (age 3) */
    expect_timers(f, (const uint64_t[]){3, 3, 1, 4, 4, 4}, "x11");
    insert_at(f, 0, 1); /* x12: T_+ wraps to 0 */
    assert_int_equal(f->current, 0);
    assert_false(query_at(f, 1, 2)); /* x6: t2 = 1 at age 3 */
    insert_at(f, 0, 1); /* x13 */
    insert_at(f, 0, 1); /* x14: marks t2 at age 3 */
    expect_timers(f, (const uint64_t[]){0, 0, 4, 4, 4, 4}, "x14");
    ebb_timing_stats st;
    ebb_timing_get_stats(f, &st);
    assert_int_equal(st.insertions, 14);
    assert_int_equal(st.swept, 4);
    assert_int_equal(st.live_timers, 2);
    ebb_timing_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* The sweep invariant and no false negatives, as a property                */
/* ------------------------------------------------------------------------ */

#define NEVER UINT64_MAX

/* Replays a stream of distinct items, with a shadow of the insertion that
 * last wrote every timer. After each insertion it compares every timer's
 * read expiry with the expiry of its true age, and (when asked) queries
 * every item of the last w insertions. Returns the mismatches; counts the
 * wraps of T_+. */
typedef struct stream_result {
    uint64_t mismatches;
    uint64_t false_negatives;
    uint64_t wraps;
    uint64_t insertions;
} stream_result;

static stream_result run_stream(ebb_timing *f, uint64_t length,
                                bool window_queries, uint64_t seed) {
    const ebb_timing_params *p = &f->params;
    uint64_t m = p->timers, w = p->window, block = p->block;
    uint64_t *last = malloc(m * sizeof *last);
    ebb_hash128 *items = malloc(length * sizeof *items);
    assert_non_null(last);
    assert_non_null(items);
    for (uint64_t i = 0; i < m; i++)
        last[i] = NEVER;
    stream_result out = {0, 0, 0, length};
    uint64_t rng = seed;
    for (uint64_t n = 0; n < length; n++) {
        ebb_hash128 h = {support_splitmix64(&rng), support_splitmix64(&rng)};
        items[n] = h;
        uint64_t bits[EBB_TIMING_MAX_K];
        timing_bits(f, h, bits);
        for (uint32_t j = 0; j < f->k; j++)
            last[bits[j] / f->timers.width] = n;
        uint64_t before = f->current;
        ebb_timing_add_hash(f, h);
        out.wraps += f->current < before;
        /* State N = n + 1: b = N mod B, limit ceil((w - b) / B) + 1. */
        uint64_t now = n + 1;
        uint64_t b = now % block;
        uint64_t limit = (w - b + block - 1) / block + 1;
        assert_int_equal(f->in_block, b);
        for (uint64_t i = 0; i < m; i++) {
            uint64_t v = timer(f, i);
            CHECK(v <= f->mark, "timer %llu above the mark",
                  (unsigned long long)i);
            bool read_expired = !timing_live(f, v);
            bool true_expired =
                last[i] == NEVER || now / block - last[i] / block >= limit;
            out.mismatches += read_expired != true_expired;
        }
        if (window_queries) {
            uint64_t first = now > w ? now - w : 0;
            for (uint64_t i = first; i < now; i++)
                out.false_negatives += !ebb_timing_contains_hash(f, items[i]);
        }
    }
    free(last);
    free(items);
    return out;
}

static uint64_t stream_length(const ebb_timing *f) {
    uint64_t wrap = 3 * (f->t_omega + 1) * f->block;
    uint64_t ten = 10 * f->params.window;
    return (wrap > ten ? wrap : ten) + f->params.window;
}

static void expect_exact_reads(const ebb_timing_params *p, const char *from) {
    ebb_timing *f = create_or_fail(p, 7);
    uint64_t length = stream_length(f);
    stream_result r = run_stream(f, length, p->window <= 256, p->timers);
    CHECK(r.mismatches == 0 && r.false_negatives == 0,
          "%s: w %llu m %llu k %u bpt %u B %llu P %llu: %llu misread timers, "
          "%llu false negatives",
          from, (unsigned long long)p->window, (unsigned long long)p->timers,
          (unsigned)p->k, (unsigned)p->timer_bits,
          (unsigned long long)p->block, (unsigned long long)p->padding,
          (unsigned long long)r.mismatches,
          (unsigned long long)r.false_negatives);
    CHECK(r.wraps >= 2 && length >= 10 * p->window,
          "%s: only %llu wraps", from, (unsigned long long)r.wraps);
    ebb_timing_destroy(f);
}

static void explicit_shapes_read_exactly(void **state) {
    (void)state;
    const uint64_t windows[] = {1, 2, 5, 6, 7, 13, 50};
    const uint64_t paddings[] = {0, 1, 2, 5};
    const uint64_t timers[] = {1, 3, 16, 37};
    size_t shapes = 0;
    for (size_t a = 0; a < sizeof windows / sizeof windows[0]; a++) {
        uint64_t w = windows[a];
        const uint64_t blocks[] = {1, 2, 3, 4, w / 2 + 1, w};
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            uint64_t block = blocks[b];
            if (block > w)
                continue;
            for (size_t c = 0; c < sizeof paddings / sizeof paddings[0]; c++)
                for (size_t d = 0; d < sizeof timers / sizeof timers[0]; d++)
                    for (uint32_t k = 1; k <= 3; k += 2) {
                        uint64_t pad = paddings[c];
                        ebb_timing_params p =
                            shape(w, timers[d], k, bits_for(w, block, pad),
                                  block, pad);
                        expect_exact_reads(&p, "explicit");
                        shapes++;
                    }
        }
    }
    /* 7 windows with 3, 4, 6, 6, 6, 6, 6 block entries <= w (repeats
     * for small w), 4 paddings, 4 m, 2 k. */
    CHECK(shapes == 37 * 32, "%zu explicit shapes", shapes);
}

static void chosen_shapes_read_exactly(void **state) {
    (void)state;
    const uint64_t windows[] = {5, 17, 64};
    const double bpis[] = {1.0, 3.0, 10.0};
    size_t shapes = 0;
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++)
            for (uint32_t k = 1; k <= EBB_TIMING_MAX_K; k++) {
                ebb_timing_params p;
                if (ebb_timing_choose_paper(windows[a], bpis[b], k, &p) !=
                    EBB_OK)
                    continue;
                expect_exact_reads(&p, "choose_paper");
                shapes++;
            }
    const uint64_t budgets[] = {8, 24, 64, 200};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++) {
            ebb_timing_params p;
            if (ebb_timing_choose(windows[a], budgets[b], 0.0, &p) == EBB_OK) {
                expect_exact_reads(&p, "choose (memory)");
                shapes++;
            }
        }
    const double rates[] = {0.5, 0.1, 0.01};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++) {
            ebb_timing_params p;
            assert_int_equal(ebb_timing_choose(windows[a], 0, rates[b], &p),
                             EBB_OK);
            expect_exact_reads(&p, "choose (fp)");
            shapes++;
        }
    CHECK(shapes >= 100, "only %zu chosen shapes", shapes);
}

/* The same property with a sweep one timer short of the rule (m = 6,
 * B = 3, P = 0 needs 2 per insertion): some expired timestamps read fresh
 * after a wrap. The property can fail. */
static void slower_sweep_breaks_the_property(void **state) {
    (void)state;
    ebb_timing_params p = shape(6, 6, 1, 3, 3, 0);
    ebb_timing *f = create_or_fail(&p, 7);
    f->sweep = 1;
    stream_result r = run_stream(f, 200, false, 5);
    CHECK(r.mismatches > 0, "a sweep of 1 went unnoticed");
    ebb_timing_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Sizing and the analytic rate                                             */
/* ------------------------------------------------------------------------ */

static void choose_paper_follows_the_rule(void **state) {
    (void)state;
    const uint64_t windows[] = {6, 100, 1000, 65536, UINT64_C(1) << 30};
    const double bpis[] = {2.0, 8.0, 20.0};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 3; b++)
            for (uint32_t k = 1; k <= EBB_TIMING_MAX_K; k++) {
                ebb_timing_params p;
                uint64_t w = windows[a];
                if (ebb_timing_choose_paper(w, bpis[b], k, &p) != EBB_OK)
                    continue;
                uint32_t bpt = k < 3 ? 3 : k;
                assert_int_equal(p.timer_bits, bpt);
                assert_int_equal(p.k, k);
                assert_int_equal(p.window, w);
                assert_int_equal(p.timers,
                                 (uint64_t)floor((double)w * bpis[b] / bpt));
                ebb_timing_shape s;
                assert_int_equal(ebb_timing_describe(&p, &s), EBB_OK);
                assert_true(s.sweep_per_add <= k);
                if (p.padding > 0) { /* one less sweeps more than k */
                    ebb_timing_params q = p;
                    q.padding--;
                    assert_true(ebb_timing_params_check(&q) == EBB_OK);
                    assert_true(ebb_timing_sweep_rate(&q) > k);
                }
                if (p.block > 1) { /* one less does not fit */
                    uint64_t smaller = p.block - 1;
                    uint64_t need = (p.timers + k - 1) / k;
                    need = (need + smaller - 1) / smaller;
                    ebb_timing_params q = p;
                    q.block = smaller;
                    q.padding = need > 0 ? need - 1 : 0;
                    assert_int_equal(ebb_timing_params_check(&q), EBB_EINVAL);
                }
            }
    ebb_timing_params p;
    assert_int_equal(ebb_timing_choose_paper(0, 8, 4, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose_paper(100, 0.0, 4, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose_paper(100, NAN, 4, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose_paper(100, INFINITY, 4, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_timing_choose_paper(100, 8, 0, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose_paper(100, 8, 33, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose_paper(100, 8, 4, NULL), EBB_EINVAL);
    /* bpi too small for k: m = floor(100 * 0.1 / 20) = 0 timers. */
    assert_int_equal(ebb_timing_choose_paper(100, 0.1, 20, &p), EBB_EINVAL);
    /* A huge window in 3 bits: ceil(w / B) + ceil(m / B) + 2 <= 8 needs
     * B >= (w + m) / 6; it still fits. At the window limit m passes
     * 2^40. */
    assert_int_equal(ebb_timing_choose_paper(UINT64_C(1) << 40, 1.0, 1, &p),
                     EBB_OK);
    assert_int_equal(ebb_timing_params_check(&p), EBB_OK);
    assert_true(p.block > (UINT64_C(1) << 37));
    assert_int_equal(ebb_timing_choose_paper(EBB_TIMING_MAX_WINDOW, 1.0, 1,
                                             &p),
                     EBB_EINVAL);
}

static void choose_meets_memory_or_rate(void **state) {
    (void)state;
    ebb_timing_params p;
    assert_int_equal(ebb_timing_choose(1000, 0, 0.0, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose(1000, 1000, 0.01, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose(1000, 0, 1.0, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose(1000, 0, NAN, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose(1000, 0, -0.1, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose(0, 1000, 0.0, &p), EBB_EINVAL);
    assert_int_equal(ebb_timing_choose(1000, 1000, 0.0, NULL), EBB_EINVAL);
    const uint64_t windows[] = {100, 10000, 1000000};
    for (size_t a = 0; a < 3; a++) {
        uint64_t w = windows[a];
        /* By memory: within the budget, and no worse than the paper's
         * rule at the same memory for any k. */
        uint64_t budget = w; /* 8 bits per item */
        assert_int_equal(ebb_timing_choose(w, budget, 0.0, &p), EBB_OK);
        ebb_timing_shape s;
        assert_int_equal(ebb_timing_describe(&p, &s), EBB_OK);
        assert_true(s.memory_bytes <= budget);
        double best = ebb_timing_fp(&p);
        for (uint32_t k = 1; k <= EBB_TIMING_MAX_K; k++) {
            ebb_timing_params q;
            uint32_t bpt = k < 3 ? 3 : k;
            double bpi = (double)(budget / 8 * 64 / bpt) * bpt / (double)w;
            if (ebb_timing_choose_paper(w, bpi * (1 - 1e-12), k, &q) ==
                EBB_OK) {
                ebb_timing_shape t;
                ebb_timing_describe(&q, &t);
                if (t.memory_bytes <= budget)
                    CHECK(best <= ebb_timing_fp(&q) * (1 + 1e-12),
                          "w %llu k %u: paper %g beats %g",
                          (unsigned long long)w, (unsigned)k,
                          ebb_timing_fp(&q), best);
            }
        }
        /* By rate: met, and half the memory does not meet it. */
        const double rates[] = {0.1, 0.01, 0.001};
        for (size_t b = 0; b < 3; b++) {
            assert_int_equal(ebb_timing_choose(w, 0, rates[b], &p), EBB_OK);
            CHECK(ebb_timing_fp(&p) <= rates[b], "w %llu fp %g > %g",
                  (unsigned long long)w, ebb_timing_fp(&p), rates[b]);
            assert_int_equal(ebb_timing_describe(&p, &s), EBB_OK);
            ebb_timing_params half;
            if (ebb_timing_choose(w, s.memory_bytes / 2, 0.0, &half) ==
                EBB_OK)
                CHECK(ebb_timing_fp(&half) > rates[b],
                      "half the memory meets %g", rates[b]);
        }
    }
    /* A budget below one word holds no timer. */
    assert_int_equal(ebb_timing_choose(1000, 7, 0.0, &p), EBB_EINVAL);
    /* A rate no shape within the limits reaches. */
    assert_int_equal(ebb_timing_choose(EBB_TIMING_MAX_WINDOW, 0, 1e-300, &p),
                     EBB_EINVAL);
}

/* By memory, a shape whose best analytic rate is 1 answers every query
 * positive: w = 2^48 in 1 GiB would be m = 2^32, k 1, B = w. Refused;
 * whatever a budget is answered with has fp < 1. */
static void choose_refuses_rate_one(void **state) {
    (void)state;
    ebb_timing_params p;
    assert_int_equal(ebb_timing_choose(EBB_TIMING_MAX_WINDOW, UINT64_C(1)
                                       << 30, 0.0, &p),
                     EBB_EINVAL);
    const uint64_t windows[] = {1000, UINT64_C(1) << 30,
                                EBB_TIMING_MAX_WINDOW};
    const uint64_t budgets[] = {64, 4096, UINT64_C(1) << 20,
                                UINT64_C(1) << 34};
    unsigned chosen = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++)
            if (ebb_timing_choose(windows[i], budgets[j], 0.0, &p) ==
                EBB_OK) {
                chosen++;
                CHECK(ebb_timing_fp(&p) < 1.0, "w %llu bytes %llu fp %g",
                      (unsigned long long)windows[i],
                      (unsigned long long)budgets[j], ebb_timing_fp(&p));
            }
    assert_true(chosen >= 4u);
}

/* (1/B) sum_{n=w}^{w+B-1} (1 - q^n)^k, term by term in long double. */
static double fp_reference(uint64_t m, uint32_t k, uint64_t w,
                           uint64_t block) {
    long double q = powl(1.0L - 1.0L / (long double)m, (long double)k);
    long double sum = 0;
    for (uint64_t n = w; n < w + block; n++)
        sum += powl(1.0L - powl(q, (long double)n), (long double)k);
    return (double)(sum / (long double)block);
}

static void fp_is_the_block_average(void **state) {
    (void)state;
    struct {
        uint64_t w, m;
        uint32_t k;
        uint64_t block;
    } cases[] = {
        {100, 1000, 4, 1},     {100, 1000, 4, 7},    {1000, 8000, 5, 64},
        {1000, 8000, 5, 65},   {1000, 8000, 5, 500}, {5000, 20000, 3, 5000},
        {10000, 96000, 8, 3000}, {300, 200, 2, 299},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t bpt = 32;
        ebb_timing_params p = shape(cases[i].w, cases[i].m, cases[i].k, bpt,
                                    cases[i].block, 0);
        double got = ebb_timing_fp(&p);
        double want =
            fp_reference(cases[i].m, cases[i].k, cases[i].w, cases[i].block);
        CHECK(fabs(got - want) <= 1e-9 * want, "case %zu: %.12g vs %.12g", i,
              got, want);
    }
    /* B = 1: the TBF's (1 - q^w)^k. */
    ebb_timing_params p = shape(100, 1000, 4, 8, 1, 0);
    double q = pow(1 - 1e-3, 4);
    assert_true(fabs(ebb_timing_fp(&p) - pow(1 - pow(q, 100), 4)) < 1e-12);
    p = shape(100, 1, 1, 8, 1, 0); /* one timer: always touched */
    assert_true(ebb_timing_fp(&p) == 1.0);
    assert_true(isnan(ebb_timing_fp(NULL)));
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

static void batches_equal_single_calls(void **state) {
    (void)state;
    const ebb_timing_params shapes[] = {
        shape(100, 1000, 4, 5, 7, 2),
        shape(50, 333, 3, 7, 1, 3),
        shape(64, 64, 8, 3, 32, 1),
    };
    for (size_t s = 0; s < 3; s++)
        for (int prefetch = 0; prefetch < 2; prefetch++) {
            ebb_timing *one = create_or_fail(&shapes[s], 9);
            ebb_timing *many = create_or_fail(&shapes[s], 9);
            many->prefetch = prefetch != 0;
            uint64_t rng = 11 + s;
            uint64_t index = 0;
            for (int round = 0; round < 40; round++) {
                size_t n = (size_t)(support_splitmix64(&rng) % 40);
                ebb_hash128 h[40];
                bool got[40];
                for (size_t i = 0; i < n; i++)
                    h[i] = key_hash(one, KEYS_INSERTED,
                                    (index + i) % 150);
                size_t found = ebb_timing_contains_batch(many, h, n, got);
                size_t want = 0;
                for (size_t i = 0; i < n; i++) {
                    bool hit = ebb_timing_contains_hash(one, h[i]);
                    CHECK(hit == got[i], "shape %zu round %d item %zu", s,
                          round, i);
                    want += hit;
                }
                assert_int_equal(found, want);
                assert_int_equal(ebb_timing_contains_batch(many, h, n, NULL),
                                 want);
                for (size_t i = 0; i < n; i++)
                    ebb_timing_add_hash(one, h[i]);
                ebb_timing_add_batch(many, h, n);
                index += n;
                assert_same_state(one, many);
            }
            ebb_timing_destroy(one);
            ebb_timing_destroy(many);
        }
}

/* Test-and-add against contains-then-add single calls: keys from a pool
 * of 24 so that batches repeat keys, batch sizes 0..40, both paths
 * (prefetching or not), answers (with and without seen) and snapshots
 * compared after every batch. The shapes are small, so the sweep rewrites
 * timers and T_+ wraps many times; the test asserts that it saw an empty
 * batch, a batch crossing a block boundary, an in-batch repeat and two
 * wraps, so that none of them goes untested. */
static void test_and_add_round(ebb_timing *one, ebb_timing *many,
                               const ebb_hash128 *h, size_t n, bool use_seen,
                               const char *what) {
    bool got[40], want[40];
    size_t want_count = 0;
    for (size_t i = 0; i < n; i++) {
        want[i] = ebb_timing_contains_hash(one, h[i]);
        ebb_timing_add_hash(one, h[i]);
        want_count += want[i];
    }
    size_t count = ebb_timing_test_and_add_batch(many, h, n,
                                                 use_seen ? got : NULL);
    assert_int_equal(count, want_count);
    for (size_t i = 0; use_seen && i < n; i++)
        CHECK(got[i] == want[i], "%s item %zu", what, i);
    assert_same_state(one, many);
}

static void test_and_add_batch_equals_single_calls(void **state) {
    (void)state;
    const ebb_timing_params shapes[] = {
        shape(20, 40, 3, bits_for(20, 1, 0), 1, 0),   /* TBF, P = 0 */
        shape(30, 64, 4, bits_for(30, 1, 2), 1, 2),   /* TBF, P = 2 */
        shape(50, 90, 3, bits_for(50, 7, 1), 7, 1),   /* w mod B = 1 */
        shape(64, 64, 8, 3, 32, 1),                   /* k > m / 8  */
    };
    const size_t count = sizeof shapes / sizeof shapes[0];
    for (size_t s = 0; s < count; s++)
        for (int prefetch = 0; prefetch < 2; prefetch++) {
            ebb_timing *one = create_or_fail(&shapes[s], 5);
            ebb_timing *many = create_or_fail(&shapes[s], 5);
            many->prefetch = prefetch != 0;
            uint64_t rng = 101 + s;
            bool empty = false, crossed = false, repeated = false;
            unsigned wraps = 0;
            for (int round = 0; round < 200; round++) {
                size_t n = (size_t)(support_splitmix64(&rng) % 41);
                if (round % 17 == 0)
                    n = 0;
                ebb_hash128 h[40];
                uint64_t pool[40];
                for (size_t i = 0; i < n; i++) {
                    pool[i] = support_splitmix64(&rng) % 24;
                    h[i] = key_hash(one, KEYS_INSERTED, pool[i]);
                }
                uint64_t before = many->current, b = many->in_block;
                char what[64];
                snprintf(what, sizeof what, "shape %zu prefetch %d round %d",
                         s, prefetch, round);
                /* A key repeated within the batch (its later copy's
                 * answer depends on the earlier copy's add). */
                for (size_t i = 1; i < n; i++)
                    for (size_t j = 0; j < i; j++)
                        repeated |= pool[i] == pool[j];
                test_and_add_round(one, many, h, n, round % 3 != 2, what);
                empty |= n == 0;
                crossed |= b + n > shapes[s].block && shapes[s].block > 1;
                wraps += many->current < before;
            }
            assert_true(empty && repeated);
            assert_true(crossed || shapes[s].block == 1);
            assert_true(wraps >= 2);
            ebb_timing_destroy(one);
            ebb_timing_destroy(many);
        }
}

/* A key given twice in one batch to an empty filter: the first copy is
 * new, the second sees the first (no false negative within w). */
static void test_and_add_batch_sees_its_own_repeat(void **state) {
    (void)state;
    ebb_timing_params p = shape(10, 200, 4, bits_for(10, 3, 0), 3, 0);
    for (int prefetch = 0; prefetch < 2; prefetch++) {
        ebb_timing *f = create_or_fail(&p, 77);
        f->prefetch = prefetch != 0;
        ebb_hash128 h[3] = {key_hash(f, KEYS_INSERTED, 1),
                            key_hash(f, KEYS_INSERTED, 1),
                            key_hash(f, KEYS_INSERTED, 1)};
        bool seen[3] = {true, false, false};
        assert_int_equal(ebb_timing_test_and_add_batch(f, h, 3, seen), 2);
        assert_false(seen[0]);
        assert_true(seen[1]);
        assert_true(seen[2]);
        /* n = 0 writes nothing (seen untouched) and counts nothing. */
        snap before = snap_save(f);
        seen[0] = true;
        assert_int_equal(ebb_timing_test_and_add_batch(f, h, 0, seen), 0);
        assert_true(seen[0]);
        snap after = snap_save(f);
        support_snap_assert_same(&before, &after);
        ebb_timing_destroy(f);
    }
}

static void hash_batch_is_the_hash(void **state) {
    (void)state;
    ebb_timing_params p = shape(100, 1000, 4, 5, 7, 2);
    ebb_timing *f = create_or_fail(&p, 1234);
    const char *keys[] = {"", "a", "timing", "a longer key of some bytes"};
    size_t lens[4];
    for (int i = 0; i < 4; i++)
        lens[i] = strlen(keys[i]);
    ebb_hash128 out[4];
    ebb_timing_hash_batch(f, (const void *const *)keys, lens, 4, out);
    for (int i = 0; i < 4; i++) {
        ebb_hash128 h = ebb_hash(keys[i], lens[i], 1234);
        assert_true(h.lo == out[i].lo && h.hi == out[i].hi);
        ebb_timing_add(f, keys[i], lens[i]);
        assert_true(ebb_timing_contains_hash(f, h));
    }
    ebb_timing_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Clear, statistics, memory, model                                         */
/* ------------------------------------------------------------------------ */

static void clear_stats_and_memory(void **state) {
    (void)state;
    ebb_timing_params p = shape(100, 1000, 4, 5, 7, 2);
    ebb_timing *f = create_or_fail(&p, 5);
    ebb_timing *fresh = create_or_fail(&p, 5);
    assert_int_equal(support_alloc_live_bytes(),
                     ebb_timing_memory(f) + ebb_timing_memory(fresh));
    for (uint64_t i = 0; i < 333; i++)
        add_key(f, KEYS_INSERTED, i);
    ebb_timing_stats st;
    ebb_timing_get_stats(f, &st);
    assert_int_equal(st.insertions, 333);
    assert_int_equal(st.in_block, 333 % 7);
    assert_int_equal(st.current, (333 / 7) % 19);
    assert_int_equal(st.memory_bytes, ebb_timing_memory(f));
    uint64_t live = 0;
    for (uint64_t i = 0; i < 1000; i++)
        live += timing_live(f, timer(f, i));
    assert_int_equal(st.live_timers, live);
    assert_true(st.live_timers > 0 && st.swept > 0);
    /* Every live timer was written within the window's blocks. */
    assert_true(st.live_timers <= 4 * (100 + 7));
    for (uint64_t i = 333 - 100; i < 333; i++)
        assert_true(has_key(f, KEYS_INSERTED, i));
    ebb_timing_clear(f);
    ebb_timing_get_stats(f, &st);
    assert_int_equal(st.insertions, 0);
    assert_int_equal(st.current, 0);
    assert_int_equal(st.in_block, 0);
    assert_int_equal(st.live_timers, 0);
    assert_int_equal(st.swept, 0);
    assert_int_equal(f->cursor, 0);
    assert_false(has_key(f, KEYS_INSERTED, 332));
    assert_same_state(f, fresh);
    assert_ptr_equal(ebb_timing_get_params(f), &f->params);
    assert_int_equal(ebb_timing_get_params(f)->window, 100);
    ebb_timing_destroy(f);
    ebb_timing_destroy(fresh);
}

static void model_is_kept_canonical(void **state) {
    (void)state;
    ebb_timing_params p = shape(100, 1000, 4, 5, 7, 2);
    ebb_timing *f = create_or_fail(&p, 5);
    assert_int_equal(ebb_timing_get_model(f)->kind, EBB_TIMING_MODEL_DISTINCT);
    ebb_timing_model m;
    memset(&m, 0x5a, sizeof m);
    m.kind = EBB_TIMING_MODEL_UNIFORM;
    m.universe = 1000;
    assert_int_equal(ebb_timing_set_model(f, &m), EBB_OK);
    const ebb_timing_model *got = ebb_timing_get_model(f);
    assert_int_equal(got->kind, EBB_TIMING_MODEL_UNIFORM);
    assert_int_equal(got->universe, 1000);
    assert_int_equal(got->points, 0);
    assert_true(got->default_prior == 0.0 && got->j[5] == 0);
    ebb_timing_model bad = {.kind = EBB_TIMING_MODEL_ZIPF, .universe = 0};
    assert_int_equal(ebb_timing_set_model(f, &bad), EBB_EINVAL);
    assert_int_equal(ebb_timing_set_model(f, NULL), EBB_EINVAL);
    assert_int_equal(ebb_timing_get_model(f)->universe, 1000);
    ebb_timing_model table = {.kind = EBB_TIMING_MODEL_TABLE,
                              .universe = 77,
                              .default_prior = 0.001,
                              .points = 3,
                              .j = {1, 10, 100, 9999},
                              .d = {1.0, 9.0, 60.0, 5.0}};
    assert_int_equal(ebb_timing_set_model(f, &table), EBB_OK);
    got = ebb_timing_get_model(f);
    assert_int_equal(got->universe, 0);
    assert_int_equal(got->points, 3);
    assert_int_equal(got->j[2], 100);
    assert_int_equal(got->j[3], 0);
    assert_true(got->d[2] == 60.0 && got->d[3] == 0.0);
    ebb_timing_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Evidence                                                                 */
/* ------------------------------------------------------------------------ */

/* The evidence by brute force: distinct positions, their reading. */
static void observe_reference(const ebb_timing *f, ebb_hash128 h,
                              ebb_timing_evidence *out) {
    uint64_t bits[EBB_TIMING_MAX_K];
    timing_bits(f, h, bits);
    uint32_t r = 0, c = 0, expired = 0;
    uint64_t oldest = 0;
    for (uint32_t j = 0; j < f->k; j++) {
        bool repeat = false;
        for (uint32_t i = 0; i < j; i++)
            repeat = repeat || bits[i] == bits[j];
        if (repeat)
            continue;
        r++;
        uint64_t v = ebb_cells_read_(&f->timers, bits[j]);
        if (!timing_live(f, v))
            expired++;
    }
    for (uint32_t j = 0; j < f->k && expired == 0; j++) {
        uint64_t a = timing_age(f, ebb_cells_read_(&f->timers, bits[j]));
        if (a > oldest)
            oldest = a;
    }
    for (uint32_t j = 0; j < f->k && expired == 0; j++) {
        bool repeat = false;
        for (uint32_t i = 0; i < j; i++)
            repeat = repeat || bits[i] == bits[j];
        c += !repeat &&
             timing_age(f, ebb_cells_read_(&f->timers, bits[j])) == oldest;
    }
    out->r = r;
    out->expired = expired > 0;
    out->c = expired > 0 ? expired : c;
    out->lambda = expired > 0 ? 0 : oldest;
    out->b = f->in_block;
}

static void expect_evidence(const ebb_timing_evidence *e, uint32_t r,
                            uint32_t c, bool expired, uint64_t lambda,
                            uint64_t b) {
    CHECK(e->r == r && e->c == c && e->expired == expired &&
              e->lambda == lambda && e->b == b,
          "evidence r %u c %u expired %d lambda %llu b %llu, want r %u c %u "
          "expired %d lambda %llu b %llu",
          e->r, e->c, (int)e->expired, (unsigned long long)e->lambda,
          (unsigned long long)e->b, r, c, (int)expired,
          (unsigned long long)lambda, (unsigned long long)b);
}

static void observe_reads_hand_built_timers(void **state) {
    (void)state;
    /* w = 20, B = 4, P = 1: T_Omega = 7, mark 8, limit 6 (R = 0). */
    ebb_timing_params p = shape(20, 1000, 4, 4, 4, 1);
    ebb_timing *f = create_or_fail(&p, 3);
    ebb_hash128 h = key_hash(f, KEYS_INSERTED, 1);
    uint64_t bits[4];
    timing_bits(f, h, bits);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            assert_true(bits[i] != bits[j]); /* this key: 4 distinct */
    ebb_timing_evidence e;
    ebb_timing_observe_hash(f, h, &e); /* all marks */
    expect_evidence(&e, 4, 4, true, 0, 0);
    ebb_timing_set_clock(f, 5, 2);
    uint32_t values[4] = {5, 3, 3, 4}; /* ages 0, 2, 2, 1 */
    for (int i = 0; i < 4; i++)
        ebb_cells_write_(&f->timers, bits[i], values[i]);
    ebb_timing_observe_hash(f, h, &e);
    expect_evidence(&e, 4, 2, false, 2, 2);
    assert_true(ebb_timing_contains_hash(f, h));
    ebb_cells_write_(&f->timers, bits[3], 0); /* age 5 < 6: the oldest */
    ebb_timing_observe_hash(f, h, &e);
    expect_evidence(&e, 4, 1, false, 5, 2);
    ebb_cells_write_(&f->timers, bits[2], 7); /* age 5 + 8 - 7 = 6: expired */
    ebb_timing_observe_hash(f, h, &e);
    expect_evidence(&e, 4, 1, true, 0, 2);
    assert_false(ebb_timing_contains_hash(f, h));
    ebb_cells_write_(&f->timers, bits[1], 8); /* the mark */
    ebb_timing_observe_hash(f, h, &e);
    expect_evidence(&e, 4, 2, true, 0, 2);
    /* T_+ wraps: value 7 at T_+ = 1 has age 2 (8 values). */
    ebb_timing_set_clock(f, 1, 0);
    for (int i = 0; i < 4; i++)
        ebb_cells_write_(&f->timers, bits[i], i == 0 ? 1u : 7u);
    ebb_timing_observe_hash(f, h, &e);
    expect_evidence(&e, 4, 3, false, 2, 0);
    ebb_timing_destroy(f);

    /* Coinciding positions: m = 3, k = 8 (r <= 3); against brute force on
     * random timers and clocks, and a larger m with k = 32. */
    const ebb_timing_params shapes[] = {shape(20, 3, 8, 4, 4, 1),
                                        shape(20, 40, 32, 5, 2, 3)};
    for (size_t s = 0; s < 2; s++) {
        f = create_or_fail(&shapes[s], 3);
        uint64_t rng = 99;
        for (int round = 0; round < 2000; round++) {
            for (uint64_t i = 0; i < f->timers.count; i++)
                ebb_cells_set(&f->timers, i,
                              (uint32_t)(support_splitmix64(&rng) %
                                         (f->mark + 1)));
            ebb_timing_set_clock(f, support_splitmix64(&rng) % (f->mark),
                                 support_splitmix64(&rng) % f->block);
            ebb_hash128 key = {support_splitmix64(&rng),
                               support_splitmix64(&rng)};
            ebb_timing_evidence want;
            observe_reference(f, key, &want);
            ebb_timing_observe_hash(f, key, &e);
            expect_evidence(&e, want.r, want.c, want.expired, want.lambda,
                            want.b);
            assert_true(e.r >= 1 && e.c >= 1 && e.c <= e.r);
            assert_true(e.expired == !ebb_timing_contains_hash(f, key));
        }
        ebb_timing_destroy(f);
    }
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                */
/* ------------------------------------------------------------------------ */

static void snapshot_layout(void **state) {
    (void)state;
    ebb_timing_params p = shape(100, 1000, 4, 5, 7, 2);
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_UNIFORM,
                              .universe = 4096};
    ebb_timing *f = NULL;
    assert_int_equal(ebb_timing_create(&p, &model, 42, &f), EBB_OK);
    for (uint64_t i = 0; i < 50; i++)
        add_key(f, KEYS_INSERTED, i);
    snap s = snap_save(f);
    assert_int_equal(s.size, 32 + PARAM_LEN + 79 * 8 + 8);
    assert_int_equal(support_get_le(s.bytes + OFF_FAMILY, 2), FAMILY_TIMING);
    assert_int_equal(support_get_le(s.bytes + OFF_PARAM_LEN, 4), PARAM_LEN);
    assert_int_equal(support_get_le(s.bytes + OFF_TOTAL, 8), s.size);
    const unsigned char *q = s.bytes + OFF_PARAMS;
    assert_int_equal(support_get_le(q + P_WINDOW, 8), 100);
    assert_int_equal(support_get_le(q + P_TIMERS, 8), 1000);
    assert_int_equal(support_get_le(q + P_K, 4), 4);
    assert_int_equal(support_get_le(q + P_BPT, 4), 5);
    assert_int_equal(support_get_le(q + P_BLOCK, 8), 7);
    assert_int_equal(support_get_le(q + P_PADDING, 8), 2);
    assert_int_equal(support_get_le(q + P_CURRENT, 8), 50 / 7);
    assert_int_equal(support_get_le(q + P_IN_BLOCK, 8), 50 % 7);
    assert_int_equal(support_get_le(q + P_CURSOR, 8), (50 * 48) % 1000);
    assert_int_equal(support_get_le(q + P_INSERTIONS, 8), 50);
    assert_int_equal(support_get_le(q + P_SWEPT, 8), f->swept);
    assert_int_equal(support_get_le(q + P_KIND, 4), 1);
    assert_int_equal(support_get_le(q + P_UNIVERSE, 8), 4096);
    assert_int_equal(support_get_le(q + P_POINTS, 4), 0);
    assert_int_equal(support_get_le(s.bytes + OFF_PAYLOAD, 8),
                     f->timers.words[0]);
    /* Too small a buffer: EBB_EBUFSIZE and the size needed. */
    size_t written = 0;
    assert_int_equal(ebb_timing_save(f, s.bytes, s.size - 1, &written),
                     EBB_EBUFSIZE);
    assert_int_equal(written, s.size);
    assert_int_equal(ebb_timing_save(f, NULL, 0, &written), EBB_EBUFSIZE);
    support_snap_free(&s);
    ebb_timing_destroy(f);
}

static void snapshot_round_trip_continues(void **state) {
    (void)state;
    ebb_timing_model table = {.kind = EBB_TIMING_MODEL_TABLE,
                              .default_prior = 0.01,
                              .points = 3,
                              .j = {1, 10, 100},
                              .d = {1.0, 9.5, 70.0}};
    const ebb_timing_params shapes[] = {shape(100, 1000, 4, 5, 7, 2),
                                        shape(6, 6, 2, 3, 3, 0),
                                        shape(77, 500, 3, 32, 1, 0)};
    for (size_t s = 0; s < 3; s++) {
        ebb_timing *f = NULL;
        assert_int_equal(ebb_timing_create(&shapes[s], &table, 17, &f),
                         EBB_OK);
        for (uint64_t i = 0; i < 1234; i++)
            add_key(f, KEYS_INSERTED, i);
        snap a = snap_save(f);
        ebb_timing *g = NULL;
        assert_int_equal(ebb_timing_load(a.bytes, a.size, &g), EBB_OK);
        snap b = snap_save(g);
        assert_int_equal(a.size, b.size);
        assert_memory_equal(a.bytes, b.bytes, a.size);
        assert_memory_equal(ebb_timing_get_model(g), &f->model,
                            sizeof f->model);
        for (uint64_t i = 1234; i < 1700; i++) {
            add_key(f, KEYS_INSERTED, i);
            add_key(g, KEYS_INSERTED, i);
            assert_true(has_key(f, KEYS_FRESH, i) ==
                        has_key(g, KEYS_FRESH, i));
        }
        assert_same_state(f, g);
        support_snap_free(&a);
        support_snap_free(&b);
        ebb_timing_destroy(f);
        ebb_timing_destroy(g);
    }
}

static void expect_load(const snap *s, ebb_status want, const char *what) {
    ebb_timing *out = OUT_SENTINEL;
    uint64_t live = support_alloc_live_count();
    ebb_status st = ebb_timing_load(s->bytes, s->size, &out);
    CHECK(st == want, "load (%s) = %d, want %d", what, (int)st, (int)want);
    if (st == EBB_OK) {
        ebb_timing_destroy(out);
        return;
    }
    CHECK(out == OUT_SENTINEL, "load (%s) wrote *out", what);
    CHECK(support_alloc_live_count() == live, "load (%s) leaked", what);
}

static snap snap_copy(const snap *s) {
    snap c = {malloc(s->size), s->size};
    assert_non_null(c.bytes);
    memcpy(c.bytes, s->bytes, s->size);
    return c;
}

/* A copy of s with a parameter field replaced and the checksum fixed. */
static void expect_field_refused(const snap *s, size_t offset, size_t width,
                                 uint64_t value, ebb_status want,
                                 const char *what) {
    snap c = snap_copy(s);
    support_put_le(c.bytes + OFF_PARAMS + offset, width, value);
    support_snap_forge_checksum(&c);
    expect_load(&c, want, what);
    support_snap_free(&c);
}

/* Timer i of a snapshot's payload set to v (bpt bits), checksum fixed. */
static void put_timer(snap *s, uint64_t i, uint32_t bpt, uint64_t v) {
    for (uint32_t t = 0; t < bpt; t++) {
        uint64_t bit = i * bpt + t;
        unsigned char *byte = s->bytes + OFF_PAYLOAD + bit / 8;
        unsigned char mask = (unsigned char)(1u << (bit % 8));
        *byte = (unsigned char)(((v >> t) & 1u) ? (*byte | mask)
                                                : (*byte & ~mask));
    }
    support_snap_forge_checksum(s);
}

static void snapshot_rejections(void **state) {
    (void)state;
    /* bpt 4 for T_Omega 3: values 5..15 are neither stamps nor the mark. */
    ebb_timing_params p = shape(6, 6, 2, 4, 3, 0);
    ebb_timing *f = create_or_fail(&p, 1);
    /* The Figure 5 trace up to x9: T_+ 3, b 0, cursor 0, timers
     * 2 2 1 0 4 4. */
    insert_at(f, 0, 1);
    insert_at(f, 2, 3);
    insert_at(f, 4, 5);
    insert_at(f, 0, 1);
    insert_at(f, 0, 2);
    insert_at(f, 1, 2);
    for (int i = 0; i < 3; i++)
        insert_at(f, 0, 1);
    snap s = snap_save(f);
    expect_load(&s, EBB_OK, "as saved");
    ebb_timing *out = OUT_SENTINEL;
    assert_int_equal(ebb_timing_load(s.bytes, s.size, NULL), EBB_EINVAL);
    assert_int_equal(ebb_timing_load(NULL, 0, &out), EBB_ETRUNCATED);

    /* The frame. */
    snap c = snap_copy(&s);
    c.bytes[0] = 'X';
    expect_load(&c, EBB_EMAGIC, "magic");
    support_snap_free(&c);
    c = snap_copy(&s);
    support_put_le(c.bytes + OFF_FAMILY, 2, 4);
    support_snap_forge_checksum(&c);
    expect_load(&c, EBB_EFAMILY, "family 4");
    support_snap_free(&c);
    c = snap_copy(&s);
    c.bytes[OFF_PAYLOAD] ^= 1;
    expect_load(&c, EBB_ECHECKSUM, "checksum");
    support_snap_free(&c);
    c = snap_copy(&s);
    c.size -= 1;
    expect_load(&c, EBB_ETRUNCATED, "short");
    support_snap_free(&c);
    c = snap_copy(&s);
    support_put_le(c.bytes + OFF_PARAM_LEN, 4, PARAM_LEN - 8);
    support_snap_forge_checksum(&c);
    expect_load(&c, EBB_ECORRUPT, "parameter length");
    support_snap_free(&c);

    /* The shape. */
    expect_field_refused(&s, P_WINDOW, 8, 0, EBB_ECORRUPT, "w = 0");
    expect_field_refused(&s, P_WINDOW, 8, 2, EBB_ECORRUPT, "B > w");
    expect_field_refused(&s, P_TIMERS, 8, 0, EBB_ECORRUPT, "m = 0");
    expect_field_refused(&s, P_TIMERS, 8, 17, EBB_ECORRUPT, "m = 17 payload");
    expect_field_refused(&s, P_K, 4, 0, EBB_ECORRUPT, "k = 0");
    expect_field_refused(&s, P_K, 4, 33, EBB_ECORRUPT, "k = 33");
    expect_field_refused(&s, P_BPT, 4, 1, EBB_ECORRUPT, "bpt = 1");
    expect_field_refused(&s, P_BPT, 4, 33, EBB_ECORRUPT, "bpt = 33");
    expect_field_refused(&s, P_BLOCK, 8, 0, EBB_ECORRUPT, "B = 0");
    expect_field_refused(&s, P_PADDING, 8, 13, EBB_ECORRUPT, "P too big");
    /* The clock: outside its range, or not what 9 insertions imply. */
    expect_field_refused(&s, P_CURRENT, 8, 4, EBB_ECORRUPT, "T_+ > T_Omega");
    expect_field_refused(&s, P_CURRENT, 8, 2, EBB_ECORRUPT, "T_+ != 9 / 3");
    expect_field_refused(&s, P_IN_BLOCK, 8, 3, EBB_ECORRUPT, "b >= B");
    expect_field_refused(&s, P_IN_BLOCK, 8, 1, EBB_ECORRUPT, "b != 9 % 3");
    expect_field_refused(&s, P_CURSOR, 8, 6, EBB_ECORRUPT, "cursor >= m");
    expect_field_refused(&s, P_CURSOR, 8, 2, EBB_ECORRUPT, "cursor != 18 % 6");
    expect_field_refused(&s, P_INSERTIONS, 8, 10, EBB_ECORRUPT, "n = 10");
    expect_field_refused(&s, P_SWEPT, 8, 19, EBB_ECORRUPT, "swept > n s");
    expect_field_refused(&s, P_SWEPT, 8, 18, EBB_OK, "swept = n s");
    /* A saturated count says nothing about the clock. */
    expect_field_refused(&s, P_INSERTIONS, 8, UINT64_MAX, EBB_OK, "n = max");
    /* The model: unknown kind, invalid, not canonical. */
    expect_field_refused(&s, P_KIND, 4, 4, EBB_ECORRUPT, "kind 4");
    expect_field_refused(&s, P_KIND, 4, 1, EBB_ECORRUPT, "uniform |U| = 0");
    expect_field_refused(&s, P_UNIVERSE, 8, 5, EBB_ECORRUPT,
                         "distinct with a universe");
    expect_field_refused(&s, P_J + 8 * 63, 8, 1, EBB_ECORRUPT, "j[63] set");
    expect_field_refused(&s, P_D, 8, 1, EBB_ECORRUPT, "d[0] set");
    expect_field_refused(&s, P_PRIOR, 8, 1, EBB_ECORRUPT, "prior set");
    expect_field_refused(&s, P_POINTS, 4, 2, EBB_ECORRUPT, "points set");

    /* The timers. */
    c = snap_copy(&s);
    put_timer(&c, 0, 4, 5);
    expect_load(&c, EBB_ECORRUPT, "timer 5 above the mark 4");
    put_timer(&c, 0, 4, 15);
    expect_load(&c, EBB_ECORRUPT, "timer 15");
    put_timer(&c, 0, 4, 2);
    expect_load(&c, EBB_OK, "timer back to 2");
    /* Timer 5 is examined by the third insertion from now (cursor 0,
     * s = 2), one block later: age 2 reaches 3 = T_Omega in time, age 3
     * would reach 4 and wrap. */
    put_timer(&c, 5, 4, 1);
    expect_load(&c, EBB_OK, "timer 5 age 2");
    put_timer(&c, 5, 4, 0);
    expect_load(&c, EBB_ECORRUPT, "timer 5 age 3 behind the cursor");
    /* Timer 3 (age 3, examined by the second insertion) is legitimate. */
    support_snap_free(&c);
    c = snap_copy(&s);
    c.bytes[c.size - 9] |= 0x80; /* a bit past m bpt = 24 */
    support_snap_forge_checksum(&c);
    expect_load(&c, EBB_ECORRUPT, "tail bit");
    support_snap_free(&c);
    support_snap_free(&s);

    /* A fresh filter: every timer the mark, the clock at zero. */
    ebb_timing_clear(f);
    s = snap_save(f);
    expect_load(&s, EBB_OK, "cleared");
    c = snap_copy(&s);
    put_timer(&c, 2, 4, 0);
    expect_load(&c, EBB_ECORRUPT, "a stamp with no insertion");
    support_snap_free(&c);
    expect_field_refused(&s, P_SWEPT, 8, 1, EBB_ECORRUPT, "swept, n = 0");
    support_snap_free(&s);
    ebb_timing_destroy(f);
}

static ebb_status make_loaded(const void *ctx, ebb_timing **out) {
    const snap *s = ctx;
    return ebb_timing_load(s->bytes, s->size, out);
}

static void load_survives_allocation_failure(void **state) {
    (void)state;
    ebb_timing_params p = shape(100, 1000, 4, 5, 7, 2);
    ebb_timing *f = create_or_fail(&p, 4);
    for (uint64_t i = 0; i < 50; i++)
        add_key(f, KEYS_INSERTED, i);
    snap s = snap_save(f);
    ebb_timing_destroy(f);
    uint64_t n;
    ebb_timing *out = make_under_failures(make_loaded, &s, &n);
    snap t = snap_save(out);
    assert_memory_equal(t.bytes, s.bytes, s.size);
    support_snap_free(&t);
    ebb_timing_destroy(out);
    assert_int_equal(n, 3); /* handle, timers */
    support_snap_free(&s);
}

/* ebb_timing_choose by target rate returns the smallest memory whose best
 * shape meets it, although the best rate is not monotone in memory: at
 * w = 1000 the best class (k = 1, bpt = 2) vanishes after 248 bytes and
 * the rate jumps from 0.770 to 0.818. The former bisection over the best
 * rate answered 264 bytes for 0.815, where 216 meet it. Checked against a
 * scan of every word count up to 400 bytes, for targets across the jump;
 * and at w = 1e5, 0.77 takes 24808 bytes (the bisection: 29624). */
static void choose_by_rate_is_smallest_memory(void **state)
{
    (void)state;
    const uint64_t w = 1000;
    double best[51]; /* best[i]: the best rate in 8 i bytes */
    for (uint32_t i = 1; i <= 50; i++) {
        ebb_timing_params p;
        best[i] = 2.0;
        if (ebb_timing_choose(w, 8u * i, 0.0, &p) == EBB_OK)
            best[i] = ebb_timing_fp(&p);
    }
    uint32_t below = 0; /* targets the scan shows were answered too big */
    for (double target = 0.70; target <= 0.90; target += 0.0025) {
        uint32_t smallest = 0;
        for (uint32_t i = 1; i <= 50 && smallest == 0; i++)
            if (best[i] <= target)
                smallest = i;
        assert_true(smallest != 0);
        ebb_timing_params p;
        ebb_timing_shape shape;
        assert_int_equal(ebb_timing_choose(w, 0, target, &p), EBB_OK);
        assert_int_equal(ebb_timing_describe(&p, &shape), EBB_OK);
        assert_true(ebb_timing_fp(&p) <= target);
        assert_int_equal(shape.memory_bytes, 8u * smallest);
        /* a target met before the jump but not just after it */
        below += best[smallest] <= target && best[32] > target &&
                 smallest < 32;
    }
    assert_true(below > 0); /* the grid crosses the non-monotone step */
    ebb_timing_params p;
    ebb_timing_shape shape;
    assert_int_equal(ebb_timing_choose(100000, 0, 0.77, &p), EBB_OK);
    assert_int_equal(ebb_timing_describe(&p, &shape), EBB_OK);
    assert_int_equal(shape.memory_bytes, 24808);
}

/* The prior a query without one takes, and the models' names, which both
 * front ends print. */
static void model_prior_and_name(void **state) {
    ebb_timing_model m;
    (void)state;
    memset(&m, 0, sizeof m);
    m.kind = EBB_TIMING_MODEL_DISTINCT;
    assert_true(ebb_timing_model_prior(&m) == 0.0);
    assert_string_equal(ebb_timing_model_name(m.kind), "distinct");
    m.kind = EBB_TIMING_MODEL_UNIFORM;
    m.universe = 8;
    assert_true(ebb_timing_model_prior(&m) == 0.125);
    assert_string_equal(ebb_timing_model_name(m.kind), "uniform");
    m.kind = EBB_TIMING_MODEL_ZIPF;
    assert_true(ebb_timing_model_prior(&m) == 0.0);
    assert_string_equal(ebb_timing_model_name(m.kind), "zipf");
    m.kind = EBB_TIMING_MODEL_TABLE;
    m.default_prior = 0.25;
    assert_true(ebb_timing_model_prior(&m) == 0.25);
    assert_string_equal(ebb_timing_model_name(m.kind), "table");
}

int main(void) {
#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)
    const struct CMUnitTest tests[] = {
        TEST(model_prior_and_name),
        TEST(params_refuse_every_invalid_field),
        TEST(describe_gives_the_derived_shape),
        TEST(create_refuses_invalid_model_and_out),
        TEST(create_survives_allocation_failure),
        TEST(new_filter_is_all_marks),
        TEST(figure5_trace),
        TEST(explicit_shapes_read_exactly),
        TEST(chosen_shapes_read_exactly),
        TEST(slower_sweep_breaks_the_property),
        TEST(choose_paper_follows_the_rule),
        TEST(choose_meets_memory_or_rate),
        TEST(choose_refuses_rate_one),
        TEST(fp_is_the_block_average),
        TEST(batches_equal_single_calls),
        TEST(test_and_add_batch_equals_single_calls),
        TEST(test_and_add_batch_sees_its_own_repeat),
        TEST(hash_batch_is_the_hash),
        TEST(clear_stats_and_memory),
        TEST(model_is_kept_canonical),
        TEST(observe_reads_hand_built_timers),
        TEST(snapshot_layout),
        TEST(snapshot_rejections),
        TEST(snapshot_round_trip_continues),
        TEST(load_survives_allocation_failure),
        TEST(choose_by_rate_is_smallest_memory),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
