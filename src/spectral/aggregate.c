/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * aggregate.c: sums and means over key sets with the unbiased estimator
 * (Cohen and Matias, section 3.1, Lemma 3, and the median of means of
 * section 3.1.1).
 *
 * The counters of key x are its own count plus whatever other keys put on
 * them. Under Minimum Selection (and in RM's primary, updated the same
 * way) every occurrence of every key adds 1 to each of its k positions,
 * so the counters hold k N in all, N the occurrences added minus removed
 * (f->net). With positions drawn independently and uniformly, counter j of
 * x, v_j, receives
 *
 *   f_x                    from x's own position j,
 *   f_x (k - 1) / m        on average from x's other positions, which can
 *                          fall on the same counter (ebb adds once per
 *                          position, so the counter then holds 2 f_x),
 *   (N - f_x) k / m        on average from the other keys,
 *
 * so E v_j = f_x (1 - 1/m) + k N / m and
 *
 *   f^_x = (mean of the v_j - k N / m) / (1 - 1/m)
 *
 * is unbiased. Lemma 3 writes the denominator 1 - k/m: its proof counts
 * no contribution of x to its own other counters, which holds when a
 * key's k positions are distinct. Here they are not forced apart, and the
 * lemma's form would overestimate every f_x by the factor (m - 1)/(m - k)
 * (5% at m = 64, k = 4), which tests/unit/test_spectral_ops.c detects.
 *
 * The variance of one counter is near k N / m, far too large for one
 * key's answer (which falls below the truth about half the time), so the
 * estimator serves aggregates: the errors of many keys average out.
 * `groups` = g splits the k counters into g groups of k / g consecutive
 * positions and takes the median of the g groups' estimates (the median
 * of means, AMS99), which trades some of the averaging for robustness to
 * one heavily collided counter; for even g the median is the mean of the
 * two middle values. The median of unbiased estimates is unbiased only
 * when their distribution is symmetric, which it is not (a collision adds
 * a positive lump), so g = 1, the plain mean, is the unbiased form.
 *
 * Refused: MI (its counters are not k N / m above the counts on average,
 * Minimal Increase raises only the smallest), trapping RM (moving a key
 * takes m_x from its primary counters and a sprung trap gives it back, so
 * the primary no longer holds k N in all), groups not dividing k, n = 0,
 * m < 2 (the denominator 1 - 1/m vanishes at m = 1). A saturated
 * counter's value is unknown: a sum touching one is NaN, as is
 * sum_estimates when a method estimate is EBB_SPECTRAL_SATURATED.
 */
#include <math.h>

#include "spectral/store.h"

/* Sorts the g <= 32 group means (insertion sort) and returns the median. */
static double median(double *v, uint32_t g)
{
    for (uint32_t i = 1; i < g; i++) {
        double x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return g % 2 ? v[g / 2] : (v[g / 2 - 1] + v[g / 2]) / 2.0;
}

/* The median of the groups' mean counters of key h, or NaN when one of
 * its counters is saturated. */
static double median_of_means(const ebb_spectral *f, ebb_hash128 h,
                              uint32_t groups)
{
    uint64_t pos[EBB_SPECTRAL_MAX_K];
    double means[EBB_SPECTRAL_MAX_K];
    const ebb_cells *c = &f->primary;
    uint32_t k = f->params.k, per = k / groups;
    spectral_positions(spectral_part_hash(h, SPECTRAL_PRIMARY), k, c->count,
                       pos);
    for (uint32_t g = 0; g < groups; g++) {
        uint64_t sum = 0;
        for (uint32_t j = g * per; j < (g + 1) * per; j++) {
            uint32_t v = spectral_store_get(f, SPECTRAL_PRIMARY, pos[j]);
            if (v == c->max)
                return NAN;
            sum += v;
        }
        means[g] = (double)sum / per;
    }
    return median(means, groups);
}

static bool aggregate_valid(const ebb_spectral *f, const ebb_hash128 *hashes,
                            size_t n, uint32_t groups,
                            const ebb_spectral_aggregate *out)
{
    if (f == NULL || hashes == NULL || n == 0 || out == NULL)
        return false;
    if (f->params.method == EBB_SPECTRAL_MI || f->params.trap_slots > 0 ||
        f->primary.count < 2)
        return false;
    return groups >= 1 && groups <= f->params.k && f->params.k % groups == 0;
}

ebb_status ebb_spectral_aggregate_keys(const ebb_spectral *f,
                                       const ebb_hash128 *hashes, size_t n,
                                       uint32_t groups,
                                       ebb_spectral_aggregate *out)
{
    if (!aggregate_valid(f, hashes, n, groups, out))
        return EBB_EINVAL;
    double m = (double)f->primary.count;
    double noise = (double)f->params.k * (double)f->net / m; /* k N / m */
    double scale = 1.0 - 1.0 / m;
    double sum = 0.0, sum_estimates = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += (median_of_means(f, hashes[i], groups) - noise) / scale;
        uint64_t e = ebb_spectral_estimate_hash(f, hashes[i]);
        sum_estimates += e == EBB_SPECTRAL_SATURATED ? NAN : (double)e;
    }
    out->sum = sum;
    out->mean = sum / (double)n;
    out->sum_estimates = sum_estimates;
    return EBB_OK;
}
