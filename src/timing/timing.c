/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing.c: the Timing and Block Timing Bloom filters, standard query.
 *
 * The papers
 * ----------
 * Zhang and Guan's Timing Bloom Filter (TBF) as described, with its block
 * form the BTBF, in section 3 of Dautrich and Ravishankar, "Inferential
 * Time-Decaying Bloom Filters" (2013; ../shared/papers/inferential-time-
 * decaying-bloom-filters.txt). "Was x among the last w insertions?" with no
 * false negatives. The inferential answers built on the same cells are
 * inference.c's (section 4); this file is the data structure.
 *
 * The structure
 * -------------
 * m timers of bpt bits, packed into one little-endian bit stream of 64-bit
 * words (src/core/cells.h): timer i is bits [i bpt, i bpt + bpt), and may
 * straddle two words. m = 6, bpt = 3:
 *
 *   word 0, bit 63 ................ 18 17  15 14  12 11   9 8    6 5    3 2   0
 *              [ zero: past m bpt    | t5   | t4   | t3   | t2   | t1   | t0  ]
 *
 * A timer holds a timestamp 0..T_Omega or the expired mark
 * T_eps = T_Omega + 1 (so 2^bpt >= T_Omega + 2; values above the mark
 * never occur). The handle keeps the current timestamp T_+ (0..T_Omega),
 * b (insertions since T_+ last advanced, 0..B-1), the sweep cursor, the
 * counters, the hash seed and the stream model of the inference.
 *
 *   T_Omega = ceil(w / B) + 1 + P        (section 3.2.3, P the padding)
 *
 * An item's k timers are ebb_reduce(ebb_derive(h, j), m), j < k, from its
 * 128-bit hash: independent, uniform, and they may coincide.
 *
 * Insert (ebb_timing_add):
 *   1. the k timers get T_+;
 *   2. b += 1; when b reaches B, b = 0 and T_+ = T_+ + 1 mod T_Omega + 1;
 *   3. sweep: the s = ceil(m / (B (P + 1))) timers from the cursor on,
 *      wrapping at m, are examined under the new (T_+, b); an expired one
 *      (not the mark, age >= the limit) is rewritten to the mark.
 * Query (ebb_timing_contains): false iff one of the k timers holds the mark
 * or a timestamp of age >= limit, where
 *   age(v)  = T_+ - v  mod  T_Omega + 1    (the increments of T_+ since v)
 *   limit   = ceil((w - b) / B) + 1        (Definition 9).
 *
 * The limit without a division. Write w = Q B + R, 0 <= R < B. As b runs
 * over a block, w - b runs over B consecutive values, so ceil((w - b) / B)
 * is Q + 1 for b < R and Q for b >= R (always Q when R = 0):
 *   limit = floor(w / B) + 1 + [b < w mod B],
 * two constants fixed at creation and one compare per insertion. The age is
 * T_+ - v, plus T_Omega + 1 when v > T_+: a compare, not a modulo.
 *
 * Why there are no false negatives (section 3.2.2): if x was inserted at
 * stream position s, its timers hold that block's timestamp or a later
 * one. Let N be the insertions so far (b = N mod B); a timestamp written at
 * s has true age floor(N/B) - floor(s/B), and one of age >= limit was
 * written at least (limit - 1) B + b >= w insertions ago. Provided that
 * every timer reads its true age, an expired timer means I_x >= w.
 *
 * Invariant (what makes every read exact). The read age equals the true
 * age as long as the true age is at most T_Omega: one more increment and
 * T_+ wraps onto the value, which would read as age 0, fresh. So every
 * timer whose age passes the limit must become the mark before its true
 * age reaches T_Omega + 1. The sweep does it:
 *
 *   A timer the sweep leaves unmarked at state n (after n insertions) had
 *   age a <= ceil((w - b_n) / B) (else it was expired and marked). The
 *   cursor advances s per insertion, so the timer is examined again within
 *   G = ceil(m / s) <= B (P + 1) insertions (s >= m / (B (P + 1))). Its
 *   age then is at most
 *     ceil((w - b_n) / B) + floor((b_n + G) / B)
 *       <= ceil(w / B) + P + 1 = T_Omega.
 *   A timer written in between starts from age 0 at its write and is
 *   examined within G insertions of its previous examination: the same
 *   bound. So at every examination, and at every query in between, the
 *   true age is at most T_Omega and the read is exact.
 *
 * The limit moves within a block (it drops by one at b = R when R > 0 and
 * jumps back up when T_+ advances), but the bound uses only
 * ceil((w - b) / B) <= ceil(w / B), the limit's largest value, so the
 * paper's rate s = ceil(m / (B (P + 1))) is enough at every b; no extra
 * sweeping is needed. Expiry is also monotone: a timer expired at
 * b = B - 1 (age >= ceil((w + 1) / B)) is expired after the advance (age
 * + 1 >= ceil(w / B) + 1), so a timer never turns fresh again while the
 * invariant holds. The same inequality is what ebb_timing_load checks for
 * every unmarked timer of a snapshot (its age plus the blocks until the
 * cursor reaches it), so a loaded filter keeps the guarantee.
 * tests/unit/test_timing.c checks it as a property: every timer's read
 * expiry equals the expiry of its true age, after every insertion, over
 * streams of >= 10 w insertions that wrap T_+, for every shape the
 * choosers return and explicit ones (P = 0, 1, 2, several; B = 1 and
 * B > 1; w not a multiple of B).
 *
 * Worked example (the paper's Figure 5 shape): w = 6, B = 3, P = 0, m = 6,
 * k = 2, bpt = 3. T_Omega = 2 + 1 + 0 = 3, mark 4, limit = 3 (R = 0),
 * s = ceil(6 / 3) = 2 timers per insertion. Items write the timers listed;
 * the state after each block, timers t0..t5:
 *
 *   item      timers   T_+ b after   sweep      t0 t1 t2 t3 t4 t5
 *   x1 x2 x3  01 23 45  1   0        0-5 ok     0  0  0  0  0  0
 *   x4 x5 x6  01 02 12  2   0        0-5 ok     1  1  1  0  0  0
 *   x7 x8 x9  01 01 01  3   0        4,5 age 3  2  2  1  0  4  4
 *
 * After x9: x3 (t4, t5) reads the mark: absent, and indeed I = 6 >= w;
 * x2 (t2, t3): t3 = 0 has age 3 = limit, expired though not yet marked;
 * x4 (t0, t1): ages 1, present (I = 5). Then x10, x11, x12 write t0, t1:
 * x11's sweep (t2, t3, at T_+ = 3, b = 2) marks t3 (age 3); x12 advances
 * T_+ to 3 + 1 mod 4 = 0 and sweeps t4, t5. Without the sweep t3 = 0 would
 * now read age 0, fresh: that is the wrap the padding and the cursor
 * prevent. t2 = 1 now has age 3 and is marked by x14's sweep, at age 3
 * again (T_+ still 0): within T_Omega, as the bound says.
 *
 * The test timing_figure5_trace replays this table.
 *
 * Evidence for the inference (ebb_timing_observe_hash, timing_observe in
 * timing_internal.h, which ebb_timing_infer_hash reads too): the k
 * timers' ages, folded by selects into the oldest (ages are random: a
 * branch per timer mispredicted about every other one and serialised the
 * loads), then one pass of compares with no data-dependent branch that
 * drops repeated positions (an offset counts unless an earlier one equals
 * it) and counts r (distinct positions) and c, the distinct timers at the
 * oldest age lambda, or, when one has expired, the expired timers (lambda
 * is then 0). The inference's read stops at the first expired timer, as
 * the standard query does: its answer to expired evidence needs no count.
 *
 * Speed
 * -----
 * An insertion is one hash, k multiply-highs and k timer writes (no read),
 * s timer reads (sequential: the cursor's words) and the writes of the
 * expired ones; a query is k reads with an early exit. Nothing is divided
 * at run time, nothing allocated. Creation and clear write the mark into
 * every timer by copying one 64-timer pattern (bpt words) over the array.
 *
 * Measured numbers
 * ----------------
 * `make bench` at f58f216 (build-bench/bench/ebb-bench, Release,
 * -march=native, a 2-vCPU EPYC VM, the machine idle, medians of 3),
 * w = 1e6, fp 1%, the BTBF at the APBF default's memory
 * (ebb_timing_choose: k = 4, bpt 3, B = 500000, P = 3, 2.46 MB), 16-byte
 * keys (hashing 4.03 ns included), queries half present, ns per call:
 *   add one call 51.62, batch 55.83; contains one call 32.70, batch
 *   26.38; ebb_timing_infer (inference.c) 58.19.
 * The analytic rate against simulation: docs/timing.md.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/slice.h"
#include "timing/model.h"
#include "timing/timing_internal.h"

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

void ebb_timing_model_canonical(const ebb_timing_model *in,
                                ebb_timing_model *out)
{
    memset(out, 0, sizeof *out);
    out->kind = in->kind;
    if (in->kind == EBB_TIMING_MODEL_UNIFORM ||
        in->kind == EBB_TIMING_MODEL_ZIPF)
        out->universe = in->universe;
    if (in->kind == EBB_TIMING_MODEL_TABLE) {
        uint32_t n = in->points;
        out->default_prior = in->default_prior;
        out->points = n;
        for (uint32_t i = 0; i < n && i < EBB_TIMING_MAX_TABLE; i++) {
            out->j[i] = in->j[i];
            out->d[i] = in->d[i];
        }
    }
}

/* Every timer = the mark. The pattern of 64 timers spans exactly bpt
 * words, so the array is that pattern repeated; the bits past m bpt are
 * cleared afterwards. */
static void fill_marks(ebb_timing *f)
{
    ebb_cells *c = &f->timers;
    uint32_t width = c->width;
    uint64_t pattern[EBB_TIMING_MAX_TIMER_BITS];
    ebb_cells unit = {pattern, 64, width, width, c->max};
    memset(pattern, 0, sizeof pattern);
    for (uint64_t i = 0; i < 64; i++)
        ebb_cells_set(&unit, i, (uint32_t)f->mark);
    for (uint64_t w = 0; w < c->word_count; w += width) {
        uint64_t n = c->word_count - w < width ? c->word_count - w : width;
        memcpy(c->words + w, pattern, (size_t)n * sizeof(uint64_t));
    }
    c->words[c->word_count - 1] &= ~ebb_bits_tail_mask(c->count * width);
}

void ebb_timing_set_clock(ebb_timing *f, uint64_t current, uint64_t in_block)
{
    f->current = current;
    f->in_block = in_block;
    f->limit = f->limit_base + (in_block < f->remainder);
}

ebb_status ebb_timing_new(const ebb_timing_params *params,
                          const ebb_timing_model *model, uint64_t seed,
                          ebb_timing **out)
{
    ebb_timing *f = ebb_mem_alloc(sizeof *f);
    if (f == NULL)
        return EBB_ENOMEM;
    memset(f, 0, sizeof *f);
    ebb_status st = ebb_cells_init(&f->timers, params->timers,
                                   params->timer_bits);
    if (st != EBB_OK) {
        ebb_mem_free(f);
        return st;
    }
    f->params = *params;
    f->k = params->k;
    f->seed = seed;
    f->block = params->block;
    f->t_omega = ebb_timing_t_omega(params);
    f->mark = f->t_omega + 1u;
    f->limit_base = params->window / params->block + 1u;
    f->remainder = params->window % params->block;
    f->sweep = ebb_timing_sweep_rate(params);
    f->prefetch = ebb_add_prefetch_pays(ebb_cells_bytes(&f->timers));
    ebb_timing_model_canonical(model, &f->model);
    ebb_timing_cache_init(&f->cache, &f->params, &f->model);
    ebb_timing_set_clock(f, 0, 0);
    fill_marks(f);
    *out = f;
    return EBB_OK;
}

static const ebb_timing_model distinct_model = {
    .kind = EBB_TIMING_MODEL_DISTINCT};

ebb_status ebb_timing_create(const ebb_timing_params *params,
                             const ebb_timing_model *model, uint64_t seed,
                             ebb_timing **out)
{
    if (model == NULL)
        model = &distinct_model;
    if (out == NULL || ebb_timing_params_check(params) != EBB_OK ||
        !ebb_timing_model_valid(model))
        return EBB_EINVAL;
    return ebb_timing_new(params, model, seed, out);
}

void ebb_timing_destroy(ebb_timing *filter)
{
    if (filter == NULL)
        return;
    ebb_cells_free(&filter->timers);
    ebb_mem_free(filter);
}

void ebb_timing_clear(ebb_timing *f)
{
    fill_marks(f);
    ebb_timing_set_clock(f, 0, 0);
    f->cursor = 0;
    f->insertions = 0;
    f->swept = 0;
}

const ebb_timing_params *ebb_timing_get_params(const ebb_timing *f)
{
    return &f->params;
}

const ebb_timing_model *ebb_timing_get_model(const ebb_timing *f)
{
    return &f->model;
}

ebb_status ebb_timing_set_model(ebb_timing *f, const ebb_timing_model *model)
{
    if (model == NULL || !ebb_timing_model_valid(model))
        return EBB_EINVAL;
    ebb_timing_model_canonical(model, &f->model);
    ebb_timing_cache_init(&f->cache, &f->params, &f->model);
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Items                                                                    */
/* ------------------------------------------------------------------------ */

void ebb_timing_add_hash(ebb_timing *f, ebb_hash128 hash)
{
    uint64_t bits[EBB_TIMING_MAX_K];
    timing_bits(f, hash, bits);
    timing_insert_at(f, bits);
}

bool ebb_timing_contains_hash(const ebb_timing *f, ebb_hash128 hash)
{
    for (uint32_t j = 0; j < f->k; j++)
        if (!timing_live(f, ebb_cells_read_(&f->timers,
                                            timing_bit(f, hash, j))))
            return false;
    return true;
}

void ebb_timing_add(ebb_timing *f, const void *key, size_t len)
{
    ebb_timing_add_hash(f, ebb_hash_inline(key, len, f->seed));
}

bool ebb_timing_contains(const ebb_timing *f, const void *key, size_t len)
{
    return ebb_timing_contains_hash(f, ebb_hash_inline(key, len, f->seed));
}

/* ------------------------------------------------------------------------ */
/* Evidence                                                                 */
/* ------------------------------------------------------------------------ */

void ebb_timing_observe_hash(const ebb_timing *f, ebb_hash128 hash,
                             ebb_timing_evidence *out)
{
    timing_observe(f, hash, false, out);
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

static uint64_t count_live(const ebb_timing *f)
{
    uint64_t live = 0;
    uint32_t width = f->timers.width;
    for (uint64_t i = 0, bit = 0; i < f->timers.count; i++, bit += width)
        live += timing_live(f, ebb_cells_read_(&f->timers, bit));
    return live;
}

size_t ebb_timing_memory(const ebb_timing *f)
{
    return sizeof *f + ebb_cells_bytes(&f->timers);
}

void ebb_timing_get_stats(const ebb_timing *f, ebb_timing_stats *out)
{
    *out = (ebb_timing_stats){
        .insertions = f->insertions,
        .current = f->current,
        .in_block = f->in_block,
        .live_timers = count_live(f),
        .swept = f->swept,
        .memory_bytes = ebb_timing_memory(f),
    };
}
