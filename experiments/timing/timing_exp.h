/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing_exp.h: what the Timing Bloom filter experiments share
 * (docs/results/timing.md): the paper's three streams (uniform, power law,
 * and a bursty synthetic stream in place of its CAIDA source-IP trace), the
 * true age of every queried item, the measured D(j), and one trial of the
 * paper's protocol (section 5.1): query each item, then insert it.
 *
 * The paper: Dautrich and Ravishankar, "Inferential Time-Decaying Bloom
 * Filters" (EDBT 2013), section 5.
 */
#ifndef EBB_EXPERIMENTS_TIMING_EXP_H
#define EBB_EXPERIMENTS_TIMING_EXP_H

#include <stdbool.h>
#include <stdint.h>

#include "ebb/apbf.h"
#include "ebb/timing.h"
#include "exp_common.h"

#define TX_BINS 20u          /* posterior bins of Eq. 28                */
#define TX_AGE_BINS 26u      /* true age bins: 0, then [2^(i-1), 2^i)   */
#define TX_NEVER UINT32_MAX  /* true age of an item never inserted      */
#define TX_COST_LOW 1.0      /* $FP, $FN uniform in [1, 10)             */
#define TX_COST_HIGH 10.0

typedef enum tx_kind {
    TX_UNIFORM = 0,
    TX_POWER_LAW = 1,
    TX_BURSTY = 2,
    TX_KINDS = 3
} tx_kind;

const char *tx_kind_name(tx_kind kind);  /* "uniform", "powerlaw", ...  */
const char *tx_kind_title(tx_kind kind); /* "Uniform", "Power law", ... */

/* The bursty stream's design (see timing.md.in): SESSIONS concurrent
 * sessions; each emission picks one uniformly and emits its host; a new
 * session draws its host log-uniformly from HOSTS (p ~ 1/(x ln HOSTS)) and
 * its length from a Pareto law of index ALPHA, at least 1, capped. */
#define TX_BURSTY_HOSTS (UINT32_C(1) << 22)
#define TX_BURSTY_SESSIONS 384u
#define TX_BURSTY_ALPHA 1.1
#define TX_BURSTY_MAX_SESSION 16384u

/* D(j) points of the bursty stream's TABLE model: the paper's j. */
#define TX_TABLE_POINTS 7u
#define TX_TABLE_TRIALS 8u
#define TX_TABLE_SPAN (UINT32_C(1) << 18)

/* One stream: warm-up insertions, then `queries` items each queried then
 * inserted. */
typedef struct tx_stream {
    tx_kind kind;
    uint32_t universe;     /* item ids are 0..universe-1                */
    uint64_t warm, queries;
    uint32_t *items;       /* warm + queries ids                        */
    uint32_t *ages;        /* per query: insertions since the item's
                              last insertion (0: the previous one), or
                              TX_NEVER                                  */
    double *prior;         /* per id: p_x given to the query            */
    ebb_hash128 *hashes;   /* per id, under seed hash_seed (timing)     */
    ebb_hash128 *apbf_hashes; /* per id, for the APBF                   */
    uint64_t hash_seed;
    ebb_timing_model model;
    uint32_t distinct;     /* distinct ids in the whole stream          */
} tx_stream;

/* Generates the stream of `kind` (deterministic in seed) and everything
 * derived from it; exits on errors. */
void tx_stream_make(tx_stream *s, tx_kind kind, uint64_t warm,
                    uint64_t queries, uint64_t seed);
void tx_stream_free(tx_stream *s);

/* Queries whose item is in the window w (true age < w). */
uint64_t tx_in_window(const tx_stream *s, uint64_t window);

/* Per true-age bin: the expected-age and most-likely-age errors. */
typedef struct tx_age_bin {
    uint64_t queries;
    double sum_age;          /* true ages                               */
    double sum_expected;     /* E[I_x | R_x]                             */
    double abs_expected;     /* |E[I_x | R_x] - true|                    */
    double abs_likely;       /* |argmax - true|                          */
    double abs_prior;        /* |(1 - p)/p - true|: the prior's mean     */
} tx_age_bin;

/* One trial: a BTBF of params (hash seed s->hash_seed), 2^20 warm-up
 * inserts, then query-then-insert over the stream with costs drawn from
 * cost_seed. */
typedef struct tx_trial {
    ebb_timing_params params;
    double penalty_standard, penalty_inferential;
    uint64_t fp_standard, fn_standard;    /* standard answer's errors     */
    uint64_t fp_inferential, fn_inferential;
    uint64_t eta[TX_BINS], hits[TX_BINS]; /* queries, in-window per bin  */
    double posterior_sum[TX_BINS];        /* mean posterior per bin      */
    tx_age_bin age[TX_AGE_BINS];          /* when asked for              */
} tx_trial;

void tx_run_trial(const tx_stream *s, const ebb_timing_params *params,
                  uint64_t cost_seed, bool ages, tx_trial *out);

/* Eq. 28: sum_l |f_l - M_l| eta_l / n. */
double tx_posterior_error(const tx_trial *t);

/* An APBF at equal memory: its penalty (false positives only: no false
 * negatives) over the same queries and costs. */
typedef struct tx_apbf_trial {
    ebb_apbf_params params;
    double analytic_fp;       /* ebb_apbf_shape_fp: worst case, distinct */
    double penalty;
    uint64_t fp, fn;
} tx_apbf_trial;

void tx_run_apbf(const tx_stream *s, const ebb_apbf_params *params,
                 uint64_t cost_seed, uint64_t window, tx_apbf_trial *out);

/* The APBF shapes of at most memory_bits bits of slices for the window:
 * k + l slices of floor(memory_bits / (k + l)) bits, g = ceil(w / l),
 * valid when g <= floor(m ln 2 / k) (k 1..30, l 1..EBB_APBF_MAX_L). Ranked
 * by a proxy of the false-positive share of queries on this stream:
 * beyond * fp + slack_mass * npws, where fp is ebb_apbf_shape_fp (distinct
 * keys, worst moment), npws ebb_apbf_shape_npws (the slack beyond w in
 * windows), beyond the fraction of queries with true age >= w and
 * slack_mass that with w <= age < 2w. Writes the `count` best (at most
 * 8), best first; returns how many. */
unsigned tx_apbf_candidates(uint64_t window, uint64_t memory_bits,
                            double beyond, double slack_mass,
                            ebb_apbf_params *out, unsigned count);

/* Queries whose true age lies in [low, high). */
uint64_t tx_ages_between(const tx_stream *s, uint64_t low, uint64_t high);

#endif
