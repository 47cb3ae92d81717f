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
 * F(c, 0, B) for c = 0..k, the model's constants and the default prior's
 * ln q, q^B, 1 - q^B and mu_B. Per query: the timers (read all at once,
 * observe_fast), one expm1 for the posterior and, for F', one exp and one
 * expm1 (UNIFORM) or two logs (ZIPF); a query's own prior adds log1p and
 * expm1. Measured at w = 1e6 (build-infer/scratch/bench_infer, a loaded
 * 2-core EPYC): standard query 18-32 ns, posterior query 51-76 ns with
 * Eq. 25's cached F' (2.0-2.6x), more with the corrected F' and with a
 * per-query prior (docs/timing.md, "Inference").
 */
#include <math.h>

#include "core/hash.h"
#include "timing/inference.h"
#include "timing/model.h"
#include "timing/timing_internal.h"

/* ---- The prior ------------------------------------------------------------
 * P(i) = p q^i with q = 1 - p (Eq. 4). Every sum below is over a run of
 * consecutive ages, so the prior enters only through q^n and 1 - q^n, taken
 * as exp(n ln q) and -expm1(n ln q) from ln q = log1p(-p): both keep full
 * relative precision when p is far below the rounding of 1 (|U| = 2^40
 * gives p = 1e-12, where 1 - q^n computed as 1 - pow(1 - p, n) would keep
 * four digits). p = 1 gives ln q = -inf, q^0 = 1 and q^n = 0 for n > 0.
 * What depends on p and B only (the common range of ages has length B) is
 * prepared once per prior, and once per filter for the model's default. */
static double q_pow(double log_q, double n)
{
    return n == 0.0 ? 1.0 : exp(n * log_q);
}

static double one_minus_q_pow(double log_q, double n)
{
    return n == 0.0 ? 0.0 : -expm1(n * log_q);
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

static void prior_prepare(ebb_timing_prior *out, double p, uint64_t block)
{
    double B = (double)block;
    out->p = p;
    out->log_q = log1p(-p);
    out->tail_mean = (1.0 - p) / p;
    double e = expm1(B * out->log_q); /* q^B - 1 */
    out->q_block = 1.0 + e;
    out->rest_block = -e;
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
 *                     the prior alone decides beyond start)
 *
 * with W = ceil((w - b) / B). The common factor F(r, c, (lambda-1)B + b)
 * cancels from every ratio and is never computed. */
typedef struct likelihood {
    double start;
    double span;   /* INFINITY for expired evidence */
    double tail;
    /* the prior over the first range: q^span, 1 - q^span, its mean */
    double q_span, rest, mean;
} likelihood;

/* F(r, 0, j) = (1 - (1 - 1/m)^(k D(j)))^r: r given timers all touched by
 * j insertions of D(j) distinct items (Eq. 21 with c = 0). */
static double all_touched(const ebb_timing_model *model, double log_untouched,
                          uint32_t r, double j)
{
    double one = -expm1(log_untouched * ebb_timing_model_distinct(model, j));
    double f = 1.0;
    for (uint32_t i = 0; i < r; i++)
        f *= one;
    return f;
}

/* G / F: the c timers of age lambda all touched in their block by items
 * that did not come back in the j0 insertions since (else they would be
 * younger): D(j0 + B) - D(j0) distinct items. Eq. 25 takes D(B), every
 * item of the block; on a stream with repeats that counts items whose
 * later copies would have renewed the timer, overweights "x is older than
 * its timers" and made the posterior too low by up to 0.1 per bin at
 * lambda = W (docs/timing.md, "Choices"). Equal for DISTINCT (cached);
 * one exp for UNIFORM: |U| (1 - 1/|U|)^j0 (1 - (1 - 1/|U|)^B). */
static double block_touched(const ebb_timing_model *model,
                            const ebb_timing_cache *cache, uint32_t c,
                            double j0, double B)
{
    double fresh;
    switch (model->kind) {
    case EBB_TIMING_MODEL_DISTINCT:
        return cache->block_touched[c];
    case EBB_TIMING_MODEL_UNIFORM:
        fresh = j0 == 0.0 ? cache->uniform_block
                          : cache->uniform_block * exp(j0 * cache->uniform_log);
        break;
    case EBB_TIMING_MODEL_ZIPF:
        fresh = ebb_timing_zipf_distinct(model->universe, cache->zipf_harmonic,
                                         j0 + B) -
                (j0 < 1.0 ? j0
                          : ebb_timing_zipf_distinct(model->universe,
                                                     cache->zipf_harmonic,
                                                     j0));
        break;
    case EBB_TIMING_MODEL_TABLE:
    default:
        fresh = ebb_timing_model_distinct(model, j0 + B) -
                ebb_timing_model_distinct(model, j0);
        break;
    }
    double one = -expm1(cache->log_untouched * fresh);
    double t = 1.0;
    for (uint32_t i = 0; i < c; i++)
        t *= one;
    return t;
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
    if (cache->default_prior > 0.0)
        prior_prepare(&cache->prepared, cache->default_prior,
                      params->block);
    else
        cache->prepared = (ebb_timing_prior){0};
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
 * ((lambda - 1) B + b = 0) no timer can be younger, so c = r. */
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
    if (ev->lambda == 1 && ev->b == 0)
        return ev->c == ev->r;
    return true;
}

static likelihood likelihood_make(const ebb_timing_params *params,
                                  const ebb_timing_model *model,
                                  const ebb_timing_cache *cache,
                                  const ebb_timing_evidence *ev,
                                  uint64_t w_age,
                                  const ebb_timing_prior *prior)
{
    double B = (double)params->block, b = (double)ev->b;
    likelihood l;
    if (ev->expired || ev->lambda > w_age) {
        /* An expired timer is at least W + 1 old; an unswept one of age
         * lambda > W is exactly lambda old. Either way x's last insertion
         * came before that timer's block ended. */
        double age = ev->expired ? (double)w_age + 1.0 : (double)ev->lambda;
        l.start = (age - 1.0) * B + b;
        l.span = INFINITY;
        l.tail = 1.0;
        l.q_span = 0.0;
        l.rest = 1.0;
        l.mean = prior->tail_mean;
    } else if (ev->lambda == 0) {
        l.start = 0.0;
        l.span = b;
        l.tail = all_touched(model, cache->log_untouched, ev->r, b);
        l.q_span = q_pow(prior->log_q, b);
        l.rest = one_minus_q_pow(prior->log_q, b);
        l.mean = segment_mean(prior->log_q, prior->tail_mean, b, l.q_span,
                              l.rest);
    } else {
        l.start = ((double)ev->lambda - 1.0) * B + b;
        l.span = B;
        l.tail = block_touched(model, cache, ev->c, l.start, B);
        l.q_span = prior->q_block;
        l.rest = prior->rest_block;
        l.mean = prior->mean_block;
    }
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
 * Z = 1, P = 0, E = start + q/p. */
static double posterior(const ebb_timing_prior *prior, const likelihood *l,
                        double inv_z, double window)
{
    double d = window - l->start;
    if (d <= 0.0)
        return 0.0;
    if (d <= l->span)
        return one_minus_q_pow(prior->log_q, d) * inv_z;
    double p = (l->rest + l->tail * l->q_span *
                              one_minus_q_pow(prior->log_q, d - l->span)) *
               inv_z;
    return p < 1.0 ? p : 1.0;
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
    if (!(prior > 0.0 && prior <= 1.0))
        return EBB_EINVAL; /* also NaN, and no default */
    if (query->window > params->window)
        return EBB_EINVAL;
    if (!(isfinite(query->cost_fp) && query->cost_fp >= 0.0 &&
          isfinite(query->cost_fn) && query->cost_fn >= 0.0))
        return EBB_EINVAL;
    *p = prior;
    return EBB_OK;
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
    ebb_timing_prior own;
    const ebb_timing_prior *prior = &cache->prepared;
    if (p != cache->default_prior) {
        prior_prepare(&own, p, params->block);
        prior = &own;
    }
    double window =
        (double)(query->window == 0 ? params->window : query->window);
    likelihood l =
        likelihood_make(params, model, cache, evidence, w_age, prior);
    /* Z, the total weight from start on: (1 - q^span) + tail q^span */
    double inv_z = 1.0 / (l.rest + l.tail * l.q_span);
    ebb_timing_answer answer;
    answer.standard = !evidence->expired && evidence->lambda <= w_age;
    answer.posterior =
        isinf(l.span) ? 0.0 : posterior(prior, &l, inv_z, window);
    answer.expected_age =
        isinf(l.span)
            ? l.start + l.mean
            : l.start + (l.rest * l.mean +
                         l.tail * l.q_span * (l.span + prior->tail_mean)) *
                            inv_z;
    /* P(i) falls within each range, so the mode is the first age of one of
     * them: start (relative weight 1) or start + span (tail q^span);
     * tail <= 1 makes it start, but compare. */
    answer.likely_age = (uint64_t)(l.tail * l.q_span > 1.0 ? l.start + l.span
                                                           : l.start);
    answer.decision = query->cost_fp * (1.0 - answer.posterior) <=
                      query->cost_fn * answer.posterior;
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

/* ebb_timing_observe_hash's evidence, read for speed: the k offsets first,
 * then the k timers with no branch between the loads (so they overlap in
 * flight), then the ages by selects. observe_hash's one loop branches on
 * every age, and the mispredictions serialised the loads: 85 ns against
 * the standard query's 31 at w = 1e6, k = 8 (docs/timing.md). Repeated
 * positions are found as observe_hash finds them, by a 64-bit signature
 * (a scan only on a signature hit) and dropped; an expired timer reads as
 * age `limit`; with one, c counts the expired timers and lambda is 0. The
 * unit test holds infer_hash to infer_evidence on observe_hash's
 * evidence. */
static void observe_fast(const ebb_timing *f, ebb_hash128 hash,
                         ebb_timing_evidence *out)
{
    uint64_t bits[EBB_TIMING_MAX_K];
    uint64_t ages[EBB_TIMING_MAX_K];
    uint32_t k = f->k;
    for (uint32_t j = 0; j < k; j++)
        bits[j] = timing_bit(f, hash, j);
    for (uint32_t j = 0; j < k; j++) {
        uint64_t v = ebb_cells_read_(&f->timers, bits[j]);
        ages[j] = v == f->mark ? f->limit : timing_age(f, v);
    }
    uint64_t signature = 0;
    uint32_t r = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint64_t sig = UINT64_C(1)
                       << ((bits[j] * UINT64_C(0x9e3779b97f4a7c15)) >> 58);
        if (signature & sig) {
            bool repeat = false;
            for (uint32_t i = 0; i < r; i++)
                repeat |= bits[i] == bits[j];
            if (repeat)
                continue;
        }
        signature |= sig;
        bits[r] = bits[j];
        ages[r++] = ages[j];
    }
    uint64_t oldest = 0;
    uint32_t expired = 0, c = 0;
    for (uint32_t j = 0; j < r; j++) {
        expired += ages[j] >= f->limit;
        oldest = ages[j] > oldest ? ages[j] : oldest;
    }
    for (uint32_t j = 0; j < r; j++)
        c += ages[j] == oldest;
    out->r = r;
    out->expired = expired != 0;
    out->c = expired != 0 ? expired : c;
    out->lambda = expired != 0 ? 0 : oldest;
    out->b = f->in_block;
}

ebb_status ebb_timing_infer_hash(const ebb_timing *filter, ebb_hash128 hash,
                                 const ebb_timing_query *query,
                                 ebb_timing_answer *out)
{
    double p;
    if (out == NULL ||
        query_check(&filter->params, &filter->cache, query, &p) != EBB_OK)
        return EBB_EINVAL;
    ebb_timing_evidence evidence;
    observe_fast(filter, hash, &evidence);
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
