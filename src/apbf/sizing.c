/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sizing.c: APBF shapes: validation, sizing from a window, memory, and the
 * least-memory (k, l) chooser, for plain and blocked slices.
 *
 * Plain slices of m bits reach fill ratio 1/2 after m ln 2 distinct items,
 * and each slice is written during k generations, so g = floor(m ln 2 / k).
 * Blocked slices of n blocks (B bits, b parts of B / b bits per block) have
 * their average block's parts half full after L = ln(1/2) / ln(1 - b/B)
 * items per block, so g = floor(n L / k). L / (B ln 2) is the blocked
 * slice's capacity relative to a plain one of the same bits: 0.968 for
 * (64, 4), 0.996 for (512, 4), 0.936 for (64, 8), 0.992 for (512, 8), the
 * "cap." column of the paper's Table 3.
 *
 * The bit-sliced layout stores the same m bits per slice as m cells of W
 * bits, W the smallest of 16, 32, 64, 128 holding the k + l + 1 planes (k + l
 * slices and the spare). Its chooser counts m W bits, so it keeps plain
 * shapes with k + l + 1 <= 128 and favours those that fill their cells: at
 * w = 10^6, fp 0.157 gives (5, 10) in 16 bits (the best shape needing 32,
 * (6, 21), holds 14% more), fp 0.01 gives (13, 114) in 128 bits. Since the
 * memory of a width falls as l grows, k W / (l ln 2) bits per item, shapes
 * that reach the top of a width win unless fp forbids so long a window.
 */
#include <math.h>
#include <string.h>

#include "apbf/apbf_internal.h"
#include "apbf/sliced.h"
#include "core/alloc.h"
#include "core/bits.h"

#define LN2 0.69314718055994530942

/* The most planes (k + l slices and the spare) a bit-sliced cell holds. */
#define SLICED_MAX_PLANES 128u

bool ebb_apbf_block_valid(uint32_t block_bits, uint32_t block_hashes)
{
    if (block_bits == 0)
        return block_hashes == 0;
    if (block_bits != EBB_APBF_BLOCK_WORD && block_bits != EBB_APBF_BLOCK_LINE)
        return false;
    /* b a power of two up to 8: b parts of at least 8 bits, and the part
     * fields (b log2(B / b) bits) fit in one 64-bit scramble. */
    return block_hashes == 1 || block_hashes == 2 || block_hashes == 4 ||
           block_hashes == 8;
}

double ebb_apbf_block_load(uint32_t block_bits, uint32_t block_hashes)
{
    return log(0.5) / log1p(-(double)block_hashes / (double)block_bits);
}

uint64_t ebb_apbf_generation_for(const ebb_apbf_params *p)
{
    if (!ebb_age_kl_valid(p->k, p->l) || !ebb_apbf_block_valid(p->block_bits,
                                                       p->block_hashes))
        return 0;
    if (p->block_bits == 0)
        return (uint64_t)floor((double)p->slice_bits * LN2 / (double)p->k);
    double blocks = (double)(p->slice_bits / p->block_bits);
    return (uint64_t)floor(
        blocks * ebb_apbf_block_load(p->block_bits, p->block_hashes) /
        (double)p->k);
}

ebb_status ebb_apbf_shape_bytes(const ebb_apbf_params *p, size_t *bit_bytes)
{
    if (!ebb_age_kl_valid(p->k, p->l) ||
        !ebb_apbf_block_valid(p->block_bits, p->block_hashes) ||
        p->slice_bits == 0 || p->slice_bits > EBB_APBF_MAX_SLICE_BITS ||
        (p->block_bits != 0 && p->slice_bits % p->block_bits != 0) ||
        p->generation == 0 || p->generation > ebb_apbf_generation_for(p))
        return EBB_EINVAL;
    if (p->generation > UINT64_MAX / p->l ||
        p->window != (uint64_t)p->l * p->generation)
        return EBB_EINVAL;
    if (p->layout == EBB_APBF_LAYOUT_SLICED)
        return ebb_apbf_sliced_bytes(p, bit_bytes);
    if (p->layout != EBB_APBF_LAYOUT_RING || p->cell_bits != 0)
        return EBB_EINVAL;
    uint64_t words = ebb_bits_words(p->slice_bits) * (p->k + p->l);
    if (words > (SIZE_MAX - 4096u) / 8u)
        return EBB_EOVERFLOW;
    *bit_bytes = (size_t)words * 8u;
    return EBB_OK;
}

ebb_status ebb_apbf_params_from_klm(uint32_t k, uint32_t l,
                                    uint64_t slice_bits, ebb_apbf_params *out)
{
    if (out == NULL || !ebb_age_kl_valid(k, l) || slice_bits == 0 ||
        slice_bits > EBB_APBF_MAX_SLICE_BITS)
        return EBB_EINVAL;
    ebb_apbf_params p = {k, l, slice_bits, 0, 0, 0, 0, 0, 0};
    p.generation = ebb_apbf_generation_for(&p);
    if (p.generation == 0)
        return EBB_EINVAL;
    p.window = (uint64_t)l * p.generation;
    *out = p;
    return EBB_OK;
}

/* The fewest units (bits, or blocks) whose generation reaches g: start from
 * the real-valued answer, then step so floor() agrees in floating point. */
static ebb_status size_slice(ebb_apbf_params *p, uint64_t g, double per_unit,
                             uint64_t unit_bits)
{
    double units = ceil((double)g * (double)p->k / per_unit);
    if (!(units * (double)unit_bits <= (double)EBB_APBF_MAX_SLICE_BITS))
        return EBB_EOVERFLOW;
    p->slice_bits = (uint64_t)units * unit_bits;
    while (ebb_apbf_generation_for(p) < g) {
        p->slice_bits += unit_bits;
        if (p->slice_bits > EBB_APBF_MAX_SLICE_BITS)
            return EBB_EOVERFLOW;
    }
    p->generation = g;
    p->window = (uint64_t)p->l * g;
    return EBB_OK;
}

ebb_status ebb_apbf_params_from_kl_blocked(uint32_t k, uint32_t l,
                                           uint64_t window,
                                           uint32_t block_bits,
                                           uint32_t block_hashes,
                                           ebb_apbf_params *out)
{
    if (out == NULL || !ebb_age_kl_valid(k, l) || window == 0 ||
        !ebb_apbf_block_valid(block_bits, block_hashes))
        return EBB_EINVAL;
    ebb_apbf_params p = {k, l, 0, 0, 0, block_bits, block_hashes, 0, 0};
    uint64_t g = window / l + (window % l != 0);
    ebb_status st =
        block_bits == 0
            ? size_slice(&p, g, LN2, 1)
            : size_slice(&p, g, ebb_apbf_block_load(block_bits, block_hashes),
                         block_bits);
    if (st == EBB_OK)
        *out = p;
    return st;
}

ebb_status ebb_apbf_params_from_kl(uint32_t k, uint32_t l, uint64_t window,
                                   ebb_apbf_params *out)
{
    return ebb_apbf_params_from_kl_blocked(k, l, window, 0, 0, out);
}

ebb_status ebb_apbf_params_memory(const ebb_apbf_params *params, size_t *bytes)
{
    if (params == NULL || bytes == NULL)
        return EBB_EINVAL;
    size_t bit_bytes;
    ebb_status st = ebb_apbf_shape_bytes(params, &bit_bytes);
    if (st != EBB_OK)
        return st;
    *bytes = sizeof(struct ebb_apbf) + ebb_mem_lines_footprint(bit_bytes);
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Layouts                                                                  */
/* ------------------------------------------------------------------------ */

/* The smallest cell of the bit-sliced layout holding `planes` planes (k + l
 * slices and the spare), or 0 when none does. */
static uint32_t smallest_cell(uint32_t planes)
{
    static const uint32_t cells[] = {16, 32, 64, 128};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
        if (planes <= cells[i])
            return cells[i];
    return 0;
}

ebb_status ebb_apbf_params_set_layout(ebb_apbf_params *params,
                                      uint32_t layout)
{
    if (params == NULL || !ebb_age_kl_valid(params->k, params->l))
        return EBB_EINVAL;
    if (layout == EBB_APBF_LAYOUT_RING) {
        params->layout = layout;
        params->cell_bits = 0;
        return EBB_OK;
    }
    uint32_t cell = smallest_cell(params->k + params->l + 1);
    if (layout != EBB_APBF_LAYOUT_SLICED || params->block_bits != 0 ||
        cell == 0)
        return EBB_EINVAL;
    params->layout = layout;
    params->cell_bits = cell;
    return EBB_OK;
}

ebb_status ebb_apbf_layout_padding(const ebb_apbf_params *params,
                                   uint32_t *padding_bits_per_cell,
                                   uint64_t *padding_bytes)
{
    size_t bit_bytes;
    if (params == NULL || padding_bits_per_cell == NULL ||
        padding_bytes == NULL)
        return EBB_EINVAL;
    ebb_status st = ebb_apbf_shape_bytes(params, &bit_bytes);
    if (st != EBB_OK)
        return st;
    uint32_t planes = params->k + params->l + 1;
    uint32_t cell = params->cell_bits != 0 ? params->cell_bits
                                           : smallest_cell(planes);
    if (params->layout != EBB_APBF_LAYOUT_SLICED || cell < planes) {
        *padding_bits_per_cell = 0;
        *padding_bytes = 0;
        return EBB_OK;
    }
    /* m <= 2^40 and fewer than 128 bits: no overflow. */
    uint64_t bits = params->slice_bits * (uint64_t)(cell - planes);
    *padding_bits_per_cell = cell - planes;
    *padding_bytes = bits / 8u + (bits % 8u != 0);
    return EBB_OK;
}

uint32_t ebb_apbf_preferred_layout(const ebb_apbf_goal *ring_goal)
{
    /* docs/bench.md ("The layout the front ends choose", the latest run
     * of ebb-bench-prototype): at fp 1% and w = 1e6..1e8 the bit-sliced
     * chooser's shape answers queries and check-and-adds several times
     * faster than the ring's least-memory shape, for 7% more memory
     * (plain adds are slower). Where it would cost more than
     * EBB_APBF_SLICED_MAX_MEMORY times the ring the caller would build
     * (small windows, where the 128-bit cells' fixed cost shows, and very
     * low rates), the ring stays: the memory was the user's budget. */
    if (ring_goal == NULL || ring_goal->block_bits != 0)
        return EBB_APBF_LAYOUT_RING;
    ebb_apbf_goal ring = *ring_goal, sliced;
    ring.layout = EBB_APBF_LAYOUT_RING;
    memset(&sliced, 0, sizeof sliced);
    sliced.window = ring_goal->window;
    sliced.fp = ring_goal->fp;
    sliced.layout = EBB_APBF_LAYOUT_SLICED;
    ebb_apbf_params ring_shape, sliced_shape;
    size_t ring_bytes, sliced_bytes;
    if (ebb_apbf_choose_goal(&sliced, &sliced_shape) != EBB_OK ||
        ebb_apbf_params_memory(&sliced_shape, &sliced_bytes) != EBB_OK)
        return EBB_APBF_LAYOUT_RING;
    if (ebb_apbf_choose_goal(&ring, &ring_shape) != EBB_OK ||
        ebb_apbf_params_memory(&ring_shape, &ring_bytes) != EBB_OK)
        return EBB_APBF_LAYOUT_SLICED; /* the sliced one meets (w, fp) */
    return (double)sliced_bytes <=
                   EBB_APBF_SLICED_MAX_MEMORY * (double)ring_bytes
               ? EBB_APBF_LAYOUT_SLICED
               : EBB_APBF_LAYOUT_RING;
}

/* ------------------------------------------------------------------------ */
/* Chooser                                                                  */
/* ------------------------------------------------------------------------ */

/* What the chooser needs to know of one family of shapes. */
typedef struct shape_family {
    uint64_t window;
    uint32_t block_bits, block_hashes;
    uint32_t layout;
} shape_family;

/* The worst-case fp of (k, l) in this family: the geometric ramp for plain
 * slices (the exact shape's rate tends to it as m grows), the exact block
 * model for blocked ones (independent of the window). */
static double family_fp(const shape_family *fam, uint32_t k, uint32_t l)
{
    if (fam->block_bits == 0)
        return ebb_apbf_fp(k, l);
    ebb_apbf_params p = {k, l, 0, 0, 0, fam->block_bits, fam->block_hashes, 0, 0};
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    double load = ebb_apbf_block_load(fam->block_bits, fam->block_hashes);
    ebb_apbf_block_ratios(&p, load / (double)k, r);
    return ebb_apbf_fp_ratios(k, l, r);
}

/* The largest l in [lo, MAX_L] with fp(k, l) <= target (fp grows with l:
 * every extra slice is one more place a run can start), or 0 if none. */
static uint32_t largest_l(const shape_family *fam, uint32_t k, uint32_t lo,
                          double target)
{
    if (lo > EBB_APBF_MAX_L || !(family_fp(fam, k, lo) <= target))
        return 0;
    uint32_t hi = EBB_APBF_MAX_L;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (family_fp(fam, k, mid) <= target)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* sum_{i<k} r^i: the numerator of the peak NPWS, with r the match
 * probability of a full slice (1/2 plain; the block fp at the design load
 * for blocked slices, as ebb_apbf_shape_npws). */
static double npws_numerator(const shape_family *fam, uint32_t k)
{
    double r = 0.5;
    if (fam->block_bits != 0)
        r = ebb_apbf_block_fp(
            ebb_apbf_block_load(fam->block_bits, fam->block_hashes),
            fam->block_bits, fam->block_hashes);
    double sum = 0.0, power = 1.0;
    for (uint32_t i = 0; i < k; i++, power *= r)
        sum += power;
    return sum;
}

/* Least l for which the peak NPWS is within the bound (1 when unbounded),
 * or MAX_L + 1 when none is. */
static uint32_t least_l_for_npws(const shape_family *fam, uint32_t k,
                                 double max_npws)
{
    if (!(max_npws > 0.0))
        return 1;
    double numerator = npws_numerator(fam, k);
    double l = ceil(numerator / max_npws);
    if (l > (double)EBB_APBF_MAX_L)
        return EBB_APBF_MAX_L + 1;
    uint32_t least = l < 1.0 ? 1 : (uint32_t)l;
    while (least > 1 && numerator / (double)(least - 1) <= max_npws)
        least--; /* undo rounding that went one too far */
    while (least <= EBB_APBF_MAX_L && numerator / (double)least > max_npws)
        least++;
    return least;
}

/* The expected reads of a false query for (k, l) in this family, at the
 * same ratios family_fp uses; a bit-sliced query always loads k cells. */
static double family_accesses(const shape_family *fam, uint32_t k, uint32_t l)
{
    double r[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    if (fam->layout == EBB_APBF_LAYOUT_SLICED)
        return (double)k;
    if (fam->block_bits == 0) {
        ebb_apbf_worst_fill(k, l, EBB_FILL_GEOMETRIC, r);
    } else {
        ebb_apbf_params p = {k, l, 0, 0, 0, fam->block_bits, fam->block_hashes, 0, 0};
        double load = ebb_apbf_block_load(fam->block_bits, fam->block_hashes);
        ebb_apbf_block_ratios(&p, load / (double)k, r);
    }
    return ebb_apbf_accesses_false_ratios(k, l, r);
}

static bool goal_valid(const ebb_apbf_goal *g)
{
    bool choose_b = g->block_bits != 0 && g->block_hashes == 0;
    bool layout_ok = g->layout == EBB_APBF_LAYOUT_RING ||
                     (g->layout == EBB_APBF_LAYOUT_SLICED && g->block_bits == 0);
    return g->window != 0 && g->fp > 0.0 && g->fp < 1.0 &&
           !isnan(g->max_npws) && !isnan(g->max_accesses) && layout_ok &&
           (choose_b || ebb_apbf_block_valid(g->block_bits, g->block_hashes));
}

/* The least-memory shape of one family (a fixed b), or EBB_EINVAL /
 * EBB_EOVERFLOW when none meets the goal. */
static ebb_status choose_in_family(const ebb_apbf_goal *goal,
                                   ebb_apbf_params *out, size_t *out_bytes)
{
    shape_family fam = {goal->window, goal->block_bits, goal->block_hashes,
                        goal->layout};
    bool bounded_reads = goal->max_accesses > 0.0;
    ebb_apbf_params best = {0};
    size_t best_bytes = SIZE_MAX;
    bool overflowed = false;
    for (uint32_t k = 1; k <= EBB_APBF_MAX_K; k++) {
        /* Every shape with this k holds at least k slices of about w / ln 2
         * bits per window item, so once that alone exceeds the best, stop. */
        if (best_bytes != SIZE_MAX &&
            (double)k * (double)goal->window / LN2 / 8.0 > (double)best_bytes)
            break;
        uint32_t lo = least_l_for_npws(&fam, k, goal->max_npws);
        uint32_t hi = largest_l(&fam, k, lo, goal->fp);
        /* Bit-sliced: k + l + 1 <= 128 planes (k <= 64 leaves l >= 63). */
        if (fam.layout == EBB_APBF_LAYOUT_SLICED &&
            hi > SLICED_MAX_PLANES - 1 - k)
            hi = SLICED_MAX_PLANES - 1 - k;
        for (uint32_t l = lo; hi != 0 && l <= hi; l++) {
            ebb_apbf_params p;
            size_t bytes;
            ebb_status st = ebb_apbf_params_from_kl_blocked(
                k, l, goal->window, goal->block_bits, goal->block_hashes, &p);
            if (st == EBB_OK)
                st = ebb_apbf_params_set_layout(&p, fam.layout);
            if (st == EBB_OK)
                st = ebb_apbf_params_memory(&p, &bytes);
            if (st == EBB_EOVERFLOW) {
                overflowed = true;
                continue;
            }
            if (st != EBB_OK || bytes >= best_bytes)
                continue;
            /* Reads grow with l: past the bound, longer shapes only read
             * more. */
            if (bounded_reads &&
                !(family_accesses(&fam, k, l) <= goal->max_accesses))
                break;
            best = p;
            best_bytes = bytes;
        }
    }
    if (best_bytes == SIZE_MAX)
        return overflowed ? EBB_EOVERFLOW : EBB_EINVAL;
    *out = best;
    *out_bytes = best_bytes;
    return EBB_OK;
}

ebb_status ebb_apbf_choose_goal(const ebb_apbf_goal *goal,
                                ebb_apbf_params *out)
{
    if (goal == NULL || out == NULL || !goal_valid(goal))
        return EBB_EINVAL;
    size_t bytes;
    if (goal->block_bits == 0 || goal->block_hashes != 0)
        return choose_in_family(goal, out, &bytes);
    /* Blocked with b left open: the least memory over b = 1, 2, 4, 8 (ties
     * to the smaller b, fewer bits touched). */
    static const uint32_t hashes[] = {1, 2, 4, 8};
    ebb_status result = EBB_EINVAL;
    size_t best_bytes = SIZE_MAX;
    for (size_t i = 0; i < sizeof hashes / sizeof hashes[0]; i++) {
        ebb_apbf_goal one = *goal;
        ebb_apbf_params p;
        one.block_hashes = hashes[i];
        ebb_status st = choose_in_family(&one, &p, &bytes);
        if (st == EBB_OK && bytes < best_bytes) {
            *out = p;
            best_bytes = bytes;
            result = EBB_OK;
        } else if (st == EBB_EOVERFLOW && result != EBB_OK) {
            result = EBB_EOVERFLOW;
        }
    }
    return result;
}

ebb_status ebb_apbf_choose_blocked(uint64_t window, double fp,
                                   double max_npws, uint32_t block_bits,
                                   uint32_t block_hashes,
                                   ebb_apbf_params *out)
{
    if (!ebb_apbf_block_valid(block_bits, block_hashes))
        return EBB_EINVAL; /* b = 0 means "choose b" only in a goal */
    ebb_apbf_goal goal = {window, fp, max_npws, 0.0, block_bits,
                          block_hashes, EBB_APBF_LAYOUT_RING};
    return ebb_apbf_choose_goal(&goal, out);
}

ebb_status ebb_apbf_choose(uint64_t window, double fp, double max_npws,
                           ebb_apbf_params *out)
{
    return ebb_apbf_choose_blocked(window, fp, max_npws, 0, 0, out);
}
