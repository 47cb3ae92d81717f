/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * analysis_internal.h: what the tests and the experiments need from the
 * stable filter's analysis beyond the public API: the per-step rates of the
 * cell's Markov chain (to build the dense transition matrix the O(Max)
 * solution is checked against) and the IBF paper's closed forms, as printed
 * and as corrected (paper.c), for docs/stable.md's comparison.
 */
#ifndef EBB_STABLE_ANALYSIS_INTERNAL_H
#define EBB_STABLE_ANALYSIS_INTERNAL_H

#include "ebb/stable.h"

/* The rates of the chain ebb_stable_stationary solves, for a cell per
 * insertion of a new item: *set = s = 1 - (1 - 1/m)^K, the probability that
 * the cell is among the item's K cells; decrement[v] (Max + 1 entries,
 * decrement[0] = 0) the probability that a cell at v is decremented (P/m,
 * or IBF_H's mean-field rate at the stationary fixed point); targets[v]
 * (Max + 1 entries) the normalised level_probs. One step: decrement with
 * probability decrement[v], then with probability s become max(cell, t),
 * t ~ targets. Errors as ebb_stable_stationary. */
ebb_status ebb_stable_chain_rates(const ebb_stable_params *params,
                                  const double *level_probs, double *set,
                                  double *decrement, double *targets);

/* ---- The IBF paper's closed forms (paper.c) ------------------------------
 * p and k are the per-step probabilities of a decrement and of a set (the
 * paper writes p = P/M, k = K/M in Theorem III.3; the chain's are P/m and
 * about K/m). Each fills dist[0..max] and returns dist[0]; nothing is
 * validated beyond max >= 1. */

typedef enum ebb_stable_paper_2c_form {
    /* Fig. 2 as printed: V_{M/2} = (k/2)/(p' + k) (1 - A + B) with
     * B = (p'/(p' + k/2))^{M/2} / (p' + k). */
    EBB_STABLE_PAPER_2C_FIG2 = 0,
    /* The proof's last line: V_{M/2} = (k/2)/(p' + k/2) (1 - A - B) with
     * B = (p'/(p' + k/2))^{M/2}. */
    EBB_STABLE_PAPER_2C_TEXT = 1,
    /* The proof's balance equation for state M/2 solved correctly:
     * V_{M/2} = (k/2)/(p' + k) (1 - A + B), B = (p'/(p' + k/2))^{M/2}. */
    EBB_STABLE_PAPER_2C_SOLVED = 2
} ebb_stable_paper_2c_form;

/* IBF-2C (Fig. 2), p' = p (1 - k). For odd M the paper's M/2 is read as
 * `half` where it names a state and as max - half where it counts the
 * states above it (the two agree for even M). */
double ebb_stable_paper_2c(uint32_t max, uint32_t half, double p, double k,
                           ebb_stable_paper_2c_form form, double *dist);

typedef enum ebb_stable_paper_mc_form {
    /* Fig. 4 read with p' = (1 - k) p, U_1 = k / p', A_i = A_{i-1} + U_i
     * (the printed "(1 - K) x P", "K / p'", "var_1" and "A_i = U_i" are
     * typos: with them V_0 = 1 / U_M is not a distribution), and
     * B_i = B_{i-1} + (k/M) U_{i-1} as printed. */
    EBB_STABLE_PAPER_MC_FIG4 = 0,
    /* The same with B_i = B_{i-1} + (k/M) U_{i-2}: the inflow into state
     * i - 1 from the states below it, which the balance equation needs. */
    EBB_STABLE_PAPER_MC_SOLVED = 1
} ebb_stable_paper_mc_form;

/* IBF-MC (Fig. 4), targets uniform over 1..max. */
double ebb_stable_paper_mc(uint32_t max, double p, double k,
                           ebb_stable_paper_mc_form form, double *dist);

#endif /* EBB_STABLE_ANALYSIS_INTERNAL_H */
