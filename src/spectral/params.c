/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.c: the shape of a spectral filter: defaults, checks, sizing from
 * (distinct keys, error ratio), the Bloom error and the memory it takes.
 *
 * Sizing. For n distinct keys, m counters and k positions, Minimum
 * Selection errs on a key when every one of its counters is shared:
 *   E_b(m, k) = (1 - (1 - 1/m)^(k n))^k
 * computed as exp(k log(-expm1(k n log1p(-1/m)))) so that tiny ratios
 * (1e-12) and huge m keep their digits. For a fixed k, E_b falls as m
 * grows, so min over k = 1..32 of E_b(m, k) does too, and the smallest m
 * whose best E_b is at most the target is found by bisection over
 * 1 .. EBB_SPECTRAL_MAX_COUNTERS (at most 41 steps of 32 evaluations).
 * Of several k with the same E_b the smallest is kept (fewer counters to
 * touch). RM takes that m as its primary's and adds a secondary of
 * ceil(m / 9) counters (a tenth of the two), k_s = 2, and an exact marker
 * of ceil(m_s / 2) fingerprint slots: with the exact marker RM errs only
 * where MS on its primary errs (a moved key's answer is min(secondary,
 * primary)), so the bound holds at about 1.2x MS's memory (the
 * secondary's counters and the table's 8-byte slots). MI measures below MS's ratio; MS's is the bound promised.
 *
 * RM's default split (params_init, m in all): m_s = ceil(m / 10), k_s =
 * min(2, k), an exact marker of ceil(m_s / 2) slots (8 bytes each, which
 * memory_for counts). Measured on section 6.1's data (docs/spectral.md,
 * tests/stats/test_spectral_rm_error.c, docs/results/spectral.md): at
 * equal bytes (the table counted) RM's error ratio is a little above
 * MS's and its additive error below; the paper's m_s = m/3 with a Bloom
 * marker was about 2x worse than MS on error ratio.
 */
#include <math.h>

#include "core/bits.h"
#include "core/cells.h"
#include "spectral/store.h"

/* RM's secondary_k = min(2, k) and an EXACT marker of ceil(m_s / 2)
 * slots: the keys a secondary of m_s counters holds at gamma_s ~ 1 with
 * k_s = 2. */
static void spectral_rm_secondary_defaults(ebb_spectral_params *p)
{
    p->secondary_k = p->k < 2 ? p->k : 2;
    p->marker = EBB_SPECTRAL_MARKER_EXACT;
    p->marker_size = p->secondary / 2 + p->secondary % 2;
}

ebb_status ebb_spectral_params_init(uint64_t counters, uint32_t counter_bits,
                                    uint32_t k, ebb_spectral_method method,
                                    ebb_spectral_params *out)
{
    if (out == NULL || (uint32_t)method > EBB_SPECTRAL_RM)
        return EBB_EINVAL;
    ebb_spectral_params p = {
        .counters = counters,
        .counter_bits = counter_bits,
        .k = k,
        .method = method,
    };
    if (method == EBB_SPECTRAL_RM) {
        if (counters < 2)
            return EBB_EINVAL;
        /* m_s = ceil(m / 10), m_p = m - m_s (>= 1 for m >= 2): the split
         * that measured best at equal memory (docs/spectral.md). */
        p.secondary = counters / 10 + (counters % 10 != 0);
        p.counters = counters - p.secondary;
        spectral_rm_secondary_defaults(&p);
    }
    if (ebb_spectral_params_check(&p) != EBB_OK)
        return EBB_EINVAL;
    *out = p;
    return EBB_OK;
}

static bool part_valid(uint64_t count)
{
    return count >= 1 && count <= EBB_SPECTRAL_MAX_COUNTERS;
}

/* RM's marker: EXACT 1..2^40 slots, BLOOM 1..2^40 bits, NONE 0. */
static bool marker_valid(const ebb_spectral_params *p)
{
    switch (p->marker) {
    case EBB_SPECTRAL_MARKER_EXACT:
    case EBB_SPECTRAL_MARKER_BLOOM:
        return part_valid(p->marker_size);
    case EBB_SPECTRAL_MARKER_NONE:
        return p->marker_size == 0;
    }
    return false;
}

/* FIXED, or a compact code without traps: a trap names a primary counter
 * that an update far from it changes, which the pending table of a
 * compact update (store.h) does not bound. */
static bool storage_valid(const ebb_spectral_params *p)
{
    if ((uint32_t)p->storage > (uint32_t)EBB_SPECTRAL_COMPACT_STEPS)
        return false;
    return p->storage == EBB_SPECTRAL_FIXED || p->trap_slots == 0;
}

ebb_status ebb_spectral_params_check(const ebb_spectral_params *p)
{
    if (p == NULL || !part_valid(p->counters) || p->counter_bits < 1 ||
        p->counter_bits > EBB_SPECTRAL_MAX_COUNTER_BITS || p->k < 1 ||
        p->k > EBB_SPECTRAL_MAX_K || p->range > EBB_SPECTRAL_MAX_RANGE ||
        !storage_valid(p))
        return EBB_EINVAL;
    switch (p->method) {
    case EBB_SPECTRAL_MS:
    case EBB_SPECTRAL_MI:
        return p->secondary == 0 && p->secondary_k == 0 &&
                       (uint32_t)p->marker == 0 && p->marker_size == 0 &&
                       p->trap_slots == 0
                   ? EBB_OK
                   : EBB_EINVAL;
    case EBB_SPECTRAL_RM:
        /* A trapped counter is a primary counter, trapped at most once. */
        return part_valid(p->secondary) && p->secondary_k >= 1 &&
                       p->secondary_k <= EBB_SPECTRAL_MAX_K &&
                       marker_valid(p) && p->trap_slots <= p->counters
                   ? EBB_OK
                   : EBB_EINVAL;
    }
    return EBB_EINVAL;
}

/* E_b for m counters, k positions, n distinct keys. */
static double bloom_error(double m, double k, double n)
{
    if (n == 0)
        return 0.0;
    double covered = -expm1(k * n * log1p(-1.0 / m)); /* m = 1: 1 */
    return exp(k * log(covered));
}

/* The smallest E_b over k = 1..32 at m, and its k. */
static double best_error(uint64_t m, uint64_t n, uint32_t *best_k)
{
    double best = 2.0;
    for (uint32_t k = 1; k <= EBB_SPECTRAL_MAX_K; k++) {
        double e = bloom_error((double)m, (double)k, (double)n);
        if (e < best) {
            best = e;
            *best_k = k;
        }
    }
    return best;
}

ebb_status ebb_spectral_choose(uint64_t distinct, double error_ratio,
                               ebb_spectral_method method,
                               ebb_spectral_params *out)
{
    uint32_t k = 1;
    if (out == NULL || distinct == 0 || !(error_ratio > 0.0) ||
        !(error_ratio < 1.0) || (uint32_t)method > EBB_SPECTRAL_RM)
        return EBB_EINVAL;
    if (best_error(EBB_SPECTRAL_MAX_COUNTERS, distinct, &k) > error_ratio)
        return EBB_EINVAL;
    uint64_t lo = 1, hi = EBB_SPECTRAL_MAX_COUNTERS; /* hi always fits */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (best_error(mid, distinct, &k) <= error_ratio)
            hi = mid;
        else
            lo = mid + 1;
    }
    best_error(hi, distinct, &k);
    ebb_status st = ebb_spectral_params_init(
        hi, EBB_SPECTRAL_MAX_COUNTER_BITS, k,
        method == EBB_SPECTRAL_RM ? EBB_SPECTRAL_MS : method, out);
    if (st != EBB_OK || method != EBB_SPECTRAL_RM)
        return st;
    /* RM: that m is the primary's; the secondary, a ninth of it (a tenth
     * of the two), and its exact marker come on top. */
    ebb_spectral_params p = *out;
    p.method = EBB_SPECTRAL_RM;
    p.secondary = hi / 9 + (hi % 9 != 0);
    spectral_rm_secondary_defaults(&p);
    p.secondary_k = 2;
    if (ebb_spectral_params_check(&p) != EBB_OK)
        return EBB_EINVAL;
    *out = p;
    return EBB_OK;
}

double ebb_spectral_error_ratio(const ebb_spectral_params *params,
                                uint64_t distinct)
{
    if (ebb_spectral_params_check(params) != EBB_OK)
        return NAN;
    return bloom_error((double)params->counters, (double)params->k,
                       (double)distinct);
}

double ebb_spectral_gamma(const ebb_spectral_params *params,
                          uint64_t distinct)
{
    if (ebb_spectral_params_check(params) != EBB_OK)
        return NAN;
    return (double)distinct * (double)params->k / (double)params->counters;
}

/* Bytes of a part's words, or 0 when it does not fit (overflow). */
static uint64_t part_bytes(uint64_t count, uint32_t width)
{
    if (count == 0)
        return 0;
    uint64_t words = ebb_cells_word_count(count, width);
    return words > UINT64_MAX / 8u ? UINT64_MAX : words * 8u;
}

uint64_t ebb_spectral_memory_for(const ebb_spectral_params *p)
{
    if (ebb_spectral_params_check(p) != EBB_OK)
        return 0;
    uint64_t total = sizeof(struct ebb_spectral);
    total = ebb_saturating_add(total, spectral_store_bytes_for(p));
    if (p->marker == EBB_SPECTRAL_MARKER_BLOOM)
        total = ebb_saturating_add(total, part_bytes(p->marker_size, 1));
    else if (p->marker == EBB_SPECTRAL_MARKER_EXACT && p->marker_size > 0)
        total = ebb_saturating_add(total, p->marker_size * 8u); /* <= 2^43 */
    uint64_t traps = p->trap_slots > UINT64_MAX / sizeof(spectral_trap)
                         ? UINT64_MAX
                         : p->trap_slots * sizeof(spectral_trap);
    return ebb_saturating_add(total, traps);
}
