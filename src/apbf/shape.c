/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shape.c: the match probabilities, fp and NPWS of one exact, validated
 * shape (ebb_apbf_shape_ratios and the two built on it).
 *
 * They sit apart from analytics.c because they validate the shape with
 * sizing.c's ebb_apbf_shape_bytes while sizing.c's chooser needs the
 * recursions of analytics.c: with them here, the family's calls point one
 * way, shape.c -> sizing.c -> analytics.c, and analytics.c calls neither.
 */
#include <math.h>

#include "apbf/apbf_internal.h"

ebb_status ebb_apbf_shape_ratios(const ebb_apbf_params *p, double *ratios)
{
    size_t bytes;
    if (p == NULL || ratios == NULL || ebb_apbf_shape_bytes(p, &bytes) != EBB_OK)
        return EBB_EINVAL;
    if (p->block_bits != 0) {
        double blocks = (double)(p->slice_bits / p->block_bits);
        ebb_apbf_block_ratios(p, (double)p->generation / blocks, ratios);
        return EBB_OK;
    }
    double stay_clear = log1p(-1.0 / (double)p->slice_bits);
    for (uint32_t i = 0; i < p->k + p->l; i++) {
        double items = (double)(i < p->k ? i + 1 : p->k) * (double)p->generation;
        ratios[i] = -expm1(items * stay_clear);
    }
    return EBB_OK;
}

double ebb_apbf_shape_npws(const ebb_apbf_params *p)
{
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    if (p != NULL && p->block_bits == 0)
        return ebb_apbf_npws(p->k, p->l);
    if (ebb_apbf_shape_ratios(p, r) != EBB_OK)
        return NAN;
    /* A slack generation that lost i of its k slices is reported when the
     * i slices that replaced them match by chance: r_full^i. */
    double full = r[p->k + p->l - 1], sum = 0.0, power = 1.0;
    for (uint32_t i = 0; i < p->k; i++, power *= full)
        sum += power;
    return sum / (double)p->l;
}

double ebb_apbf_shape_fp(const ebb_apbf_params *p)
{
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    if (ebb_apbf_shape_ratios(p, r) != EBB_OK)
        return NAN;
    return ebb_apbf_fp_ratios(p->k, p->l, r);
}
