/* SPDX-License-Identifier: BSD-2-Clause */
/* tlbf_sim.c: see tlbf_sim.h. */
#include "tlbf_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* For the slices' sizes (tlbf_run_slice_bits): the public statistics give
 * the bytes held, not the bits of the arrays alone. */
#include "tlbf/tlbf_internal.h"

#define PI 3.14159265358979323846

/* ------------------------------------------------------------------------ */
/* Rate profiles                                                            */
/* ------------------------------------------------------------------------ */

tlbf_profile tlbf_profile_constant(double base)
{
    return tlbf_profile_step(base, 1.0, 0, 0);
}

tlbf_profile tlbf_profile_step(double base, double factor, int64_t start,
                               int64_t end)
{
    tlbf_profile p;
    memset(&p, 0, sizeof p);
    p.shape = TLBF_PROFILE_STEP;
    p.base = base;
    p.factor = factor;
    p.event_start = start;
    p.event_end = end;
    return p;
}

tlbf_profile tlbf_profile_sine(double base, double amplitude, int64_t period)
{
    tlbf_profile p;
    memset(&p, 0, sizeof p);
    p.shape = TLBF_PROFILE_SINE;
    p.base = base;
    p.factor = 1.0;
    p.amplitude = amplitude;
    p.period = period;
    return p;
}

double tlbf_profile_rate(const tlbf_profile *p, int64_t t)
{
    if (p->shape == TLBF_PROFILE_SINE) {
        double phase = 2.0 * PI * (double)(t % p->period) / (double)p->period;
        return p->base * (1.0 + p->amplitude * sin(phase));
    }
    bool during = t >= p->event_start && t < p->event_end;
    return during ? p->base * p->factor : p->base;
}

double tlbf_profile_top(const tlbf_profile *p)
{
    if (p->shape == TLBF_PROFILE_SINE)
        return p->base * (1.0 + p->amplitude);
    return p->factor > 1.0 ? p->base * p->factor : p->base;
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */
/* ------------------------------------------------------------------------ */

static ebb_hash128 key_hash(const ebb_tlbf *filter, uint64_t stream,
                            uint64_t index)
{
    /* Little-endian on every machine, so the keys (and the results) are
     * the same everywhere. */
    unsigned char key[16];
    for (int i = 0; i < 8; i++) {
        key[i] = (unsigned char)(stream >> (8 * i));
        key[8 + i] = (unsigned char)(index >> (8 * i));
    }
    return ebb_tlbf_hash(filter, key, sizeof key);
}

/* ------------------------------------------------------------------------ */
/* Arrivals                                                                 */
/* ------------------------------------------------------------------------ */

/* Thinning: candidates of a Poisson process at the top rate, each kept
 * with probability rate(t) / top; what is kept is a Poisson process of rate
 * rate(t). */
static void draw_next_arrival(tlbf_run *run)
{
    double top = tlbf_profile_top(&run->profile);
    if (!(top > 0.0)) {
        run->next_arrival = INT64_MAX;
        return;
    }
    double mean_gap = (double)TLBF_SIM_SECOND / top;
    for (;;) {
        run->candidate += -log1p(-exp_rng_unit(&run->rng)) * mean_gap;
        if (run->candidate >= 9.0e18) {
            run->next_arrival = INT64_MAX;
            return;
        }
        int64_t t = (int64_t)llround(run->candidate);
        double keep = tlbf_profile_rate(&run->profile, t) / top;
        if (keep >= 1.0 || exp_rng_unit(&run->rng) < keep) {
            run->next_arrival = t;
            return;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

/* A 24-bit label of the experiment's name (FNV-1a), so the key streams and
 * seeds of different experiments differ. */
static uint32_t name_label(const char *name)
{
    uint32_t h = 2166136261u;
    for (; *name != '\0'; name++)
        h = (h ^ (unsigned char)*name) * 16777619u;
    return h & 0xffffffu;
}

void tlbf_run_init(tlbf_run *run, const exp_context *ctx, uint32_t unit,
                   double fp, uint64_t initial_capacity,
                   const tlbf_profile *profile)
{
    tlbf_run_init_shape(run, ctx, unit, fp, 0, 0, initial_capacity, profile);
}

void tlbf_run_init_shape(tlbf_run *run, const exp_context *ctx,
                         uint32_t unit, double fp, uint32_t k, uint32_t l,
                         uint64_t initial_capacity,
                         const tlbf_profile *profile)
{
    memset(run, 0, sizeof *run);
    ebb_tlbf_config config;
    memset(&config, 0, sizeof config);
    config.span_ns = TLBF_SIM_SPAN;
    config.fp = fp;
    config.k = k;
    config.l = l;
    config.max_npws = 0.0;
    config.initial_capacity = initial_capacity;
    config.max_memory = TLBF_SIM_MEMORY;
    config.policy = EBB_TLBF_REFUSE;
    uint32_t experiment = name_label(ctx->name);
    uint64_t filter_seed = exp_derive_seed(ctx->seed, 0x7f, experiment, unit);
    exp_require(ebb_tlbf_create(&config, filter_seed, &run->filter),
                "ebb_tlbf_create");
    run->span = TLBF_SIM_SPAN;
    run->profile = *profile;
    exp_rng_seed(&run->rng, exp_derive_seed(ctx->seed, 0xa7, experiment, unit));
    run->insert_stream = exp_stream(EXP_STREAM_INSERT, experiment, unit);
    run->probe_stream = exp_stream(EXP_STREAM_PROBE, experiment, unit);
    run->times_cap = 1u << 16;
    run->times = malloc(run->times_cap * sizeof *run->times);
    if (run->times == NULL)
        exp_die("out of memory");
    draw_next_arrival(run);
}

void tlbf_run_free(tlbf_run *run)
{
    ebb_tlbf_destroy(run->filter);
    free(run->times);
    memset(run, 0, sizeof *run);
}

static bool key_present(const tlbf_run *run, uint64_t stream, uint64_t index,
                        int64_t q)
{
    return ebb_tlbf_contains_hash(run->filter,
                                  key_hash(run->filter, stream, index),
                                  TLBF_SIM_EPOCH + q);
}

/* Queries each key whose t + T is at most `before` at exactly t + T. The
 * latest add is earlier than `before` and no later than any such t + T not
 * yet checked (they were checked before each earlier add), so the library
 * promises every one of them present. */
static void check_due(tlbf_run *run, int64_t before)
{
    while (run->oracle_next < run->inserted &&
           run->times[run->oracle_next] <= before - run->span) {
        size_t i = run->oracle_next++;
        run->oracle_checked++;
        if (!key_present(run, run->insert_stream, i,
                         run->times[i] + run->span))
            run->false_negatives++;
    }
}

static void add_arrival(tlbf_run *run, int64_t t)
{
    if (run->inserted == run->times_cap) {
        size_t cap = run->times_cap * 2u;
        int64_t *grown = realloc(run->times, cap * sizeof *grown);
        if (grown == NULL)
            exp_die("out of memory");
        run->times = grown;
        run->times_cap = cap;
    }
    ebb_hash128 h = key_hash(run->filter, run->insert_stream, run->inserted);
    if (ebb_tlbf_add_hash(run->filter, h, TLBF_SIM_EPOCH + t) != EBB_OK)
        run->add_errors++;
    run->times[run->inserted++] = t;
}

void tlbf_run_advance(tlbf_run *run, int64_t until)
{
    while (run->next_arrival <= until) {
        int64_t t = run->next_arrival;
        check_due(run, t);
        add_arrival(run, t);
        draw_next_arrival(run);
    }
}

void tlbf_run_finish(tlbf_run *run)
{
    check_due(run, INT64_MAX);
}

uint64_t tlbf_run_items_in_span(tlbf_run *run, int64_t q)
{
    while (run->window_first < run->inserted &&
           run->times[run->window_first] < q - run->span)
        run->window_first++;
    return run->inserted - run->window_first;
}

uint64_t tlbf_run_probe(tlbf_run *run, int64_t q, uint64_t n)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++)
        hits += key_present(run, run->probe_stream, run->probes_drawn++, q);
    return hits;
}

/* First key inserted at or after t. */
static size_t first_at_or_after(const tlbf_run *run, int64_t t)
{
    size_t lo = 0, hi = run->inserted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2u;
        if (run->times[mid] < t)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

uint64_t tlbf_run_requery(tlbf_run *run, int64_t from, int64_t to, int64_t q,
                          uint64_t *asked)
{
    size_t first = first_at_or_after(run, from);
    size_t end = first_at_or_after(run, to);
    uint64_t hits = 0;
    for (size_t i = first; i < end; i++)
        hits += key_present(run, run->insert_stream, i, q);
    *asked = end - first;
    return hits;
}

uint64_t tlbf_run_slice_bits(const tlbf_run *run)
{
    uint64_t bits = 0;
    for (uint32_t i = 0; i < run->filter->count; i++)
        bits += ebb_tlbf_at(run->filter, i)->nbits;
    return bits;
}

uint64_t tlbf_run_estimate(const tlbf_run *run)
{
    return run->filter->estimate;
}

/* ------------------------------------------------------------------------ */
/* Samples                                                                  */
/* ------------------------------------------------------------------------ */

void tlbf_run_sample(tlbf_run *run, int64_t q, uint64_t probes,
                     tlbf_sample *out)
{
    tlbf_run_advance(run, q);
    memset(out, 0, sizeof *out);
    out->t = q;
    out->rate = tlbf_profile_rate(&run->profile, q);
    out->items_in_span = tlbf_run_items_in_span(run, q);
    ebb_tlbf_get_stats(run->filter, &out->stats);
    out->slice_bits = tlbf_run_slice_bits(run);
    out->probes = probes;
    out->hits = probes ? tlbf_run_probe(run, q, probes) : 0;
}

double tlbf_sample_bits_per_item(const tlbf_sample *s)
{
    if (s->items_in_span == 0)
        return NAN;
    return (double)s->stats.memory_bytes * 8.0 / (double)s->items_in_span;
}

double tlbf_sample_slice_bits_per_item(const tlbf_sample *s)
{
    if (s->items_in_span == 0)
        return NAN;
    return (double)s->slice_bits / (double)s->items_in_span;
}

double tlbf_sample_measured_fp(const tlbf_sample *s)
{
    return s->probes ? (double)s->hits / (double)s->probes : NAN;
}

void tlbf_sample_csv_header(FILE *csv)
{
    fputs("t_s,t_over_T,rate_per_s,items_in_span,slices,live_slices,"
          "slice0_bits,memory_bytes,slice_bits,bits_per_item,"
          "slice_bits_per_item,current_fp,probes,hits,measured_fp,"
          "stats_items_in_span\n",
          csv);
}

void tlbf_sample_csv_row(FILE *csv, const tlbf_sample *s, int64_t span)
{
    fprintf(csv,
            "%.3f,%.5f,%.1f,%llu,%u,%u,%llu,%zu,%llu,%.4f,%.4f,%.6g,%llu,"
            "%llu,%.6g,%llu\n",
            (double)s->t / (double)TLBF_SIM_SECOND,
            (double)s->t / (double)span, s->rate,
            (unsigned long long)s->items_in_span, s->stats.slices,
            s->stats.live_slices, (unsigned long long)s->stats.slice0_bits,
            s->stats.memory_bytes, (unsigned long long)s->slice_bits,
            tlbf_sample_bits_per_item(s),
            tlbf_sample_slice_bits_per_item(s), s->stats.current_fp,
            (unsigned long long)s->probes, (unsigned long long)s->hits,
            tlbf_sample_measured_fp(s),
            (unsigned long long)s->stats.items_in_span);
}

uint64_t tlbf_probes_for(double fp, double expected)
{
    return (uint64_t)ceil(expected / fp);
}

double tlbf_apbf_bits_per_item(uint32_t k, uint32_t l)
{
    return (double)(k + l) * (double)k / ((double)l * log(2.0));
}

/* ------------------------------------------------------------------------ */
/* Series of samples                                                        */
/* ------------------------------------------------------------------------ */

double tlbf_metric_slices(const tlbf_sample *s)
{
    return (double)s->stats.slices;
}

double tlbf_metric_slice0_bits(const tlbf_sample *s)
{
    return (double)s->stats.slice0_bits;
}

double tlbf_metric_memory(const tlbf_sample *s)
{
    return (double)s->stats.memory_bytes;
}

double tlbf_metric_current_fp(const tlbf_sample *s)
{
    return s->stats.current_fp;
}

double tlbf_series_mean(const tlbf_sample *s, size_t n, int64_t from,
                        int64_t to, tlbf_metric metric)
{
    double sum = 0.0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        double v = metric(&s[i]);
        if (s[i].t >= from && s[i].t < to && !isnan(v)) {
            sum += v;
            count++;
        }
    }
    return count ? sum / (double)count : NAN;
}

/* sign +1 for the maximum, -1 for the minimum. */
static double series_extreme(const tlbf_sample *s, size_t n, int64_t from,
                             int64_t to, tlbf_metric metric, double sign,
                             int64_t *at)
{
    double best = NAN;
    int64_t when = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        double v = metric(&s[i]);
        if (s[i].t < from || s[i].t >= to || isnan(v))
            continue;
        if (isnan(best) || sign * v > sign * best) {
            best = v;
            when = s[i].t;
        }
    }
    if (at != NULL)
        *at = when;
    return best;
}

double tlbf_series_max(const tlbf_sample *s, size_t n, int64_t from,
                       int64_t to, tlbf_metric metric, int64_t *at)
{
    return series_extreme(s, n, from, to, metric, 1.0, at);
}

double tlbf_series_min(const tlbf_sample *s, size_t n, int64_t from,
                       int64_t to, tlbf_metric metric, int64_t *at)
{
    return series_extreme(s, n, from, to, metric, -1.0, at);
}

int64_t tlbf_series_settled(const tlbf_sample *s, size_t n, int64_t from,
                            double lo, double hi, tlbf_metric metric)
{
    int64_t settled = INT64_MAX;
    for (size_t i = n; i-- > 0;) {
        if (s[i].t < from)
            break;
        double v = metric(&s[i]);
        if (isnan(v))
            continue;
        if (v < lo || v > hi)
            break;
        settled = s[i].t;
    }
    return settled;
}

tlbf_pooled tlbf_series_pool(const tlbf_sample *s, size_t n, int64_t from,
                             int64_t to)
{
    tlbf_pooled p = {0, 0, 0.0};
    for (size_t i = 0; i < n; i++) {
        if (s[i].t < from || s[i].t >= to || s[i].probes == 0)
            continue;
        p.probes += s[i].probes;
        p.hits += s[i].hits;
        p.expected += (double)s[i].probes * s[i].stats.current_fp;
    }
    return p;
}

void tlbf_run_fill_stats(const tlbf_run *run, double *mean_fill,
                         double *capacity_spread)
{
    const ebb_tlbf *f = run->filter;
    double fill = 0.0;
    uint64_t least = UINT64_MAX, most = 0;
    uint32_t done = 0;
    for (uint32_t i = f->k; i < f->count; i++) {
        const tlbf_slice *s = ebb_tlbf_at(f, i);
        fill += (double)s->inserted / (double)s->capacity;
        least = s->capacity < least ? s->capacity : least;
        most = s->capacity > most ? s->capacity : most;
        done++;
    }
    *mean_fill = done ? fill / done : 0.0;
    *capacity_spread = done ? (double)most / (double)least : 0.0;
}
