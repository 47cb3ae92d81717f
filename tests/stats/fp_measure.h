/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fp_measure.h: measuring an APBF's false-positive rate at its worst moment.
 *
 * The worst moment is just before a shift in the steady state: after at
 * least k + l + 2 shifts (every slice has been cleared and refilled), with
 * the current generation full (in_generation == g). There, slice s_i holds
 * the distinct keys of min(i + 1, k) generations, so its expected fill ratio
 * is exactly
 *     r_i = 1 - (1 - 1/m)^(min(i + 1, k) g),
 * and since the slices are filled independently (ideal hashing) and the
 * false-positive probability is multilinear in the r_i, the expected rate is
 * exactly ebb_apbf_fp_ratios(k, l, r): no approximation beyond the hashing.
 *
 * Blocked slices (APBBF) hold the same keys per slice; a key matches a
 * slice when the block it picks has its b bits set. Their expected match
 * probabilities come from the library's model, ebb_apbf_shape_ratios
 * (block false-positive rate over a Poisson block load), which the blocked
 * tests check against measurements.
 *
 * Several filters with different seeds are measured and aggregated; besides
 * the pooled binomial standard deviation, the standard error of the mean of
 * the per-filter rates is reported, which stays honest when keys are not
 * independent (over-dispersion).
 */
#ifndef EBB_TESTS_FP_MEASURE_H
#define EBB_TESTS_FP_MEASURE_H

#include <stdint.h>

#include "../unit/support.h"
#include "ebb/ebb.h"

/* Called on each new filter before any insertion (e.g. to select an
 * internal option); may be NULL. */
typedef void (*fp_prepare_fn)(ebb_apbf *filter, void *context);

typedef struct fp_plan {
    ebb_apbf_params params;
    unsigned filters;            /* independent filters (seeds)          */
    uint64_t queries_per_filter; /* never-inserted keys probed in each  */
    uint64_t seed;               /* first filter's seed                 */
    fp_prepare_fn prepare;
    void *context;
} fp_plan;

typedef struct fp_result {
    uint64_t queries, hits;
    double rate;          /* hits / queries                              */
    double expected;      /* ebb_apbf_fp_ratios on the exact fill ratios */
    double binomial_sd;   /* sqrt(expected (1 - expected) / queries)     */
    double filter_se;     /* standard error of the mean per-filter rate  */
} fp_result;

/* The exact expected worst-moment fill ratios of a shape (see above; for a
 * blocked shape, ebb_apbf_shape_ratios). */
void fp_exact_ratios(const ebb_apbf_params *p, double *ratios);

/* The expected worst-moment rate of a shape. */
double fp_exact_rate(const ebb_apbf_params *p);

/* Insertions fp_fill_to_worst_moment makes: k + l + 3 generations. */
uint64_t fp_worst_moment_insertions(const ebb_apbf_params *p);

/* The index-th key fp_fill_to_worst_moment inserts into filter filter_id,
 * and the index-th never-inserted key fp_measure probes it with. */
support_key fp_inserted_key(unsigned filter_id, uint64_t index);
support_key fp_fresh_key(unsigned filter_id, uint64_t index);

/* Brings a new filter to its worst moment with distinct keys of a stream
 * private to filter_id (< 2^16). Asserts in_generation == g. */
void fp_fill_to_worst_moment(ebb_apbf *filter, unsigned filter_id);

/* Runs the plan. */
fp_result fp_measure(const fp_plan *plan);

/* (rate - value) in units of the binomial sd at value. */
double fp_z(const fp_result *result, double value);

#endif
