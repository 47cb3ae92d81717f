/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * model.c: the stream model of a timing filter: D(j), the expected number
 * of distinct items among j insertions (section 2.5 of Dautrich and
 * Ravishankar), and the priors p_x the models supply.
 *
 *   DISTINCT  D(j) = j: every insertion a new item.
 *   UNIFORM   D(j) = |U| (1 - (1 - 1/|U|)^j)            (Eq. 16, exact)
 *             evaluated as -|U| expm1(j log1p(-1/|U|)), which keeps its
 *             precision when 1/|U| is far below the rounding of 1.
 *   ZIPF      D(j) ~ j / H (1 - gamma + ln(|U| H / j))   (Eq. 17)
 *             with H = H_|U|. The approximation rises to its maximum
 *             |U| e^-gamma ~ 0.56 |U| at j* = |U| H e^-gamma and falls
 *             beyond, where the true D(j) keeps rising towards |U|; ebb
 *             holds it at its maximum for j > j*. It also overshoots j for
 *             the first few insertions (D(1) ~ 1.2 at |U| = 2^16, where the
 *             true value is 1), so it is clamped to [min(j, 1), min(j, |U|)].
 *             tests/unit/test_timing_inference.c measures it against the
 *             exact sum of Eq. 15 over the universe.
 *   TABLE     measured points (j_i, D_i), interpolated on a log-log scale
 *             (Eq. 18); D(j) = j below 1 and from (1, 1) to the first
 *             point on the same log-log line (so D(j) = j there when the
 *             first point is exact), extended along the last segment's
 *             slope above the last point, and never above j.
 *
 * D is only ever evaluated at whole numbers of insertions by the filter;
 * the public function takes a double so that tools can plot it.
 */
#include <math.h>

#include "timing/model.h"

#define EULER_GAMMA 0.57721566490153286061

/* Below this the harmonic number is summed; above, the asymptotic series
 * with terms to n^-6 is exact to double rounding (its error is below
 * 1/(240 n^8) < 1e-16 for n > 64). */
#define HARMONIC_SUMMED 64u

double ebb_timing_harmonic(uint64_t n)
{
    if (n <= HARMONIC_SUMMED) {
        double sum = 0.0;
        for (uint64_t i = n; i >= 1; i--) /* smallest terms first */
            sum += 1.0 / (double)i;
        return sum;
    }
    double x = (double)n;
    double inv2 = 1.0 / (x * x);
    return log(x) + EULER_GAMMA + 0.5 / x -
           inv2 * (1.0 / 12.0 - inv2 * (1.0 / 120.0 - inv2 / 252.0));
}

static bool table_valid(const ebb_timing_model *model)
{
    if (model->points < 2 || model->points > EBB_TIMING_MAX_TABLE)
        return false;
    double prior = model->default_prior;
    if (!(prior == 0.0 || (prior > 0.0 && prior <= 1.0)))
        return false; /* also refuses NaN */
    if (model->j[0] < 1)
        return false;
    for (uint32_t i = 0; i < model->points; i++) {
        double d = model->d[i];
        if (!(d >= 1.0 && d <= (double)model->j[i])) /* NaN fails too */
            return false;
        if (i > 0 && (model->j[i] <= model->j[i - 1] ||
                      d < model->d[i - 1]))
            return false;
    }
    return true;
}

bool ebb_timing_model_valid(const ebb_timing_model *model)
{
    if (model == NULL)
        return false;
    switch (model->kind) {
    case EBB_TIMING_MODEL_DISTINCT:
        return true;
    case EBB_TIMING_MODEL_UNIFORM:
    case EBB_TIMING_MODEL_ZIPF:
        return model->universe >= 1;
    case EBB_TIMING_MODEL_TABLE:
        return table_valid(model);
    }
    return false;
}

double ebb_timing_model_default_prior(const ebb_timing_model *model)
{
    switch (model->kind) {
    case EBB_TIMING_MODEL_UNIFORM:
        return 1.0 / (double)model->universe;
    case EBB_TIMING_MODEL_TABLE:
        return model->default_prior;
    case EBB_TIMING_MODEL_DISTINCT:
    case EBB_TIMING_MODEL_ZIPF:
        break;
    }
    return 0.0;
}

static double uniform_distinct(uint64_t universe, double j)
{
    if (universe == 1)
        return 1.0; /* j >= 1 here; log1p(-1) would be -inf */
    double u = (double)universe;
    return -u * expm1(j * log1p(-1.0 / u));
}

double ebb_timing_zipf_distinct(uint64_t universe, double h, double j)
{
    double u = (double)universe;
    double peak = u * h * exp(-EULER_GAMMA); /* j*: Eq. 17's maximum */
    double at = j < peak ? j : peak;
    double d = at / h * (1.0 - EULER_GAMMA + log(u * h / at));
    double low = j < 1.0 ? j : 1.0;
    double high = j < u ? j : u;
    return d < low ? low : (d > high ? high : d);
}

/* Eq. 18 between (j1, d1) and (j3, d3), also used to extrapolate. */
static double loglog(double j1, double d1, double j3, double d3, double j)
{
    return d1 * exp(log(d3 / d1) * log(j / j1) / log(j3 / j1));
}

static double table_distinct(const ebb_timing_model *model, double j)
{
    uint32_t n = model->points;
    double d;
    if (j <= (double)model->j[0]) {
        d = model->j[0] == 1 ? model->d[0]
                             : loglog(1.0, 1.0, (double)model->j[0],
                                      model->d[0], j);
        if (j == (double)model->j[0])
            d = model->d[0];
    } else if (j >= (double)model->j[n - 1]) {
        d = j == (double)model->j[n - 1]
                ? model->d[n - 1]
                : loglog((double)model->j[n - 2], model->d[n - 2],
                         (double)model->j[n - 1], model->d[n - 1], j);
    } else {
        uint32_t lo = 0, hi = n - 1; /* j[lo] < j < j[hi] */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if ((double)model->j[mid] <= j)
                lo = mid;
            else
                hi = mid;
        }
        d = j == (double)model->j[lo]
                ? model->d[lo]
                : loglog((double)model->j[lo], model->d[lo],
                         (double)model->j[hi], model->d[hi], j);
    }
    return d < j ? d : j;
}

double ebb_timing_model_distinct(const ebb_timing_model *model, double j)
{
    if (j < 1.0 || model->kind == EBB_TIMING_MODEL_DISTINCT)
        return j; /* at most one insertion: no repeats */
    switch (model->kind) {
    case EBB_TIMING_MODEL_UNIFORM:
        return uniform_distinct(model->universe, j);
    case EBB_TIMING_MODEL_ZIPF:
        return ebb_timing_zipf_distinct(model->universe,
                                        ebb_timing_harmonic(model->universe),
                                        j);
    case EBB_TIMING_MODEL_TABLE:
        return table_distinct(model, j);
    case EBB_TIMING_MODEL_DISTINCT:
        break;
    }
    return j;
}

double ebb_timing_distinct(const ebb_timing_model *model, double j)
{
    if (!ebb_timing_model_valid(model) || !(j >= 0.0) || isinf(j))
        return NAN;
    return ebb_timing_model_distinct(model, j);
}

double ebb_timing_zipf_prior(uint64_t universe, uint64_t rank)
{
    if (universe == 0 || rank == 0 || rank > universe)
        return NAN;
    return 1.0 / ((double)rank * ebb_timing_harmonic(universe));
}
