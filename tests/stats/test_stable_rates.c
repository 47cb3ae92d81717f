/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_stable_rates.c: the stable filter's measured rates against its
 * analysis (src/stable/analysis.c), fixed seeds, |z| <= 3.
 *
 *   1. Zero fraction: after a warm-up of 10 Max m / P insertions of
 *      distinct keys (a cell forgets its start within about Max m / P),
 *      the fraction of zero cells (ebb_stable_get_stats) averaged over
 *      SEEDS independent filters, against V_0 of ebb_stable_analyse, with
 *      sd sqrt(V_0 (1 - V_0) / (m SEEDS)) (cells counted as independent),
 *      for eight configurations across the four variants and both draws.
 *   2. False positives: fresh keys queried (contains, which changes
 *      nothing) after the warm-up. Given the filter's zero fraction z the
 *      rate is (1 - z)^K exactly (positions independent and uniform): that
 *      is checked with the binomial sd; against FPS = (1 - V_0)^K the sd
 *      adds the spread of z, (K (1 - V_0)^(K-1))^2 V_0 (1 - V_0) / m per
 *      filter.
 *   3. False negatives at three gaps: a stream in which every 16th item is
 *      a probe at level L; each probe is tested with contains when
 *      exactly g - 1 items followed it (the duplicate's query precedes its
 *      own update), for g = m/16, m/4, m at once. The probes set L, so the
 *      analysis gets the stream's true level mix (15/16 the configuration's,
 *      1/16 at L). Binomial sd over the probes.
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
#include "ebb/stable.h"

#define Z_BOUND 3.0
#define SEEDS 8u
#define MAX_LEVELS 256u

typedef struct rate_config {
    const char *name;
    uint64_t m;
    uint32_t d, k, p;
    ebb_stable_variant variant;
    ebb_stable_draw draw;
    double important; /* IBF_2C: fraction of important items */
} rate_config;

static const rate_config CONFIGS[] = {
    {"plain consecutive", 1u << 16, 3, 5, 10, EBB_STABLE_PLAIN,
     EBB_STABLE_DRAW_CONSECUTIVE, 0.0},
    {"plain independent", 1u << 16, 3, 5, 10, EBB_STABLE_PLAIN,
     EBB_STABLE_DRAW_INDEPENDENT, 0.0},
    {"2C 30% independent", 1u << 16, 3, 5, 10, EBB_STABLE_IBF_2C,
     EBB_STABLE_DRAW_INDEPENDENT, 0.3},
    {"2C 60% consecutive", 1u << 15, 4, 4, 20, EBB_STABLE_IBF_2C,
     EBB_STABLE_DRAW_CONSECUTIVE, 0.6},
    {"MC consecutive", 1u << 16, 3, 5, 10, EBB_STABLE_IBF_MC,
     EBB_STABLE_DRAW_CONSECUTIVE, 0.0},
    {"MC independent d4", 1u << 17, 4, 3, 20, EBB_STABLE_IBF_MC,
     EBB_STABLE_DRAW_INDEPENDENT, 0.0},
    {"H d3", 1u << 16, 3, 5, 10, EBB_STABLE_IBF_H,
     EBB_STABLE_DRAW_INDEPENDENT, 0.0},
    {"H d2", 1u << 15, 2, 4, 6, EBB_STABLE_IBF_H,
     EBB_STABLE_DRAW_CONSECUTIVE, 0.0},
};
#define CONFIG_COUNT (sizeof CONFIGS / sizeof CONFIGS[0])

static ebb_stable_params config_params(const rate_config *c)
{
    ebb_stable_params p;
    assert_int_equal(ebb_stable_params_init(c->m, c->d, c->k, c->p, &p),
                     EBB_OK);
    p.variant = c->variant;
    p.draw = c->draw;
    return p;
}

/* The level distribution the stream's fresh items follow. */
static void config_levels(const rate_config *c, double *q)
{
    uint32_t max = ebb_stable_max_level(c->d);
    for (uint32_t v = 0; v <= max; v++)
        q[v] = 0.0;
    switch (c->variant) {
    case EBB_STABLE_PLAIN:
        q[max] = 1.0;
        break;
    case EBB_STABLE_IBF_2C:
        q[max] += c->important;
        q[ebb_stable_half_level(c->d)] += 1.0 - c->important;
        break;
    default:
        for (uint32_t v = 1; v <= max; v++)
            q[v] = 1.0 / max;
        break;
    }
}

/* An importance drawn so that the item's level follows config_levels. */
static double draw_importance(const rate_config *c, uint64_t *rng)
{
    uint64_t x = support_splitmix64(rng);
    double u = (double)(x >> 11) * 0x1p-53;
    uint32_t max = ebb_stable_max_level(c->d);
    switch (c->variant) {
    case EBB_STABLE_PLAIN:
        return 0.0;
    case EBB_STABLE_IBF_2C:
        return u < c->important ? 1.0 : 0.0;
    default:
        return max == 1 ? 1.0 : (double)(x % max) / (double)(max - 1u);
    }
}

/* Importance that maps to `level` under c. */
static double importance_of_level(const rate_config *c, uint32_t level)
{
    uint32_t max = ebb_stable_max_level(c->d);
    if (c->variant == EBB_STABLE_IBF_2C)
        return level == max ? 1.0 : 0.0;
    return max == 1 ? 1.0 : (double)(level - 1u) / (double)(max - 1u);
}

static void add_fresh(ebb_stable *f, const rate_config *c, uint64_t index,
                      uint64_t *rng)
{
    support_key key = support_key_make(KEYS_INSERTED, index);
    assert_int_equal(ebb_stable_add(f, key.bytes, sizeof key.bytes,
                                    draw_importance(c, rng)), EBB_OK);
}

static uint64_t warm_up_insertions(const rate_config *c)
{
    return 10u * ebb_stable_max_level(c->d) * (c->m / c->p);
}

static double z_of(double measured, double predicted, double sd)
{
    return (measured - predicted) / sd;
}

/* 1 and 2 on the same filters. */
static void test_zeros_and_false_positives(void **state)
{
    (void)state;
    const uint64_t queries = 200000;
    for (size_t i = 0; i < CONFIG_COUNT; i++) {
        const rate_config *c = &CONFIGS[i];
        ebb_stable_params params = config_params(c);
        double q[MAX_LEVELS];
        config_levels(c, q);
        ebb_stable_analysis a;
        assert_int_equal(ebb_stable_analyse(&params, q, &a), EBB_OK);
        double zeros = 0.0, fp_hits = 0.0, fp_given_state = 0.0;
        uint64_t fresh_index = 0;
        for (uint32_t seed = 0; seed < SEEDS; seed++) {
            ebb_stable *f;
            assert_int_equal(ebb_stable_create(&params, 1000u + seed, &f),
                             EBB_OK);
            uint64_t rng = 77u + seed;
            uint64_t n = warm_up_insertions(c);
            for (uint64_t j = 0; j < n; j++)
                add_fresh(f, c, ((uint64_t)seed << 40) + j, &rng);
            ebb_stable_stats stats;
            ebb_stable_get_stats(f, &stats);
            assert_int_equal(stats.insertions, n);
            zeros += stats.zero_fraction;
            fp_given_state += pow(1.0 - stats.zero_fraction, c->k);
            for (uint64_t j = 0; j < queries; j++) {
                support_key key = support_key_make(KEYS_FRESH, fresh_index++);
                fp_hits += ebb_stable_contains(f, key.bytes, sizeof key.bytes);
            }
            ebb_stable_destroy(f);
        }
        double v0 = a.zero_fraction;
        double measured = zeros / SEEDS;
        double sd = sqrt(v0 * (1.0 - v0) / ((double)c->m * SEEDS));
        double z = z_of(measured, v0, sd);
        printf("%-20s zeros %.6f predicted %.6f sd %.2e z %+.2f\n", c->name,
               measured, v0, sd, z);
        CHECK(fabs(z) <= Z_BOUND, "%s: zero fraction z = %.2f", c->name, z);

        double n_queries = (double)queries * SEEDS;
        double fp = fp_hits / n_queries;
        double given = fp_given_state / SEEDS;
        double sd_given = sqrt(given * (1.0 - given) / n_queries);
        double z_given = z_of(fp, given, sd_given);
        double slope = c->k * pow(1.0 - v0, c->k - 1.0);
        double sd_fps = sqrt(a.fps * (1.0 - a.fps) / n_queries +
                             slope * slope * v0 * (1.0 - v0) /
                                 ((double)c->m * SEEDS));
        double z_fps = z_of(fp, a.fps, sd_fps);
        printf("%-20s fp %.6f given state %.6f (z %+.2f), FPS %.6f "
               "(z %+.2f)\n",
               c->name, fp, given, z_given, a.fps, z_fps);
        CHECK(fabs(z_given) <= Z_BOUND, "%s: fp vs state z = %.2f", c->name,
              z_given);
        CHECK(fabs(z_fps) <= Z_BOUND, "%s: fp vs FPS z = %.2f", c->name,
              z_fps);
    }
}

typedef struct fn_case {
    size_t config; /* index into CONFIGS */
    uint32_t level;
} fn_case;

#define PROBE_EVERY 16u
#define GAPS 3u

static void measure_fn(const fn_case *fc, uint64_t probes)
{
    const rate_config *c = &CONFIGS[fc->config];
    ebb_stable_params params = config_params(c);
    uint32_t max = ebb_stable_max_level(c->d);
    double q[MAX_LEVELS];
    config_levels(c, q);
    /* The stream's mix: 15/16 fresh items, 1/16 probes at L. */
    for (uint32_t v = 0; v <= max; v++)
        q[v] *= 1.0 - 1.0 / PROBE_EVERY;
    q[fc->level] += 1.0 / PROBE_EVERY;
    const uint64_t gaps[GAPS] = {c->m / 16u, c->m / 4u, c->m};

    ebb_stable *f;
    assert_int_equal(ebb_stable_create(&params, 4242u + fc->level, &f),
                     EBB_OK);
    uint64_t rng = 99u + fc->config;
    uint64_t warm = warm_up_insertions(c);
    for (uint64_t j = 0; j < warm; j++)
        add_fresh(f, c, j, &rng);

    uint64_t misses[GAPS] = {0}, tested[GAPS] = {0};
    double imp = importance_of_level(c, fc->level);
    uint64_t length = probes * PROBE_EVERY + c->m + 1u;
    /* Probe j is inserted at step j * PROBE_EVERY (stream steps counted
     * from 0 after the warm-up) and tested before step + g. */
    for (uint64_t t = 0; t < length; t++) {
        for (size_t g = 0; g < GAPS; g++) {
            if (t < gaps[g] || (t - gaps[g]) % PROBE_EVERY != 0)
                continue;
            uint64_t probe = (t - gaps[g]) / PROBE_EVERY;
            if (probe >= probes)
                continue;
            support_key key = support_key_make(KEYS_OTHER, probe);
            tested[g]++;
            misses[g] += !ebb_stable_contains(f, key.bytes, sizeof key.bytes);
        }
        if (t % PROBE_EVERY == 0 && t / PROBE_EVERY < probes) {
            support_key key = support_key_make(KEYS_OTHER, t / PROBE_EVERY);
            assert_int_equal(ebb_stable_add(f, key.bytes, sizeof key.bytes,
                                            imp), EBB_OK);
        } else {
            add_fresh(f, c, warm + t, &rng);
        }
    }
    ebb_stable_destroy(f);

    for (size_t g = 0; g < GAPS; g++) {
        assert_int_equal(tested[g], probes);
        double predicted;
        assert_int_equal(ebb_stable_fn_at_gap(&params, q, fc->level, gaps[g],
                                              &predicted), EBB_OK);
        double measured = (double)misses[g] / (double)probes;
        double sd = sqrt(predicted * (1.0 - predicted) / (double)probes);
        double z = sd > 0.0 ? z_of(measured, predicted, sd) : 0.0;
        printf("%-20s level %u gap %7llu: FN %.5f predicted %.5f sd %.1e "
               "z %+.2f\n",
               c->name, fc->level, (unsigned long long)gaps[g], measured,
               predicted, sd, z);
        CHECK(sd > 0.0 || misses[g] == 0, "%s: FN without a prediction",
              c->name);
        CHECK(fabs(z) <= Z_BOUND, "%s level %u gap %llu: FN z = %.2f",
              c->name, fc->level, (unsigned long long)gaps[g], z);
    }
}

static void test_false_negatives(void **state)
{
    (void)state;
    const fn_case cases[] = {
        {0, 7}, /* PLAIN, consecutive draw: every item at Max */
        {4, 2}, /* IBF_MC: a low level ...                    */
        {4, 6}, /* ... and a high one                         */
        {6, 3}, /* IBF_H                                      */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        measure_fn(&cases[i], 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeros_and_false_positives),
        cmocka_unit_test(test_false_negatives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
