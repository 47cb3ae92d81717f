/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf_sim.h: a Time-limited Bloom Filter fed by a simulated stream, with an
 * exact record of what it was given.
 *
 * The experiments of experiments/tlbf (docs/results/tlbf.md) all do the
 * same thing: create a filter, feed it Poisson arrivals whose rate follows
 * a profile (constant, a burst, a drop, an idle gap, a sinusoid), and look
 * at it at regular simulated times. This module does the feeding and the
 * looking:
 *
 *   - Time is simulated: int64 nanoseconds since the start of the run
 *     ("relative"), handed to the filter as TLBF_SIM_EPOCH + relative, so
 *     the filter sees realistic epoch timestamps. Nothing reads a clock.
 *   - Arrivals are a Poisson process of rate rate(t) items per second,
 *     drawn by thinning (candidates at the profile's top rate, each kept
 *     with probability rate(t) / top), so a step or a sinusoid is exact.
 *   - Keys are 16 bytes (a stream number and an index, exp_common.h), all
 *     distinct; probes come from a stream never inserted.
 *   - Every key's insertion time is kept, which gives the exact number of
 *     items inserted during the last T at any moment, and an oracle for
 *     false negatives: each key is queried at exactly t + T (the far edge
 *     of the guarantee), at a moment when no later item than t + T has been
 *     added, where the library promises "present" (include/ebb/tlbf.h).
 *
 * Deterministic given the seed: the arrival times come from xoshiro256**
 * seeded from it, the filter's hash seed too.
 */
#ifndef EBB_EXPERIMENTS_TLBF_SIM_H
#define EBB_EXPERIMENTS_TLBF_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ebb/tlbf.h"
#include "exp_common.h"

/* 2023-11-14T22:13:20Z: the filter sees epoch-like timestamps. */
#define TLBF_SIM_EPOCH INT64_C(1700000000000000000)
#define TLBF_SIM_SECOND INT64_C(1000000000)

/* The span every experiment uses: T = 60 s, as "minutes" windows go. */
#define TLBF_SIM_SPAN (60 * TLBF_SIM_SECOND)

/* Memory limit of the experiments' filters: far above anything they need,
 * so the REFUSE policy never triggers (the runs assert it did not). */
#define TLBF_SIM_MEMORY ((size_t)1 << 31)

/* ------------------------------------------------------------------------ */
/* Rate profiles                                                            */
/* ------------------------------------------------------------------------ */

typedef enum tlbf_profile_shape {
    /* base * factor during [event_start, event_end), base elsewhere: a
     * constant rate (factor 1), a burst (10), a drop (0.1, event_end at
     * the end of the run), an idle gap (0). */
    TLBF_PROFILE_STEP,
    /* base * (1 + amplitude * sin(2 pi t / period)): a day, compressed. */
    TLBF_PROFILE_SINE
} tlbf_profile_shape;

typedef struct tlbf_profile {
    tlbf_profile_shape shape;
    double base;          /* items per second                           */
    double factor;        /* STEP: the multiplier during the event      */
    int64_t event_start;  /* STEP: relative ns                          */
    int64_t event_end;    /* STEP: relative ns (exclusive)              */
    double amplitude;     /* SINE: in [0, 1]                            */
    int64_t period;       /* SINE: ns                                   */
} tlbf_profile;

tlbf_profile tlbf_profile_constant(double base);
tlbf_profile tlbf_profile_step(double base, double factor, int64_t start,
                               int64_t end);
tlbf_profile tlbf_profile_sine(double base, double amplitude, int64_t period);

/* Items per second at relative time t. */
double tlbf_profile_rate(const tlbf_profile *p, int64_t t);

/* The largest rate the profile ever reaches. */
double tlbf_profile_top(const tlbf_profile *p);

/* ------------------------------------------------------------------------ */
/* A run                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct tlbf_run {
    ebb_tlbf *filter;
    int64_t span;
    tlbf_profile profile;
    exp_rng rng;
    double candidate;       /* next thinning candidate, relative ns      */
    int64_t next_arrival;   /* relative ns of the next arrival           */
    uint64_t insert_stream, probe_stream;
    uint64_t probes_drawn;  /* probe indices used so far                 */

    int64_t *times;         /* insertion time of key i, relative ns      */
    size_t inserted, times_cap;
    size_t window_first;    /* first key with time >= q - T (last count) */
    size_t oracle_next;     /* first key not yet checked at t + T        */

    uint64_t oracle_checked;   /* keys queried at t + T                  */
    uint64_t false_negatives;  /* of which reported absent               */
    uint64_t add_errors;       /* adds that did not return EBB_OK        */
} tlbf_run;

/* Creates the filter (span TLBF_SIM_SPAN, the given fp and initial
 * capacity, TLBF_SIM_MEMORY, REFUSE) and the stream; `unit` tells runs of
 * one experiment apart (key streams and seeds). Exits on errors. */
void tlbf_run_init(tlbf_run *run, const exp_context *ctx, uint32_t unit,
                   double fp, uint64_t initial_capacity,
                   const tlbf_profile *profile);
/* The same with an explicit shape (ebb_tlbf_config.k and .l): both 0 lets
 * the library choose for fp, as tlbf_run_init does. */
void tlbf_run_init_shape(tlbf_run *run, const exp_context *ctx,
                         uint32_t unit, double fp, uint32_t k, uint32_t l,
                         uint64_t initial_capacity,
                         const tlbf_profile *profile);
void tlbf_run_free(tlbf_run *run);

/* Adds every arrival at relative times <= until, querying each earlier key
 * at its t + T before the first add later than that. */
void tlbf_run_advance(tlbf_run *run, int64_t until);

/* Queries every key not yet checked at its t + T: call once at the end,
 * after the last add. */
void tlbf_run_finish(tlbf_run *run);

/* Keys inserted at relative times in [q - T, q] (q no earlier than the
 * latest call of this function). */
uint64_t tlbf_run_items_in_span(tlbf_run *run, int64_t q);

/* Queries n fresh keys (never inserted) at relative time q; returns how
 * many the filter reported present. */
uint64_t tlbf_run_probe(tlbf_run *run, int64_t q, uint64_t n);

/* Queries the keys inserted at relative times in [from, to) at q; *asked
 * receives how many; returns how many were reported present. */
uint64_t tlbf_run_requery(tlbf_run *run, int64_t from, int64_t to, int64_t q,
                          uint64_t *asked);

/* Bits of the slices' arrays (the sum of m_i over the slices held), the
 * paper's notion of the filter's size; memory_bytes adds the handle, the
 * slice descriptors, block alignment and size classes. */
uint64_t tlbf_run_slice_bits(const tlbf_run *run);

/* Insertions per generation the filter now sizes its slices for (its
 * smoothed rate estimate): beside the true items per generation, how far
 * the sizing settled from the rate (the estimate ignores observations
 * within 1/8 of it, docs/tlbf.md). */
uint64_t tlbf_run_estimate(const tlbf_run *run);

/* Over the slices no longer written (positions k and beyond): the mean of
 * n_i / c_i (how full they ended, 1 = fill ratio 1/2) and the largest
 * capacity over the smallest. Both 0 when there is no such slice. */
void tlbf_run_fill_stats(const tlbf_run *run, double *mean_fill,
                         double *capacity_spread);

/* ------------------------------------------------------------------------ */
/* Samples                                                                  */
/* ------------------------------------------------------------------------ */

/* What is recorded at one sampling time. */
typedef struct tlbf_sample {
    int64_t t;               /* relative ns                               */
    double rate;             /* the profile's rate at t, items/s          */
    uint64_t items_in_span;  /* exact count of keys of the last T         */
    ebb_tlbf_stats stats;
    uint64_t slice_bits;
    uint64_t probes, hits;   /* fresh keys queried at t (0: none)         */
} tlbf_sample;

/* Advances the run to q and records a sample there, with `probes` fresh
 * keys queried (0 for none). */
void tlbf_run_sample(tlbf_run *run, int64_t q, uint64_t probes,
                     tlbf_sample *out);

/* memory_bytes * 8 / items, NaN with no items. */
double tlbf_sample_bits_per_item(const tlbf_sample *s);
/* slice_bits / items, NaN with no items. */
double tlbf_sample_slice_bits_per_item(const tlbf_sample *s);
/* hits / probes, NaN without probes. */
double tlbf_sample_measured_fp(const tlbf_sample *s);

/* The CSV header and row every time series uses. */
void tlbf_sample_csv_header(FILE *csv);
void tlbf_sample_csv_row(FILE *csv, const tlbf_sample *s, int64_t span);

/* Probes that make a rate of about fp rest on `expected` false positives. */
uint64_t tlbf_probes_for(double fp, double expected);

/* The APBF's bits per window item with the same (k, l) and every slice
 * sized for a window at fill 1/2: (k + l) k / (l ln 2). */
double tlbf_apbf_bits_per_item(uint32_t k, uint32_t l);

/* ------------------------------------------------------------------------ */
/* Series of samples                                                        */
/* ------------------------------------------------------------------------ */

/* A number read off a sample (NaN: not available there, skipped). */
typedef double (*tlbf_metric)(const tlbf_sample *s);

double tlbf_metric_slices(const tlbf_sample *s);
double tlbf_metric_slice0_bits(const tlbf_sample *s);
double tlbf_metric_memory(const tlbf_sample *s);
double tlbf_metric_current_fp(const tlbf_sample *s);

/* Over the samples with from <= t < to whose metric is defined (NaN when
 * there is none). *at (may be NULL) receives the time of the extreme. */
double tlbf_series_mean(const tlbf_sample *s, size_t n, int64_t from,
                        int64_t to, tlbf_metric metric);
double tlbf_series_max(const tlbf_sample *s, size_t n, int64_t from,
                       int64_t to, tlbf_metric metric, int64_t *at);
double tlbf_series_min(const tlbf_sample *s, size_t n, int64_t from,
                       int64_t to, tlbf_metric metric, int64_t *at);

/* The earliest sample time t >= from such that the metric lies in [lo, hi]
 * at t and at every later sample; INT64_MAX when the last sample is
 * outside. */
int64_t tlbf_series_settled(const tlbf_sample *s, size_t n, int64_t from,
                            double lo, double hi, tlbf_metric metric);

/* Probes and hits summed over the samples with from <= t < to, and the
 * hits expected from their current_fp. */
typedef struct tlbf_pooled {
    uint64_t probes, hits;
    double expected;
} tlbf_pooled;

tlbf_pooled tlbf_series_pool(const tlbf_sample *s, size_t n, int64_t from,
                             int64_t to);

#endif
