/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_spectral.c: the Spectral Bloom filter's core (src/spectral/
 * spectral.c, params.c, batch.c, merge.c, snapshot.c) for Minimum
 * Selection and Minimal Increase; RM's own behaviour is test_spectral_rm's.
 *
 *   - shapes: params_init (RM's split), params_check, choose (the smallest
 *     m meeting the target, its best k), memory_for = memory;
 *   - one-sidedness: MS never below the truth on random streams with
 *     removals of what was inserted, MI never below on insert-only streams
 *     and never above MS; small m so collisions happen, m = 1 and 2 so a
 *     key's positions coincide;
 *   - refusals: MI removal EBB_EINVAL, over-removal EBB_EUNDERFLOW with
 *     nothing changed but the refusal count (snapshots compared);
 *   - saturation with 1..4-bit counters: sticky, counted, SATURATED;
 *   - union equals the filter built from both streams (MS, snapshots
 *     byte-identical, weights too), MI's union and the join one-sided;
 *     incompatible filters refused with neither changed;
 *   - batches byte-identical to single calls, with and without prefetch;
 *   - allocation failure at every step of create and load;
 *   - snapshots: round trips, and every truncation and field corruption
 *     refused with its status.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "ebb/spectral.h"
#include "support.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static ebb_spectral_params shape(uint64_t m, uint32_t bits, uint32_t k,
                                 ebb_spectral_method method, uint64_t seed)
{
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_params_init(m, bits, k, method, &p), EBB_OK);
    p.seed = seed;
    return p;
}

/* Every field of the params the filter reports is the one it was given
 * (a failure names the field). */
static void assert_params_kept(const ebb_spectral_params *got,
                               const ebb_spectral_params *given)
{
    assert_int_equal(got->counters, given->counters);
    assert_int_equal(got->counter_bits, given->counter_bits);
    assert_int_equal(got->k, given->k);
    assert_int_equal(got->method, given->method);
    assert_int_equal(got->secondary, given->secondary);
    assert_int_equal(got->secondary_k, given->secondary_k);
    assert_int_equal(got->marker, given->marker);
    assert_int_equal(got->marker_size, given->marker_size);
    assert_int_equal(got->trap_slots, given->trap_slots);
    assert_int_equal(got->range, given->range);
    assert_int_equal(got->seed, given->seed);
}

static ebb_spectral *make(const ebb_spectral_params *p)
{
    ebb_spectral *f = NULL;
    assert_int_equal(ebb_spectral_create(p, &f), EBB_OK);
    return f;
}

static support_snap snap(const ebb_spectral *f)
{
    size_t need = 0;
    assert_int_equal(ebb_spectral_save(f, NULL, 0, &need), EBB_EBUFSIZE);
    assert_int_equal(need, ebb_spectral_snapshot_size(f));
    support_snap s = support_snap_alloc(need);
    size_t written = 0;
    assert_int_equal(ebb_spectral_save(f, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, need);
    return s;
}

static ebb_hash128 key_hash(const ebb_spectral *f, uint32_t stream,
                            uint64_t i)
{
    support_key key = support_key_make(stream, i);
    return ebb_spectral_hash(f, key.bytes, sizeof key.bytes);
}

/* Offsets in the snapshot: frame header 32, then the parameter block. */
enum {
    OFF_COUNTERS = 32,
    OFF_BITS = 40,
    OFF_K = 44,
    OFF_METHOD = 48,
    OFF_SECONDARY_K = 52,
    OFF_SECONDARY = 56,
    OFF_MARKER_KIND = 64,
    OFF_RESERVED = 68,
    OFF_MARKER = 72,
    OFF_TRAPS = 80,
    OFF_RANGE = 88,
    OFF_ADDED = 96,
    OFF_REMOVED = 104,
    OFF_REFUSED = 112,
    OFF_SATURATIONS = 120,
    OFF_MOVED = 128,
    OFF_MOVES_REFUSED = 136,
    OFF_TRAPS_SET = 144,
    OFF_TRAPS_SPRUNG = 152,
    OFF_TRAPS_FULL = 160,
    OFF_NET = 168,
    OFF_TRAPS_USED = 176,
    OFF_FINGERPRINTS_USED = 184,
    OFF_PAYLOAD = 192
};

/* ------------------------------------------------------------------------ */
/* Shapes                                                                   */
/* ------------------------------------------------------------------------ */

static void params_init_and_check(void **state)
{
    (void)state;
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_params_init(100, 8, 4, EBB_SPECTRAL_MS, &p),
                     EBB_OK);
    assert_int_equal(p.counters, 100);
    assert_int_equal(p.secondary + p.secondary_k + (uint64_t)p.marker +
                         p.marker_size + p.trap_slots + p.range + p.seed,
                     0);
    /* RM: m_s = ceil(m / 10), m_p = m - m_s, k_s = min(2, k), an exact
     * marker of ceil(m_s / 2) slots. */
    const uint64_t totals[] = {2, 3, 4, 5, 9, 10, 11, 21, 1000, 7143};
    for (size_t i = 0; i < sizeof totals / sizeof *totals; i++) {
        uint64_t m = totals[i];
        for (uint32_t k = 1; k <= 3; k++) {
            assert_int_equal(
                ebb_spectral_params_init(m, 8, k, EBB_SPECTRAL_RM, &p),
                EBB_OK);
            assert_int_equal(p.secondary, (m + 9) / 10);
            assert_int_equal(p.counters + p.secondary, m);
            assert_int_equal(p.secondary_k, k < 2 ? k : 2);
            assert_int_equal(p.marker, EBB_SPECTRAL_MARKER_EXACT);
            assert_int_equal(p.marker_size, (p.secondary + 1) / 2);
        }
    }
    assert_int_equal(ebb_spectral_params_init(7143, 8, 5, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    assert_int_equal(p.counters, 6428);
    assert_int_equal(p.secondary, 715);
    assert_int_equal(p.marker_size, 358);
    assert_int_equal(ebb_spectral_params_init(1, 8, 3, EBB_SPECTRAL_RM, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_params_init(0, 8, 3, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_params_init(10, 0, 3, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_params_init(10, 33, 3, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_params_init(10, 8, 0, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_params_init(10, 8, 33, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(
        ebb_spectral_params_init(EBB_SPECTRAL_MAX_COUNTERS + 1, 8, 3,
                                 EBB_SPECTRAL_MS, &p),
        EBB_EINVAL);
    assert_int_equal(
        ebb_spectral_params_init(10, 8, 3, (ebb_spectral_method)3, &p),
        EBB_EINVAL);

    ebb_spectral_params ms = shape(10, 8, 3, EBB_SPECTRAL_MS, 0);
    assert_int_equal(ebb_spectral_params_check(&ms), EBB_OK);
    ebb_spectral_params bad = ms;
    bad.secondary = 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad = ms;
    bad.marker_size = 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad = ms;
    bad.secondary_k = 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad = ms;
    bad.marker = EBB_SPECTRAL_MARKER_NONE;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad = ms;
    bad.trap_slots = 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad = ms;
    bad.range = EBB_SPECTRAL_MAX_RANGE + 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    ebb_spectral_params rm = shape(30, 8, 3, EBB_SPECTRAL_RM, 0);
    bad = rm;
    bad.secondary = 0;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    /* secondary_k 1..32; the marker's size by kind. */
    bad = rm;
    bad.secondary_k = 0;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad.secondary_k = EBB_SPECTRAL_MAX_K + 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad.secondary_k = EBB_SPECTRAL_MAX_K;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_OK);
    const ebb_spectral_marker kinds[3] = {EBB_SPECTRAL_MARKER_EXACT,
                                          EBB_SPECTRAL_MARKER_BLOOM,
                                          EBB_SPECTRAL_MARKER_NONE};
    for (int i = 0; i < 3; i++) {
        bool none = kinds[i] == EBB_SPECTRAL_MARKER_NONE;
        bad = rm;
        bad.marker = kinds[i];
        bad.marker_size = 0;
        assert_int_equal(ebb_spectral_params_check(&bad),
                         none ? EBB_OK : EBB_EINVAL);
        bad.marker_size = 1;
        assert_int_equal(ebb_spectral_params_check(&bad),
                         none ? EBB_EINVAL : EBB_OK);
        bad.marker_size = EBB_SPECTRAL_MAX_COUNTERS + 1;
        assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    }
    bad = rm;
    bad.marker = (ebb_spectral_marker)3;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad = rm;
    bad.trap_slots = rm.counters + 1;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_EINVAL);
    bad.trap_slots = rm.counters;
    assert_int_equal(ebb_spectral_params_check(&bad), EBB_OK);
    assert_int_equal(ebb_spectral_params_check(NULL), EBB_EINVAL);

    ebb_spectral *f = NULL;
    bad = ms;
    bad.k = 0;
    assert_int_equal(ebb_spectral_create(&bad, &f), EBB_EINVAL);
    assert_null(f);
    assert_int_equal(ebb_spectral_create(&ms, NULL), EBB_EINVAL);
    assert_int_equal(support_alloc_calls(), 0);
}

/* The best E_b over k at m (what choose minimises). */
static double best_ratio(ebb_spectral_params p, uint64_t m, uint64_t n,
                         uint32_t *k_out)
{
    double best = 2.0;
    p.counters = m;
    for (uint32_t k = 1; k <= EBB_SPECTRAL_MAX_K; k++) {
        p.k = k;
        double e = ebb_spectral_error_ratio(&p, n);
        if (e < best) {
            best = e;
            *k_out = k;
        }
    }
    return best;
}

static void choose_is_smallest(void **state)
{
    (void)state;
    const uint64_t ns[] = {1, 10, 1000, 100000};
    const double targets[] = {0.5, 0.1, 0.01, 1e-4, 1e-9};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        for (size_t b = 0; b < sizeof targets / sizeof *targets; b++) {
            ebb_spectral_params p;
            assert_int_equal(ebb_spectral_choose(ns[a], targets[b],
                                                 EBB_SPECTRAL_MS, &p),
                             EBB_OK);
            assert_int_equal(p.counter_bits, 32);
            double e = ebb_spectral_error_ratio(&p, ns[a]);
            CHECK(e <= targets[b], "n %llu target %g: E_b %g",
                  (unsigned long long)ns[a], targets[b], e);
            uint32_t k = 0;
            double at = best_ratio(p, p.counters, ns[a], &k);
            assert_int_equal(k, p.k);
            assert_true(at == e);
            if (p.counters > 1) {
                double below = best_ratio(p, p.counters - 1, ns[a], &k);
                CHECK(below > targets[b], "m - 1 meets the target: %g",
                      below);
            }
            /* RM: that m is the primary's; the secondary ceil(m / 9),
             * k_s 2, an exact marker of ceil(m_s / 2) slots on top. */
            ebb_spectral_params rm;
            assert_int_equal(ebb_spectral_choose(ns[a], targets[b],
                                                 EBB_SPECTRAL_RM, &rm),
                             EBB_OK);
            assert_int_equal(rm.counters, p.counters);
            assert_int_equal(rm.secondary, (p.counters + 8) / 9);
            assert_int_equal(rm.k, p.k);
            assert_int_equal(rm.secondary_k, 2);
            assert_int_equal(rm.marker, EBB_SPECTRAL_MARKER_EXACT);
            assert_int_equal(rm.marker_size, (rm.secondary + 1) / 2);
            assert_true(ebb_spectral_memory_for(&rm) >
                        ebb_spectral_memory_for(&p) + 8 * rm.marker_size);
        }
    }
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_choose(0, 0.1, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_choose(10, 0.0, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_choose(10, 1.0, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_choose(10, NAN, EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    assert_int_equal(ebb_spectral_choose(UINT64_C(1) << 50, 1e-12,
                                         EBB_SPECTRAL_MS, &p),
                     EBB_EINVAL);
    /* gamma and E_b by hand. */
    p = shape(1000, 8, 4, EBB_SPECTRAL_MS, 0);
    assert_true(fabs(ebb_spectral_gamma(&p, 250) - 1.0) < 1e-12);
    double expect = pow(1.0 - pow(1.0 - 1.0 / 1000, 4.0 * 250), 4);
    assert_true(fabs(ebb_spectral_error_ratio(&p, 250) - expect) < 1e-12);
    p.k = 0;
    assert_true(isnan(ebb_spectral_error_ratio(&p, 250)));
    assert_true(isnan(ebb_spectral_gamma(&p, 250)));
    assert_int_equal(ebb_spectral_memory_for(&p), 0);
}

static void memory_and_stats(void **state)
{
    (void)state;
    ebb_spectral_params shapes[3] = {
        shape(1000, 5, 3, EBB_SPECTRAL_MS, 1),
        shape(777, 32, 7, EBB_SPECTRAL_MI, 2),
        shape(999, 3, 4, EBB_SPECTRAL_RM, 3),
    };
    shapes[2].trap_slots = 17;
    for (int s = 0; s < 3; s++) {
        ebb_spectral *f = make(&shapes[s]);
        assert_int_equal(ebb_spectral_memory(f),
                         ebb_spectral_memory_for(&shapes[s]));
        assert_int_equal(support_alloc_live_bytes(), ebb_spectral_memory(f));
        ebb_spectral_stats st;
        ebb_spectral_get_stats(f, &st);
        assert_int_equal(st.memory_bytes, ebb_spectral_memory(f));
        assert_int_equal(st.nonzero, 0);
        assert_params_kept(ebb_spectral_get_params(f), &shapes[s]);
        ebb_spectral_destroy(f);
    }
    ebb_spectral_destroy(NULL);
    /* nonzero: one key with distinct positions on a large filter. */
    ebb_spectral_params p = shape(1u << 20, 8, 5, EBB_SPECTRAL_MS, 4);
    ebb_spectral *f = make(&p);
    ebb_spectral_add(f, "x", 1, 3);
    ebb_spectral_add(f, "y", 1, 0);
    ebb_spectral_stats st;
    ebb_spectral_get_stats(f, &st);
    assert_int_equal(st.nonzero, 5);
    assert_int_equal(st.added, 3);
    assert_int_equal(ebb_spectral_remove(f, "x", 1, 2), EBB_OK);
    ebb_spectral_get_stats(f, &st);
    assert_int_equal(st.removed, 2);
    assert_int_equal(ebb_spectral_estimate(f, "x", 1), 1);
    ebb_spectral_clear(f);
    ebb_spectral_get_stats(f, &st);
    assert_int_equal(st.added + st.removed + st.nonzero, 0);
    assert_int_equal(ebb_spectral_estimate(f, "x", 1), 0);
    ebb_spectral_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* One-sidedness                                                            */
/* ------------------------------------------------------------------------ */

#define KEYS 200

/* A random stream over KEYS keys into f (MS: with removals of what was
 * inserted); truth[] follows. */
static void random_stream(ebb_spectral *f, uint64_t seed, bool removals,
                          uint64_t *truth, uint32_t steps)
{
    uint64_t rng = seed;
    for (uint32_t s = 0; s < steps; s++) {
        uint64_t x = support_splitmix64(&rng);
        uint64_t i = x % KEYS;
        uint64_t r = (x >> 20) % 4;
        ebb_hash128 h = key_hash(f, KEYS_INSERTED, i);
        if (removals && (x >> 40) % 3 == 0) {
            uint64_t take = r <= truth[i] ? r : truth[i];
            assert_int_equal(ebb_spectral_remove_hash(f, h, take), EBB_OK);
            truth[i] -= take;
        } else {
            assert_int_equal(ebb_spectral_add_hash(f, h, r), EBB_OK);
            truth[i] += r;
        }
    }
}

static void ms_never_below_truth(void **state)
{
    (void)state;
    const uint64_t ms[] = {1, 2, 7, 64, 500};
    const uint32_t ks[] = {1, 3, 5};
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++) {
        for (size_t b = 0; b < sizeof ks / sizeof *ks; b++) {
            for (int removals = 0; removals < 2; removals++) {
                ebb_spectral_params p =
                    shape(ms[a], 32, ks[b], EBB_SPECTRAL_MS, a * 10 + b);
                ebb_spectral *f = make(&p);
                uint64_t truth[KEYS] = {0};
                random_stream(f, 100 + a * 10 + b, removals, truth, 3000);
                uint64_t above = 0;
                for (uint64_t i = 0; i < KEYS; i++) {
                    uint64_t e = ebb_spectral_estimate_hash(
                        f, key_hash(f, KEYS_INSERTED, i));
                    CHECK(e >= truth[i], "m %llu k %u key %llu: %llu < %llu",
                          (unsigned long long)ms[a], ks[b],
                          (unsigned long long)i, (unsigned long long)e,
                          (unsigned long long)truth[i]);
                    above += e > truth[i];
                }
                /* Small filters collide: the check is not vacuous. */
                if (ms[a] <= 64)
                    assert_true(above > 0);
                ebb_spectral_destroy(f);
            }
        }
    }
}

static void mi_never_below_truth_nor_above_ms(void **state)
{
    (void)state;
    const uint64_t ms[] = {1, 2, 7, 64, 500};
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++) {
        ebb_spectral_params p = shape(ms[a], 32, 3, EBB_SPECTRAL_MI, 9);
        ebb_spectral_params q = shape(ms[a], 32, 3, EBB_SPECTRAL_MS, 9);
        ebb_spectral *mi = make(&p), *msf = make(&q);
        uint64_t truth[KEYS] = {0}, truth2[KEYS] = {0};
        random_stream(mi, 7 + a, false, truth, 3000);
        random_stream(msf, 7 + a, false, truth2, 3000);
        uint64_t tighter = 0;
        for (uint64_t i = 0; i < KEYS; i++) {
            ebb_hash128 h = key_hash(mi, KEYS_INSERTED, i);
            uint64_t e = ebb_spectral_estimate_hash(mi, h);
            uint64_t e_ms = ebb_spectral_estimate_hash(msf, h);
            CHECK(e >= truth[i], "m %llu key %llu: %llu < %llu",
                  (unsigned long long)ms[a], (unsigned long long)i,
                  (unsigned long long)e, (unsigned long long)truth[i]);
            CHECK(e <= e_ms, "MI %llu above MS %llu", (unsigned long long)e,
                  (unsigned long long)e_ms);
            tighter += e < e_ms;
        }
        if (ms[a] >= 7 && ms[a] <= 64)
            assert_true(tighter > 0);
        /* Deletions refused under MI, nothing changed. */
        support_snap before = snap(mi);
        ebb_hash128 h = key_hash(mi, KEYS_INSERTED, 0);
        assert_int_equal(ebb_spectral_remove_hash(mi, h, 1), EBB_EINVAL);
        assert_int_equal(ebb_spectral_remove(mi, "a", 1, 1), EBB_EINVAL);
        support_snap after = snap(mi);
        support_snap_assert_same(&before, &after);
        ebb_spectral_destroy(mi);
        ebb_spectral_destroy(msf);
    }
}

static void mi_remove_unsafe(void **state)
{
    (void)state;
    ebb_spectral_params p = shape(1u << 16, 16, 4, EBB_SPECTRAL_MI, 5);
    ebb_spectral *f = make(&p);
    assert_int_equal(ebb_spectral_add(f, "alpha", 5, 3), EBB_OK);
    assert_int_equal(ebb_spectral_add(f, "alpha", 5, 2), EBB_OK);
    assert_int_equal(ebb_spectral_estimate(f, "alpha", 5), 5);
    ebb_hash128 h = ebb_spectral_hash(f, "alpha", 5);
    assert_int_equal(ebb_spectral_remove_unsafe(f, h, 4), EBB_OK);
    assert_int_equal(ebb_spectral_estimate_hash(f, h), 1);
    assert_int_equal(ebb_spectral_remove_unsafe(f, h, 2), EBB_EUNDERFLOW);
    assert_int_equal(ebb_spectral_remove_unsafe(f, h, 1), EBB_OK);
    assert_int_equal(ebb_spectral_estimate_hash(f, h), 0);
    ebb_spectral_stats st;
    ebb_spectral_get_stats(f, &st);
    assert_int_equal(st.removed, 5);
    assert_int_equal(st.refused_removals, 1);
    assert_int_equal(st.nonzero, 0);
    ebb_spectral_destroy(f);
}

/* m = 1: every position is counter 0; m = 2, k = 4: some coincide. */
static void coincident_positions(void **state)
{
    (void)state;
    ebb_spectral_params p = shape(1, 16, 3, EBB_SPECTRAL_MS, 0);
    ebb_spectral *f = make(&p);
    assert_int_equal(ebb_spectral_add(f, "x", 1, 2), EBB_OK);
    /* One counter, added at 3 positions: 6. */
    assert_int_equal(ebb_spectral_estimate(f, "x", 1), 6);
    assert_int_equal(ebb_spectral_remove(f, "x", 1, 3), EBB_EUNDERFLOW);
    assert_int_equal(ebb_spectral_remove(f, "x", 1, 2), EBB_OK);
    assert_int_equal(ebb_spectral_estimate(f, "x", 1), 0);
    assert_int_equal(ebb_spectral_remove(f, "x", 1, 1), EBB_EUNDERFLOW);
    ebb_spectral_destroy(f);
    /* MI on m = 1: the counter is the largest count, added once. */
    p = shape(1, 16, 3, EBB_SPECTRAL_MI, 0);
    f = make(&p);
    ebb_spectral_add(f, "x", 1, 2);
    ebb_spectral_add(f, "y", 1, 1);
    assert_int_equal(ebb_spectral_estimate(f, "x", 1), 3);
    ebb_spectral_destroy(f);
    /* m = 2, k = 4: add and remove of many keys return to zero. */
    p = shape(2, 16, 4, EBB_SPECTRAL_MS, 0);
    f = make(&p);
    for (uint64_t i = 0; i < 50; i++)
        ebb_spectral_add_hash(f, key_hash(f, KEYS_INSERTED, i), i % 3 + 1);
    for (uint64_t i = 0; i < 50; i++)
        assert_int_equal(ebb_spectral_remove_hash(
                             f, key_hash(f, KEYS_INSERTED, i), i % 3 + 1),
                         EBB_OK);
    ebb_spectral_stats st;
    ebb_spectral_get_stats(f, &st);
    assert_int_equal(st.nonzero, 0);
    assert_int_equal(st.refused_removals, 0);
    ebb_spectral_destroy(f);
}

static void over_removal_changes_nothing(void **state)
{
    (void)state;
    ebb_spectral_params p = shape(50, 8, 3, EBB_SPECTRAL_MS, 77);
    ebb_spectral *f = make(&p);
    uint64_t truth[KEYS] = {0};
    random_stream(f, 3, true, truth, 400);
    uint64_t refusals = 0;
    for (uint64_t i = 0; i < KEYS; i++) {
        ebb_hash128 h = key_hash(f, KEYS_INSERTED, i);
        uint64_t e = ebb_spectral_estimate_hash(f, h);
        support_snap before = snap(f);
        /* e + 1: more than any of its counters holds (its minimum). */
        ebb_status st = ebb_spectral_remove_hash(f, h, e + 1);
        assert_int_equal(st, EBB_EUNDERFLOW);
        refusals++;
        support_put_le(before.bytes + OFF_REFUSED, 8,
                       support_get_le(before.bytes + OFF_REFUSED, 8) + 1);
        support_snap_forge_checksum(&before);
        support_snap after = snap(f);
        support_snap_assert_same(&before, &after);
    }
    /* A key never added, on a large filter: all counters 0. */
    ebb_spectral_params q = shape(1u << 16, 8, 3, EBB_SPECTRAL_MS, 77);
    ebb_spectral *g = make(&q);
    ebb_spectral_add(g, "a", 1, 1);
    assert_int_equal(ebb_spectral_remove(g, "b", 1, 1), EBB_EUNDERFLOW);
    assert_int_equal(ebb_spectral_remove(g, "a", 1, 2), EBB_EUNDERFLOW);
    assert_int_equal(ebb_spectral_remove(g, "a", 1, 0), EBB_OK);
    assert_int_equal(ebb_spectral_estimate(g, "a", 1), 1);
    ebb_spectral_stats st;
    ebb_spectral_get_stats(f, &st);
    assert_int_equal(st.refused_removals, refusals);
    ebb_spectral_destroy(g);
    ebb_spectral_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Saturation                                                               */
/* ------------------------------------------------------------------------ */

/* A key whose k positions are distinct in f. */
static ebb_hash128 distinct_key(const ebb_spectral *f, ebb_spectral *probe)
{
    for (uint64_t i = 0; i < 100000; i++) {
        ebb_hash128 h = key_hash(f, KEYS_OTHER, i);
        ebb_spectral_clear(probe);
        ebb_spectral_add_hash(probe, h, 1);
        ebb_spectral_stats st;
        ebb_spectral_get_stats(probe, &st);
        if (st.nonzero == ebb_spectral_get_params(f)->k)
            return h;
    }
    fail_msg("no key with distinct positions");
    ebb_hash128 none = {0, 0};
    return none;
}

static void saturation_is_sticky_and_counted(void **state)
{
    (void)state;
    for (uint32_t bits = 1; bits <= 4; bits++) {
        for (int mi = 0; mi < 2; mi++) {
            ebb_spectral_method method =
                mi ? EBB_SPECTRAL_MI : EBB_SPECTRAL_MS;
            ebb_spectral_params p = shape(64, bits, 3, method, bits);
            ebb_spectral *f = make(&p), *probe = make(&p);
            uint64_t max = (UINT64_C(1) << bits) - 1;
            ebb_hash128 h = distinct_key(f, probe);
            ebb_spectral_stats st;
            /* Reaching max exactly is not a clip, but reads saturated. */
            assert_int_equal(ebb_spectral_add_hash(f, h, max), EBB_OK);
            ebb_spectral_get_stats(f, &st);
            assert_int_equal(st.saturations, 0);
            assert_true(ebb_spectral_estimate_hash(f, h) ==
                        EBB_SPECTRAL_SATURATED);
            /* One more: every position clips. */
            ebb_spectral_add_hash(f, h, 1);
            ebb_spectral_get_stats(f, &st);
            assert_int_equal(st.saturations, 3);
            /* r above max on a fresh filter clips each position once. */
            ebb_spectral_clear(f);
            ebb_spectral_add_hash(f, h, max + 5);
            ebb_spectral_get_stats(f, &st);
            assert_int_equal(st.saturations, 3);
            assert_int_equal(st.added, max + 5);
            assert_true(ebb_spectral_estimate_hash(f, h) ==
                        EBB_SPECTRAL_SATURATED);
            if (!mi) {
                /* Sticky: removals accepted, saturated counters kept. */
                assert_int_equal(ebb_spectral_remove_hash(f, h, 1), EBB_OK);
                assert_true(ebb_spectral_estimate_hash(f, h) ==
                            EBB_SPECTRAL_SATURATED);
                assert_int_equal(ebb_spectral_remove_hash(f, h, max + 9),
                                 EBB_OK);
                assert_true(ebb_spectral_estimate_hash(f, h) ==
                            EBB_SPECTRAL_SATURATED);
            } else {
                assert_int_equal(ebb_spectral_remove_unsafe(f, h, 1), EBB_OK);
                assert_true(ebb_spectral_estimate_hash(f, h) ==
                            EBB_SPECTRAL_SATURATED);
            }
            /* Below max: a plain number, never SATURATED. */
            if (max > 1) {
                ebb_spectral_clear(f);
                ebb_spectral_add_hash(f, h, max - 1);
                assert_int_equal(ebb_spectral_estimate_hash(f, h), max - 1);
            }
            ebb_spectral_destroy(probe);
            ebb_spectral_destroy(f);
        }
    }
    /* An unsaturated counter beside saturated ones still refuses. */
    ebb_spectral_params p = shape(64, 2, 2, EBB_SPECTRAL_MS, 1);
    ebb_spectral *f = make(&p), *probe = make(&p);
    ebb_hash128 h = distinct_key(f, probe);
    ebb_spectral_add_hash(f, h, 1);
    assert_int_equal(ebb_spectral_remove_hash(f, h, 4), EBB_EUNDERFLOW);
    assert_int_equal(ebb_spectral_estimate_hash(f, h), 1);
    ebb_spectral_destroy(probe);
    ebb_spectral_destroy(f);
}

/* ------------------------------------------------------------------------ */
/* Union and join                                                           */
/* ------------------------------------------------------------------------ */

static void ms_union_is_the_combined_filter(void **state)
{
    (void)state;
    ebb_spectral_params p = shape(40, 16, 3, EBB_SPECTRAL_MS, 11);
    for (uint64_t weight = 1; weight <= 3; weight++) {
        ebb_spectral *a = make(&p), *b = make(&p), *c = make(&p);
        uint64_t ta[KEYS] = {0}, tb[KEYS] = {0}, tc[KEYS] = {0};
        random_stream(a, 21, true, ta, 500);
        random_stream(b, 22, true, tb, 500);
        random_stream(c, 21, true, tc, 500);
        for (uint64_t w = 0; w < weight; w++) {
            /* The stream b saw, its removals decided by its own truth. */
            memset(tc, 0, sizeof tc);
            random_stream(c, 22, true, tc, 500);
        }
        assert_int_equal(ebb_spectral_merge(a, b, weight, 0), EBB_OK);
        support_snap sa = snap(a), sc = snap(c);
        support_snap_assert_same(&sa, &sc);
        ebb_spectral_destroy(a);
        ebb_spectral_destroy(b);
        ebb_spectral_destroy(c);
    }
    /* Self-union doubles. */
    ebb_spectral *a = make(&p);
    ebb_spectral_add(a, "x", 1, 3);
    uint64_t e = ebb_spectral_estimate(a, "x", 1);
    assert_int_equal(ebb_spectral_merge(a, a, 1, 0), EBB_OK);
    assert_int_equal(ebb_spectral_estimate(a, "x", 1), 2 * e);
    ebb_spectral_destroy(a);
}

static void mi_union_and_join_are_one_sided(void **state)
{
    (void)state;
    for (int mi = 0; mi < 2; mi++) {
        ebb_spectral_params p = shape(
            60, 32, 3, mi ? EBB_SPECTRAL_MI : EBB_SPECTRAL_MS, 12);
        ebb_spectral *a = make(&p), *b = make(&p), *j = make(&p);
        uint64_t ta[KEYS] = {0}, tb[KEYS] = {0}, tj[KEYS] = {0};
        random_stream(a, 31, false, ta, 600);
        random_stream(b, 32, false, tb, 600);
        random_stream(j, 31, false, tj, 600);
        assert_int_equal(ebb_spectral_join(j, b), EBB_OK);
        assert_int_equal(ebb_spectral_merge(a, b, 1, 0), EBB_OK);
        for (uint64_t i = 0; i < KEYS; i++) {
            ebb_hash128 h = key_hash(a, KEYS_INSERTED, i);
            uint64_t u = ebb_spectral_estimate_hash(a, h);
            uint64_t x = ebb_spectral_estimate_hash(j, h);
            CHECK(u >= ta[i] + tb[i], "union %llu < %llu",
                  (unsigned long long)u, (unsigned long long)(ta[i] + tb[i]));
            CHECK(x >= ta[i] * tb[i], "join %llu < %llu",
                  (unsigned long long)x, (unsigned long long)(ta[i] * tb[i]));
        }
        ebb_spectral_destroy(a);
        ebb_spectral_destroy(b);
        ebb_spectral_destroy(j);
    }
    /* Join by hand on m = 1: 3 * 4 = 12; with a 3-bit counter, saturated. */
    ebb_spectral_params p = shape(1, 8, 1, EBB_SPECTRAL_MS, 0);
    ebb_spectral *a = make(&p), *b = make(&p);
    ebb_spectral_add(a, "x", 1, 3);
    ebb_spectral_add(b, "x", 1, 4);
    assert_int_equal(ebb_spectral_join(a, b), EBB_OK);
    assert_int_equal(ebb_spectral_estimate(a, "x", 1), 12);
    assert_int_equal(ebb_spectral_join(a, b), EBB_OK);
    assert_int_equal(ebb_spectral_estimate(a, "x", 1), 48);
    assert_int_equal(ebb_spectral_join(a, a), EBB_OK);
    assert_true(ebb_spectral_estimate(a, "x", 1) == EBB_SPECTRAL_SATURATED);
    ebb_spectral_stats st;
    ebb_spectral_get_stats(a, &st);
    assert_int_equal(st.saturations, 1);
    /* Saturated union stays saturated, clip counted. */
    assert_int_equal(ebb_spectral_merge(b, a, 1, 0), EBB_OK);
    assert_true(ebb_spectral_estimate(b, "x", 1) == EBB_SPECTRAL_SATURATED);
    ebb_spectral_get_stats(b, &st);
    assert_int_equal(st.saturations, 2); /* a's one plus this clip */
    ebb_spectral_destroy(a);
    ebb_spectral_destroy(b);
}

static void incompatible_merge_refused(void **state)
{
    (void)state;
    ebb_spectral_params base = shape(64, 8, 3, EBB_SPECTRAL_MS, 5);
    ebb_spectral_params others[8];
    for (int i = 0; i < 8; i++)
        others[i] = base;
    others[0].counters = 65;
    others[1].counter_bits = 9;
    others[2].k = 4;
    others[3].method = EBB_SPECTRAL_MI;
    others[4].seed = 6;
    others[5].range = 16;
    others[6] = shape(96, 8, 3, EBB_SPECTRAL_RM, 5); /* primary 64 */
    others[7] = base;
    ebb_spectral *a = make(&base);
    ebb_spectral_add(a, "x", 1, 2);
    for (int i = 0; i < 8; i++) {
        ebb_spectral *b = make(&others[i]);
        ebb_spectral_add(b, "x", 1, 5);
        support_snap sa = snap(a), sb = snap(b);
        if (i < 7) {
            assert_int_equal(ebb_spectral_merge(a, b, 1, 0), EBB_EINVAL);
            assert_int_equal(ebb_spectral_merge(b, a, 1, 0), EBB_EINVAL);
            assert_int_equal(ebb_spectral_join(a, b), EBB_EINVAL);
            assert_int_equal(ebb_spectral_join(b, a), EBB_EINVAL);
        } else {
            assert_int_equal(ebb_spectral_merge(a, b, 0, 0), EBB_EINVAL);
            assert_int_equal(ebb_spectral_merge(a, b, 1, 2u), EBB_EINVAL);
            assert_int_equal(ebb_spectral_merge(a, NULL, 1, 0), EBB_EINVAL);
            assert_int_equal(ebb_spectral_join(NULL, b), EBB_EINVAL);
        }
        support_snap sa2 = snap(a), sb2 = snap(b);
        support_snap_assert_same(&sa, &sa2);
        support_snap_assert_same(&sb, &sb2);
        ebb_spectral_destroy(b);
    }
    ebb_spectral_destroy(a);
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

#define BATCH 3000

static void batches_equal_single_calls(void **state)
{
    (void)state;
    /* 2^20 32-bit counters: 4 MiB, past the prefetch threshold. */
    const uint64_t sizes[] = {100, UINT64_C(1) << 20};
    ebb_hash128 *h = malloc(BATCH * sizeof *h);
    uint64_t *counts = malloc(BATCH * sizeof *counts);
    uint64_t *out = malloc(BATCH * sizeof *out);
    assert_non_null(h);
    assert_non_null(counts);
    assert_non_null(out);
    for (size_t s = 0; s < 2; s++) {
        for (int method = 0; method <= EBB_SPECTRAL_RM; method++) {
            ebb_spectral_params p =
                shape(sizes[s], 32, 4, (ebb_spectral_method)method, 8);
            ebb_spectral *a = make(&p), *b = make(&p);
            const void *keys[BATCH];
            size_t lens[BATCH];
            support_key ks[BATCH];
            uint64_t rng = 5;
            for (size_t i = 0; i < BATCH; i++) {
                ks[i] = support_key_make(KEYS_INSERTED,
                                         support_splitmix64(&rng) % 500);
                keys[i] = ks[i].bytes;
                lens[i] = sizeof ks[i].bytes;
                counts[i] = support_splitmix64(&rng) % 5;
            }
            ebb_spectral_hash_batch(a, keys, lens, BATCH, h);
            for (size_t i = 0; i < BATCH; i++) {
                ebb_hash128 t = ebb_spectral_hash(a, keys[i], lens[i]);
                assert_memory_equal(&t, &h[i], sizeof t);
            }
            /* With counts, then with NULL (1 each). */
            ebb_spectral_add_batch(a, h, counts, BATCH);
            ebb_spectral_add_batch(a, h, NULL, BATCH);
            for (size_t i = 0; i < BATCH; i++)
                ebb_spectral_add_hash(b, h[i], counts[i]);
            for (size_t i = 0; i < BATCH; i++)
                ebb_spectral_add_hash(b, h[i], 1);
            support_snap sa = snap(a), sb = snap(b);
            support_snap_assert_same(&sa, &sb);
            ebb_spectral_estimate_batch(a, h, BATCH, out);
            for (size_t i = 0; i < BATCH; i++)
                assert_int_equal(out[i], ebb_spectral_estimate_hash(a, h[i]));
            ebb_spectral_add_batch(a, h, counts, 0);
            ebb_spectral_estimate_batch(a, h, 0, out);
            ebb_spectral_destroy(a);
            ebb_spectral_destroy(b);
        }
    }
    free(h);
    free(counts);
    free(out);
}

/* add_estimate_hash is add_hash then estimate_hash, state and answer, for
 * every method on fixed and compact storage, small (saturating) counters
 * included; prefetch_hash changes nothing. */
static void add_estimate_equals_add_then_estimate(void **state)
{
    (void)state;
    const ebb_spectral_storage storages[] = {EBB_SPECTRAL_FIXED,
                                             EBB_SPECTRAL_COMPACT_GAMMA};
    const uint32_t bits[] = {32, 3};
    for (size_t s = 0; s < 2; s++) {
        for (size_t w = 0; w < 2; w++) {
            for (int method = 0; method <= EBB_SPECTRAL_RM; method++) {
                ebb_spectral_params p = shape(
                    UINT64_C(1) << 14, bits[w], 4,
                    (ebb_spectral_method)method, 21);
                p.storage = storages[s];
                ebb_spectral *a = make(&p), *b = make(&p);
                uint64_t rng = 9;
                for (int i = 0; i < 4000; i++) {
                    support_key key = support_key_make(
                        KEYS_INSERTED, support_splitmix64(&rng) % 700);
                    uint64_t r = support_splitmix64(&rng) % 4;
                    ebb_hash128 h = ebb_spectral_hash(a, key.bytes,
                                                      sizeof key.bytes);
                    ebb_spectral_prefetch_hash(a, h);
                    uint64_t got = UINT64_MAX;
                    assert_int_equal(
                        ebb_spectral_add_estimate_hash(a, h, r, &got),
                        EBB_OK);
                    assert_int_equal(ebb_spectral_add_hash(b, h, r), EBB_OK);
                    assert_int_equal(got, ebb_spectral_estimate_hash(b, h));
                }
                support_snap sa = snap(a), sb = snap(b);
                support_snap_assert_same(&sa, &sb);
                ebb_spectral_destroy(a);
                ebb_spectral_destroy(b);
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Allocation failure                                                       */
/* ------------------------------------------------------------------------ */

static ebb_spectral_params rm_with_traps(void)
{
    /* The shape of docs/format.md's example: m_p 200, m_s 100 (k_s 3),
     * a Bloom marker of 200 bits, 8 trap slots. */
    ebb_spectral_params p = shape(300, 5, 3, EBB_SPECTRAL_RM, 99);
    p.counters = 200;
    p.secondary = 100;
    p.secondary_k = 3;
    p.marker = EBB_SPECTRAL_MARKER_BLOOM;
    p.marker_size = 200;
    p.trap_slots = 8;
    return p;
}

static void create_and_load_survive_allocation_failure(void **state)
{
    (void)state;
    ebb_spectral_params shapes[2] = {shape(100, 7, 3, EBB_SPECTRAL_MS, 1),
                                     rm_with_traps()};
    for (int s = 0; s < 2; s++) {
        ebb_spectral *good = make(&shapes[s]);
        ebb_spectral_add(good, "x", 1, 2);
        support_snap bytes = snap(good);
        for (int load = 0; load < 2; load++) {
            uint64_t failures = 0;
            for (uint64_t n = 1;; n++) {
                uint64_t live = support_alloc_live_count();
                ebb_spectral *f = NULL;
                support_alloc_fail_nth(n, false);
                ebb_status st =
                    load ? ebb_spectral_load(bytes.bytes, bytes.size, &f)
                         : ebb_spectral_create(&shapes[s], &f);
                support_alloc_fail_nth(0, false);
                if (st == EBB_OK) {
                    ebb_spectral_destroy(f);
                    break;
                }
                assert_int_equal(st, EBB_ENOMEM);
                assert_null(f);
                assert_int_equal(support_alloc_live_count(), live);
                failures++;
            }
            /* MS: handle, counters; RM: + secondary, marker, traps. */
            assert_int_equal(failures, s == 0 ? 2 : 5);
        }
        support_snap_free(&bytes);
        ebb_spectral_destroy(good);
    }
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                */
/* ------------------------------------------------------------------------ */

static void round_trip(const ebb_spectral_params *p, uint64_t seed)
{
    ebb_spectral *f = make(p);
    uint64_t truth[KEYS] = {0};
    random_stream(f, seed, p->method == EBB_SPECTRAL_MS, truth, 700);
    support_snap s = snap(f);
    assert_int_equal(support_get_le(s.bytes + 6, 2), 6); /* family */
    assert_int_equal(support_get_le(s.bytes + 4, 2), 1); /* version */
    ebb_spectral *g = NULL;
    assert_int_equal(ebb_spectral_load(s.bytes, s.size, &g), EBB_OK);
    support_snap t = snap(g);
    assert_params_kept(ebb_spectral_get_params(g), p);
    for (uint64_t i = 0; i < KEYS; i++) {
        ebb_hash128 h = key_hash(f, KEYS_INSERTED, i);
        assert_int_equal(ebb_spectral_estimate_hash(f, h),
                         ebb_spectral_estimate_hash(g, h));
    }
    ebb_spectral_stats a, b;
    ebb_spectral_get_stats(f, &a);
    ebb_spectral_get_stats(g, &b);
    assert_memory_equal(&a, &b, sizeof a);
    /* The loaded filter continues as the saved one. */
    random_stream(f, seed + 1, false, truth, 100);
    random_stream(g, seed + 1, false, truth, 100);
    support_snap u = snap(f), v = snap(g);
    support_snap_assert_same(&u, &v);
    support_snap_assert_same(&s, &t);
    ebb_spectral_destroy(f);
    ebb_spectral_destroy(g);
}

static void snapshot_round_trips(void **state)
{
    (void)state;
    ebb_spectral_params shapes[7] = {
        shape(100, 7, 3, EBB_SPECTRAL_MS, 1),
        shape(64, 32, 5, EBB_SPECTRAL_MI, 2),
        shape(1, 1, 1, EBB_SPECTRAL_MS, 3),
        shape(301, 5, 3, EBB_SPECTRAL_RM, 4),
        rm_with_traps(),
        shape(99, 13, 2, EBB_SPECTRAL_MS, 5),
        shape(301, 6, 3, EBB_SPECTRAL_RM, 6), /* exact marker */
    };
    shapes[3].marker = EBB_SPECTRAL_MARKER_NONE;
    shapes[3].marker_size = 0;
    shapes[5].range = 1000;
    for (int i = 0; i < 7; i++)
        round_trip(&shapes[i], 40 + (uint64_t)i);
    /* Fresh and cleared filters: all-zero payloads. */
    ebb_spectral *f = make(&shapes[4]);
    ebb_spectral_add(f, "x", 1, 1);
    ebb_spectral_clear(f);
    support_snap s = snap(f);
    ebb_spectral *g = NULL;
    assert_int_equal(ebb_spectral_load(s.bytes, s.size, &g), EBB_OK);
    ebb_spectral_destroy(g);
    support_snap_free(&s);
    ebb_spectral_destroy(f);
}

static void snapshot_layout(void **state)
{
    (void)state;
    /* MS, m = 100, w = 7: ceil(700 / 64) = 11 words. */
    ebb_spectral_params p = shape(100, 7, 3, EBB_SPECTRAL_MS, 0x1234);
    ebb_spectral *f = make(&p);
    ebb_spectral_add(f, "x", 1, 5);
    support_snap s = snap(f);
    assert_int_equal(s.size, 32 + 160 + 11 * 8 + 8);
    assert_int_equal(support_get_le(s.bytes + 24, 8), 0x1234);
    assert_int_equal(support_get_le(s.bytes + OFF_COUNTERS, 8), 100);
    assert_int_equal(support_get_le(s.bytes + OFF_BITS, 4), 7);
    assert_int_equal(support_get_le(s.bytes + OFF_K, 4), 3);
    assert_int_equal(support_get_le(s.bytes + OFF_ADDED, 8), 5);
    assert_int_equal(support_get_le(s.bytes + OFF_NET, 8), 5);
    support_snap_free(&s);
    ebb_spectral_destroy(f);
    /* RM with traps: primary, secondary, marker words, then 24-byte
     * entries, empty ones counter 2^64 - 1, key 0. */
    p = rm_with_traps(); /* m_p 200, m_s 100, w 5, marker 200 */
    f = make(&p);
    s = snap(f);
    size_t payload = 8 * (16 + 8 + 4) + 24 * 8;
    assert_int_equal(s.size, 32 + 160 + payload + 8);
    const unsigned char *trap = s.bytes + OFF_PAYLOAD + 8 * 28;
    assert_true(support_get_le(trap, 8) == UINT64_MAX);
    assert_int_equal(support_get_le(trap + 8, 8), 0);
    support_snap_free(&s);
    ebb_spectral_destroy(f);
}

/* Loads bytes after an edit (checksum forged): the status. */
static ebb_status load_edited(const support_snap *base, size_t off,
                              size_t width, uint64_t value)
{
    support_snap s = support_snap_alloc(base->size);
    memcpy(s.bytes, base->bytes, base->size);
    support_put_le(s.bytes + off, width, value);
    support_snap_forge_checksum(&s);
    ebb_spectral *f = NULL;
    uint64_t live = support_alloc_live_count();
    ebb_status st = ebb_spectral_load(s.bytes, s.size, &f);
    if (st == EBB_OK)
        ebb_spectral_destroy(f);
    else
        assert_null(f);
    assert_int_equal(support_alloc_live_count(), live);
    support_snap_free(&s);
    return st;
}

static void snapshot_rejections(void **state)
{
    (void)state;
    ebb_spectral_params p = shape(100, 7, 3, EBB_SPECTRAL_MS, 1);
    ebb_spectral *f = make(&p);
    ebb_spectral_add(f, "x", 1, 5);
    support_snap s = snap(f);
    /* Every truncation. */
    for (size_t len = 0; len < s.size; len++) {
        ebb_spectral *g = NULL;
        ebb_status st = ebb_spectral_load(s.bytes, len, &g);
        assert_true(st == EBB_ETRUNCATED || st == EBB_EMAGIC);
        assert_null(g);
    }
    ebb_spectral *g = NULL;
    assert_int_equal(ebb_spectral_load(s.bytes, s.size, NULL), EBB_EINVAL);
    /* Every byte flipped, checksum kept: the checksum refuses it. */
    for (size_t i = 0; i < s.size; i++) {
        s.bytes[i] ^= 0x10;
        ebb_status st = ebb_spectral_load(s.bytes, s.size, &g);
        assert_true(st != EBB_OK);
        assert_null(g);
        s.bytes[i] ^= 0x10;
    }
    /* Frame. */
    assert_int_equal(load_edited(&s, 4, 2, 2), EBB_EVERSION);
    assert_int_equal(load_edited(&s, 6, 2, 5), EBB_EFAMILY);
    assert_int_equal(load_edited(&s, 8, 4, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, 12, 4, 128), EBB_ECORRUPT);
    /* Fields. */
    assert_int_equal(load_edited(&s, OFF_COUNTERS, 8, 0), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_COUNTERS, 8, 90), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_COUNTERS, 8, 101), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_COUNTERS, 8, UINT64_MAX),
                     EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_BITS, 4, 0), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_BITS, 4, 33), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_BITS, 4, 6), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_K, 4, 0), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_K, 4, 33), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_K, 4, 32), EBB_OK);
    assert_int_equal(load_edited(&s, OFF_METHOD, 4, 3), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_METHOD, 4, 1), EBB_OK);
    assert_int_equal(load_edited(&s, OFF_METHOD, 4, 2), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_RESERVED, 4, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_SECONDARY_K, 4, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MARKER_KIND, 4, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MARKER_KIND, 4, 3), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MOVES_REFUSED, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_FINGERPRINTS_USED, 8, 1),
                     EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_SECONDARY, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MARKER, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_RANGE, 8, EBB_SPECTRAL_MAX_RANGE),
                     EBB_OK);
    assert_int_equal(
        load_edited(&s, OFF_RANGE, 8, EBB_SPECTRAL_MAX_RANGE + 1),
        EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MOVED, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS_SET, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS_SPRUNG, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS_FULL, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS_USED, 8, 1), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_NET, 8, 6), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_NET, 8, 5), EBB_OK);
    /* Counters with nothing added; tail bits past 700 in word 10. */
    assert_int_equal(load_edited(&s, OFF_ADDED, 8, 0), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_PAYLOAD + 8 * 10, 8,
                                 support_get_le(s.bytes + OFF_PAYLOAD + 80, 8) |
                                     (UINT64_C(1) << 60)),
                     EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_PAYLOAD + 8 * 10, 8,
                                 support_get_le(s.bytes + OFF_PAYLOAD + 80, 8) |
                                     (UINT64_C(1) << 59)),
                     EBB_OK);
    support_snap_free(&s);
    ebb_spectral_destroy(f);

    /* RM with traps: entries and their count. */
    p = rm_with_traps(); /* m_p 200 */
    f = make(&p);
    ebb_spectral_add(f, "x", 1, 1);
    s = snap(f);
    size_t trap = OFF_PAYLOAD + 8 * 28;
    uint64_t used = support_get_le(s.bytes + OFF_TRAPS_USED, 8);
    /* Forge one more trap in an empty entry (find one). */
    size_t empty = trap;
    while (support_get_le(s.bytes + empty, 8) != UINT64_MAX)
        empty += 24;
    support_put_le(s.bytes + OFF_TRAPS_USED, 8, used + 1);
    support_put_le(s.bytes + empty, 8, 199);
    support_put_le(s.bytes + empty + 8, 8, 0xabc);
    support_snap_forge_checksum(&s);
    assert_int_equal(load_edited(&s, empty, 8, 199), EBB_OK);
    assert_int_equal(load_edited(&s, empty, 8, 200), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS_USED, 8, used), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS_USED, 8, 9), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, empty, 8, UINT64_MAX), EBB_ECORRUPT);
    /* Shapes the payload does not match. */
    assert_int_equal(load_edited(&s, OFF_TRAPS, 8, 0), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_TRAPS, 8, 201), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_SECONDARY, 8, 0), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_SECONDARY, 8, 150), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MARKER, 8, 300), EBB_ECORRUPT);
    assert_int_equal(load_edited(&s, OFF_MOVED, 8, 2), EBB_ECORRUPT);
    support_snap_free(&s);
    /* An empty trap entry holding a key. */
    s = snap(f);
    empty = trap;
    while (support_get_le(s.bytes + empty, 8) != UINT64_MAX)
        empty += 24;
    assert_int_equal(load_edited(&s, empty + 16, 8, 1), EBB_ECORRUPT);
    support_snap_free(&s);
    ebb_spectral_destroy(f);
}

int main(void)
{
#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)
    const struct CMUnitTest tests[] = {
        TEST(params_init_and_check),
        TEST(choose_is_smallest),
        TEST(memory_and_stats),
        TEST(ms_never_below_truth),
        TEST(mi_never_below_truth_nor_above_ms),
        TEST(mi_remove_unsafe),
        TEST(coincident_positions),
        TEST(over_removal_changes_nothing),
        TEST(saturation_is_sticky_and_counted),
        TEST(ms_union_is_the_combined_filter),
        TEST(mi_union_and_join_are_one_sided),
        TEST(incompatible_merge_refused),
        TEST(batches_equal_single_calls),
        TEST(add_estimate_equals_add_then_estimate),
        TEST(create_and_load_survive_allocation_failure),
        TEST(snapshot_round_trips),
        TEST(snapshot_layout),
        TEST(snapshot_rejections),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
