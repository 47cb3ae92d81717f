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
 *   ZIPF      D(j) = sum_{x=1}^{|U|} (1 - (1 - c/x)^j), c = 1/H_|U|
 *             (Eq. 15 with p_x = c/x), evaluated in O(1); not the
 *             paper's Eq. 17, j/H (1 - gamma + ln(|U| H / j)), which is
 *             10% low at j = 2^18 for |U| = 2^16 (33,551 against 37,194),
 *             3-7% off elsewhere, and peaks at 0.56 |U| where D(j) keeps
 *             rising to |U|: the power-law posteriors were miscalibrated.
 *
 *             Head, x = 1..X0 (X0 = ZIPF_HEAD = 4): summed exactly,
 *             -expm1(j log1p(-c/x)).
 *             Tail, x = X0+1..|U|: with a = j c, t = a/x, s = c/x,
 *               (1 - c/x)^j = e^-t e^-eps,
 *               eps = -j log(1 - s) - t = t (s/2 + s^2/3 + s^3/4 + ...),
 *             so the term is g(x) = 1 - e^-t plus
 *               e^-t (1 - e^-eps) = e^-t (t s/2 + t s^2/3 - t^2 s^2/8)
 *                                   + O(s^3),
 *             and the sum is the midpoint rule over [X0+1/2, |U|+1/2]
 *             with its Euler-Maclaurin end corrections,
 *               sum f(x) = integral of f - [f'] / 24 + 7 [f'''] / 5760 - ..
 *             Each piece has a closed form in t, so the tail is
 *             A(|U| + 1/2) - A(X0 + 1/2) with
 *               A(x) = -x expm1(-t) + a E1(t)        integral of g
 *                      + (c/2) e^-t                  of e^-t t s/2 (= h)
 *                      + (c^2/a) ((1+t)/3 - (t^2+2t+2)/8) e^-t
 *                                                    of the s^2 terms
 *                      + (t/x) e^-t / 24             -g'/24
 *                      - (c/2) (t^2 - 2t) e^-t / (24 x^2)       -h'/24
 *                      + 7 (-6t + 6t^2 - t^3) e^-t / (5760 x^3) 7 g'''/5760
 *             (d/dx [x - x e^(-a/x) + a E1(a/x)] = 1 - e^(-a/x)). E1 is the
 *             exponential integral: its series for z <= 6, its continued
 *             fraction above.
 *             Error: what is left is, with lo = X0 + 1/2 and M the maximum
 *             over t > 0 of |P(t) e^-t| for each term's polynomial P,
 *               the s^3 terms           M = 0.0523  times c^3 / (2 lo^2)
 *               midpoint on s^2 terms   M = 0.1868  times c^2 / (24 lo^3)
 *               midpoint on h, next     M = 1.589   times 7 c / (11520 lo^4)
 *               midpoint on g, next     M = 13.11   times 31 / (967680 lo^5)
 *             (sum_{x > X0} 1/x^3 <= 1/(2 lo^2); the last three at lo and
 *             again, with hi = |U| + 1/2 for lo, at hi), absolute; D(j) >=
 *             D(1) = 1 for j >= 1, so their sum also bounds the relative
 *             error: 5.1e-6 at |U| = 1000, 1.9e-6 at 2^16, 1.4e-4 at most
 *             (|U| = 5, c = 1/H_5; the next order is s = c/lo <= 0.1 of
 *             this). Measured against the long double sum on j = 1..4|U|
 *             (tests/unit/test_timing_inference.c): 1.3e-7 at |U| = 1000,
 *             1.1e-8 at 2^16, 1.2e-5 at |U| = 6. 100-140 ns a call (this
 *             machine, -O2; the head's 4 log1p/expm1 pairs take ~55 ns).
 *             D(j) = j below j = 1; the result is clamped to
 *             [1, min(j, |U|)], which the exact sum obeys.
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

#define E1_SERIES_TERMS 40

/* 1/k for the series below, so that its loop multiplies only. */
static const double e1_reciprocal[E1_SERIES_TERMS + 1] = {
    0.0, /* unused */
    1.0 / 1, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7,
    1.0 / 8, 1.0 / 9, 1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14,
    1.0 / 15, 1.0 / 16, 1.0 / 17, 1.0 / 18, 1.0 / 19, 1.0 / 20, 1.0 / 21,
    1.0 / 22, 1.0 / 23, 1.0 / 24, 1.0 / 25, 1.0 / 26, 1.0 / 27, 1.0 / 28,
    1.0 / 29, 1.0 / 30, 1.0 / 31, 1.0 / 32, 1.0 / 33, 1.0 / 34, 1.0 / 35,
    1.0 / 36, 1.0 / 37, 1.0 / 38, 1.0 / 39, 1.0 / 40};

/* E1(z) = integral from z to infinity of e^-t / t dt, for 0 < z <= 6, by
 * its power series -gamma - ln z - sum_{k>=1} (-z)^k / (k k!). At z = 6
 * the largest term is 11 against E1 = 3.6e-4, so 5 of 16 digits are lost
 * to cancellation: 3e-12 relative, far below what D(j) needs (a E1 < 5
 * there, D >= 1); 38 terms reach 6^k / (k k!) < 1e-16. */
static double e1_series(double z)
{
    double power = 1.0; /* (-z)^k / k! */
    double sum = 0.0;
    for (int k = 1; k <= E1_SERIES_TERMS; k++) {
        power *= -z * e1_reciprocal[k];
        double term = power * e1_reciprocal[k];
        sum += term;
        if (fabs(term) < 1e-16)
            break;
    }
    return -EULER_GAMMA - log(z) - sum;
}

/* E1(z) for z > 6, given e^-z, by its continued fraction
 *   E1(z) = e^-z / (z + 1 - 1/(z + 3 - 4/(z + 5 - 9/(z + 7 - ...)))),
 * the n-th partial numerator -n^2 over z + 2n + 1, evaluated forward by
 * the modified Lentz method (about 25 steps at z = 6, fewer above). */
static double e1_continued_fraction(double z, double e_minus_z)
{
    const double tiny = 1e-300;
    double denominator = z + 1.0;
    double ratio_c = 1.0 / tiny;
    double ratio_d = 1.0 / denominator;
    double value = ratio_d;
    for (int n = 1; n <= 200; n++) {
        double numerator = -(double)n * (double)n;
        denominator += 2.0;
        ratio_d = numerator * ratio_d + denominator;
        ratio_d = 1.0 / (fabs(ratio_d) < tiny ? tiny : ratio_d);
        ratio_c = denominator + numerator / ratio_c;
        if (fabs(ratio_c) < tiny)
            ratio_c = tiny;
        double step = ratio_c * ratio_d;
        value *= step;
        if (fabs(step - 1.0) < 1e-15)
            break;
    }
    return value * e_minus_z;
}

/* E1(z) for z > 0, given e^-z (the caller has it). */
static double exponential_integral_e1(double z, double e_minus_z)
{
    return z <= 6.0 ? e1_series(z) : e1_continued_fraction(z, e_minus_z);
}

/* Ranks 1..ZIPF_HEAD are summed exactly: the tail's expansion in s = c/x
 * needs s small (s <= 1/(4.5 H_5) = 0.097 beyond it). */
#define ZIPF_HEAD 4u

/* A(x) of the essay: the antiderivative of the tail's terms with their
 * Euler-Maclaurin end corrections, at x, with a = j c. */
static double zipf_tail_antiderivative(double x, double a, double c)
{
    double t = a / x;
    if (t > 745.0)
        return x; /* every term is 1 there and every correction 0 */
    double e = exp(-t);
    double x2 = x * x;
    /* 1 - e^-t, with expm1 only where the subtraction would cancel */
    double one_minus_e = t < 0.5 ? -expm1(-t) : 1.0 - e;
    double value = x * one_minus_e + a * exponential_integral_e1(t, e);
    value += 0.5 * c * e;
    value += c * c / a *
             ((1.0 + t) / 3.0 - (t * t + 2.0 * t + 2.0) / 8.0) * e;
    value += t * e / x / 24.0;
    value -= 0.5 * c * (t * t - 2.0 * t) * e / x2 / 24.0;
    value += 7.0 * (-6.0 * t + 6.0 * t * t - t * t * t) * e / (x2 * x) /
             5760.0;
    return value;
}

double ebb_timing_zipf_distinct(uint64_t universe, double h, double j)
{
    if (!(j >= 1.0))
        return j; /* at most one insertion: no repeats (j = 0 gives 0) */
    double c = 1.0 / h;
    uint64_t head = universe < ZIPF_HEAD ? universe : ZIPF_HEAD;
    double d = 0.0;
    for (uint64_t x = head; x >= 1; x--) /* smallest terms first */
        d += -expm1(j * log1p(-c / (double)x));
    if (universe > ZIPF_HEAD) {
        double a = j * c;
        d += zipf_tail_antiderivative((double)universe + 0.5, a, c) -
             zipf_tail_antiderivative((double)ZIPF_HEAD + 0.5, a, c);
    }
    double u = (double)universe;
    double high = j < u ? j : u;
    return d < 1.0 ? 1.0 : (d > high ? high : d);
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

double ebb_timing_model_prior(const ebb_timing_model *model)
{
    switch (model->kind) {
    case EBB_TIMING_MODEL_UNIFORM:
        return model->universe == 0 ? 0.0 : 1.0 / (double)model->universe;
    case EBB_TIMING_MODEL_TABLE:
        return model->default_prior;
    default:
        return 0.0;
    }
}

const char *ebb_timing_model_name(ebb_timing_model_kind kind)
{
    switch (kind) {
    case EBB_TIMING_MODEL_UNIFORM:
        return "uniform";
    case EBB_TIMING_MODEL_ZIPF:
        return "zipf";
    case EBB_TIMING_MODEL_TABLE:
        return "table";
    default:
        return "distinct";
    }
}
