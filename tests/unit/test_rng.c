/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rng.c: the deterministic generator (src/core/rng.h).
 *
 * Reference values, and where they come from:
 * - xoshiro256** from the state {1, 2, 3, 4}: 11520, 0, 1509978240,
 *   1215971899390074240, 1216172134540287360, 607988272756665600, the
 *   outputs of the authors' reference implementation as published in many
 *   test suites (e.g. the rand_xoshiro crate's). The first two follow by
 *   hand: rotl(2 * 5, 7) * 9 = 10 * 128 * 9 = 11520, and one step makes
 *   s[2] = 3 ^ 1 = 2 and then s[1] = 2 ^ 2 = 0, so the second output is 0.
 * - splitmix64 from 0: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
 *   0x06c45d188009454f, 0xf88bb8a8724c81ec, its published first outputs:
 *   the state ebb_rng_seed(0) must produce.
 * - The outputs after ebb_rng_seed(0) (and 1) are this implementation's,
 *   agreeing with an independent Python transcription of both published
 *   algorithms written for this test; they pin the seeding so snapshots
 *   and experiments stay reproducible.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "support.h"

/* Upper 99.9% points of the chi-square distribution. */
#define CHI2_999_DF2 13.816
#define CHI2_999_DF9 27.877

static void reference_outputs_from_state_1234(void **state) {
    static const uint64_t expected[] = {
        UINT64_C(11520),
        UINT64_C(0),
        UINT64_C(1509978240),
        UINT64_C(1215971899390074240),
        UINT64_C(1216172134540287360),
        UINT64_C(607988272756665600),
    };
    ebb_rng r = {{1, 2, 3, 4}};
    (void)state;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        CHECK(ebb_rng_next(&r) == expected[i], "output %zu differs", i);
}

static void seeding_is_splitmix64(void **state) {
    ebb_rng r;
    (void)state;
    ebb_rng_seed(&r, 0);
    assert_int_equal(r.s[0], UINT64_C(0xe220a8397b1dcdaf));
    assert_int_equal(r.s[1], UINT64_C(0x6e789e6aa1b965f4));
    assert_int_equal(r.s[2], UINT64_C(0x06c45d188009454f));
    assert_int_equal(r.s[3], UINT64_C(0xf88bb8a8724c81ec));
}

static void seed_0_and_1_pinned(void **state) {
    static const uint64_t seed0[] = {
        UINT64_C(0x99ec5f36cb75f2b4), UINT64_C(0xbf6e1f784956452a),
        UINT64_C(0x1a5f849d4933e6e0), UINT64_C(0x6aa594f1262d2d2c),
        UINT64_C(0xbba5ad4a1f842e59), UINT64_C(0xffef8375d9ebcaca),
        UINT64_C(0x6c160deed2f54c98), UINT64_C(0x8920ad648fc30a3f),
    };
    static const uint64_t seed1[] = {
        UINT64_C(0xb3f2af6d0fc710c5), UINT64_C(0x853b559647364cea),
        UINT64_C(0x92f89756082a4514), UINT64_C(0x642e1c7bc266a3a7),
        UINT64_C(0xb27a48e29a233673), UINT64_C(0x24c123126ffda722),
        UINT64_C(0x123004ef8df510e6), UINT64_C(0x61954dcc47b1e89d),
    };
    ebb_rng a, b;
    (void)state;
    ebb_rng_seed(&a, 0);
    ebb_rng_seed(&b, 1);
    for (size_t i = 0; i < 8; i++) {
        CHECK(ebb_rng_next(&a) == seed0[i], "seed 0 output %zu", i);
        CHECK(ebb_rng_next(&b) == seed1[i], "seed 1 output %zu", i);
    }
}

static void same_seed_same_sequence_different_seeds_differ(void **state) {
    static const uint64_t seeds[] = {0, 1, 2, 42, UINT64_MAX,
                                     UINT64_C(0x9e3779b97f4a7c15)};
    enum { SEEDS = sizeof seeds / sizeof seeds[0], N = 1000 };
    static uint64_t out[SEEDS][N];
    (void)state;
    for (size_t k = 0; k < SEEDS; k++) {
        ebb_rng a, b;
        ebb_rng_seed(&a, seeds[k]);
        ebb_rng_seed(&b, seeds[k]);
        for (size_t i = 0; i < N; i++) {
            out[k][i] = ebb_rng_next(&a);
            CHECK(ebb_rng_next(&b) == out[k][i], "seed %zu output %zu", k, i);
        }
    }
    /* No two seeds share an output at the same position (the chance for
     * independent 64-bit values is ~1e-15). */
    for (size_t k = 0; k < SEEDS; k++)
        for (size_t j = 0; j < k; j++)
            for (size_t i = 0; i < N; i++)
                CHECK(out[k][i] != out[j][i], "seeds %zu and %zu at %zu", k,
                      j, i);
}

static double chi_square(const uint64_t *observed, size_t buckets,
                         double expected) {
    double sum = 0;
    for (size_t b = 0; b < buckets; b++) {
        double d = (double)observed[b] - expected;
        sum += d * d / expected;
    }
    return sum;
}

static void below_is_uniform_over_10(void **state) {
    enum { DRAWS = 1000000 };
    uint64_t counts[10] = {0};
    ebb_rng r;
    (void)state;
    ebb_rng_seed(&r, 12345);
    for (uint32_t i = 0; i < DRAWS; i++) {
        uint64_t v = ebb_rng_below(&r, 10);
        assert_true(v < 10);
        counts[v]++;
    }
    double chi2 = chi_square(counts, 10, DRAWS / 10.0);
    print_message("below(10): chi-square %.3f (99.9%% point %.3f)\n", chi2,
                  CHI2_999_DF9);
    CHECK(chi2 < CHI2_999_DF9, "chi-square %.3f", chi2);
}

/* bound = 3 * 2^62: a plain multiply-high maps two 64-bit inputs onto every
 * result divisible by 3 and one onto the others, so without rejection half
 * the results would be 0 mod 3 instead of a third. */
static void below_rejects_the_biased_remainder(void **state) {
    enum { DRAWS = 300000 };
    const uint64_t bound = UINT64_C(3) << 62;
    uint64_t counts[3] = {0};
    ebb_rng r;
    (void)state;
    ebb_rng_seed(&r, 777);
    for (uint32_t i = 0; i < DRAWS; i++) {
        uint64_t v = ebb_rng_below(&r, bound);
        assert_true(v < bound);
        counts[v % 3u]++;
    }
    double chi2 = chi_square(counts, 3, DRAWS / 3.0);
    print_message("below(3*2^62) mod 3: chi-square %.3f (99.9%% point "
                  "%.3f)\n", chi2, CHI2_999_DF2);
    CHECK(chi2 < CHI2_999_DF2, "chi-square %.3f", chi2);
}

static void below_edges(void **state) {
    static const uint64_t bounds[] = {
        (UINT64_C(1) << 63) + 1u, (UINT64_C(1) << 63) - 1u,
        (UINT64_C(1) << 63) + UINT64_C(0x123456789), UINT64_MAX, 3, 7};
    ebb_rng r;
    (void)state;
    ebb_rng_seed(&r, 99);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(ebb_rng_below(&r, 1), 0);
    for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
        uint64_t upper_half = 0;
        for (int i = 0; i < 10000; i++) {
            uint64_t v = ebb_rng_below(&r, bounds[k]);
            CHECK(v < bounds[k], "below(%llu) gave %llu",
                  (unsigned long long)bounds[k], (unsigned long long)v);
            upper_half += v >= bounds[k] / 2u + (bounds[k] & 1u);
        }
        /* Half the values in the upper half, within 5 binomial sd (50). */
        if (bounds[k] > 1000)
            CHECK(upper_half > 5000 - 250 && upper_half < 5000 + 250,
                  "bound %zu: %llu of 10000 in the upper half", k,
                  (unsigned long long)upper_half);
    }
}

static void unit_is_in_0_1_with_53_bits(void **state) {
    enum { DRAWS = 100000 };
    ebb_rng r, copy;
    double sum = 0;
    (void)state;
    ebb_rng_seed(&r, 5);
    for (int i = 0; i < DRAWS; i++) {
        copy = r;
        double u = ebb_rng_unit(&r);
        assert_true(u >= 0.0 && u < 1.0);
        /* Exactly the top 53 bits of the next output. */
        assert_true(u * 0x1.0p53 == (double)(ebb_rng_next(&copy) >> 11));
        sum += u;
    }
    /* Mean 1/2, sd of the mean sqrt(1/12 / N) ~ 0.00091: within 5 sd. */
    double mean = sum / DRAWS;
    CHECK(fabs(mean - 0.5) < 5.0 * sqrt(1.0 / 12.0 / DRAWS), "mean %.6f",
          mean);
}

static void put_get_round_trip(void **state) {
    unsigned char buf[EBB_RNG_STATE_BYTES];
    ebb_rng r, back = {{0, 0, 0, 0}};
    (void)state;
    ebb_rng_seed(&r, 2024);
    (void)ebb_rng_next(&r);
    ebb_writer w = {buf, buf, buf + sizeof buf, NULL};
    ebb_rng_put(&w, &r);
    assert_ptr_equal(w.at, buf + sizeof buf);
    for (int i = 0; i < 4; i++)
        assert_int_equal(support_get_le(buf + 8 * i, 8), r.s[i]);
    ebb_reader rd = {buf, buf + sizeof buf};
    assert_true(ebb_rng_get(&rd, &back));
    assert_ptr_equal(rd.at, buf + sizeof buf);
    assert_memory_equal(&back, &r, sizeof r);
    /* The restored generator continues the same sequence. */
    for (int i = 0; i < 100; i++)
        assert_int_equal(ebb_rng_next(&back), ebb_rng_next(&r));
}

static void get_refuses_zero_state_and_short_input(void **state) {
    unsigned char buf[EBB_RNG_STATE_BYTES] = {0};
    ebb_rng out = {{7, 8, 9, 10}};
    const ebb_rng before = out;
    (void)state;
    ebb_reader zero = {buf, buf + sizeof buf};
    assert_false(ebb_rng_get(&zero, &out));
    assert_memory_equal(&out, &before, sizeof out);
    /* One set bit anywhere makes the state valid. */
    buf[31] = 0x80;
    ebb_reader one = {buf, buf + sizeof buf};
    assert_true(ebb_rng_get(&one, &out));
    assert_int_equal(out.s[3], UINT64_C(1) << 63);
    out = before;
    buf[0] = 1;
    for (size_t len = 0; len < sizeof buf; len++) {
        ebb_reader short_reader = {buf, buf + len};
        assert_false(ebb_rng_get(&short_reader, &out));
        assert_ptr_equal(short_reader.at, buf);
        assert_memory_equal(&out, &before, sizeof out);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_outputs_from_state_1234),
        cmocka_unit_test(seeding_is_splitmix64),
        cmocka_unit_test(seed_0_and_1_pinned),
        cmocka_unit_test(same_seed_same_sequence_different_seeds_differ),
        cmocka_unit_test(below_is_uniform_over_10),
        cmocka_unit_test(below_rejects_the_biased_remainder),
        cmocka_unit_test(below_edges),
        cmocka_unit_test(unit_is_in_0_1_with_53_bits),
        cmocka_unit_test(put_get_round_trip),
        cmocka_unit_test(get_refuses_zero_state_and_short_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
