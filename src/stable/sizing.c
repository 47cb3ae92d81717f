/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sizing.c: a stable filter's shape from a memory budget and a target
 * stable false-positive rate.
 *
 * For each cell width d (the goal's, or 1..8) the budget holds
 * m = floor(bytes / 8) * 64 / d cells (whole 64-bit words, so
 * ebb_stable_cell_bytes(m, d) never exceeds the budget). For each K in
 * 1..max_k, FPS = (1 - V_0)^K falls as P grows (more forgetting, more
 * zeros), so a binary search over 1..m finds the smallest P whose exact FPS
 * is at or below the target: about log2 m stationary solutions of O(Max)
 * each. Deng and Rafiei's closed form for P is not used: it is approximate
 * (s = K/m) and a truncated P overshoots the target. Among the candidates,
 * the smallest false-negative probability at the goal's gap for the lowest
 * level the variant sets (PLAIN: Max, IBF_2C: Half, IBF_MC/IBF_H: 1)
 * decides. With a gap in the goal, the smallest FN at that gap wins. Without
 * one, the longest memory wins: the largest gap at which that FN is still
 * at most half its limit (1 - FPS, reached when the item's cells have
 * forgotten it). A fixed default gap such as m/4 does not discriminate: at
 * 1% in 16 KiB every shape has forgotten everything by m/4 (FN 0.99 for
 * K = 1..8), and the tie went to K = 1, P = 697, a filter whose memory is
 * ten times shorter than K = 5, P = 67's (FN at m/16: 0.99 against 0.42).
 * Ties go to the smaller P, then to the earlier (smaller d, smaller K).
 * The half-memory gap is found by doubling, then bisection: about 2 log2 of
 * it FN evaluations per candidate, each O(Max (P + K) gap / m).
 *
 * Dependencies run one way: sizing -> analysis -> params.
 */
#include <math.h>

#include "ebb/stable.h"

#define DEFAULT_MAX_K 16u
#define SEARCH_MAX_CELL_BITS 8u

ebb_status ebb_stable_goal_init(uint64_t memory_bytes, double fp,
                                ebb_stable_goal *out)
{
    if (out == NULL || memory_bytes < 8 || !(fp > 0.0 && fp < 1.0))
        return EBB_EINVAL;
    ebb_stable_goal goal = {0};
    ebb_stable_params defaults; /* for ebb_stable_params_init's importance */
    (void)ebb_stable_params_init(1, 1, 1, 0, &defaults);
    goal.memory_bytes = memory_bytes;
    goal.fp = fp;
    goal.cell_bits = 3;
    goal.max_k = 0;
    goal.gap = 0;
    goal.variant = EBB_STABLE_PLAIN;
    goal.draw = EBB_STABLE_DRAW_CONSECUTIVE;
    goal.importance = defaults.importance;
    goal.level_probs = NULL;
    *out = goal;
    return EBB_OK;
}

static uint32_t lowest_level(ebb_stable_variant variant, uint32_t cell_bits)
{
    switch (variant) {
    case EBB_STABLE_IBF_2C:
        return ebb_stable_half_level(cell_bits);
    case EBB_STABLE_IBF_MC:
    case EBB_STABLE_IBF_H:
        return 1;
    default:
        return ebb_stable_max_level(cell_bits);
    }
}

/* m for d bits in the budget: whole words, at most the cell limit. */
static uint64_t cells_for(uint64_t memory_bytes, uint32_t cell_bits)
{
    uint64_t words = memory_bytes / 8u;
    uint64_t cells = words > EBB_STABLE_MAX_CELLS / 64u
                         ? EBB_STABLE_MAX_CELLS
                         : words * 64u / cell_bits;
    return cells > EBB_STABLE_MAX_CELLS ? EBB_STABLE_MAX_CELLS : cells;
}

/* FPS of params (P set); EBB_OK or the analysis' error. */
static ebb_status fps_of(const ebb_stable_params *params,
                         const double *level_probs, double *fps)
{
    ebb_stable_analysis analysis;
    ebb_status status = ebb_stable_analyse(params, level_probs, &analysis);
    if (status == EBB_OK)
        *fps = analysis.fps;
    return status;
}

/* Smallest P in 1..m with FPS <= target, in params->p; EBB_EINVAL when
 * even P = m misses. */
static ebb_status smallest_p(ebb_stable_params *params,
                             const double *level_probs, double target)
{
    uint64_t low = 1, high = params->cells;
    if (high > UINT32_MAX)
        high = UINT32_MAX;
    double fps;
    params->p = (uint32_t)high;
    ebb_status status = fps_of(params, level_probs, &fps);
    if (status != EBB_OK)
        return status;
    if (!(fps <= target))
        return EBB_EINVAL;
    while (low < high) { /* invariant: FPS(high) <= target */
        uint64_t mid = low + (high - low) / 2u;
        params->p = (uint32_t)mid;
        status = fps_of(params, level_probs, &fps);
        if (status != EBB_OK)
            return status;
        if (fps <= target)
            high = mid;
        else
            low = mid + 1u;
    }
    params->p = (uint32_t)high;
    return EBB_OK;
}

static bool goal_valid(const ebb_stable_goal *goal)
{
    if (goal->memory_bytes < 8 || !(goal->fp > 0.0 && goal->fp < 1.0) ||
        goal->cell_bits > EBB_STABLE_MAX_CELL_BITS ||
        goal->max_k > EBB_STABLE_MAX_K)
        return false;
    /* Everything but the shape, checked on a stand-in shape. */
    ebb_stable_params probe;
    if (ebb_stable_params_init(64, goal->cell_bits ? goal->cell_bits : 1, 1,
                               1, &probe) != EBB_OK)
        return false;
    probe.variant = goal->variant;
    probe.draw = goal->draw;
    probe.importance = goal->importance;
    return ebb_stable_params_check(&probe) == EBB_OK;
}

typedef struct best_shape {
    bool found;
    double score; /* smaller is better */
    ebb_stable_params params;
} best_shape;

/* The largest gap (at least 1) at which the FN of an item at `level` is at
 * most `half`, in *gap. FN rises with the gap towards its limit (beyond
 * about m/8 it may overshoot the limit by ~1e-7 relative before settling:
 * docs/stable.md), so doubling brackets the crossing and bisection finds it.
 * A gap the analysis cannot evolve (EBB_EOVERFLOW) ends the doubling: the
 * memory is at least the last gap reached. */
static ebb_status half_memory_gap(const ebb_stable_params *params,
                                 const double *level_probs, uint32_t level,
                                 double half, uint64_t *gap)
{
    uint64_t good = 0, bad = 1;
    double fn;
    for (;;) {
        ebb_status status =
            ebb_stable_fn_at_gap(params, level_probs, level, bad, &fn);
        if (status == EBB_EOVERFLOW)
            break;
        if (status != EBB_OK)
            return status;
        if (fn > half)
            break;
        good = bad;
        if (bad > UINT64_MAX / 2u)
            break;
        bad *= 2u;
    }
    if (good == 0) {
        *gap = 1; /* forgotten within one insertion: the shortest memory */
        return EBB_OK;
    }
    while (bad - good > 1u && (bad - good) * 64u > good) { /* to 1/64 */
        uint64_t mid = good + (bad - good) / 2u;
        ebb_status status =
            ebb_stable_fn_at_gap(params, level_probs, level, mid, &fn);
        if (status == EBB_EOVERFLOW || (status == EBB_OK && fn > half))
            bad = mid;
        else if (status == EBB_OK)
            good = mid;
        else
            return status;
    }
    *gap = good;
    return EBB_OK;
}

/* The candidate's score: FN at the goal's gap, or minus its half-memory
 * gap when the goal names none. */
static ebb_status score_of(const ebb_stable_goal *goal,
                           const ebb_stable_params *params,
                           const double *level_probs, uint32_t level,
                           double *score)
{
    if (goal->gap != 0)
        return ebb_stable_fn_at_gap(params, level_probs, level, goal->gap,
                                    score);
    ebb_stable_analysis analysis;
    ebb_status status = ebb_stable_analyse(params, level_probs, &analysis);
    if (status != EBB_OK)
        return status;
    uint64_t gap;
    status = half_memory_gap(params, level_probs, level,
                             (1.0 - analysis.fps) / 2.0, &gap);
    if (status == EBB_OK)
        *score = -(double)gap;
    return status;
}

/* Every K for one width; the best so far in *best. */
static ebb_status search_width(const ebb_stable_goal *goal, uint32_t cell_bits,
                               const double *level_probs, best_shape *best)
{
    uint64_t cells = cells_for(goal->memory_bytes, cell_bits);
    if (cells == 0)
        return EBB_OK;
    uint32_t max_k = goal->max_k ? goal->max_k : DEFAULT_MAX_K;
    uint32_t level = lowest_level(goal->variant, cell_bits);
    for (uint32_t k = 1; k <= max_k; k++) {
        ebb_stable_params params;
        if (ebb_stable_params_init(cells, cell_bits, k, 1, &params) != EBB_OK)
            continue;
        params.variant = goal->variant;
        params.draw = goal->draw;
        params.importance = goal->importance;
        ebb_status status = smallest_p(&params, level_probs, goal->fp);
        if (status == EBB_EINVAL)
            continue; /* this K cannot meet the target */
        if (status != EBB_OK)
            return status;
        double score;
        status = score_of(goal, &params, level_probs, level, &score);
        if (status != EBB_OK)
            return status;
        if (!best->found || score < best->score ||
            (score == best->score && params.p < best->params.p)) {
            best->found = true;
            best->score = score;
            best->params = params;
        }
    }
    return EBB_OK;
}

ebb_status ebb_stable_choose(const ebb_stable_goal *goal,
                             ebb_stable_params *out)
{
    if (goal == NULL || out == NULL || !goal_valid(goal))
        return EBB_EINVAL;
    best_shape best = {false, 0.0, {0}};
    uint32_t first = goal->cell_bits ? goal->cell_bits : 1u;
    uint32_t last = goal->cell_bits ? goal->cell_bits : SEARCH_MAX_CELL_BITS;
    for (uint32_t d = first; d <= last; d++) {
        /* level_probs fit the goal's width only. */
        const double *level_probs = goal->cell_bits ? goal->level_probs : NULL;
        ebb_status status = search_width(goal, d, level_probs, &best);
        if (status != EBB_OK)
            return status;
    }
    if (!best.found)
        return EBB_EINVAL;
    *out = best.params;
    return EBB_OK;
}
