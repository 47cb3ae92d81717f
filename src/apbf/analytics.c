/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * analytics.c: the false-positive and access recursions of the paper's
 * sections 5.3 and 5.4, and the match probabilities they are fed with.
 *
 * The false-positive recursion. With fill ratios r_0 (newest) .. r_{k+l-1},
 * a query succeeds when some run of k consecutive slices starting at
 * positions 0..l all match:
 *
 *   F(a, i) = 1                                        if a = k
 *           = 0                                        if i > l + a
 *           = r_i F(a + 1, i + 1) + (1 - r_i) F(0, i + 1)  otherwise
 *
 * and the rate is F(0, 0). Evaluated bottom-up in i with one row of k + 1
 * values, so it needs O(k) memory and O(k (k + l)) time.
 *
 * The access recursion. Algorithm 1 walks from slice l; state (p, c, i):
 * p matches carried from before the last jump, c matches since, i the slice
 * about to be read. A(k,l,p,c,a,i) of the paper accumulates the accesses a
 * of queries that end false; we split it into Pf (probability of ending
 * false from a state) and Acc (expected future accesses on false paths):
 *
 *   match  (prob r_i):     -> (p, c + 1, i + 1), true when p + c + 1 = k
 *   miss   (prob 1 - r_i): -> (c, 0, i - k),     false when i - k < 0
 *   Pf  = r Pf' + (1 - r) Pf''
 *   Acc = r (Acc' + Pf') + (1 - r) (Acc'' + Pf'')   (each step is 1 access)
 *
 * and the expected accesses of a false query are Acc / Pf at (0, 0, l).
 * Ordering states by the start of the current run, s = i - c, a match keeps
 * s and a miss moves to s - (k - c) < s, so sweeping s upwards from 0 needs
 * only the (p, c = 0) values of the previous k starts: a ring of
 * (k + 1) x k values on the stack, no allocation.
 */
#include <math.h>
#include <string.h>

#include "apbf/apbf_internal.h"

/* ------------------------------------------------------------------------ */
/* Recursions                                                               */
/* ------------------------------------------------------------------------ */

ebb_status ebb_apbf_worst_fill(uint32_t k, uint32_t l, ebb_fill_model model,
                               double *ratios)
{
    if (!ebb_age_kl_valid(k, l) || ratios == NULL ||
        (model != EBB_FILL_GEOMETRIC && model != EBB_FILL_LINEAR))
        return EBB_EINVAL;
    for (uint32_t i = 0; i < k; i++) {
        double j = (double)(i + 1);
        ratios[i] = model == EBB_FILL_LINEAR ? j / (2.0 * k)
                                             : 1.0 - exp2(-j / (double)k);
    }
    for (uint32_t i = k; i < k + l; i++)
        ratios[i] = 0.5;
    return EBB_OK;
}

static bool ratios_valid(uint32_t k, uint32_t l, const double *r)
{
    if (!ebb_age_kl_valid(k, l) || r == NULL)
        return false;
    for (uint32_t i = 0; i < k + l; i++)
        if (!(r[i] >= 0.0 && r[i] <= 1.0))
            return false;
    return true;
}

double ebb_apbf_fp_ratios(uint32_t k, uint32_t l, const double *r)
{
    if (!ratios_valid(k, l, r))
        return NAN;
    /* next[a] = F(a, i + 1); starts at i + 1 = k + l, past every slice. */
    double next[EBB_APBF_MAX_K + 1], cur[EBB_APBF_MAX_K + 1];
    for (uint32_t a = 0; a <= k; a++)
        next[a] = a == k ? 1.0 : 0.0;
    for (uint32_t i = k + l; i-- > 0;) {
        cur[k] = 1.0;
        for (uint32_t a = 0; a < k; a++)
            cur[a] = i > l + a ? 0.0
                               : r[i] * next[a + 1] + (1.0 - r[i]) * next[0];
        memcpy(next, cur, sizeof(double) * (k + 1));
    }
    return next[0];
}

double ebb_apbf_fp(uint32_t k, uint32_t l)
{
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    if (ebb_apbf_worst_fill(k, l, EBB_FILL_GEOMETRIC, r) != EBB_OK)
        return NAN;
    return ebb_apbf_fp_ratios(k, l, r);
}

/* Values of the states (p, c = 0) at one run start s. */
typedef struct start_values {
    double pf[EBB_APBF_MAX_K];   /* probability of ending false          */
    double accf[EBB_APBF_MAX_K]; /* expected reads on paths ending false */
    double acc[EBB_APBF_MAX_K];  /* expected reads on all paths          */
    double pt[EBB_APBF_MAX_K];   /* probability of ending true           */
    double acct[EBB_APBF_MAX_K]; /* expected reads on paths ending true  */
} start_values;

/* Kept apart (not derived as 1 - pf, acc - accf) so that rare outcomes keep
 * their precision when the other one is near certain. */
typedef struct state_values {
    double pf, accf, acc, pt, acct;
} state_values;

/* The state after a miss at slice i carrying c matches: (c, 0, i - k). */
static state_values after_miss(const start_values *ring, uint32_t ring_size,
                               int64_t i, uint32_t k, uint32_t c)
{
    int64_t s = i - (int64_t)k;
    if (s < 0) /* walked off the new end: the query returns false */
        return (state_values){1.0, 0.0, 0.0, 0.0, 0.0};
    const start_values *v = &ring[(uint64_t)s % ring_size];
    return (state_values){v->pf[c], v->accf[c], v->acc[c], v->pt[c],
                          v->acct[c]};
}

/* Pf, Acc_false and Acc_all of Algorithm 1 from its first state (0, 0, l). */
static state_values walk(uint32_t k, uint32_t l, const double *r)
{
    start_values ring[EBB_APBF_MAX_K + 1];
    uint32_t ring_size = k + 1;
    for (uint32_t s = 0; s <= l; s++) {
        start_values *out = &ring[s % ring_size];
        for (uint32_t p = 0; p < k; p++) {
            /* Sweep c downwards: (p, c) needs (p, c + 1) at the same start;
             * p + c + 1 = k means the match completes a run: true. */
            state_values next = {0.0, 0.0, 0.0, 1.0, 0.0};
            for (uint32_t c = k - p; c-- > 0;) {
                int64_t i = (int64_t)s + c;
                double hit = r[i], miss = 1.0 - r[i];
                state_values m = after_miss(ring, ring_size, i, k, c);
                state_values v;
                v.pf = hit * next.pf + miss * m.pf;
                v.accf = hit * (next.accf + next.pf) + miss * (m.accf + m.pf);
                v.acc = 1.0 + hit * next.acc + miss * m.acc;
                v.pt = hit * next.pt + miss * m.pt;
                v.acct = hit * (next.acct + next.pt) + miss * (m.acct + m.pt);
                next = v;
            }
            out->pf[p] = next.pf;
            out->accf[p] = next.accf;
            out->acc[p] = next.acc;
            out->pt[p] = next.pt;
            out->acct[p] = next.acct;
        }
    }
    const start_values *top = &ring[l % ring_size];
    return (state_values){top->pf[0], top->accf[0], top->acc[0], top->pt[0],
                          top->acct[0]};
}

double ebb_apbf_accesses_false_ratios(uint32_t k, uint32_t l, const double *r)
{
    if (!ratios_valid(k, l, r))
        return NAN;
    state_values root = walk(k, l, r);
    return root.pf > 0.0 ? root.accf / root.pf : NAN;
}

double ebb_apbf_accesses_false(uint32_t k, uint32_t l)
{
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    if (ebb_apbf_worst_fill(k, l, EBB_FILL_GEOMETRIC, r) != EBB_OK)
        return NAN;
    return ebb_apbf_accesses_false_ratios(k, l, r);
}

/* Expected reads of a query for an item of the window at the worst moment:
 * its k slices start at some j in 0..l-1 (the l full generations of the
 * window) and match for sure. Averaged over j, as the paper's Table 2 does.
 * O(k^2 l^2) in all. */
static double window_item_accesses(uint32_t k, uint32_t l, const double *r)
{
    double forced[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    double sum = 0.0;
    for (uint32_t j = 0; j < l; j++) {
        for (uint32_t i = 0; i < k + l; i++)
            forced[i] = i >= j && i < j + k ? 1.0 : r[i];
        sum += walk(k, l, forced).acc;
    }
    return sum / (double)l;
}

ebb_status ebb_apbf_expected_accesses(uint32_t k, uint32_t l,
                                      const double *ratios,
                                      ebb_apbf_accesses *out)
{
    if (out == NULL || !ratios_valid(k, l, ratios))
        return EBB_EINVAL;
    state_values root = walk(k, l, ratios);
    out->false_query = root.pf > 0.0 ? root.accf / root.pf : NAN;
    out->false_positive = root.pt > 0.0 ? root.acct / root.pt : NAN;
    out->window_item = window_item_accesses(k, l, ratios);
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Match probabilities of an exact shape                                    */
/* ------------------------------------------------------------------------ */

/* The probability that a block with a Poisson(lambda) load of keys answers
 * yes for a new key: all b of its parts (B / b bits each) have the key's bit
 * set, (1 - (1 - b/B)^j)^b at load j. */
double ebb_apbf_block_fp(double lambda, uint32_t block_bits,
                         uint32_t block_hashes)
{
    double stay_clear = 1.0 - (double)block_hashes / (double)block_bits;
    double term = exp(-lambda), sum = 0.0, clear = 1.0;
    double last = lambda + 12.0 * sqrt(lambda) + 40.0;
    for (double j = 0.0; j <= last; j += 1.0) {
        sum += term * pow(1.0 - clear, (double)block_hashes);
        clear *= stay_clear;
        term *= lambda / (j + 1.0);
    }
    return sum;
}

void ebb_apbf_block_ratios(const ebb_apbf_params *p, double generation_load,
                           double *r)
{
    /* Slice i holds min(i + 1, k) generations: k distinct values. */
    for (uint32_t i = 0; i < p->k; i++)
        r[i] = ebb_apbf_block_fp((double)(i + 1) * generation_load,
                                 p->block_bits, p->block_hashes);
    for (uint32_t i = p->k; i < p->k + p->l; i++)
        r[i] = r[p->k - 1];
}

double ebb_apbf_npws(uint32_t k, uint32_t l)
{
    if (!ebb_age_kl_valid(k, l))
        return NAN;
    return (2.0 - exp2(1.0 - (double)k)) / (double)l;
}

