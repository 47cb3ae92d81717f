/* SPDX-License-Identifier: BSD-2-Clause */
/* stable_exp.c: see stable_exp.h. */
#include "stable_exp.h"

#include <math.h>
#include <string.h>

const char *sx_filter_name(sx_filter f)
{
    static const char *const names[SX_FILTERS] = {"BF", "stable", "IBF-2C",
                                                  "IBF-MC", "IBF-H"};
    return f < SX_FILTERS ? names[f] : "?";
}

const char *sx_reading_name(sx_reading r)
{
    return r == SX_READING_MEMORY ? "16KB" : "16384cells";
}

static uint64_t reading_cells(sx_reading r, uint32_t cell_bits)
{
    if (r == SX_READING_CELLS)
        return 16384u;
    return (uint64_t)SX_MEMORY_BYTES * 8u / cell_bits;
}

void sx_params(sx_filter f, sx_reading r, ebb_stable_draw draw,
               ebb_stable_params *out)
{
    static const ebb_stable_variant variants[SX_FILTERS] = {
        EBB_STABLE_PLAIN, EBB_STABLE_PLAIN, EBB_STABLE_IBF_2C,
        EBB_STABLE_IBF_MC, EBB_STABLE_IBF_H};
    uint32_t bits = f == SX_BF ? 1u : SX_CELL_BITS;
    uint32_t p = f == SX_BF ? 0u : SX_P;
    exp_require(ebb_stable_params_init(reading_cells(r, bits), bits, SX_K, p,
                                       out),
                "ebb_stable_params_init");
    out->variant = variants[f];
    out->draw = draw;
    out->importance.low = SX_IMPORTANCE_LOW;
    out->importance.high = SX_IMPORTANCE_HIGH;
    out->importance.threshold = SX_IMPORTANT_ABOVE;
    out->importance.policy = EBB_STABLE_REFUSE;
    exp_require(ebb_stable_params_check(out), "ebb_stable_params_check");
}

ebb_stable *sx_create(const ebb_stable_params *params, uint64_t seed)
{
    ebb_stable *filter = NULL;
    exp_require(ebb_stable_create(params, seed, &filter),
                "ebb_stable_create");
    return filter;
}

void sx_key(uint64_t stream, uint64_t index, unsigned char out[16])
{
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(stream >> (8 * i));
        out[8 + i] = (unsigned char)(index >> (8 * i));
    }
}

void sx_level_probs(const ebb_stable_params *params, double *probs)
{
    uint32_t max = ebb_stable_max_level(params->cell_bits);
    for (uint32_t v = 0; v <= max; v++)
        probs[v] = 0.0;
    for (uint32_t imp = SX_IMPORTANCE_LOW; imp <= SX_IMPORTANCE_HIGH; imp++) {
        uint32_t level = 0;
        exp_require(ebb_stable_level(params, (double)imp, &level, NULL),
                    "ebb_stable_level");
        if (level < 1 || level > max)
            exp_die("ebb_stable_level gave %u for importance %u", level, imp);
        probs[level] += 1.0 / SX_IMPORTANCES;
    }
}

/* The variant's default distribution of set levels (stable.h). */
static void default_probs(const ebb_stable_params *params, double *probs)
{
    uint32_t max = ebb_stable_max_level(params->cell_bits);
    uint32_t half = ebb_stable_half_level(params->cell_bits);
    for (uint32_t v = 0; v <= max; v++)
        probs[v] = 0.0;
    switch (params->variant) {
    case EBB_STABLE_PLAIN:
        probs[max] = 1.0;
        break;
    case EBB_STABLE_IBF_2C:
        probs[max] += 0.5;
        probs[half] += 0.5;
        break;
    default:
        for (uint32_t v = 1; v <= max; v++)
            probs[v] = 1.0 / max;
        break;
    }
}

void sx_chain_init(sx_chain *c, const ebb_stable_params *params,
                   const double *level_probs)
{
    memset(c, 0, sizeof *c);
    c->max = ebb_stable_max_level(params->cell_bits);
    if (c->max + 1 > SX_MAX_LEVELS)
        exp_die("sx_chain: Max %u too large", c->max);
    double m = (double)params->cells;
    /* The item's K hash positions are independent and may coincide. */
    c->set = -expm1((double)params->k * log1p(-1.0 / m));
    c->dec = (double)params->p / m;
    c->pm = c->dec;
    c->weighted = params->variant == EBB_STABLE_IBF_H;
    if (level_probs != NULL)
        memcpy(c->probs, level_probs, (c->max + 1) * sizeof *c->probs);
    else
        default_probs(params, c->probs);
    c->dist[0] = 1.0;
}

/* Per-cell decrement probability of a cell at v > 0 this step. */
static double decrement_probability(const sx_chain *c, uint32_t v, double s)
{
    if (!c->weighted)
        return c->dec;
    if (s <= 0.0)
        return 0.0;
    /* A draw accepts a cell at u with probability dist[u] / u, so a
     * decrement succeeds with probability 1 - (1 - s)^EBB_STABLE_H_MAX_DRAWS
     * (it gives up after that many draws: the start, almost all zeros). */
    double success = 1.0 - pow(1.0 - s, EBB_STABLE_H_MAX_DRAWS);
    double p = c->pm * success / ((double)v * s);
    return p < 1.0 ? p : 1.0;
}

void sx_chain_step(sx_chain *c)
{
    uint32_t max = c->max;
    double s = 0.0;
    if (c->weighted)
        for (uint32_t u = 1; u <= max; u++)
            s += c->dist[u] / (double)u;
    /* Decrement. */
    memset(c->next, 0, (max + 1) * sizeof *c->next);
    c->next[0] = c->dist[0];
    for (uint32_t v = 1; v <= max; v++) {
        double p = decrement_probability(c, v, s);
        c->next[v - 1] += c->dist[v] * p;
        c->next[v] += c->dist[v] * (1.0 - p);
    }
    /* Set to max(cell, t) with probability K/m: after the set the cell is
     * at v when it was at v and t <= v, or below v and t = v. */
    double below = 0.0; /* P(cell < v) after the decrement */
    double at_most = 0.0; /* P(t <= v) */
    for (uint32_t v = 0; v <= max; v++) {
        at_most += c->probs[v];
        double stay = c->next[v] * ((1.0 - c->set) + c->set * at_most);
        double rise = below * c->set * c->probs[v];
        below += c->next[v];
        c->dist[v] = stay + rise;
    }
}

uint64_t sx_chain_settle(sx_chain *c, const double *target, double tol,
                         uint64_t most)
{
    uint64_t steps = 0;
    while (steps < most && sx_max_abs_diff(c->dist, target, c->max) > tol) {
        sx_chain_step(c);
        steps++;
    }
    return steps;
}

double sx_max_abs_diff(const double *a, const double *b, uint32_t max)
{
    double worst = 0.0;
    for (uint32_t v = 0; v <= max; v++) {
        double d = fabs(a[v] - b[v]);
        if (d > worst)
            worst = d;
    }
    return worst;
}
