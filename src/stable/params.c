/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.c: the shape of a stable / importance-aware filter: validation,
 * Max and Half, the importance-to-level mapping and the cell storage size.
 *
 * Everything here is O(1) and pure; the analysis (analysis.c) and the
 * sizing (sizing.c) build on it, never the other way round.
 *
 * Levels. PLAIN sets Max = 2^d - 1. IBF_2C sets Max for an important item
 * (importance > threshold) and Half = ceil(Max / 2) = 2^(d-1) otherwise: the
 * paper's M/2 is not an integer for odd M (M = 7 in its experiments), and
 * rounding up keeps an unimportant item distinguishable from "never set"
 * when d = 1 (Half = Max = 1: IBF_2C degenerates to PLAIN). IBF_MC and
 * IBF_H map [low, high] linearly onto 1..Max, rounding to the nearest level
 * (ties away from zero), so low sets 1 and high sets Max.
 */
#include <math.h>

#include "ebb/stable.h"

static bool cell_shape_valid(uint64_t cells, uint32_t cell_bits)
{
    return cells >= 1 && cells <= EBB_STABLE_MAX_CELLS && cell_bits >= 1 &&
           cell_bits <= EBB_STABLE_MAX_CELL_BITS;
}

static bool shape_valid(uint64_t cells, uint32_t cell_bits, uint32_t k,
                        uint32_t p)
{
    return cell_shape_valid(cells, cell_bits) && k >= 1 &&
           k <= EBB_STABLE_MAX_K && (uint64_t)p <= cells;
}

ebb_status ebb_stable_params_init(uint64_t cells, uint32_t cell_bits,
                                  uint32_t k, uint32_t p,
                                  ebb_stable_params *out)
{
    if (out == NULL || !shape_valid(cells, cell_bits, k, p))
        return EBB_EINVAL;
    ebb_stable_params params = {0};
    params.cells = cells;
    params.cell_bits = cell_bits;
    params.k = k;
    params.p = p;
    params.variant = EBB_STABLE_PLAIN;
    params.draw = EBB_STABLE_DRAW_CONSECUTIVE;
    params.importance.low = 0.0;
    params.importance.high = 1.0;
    params.importance.threshold = 0.5;
    params.importance.policy = EBB_STABLE_CLAMP;
    *out = params;
    return EBB_OK;
}

static bool importance_valid(const ebb_stable_importance *imp)
{
    /* The threshold may lie outside [low, high] (everything or nothing is
     * important) and may be infinite, but a NaN compares false with
     * everything and would silently make every item unimportant. */
    return isfinite(imp->low) && isfinite(imp->high) && imp->low < imp->high &&
           !isnan(imp->threshold) &&
           (imp->policy == EBB_STABLE_CLAMP ||
            imp->policy == EBB_STABLE_REFUSE);
}

ebb_status ebb_stable_params_check(const ebb_stable_params *params)
{
    if (params == NULL ||
        !shape_valid(params->cells, params->cell_bits, params->k, params->p))
        return EBB_EINVAL;
    switch (params->variant) {
    case EBB_STABLE_PLAIN:
    case EBB_STABLE_IBF_2C:
    case EBB_STABLE_IBF_MC:
    case EBB_STABLE_IBF_H:
        break;
    default:
        return EBB_EINVAL;
    }
    if (params->draw != EBB_STABLE_DRAW_INDEPENDENT &&
        params->draw != EBB_STABLE_DRAW_CONSECUTIVE)
        return EBB_EINVAL;
    return importance_valid(&params->importance) ? EBB_OK : EBB_EINVAL;
}

uint32_t ebb_stable_max_level(uint32_t cell_bits)
{
    if (cell_bits < 1 || cell_bits > EBB_STABLE_MAX_CELL_BITS)
        return 0;
    return (UINT32_C(1) << cell_bits) - 1u;
}

uint32_t ebb_stable_half_level(uint32_t cell_bits)
{
    if (cell_bits < 1 || cell_bits > EBB_STABLE_MAX_CELL_BITS)
        return 0;
    return UINT32_C(1) << (cell_bits - 1u); /* ceil((2^d - 1) / 2) */
}

/* Where imp lies in [low, high], as a fraction in [0, 1]. The halves keep
 * high - low finite when the range spans most of the doubles. */
static double range_fraction(const ebb_stable_importance *range, double imp)
{
    double span = range->high - range->low;
    double fraction;
    if (isfinite(span))
        fraction = (imp - range->low) / span;
    else
        fraction = (imp * 0.5 - range->low * 0.5) /
                   (range->high * 0.5 - range->low * 0.5);
    if (!(fraction >= 0.0))
        return 0.0;
    return fraction > 1.0 ? 1.0 : fraction;
}

ebb_status ebb_stable_level(const ebb_stable_params *params, double importance,
                            uint32_t *level, bool *clamped)
{
    if (level == NULL || ebb_stable_params_check(params) != EBB_OK ||
        isnan(importance))
        return EBB_EINVAL;
    uint32_t max = ebb_stable_max_level(params->cell_bits);
    if (params->variant == EBB_STABLE_PLAIN) {
        *level = max;
        if (clamped != NULL)
            *clamped = false;
        return EBB_OK;
    }
    const ebb_stable_importance *range = &params->importance;
    bool outside = importance < range->low || importance > range->high;
    if (outside) {
        if (range->policy == EBB_STABLE_REFUSE)
            return EBB_EINVAL;
        importance = importance < range->low ? range->low : range->high;
    }
    uint32_t result;
    if (params->variant == EBB_STABLE_IBF_2C) {
        result = importance > range->threshold
                     ? max
                     : ebb_stable_half_level(params->cell_bits);
    } else {
        double steps = round(range_fraction(range, importance) *
                             (double)(max - 1u));
        result = 1u + (uint32_t)steps;
        if (result > max)
            result = max;
    }
    *level = result;
    if (clamped != NULL)
        *clamped = outside;
    return EBB_OK;
}

uint64_t ebb_stable_cell_bytes(uint64_t cells, uint32_t cell_bits)
{
    if (!cell_shape_valid(cells, cell_bits))
        return 0;
    /* m d <= 2^44: no overflow. */
    uint64_t bits = cells * cell_bits;
    return 8u * ((bits + 63u) / 64u);
}
