/* SPDX-License-Identifier: BSD-2-Clause */
/* spectral_exp.c: see spectral_exp.h. */
#include "spectral_exp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const ebb_spectral_method SP_METHOD[SP_METHODS] = {
    EBB_SPECTRAL_MS, EBB_SPECTRAL_MI, EBB_SPECTRAL_RM};

const char *sp_method_name(ebb_spectral_method method)
{
    switch (method) {
    case EBB_SPECTRAL_MS:
        return "MS";
    case EBB_SPECTRAL_MI:
        return "MI";
    case EBB_SPECTRAL_RM:
        return "RM";
    }
    return "?";
}

const double SP_GAMMAS[SP_GAMMA_COUNT] = {0.125, 0.25, 0.4,  0.5, 0.6,  0.7,
                                          0.83,  1.0,  1.25, 1.5, 1.75, 2.0};

sp_span sp_span_empty(void)
{
    sp_span s = {INFINITY, 0.0, NAN, NAN};
    return s;
}

void sp_span_take(sp_span *s, double ratio, double x)
{
    if (ratio < s->lo) {
        s->lo = ratio;
        s->lo_x = x;
    }
    if (ratio >= s->hi) {
        s->hi = ratio;
        s->hi_x = x;
    }
}

void *sp_calloc(size_t n, size_t size)
{
    void *p = calloc(n == 0 ? 1 : n, size);
    if (p == NULL)
        exp_die("out of memory");
    return p;
}

void sp_zipf_init(sp_zipf *z, uint32_t n, double skew)
{
    z->n = n;
    z->cdf = sp_calloc(n, sizeof *z->cdf);
    double total = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        total += pow((double)(i + 1), -skew);
        z->cdf[i] = total;
    }
    for (uint32_t i = 0; i < n; i++)
        z->cdf[i] /= total;
    z->cdf[n - 1] = 1.0;
}

void sp_zipf_free(sp_zipf *z)
{
    free(z->cdf);
    z->cdf = NULL;
}

/* The first rank whose cumulative probability exceeds a uniform draw. */
uint32_t sp_zipf_draw(const sp_zipf *z, exp_rng *rng)
{
    double u = exp_rng_unit(rng);
    uint32_t lo = 0, hi = z->n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void sp_zipf_stream(uint32_t *out, uint64_t items, uint32_t n, double skew,
                    uint64_t seed)
{
    sp_zipf z;
    sp_zipf_init(&z, n, skew);
    exp_rng rng;
    exp_rng_seed(&rng, seed);
    for (uint64_t i = 0; i < items; i++)
        out[i] = sp_zipf_draw(&z, &rng);
    sp_zipf_free(&z);
}

uint64_t sp_counters_for(uint32_t n, uint32_t k, double gamma)
{
    return (uint64_t)llround((double)n * k / gamma);
}

ebb_spectral *sp_create_params(ebb_spectral_params params, uint64_t seed)
{
    params.seed = seed;
    ebb_spectral *filter = NULL;
    exp_require(ebb_spectral_create(&params, &filter), "ebb_spectral_create");
    return filter;
}

ebb_spectral *sp_create(uint64_t counters, uint32_t k,
                        ebb_spectral_method method, uint64_t seed)
{
    ebb_spectral_params params;
    exp_require(ebb_spectral_params_init(counters, SP_BITS, k, method,
                                         &params),
                "ebb_spectral_params_init");
    return sp_create_params(params, seed);
}

static const char *const CONFIG_NAME[SP_CONFIGS] = {
    "MS", "MI", "RM", "RM (paper's split)"};
static const char *const CONFIG_COLUMN[SP_CONFIGS] = {"ms", "mi", "rm",
                                                      "rmp"};

const char *sp_config_name(unsigned config)
{
    return config < SP_CONFIGS ? CONFIG_NAME[config] : "?";
}

const char *sp_config_column(unsigned config)
{
    return config < SP_CONFIGS ? CONFIG_COLUMN[config] : "?";
}

ebb_spectral_method sp_config_method(unsigned config)
{
    return config == SP_CFG_MS   ? EBB_SPECTRAL_MS
           : config == SP_CFG_MI ? EBB_SPECTRAL_MI
                                 : EBB_SPECTRAL_RM;
}

ebb_spectral_params sp_rm_params(unsigned config, uint64_t total, uint32_t k)
{
    ebb_spectral_params p;
    exp_require(ebb_spectral_params_init(total, SP_BITS, k, EBB_SPECTRAL_RM,
                                         &p),
                "ebb_spectral_params_init");
    if (config == SP_CFG_RM_PAPER) {
        /* Table 1's ratio m_s = m_p / 2, B_f of m_p bits ("of size m"). */
        p.secondary = total / 3;
        p.counters = total - p.secondary;
        p.secondary_k = k;
        p.marker = EBB_SPECTRAL_MARKER_BLOOM;
        p.marker_size = p.counters;
        exp_require(ebb_spectral_params_check(&p),
                    "ebb_spectral_params_check");
    }
    return p;
}

uint64_t sp_total_counters(const ebb_spectral_params *params)
{
    return params->counters + params->secondary;
}

ebb_spectral_params sp_config_params(unsigned config, uint64_t counters,
                                     uint32_t k)
{
    if (config != SP_CFG_RM && config != SP_CFG_RM_PAPER) {
        ebb_spectral_params p;
        exp_require(ebb_spectral_params_init(counters, SP_BITS, k,
                                             sp_config_method(config), &p),
                    "ebb_spectral_params_init");
        return p;
    }
    /* The largest total whose bytes fit in MS's (memory_for grows with the
     * total: bisect). */
    ebb_spectral_params ms;
    exp_require(ebb_spectral_params_init(counters, SP_BITS, k,
                                         EBB_SPECTRAL_MS, &ms),
                "ebb_spectral_params_init");
    uint64_t budget = ebb_spectral_memory_for(&ms);
    uint64_t lo = 2, hi = counters;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        ebb_spectral_params q = sp_rm_params(config, mid, k);
        if (ebb_spectral_memory_for(&q) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return sp_rm_params(config, lo, k);
}

void sp_value_hashes(const ebb_spectral *filter, uint32_t n,
                     ebb_hash128 *out)
{
    for (uint32_t v = 0; v < n; v++) {
        unsigned char key[8];
        for (unsigned b = 0; b < 8; b++)
            key[b] = (unsigned char)((uint64_t)v >> (8 * b));
        out[v] = ebb_spectral_hash(filter, key, sizeof key);
    }
}

ebb_status sp_remove(ebb_spectral *filter, ebb_spectral_method method,
                     ebb_hash128 hash, uint64_t r)
{
    if (method == EBB_SPECTRAL_MI)
        return ebb_spectral_remove_unsafe(filter, hash, r);
    return ebb_spectral_remove_hash(filter, hash, r);
}

void sp_measure(const ebb_spectral *filter, const ebb_hash128 *hashes,
                const uint64_t *truth, uint32_t n, sp_errors *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t est = ebb_spectral_estimate_hash(filter, hashes[i]);
        if (est == EBB_SPECTRAL_SATURATED)
            exp_die("a counter saturated: the experiments size them so "
                    "that none does");
        double diff = (double)est - (double)truth[i];
        out->queries++;
        out->wrong += est != truth[i];
        out->below += est < truth[i];
        out->sq_sum += diff * diff;
    }
}

double sp_additive(const sp_errors *e)
{
    return e->queries ? sqrt(e->sq_sum / (double)e->queries) : NAN;
}

double sp_ratio(const sp_errors *e)
{
    return e->queries ? (double)e->wrong / (double)e->queries : NAN;
}

void sp_mean_add(sp_mean *m, const sp_errors *e)
{
    m->runs++;
    m->additive += sp_additive(e);
    m->ratio += sp_ratio(e);
    m->wrong += e->wrong;
    m->below += e->below;
    m->queries += e->queries;
}

double sp_mean_additive(const sp_mean *m)
{
    return m->runs ? m->additive / m->runs : NAN;
}

double sp_mean_ratio(const sp_mean *m)
{
    return m->runs ? m->ratio / m->runs : NAN;
}

double sp_bloom_error(double gamma, uint32_t k)
{
    return pow(1.0 - exp(-gamma), (double)k);
}
