/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot.c: stable filter snapshots (family 4 of docs/format.md).
 *
 * Parameter block (128 bytes, little-endian):
 *    0 cells m u64        8 cell bits d u32   12 k u32
 *   16 p u32             20 variant u32      24 draw u32
 *   28 policy u32        32 low (IEEE-754 binary64 bits) u64
 *   40 high u64          48 threshold u64
 *   56 insertions, 64 clamped, 72 refused, 80 decrements, 88 h_gave_up
 *      (u64 each)
 *   96 generator state: four u64 (xoshiro256** s[0..3], not all zero)
 * Payload: ceil(m d / 64) words of the cells (src/core/cells.h), bits past
 * m d clear. The hash seed is the frame's.
 */
#include <string.h>

#include "core/codec.h"
#include "stable/stable_internal.h"

#define STABLE_PARAM_BYTES 128u

size_t ebb_stable_snapshot_size(const ebb_stable *f)
{
    return ebb_frame_size(STABLE_PARAM_BYTES, ebb_cells_bytes(&f->cells));
}

static void put_fields(ebb_writer *w, const void *filter)
{
    const ebb_stable *f = filter;
    const ebb_stable_params *p = &f->params;
    ebb_put_u64(w, p->cells);
    ebb_put_u32(w, p->cell_bits);
    ebb_put_u32(w, p->k);
    ebb_put_u32(w, p->p);
    ebb_put_u32(w, (uint32_t)p->variant);
    ebb_put_u32(w, (uint32_t)p->draw);
    ebb_put_u32(w, (uint32_t)p->importance.policy);
    ebb_put_u64(w, ebb_double_bits(p->importance.low));
    ebb_put_u64(w, ebb_double_bits(p->importance.high));
    ebb_put_u64(w, ebb_double_bits(p->importance.threshold));
    ebb_put_u64(w, f->insertions);
    ebb_put_u64(w, f->clamped);
    ebb_put_u64(w, f->refused);
    ebb_put_u64(w, f->decrements);
    ebb_put_u64(w, f->h_gave_up);
    ebb_rng_put(w, &f->rng);
    ebb_cells_put(w, &f->cells);
}

static ebb_frame_head head_of(const ebb_stable *f)
{
    ebb_frame_head head = {EBB_FAMILY_STABLE, STABLE_PARAM_BYTES,
                           ebb_stable_snapshot_size(f), f->seed};
    return head;
}

ebb_status ebb_stable_save(const ebb_stable *f, void *buf, size_t capacity,
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

ebb_status ebb_stable_save_to(const ebb_stable *f, ebb_save_sink sink,
                              void *user)
{
    if (f == NULL || sink == NULL)
        return EBB_EINVAL;
    ebb_frame_head head = head_of(f);
    return ebb_frame_stream(&head, put_fields, f, sink, user);
}

/* The parameter block, read and checked before anything is allocated. */
typedef struct stable_header {
    ebb_stable_params params;
    uint64_t insertions, clamped, refused, decrements, h_gave_up;
    ebb_rng rng;
} stable_header;

static bool read_header(ebb_reader *r, stable_header *h)
{
    uint32_t variant, draw, policy;
    uint64_t low, high, threshold;
    ebb_stable_params *p = &h->params;
    if (!ebb_get_u64(r, &p->cells) || !ebb_get_u32(r, &p->cell_bits) ||
        !ebb_get_u32(r, &p->k) || !ebb_get_u32(r, &p->p) ||
        !ebb_get_u32(r, &variant) || !ebb_get_u32(r, &draw) ||
        !ebb_get_u32(r, &policy) || !ebb_get_u64(r, &low) ||
        !ebb_get_u64(r, &high) || !ebb_get_u64(r, &threshold) ||
        !ebb_get_u64(r, &h->insertions) || !ebb_get_u64(r, &h->clamped) ||
        !ebb_get_u64(r, &h->refused) || !ebb_get_u64(r, &h->decrements) ||
        !ebb_get_u64(r, &h->h_gave_up) || !ebb_rng_get(r, &h->rng))
        return false;
    /* Enumerations are checked as integers before they become enums. */
    if (variant > EBB_STABLE_IBF_H || draw > EBB_STABLE_DRAW_CONSECUTIVE ||
        policy > EBB_STABLE_REFUSE)
        return false;
    p->variant = (ebb_stable_variant)variant;
    p->draw = (ebb_stable_draw)draw;
    p->importance.policy = (ebb_stable_range_policy)policy;
    p->importance.low = ebb_bits_double(low);
    p->importance.high = ebb_bits_double(high);
    p->importance.threshold = ebb_bits_double(threshold);
    return true;
}

/* a * b, saturating (the counters saturate, so their bounds do too). */
static uint64_t saturating_mul(uint64_t a, uint64_t b)
{
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* What a filter's counters can be after `insertions` insertions: each
 * makes P decrement attempts (IBF_H: each either decrements or is given
 * up), a clamp is counted only for an inserted item, PLAIN never clamps. */
static bool counters_valid(const stable_header *h)
{
    const ebb_stable_params *p = &h->params;
    uint64_t attempts = saturating_mul(h->insertions, p->p);
    if (h->clamped > h->insertions)
        return false;
    if (p->variant == EBB_STABLE_PLAIN && h->clamped != 0)
        return false;
    if (p->variant != EBB_STABLE_IBF_H)
        return h->h_gave_up == 0 && h->decrements <= attempts;
    return ebb_saturating_add(h->decrements, h->h_gave_up) <= attempts;
}

static bool header_valid(const stable_header *h, size_t payload_len)
{
    if (ebb_stable_params_check(&h->params) != EBB_OK ||
        !counters_valid(h))
        return false;
    uint64_t bytes = ebb_stable_cell_bytes(h->params.cells,
                                           h->params.cell_bits);
    return bytes != 0 && bytes == (uint64_t)payload_len;
}

/* The cells' words in the input: bits past m d clear, and all zero when
 * nothing was ever inserted (a fresh or cleared filter). Checked before
 * anything is allocated. */
static bool cells_plausible(ebb_reader payload, const stable_header *h)
{
    uint64_t bits = h->params.cells * h->params.cell_bits;
    size_t words = ebb_reader_left(&payload) / 8u;
    uint64_t last = 0;
    ebb_reader at = payload;
    at.at += (words - 1u) * 8u;
    if (!ebb_get_u64(&at, &last) || (last & ebb_bits_tail_mask(bits)) != 0)
        return false;
    if (h->insertions != 0)
        return true;
    for (size_t i = 0; i < ebb_reader_left(&payload); i++)
        if (payload.at[i] != 0)
            return false;
    return true;
}

ebb_status ebb_stable_load(const void *buf, size_t len, ebb_stable **out)
{
    if (out == NULL)
        return EBB_EINVAL;
    ebb_frame frame;
    ebb_status st = ebb_frame_open(buf, len, EBB_FAMILY_STABLE,
                                   STABLE_PARAM_BYTES, &frame);
    if (st != EBB_OK)
        return st;
    stable_header h;
    if (!read_header(&frame.params, &h) ||
        !header_valid(&h, ebb_reader_left(&frame.payload)) ||
        !cells_plausible(frame.payload, &h))
        return EBB_ECORRUPT;
    ebb_stable *f;
    if ((st = ebb_stable_new(&h.params, frame.seed, &f)) != EBB_OK)
        return st;
    if (!ebb_cells_get_words(&frame.payload, &f->cells)) {
        ebb_stable_destroy(f); /* not reached: checked above */
        return EBB_ECORRUPT;
    }
    /* Not saved: the format predates it, and the cells determine it. */
    if (h.params.p == 0)
        f->filled = f->cells.count - ebb_cells_count_zero(&f->cells);
    f->insertions = h.insertions;
    f->clamped = h.clamped;
    f->refused = h.refused;
    f->decrements = h.decrements;
    f->h_gave_up = h.h_gave_up;
    f->rng = h.rng;
    *out = f;
    return EBB_OK;
}
