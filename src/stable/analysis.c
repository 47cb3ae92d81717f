/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * analysis.c: one cell of a stable / importance-aware filter as a Markov
 * chain over 0..Max, solved exactly.
 *
 * The step. Per insertion of a new item (uniformly hashed) a given cell
 *   1. is decremented (if > 0) with probability d_v: P/m for PLAIN, IBF_2C
 *      and IBF_MC whichever way the P distinct cells are drawn; for IBF_H
 *      each of the P decrements draws uniform cells, rejects zeros and
 *      accepts a cell at u with probability 1/u, at most 64 draws, so a
 *      decrement lands on a given cell at v with probability
 *          h_v = (1 / (m v)) (1 - (1 - a)^64) / a,  a = sum_{u>=1} V_u / u,
 *      and d_v = min(1, P h_v). The mean field a is the acceptance
 *      probability of one draw over the stationary distribution V; the
 *      P decrements of one insertion hitting the same cell twice (a
 *      probability of order (P h_v)^2) is neglected;
 *   2. then, with probability s = 1 - (1 - 1/m)^K (it is one of the item's
 *      K hash positions, which are independent and may coincide), becomes
 *      max(cell, t), the target t drawn from the level distribution q.
 * For every variant but IBF_H this is the exact law of one cell: the
 * decrement draws and the hashes of new items are independent of the past.
 *
 * Stationary distribution in O(Max). A step moves a cell down by at most
 * one, and only a set moves it up, so across the cut {< j} | {>= j}
 * (j = 1..Max) the flow down is V_j d_j (1 - s Q_j) (at j, decremented, not
 * set to j or more) and the flow up is s Q_j F_{j-1} (below j, set to j or
 * more), Q_j = P(t >= j), F_j = V_0 + ... + V_j. Balance gives
 *     V_j = F_j s Q_j / (d_j (1 - s Q_j) + s Q_j),
 *     F_{j-1} = F_j d_j (1 - s Q_j) / (d_j (1 - s Q_j) + s Q_j),
 * computed from F_Max = 1 downwards: no subtraction, no overflow, every
 * V_j to a few ulps. V_0 = prod_j 1 / (1 + r_j), r_j = s Q_j /
 * (d_j (1 - s Q_j)); for PLAIN (Q_j = 1) with s = K/m this is Deng and
 * Rafiei's Z = (1 / (1 + 1 / (P (1/K - 1/m))))^Max exactly, with the exact
 * s = 1 - (1 - 1/m)^K it differs from it by a factor 1 + O(Max K / m).
 * IBF_H: d_j depends on a, a on V; a is the root of
 * g(a) = sum_{u>=1} V_u(a) / u - a on [0, 1] (g(0) >= 0 >= g(1)), found by
 * bisection to 1e-16, so V is a fixed point within about 1e-15.
 *
 * False negatives at gap g. The duplicate's previous occurrence x made its
 * K cells max(cell after x's decrement, L) (cell ~ V before it); the items
 * 1..g-1 after x are full steps of the chain; the g-th item is x again,
 * whose query precedes its own update. So g - 1 steps lie between x's
 * update and the query: z = P(cell = 0 after g - 1 steps from
 * max(D V, L)), and FN = 1 - (1 - z)^K, the K cells treated as independent
 * (they share the decrement draws, a correlation of order P/m; coinciding
 * positions, of order K^2/m, are neglected too).
 *
 * Evolving g - 1 steps. Per step a cell moves with probability at most
 * rho = max_v (d_v (1 - s Q_v) + s Q_{v+1}), about (P + K)/m, so by
 * uniformisation T = (1 - rho) I + rho J with J stochastic and
 *     u T^n = sum_k Binomial(n, rho)(k) u J^k:
 * only about n rho + 10 sqrt(n rho) jumps matter, each O(Max) (prefix sums;
 * every term is a product of non-negative numbers, no cancellation). The
 * sum stops when the binomial tail is below 1e-17 or when u J^k is within
 * 1e-13 (L1) of V, where it stays (the rest of the sum is then V_0 times
 * the remaining weight). The cost is O(Max min(n rho, k_mix)), k_mix the
 * jumps J needs to mix: m/4 steps are about (P + K)/4 jumps; a cell forgets its start within about
 * Max (1 + K/P) ln(1e13) jumps, so for d <= 8 every gap takes below
 * 2^28 cell updates (about 0.3 s). Past that budget (long gaps with
 * d >= 9, Max >= 511) the call is refused with EBB_EOVERFLOW rather
 * than run for minutes.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "stable/analysis_internal.h"

/* Cell updates the uniformised evolution may spend (about 0.3 s). */
#define JUMP_WORK_LIMIT ((double)(UINT64_C(1) << 28))
/* L1 distance to V below which the evolved distribution counts as V. */
#define MIXED_L1 1e-13
/* Binomial tail weight below which the remaining jumps are dropped. */
#define TAIL_WEIGHT 1e-17
#define LEVEL_SUM_TOLERANCE 1e-9

/* The chain's rates and its stationary distribution, in one allocation. */
typedef struct chain {
    uint32_t max;
    double set;        /* s                                               */
    double *targets;   /* q_v, v = 0..Max                                  */
    double *at_least;  /* Q_v = sum_{t >= v} q_t, v = 0..Max + 1          */
    double *decrement; /* d_v, v = 0..Max (d_0 = 0)                        */
    double *stationary;/* V_v, v = 0..Max                                  */
    double *block;
} chain;

static void chain_free(chain *c)
{
    ebb_mem_free(c->block);
    c->block = NULL;
}

static bool level_probs_valid(const double *level_probs, uint32_t max)
{
    if (level_probs[0] != 0.0)
        return false;
    double sum = 0.0;
    for (uint32_t v = 1; v <= max; v++) {
        if (!isfinite(level_probs[v]) || level_probs[v] < 0.0)
            return false;
        sum += level_probs[v];
    }
    return fabs(sum - 1.0) <= LEVEL_SUM_TOLERANCE;
}

static void default_targets(const ebb_stable_params *params, double *q)
{
    uint32_t max = ebb_stable_max_level(params->cell_bits);
    for (uint32_t v = 0; v <= max; v++)
        q[v] = 0.0;
    switch (params->variant) {
    case EBB_STABLE_IBF_2C:
        q[max] += 0.5;
        q[ebb_stable_half_level(params->cell_bits)] += 0.5;
        break;
    case EBB_STABLE_IBF_MC:
    case EBB_STABLE_IBF_H:
        for (uint32_t v = 1; v <= max; v++)
            q[v] = 1.0 / (double)max;
        break;
    default:
        q[max] = 1.0;
        break;
    }
}

/* V from the rates by the cut balance (see the essay). */
static void solve_stationary(const chain *c, double *dist)
{
    double below = 1.0; /* F_j */
    for (uint32_t j = c->max; j >= 1; j--) {
        double up = c->set * c->at_least[j];
        double down = c->decrement[j] * (1.0 - up);
        double denominator = down + up;
        dist[j] = below * up / denominator;
        below = below * down / denominator;
    }
    dist[0] = below;
}

/* (1 - (1 - a)^64) / a: expected accepted decrements per unit acceptance,
 * 64 at a = 0. */
static double draws_factor(double a)
{
    if (a <= 0.0)
        return (double)EBB_STABLE_H_MAX_DRAWS;
    return -expm1((double)EBB_STABLE_H_MAX_DRAWS * log1p(-a)) / a;
}

static void weighted_decrements(chain *c, double p_over_m, double a)
{
    double per_value = p_over_m * draws_factor(a);
    c->decrement[0] = 0.0;
    for (uint32_t v = 1; v <= c->max; v++) {
        double d = per_value / (double)v;
        c->decrement[v] = d < 1.0 ? d : 1.0;
    }
}

static double acceptance(const chain *c)
{
    double a = 0.0;
    for (uint32_t v = c->max; v >= 1; v--)
        a += c->stationary[v] / (double)v;
    return a;
}

/* IBF_H: the acceptance a consistent with its own stationary law. */
static void solve_weighted(chain *c, double p_over_m)
{
    double low = 0.0, high = 1.0;
    for (int i = 0; i < 200 && high - low > 1e-16; i++) {
        double mid = 0.5 * (low + high);
        weighted_decrements(c, p_over_m, mid);
        solve_stationary(c, c->stationary);
        if (acceptance(c) > mid)
            low = mid;
        else
            high = mid;
    }
    weighted_decrements(c, p_over_m, 0.5 * (low + high));
    solve_stationary(c, c->stationary);
}

static ebb_status chain_init(const ebb_stable_params *params,
                             const double *level_probs, chain *c)
{
    if (ebb_stable_params_check(params) != EBB_OK || params->p == 0)
        return EBB_EINVAL;
    uint32_t max = ebb_stable_max_level(params->cell_bits);
    if (level_probs != NULL && !level_probs_valid(level_probs, max))
        return EBB_EINVAL;
    size_t n = (size_t)max + 2u;
    c->block = ebb_mem_alloc(5u * n * sizeof(double));
    if (c->block == NULL)
        return EBB_ENOMEM;
    c->max = max;
    c->targets = c->block;
    c->at_least = c->targets + n;
    c->decrement = c->at_least + n;
    c->stationary = c->decrement + n;

    if (level_probs == NULL) {
        default_targets(params, c->targets);
    } else {
        double sum = 0.0;
        for (uint32_t v = 1; v <= max; v++)
            sum += level_probs[v];
        c->targets[0] = 0.0;
        for (uint32_t v = 1; v <= max; v++)
            c->targets[v] = level_probs[v] / sum;
    }
    c->at_least[max + 1u] = 0.0;
    for (uint32_t v = max + 1u; v-- > 0;)
        c->at_least[v] = c->at_least[v + 1u] + c->targets[v];
    for (uint32_t v = 1; v <= max; v++) /* exactly 1: sums round */
        if (c->at_least[v] > 1.0)
            c->at_least[v] = 1.0;

    double m = (double)params->cells;
    c->set = -expm1((double)params->k * log1p(-1.0 / m));
    double p_over_m = (double)params->p / m;
    if (params->variant == EBB_STABLE_IBF_H) {
        solve_weighted(c, p_over_m);
    } else {
        c->decrement[0] = 0.0;
        for (uint32_t v = 1; v <= max; v++)
            c->decrement[v] = p_over_m;
        solve_stationary(c, c->stationary);
    }
    return EBB_OK;
}

ebb_status ebb_stable_chain_rates(const ebb_stable_params *params,
                                  const double *level_probs, double *set,
                                  double *decrement, double *targets)
{
    if (set == NULL || decrement == NULL || targets == NULL)
        return EBB_EINVAL;
    chain c;
    ebb_status status = chain_init(params, level_probs, &c);
    if (status != EBB_OK)
        return status;
    *set = c.set;
    memcpy(decrement, c.decrement, ((size_t)c.max + 1u) * sizeof(double));
    memcpy(targets, c.targets, ((size_t)c.max + 1u) * sizeof(double));
    chain_free(&c);
    return EBB_OK;
}

ebb_status ebb_stable_stationary(const ebb_stable_params *params,
                                 const double *level_probs, double *dist)
{
    if (dist == NULL)
        return EBB_EINVAL;
    chain c;
    ebb_status status = chain_init(params, level_probs, &c);
    if (status != EBB_OK)
        return status;
    memcpy(dist, c.stationary, ((size_t)c.max + 1u) * sizeof(double));
    chain_free(&c);
    return EBB_OK;
}

ebb_status ebb_stable_analyse(const ebb_stable_params *params,
                              const double *level_probs,
                              ebb_stable_analysis *out)
{
    if (out == NULL)
        return EBB_EINVAL;
    chain c;
    ebb_status status = chain_init(params, level_probs, &c);
    if (status != EBB_OK)
        return status;
    double mean = 0.0;
    for (uint32_t v = 1; v <= c.max; v++)
        mean += (double)v * c.stationary[v];
    double zeros = c.stationary[0];
    out->zero_fraction = zeros;
    out->fps = exp((double)params->k * log1p(-zeros));
    out->mean_level = mean;
    chain_free(&c);
    return EBB_OK;
}

double ebb_stable_zero_fraction_closed_form(uint64_t cells, uint32_t cell_bits,
                                            uint32_t k, uint32_t p)
{
    ebb_stable_params params;
    if (ebb_stable_params_init(cells, cell_bits, k, p, &params) != EBB_OK ||
        p == 0 || (uint64_t)k >= cells)
        return NAN;
    double x = (double)p * (1.0 / (double)k - 1.0 / (double)cells);
    double max = (double)ebb_stable_max_level(cell_bits);
    return exp(-max * log1p(1.0 / x));
}

/* ---- Evolution ----------------------------------------------------------- */

/* Probability of leaving v in one step (no cancellation). */
static double leave_rate(const chain *c, uint32_t v)
{
    double down = v == 0 ? 0.0
                         : c->decrement[v] * (1.0 - c->set * c->at_least[v]);
    return down + c->set * c->at_least[v + 1u];
}

/* out = u J with J = I + (T - I) / rho; rho = 1 gives out = u T. out must
 * not alias u. leave[v] is leave_rate(c, v). */
static void jump(const chain *c, const double *leave, double rho,
                 const double *u, double *out)
{
    double below = 0.0; /* mass of u below w */
    for (uint32_t w = 0; w <= c->max; w++) {
        double stay = (rho - leave[w]) / rho;
        if (stay < 0.0)
            stay = 0.0;
        double value = u[w] * stay;
        if (w < c->max)
            value += u[w + 1u] * c->decrement[w + 1u] *
                     (1.0 - c->set * c->at_least[w + 1u]) / rho;
        value += below * c->set * c->targets[w] / rho;
        below += u[w];
        out[w] = value;
    }
}

/* The cells of the item right after its own update: max(D V, L). */
static void after_insert(const chain *c, uint32_t level, double *u)
{
    for (uint32_t v = 0; v <= c->max; v++) {
        double kept = v == 0 ? c->stationary[0]
                             : c->stationary[v] * (1.0 - c->decrement[v]);
        double in = v < c->max ? c->stationary[v + 1u] * c->decrement[v + 1u]
                               : 0.0;
        u[v] = kept + in;
    }
    double low = 0.0;
    for (uint32_t v = 0; v < level; v++) {
        low += u[v];
        u[v] = 0.0;
    }
    u[level] += low;
}

static double l1_distance(const double *a, const double *b, uint32_t max)
{
    double d = 0.0;
    for (uint32_t v = 0; v <= max; v++)
        d += fabs(a[v] - b[v]);
    return d;
}

typedef enum evolve_result { EVOLVED, TOO_COSTLY } evolve_result;

/* P(cell = 0 after n steps from u), by uniformisation. work[] holds
 * 2 (Max + 2) doubles. */
static evolve_result evolve_jumps(const chain *c, const double *u0,
                                  uint64_t n, double *work, double *zero)
{
    uint32_t max = c->max;
    size_t len = (size_t)max + 1u;
    double *leave = work;
    double *u = leave + len + 1u;
    double *next = u + len;
    double rho = 0.0;
    for (uint32_t v = 0; v <= max; v++) {
        leave[v] = leave_rate(c, v);
        if (leave[v] > rho)
            rho = leave[v];
    }
    memcpy(u, u0, len * sizeof(double));
    if (rho >= 1.0)
        rho = 1.0;
    double nd = (double)n;
    double mean = nd * rho;
    double log_ratio = rho < 1.0 ? log(rho) - log1p(-rho) : 0.0;
    /* log of Binomial(n, rho)(k), k = 0 first. */
    double log_weight = rho < 1.0 ? nd * log1p(-rho) : (n == 0 ? 0.0 : -INFINITY);
    double total = 0.0, weight_sum = 0.0;
    double budget = JUMP_WORK_LIMIT / (double)(max + 1u);
    for (uint64_t k = 0;; k++) {
        double weight = exp(log_weight);
        if (rho >= 1.0)
            weight = k == n ? 1.0 : 0.0;
        total += weight * u[0];
        weight_sum += weight;
        if (k == n)
            break;
        double ratio_log = log((nd - (double)k) / (double)(k + 1u)) + log_ratio;
        if ((double)k >= mean && rho < 1.0) {
            double ratio = exp(ratio_log);
            if (ratio < 1.0 && weight * ratio / (1.0 - ratio) < TAIL_WEIGHT)
                break;
        }
        if ((k & 7u) == 7u &&
            l1_distance(u, c->stationary, max) <= MIXED_L1) {
            double rest = 1.0 - weight_sum;
            total += (rest > 0.0 ? rest : 0.0) * c->stationary[0];
            break;
        }
        if ((double)k > budget)
            return TOO_COSTLY;
        jump(c, leave, rho, u, next);
        /* J keeps the mass exactly; rounding would let it drift by an ulp
         * a jump, which over 10^6 jumps is visible at 1e-10. */
        double mass = 0.0;
        for (uint32_t v = 0; v <= max; v++)
            mass += next[v];
        for (uint32_t v = 0; v <= max; v++)
            next[v] /= mass;
        double *swap = u;
        u = next;
        next = swap;
        log_weight += ratio_log;
    }
    *zero = total;
    return EVOLVED;
}

ebb_status ebb_stable_fn_at_gap(const ebb_stable_params *params,
                                const double *level_probs, uint32_t level,
                                uint64_t gap, double *out)
{
    if (out == NULL || gap == 0 || params == NULL || level < 1 ||
        level > ebb_stable_max_level(params->cell_bits))
        return EBB_EINVAL;
    chain c;
    ebb_status status = chain_init(params, level_probs, &c);
    if (status != EBB_OK)
        return status;
    size_t len = (size_t)c.max + 2u;
    double *work = ebb_mem_alloc(4u * len * sizeof(double));
    if (work == NULL) {
        chain_free(&c);
        return EBB_ENOMEM;
    }
    double *u0 = work + 3u * len;
    after_insert(&c, level, u0);
    double zero = 0.0;
    if (evolve_jumps(&c, u0, gap - 1u, work, &zero) == TOO_COSTLY)
        status = EBB_EOVERFLOW;
    if (status == EBB_OK) {
        if (zero > 1.0)
            zero = 1.0;
        *out = -expm1((double)params->k * log1p(-zero));
    }
    ebb_mem_free(work);
    chain_free(&c);
    return status;
}
