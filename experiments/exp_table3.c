/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_table3: the paper's Tables 3 and 4, the blocked variant (APBBF).
 *
 * Every slice is a blocked Bloom filter: one hash picks a block of B bits,
 * b bits are set in it, one in each of b parts of B / b bits. A slice is
 * full (its blocks' parts half full on average) at L = ln(1/2) / ln(1 - b/B)
 * items per block, so with n blocks per slice g = floor(n L / k).
 *
 * Table 3. The paper's "APBBF" column is F(k, l, 0, 0) on the match
 * probability of a block at the design load: slice i holds
 * min(i + 1, k) L / k items per block on average, the load of a block is
 * Poisson, and a block with j items answers yes for a new key with
 * probability (1 - (1 - b/B)^j)^b. That model is computed here, on its own,
 * and checked digit for digit against the paper; a real shape (sized with
 * ebb_apbf_params_from_kl_blocked for a window of 2^16) rounds g down to a
 * whole number of items, so its ebb_apbf_shape_fp differs in the last
 * digits, and it is the reference of the measurement. The "APBF" column is
 * a plain APBF of (k b, l b) on the linear ramp, "cap." the capacity of a
 * blocked slice relative to a plain one of the same bits,
 * 1 / ((B / b) (-ln(1 - b / B))).
 *
 * Table 4. Bits per window item, (k + l) m / w, of four APBBF shapes for a
 * window of 2^16, beside SWAMP's figures as the paper quotes them.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "exp_common.h"

#define EXPERIMENT_ID 3u
#define WINDOW (UINT64_C(1) << 16)
#define FILTERS 8u
#define TARGET_FALSE_POSITIVES 1000.0
#define MIN_PROBES 400000.0
#define MAX_PROBES 600000000.0
#define ROWS 16
#define TABLE4_ROWS 4

/* Table 3 as printed: rates with 7 decimals, cap. with 3, the rest 2. */
static const struct paper_row {
    unsigned k, l, block_bits, block_hashes;
    double apbbf_fp, apbf_fp, capacity, window, fp_reads, false_reads, npws;
} PAPER[ROWS] = {
    {2, 3, 64, 4, 0.0159865, 0.0180539, 0.968, 3.30, 2.72, 2.25, 0.36},
    {2, 3, 512, 4, 0.0121825, 0.0180539, 0.996, 3.31, 2.71, 2.23, 0.35},
    {2, 5, 64, 4, 0.0257532, 0.0335359, 0.968, 3.80, 3.28, 3.37, 0.21},
    {2, 5, 512, 4, 0.0197654, 0.0335359, 0.996, 3.81, 3.26, 3.33, 0.21},
    {3, 5, 64, 4, 0.0016005, 0.0017134, 0.968, 4.40, 3.85, 2.29, 0.22},
    {3, 5, 512, 4, 0.0010688, 0.0017134, 0.996, 4.40, 3.83, 2.26, 0.21},
    {3, 8, 64, 4, 0.0026767, 0.0031769, 0.968, 4.92, 4.41, 3.43, 0.13},
    {3, 8, 512, 4, 0.0017993, 0.0031769, 0.996, 4.92, 4.39, 3.38, 0.13},
    {2, 3, 64, 8, 0.0005608, 0.0001122, 0.936, 3.33, 2.70, 2.05, 0.34},
    {2, 3, 512, 8, 0.0000738, 0.0001122, 0.992, 3.33, 2.68, 2.02, 0.33},
    {2, 5, 64, 8, 0.0009231, 0.0002342, 0.936, 3.80, 3.23, 3.08, 0.20},
    {2, 5, 512, 8, 0.0001226, 0.0002342, 0.992, 3.80, 3.21, 3.03, 0.20},
    {3, 5, 64, 8, 0.0000104, 0.0000007, 0.936, 4.40, 3.82, 2.05, 0.20},
    {3, 5, 512, 8, 0.0000005, 0.0000007, 0.992, 4.40, 3.78, 2.02, 0.20},
    {3, 8, 64, 8, 0.0000178, 0.0000014, 0.936, 4.88, 4.35, 3.08, 0.13},
    {3, 8, 512, 8, 0.0000009, 0.0000014, 0.992, 4.88, 4.32, 3.03, 0.13},
};

/* Table 4 as printed (bits per element with 1 decimal). */
static const struct paper_table4_row {
    unsigned k, l, block_bits, block_hashes;
    double fp, swamp_bits, apbbf_bits, swamp_npws, apbbf_npws;
} PAPER4[TABLE4_ROWS] = {
    {2, 5, 512, 4, 0.0197654, 32.0, 16.2, 0.00, 0.21},
    {3, 8, 512, 4, 0.0017993, 39.8, 23.9, 0.00, 0.13},
    {2, 5, 512, 8, 0.0001226, 48.5, 32.6, 0.00, 0.20},
    {3, 8, 512, 8, 0.0000009, 64.6, 48.0, 0.00, 0.13},
};

/* ------------------------------------------------------------------------ */
/* The design-load model, written here independently of the library         */
/* ------------------------------------------------------------------------ */

static double items_per_full_block(unsigned block_bits, unsigned hashes)
{
    return log(0.5) / log1p(-(double)hashes / (double)block_bits);
}

/* P(a block answers yes for a new key) with a Poisson(load) item count:
 * sum_j e^-load load^j / j! (1 - (1 - b/B)^j)^b. */
static double block_yes(double load, unsigned block_bits, unsigned hashes)
{
    double keep = 1.0 - (double)hashes / (double)block_bits;
    double term = exp(-load); /* Poisson probability of j items */
    double clear = 1.0;       /* (1 - b/B)^j                      */
    double sum = 0.0;
    unsigned last = (unsigned)(load + 15.0 * sqrt(load) + 50.0);
    for (unsigned j = 0; j <= last; j++) {
        sum += term * pow(1.0 - clear, (double)hashes);
        clear *= keep;
        term *= load / (double)(j + 1);
    }
    return sum;
}

static void design_ratios(const struct paper_row *p, double *ratios)
{
    double full = items_per_full_block(p->block_bits, p->block_hashes);
    for (unsigned i = 0; i < p->k + p->l; i++) {
        unsigned generations = i < p->k ? i + 1 : p->k;
        ratios[i] = block_yes(full * generations / p->k, p->block_bits,
                              p->block_hashes);
    }
}

static double design_npws(const struct paper_row *p, const double *ratios)
{
    double full = ratios[p->k + p->l - 1], sum = 0.0, power = 1.0;
    for (unsigned i = 0; i < p->k; i++, power *= full)
        sum += power;
    return sum / (double)p->l;
}

/* ------------------------------------------------------------------------ */
/* Table 3                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct row_result {
    ebb_apbf_params shape;
    double fp_design, fp_shape, fp_apbf_linear, fp_apbf_geometric, capacity;
    double npws_design, npws_shape;
    ebb_apbf_accesses reads_design, reads_shape;
    exp_worst measured;
} row_result;

static void analytic(const struct paper_row *p, row_result *r)
{
    double ratios[EXP_MAX_SLICES];
    design_ratios(p, ratios);
    r->fp_design = ebb_apbf_fp_ratios(p->k, p->l, ratios);
    r->npws_design = design_npws(p, ratios);
    exp_require(ebb_apbf_expected_accesses(p->k, p->l, ratios,
                                           &r->reads_design),
                "ebb_apbf_expected_accesses (design)");

    exp_require(ebb_apbf_params_from_kl_blocked(p->k, p->l, WINDOW,
                                                p->block_bits,
                                                p->block_hashes, &r->shape),
                "ebb_apbf_params_from_kl_blocked");
    exp_require(ebb_apbf_shape_ratios(&r->shape, ratios),
                "ebb_apbf_shape_ratios");
    r->fp_shape = ebb_apbf_shape_fp(&r->shape);
    r->npws_shape = ebb_apbf_shape_npws(&r->shape);
    exp_require(ebb_apbf_expected_accesses(p->k, p->l, ratios,
                                           &r->reads_shape),
                "ebb_apbf_expected_accesses (shape)");

    unsigned kb = p->k * p->block_hashes, lb = p->l * p->block_hashes;
    exp_require(ebb_apbf_worst_fill(kb, lb, EBB_FILL_LINEAR, ratios),
                "ebb_apbf_worst_fill");
    r->fp_apbf_linear = ebb_apbf_fp_ratios(kb, lb, ratios);
    r->fp_apbf_geometric = ebb_apbf_fp(kb, lb);
    double parts = (double)p->block_bits / (double)p->block_hashes;
    r->capacity =
        1.0 / (parts * -log1p(-(double)p->block_hashes / p->block_bits));
}

static uint64_t probes_for(double fp)
{
    return exp_probes_for(fp, TARGET_FALSE_POSITIVES, MIN_PROBES, MAX_PROBES);
}


static bool all_reads_close(const row_result *r)
{
    return exp_worst_reads_close(&r->measured, &r->reads_shape);
}

#define ROW_FMT "(%u,%u,%u,%u)"
#define ROW_ARGS(p) (p)->k, (p)->l, (p)->block_bits, (p)->block_hashes

static void check_row(exp_context *ctx, const struct paper_row *p,
                      const row_result *r)
{
    exp_check(ctx, EXP_CHECK_PAPER, exp_agrees(r->fp_design, p->apbbf_fp, 7),
              ROW_FMT " design-load fp %.9f vs paper %.7f", ROW_ARGS(p),
              r->fp_design, p->apbbf_fp);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(r->fp_apbf_linear, p->apbf_fp, 7),
              ROW_FMT " APBF(kb,lb) linear fp %.9f vs paper %.7f",
              ROW_ARGS(p), r->fp_apbf_linear, p->apbf_fp);
    exp_check(ctx, EXP_CHECK_PAPER, exp_agrees(r->capacity, p->capacity, 3),
              ROW_FMT " capacity %.5f vs paper %.3f", ROW_ARGS(p),
              r->capacity, p->capacity);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(r->reads_design.window_item, p->window, 2) &&
                  exp_agrees(r->reads_design.false_positive, p->fp_reads, 2) &&
                  exp_agrees(r->reads_design.false_query, p->false_reads, 2),
              ROW_FMT " design reads %.4f %.4f %.4f vs paper %.2f %.2f %.2f",
              ROW_ARGS(p), r->reads_design.window_item,
              r->reads_design.false_positive, r->reads_design.false_query,
              p->window, p->fp_reads, p->false_reads);
    exp_check(ctx, EXP_CHECK_PAPER, exp_agrees(r->npws_shape, p->npws, 2),
              ROW_FMT " NPWS (shape) %.4f vs paper %.2f", ROW_ARGS(p),
              r->npws_shape, p->npws);

    const exp_worst *w = &r->measured;
    exp_check(ctx, EXP_CHECK_GUARANTEE, w->window_missed == 0,
              ROW_FMT " all %" PRIu64 " window items found (%" PRIu64
              " missed)",
              ROW_ARGS(p), w->window_items, w->window_missed);
    double z = exp_binomial_z(w->hits, w->probes, r->fp_shape);
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              ROW_FMT " measured fp %.4g vs exact shape %.4g, z = %.2f "
              "(%" PRIu64 " false positives)",
              ROW_ARGS(p), exp_worst_rate(w), r->fp_shape, z, w->hits);
    exp_check(ctx, EXP_CHECK_STAT, all_reads_close(r),
              ROW_FMT " reads window %.3f/%.3f fp %.3f/%.3f false %.3f/%.3f "
              "(measured/predicted)",
              ROW_ARGS(p), exp_worst_window_reads(w), r->reads_shape.window_item,
              exp_worst_fp_reads(w), r->reads_shape.false_positive,
              exp_worst_false_reads(w), r->reads_shape.false_query);
}

static void write_csv_header(FILE *csv)
{
    fputs("k,l,block_bits,block_hashes,slice_bits,blocks,generation,window,"
          "filters,probes,hits,paper_fp,design_fp,shape_fp,measured_fp,"
          "binomial_sd,z,paper_apbf_fp,apbf_linear_fp,apbf_geometric_fp,"
          "paper_capacity,capacity,paper_window_reads,design_window_reads,"
          "predicted_window_reads,measured_window_reads,paper_fp_reads,"
          "design_fp_reads,predicted_fp_reads,measured_fp_reads,"
          "paper_false_reads,design_false_reads,predicted_false_reads,"
          "measured_false_reads,window_items,window_missed,paper_npws,"
          "design_npws,shape_npws\n",
          csv);
}

static void write_csv_row(FILE *csv, const struct paper_row *p,
                          const row_result *r)
{
    const exp_worst *w = &r->measured;
    fprintf(csv,
            "%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
            ",%u,%" PRIu64 ",%" PRIu64 ",%.7f,%.9g,%.9g,%.9g,%.6g,%.3f,%.7f,"
            "%.9g,%.9g,%.3f,%.6f,%.2f,%.6f,%.6f,%.6f,%.2f,%.6f,%.6f,%.6f,%.2f,"
            "%.6f,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%.2f,%.6f,%.6f\n",
            ROW_ARGS(p), r->shape.slice_bits,
            r->shape.slice_bits / r->shape.block_bits, r->shape.generation,
            r->shape.window, FILTERS, w->probes, w->hits, p->apbbf_fp,
            r->fp_design, r->fp_shape, exp_worst_rate(w),
            exp_binomial_sd(w->probes, r->fp_shape),
            exp_binomial_z(w->hits, w->probes, r->fp_shape), p->apbf_fp,
            r->fp_apbf_linear, r->fp_apbf_geometric, p->capacity, r->capacity,
            p->window,
            r->reads_design.window_item, r->reads_shape.window_item,
            exp_worst_window_reads(w), p->fp_reads, r->reads_design.false_positive,
            r->reads_shape.false_positive, exp_worst_fp_reads(w), p->false_reads,
            r->reads_design.false_query, r->reads_shape.false_query,
            exp_worst_false_reads(w), w->window_items, w->window_missed, p->npws,
            r->npws_design, r->npws_shape);
}

static void md_fp_row(FILE *md, const struct paper_row *p,
                      const row_result *r)
{
    const exp_worst *w = &r->measured;
    double z = exp_binomial_z(w->hits, w->probes, r->fp_shape);
    fprintf(md,
            "| %u | %u | %u | %u | %" PRIu64 " | %" PRIu64 " | %.7f | %.7f | "
            "%s | %.4g | %.4g ± %.2g | %" PRIu64 " | %+.2f | %s |\n",
            ROW_ARGS(p), r->shape.slice_bits / r->shape.block_bits,
            r->shape.generation, p->apbbf_fp, r->fp_design,
            exp_mark(exp_agrees(r->fp_design, p->apbbf_fp, 7)), r->fp_shape,
            exp_worst_rate(w), exp_binomial_sd(w->probes, r->fp_shape),
            w->hits, z, exp_mark(fabs(z) <= 3.0));
}

static void md_compare_row(FILE *md, const struct paper_row *p,
                           const row_result *r)
{
    fprintf(md,
            "| %u | %u | %u | %u | %.7f | %.7f | %s | %.4g | %.3f | %.4f | "
            "%s | %.2f | %.4f | %s |\n",
            ROW_ARGS(p), p->apbf_fp, r->fp_apbf_linear,
            exp_mark(exp_agrees(r->fp_apbf_linear, p->apbf_fp, 7)),
            r->fp_apbf_geometric, p->capacity,
            r->capacity, exp_mark(exp_agrees(r->capacity, p->capacity, 3)),
            p->npws, r->npws_shape, exp_mark(exp_agrees(r->npws_shape, p->npws, 2)));
}

static void md_reads_row(FILE *md, const struct paper_row *p,
                         const row_result *r)
{
    const double paper[3] = {p->window, p->fp_reads, p->false_reads};
    fprintf(md, "| %u | %u | %u | %u |", ROW_ARGS(p));
    exp_md_reads_cells(md, paper, &r->reads_design, &r->reads_shape, &r->measured);
}

static void write_table3_markdown(FILE *md, const row_result *rows)
{
    fprintf(md,
            "Shapes sized with ebb_apbf_params_from_kl_blocked for a window "
            "of %" PRIu64 "; %u filters per row at the worst moment, probed "
            "with fresh keys until about %.0f false positives are expected "
            "(at least %.0f, at most %.0f probes per row).\n\n",
            WINDOW, FILTERS, TARGET_FALSE_POSITIVES, MIN_PROBES, MAX_PROBES);
    fputs("#### False-positive rate\n\n"
          "| k | l | B | b | blocks/slice | g | paper | design load (ours) | "
          "= paper | exact shape | measured ± sd | FPs | z | \\|z\\| ≤ 3 |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          md);
    for (unsigned i = 0; i < ROWS; i++)
        md_fp_row(md, &PAPER[i], &rows[i]);
    fputs("\n#### Plain APBF of (k b, l b), capacity, NPWS\n\n"
          "| k | l | B | b | paper APBF | linear (ours) | = paper | "
          "geometric | paper cap. | cap. | = paper | paper NPWS | NPWS | "
          "= paper |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          md);
    for (unsigned i = 0; i < ROWS; i++)
        md_compare_row(md, &PAPER[i], &rows[i]);
    fputs("\n#### Query accesses (block reads)\n\n"
          "Each cell: paper / design load (ours) / predicted on the exact "
          "shape / measured.\n\n"
          "| k | l | B | b | window items | false positives | false answers "
          "| measured within 5% |\n"
          "|---|---|---|---|---|---|---|---|\n",
          md);
    for (unsigned i = 0; i < ROWS; i++)
        md_reads_row(md, &PAPER[i], &rows[i]);
}

/* ------------------------------------------------------------------------ */
/* Table 4                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct table4_result {
    ebb_apbf_params shape;
    double bits, design_bits, allocated_bits, fp_design, npws;
} table4_result;

static void table4_row(const struct paper_table4_row *p, table4_result *r)
{
    struct paper_row as_table3 = {p->k, p->l, p->block_bits, p->block_hashes,
                                  0, 0, 0, 0, 0, 0, 0};
    double ratios[EXP_MAX_SLICES];
    design_ratios(&as_table3, ratios);
    r->fp_design = ebb_apbf_fp_ratios(p->k, p->l, ratios);
    exp_require(ebb_apbf_params_from_kl_blocked(p->k, p->l, WINDOW,
                                                p->block_bits,
                                                p->block_hashes, &r->shape),
                "ebb_apbf_params_from_kl_blocked");
    double slices = (double)(p->k + p->l);
    r->bits = slices * (double)r->shape.slice_bits / (double)r->shape.window;
    /* Without rounding: k + l slices of k B / L bits per generation item,
     * l generations per window. */
    r->design_bits = slices / (double)p->l * (double)p->k *
                     (double)p->block_bits /
                     items_per_full_block(p->block_bits, p->block_hashes);
    size_t bytes;
    exp_require(ebb_apbf_params_memory(&r->shape, &bytes),
                "ebb_apbf_params_memory");
    r->allocated_bits = 8.0 * (double)bytes / (double)r->shape.window;
    r->npws = ebb_apbf_shape_npws(&r->shape);
}

static void table4(exp_context *ctx)
{
    FILE *csv = exp_open_csv(ctx, "table4.csv");
    FILE *md = exp_open_fragment(ctx, "table4");
    fputs("k,l,block_bits,block_hashes,window,slice_bits,paper_fp,design_fp,"
          "swamp_bits,paper_apbbf_bits,bits,design_bits,allocated_bits,"
          "swamp_npws,paper_npws,npws\n",
          csv);
    fprintf(md,
            "Window of %" PRIu64 " items. bits = (k + l) m / w of the shape "
            "ebb_apbf_params_from_kl_blocked builds; design = the same "
            "without rounding, (k + l) / l · k B / L; allocated = every byte "
            "the filter holds (handle and cache-line alignment included) "
            "per window item.\n\n",
            WINDOW);
    fputs("| k | l | B | b | fp (paper / design) | SWAMP | paper APBBF | "
          "bits | design | allocated | = paper | < SWAMP | SWAMP NPWS | "
          "paper NPWS | NPWS |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          md);
    for (unsigned i = 0; i < TABLE4_ROWS; i++) {
        const struct paper_table4_row *p = &PAPER4[i];
        table4_result r;
        table4_row(p, &r);
        bool agrees = exp_agrees(r.bits, p->apbbf_bits, 1);
        bool smaller = r.bits < p->swamp_bits && r.allocated_bits < p->swamp_bits;
        exp_check(ctx, EXP_CHECK_PAPER, agrees,
                  ROW_FMT " bits per element %.3f vs paper %.1f", ROW_ARGS(p),
                  r.bits, p->apbbf_bits);
        exp_check(ctx, EXP_CHECK_GUARANTEE, smaller,
                  ROW_FMT " bits per element %.3f (allocated %.3f) < SWAMP "
                  "%.1f",
                  ROW_ARGS(p), r.bits, r.allocated_bits, p->swamp_bits);
        exp_check(ctx, EXP_CHECK_PAPER, exp_agrees(r.fp_design, p->fp, 7),
                  ROW_FMT " fp %.9f vs paper %.7f", ROW_ARGS(p), r.fp_design,
                  p->fp);
        exp_check(ctx, EXP_CHECK_PAPER, exp_agrees(r.npws, p->apbbf_npws, 2),
                  ROW_FMT " NPWS %.4f vs paper %.2f", ROW_ARGS(p), r.npws,
                  p->apbbf_npws);
        fprintf(csv,
                "%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%.7f,%.9g,%.1f,%.1f,"
                "%.6f,%.6f,%.6f,%.2f,%.2f,%.6f\n",
                ROW_ARGS(p), r.shape.window, r.shape.slice_bits, p->fp,
                r.fp_design, p->swamp_bits, p->apbbf_bits, r.bits,
                r.design_bits, r.allocated_bits, p->swamp_npws,
                p->apbbf_npws, r.npws);
        fprintf(md,
                "| %u | %u | %u | %u | %.7f / %.7f | %.1f | %.1f | %.2f | "
                "%.2f | %.2f | %s | %s | %.2f | %.2f | %.4f |\n",
                ROW_ARGS(p), p->fp, r.fp_design, p->swamp_bits,
                p->apbbf_bits, r.bits, r.design_bits, r.allocated_bits,
                exp_mark(agrees), exp_mark(smaller), p->swamp_npws, p->apbbf_npws,
                r.npws);
    }
    exp_close(csv, "table4.csv");
    exp_close(md, "the Table 4 fragment");
}

int main(int argc, char **argv)
{
    static row_result rows[ROWS];
    exp_context ctx;
    exp_begin(&ctx, "table3", argc, argv);
    FILE *csv = exp_open_csv(&ctx, "table3.csv");
    write_csv_header(csv);
    for (unsigned i = 0; i < ROWS; i++) {
        row_result *r = &rows[i];
        analytic(&PAPER[i], r);
        exp_measure_worst(&r->shape, FILTERS, probes_for(r->fp_shape),
                          ctx.seed, EXPERIMENT_ID, i, &r->measured);
        check_row(&ctx, &PAPER[i], r);
        write_csv_row(csv, &PAPER[i], r);
        fflush(csv);
    }
    write_table3_markdown(ctx.md, rows);
    exp_close(csv, "table3.csv");
    table4(&ctx);
    return exp_end(&ctx);
}
