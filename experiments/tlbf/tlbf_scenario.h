/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf_scenario.h: what the paper does not show. Filters of fp 0.1, 0.01
 * and 0.001 under a changing rate (a 10x burst for one span, a drop to a
 * tenth, an idle gap of 3T, a daily sinusoid), sampled over time; and the
 * measures of a disturbance: its peaks against the span before it, and the
 * time until the filter is back near where it was.
 */
#ifndef EBB_EXPERIMENTS_TLBF_SCENARIO_H
#define EBB_EXPERIMENTS_TLBF_SCENARIO_H

#include "tlbf_sim.h"

#define TLBF_SCENARIO_FPS 3
#define TLBF_SCENARIO_RATE 1000.0 /* items per second, the base rate */

extern const double tlbf_scenario_fps[TLBF_SCENARIO_FPS];
extern const char *const tlbf_scenario_fp_labels[TLBF_SCENARIO_FPS];

/* One scenario run: a filter created for the base rate (initial capacity
 * base * T), its samples and the CSV they go to
 * (docs/results/tlbf/scenario_<name>_fp<fp>.csv). */
typedef struct tlbf_scenario {
    const char *name;
    unsigned fp_index;
    int64_t step;          /* sampling step, ns                          */
    unsigned probe_every;  /* fresh keys are queried every n-th sample   */
    uint64_t probes;       /* how many (100 false positives at target)   */
    tlbf_run run;
    tlbf_sample *samples;
    size_t count, capacity;
    FILE *csv;
} tlbf_scenario;

void tlbf_scenario_open(tlbf_scenario *sc, exp_context *ctx,
                        const char *name, uint32_t unit, unsigned fp_index,
                        const tlbf_profile *profile, int64_t duration,
                        int64_t step, unsigned probe_every);

/* Samples every step from the last sample until `until` (inclusive). */
void tlbf_scenario_sample_until(tlbf_scenario *sc, int64_t until);

/* Queries the remaining keys at their t + T and closes the CSV; the
 * samples stay for the analysis. */
void tlbf_scenario_finish(tlbf_scenario *sc);
void tlbf_scenario_free(tlbf_scenario *sc);

/* Records the no-false-negative verdict of the run. */
void tlbf_scenario_check_oracle(exp_context *ctx, const tlbf_scenario *sc);

/* ------------------------------------------------------------------------ */
/* A disturbance: a rate change during [start, end)                        */
/* ------------------------------------------------------------------------ */

typedef struct tlbf_disturbance {
    int64_t start, end;
    /* The span before the start: the highest current_fp and memory (a
     * steady filter reaches them once a generation), the mean slice count,
     * the measured rate of all probes. */
    double ref_fp, ref_memory, ref_slices, ref_measured;
    /* From the start on. */
    double peak_fp, peak_memory, peak_slices, peak_measured;
    int64_t peak_fp_at, peak_memory_at, peak_slices_at, peak_measured_at;
    uint64_t peak_measured_hits, peak_measured_probes;
    /* All probes of the first quarter of the disturbance, pooled: the
     * measured counterpart of the fp peak, without the scatter of single
     * samples. */
    tlbf_pooled early;
    /* The earliest time from which on every sample is within 1.25x of the
     * reference (measured: with 3 binomial sd of allowance); INT64_MAX if
     * the last one is not. Counted from max(end, the time the value first
     * passed 1.25x); see recovery_after. */
    int64_t fp_back, memory_back, measured_back;
    /* The last span of the run. */
    double final_slices, final_memory, final_fp_max;
} tlbf_disturbance;

void tlbf_disturbance_analyse(const tlbf_scenario *sc, int64_t start,
                              int64_t end, tlbf_disturbance *out);

/* Time from the end of the disturbance to a recovery time, in spans T
 * (0 when it never left the band after the end, NaN when it never came
 * back). */
double tlbf_recovery_after(const tlbf_disturbance *d, int64_t back);

/* Writes work/<name>.plot: the fp labels, targets and (k, l) titles. */
void tlbf_scenario_plot_meta(const exp_context *ctx, const char *name,
                             const uint32_t k[], const uint32_t l[]);

#endif
