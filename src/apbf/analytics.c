/*
 * analytics.c: APBF sizing, the false-positive and access recursions of the
 * paper's sections 5.3 and 5.4, and the (k, l) chooser.
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
#include "core/alloc.h"
#include "core/bits.h"

#define LN2 0.69314718055994530942

/* ------------------------------------------------------------------------ */
/* Shapes                                                                   */
/* ------------------------------------------------------------------------ */

static bool kl_valid(uint32_t k, uint32_t l)
{
    return k >= 1 && k <= EBB_APBF_MAX_K && l >= 1 && l <= EBB_APBF_MAX_L;
}

uint64_t ebb_apbf_generation_for(uint64_t slice_bits, uint32_t k)
{
    return (uint64_t)floor((double)slice_bits * LN2 / (double)k);
}

ebb_status ebb_apbf_shape_bytes(const ebb_apbf_params *p, size_t *bit_bytes)
{
    if (!kl_valid(p->k, p->l) || p->slice_bits == 0 ||
        p->slice_bits > EBB_APBF_MAX_SLICE_BITS || p->generation == 0 ||
        p->generation > ebb_apbf_generation_for(p->slice_bits, p->k))
        return EBB_EINVAL;
    if (p->generation > UINT64_MAX / p->l ||
        p->window != (uint64_t)p->l * p->generation)
        return EBB_EINVAL;
    uint64_t words = ebb_bits_words(p->slice_bits) * (p->k + p->l);
    if (words > (SIZE_MAX - 4096u) / 8u)
        return EBB_EOVERFLOW;
    *bit_bytes = (size_t)words * 8u;
    return EBB_OK;
}

ebb_status ebb_apbf_params_from_klm(uint32_t k, uint32_t l,
                                    uint64_t slice_bits, ebb_apbf_params *out)
{
    if (out == NULL || !kl_valid(k, l) || slice_bits == 0 ||
        slice_bits > EBB_APBF_MAX_SLICE_BITS)
        return EBB_EINVAL;
    uint64_t g = ebb_apbf_generation_for(slice_bits, k);
    if (g == 0)
        return EBB_EINVAL;
    *out = (ebb_apbf_params){k, l, slice_bits, g, (uint64_t)l * g};
    return EBB_OK;
}

ebb_status ebb_apbf_params_from_kl(uint32_t k, uint32_t l, uint64_t window,
                                   ebb_apbf_params *out)
{
    if (out == NULL || !kl_valid(k, l) || window == 0)
        return EBB_EINVAL;
    uint64_t g = window / l + (window % l != 0);
    /* m = ceil(g k / ln 2), then nudged so floor(m ln 2 / k) >= g holds in
     * floating point too. */
    double bits = ceil((double)g * (double)k / LN2);
    if (!(bits <= (double)EBB_APBF_MAX_SLICE_BITS))
        return EBB_EOVERFLOW;
    uint64_t m = (uint64_t)bits;
    while (ebb_apbf_generation_for(m, k) < g)
        m++;
    if (m > EBB_APBF_MAX_SLICE_BITS)
        return EBB_EOVERFLOW;
    *out = (ebb_apbf_params){k, l, m, g, (uint64_t)l * g};
    return EBB_OK;
}

ebb_status ebb_apbf_params_memory(const ebb_apbf_params *params, size_t *bytes)
{
    if (params == NULL || bytes == NULL)
        return EBB_EINVAL;
    size_t bit_bytes;
    ebb_status st = ebb_apbf_shape_bytes(params, &bit_bytes);
    if (st != EBB_OK)
        return st;
    *bytes = sizeof(struct ebb_apbf) + ebb_mem_lines_footprint(bit_bytes);
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Recursions                                                               */
/* ------------------------------------------------------------------------ */

ebb_status ebb_apbf_worst_fill(uint32_t k, uint32_t l, ebb_fill_model model,
                               double *ratios)
{
    if (!kl_valid(k, l) || ratios == NULL ||
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
    if (!kl_valid(k, l) || r == NULL)
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

/* Pf and Acc of the states (p, c = 0) at one run start s. */
typedef struct start_values {
    double pf[EBB_APBF_MAX_K];
    double acc[EBB_APBF_MAX_K];
} start_values;

/* Pf and Acc after a miss at slice i carrying c matches: state (c, 0, i-k). */
static void after_miss(const start_values *ring, uint32_t ring_size,
                       int64_t i, uint32_t k, uint32_t c, double *pf,
                       double *acc)
{
    int64_t s = i - (int64_t)k;
    if (s < 0) { /* walked off the new end: the query returns false */
        *pf = 1.0;
        *acc = 0.0;
        return;
    }
    const start_values *v = &ring[(uint64_t)s % ring_size];
    *pf = v->pf[c];
    *acc = v->acc[c];
}

double ebb_apbf_accesses_false_ratios(uint32_t k, uint32_t l, const double *r)
{
    if (!ratios_valid(k, l, r))
        return NAN;
    start_values ring[EBB_APBF_MAX_K + 1];
    uint32_t ring_size = k + 1;
    for (uint32_t s = 0; s <= l; s++) {
        start_values *out = &ring[s % ring_size];
        for (uint32_t p = 0; p < k; p++) {
            /* Sweep c downwards: (p, c) needs (p, c + 1) at the same start. */
            double pf_next = 0.0, acc_next = 0.0; /* p + c + 1 = k: true */
            for (uint32_t c = k - p; c-- > 0;) {
                int64_t i = (int64_t)s + c;
                double ri = r[i];
                double pf_miss, acc_miss;
                after_miss(ring, ring_size, i, k, c, &pf_miss, &acc_miss);
                double pf = ri * pf_next + (1.0 - ri) * pf_miss;
                double acc = ri * (acc_next + pf_next) +
                             (1.0 - ri) * (acc_miss + pf_miss);
                pf_next = pf;
                acc_next = acc;
            }
            out->pf[p] = pf_next;
            out->acc[p] = acc_next;
        }
    }
    const start_values *top = &ring[l % ring_size];
    return top->pf[0] > 0.0 ? top->acc[0] / top->pf[0] : NAN;
}

double ebb_apbf_accesses_false(uint32_t k, uint32_t l)
{
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    if (ebb_apbf_worst_fill(k, l, EBB_FILL_GEOMETRIC, r) != EBB_OK)
        return NAN;
    return ebb_apbf_accesses_false_ratios(k, l, r);
}

double ebb_apbf_npws(uint32_t k, uint32_t l)
{
    if (!kl_valid(k, l))
        return NAN;
    return (2.0 - exp2(1.0 - (double)k)) / (double)l;
}

/* ------------------------------------------------------------------------ */
/* Chooser                                                                  */
/* ------------------------------------------------------------------------ */

/* The largest l in [lo, MAX_L] with fp(k, l) <= target (fp grows with l:
 * every extra slice is one more place a run can start), or 0 if none. */
static uint32_t largest_l(uint32_t k, uint32_t lo, double target)
{
    if (lo > EBB_APBF_MAX_L || !(ebb_apbf_fp(k, lo) <= target))
        return 0;
    uint32_t hi = EBB_APBF_MAX_L;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (ebb_apbf_fp(k, mid) <= target)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Least l for which the peak NPWS is within the bound (1 when unbounded). */
static uint32_t least_l_for_npws(uint32_t k, double max_npws)
{
    if (!(max_npws > 0.0))
        return 1;
    double l = ceil((2.0 - exp2(1.0 - (double)k)) / max_npws);
    if (l > (double)EBB_APBF_MAX_L)
        return EBB_APBF_MAX_L + 1;
    uint32_t least = l < 1.0 ? 1 : (uint32_t)l;
    while (least > 1 && ebb_apbf_npws(k, least - 1) <= max_npws)
        least--; /* undo rounding that went one too far */
    while (least <= EBB_APBF_MAX_L && ebb_apbf_npws(k, least) > max_npws)
        least++;
    return least;
}

ebb_status ebb_apbf_choose(uint64_t window, double fp, double max_npws,
                           ebb_apbf_params *out)
{
    if (out == NULL || window == 0 || !(fp > 0.0 && fp < 1.0) ||
        isnan(max_npws))
        return EBB_EINVAL;
    ebb_apbf_params best = {0};
    size_t best_bytes = SIZE_MAX;
    bool overflowed = false;
    for (uint32_t k = 1; k <= EBB_APBF_MAX_K; k++) {
        /* Every shape with this k holds at least k slices of w / ln 2 bits
         * per window item, so once that alone exceeds the best, stop. */
        if (best_bytes != SIZE_MAX &&
            (double)k * (double)window / LN2 / 8.0 > (double)best_bytes)
            break;
        uint32_t lo = least_l_for_npws(k, max_npws);
        uint32_t hi = largest_l(k, lo, fp);
        for (uint32_t l = lo; hi != 0 && l <= hi; l++) {
            ebb_apbf_params p;
            size_t bytes;
            ebb_status st = ebb_apbf_params_from_kl(k, l, window, &p);
            if (st == EBB_OK)
                st = ebb_apbf_params_memory(&p, &bytes);
            if (st == EBB_EOVERFLOW) {
                overflowed = true;
                continue;
            }
            if (st == EBB_OK && bytes < best_bytes) {
                best = p;
                best_bytes = bytes;
            }
        }
    }
    if (best_bytes == SIZE_MAX)
        return overflowed ? EBB_EOVERFLOW : EBB_EINVAL;
    *out = best;
    return EBB_OK;
}
