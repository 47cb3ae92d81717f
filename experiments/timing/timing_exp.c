/* SPDX-License-Identifier: BSD-2-Clause */
/* timing_exp.c: see timing_exp.h. */
#include "timing_exp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNIVERSE_PAPER (UINT32_C(1) << 16) /* |U| of Table 3's synthetics */
#define HASH_CHUNK 4096u
/* Labels for exp_derive_seed. */
#define SEED_STREAM 1301u
#define SEED_HASH 1302u

static const uint64_t TABLE_J[TX_TABLE_POINTS] = {
    1, 10, 100, 1000, 10000, 100000, TX_TABLE_SPAN};

const char *tx_kind_name(tx_kind kind)
{
    static const char *const names[TX_KINDS] = {"uniform", "powerlaw",
                                                "bursty"};
    return kind < TX_KINDS ? names[kind] : "?";
}

const char *tx_kind_title(tx_kind kind)
{
    static const char *const titles[TX_KINDS] = {"Uniform", "Power law",
                                                 "Bursty (synthetic)"};
    return kind < TX_KINDS ? titles[kind] : "?";
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p == NULL)
        exp_die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* ---- The streams ---------------------------------------------------------- */

static void make_uniform(tx_stream *s, exp_rng *rng, uint64_t len)
{
    for (uint64_t t = 0; t < len; t++)
        s->items[t] = (uint32_t)exp_rng_below(rng, s->universe);
}

/* p_x = 1 / (x H_|U|), x = 1..|U| (item id x - 1), by inverting the CDF. */
static void make_power_law(tx_stream *s, exp_rng *rng, uint64_t len)
{
    double *cdf = xcalloc(s->universe, sizeof *cdf);
    double acc = 0.0;
    for (uint32_t x = 0; x < s->universe; x++) {
        acc += ebb_timing_zipf_prior(s->universe, (uint64_t)x + 1);
        cdf[x] = acc;
    }
    for (uint64_t t = 0; t < len; t++) {
        double u = exp_rng_unit(rng) * acc;
        uint32_t lo = 0, hi = s->universe - 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (cdf[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        s->items[t] = lo;
    }
    free(cdf);
}

typedef struct session {
    uint32_t host;
    uint32_t left;
} session;

static void session_start(session *ss, exp_rng *rng)
{
    /* Host rank floor(H^u) in 1..H: P(rank = x) ~ 1 / (x ln H). */
    double r = floor(exp(exp_rng_unit(rng) * log((double)TX_BURSTY_HOSTS)));
    uint32_t rank = r < 1.0 ? 1u
                    : r > (double)TX_BURSTY_HOSTS ? TX_BURSTY_HOSTS
                                                   : (uint32_t)r;
    ss->host = rank - 1;
    /* Pareto length: floor(u^(-1/alpha)), u in (0, 1]. */
    double u = 1.0 - exp_rng_unit(rng);
    double len = floor(pow(u, -1.0 / TX_BURSTY_ALPHA));
    ss->left = len > (double)TX_BURSTY_MAX_SESSION ? TX_BURSTY_MAX_SESSION
                                                   : (uint32_t)len;
}

static void make_bursty(tx_stream *s, exp_rng *rng, uint64_t len)
{
    session ss[TX_BURSTY_SESSIONS];
    for (unsigned i = 0; i < TX_BURSTY_SESSIONS; i++)
        session_start(&ss[i], rng);
    for (uint64_t t = 0; t < len; t++) {
        session *c = &ss[exp_rng_below(rng, TX_BURSTY_SESSIONS)];
        s->items[t] = c->host;
        if (--c->left == 0)
            session_start(c, rng);
    }
}

/* D(j) at the paper's j over TX_TABLE_TRIALS runs of TX_TABLE_SPAN
 * consecutive insertions spread evenly over the stream, averaged. */
static void measure_table(tx_stream *s, uint64_t len)
{
    uint32_t *stamp = xcalloc(s->universe, sizeof *stamp);
    double sums[TX_TABLE_POINTS] = {0};
    uint64_t room = len > TX_TABLE_SPAN ? len - TX_TABLE_SPAN : 0;
    for (unsigned trial = 0; trial < TX_TABLE_TRIALS; trial++) {
        uint64_t start = room * trial / (TX_TABLE_TRIALS - 1);
        uint64_t distinct = 0;
        unsigned point = 0;
        for (uint64_t j = 1; j <= TX_TABLE_SPAN && start + j <= len; j++) {
            uint32_t x = s->items[start + j - 1];
            if (stamp[x] != trial + 1) {
                stamp[x] = trial + 1;
                distinct++;
            }
            if (point < TX_TABLE_POINTS && j == TABLE_J[point])
                sums[point++] += (double)distinct;
        }
        if (point != TX_TABLE_POINTS)
            exp_die("stream too short for the D(j) table");
    }
    free(stamp);
    ebb_timing_model *m = &s->model;
    memset(m, 0, sizeof *m);
    m->kind = EBB_TIMING_MODEL_TABLE;
    m->default_prior = 0.0;
    m->points = TX_TABLE_POINTS;
    for (unsigned i = 0; i < TX_TABLE_POINTS; i++) {
        m->j[i] = TABLE_J[i];
        m->d[i] = sums[i] / TX_TABLE_TRIALS;
    }
}

static void key_bytes(tx_kind kind, uint32_t id, unsigned char out[16])
{
    uint64_t a = UINT64_C(0x74696d696e670000) + (uint64_t)kind; /* "timing" */
    for (unsigned i = 0; i < 8; i++) {
        out[i] = (unsigned char)(a >> (8 * i));
        out[8 + i] = (unsigned char)((uint64_t)id >> (8 * i));
    }
}

/* Hashes every id with a filter of the stream's seed (the hash depends on
 * the seed only, so every filter created with it agrees). */
static void hash_ids(tx_stream *s)
{
    ebb_timing_params p;
    exp_require(ebb_timing_params_init(64, 64, 1, 8, 1, 0, &p),
                "ebb_timing_params_init");
    ebb_timing *f = NULL;
    exp_require(ebb_timing_create(&p, NULL, s->hash_seed, &f),
                "ebb_timing_create");
    ebb_apbf_params ap;
    exp_require(ebb_apbf_params_from_kl(1, 1, 64, &ap),
                "ebb_apbf_params_from_kl");
    ebb_apbf *a = exp_create(&ap, s->hash_seed);
    static unsigned char keys[HASH_CHUNK][16];
    const void *ptrs[HASH_CHUNK];
    size_t lens[HASH_CHUNK];
    for (uint32_t base = 0; base < s->universe; base += HASH_CHUNK) {
        size_t n = s->universe - base < HASH_CHUNK ? s->universe - base
                                                   : HASH_CHUNK;
        for (size_t i = 0; i < n; i++) {
            key_bytes(s->kind, base + (uint32_t)i, keys[i]);
            ptrs[i] = keys[i];
            lens[i] = 16;
        }
        ebb_timing_hash_batch(f, ptrs, lens, n, s->hashes + base);
        ebb_apbf_hash_batch(a, ptrs, lens, n, s->apbf_hashes + base);
    }
    ebb_timing_destroy(f);
    ebb_apbf_destroy(a);
}

void tx_stream_make(tx_stream *s, tx_kind kind, uint64_t warm,
                    uint64_t queries, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->universe = kind == TX_BURSTY ? TX_BURSTY_HOSTS : UNIVERSE_PAPER;
    s->warm = warm;
    s->queries = queries;
    uint64_t len = warm + queries;
    s->items = xcalloc(len, sizeof *s->items);
    s->ages = xcalloc(queries, sizeof *s->ages);
    s->prior = xcalloc(s->universe, sizeof *s->prior);
    s->hashes = xcalloc(s->universe, sizeof *s->hashes);
    s->apbf_hashes = xcalloc(s->universe, sizeof *s->apbf_hashes);
    s->hash_seed = exp_derive_seed(seed, SEED_HASH, kind, 0);
    exp_rng rng;
    exp_rng_seed(&rng, exp_derive_seed(seed, SEED_STREAM, kind, 0));
    switch (kind) {
    case TX_UNIFORM:
        make_uniform(s, &rng, len);
        break;
    case TX_POWER_LAW:
        make_power_law(s, &rng, len);
        break;
    default:
        make_bursty(s, &rng, len);
        break;
    }

    /* True ages, counts, priors. */
    uint32_t *last = xcalloc(s->universe, sizeof *last);
    uint64_t *count = xcalloc(s->universe, sizeof *count);
    for (uint32_t x = 0; x < s->universe; x++)
        last[x] = TX_NEVER;
    for (uint64_t t = 0; t < len; t++) {
        uint32_t x = s->items[t];
        if (t >= warm) {
            uint64_t age = last[x] == TX_NEVER ? TX_NEVER
                                               : t - last[x] - 1;
            s->ages[t - warm] = age >= TX_NEVER ? TX_NEVER : (uint32_t)age;
        }
        last[x] = (uint32_t)t;
        count[x]++;
    }
    for (uint32_t x = 0; x < s->universe; x++) {
        s->distinct += count[x] != 0;
        switch (kind) {
        case TX_UNIFORM:
            s->prior[x] = 1.0 / s->universe;
            break;
        case TX_POWER_LAW:
            s->prior[x] = ebb_timing_zipf_prior(s->universe, (uint64_t)x + 1);
            break;
        default: /* the paper's pre-processing: the observed frequency */
            s->prior[x] = (double)count[x] / (double)len;
            break;
        }
    }
    free(last);
    free(count);

    if (kind == TX_BURSTY) {
        measure_table(s, len);
    } else {
        memset(&s->model, 0, sizeof s->model);
        s->model.kind = kind == TX_UNIFORM ? EBB_TIMING_MODEL_UNIFORM
                                           : EBB_TIMING_MODEL_ZIPF;
        s->model.universe = s->universe;
    }
    hash_ids(s);
}

void tx_stream_free(tx_stream *s)
{
    free(s->items);
    free(s->ages);
    free(s->prior);
    free(s->hashes);
    free(s->apbf_hashes);
    memset(s, 0, sizeof *s);
}

uint64_t tx_in_window(const tx_stream *s, uint64_t window)
{
    uint64_t n = 0;
    for (uint64_t q = 0; q < s->queries; q++)
        n += s->ages[q] < window;
    return n;
}

/* ---- Trials ---------------------------------------------------------------- */

static double draw_cost(exp_rng *rng)
{
    return TX_COST_LOW + (TX_COST_HIGH - TX_COST_LOW) * exp_rng_unit(rng);
}

/* Bin 0 holds age 0, bin i >= 1 the ages [2^(i-1), 2^i): "age < w" for
 * w = 2^a is exactly bins 0..a. */
static unsigned age_bin(uint32_t age)
{
    unsigned b = 0;
    for (uint64_t v = age; v > 0; v >>= 1)
        b++;
    return b < TX_AGE_BINS ? b : TX_AGE_BINS - 1;
}

static void record_age(tx_trial *out, uint32_t age, double prior,
                       const ebb_timing_answer *a)
{
    tx_age_bin *bin = &out->age[age_bin(age)];
    double truth = (double)age;
    bin->queries++;
    bin->sum_age += truth;
    bin->sum_expected += a->expected_age;
    bin->abs_expected += fabs(a->expected_age - truth);
    bin->abs_likely += fabs((double)a->likely_age - truth);
    bin->abs_prior += fabs((1.0 - prior) / prior - truth);
}

void tx_run_trial(const tx_stream *s, const ebb_timing_params *params,
                  uint64_t cost_seed, bool ages, tx_trial *out)
{
    memset(out, 0, sizeof *out);
    out->params = *params;
    ebb_timing *f = NULL;
    exp_require(ebb_timing_create(params, &s->model, s->hash_seed, &f),
                "ebb_timing_create");
    for (uint64_t t = 0; t < s->warm; t++)
        ebb_timing_add_hash(f, s->hashes[s->items[t]]);
    exp_rng rng;
    exp_rng_seed(&rng, cost_seed);
    uint64_t w = params->window;
    for (uint64_t q = 0; q < s->queries; q++) {
        uint32_t x = s->items[s->warm + q];
        uint32_t age = s->ages[q];
        bool in = age < w;
        ebb_timing_query query;
        query.prior = s->kind == TX_UNIFORM ? 0.0 : s->prior[x];
        query.window = 0;
        query.cost_fp = draw_cost(&rng);
        query.cost_fn = draw_cost(&rng);
        ebb_timing_answer a;
        exp_require(ebb_timing_infer_hash(f, s->hashes[x], &query, &a),
                    "ebb_timing_infer_hash");
        if (a.standard && !in) {
            out->penalty_standard += query.cost_fp;
            out->fp_standard++;
        } else if (!a.standard && in) {
            out->penalty_standard += query.cost_fn;
            out->fn_standard++;
        }
        if (a.decision && !in) {
            out->penalty_inferential += query.cost_fp;
            out->fp_inferential++;
        } else if (!a.decision && in) {
            out->penalty_inferential += query.cost_fn;
            out->fn_inferential++;
        }
        unsigned bin = (unsigned)(a.posterior * TX_BINS);
        if (bin >= TX_BINS)
            bin = TX_BINS - 1;
        out->eta[bin]++;
        out->hits[bin] += in;
        out->posterior_sum[bin] += a.posterior;
        if (ages && age != TX_NEVER)
            record_age(out, age, s->prior[x], &a);
        ebb_timing_add_hash(f, s->hashes[x]);
    }
    ebb_timing_destroy(f);
}

double tx_posterior_error(const tx_trial *t)
{
    double sum = 0.0;
    uint64_t n = 0;
    for (unsigned l = 0; l < TX_BINS; l++) {
        if (t->eta[l] == 0)
            continue;
        double f = (double)t->hits[l] / (double)t->eta[l];
        double mid = (l + 0.5) / TX_BINS;
        sum += fabs(f - mid) * (double)t->eta[l];
        n += t->eta[l];
    }
    return n ? sum / (double)n : NAN;
}

void tx_run_apbf(const tx_stream *s, const ebb_apbf_params *params,
                 uint64_t cost_seed, uint64_t window, tx_apbf_trial *out)
{
    memset(out, 0, sizeof *out);
    out->params = *params;
    out->analytic_fp = ebb_apbf_shape_fp(params);
    ebb_apbf *f = exp_create(params, s->hash_seed);
    for (uint64_t t = 0; t < s->warm; t++)
        ebb_apbf_add_hash(f, s->apbf_hashes[s->items[t]]);
    exp_rng rng;
    exp_rng_seed(&rng, cost_seed);
    for (uint64_t q = 0; q < s->queries; q++) {
        uint32_t x = s->items[s->warm + q];
        bool in = s->ages[q] < window;
        double cost_fp = draw_cost(&rng);
        double cost_fn = draw_cost(&rng);
        bool yes = ebb_apbf_contains_hash(f, s->apbf_hashes[x]);
        if (yes && !in) {
            out->penalty += cost_fp;
            out->fp++;
        } else if (!yes && in) {
            out->penalty += cost_fn;
            out->fn++;
        }
        ebb_apbf_add_hash(f, s->apbf_hashes[x]);
    }
    ebb_apbf_destroy(f);
}

uint64_t tx_ages_between(const tx_stream *s, uint64_t low, uint64_t high)
{
    uint64_t n = 0;
    for (uint64_t q = 0; q < s->queries; q++)
        n += s->ages[q] >= low && s->ages[q] < high;
    return n;
}

unsigned tx_apbf_candidates(uint64_t window, uint64_t memory_bits,
                            double beyond, double slack_mass,
                            ebb_apbf_params *out, unsigned count)
{
    unsigned have = 0;
    double rates[8];
    if (count > 8)
        count = 8;
    for (uint32_t k = 1; k <= 30; k++) {
        for (uint32_t l = 1; l <= EBB_APBF_MAX_L; l++) {
            uint64_t m = memory_bits / (k + l);
            uint64_t g = window / l + (window % l != 0);
            if (m == 0 || (double)g > floor((double)m * log(2.0) / k))
                continue;
            ebb_apbf_params p = {k, l, m, g, (uint64_t)l * g, 0, 0, 0, 0};
            double fp = ebb_apbf_shape_fp(&p);
            double npws = ebb_apbf_shape_npws(&p);
            if (!(fp >= 0.0) || !(npws >= 0.0))
                continue;
            fp = beyond * fp + slack_mass * npws;
            /* Insert into the sorted best list (ties keep the earlier). */
            unsigned at = have;
            while (at > 0 && fp < rates[at - 1])
                at--;
            if (at >= count)
                continue;
            unsigned last = have < count ? have : count - 1;
            for (unsigned i = last; i > at; i--) {
                out[i] = out[i - 1];
                rates[i] = rates[i - 1];
            }
            out[at] = p;
            rates[at] = fp;
            if (have < count)
                have++;
        }
    }
    return have;
}
