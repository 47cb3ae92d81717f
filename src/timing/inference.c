/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inference.c: the inferential Timing and Block Timing Bloom filter.
 *
 * The paper
 * ---------
 * Dautrich and Ravishankar, "Inferential Time-Decaying Bloom Filters"
 * (EDBT 2013), sections 2 and 4: the posterior that x is among the last w
 * insertions given its timers, by Bayes over I_x, the insertions since x
 * was last inserted:
 *
 *   P(I_x < w | R_x) = sum_{i<w} P(i) P(R_x|i) / sum_i P(i) P(R_x|i)  (Eq. 10)
 *
 * with the continuous-stream prior P(i) = p q^i, q = 1 - p, p = p_x the
 * chance that x is the next insertion (Eq. 4).
 *
 * The likelihood
 * --------------
 * The evidence (observe): r distinct timers, the age lambda of the oldest
 * timestamp among them and the c timers holding it, b, or "expired". With
 * W = ceil((w - b) / B) and j0 = (lambda - 1) B + b (insertions since T_+
 * left the oldest timestamp T_x), P(R_x | i) is a step function of i:
 *
 *   0 < lambda <= W (Lemma 2):          lambda = 0 (Lemma 1, c = r):
 *     i < j0            0                 i < b       1
 *     j0 <= i < j0 + B  F(r, c, j0)       i >= b      F(r, 0, b)
 *     i >= j0 + B       G = F' F(r,c,j0)
 *
 *   expired (Theorem 2): 0 below the smallest age the evidence allows,
 *   a0 = W B + b (an expired timer is >= W + 1 old; an unswept timer of
 *   age lambda > W gives a0 = j0); the paper gives nothing beyond, so ebb
 *   takes the likelihood flat there and the prior decides.
 *
 * F(r, c, j) = u^c (1 - u)^(r-c), u = (1 - 1/m)^(k D(j)) (Eq. 21); F' is
 * the chance that the c oldest timers were all touched in T_x's block.
 * The paper (Eq. 25) takes F' = F(c, 0, B), all D(B) items of the block;
 * ebb counts only the block's items that did not come back in the j0
 * insertions since, D(j0 + B) - D(j0) (a returning item would have renewed
 * the timer). On a stream with repeats Eq. 25 overweights "x is older than
 * its timers": with it the uniform stream's bins at lambda = W read
 * in-window fractions 0.17 where the posterior said 0.125, 0.54 for 0.43
 * (w = |U| = 2^16, bpi 4, k 2); with the correction every bin is within
 * 0.01 (tests/stats/test_timing_calibration.c). For DISTINCT the two are
 * equal and F(c, 0, B) is cached per c (section 4.4).
 *
 * The sums
 * --------
 * Divided by its first nonzero value the likelihood is: 0 below start,
 * 1 on [start, start + span), `tail` beyond (span = B, tail = F' for
 * 0 < lambda <= W; start = 0, span = b, tail = F(r, 0, b) for lambda = 0;
 * span infinite for expired). Every sum is then a geometric one, factored
 * by p q^start:
 *
 *   Z      = (1 - q^span) + tail q^span
 *   P(I_x < w' | R_x), d = w' - start (0 when d <= 0):
 *          = (1 - q^d) / Z                                   d <= span
 *          = [(1 - q^span) + tail q^span (1 - q^(d-span))] / Z   d > span
 *   E[I_x | R_x] = start + [(1 - q^span) mu_span
 *                           + tail q^span (span + q/p)] / Z
 *   mode   = start (weights fall within each range and tail <= 1)
 *
 * for any w' <= w: the evidence does not depend on the query's window, so
 * Theorems 3, 4 and 5 (Eqs. 23, 26, 27) are the case w' = w (tested
 * against them and against brute-force sums). mu_n, the mean of t q^t
 * over t = 0..n-1, comes from sum_{t<n} t q^t = q (1 - n q^(n-1)
 * + (n-1) q^n) / p^2 divided by sum_{t<n} q^t = (1 - q^n) / p:
 * mu_n = q/p - n q^n / (1 - q^n), and mu_inf = q/p (the tail,
 * sum_{i>=a} i p q^i = q^a (a + q/p)). Expired evidence: P = 0, E = a0 +
 * q/p (the prior's mean beyond a0), mode a0.
 *
 * The TBF (B = 1) has b = 0 always, so lambda = 0 never occurs (a timer
 * holding T_+ right after it advanced is impossible: Theorem 3 with b = 0
 * would have all-zero likelihood); such evidence is EBB_EINVAL, as is
 * lambda = 1, b = 0 with c < r (no insertion since T_x's block could
 * have made a timer younger).
 *
 * Cost
 * ----
 * Per filter (ebb_timing_cache, refreshed with the model): k ln(1 - 1/m),
 * F(c, 0, B) for c = 0..k, the model's constants (for UNIFORM also q^w
 * and q^(w - B)) and the default prior's ln q, q^B, 1 - q^B and mu_B.
 * Per query: the timers, read as the standard query reads them
 * (timing_internal.h's timing_observe, stopping at the first expired
 * timer: expired evidence is then answered with no power of q, one
 * division for a query's own prior); otherwise the counts by compares and
 * selects, not branches (random counts mispredicted), one expm1 for the
 * posterior and, for F', one expm1 and one exp (UNIFORM, beside the
 * posterior's expm1) or two logs (ZIPF); a query's own prior adds log1p,
 * expm1 and a division. Where the time went (callgrind on
 * x86-64-v3, w = 1e6, the bench's shape k = 4, B = 500000, half the
 * queries present): the evidence read all k timers and counted them with
 * a branch per timer, 2.6 mispredicted branches a query; the answer took
 * three exponentials even for expired evidence with a query's prior.
 *
 * Measured (`make bench` at f58f216: build-bench/bench/ebb-bench, Release,
 * -march=native; a 2-vCPU EPYC VM, the machine idle, ns per call, medians
 * of 3): the BTBF at the APBF default's memory (k = 4, bpt 3, B = w / 2,
 * P = 3), fp 1%, 16-byte keys, half present, uniform model over 10 w
 * items with its default prior, costs 1 and 1:
 *                        standard query   posterior query   ratio
 *   before (23e677f)     32.6, 33.7       70.1, 70.6        2.15, 2.09
 *   f58f216, w = 1e6     32.70            58.19             1.78
 *   f58f216, w = 1e8     137.72           222.06            1.61
 * (the "before" row: w = 1e6, `ebb-bench --quick --runs 5`, two runs.)
 * A per-query Zipf prior (not in the bench: a scratch driver, the same
 * shape, 8-byte keys, contains and infer interleaved over the same keys,
 * median of 15 passes, three runs): before 3.1-3.8x, now 2.45-2.47x
 * (31-33 ns against 77-79). For present keys alone the posterior costs
 * ~2.8x (74 ns against 27: the two dependent exponentials of F' and the
 * division by Z, ~40 ns of latency); for absent ones 1.3x.
 */
#include <float.h>
#include <math.h>

#include "core/hash.h"
#include "timing/inference.h"
#include "timing/model.h"
#include "timing/timing_internal.h"

/* ---- The prior ------------------------------------------------------------
 * P(i) = p q^i with q = 1 - p (Eq. 4). Every sum below is over a run of
 * consecutive ages, so the prior enters only through q^n and 1 - q^n, taken
 * from -expm1(n ln q) with ln q = log1p(-p): it keeps full relative
 * precision when p is far below the rounding of 1 (|U| = 2^40 gives
 * p = 1e-12, where 1 - q^n computed as 1 - pow(1 - p, n) would keep four
 * digits). p = 1 gives ln q = -inf, q^0 = 1 and q^n = 0 for n > 0.
 * What depends on p and B only (the common range of ages has length B) is
 * prepared once per prior, and once per filter for the model's default;
 * a query's own prior is prepared only as far as its evidence reads it. */

/* q^n and 1 - q^n, n >= 0, from one expm1: q^n as 1 + expm1(n ln q) keeps
 * its relative precision while q^n >= 1/2; below, q^n takes its own exp. */
static void q_run(double log_q, double n, double *q_n, double *rest)
{
    if (n == 0.0) { /* n ln q would be NaN for p = 1 */
        *q_n = 1.0;
        *rest = 0.0;
        return;
    }
    double e = expm1(n * log_q);
    *rest = -e;
    *q_n = e > -0.5 ? 1.0 + e : exp(n * log_q);
}

/* Mean of t over t = 0..n-1 weighted by q^t (n finite, >= 1):
 * q/p - n q^n / (1 - q^n) = 1/expm1(x) - n/expm1(n x) with x = -ln q. The
 * two terms are each about 1/x and cancel to about (n - 1)/2 when n x is
 * small, so there the Bernoulli series of the difference is used:
 * (n-1)/2 - (n^2-1) x/12 + (n^4-1) x^3/720, whose next term is below
 * 1e-14 relative for n x < 0.01. Above, the cancellation costs at most a
 * factor 2 / (n x) < 200 of rounding (~1e-13 relative). n = 1 is 0. */
#define SERIES_LIMIT 0.01

static double segment_mean(double log_q, double tail_mean, double n,
                           double q_n, double one_minus_q_n)
{
    if (n == 1.0)
        return 0.0; /* exactly: the difference below would leave eps / p */
    double x = -log_q;
    if (n * x < SERIES_LIMIT) {
        double n2 = n * n;
        return (n - 1.0) / 2.0 - (n2 - 1.0) * x / 12.0 +
               (n2 * n2 - 1.0) * x * x * x / 720.0;
    }
    return tail_mean - n * q_n / one_minus_q_n;
}

/* The prior's mean age (all that expired evidence reads). */
static double prior_tail_mean(double p)
{
    return (1.0 - p) / p;
}

/* p, ln q and the mean: what every unexpired answer reads. */
static void prior_prepare(ebb_timing_prior *out, double p)
{
    out->p = p;
    out->log_q = log1p(-p);
    out->tail_mean = prior_tail_mean(p);
}

/* q^B, 1 - q^B and mu_B: for evidence with 0 < lambda <= W. */
static void prior_prepare_block(ebb_timing_prior *out, uint64_t block)
{
    double B = (double)block;
    q_run(out->log_q, B, &out->q_block, &out->rest_block);
    out->mean_block = segment_mean(out->log_q, out->tail_mean, B,
                                   out->q_block, out->rest_block);
}

/* ---- The likelihood ------------------------------------------------------
 * P(R_x | i), divided by its value on its first nonzero range, is a step
 * function of the age i (Lemmas 1 and 2, Theorem 2):
 *
 *        0 for i < start,   1 on [start, start + span),   tail beyond.
 *
 *   0 < lambda <= W:  start = (lambda - 1) B + b, span = B,
 *                     tail = G / F = F(c, 0, B)             (Eqs. 24, 25)
 *   lambda = 0:       start = 0, span = b, tail = F(r, 0, b)  (Eq. 22)
 *   expired:          start = the smallest age the evidence allows,
 *                     span infinite (the paper gives no P(R_x | i) there;
 *                     the prior alone decides beyond start: expired_answer)
 *
 * with W = ceil((w - b) / B). The common factor F(r, c, (lambda-1)B + b)
 * cancels from every ratio and is never computed. */
typedef struct likelihood {
    double start;
    double span;
    double tail;
    /* the prior over the first range: q^span, 1 - q^span, its mean */
    double q_span, rest, mean;
} likelihood;

/* D(j) with the model's constants from the cache (the same value as
 * ebb_timing_model_distinct, without its logarithms). */
static double distinct_cached(const ebb_timing_model *model,
                              const ebb_timing_cache *cache, double j)
{
    if (j < 1.0)
        return j;
    switch (model->kind) {
    case EBB_TIMING_MODEL_UNIFORM:
        return model->universe == 1
                   ? 1.0
                   : -(double)model->universe * expm1(j * cache->uniform_log);
    case EBB_TIMING_MODEL_ZIPF:
        return ebb_timing_zipf_distinct(model->universe, cache->zipf_harmonic,
                                        j);
    case EBB_TIMING_MODEL_DISTINCT:
    case EBB_TIMING_MODEL_TABLE:
    default:
        break;
    }
    return ebb_timing_model_distinct(model, j);
}

/* (1 - (1 - 1/m)^(k items))^n: n given timers all touched by `items`
 * distinct insertions (Eq. 21 with c = 0); n <= k. No items touch
 * nothing: 0^n (1 for n = 0), also for m = 1, where ln(1 - 1/m) = -inf
 * and the product below would be -inf * 0 = NaN. */
static double all_touched(const ebb_timing_cache *cache, double items,
                          uint32_t n)
{
    if (items == 0.0)
        return n == 0 ? 1.0 : 0.0;
    double one = -expm1(cache->log_untouched * items);
    double f = 1.0;
    for (uint32_t i = 0; i < n; i++)
        f *= one;
    return f;
}

/* True when the prior is the uniform model's 1/|U| (so q^j of the prior
 * and of D(j) are the same powers). */
static bool uniform_prior(const ebb_timing_model *model,
                          const ebb_timing_cache *cache,
                          const ebb_timing_prior *prior)
{
    return model->kind == EBB_TIMING_MODEL_UNIFORM &&
           prior->log_q == cache->uniform_log;
}

/* G / F: the c timers of age lambda all touched in their block by items
 * that did not come back in the j0 insertions since (else they would be
 * younger): D(j0 + B) - D(j0) distinct items. Eq. 25 takes D(B), every
 * item of the block; on a stream with repeats that counts items whose
 * later copies would have renewed the timer, overweights "x is older than
 * its timers" and made the posterior too low by up to 0.1 per bin at
 * lambda = W (docs/timing.md, "Choices"). Equal for DISTINCT (cached);
 * one exp for UNIFORM: |U| (1 - 1/|U|)^j0 (1 - (1 - 1/|U|)^B), computed
 * beside the posterior's expm1, not from it (q^j0 = q^w / q^d would save
 * the exp but chain a division after the expm1: slower). */
static double block_touched(const ebb_timing_model *model,
                            const ebb_timing_cache *cache, uint32_t c,
                            double j0, double B)
{
    double fresh;
    if (model->kind == EBB_TIMING_MODEL_DISTINCT)
        return cache->block_touched[c];
    if (model->kind == EBB_TIMING_MODEL_UNIFORM) {
        fresh = j0 == 0.0
                    ? cache->uniform_block
                    : cache->uniform_block * exp(j0 * cache->uniform_log);
    } else {
        fresh = distinct_cached(model, cache, j0 + B) -
                distinct_cached(model, cache, j0);
    }
    return all_touched(cache, fresh, c);
}

void ebb_timing_cache_init(ebb_timing_cache *cache,
                           const ebb_timing_params *params,
                           const ebb_timing_model *model)
{
    cache->log_untouched =
        (double)params->k * log1p(-1.0 / (double)params->timers);
    double one = -expm1(cache->log_untouched *
                        ebb_timing_model_distinct(model,
                                                  (double)params->block));
    cache->block_touched[0] = 1.0;
    for (uint32_t c = 1; c <= EBB_TIMING_MAX_K; c++)
        cache->block_touched[c] =
            c <= params->k ? cache->block_touched[c - 1] * one : 0.0;
    cache->uniform_log = 0.0;
    cache->uniform_block = 0.0;
    if (model->kind == EBB_TIMING_MODEL_UNIFORM && model->universe > 1) {
        double u = (double)model->universe;
        cache->uniform_log = log1p(-1.0 / u);
        cache->uniform_block =
            -u * expm1((double)params->block * cache->uniform_log);
    } else if (model->kind == EBB_TIMING_MODEL_UNIFORM) {
        cache->uniform_log = -INFINITY; /* |U| = 1: D(j) = 1 for j >= 1 */
        cache->uniform_block = 1.0;
    }
    cache->zipf_harmonic = model->kind == EBB_TIMING_MODEL_ZIPF
                               ? ebb_timing_harmonic(model->universe)
                               : 0.0;
    cache->default_prior = ebb_timing_model_default_prior(model);
    cache->prepared = (ebb_timing_prior){0};
    if (cache->default_prior > 0.0) {
        prior_prepare(&cache->prepared, cache->default_prior);
        prior_prepare_block(&cache->prepared, params->block);
    }
    uint64_t blocks = params->window / params->block +
                      (params->window % params->block != 0);
    cache->t_omega = blocks + 1 + params->padding;
}

/* W = ceil((w - b) / B): a timer of age above W has expired (Def. 9). */
static uint64_t expiry_age(const ebb_timing_params *params, uint64_t b)
{
    uint64_t span = params->window - b;
    return span / params->block + (span % params->block != 0);
}

/* Evidence a filter of this shape can show (the header's list):
 * r in 1..min(k, m), b < B; unexpired: c in 1..r, lambda <= T_Omega;
 * lambda = 0 needs c = r (every timer then holds T_+) and b >= 1 (right
 * after T_+ advances no timer holds it: for the TBF, B = 1, lambda = 0
 * never occurs); and with no insertion since T_x's block ended
 * ((lambda - 1) B + b = 0) no timer can be younger, so c = r. With
 * m = 1 every insertion rewrites the only timer, so it holds the latest
 * insertion's block: T_+ (lambda = 0) once the block has one (b >= 1),
 * else the block just ended (lambda = 1, b = 0); any other unexpired
 * evidence has likelihood 0 at every age (F(1, 1, j0) = 0 for j0 > 0). */
static bool evidence_valid(const ebb_timing_params *params,
                           const ebb_timing_cache *cache,
                           const ebb_timing_evidence *ev)
{
    if (ev->r < 1 || ev->r > params->k || ev->r > params->timers ||
        ev->b >= params->block || ev->c > ev->r)
        return false;
    if (ev->expired)
        return true;
    if (ev->c < 1 || ev->lambda > cache->t_omega)
        return false;
    if (ev->lambda == 0)
        return ev->c == ev->r && ev->b >= 1;
    if (params->timers == 1)
        return ev->lambda == 1 && ev->b == 0;
    if (ev->lambda == 1 && ev->b == 0)
        return ev->c == ev->r;
    return true;
}

/* lambda = 0: every timer holds T_+; span b, tail F(r, 0, b). For the
 * uniform model's own prior D(b) = |U| (1 - q^b), the run's 1 - q^b. */
static likelihood likelihood_now(const ebb_timing_model *model,
                                 const ebb_timing_cache *cache,
                                 const ebb_timing_evidence *ev,
                                 const ebb_timing_prior *prior)
{
    double b = (double)ev->b;
    likelihood l;
    l.start = 0.0;
    l.span = b;
    q_run(prior->log_q, b, &l.q_span, &l.rest);
    double items = uniform_prior(model, cache, prior)
                       ? (double)model->universe * l.rest
                       : distinct_cached(model, cache, b);
    l.tail = all_touched(cache, items, ev->r);
    l.mean = segment_mean(prior->log_q, prior->tail_mean, b, l.q_span,
                          l.rest);
    return l;
}

/* 0 < lambda <= W: span B from j0 = (lambda - 1) B + b; the tail comes
 * later (block_touched), when the posterior's power is known. */
static likelihood likelihood_block(const ebb_timing_params *params,
                                   const ebb_timing_evidence *ev,
                                   const ebb_timing_prior *prior)
{
    double B = (double)params->block;
    likelihood l;
    l.start = ((double)ev->lambda - 1.0) * B + (double)ev->b;
    l.span = B;
    l.q_span = prior->q_block;
    l.rest = prior->rest_block;
    l.mean = prior->mean_block;
    return l;
}

/* ---- The sums ------------------------------------------------------------
 * With Z = sum_i P(i) P(R_x|i) / (p q^start) (the step weights times the
 * prior, from start on):
 *   Z = (1 - q^span) + tail q^span
 *   P(I_x < w' | R_x) = [(1 - q^min(d, span))
 *                        + tail q^span (1 - q^(d - span)) [d > span]] / Z,
 *     d = w' - start (0 when d <= 0)
 *   E[I_x | R_x] = start + [(1 - q^span) mu_span
 *                           + tail q^span (span + q/p)] / Z
 * with mu_n the mean of segment_mean. Expired evidence (span infinite):
 * Z = 1, P = 0, E = start + q/p.
 *
 * The posterior takes one power, q^n with n = d or d - span. */
typedef struct posterior_power {
    double d;   /* w' - start                                    */
    double e;   /* expm1(n ln q): 1 - q^n = -e; 0 when d <= 0    */
} posterior_power;

static posterior_power power_of(const ebb_timing_prior *prior,
                                const likelihood *l, double window)
{
    posterior_power pw = {window - l->start, 0.0};
    if (pw.d > 0.0)
        pw.e = expm1((pw.d <= l->span ? pw.d : pw.d - l->span) *
                     prior->log_q);
    return pw;
}

static double posterior(const likelihood *l, double inv_z,
                        posterior_power pw)
{
    if (pw.d <= 0.0)
        return 0.0;
    /* d <= span: (1 - q^d) / Z; else the whole first range and part of
     * the tail. Selected, not branched: which one is random per key. */
    double beyond = pw.d > l->span ? l->rest + l->tail * l->q_span * -pw.e
                                   : -pw.e;
    double p = beyond * inv_z;
    /* rounding can pass 1; written so that a NaN (a defect) stays NaN */
    return p > 1.0 ? 1.0 : p;
}

/* The query's prior (its own or the model's default) and the checks of
 * the query's fields; *p is set on EBB_OK. */
static ebb_status query_check(const ebb_timing_params *params,
                              const ebb_timing_cache *cache,
                              const ebb_timing_query *query, double *p)
{
    if (query == NULL)
        return EBB_EINVAL;
    double prior = query->prior == 0.0 ? cache->default_prior : query->prior;
    /* below DBL_MIN the prior's mean (1 - p) / p overflows to inf */
    if (!(prior >= DBL_MIN && prior <= 1.0))
        return EBB_EINVAL; /* also NaN, and no default */
    if (query->window > params->window)
        return EBB_EINVAL;
    if (!(isfinite(query->cost_fp) && query->cost_fp >= 0.0 &&
          isfinite(query->cost_fn) && query->cost_fn >= 0.0))
        return EBB_EINVAL;
    *p = prior;
    return EBB_OK;
}

static bool least_penalty(const ebb_timing_query *query, double posterior)
{
    return query->cost_fp * (1.0 - posterior) <= query->cost_fn * posterior;
}

/* Expired or unswept evidence: no likelihood beyond the first age it
 * allows, start; an expired timer is at least W + 1 old, an unswept one of
 * age lambda > W exactly lambda old, and either way x's last insertion
 * came before that timer's block ended. P = 0, E = start + q/p, mode
 * start: no power of q. */
static void expired_answer(const ebb_timing_params *params,
                           const ebb_timing_cache *cache,
                           const ebb_timing_evidence *ev, uint64_t w_age,
                           double p, const ebb_timing_query *query,
                           ebb_timing_answer *out)
{
    double age = ev->expired ? (double)w_age + 1.0 : (double)ev->lambda;
    double start = (age - 1.0) * (double)params->block + (double)ev->b;
    double mean = p == cache->default_prior ? cache->prepared.tail_mean
                                            : prior_tail_mean(p);
    out->standard = false;
    out->posterior = 0.0;
    out->expected_age = start + mean;
    out->likely_age = (uint64_t)start;
    out->decision = least_penalty(query, 0.0);
}

/* The answer for checked query and evidence; w_age = W for evidence->b
 * (the filter has it as limit - 1, with no division). */
static void infer_core(const ebb_timing_params *params,
                       const ebb_timing_model *model,
                       const ebb_timing_cache *cache,
                       const ebb_timing_evidence *evidence, uint64_t w_age,
                       double p, const ebb_timing_query *query,
                       ebb_timing_answer *out)
{
    if (evidence->expired || evidence->lambda > w_age) {
        expired_answer(params, cache, evidence, w_age, p, query, out);
        return;
    }
    ebb_timing_prior own;
    const ebb_timing_prior *prior = &cache->prepared;
    if (p != cache->default_prior) {
        prior_prepare(&own, p);
        if (evidence->lambda != 0)
            prior_prepare_block(&own, params->block);
        prior = &own;
    }
    double window =
        (double)(query->window == 0 ? params->window : query->window);
    likelihood l;
    posterior_power pw;
    if (evidence->lambda == 0) {
        l = likelihood_now(model, cache, evidence, prior);
        pw = power_of(prior, &l, window);
    } else {
        l = likelihood_block(params, evidence, prior);
        pw = power_of(prior, &l, window);
        l.tail = block_touched(model, cache, evidence->c, l.start, l.span);
    }
    /* Z, the total weight from start on: (1 - q^span) + tail q^span */
    double inv_z = 1.0 / (l.rest + l.tail * l.q_span);
    ebb_timing_answer answer;
    answer.standard = true;
    answer.posterior = posterior(&l, inv_z, pw);
    answer.expected_age =
        l.start + (l.rest * l.mean +
                   l.tail * l.q_span * (l.span + prior->tail_mean)) *
                      inv_z;
    /* P(i) falls within each range, so the mode is the first age of one of
     * them: start (relative weight 1) or start + span (tail q^span);
     * tail <= 1 makes it start, but compare. */
    answer.likely_age = (uint64_t)(l.tail * l.q_span > 1.0 ? l.start + l.span
                                                           : l.start);
    answer.decision = least_penalty(query, answer.posterior);
    *out = answer;
}

ebb_status ebb_timing_infer_cached(const ebb_timing_params *params,
                                   const ebb_timing_model *model,
                                   const ebb_timing_cache *cache,
                                   const ebb_timing_evidence *evidence,
                                   const ebb_timing_query *query,
                                   ebb_timing_answer *out)
{
    double p;
    if (evidence == NULL || out == NULL ||
        query_check(params, cache, query, &p) != EBB_OK ||
        !evidence_valid(params, cache, evidence))
        return EBB_EINVAL;
    infer_core(params, model, cache, evidence,
               expiry_age(params, evidence->b), p, query, out);
    return EBB_OK;
}

ebb_status ebb_timing_infer_evidence(const ebb_timing_params *params,
                                     const ebb_timing_model *model,
                                     const ebb_timing_evidence *evidence,
                                     const ebb_timing_query *query,
                                     ebb_timing_answer *out)
{
    if (params == NULL || ebb_timing_params_check(params) != EBB_OK ||
        !ebb_timing_model_valid(model))
        return EBB_EINVAL;
    ebb_timing_cache cache;
    ebb_timing_cache_init(&cache, params, model);
    return ebb_timing_infer_cached(params, model, &cache, evidence, query,
                                   out);
}

/* The evidence is timing_internal.h's timing_observe, the one
 * ebb_timing_observe_hash gives, stopping at the first expired timer as
 * the standard query does (the answer to expired evidence reads neither r
 * nor c); the unit test holds infer_hash to infer_evidence on
 * observe_hash's evidence. */
ebb_status ebb_timing_infer_hash(const ebb_timing *filter, ebb_hash128 hash,
                                 const ebb_timing_query *query,
                                 ebb_timing_answer *out)
{
    double p;
    if (out == NULL ||
        query_check(&filter->params, &filter->cache, query, &p) != EBB_OK)
        return EBB_EINVAL;
    ebb_timing_evidence evidence;
    timing_observe(filter, hash, true, &evidence);
    /* the filter's evidence is consistent by construction */
    infer_core(&filter->params, &filter->model, &filter->cache, &evidence,
               filter->limit - 1, p, query, out);
    return EBB_OK;
}

ebb_status ebb_timing_infer(const ebb_timing *filter, const void *key,
                            size_t len, const ebb_timing_query *query,
                            ebb_timing_answer *out)
{
    return ebb_timing_infer_hash(filter, ebb_hash_inline(key, len,
                                                         filter->seed),
                                 query, out);
}

/* Theorem 1 (Eq. 13): with Q = (1 - p)^n the prior chance that x was never
 * inserted, P = (1 - Q) / (1 - Q + Q fp) when all bits are set, else 0. */
double ebb_classic_posterior(double prior, uint64_t n, double fp,
                             bool all_set)
{
    if (!(prior > 0.0 && prior <= 1.0) || !(fp >= 0.0 && fp <= 1.0) ||
        n == 0)
        return NAN;
    if (!all_set)
        return 0.0;
    double log_q = (double)n * log1p(-prior);
    double never = exp(log_q);
    double inserted = -expm1(log_q);
    return inserted / (inserted + never * fp);
}
