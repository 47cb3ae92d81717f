/* SPDX-License-Identifier: BSD-2-Clause */
/* fp_measure.c: see fp_measure.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "../unit/support.h"
#include "fp_measure.h"

#define MAX_SLICES (EBB_APBF_MAX_K + EBB_APBF_MAX_L)

void fp_exact_ratios(const ebb_apbf_params *p, double *ratios) {
    double log_keep;
    uint32_t i;
    if (p->block_bits != 0) {
        /* Blocked slices: the library's Poisson block model (see the
         * header); computed there, not here. */
        assert_int_equal(ebb_apbf_shape_ratios(p, ratios), EBB_OK);
        return;
    }
    log_keep = log1p(-1.0 / (double)p->slice_bits);
    for (i = 0; i < p->k + p->l; i++) {
        uint32_t generations = i < p->k ? i + 1 : p->k;
        double insertions = (double)generations * (double)p->generation;
        ratios[i] = -expm1(insertions * log_keep);
    }
}

double fp_exact_rate(const ebb_apbf_params *p) {
    static double ratios[MAX_SLICES];
    fp_exact_ratios(p, ratios);
    return ebb_apbf_fp_ratios(p->k, p->l, ratios);
}

uint64_t fp_worst_moment_insertions(const ebb_apbf_params *p) {
    /* k + l + 3 full generations: k + l + 2 shifts, the last one full. */
    return (uint64_t)(p->k + p->l + 3) * p->generation;
}

support_key fp_inserted_key(unsigned filter_id, uint64_t index) {
    return support_key_make(KEYS_INSERTED, ((uint64_t)filter_id << 32) | index);
}

support_key fp_fresh_key(unsigned filter_id, uint64_t index) {
    return support_key_make(KEYS_FRESH, ((uint64_t)filter_id << 32) | index);
}

void fp_fill_to_worst_moment(ebb_apbf *filter, unsigned filter_id) {
    ebb_apbf_stats stats;
    uint64_t total, i;
    ebb_apbf_get_stats(filter, &stats);
    total = fp_worst_moment_insertions(&stats.params);
    for (i = 0; i < total; i++) {
        support_key key = fp_inserted_key(filter_id, i);
        ebb_apbf_add(filter, key.bytes, sizeof key.bytes);
    }
    ebb_apbf_get_stats(filter, &stats);
    assert_int_equal(stats.in_generation, stats.params.generation);
    assert_true(stats.generations >= stats.params.k + stats.params.l + 2);
}

static uint64_t probe_fresh(const ebb_apbf *filter, unsigned filter_id,
                            uint64_t queries) {
    uint64_t i, hits = 0;
    for (i = 0; i < queries; i++) {
        support_key key = fp_fresh_key(filter_id, i);
        hits += ebb_apbf_contains(filter, key.bytes, sizeof key.bytes);
    }
    return hits;
}
fp_result fp_measure(const fp_plan *plan) {
    fp_result result = {0, 0, 0, 0, 0, 0};
    double sum = 0, sum_squares = 0, mean;
    unsigned f;
    assert_true(plan->filters >= 2);
    for (f = 0; f < plan->filters; f++) {
        ebb_apbf *filter = NULL;
        uint64_t hits;
        double rate;
        assert_int_equal(ebb_apbf_create(&plan->params, plan->seed + f,
                                         &filter),
                         EBB_OK);
        if (plan->prepare != NULL)
            plan->prepare(filter, plan->context);
        fp_fill_to_worst_moment(filter, f);
        hits = probe_fresh(filter, f, plan->queries_per_filter);
        ebb_apbf_destroy(filter);
        result.hits += hits;
        result.queries += plan->queries_per_filter;
        rate = (double)hits / (double)plan->queries_per_filter;
        sum += rate;
        sum_squares += rate * rate;
    }
    result.rate = (double)result.hits / (double)result.queries;
    result.expected = fp_exact_rate(&plan->params);
    result.binomial_sd = sqrt(result.expected * (1 - result.expected) /
                              (double)result.queries);
    mean = sum / plan->filters;
    result.filter_se =
        sqrt(fmax(0.0, (sum_squares - plan->filters * mean * mean) /
                           (plan->filters - 1)) /
             plan->filters);
    return result;
}

double fp_z(const fp_result *result, double value) {
    double sd = sqrt(value * (1 - value) / (double)result->queries);
    return (result->rate - value) / sd;
}
