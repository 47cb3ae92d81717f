/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_apbf_analytics.c: the formulas of sections 5.2-5.4 of the APBF paper
 * (fill models, false-positive rate, accesses of a false query, NPWS)
 * checked three ways:
 *   - against an independent brute force over every match pattern of small
 *     filters (exact, any fill ratios);
 *   - against the printed digits of the paper's Table 2, which uses the
 *     LINEAR fill model; the few cells where the paper disagrees with its own
 *     formulas are listed explicitly with the value the formula gives, so
 *     the exceptions are checked too;
 *   - against the closed forms of the header (fill ratios, NPWS).
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

#define MAX_SLICES (EBB_APBF_MAX_K + EBB_APBF_MAX_L)

/* ------------------------------------------------------------------------ */
/* Table 2 of the paper                                                     */
/* ------------------------------------------------------------------------ */

typedef struct table2_row {
    uint32_t k, l;
    double fp;              /* "actual fp", 6 decimals         */
    double accesses_false;  /* "query accesses: false", 2 dec. */
    double npws;            /* "NPWS", 2 decimals              */
} table2_row;

static const table2_row TABLE2[] = {
    {4, 3, 0.100586, 2.16, 0.58},   {5, 7, 0.101603, 3.42, 0.28},
    {6, 14, 0.098623, 5.42, 0.14},  {7, 28, 0.099033, 9.10, 0.07},
    {8, 56, 0.100234, 15.60, 0.04}, {7, 5, 0.011232, 2.02, 0.40},
    {8, 8, 0.010244, 3.09, 0.25},   {9, 14, 0.010212, 3.79, 0.14},
    {10, 25, 0.010076, 5.85, 0.08}, {11, 46, 0.009948, 9.55, 0.04},
    {10, 7, 0.001211, 1.85, 0.28},  {11, 9, 0.000918, 2.15, 0.22},
    {12, 14, 0.000981, 3.21, 0.14}, {13, 23, 0.000928, 4.20, 0.09},
    {14, 40, 0.000988, 6.75, 0.05}, {14, 11, 0.000099, 1.93, 0.18},
    {15, 15, 0.000100, 3.08, 0.13}, {16, 22, 0.000097, 3.36, 0.09},
    {17, 36, 0.000099, 5.19, 0.06}, {18, 63, 0.000099, 7.68, 0.03},
    {17, 13, 0.000011, 1.81, 0.15}, {18, 16, 0.000009, 2.20, 0.12},
    {19, 22, 0.000010, 3.16, 0.09}, {20, 33, 0.000010, 3.68, 0.06},
    {21, 54, 0.000010, 5.63, 0.04},
};
#define TABLE2_ROWS (sizeof TABLE2 / sizeof TABLE2[0])

/* Cells where the paper's printed digits are not what its own formulas give
 * (worked out independently with the recursions of sections 5.3-5.4 and the
 * NPWS sum of 5.2). The test asserts the formula's value AND that it differs
 * from the print, so a silent change on either side is caught. */
typedef struct known_difference {
    uint32_t k, l;
    double formula; /* what the formula gives, to 1e-6 */
} known_difference;

/* (13,23): the recursion gives 0.000990 (0.000989505), the paper 0.000928. */
static const known_difference FP_DIFFERENCES[] = {{13, 23, 0.000989505}};
/* (20,33): 3.674968 rounds to 3.67; the paper prints 3.68. */
static const known_difference ACCESS_DIFFERENCES[] = {{20, 33, 3.674968}};
/* (4,3): (1+1/2+1/4+1/8)/3 = 0.625, the paper 0.58;
 * (10,7): 1.998046875/7 = 0.285435, the paper 0.28. */
static const known_difference NPWS_DIFFERENCES[] = {{4, 3, 0.625},
                                                    {10, 7, 0.28543527}};

static const known_difference *
find_difference(const known_difference *list, size_t count, uint32_t k,
                uint32_t l) {
    size_t i;
    for (i = 0; i < count; i++)
        if (list[i].k == k && list[i].l == l)
            return &list[i];
    return NULL;
}

/* Equal when x rounded to `decimals` places prints as `printed`. */
static bool rounds_to(double x, double printed, int decimals) {
    double scale = pow(10.0, decimals);
    return fabs(round(x * scale) - round(printed * scale)) < 0.5;
}

static void linear_ratios(uint32_t k, uint32_t l, double *ratios) {
    assert_int_equal(ebb_apbf_worst_fill(k, l, EBB_FILL_LINEAR, ratios),
                     EBB_OK);
}

static void check_against_print(const char *what, double computed,
                                double printed, int decimals,
                                const known_difference *difference,
                                uint32_t k, uint32_t l) {
    if (difference == NULL) {
        CHECK(rounds_to(computed, printed, decimals),
              "%s(k=%u, l=%u) = %.9f, the paper prints %.*f", what, k, l,
              computed, decimals, printed);
        return;
    }
    CHECK(fabs(computed - difference->formula) < 1e-6,
          "%s(k=%u, l=%u) = %.9f, expected the formula's %.9f", what, k, l,
          computed, difference->formula);
    CHECK(!rounds_to(computed, printed, decimals),
          "%s(k=%u, l=%u) = %.9f now matches the print %.*f: remove it from "
          "the known differences",
          what, k, l, computed, decimals, printed);
}

static void table2_false_positive_rates(void **state) {
    double ratios[MAX_SLICES];
    size_t i;
    (void)state;
    for (i = 0; i < TABLE2_ROWS; i++) {
        const table2_row *row = &TABLE2[i];
        linear_ratios(row->k, row->l, ratios);
        check_against_print(
            "linear fp", ebb_apbf_fp_ratios(row->k, row->l, ratios), row->fp,
            6,
            find_difference(FP_DIFFERENCES,
                            sizeof FP_DIFFERENCES / sizeof FP_DIFFERENCES[0],
                            row->k, row->l),
            row->k, row->l);
    }
}

static void table2_accesses_of_false_queries(void **state) {
    double ratios[MAX_SLICES];
    size_t i;
    (void)state;
    for (i = 0; i < TABLE2_ROWS; i++) {
        const table2_row *row = &TABLE2[i];
        linear_ratios(row->k, row->l, ratios);
        check_against_print(
            "linear accesses_false",
            ebb_apbf_accesses_false_ratios(row->k, row->l, ratios),
            row->accesses_false, 2,
            find_difference(ACCESS_DIFFERENCES,
                            sizeof ACCESS_DIFFERENCES /
                                sizeof ACCESS_DIFFERENCES[0],
                            row->k, row->l),
            row->k, row->l);
    }
}

static void table2_npws(void **state) {
    size_t i;
    (void)state;
    for (i = 0; i < TABLE2_ROWS; i++) {
        const table2_row *row = &TABLE2[i];
        check_against_print(
            "npws", ebb_apbf_npws(row->k, row->l), row->npws, 2,
            find_difference(NPWS_DIFFERENCES,
                            sizeof NPWS_DIFFERENCES /
                                sizeof NPWS_DIFFERENCES[0],
                            row->k, row->l),
            row->k, row->l);
    }
}

/* The header: the linear model understates the rate ebb promises. */
static void geometric_rate_exceeds_linear_on_table2(void **state) {
    double ratios[MAX_SLICES];
    size_t i;
    (void)state;
    for (i = 0; i < TABLE2_ROWS; i++) {
        const table2_row *row = &TABLE2[i];
        double linear, geometric;
        linear_ratios(row->k, row->l, ratios);
        linear = ebb_apbf_fp_ratios(row->k, row->l, ratios);
        geometric = ebb_apbf_fp(row->k, row->l);
        CHECK(geometric > linear && geometric < 1.3 * linear,
              "(k=%u, l=%u): geometric %.9g, linear %.9g", row->k, row->l,
              geometric, linear);
    }
}

/* ------------------------------------------------------------------------ */
/* Fill models and NPWS closed forms                                        */
/* ------------------------------------------------------------------------ */

static void worst_fill_models(void **state) {
    static const uint32_t shapes[][2] = {{1, 1}, {4, 3}, {10, 25}, {64, 1024}};
    static double ratios[MAX_SLICES];
    size_t s;
    uint32_t i;
    (void)state;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        uint32_t k = shapes[s][0], l = shapes[s][1];
        assert_int_equal(ebb_apbf_worst_fill(k, l, EBB_FILL_GEOMETRIC, ratios),
                         EBB_OK);
        for (i = 0; i < k + l; i++) {
            double want = i < k ? 1.0 - pow(2.0, -(double)(i + 1) / k) : 0.5;
            CHECK(fabs(ratios[i] - want) < 1e-14,
                  "geometric k=%u l=%u r[%u] = %.17g, want %.17g", k, l, i,
                  ratios[i], want);
        }
        assert_int_equal(ebb_apbf_worst_fill(k, l, EBB_FILL_LINEAR, ratios),
                         EBB_OK);
        for (i = 0; i < k + l; i++) {
            double want = i < k ? (double)(i + 1) / (2.0 * k) : 0.5;
            CHECK(fabs(ratios[i] - want) < 1e-14,
                  "linear k=%u l=%u r[%u] = %.17g, want %.17g", k, l, i,
                  ratios[i], want);
        }
    }
}

static void worst_fill_rejects_bad_arguments(void **state) {
    double ratios[8];
    size_t i;
    (void)state;
    for (i = 0; i < 8; i++)
        ratios[i] = -7.0;
    assert_int_equal(ebb_apbf_worst_fill(0, 3, EBB_FILL_LINEAR, ratios),
                     EBB_EINVAL);
    assert_int_equal(ebb_apbf_worst_fill(EBB_APBF_MAX_K + 1, 3,
                                         EBB_FILL_LINEAR, ratios),
                     EBB_EINVAL);
    assert_int_equal(ebb_apbf_worst_fill(4, 0, EBB_FILL_GEOMETRIC, ratios),
                     EBB_EINVAL);
    assert_int_equal(ebb_apbf_worst_fill(4, EBB_APBF_MAX_L + 1,
                                         EBB_FILL_GEOMETRIC, ratios),
                     EBB_EINVAL);
    assert_int_equal(ebb_apbf_worst_fill(4, 3, (ebb_fill_model)2, ratios),
                     EBB_EINVAL);
    assert_int_equal(ebb_apbf_worst_fill(4, 3, EBB_FILL_LINEAR, NULL),
                     EBB_EINVAL);
    for (i = 0; i < 8; i++)
        CHECK(ratios[i] == -7.0, "ratio %zu written on error", i);
}

static void npws_closed_form(void **state) {
    uint32_t k, l;
    (void)state;
    for (k = 1; k <= EBB_APBF_MAX_K; k++) {
        for (l = 1; l <= EBB_APBF_MAX_L; l += 7) {
            double want = (2.0 - ldexp(1.0, 1 - (int)k)) / l;
            double got = ebb_apbf_npws(k, l);
            CHECK(fabs(got - want) <= 1e-15 * want,
                  "npws(%u, %u) = %.17g, want %.17g", k, l, got, want);
        }
    }
    assert_true(isnan(ebb_apbf_npws(0, 3)));
    assert_true(isnan(ebb_apbf_npws(EBB_APBF_MAX_K + 1, 3)));
    assert_true(isnan(ebb_apbf_npws(4, 0)));
    assert_true(isnan(ebb_apbf_npws(4, EBB_APBF_MAX_L + 1)));
}

/* ------------------------------------------------------------------------ */
/* Brute force over every match pattern                                     */
/* ------------------------------------------------------------------------ */

/* Slice i matches when bit i of pattern is set. */
static bool pattern_has_run(uint32_t k, uint32_t l, uint32_t pattern) {
    uint32_t run = (1u << k) - 1, start;
    for (start = 0; start <= l; start++)
        if (((pattern >> start) & run) == run)
            return true;
    return false;
}

/* Algorithm 1 of the paper on one pattern; *accesses counts slice probes. */
static bool algorithm1(uint32_t k, uint32_t l, uint32_t pattern,
                       unsigned *accesses) {
    long i = (long)l;
    uint32_t previous = 0, current = 0;
    *accesses = 0;
    while (i >= 0) {
        ++*accesses;
        if ((pattern >> i) & 1u) {
            current++;
            i++;
            if (previous + current == k)
                return true;
        } else {
            i -= (long)k;
            previous = current;
            current = 0;
        }
    }
    return false;
}

static double pattern_probability(uint32_t slices, uint32_t pattern,
                                  const double *ratios) {
    double p = 1.0;
    uint32_t i;
    for (i = 0; i < slices; i++)
        p *= (pattern >> i) & 1u ? ratios[i] : 1.0 - ratios[i];
    return p;
}

static void brute_force(uint32_t k, uint32_t l, const double *ratios,
                        double *fp, double *accesses_false) {
    uint32_t slices = k + l, pattern;
    double p_true = 0, p_false = 0, weighted_accesses = 0;
    for (pattern = 0; pattern < (1u << slices); pattern++) {
        unsigned accesses;
        double p = pattern_probability(slices, pattern, ratios);
        bool found = algorithm1(k, l, pattern, &accesses);
        /* Algorithm 1 must agree with the definition it implements. */
        assert_int_equal(found, pattern_has_run(k, l, pattern));
        if (found) {
            p_true += p;
        } else {
            p_false += p;
            weighted_accesses += p * accesses;
        }
    }
    *fp = p_true;
    *accesses_false = weighted_accesses / p_false;
}

static void random_ratios(uint64_t *rng, uint32_t slices, double *ratios) {
    uint32_t i;
    for (i = 0; i < slices; i++)
        ratios[i] = (double)(support_splitmix64(rng) >> 11) * 0x1p-53 * 0.95;
}

static void formulas_match_brute_force(void **state) {
    double ratios[MAX_SLICES];
    uint64_t rng = 2024;
    uint32_t k, l;
    int trial;
    (void)state;
    for (k = 1; k <= 6; k++) {
        for (l = 1; k + l <= 14; l++) {
            for (trial = 0; trial < 3; trial++) {
                double want_fp, want_accesses, got_fp, got_accesses;
                if (trial == 0)
                    assert_int_equal(ebb_apbf_worst_fill(k, l,
                                                         EBB_FILL_GEOMETRIC,
                                                         ratios),
                                     EBB_OK);
                else
                    random_ratios(&rng, k + l, ratios);
                brute_force(k, l, ratios, &want_fp, &want_accesses);
                got_fp = ebb_apbf_fp_ratios(k, l, ratios);
                got_accesses = ebb_apbf_accesses_false_ratios(k, l, ratios);
                CHECK(fabs(got_fp - want_fp) <= 1e-12,
                      "fp_ratios(k=%u, l=%u, trial %d) = %.15g, brute "
                      "force %.15g",
                      k, l, trial, got_fp, want_fp);
                CHECK(fabs(got_accesses - want_accesses) <=
                          1e-10 * want_accesses,
                      "accesses_false_ratios(k=%u, l=%u, trial %d) = %.15g, "
                      "brute force %.15g",
                      k, l, trial, got_accesses, want_accesses);
            }
        }
    }
}

static void geometric_shortcuts_match_ratio_forms(void **state) {
    double ratios[MAX_SLICES];
    size_t i;
    (void)state;
    for (i = 0; i < TABLE2_ROWS; i++) {
        uint32_t k = TABLE2[i].k, l = TABLE2[i].l;
        assert_int_equal(ebb_apbf_worst_fill(k, l, EBB_FILL_GEOMETRIC,
                                             ratios),
                         EBB_OK);
        assert_true(fabs(ebb_apbf_fp(k, l) - ebb_apbf_fp_ratios(k, l, ratios)) <=
                    1e-15);
        assert_true(fabs(ebb_apbf_accesses_false(k, l) -
                         ebb_apbf_accesses_false_ratios(k, l, ratios)) <=
                    1e-12);
    }
}

static void ratio_forms_edge_values(void **state) {
    double ratios[MAX_SLICES];
    uint32_t i;
    (void)state;
    for (i = 0; i < 10; i++)
        ratios[i] = 1.0;
    assert_true(ebb_apbf_fp_ratios(4, 6, ratios) == 1.0);
    for (i = 0; i < 10; i++)
        ratios[i] = 0.0;
    assert_true(ebb_apbf_fp_ratios(4, 6, ratios) == 0.0);
    /* No slice matches: Algorithm 1 probes l, then l-k, ... down to >= 0. */
    assert_true(fabs(ebb_apbf_accesses_false_ratios(4, 6, ratios) - 2.0) <
                1e-12);
    /* The largest shape is computable and a probability. */
    {
        static double big[MAX_SLICES];
        double fp;
        assert_int_equal(ebb_apbf_worst_fill(EBB_APBF_MAX_K, EBB_APBF_MAX_L,
                                             EBB_FILL_GEOMETRIC, big),
                         EBB_OK);
        fp = ebb_apbf_fp_ratios(EBB_APBF_MAX_K, EBB_APBF_MAX_L, big);
        assert_true(fp > 0.0 && fp < 1e-15);
    }
}

static void ratio_forms_reject_bad_arguments(void **state) {
    double ratios[MAX_SLICES];
    const double bad[] = {-0.01, 1.01, NAN, INFINITY};
    size_t i;
    (void)state;
    assert_int_equal(ebb_apbf_worst_fill(4, 3, EBB_FILL_LINEAR, ratios),
                     EBB_OK);
    assert_true(isnan(ebb_apbf_fp_ratios(0, 3, ratios)));
    assert_true(isnan(ebb_apbf_fp_ratios(EBB_APBF_MAX_K + 1, 3, ratios)));
    assert_true(isnan(ebb_apbf_fp_ratios(4, 0, ratios)));
    assert_true(isnan(ebb_apbf_fp_ratios(4, EBB_APBF_MAX_L + 1, ratios)));
    assert_true(isnan(ebb_apbf_accesses_false_ratios(0, 3, ratios)));
    assert_true(isnan(ebb_apbf_accesses_false_ratios(4, 0, ratios)));
    assert_true(isnan(ebb_apbf_fp(0, 3)));
    assert_true(isnan(ebb_apbf_fp(4, EBB_APBF_MAX_L + 1)));
    assert_true(isnan(ebb_apbf_accesses_false(EBB_APBF_MAX_K + 1, 3)));
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double saved = ratios[5];
        ratios[5] = bad[i];
        CHECK(isnan(ebb_apbf_fp_ratios(4, 3, ratios)),
              "fp_ratios accepted ratio %g", bad[i]);
        CHECK(isnan(ebb_apbf_accesses_false_ratios(4, 3, ratios)),
              "accesses_false_ratios accepted ratio %g", bad[i]);
        ratios[5] = saved;
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table2_false_positive_rates),
        cmocka_unit_test(table2_accesses_of_false_queries),
        cmocka_unit_test(table2_npws),
        cmocka_unit_test(geometric_rate_exceeds_linear_on_table2),
        cmocka_unit_test(worst_fill_models),
        cmocka_unit_test(worst_fill_rejects_bad_arguments),
        cmocka_unit_test(npws_closed_form),
        cmocka_unit_test(formulas_match_brute_force),
        cmocka_unit_test(geometric_shortcuts_match_ratio_forms),
        cmocka_unit_test(ratio_forms_edge_values),
        cmocka_unit_test(ratio_forms_reject_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
