/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report.c: the results as tables for people or as a JSON array for
 * programs (--json). Both are written as the measurements finish, so a
 * long run shows its progress and an interrupted one keeps what it had.
 *
 * JSON: one object per (filter, operation, call style), with the keys
 * name, filter, variant, shape, k, l, block_bits, block_hashes, op, batch,
 * window, fp, fp_promised, fp_measured, mops, ns_per_op, bits_per_item,
 * memory_bytes, lines_per_op, lines_source, ceiling_lines_per_s,
 * ceiling_fraction, runs, ops. A number that does not exist (the measured
 * fp of an add) is null. op is "add", "contains", (the stable filter)
 * "test_and_add", whose fp_measured is the rate of fresh keys seen, or (the
 * BTBF) "infer", the posterior query, whose standard answers give the same
 * fp_measured as contains, and "infer_prior", the same with a prior per
 * query. Only the array goes to stdout; targets and notes
 * are for the tables.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <bloom.h>
#include <ebb/spectral.h>

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

static const char *lines_source_name(const bench_row *row)
{
    if (row->op != BENCH_CONTAINS && row->op != BENCH_ESTIMATE)
        return row->lines_source == BENCH_LINES_EXPECTED ? "expected" : "k";
    return row->lines_source == BENCH_LINES_COUNTED ? "counted" : "expected";
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */
/* ------------------------------------------------------------------------ */

static void text_begin(FILE *out, const bench_options *options)
{
    char model[128];
    char date[32];
    time_t now = time(NULL);
    struct tm tm_now;
    double busy = bench_system_busy(500);

    bench_cpu_model(model, sizeof model);
    if (gmtime_r(&now, &tm_now) == NULL ||
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm_now) == 0)
        snprintf(date, sizeof date, "unknown date");
    fprintf(out, "ebb bench: libebb %s beside libbloom %s, single thread, 16-byte keys\n",
            ebb_version_string(), bloom_version());
    fprintf(out, "machine: %s; %s; CPUs busy in the last 0.5 s: ", model, date);
    if (busy >= 0.0)
        fprintf(out, "%.0f%%\n", 100.0 * busy);
    else
        fprintf(out, "unknown\n");
    fprintf(out,
            "Every filter is filled to steady state before timing (batch adds, untimed),\n"
            "then timed: adds of fresh keys one call at a time and with the batch calls\n"
            "(blocks of 256 keys hashed, then add_batch / contains_batch), and queries,\n"
            "half present (the last w keys), half absent. Hashing is included in every\n"
            "call. lines/op: add = k (slices or blocks written); contains = the mean of\n"
            "ebb_apbf_contains_counted over the queries (* = expected: libbloom from its\n"
            "fill formula, TLBF from the access recursion). ceil.frac = ops/s x lines/op\n"
            "divided by the machine's random line reads/s over a buffer of the filter's\n"
            "size (the best of several prefetching patterns).\n"
            "At w = 1e8 the timed adds are a sample of the steady state (counts in each\n"
            "section's header) after the fill; the default run measures there the APBF\n"
            "default and APBBF b=8 shapes at both fps, the other shapes and libbloom at\n"
            "fp 1%% only, and no TLBF (--full: all).\n"
            "The stable filter (issue 12) runs in the fp 1%% sections at libbloom's memory\n"
            "(d = 3, K = 5, P = 10, m = bytes x 8 / 3), filled for 6 m / K insertions\n"
            "(drawn independent: at 1e8 with --full only);\n"
            "test_and_add (fresh keys) is timed too; its lines/op are expected from the\n"
            "analysis (add: K + the decremented lines; contains: reads to the first 0).\n"
            "The Block Timing Bloom filter (issue 13, BTBF) runs in the fp 1%% sections at\n"
            "the APBF default's memory and window (ebb_timing_choose(w, bytes, 0)), filled\n"
            "with w + B keys; infer = ebb_timing_infer on the same queries, one call\n"
            "(uniform model over 10 w items, its default prior, costs 1 and 1);\n"
            "infer_prior = the same with a Zipf prior per query (no target).\n"
            "The Spectral Bloom filters (issue 14: MS, MI, RM) run in the fp 1%% sections\n"
            "at m = w counters of 32 bits and libbloom's k, holding n = w / libbloom's\n"
            "bits per item keys (each added once; E_b = libbloom's fp), beside an exact\n"
            "count of the same keys in GLib's GHashTable; estimate = the count's query\n"
            "(a hit: >= 1; fp = the error ratio of absent keys); lines/op expected k.\n");
    if (options->full)
        fprintf(out, "--full: every filter at w = 1e8 (slow).\n");
    fflush(out);
}

static void text_section(FILE *out, uint64_t window, double fp, const bench_plan *plan,
                         double hash_ns)
{
    fprintf(out,
            "\n== w = %llu, fp = %g: %u run%s (median), %llu timed adds per run and call "
            "style, %zu queries\n",
            (unsigned long long)window, fp, plan->runs, plan->runs == 1 ? "" : "s",
            (unsigned long long)plan->add_ops, plan->queries);
    fprintf(out, "   ebb_hash alone (XXH3-128 of 16 bytes): %.2f ns/op\n", hash_ns);
    fprintf(out, "   %-18s %-19s %-12s %-6s %8s %9s %9s %9s\n", "filter", "shape", "op",
            "call", "Mops/s", "ns/op", "lines/op", "ceil.frac");
    fflush(out);
}

static void text_subject(FILE *out, const bench_subject *s, const bench_ceiling *ceiling,
                         const bench_row *rows, int count, const bench_verdict *v)
{
    for (int i = 0; i < count; i++) {
        const bench_row *r = &rows[i];
        bool expected = r->lines_source == BENCH_LINES_EXPECTED;
        fprintf(out, "   %-18s %-19s %-12s %-6s %8.2f %9.2f %8.2f%s %9.3f\n",
                bench_variant_name(r->variant), r->shape, bench_op_name(r->op),
                r->batch ? "batch" : "single", r->mops, r->ns_per_op, r->lines_per_op,
                expected ? "*" : " ", r->ceiling_fraction);
    }
    double fill_s = v->fill_ns / 1e9;
    fprintf(out,
            "     %s: %.2f bits/item (%.2f MB); fp promised %.3g, measured %.3g "
            "(bound %.3g, %zu absent queries)\n"
            "     filled %llu keys in %.1f s (%.1f ns/key); ceiling %.1f M lines/s over "
            "%.2f MB (%s)\n",
            s->chooser, count > 0 ? rows[0].bits_per_item : 0.0,
            count > 0 ? (double)rows[0].memory_bytes / 1e6 : 0.0, s->fp_promise,
            v->fp_measured, v->fp_bound, v->absent, (unsigned long long)v->filled, fill_s,
            v->filled ? v->fill_ns / (double)v->filled : 0.0, ceiling->lines_per_s / 1e6,
            (double)ceiling->bytes / 1e6, ceiling->method);
    if (isfinite(v->fp_now))
        fprintf(out,
                "     fp promised = ebb_timing_fp, the average over the in-block position; "
                "at the queries' position %.3g\n",
                v->fp_now);
    if (isfinite(v->fp_averaged))
        fprintf(out,
                "     averaged over %u positions through a block: fp %.4g against "
                "ebb_timing_fp %.4g (+-%.2g, %llu absent probes); no false negative\n",
                v->averaged_positions, v->fp_averaged, s->fp_promise, v->fp_averaged_bound,
                (unsigned long long)v->averaged_probes);
    if (v->recounted_keys > 0) {
        fprintf(out,
                "     counts: %llu keys added again 1..7 times: %llu estimates above the "
                "truth, %llu below%s\n",
                (unsigned long long)v->recounted_keys,
                (unsigned long long)v->recounted_over,
                (unsigned long long)v->recounted_below,
                s->variant == BENCH_SPECTRAL_RM &&
                        ebb_spectral_get_params(s->filter)->marker !=
                            EBB_SPECTRAL_MARKER_EXACT
                    ? " (RM's residual risk without its exact marker, not a failure)"
                    : "");
        if (isfinite(v->error_low))
            fprintf(out,
                    "     error ratio of absent keys %.4g: E_b %.4g from both sides "
                    "(low %.4g, high %.4g)\n",
                    v->fp_measured, s->fp_promise, v->error_low, v->fp_bound);
    }
    if (isfinite(v->fn_expected))
        fprintf(out,
                "     forgets: fp is the stable rate FPS (both sides checked, low %.3g); "
                "test_and_add of %llu fresh keys saw %.4g;\n"
                "     present keys missed %.4g, analysis %.4g (+-%.2g) at gaps 1..%llu\n",
                v->fp_low, (unsigned long long)v->tested_fresh, v->tested_fp,
                v->fn_measured, v->fn_expected, v->fn_bound,
                (unsigned long long)s->present_span);
    fflush(out);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* A finite number, or null. */
static void json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.6g", value);
    else
        fputs("null", out);
}

static void json_key(FILE *out, const char *key)
{
    fputs(", ", out);
    json_string(out, key);
    fputs(": ", out);
}

static void json_row(bench_report *rep, const bench_subject *s, const bench_row *r)
{
    FILE *out = rep->out;
    char name[128];
    snprintf(name, sizeof name, "%s %s%s", bench_variant_name(r->variant), bench_op_name(r->op),
             r->batch ? " batch" : "");
    fputs(rep->json_rows++ == 0 ? "\n  {" : ",\n  {", out);
    json_string(out, "name");
    fputs(": ", out);
    json_string(out, name);
    json_key(out, "filter");
    json_string(out, bench_variant_family(r->variant));
    json_key(out, "variant");
    json_string(out, bench_variant_slug(r->variant));
    json_key(out, "shape");
    json_string(out, r->shape);
    json_key(out, "k");
    fprintf(out, "%u", s->k);
    json_key(out, "l");
    fprintf(out, "%u", s->l);
    json_key(out, "block_bits");
    fprintf(out, "%u", s->block_bits);
    json_key(out, "block_hashes");
    fprintf(out, "%u", s->block_hashes);
    json_key(out, "op");
    json_string(out, bench_op_name(r->op));
    json_key(out, "batch");
    fputs(r->batch ? "true" : "false", out);
    json_key(out, "window");
    fprintf(out, "%llu", (unsigned long long)r->window);
    json_key(out, "fp");
    json_number(out, r->fp);
    json_key(out, "fp_promised");
    json_number(out, r->fp_promise);
    json_key(out, "fp_measured");
    json_number(out, r->fp_measured);
    json_key(out, "mops");
    json_number(out, r->mops);
    json_key(out, "ns_per_op");
    json_number(out, r->ns_per_op);
    json_key(out, "bits_per_item");
    json_number(out, r->bits_per_item);
    json_key(out, "memory_bytes");
    fprintf(out, "%zu", r->memory_bytes);
    json_key(out, "lines_per_op");
    json_number(out, r->lines_per_op);
    json_key(out, "lines_source");
    json_string(out, lines_source_name(r));
    json_key(out, "ceiling_lines_per_s");
    json_number(out, r->ceiling_lines_per_s);
    json_key(out, "ceiling_fraction");
    json_number(out, r->ceiling_fraction);
    json_key(out, "runs");
    fprintf(out, "%u", r->runs);
    json_key(out, "ops");
    fprintf(out, "%llu", (unsigned long long)r->ops);
    fputc('}', out);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */
/* ------------------------------------------------------------------------ */

void bench_report_begin(bench_report *r, const bench_options *options)
{
    if (r->json)
        fputc('[', r->out);
    else
        text_begin(r->out, options);
}

void bench_report_section(bench_report *r, uint64_t window, double fp,
                          const bench_plan *plan, double hash_ns)
{
    if (!r->json)
        text_section(r->out, window, fp, plan, hash_ns);
}

void bench_report_subject(bench_report *r, const bench_subject *s,
                          const bench_ceiling *ceiling, const bench_row *rows, int count,
                          const bench_verdict *verdict)
{
    if (!r->json) {
        text_subject(r->out, s, ceiling, rows, count, verdict);
        return;
    }
    for (int i = 0; i < count; i++)
        json_row(r, s, &rows[i]);
    fflush(r->out);
}

void bench_report_text(bench_report *r, const char *format, ...)
{
    va_list args;
    if (r->json)
        return;
    va_start(args, format);
    vfprintf(r->out, format, args);
    va_end(args);
    fflush(r->out);
}

void bench_report_end(bench_report *r)
{
    if (r->json)
        fputs(r->json_rows ? "\n]\n" : "]\n", r->out);
    fflush(r->out);
}
