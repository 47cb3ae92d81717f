/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strarray.c: the string-array index's rows (issue 15), after the filters'
 * sections: the same counters (strarray_counters.h: a simulated spectral
 * filter at average frequency 10) read through ebb_strarray_get in each
 * variable code and through a 32-bit fixed-width counter read
 * (ebb_cells_get, the spectral filter's fixed counters), in the same run.
 *
 *  - Lookup, at m = 1,442,696 counters (200,000 keys) and, with --full,
 *    m = 14,426,951 (2,000,000 keys): LOOKUP_QUERIES random reads
 *    of each, independent (the next index never waits for a value: the
 *    reads of a filter's k counters) and dependent (the next index adds
 *    the value's low bit: each read's latency in full), median of
 *    LOOKUP_RUNS. Every value is checked against the counters (a failed
 *    check). Target: lookup <= 3x the fixed-width read, both ways.
 *  - Build: ebb_strarray_load of the counters (a bulk load: codes, slack
 *    and offsets in one pass), ns per counter, median of LOOKUP_RUNS.
 *  - Increment: m = 10^3 .. 10^7 (the generator's m for floor(m ln 2 / 5)
 *    keys, so each array holds the same spectral counters at average
 *    frequency 10), loaded untimed, then m / 4 increments
 *    (ebb_strarray_get then ebb_strarray_set of v + 1) of uniformly random
 *    counters, timed; the small sizes repeat this from the loaded state
 *    until 2^16 increments are timed, so that every size sees the same
 *    growth per counter. The pushes and rebuilds the growth causes are in
 *    the time: the amortised cost. The array is then checked against the
 *    counters plus the increments. Target: the slowest size's ns per
 *    increment within 2x of the fastest's, per code. The same increments
 *    of 32-bit fixed-width counters follow (no target): how much of the
 *    spread is the memory hierarchy's (10^3 counters stay in L1, 10^7 do
 *    not).
 *
 * The rows are left out when --window is given (ebb bench's smoke test
 * uses a tiny window).
 * The sdsl-lite peer (bench/sdsl_peer.cpp, run by make bench next) builds
 * the same counters and measures dac_vector and vlc_vector beside
 * ebb_strarray_get in its own process.
 */
#include "bench_internal.h"
#include "strarray_counters.h"

#include "core/cells.h"
#include "core/strarray.h"

#include <stdlib.h>
#include <string.h>

#define LOOKUP_QUERIES ((size_t)1 << 21)
#define DEPENDENT_QUERIES ((size_t)1 << 19)
#define LOOKUP_RUNS 3u
#define INCREMENT_MIN_OPS UINT64_C(65536)
#define LOOKUP_TARGET 3.0
#define FLAT_TARGET 2.0

static const ebb_code variable_codes[] = {EBB_CODE_GAMMA, EBB_CODE_DELTA,
                                          EBB_CODE_STEPS};
#define CODE_COUNT (sizeof variable_codes / sizeof variable_codes[0])

/* ---- Lookup -------------------------------------------------------------- */

typedef struct read_times {
    double independent_ns; /* per read, median of the runs */
    double dependent_ns;
    bool correct;
} read_times;

/* The reads of one structure, a macro so that GET is inlined at each use
 * and the loop around it is the same for every subject. */
#define TIME_READS(GET, queries, counters, out)                            \
    do {                                                                      \
        double ind[LOOKUP_RUNS], dep[LOOKUP_RUNS];                            \
        (out)->correct = true;                                                \
        for (unsigned run = 0; run < LOOKUP_RUNS; run++) {                    \
            uint64_t sum = 0, start = bench_now_ns();                         \
            for (size_t q = 0; q < LOOKUP_QUERIES; q++)                       \
                sum += GET((queries)[q]);                                     \
            ind[run] = (double)(bench_now_ns() - start) / LOOKUP_QUERIES;     \
            uint64_t v = 0;                                                   \
            start = bench_now_ns();                                           \
            for (size_t q = 0; q < DEPENDENT_QUERIES; q++)                    \
                v = GET((queries)[q] + (v & 1u));                             \
            dep[run] = (double)(bench_now_ns() - start) / DEPENDENT_QUERIES;  \
            sum += v;                                                         \
            if (run == 0) {                                                   \
                uint64_t want = 0, w = 0;                                     \
                for (size_t q = 0; q < LOOKUP_QUERIES; q++)                   \
                    want += (counters)[(queries)[q]];                         \
                for (size_t q = 0; q < DEPENDENT_QUERIES; q++)                \
                    w = (counters)[(queries)[q] + (w & 1u)];                  \
                (out)->correct = sum == want + w;                             \
            }                                                                 \
        }                                                                     \
        (out)->independent_ns = bench_median(ind, LOOKUP_RUNS);               \
        (out)->dependent_ns = bench_median(dep, LOOKUP_RUNS);                 \
    } while (0)

static const ebb_cells *cells_subject;
static const ebb_strarray *array_subject;
#define CELLS_GET(i) ((uint64_t)ebb_cells_get(cells_subject, (i)))
#define ARRAY_GET(i) ebb_strarray_get(array_subject, (i))

/* A failed check, on the report's stream (stderr with --json, whose
 * stdout holds rows only). */
static unsigned report_failed(bench_report *r, const char *what, uint64_t m)
{
    fprintf(r->json ? stderr : r->out,
            "  check FAILED: %s at m = %llu read values other than the "
            "counters\n",
            what, (unsigned long long)m);
    return 1;
}

static void lookup_target(bench_report *r, uint64_t m, const char *code,
                          const char *how, double ratio)
{
    bench_report_text(r, "  issue 15 m %-9llu %s lookup / 32-bit fixed read, "
                         "%-11s %6.2fx (<= %.2fx)  target met: %s\n",
                      (unsigned long long)m, code, how, ratio, LOOKUP_TARGET,
                      ratio <= LOOKUP_TARGET ? "yes" : "no");
}

static unsigned lookup_size(bench_report *r, uint64_t keys)
{
    uint64_t m = sa_counter_count(keys);
    uint64_t *counters = calloc(m, sizeof *counters);
    uint64_t *queries = bench_xmalloc(LOOKUP_QUERIES * sizeof *queries);
    unsigned failed = 0;
    if (counters == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(EXIT_FAILURE);
    }
    sa_counters_fill(counters, keys);
    sa_queries_fill(queries, LOOKUP_QUERIES, m);

    ebb_cells cells;
    if (!bench_status_ok("ebb_cells_init", ebb_cells_init(&cells, m, 32)))
        exit(EXIT_FAILURE);
    for (uint64_t i = 0; i < m; i++)
        ebb_cells_set(&cells, i, (uint32_t)counters[i]);
    read_times fixed;
    cells_subject = &cells;
    TIME_READS(CELLS_GET, queries, counters, &fixed);
    if (!fixed.correct)
        failed += report_failed(r, "32-bit cells", m);
    bench_report_text(r, "\n  string-array lookup, m = %llu counters (%llu keys, "
                         "Zipf counts of mean %.0f, k = %u), %zu random reads\n"
                         "   %-18s %12s %12s %12s %12s %12s\n",
                      (unsigned long long)m, (unsigned long long)keys,
                      SA_MEAN_FREQUENCY, SA_HASHES, LOOKUP_QUERIES, "counters",
                      "bits/counter", "build ns/c", "indep. ns", "dep. ns",
                      "ratio i / d");
    bench_report_text(r, "   %-18s %12.3f %12s %12.2f %12.2f %12s\n",
                      "fixed 32-bit read", 32.0, "-", fixed.independent_ns,
                      fixed.dependent_ns, "1 / 1");

    double ratios[CODE_COUNT][2];
    for (size_t c = 0; c < CODE_COUNT; c++) {
        ebb_strarray_options o;
        ebb_strarray a;
        double build[LOOKUP_RUNS];
        ebb_strarray_options_init(variable_codes[c], 0, &o);
        if (!bench_status_ok("ebb_strarray_init", ebb_strarray_init(&a, m, &o)))
            exit(EXIT_FAILURE);
        for (unsigned run = 0; run < LOOKUP_RUNS; run++) {
            uint64_t start = bench_now_ns();
            if (!bench_status_ok("ebb_strarray_load", ebb_strarray_load(&a, counters)))
                exit(EXIT_FAILURE);
            build[run] = (double)(bench_now_ns() - start) / (double)m;
        }
        read_times t;
        array_subject = &a;
        TIME_READS(ARRAY_GET, queries, counters, &t);
        if (!t.correct)
            failed += report_failed(r, ebb_code_name(variable_codes[c]), m);
        ratios[c][0] = t.independent_ns / fixed.independent_ns;
        ratios[c][1] = t.dependent_ns / fixed.dependent_ns;
        char label[32], ratio[32];
        snprintf(label, sizeof label, "%s (default)", ebb_code_name(variable_codes[c]));
        snprintf(ratio, sizeof ratio, "%.2f / %.2f", ratios[c][0], ratios[c][1]);
        bench_report_text(r, "   %-18s %12.3f %12.2f %12.2f %12.2f %12s\n", label,
                          (double)ebb_strarray_bytes(&a) * 8.0 / (double)m,
                          bench_median(build, LOOKUP_RUNS), t.independent_ns,
                          t.dependent_ns, ratio);
        ebb_strarray_free(&a);
    }
    for (size_t c = 0; c < CODE_COUNT; c++) {
        lookup_target(r, m, ebb_code_name(variable_codes[c]), "independent",
                      ratios[c][0]);
        lookup_target(r, m, ebb_code_name(variable_codes[c]), "dependent",
                      ratios[c][1]);
    }
    ebb_cells_free(&cells);
    free(queries);
    free(counters);
    return failed;
}

/* ---- Increment ----------------------------------------------------------- */

/* The work of an increment row: the m counters of `keys` keys, m / 4
 * random targets in [0, m), and the repetitions that time at least
 * INCREMENT_MIN_OPS increments. */
typedef struct increment_work {
    uint64_t m, ops, reps;
    uint64_t *counters, *targets;
} increment_work;

static increment_work increment_work_of(uint64_t keys)
{
    increment_work w;
    w.m = sa_counter_count(keys);
    w.ops = w.m / 4u;
    w.reps = (INCREMENT_MIN_OPS + w.ops - 1u) / w.ops;
    w.counters = calloc(w.m, sizeof *w.counters);
    w.targets = bench_xmalloc(w.ops * sizeof *w.targets);
    if (w.counters == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(EXIT_FAILURE);
    }
    sa_counters_fill(w.counters, keys);
    sa_queries_fill(w.targets, w.ops, w.m + 1u); /* [0, m) */
    return w;
}

/* ns per increment on the counters of `keys` keys: m / 4 increments of
 * random counters from the loaded state, repeated from that state until
 * INCREMENT_MIN_OPS are timed (every size sees the same growth per
 * counter); false when the array then differs from the counters plus the
 * increments. */
static bool increment_size(ebb_code code, uint64_t keys, double *ns,
                           uint64_t *m_out, ebb_strarray_stats *stats)
{
    increment_work w = increment_work_of(keys);
    uint64_t m = w.m, ops = w.ops, reps = w.reps;
    uint64_t *counters = w.counters, *targets = w.targets;
    ebb_strarray_options o;
    ebb_strarray a;
    ebb_strarray_options_init(code, 0, &o);
    if (!bench_status_ok("ebb_strarray_init", ebb_strarray_init(&a, m, &o)))
        exit(EXIT_FAILURE);
    unsigned errors = 0;
    uint64_t timed = 0;
    for (uint64_t rep = 0; rep < reps; rep++) {
        if (!bench_status_ok("ebb_strarray_load", ebb_strarray_load(&a, counters)))
            exit(EXIT_FAILURE);
        uint64_t start = bench_now_ns();
        for (uint64_t q = 0; q < ops; q++) {
            uint64_t i = targets[q];
            errors += ebb_strarray_set(&a, i, ebb_strarray_get(&a, i) + 1u) != EBB_OK;
        }
        timed += bench_now_ns() - start;
    }
    *ns = (double)timed / (double)(ops * reps);
    for (uint64_t q = 0; q < ops; q++)
        counters[targets[q]]++;
    bool same = errors == 0;
    for (uint64_t i = 0; i < m && same; i++)
        same = ebb_strarray_get(&a, i) == counters[i];
    ebb_strarray_get_stats(&a, stats);
    *m_out = m;
    ebb_strarray_free(&a);
    free(targets);
    free(counters);
    return same;
}

/* The same increments on 32-bit fixed-width counters (ebb_cells): no
 * target, the memory hierarchy's share of the spread between sizes. */
static double fixed_increment_ns(uint64_t keys, uint64_t *m_out)
{
    increment_work w = increment_work_of(keys);
    uint64_t m = w.m, ops = w.ops, reps = w.reps;
    uint64_t *counters = w.counters, *targets = w.targets;
    ebb_cells cells;
    if (!bench_status_ok("ebb_cells_init", ebb_cells_init(&cells, m, 32)))
        exit(EXIT_FAILURE);
    uint64_t timed = 0;
    for (uint64_t rep = 0; rep < reps; rep++) {
        for (uint64_t i = 0; i < m; i++)
            ebb_cells_set(&cells, i, (uint32_t)counters[i]);
        uint64_t start = bench_now_ns();
        for (uint64_t q = 0; q < ops; q++) {
            uint64_t i = targets[q];
            ebb_cells_set(&cells, i, ebb_cells_get(&cells, i) + 1u);
        }
        timed += bench_now_ns() - start;
    }
    ebb_cells_free(&cells);
    free(targets);
    free(counters);
    *m_out = m;
    return (double)timed / (double)(ops * reps);
}

static unsigned increments(bench_report *r)
{
    static const double sizes[] = {1e3, 1e4, 1e5, 1e6, 1e7};
    size_t size_count = sizeof sizes / sizeof sizes[0];
    unsigned failed = 0;
    bench_report_text(r, "\n  string-array increment (get, set v + 1) of random "
                         "counters: m / 4 from the spectral counters loaded, repeated to\n"
                         "  %llu at least, pushes and rebuilds in the time; ns per "
                         "increment (rebuilds: all passes, loads included):\n",
                      (unsigned long long)INCREMENT_MIN_OPS);
    for (size_t c = 0; c < CODE_COUNT; c++) {
        double ns[5], lo = INFINITY, hi = 0;
        uint64_t rebuilds = 0;
        char line[256];
        int used = snprintf(line, sizeof line, "   %-8s", ebb_code_name(variable_codes[c]));
        for (size_t s = 0; s < size_count; s++) {
            uint64_t keys = (uint64_t)(sizes[s] * log(2.0) / SA_HASHES);
            uint64_t m;
            ebb_strarray_stats st;
            if (!increment_size(variable_codes[c], keys, &ns[s], &m, &st))
                failed += report_failed(r, ebb_code_name(variable_codes[c]), m);
            rebuilds += st.rebuilds;
            lo = ns[s] < lo ? ns[s] : lo;
            hi = ns[s] > hi ? ns[s] : hi;
            used += snprintf(line + used, sizeof line - (size_t)used,
                             " m %-8llu %5.0f", (unsigned long long)m, ns[s]);
        }
        bench_report_text(r, "%s  (%llu rebuilds)\n", line,
                          (unsigned long long)rebuilds);
        bench_report_text(r, "  issue 15 %s increment, slowest / fastest size "
                         "(1e3 .. 1e7)                 %6.2fx (<= %.2fx)  target met: %s\n",
                          ebb_code_name(variable_codes[c]),
                          hi / lo, FLAT_TARGET, hi / lo <= FLAT_TARGET ? "yes" : "no");
    }
    char line[256];
    int used = snprintf(line, sizeof line, "   %-8s", "fixed32");
    for (size_t s = 0; s < size_count; s++) {
        uint64_t m;
        double ns = fixed_increment_ns((uint64_t)(sizes[s] * log(2.0) / SA_HASHES), &m);
        used += snprintf(line + used, sizeof line - (size_t)used, " m %-8llu %5.0f",
                         (unsigned long long)m, ns);
    }
    bench_report_text(r, "%s  (32-bit fixed-width counters, no target)\n", line);
    return failed;
}

unsigned bench_strarray_run(bench_report *r, const bench_options *options)
{
    unsigned failed = 0;
    uint64_t start = bench_now_ns();
    bench_report_text(r, "\nissue 15 (the string-array index, defaults: block "
                         "512, sub 16, slack 64): indexed lookup <= 3x a fixed-width "
                         "counter read,\nincrement amortised O(1) (time per increment "
                         "within 2x from 1e3 to 1e7 counters); bench/strarray.c\n");
    failed += lookup_size(r, 200000u);
    if (options->full)
        failed += lookup_size(r, 2000000u);
    failed += increments(r);
    bench_report_text(r, "  (string-array rows: %.1f s)\n",
                      (double)(bench_now_ns() - start) / 1e9);
    return failed;
}
