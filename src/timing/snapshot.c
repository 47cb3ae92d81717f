/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot.c: timing filter snapshots (family 5 of docs/format.md).
 *
 * Parameter block (1128 bytes, little-endian):
 *    0 window w u64       8 timers m u64      16 k u32     20 bpt u32
 *   24 block B u64       32 padding P u64
 *   40 T_+ u64           48 b u64            56 cursor u64
 *   64 insertions u64    72 swept u64
 *   80 model kind u32    84 table points u32 88 universe u64
 *   96 default prior (IEEE-754 binary64 bits) u64
 *  104 j[0..63] u64     616 d[0..63] binary64 bits
 *   (fields the model's kind does not use are 0)
 * Payload: ceil(m bpt / 64) words of the timers (src/core/cells.h), bits
 * past m bpt clear. The hash seed is the frame's.
 *
 * Everything a load accepts is a state the filter could be in: the shape
 * and model valid; T_+ <= T_Omega, b < B, cursor < m; b, T_+ and the
 * cursor what the insertion count implies (b = n mod B, T_+ = floor(n/B)
 * mod T_Omega + 1, cursor = n s mod m; not checked once n saturated);
 * swept <= n s; every timer <= the mark, all the mark when n = 0; and
 * every unmarked timer within the sweep invariant of timing.c's essay (its
 * age plus the blocks until the cursor reaches it at most T_Omega), so
 * that no timestamp of a loaded filter can read fresh after a wrap. All of
 * it is checked on the input bytes before anything is allocated.
 */
#include <string.h>

#include "core/codec.h"
#include "timing/model.h"
#include "timing/timing_internal.h"

#define TIMING_PARAM_BYTES 1128u

size_t ebb_timing_snapshot_size(const ebb_timing *f)
{
    return ebb_frame_size(TIMING_PARAM_BYTES, ebb_cells_bytes(&f->timers));
}

static void put_model(ebb_writer *w, const ebb_timing_model *model)
{
    ebb_put_u32(w, (uint32_t)model->kind);
    ebb_put_u32(w, model->points);
    ebb_put_u64(w, model->universe);
    ebb_put_u64(w, ebb_double_bits(model->default_prior));
    for (uint32_t i = 0; i < EBB_TIMING_MAX_TABLE; i++)
        ebb_put_u64(w, model->j[i]);
    for (uint32_t i = 0; i < EBB_TIMING_MAX_TABLE; i++)
        ebb_put_u64(w, ebb_double_bits(model->d[i]));
}

static void put_fields(ebb_writer *w, const void *filter)
{
    const ebb_timing *f = filter;
    const ebb_timing_params *p = &f->params;
    ebb_put_u64(w, p->window);
    ebb_put_u64(w, p->timers);
    ebb_put_u32(w, p->k);
    ebb_put_u32(w, p->timer_bits);
    ebb_put_u64(w, p->block);
    ebb_put_u64(w, p->padding);
    ebb_put_u64(w, f->current);
    ebb_put_u64(w, f->in_block);
    ebb_put_u64(w, f->cursor);
    ebb_put_u64(w, f->insertions);
    ebb_put_u64(w, f->swept);
    put_model(w, &f->model);
    ebb_cells_put(w, &f->timers);
}

static ebb_frame_head head_of(const ebb_timing *f)
{
    ebb_frame_head head = {EBB_FAMILY_TIMING, TIMING_PARAM_BYTES,
                           ebb_timing_snapshot_size(f), f->seed};
    return head;
}

ebb_status ebb_timing_save(const ebb_timing *f, void *buf, size_t capacity,
                           size_t *written)
{
    ebb_frame_head head = head_of(f);
    if (buf == NULL || capacity < head.total) {
        if (written != NULL)
            *written = head.total;
        return EBB_EBUFSIZE;
    }
    ebb_frame_save(&head, put_fields, f, buf);
    if (written != NULL)
        *written = head.total;
    return EBB_OK;
}

ebb_status ebb_timing_save_to(const ebb_timing *f, ebb_save_sink sink,
                              void *user)
{
    if (f == NULL || sink == NULL)
        return EBB_EINVAL;
    ebb_frame_head head = head_of(f);
    return ebb_frame_stream(&head, put_fields, f, sink, user);
}

/* ---- Reading and checking the parameter block ---------------------------- */

typedef struct timing_header {
    ebb_timing_params params;
    uint64_t current, in_block, cursor, insertions, swept;
    ebb_timing_model model;
    uint64_t t_omega, sweep; /* derived once the params are valid */
} timing_header;

static bool read_model(ebb_reader *r, ebb_timing_model *model)
{
    uint32_t kind;
    uint64_t prior;
    memset(model, 0, sizeof *model);
    if (!ebb_get_u32(r, &kind) || !ebb_get_u32(r, &model->points) ||
        !ebb_get_u64(r, &model->universe) || !ebb_get_u64(r, &prior))
        return false;
    for (uint32_t i = 0; i < EBB_TIMING_MAX_TABLE; i++)
        if (!ebb_get_u64(r, &model->j[i]))
            return false;
    for (uint32_t i = 0; i < EBB_TIMING_MAX_TABLE; i++) {
        uint64_t bits;
        if (!ebb_get_u64(r, &bits))
            return false;
        model->d[i] = ebb_bits_double(bits);
    }
    /* The kind is checked as an integer before it becomes an enum. */
    if (kind > EBB_TIMING_MODEL_TABLE)
        return false;
    model->kind = (ebb_timing_model_kind)kind;
    model->default_prior = ebb_bits_double(prior);
    return true;
}

static bool read_header(ebb_reader *r, timing_header *h)
{
    ebb_timing_params *p = &h->params;
    return ebb_get_u64(r, &p->window) && ebb_get_u64(r, &p->timers) &&
           ebb_get_u32(r, &p->k) && ebb_get_u32(r, &p->timer_bits) &&
           ebb_get_u64(r, &p->block) && ebb_get_u64(r, &p->padding) &&
           ebb_get_u64(r, &h->current) && ebb_get_u64(r, &h->in_block) &&
           ebb_get_u64(r, &h->cursor) && ebb_get_u64(r, &h->insertions) &&
           ebb_get_u64(r, &h->swept) && read_model(r, &h->model);
}

/* The model is valid and canonical: one encoding per state. */
static bool model_acceptable(const ebb_timing_model *model)
{
    ebb_timing_model canonical;
    if (!ebb_timing_model_valid(model))
        return false;
    ebb_timing_model_canonical(model, &canonical);
    return memcmp(&canonical, model, sizeof canonical) == 0;
}

/* a b mod m for a, b < m <= 2^40 (no overflow: sums stay below 2^41). */
static uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m)
{
    uint64_t r = 0;
    while (b != 0) {
        if (b & 1u) {
            r += a;
            if (r >= m)
                r -= m;
        }
        a += a;
        if (a >= m)
            a -= m;
        b >>= 1;
    }
    return r;
}

static uint64_t saturating_mul(uint64_t a, uint64_t b)
{
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* T_+, b, the cursor and the counters as the insertion count implies. */
static bool clock_valid(const timing_header *h)
{
    const ebb_timing_params *p = &h->params;
    uint64_t n = h->insertions;
    if (h->current > h->t_omega || h->in_block >= p->block ||
        h->cursor >= p->timers)
        return false;
    if (h->swept > saturating_mul(n, h->sweep))
        return false;
    if (n == UINT64_MAX)
        return true; /* saturated: the count no longer says where */
    uint64_t m = p->timers;
    return h->in_block == n % p->block &&
           h->current == (n / p->block) % (h->t_omega + 1u) &&
           h->cursor == mul_mod(n % m, h->sweep % m, m);
}

static bool header_valid(timing_header *h, size_t payload_len)
{
    if (ebb_timing_params_check(&h->params) != EBB_OK ||
        !model_acceptable(&h->model))
        return false;
    h->t_omega = ebb_timing_t_omega(&h->params);
    h->sweep = ebb_timing_sweep_rate(&h->params);
    if (!clock_valid(h))
        return false;
    uint64_t words = ebb_cells_word_count(h->params.timers,
                                          h->params.timer_bits);
    return words != 0 && words * 8u == (uint64_t)payload_len;
}

/* ---- Checking the timers in the input ------------------------------------ */

static uint64_t word_at(const uint8_t *bytes, uint64_t word)
{
    const uint8_t *at = bytes + word * 8u;
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)at[i] << (8u * i);
    return v;
}

/* Timer i of the payload (as ebb_cells_read_ on the words). */
static uint64_t timer_at(const uint8_t *bytes, uint64_t i, uint32_t width)
{
    uint64_t bit = i * width;
    uint64_t word = bit >> 6;
    unsigned off = (unsigned)(bit & 63u);
    uint64_t v = word_at(bytes, word) >> off;
    if (off + width > 64u)
        v |= word_at(bytes, word + 1u) << (64u - off);
    return v & ((UINT64_C(1) << width) - 1u);
}

/* An unmarked timer at index i with age `age`: will the sweep reach it
 * before its age passes T_Omega? It is examined by the d-th insertion from
 * now, d = floor(((i - cursor) mod m) / s) + 1, under b + d insertions of
 * the current block's clock. */
static bool reached_in_time(const timing_header *h, uint64_t i, uint64_t age)
{
    uint64_t m = h->params.timers;
    uint64_t ahead = i >= h->cursor ? i - h->cursor : i + m - h->cursor;
    uint64_t d = ahead / h->sweep + 1u;
    return age + (h->in_block + d) / h->params.block <= h->t_omega;
}

static bool timers_valid(ebb_reader payload, const timing_header *h)
{
    uint64_t m = h->params.timers;
    uint32_t width = h->params.timer_bits;
    uint64_t mark = h->t_omega + 1u;
    uint64_t words = ebb_reader_left(&payload) / 8u;
    if ((word_at(payload.at, words - 1u) &
         ebb_bits_tail_mask(m * width)) != 0)
        return false;
    for (uint64_t i = 0; i < m; i++) {
        uint64_t v = timer_at(payload.at, i, width);
        if (v == mark)
            continue;
        if (v > mark || h->insertions == 0)
            return false;
        uint64_t age = v <= h->current ? h->current - v
                                       : h->current + mark - v;
        if (!reached_in_time(h, i, age))
            return false;
    }
    return true;
}

ebb_status ebb_timing_load(const void *buf, size_t len, ebb_timing **out)
{
    if (out == NULL)
        return EBB_EINVAL;
    ebb_frame frame;
    ebb_status st = ebb_frame_open(buf, len, EBB_FAMILY_TIMING,
                                   TIMING_PARAM_BYTES, &frame);
    if (st != EBB_OK)
        return st;
    timing_header h;
    if (!read_header(&frame.params, &h) ||
        !header_valid(&h, ebb_reader_left(&frame.payload)) ||
        !timers_valid(frame.payload, &h))
        return EBB_ECORRUPT;
    ebb_timing *f;
    if ((st = ebb_timing_new(&h.params, &h.model, frame.seed, &f)) != EBB_OK)
        return st;
    if (!ebb_cells_get_words(&frame.payload, &f->timers)) {
        ebb_timing_destroy(f); /* not reached: checked above */
        return EBB_ECORRUPT;
    }
    ebb_timing_set_clock(f, h.current, h.in_block);
    f->cursor = h.cursor;
    f->insertions = h.insertions;
    f->swept = h.swept;
    *out = f;
    return EBB_OK;
}
