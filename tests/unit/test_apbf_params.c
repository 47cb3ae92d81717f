/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_params.c: sizing (ebb_apbf_choose, params_from_kl, params_from_klm,
 * params_memory) and the validation in ebb_apbf_create.
 *
 * Every rejected call must return the documented status, leave its output
 * untouched and hold no memory (the counting allocator is installed for the
 * whole group and must be back to zero live blocks after every test).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "ebb/ebb.h"
#include "support.h"

#define SENTINEL_BYTE 0x5C

static const double LN2 = 0.693147180559945309417;

/* The largest g the paper's rule allows: floor(m ln 2 / k). */
static uint64_t max_generation(uint64_t slice_bits, uint32_t k) {
    return (uint64_t)floor((double)slice_bits * LN2 / (double)k);
}

static void sentinel_params(ebb_apbf_params *params) {
    memset(params, SENTINEL_BYTE, sizeof *params);
}

static bool params_untouched(const ebb_apbf_params *params) {
    const unsigned char *bytes = (const unsigned char *)params;
    size_t i;
    for (i = 0; i < sizeof *params; i++)
        if (bytes[i] != SENTINEL_BYTE)
            return false;
    return true;
}

/* Calls choose and checks the failure contract. */
static void expect_choose_fails(uint64_t window, double fp, double max_npws,
                                ebb_status want) {
    ebb_apbf_params out;
    ebb_status got;
    sentinel_params(&out);
    got = ebb_apbf_choose(window, fp, max_npws, &out);
    CHECK(got == want, "choose(%llu, %g, %g) = %d (%s), want %d (%s)",
          (unsigned long long)window, fp, max_npws, (int)got,
          ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(params_untouched(&out), "choose wrote its output on error");
    assert_int_equal(support_alloc_live_count(), 0);
}

static void choose_rejects_bad_arguments(void **state) {
    const double bad_fp[] = {0.0, -0.01, 1.0, 1.5, NAN, INFINITY, -INFINITY};
    size_t i;
    (void)state;
    expect_choose_fails(0, 0.01, 0, EBB_EINVAL);
    for (i = 0; i < sizeof bad_fp / sizeof bad_fp[0]; i++)
        expect_choose_fails(1000, bad_fp[i], 0, EBB_EINVAL);
    expect_choose_fails(1000, 0.01, NAN, EBB_EINVAL);
    /* NPWS >= 1/l >= 1/MAX_L for every shape: these bounds are impossible. */
    expect_choose_fails(1000, 0.01, 1e-9, EBB_EINVAL);
    expect_choose_fails(1000, 0.01, 0.5 / EBB_APBF_MAX_L, EBB_EINVAL);
    expect_choose_fails(UINT64_MAX, 0.01, 0, EBB_EOVERFLOW);
    expect_choose_fails(UINT64_MAX, 0.1, 0.5, EBB_EOVERFLOW);
}

static void expect_from_kl_fails(uint32_t k, uint32_t l, uint64_t window,
                                 ebb_status want) {
    ebb_apbf_params out;
    ebb_status got;
    sentinel_params(&out);
    got = ebb_apbf_params_from_kl(k, l, window, &out);
    CHECK(got == want, "params_from_kl(%u, %u, %llu) = %d (%s), want %d (%s)",
          k, l, (unsigned long long)window, (int)got, ebb_strerror(got),
          (int)want, ebb_strerror(want));
    CHECK(params_untouched(&out), "params_from_kl wrote its output on error");
}

static void from_kl_rejects_bad_arguments(void **state) {
    (void)state;
    expect_from_kl_fails(0, 3, 1000, EBB_EINVAL);
    expect_from_kl_fails(EBB_APBF_MAX_K + 1, 3, 1000, EBB_EINVAL);
    expect_from_kl_fails(4, 0, 1000, EBB_EINVAL);
    expect_from_kl_fails(4, EBB_APBF_MAX_L + 1, 1000, EBB_EINVAL);
    expect_from_kl_fails(4, 3, 0, EBB_EINVAL);
    expect_from_kl_fails(4, 3, UINT64_MAX, EBB_EOVERFLOW);
    expect_from_kl_fails(EBB_APBF_MAX_K, EBB_APBF_MAX_L, UINT64_MAX,
                         EBB_EOVERFLOW);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* A window whose slices would exceed MAX_SLICE_BITS is refused; the header
 * does not say which of the two statuses, only that it is not OK. */
static void from_kl_refuses_slices_beyond_the_limit(void **state) {
    ebb_apbf_params out;
    ebb_status got;
    (void)state;
    sentinel_params(&out);
    /* g = 2^40/3 needs m = 4 g / ln 2 > 2^40. */
    got = ebb_apbf_params_from_kl(4, 3, UINT64_C(1) << 40, &out);
    CHECK(got == EBB_EINVAL || got == EBB_EOVERFLOW,
          "params_from_kl(4, 3, 2^40) = %d (%s)", (int)got, ebb_strerror(got));
    assert_true(params_untouched(&out));
}

static void expect_from_klm_fails(uint32_t k, uint32_t l, uint64_t m) {
    ebb_apbf_params out;
    ebb_status got;
    sentinel_params(&out);
    got = ebb_apbf_params_from_klm(k, l, m, &out);
    CHECK(got == EBB_EINVAL, "params_from_klm(%u, %u, %llu) = %d (%s)", k, l,
          (unsigned long long)m, (int)got, ebb_strerror(got));
    CHECK(params_untouched(&out), "params_from_klm wrote its output on error");
}

static void from_klm_rejects_bad_arguments(void **state) {
    (void)state;
    expect_from_klm_fails(0, 3, 1000);
    expect_from_klm_fails(EBB_APBF_MAX_K + 1, 3, 1000);
    expect_from_klm_fails(4, 0, 1000);
    expect_from_klm_fails(4, EBB_APBF_MAX_L + 1, 1000);
    expect_from_klm_fails(4, 3, 0);
    expect_from_klm_fails(4, 3, EBB_APBF_MAX_SLICE_BITS + 1);
    /* floor(5 ln 2 / 4) = 0: no room for a generation. */
    expect_from_klm_fails(4, 3, 5);
    /* floor(m ln 2 / 64) = 0 for m = 92 (92 ln 2 = 63.77). */
    expect_from_klm_fails(64, 1, 92);
    assert_int_equal(support_alloc_live_count(), 0);
}

static void from_klm_follows_the_paper(void **state) {
    static const struct {
        uint32_t k, l;
        uint64_t m;
    } cases[] = {{4, 3, 1000},  {1, 1, 2},     {64, 1, 93},
                 {10, 25, 12345}, {2, 1, 64},  {64, 1024, UINT64_C(1) << 40}};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ebb_apbf_params p;
        uint64_t g = max_generation(cases[i].m, cases[i].k);
        assert_int_equal(ebb_apbf_params_from_klm(cases[i].k, cases[i].l,
                                                  cases[i].m, &p),
                         EBB_OK);
        assert_int_equal(p.k, cases[i].k);
        assert_int_equal(p.l, cases[i].l);
        assert_int_equal(p.slice_bits, cases[i].m);
        assert_int_equal(p.generation, g);
        assert_int_equal(p.window, (uint64_t)cases[i].l * g);
    }
    {
        /* Worked value: floor(1000 ln 2 / 4) = floor(173.28) = 173. */
        ebb_apbf_params p;
        assert_int_equal(ebb_apbf_params_from_klm(4, 3, 1000, &p), EBB_OK);
        assert_int_equal(p.generation, 173);
        assert_int_equal(p.window, 519);
    }
}

/* from_kl: the least memory that holds the window at fill 1/2 or less, i.e.
 * the least g with l g >= window and the least m with g <= m ln 2 / k. */
static void check_from_kl(uint32_t k, uint32_t l, uint64_t window) {
    ebb_apbf_params p;
    uint64_t want_g = (window + l - 1) / l;
    assert_int_equal(ebb_apbf_params_from_kl(k, l, window, &p), EBB_OK);
    assert_int_equal(p.k, k);
    assert_int_equal(p.l, l);
    CHECK(p.generation == want_g, "from_kl(%u, %u, %llu): g = %llu, want %llu",
          k, l, (unsigned long long)window, (unsigned long long)p.generation,
          (unsigned long long)want_g);
    assert_int_equal(p.window, (uint64_t)l * p.generation);
    assert_true(p.window >= window);
    CHECK(p.generation <= max_generation(p.slice_bits, k),
          "from_kl(%u, %u, %llu): m = %llu too small for g = %llu", k, l,
          (unsigned long long)window, (unsigned long long)p.slice_bits,
          (unsigned long long)p.generation);
    CHECK(p.slice_bits == 1 ||
              p.generation > max_generation(p.slice_bits - 1, k),
          "from_kl(%u, %u, %llu): m = %llu is not the least", k, l,
          (unsigned long long)window, (unsigned long long)p.slice_bits);
}

static void from_kl_sizes_least_slices(void **state) {
    static const uint64_t windows[] = {1, 2, 7, 100, 999, 1000, 65536,
                                       1000003, UINT64_C(1) << 32};
    static const uint32_t shapes[][2] = {{1, 1}, {4, 3},  {7, 5},
                                         {10, 25}, {64, 1}, {64, 1024}};
    size_t s, w;
    (void)state;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (w = 0; w < sizeof windows / sizeof windows[0]; w++)
            check_from_kl(shapes[s][0], shapes[s][1], windows[w]);
}

static size_t memory_of(const ebb_apbf_params *p) {
    size_t bytes = 0;
    assert_int_equal(ebb_apbf_params_memory(p, &bytes), EBB_OK);
    return bytes;
}

static void memory_counts_every_slice(void **state) {
    static const uint64_t slices[] = {1, 63, 64, 65, 1000, 1 << 20};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof slices / sizeof slices[0]; i++) {
        ebb_apbf_params p;
        size_t payload, bytes;
        if (ebb_apbf_params_from_klm(1, 2, slices[i], &p) != EBB_OK)
            continue; /* m = 1: g = 0 */
        payload = 3 * (size_t)((slices[i] + 63) / 64) * 8;
        bytes = memory_of(&p);
        CHECK(bytes >= payload && bytes <= payload + 4096,
              "memory for 3 slices of %llu bits: %zu bytes (payload %zu)",
              (unsigned long long)slices[i], bytes, payload);
    }
    {
        /* The largest shape: 1088 slices of 2^40 bits = 1088 * 2^37 bytes. */
        ebb_apbf_params p;
        size_t bytes;
        assert_int_equal(ebb_apbf_params_from_klm(EBB_APBF_MAX_K,
                                                  EBB_APBF_MAX_L,
                                                  EBB_APBF_MAX_SLICE_BITS, &p),
                         EBB_OK);
        bytes = memory_of(&p);
        assert_true(bytes >= (size_t)1088 << 37);
    }
}

static void memory_rejects_bad_params(void **state) {
    ebb_apbf_params good, p;
    size_t bytes = 12345;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(4, 3, 1000, &good), EBB_OK);
    p = good;
    p.k = 0;
    assert_int_equal(ebb_apbf_params_memory(&p, &bytes), EBB_EINVAL);
    p = good;
    p.l = EBB_APBF_MAX_L + 1;
    assert_int_equal(ebb_apbf_params_memory(&p, &bytes), EBB_EINVAL);
    p = good;
    p.slice_bits = 0;
    assert_int_equal(ebb_apbf_params_memory(&p, &bytes), EBB_EINVAL);
    p = good;
    p.slice_bits = EBB_APBF_MAX_SLICE_BITS + 1;
    assert_int_equal(ebb_apbf_params_memory(&p, &bytes), EBB_EINVAL);
    assert_int_equal(bytes, 12345);
}

/* ------------------------------------------------------------------------ */
/* create                                                                   */
/* ------------------------------------------------------------------------ */

static char out_sentinel;
#define OUT_SENTINEL ((ebb_apbf *)(void *)&out_sentinel)

static void expect_create_fails(const ebb_apbf_params *p, ebb_status want,
                                const char *what) {
    ebb_apbf *out = OUT_SENTINEL;
    ebb_status got = ebb_apbf_create(p, 1, &out);
    CHECK(got == want, "create with %s = %d (%s), want %d (%s)", what,
          (int)got, ebb_strerror(got), (int)want, ebb_strerror(want));
    CHECK(out == OUT_SENTINEL, "create with %s wrote *out", what);
    CHECK(support_alloc_live_count() == 0,
          "create with %s left %llu blocks live", what,
          (unsigned long long)support_alloc_live_count());
}

static void create_rejects_inconsistent_params(void **state) {
    ebb_apbf_params good, p;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(4, 3, 1000, &good), EBB_OK);

    p = good;
    p.k = 0;
    expect_create_fails(&p, EBB_EINVAL, "k = 0");

    p = good;
    p.k = EBB_APBF_MAX_K + 1;
    expect_create_fails(&p, EBB_EINVAL, "k > MAX_K");

    p = good;
    p.l = 0;
    p.window = 0;
    expect_create_fails(&p, EBB_EINVAL, "l = 0");

    p = good;
    p.l = EBB_APBF_MAX_L + 1;
    p.window = p.l * p.generation;
    expect_create_fails(&p, EBB_EINVAL, "l > MAX_L");

    p = good;
    p.slice_bits = 0;
    expect_create_fails(&p, EBB_EINVAL, "slice_bits = 0");

    p = good;
    p.slice_bits = EBB_APBF_MAX_SLICE_BITS + 1;
    expect_create_fails(&p, EBB_EINVAL, "slice_bits > MAX");

    p = good;
    p.generation = 0;
    p.window = 0;
    expect_create_fails(&p, EBB_EINVAL, "g = 0");

    p = good;
    p.window = good.window + 1;
    expect_create_fails(&p, EBB_EINVAL, "window = l g + 1");

    p = good;
    p.window = good.window - 1;
    expect_create_fails(&p, EBB_EINVAL, "window = l g - 1");

    p = good;
    p.generation = max_generation(good.slice_bits, good.k) + 1;
    p.window = p.l * p.generation;
    expect_create_fails(&p, EBB_EINVAL, "g > floor(m ln 2 / k)");

    /* from_kl gives the least m, so one bit less cannot hold g. */
    p = good;
    p.slice_bits = good.slice_bits - 1;
    assert_true(good.generation > max_generation(p.slice_bits, p.k));
    expect_create_fails(&p, EBB_EINVAL, "m one bit too small");
}

/* A valid but absurd shape (1088 * 2^37 bytes): the counting allocator
 * refuses it, so create must report ENOMEM and hold nothing. */
static void create_reports_allocation_failure(void **state) {
    ebb_apbf_params p;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_klm(EBB_APBF_MAX_K, EBB_APBF_MAX_L,
                                              EBB_APBF_MAX_SLICE_BITS, &p),
                     EBB_OK);
    expect_create_fails(&p, EBB_ENOMEM, "the largest shape");
}

static void create_accepts_what_sizing_gives(void **state) {
    ebb_apbf_params p;
    ebb_apbf *filter = NULL;
    (void)state;
    assert_int_equal(ebb_apbf_choose(5000, 0.01, 0, &p), EBB_OK);
    assert_int_equal(ebb_apbf_create(&p, 3, &filter), EBB_OK);
    assert_non_null(filter);
    CHECK(support_alloc_live_bytes() == memory_of(&p),
          "filter holds %llu bytes, params_memory says %zu",
          (unsigned long long)support_alloc_live_bytes(), memory_of(&p));
    ebb_apbf_destroy(filter);
    /* g smaller than the maximum is allowed (a lightly filled filter). */
    assert_int_equal(ebb_apbf_params_from_klm(4, 3, 1000, &p), EBB_OK);
    p.generation = 10;
    p.window = 30;
    assert_int_equal(ebb_apbf_create(&p, 3, &filter), EBB_OK);
    ebb_apbf_destroy(filter);
}

/* ------------------------------------------------------------------------ */
/* choose                                                                   */
/* ------------------------------------------------------------------------ */

static bool meets(uint32_t k, uint32_t l, double fp, double max_npws) {
    if (!(ebb_apbf_fp(k, l) <= fp))
        return false;
    return max_npws <= 0 || ebb_apbf_npws(k, l) <= max_npws;
}

static void check_choice(uint64_t window, double fp, double max_npws,
                         bool scan_for_less_memory) {
    ebb_apbf_params chosen, again;
    size_t chosen_bytes;
    uint32_t k, l;
    assert_int_equal(ebb_apbf_choose(window, fp, max_npws, &chosen), EBB_OK);
    CHECK(ebb_apbf_fp(chosen.k, chosen.l) <= fp,
          "choose(%llu, %g, %g) gave (k=%u, l=%u) with fp %g",
          (unsigned long long)window, fp, max_npws, chosen.k, chosen.l,
          ebb_apbf_fp(chosen.k, chosen.l));
    CHECK(max_npws <= 0 || ebb_apbf_npws(chosen.k, chosen.l) <= max_npws,
          "choose(%llu, %g, %g) gave (k=%u, l=%u) with npws %g",
          (unsigned long long)window, fp, max_npws, chosen.k, chosen.l,
          ebb_apbf_npws(chosen.k, chosen.l));
    assert_int_equal(chosen.window, (uint64_t)chosen.l * chosen.generation);
    assert_true(chosen.window >= window);
    assert_true(chosen.generation <=
                max_generation(chosen.slice_bits, chosen.k));
    /* The slices are sized exactly as params_from_kl sizes that (k, l). */
    assert_int_equal(ebb_apbf_params_from_kl(chosen.k, chosen.l, window,
                                             &again),
                     EBB_OK);
    assert_memory_equal(&chosen, &again, sizeof chosen);
    if (!scan_for_less_memory)
        return;
    chosen_bytes = memory_of(&chosen);
    for (k = 1; k <= 30; k++) {
        for (l = 1; l <= 200; l++) {
            ebb_apbf_params candidate;
            if (!meets(k, l, fp, max_npws))
                continue;
            assert_int_equal(ebb_apbf_params_from_kl(k, l, window, &candidate),
                             EBB_OK);
            CHECK(memory_of(&candidate) >= chosen_bytes,
                  "choose(%llu, %g, %g) gave (k=%u, l=%u, %zu bytes) but "
                  "(k=%u, l=%u) needs only %zu",
                  (unsigned long long)window, fp, max_npws, chosen.k, chosen.l,
                  chosen_bytes, k, l, memory_of(&candidate));
        }
    }
}

static void choose_meets_its_targets_with_least_memory(void **state) {
    (void)state;
    check_choice(1000, 0.1, 0, true);
    check_choice(100000, 0.01, 0, true);
    check_choice(1000000, 0.001, 0.1, true);
    check_choice(50000, 0.0001, 0.2, true);
    check_choice(12345, 0.05, 0.5, true);
}

static void choose_meets_its_targets(void **state) {
    static const double fps[] = {0.5, 0.1, 0.01, 1e-3, 1e-6};
    static const double npws[] = {0, 0.3, 0.05};
    static const uint64_t windows[] = {1, 1000, UINT64_C(1) << 34};
    size_t f, n, w;
    (void)state;
    for (f = 0; f < sizeof fps / sizeof fps[0]; f++)
        for (n = 0; n < sizeof npws / sizeof npws[0]; n++)
            for (w = 0; w < sizeof windows / sizeof windows[0]; w++)
                check_choice(windows[w], fps[f], npws[n], false);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* ------------------------------------------------------------------------ */
/* The bit-sliced layout's chooser and padding                              */
/* ------------------------------------------------------------------------ */

/* The smallest cell of 16, 32, 64 or 128 bits holding k + l + 1 planes. */
static uint32_t cell_for(uint32_t k, uint32_t l) {
    uint32_t planes = k + l + 1, cell = 16;
    while (cell < planes)
        cell *= 2;
    return cell;
}

static ebb_apbf_goal sliced_goal(uint64_t window, double fp, double max_npws) {
    ebb_apbf_goal goal;
    memset(&goal, 0, sizeof goal);
    goal.window = window;
    goal.fp = fp;
    goal.max_npws = max_npws;
    goal.layout = EBB_APBF_LAYOUT_SLICED;
    return goal;
}

/* The sliced chooser meets fp and NPWS with plain shapes of at most 128
 * planes in their smallest cell, sized as params_from_kl sizes them, and
 * no such shape meeting both costs fewer bits (m W) or bytes. */
static void check_sliced_choice(uint64_t window, double fp, double max_npws) {
    ebb_apbf_goal goal = sliced_goal(window, fp, max_npws);
    ebb_apbf_params chosen, again;
    uint32_t k, l;
    assert_int_equal(ebb_apbf_choose_goal(&goal, &chosen), EBB_OK);
    CHECK(meets(chosen.k, chosen.l, fp, max_npws),
          "sliced choice (%u, %u) misses fp %g / npws %g", chosen.k, chosen.l,
          fp, max_npws);
    assert_int_equal(chosen.layout, EBB_APBF_LAYOUT_SLICED);
    assert_int_equal(chosen.block_bits, 0);
    assert_true(chosen.k + chosen.l + 1 <= 128);
    assert_int_equal(chosen.cell_bits, cell_for(chosen.k, chosen.l));
    assert_int_equal(ebb_apbf_params_from_kl(chosen.k, chosen.l, window,
                                             &again),
                     EBB_OK);
    assert_int_equal(ebb_apbf_params_set_layout(&again, EBB_APBF_LAYOUT_SLICED),
                     EBB_OK);
    assert_memory_equal(&chosen, &again, sizeof chosen);
    double chosen_bits = (double)chosen.slice_bits * chosen.cell_bits;
    for (k = 1; k <= EBB_APBF_MAX_K; k++)
        for (l = 1; k + l + 1 <= 128; l++) {
            ebb_apbf_params candidate;
            if (!meets(k, l, fp, max_npws))
                continue;
            assert_int_equal(ebb_apbf_params_from_kl(k, l, window, &candidate),
                             EBB_OK);
            double bits = (double)candidate.slice_bits * cell_for(k, l);
            CHECK(bits >= chosen_bits,
                  "sliced choice (%u, %u) holds %.0f bits, (%u, %u) %.0f",
                  chosen.k, chosen.l, chosen_bits, k, l, bits);
            if (ebb_apbf_params_set_layout(&candidate,
                                           EBB_APBF_LAYOUT_SLICED) == EBB_OK)
                CHECK(memory_of(&candidate) >= memory_of(&chosen),
                      "(%u, %u) needs %zu bytes, the choice %zu", k, l,
                      memory_of(&candidate), memory_of(&chosen));
        }
}

static void sliced_choose_meets_its_targets_with_least_memory(void **state) {
    (void)state;
    check_sliced_choice(1000000, 0.01, 0);
    check_sliced_choice(1000000, 0.067, 0);
    check_sliced_choice(100000, 0.001, 0.1);
    check_sliced_choice(5000, 0.3, 0.5);
    assert_int_equal(support_alloc_live_count(), 0);
}

/* At fp 0.157 and w = 10^6 a 16-bit shape that fills its cell, (5, 10),
 * holds 14% fewer bits than the best shape needing a wider cell ((6, 21)
 * in 32 bits), so the chooser takes it with no padding. */
static void sliced_choose_prefers_full_cells(void **state) {
    const double fp = 0.157;
    ebb_apbf_goal goal = sliced_goal(1000000, fp, 0);
    ebb_apbf_params sliced, ring;
    double wider_bits = INFINITY;
    uint32_t k, l, bits;
    uint64_t bytes;
    (void)state;
    assert_int_equal(ebb_apbf_choose_goal(&goal, &sliced), EBB_OK);
    assert_int_equal(sliced.k, 5);
    assert_int_equal(sliced.l, 10);
    assert_int_equal(sliced.cell_bits, 16);
    assert_int_equal(ebb_apbf_layout_padding(&sliced, &bits, &bytes), EBB_OK);
    assert_int_equal(bits, 0);
    assert_int_equal(bytes, 0);
    for (k = 1; k <= EBB_APBF_MAX_K; k++)
        for (l = 1; k + l + 1 <= 128; l++) {
            ebb_apbf_params p;
            if (k + l + 1 <= 16 || !meets(k, l, fp, 0))
                continue;
            assert_int_equal(ebb_apbf_params_from_kl(k, l, 1000000, &p),
                             EBB_OK);
            if ((double)p.slice_bits * cell_for(k, l) < wider_bits)
                wider_bits = (double)p.slice_bits * cell_for(k, l);
        }
    CHECK(wider_bits > 1.1 * (double)sliced.slice_bits * 16,
          "best wider shape %.0f bits, (5, 10) %.0f", wider_bits,
          (double)sliced.slice_bits * 16);
    goal.layout = EBB_APBF_LAYOUT_RING;
    assert_int_equal(ebb_apbf_choose_goal(&goal, &ring), EBB_OK);
    assert_int_equal(ring.layout, EBB_APBF_LAYOUT_RING);
    assert_int_equal(ring.cell_bits, 0);
}

/* Padding: W - (k + l + 1) planes of every cell, ceil(m that / 8) bytes;
 * nothing for the ring; the spare plane is not padding. */
static void layout_padding_counts_unused_planes(void **state) {
    ebb_apbf_params p;
    uint32_t bits = 99;
    uint64_t bytes = 99;
    (void)state;
    assert_int_equal(ebb_apbf_params_from_klm(8, 8, 1001, &p), EBB_OK);
    assert_int_equal(ebb_apbf_layout_padding(&p, &bits, &bytes), EBB_OK);
    assert_int_equal(bits, 0); /* ring */
    assert_int_equal(bytes, 0);
    assert_int_equal(ebb_apbf_params_set_layout(&p, EBB_APBF_LAYOUT_SLICED),
                     EBB_OK);
    assert_int_equal(p.cell_bits, 32); /* 17 planes */
    assert_int_equal(ebb_apbf_layout_padding(&p, &bits, &bytes), EBB_OK);
    assert_int_equal(bits, 15);
    assert_int_equal(bytes, (1001 * 15 + 7) / 8);
    assert_int_equal(ebb_apbf_params_from_klm(3, 60, 4096, &p), EBB_OK);
    assert_int_equal(ebb_apbf_params_set_layout(&p, EBB_APBF_LAYOUT_SLICED),
                     EBB_OK);
    assert_int_equal(p.cell_bits, 64);
    assert_int_equal(ebb_apbf_layout_padding(&p, &bits, &bytes), EBB_OK);
    assert_int_equal(bits, 0);
    assert_int_equal(bytes, 0);
    /* Invalid shapes and NULLs are refused, outputs untouched. */
    bits = 7;
    bytes = 7;
    p.generation = 0;
    assert_int_equal(ebb_apbf_layout_padding(&p, &bits, &bytes), EBB_EINVAL);
    assert_int_equal(ebb_apbf_layout_padding(NULL, &bits, &bytes), EBB_EINVAL);
    assert_int_equal(bits, 7);
    assert_int_equal(bytes, 7);
}

/* set_layout refuses what the layout cannot hold; the chooser refuses
 * blocked + sliced, unknown layouts and goals no <= 128-plane shape meets. */
static void sliced_refuses_impossible_shapes(void **state) {
    ebb_apbf_params p, out;
    ebb_apbf_goal goal = sliced_goal(1000, 0.01, 0);
    (void)state;
    assert_int_equal(ebb_apbf_params_from_kl(64, 64, 1000, &p), EBB_OK);
    assert_int_equal(ebb_apbf_params_set_layout(&p, EBB_APBF_LAYOUT_SLICED),
                     EBB_EINVAL); /* 129 planes */
    assert_int_equal(ebb_apbf_params_from_kl(64, 63, 1000, &p), EBB_OK);
    assert_int_equal(ebb_apbf_params_set_layout(&p, EBB_APBF_LAYOUT_SLICED),
                     EBB_OK);
    assert_int_equal(p.cell_bits, 128);
    assert_int_equal(ebb_apbf_params_from_kl_blocked(4, 3, 1000, 512, 8, &p),
                     EBB_OK);
    assert_int_equal(ebb_apbf_params_set_layout(&p, EBB_APBF_LAYOUT_SLICED),
                     EBB_EINVAL);
    assert_int_equal(ebb_apbf_params_set_layout(&p, 2), EBB_EINVAL);
    assert_int_equal(ebb_apbf_params_set_layout(NULL, 0), EBB_EINVAL);

    goal.block_bits = 512;
    sentinel_params(&out);
    assert_int_equal(ebb_apbf_choose_goal(&goal, &out), EBB_EINVAL);
    goal.block_hashes = 8;
    assert_int_equal(ebb_apbf_choose_goal(&goal, &out), EBB_EINVAL);
    goal = sliced_goal(1000, 0.01, 0);
    goal.layout = 2;
    assert_int_equal(ebb_apbf_choose_goal(&goal, &out), EBB_EINVAL);
    /* NPWS >= 1/l > 1/127 for every shape the layout holds, and fp 1e-40
     * needs more than 128 planes: both impossible here, not for the ring. */
    goal = sliced_goal(1000, 0.01, 1.0 / 200.0);
    assert_int_equal(ebb_apbf_choose_goal(&goal, &out), EBB_EINVAL);
    goal.layout = EBB_APBF_LAYOUT_RING;
    assert_int_equal(ebb_apbf_choose_goal(&goal, &out), EBB_OK);
    goal = sliced_goal(1000, 1e-40, 0);
    sentinel_params(&out);
    assert_int_equal(ebb_apbf_choose_goal(&goal, &out), EBB_EINVAL);
    assert_true(params_untouched(&out));
    /* Sliced where its least memory is within 10% of the ring the caller
     * would build: against the ring's least memory at 1%, 2,635,256 bytes
     * against 2,463,368 (1.07x); not at w = 1000 (5,640 against 2,792)
     * nor at fp 1e-8 (1.17x) nor at 1e-5 (5,108,184 against 4,627,928,
     * 1.104x); but at 1e-5 against a ring of at most 4 reads (5,861,272,
     * Redis's default); the ring for NULL, blocked goals and arguments the
     * choosers refuse. */
    ebb_apbf_goal ring = {1000000, 0.01, 0, 0, 0, 0, EBB_APBF_LAYOUT_RING};
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_SLICED);
    ring.layout = EBB_APBF_LAYOUT_SLICED; /* ignored */
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_SLICED);
    ring.window = 100000000;
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_SLICED);
    ring.window = 1000;
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_RING);
    ring.window = 1000000;
    ring.fp = 1e-8;
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_RING);
    ring.fp = 1e-5;
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_RING);
    ring.max_accesses = 4.0;
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_SLICED);
    ring.block_bits = 512;
    ring.block_hashes = 8;
    assert_int_equal(ebb_apbf_preferred_layout(&ring), EBB_APBF_LAYOUT_RING);
    assert_int_equal(ebb_apbf_preferred_layout(NULL), EBB_APBF_LAYOUT_RING);
    ebb_apbf_goal bad = {0, 0.01, 0, 0, 0, 0, EBB_APBF_LAYOUT_RING};
    assert_int_equal(ebb_apbf_preferred_layout(&bad), EBB_APBF_LAYOUT_RING);
    bad.window = 1000000;
    bad.fp = 1.5;
    assert_int_equal(ebb_apbf_preferred_layout(&bad), EBB_APBF_LAYOUT_RING);
    assert_int_equal(support_alloc_live_count(), 0);
}

#define TEST(f) SUPPORT_TEST(f, support_setup_counting)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(choose_rejects_bad_arguments),
        TEST(from_kl_rejects_bad_arguments),
        TEST(from_kl_refuses_slices_beyond_the_limit),
        TEST(from_klm_rejects_bad_arguments),
        TEST(from_klm_follows_the_paper),
        TEST(from_kl_sizes_least_slices),
        TEST(memory_counts_every_slice),
        TEST(memory_rejects_bad_params),
        TEST(create_rejects_inconsistent_params),
        TEST(create_reports_allocation_failure),
        TEST(create_accepts_what_sizing_gives),
        TEST(choose_meets_its_targets_with_least_memory),
        TEST(choose_meets_its_targets),
        TEST(sliced_choose_meets_its_targets_with_least_memory),
        TEST(sliced_choose_prefers_full_cells),
        TEST(layout_padding_counts_unused_planes),
        TEST(sliced_refuses_impossible_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
