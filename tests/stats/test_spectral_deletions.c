/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_spectral_deletions.c: Minimal Increase against Recurring Minimum
 * after deletions, as the paper's Fig. 8 (section 6.2) on the data of
 * section 6.1: 1000 distinct values, M = 100,000 Zipf draws, k = 5,
 * m = 7143 counters of 32 bits (gamma = 1000 * 5 / m = 0.7) for MS and MI,
 * RM at the same total of counters through ebb_spectral_params_init (its
 * primary and secondary together 7143; its exact marker on top).
 *
 * Each run draws its own stream (seed STREAM_SEED + run), its own deletion
 * schedule (SCHEDULE_SEED + run) and its own hash layout (params.seed =
 * run); the three filters of a run see the same stream, deletions and
 * layout. The stream comes in PHASES insertion phases of M / PHASES items,
 * each followed by a deletion phase in which DELETED values (5% of the
 * distinct values), drawn uniformly among those present, are deleted
 * entirely: all their occurrences so far removed, their truth set to 0.
 * MS and RM delete through ebb_spectral_remove_hash, MI through
 * ebb_spectral_remove_unsafe; when MI's removal is refused (one of the
 * value's counters is already below its count: MI's counters can be) the
 * refusal is counted and as much as the counters allow is removed instead
 * (the current estimate, halved until accepted; see delete_value).
 *
 * At the end every value is queried against its truth; a run's additive
 * error is sqrt(sum (estimate - truth)^2 / 1000). Asserted:
 *  (a) MS and RM never answer below the truth, and never refuse an
 *      honest removal (exact);
 *  (b) MI's additive error is far above RM's: the mean over the runs of
 *      the per-run ratio MI / RM, less Z_BOUND standard errors of that
 *      mean, is at least 3 at skew 0 and at least 10 at skew 1.5;
 *  (c) MI has false negatives after deletions: some of its answers are
 *      below the truth, more than half of its wrong answers are, and some
 *      of its removals were refused;
 *  (d) RM's additive error is below MS's by more than Z_BOUND standard
 *      errors of the paired per-run differences (Fig. 8's dotted lines).
 *
 * Measured (RUNS = 100, about 3.5 s in Release):
 *   skew  MS add.  MI add.  RM add.  MI/RM (se)     MI below/wrong  MS-RM
 *   0     11.71    39.09    6.38     6.65 (0.24)    0.955           25.7 se
 *   1.5   0.322    9.59     0.231    41.8 (4.3)     0.956           7.1 se
 * MI's removals refused: 7104 and 4350 of 25,000. The experiment
 * (docs/results/spectral/fig8.csv) measured MI/RM 3.6 at skew 0 and 42 at
 * 1.5 with RM at equal BYTES (its exact marker paid for with counters, so
 * fewer counters than here) and the ratio of the 5 runs' means; here RM
 * has the same 7143 counters as MI, which lowers its error at skew 0.
 * The heavy tail at skew 1.5 (a deleted frequent value drags the values
 * sharing its counters far below their counts) is why RUNS is 100.
 * Fails when MI's removal is refused (safe removal: MI's errors all above
 * the truth) and when the deletion phases are skipped (MI/RM 0.13).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "../unit/support.h"
#include "ebb/spectral.h"

#define VALUES 1000u
#define DRAWS 100000u
#define K 5u
#define COUNTERS 7143u           /* llround(1000 * 5 / 0.7)               */
#define PHASES 5u
#define PHASE_DRAWS (DRAWS / PHASES)
#define DELETED (VALUES / 20u)   /* 5% of the distinct values per phase  */
#define RUNS 100u
#define STREAM_SEED 300u
#define SCHEDULE_SEED 700u
#define Z_BOUND 3.0

enum { MS = 0, MI = 1, RM = 2, METHODS = 3 };
static const ebb_spectral_method METHOD[METHODS] = {
    EBB_SPECTRAL_MS, EBB_SPECTRAL_MI, EBB_SPECTRAL_RM};
static const char *const NAME[METHODS] = {"MS", "MI", "RM"};

/* One run's data, shared by the three filters. */
typedef struct run_data {
    uint32_t stream[DRAWS];
    uint32_t deleted[PHASES][DELETED];
    uint32_t deleted_count[PHASES];
} run_data;

/* One method's results over the runs. */
typedef struct tally {
    double additive[RUNS];  /* per run: sqrt(sum (f^ - f)^2 / VALUES) */
    uint64_t wrong;         /* estimate != truth, over all runs       */
    uint64_t below;         /* estimate < truth                       */
    uint64_t refused;       /* removals refused (MI: then estimate)   */
} tally;

static double cdf[VALUES];

static void zipf_table(double skew)
{
    support_zipf_table(cdf, VALUES, skew);
}

static uint32_t zipf_draw(ebb_rng *rng)
{
    return support_zipf_draw(cdf, VALUES, rng);
}

/* The stream, and after each phase DELETED values drawn without
 * replacement among those whose count is then above 0 (partial
 * Fisher-Yates over the present ones). */
static void make_run(uint32_t r, run_data *d)
{
    uint64_t truth[VALUES] = {0};
    uint32_t present[VALUES];
    ebb_rng rng;
    ebb_rng_seed(&rng, STREAM_SEED + r);
    for (uint32_t i = 0; i < DRAWS; i++)
        d->stream[i] = zipf_draw(&rng);
    ebb_rng_seed(&rng, SCHEDULE_SEED + r);
    for (uint32_t p = 0; p < PHASES; p++) {
        for (uint32_t i = p * PHASE_DRAWS; i < (p + 1) * PHASE_DRAWS; i++)
            truth[d->stream[i]]++;
        uint32_t n = 0;
        for (uint32_t v = 0; v < VALUES; v++)
            if (truth[v] > 0)
                present[n++] = v;
        uint32_t want = n < DELETED ? n : DELETED;
        for (uint32_t j = 0; j < want; j++) {
            uint32_t pick = j + (uint32_t)ebb_rng_below(&rng, n - j);
            uint32_t tmp = present[j];
            present[j] = present[pick];
            present[pick] = tmp;
            d->deleted[p][j] = present[j];
            truth[present[j]] = 0;
        }
        d->deleted_count[p] = want;
    }
}

/* Deletes every occurrence of a value (count of them). MS and RM must
 * accept. MI's refusal (a counter below count: MI's counters can be) is
 * counted, and then as much of the value as its counters allow is
 * removed: its current estimate, halved until accepted, repeated until
 * the estimate is 0 or nothing more goes. (The estimate alone can be
 * refused too: two of the value's positions on one counter take 2 r from
 * it, and its value may lie between r and 2 r.) */
static void delete_value(ebb_spectral *f, int method, ebb_hash128 h,
                         uint64_t count, tally *t)
{
    if (method != MI) {
        ebb_status st = ebb_spectral_remove_hash(f, h, count);
        t->refused += st != EBB_OK;
        return;
    }
    ebb_status st = ebb_spectral_remove_unsafe(f, h, count);
    if (st == EBB_OK)
        return;
    assert_int_equal(st, EBB_EUNDERFLOW);
    t->refused++;
    uint64_t r = ebb_spectral_estimate_hash(f, h);
    assert_true(r != EBB_SPECTRAL_SATURATED);
    while (r > 0) {
        st = ebb_spectral_remove_unsafe(f, h, r);
        if (st == EBB_OK)
            r = ebb_spectral_estimate_hash(f, h);
        else
            r /= 2;
    }
}

static void run_method(int method, uint32_t r, const run_data *d, tally *t)
{
    ebb_spectral_params p;
    ebb_spectral *f = NULL;
    ebb_hash128 hash[VALUES];
    uint64_t truth[VALUES] = {0};
    assert_int_equal(ebb_spectral_params_init(COUNTERS, 32, K,
                                              METHOD[method], &p),
                     EBB_OK);
    p.seed = r;
    assert_int_equal(ebb_spectral_create(&p, &f), EBB_OK);
    for (uint64_t v = 0; v < VALUES; v++)
        hash[v] = ebb_spectral_hash(f, &v, sizeof v);
    for (uint32_t ph = 0; ph < PHASES; ph++) {
        for (uint32_t i = ph * PHASE_DRAWS; i < (ph + 1) * PHASE_DRAWS;
             i++) {
            uint32_t v = d->stream[i];
            assert_int_equal(ebb_spectral_add_hash(f, hash[v], 1), EBB_OK);
            truth[v]++;
        }
        for (uint32_t j = 0; j < d->deleted_count[ph]; j++) {
            uint32_t v = d->deleted[ph][j];
            delete_value(f, method, hash[v], truth[v], t);
            truth[v] = 0;
        }
    }
    double sq = 0;
    for (uint32_t v = 0; v < VALUES; v++) {
        uint64_t est = ebb_spectral_estimate_hash(f, hash[v]);
        assert_true(est != EBB_SPECTRAL_SATURATED);
        double diff = (double)est - (double)truth[v];
        sq += diff * diff;
        t->wrong += est != truth[v];
        t->below += est < truth[v];
    }
    t->additive[r] = sqrt(sq / VALUES);
    ebb_spectral_destroy(f);
}

static double mean_of(const double *x)
{
    double s = 0;
    for (uint32_t r = 0; r < RUNS; r++)
        s += x[r];
    return s / RUNS;
}

/* Standard error of the mean of x over the runs. */
static double se_of(const double *x)
{
    double m = mean_of(x), ss = 0;
    for (uint32_t r = 0; r < RUNS; r++)
        ss += (x[r] - m) * (x[r] - m);
    return sqrt(ss / (RUNS - 1) / RUNS);
}

static void compare(double skew, double far_above)
{
    static run_data data; /* 100,000 draws: off the stack */
    tally t[METHODS];
    memset(t, 0, sizeof t);
    zipf_table(skew);
    for (uint32_t r = 0; r < RUNS; r++) {
        make_run(r, &data);
        for (int m = 0; m < METHODS; m++)
            run_method(m, r, &data, &t[m]);
    }
    double ratio[RUNS];
    for (uint32_t r = 0; r < RUNS; r++) {
        /* RM's additive error is never 0 at these skews (checked: a zero
         * would make the ratio infinite and the test meaningless). */
        assert_true(t[RM].additive[r] > 0);
        ratio[r] = t[MI].additive[r] / t[RM].additive[r];
    }
    double mean = mean_of(ratio), se = se_of(ratio);
    double share = (double)t[MI].below / (double)t[MI].wrong;
    double ms_rm[RUNS];
    for (uint32_t r = 0; r < RUNS; r++)
        ms_rm[r] = t[MS].additive[r] - t[RM].additive[r];
    double gap = mean_of(ms_rm), gap_se = se_of(ms_rm);
    printf("skew %.2f, %u runs x %u values, %u phases deleting %u values"
           " each, m %u, k %u:\n",
           skew, RUNS, VALUES, PHASES, DELETED, COUNTERS, K);
    for (int m = 0; m < METHODS; m++)
        printf("  %s: additive %.3f (se %.3f), below the truth %llu,"
               " removals refused %llu\n",
               NAME[m], mean_of(t[m].additive), se_of(t[m].additive),
               (unsigned long long)t[m].below,
               (unsigned long long)t[m].refused);
    printf("  MI/RM additive: mean of per-run ratios %.2f, se %.3f;"
           " %.2f - %.0f se = %.2f >= %.0f\n"
           "  MI wrong answers %llu, below the truth: %.3f > 0.5\n"
           "  MS - RM additive %.3f = %.1f paired se > %.0f\n",
           mean, se, mean, Z_BOUND, mean - Z_BOUND * se, far_above,
           (unsigned long long)t[MI].wrong, share, gap, gap / gap_se,
           Z_BOUND);
    /* (a) one-sided with honest deletions. */
    assert_int_equal(t[MS].below, 0);
    assert_int_equal(t[RM].below, 0);
    assert_int_equal(t[MS].refused, 0);
    assert_int_equal(t[RM].refused, 0);
    /* (b) far above. */
    assert_true(mean - Z_BOUND * se >= far_above);
    /* (c) MI's false negatives. */
    assert_true(t[MI].below > 0);
    assert_true(t[MI].refused > 0);
    assert_true(share > 0.5);
    /* (d) RM's additive error below MS's (Fig. 8's dotted lines). */
    assert_true(gap > Z_BOUND * gap_se);
}

static void test_skew_0(void **state)
{
    (void)state;
    compare(0.0, 3.0);
}

static void test_skew_15(void **state)
{
    (void)state;
    compare(1.5, 10.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skew_0),
        cmocka_unit_test(test_skew_15),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
