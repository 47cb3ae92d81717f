/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prototype-bench.c: ebb-bench-prototype, issue 17's benchmark of ebb's
 * APBF beside a model of the prototype APBF in RedisBloom's unmerged
 * AgePartitionedBF branch (bench/prototype.c says what it models).
 *
 * For (k, l) in (7,5), (10,7), (12,88) and w in 1e6, 1e7, 1e8 (--quick:
 * 1e6 only), the shape ebb_apbf_params_from_kl(k, l, w) gives, three
 * subjects in turn on the same 16-byte keys:
 *
 *   prototype model   its one-call add and contains (it has no batch);
 *   APBF ring         ebb's default layout: ebb_apbf_add / _contains on
 *                     the key bytes, and the batch (ebb_apbf_hash_batch in
 *                     blocks of 256, then add_batch / contains_batch);
 *   APBF sliced       the same params with layout EBB_APBF_LAYOUT_SLICED.
 *
 * Then at w = 1e6 the issue's (8, 8) (fp 1%): APBF sliced and ring beside
 * libbloom's bloom_init(w, 0.01). Then, at every window, the shapes the
 * front ends would choose at fp 1% for each layout (the ring's
 * ebb_apbf_choose, the bit-sliced chooser's least memory in whole cells),
 * one beside the other: ebb_apbf_preferred_layout follows these rows.
 * Every ebb subject here also times test_and_add: ebb_apbf_check_and_add
 * (one call) and ebb_apbf_check_and_add_batch on fresh keys, the step of
 * a deduplication (`ebb dedup`, APBF.ADD).
 *
 * Each subject goes through ebb-bench's procedure (bench/measure.c): filled
 * to steady state untimed ((k + l) generations, ebb with its batch add, the
 * model with its own add), then 3 runs (--runs) of timed adds, one call and
 * batch alternating, and 3 timed query passes of each style over 2^20
 * queries (half the last w keys, half never added); medians reported. The
 * answers are checked as ebb-bench checks every subject: no false negative,
 * fp of the absent half at most the promise ebb_apbf_fp(k, l) (the model's
 * too: it is the same structure) plus 5 binomial sd, each timed pass finding
 * the untimed pass's positives. The issue's targets are printed as `target
 * met: yes/no` lines. Exit status as ebb-bench: 1 when a check failed (a
 * wrong answer), never for a missed target; 2 on a usage error.
 */
#include "prototype.h"

#include <bloom.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "ebb-bench-prototype"
#define ISSUE "issue 17"
/* Keys generated at once (64 MiB, as ebb-bench). */
#define KEY_CHUNK ((size_t)1 << 22)
#define CEILING_REPEATS 3u
#define SMALL_WINDOW UINT64_C(1000000)
#define MAX_ROWS 256u

typedef struct kl_shape {
    uint32_t k, l;
} kl_shape;

static const kl_shape shapes[] = {{7, 5}, {10, 7}, {12, 88}};
static const uint64_t default_windows[] = {UINT64_C(1000000), UINT64_C(10000000),
                                           UINT64_C(100000000)};
/* The bit-sliced filter against libbloom and the ring: (8, 8), fp 1%. */
static const kl_shape sliced_shape = {8, 8};
#define SLICED_FP 0.01
/* The front ends' shapes for each layout (run_front_end_section). */
#define FRONT_END_FP 0.01

/* Targets (issue 17, "Done means"). */
#define ONE_CALL_TARGET 1.0       /* every shape and window            */
#define ONE_CALL_SMALL_TARGET 1.25 /* at w = 1e6                       */
#define SLICED_TARGET 1.5
#define BATCH_TARGET 3.0          /* at 1e7 and 1e8                    */

typedef struct row_set {
    bench_row rows[MAX_ROWS];
    size_t count;
} row_set;

static const bench_row *find(const row_set *set, uint64_t window, bench_variant variant,
                             const char *shape, bench_op op, bool batch)
{
    for (size_t i = 0; i < set->count; i++) {
        const bench_row *r = &set->rows[i];
        if (r->window == window && r->variant == variant && r->op == op &&
            r->batch == batch && strcmp(r->shape, shape) == 0)
            return r;
    }
    return NULL;
}

/* "k=7 l=5" (the model, the ring) or "k=7 l=5 sliced" (as subjects.c). */
static void shape_name(char *out, size_t size, kl_shape shape, bool sliced)
{
    snprintf(out, size, "k=%u l=%u%s", shape.k, shape.l, sliced ? " sliced" : "");
}

/* Measures a created subject, reports it and keeps its rows; returns the
 * failed checks. The subject is destroyed. */
static unsigned measure(bench_report *report, row_set *set, bench_subject *s,
                        const bench_plan *plan, bench_key_source *keys)
{
    bench_row rows[BENCH_MAX_ROWS];
    bench_verdict verdict;
    FILE *log = report->json ? stderr : report->out;
    int count = bench_measure(s, plan, keys, rows, &verdict, log);
    bench_ceiling ceiling = bench_probe_ceiling(s->memory(s), CEILING_REPEATS);
    bench_apply_ceiling(rows, count, &ceiling);
    bench_report_subject(report, s, &ceiling, rows, count, &verdict);
    unsigned lost = 0;
    for (int i = 0; i < count; i++) {
        if (set->count < MAX_ROWS)
            set->rows[set->count++] = rows[i];
        else
            lost++;
    }
    s->destroy(s);
    if (lost != 0) /* the ratios would read "nan": say why, and fail */
        fprintf(log, "  check FAILED: %u rows beyond MAX_ROWS (%u) were not kept\n", lost,
                MAX_ROWS);
    return verdict.failed_checks + (lost != 0);
}

static unsigned not_created(bench_report *report, const char *what, kl_shape shape,
                            uint64_t window)
{
    FILE *log = report->json ? stderr : report->out;
    fprintf(log, "  check FAILED: %s k=%u l=%u could not be created at w = %llu\n", what,
            shape.k, shape.l, (unsigned long long)window);
    return 1;
}

static bool shape_params(kl_shape shape, uint64_t window, bool sliced,
                         ebb_apbf_params *p)
{
    if (!bench_status_ok("ebb_apbf_params_from_kl",
                         ebb_apbf_params_from_kl(shape.k, shape.l, window, p)))
        return false;
    if (sliced)
        p->layout = EBB_APBF_LAYOUT_SLICED;
    return true;
}

/* An ebb filter of shape (k, l) for the window, ring or sliced. */
static unsigned measure_ebb(bench_report *report, row_set *set, kl_shape shape,
                            uint64_t window, bool sliced, const bench_plan *plan,
                            bench_key_source *keys)
{
    ebb_apbf_params p;
    bench_subject s;
    bench_variant variant = sliced ? BENCH_APBF_SLICED_KL : BENCH_APBF_RING_KL;
    const char *chooser = sliced ? "ebb_apbf_params_from_kl(k, l, w), layout SLICED"
                                 : "ebb_apbf_params_from_kl(k, l, w), layout RING";
    if (!shape_params(shape, window, sliced, &p) ||
        !bench_apbf_subject_create(&s, variant, window, &p, chooser))
        return not_created(report, bench_variant_name(variant), shape, window);
    return measure(report, set, &s, plan, keys);
}

static unsigned measure_model(bench_report *report, row_set *set, kl_shape shape,
                              uint64_t window, const bench_plan *plan,
                              bench_key_source *keys)
{
    ebb_apbf_params p;
    bench_subject s;
    if (!shape_params(shape, window, false, &p) || !bench_prototype_create(&s, window, &p))
        return not_created(report, bench_variant_name(BENCH_PROTOTYPE_MODEL), shape,
                           window);
    return measure(report, set, &s, plan, keys);
}

static void section(bench_report *report, uint64_t window, kl_shape shape, double fp,
                    const bench_plan *plan, bench_key_source *keys)
{
    ebb_apbf_params p;
    bench_report_section(report, window, fp, plan,
                         bench_hash_ns(keys, (size_t)plan->add_ops, plan->runs));
    if (shape_params(shape, window, false, &p))
        bench_report_text(report,
                          "   (k, l) = (%u, %u): m = %llu bits per slice, g = %llu; "
                          "the model's 2x MurmurHash64A alone: %.2f ns/op\n",
                          shape.k, shape.l, (unsigned long long)p.slice_bits,
                          (unsigned long long)p.generation,
                          bench_prototype_hash_ns(keys, (size_t)plan->add_ops,
                                                  plan->runs));
}

static unsigned run_shape(bench_report *report, row_set *set, uint64_t window,
                          kl_shape shape, const bench_options *options,
                          bench_key_source *keys)
{
    bench_plan plan = bench_plan_for(window, options);
    unsigned failures = 0;
    section(report, window, shape, ebb_apbf_fp(shape.k, shape.l), &plan, keys);
    failures += measure_model(report, set, shape, window, &plan, keys);
    failures += measure_ebb(report, set, shape, window, false, &plan, keys);
    failures += measure_ebb(report, set, shape, window, true, &plan, keys);
    return failures;
}

/* The (8, 8) at fp 1%: sliced, ring, libbloom. */
static unsigned run_sliced_section(bench_report *report, row_set *set, uint64_t window,
                                   const bench_options *options, bench_key_source *keys)
{
    bench_plan plan = bench_plan_for(window, options);
    bench_subject s;
    unsigned failures = 0;
    section(report, window, sliced_shape, SLICED_FP, &plan, keys);
    failures += measure_ebb(report, set, sliced_shape, window, true, &plan, keys);
    failures += measure_ebb(report, set, sliced_shape, window, false, &plan, keys);
    if (bench_subject_create(&s, BENCH_LIBBLOOM, window, SLICED_FP))
        failures += measure(report, set, &s, &plan, keys);
    else
        failures += not_created(report, "libbloom", sliced_shape, window);
    return failures;
}

/* The shapes the front ends choose at fp 1% for each layout: the ring's
 * ebb_apbf_choose(w, fp, 0) (`ebb dedup`, APBF.RESERVE) and the bit-sliced
 * chooser's least memory in whole cells. */
static bool front_end_params(uint64_t window, bool sliced, ebb_apbf_params *p)
{
    if (!sliced)
        return bench_status_ok("ebb_apbf_choose",
                               ebb_apbf_choose(window, FRONT_END_FP, 0, p));
    ebb_apbf_goal goal;
    memset(&goal, 0, sizeof goal);
    goal.window = window;
    goal.fp = FRONT_END_FP;
    goal.layout = EBB_APBF_LAYOUT_SLICED;
    return bench_status_ok("ebb_apbf_choose_goal", ebb_apbf_choose_goal(&goal, p));
}

static unsigned run_front_end_section(bench_report *report, row_set *set, uint64_t window,
                                      const bench_options *options, bench_key_source *keys)
{
    bench_plan plan = bench_plan_for(window, options);
    unsigned failures = 0;
    bench_report_section(report, window, FRONT_END_FP, &plan,
                         bench_hash_ns(keys, (size_t)plan.add_ops, plan.runs));
    bench_report_text(report, "   the front ends' shapes for each layout at fp 1%%\n");
    for (int sliced = 0; sliced <= 1; sliced++) {
        ebb_apbf_params p;
        bench_subject s;
        bench_variant variant = sliced ? BENCH_APBF_SLICED_KL : BENCH_APBF_RING_KL;
        const char *chooser = sliced ? "ebb_apbf_choose_goal(w, 0.01, layout SLICED)"
                                     : "ebb_apbf_choose(w, 0.01, 0): ebb dedup's ring";
        if (!front_end_params(window, sliced, &p) ||
            !bench_apbf_subject_create(&s, variant, window, &p, chooser)) {
            failures += not_created(report, chooser, (kl_shape){0, 0}, window);
            continue;
        }
        failures += measure(report, set, &s, &plan, keys);
    }
    return failures;
}

/* ------------------------------------------------------------------------ */
/* Targets                                                                  */
/* ------------------------------------------------------------------------ */

static const char *style(bool batch)
{
    return batch ? "batch" : "one call";
}

/* ebb's `variant` (one call or batch) over the model's one call:
 * throughput ratio, against target. */
static void model_ratio(bench_report *r, const row_set *set, uint64_t window,
                        kl_shape shape, bench_variant variant, bench_op op, bool batch,
                        double target)
{
    char what[192], label[16], name[64], model_name[64];
    bool sliced = variant == BENCH_APBF_SLICED_KL;
    bench_window_label(label, sizeof label, window);
    shape_name(name, sizeof name, shape, sliced);
    shape_name(model_name, sizeof model_name, shape, false);
    const bench_row *row = find(set, window, variant, name, op, batch);
    const bench_row *model =
        find(set, window, BENCH_PROTOTYPE_MODEL, model_name, op, false);
    snprintf(what, sizeof what, "w %s %s %s %s, %s / model one call", label,
             bench_variant_name(variant), name, bench_op_name(op), style(batch));
    bench_report_verdict(r, ISSUE, what, row && model ? row : NULL,
                         row && model ? model->ns_per_op / row->ns_per_op : NAN, target,
                         "x");
}

static bool window_ran(const uint64_t *windows, size_t count, uint64_t window)
{
    for (size_t i = 0; i < count; i++)
        if (windows[i] == window)
            return true;
    return false;
}

static void one_call_targets(bench_report *r, const row_set *set, const uint64_t *windows,
                             size_t window_count)
{
    bench_report_text(r, "\n%s: ebb's one-call add and contains >= %.2fx the model at "
                         "every shape and window, >= %.2fx at w = 1e6\n",
                      ISSUE, ONE_CALL_TARGET, ONE_CALL_SMALL_TARGET);
    for (size_t w = 0; w < window_count; w++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int op = BENCH_ADD; op <= BENCH_CONTAINS; op++)
                model_ratio(r, set, windows[w], shapes[i], BENCH_APBF_RING_KL,
                            (bench_op)op, false,
                            windows[w] == SMALL_WINDOW ? ONE_CALL_SMALL_TARGET
                                                       : ONE_CALL_TARGET);
}

static void batch_targets(bench_report *r, const row_set *set)
{
    bench_report_text(r, "\n%s: ebb's batches >= %.2fx the model's one call at w = 1e7 "
                         "and 1e8\n",
                      ISSUE, BATCH_TARGET);
    for (size_t w = 1; w < sizeof default_windows / sizeof default_windows[0]; w++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int op = BENCH_ADD; op <= BENCH_CONTAINS; op++)
                model_ratio(r, set, default_windows[w], shapes[i], BENCH_APBF_RING_KL,
                            (bench_op)op, true, BATCH_TARGET);
}

/* The sliced (8, 8) one-call contains over libbloom's check and the ring's. */
static void sliced_targets(bench_report *r, const row_set *set)
{
    char sliced_name[64], ring_name[64], what[192];
    shape_name(sliced_name, sizeof sliced_name, sliced_shape, true);
    shape_name(ring_name, sizeof ring_name, sliced_shape, false);
    const bench_row *sliced = find(set, SMALL_WINDOW, BENCH_APBF_SLICED_KL, sliced_name,
                                   BENCH_CONTAINS, false);
    const bench_row *ring = find(set, SMALL_WINDOW, BENCH_APBF_RING_KL, ring_name,
                                 BENCH_CONTAINS, false);
    const bench_row *bloom = NULL;
    for (size_t i = 0; i < set->count; i++)
        if (set->rows[i].variant == BENCH_LIBBLOOM && set->rows[i].op == BENCH_CONTAINS &&
            set->rows[i].window == SMALL_WINDOW)
            bloom = &set->rows[i];
    bench_report_text(r, "\n%s: the bit-sliced (8, 8) at w = 1e6 (fp 1%%): one-call "
                         "contains >= %.2fx libbloom's check and >= %.2fx the ring's\n",
                      ISSUE, SLICED_TARGET, SLICED_TARGET);
    snprintf(what, sizeof what, "w 1e6 APBF sliced k=8 l=8 contains, one call / libbloom%s%s "
                                "check", bloom ? " " : "", bloom ? bloom->shape : "");
    bench_report_verdict(r, ISSUE, what, sliced && bloom ? sliced : NULL,
                         sliced && bloom ? bloom->ns_per_op / sliced->ns_per_op : NAN,
                         SLICED_TARGET, "x");
    snprintf(what, sizeof what, "w 1e6 APBF sliced k=8 l=8 contains, one call / ring "
                                "one call");
    bench_report_verdict(r, ISSUE, what, sliced && ring ? sliced : NULL,
                         sliced && ring ? ring->ns_per_op / sliced->ns_per_op : NAN,
                         SLICED_TARGET, "x");
}

/* ns of a row, NaN when it was not measured. */
static double row_ns(const bench_row *row)
{
    return row != NULL ? row->ns_per_op : NAN;
}

/* Sliced over the model and over the ring at every measured point: no
 * target (issue 17 asks for the layout measured against the ring at every
 * window). */
static void sliced_ratios(bench_report *r, const row_set *set, const uint64_t *windows,
                          size_t window_count)
{
    bench_report_text(r, "\n%s (no target): the bit-sliced layout's throughput over the "
                         "model's one call and over the ring's\n(same call style)\n",
                      ISSUE);
    for (size_t w = 0; w < window_count; w++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int op = BENCH_ADD; op <= BENCH_CONTAINS; op++) {
                char label[16], sliced_name[64], ring_name[64];
                bench_window_label(label, sizeof label, windows[w]);
                shape_name(sliced_name, sizeof sliced_name, shapes[i], true);
                shape_name(ring_name, sizeof ring_name, shapes[i], false);
                double model = row_ns(find(set, windows[w], BENCH_PROTOTYPE_MODEL,
                                           ring_name, (bench_op)op, false));
                double sliced[2], ring[2];
                for (int batch = 0; batch <= 1; batch++) {
                    sliced[batch] = row_ns(find(set, windows[w], BENCH_APBF_SLICED_KL,
                                                sliced_name, (bench_op)op, batch));
                    ring[batch] = row_ns(find(set, windows[w], BENCH_APBF_RING_KL,
                                              ring_name, (bench_op)op, batch));
                }
                bench_report_text(r, "  %-8s w %s %-9s %-8s sliced one call / model "
                                     "%5.2fx; sliced / ring: one call %5.2fx, batch "
                                     "%5.2fx\n",
                                  ISSUE, label, ring_name, bench_op_name((bench_op)op),
                                  model / sliced[0], ring[0] / sliced[0],
                                  ring[1] / sliced[1]);
            }
}

/* The sliced chooser's shape over the ring's at every measured window:
 * what ebb_apbf_preferred_layout is decided from (docs/bench.md). */
static void front_end_ratios(bench_report *r, const row_set *set, const uint64_t *windows,
                             size_t window_count)
{
    bench_report_text(r, "\n%s (no target): the front ends' shapes at fp 1%%, bit-sliced "
                         "over ring (throughput, same call style; memory)\n",
                      ISSUE);
    for (size_t w = 0; w < window_count; w++) {
        ebb_apbf_params p[2];
        char name[2][64], label[16];
        if (!front_end_params(windows[w], false, &p[0]) ||
            !front_end_params(windows[w], true, &p[1]))
            continue;
        for (int sliced = 0; sliced <= 1; sliced++)
            shape_name(name[sliced], sizeof name[sliced], (kl_shape){p[sliced].k, p[sliced].l},
                       sliced);
        size_t bytes[2];
        if (ebb_apbf_params_memory(&p[0], &bytes[0]) != EBB_OK ||
            ebb_apbf_params_memory(&p[1], &bytes[1]) != EBB_OK)
            continue;
        bench_window_label(label, sizeof label, windows[w]);
        bench_report_text(r, "  %-8s w %s %s / %s: memory %.3fx\n", ISSUE, label, name[1],
                          name[0], (double)bytes[1] / (double)bytes[0]);
        static const bench_op ops[] = {BENCH_TEST_AND_ADD, BENCH_ADD, BENCH_CONTAINS};
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            double ratio[2];
            for (int batch = 0; batch <= 1; batch++)
                ratio[batch] =
                    row_ns(find(set, windows[w], BENCH_APBF_RING_KL, name[0], ops[o],
                                batch)) /
                    row_ns(find(set, windows[w], BENCH_APBF_SLICED_KL, name[1], ops[o],
                                batch));
            bench_report_text(r, "  %-8s w %s %-12s sliced / ring: one call %5.2fx, "
                                 "batch %5.2fx\n",
                              ISSUE, label, bench_op_name(ops[o]), ratio[0], ratio[1]);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */
/* ------------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [--json] [--quick] [--runs N] [--window N]\n"
            "\n"
            "Issue 17: ebb's APBF (one call and batch, ring and bit-sliced layouts)\n"
            "beside a model of the prototype APBF in RedisBloom's AgePartitionedBF\n"
            "branch (two MurmurHash64A, a %% per slice, byte-wise bits, memmove on\n"
            "shift), at (k, l) = (7,5), (10,7), (12,88) and w = 1e6, 1e7, 1e8; then\n"
            "the bit-sliced (8,8) at w = 1e6 beside libbloom and the ring. Answers are\n"
            "checked as ebb-bench checks them; targets printed as `target met: yes/no`.\n"
            "\n"
            "  --json      a JSON array of rows, as ebb-bench --json\n"
            "  --quick     w = 1e6 only\n"
            "  --runs N    repetitions per measurement, median reported (default 3)\n"
            "  --window N  this window only (1000..1e8)\n"
            "  --help      show this help\n"
            "\n"
            "Exit status: 0, 1 when a correctness check failed (a wrong answer), 2 on\n"
            "a usage error; a missed target is reported, never an error.\n",
            PROGRAM);
}

static void header(bench_report *r, const bench_options *options)
{
    char model[128];
    double busy = bench_system_busy(500);
    if (r->json) {
        bench_report_begin(r, options);
        return;
    }
    bench_cpu_model(model, sizeof model);
    bench_report_text(r, "%s: libebb %s beside a model of RedisBloom's prototype APBF "
                         "(bench/prototype.c) and libbloom %s,\n"
                         "single thread, 16-byte keys; machine: %s; CPUs busy in the last "
                         "0.5 s: %.0f%%\n",
                      PROGRAM, ebb_version_string(), bloom_version(), model,
                      busy >= 0.0 ? 100.0 * busy : NAN);
    bench_report_text(r,
                      "Per shape: the model (one call), ebb's ring and sliced layouts (one "
                      "call and batch of 256),\nsame (k, l, m, g) from "
                      "ebb_apbf_params_from_kl; filled to steady state untimed (ebb: batch "
                      "adds,\nthe model: its own adds), then timed adds of fresh keys and "
                      "2^20 queries (half present);\nmedians of the runs; ceil.frac as "
                      "ebb-bench.\n");
}

int main(int argc, char **argv)
{
    bench_options options;
    char message[256];
    switch (bench_parse_options(argc, argv, &options, message, sizeof message)) {
    case BENCH_PARSE_HELP:
        usage(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    case BENCH_PARSE_ERROR:
        fprintf(stderr, "%s: %s\n", PROGRAM, message);
        return 2;
    default:
        break;
    }
    if (options.full) {
        fprintf(stderr, "%s: --full: not an option here (every window runs by default)\n",
                PROGRAM);
        return 2;
    }

    uint64_t custom[] = {options.window};
    const uint64_t *windows = options.window ? custom : default_windows;
    size_t window_count = options.window ? 1
                          : options.quick ? 1
                                          : sizeof default_windows / sizeof default_windows[0];
    row_set *set = bench_xmalloc(sizeof *set);
    bench_report report = {stdout, options.json, 0};
    bench_key_source keys;
    unsigned failures = 0;
    uint64_t start = bench_now_ns();

    set->count = 0;
    bench_key_source_init(&keys, KEY_CHUNK);
    header(&report, &options);
    for (size_t w = 0; w < window_count; w++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            failures += run_shape(&report, set, windows[w], shapes[i], &options, &keys);
    if (window_ran(windows, window_count, SMALL_WINDOW))
        failures += run_sliced_section(&report, set, SMALL_WINDOW, &options, &keys);
    for (size_t w = 0; w < window_count; w++)
        failures += run_front_end_section(&report, set, windows[w], &options, &keys);

    one_call_targets(&report, set, windows, window_count);
    sliced_targets(&report, set);
    batch_targets(&report, set);
    sliced_ratios(&report, set, windows, window_count);
    front_end_ratios(&report, set, windows, window_count);
    if (failures != 0)
        bench_report_text(&report, "\n%u correctness check(s) FAILED\n", failures);
    else
        bench_report_text(&report, "\nall correctness checks passed (no false negatives, "
                                   "fp within bounds, timed passes agree)\n");
    bench_report_text(&report, "wall clock: %.0f s\n",
                      (double)(bench_now_ns() - start) / 1e9);
    bench_report_end(&report);
    bench_key_source_free(&keys);
    free(set);
    return fflush(stdout) != 0 || failures != 0 ? 1 : 0;
}
