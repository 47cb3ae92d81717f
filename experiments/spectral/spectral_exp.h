/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spectral_exp.h: what the Spectral Bloom filter experiments share
 * (docs/results/spectral.md): the paper's Zipf data (1,000 distinct values,
 * M = 100,000 items), the filters of the three methods at a total memory of
 * m counters, the keys, the measures of section 6.1 (additive error and
 * error ratio) and the removals of section 6.2.
 *
 * The paper: Cohen and Matias, "Spectral Bloom Filters" (SIGMOD 2003),
 * sections 2.3, 3.3, 5.2 and 6. Only the public API (ebb/spectral.h).
 */
#ifndef EBB_EXPERIMENTS_SPECTRAL_EXP_H
#define EBB_EXPERIMENTS_SPECTRAL_EXP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebb/spectral.h"
#include "exp_common.h"

#define SP_DISTINCT 1000u  /* distinct values of the synthetic data     */
#define SP_ITEMS 100000u   /* M: items (occurrences) per data set       */
#define SP_RUNS 5u         /* "the average over 5 independent runs"     */
#define SP_K 5u
#define SP_BITS 32u        /* no counter ever saturates here            */
#define SP_METHODS 3u

extern const ebb_spectral_method SP_METHOD[SP_METHODS]; /* MS, MI, RM    */
const char *sp_method_name(ebb_spectral_method method);  /* "MS", ...    */

/* Zipf over ranks 0..n-1: P(rank i) proportional to 1 / (i + 1)^skew. */
typedef struct sp_zipf {
    uint32_t n;
    double *cdf;
} sp_zipf;

void sp_zipf_init(sp_zipf *z, uint32_t n, double skew);
void sp_zipf_free(sp_zipf *z);
uint32_t sp_zipf_draw(const sp_zipf *z, exp_rng *rng);

/* `items` values drawn from Zipf(n, skew) with the given seed. */
void sp_zipf_stream(uint32_t *out, uint64_t items, uint32_t n, double skew,
                    uint64_t seed);

/* m counters (for RM: primary and secondary together, split by
 * ebb_spectral_params_init) for n keys at gamma = n k / m. */
uint64_t sp_counters_for(uint32_t n, uint32_t k, double gamma);

/* A filter of `counters` counters of SP_BITS bits, k, the method (RM with
 * the library's default split and marker), seeded. Exits on errors. */
ebb_spectral *sp_create(uint64_t counters, uint32_t k,
                        ebb_spectral_method method, uint64_t seed);
/* The same from explicit params (seed set here). */
ebb_spectral *sp_create_params(ebb_spectral_params params, uint64_t seed);

/* The filters compared at equal memory (Figs. 6 and 8): MS, MI, RM with
 * the library's defaults (ebb_spectral_params_init: secondary m/10,
 * secondary_k 2, an exact marker) and RM as the paper ran it (secondary
 * m/3 of the counters, secondary_k = k, a marker Bloom filter B_f of m_p
 * bits). "Equal memory" is in bytes, as ebb_spectral_memory_for counts
 * them: an RM filter gets the largest total m' of counters whose counters,
 * secondary AND marker fit in the bytes of MS's filter of m counters (the
 * marker is paid for with counters; the paper put it on top). */
#define SP_CONFIGS 4u
enum { SP_CFG_MS = 0, SP_CFG_MI = 1, SP_CFG_RM = 2, SP_CFG_RM_PAPER = 3 };
const char *sp_config_name(unsigned config);     /* "MS", "MI", "RM", ...  */
const char *sp_config_column(unsigned config);   /* "ms", "mi", "rm", "rmp" */
ebb_spectral_method sp_config_method(unsigned config);
/* The RM params of the config at a total of m' counters (no memory
 * matching): for SP_CFG_RM ebb_spectral_params_init's, for
 * SP_CFG_RM_PAPER the paper's split. */
ebb_spectral_params sp_rm_params(unsigned config, uint64_t total, uint32_t k);
/* The params of the config at the memory of MS with `counters` counters. */
ebb_spectral_params sp_config_params(unsigned config, uint64_t counters,
                                     uint32_t k);
/* Counters of all parts (primary + secondary) of params. */
uint64_t sp_total_counters(const ebb_spectral_params *params);

/* The hashes of the integer values 0..n-1 (8 bytes, little endian). */
void sp_value_hashes(const ebb_spectral *filter, uint32_t n,
                     ebb_hash128 *out);

/* Removes r occurrences: ebb_spectral_remove_unsafe under MI,
 * ebb_spectral_remove otherwise. Returns the status. */
ebb_status sp_remove(ebb_spectral *filter, ebb_spectral_method method,
                     ebb_hash128 hash, uint64_t r);

/* The measures of one run over n queried keys with their true counts. */
typedef struct sp_errors {
    uint64_t queries;
    uint64_t wrong;   /* estimate != truth                               */
    uint64_t below;   /* estimate < truth: a false negative of the count */
    double sq_sum;    /* sum of (estimate - truth)^2                      */
} sp_errors;

/* Queries every key; exits on a saturated estimate. */
void sp_measure(const ebb_spectral *filter, const ebb_hash128 *hashes,
                const uint64_t *truth, uint32_t n, sp_errors *out);
double sp_additive(const sp_errors *e); /* sqrt(sq_sum / queries)        */
double sp_ratio(const sp_errors *e);    /* wrong / queries               */

/* Means over runs of the per-run measures, and totals. */
typedef struct sp_mean {
    unsigned runs;
    double additive, ratio;  /* sums of the per-run values              */
    uint64_t wrong, below, queries, refused;
} sp_mean;

void sp_mean_add(sp_mean *m, const sp_errors *e);
double sp_mean_additive(const sp_mean *m);
double sp_mean_ratio(const sp_mean *m);

/* E_b = (1 - e^(-gamma))^k. */
double sp_bloom_error(double gamma, uint32_t k);

/* The gammas = n k / m of the sweeps (Figs. 6 and 7). */
#define SP_GAMMA_COUNT ((size_t)12)
extern const double SP_GAMMAS[SP_GAMMA_COUNT];

/* A point counts for "below MS" once MS made this many errors there. */
#define SP_MIN_MS_ERRORS 20u

/* The range of a ratio over points, and the x (gamma, k or skew) of the
 * point where each end is reached (the last one for hi). */
typedef struct sp_span {
    double lo, hi, lo_x, hi_x;
} sp_span;

sp_span sp_span_empty(void); /* lo = infinity, hi = 0, x's NaN */
void sp_span_take(sp_span *s, double ratio, double x);

/* calloc that exits on failure. */
void *sp_calloc(size_t n, size_t size);

#endif
