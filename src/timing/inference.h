/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inference.h: what the inferential query caches per filter (section 4.4
 * of Dautrich and Ravishankar) and the query on evidence with that cache.
 *
 * The handle (timing_internal.h) holds one ebb_timing_cache and refreshes
 * it with ebb_timing_cache_init whenever its params or model change
 * (create, set_model, load); ebb_timing_infer_hash reads it. The pure
 * ebb_timing_infer_evidence builds one on the stack per call.
 */
#ifndef EBB_TIMING_INFERENCE_H
#define EBB_TIMING_INFERENCE_H

#include "ebb/timing.h"

/* A prior p_x prepared for the sums over one block of ages (span B).
 * A query's own prior is prepared as far as its evidence reads it
 * (inference.c): expired evidence reads only the mean, lambda = 0 the
 * first three fields, 0 < lambda <= W all six. */
typedef struct ebb_timing_prior {
    double p;           /* p_x                                            */
    double log_q;       /* ln(1 - p), -inf for p = 1                      */
    double tail_mean;   /* (1 - p) / p: the prior's mean age              */
    double q_block;     /* (1 - p)^B                                      */
    double rest_block;  /* 1 - (1 - p)^B, with its own digits             */
    double mean_block;  /* mean of t (1 - p)^t over t = 0..B-1, normalised */
} ebb_timing_prior;

typedef struct ebb_timing_cache {
    /* k ln(1 - 1/m): the log of the chance that one distinct insertion
     * leaves a given timer untouched (Eq. 21's base). */
    double log_untouched;
    /* F(c, 0, B) = (1 - (1 - 1/m)^(k D(B)))^c for c = 0..k: the chance
     * that c given timers are all touched within one block (Eq. 25), used
     * as is for the DISTINCT model (inference.c's block_touched). */
    double block_touched[EBB_TIMING_MAX_K + 1];
    /* UNIFORM: ln(1 - 1/|U|) and |U| (1 - (1 - 1/|U|)^B), so that
     * D(j + B) - D(j) is one exp. */
    double uniform_log;
    double uniform_block;
    /* ZIPF: H_|U| */
    double zipf_harmonic;
    /* The model's default p_x, 0 when it has none, and it prepared. */
    double default_prior;
    ebb_timing_prior prepared;
    /* ceil(w / B) + 1 + P. */
    uint64_t t_omega;
} ebb_timing_cache;

/* Fills the cache for valid params and a valid model. O(k), one D(B). */
void ebb_timing_cache_init(ebb_timing_cache *cache,
                           const ebb_timing_params *params,
                           const ebb_timing_model *model);

/* ebb_timing_infer_evidence for valid params and model with their cache:
 * validates the query and the evidence only. */
ebb_status ebb_timing_infer_cached(const ebb_timing_params *params,
                                   const ebb_timing_model *model,
                                   const ebb_timing_cache *cache,
                                   const ebb_timing_evidence *evidence,
                                   const ebb_timing_query *query,
                                   ebb_timing_answer *out);

#endif /* EBB_TIMING_INFERENCE_H */
