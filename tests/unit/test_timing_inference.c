/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_timing_inference.c: the inferential timing filter's closed forms
 * (src/timing/inference.c, model.c) against brute-force sums.
 *
 *   - the posterior for w' = w and w' < w, the expected age and the most
 *     likely age, on thousands of random (shape, model, prior, evidence)
 *     cases, equal to sums over i of P(i) P(R_x | i) built here from the
 *     paper's Lemmas 1 and 2 with Eq. 21 and Eq. 25 (F and G evaluated
 *     with powl, F(r, c, j) included, not cancelled; G counts the block's
 *     items as D(j0 + B) - D(j0), ebb's correction), truncated where the
 *     prior's tail is below 1e-26: 1e-9 relative;
 *   - Theorem 1 against Eq. 11's sums;
 *   - D(j): Eq. 16 against long double powl; ZIPF (Eq. 15 in O(1))
 *     against Eq. 15 summed over the universe in long double, within the
 *     error bound model.c derives; Eq. 18 through its points and on its
 *     log-log lines;
 *   - the least-penalty decision at ties and either side of them;
 *   - every rejection path, *out untouched;
 *   - on a real filter, infer_hash and infer equal infer_evidence on the
 *     observed cells, and standard equals contains.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ebb/timing.h"
#include "support.h"

#define CASES 3000u
#define REL_TOL 1e-9
#define EULER_GAMMA 0.57721566490153286061

/* ------------------------------------------------------------------------ */
/* Random draws                                                             */
/* ------------------------------------------------------------------------ */

static uint64_t draw(uint64_t *state, uint64_t lo, uint64_t hi) /* [lo,hi] */
{
    return lo + support_splitmix64(state) % (hi - lo + 1);
}

static double uniform01(uint64_t *state)
{
    return (double)(support_splitmix64(state) >> 11) * 0x1p-53;
}

/* log-uniform in [lo, hi] */
static double log_uniform(uint64_t *state, double lo, double hi)
{
    return lo * exp(uniform01(state) * log(hi / lo));
}

static bool close_rel(double a, double b, double tol)
{
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= tol * scale || fabs(a - b) < 1e-300;
}

/* ------------------------------------------------------------------------ */
/* Brute force: Eq. 10 and Eq. 8 as sums over i                             */
/* ------------------------------------------------------------------------ */

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* Eq. 21 with powl, for `distinct` distinct items: F(r, c, .). */
static long double eq21_items(const ebb_timing_params *params, uint32_t r,
                              uint32_t c, double distinct)
{
    long double untouched =
        powl(1.0L - 1.0L / (long double)params->timers,
             (long double)params->k * (long double)distinct);
    return powl(untouched, (long double)c) *
           powl(1.0L - untouched, (long double)(r - c));
}

/* Eq. 21: F(r, c, j) over j insertions, D(j) distinct items. */
static long double eq21(const ebb_timing_params *params,
                        const ebb_timing_model *model, uint32_t r, uint32_t c,
                        double j)
{
    return eq21_items(params, r, c, ebb_timing_distinct(model, j));
}

/* P(R_x | i) of Lemma 1 (lambda = 0), Lemma 2 (0 < lambda <= W) and, for
 * expired evidence, ebb's choice (1 from the smallest age it allows: the
 * prior alone decides there). */
typedef struct brute_likelihood {
    const ebb_timing_params *params;
    const ebb_timing_model *model;
    const ebb_timing_evidence *ev;
    uint64_t w_age;      /* W */
    double j0;           /* (lambda - 1) B + b */
    long double f, g, f_b; /* F(r, c, j0), G, F(r, 0, b) */
    bool expired;
    double start;        /* first age with nonzero likelihood */
} brute_likelihood;

static void brute_init(brute_likelihood *bl, const ebb_timing_params *params,
                       const ebb_timing_model *model,
                       const ebb_timing_evidence *ev)
{
    bl->params = params;
    bl->model = model;
    bl->ev = ev;
    bl->w_age = ceil_div(params->window - ev->b, params->block);
    double B = (double)params->block;
    bl->expired = ev->expired || ev->lambda > bl->w_age;
    if (bl->expired) {
        double age = ev->expired ? (double)bl->w_age + 1.0 : (double)ev->lambda;
        bl->start = (age - 1.0) * B + (double)ev->b;
        return;
    }
    if (ev->lambda == 0) {
        bl->f_b = eq21(params, model, ev->r, 0, (double)ev->b);
        bl->start = 0.0;
        return;
    }
    bl->j0 = ((double)ev->lambda - 1.0) * B + (double)ev->b;
    bl->f = eq21(params, model, ev->r, ev->c, bl->j0);
    /* Eq. 25 with ebb's count of the block's items: those not among the
     * j0 insertions since, D(j0 + B) - D(j0) (docs/timing.md) */
    double fresh = ebb_timing_distinct(model, bl->j0 + B) -
                   ebb_timing_distinct(model, bl->j0);
    bl->g = eq21_items(params, ev->c, 0, fresh) * bl->f;
    bl->start = bl->j0;
}

static long double brute_at(const brute_likelihood *bl, double i)
{
    if (bl->expired)
        return i < bl->start ? 0.0L : 1.0L;
    if (bl->ev->lambda == 0)
        return i < (double)bl->ev->b ? 1.0L : bl->f_b;
    if (i < bl->j0)
        return 0.0L;
    if (i < bl->j0 + (double)bl->params->block)
        return bl->f;
    return bl->g;
}

typedef struct brute_answer {
    double posterior;
    double complement;  /* 1 - posterior, summed on its own */
    double expected_age;
    uint64_t likely_age;
} brute_answer;

/* Neumaier's compensated sum: the sums below run to millions of terms. */
typedef struct kahan {
    long double sum, carry;
} kahan;

static void kahan_add(kahan *k, long double term)
{
    long double t = k->sum + term;
    if (fabsl(k->sum) >= fabsl(term))
        k->carry += (k->sum - t) + term;
    else
        k->carry += (term - t) + k->sum;
    k->sum = t;
}

static long double kahan_total(const kahan *k)
{
    return k->sum + k->carry;
}

/* Sums from i = 0 to start + B + 60/p, where q^i < e^-60 of the mass, in
 * long double (F(r, c, j) reaches e^-4000 for k = 32 and small m) with
 * compensated sums. Every term is scaled by the constant q^-start, which
 * no ratio sees, so that q^i does not underflow far out. Also returns
 * 1 - posterior from the sum outside the window, which keeps its digits
 * when the posterior is near 1. */
static brute_answer brute_sum(const brute_likelihood *bl, double p,
                              uint64_t window)
{
    long double q = 1.0L - (long double)p;
    double end = bl->start + (double)bl->params->block + 60.0 / p + 2.0;
    kahan mass = {0, 0}, inside = {0, 0}, outside = {0, 0}, moment = {0, 0};
    long double best = -1;
    uint64_t best_i = 0;
    uint64_t first = (uint64_t)bl->start;
    long double qi = 1.0L; /* q^(i - first) */
    for (uint64_t i = 0; (double)i < end; i++) {
        if (i < first) {
            if (brute_at(bl, (double)i) != 0.0L)
                fail_msg("P(R_x | %llu) > 0 below start",
                         (unsigned long long)i);
            continue;
        }
        long double term = (long double)p * qi * brute_at(bl, (double)i);
        kahan_add(&mass, term);
        kahan_add(&moment, (long double)i * term);
        kahan_add(i < window ? &inside : &outside, term);
        if (term > best) {
            best = term;
            best_i = i;
        }
        qi *= q;
    }
    brute_answer out;
    out.posterior = (double)(kahan_total(&inside) / kahan_total(&mass));
    out.complement = (double)(kahan_total(&outside) / kahan_total(&mass));
    out.expected_age = (double)(kahan_total(&moment) / kahan_total(&mass));
    out.likely_age = best_i;
    return out;
}

/* ------------------------------------------------------------------------ */
/* Random cases                                                             */
/* ------------------------------------------------------------------------ */

static unsigned bits_for(uint64_t values)
{
    unsigned bits = 1;
    while (bits < 64 && (UINT64_C(1) << bits) < values)
        bits++;
    return bits;
}

static void random_params(uint64_t *rng, ebb_timing_params *out)
{
    for (;;) {
        uint64_t w = draw(rng, 1, 3000);
        uint64_t B = draw(rng, 0, 1) ? 1 : draw(rng, 1, w);
        uint32_t k = (uint32_t)(draw(rng, 0, 9) == 0 ? draw(rng, 9, 32)
                                                     : draw(rng, 1, 8));
        uint64_t m = draw(rng, k, 12 * w + k);
        uint64_t P = draw(rng, 0, 40);
        uint64_t t_omega = ceil_div(w, B) + 1 + P;
        unsigned bpt = bits_for(t_omega + 2);
        if (bpt < EBB_TIMING_MIN_TIMER_BITS)
            bpt = EBB_TIMING_MIN_TIMER_BITS;
        if (ebb_timing_params_init(w, m, k, bpt, B, P, out) == EBB_OK)
            return;
        fail_msg("params_init refused w %llu m %llu k %u bpt %u B %llu P %llu",
                 (unsigned long long)w, (unsigned long long)m, k, bpt,
                 (unsigned long long)B, (unsigned long long)P);
    }
}

static void random_model(uint64_t *rng, ebb_timing_model *model)
{
    memset(model, 0, sizeof(*model));
    model->kind = (ebb_timing_model_kind)draw(rng, 0, 3);
    model->universe = (uint64_t)log_uniform(rng, 1.0, 1e9);
    if (model->kind == EBB_TIMING_MODEL_TABLE) {
        model->points = (uint32_t)draw(rng, 2, 8);
        uint64_t j = draw(rng, 1, 20);
        double d = fmax(1.0, (double)j * (0.5 + 0.5 * uniform01(rng)));
        for (uint32_t i = 0; i < model->points; i++) {
            model->j[i] = j;
            model->d[i] = d;
            uint64_t next = j + draw(rng, 1, 3 * j);
            d = fmin((double)next, d * (1.0 + 2.0 * uniform01(rng)));
            j = next;
        }
    }
}

static uint64_t t_omega_of(const ebb_timing_params *params)
{
    return ceil_div(params->window, params->block) + 1 + params->padding;
}

/* Evidence a filter of this shape can show, from every case of the
 * posterior: expired, lambda = 0, 0 < lambda < W, lambda = W, unswept
 * W < lambda <= T_Omega. */
static void random_evidence(uint64_t *rng, const ebb_timing_params *params,
                            ebb_timing_evidence *ev)
{
    for (;;) {
        memset(ev, 0, sizeof(*ev));
        uint64_t rmax = params->k < params->timers ? params->k : params->timers;
        ev->r = (uint32_t)draw(rng, 1, rmax);
        ev->c = (uint32_t)draw(rng, 1, ev->r);
        ev->b = draw(rng, 0, params->block - 1);
        uint64_t w_age = ceil_div(params->window - ev->b, params->block);
        switch (draw(rng, 0, 9)) {
        case 0:
            ev->expired = true;
            ev->lambda = draw(rng, 0, 5);
            break;
        case 1:
            if (ev->b == 0)
                continue; /* lambda = 0 needs b >= 1 */
            ev->lambda = 0;
            ev->c = ev->r;
            break;
        case 2:
            ev->lambda = w_age;
            break;
        case 3:
            ev->lambda = draw(rng, w_age, t_omega_of(params));
            break;
        default:
            ev->lambda = draw(rng, 1, w_age);
            break;
        }
        if (!ev->expired && ev->lambda == 1 && ev->b == 0)
            ev->c = ev->r;
        return;
    }
}

static const char *describe_case(const ebb_timing_params *params,
                                 const ebb_timing_model *model,
                                 const ebb_timing_evidence *ev, double p,
                                 uint64_t window)
{
    static char text[512];
    snprintf(text, sizeof(text),
             "w %llu m %llu k %u B %llu P %llu | model %d U %llu | p %.17g "
             "w' %llu | r %u c %u lambda %llu b %llu expired %d",
             (unsigned long long)params->window,
             (unsigned long long)params->timers, params->k,
             (unsigned long long)params->block,
             (unsigned long long)params->padding, (int)model->kind,
             (unsigned long long)model->universe, p,
             (unsigned long long)window, ev->r, ev->c,
             (unsigned long long)ev->lambda, (unsigned long long)ev->b,
             (int)ev->expired);
    return text;
}

static void test_closed_forms_against_sums(void **state)
{
    (void)state;
    uint64_t rng = 20240613;
    unsigned by_case[5] = {0};
    double worst_posterior = 0.0, worst_age = 0.0;
    for (unsigned n = 0; n < CASES; n++) {
        ebb_timing_params params;
        ebb_timing_model model;
        ebb_timing_evidence ev;
        random_params(&rng, &params);
        random_model(&rng, &model);
        random_evidence(&rng, &params, &ev);
        ebb_timing_query query = {0};
        /* Priors from 1e-3 (60,000 terms a sum) to 1; every 500th case
         * 1e-5 (6e6 terms). */
        query.prior = n % 500 == 0 ? 1e-5 : log_uniform(&rng, 1e-3, 0.95);
        query.window = draw(&rng, 0, 1) ? 0 : draw(&rng, 1, params.window);
        query.cost_fp = 1.0;
        query.cost_fn = 1.0;
        uint64_t window = query.window == 0 ? params.window : query.window;
        /* the model's default prior, prepared once per filter */
        if (model.kind == EBB_TIMING_MODEL_UNIFORM && n % 2 == 0) {
            model.universe = draw(&rng, 1, 1000);
            query.prior = 0.0;
        }
        double p = query.prior == 0.0 ? 1.0 / (double)model.universe
                                      : query.prior;

        ebb_timing_answer answer;
        assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev,
                                                   &query, &answer),
                         EBB_OK);
        brute_likelihood bl;
        brute_init(&bl, &params, &model, &ev);
        brute_answer want = brute_sum(&bl, p, window);
        const char *text = describe_case(&params, &model, &ev, p, window);

        CHECK(close_rel(answer.posterior, want.posterior, REL_TOL),
              "posterior %.17g brute %.17g: %s", answer.posterior,
              want.posterior, text);
        /* Near 1 a double posterior resolves 1 - P only to the ulps of
         * 1: the closed form's ratio of sums takes a few roundings of
         * 2^-53 relative each (at most 4 together), so 1 - P must match
         * to 1e-9 relative plus 4 ulps of 1. */
        CHECK(fabs((1.0 - answer.posterior) - want.complement) <=
                  REL_TOL * want.complement + 4 * 0x1p-53,
              "1 - posterior %.17g brute %.17g: %s", 1.0 - answer.posterior,
              want.complement, text);
        CHECK(close_rel(answer.expected_age, want.expected_age, REL_TOL),
              "expected age %.17g brute %.17g: %s", answer.expected_age,
              want.expected_age, text);
        CHECK(answer.likely_age == want.likely_age,
              "likely age %llu brute %llu: %s",
              (unsigned long long)answer.likely_age,
              (unsigned long long)want.likely_age, text);
        bool standard = !ev.expired && ev.lambda <= bl.w_age;
        CHECK(answer.standard == standard, "standard: %s", text);

        worst_posterior = fmax(worst_posterior,
                               fabs(answer.posterior - want.posterior) /
                                   fmax(want.posterior, 1e-300));
        worst_age = fmax(worst_age, fabs(answer.expected_age -
                                         want.expected_age) /
                                        want.expected_age);
        unsigned kind = bl.expired ? 0
                        : ev.lambda == 0        ? 1
                        : ev.lambda == bl.w_age ? 3
                                                : 2;
        by_case[kind]++;
        if (params.block == 1)
            by_case[4]++;
    }
    printf("closed forms vs sums: %u cases (expired/unswept %u, lambda=0 "
           "%u, 0<lambda<W %u, lambda=W %u; B=1 %u): worst relative "
           "error posterior %.3g, expected age %.3g\n",
           CASES, by_case[0], by_case[1], by_case[2], by_case[3], by_case[4],
           worst_posterior, worst_age);
    for (unsigned i = 0; i < 5; i++)
        CHECK(by_case[i] >= CASES / 40, "case %u drawn %u times", i,
              by_case[i]);
}

/* The shape of the hand-made cases: w over m timers, k = 4, bpt 8,
 * B = 10, P = 3. */
static void small_shape(uint64_t window, uint64_t timers,
                        ebb_timing_params *params)
{
    assert_int_equal(ebb_timing_params_init(window, timers, 4, 8, 10, 3,
                                            params),
                     EBB_OK);
}

/* Tiny priors, where 1 - (1 - p)^n computed naively loses its digits and
 * the expected age's segment mean cancels: compare with sums of the exact
 * geometric terms in long double over a window-sized range plus the
 * analytic tail (q^N / p and its first moment), since 60/p terms are too
 * many here. */
static void test_tiny_priors(void **state)
{
    (void)state;
    ebb_timing_params params;
    small_shape(1000, 8000, &params);
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_DISTINCT};
    const double priors[] = {1e-7, 1e-10, 1e-13, 1e-16};
    for (unsigned n = 0; n < sizeof(priors) / sizeof(priors[0]); n++) {
        double p = priors[n];
        ebb_timing_evidence ev = {.r = 4, .c = 2, .lambda = 40, .b = 3};
        ebb_timing_query query = {.prior = p, .window = 0};
        ebb_timing_answer answer;
        assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev,
                                                   &query, &answer),
                         EBB_OK);
        brute_likelihood bl;
        brute_init(&bl, &params, &model, &ev);
        /* Terms up to N = start + B exactly, then the tail beyond N in
         * closed form with long double logs: sum_{i>=N} p q^i = q^N,
         * sum_{i>=N} i p q^i = q^N (N + q/p). */
        long double q = 1.0L - (long double)p;
        long double lq = log1pl(-(long double)p);
        long double mass = 0, inside = 0, moment = 0;
        double N = bl.start + (double)params.block;
        for (uint64_t i = (uint64_t)bl.start; (double)i < N; i++) {
            long double t = (long double)p * expl((long double)i * lq) *
                            (long double)brute_at(&bl, (double)i);
            mass += t;
            moment += (long double)i * t;
            if (i < params.window)
                inside += t;
        }
        long double qN = expl((long double)N * lq);
        long double tail = (long double)bl.g;
        mass += tail * qN;
        moment += tail * qN * ((long double)N + q / (long double)p);
        /* window - N insertions of the tail fall inside the window */
        inside += tail * (qN - expl((long double)params.window * lq));
        double want_p = (double)(inside / mass);
        double want_e = (double)(moment / mass);
        CHECK(close_rel(answer.posterior, want_p, REL_TOL),
              "p %g: posterior %.17g want %.17g", p, answer.posterior, want_p);
        CHECK(close_rel(answer.expected_age, want_e, REL_TOL),
              "p %g: expected age %.17g want %.17g", p, answer.expected_age,
              want_e);
    }
}

/* p = 1: the item is every insertion; the closed forms take their limits
 * (q^0 = 1, q^n = 0). */
static void test_certain_prior(void **state)
{
    (void)state;
    ebb_timing_params params;
    small_shape(100, 800, &params);
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_DISTINCT};
    ebb_timing_query query = {.prior = 1.0};
    ebb_timing_answer answer;
    ebb_timing_evidence fresh = {.r = 4, .c = 4, .lambda = 0, .b = 3};
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &fresh, &query,
                                               &answer),
                     EBB_OK);
    assert_true(answer.posterior == 1.0);
    assert_true(answer.expected_age == 0.0);
    assert_int_equal(answer.likely_age, 0);
    ebb_timing_evidence old = {.expired = true, .r = 4, .c = 1, .b = 3};
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &old, &query,
                                               &answer),
                     EBB_OK);
    assert_true(answer.posterior == 0.0);
    /* W = ceil(97 / 10) = 10, an expired timer is >= 11 old:
     * I_x >= 10 B + b = 103 */
    assert_true(answer.expected_age == 103.0);
    assert_int_equal(answer.likely_age, 103);
}

/* ------------------------------------------------------------------------ */
/* Theorem 1                                                                */
/* ------------------------------------------------------------------------ */

static void test_classic_posterior(void **state)
{
    (void)state;
    uint64_t rng = 77;
    double worst = 0.0;
    for (unsigned n = 0; n < 2000; n++) {
        double p = log_uniform(&rng, 1e-6, 1.0);
        uint64_t inserted = draw(&rng, 1, 20000);
        double fp = n % 10 == 0 ? 0.0 : uniform01(&rng);
        /* Eq. 11 with Eq. 12's P(R_x | i): 1 for i < n, P_FP for never. */
        double q = 1.0 - p, qi = 1.0, in = 0.0;
        for (uint64_t i = 0; i < inserted; i++) {
            in += p * qi;
            qi *= q;
        }
        double want = in / (qi * fp + in);
        double got = ebb_classic_posterior(p, inserted, fp, true);
        CHECK(close_rel(got, want, REL_TOL), "p %g n %llu fp %g: %.17g %.17g",
              p, (unsigned long long)inserted, fp, got, want);
        worst = fmax(worst, fabs(got - want) / want);
        assert_true(ebb_classic_posterior(p, inserted, fp, false) == 0.0);
    }
    printf("Theorem 1 vs Eq. 11: worst relative error %.3g\n", worst);
    assert_true(ebb_classic_posterior(1.0, 5, 0.5, true) == 1.0);
    assert_true(isnan(ebb_classic_posterior(0.0, 5, 0.5, true)));
    assert_true(isnan(ebb_classic_posterior(-0.1, 5, 0.5, true)));
    assert_true(isnan(ebb_classic_posterior(1.5, 5, 0.5, true)));
    assert_true(isnan(ebb_classic_posterior(NAN, 5, 0.5, true)));
    assert_true(isnan(ebb_classic_posterior(0.5, 0, 0.5, true)));
    assert_true(isnan(ebb_classic_posterior(0.5, 5, -0.1, true)));
    assert_true(isnan(ebb_classic_posterior(0.5, 5, 1.1, true)));
    assert_true(isnan(ebb_classic_posterior(0.5, 5, NAN, true)));
}

/* ------------------------------------------------------------------------ */
/* D(j)                                                                     */
/* ------------------------------------------------------------------------ */

static void test_distinct_exact_models(void **state)
{
    (void)state;
    ebb_timing_model distinct = {.kind = EBB_TIMING_MODEL_DISTINCT};
    const double js[] = {0.0, 0.5, 1.0, 2.0, 7.0, 1000.0, 1e6, 1e12};
    for (unsigned i = 0; i < sizeof(js) / sizeof(js[0]); i++)
        assert_true(ebb_timing_distinct(&distinct, js[i]) == js[i]);

    const uint64_t universes[] = {1, 2, 3, 1000, 65536, UINT64_C(1) << 40};
    for (unsigned u = 0; u < sizeof(universes) / sizeof(universes[0]); u++) {
        ebb_timing_model model = {.kind = EBB_TIMING_MODEL_UNIFORM,
                                  .universe = universes[u]};
        long double U = (long double)universes[u];
        for (unsigned i = 0; i < sizeof(js) / sizeof(js[0]); i++) {
            double j = js[i];
            if (j < 1.0) {
                assert_true(ebb_timing_distinct(&model, j) == j);
                continue;
            }
            /* Eq. 16 in long double, with log1pl/expm1l as powl loses
             * the digits of 1 - 1/U at U = 2^40 */
            long double want =
                -U * expm1l((long double)j * log1pl(-1.0L / U));
            double got = ebb_timing_distinct(&model, j);
            CHECK(close_rel(got, (double)want, 1e-13),
                  "U %llu j %g: %.17g want %.17Lg",
                  (unsigned long long)universes[u], j, got, want);
            assert_true(got <= j && got <= (double)U * (1 + 1e-15));
        }
    }
}

/* Eq. 15 summed over the universe in long double, c = 1/H_|U|. */
static long double zipf_exact(uint64_t universe, double j)
{
    long double h = 0.0L;
    for (uint64_t x = universe; x >= 1; x--)
        h += 1.0L / (long double)x;
    long double d = 0.0L;
    for (uint64_t x = universe; x >= 1; x--)
        d += -expm1l((long double)j * log1pl(-1.0L / ((long double)x * h)));
    return d;
}

/* H_n in long double by its asymptotic series (n > 2^20 here). */
static long double harmonic_ld(uint64_t n)
{
    long double x = (long double)n, inv2 = 1.0L / (x * x);
    return logl(x) + (long double)EULER_GAMMA + 0.5L / x -
           inv2 * (1.0L / 12 - inv2 / 120);
}

/* Eq. 15 for a universe too large to sum, j <= 1e5: ranks 1..N = 2^21
 * summed, the rest by 1 - (1 - s)^j = j s - j (j - 1) s^2 / 2 + O(j^3 s^3)
 * with s = c/x: j c (H_|U| - H_N) - j (j - 1) c^2 / 2 sum_{x > N} 1/x^2.
 * The O term is below j^3 c^3 / (6 N^2) = 4e-4 at j = 1e5 (D ~ 7e4). */
static long double zipf_huge_reference(uint64_t universe, double j)
{
    const uint64_t n = 1u << 21;
    long double h = harmonic_ld(universe), c = 1.0L / h;
    long double d = 0.0L;
    for (uint64_t x = n; x >= 1; x--)
        d += -expm1l((long double)j * log1pl(-c / (long double)x));
    long double squares = 1.0L / ((long double)n + 0.5L) -
                          1.0L / ((long double)universe + 0.5L);
    return d + j * c * (h - harmonic_ld(n)) -
           j * (j - 1) * c * c / 2 * squares;
}

/* The error bound derived in src/timing/model.c for |U| > 4 (ranks 1..4
 * summed exactly, lo = 4.5, hi = |U| + 1/2): the s^3 terms, the midpoint
 * rule on the s^2 terms, the next Euler-Maclaurin terms on h and on g
 * (these three at both ends), with D(j) >= 1. */
static double zipf_error_bound(double c, double universe)
{
    double lo = 4.5, r = lo / (universe + 0.5);
    return 0.0523 * c * c * c / (2 * lo * lo) +
           0.1868 * c * c / (24 * pow(lo, 3)) * (1 + pow(r, 3)) +
           1.589 * 7 * c / (11520 * pow(lo, 4)) * (1 + pow(r, 4)) +
           13.11 * 31 / (967680 * pow(lo, 5)) * (1 + pow(r, 5));
}

/* Worst relative error against Eq. 15 over j = 1..4|U| on a log grid of
 * non-integers, with the whole numbers below each; checks the range. */
static double zipf_worst(uint64_t universe)
{
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_ZIPF,
                              .universe = universe};
    double worst = 0.0;
    for (double step = 1.0; step <= 4.0 * (double)universe; step *= 1.37) {
        double grid[2] = {step, floor(step)};
        for (int g = 0; g < 2; g++) {
            double j = grid[g];
            double got = ebb_timing_distinct(&model, j);
            long double want = zipf_exact(universe, j);
            worst = fmax(worst, (double)fabsl((got - want) / want));
            assert_true(got >= 1.0 && got <= j &&
                        got <= (double)universe);
        }
    }
    return worst;
}

/* ebb evaluates Eq. 15 (not the paper's Eq. 17, 10% low at j = 2^18 for
 * |U| = 2^16): within the derived bound of the exact sum. */
static void test_distinct_zipf(void **state)
{
    (void)state;
    /* the paper's universe (2^16), a small one, and ones just above the
     * exactly summed head */
    const uint64_t universes[] = {1000, 65536, 5, 6, 9, 17, 100};
    for (unsigned u = 0; u < sizeof universes / sizeof universes[0]; u++) {
        double worst = zipf_worst(universes[u]);
        double h = 0.0;
        for (uint64_t x = universes[u]; x >= 1; x--)
            h += 1.0 / (double)x;
        double bound =
            1.25 * zipf_error_bound(1.0 / h, (double)universes[u]);
        printf("Eq. 15 in O(1) vs summed, |U| = %llu: worst relative "
               "error %.3g (bound %.3g)\n",
               (unsigned long long)universes[u], worst, bound);
        CHECK(worst < bound, "|U| %llu: %g",
              (unsigned long long)universes[u], worst);
    }
    /* |U| <= 4: summed exactly */
    for (uint64_t universe = 1; universe <= 4; universe++) {
        ebb_timing_model small = {.kind = EBB_TIMING_MODEL_ZIPF,
                                  .universe = universe};
        for (double j = 1.0; j < 100.0; j *= 1.37)
            CHECK(close_rel(ebb_timing_distinct(&small, j),
                            (double)zipf_exact(universe, j), 1e-14),
                  "|U| %llu j %g", (unsigned long long)universe, j);
    }
    ebb_timing_model one = {.kind = EBB_TIMING_MODEL_ZIPF, .universe = 1};
    assert_true(ebb_timing_distinct(&one, 1.0) == 1.0);
    assert_true(ebb_timing_distinct(&one, 50.0) == 1.0);
    /* below one insertion D(j) = j */
    ebb_timing_model paper = {.kind = EBB_TIMING_MODEL_ZIPF,
                              .universe = 65536};
    assert_true(ebb_timing_distinct(&paper, 0.0) == 0.0);
    assert_true(ebb_timing_distinct(&paper, 0.5) == 0.5);
    /* |U| = 2^48: D(1) = 1, D rises and stays below j up to 4|U|, and at
     * j << |U| it matches zipf_huge_reference within the bound */
    ebb_timing_model huge = {.kind = EBB_TIMING_MODEL_ZIPF,
                             .universe = 1ull << 48};
    CHECK(close_rel(ebb_timing_distinct(&huge, 1.0), 1.0, 1e-9), "D(1)");
    double previous = 0.0;
    for (double j = 1.0; j < 4.0 * 0x1p48; j *= 3.7) {
        double d = ebb_timing_distinct(&huge, j);
        CHECK(d >= previous && d <= j && isfinite(d), "j %g: %g", j, d);
        previous = d;
    }
    const double huge_j[] = {1.0, 37.5, 1e4, 1e5};
    for (unsigned i = 0; i < 4; i++) {
        double got = ebb_timing_distinct(&huge, huge_j[i]);
        long double want = zipf_huge_reference(1ull << 48, huge_j[i]);
        double rel = (double)fabsl((got - want) / want);
        printf("Eq. 15 in O(1) vs head sum + series, |U| = 2^48, j = %g: "
               "relative error %.3g\n", huge_j[i], rel);
        CHECK(rel < 1.25 * zipf_error_bound(
                            1.0 / (double)harmonic_ld(1ull << 48), 0x1p48),
              "j %g: %.17g want %.17Lg", huge_j[i], got, want);
    }
}

static void test_distinct_table(void **state)
{
    (void)state;
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_TABLE,
                              .points = 4,
                              .default_prior = 0.001};
    const uint64_t js[] = {10, 100, 1000, 10000};
    const double ds[] = {8.0, 50.0, 200.0, 400.0};
    for (unsigned i = 0; i < 4; i++) {
        model.j[i] = js[i];
        model.d[i] = ds[i];
    }
    for (unsigned i = 0; i < 4; i++)
        assert_true(ebb_timing_distinct(&model, (double)js[i]) == ds[i]);
    for (unsigned i = 0; i + 1 < 4; i++) {
        /* the geometric midpoint of a segment lies on the log-log line at
         * the geometric mean of its ends (Eq. 18) */
        double mid = sqrt((double)js[i] * (double)js[i + 1]);
        double want = sqrt(ds[i] * ds[i + 1]);
        CHECK(close_rel(ebb_timing_distinct(&model, mid), want, 1e-13),
              "segment %u: %.17g want %.17g", i,
              ebb_timing_distinct(&model, mid), want);
        /* and Eq. 18 itself at a third of the way */
        double j2 = (double)js[i] + ((double)js[i + 1] - (double)js[i]) / 3;
        double lnd = log(ds[i]) + log(ds[i + 1] / ds[i]) *
                                      log(j2 / (double)js[i]) /
                                      log((double)js[i + 1] / (double)js[i]);
        CHECK(close_rel(ebb_timing_distinct(&model, j2), exp(lnd), 1e-13),
              "Eq. 18 at %g", j2);
    }
    /* below the first point: j below 1, then the line from (1, 1) */
    assert_true(ebb_timing_distinct(&model, 0.5) == 0.5);
    assert_true(ebb_timing_distinct(&model, 1.0) == 1.0);
    CHECK(close_rel(ebb_timing_distinct(&model, sqrt(10.0)), sqrt(8.0), 1e-13),
          "below the first point");
    /* above the last: the last segment's slope, log 2 / log 10 */
    double slope = log(400.0 / 200.0) / log(10.0);
    CHECK(close_rel(ebb_timing_distinct(&model, 1e5), 400.0 * pow(10.0, slope),
                    1e-13),
          "extension");
    /* never above j: a steep table */
    ebb_timing_model steep = {.kind = EBB_TIMING_MODEL_TABLE, .points = 2};
    steep.j[0] = 10;
    steep.d[0] = 1.0;
    steep.j[1] = 100;
    steep.d[1] = 100.0; /* slope 2 */
    assert_true(ebb_timing_distinct(&steep, 1000.0) == 1000.0);

    /* invalid tables: NaN */
    ebb_timing_model bad = model;
    bad.points = 1;
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.points = EBB_TIMING_MAX_TABLE + 1;
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.j[0] = 0;
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.j[2] = bad.j[1];
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.d[1] = 5.0; /* decreasing */
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.d[0] = 11.0; /* above j */
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.d[0] = 0.5; /* below 1 */
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.d[3] = NAN;
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.default_prior = 1.5;
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));
    bad = model;
    bad.default_prior = NAN;
    assert_true(isnan(ebb_timing_distinct(&bad, 5.0)));

    /* other invalid models and arguments */
    ebb_timing_model uniform0 = {.kind = EBB_TIMING_MODEL_UNIFORM};
    assert_true(isnan(ebb_timing_distinct(&uniform0, 5.0)));
    ebb_timing_model zipf0 = {.kind = EBB_TIMING_MODEL_ZIPF};
    assert_true(isnan(ebb_timing_distinct(&zipf0, 5.0)));
    ebb_timing_model unknown = {.kind = (ebb_timing_model_kind)9,
                                .universe = 5};
    assert_true(isnan(ebb_timing_distinct(&unknown, 5.0)));
    assert_true(isnan(ebb_timing_distinct(NULL, 5.0)));
    assert_true(isnan(ebb_timing_distinct(&model, -1.0)));
    assert_true(isnan(ebb_timing_distinct(&model, NAN)));
    assert_true(isnan(ebb_timing_distinct(&model, INFINITY)));
}

static void test_zipf_prior(void **state)
{
    (void)state;
    double h = 0.0;
    for (unsigned x = 65536; x >= 1; x--)
        h += 1.0 / x;
    double sum = 0.0;
    for (unsigned x = 1; x <= 65536; x++) {
        double p = ebb_timing_zipf_prior(65536, x);
        CHECK(close_rel(p, 1.0 / (x * h), 1e-14), "rank %u", x);
        sum += p;
    }
    CHECK(close_rel(sum, 1.0, 1e-12), "sum %.17g", sum);
    assert_true(ebb_timing_zipf_prior(1, 1) == 1.0);
    CHECK(close_rel(ebb_timing_zipf_prior(3, 2), 1.0 / (2 * (1 + 0.5 + 1.0 / 3)),
                    1e-15),
          "|U| = 3");
    /* the asymptotic harmonic number, just above the summed range */
    double h65 = 0.0;
    for (unsigned x = 65; x >= 1; x--)
        h65 += 1.0 / x;
    CHECK(close_rel(ebb_timing_zipf_prior(65, 1), 1.0 / h65, 1e-15), "H_65");
    assert_true(isnan(ebb_timing_zipf_prior(0, 1)));
    assert_true(isnan(ebb_timing_zipf_prior(10, 0)));
    assert_true(isnan(ebb_timing_zipf_prior(10, 11)));
}

/* ------------------------------------------------------------------------ */
/* Decisions                                                                */
/* ------------------------------------------------------------------------ */

/* small_shape with w = 1000 over m timers, uniform over 1000 items, and
 * evidence in the middle of the window: lambda = 80 of W = 100, c = 2 of
 * r = 4, b = 3. */
static void middle_case(uint64_t timers, ebb_timing_params *params,
                        ebb_timing_model *model, ebb_timing_evidence *ev)
{
    small_shape(1000, timers, params);
    *model = (ebb_timing_model){.kind = EBB_TIMING_MODEL_UNIFORM,
                                .universe = 1000};
    *ev = (ebb_timing_evidence){.r = 4, .c = 2, .lambda = 80, .b = 3};
}

static ebb_timing_answer infer_ok(const ebb_timing_params *params,
                                  const ebb_timing_model *model,
                                  const ebb_timing_evidence *ev,
                                  const ebb_timing_query *query)
{
    ebb_timing_answer answer;
    assert_int_equal(ebb_timing_infer_evidence(params, model, ev, query,
                                               &answer),
                     EBB_OK);
    return answer;
}

static void test_decisions(void **state)
{
    (void)state;
    ebb_timing_params params;
    ebb_timing_model model;
    ebb_timing_evidence mid;
    middle_case(200, &params, &model, &mid);
    ebb_timing_query query = {.prior = 0.0, .cost_fp = 1.0, .cost_fn = 1.0};
    double post = infer_ok(&params, &model, &mid, &query).posterior;
    assert_true(post > 0.01 && post < 0.99);

    /* tie: $FP (1 - P) = $FN P exactly (a b = b a in IEEE) -> Pos */
    query.cost_fp = post;
    query.cost_fn = 1.0 - post;
    assert_true(infer_ok(&params, &model, &mid, &query).decision);
    query.cost_fp = nextafter(post, 1.0);
    assert_false(infer_ok(&params, &model, &mid, &query).decision);
    query.cost_fp = post;
    query.cost_fn = nextafter(1.0 - post, 0.0);
    assert_false(infer_ok(&params, &model, &mid, &query).decision);
    /* both costs zero: a tie at 0 -> Pos */
    query.cost_fp = 0.0;
    query.cost_fn = 0.0;
    assert_true(infer_ok(&params, &model, &mid, &query).decision);

    /* expired: P = 0, Pos only when a false positive costs nothing */
    ebb_timing_evidence old = {.expired = true, .r = 4, .c = 1, .b = 3};
    query.cost_fp = 1.0;
    query.cost_fn = 1e300;
    ebb_timing_answer a = infer_ok(&params, &model, &old, &query);
    assert_true(a.posterior == 0.0);
    assert_false(a.decision);
    assert_false(a.standard);
    query.cost_fp = 0.0;
    assert_true(infer_ok(&params, &model, &old, &query).decision);

    /* a fresh item: a false negative costs nothing -> Neg unless $FP is 0
     * too */
    ebb_timing_evidence fresh = {.r = 4, .c = 4, .lambda = 1, .b = 3};
    query.cost_fp = 1.0;
    query.cost_fn = 0.0;
    a = infer_ok(&params, &model, &fresh, &query);
    assert_true(a.posterior > 0.9 && a.posterior < 1.0);
    assert_false(a.decision);
    assert_true(a.standard);
    /* the shorter window w' < w lowers the posterior of an old timer */
    query.cost_fn = 1.0;
    ebb_timing_query shorter = query;
    shorter.window = 500;
    double full = infer_ok(&params, &model, &mid, &query).posterior;
    double part = infer_ok(&params, &model, &mid, &shorter).posterior;
    assert_true(part < full);
    /* w' entirely before the smallest possible age: 0 */
    shorter.window = 79 * 10 + 3;
    assert_true(infer_ok(&params, &model, &mid, &shorter).posterior == 0.0);
    shorter.window = 79 * 10 + 4;
    assert_true(infer_ok(&params, &model, &mid, &shorter).posterior > 0.0);
}

/* ------------------------------------------------------------------------ */
/* Rejections                                                               */
/* ------------------------------------------------------------------------ */

static void expect_rejected(const ebb_timing_params *params,
                            const ebb_timing_model *model,
                            const ebb_timing_evidence *ev,
                            const ebb_timing_query *query, const char *what)
{
    ebb_timing_answer out, before;
    memset(&out, 0xA5, sizeof(out));
    memcpy(&before, &out, sizeof(out));
    ebb_status status =
        ebb_timing_infer_evidence(params, model, ev, query, &out);
    CHECK(status == EBB_EINVAL, "%s: status %d", what, (int)status);
    CHECK(memcmp(&out, &before, sizeof(out)) == 0, "%s: out written", what);
}

static void test_rejections(void **state)
{
    (void)state;
    ebb_timing_params params;
    ebb_timing_model uniform;
    ebb_timing_evidence ev;
    middle_case(8000, &params, &uniform, &ev); /* T_Omega = 100 + 1 + 3 */
    ebb_timing_query query = {.prior = 0.01, .cost_fp = 1, .cost_fn = 1};
    ebb_timing_answer answer;
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &ev, &query,
                                               &answer),
                     EBB_OK);

    /* priors */
    const double priors[] = {-0.5, 1.0000001, 2.0, NAN, INFINITY, -INFINITY};
    for (unsigned i = 0; i < sizeof(priors) / sizeof(priors[0]); i++) {
        ebb_timing_query q = query;
        q.prior = priors[i];
        expect_rejected(&params, &uniform, &ev, &q, "prior");
    }
    ebb_timing_query none = query;
    none.prior = 0.0;
    ebb_timing_model distinct = {.kind = EBB_TIMING_MODEL_DISTINCT};
    expect_rejected(&params, &distinct, &ev, &none, "no default (distinct)");
    ebb_timing_model zipf = {.kind = EBB_TIMING_MODEL_ZIPF, .universe = 100};
    expect_rejected(&params, &zipf, &ev, &none, "no default (zipf)");
    ebb_timing_model table = {.kind = EBB_TIMING_MODEL_TABLE, .points = 2};
    table.j[0] = 1;
    table.d[0] = 1.0;
    table.j[1] = 100;
    table.d[1] = 50.0;
    expect_rejected(&params, &table, &ev, &none, "no default (table)");
    table.default_prior = 0.002;
    assert_int_equal(ebb_timing_infer_evidence(&params, &table, &ev, &none,
                                               &answer),
                     EBB_OK);
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &ev, &none,
                                               &answer),
                     EBB_OK);

    /* costs */
    const double costs[] = {-1.0, -1e-300, NAN, INFINITY, -INFINITY};
    for (unsigned i = 0; i < sizeof(costs) / sizeof(costs[0]); i++) {
        ebb_timing_query q = query;
        q.cost_fp = costs[i];
        expect_rejected(&params, &uniform, &ev, &q, "cost_fp");
        q = query;
        q.cost_fn = costs[i];
        expect_rejected(&params, &uniform, &ev, &q, "cost_fn");
    }

    /* window */
    ebb_timing_query q = query;
    q.window = 1001;
    expect_rejected(&params, &uniform, &ev, &q, "w' > w");
    q.window = 1000;
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &ev, &q,
                                               &answer),
                     EBB_OK);
    q.window = 1;
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &ev, &q,
                                               &answer),
                     EBB_OK);

    /* evidence */
    ebb_timing_evidence e;
    e = ev, e.r = 0;
    expect_rejected(&params, &uniform, &e, &query, "r = 0");
    e = ev, e.r = 5;
    expect_rejected(&params, &uniform, &e, &query, "r > k");
    e = ev, e.c = 5;
    expect_rejected(&params, &uniform, &e, &query, "c > r");
    e = ev, e.c = 0;
    expect_rejected(&params, &uniform, &e, &query, "c = 0");
    e = ev, e.expired = true, e.c = 5;
    expect_rejected(&params, &uniform, &e, &query, "expired, c > r");
    e = ev, e.lambda = 105;
    expect_rejected(&params, &uniform, &e, &query, "lambda > T_Omega");
    e = ev, e.lambda = 104;
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &e, &query,
                                               &answer),
                     EBB_OK);
    assert_true(answer.posterior == 0.0 && !answer.standard);
    e = ev, e.b = 10;
    expect_rejected(&params, &uniform, &e, &query, "b >= B");
    e = ev, e.lambda = 0, e.c = 3;
    expect_rejected(&params, &uniform, &e, &query, "lambda = 0, c < r");
    e = ev, e.lambda = 0, e.c = 4, e.b = 0;
    expect_rejected(&params, &uniform, &e, &query, "lambda = 0, b = 0");
    e = ev, e.lambda = 1, e.c = 3, e.b = 0;
    expect_rejected(&params, &uniform, &e, &query, "lambda = 1, b = 0, c < r");
    e = ev, e.lambda = 1, e.c = 4, e.b = 0;
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &e, &query,
                                               &answer),
                     EBB_OK);

    /* the TBF (B = 1): b is always 0, so lambda = 0 never occurs */
    ebb_timing_params tbf;
    assert_int_equal(ebb_timing_params_init(100, 800, 4, 8, 1, 3, &tbf),
                     EBB_OK);
    e = (ebb_timing_evidence){.r = 4, .c = 4, .lambda = 0, .b = 0};
    expect_rejected(&tbf, &uniform, &e, &query, "TBF lambda = 0");
    e.b = 1;
    expect_rejected(&tbf, &uniform, &e, &query, "TBF b = 1");

    /* invalid params, models, NULLs */
    ebb_timing_params bad = params;
    bad.block = 0;
    expect_rejected(&bad, &uniform, &ev, &query, "B = 0");
    bad = params;
    bad.timer_bits = 3; /* 2^3 < T_Omega + 2 */
    expect_rejected(&bad, &uniform, &ev, &query, "bpt too small");
    ebb_timing_model bad_model = {.kind = EBB_TIMING_MODEL_UNIFORM};
    expect_rejected(&params, &bad_model, &ev, &query, "|U| = 0");
    expect_rejected(NULL, &uniform, &ev, &query, "params NULL");
    expect_rejected(&params, NULL, &ev, &query, "model NULL");
    expect_rejected(&params, &uniform, NULL, &query, "evidence NULL");
    expect_rejected(&params, &uniform, &ev, NULL, "query NULL");
    assert_int_equal(ebb_timing_infer_evidence(&params, &uniform, &ev, &query,
                                               NULL),
                     EBB_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* On a filter                                                              */
/* ------------------------------------------------------------------------ */

static bool same_answer(const ebb_timing_answer *a,
                        const ebb_timing_answer *b)
{
    return a->standard == b->standard && a->posterior == b->posterior &&
           a->expected_age == b->expected_age &&
           a->likely_age == b->likely_age && a->decision == b->decision;
}

static void test_filter_queries(void **state)
{
    (void)state;
    ebb_timing_params params;
    assert_int_equal(ebb_timing_choose_paper(2000, 10.0, 5, &params), EBB_OK);
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_UNIFORM,
                              .universe = 3000};
    ebb_timing *filter = NULL;
    assert_int_equal(ebb_timing_create(&params, &model, 99, &filter), EBB_OK);
    uint64_t rng = 5;
    ebb_timing_query query = {.prior = 0.0, .cost_fp = 2.0, .cost_fn = 3.0};
    unsigned seen[2] = {0};
    for (unsigned n = 0; n < 20000; n++) {
        support_key key = support_key_make(KEYS_INSERTED, draw(&rng, 0, 2999));
        ebb_hash128 hash = ebb_hash(key.bytes, sizeof key.bytes, 99);
        ebb_timing_evidence ev;
        ebb_timing_observe_hash(filter, hash, &ev);
        ebb_timing_answer want, by_hash, by_key;
        query.window = n % 3 == 0 ? 0 : draw(&rng, 1, params.window);
        assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev,
                                                   &query, &want),
                         EBB_OK);
        assert_int_equal(ebb_timing_infer_hash(filter, hash, &query, &by_hash),
                         EBB_OK);
        assert_int_equal(ebb_timing_infer(filter, key.bytes, sizeof key.bytes,
                                          &query, &by_key),
                         EBB_OK);
        assert_true(same_answer(&want, &by_hash));
        assert_true(same_answer(&want, &by_key));
        assert_true(want.standard == ebb_timing_contains_hash(filter, hash));
        seen[want.standard]++;
        ebb_timing_add_hash(filter, hash);
    }
    assert_true(seen[0] > 1000 && seen[1] > 1000);
    /* a model without a default prior: a query must give one */
    ebb_timing_model distinct = {.kind = EBB_TIMING_MODEL_DISTINCT};
    assert_int_equal(ebb_timing_set_model(filter, &distinct), EBB_OK);
    ebb_timing_answer out, before;
    memset(&out, 0x5A, sizeof out);
    before = out;
    assert_int_equal(ebb_timing_infer(filter, "x", 1, &query, &out),
                     EBB_EINVAL);
    assert_memory_equal(&out, &before, sizeof out);
    query.prior = 1e-3;
    assert_int_equal(ebb_timing_infer(filter, "x", 1, &query, &out), EBB_OK);
    ebb_timing_destroy(filter);
}

/* One timer (m = 1): every insertion rewrites it, so unexpired evidence
 * is lambda = 0 (b >= 1) or lambda = 1 with b = 0; anything else has
 * likelihood 0 at every age and is refused. The review's case (w 5359,
 * k 19, B 1, P 5, |U| = 1, lambda 3374) was answered posterior 1 with a
 * NaN expected age. */
static void test_single_timer_evidence(void **state)
{
    (void)state;
    ebb_timing_params params;
    assert_int_equal(ebb_timing_params_init(5359, 1, 19, 16, 1, 5, &params),
                     EBB_OK);
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_UNIFORM,
                              .universe = 1};
    ebb_timing_query query = {.prior = 0.01, .window = 0};
    ebb_timing_answer answer;
    ebb_timing_evidence ev = {.r = 1, .c = 1, .lambda = 3374, .b = 0};
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                               &answer),
                     EBB_EINVAL);
    ev.lambda = 2;
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                               &answer),
                     EBB_EINVAL);
    /* lambda = 1, b = 0: x is in the block just ended or older */
    ev.lambda = 1;
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                               &answer),
                     EBB_OK);
    assert_true(isfinite(answer.posterior) && isfinite(answer.expected_age));
    /* B = 1 leaves the filter no lambda = 0; with B = 4 and b = 2 the
     * timer holds T_+, and lambda = 1 needs b = 0 */
    assert_int_equal(ebb_timing_params_init(100, 1, 3, 8, 4, 1, &params),
                     EBB_OK);
    ev = (ebb_timing_evidence){.r = 1, .c = 1, .lambda = 0, .b = 2};
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                               &answer),
                     EBB_OK);
    assert_true(isfinite(answer.posterior) && isfinite(answer.expected_age));
    ev.lambda = 1;
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                               &answer),
                     EBB_EINVAL);
    ev.expired = true;
    assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                               &answer),
                     EBB_OK);
    assert_true(isfinite(answer.expected_age));
}

/* T_Omega = ceil(w / B) + 1 + P, the oldest unexpired age */
static uint64_t oldest_age(const ebb_timing_params *p)
{
    return (p->window + p->block - 1) / p->block + 1 + p->padding;
}

static bool answer_finite(const ebb_timing_answer *a)
{
    return isfinite(a->posterior) && a->posterior >= 0.0 &&
           a->posterior <= 1.0 && isfinite(a->expected_age) &&
           a->expected_age >= 0.0;
}

/* Random evidence, valid or not, on m = 1..3 timers (where ln(1 - 1/m)
 * is -inf or large) and every model kind: whatever is answered EBB_OK has
 * no NaN or infinite field. */
static void test_tiny_m_never_nan(void **state)
{
    (void)state;
    uint64_t rng = 0x7ea5e1f0c0ffee13u;
    unsigned answered = 0, refused = 0;
    for (unsigned n = 0; n < 20000u; n++) {
        uint64_t w = draw(&rng, 1, 2000);
        uint64_t block = draw(&rng, 1, w);
        ebb_timing_params params;
        if (ebb_timing_params_init(w, draw(&rng, 1, 3),
                                   (uint32_t)draw(&rng, 1, EBB_TIMING_MAX_K),
                                   16, block, draw(&rng, 0, 4),
                                   &params) != EBB_OK)
            continue;
        ebb_timing_model model = {.kind = EBB_TIMING_MODEL_DISTINCT};
        switch (draw(&rng, 0, 2)) {
        case 1:
            model.kind = EBB_TIMING_MODEL_UNIFORM;
            model.universe = draw(&rng, 0, 1) ? draw(&rng, 1, 3)
                                              : draw(&rng, 1, 100000);
            break;
        case 2:
            model.kind = EBB_TIMING_MODEL_ZIPF;
            model.universe = draw(&rng, 1, 1000);
            break;
        default:
            break;
        }
        const double priors[] = {1.0, 0.5, 0.01, 1e-12, DBL_MIN};
        ebb_timing_query query = {.prior = priors[draw(&rng, 0, 4)]};
        uint64_t t_omega = oldest_age(&params);
        ebb_timing_evidence ev;
        ev.r = (uint32_t)draw(&rng, 1, 3);
        ev.c = (uint32_t)draw(&rng, 1, ev.r);
        ev.expired = draw(&rng, 0, 7) == 0;
        ev.lambda = draw(&rng, 0, 3) == 0 ? draw(&rng, 0, 2)
                                          : draw(&rng, 0, t_omega);
        ev.b = draw(&rng, 0, block - 1);
        ebb_timing_answer answer;
        if (ebb_timing_infer_evidence(&params, &model, &ev, &query,
                                      &answer) != EBB_OK) {
            refused++;
            continue;
        }
        answered++;
        CHECK(answer_finite(&answer),
              "w %llu m %llu k %u B %llu: r %u c %u exp %d lambda %llu "
              "b %llu prior %g: posterior %g age %g",
              (unsigned long long)w, (unsigned long long)params.timers,
              params.k, (unsigned long long)block, ev.r, ev.c, ev.expired,
              (unsigned long long)ev.lambda, (unsigned long long)ev.b,
              query.prior, answer.posterior, answer.expected_age);
    }
    /* both paths exercised */
    assert_true(answered > 2000u);
    assert_true(refused > 2000u);
}

/* Priors from DBL_MIN up give finite answers; below, the prior's mean
 * (1 - p)/p overflows, and they are refused. */
static void test_priors_from_dbl_min(void **state)
{
    (void)state;
    ebb_timing_params params;
    small_shape(1000, 8000, &params);
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_DISTINCT};
    const ebb_timing_evidence evs[] = {
        {.r = 4, .c = 2, .lambda = 40, .b = 3},
        {.r = 4, .c = 4, .lambda = 0, .b = 3},
        {.r = 4, .c = 4, .lambda = 1, .b = 0},
        {.r = 2, .c = 1, .lambda = 100, .b = 0},
        {.r = 3, .c = 1, .expired = true, .b = 5},
        {.r = 3, .c = 3, .lambda = oldest_age(&params), .b = 9},
    };
    const double ok[] = {DBL_MIN, 2.0 * DBL_MIN, 1e-300, 1e-200, 1e-20};
    const double refused[] = {DBL_TRUE_MIN, 4.9e-324, DBL_MIN / 2.0,
                              nextafter(DBL_MIN, 0.0)};
    for (size_t e = 0; e < sizeof(evs) / sizeof(evs[0]); e++) {
        ebb_timing_answer answer;
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
            ebb_timing_query query = {.prior = ok[i]};
            assert_int_equal(ebb_timing_infer_evidence(&params, &model,
                                                       &evs[e], &query,
                                                       &answer),
                             EBB_OK);
            CHECK(answer_finite(&answer), "evidence %zu prior %g: %g %g", e,
                  ok[i], answer.posterior, answer.expected_age);
        }
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
            ebb_timing_query query = {.prior = refused[i]};
            assert_int_equal(ebb_timing_infer_evidence(&params, &model,
                                                       &evs[e], &query,
                                                       &answer),
                             EBB_EINVAL);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Theorems 2-5 as printed, model DISTINCT                                  */
/* ------------------------------------------------------------------------ */

/* Everything in this section is written from the paper's text alone, with
 * D(j) = j (the DISTINCT model) spelled out rather than asked of the
 * library: Eq. 21, Lemmas 1 and 2 (Eqs. 22, 24), G of Eq. 25 as printed,
 * G = F(c, 0, B) F(r, c, j0) with F(c, 0, B) over D(B) = B items, and the
 * closed forms of Eqs. 23, 26 and 27.
 *
 * Where the printed forms and ebb's coincide. ebb's G counts the block's
 * items that did not come back, D(j0 + B) - D(j0), not D(B) (the header
 * comment of ebb_timing_infer_evidence; docs/timing.md, "Choices"). With
 * D(j) = j that is (j0 + B) - j0 = B = D(B), and in double exactly so (j0
 * and B are integers below 2^53), so for DISTINCT ebb's G is the printed
 * G, P(R_x | i) is the printed one at every i, and for w' = w ebb's
 * posterior must equal Eqs. 23, 26, 27 (and Theorem 2's 0) to rounding. */

/* Eq. 21 with D(j) = j. */
static long double printed_f(const ebb_timing_params *params, uint32_t r,
                             uint32_t c, uint64_t j)
{
    long double untouched =
        powl(1.0L - 1.0L / (long double)params->timers,
             (long double)params->k * (long double)j);
    return powl(untouched, (long double)c) *
           powl(1.0L - untouched, (long double)(r - c));
}

/* The case of Theorems 2-5 the evidence falls in. */
enum printed_case { THEOREM_2, THEOREM_3, THEOREM_4, THEOREM_5, THEOREMS };

typedef struct printed_evidence {
    enum printed_case which;
    uint64_t w_age;    /* W = ceil((w - b) / B)                 */
    uint64_t j0;       /* (lambda - 1) B + b, lambda >= 1        */
} printed_evidence;

static printed_evidence printed_classify(const ebb_timing_params *params,
                                         const ebb_timing_evidence *ev)
{
    printed_evidence out = {THEOREM_2, 0, 0};
    out.w_age = ceil_div(params->window - ev->b, params->block);
    if (ev->expired || ev->lambda > out.w_age)
        return out;
    if (ev->lambda == 0) {
        out.which = THEOREM_3;
        return out;
    }
    out.j0 = (ev->lambda - 1) * params->block + ev->b;
    out.which = ev->lambda < out.w_age ? THEOREM_4 : THEOREM_5;
    return out;
}

/* Eqs. 23, 26, 27 (and Theorem 2) as printed, in long double. */
static long double printed_closed_form(const ebb_timing_params *params,
                                       const ebb_timing_evidence *ev,
                                       const printed_evidence *pe, double p)
{
    long double q = 1.0L - (long double)p;
    long double w = (long double)params->window;
    long double B = (long double)params->block;
    long double b = (long double)ev->b;
    long double j0 = (long double)pe->j0;
    switch (pe->which) {
    case THEOREM_3: { /* Eq. 23 */
        long double f = printed_f(params, ev->r, 0, ev->b);
        return 1.0L - powl(q, w) / ((1.0L - powl(q, b)) / f + powl(q, b));
    }
    case THEOREM_4: { /* Eq. 26 */
        long double f = printed_f(params, ev->c, 0, params->block);
        return 1.0L -
               powl(q, w - j0) / ((1.0L - powl(q, B)) / f + powl(q, B));
    }
    case THEOREM_5: { /* Eq. 27 */
        long double f = printed_f(params, ev->c, 0, params->block);
        return (1.0L - powl(q, w - j0)) / (1.0L - powl(q, B) * (1.0L - f));
    }
    default: /* Theorem 2 */
        return 0.0L;
    }
}

/* P(R_x | i) of Eq. 22 (lambda = 0) and Eq. 24 with Eq. 25 as printed:
 * its value before, inside and after the span [lo, hi) of ages. */
typedef struct printed_likelihood {
    uint64_t lo, hi;
    long double before, inside, after;
} printed_likelihood;

static printed_likelihood printed_likelihood_of(
    const ebb_timing_params *params, const ebb_timing_evidence *ev,
    const printed_evidence *pe)
{
    printed_likelihood out;
    if (pe->which == THEOREM_3) { /* Eq. 22: 1 below b, F(r, 0, b) after */
        out.lo = 0;
        out.hi = ev->b;
        out.before = 0.0L;
        out.inside = 1.0L;
        out.after = printed_f(params, ev->r, 0, ev->b);
        return out;
    }
    long double f = printed_f(params, ev->r, ev->c, pe->j0);
    out.lo = pe->j0; /* Eq. 24: 0, F(r, c, j0), then G */
    out.hi = pe->j0 + params->block;
    out.before = 0.0L;
    out.inside = f;
    out.after = printed_f(params, ev->c, 0, params->block) * f; /* Eq. 25 */
    return out;
}

static long double printed_likelihood_at(const printed_likelihood *l,
                                         uint64_t i)
{
    return i < l->lo ? l->before : i < l->hi ? l->inside : l->after;
}

/* P(I_x < w | R_x) = sum_{i < w} P(i) P(R_x | i) / sum_i P(i) P(R_x | i),
 * P(i) = p q^i (Eq. 4, n -> infinity), term by term, from the first age
 * of nonzero likelihood (its q^start cancels) until q^i < e^-60 beyond
 * both w and the block. Theorem 2 needs no sum: P(R_x | i) = 0 below w. */
static long double printed_brute(const ebb_timing_params *params,
                                 const ebb_timing_evidence *ev,
                                 const printed_evidence *pe, double p)
{
    if (pe->which == THEOREM_2)
        return 0.0L;
    long double q = 1.0L - (long double)p;
    uint64_t start = pe->which == THEOREM_3 ? 0 : pe->j0;
    uint64_t last = start + params->block + params->window +
                    (uint64_t)(60.0 / p) + 2;
    printed_likelihood l = printed_likelihood_of(params, ev, pe);
    kahan inside = {0, 0}, mass = {0, 0};
    long double qi = 1.0L; /* q^(i - start) */
    for (uint64_t i = start; i < last; i++) {
        long double term = qi * printed_likelihood_at(&l, i);
        kahan_add(&mass, term);
        if (i < params->window)
            kahan_add(&inside, term);
        qi *= q;
    }
    return kahan_total(&inside) / kahan_total(&mass);
}

/* The printed closed forms take 1 - X with X near 1 when the posterior is
 * tiny: in long double X carries ~1e-19 absolute error, so the printed
 * form is compared to the sum to 1e-9 relative or 1e-16 absolute. ebb and
 * the sum (which adds the in-window terms themselves) keep their relative
 * digits and meet the plain 1e-9. */
#define PRINTED_CANCEL 1e-16

static void test_distinct_printed_theorems(void **state)
{
    (void)state;
    uint64_t rng = 20130318;
    const unsigned cases = 2000;
    unsigned by_case[THEOREMS] = {0};
    double worst = 0.0;
    ebb_timing_model model = {.kind = EBB_TIMING_MODEL_DISTINCT};
    for (unsigned n = 0; n < cases; n++) {
        ebb_timing_params params;
        do /* m = 1: every insertion rewrites the only timer (other tests) */
            random_params(&rng, &params);
        while (params.timers < 2);
        ebb_timing_evidence ev;
        random_evidence(&rng, &params, &ev);
        double p = log_uniform(&rng, 1e-3, 0.95);
        ebb_timing_query query = {.prior = p, .cost_fp = 1, .cost_fn = 1};
        ebb_timing_answer answer;
        assert_int_equal(ebb_timing_infer_evidence(&params, &model, &ev,
                                                   &query, &answer),
                         EBB_OK);
        printed_evidence pe = printed_classify(&params, &ev);
        double closed = (double)printed_closed_form(&params, &ev, &pe, p);
        double brute = (double)printed_brute(&params, &ev, &pe, p);
        const char *text = describe_case(&params, &model, &ev, p,
                                         params.window);
        /* the paper's algebra: each closed form is its sum */
        CHECK(close_rel(closed, brute, REL_TOL) ||
                  fabs(closed - brute) <= PRINTED_CANCEL,
              "Theorem %d printed %.17g, sum %.17g: %s", (int)pe.which + 2,
              closed, brute, text);
        /* ebb equals the printed theorem */
        CHECK(close_rel(answer.posterior, brute, REL_TOL),
              "Theorem %d: ebb %.17g, printed sum %.17g: %s",
              (int)pe.which + 2, answer.posterior, brute, text);
        CHECK(close_rel(answer.posterior, closed, REL_TOL) ||
                  fabs(answer.posterior - closed) <= PRINTED_CANCEL,
              "Theorem %d: ebb %.17g, Eq. printed %.17g: %s",
              (int)pe.which + 2, answer.posterior, closed, text);
        if (pe.which == THEOREM_2)
            CHECK(answer.posterior == 0.0, "Theorem 2: %.17g: %s",
                  answer.posterior, text);
        by_case[pe.which]++;
        if (brute > 0.0)
            worst = fmax(worst, fabs(answer.posterior - brute) / brute);
    }
    printf("printed Theorems 2-5, DISTINCT: %u cases (Thm 2 %u, Thm 3 "
           "%u, Thm 4 %u, Thm 5 %u): worst relative error of ebb against "
           "the printed sums %.3g\n",
           cases, by_case[THEOREM_2], by_case[THEOREM_3], by_case[THEOREM_4],
           by_case[THEOREM_5], worst);
    for (unsigned i = 0; i < THEOREMS; i++)
        CHECK(by_case[i] >= cases / 40, "Theorem %u drawn %u times", i + 2,
              by_case[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_forms_against_sums),
        cmocka_unit_test(test_distinct_printed_theorems),
        cmocka_unit_test(test_tiny_priors),
        cmocka_unit_test(test_certain_prior),
        cmocka_unit_test(test_classic_posterior),
        cmocka_unit_test(test_distinct_exact_models),
        cmocka_unit_test(test_distinct_zipf),
        cmocka_unit_test(test_distinct_table),
        cmocka_unit_test(test_zipf_prior),
        cmocka_unit_test(test_decisions),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_single_timer_evidence),
        cmocka_unit_test(test_tiny_m_never_nan),
        cmocka_unit_test(test_priors_from_dbl_min),
        SUPPORT_TEST(test_filter_queries, support_setup_counting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
