/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.c: the shape of a Timing / Block Timing Bloom filter: validation,
 * the derived quantities, the analytic false-positive rate and the two
 * sizing rules (the paper's, and from a window plus memory or a target
 * rate). Pure and allocation-free.
 *
 * The false-positive rate (docs/timing.md derives it). Take a stream of
 * distinct items, a uniformly random point of it, and an item y that was
 * not among the last w insertions. With w = Q B + R (0 <= R < B) a timer is
 * live at in-block position b when one of the last
 *   n_b = b + B ceil((w - b) / B)
 * insertions touched it (the current block's b, and the ceil((w - b) / B)
 * full blocks whose age is below the limit). As b runs over 0..B-1, n_b
 * runs over w .. w + B - 1, each value once: for b >= R it is b + Q B
 * (w .. w + B - 1 - R), for b < R it is b + Q B + B (w + B - R ..
 * w + B - 1). A timer escapes one insertion with probability
 * q = (1 - 1/m)^k, so, treating y's k timers as independent (the usual
 * Bloom approximation, relative error O(k^2 / m)),
 *   fp = (1 / B) sum_{n = w}^{w + B - 1} (1 - q^n)^k.
 * B = 1 gives the TBF's (1 - q^w)^k. The sum is taken term by term for
 * B <= 64 and as the integral of the same smooth function over
 * [w - 1/2, w + B - 1/2] (composite 5-point Gauss-Legendre, 8 panels)
 * above, with the Euler-Maclaurin correction -(f'(hi) - f'(lo)) / 24 for
 * the step from sum to integral (what is left is of order f''', below
 * 1e-9 relative on the shapes tests/unit/test_timing.c checks).
 */
#include <math.h>

#include "timing/timing_internal.h"

/* ---- Validation ---------------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* 2^bits, bits <= 32. */
static uint64_t values_of(uint32_t bits)
{
    return UINT64_C(1) << bits;
}

/* T_Omega + 2 <= 2^bpt, without overflow (P may be anything). */
static bool timestamps_fit(uint64_t window, uint64_t block, uint64_t padding,
                           uint32_t timer_bits)
{
    uint64_t values = values_of(timer_bits);
    uint64_t needed = ceil_div(window, block) + 3u; /* <= 2^48 + 3 */
    return needed <= values && padding <= values - needed;
}

static bool shape_valid(uint64_t window, uint64_t timers, uint32_t k,
                        uint32_t timer_bits, uint64_t block, uint64_t padding)
{
    return window >= 1 && window <= EBB_TIMING_MAX_WINDOW && timers >= 1 &&
           timers <= EBB_TIMING_MAX_TIMERS && k >= 1 &&
           k <= EBB_TIMING_MAX_K && timer_bits >= EBB_TIMING_MIN_TIMER_BITS &&
           timer_bits <= EBB_TIMING_MAX_TIMER_BITS && block >= 1 &&
           block <= window &&
           timestamps_fit(window, block, padding, timer_bits);
}

ebb_status ebb_timing_params_init(uint64_t window, uint64_t timers, uint32_t k,
                                  uint32_t timer_bits, uint64_t block,
                                  uint64_t padding, ebb_timing_params *out)
{
    if (out == NULL ||
        !shape_valid(window, timers, k, timer_bits, block, padding))
        return EBB_EINVAL;
    ebb_timing_params p = {window, timers, k, timer_bits, block, padding};
    *out = p;
    return EBB_OK;
}

ebb_status ebb_timing_params_check(const ebb_timing_params *p)
{
    if (p == NULL || !shape_valid(p->window, p->timers, p->k, p->timer_bits,
                                  p->block, p->padding))
        return EBB_EINVAL;
    return EBB_OK;
}

uint64_t ebb_timing_t_omega(const ebb_timing_params *p)
{
    return ceil_div(p->window, p->block) + 1u + p->padding;
}

/* ceil(m / (B (P + 1))) = ceil(ceil(m / B) / (P + 1)): no product to
 * overflow. */
uint64_t ebb_timing_sweep_rate(const ebb_timing_params *p)
{
    uint64_t per_block = ceil_div(p->timers, p->block);
    if (p->padding >= per_block)
        return 1;
    return ceil_div(per_block, p->padding + 1u);
}

ebb_status ebb_timing_describe(const ebb_timing_params *params,
                               ebb_timing_shape *out)
{
    if (out == NULL || ebb_timing_params_check(params) != EBB_OK)
        return EBB_EINVAL;
    uint64_t words = ebb_cells_word_count(params->timers, params->timer_bits);
    ebb_timing_shape s;
    s.t_omega = ebb_timing_t_omega(params);
    s.expired_mark = s.t_omega + 1u;
    s.sweep_per_add = ebb_timing_sweep_rate(params);
    s.memory_bytes = words * 8u; /* m bpt <= 2^45 bits */
    s.bits_per_item = (double)params->timers * params->timer_bits /
                      (double)params->window;
    *out = s;
    return EBB_OK;
}

/* ---- The false-positive rate ------------------------------------------- */

/* (1 - q^n)^k with ln q = log_q, accurate when q^n is near 1 or 0. */
static double all_touched(double log_q, double n, uint32_t k)
{
    double untouched = exp(n * log_q);
    return exp((double)k * log1p(-untouched));
}

/* d/dn (1 - q^n)^k = -k ln q q^n (1 - q^n)^(k-1). */
static double slope(double log_q, double n, uint32_t k)
{
    double untouched = exp(n * log_q);
    return -(double)k * log_q * untouched *
           exp((double)(k - 1u) * log1p(-untouched));
}

/* 5-point Gauss-Legendre on [-1, 1]. */
static const double gl_node[5] = {
    -0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
    0.9061798459386640};
static const double gl_weight[5] = {
    0.2369268850561891, 0.4786286704993665, 0.5688888888888889,
    0.4786286704993665, 0.2369268850561891};

#define FP_DIRECT_BLOCKS 64u
#define FP_PANELS 8u

/* (1/B) sum_{n=w}^{w+B-1} (1 - q^n)^k. */
static double fp_of(uint64_t m, uint32_t k, uint64_t w, uint64_t block)
{
    double log_q = (double)k * log1p(-1.0 / (double)m);
    if (m == 1)
        return 1.0; /* every insertion touches the only timer */
    double sum = 0.0;
    if (block <= FP_DIRECT_BLOCKS) {
        for (uint64_t b = 0; b < block; b++)
            sum += all_touched(log_q, (double)(w + b), k);
        return sum / (double)block;
    }
    double lo = (double)w - 0.5;
    double width = (double)block / FP_PANELS;
    for (uint32_t p = 0; p < FP_PANELS; p++) {
        double mid = lo + width * (p + 0.5);
        for (int i = 0; i < 5; i++)
            sum += gl_weight[i] *
                   all_touched(log_q, mid + 0.5 * width * gl_node[i], k);
    }
    sum *= 0.5 * width;
    /* Euler-Maclaurin: the sum over integers is the integral over the
     * half-open cells minus (f'(hi) - f'(lo)) / 24, up to terms in f'''. */
    sum -= (slope(log_q, lo + (double)block, k) - slope(log_q, lo, k)) / 24.0;
    return sum / (double)block;
}

double ebb_timing_fp(const ebb_timing_params *params)
{
    if (ebb_timing_params_check(params) != EBB_OK)
        return NAN;
    return fp_of(params->timers, params->k, params->window, params->block);
}

/* ---- Sizing ---------------------------------------------------------------*/

/* The paper's padding for block B: the smallest P whose sweep examines at
 * most k timers, ceil(m / (B (P + 1))) <= k, i.e. P + 1 >= ceil(m / (k B)). */
static uint64_t paper_padding(uint64_t m, uint32_t k, uint64_t block)
{
    uint64_t need = ceil_div(ceil_div(m, k), block);
    return need > 0 ? need - 1u : 0;
}

static bool block_fits(uint64_t w, uint64_t m, uint32_t k, uint32_t bpt,
                       uint64_t block)
{
    return timestamps_fit(w, block, paper_padding(m, k, block), bpt);
}

/* The smallest B in 1..w whose T_Omega (with the paper's P) fits bpt bits;
 * 0 when none. Both ceil(w / B) and P shrink as B grows, so the fit is
 * monotone and a bisection finds the edge. */
static uint64_t smallest_block(uint64_t w, uint64_t m, uint32_t k,
                               uint32_t bpt)
{
    if (!block_fits(w, m, k, bpt, w))
        return 0;
    uint64_t lo = 1, hi = w; /* hi fits */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2u;
        if (block_fits(w, m, k, bpt, mid))
            hi = mid;
        else
            lo = mid + 1u;
    }
    return lo;
}

/* The paper's shape for m timers of bpt bits; false when none fits. */
static bool paper_shape(uint64_t w, uint64_t m, uint32_t k, uint32_t bpt,
                        ebb_timing_params *out)
{
    if (m < k || m > EBB_TIMING_MAX_TIMERS)
        return false;
    uint64_t block = smallest_block(w, m, k, bpt);
    if (block == 0)
        return false;
    return ebb_timing_params_init(w, m, k, bpt, block,
                                  paper_padding(m, k, block), out) == EBB_OK;
}

ebb_status ebb_timing_choose_paper(uint64_t window, double bits_per_item,
                                   uint32_t k, ebb_timing_params *out)
{
    if (out == NULL || window < 1 || window > EBB_TIMING_MAX_WINDOW ||
        k < 1 || k > EBB_TIMING_MAX_K || !isfinite(bits_per_item) ||
        !(bits_per_item > 0.0))
        return EBB_EINVAL;
    uint32_t bpt = k < 3 ? 3 : k;
    double m = floor((double)window * bits_per_item / bpt);
    if (!(m >= 1.0) || m > (double)EBB_TIMING_MAX_TIMERS)
        return EBB_EINVAL;
    ebb_timing_params p;
    if (!paper_shape(window, (uint64_t)m, k, bpt, &p))
        return EBB_EINVAL;
    *out = p;
    return EBB_OK;
}

/* The largest m whose timer words fit `bytes`. */
static uint64_t timers_in(uint64_t bytes, uint32_t bpt)
{
    uint64_t words = bytes / 8u;
    if (words > (EBB_TIMING_MAX_TIMERS * EBB_TIMING_MAX_TIMER_BITS) / 64u)
        words = (EBB_TIMING_MAX_TIMERS * EBB_TIMING_MAX_TIMER_BITS) / 64u;
    uint64_t m = words * 64u / bpt;
    return m > EBB_TIMING_MAX_TIMERS ? EBB_TIMING_MAX_TIMERS : m;
}

/* The shape of lowest analytic rate within `bytes` of timers, over k and
 * bpt (B and P by the paper's rule); false when none fits. A larger bpt
 * than the first one reaching B = 1 only loses timers, so the search over
 * bpt stops there. */
static bool best_within(uint64_t w, uint64_t bytes, ebb_timing_params *best,
                        double *best_fp)
{
    bool found = false;
    for (uint32_t k = 1; k <= EBB_TIMING_MAX_K; k++) {
        for (uint32_t bpt = EBB_TIMING_MIN_TIMER_BITS;
             bpt <= EBB_TIMING_MAX_TIMER_BITS; bpt++) {
            ebb_timing_params p;
            if (!paper_shape(w, timers_in(bytes, bpt), k, bpt, &p))
                continue;
            double fp = ebb_timing_fp(&p);
            if (!found || fp < *best_fp) {
                *best = p;
                *best_fp = fp;
                found = true;
            }
            if (p.block == 1)
                break;
        }
    }
    return found;
}

/* Memory axis of the target-rate search: whole words up to the most m bpt
 * bits the limits allow. */
#define TIMING_MAX_BYTES                                                       \
    (EBB_TIMING_MAX_TIMERS * EBB_TIMING_MAX_TIMER_BITS / 8u)

/* The analytic rate of class (k, bpt) in `words` words (the paper's B and
 * P); 2, above any rate, when the class has no shape there. */
static double class_fp(uint64_t w, uint64_t words, uint32_t k, uint32_t bpt)
{
    ebb_timing_params p;
    if (!paper_shape(w, timers_in(words * 8u, bpt), k, bpt, &p))
        return 2.0;
    return ebb_timing_fp(&p);
}

/* The last word count at which class (k, bpt) has a shape, from `first`
 * (where it has one): a shape exists while B = w fits, and P, hence
 * T_Omega, only grows with m, so existence is an interval of m. */
static uint64_t class_last_words(uint64_t w, uint64_t first, uint32_t k,
                                 uint32_t bpt)
{
    uint64_t lo = first, hi = TIMING_MAX_BYTES / 8u;
    ebb_timing_params p;
    if (paper_shape(w, timers_in(hi * 8u, bpt), k, bpt, &p))
        return hi;
    while (hi - lo > 1u) { /* lo has a shape, hi has none */
        uint64_t mid = lo + (hi - lo) / 2u;
        if (paper_shape(w, timers_in(mid * 8u, bpt), k, bpt, &p))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The smallest word count at which class (k, bpt) meets the target, 0 when
 * it never does. Within a class the rate falls as memory grows (more
 * timers; B and P grow slowly with m, and the added timers outweigh a step
 * of B: tests/unit/test_timing.c compares the search with a scan). */
static uint64_t class_smallest(uint64_t w, double target, uint32_t k,
                               uint32_t bpt)
{
    uint64_t first = ((uint64_t)k * bpt + 63u) / 64u; /* m >= k */
    if (class_fp(w, first, k, bpt) > 1.0)
        return 0; /* not even the smallest m fits bpt bits */
    uint64_t last = class_last_words(w, first, k, bpt);
    if (!(class_fp(w, last, k, bpt) <= target))
        return 0;
    uint64_t lo = first, hi = last; /* hi meets */
    if (class_fp(w, lo, k, bpt) <= target)
        return lo;
    while (hi - lo > 1u) {
        uint64_t mid = lo + (hi - lo) / 2u;
        if (class_fp(w, mid, k, bpt) <= target)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* The smallest memory (in words) whose best shape meets the target. The
 * best rate over all shapes does not fall monotonically with memory: a
 * class (k, bpt) exists only up to the m at which B = w stops fitting bpt
 * bits, and when the best class vanishes the best rate jumps up (w = 1e5:
 * 0.7675 at 25000 bytes, k = 1, bpt = 2; 0.8243 at 25008, k = 1, bpt = 3,
 * which stays above 0.77 up to 29624 bytes). A bisection over the best
 * rate then missed the smaller memory (0.77: 29624 bytes instead of
 * 24808). So each class is searched on its own interval and the smallest
 * answer wins; the best shape there meets the target, since it is at
 * least as good as the class that met it. */
static bool smallest_meeting(uint64_t w, double target, ebb_timing_params *out)
{
    uint64_t best = 0;
    for (uint32_t k = 1; k <= EBB_TIMING_MAX_K; k++)
        for (uint32_t bpt = EBB_TIMING_MIN_TIMER_BITS;
             bpt <= EBB_TIMING_MAX_TIMER_BITS; bpt++) {
            uint64_t words = class_smallest(w, target, k, bpt);
            if (words != 0 && (best == 0 || words < best))
                best = words;
        }
    double fp;
    return best != 0 && best_within(w, best * 8u, out, &fp) && fp <= target;
}

ebb_status ebb_timing_choose(uint64_t window, uint64_t memory_bytes, double fp,
                             ebb_timing_params *out)
{
    if (out == NULL || window < 1 || window > EBB_TIMING_MAX_WINDOW)
        return EBB_EINVAL;
    bool by_memory = memory_bytes != 0;
    bool by_rate = fp != 0.0;
    if (by_memory == by_rate)
        return EBB_EINVAL;
    ebb_timing_params p;
    if (by_memory) {
        double rate;
        /* a best rate of 1 (or NaN) is no filter: every query positive */
        if (!best_within(window, memory_bytes, &p, &rate) || !(rate < 1.0))
            return EBB_EINVAL;
    } else {
        if (!(fp > 0.0 && fp < 1.0) || !smallest_meeting(window, fp, &p))
            return EBB_EINVAL;
    }
    *out = p;
    return EBB_OK;
}
