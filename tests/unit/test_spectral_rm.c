/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_spectral_rm.c: Recurring Minimum (src/spectral/rm.c).
 *
 * Exact cases first: a key moved to the secondary when its minimum is
 * single, its later adds following it there (the one-sidedness rule), a
 * coincident position not counted as a recurrence, removals refused and
 * undone, forget, the trap table (set, sprung, full, probe chains).
 *
 * Then the property: on random insert/delete streams that never delete
 * more than was inserted, over small filters where collisions are the
 * rule, estimate >= truth. The test watches each stream for the one
 * event rm.c's essay names as the risk of the paper's markers: a key
 * found "directed" (its bits in the Bloom marker, or with a secondary
 * minimum > 0 without one) although its earlier occurrences never
 * reached the secondary ("taint"). The exact marker (the default) can
 * have no taint, and has no answer below the truth at any load, even
 * with its table full (moves refused); the Bloom marker and no marker
 * fail on overloaded filters, in tainted streams only. Trapping RM's
 * violations are counted and asserted present (Fig. 2 is not one-sided,
 * see rm.c). Last, the exact marker's snapshots (round trip, corrupt
 * tables refused) and its partitioned union.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "spectral/spectral_internal.h"
#include "support.h"

/* ---- helpers ------------------------------------------------------------ */

/* The marker of a test filter: kind and size (UINT64_MAX: the old
 * default, m_p bits for BLOOM; 64 slots for EXACT, room for every key). */
typedef struct marker_spec {
    ebb_spectral_marker kind;
    uint64_t size;
} marker_spec;

static const marker_spec EXACT = {EBB_SPECTRAL_MARKER_EXACT, UINT64_MAX};
static const marker_spec BLOOM = {EBB_SPECTRAL_MARKER_BLOOM, UINT64_MAX};
static const marker_spec NONE = {EBB_SPECTRAL_MARKER_NONE, 0};

/* RM of m counters in all split as the paper's Table 1 (m_p = ceil(2m/3),
 * m_s the rest, k_s = k): the shapes the property was first measured on. */
static ebb_spectral_params rm_shape(uint64_t m, uint32_t k, marker_spec mk,
                                    uint64_t trap_slots)
{
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_params_init(m, 32, k, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    p.counters = (2 * m + 2) / 3;
    p.secondary = m - p.counters;
    p.secondary_k = k;
    p.marker = mk.kind;
    p.marker_size = mk.size != UINT64_MAX ? mk.size
                    : mk.kind == EBB_SPECTRAL_MARKER_BLOOM ? p.counters
                                                            : 64;
    p.trap_slots = trap_slots == UINT64_MAX ? p.counters / 4 : trap_slots;
    p.seed = 7;
    return p;
}

static ebb_spectral *make_rm(uint64_t m, uint32_t k, marker_spec mk,
                             uint64_t trap_slots)
{
    ebb_spectral_params p = rm_shape(m, k, mk, trap_slots);
    ebb_spectral *f = NULL;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    return f;
}

static ebb_hash128 key_hash(const ebb_spectral *f, uint64_t key)
{
    return ebb_spectral_hash(f, &key, sizeof key);
}

static void positions(const ebb_spectral *f, ebb_hash128 h,
                      spectral_part part, uint64_t size, uint64_t *pos)
{
    spectral_positions(spectral_part_hash(h, part), f->params.k, size, pos);
}

static bool shares(const uint64_t *a, const uint64_t *b, uint32_t k,
                   uint64_t c)
{
    bool in_a = false, in_b = false;
    for (uint32_t j = 0; j < k; j++) {
        in_a |= a[j] == c;
        in_b |= b[j] == c;
    }
    return in_a && in_b;
}

/* Whether the filter sends the key's updates to the secondary. */
static bool directed(const ebb_spectral *f, ebb_hash128 h)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    uint32_t k = f->params.k;
    if (f->params.marker == EBB_SPECTRAL_MARKER_NONE) {
        spectral_positions(spectral_part_hash(h, SPECTRAL_SECONDARY),
                           f->params.secondary_k, f->params.secondary, pos);
        return spectral_min(&f->secondary, pos, f->params.secondary_k,
                            NULL) > 0;
    }
    if (f->params.marker == EBB_SPECTRAL_MARKER_EXACT) {
        uint64_t fp = spectral_fingerprint(h);
        for (uint64_t i = 0; i < f->params.marker_size; i++)
            if (f->fingerprints[i] == fp)
                return true;
        return false;
    }
    positions(f, h, SPECTRAL_MARKER, f->params.marker_size, pos);
    for (uint32_t j = 0; j < k; j++)
        if (ebb_cells_get(&f->marker, pos[j]) == 0)
            return false;
    return true;
}

static uint64_t secondary_min(const ebb_spectral *f, ebb_hash128 h)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    spectral_positions(spectral_part_hash(h, SPECTRAL_SECONDARY),
                       f->params.secondary_k, f->params.secondary, pos);
    return spectral_min(&f->secondary, pos, f->params.secondary_k, NULL);
}

/* ---- exact cases -------------------------------------------------------- */

/* k = 2: y shares x's first counter. After y, x: that counter holds 2,
 * the other 1, a single minimum: x moves with m_x = 1; its next add goes
 * to the secondary too (the one-sidedness rule). */
static void test_move_and_follow(void **state)
{
    (void)state;
    const marker_spec kinds[3] = {EXACT, BLOOM, NONE};
    for (int marker = 0; marker < 3; marker++) {
        ebb_spectral *f = make_rm(300, 2, kinds[marker], 0);
        uint64_t px[2], py[2];
        uint64_t x = 0, y = 1;
        ebb_hash128 hx, hy;
        for (;; x++) {
            hx = key_hash(f, x);
            positions(f, hx, SPECTRAL_PRIMARY, f->params.counters, px);
            if (px[0] == px[1])
                continue;
            for (y = x + 1; y < x + 2000; y++) {
                hy = key_hash(f, y);
                positions(f, hy, SPECTRAL_PRIMARY, f->params.counters, py);
                if (py[0] != py[1] && shares(px, py, 2, px[0]) &&
                    !shares(px, py, 2, px[1]))
                    break;
            }
            if (y < x + 2000)
                break;
        }
        ebb_spectral_add_hash(f, hy, 1);
        uint64_t moved = f->stats.moved;
        assert_false(directed(f, hx));
        ebb_spectral_add_hash(f, hx, 1);
        assert_int_equal(f->stats.moved, moved + 1);
        assert_true(directed(f, hx));
        assert_int_equal(secondary_min(f, hx), 1);
        assert_int_equal(ebb_spectral_estimate_hash(f, hx), 1);
        ebb_spectral_add_hash(f, hx, 4);
        assert_int_equal(f->stats.moved, moved + 1); /* not moved twice */
        assert_int_equal(secondary_min(f, hx), 5);
        assert_int_equal(ebb_spectral_estimate_hash(f, hx), 5);
        /* Removal undoes both parts. */
        assert_int_equal(ebb_spectral_remove_hash(f, hx, 5), EBB_OK);
        assert_int_equal(secondary_min(f, hx), 0);
        assert_int_equal(ebb_spectral_estimate_hash(f, hx), 0);
        assert_int_equal(ebb_spectral_estimate_hash(f, hy), 1);
        ebb_spectral_destroy(f);
    }
}

/* k = 3, x's positions a, a, b; y sits on b only. y three times, then x
 * once: a holds 2 (x twice), b 4. The minimum 2 is held by ONE counter
 * (seen at two positions): single, so x moves. Counting positions instead
 * of counters would call it recurring. */
static void test_coincident_is_not_recurring(void **state)
{
    (void)state;
    ebb_spectral *f = make_rm(60, 3, EXACT, 0);
    uint64_t m = f->params.counters;
    uint64_t px[3], py[3], x, y;
    ebb_hash128 hx, hy;
    for (x = 0;; x++) {
        hx = key_hash(f, x);
        positions(f, hx, SPECTRAL_PRIMARY, m, px);
        if (px[0] == px[1] && px[2] != px[0])
            break;
    }
    for (y = 0;; y++) {
        hy = key_hash(f, y);
        positions(f, hy, SPECTRAL_PRIMARY, m, py);
        if (y != x && shares(px, py, 3, px[2]) && !shares(px, py, 3, px[0]))
            break;
    }
    ebb_spectral_add_hash(f, hy, 3);
    uint64_t moved = f->stats.moved;
    ebb_spectral_add_hash(f, hx, 1);
    assert_int_equal(f->stats.moved, moved + 1);
    assert_true(ebb_spectral_estimate_hash(f, hx) >= 1);
    ebb_spectral_destroy(f);
}

static void test_refused_removal(void **state)
{
    (void)state;
    ebb_spectral *f = make_rm(3000, 4, EXACT, 0);
    ebb_hash128 h = key_hash(f, 42);
    assert_int_equal(ebb_spectral_remove_hash(f, h, 1), EBB_EUNDERFLOW);
    assert_int_equal(f->stats.refused_removals, 1);
    ebb_spectral_add_hash(f, h, 2);
    assert_int_equal(ebb_spectral_remove_hash(f, h, 3), EBB_EUNDERFLOW);
    assert_int_equal(f->stats.refused_removals, 2);
    assert_int_equal(ebb_spectral_estimate_hash(f, h), 2);
    assert_int_equal(ebb_spectral_remove_hash(f, h, 2), EBB_OK);
    assert_int_equal(ebb_spectral_estimate_hash(f, h), 0);
    ebb_spectral_destroy(f);
}

/* Saturated counters: the estimate says so, never a wrong number. */
static void test_saturation(void **state)
{
    (void)state;
    ebb_spectral_params p;
    ebb_spectral *f = NULL;
    assert_int_equal(ebb_spectral_params_init(300, 3, 3, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    ebb_hash128 h = key_hash(f, 1);
    ebb_spectral_add_hash(f, h, 5);
    assert_int_equal(ebb_spectral_estimate_hash(f, h), 5);
    uint64_t sat = f->stats.saturations;
    ebb_spectral_add_hash(f, h, 5);
    assert_true(f->stats.saturations > sat);
    assert_true(ebb_spectral_estimate_hash(f, h) == EBB_SPECTRAL_SATURATED);
    ebb_spectral_destroy(f);
}

/* Forget clears the secondary, marker and traps; the estimates fall back
 * to the primary minimum, still >= the truth. */
static void test_forget(void **state)
{
    (void)state;
    ebb_spectral *f = make_rm(90, 3, BLOOM, 16);
    uint64_t truth[40] = {0};
    ebb_rng rng;
    ebb_rng_seed(&rng, 5);
    for (int i = 0; i < 400; i++) {
        uint64_t key = ebb_rng_below(&rng, 40);
        ebb_spectral_add_hash(f, key_hash(f, key), 1);
        truth[key]++;
    }
    assert_true(f->stats.moved > 0);
    assert_true(f->traps_used > 0);
    spectral_rm_forget(f);
    assert_int_equal(ebb_cells_count_zero(&f->secondary), f->secondary.count);
    assert_int_equal(ebb_cells_count_zero(&f->marker), f->marker.count);
    assert_int_equal(f->traps_used, 0);
    for (uint64_t i = 0; i < f->params.trap_slots; i++)
        assert_true(f->traps[i].counter == UINT64_MAX);
    for (uint64_t key = 0; key < 40; key++) {
        uint64_t pos[EBB_SPECTRAL_MAX_K];
        positions(f, key_hash(f, key), SPECTRAL_PRIMARY, f->params.counters,
                  pos);
        assert_int_equal(ebb_spectral_estimate_hash(f, key_hash(f, key)),
                         spectral_min(&f->primary, pos, 3, NULL));
    }
    ebb_spectral_destroy(f);
}

/* The trap table: every entry reachable from its home by linear probing
 * (rm.c's home: ebb_reduce(ebb_mix64(counter), slots)), traps_used the
 * number of entries, no counter twice. */
static void check_trap_table(const ebb_spectral *f)
{
    uint64_t slots = f->params.trap_slots, used = 0;
    for (uint64_t i = 0; i < slots; i++) {
        uint64_t c = f->traps[i].counter;
        if (c == UINT64_MAX)
            continue;
        used++;
        assert_true(c < f->params.counters);
        uint64_t j = ebb_reduce(ebb_mix64(c), slots);
        while (j != i) { /* no empty slot between home and entry */
            assert_true(f->traps[j].counter != UINT64_MAX);
            assert_true(f->traps[j].counter != c);
            j = j + 1 == slots ? 0 : j + 1;
        }
    }
    assert_int_equal(used, f->traps_used);
}

/* A move of a key whose 32-bit counters all saturate (r above the
 * maximum) sets its trap on the key's own counter: the minimum's search
 * starts from the key's first counter, not from UINT32_MAX, which no
 * counter would go below. */
static void test_trap_on_saturated_key(void **state)
{
    (void)state;
    ebb_spectral_params p;
    ebb_spectral *f = NULL;
    assert_int_equal(ebb_spectral_params_init(1000, 32, 1, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    p.trap_slots = 10;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    ebb_hash128 h = key_hash(f, 42);
    uint64_t pos;
    spectral_positions(h, 1, f->params.counters, &pos);
    assert_true(pos != 0); /* else the old defect would pass unseen */
    ebb_spectral_add_hash(f, h, UINT64_MAX);
    uint64_t set = 0;
    for (uint64_t i = 0; i < p.trap_slots; i++)
        if (f->traps[i].counter != UINT64_MAX) {
            assert_int_equal(f->traps[i].counter, pos);
            set++;
        }
    assert_true(set >= 1);
    assert_int_equal(set, f->stats.traps_set);
    ebb_spectral_destroy(f);
}

static void test_traps(void **state)
{
    (void)state;
    /* Small m, Zipf-like stream: traps are set, sprung and cleared. */
    ebb_spectral *f = make_rm(150, 3, EXACT, 64);
    ebb_rng rng;
    ebb_rng_seed(&rng, 11);
    for (int i = 0; i < 5000; i++) {
        uint64_t key = ebb_rng_below(&rng, 1u + ebb_rng_below(&rng, 60));
        ebb_spectral_add_hash(f, key_hash(f, key), 1);
        if (i % 97 == 0)
            check_trap_table(f);
    }
    check_trap_table(f);
    printf("traps: set %llu sprung %llu full %llu used %llu moved %llu\n",
           (unsigned long long)f->stats.traps_set,
           (unsigned long long)f->stats.traps_sprung,
           (unsigned long long)f->stats.traps_full,
           (unsigned long long)f->traps_used,
           (unsigned long long)f->stats.moved);
    assert_true(f->stats.traps_set > 0);
    assert_true(f->stats.traps_sprung > 0);
    assert_int_equal(f->stats.traps_set - f->stats.traps_sprung,
                     f->traps_used);
    ebb_spectral_destroy(f);

    /* One slot: the second trap finds the table full. */
    f = make_rm(150, 3, EXACT, 1);
    ebb_rng_seed(&rng, 12);
    for (int i = 0; i < 3000; i++)
        ebb_spectral_add_hash(f, key_hash(f, ebb_rng_below(&rng, 60)), 1);
    check_trap_table(f);
    assert_true(f->stats.traps_full > 0);
    assert_true(f->traps_used <= 1);
    ebb_spectral_destroy(f);
}

/* ---- the property -------------------------------------------------------- */

#define PROP_KEYS 48u
#define PROP_OPS 3000u
#define PROP_SEEDS 200u

typedef struct prop_result {
    uint64_t violations;      /* (check, key) pairs below the truth      */
    uint64_t streams_bad;     /* streams with at least one violation     */
    uint64_t streams_tainted; /* streams with a mid-stream false direct  */
    uint64_t bad_untainted;   /* violations in streams without taint     */
    uint64_t moved, sprung, moves_refused;
} prop_result;

/* One stream: adds (r 1..3, skewed keys) and removals of at most what the
 * key holds; after every operation every key is checked. The test
 * mirrors which keys have all their occurrences in the secondary
 * (`whole`): set when the key moves (stats.moved grows during its add),
 * kept while its adds follow it there; a key found directed before an
 * add or removal without being whole while it has occurrences is a
 * taint. */
static void prop_stream(uint64_t seed, const ebb_spectral_params *p,
                        prop_result *out)
{
    ebb_spectral *f = NULL;
    assert_int_equal(ebb_spectral_create(p, &f), EBB_OK);
    uint64_t truth[PROP_KEYS] = {0};
    bool whole[PROP_KEYS] = {false};
    ebb_hash128 h[PROP_KEYS];
    uint64_t bad = 0;
    bool tainted = false;
    ebb_rng rng;
    ebb_rng_seed(&rng, seed);
    for (uint32_t i = 0; i < PROP_KEYS; i++)
        h[i] = key_hash(f, i);
    for (uint32_t op = 0; op < PROP_OPS; op++) {
        /* skewed: low keys far more often */
        uint32_t key = (uint32_t)ebb_rng_below(
            &rng, 1u + ebb_rng_below(&rng, PROP_KEYS));
        bool dir = directed(f, h[key]);
        if (dir && !whole[key]) {
            if (truth[key] > 0)
                tainted = true;
            else
                whole[key] = true; /* nothing missing from it */
        }
        if (!dir)
            whole[key] = false;
        if (truth[key] > 0 && ebb_rng_below(&rng, 5) < 2) {
            uint64_t r = 1 + ebb_rng_below(&rng, truth[key]);
            ebb_status st = ebb_spectral_remove_hash(f, h[key], r);
            if (p->trap_slots == 0)
                assert_int_equal(st, EBB_OK);
            if (st == EBB_OK)
                truth[key] -= r;
        } else {
            uint64_t r = 1 + ebb_rng_below(&rng, 3);
            uint64_t moved = f->stats.moved;
            ebb_spectral_add_hash(f, h[key], r);
            truth[key] += r;
            if (f->stats.moved > moved)
                whole[key] = true;
        }
        for (uint32_t x = 0; x < PROP_KEYS; x++)
            bad += ebb_spectral_estimate_hash(f, h[x]) < truth[x];
    }
    if (p->marker == EBB_SPECTRAL_MARKER_EXACT) {
        assert_int_equal(f->fingerprints_used, f->stats.moved);
        assert_true(f->fingerprints_used <= p->marker_size);
    }
    out->violations += bad;
    out->streams_bad += bad > 0;
    out->streams_tainted += tainted;
    out->bad_untainted += tainted ? 0 : bad;
    out->moved += f->stats.moved;
    out->sprung += f->stats.traps_sprung;
    out->moves_refused += f->stats.moves_refused;
    ebb_spectral_destroy(f);
}

static const char *marker_name(ebb_spectral_marker kind)
{
    return kind == EBB_SPECTRAL_MARKER_EXACT   ? "exact"
           : kind == EBB_SPECTRAL_MARKER_BLOOM ? "bloom"
                                               : "none";
}

static prop_result prop_run(const char *name, const ebb_spectral_params *p)
{
    prop_result res = {0};
    for (uint64_t s = 0; s < PROP_SEEDS; s++)
        prop_stream(1000 + s, p, &res);
    printf("%-9s m_p %llu m_s %llu k_s %u marker %s %llu traps %llu, %u seeds"
           " x %u ops, %u keys: violations %llu in %llu streams; tainted"
           " streams %llu; violations in untainted %llu; moved %llu"
           " refused %llu sprung %llu\n",
           name, (unsigned long long)p->counters,
           (unsigned long long)p->secondary, p->secondary_k,
           marker_name(p->marker), (unsigned long long)p->marker_size,
           (unsigned long long)p->trap_slots, PROP_SEEDS, PROP_OPS, PROP_KEYS,
           (unsigned long long)res.violations,
           (unsigned long long)res.streams_bad,
           (unsigned long long)res.streams_tainted,
           (unsigned long long)res.bad_untainted,
           (unsigned long long)res.moved,
           (unsigned long long)res.moves_refused,
           (unsigned long long)res.sprung);
    assert_true(res.moved > 0);
    return res;
}

static prop_result prop_shape(const char *name, uint64_t m, marker_spec mk,
                              uint64_t trap_slots)
{
    ebb_spectral_params p = rm_shape(m, 3, mk, trap_slots);
    return prop_run(name, &p);
}

/* The exact marker: directed iff moved, so no taint and no answer below
 * the truth, at m = 300 (primary 200: gamma 0.72 for 48 keys, k 3, the
 * paper's regime; E_b about 0.13) and overloaded at m = 150 and 90, where
 * the Bloom marker and no marker fail (below). */
static void test_property_exact(void **state)
{
    (void)state;
    const uint64_t sizes[3] = {300, 150, 90};
    for (int i = 0; i < 3; i++) {
        prop_result res = prop_shape("exact", sizes[i], EXACT, 0);
        assert_int_equal(res.streams_tainted, 0);
        assert_int_equal(res.violations, 0);
        assert_int_equal(res.moves_refused, 0);
    }
}

/* The default shape (params_init: m_s = m/10, k_s 2, ceil(m_s/2) slots):
 * at m = 300 its 15 slots fill, moves are refused, still one-sided; and
 * a one-slot table. */
static void test_property_exact_full(void **state)
{
    (void)state;
    ebb_spectral_params p;
    assert_int_equal(ebb_spectral_params_init(300, 32, 3, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    p.seed = 7;
    prop_result res = prop_run("default", &p);
    assert_true(res.moves_refused > 0);
    assert_int_equal(res.violations, 0);
    assert_int_equal(res.streams_tainted, 0);
    assert_int_equal(ebb_spectral_params_init(90, 32, 3, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    p.seed = 7;
    res = prop_run("default", &p);
    assert_true(res.moves_refused > 0);
    assert_int_equal(res.violations, 0);
    /* Two slots hold one fingerprint (3/4 at most, one slot kept empty). */
    marker_spec one = {EBB_SPECTRAL_MARKER_EXACT, 2};
    res = prop_shape("exact-2", 150, one, 0);
    assert_true(res.moves_refused > 0);
    assert_int_equal(res.moved, PROP_SEEDS); /* one per stream, then full */
    assert_int_equal(res.violations, 0);
}

/* The paper's marker B_f (m_p bits): clean at m = 300; at m = 150 (100
 * bits holding ~34 moved keys' 3 bits each, nearly full) keys become
 * "directed" mid-stream by others' bits and answer below the truth.
 * Every violation lies in a tainted stream. */
static void test_property_bloom(void **state)
{
    (void)state;
    prop_result res = prop_shape("bloom", 300, BLOOM, 0);
    assert_int_equal(res.streams_tainted, 0);
    assert_int_equal(res.violations, 0);
    res = prop_shape("bloom", 150, BLOOM, 0);
    assert_true(res.streams_tainted > 0);
    assert_true(res.violations > 0);
    assert_int_equal(res.bad_untainted, 0);
}

/* Without a marker the secondary is the test of "directed": at m = 300 its
 * false positives arise mid-stream in every stream; at m = 600 none.
 * Provable either way: untainted streams have no violation. */
static void test_property_no_marker(void **state)
{
    (void)state;
    prop_result res = prop_shape("none", 300, NONE, 0);
    assert_int_equal(res.bad_untainted, 0);
    assert_true(res.violations > 0);
    assert_int_equal(res.streams_tainted, PROP_SEEDS);
    res = prop_shape("none", 600, NONE, 0);
    assert_int_equal(res.violations, 0);
}

/* Trapping RM (Fig. 2): answers below the truth in streams without taint,
 * from the move's "decrease m_x from X's bits in main SBF" (rm.c), with
 * either marker. */
static void test_property_trapping(void **state)
{
    (void)state;
    const marker_spec kinds[2] = {EXACT, BLOOM};
    for (int i = 0; i < 2; i++) {
        prop_result res = prop_shape("trapping", 300, kinds[i], UINT64_MAX);
        assert_true(res.sprung > 0);
        assert_true(res.bad_untainted > 0);
        assert_int_equal(res.streams_bad, PROP_SEEDS);
    }
}

/* ---- the exact marker's snapshots and union ------------------------------ */

/* Offsets in a family-6 snapshot (docs/format.md): frame 32 bytes, then
 * the 160-byte parameter block. */
#define OFF_FINGERPRINTS_USED (32 + 152)
#define OFF_PAYLOAD (32 + 160)

static support_snap snap(const ebb_spectral *f)
{
    support_snap s = support_snap_alloc(ebb_spectral_snapshot_size(f));
    size_t written = 0;
    assert_int_equal(ebb_spectral_save(f, s.bytes, s.size, &written), EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

static ebb_status load_forged(const support_snap *base, size_t off,
                              uint64_t value, size_t off2, uint64_t value2)
{
    support_snap s = support_snap_alloc(base->size);
    memcpy(s.bytes, base->bytes, base->size);
    support_put_le(s.bytes + off, 8, value);
    if (off2 != 0)
        support_put_le(s.bytes + off2, 8, value2);
    support_snap_forge_checksum(&s);
    ebb_spectral *g = NULL;
    ebb_status st = ebb_spectral_load(s.bytes, s.size, &g);
    if (st == EBB_OK)
        ebb_spectral_destroy(g);
    else
        assert_null(g);
    support_snap_free(&s);
    return st;
}

/* A filter of the default split (m 200, 16-bit counters, k 3) with an
 * exact marker of `slots` slots, `keys` keys added skewed. */
static ebb_spectral *exact_filter(uint64_t slots, uint32_t keys,
                                  uint64_t seed, uint64_t first_key)
{
    ebb_spectral_params p;
    ebb_spectral *f = NULL;
    assert_int_equal(ebb_spectral_params_init(200, 16, 3, EBB_SPECTRAL_RM, &p),
                     EBB_OK);
    p.marker_size = slots;
    p.seed = 7;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    ebb_rng rng;
    ebb_rng_seed(&rng, seed);
    for (uint32_t i = 0; i < 20 * keys; i++) {
        uint64_t key =
            first_key + ebb_rng_below(&rng, 1 + ebb_rng_below(&rng, keys));
        ebb_spectral_add_hash(f, key_hash(f, key), 1);
    }
    return f;
}

static void test_exact_snapshot(void **state)
{
    (void)state;
    ebb_spectral *f = exact_filter(80, 60, 3, 0);
    uint64_t slots = f->params.marker_size;
    printf("exact snapshot: moved %llu, slots used %llu of %llu\n",
           (unsigned long long)f->stats.moved,
           (unsigned long long)f->fingerprints_used,
           (unsigned long long)slots);
    assert_true(f->fingerprints_used >= 4 && f->fingerprints_used < slots);
    support_snap s = snap(f);
    ebb_spectral *g = NULL;
    assert_int_equal(ebb_spectral_load(s.bytes, s.size, &g), EBB_OK);
    assert_int_equal(g->fingerprints_used, f->fingerprints_used);
    assert_memory_equal(g->fingerprints, f->fingerprints, slots * 8);
    support_snap t = snap(g);
    assert_int_equal(t.size, s.size);
    assert_memory_equal(t.bytes, s.bytes, s.size);
    for (uint64_t key = 0; key < 60; key++)
        assert_int_equal(ebb_spectral_estimate_hash(g, key_hash(g, key)),
                         ebb_spectral_estimate_hash(f, key_hash(f, key)));

    /* The table's place in the payload: after primary and secondary. */
    size_t table = OFF_PAYLOAD +
                   8 * (ebb_cells_word_count(f->params.counters, 16) +
                        ebb_cells_word_count(f->params.secondary, 16));
    assert_int_equal(s.size, table + 8 * slots + 8);
    uint64_t used = f->fingerprints_used;
    /* Find an occupied slot i whose fingerprint sits at its home and whose
     * next slot is empty, and an empty slot e whose predecessor is empty. */
    uint64_t at = UINT64_MAX, gap = UINT64_MAX;
    for (uint64_t i = 0; i < slots; i++) {
        uint64_t fp = f->fingerprints[i], next = (i + 1) % slots;
        uint64_t prev = (i + slots - 1) % slots;
        if (fp != 0 && spectral_fingerprint_home(fp, slots) == i &&
            f->fingerprints[next] == 0 && at == UINT64_MAX)
            at = i;
        if (fp == 0 && f->fingerprints[prev] == 0 && gap == UINT64_MAX)
            gap = i;
    }
    assert_true(at != UINT64_MAX && gap != UINT64_MAX);
    uint64_t fp = f->fingerprints[at];
    size_t used_off = OFF_FINGERPRINTS_USED;
    /* The count must match. */
    assert_int_equal(load_forged(&s, used_off, used + 1, 0, 0), EBB_ECORRUPT);
    assert_int_equal(load_forged(&s, used_off, used - 1, 0, 0), EBB_ECORRUPT);
    /* A duplicate right after the original: reachable, but twice. */
    assert_int_equal(load_forged(&s, used_off, used + 1,
                                 table + 8 * ((at + 1) % slots), fp),
                     EBB_ECORRUPT);
    /* The fingerprint moved to a slot an empty one separates from its
     * home (gap is empty with an empty predecessor, so unreachable unless
     * it is fp's home). */
    if (spectral_fingerprint_home(fp, slots) != gap)
        assert_int_equal(load_forged(&s, table + 8 * at, 0, table + 8 * gap,
                                     fp),
                         EBB_ECORRUPT);
    /* A new fingerprint placed at its own empty home loads (the check is
     * not stricter than the insert). */
    uint64_t forged = 0x123456789abcdefu;
    while (f->fingerprints[spectral_fingerprint_home(forged, slots)] != 0)
        forged += 0x1000000000000u;
    assert_int_equal(
        load_forged(&s, used_off, used + 1,
                    table + 8 * spectral_fingerprint_home(forged, slots),
                    forged),
        EBB_OK);
    /* Moves refused and fingerprints with another marker kind. */
    ebb_spectral_clear(f);
    assert_int_equal(f->fingerprints_used, 0);
    for (uint64_t i = 0; i < slots; i++)
        assert_int_equal(f->fingerprints[i], 0);
    support_snap_free(&t);
    t = snap(f);
    assert_int_equal(load_forged(&t, table + 8 * at, fp, used_off, 1),
                     EBB_ECORRUPT); /* nothing added, a fingerprint */
    support_snap_free(&t);
    support_snap_free(&s);
    ebb_spectral_destroy(g);
    ebb_spectral_destroy(f);
}

/* Partitioned union: src's fingerprints join dest's; a table too small
 * for both refuses (EBB_ELIMIT) and neither filter changes; without the
 * flag the table is forgotten. */
static void test_exact_merge(void **state)
{
    (void)state;
    ebb_spectral *a = exact_filter(40, 30, 4, 0);
    ebb_spectral *b = exact_filter(40, 30, 5, 1000); /* disjoint keys */
    uint64_t ua = a->fingerprints_used, ub = b->fingerprints_used;
    assert_true(ua > 0 && ub > 0 && ua + ub <= a->params.marker_size);
    assert_int_equal(ebb_spectral_merge(a, b, 1,
                                        EBB_SPECTRAL_MERGE_PARTITIONED),
                     EBB_OK);
    assert_int_equal(a->fingerprints_used, ua + ub);
    assert_int_equal(a->stats.moved, ua + ub);
    for (uint64_t i = 0; i < b->params.marker_size; i++)
        if (b->fingerprints[i] != 0) {
            uint64_t at = spectral_fingerprint_slot(
                a->fingerprints, a->params.marker_size, b->fingerprints[i]);
            assert_true(at != UINT64_MAX &&
                        a->fingerprints[at] == b->fingerprints[i]);
        }
    /* Merging again: src's are all there already, nothing to insert. */
    assert_int_equal(ebb_spectral_merge(a, b, 1,
                                        EBB_SPECTRAL_MERGE_PARTITIONED),
                     EBB_OK);
    assert_int_equal(a->fingerprints_used, ua + ub);
    /* Too many for dest: refused, neither changed. */
    ebb_spectral *c = exact_filter(40, 60, 6, 2000);
    ebb_spectral *d = exact_filter(40, 60, 7, 3000);
    assert_true(c->fingerprints_used + d->fingerprints_used >
                c->params.marker_size);
    support_snap c0 = snap(c), d0 = snap(d);
    assert_int_equal(ebb_spectral_merge(c, d, 1,
                                        EBB_SPECTRAL_MERGE_PARTITIONED),
                     EBB_ELIMIT);
    support_snap c1 = snap(c), d1 = snap(d);
    support_snap_assert_same(&c0, &c1);
    support_snap_assert_same(&d0, &d1);
    /* Room is the table's capacity (3/4 of its slots), not its size: a
     * union between the two is refused too, not applied with src's moves
     * silently dropped. */
    bool between = false;
    for (uint64_t s = 0; s < 200 && !between; s++) {
        ebb_spectral *e = exact_filter(40, 30 + (uint32_t)(s % 30), 100 + s, 4000);
        ebb_spectral *g = exact_filter(40, 30 + (uint32_t)(s % 30), 300 + s, 5000);
        uint64_t sum = e->fingerprints_used + g->fingerprints_used;
        if (sum > spectral_fingerprint_capacity(40) && sum <= 40) {
            between = true;
            support_snap e0 = snap(e);
            assert_int_equal(ebb_spectral_merge(
                                 e, g, 1, EBB_SPECTRAL_MERGE_PARTITIONED),
                             EBB_ELIMIT);
            support_snap e1 = snap(e);
            support_snap_assert_same(&e0, &e1);
            support_snap_free(&e0);
            support_snap_free(&e1);
        }
        ebb_spectral_destroy(e);
        ebb_spectral_destroy(g);
    }
    assert_true(between);
    /* Not partitioned: forgotten. */
    assert_int_equal(ebb_spectral_merge(c, d, 1, 0), EBB_OK);
    assert_int_equal(c->fingerprints_used, 0);
    for (uint64_t i = 0; i < c->params.marker_size; i++)
        assert_int_equal(c->fingerprints[i], 0);
    support_snap_free(&c0);
    support_snap_free(&c1);
    support_snap_free(&d0);
    support_snap_free(&d1);
    ebb_spectral_destroy(a);
    ebb_spectral_destroy(b);
    ebb_spectral_destroy(c);
    ebb_spectral_destroy(d);
}

int main(void)
{

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_move_and_follow),
        cmocka_unit_test(test_coincident_is_not_recurring),
        cmocka_unit_test(test_refused_removal),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_forget),
        cmocka_unit_test(test_traps),
        cmocka_unit_test(test_trap_on_saturated_key),
        cmocka_unit_test(test_property_exact),
        cmocka_unit_test(test_property_exact_full),
        cmocka_unit_test(test_property_bloom),
        cmocka_unit_test(test_property_no_marker),
        cmocka_unit_test(test_property_trapping),
        cmocka_unit_test(test_exact_snapshot),
        cmocka_unit_test(test_exact_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
