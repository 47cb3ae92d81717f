/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * model.h: the stream model of a timing filter (include/ebb/timing.h):
 * validation, the default prior, the harmonic number. model.c has the
 * public D(j) and the Zipf prior; docs/timing.md ("Choices") says how each
 * model extends Eq. 16-18 outside their range.
 */
#ifndef EBB_TIMING_MODEL_H
#define EBB_TIMING_MODEL_H

#include "ebb/timing.h"

/* True when ebb_timing_create, set_model and infer_evidence accept the
 * model: a known kind; |U| >= 1 for UNIFORM and ZIPF; for TABLE 2..MAX
 * points with j increasing from 1 up, 1 <= d[i] <= j[i], d non-decreasing,
 * all finite, and default_prior 0 or in (0, 1]. Fields a kind does not use
 * are ignored. */
bool ebb_timing_model_valid(const ebb_timing_model *model);

/* The prior a query with prior = 0 takes: 1/|U| for UNIFORM, the table's
 * default_prior for TABLE, 0 (none) for DISTINCT and ZIPF. The model must
 * be valid. */
double ebb_timing_model_default_prior(const ebb_timing_model *model);

/* D(j) of a valid model for a finite j >= 0: ebb_timing_distinct without
 * the validation, for the query path. */
double ebb_timing_model_distinct(const ebb_timing_model *model, double j);

/* D(j) of the ZIPF model over |U| = universe >= 1 with h = H_|U| given
 * (the query path caches it): Eq. 15 summed in O(1), relative error below
 * 1.4e-4 (model.c derives it; 5e-6 from |U| = 1000 up); j for j < 1. */
double ebb_timing_zipf_distinct(uint64_t universe, double h, double j);

/* H_n = sum_{i=1}^{n} 1/i: exact sum up to 64, the asymptotic series
 * ln n + gamma + 1/(2n) - 1/(12n^2) + 1/(120n^4) - 1/(252n^6) above (its
 * error, < 1/(240 n^8), is below double rounding there). n >= 1. */
double ebb_timing_harmonic(uint64_t n);

#endif /* EBB_TIMING_MODEL_H */
