/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf.c: the Time-limited Bloom Filter.
 *
 * The papers
 * ----------
 * Ferreira, Baquero, Almeida et al., "Time-limited Bloom Filter" (ACM SAC
 * 2023, extended version): an Age-Partitioned Bloom Filter (Shtul, Baquero,
 * Almeida 2020) that forgets by time instead of by count. The paper's
 * formulas were lost in extraction; docs/tlbf.md (from the project's
 * spec/tlbf.md) restates the algorithm, and this file follows it.
 *
 * The structure
 * -------------
 * Slices s_0 (newest) .. s_{L-1} (oldest), each a partitioned-Bloom-filter
 * slice with its own size m_i, capacity c_i = floor(m_i ln 2) (the
 * insertions that bring it to fill ratio 1/2), insertion count n_i, the time
 * t_i of its latest insertion, and a hash-function index h_i in [0, k)
 * (a new s_0 takes h(s_1) - 1 mod k, so any k consecutive slices use k
 * different functions). They live in a ring of descriptors:
 *
 *    ring slot:     0      1      2      3      4      5      6      7
 *                +------+------+------+------+------+------+------+------+
 *                | s_5  | s_6  |      |      | s_0  | s_1  | s_2  | s_3  |..
 *                +------+------+------+------+------+------+------+------+
 *                  t old                       t = latest (k = 3 written)
 *                                              head = 4, count = 7
 *
 * add(x, now): clamp now to the latest time seen; if the latest insertion is
 *   older than now - T, everything expired: reset (otherwise the fresh
 *   timestamp of the written slices would revive the stale items in them,
 *   the prototype's bug); shift when the generation budget `left` is spent;
 *   set x's bit in s_0..s_{k-1}, whose t becomes now.
 * shift(now), when the budget `left` is spent or the generation has lasted
 *   2 T / l: retire the old-end slices with t_i < now - T; size the new s_0
 *   for the observed rate: g insertions in d ns (d >= T / 4l, measured from
 *   a rate base) give g* = ceil(g (T / l) / d) per generation, smoothed with
 *   a band and a significance test (next_estimate says why), and a slice is
 *   written for k generations, so c_0 = k g*; the budget until the next
 *   shift is max(1, min_{i<k} floor((c_i - n_i) / (k - i))), so no slice
 *   passes its capacity while it is written. Expired slices are also freed
 *   as soon as they expire (retire_expired).
 * query(x, now): the live slices (t_i >= now - T) are a prefix s_0..
 *   s_{L'-1}, since t_i never increases with position; run the APBF walk
 *   (src/core/agequery.h) over them with l' = L' - k.
 *
 * Why no false negative within T: x added at t is in k consecutive slices
 * whose t_i >= t; at a query time q <= t + T they are all live, so the walk
 * over the live prefix finds them. Clamping keeps t_i monotone when clocks
 * step back; the EVICT policy is the one documented exception.
 *
 * Worked example: T = 60 s, fp 0.01 gives (k, l) = (12, 87) from the APBF
 * chooser; a generation lasts T / l = 0.69 s. At 10,000 insertions a second
 * a generation holds 6,900 items, each new slice c_0 = 12 x 6,900 = 82,800
 * (m_0 = 119,457 bits), and the filter settles at about 99 slices.
 *
 * Memory: at most max_memory, always: a new slice that would pass it is
 * refused (EBB_ELIMIT, nothing changed) or makes room by evicting the
 * oldest live slices (counted). A shift is the only allocation, at most one
 * block per generation, and a retired block is reused when its size fits.
 *
 * The add path: almost every add only sets k bits, so that is all it does.
 * Written as specified, an add also wrote n_i and t_i into each of the k
 * slice descriptors (k more cache lines) and ran the reset, overdue and
 * expiry checks every time: 1.5-2x the APBF's add at the same (k, l)
 * (docs/bench.md, issue 4). Instead:
 *   - the k slices written during a generation are always the same and
 *     all receive every add, so the filter counts `pending` adds once and
 *     hands them to s_0..s_{k-1} (count, and latest_ns as their time)
 *     before a shift or reset moves or empties them (settle);
 *     readers in between add them on the fly (ebb_tlbf_inserted,
 *     ebb_tlbf_last_ns), so statistics, queries and snapshots see exactly
 *     what per-slice writes would have left;
 *   - the times at which an add must do more than write (reset, overdue
 *     generation, a slice to free) are folded into one deadline, due_ns,
 *     recomputed by every add that takes the full path (refresh_due); an
 *     add before it, with budget left, just writes and counts;
 *   - the k written slices' bit arrays, sizes and hash indexes are also
 *     copied, densely, into the handle (f->writes, refreshed whenever the
 *     ring changes), so an add reads 24 bytes per slice from a few lines
 *     instead of one 64-byte ring entry per slice;
 *   - add_batch writes runs of such adds a chunk of keys at a time (when
 *     the written slices are past the caches, every bit of a chunk located
 *     and prefetched before any is set, as the APBF's batch prefetches);
 *     a key that needs the full path takes it alone, so a batch is exactly
 *     its single calls (tests/unit/test_tlbf.c compares them byte for
 *     byte across shifts, refusals, evictions, resets and clamps).
 */
#include <math.h>
#include <string.h>

#include "core/agebatch.h"
#include "core/agequery.h"
#include "core/alloc.h"
#include "tlbf/tlbf_internal.h"

#define LN2 0.69314718055994530942

/* The window used to pick (k, l): they depend on the target fp only (the
 * APBF chooser's memory is proportional to the window), and a large window
 * keeps slice rounding out of the choice. */
#define CHOOSER_WINDOW 1000000u

/* Ring entries beyond k + l at creation: room for a burst's first extra
 * slices before the ring has to grow. */
#define RING_SPARE 8u

/* ------------------------------------------------------------------------ */
/* Sizes and slices                                                         */
/* ------------------------------------------------------------------------ */

/* The handle with its k write descriptors. */
static size_t handle_bytes(uint32_t k)
{
    return sizeof(struct ebb_tlbf) + (size_t)k * sizeof(tlbf_view);
}

size_t ebb_tlbf_footprint(uint32_t k, uint32_t slots, size_t bits)
{
    size_t ring = (size_t)slots * sizeof(tlbf_slice);
    return handle_bytes(k) + ring + bits;
}

uint64_t ebb_tlbf_bits_for(uint64_t capacity)
{
    double bits = ceil((double)capacity / LN2);
    if (!(bits <= (double)EBB_APBF_MAX_SLICE_BITS))
        return 0;
    uint64_t m = (uint64_t)bits;
    while ((uint64_t)floor((double)m * LN2) < capacity)
        m++;
    return m;
}

/* Words of the block for a slice of nbits (its size class). */
static uint64_t class_words(uint64_t nbits)
{
    uint64_t words = ebb_bits_words(nbits);
    uint64_t step = EBB_CACHE_LINE / 8u;
    while (step * 128u <= words)
        step *= 2u; /* step = largest power of two <= words / 64, >= 8 */
    return (words + step - 1u) / step * step;
}

size_t ebb_tlbf_block_bytes(uint64_t nbits)
{
    return ebb_mem_lines_footprint((size_t)class_words(nbits) * 8u);
}

ebb_status ebb_tlbf_slice_alloc(tlbf_slice *s, uint64_t nbits,
                                uint64_t capacity)
{
    if (nbits == 0 || nbits > EBB_APBF_MAX_SLICE_BITS)
        return EBB_EOVERFLOW;
    size_t bytes = (size_t)class_words(nbits) * 8u;
    void *block;
    uint64_t *bits = ebb_mem_alloc_lines(bytes, &block);
    if (bits == NULL)
        return EBB_ENOMEM;
    *s = (tlbf_slice){bits, block, ebb_mem_lines_footprint(bytes), nbits,
                      capacity, 0, EBB_TLBF_NEVER, 0};
    return EBB_OK;
}

/* Empties a slice for reuse as one of nbits bits (nbits fits its block). */
static void slice_recycle(tlbf_slice *s, uint64_t nbits, uint64_t capacity)
{
    memset(s->bits, 0, (size_t)ebb_bits_words(nbits) * 8u);
    s->nbits = nbits;
    s->capacity = capacity;
    s->inserted = 0;
    s->last_ns = EBB_TLBF_NEVER;
}

/* The capacity of a slice whose block takes at most `bytes`, or 0. */
static uint64_t capacity_within(size_t bytes)
{
    if (bytes <= EBB_CACHE_LINE + 8u)
        return 0;
    uint64_t nbits = (uint64_t)(bytes - EBB_CACHE_LINE) / 8u * 64u;
    if (nbits > EBB_APBF_MAX_SLICE_BITS)
        nbits = EBB_APBF_MAX_SLICE_BITS;
    return (uint64_t)floor((double)nbits * LN2);
}

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

/* INT64_MIN marks "never", so the earliest usable time is one above it. */
static int64_t usable_time(int64_t now)
{
    return now == EBB_TLBF_NEVER ? EBB_TLBF_NEVER + 1 : now;
}

/* now - T, saturating at the bottom of the clock. */
static int64_t oldest_live(const ebb_tlbf *f, int64_t now)
{
    return now < INT64_MIN + f->span ? INT64_MIN : now - f->span;
}

/* b - a for a <= b, without overflow. */
static uint64_t elapsed(int64_t a, int64_t b)
{
    return (uint64_t)b - (uint64_t)a;
}

uint32_t ebb_tlbf_live(const ebb_tlbf *f, int64_t now)
{
    int64_t threshold = oldest_live(f, now);
    uint32_t live = f->count;
    while (live > 0 && ebb_tlbf_last_ns(f, live - 1) < threshold)
        live--;
    return live;
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

uint64_t ebb_tlbf_schedule(const ebb_tlbf *f)
{
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < f->k && i < f->count; i++) {
        uint64_t capacity = ebb_tlbf_at(f, i)->capacity;
        uint64_t inserted = ebb_tlbf_inserted(f, i);
        uint64_t room = capacity > inserted ? capacity - inserted : 0;
        uint64_t budget = room / (f->k - i);
        if (budget < next)
            next = budget;
    }
    return next == 0 || next == UINT64_MAX ? 1 : next;
}

/* Writes the pending adds into s_0 .. s_{k-1}: their count, and
 * latest_ns, the time of the latest of them, as their time. */
static void settle(ebb_tlbf *f)
{
    if (f->pending == 0)
        return;
    for (uint32_t i = 0; i < f->k; i++) {
        tlbf_slice *s = ebb_tlbf_at(f, i);
        s->inserted += f->pending;
        s->last_ns = f->latest_ns;
    }
    f->pending = 0;
}

static bool explicit_shape(const ebb_tlbf_config *c)
{
    return c->k != 0 || c->l != 0;
}

static bool config_valid(const ebb_tlbf_config *c)
{
    bool shape_ok = explicit_shape(c)
                        ? ebb_age_kl_valid(c->k, c->l)
                        : c->fp > 0.0 && c->fp < 1.0 && !isnan(c->max_npws);
    return shape_ok && c->span_ns > 0 && c->initial_capacity >= 1 &&
           c->max_memory > 0 &&
           (c->policy == EBB_TLBF_REFUSE || c->policy == EBB_TLBF_EVICT);
}

static void free_slices(ebb_tlbf *f)
{
    for (uint32_t i = 0; i < f->count; i++)
        ebb_mem_free(ebb_tlbf_at(f, i)->block);
    f->count = 0;
}

void ebb_tlbf_destroy(ebb_tlbf *f)
{
    if (f == NULL)
        return;
    free_slices(f);
    ebb_mem_free(f->ring);
    ebb_mem_free(f);
}

/* A filter with an empty ring of `slots` entries (no slices yet). */
ebb_status ebb_tlbf_new(uint32_t k, uint32_t l, uint32_t slots,
                        ebb_tlbf **out)
{
    ebb_tlbf *f = ebb_mem_alloc_zeroed(handle_bytes(k));
    if (f == NULL)
        return EBB_ENOMEM;
    tlbf_slice *ring = ebb_mem_alloc_zeroed((size_t)slots * sizeof *ring);
    if (ring == NULL) {
        ebb_mem_free(f);
        return EBB_ENOMEM;
    }
    *f = (ebb_tlbf){.k = k, .l = l, .ring = ring, .ring_slots = slots,
                    .rate_base_ns = EBB_TLBF_NEVER,
                    .generation_ns = EBB_TLBF_NEVER,
                    .latest_ns = EBB_TLBF_NEVER,
                    .due_ns = INT64_MIN};
    *out = f;
    return EBB_OK;
}

ebb_status ebb_tlbf_plan_config(const ebb_tlbf_config *config,
                                ebb_tlbf_plan *out)
{
    if (config == NULL || out == NULL || !config_valid(config))
        return EBB_EINVAL;
    ebb_apbf_params shape = {.k = config->k, .l = config->l};
    if (!explicit_shape(config)) {
        ebb_status st = ebb_apbf_choose(CHOOSER_WINDOW, config->fp,
                                        config->max_npws, &shape);
        if (st != EBB_OK)
            return st;
    }
    uint32_t k = shape.k, l = shape.l;
    uint64_t g = config->initial_capacity / l +
                 (config->initial_capacity % l != 0);
    if (g > ebb_tlbf_max_estimate(k))
        return EBB_EOVERFLOW;
    uint64_t nbits = ebb_tlbf_bits_for(g * k);
    size_t block = ebb_tlbf_block_bytes(nbits);
    uint32_t slots = k + l + RING_SPARE;
    if (nbits == 0 ||
        block > (SIZE_MAX - ebb_tlbf_footprint(k, slots, 0)) / (k + l))
        return EBB_EOVERFLOW;
    *out = (ebb_tlbf_plan){
        .k = k,
        .l = l,
        .generation_ns = config->span_ns / l,
        .slack_ns = (int64_t)((double)config->span_ns * k / l),
        .generation_items = g,
        .slice_bits = nbits,
        .slice_bytes = block,
        .initial_bytes = ebb_tlbf_footprint(k, slots, block * k),
        .steady_bytes = ebb_tlbf_footprint(k, slots, block * (k + l)),
        .bits_per_item = (double)(k + l) * (double)nbits /
                         ((double)l * (double)g),
        .fp = ebb_apbf_fp(k, l),
        .npws = ebb_apbf_npws(k, l),
    };
    return EBB_OK;
}

ebb_status ebb_tlbf_capacity_for_rate(double rate_per_second, int64_t span_ns,
                                      uint64_t *out)
{
    if (out == NULL || !isfinite(rate_per_second) || !(rate_per_second > 0.0) ||
        span_ns <= 0)
        return EBB_EINVAL;
    double items = ceil(rate_per_second * ((double)span_ns / 1e9));
    if (!(items < 18446744073709551616.0)) /* 2^64 */
        return EBB_EOVERFLOW;
    *out = items < 1.0 ? 1 : (uint64_t)items;
    return EBB_OK;
}

ebb_status ebb_tlbf_create(const ebb_tlbf_config *config, uint64_t seed,
                           ebb_tlbf **out)
{
    ebb_tlbf_plan plan;
    if (out == NULL)
        return EBB_EINVAL;
    ebb_status st = ebb_tlbf_plan_config(config, &plan);
    if (st != EBB_OK)
        return st;
    if (plan.initial_bytes > config->max_memory)
        return EBB_ELIMIT;

    ebb_tlbf *f;
    if ((st = ebb_tlbf_new(plan.k, plan.l, plan.k + plan.l + RING_SPARE,
                           &f)) != EBB_OK)
        return st;
    f->span = config->span_ns;
    f->max_memory = config->max_memory;
    f->policy = config->policy;
    f->seed = seed;
    f->initial_capacity = config->initial_capacity;
    f->estimate = plan.generation_items;
    for (uint32_t i = 0; i < plan.k; i++) {
        tlbf_slice *s = &f->ring[i];
        st = ebb_tlbf_slice_alloc(s, plan.slice_bits,
                                  plan.generation_items * plan.k);
        if (st != EBB_OK) {
            ebb_tlbf_destroy(f);
            return st;
        }
        s->hash_index = i;
        f->count++;
        f->bits_bytes += s->block_bytes;
    }
    f->left = ebb_tlbf_schedule(f);
    ebb_tlbf_refresh_writes(f);
    *out = f;
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Shift                                                                    */
/* ------------------------------------------------------------------------ */

/* What a shift will do, decided before anything changes. */
typedef struct shift_plan {
    uint64_t estimate;   /* the rate estimate after this shift            */
    bool rebase;         /* the rate base moves to now                    */
    uint32_t drop;       /* old-end slices to remove (expired + evicted)  */
    uint32_t evict;      /* of which live (EVICT policy)                  */
    int64_t reuse;       /* logical index of the dropped slice to recycle,
                            or -1                                         */
    uint64_t capacity;   /* of the new s_0                                */
    uint64_t nbits;
    uint32_t slots;      /* ring entries after the shift                  */
} shift_plan;

uint64_t ebb_tlbf_max_estimate(uint32_t k)
{
    return ebb_tlbf_max_capacity() / k;
}

uint64_t ebb_tlbf_max_capacity(void)
{
    return (uint64_t)floor((double)EBB_APBF_MAX_SLICE_BITS * LN2);
}

uint64_t ebb_tlbf_initial_estimate(const ebb_tlbf *f)
{
    uint64_t g = f->initial_capacity / f->l + (f->initial_capacity % f->l != 0);
    uint64_t most = ebb_tlbf_max_estimate(f->k);
    return g == 0 ? 1 : g > most ? most : g;
}

/* A rate is measured over at least a quarter generation: over less, a
 * coarse clock or a batch stamped with one time says nothing. */
static bool measurable(double d, double generation_length_ns)
{
    return d >= generation_length_ns / 4.0;
}

/* Within three Poisson standard deviations of the count an estimate
 * predicts over d ns. */
static bool count_agrees(double count, double estimate, double d,
                         double generation_length_ns)
{
    double expected = estimate * d / generation_length_ns;
    return fabs(count - expected) <= 3.0 * sqrt(expected);
}

/* Does the generation that just ended, alone, agree with the estimate? Its
 * count is s_0's (s_0 received every add since the last shift); one that
 * ended within a quarter generation (a burst, or a coarse clock) cannot be
 * measured and does not. */
static bool recent_agrees(const ebb_tlbf *f, int64_t now,
                          double generation_length_ns)
{
    if (f->generation_ns == EBB_TLBF_NEVER)
        return false;
    double d = (double)elapsed(f->generation_ns, now);
    return measurable(d, generation_length_ns) &&
           count_agrees((double)ebb_tlbf_inserted(f, 0),
                        (double)f->estimate, d, generation_length_ns);
}

/* The per-generation estimate after observing the rate at time now: the
 * count since the rate base over the time since it, scaled to a generation
 * (T / l), once at least a quarter generation has passed.
 *
 * Why not just the observation: each generation's budget is the least room
 * left in the k slices being written, so slices of slightly different sizes
 * end generations early, and with Poisson arrivals that pulled the filling,
 * and the false-positive rate, well below target (0.7x at fp 1e-4, k = 20;
 * tests/stats/test_tlbf_fp). So a change beyond 2x is followed at once
 * (bursts and drops are real); one beyond 1/8 moves the estimate a quarter
 * of the way; and an observation within 1/8 changes nothing unless it is
 * significant: there the base stays put, so the next observation covers
 * more generations (up to a span), and once the count departs from the
 * estimate's by more than three Poisson standard deviations the estimate
 * takes the observed rate. Without that last rule a dimensioning error
 * left the slices sized anywhere in 8/9 .. 8/7 of the rate for good
 * (docs/tlbf.md, rule 5). The base is held only while the generation that
 * just ended agrees with the estimate (recent_agrees): a burst diluted in
 * a span of held count would otherwise be followed shifts late.
 * *rebase says whether the base moves. */
static uint64_t next_estimate(const ebb_tlbf *f, int64_t now, bool *rebase)
{
    double generation_length_ns = (double)f->span / (double)f->l;
    uint64_t d = f->rate_base_ns == EBB_TLBF_NEVER
                     ? 0
                     : elapsed(f->rate_base_ns, now);
    *rebase = measurable((double)d, generation_length_ns) && d > 0;
    if (!*rebase) {
        /* Too little time to measure (a coarse clock, a batch stamped with
         * one time), yet two generations' worth of items already: the rate
         * is at least 8x the estimate. Double it; the next measurable
         * interval corrects it. */
        if (f->since_base / 2u >= f->estimate &&
            f->estimate <= ebb_tlbf_max_estimate(f->k) / 2u)
            return f->estimate * 2u;
        return f->estimate;
    }
    double observed = ceil((double)f->since_base * generation_length_ns / (double)d);
    double current = (double)f->estimate;
    double next = current;
    if (observed > 2.0 * current || observed < current / 2.0) {
        next = observed;
    } else if (fabs(observed - current) > current / 8.0) {
        next = current + (observed - current) / 4.0;
    } else if (!count_agrees((double)f->since_base, current, (double)d,
                             generation_length_ns)) {
        next = observed;
    } else {
        /* keep counting, up to T, while the latest generation agrees */
        *rebase = d >= (uint64_t)f->span || !recent_agrees(f, now, generation_length_ns);
    }
    double most = (double)ebb_tlbf_max_estimate(f->k);
    if (!(next <= most))
        next = most;
    return next < 1.0 ? 1 : (uint64_t)ceil(next);
}

/* Bytes after the shift for a plan (the new block counted unless reused). */
static size_t planned_bytes(const ebb_tlbf *f, const shift_plan *p)
{
    size_t bits = f->bits_bytes;
    for (uint32_t j = 0; j < p->drop; j++)
        bits -= ebb_tlbf_at(f, f->count - 1 - j)->block_bytes;
    if (p->reuse >= 0)
        bits += ebb_tlbf_at(f, (uint32_t)p->reuse)->block_bytes;
    else
        bits += ebb_tlbf_block_bytes(p->nbits);
    return ebb_tlbf_footprint(f->k, p->slots, bits);
}

/* Picks a dropped slice whose block is of the new slice's size class. */
static int64_t find_reusable(const ebb_tlbf *f, uint32_t drop, uint64_t nbits)
{
    size_t need = ebb_tlbf_block_bytes(nbits);
    for (uint32_t j = 0; j < drop; j++) {
        uint32_t i = f->count - 1 - j;
        if (ebb_tlbf_at(f, i)->block_bytes == need)
            return i;
    }
    return -1;
}

static void plan_slices(const ebb_tlbf *f, shift_plan *p)
{
    uint32_t after = f->count - p->drop + 1;
    p->slots = after > f->ring_slots ? f->ring_slots * 2u : f->ring_slots;
    p->reuse = find_reusable(f, p->drop, p->nbits);
}

static bool plan_fits(const ebb_tlbf *f, const shift_plan *p)
{
    return f->count - p->drop + 1 <= f->k + EBB_TLBF_MAX_EXTRA &&
           planned_bytes(f, p) <= f->max_memory;
}

/* Decides drops, reuse and size; EBB_ELIMIT when the policy cannot fit. */
static ebb_status plan_shift(const ebb_tlbf *f, int64_t now, shift_plan *p)
{
    int64_t threshold = oldest_live(f, now);
    *p = (shift_plan){0};
    /* Only slices past the k - 1 newest (which stay written after the
     * shift) can retire; a never-written slice among those is not "old". */
    while (f->count - p->drop > f->k - 1 &&
           ebb_tlbf_at(f, f->count - 1 - p->drop)->last_ns < threshold)
        p->drop++;
    p->estimate = next_estimate(f, now, &p->rebase);
    uint64_t most = ebb_tlbf_max_capacity();
    p->capacity = p->estimate <= most / f->k ? p->estimate * f->k : most;
    p->nbits = ebb_tlbf_bits_for(p->capacity);
    plan_slices(f, p);
    if (plan_fits(f, p))
        return EBB_OK;
    if (f->policy == EBB_TLBF_REFUSE)
        return EBB_ELIMIT;
    /* EVICT: oldest live slices go first, keeping k - 1 beside the new s_0. */
    while (!plan_fits(f, p) && f->count - p->drop > f->k - 1) {
        p->drop++;
        p->evict++;
        plan_slices(f, p);
    }
    if (plan_fits(f, p))
        return EBB_OK;
    /* Still too big: shrink the new slice into the room that is left. */
    shift_plan without = *p;
    without.reuse = -1;
    without.nbits = 1;
    size_t others = planned_bytes(f, &without) - ebb_tlbf_block_bytes(1);
    if (others >= f->max_memory)
        return EBB_ELIMIT;
    uint64_t capacity = capacity_within(f->max_memory - others);
    if (capacity < f->k)
        return EBB_ELIMIT;
    p->capacity = capacity < p->capacity ? capacity : p->capacity;
    p->nbits = ebb_tlbf_bits_for(p->capacity);
    plan_slices(f, p);
    return plan_fits(f, p) ? EBB_OK : EBB_ELIMIT;
}

/* Rebuilds the ring in logical order: new s_0, then the kept slices. */
static void rebuild_ring(ebb_tlbf *f, tlbf_slice *ring, uint32_t slots,
                         const tlbf_slice *fresh, uint32_t keep)
{
    tlbf_slice kept_first = *fresh;
    if (ring != f->ring) {
        /* New array: copy the kept slices after slot 0. */
        for (uint32_t i = 0; i < keep; i++)
            ring[i + 1] = *ebb_tlbf_at(f, i);
        ring[0] = kept_first;
        ebb_mem_free(f->ring);
        f->ring = ring;
        f->ring_slots = slots;
        f->head = 0;
    } else {
        f->head = f->head == 0 ? f->ring_slots - 1 : f->head - 1;
        *ebb_tlbf_at(f, 0) = kept_first;
    }
    f->count = keep + 1;
    ebb_tlbf_refresh_writes(f);
}

static ebb_status shift(ebb_tlbf *f, int64_t now)
{
    /* s_{k-1} leaves the written positions, and the plan reads its time. */
    settle(f);
    shift_plan p;
    ebb_status st = plan_shift(f, now, &p);
    if (st != EBB_OK)
        return st;

    /* Allocate everything first, so a failure changes nothing. */
    tlbf_slice fresh;
    if (p.reuse < 0 &&
        (st = ebb_tlbf_slice_alloc(&fresh, p.nbits, p.capacity)) != EBB_OK)
        return st;
    tlbf_slice *ring = f->ring;
    if (p.slots != f->ring_slots) {
        ring = ebb_mem_alloc_zeroed((size_t)p.slots * sizeof *ring);
        if (ring == NULL) {
            if (p.reuse < 0)
                ebb_mem_free(fresh.block);
            return EBB_ENOMEM;
        }
    }

    if (p.reuse >= 0) {
        fresh = *ebb_tlbf_at(f, (uint32_t)p.reuse);
        slice_recycle(&fresh, p.nbits, p.capacity);
    }
    fresh.hash_index = (ebb_tlbf_at(f, 0)->hash_index + f->k - 1) % f->k;
    for (uint32_t j = 0; j < p.drop; j++) {
        uint32_t i = f->count - 1 - j;
        tlbf_slice *gone = ebb_tlbf_at(f, i);
        f->bits_bytes -= gone->block_bytes;
        if ((int64_t)i != p.reuse)
            ebb_mem_free(gone->block);
    }
    f->bits_bytes += fresh.block_bytes;
    rebuild_ring(f, ring, p.slots, &fresh, f->count - p.drop);

    f->evicted = ebb_saturating_add(f->evicted, p.evict);
    f->shifts = ebb_saturating_add(f->shifts, 1);
    f->estimate = p.estimate;
    f->generation_ns = now;
    if (p.rebase) {
        f->rate_base_ns = now;
        f->since_base = 0;
    }
    f->left = ebb_tlbf_schedule(f);
    return EBB_OK;
}

/* Everything expired during an idle gap: keep the k newest slices' memory,
 * empty them, drop the rest, restart the rate estimate. Cannot fail. */
static void reset(ebb_tlbf *f, int64_t now)
{
    settle(f); /* then emptied: the pending adds go with them */
    while (f->count > f->k) {
        tlbf_slice *gone = ebb_tlbf_at(f, f->count - 1);
        f->bits_bytes -= gone->block_bytes;
        ebb_mem_free(gone->block);
        f->count--;
    }
    for (uint32_t i = 0; i < f->count; i++) {
        tlbf_slice *s = ebb_tlbf_at(f, i);
        slice_recycle(s, s->nbits, s->capacity);
    }
    f->since_base = 0;
    f->rate_base_ns = now;
    f->estimate = ebb_tlbf_initial_estimate(f);
    f->generation_ns = now;
    f->left = ebb_tlbf_schedule(f);
    f->resets = ebb_saturating_add(f->resets, 1);
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

ebb_hash128 ebb_tlbf_hash(const ebb_tlbf *f, const void *key, size_t len)
{
    return ebb_hash_inline(key, len, f->seed);
}

/* Frees the old-end slices that expired (t_i < now - T) as soon as they
 * do, not at the next shift: memory then follows the live span closely
 * (about 3% less at l = 13). One comparison per add; at most one slice
 * freed per generation at a steady rate. */
static void retire_expired(ebb_tlbf *f, int64_t now)
{
    int64_t threshold = oldest_live(f, now);
    while (f->count > f->k &&
           ebb_tlbf_at(f, f->count - 1)->last_ns < threshold) {
        tlbf_slice *gone = ebb_tlbf_at(f, f->count - 1);
        f->bits_bytes -= gone->block_bytes;
        ebb_mem_free(gone->block);
        f->count--;
    }
}

/* A generation also ends after twice its target duration, 2 T / l: after
 * a drop in rate, slices sized for the old rate would otherwise be written
 * for up to k of their long generations, holding burst-sized memory long
 * after the burst (tests/stats/test_tlbf_invariants). Ending a generation
 * early only leaves slices less full. Computed when needed (full adds
 * only), not stored: the handle's size counts against max_memory. */
static uint64_t overdue_after(const ebb_tlbf *f)
{
    uint64_t limit = 2u * ((uint64_t)f->span / f->l);
    return limit == 0 ? 1 : limit;
}

static bool generation_overdue(const ebb_tlbf *f, int64_t now)
{
    return f->generation_ns != EBB_TLBF_NEVER &&
           elapsed(f->generation_ns, now) >= overdue_after(f);
}

/* t + d, or INT64_MAX when that is later. */
static int64_t time_after(int64_t t, uint64_t d)
{
    uint64_t room = elapsed(t, INT64_MAX);
    return d >= room ? INT64_MAX : (int64_t)((uint64_t)t + d);
}

static int64_t earlier(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The first time at which an add must do more than write: the newest
 * slices' time + T + 1 (reset), the generation's start + 2 T / l
 * (overdue), the oldest slice's time + T + 1 (retire_expired, when one can
 * go). Each is exactly where the full path's test turns true; later adds
 * only move the first one later, so the deadline stays safe until the next
 * full add recomputes it. */
static void refresh_due(ebb_tlbf *f)
{
    if (f->latest_ns == EBB_TLBF_NEVER || f->rate_base_ns == EBB_TLBF_NEVER ||
        f->generation_ns == EBB_TLBF_NEVER) {
        f->due_ns = INT64_MIN; /* the first add sets them: the full path */
        return;
    }
    uint64_t past_span = (uint64_t)f->span + 1u;
    int64_t due = earlier(time_after(ebb_tlbf_last_ns(f, 0), past_span),
                          time_after(f->generation_ns, overdue_after(f)));
    if (f->count > f->k)
        due = earlier(due, time_after(ebb_tlbf_at(f, f->count - 1)->last_ns,
                                      past_span));
    f->due_ns = due;
}

/* The time an add given now (a usable time) is recorded at: the latest
 * time seen when now is earlier. Clocks step back; time inside the filter
 * does not (the add counts as clamped). */
static int64_t recorded_time(const ebb_tlbf *f, int64_t now)
{
    return now < f->latest_ns ? f->latest_ns : now;
}

/* True when an add recorded at `at` only writes: no reset, budget left,
 * generation not overdue, nothing to retire afterwards. */
static bool writes_only(const ebb_tlbf *f, int64_t at)
{
    return at < f->due_ns && f->left != 0;
}

/* A bit to set for a batch: its word, prefetched for writing when
 * located, and mask. A batch locates a chunk's bits before setting any, so
 * their cache misses are in flight together. */
static inline ebb_slice_probe locate_for_write(const tlbf_view *s,
                                               ebb_hash128 h)
{
    ebb_slice_probe probe = ebb_tlbf_view_locate(s, h);
    __builtin_prefetch(probe.at, 1, 3);
    return probe;
}

static inline void set_located(const ebb_slice_probe *probes, size_t n)
{
    for (size_t a = 0; a < n; a++)
        ebb_slice_probe_set(&probes[a]);
}

/* Sets h's bit in each of the k newest slices, each as soon as it is
 * located, as the APBF does. Inlined: the add's whole fast path is this
 * and a few counters. (Locating all k bits before setting any had been
 * faster while the slices were reached through the ring; from the dense
 * f->writes the direct loop is: 44-45 against 50 ns at k = 20, 30-38
 * against 32-45 ns at k = 12, scratch driver.) */
EBB_ALWAYS_INLINE void write_key(const ebb_tlbf *f, ebb_hash128 h)
{
    for (uint32_t i = 0; i < f->k; i++) {
        ebb_slice_probe probe = ebb_tlbf_view_locate(&f->writes[i], h);
        ebb_slice_probe_set(&probe);
    }
}

/* Keys a batch locates at once: enough bits in flight to cover the
 * latency of the slices' lines, few enough that they are still in L1 when
 * set (the APBF's batch uses the same). */
#define BATCH_CHUNK 16u

/* True when the k written slices are past the caches, where a batch add
 * stages its writes (ebb_add_prefetch_pays); check_add.c asks it too. */
bool ebb_tlbf_writes_staged(const ebb_tlbf *f)
{
    uint64_t bits = 0;
    for (uint32_t i = 0; i < f->k; i++)
        bits += f->writes[i].nbits;
    return ebb_add_prefetch_pays(bits / 8u);
}

/* Sets the bits of n <= BATCH_CHUNK keys in the k newest slices: staged,
 * every bit located and prefetched before any is set; otherwise key by
 * key as single adds do (in the caches the staging only added
 * instructions: 48.5 against 45.0 ns per add at k = 12, w = 10^6). */
static void write_keys(const ebb_tlbf *f, const ebb_hash128 *h, size_t n,
                       bool staged)
{
    if (!staged) {
        for (size_t j = 0; j < n; j++)
            write_key(f, h[j]);
        return;
    }
    ebb_slice_probe refs[BATCH_CHUNK * EBB_APBF_MAX_K];
    size_t at = 0;
    for (uint32_t i = 0; i < f->k; i++) {
        const tlbf_view *s = &f->writes[i];
        for (size_t j = 0; j < n; j++)
            refs[at++] = locate_for_write(s, h[j]);
    }
    set_located(refs, at);
}

/* The bookkeeping of n adds written at `at` (clamped: asked for earlier);
 * the slices' share waits in pending. */
static void count_adds(ebb_tlbf *f, uint64_t n, int64_t at, bool clamped)
{
    f->left -= n;
    f->since_base += n;
    f->pending += n;
    f->insertions = ebb_saturating_add(f->insertions, n);
    f->clamped = ebb_saturating_add(f->clamped, clamped ? n : 0);
    f->latest_ns = at;
}

/* The add with every check: clamp, reset, shift, retire. */
static ebb_status add_checked(ebb_tlbf *f, ebb_hash128 h, int64_t asked)
{
    int64_t now = recorded_time(f, asked);
    int64_t newest = ebb_tlbf_last_ns(f, 0);
    if (newest != EBB_TLBF_NEVER && elapsed(newest, now) > (uint64_t)f->span)
        reset(f, now);
    if (f->left == 0 || generation_overdue(f, now)) {
        ebb_status st = shift(f, now);
        if (st != EBB_OK) {
            /* The refused item still counts toward the observed rate: sizing
             * for accepted items only would shrink slices under pressure,
             * shorten generations, crowd more slices into the limit and
             * refuse ever more. */
            if (st == EBB_ELIMIT) {
                f->refused = ebb_saturating_add(f->refused, 1);
                f->since_base = ebb_saturating_add(f->since_base, 1);
            }
            return st;
        }
    }
    write_key(f, h);
    count_adds(f, 1, now, now != asked);
    if (f->rate_base_ns == EBB_TLBF_NEVER)
        f->rate_base_ns = now;
    if (f->generation_ns == EBB_TLBF_NEVER)
        f->generation_ns = now;
    retire_expired(f, now); /* after the write: a refused add changes nothing */
    return EBB_OK;
}

static ebb_status add_full(ebb_tlbf *f, ebb_hash128 h, int64_t now)
{
    ebb_status st = add_checked(f, h, now);
    refresh_due(f);
    return st;
}

/* Before the deadline, with budget left, an add only writes and counts
 * (the opening essay's "add path" says why); otherwise the full add. */
ebb_status ebb_tlbf_add_hash(ebb_tlbf *f, ebb_hash128 h, int64_t now)
{
    now = usable_time(now);
    int64_t at = recorded_time(f, now);
    if (!writes_only(f, at))
        return add_full(f, h, now);
    write_key(f, h);
    count_adds(f, 1, at, at != now);
    return EBB_OK;
}

ebb_status ebb_tlbf_add(ebb_tlbf *f, const void *key, size_t len,
                        int64_t now)
{
    return ebb_tlbf_add_hash(f, ebb_tlbf_hash(f, key, len), now);
}

/* A query batch copies the live slices' descriptors from this many queries
 * on (ebb_tlbf_contains_batch). */
#define VIEW_MIN_QUERIES 8u

/* Logical slice i's read for h, found through the ring as one query finds
 * it. */
static inline void ring_locate(const void *filter, ebb_hash128 h, uint32_t i,
                               ebb_slice_probe *probe)
{
    tlbf_view v = ebb_tlbf_view_of(ebb_tlbf_at(filter, i));
    *probe = ebb_tlbf_view_locate(&v, h);
}

/* Logical slice i's test for h, for the walk of one query. */
static inline bool slice_matches(const void *filter, ebb_hash128 h,
                                 uint32_t i)
{
    ebb_slice_probe probe;
    ring_locate(filter, h, i, &probe);
    return ebb_slice_probe_test(&probe);
}

/* Logical slice i's read and test for the interleaved walks of a batch
 * (core/agebatch.h), on the live slices' views copied for the batch. */
static inline void view_locate(const void *views, ebb_hash128 h, uint32_t i,
                               ebb_slice_probe *probe)
{
    *probe = ebb_tlbf_view_locate((const tlbf_view *)views + i, h);
}

/* The test on a located bit, whichever way it was located. */
static inline bool probe_matches(const void *context,
                                 const ebb_slice_probe *probe)
{
    (void)context;
    return ebb_slice_probe_test(probe);
}

/* A query answers at the time it is given (INT64_MIN aside). Before the
 * latest time seen that is a superset of the answer at the latest time:
 * keys added since latest - T are certain, older ones within now - T are
 * reported until a shift retires their slices. */
static int64_t query_time(const ebb_tlbf *f, int64_t now)
{
    (void)f;
    return usable_time(now);
}

bool ebb_tlbf_contains_hash(const ebb_tlbf *f, ebb_hash128 h, int64_t now)
{
    uint32_t live = ebb_tlbf_live(f, query_time(f, now));
    if (live < f->k)
        return false;
    return ebb_age_query(f->k, live - f->k, slice_matches, f, h, NULL);
}

bool ebb_tlbf_contains(const ebb_tlbf *f, const void *key, size_t len,
                       int64_t now)
{
    return ebb_tlbf_contains_hash(f, ebb_tlbf_hash(f, key, len), now);
}

ebb_status ebb_tlbf_add_batch(ebb_tlbf *f, const ebb_hash128 *hashes,
                              size_t n, int64_t now, size_t *added)
{
    /* Exactly n single adds at now: a key that needs more than a write (a
     * shift, a reset, a refusal, a slice to free) goes through the full
     * add alone; between those, runs of keys that only write (one
     * generation and one time, so the same k slices, and no check can turn)
     * are written a chunk at a time (their bits located and prefetched
     * before any is set when the written slices are past the caches,
     * ebb_tlbf_writes_staged), and counted together. */
    now = usable_time(now);
    size_t i = 0;
    ebb_status st = EBB_OK;
    bool staged = ebb_tlbf_writes_staged(f); /* the written slices change in add_full */
    while (i < n) {
        int64_t at = recorded_time(f, now);
        if (!writes_only(f, at)) {
            if ((st = add_full(f, hashes[i], now)) != EBB_OK)
                break;
            staged = ebb_tlbf_writes_staged(f);
            i++;
            continue;
        }
        size_t chunk = n - i < BATCH_CHUNK ? n - i : BATCH_CHUNK;
        if (chunk > f->left)
            chunk = (size_t)f->left;
        write_keys(f, hashes + i, chunk, staged);
        count_adds(f, chunk, at, at != now);
        i += chunk;
    }
    if (added != NULL)
        *added = i;
    return st;
}

size_t ebb_tlbf_contains_batch(const ebb_tlbf *f, const ebb_hash128 *hashes,
                               size_t n, int64_t now, bool *out)
{
    /* the same for the whole batch */
    uint32_t live = ebb_tlbf_live(f, query_time(f, now));
    if (live < f->k) {
        for (size_t i = 0; i < n; i++)
            out[i] = false;
        return 0;
    }
    /* Too few queries to repay copying the live slices' descriptors: the
     * copy reads every live slice's 64-byte ring entry, a query only those
     * of the slices it walks (on ebb-bench's half-present mix, 17.9 of 99 at
     * fp 1e-2 and 27.6 of 241 at 1e-4), so the copy should pay from about
     * live / reads, 6 to 9 queries. A scratch driver at w = 10^6 agreed, if
     * noisily: one-key batches were faster through the ring, and from 8
     * keys on the copy was as fast or faster. Below, the walks read
     * through the ring. */
    if (n < VIEW_MIN_QUERIES)
        return ebb_age_query_batch(f, f->k, live - f->k, hashes, n, out,
                                   ring_locate, probe_matches);
    /* The live slices' descriptors, copied densely in age order: the
     * walks then find a slice's bits without the ring's 64-byte entries,
     * which the batch's prefetched lines push out of L1. */
    tlbf_view views[EBB_APBF_MAX_K + EBB_TLBF_MAX_EXTRA];
    for (uint32_t i = 0; i < live; i++)
        views[i] = ebb_tlbf_view_of(ebb_tlbf_at(f, i));
    return ebb_age_query_batch(views, f->k, live - f->k, hashes, n, out,
                               view_locate, probe_matches);
}

ebb_status ebb_tlbf_add_now(ebb_tlbf *f, const void *key, size_t len)
{
    return ebb_tlbf_add(f, key, len, ebb_tlbf_clock_now());
}

bool ebb_tlbf_contains_now(const ebb_tlbf *f, const void *key, size_t len)
{
    return ebb_tlbf_contains(f, key, len, ebb_tlbf_clock_now());
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

size_t ebb_tlbf_memory(const ebb_tlbf *f)
{
    return ebb_tlbf_footprint(f->k, f->ring_slots, f->bits_bytes);
}

/* The false-positive rate of the live slices from their expected fill. */
static double current_fp(const ebb_tlbf *f, uint32_t live)
{
    double r[EBB_APBF_MAX_K + EBB_TLBF_MAX_EXTRA];
    if (live < f->k)
        return 0.0;
    for (uint32_t i = 0; i < live; i++) {
        double nbits = (double)ebb_tlbf_at(f, i)->nbits;
        r[i] = -expm1((double)ebb_tlbf_inserted(f, i) * log1p(-1.0 / nbits));
    }
    if (live == f->k) { /* one place for a run to start */
        double p = 1.0;
        for (uint32_t i = 0; i < live; i++)
            p *= r[i];
        return p;
    }
    return ebb_apbf_fp_ratios(f->k, live - f->k, r);
}

void ebb_tlbf_get_stats(const ebb_tlbf *f, ebb_tlbf_stats *out)
{
    uint32_t live = f->latest_ns == EBB_TLBF_NEVER
                        ? 0
                        : ebb_tlbf_live(f, f->latest_ns);
    uint64_t held = 0;
    for (uint32_t i = 0; i < live; i++)
        held += ebb_tlbf_inserted(f, i);
    *out = (ebb_tlbf_stats){
        .k = f->k,
        .l = f->l,
        .span_ns = f->span,
        .policy = f->policy,
        .max_memory = f->max_memory,
        .seed = f->seed,
        .slices = f->count,
        .live_slices = live,
        .memory_bytes = ebb_tlbf_memory(f),
        .slice0_bits = ebb_tlbf_at(f, 0)->nbits,
        .insertions = f->insertions,
        .shifts = f->shifts,
        .evicted_slices = f->evicted,
        .refused = f->refused,
        .clamped = f->clamped,
        .resets = f->resets,
        .latest_ns = f->latest_ns,
        .current_fp = current_fp(f, live),
        .items_in_span = held / f->k,
    };
}
