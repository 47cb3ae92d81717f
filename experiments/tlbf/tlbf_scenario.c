/* SPDX-License-Identifier: BSD-2-Clause */
/* tlbf_scenario.c: see tlbf_scenario.h. */
#include "tlbf_scenario.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const double tlbf_scenario_fps[TLBF_SCENARIO_FPS] = {0.1, 0.01, 0.001};
const char *const tlbf_scenario_fp_labels[TLBF_SCENARIO_FPS] = {
    "0.1", "0.01", "0.001"};

#define EXPECTED_HITS 100.0

void tlbf_scenario_open(tlbf_scenario *sc, exp_context *ctx,
                        const char *name, uint32_t unit, unsigned fp_index,
                        const tlbf_profile *profile, int64_t duration,
                        int64_t step, unsigned probe_every)
{
    memset(sc, 0, sizeof *sc);
    sc->name = name;
    sc->fp_index = fp_index;
    sc->step = step;
    sc->probe_every = probe_every;
    double fp = tlbf_scenario_fps[fp_index];
    sc->probes = tlbf_probes_for(fp, EXPECTED_HITS);
    uint64_t per_span = (uint64_t)(TLBF_SCENARIO_RATE *
                                   (double)TLBF_SIM_SPAN /
                                   (double)TLBF_SIM_SECOND);
    tlbf_run_init(&sc->run, ctx, unit, fp, per_span, profile);
    sc->capacity = (size_t)(duration / step) + 1u;
    sc->samples = malloc(sc->capacity * sizeof *sc->samples);
    if (sc->samples == NULL)
        exp_die("out of memory");
    char file[96];
    snprintf(file, sizeof file, "scenario_%s_fp%s.csv", name,
             tlbf_scenario_fp_labels[fp_index]);
    sc->csv = exp_open_csv(ctx, file);
    tlbf_sample_csv_header(sc->csv);
}

void tlbf_scenario_sample_until(tlbf_scenario *sc, int64_t until)
{
    for (;;) {
        int64_t q = (int64_t)(sc->count + 1) * sc->step;
        if (q > until)
            return;
        if (sc->count == sc->capacity)
            exp_die("scenario %s: more samples than its duration allows",
                    sc->name);
        bool probing = (sc->count + 1) % sc->probe_every == 0;
        tlbf_sample *s = &sc->samples[sc->count++];
        tlbf_run_sample(&sc->run, q, probing ? sc->probes : 0, s);
        tlbf_sample_csv_row(sc->csv, s, TLBF_SIM_SPAN);
    }
}

void tlbf_scenario_finish(tlbf_scenario *sc)
{
    tlbf_run_finish(&sc->run);
    exp_close(sc->csv, sc->name);
    sc->csv = NULL;
}

void tlbf_scenario_free(tlbf_scenario *sc)
{
    tlbf_run_free(&sc->run);
    free(sc->samples);
    memset(sc, 0, sizeof *sc);
}

void tlbf_scenario_check_oracle(exp_context *ctx, const tlbf_scenario *sc)
{
    const tlbf_run *r = &sc->run;
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              r->false_negatives == 0 && r->add_errors == 0,
              "%s fp %s: no false negative among %" PRIu64
              " keys queried at t + T (%" PRIu64 " missed, %" PRIu64
              " failed adds)",
              sc->name, tlbf_scenario_fp_labels[sc->fp_index],
              r->oracle_checked, r->false_negatives, r->add_errors);
}

/* ------------------------------------------------------------------------ */
/* Disturbances                                                             */
/* ------------------------------------------------------------------------ */

/* At most `bound` false positives expected, plus three binomial sd. */
static bool measured_within(const tlbf_sample *s, double rate)
{
    double expected = rate * (double)s->probes;
    return (double)s->hits <= expected + 3.0 * sqrt(expected);
}

static double metric_measured(const tlbf_sample *s)
{
    return tlbf_sample_measured_fp(s);
}

/* The earliest sample time from which on `within` holds at every probed
 * sample; INT64_MAX when the last probed sample fails it. */
static int64_t measured_settled(const tlbf_scenario *sc, int64_t from,
                                double rate)
{
    int64_t settled = INT64_MAX;
    for (size_t i = sc->count; i-- > 0;) {
        const tlbf_sample *s = &sc->samples[i];
        if (s->t < from)
            break;
        if (s->probes == 0)
            continue;
        if (!measured_within(s, rate))
            break;
        settled = s->t;
    }
    return settled;
}

void tlbf_disturbance_analyse(const tlbf_scenario *sc, int64_t start,
                              int64_t end, tlbf_disturbance *d)
{
    const tlbf_sample *s = sc->samples;
    size_t n = sc->count;
    int64_t span = TLBF_SIM_SPAN;
    int64_t last = s[n - 1].t;
    memset(d, 0, sizeof *d);
    d->start = start;
    d->end = end;
    d->ref_fp = tlbf_series_max(s, n, start - span, start,
                                tlbf_metric_current_fp, NULL);
    d->ref_memory = tlbf_series_max(s, n, start - span, start,
                                    tlbf_metric_memory, NULL);
    d->ref_slices = tlbf_series_mean(s, n, start - span, start,
                                     tlbf_metric_slices);
    tlbf_pooled before = tlbf_series_pool(s, n, start - span, start);
    d->ref_measured = (double)before.hits / (double)before.probes;

    d->peak_fp = tlbf_series_max(s, n, start, INT64_MAX,
                                 tlbf_metric_current_fp, &d->peak_fp_at);
    d->peak_memory = tlbf_series_max(s, n, start, INT64_MAX,
                                     tlbf_metric_memory, &d->peak_memory_at);
    d->peak_slices = tlbf_series_max(s, n, start, INT64_MAX,
                                     tlbf_metric_slices, &d->peak_slices_at);
    d->peak_measured = tlbf_series_max(s, n, start, INT64_MAX,
                                       metric_measured, &d->peak_measured_at);
    for (size_t i = 0; i < n; i++)
        if (s[i].t == d->peak_measured_at) {
            d->peak_measured_hits = s[i].hits;
            d->peak_measured_probes = s[i].probes;
        }

    d->early = tlbf_series_pool(s, n, start, start + (end - start) / 4);

    d->fp_back = tlbf_series_settled(s, n, start, 0.0, 1.25 * d->ref_fp,
                                     tlbf_metric_current_fp);
    d->memory_back = tlbf_series_settled(s, n, start, 0.0,
                                         1.25 * d->ref_memory,
                                         tlbf_metric_memory);
    d->measured_back = measured_settled(sc, start, 1.25 * d->ref_measured);

    d->final_slices = tlbf_series_mean(s, n, last - span + 1, INT64_MAX,
                                       tlbf_metric_slices);
    d->final_memory = tlbf_series_mean(s, n, last - span + 1, INT64_MAX,
                                       tlbf_metric_memory);
    d->final_fp_max = tlbf_series_max(s, n, last - span + 1, INT64_MAX,
                                      tlbf_metric_current_fp, NULL);
}

double tlbf_recovery_after(const tlbf_disturbance *d, int64_t back)
{
    if (back == INT64_MAX)
        return NAN;
    if (back <= d->end)
        return 0.0;
    return (double)(back - d->end) / (double)TLBF_SIM_SPAN;
}

void tlbf_scenario_plot_meta(const exp_context *ctx, const char *name,
                             const uint32_t k[], const uint32_t l[])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.plot", ctx->work_dir, name);
    FILE *meta = fopen(path, "w");
    if (meta == NULL)
        exp_die("cannot write %s", path);
    fprintf(meta, "array fps[%d] = [", TLBF_SCENARIO_FPS);
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++)
        fprintf(meta, "%s\"%s\"", f ? ", " : "", tlbf_scenario_fp_labels[f]);
    fprintf(meta, "]\narray targets[%d] = [", TLBF_SCENARIO_FPS);
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++)
        fprintf(meta, "%s%g", f ? ", " : "", tlbf_scenario_fps[f]);
    fprintf(meta, "]\narray titles[%d] = [", TLBF_SCENARIO_FPS);
    for (unsigned f = 0; f < TLBF_SCENARIO_FPS; f++)
        fprintf(meta, "%s\"fp %s (k=%u, l=%u)\"", f ? ", " : "",
                tlbf_scenario_fp_labels[f], k[f], l[f]);
    fprintf(meta, "]\n");
    exp_close(meta, name);
}
