/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_stable_posterior.c: Theorem 1 of "Inferential Time-Decaying Bloom
 * Filters" on a stable filter that never forgets (src/stable/posterior.c).
 *
 *   - the answer equals a brute-force computation: fp by enumerating all
 *     m^K position tuples of a small filter, P(x among the n insertions)
 *     by summing the binomial distribution, Bayes' rule by hand; for
 *     d = 1, 3, 16, PLAIN and IBF_MC, single calls and batches, after a
 *     snapshot round trip (the fill is recounted on load) and a clear;
 *   - calibration: a stream drawn from four groups of keys of different
 *     priors (fixed seed); among the keys whose posterior falls in a bin,
 *     the fraction actually inserted is the bin's mean posterior within
 *     4 binomial standard deviations, and a key shown absent was never
 *     inserted;
 *   - EBB_EINVAL for P != 0, a prior outside (0, 1] or NaN, NULL
 *     arguments, *out untouched; n = 0 answers 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ebb/ebb.h"
#include "ebb/stable.h"
#include "stable/stable_internal.h"
#include "support.h"

static ebb_stable *make(uint64_t m, uint32_t d, uint32_t k, uint32_t p,
                        ebb_stable_variant variant, uint64_t seed)
{
    ebb_stable_params params;
    ebb_stable *f = NULL;
    assert_int_equal(ebb_stable_params_init(m, d, k, p, &params), EBB_OK);
    params.variant = variant;
    assert_int_equal(ebb_stable_create(&params, seed, &f), EBB_OK);
    return f;
}

static double uniform(uint64_t *state)
{
    return (double)(support_splitmix64(state) >> 11) * 0x1p-53;
}

/* ---- Brute force --------------------------------------------------------- */

/* The fraction of the m^K position tuples whose cells are all non-zero:
 * the probability that a key never inserted shows all its cells set. */
static double brute_fp(const ebb_stable *f)
{
    uint64_t m = f->cells.count, total = 1, hits = 0;
    uint32_t k = f->k;
    for (uint32_t j = 0; j < k; j++)
        total *= m;
    for (uint64_t t = 0; t < total; t++) {
        uint64_t rest = t;
        bool all = true;
        for (uint32_t j = 0; j < k; j++) {
            all &= ebb_cells_get(&f->cells, rest % m) != 0;
            rest /= m;
        }
        hits += all;
    }
    return (double)hits / (double)total;
}

/* P(x among n insertions) = sum_{j >= 1} C(n, j) p^j (1 - p)^(n - j). */
static double brute_inserted(double prior, uint64_t n)
{
    if (prior == 1.0)
        return n > 0 ? 1.0 : 0.0; /* every insertion is x */
    double pmf = pow(1.0 - prior, (double)n); /* j = 0 */
    double sum = 0.0;
    for (uint64_t j = 1; j <= n; j++) {
        pmf *= (double)(n - j + 1) / (double)j * prior / (1.0 - prior);
        sum += pmf;
    }
    return sum;
}

static double brute_posterior(const ebb_stable *f, ebb_hash128 h,
                              double prior)
{
    if (!ebb_stable_contains_hash(f, h))
        return 0.0;
    double in = brute_inserted(prior, f->insertions);
    double fp = brute_fp(f);
    return in / (in + (1.0 - in) * fp);
}

static uint64_t nonzero_cells(const ebb_stable *f)
{
    ebb_stable_stats s;
    ebb_stable_get_stats(f, &s);
    return s.cells - s.zero_cells;
}

/* Every key of both streams, at several priors, against brute force. */
static void check_against_brute_force(const ebb_stable *f, uint32_t keys)
{
    static const double priors[] = {1e-3, 0.01, 0.05, 0.3, 1.0};
    assert_int_equal(f->filled, nonzero_cells(f));
    for (uint32_t s = KEYS_INSERTED; s <= KEYS_FRESH; s++) {
        for (uint32_t i = 0; i < keys; i++) {
            support_key key = support_key_make(s, i);
            ebb_hash128 h = ebb_hash(key.bytes, sizeof key.bytes, f->seed);
            for (size_t p = 0; p < sizeof priors / sizeof *priors; p++) {
                double got = -1.0, single = -1.0;
                assert_int_equal(ebb_stable_posterior_hash(f, h, priors[p],
                                                           &got),
                                 EBB_OK);
                assert_int_equal(ebb_stable_posterior(f, key.bytes,
                                                      sizeof key.bytes,
                                                      priors[p], &single),
                                 EBB_OK);
                assert_true(got == single);
                double want = brute_posterior(f, h, priors[p]);
                assert_true(fabs(got - want) <= 1e-12 * want);
                if (s == KEYS_INSERTED && i < f->insertions)
                    assert_true(got > 0.0); /* no false negatives */
            }
        }
    }
}

static void closed_form_matches_brute_force(void **state)
{
    (void)state;
    static const struct {
        uint32_t d;
        ebb_stable_variant variant;
    } shapes[] = {{1, EBB_STABLE_PLAIN},
                  {3, EBB_STABLE_PLAIN},
                  {3, EBB_STABLE_IBF_MC},
                  {16, EBB_STABLE_IBF_MC}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        /* m = 48, K = 3: 110592 tuples; 20 keys fill about 70%. */
        ebb_stable *single = make(48, shapes[s].d, 3, 0, shapes[s].variant,
                                  11 + s);
        ebb_stable *batch = make(48, shapes[s].d, 3, 0, shapes[s].variant,
                                 11 + s);
        ebb_hash128 hashes[20];
        double imps[20];
        for (uint32_t i = 0; i < 20; i++) {
            support_key key = support_key_make(KEYS_INSERTED, i);
            hashes[i] = ebb_hash(key.bytes, sizeof key.bytes, 11 + s);
            imps[i] = (double)i / 19.0;
            bool seen;
            assert_int_equal(ebb_stable_test_and_add_hash(single, hashes[i],
                                                          imps[i], &seen),
                             EBB_OK);
        }
        assert_int_equal(ebb_stable_add_batch(batch, hashes, imps, 20),
                         EBB_OK);
        assert_int_equal(single->filled, batch->filled);
        assert_true(single->filled > 20 && single->filled < 48);
        check_against_brute_force(single, 24);

        /* A loaded filter recounts the fill from its cells. */
        support_snap snap = support_snap_alloc(ebb_stable_snapshot_size(batch));
        size_t written = 0;
        ebb_stable *loaded = NULL;
        assert_int_equal(ebb_stable_save(batch, snap.bytes, snap.size,
                                         &written),
                         EBB_OK);
        assert_int_equal(ebb_stable_load(snap.bytes, written, &loaded),
                         EBB_OK);
        assert_int_equal(loaded->filled, single->filled);
        check_against_brute_force(loaded, 24);
        support_snap_free(&snap);

        /* Cleared: nothing inserted, every answer 0. */
        ebb_stable_clear(loaded);
        assert_int_equal(loaded->filled, 0);
        double out = -1.0;
        assert_int_equal(ebb_stable_posterior_hash(loaded, hashes[0], 0.5,
                                                   &out),
                         EBB_OK);
        assert_true(out == 0.0);
        ebb_stable_destroy(loaded);
        ebb_stable_destroy(single);
        ebb_stable_destroy(batch);
    }
}

/* ---- Calibration ----------------------------------------------------------
 * Four groups of keys; an insertion picks group g with probability
 * weight[g], then one of its size[g] keys uniformly, so each insertion is
 * a given key of group g with probability prior = weight[g] / size[g]. With
 * m = 9000, K = 3 and n = 4000 insertions about 1900 distinct keys go in
 * and fp is about 0.1: the posteriors of the keys shown present run from
 * about 0.25 (group 3) to 1 (group 0). */
#define GROUPS 4u
#define UNIVERSE 16000u
#define BINS 10u

static const uint32_t group_size[GROUPS] = {200, 800, 3000, 12000};
static const double group_weight[GROUPS] = {0.4, 0.3, 0.2, 0.1};

static uint32_t draw_key(uint64_t *rng)
{
    double u = uniform(rng);
    uint32_t offset = 0, g = 0;
    while (g + 1 < GROUPS && u >= group_weight[g]) {
        u -= group_weight[g];
        offset += group_size[g];
        g++;
    }
    uint64_t j = support_splitmix64(rng) % group_size[g];
    return offset + (uint32_t)j;
}

static double prior_of(uint32_t key)
{
    uint32_t g = 0;
    while (key >= group_size[g]) {
        key -= group_size[g];
        g++;
    }
    return group_weight[g] / group_size[g];
}

static void posterior_is_calibrated(void **state)
{
    (void)state;
    static bool inserted[UNIVERSE];
    double sum_post[BINS] = {0}, sum_var[BINS] = {0};
    uint64_t count[BINS] = {0}, hits[BINS] = {0};
    uint64_t rng = 20240613u, absent_inserted = 0, absent = 0;
    for (uint32_t trial = 0; trial < 4; trial++) {
        ebb_stable *f = make(9000, 1, 3, 0, EBB_STABLE_PLAIN, 100 + trial);
        memset(inserted, 0, sizeof inserted);
        for (uint32_t i = 0; i < 4000; i++) {
            uint32_t key = draw_key(&rng);
            support_key k = support_key_make(KEYS_INSERTED, key);
            assert_int_equal(ebb_stable_add(f, k.bytes, sizeof k.bytes, 0.0),
                             EBB_OK);
            inserted[key] = true;
        }
        for (uint32_t key = 0; key < UNIVERSE; key++) {
            support_key k = support_key_make(KEYS_INSERTED, key);
            double post = -1.0;
            assert_int_equal(ebb_stable_posterior(f, k.bytes, sizeof k.bytes,
                                                  prior_of(key), &post),
                             EBB_OK);
            if (post == 0.0) {
                absent++;
                absent_inserted += inserted[key];
                continue;
            }
            uint32_t b = post >= 1.0 ? BINS - 1 : (uint32_t)(post * BINS);
            count[b]++;
            hits[b] += inserted[key];
            sum_post[b] += post;
            sum_var[b] += post * (1.0 - post);
        }
        ebb_stable_destroy(f);
    }
    assert_true(absent > 0);
    assert_int_equal(absent_inserted, 0);
    uint32_t checked = 0;
    for (uint32_t b = 0; b < BINS; b++) {
        if (count[b] < 100)
            continue;
        double sd = sqrt(sum_var[b]);
        double diff = fabs((double)hits[b] - sum_post[b]);
        /* a bin of posteriors all 1 has sd 0: then every key was in */
        assert_true(diff <= 4.0 * sd + 1e-9 * sum_post[b]);
        checked++;
    }
    assert_true(checked >= 3); /* groups 1-3 land in distinct bins */
}

/* ---- Refusals ------------------------------------------------------------ */

static void refuses_forgetting_filters_and_bad_priors(void **state)
{
    (void)state;
    ebb_stable *forgets = make(1000, 1, 3, 1, EBB_STABLE_PLAIN, 5);
    ebb_stable *classic = make(1000, 1, 3, 0, EBB_STABLE_PLAIN, 5);
    support_key key = support_key_make(KEYS_INSERTED, 1);
    double out = -7.0;
    assert_int_equal(ebb_stable_posterior(forgets, key.bytes, 8, 0.5, &out),
                     EBB_EINVAL);
    static const double bad[] = {0.0, -0.1, 1.0000001, NAN, INFINITY,
                                 -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(ebb_stable_posterior(classic, key.bytes, 8, bad[i],
                                              &out),
                         EBB_EINVAL);
    assert_int_equal(ebb_stable_posterior(NULL, key.bytes, 8, 0.5, &out),
                     EBB_EINVAL);
    assert_int_equal(ebb_stable_posterior(classic, key.bytes, 8, 0.5, NULL),
                     EBB_EINVAL);
    assert_true(out == -7.0);
    /* Empty: 0, also at prior 1 and for the smallest positive prior. */
    assert_int_equal(ebb_stable_posterior(classic, key.bytes, 8, 1.0, &out),
                     EBB_OK);
    assert_true(out == 0.0);
    /* Inserted, prior 1: certain. A tiny prior still answers a number. */
    assert_int_equal(ebb_stable_add(classic, key.bytes, 8, 0.0), EBB_OK);
    assert_int_equal(ebb_stable_posterior(classic, key.bytes, 8, 1.0, &out),
                     EBB_OK);
    assert_true(out == 1.0);
    assert_int_equal(ebb_stable_posterior(classic, key.bytes, 8,
                                          0x1p-1074, &out),
                     EBB_OK);
    assert_true(out > 0.0 && out <= 1.0);
    ebb_stable_destroy(forgets);
    ebb_stable_destroy(classic);
}

int main(void)
{
#define TEST(f) SUPPORT_TEST(f, support_setup_counting_unzeroed)
    const struct CMUnitTest tests[] = {
        TEST(closed_form_matches_brute_force),
        TEST(posterior_is_calibrated),
        TEST(refuses_forgetting_filters_and_bad_priors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
