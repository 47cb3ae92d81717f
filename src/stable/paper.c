/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * paper.c: the IBF paper's closed forms for the limiting distribution of a
 * cell (Kulkarni et al., Section III, Figs. 2 and 4), kept only so that the
 * tests and docs/stable.md can compare them with the exact chain of
 * analysis.c. The filter never uses them.
 *
 * The paper's chain (Fig. 1 / Fig. 3): per step a cell goes down by one
 * with p' = p (1 - k) (decremented and not set), is set with probability
 * k to a target (2C: M/2 or M, half each; MC: uniform over 1..M) and then
 * moves to max(cell, target), otherwise stays. The exact chain moves down
 * with d (1 - s Q_v) instead: a cell that is decremented and then set to a
 * target below its old value still went down. The two agree for PLAIN
 * (Q_v = 1) and differ by a relative O(k) in the rates of the states above
 * a target otherwise; docs/stable.md gives the numbers.
 */
#include <math.h>

#include "stable/analysis_internal.h"

static double finish(uint32_t max, double *dist)
{
    double sum = 0.0;
    for (uint32_t v = 1; v <= max; v++)
        sum += dist[v];
    dist[0] = 1.0 - sum;
    return dist[0];
}

double ebb_stable_paper_2c(uint32_t max, uint32_t half, double p, double k,
                           ebb_stable_paper_2c_form form, double *dist)
{
    if (max < 3 || half < 1 || half >= max) {
        for (uint32_t v = 0; v <= max; v++)
            dist[v] = NAN;
        return NAN;
    }
    double down = p * (1.0 - k); /* p'                                 */
    double top_ratio = down / (down + k / 2.0); /* p' / (1 - p_2)          */
    double low_ratio = down / (down + k);       /* p' / (1 - p_1)          */
    dist[max] = (k / 2.0) / (down + k / 2.0);
    double above = dist[max]; /* A = V_{M/2+1} + ... + V_M */
    for (uint32_t v = max - 1u; v > half; v--) {
        dist[v] = pow(top_ratio, (double)(max - v)) * dist[max];
        above += dist[v];
    }
    /* "M/2" as the number of states above M/2 (max - half). */
    double b = pow(top_ratio, (double)(max - half));
    switch (form) {
    case EBB_STABLE_PAPER_2C_FIG2:
        dist[half] = (k / 2.0) / (down + k) * (1.0 - above + b / (down + k));
        break;
    case EBB_STABLE_PAPER_2C_TEXT:
        dist[half] = (k / 2.0) / (down + k / 2.0) * (1.0 - above - b);
        break;
    default:
        dist[half] = (k / 2.0) / (down + k) * (1.0 - above + b);
        break;
    }
    for (uint32_t v = 1; v < half; v++)
        dist[v] = pow(low_ratio, (double)(half - v)) * dist[half];
    return finish(max, dist);
}

double ebb_stable_paper_mc(uint32_t max, double p, double k,
                           ebb_stable_paper_mc_form form, double *dist)
{
    if (max < 2) {
        for (uint32_t v = 0; v <= max; v++)
            dist[v] = NAN;
        return NAN;
    }
    double down = (1.0 - k) * p; /* p' */
    double m = (double)max;
    /* dist[] holds U_i = V_i / V_0 until the end. */
    dist[0] = 1.0;
    dist[1] = k / down;
    double total = 1.0 + dist[1]; /* A_i */
    double inflow = 0.0;          /* B_i */
    for (uint32_t i = 2; i <= max; i++) {
        if (i == 2 || form == EBB_STABLE_PAPER_MC_SOLVED)
            inflow += k / m * dist[i - 2u];
        else
            inflow += k / m * dist[i - 1u];
        double out = ((m - (double)i + 1.0) / m * k + down) * dist[i - 1u];
        dist[i] = (out - inflow) / down;
        total += dist[i];
    }
    double zero = 1.0 / total;
    for (uint32_t v = 1; v <= max; v++)
        dist[v] *= zero;
    dist[0] = zero;
    return zero;
}
