/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exp_table1: the paper's Table 1, classic partitioned Bloom filters.
 *
 * For each aimed rate p: k = ceil(log2(1/p)) slices, k / ln 2 bits per item
 * at fill ratio 1/2, worst-case rate 2^-k, k reads for a query that answers
 * true and 2^k / (2^k - 1) * sum_{i=1..k} i / 2^i for one that answers false
 * (it stops at the first zero bit). The analytic columns are checked against
 * the paper's printed ones.
 *
 * The measured columns come from a small partitioned Bloom filter written
 * here (it is a baseline, not a library feature): k slices of m = 2^16 bits,
 * positions derived from the key's ebb_hash by double hashing and a
 * splitmix64 finaliser, filled with n = floor(m ln 2) distinct keys (its
 * capacity), then probed with fresh keys. Its exact expected fill ratio is
 * r = 1 - (1 - 1/m)^n, so the expected rate is r^k and the expected reads of
 * a false query sum_{i=1..k} i r^(i-1) (1 - r) / (1 - r^k).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exp_common.h"

#define EXPERIMENT_ID 1u
#define SLICE_LOG2 16u
#define SLICE_BITS (UINT64_C(1) << SLICE_LOG2)
#define FILTERS 4u
#define TARGET_FALSE_POSITIVES 1000.0
#define MIN_PROBES 1000000.0
#define ROWS 5

/* Table 1 as printed. */
static const struct paper_row {
    double aimed;
    unsigned k;
    double bits_per_item; /* 2 decimals  */
    double actual_fp;
    int fp_decimals;
    double query_true, query_false; /* 2 decimals */
} PAPER[ROWS] = {
    {0.1, 4, 5.77, 0.0625, 4, 4.00, 1.73},
    {0.01, 7, 10.09, 0.0078125, 7, 7.00, 1.94},
    {0.001, 10, 14.42, 0.0009765625, 10, 10.00, 1.99},
    {0.0001, 14, 20.19, 0.0000610351, 10, 14.00, 2.00},
    {0.00001, 17, 24.52, 0.0000076293, 10, 17.00, 2.00},
};

/* ------------------------------------------------------------------------ */
/* A partitioned Bloom filter, just enough to measure it                    */
/* ------------------------------------------------------------------------ */

typedef struct classic_bf {
    unsigned k;
    uint64_t seed;
    uint64_t *words; /* k slices of SLICE_BITS bits */
} classic_bf;

static uint64_t finalise(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* Bit of slice i for a key hash: double hashing, then a finaliser so every
 * bit of the position depends on both hash words. */
static uint64_t slice_position(ebb_hash128 h, unsigned i)
{
    return finalise(h.lo + (uint64_t)i * h.hi) >> (64u - SLICE_LOG2);
}

static uint64_t *slice_word(const classic_bf *bf, unsigned i, uint64_t bit)
{
    return bf->words + (size_t)i * (SLICE_BITS / 64u) + bit / 64u;
}

static void bf_add(classic_bf *bf, ebb_hash128 h)
{
    for (unsigned i = 0; i < bf->k; i++) {
        uint64_t bit = slice_position(h, i);
        *slice_word(bf, i, bit) |= UINT64_C(1) << (bit % 64u);
    }
}

/* Reads slices in order and stops at the first zero bit. */
static bool bf_query(const classic_bf *bf, ebb_hash128 h, unsigned *reads)
{
    for (unsigned i = 0; i < bf->k; i++) {
        uint64_t bit = slice_position(h, i);
        if (!((*slice_word(bf, i, bit) >> (bit % 64u)) & 1u)) {
            *reads = i + 1;
            return false;
        }
    }
    *reads = bf->k;
    return true;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                */
/* ------------------------------------------------------------------------ */

typedef struct row_result {
    unsigned k;
    double bits_per_item, actual_fp, query_true, query_false;
    uint64_t capacity;
    double exact_fill, exact_fp, exact_false_reads;
    uint64_t probes, hits, false_reads, true_queries, true_reads;
    uint64_t true_missed;
} row_result;

static double false_reads_at(unsigned k, double r)
{
    double sum = 0.0;
    for (unsigned i = 1; i <= k; i++)
        sum += (double)i * pow(r, (double)(i - 1)) * (1.0 - r);
    return sum / (1.0 - pow(r, (double)k));
}

static void analytic(double aimed, row_result *out)
{
    unsigned k = (unsigned)ceil(log2(1.0 / aimed) - 1e-12);
    out->k = k;
    out->bits_per_item = (double)k / log(2.0);
    out->actual_fp = exp2(-(double)k);
    out->query_true = (double)k;
    out->query_false = false_reads_at(k, 0.5);
    out->capacity = (uint64_t)floor((double)SLICE_BITS * log(2.0));
    out->exact_fill =
        -expm1((double)out->capacity * log1p(-1.0 / (double)SLICE_BITS));
    out->exact_fp = pow(out->exact_fill, (double)k);
    out->exact_false_reads = false_reads_at(k, out->exact_fill);
}

static void measure(const exp_context *ctx, unsigned row, row_result *out)
{
    double wanted = ceil(TARGET_FALSE_POSITIVES / out->exact_fp);
    uint64_t probes = (uint64_t)(wanted < MIN_PROBES ? MIN_PROBES : wanted);
    classic_bf bf = {out->k, 0, NULL};
    bf.words = calloc((size_t)out->k * (SLICE_BITS / 64u), sizeof *bf.words);
    if (bf.words == NULL)
        exp_die("out of memory");
    for (unsigned f = 0; f < FILTERS; f++) {
        uint32_t unit = row * 256u + f;
        uint64_t in = exp_stream(EXP_STREAM_INSERT, EXPERIMENT_ID, unit);
        uint64_t fresh = exp_stream(EXP_STREAM_PROBE, EXPERIMENT_ID, unit);
        bf.seed = exp_derive_seed(ctx->seed, EXPERIMENT_ID, row, f);
        memset(bf.words, 0,
               (size_t)out->k * (SLICE_BITS / 64u) * sizeof *bf.words);
        for (uint64_t i = 0; i < out->capacity; i++)
            bf_add(&bf, exp_key_hash_seeded(bf.seed, in, i));
        for (uint64_t i = 0; i < out->capacity; i++) {
            unsigned reads;
            bool found =
                bf_query(&bf, exp_key_hash_seeded(bf.seed, in, i), &reads);
            out->true_missed += !found;
            out->true_queries++;
            out->true_reads += reads;
        }
        uint64_t share = probes / FILTERS + (f < probes % FILTERS);
        for (uint64_t i = 0; i < share; i++) {
            unsigned reads;
            if (bf_query(&bf, exp_key_hash_seeded(bf.seed, fresh, i), &reads))
                out->hits++;
            else
                out->false_reads += reads;
        }
        out->probes += share;
    }
    free(bf.words);
}

static void check_row(exp_context *ctx, const struct paper_row *p,
                      const row_result *r)
{
    exp_check(ctx, EXP_CHECK_PAPER, r->k == p->k, "p=%g k %u vs paper %u",
              p->aimed, r->k, p->k);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(r->bits_per_item, p->bits_per_item, 2),
              "p=%g bits/item %.4f vs paper %.2f", p->aimed, r->bits_per_item,
              p->bits_per_item);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(r->actual_fp, p->actual_fp, p->fp_decimals),
              "p=%g actual fp %.12f vs paper %.*f", p->aimed, r->actual_fp,
              p->fp_decimals, p->actual_fp);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(r->query_true, p->query_true, 2),
              "p=%g true-query reads %.2f vs paper %.2f", p->aimed,
              r->query_true, p->query_true);
    exp_check(ctx, EXP_CHECK_PAPER,
              exp_agrees(r->query_false, p->query_false, 2),
              "p=%g false-query reads %.4f vs paper %.2f", p->aimed,
              r->query_false, p->query_false);
    exp_check(ctx, EXP_CHECK_GUARANTEE,
              r->true_missed == 0 && r->true_reads == r->true_queries * r->k,
              "p=%g inserted items all found with k reads (%" PRIu64
              " missed)",
              p->aimed, r->true_missed);
    double z = exp_binomial_z(r->hits, r->probes, r->exact_fp);
    exp_check(ctx, EXP_CHECK_STAT, fabs(z) <= 3.0,
              "p=%g measured fp %.4g vs r^k %.4g, z = %.2f", p->aimed,
              (double)r->hits / (double)r->probes, r->exact_fp, z);
    double reads = (double)r->false_reads / (double)(r->probes - r->hits);
    exp_check(ctx, EXP_CHECK_STAT,
              exp_relative_error(reads, r->exact_false_reads) <= 0.05,
              "p=%g false-query reads %.4f vs %.4f", p->aimed, reads,
              r->exact_false_reads);
}

static void write_csv_header(FILE *csv)
{
    fputs("aimed_fp,paper_k,k,paper_bits_per_item,bits_per_item,"
          "paper_actual_fp,actual_fp,slice_bits,capacity,exact_fill,"
          "exact_fp,filters,probes,hits,measured_fp,binomial_sd,z,"
          "paper_query_true,query_true,measured_query_true,"
          "paper_query_false,query_false,exact_query_false,"
          "measured_query_false\n",
          csv);
}

static void write_row(FILE *csv, FILE *md, const struct paper_row *p,
                      const row_result *r)
{
    double rate = (double)r->hits / (double)r->probes;
    double sd = exp_binomial_sd(r->probes, r->exact_fp);
    double z = exp_binomial_z(r->hits, r->probes, r->exact_fp);
    double true_reads = (double)r->true_reads / (double)r->true_queries;
    double false_reads =
        (double)r->false_reads / (double)(r->probes - r->hits);
    fprintf(csv,
            "%g,%u,%u,%.2f,%.6f,%.*f,%.12g,%" PRIu64 ",%" PRIu64
            ",%.9f,%.9g,%u,%" PRIu64 ",%" PRIu64 ",%.9g,%.9g,%.3f,%.2f,"
            "%.2f,%.4f,%.2f,%.6f,%.6f,%.6f\n",
            p->aimed, p->k, r->k, p->bits_per_item, r->bits_per_item,
            p->fp_decimals, p->actual_fp, r->actual_fp, SLICE_BITS,
            r->capacity, r->exact_fill, r->exact_fp, FILTERS, r->probes,
            r->hits, rate, sd, z, p->query_true, r->query_true, true_reads,
            p->query_false, r->query_false, r->exact_false_reads,
            false_reads);
    fprintf(md,
            "| %g | %u / %u | %.2f / %.3f | %.*f / %.*f | %.4g ± %.2g | "
            "%+.2f | %.2f / %.0f / %.2f | %.2f / %.3f / %.3f / %.3f |\n",
            p->aimed, p->k, r->k, p->bits_per_item, r->bits_per_item,
            p->fp_decimals, p->actual_fp, p->fp_decimals, r->actual_fp, rate,
            sd, z, p->query_true, r->query_true, true_reads, p->query_false,
            r->query_false, r->exact_false_reads, false_reads);
}

int main(int argc, char **argv)
{
    exp_context ctx;
    exp_begin(&ctx, "table1", argc, argv);
    FILE *csv = exp_open_csv(&ctx, "table1.csv");
    write_csv_header(csv);
    fprintf(ctx.md,
            "Measured: %u partitioned Bloom filters per row, slices of "
            "m = %" PRIu64 " bits, filled to capacity n = floor(m ln 2) "
            "with distinct keys, then probed with fresh keys until about "
            "%.0f false positives are expected (at least %.0f probes). "
            "z is against r^k with the exact fill ratio "
            "r = 1 - (1 - 1/m)^n.\n\n",
            FILTERS, SLICE_BITS, TARGET_FALSE_POSITIVES, MIN_PROBES);
    fputs("| aimed fp | k (paper / ours) | bits/item (paper / ours) | "
          "actual fp (paper / 2^-k) | measured fp ± sd | z | "
          "query true (paper / k / measured) | "
          "query false (paper / formula / exact fill / measured) |\n"
          "|---|---|---|---|---|---|---|---|\n",
          ctx.md);
    for (unsigned row = 0; row < ROWS; row++) {
        row_result r;
        memset(&r, 0, sizeof r);
        analytic(PAPER[row].aimed, &r);
        measure(&ctx, row, &r);
        check_row(&ctx, &PAPER[row], &r);
        write_row(csv, ctx.md, &PAPER[row], &r);
    }
    exp_close(csv, "table1.csv");
    return exp_end(&ctx);
}
