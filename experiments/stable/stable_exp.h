/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stable_exp.h: what the stable-filter experiments share (docs/results/
 * stable.md): the paper's settings, the five filters of its Table III at
 * equal memory, keys, the importance-to-level distribution, and the cell
 * chain iterated step by step from all zeros (the transient the library's
 * analysis does not give; its limit is checked against
 * ebb_stable_stationary).
 *
 * The paper: Kulkarni, Boraskar, Gabale, Kulkarni, "Importance-aware Bloom
 * Filter for Set Membership Queries in Streaming Data", section IV: 16 KB,
 * a cell's maximum 7, K = 5, P = 10, importance 1..50.
 */
#ifndef EBB_EXPERIMENTS_STABLE_EXP_H
#define EBB_EXPERIMENTS_STABLE_EXP_H

#include <stdbool.h>
#include <stdint.h>

#include "ebb/stable.h"
#include "exp_common.h"

#define SX_MEMORY_BYTES 16384u /* the paper's storage space SS            */
#define SX_CELL_BITS 3u        /* Max = 7 (Table II)                      */
#define SX_K 5u
#define SX_P 10u
#define SX_IMPORTANCE_LOW 1u
#define SX_IMPORTANCE_HIGH 50u
#define SX_IMPORTANCES (SX_IMPORTANCE_HIGH - SX_IMPORTANCE_LOW + 1u)
/* IBF-2C: important when importance > 25, the upper half of 1..50. */
#define SX_IMPORTANT_ABOVE 25.0
#define SX_MAX_LEVELS (1u << 8) /* Max + 1 for every shape used here      */

/* The five filters of the paper's Table III. */
typedef enum sx_filter {
    SX_BF = 0,     /* M-insert with M = 1: d = 1, P = 0, a Bloom filter  */
    SX_STABLE = 1, /* "SBF": M-insert + random delete                     */
    SX_IBF_2C = 2,
    SX_IBF_MC = 3,
    SX_IBF_H = 4,
    SX_FILTERS = 5
} sx_filter;

const char *sx_filter_name(sx_filter f);

/* The two readings of "16KB ... with 8 bits per cell, we have 16384 cells"
 * and "maximum value of a cell 7" (see stable.md.in). */
typedef enum sx_reading {
    SX_READING_MEMORY = 0, /* 16 KB of 3-bit cells: 43,690 cells; BF
                              131,072 one-bit cells                      */
    SX_READING_CELLS = 1,  /* 16,384 cells of Max 7 (8 bits each, 5 unused:
                              stored here in 3); BF 16,384 one-bit cells */
    SX_READINGS = 2
} sx_reading;

const char *sx_reading_name(sx_reading r);

/* The shape of filter f under reading r (the paper's K, P, importance
 * 1..50, threshold 25), with the given draw. Exits on errors. */
void sx_params(sx_filter f, sx_reading r, ebb_stable_draw draw,
               ebb_stable_params *out);

/* Creates a filter or exits. */
ebb_stable *sx_create(const ebb_stable_params *params, uint64_t seed);

/* Keys: 16 bytes, a stream number and an index (exp_common.h's layout). */
void sx_key(uint64_t stream, uint64_t index, unsigned char out[16]);

/* The distribution of set levels when importances are uniform on the
 * integers 1..50 (the paper's synthetic importance), mapped by
 * ebb_stable_level under params: probs[v], v = 0..Max. */
void sx_level_probs(const ebb_stable_params *params, double *probs);

/* ------------------------------------------------------------------------ */
/* The cell chain, step by step                                             */
/* ------------------------------------------------------------------------ */

/*
 * One insertion of a new item, as the analysis models it (stable.h,
 * src/stable/analysis.c): a cell is decremented with probability p_v, then
 * set with probability s = 1 - (1 - 1/m)^K (one of the item's K independent
 * hash positions) to max(cell, t), t drawn from level_probs. p_v = P/m for every v > 0, except
 * IBF_H, where each of the P decrements picks a non-zero cell with
 * probability proportional to 1/value by rejection (a draw accepts a cell
 * at u with probability 1/u, zeros never): S = sum_u dist[u]/u over u > 0
 * is a draw's acceptance probability, a decrement succeeds unless all
 * EBB_STABLE_H_MAX_DRAWS draws fail, and p_v = P (1 - (1 - S)^draws) /
 * (v m S), capped at 1.
 */
typedef struct sx_chain {
    uint32_t max;
    double set;      /* 1 - (1 - 1/m)^K              */
    double dec;      /* P/m                          */
    double pm;       /* P/m, for IBF_H's weights     */
    bool weighted;   /* IBF_H                        */
    double probs[SX_MAX_LEVELS];
    double dist[SX_MAX_LEVELS];
    double next[SX_MAX_LEVELS];
} sx_chain;

/* Starts at all zeros (dist[0] = 1). level_probs NULL: the variant's
 * default as in stable.h. */
void sx_chain_init(sx_chain *c, const ebb_stable_params *params,
                   const double *level_probs);
void sx_chain_step(sx_chain *c);
/* Steps until every state's probability is within tol of target (the
 * stationary distribution), at most `most` steps; returns the steps taken
 * (`most` when it never got there). */
uint64_t sx_chain_settle(sx_chain *c, const double *target, double tol,
                         uint64_t most);

/* The largest |a[v] - b[v]| over v = 0..max. */
double sx_max_abs_diff(const double *a, const double *b, uint32_t max);

#endif
