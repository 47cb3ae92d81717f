/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot.c: APBF snapshots (families 1 and 2 of docs/format.md; the
 * bit-sliced family 7 is in sliced.c).
 *
 * Parameter block (56 bytes, little-endian; 64 for the blocked family 2):
 *   0 k (u32)  4 l (u32)  8 slice bits (u64)  16 generation (u64)
 *   24 insertions (u64)  32 generations (u64)  40 in generation (u64)
 *   48 base (u32)  52 reserved (u32, 0)
 *   family 2 only: 56 block bits (u32)  60 bits per block (u32)
 * Payload: the k + l slices in buffer order, ceil(m / 64) words each.
 */
#include <string.h>

#include "apbf/apbf_internal.h"
#include "apbf/sliced.h"
#include "core/bits.h"
#include "core/codec.h"

#define APBF_PARAM_BYTES 56u
#define APBBF_PARAM_BYTES 64u

static uint16_t family_of(const ebb_apbf *f)
{
    return f->block_bits == 0 ? EBB_FAMILY_APBF : EBB_FAMILY_APBBF;
}

static uint32_t param_bytes(uint16_t family)
{
    return family == EBB_FAMILY_APBF ? APBF_PARAM_BYTES : APBBF_PARAM_BYTES;
}

static size_t payload_bytes(const ebb_apbf *f)
{
    return (size_t)(f->slices * f->slice_words) * 8u;
}

size_t ebb_apbf_snapshot_size(const ebb_apbf *f)
{
    if (f->layout == EBB_APBF_LAYOUT_SLICED)
        return ebb_apbf_sliced_snapshot_size(f);
    return ebb_frame_size(param_bytes(family_of(f)), payload_bytes(f));
}

/* The fields after the frame's head: the shape and the counters every
 * layout has, then the layout's own (the bit-sliced layout's in
 * sliced.c). */
static void put_fields(ebb_writer *w, const void *filter)
{
    const ebb_apbf *f = filter;
    ebb_put_u32(w, f->k);
    ebb_put_u32(w, f->l);
    ebb_put_u64(w, f->slice_bits);
    ebb_put_u64(w, f->generation);
    ebb_put_u64(w, f->insertions);
    ebb_put_u64(w, f->generations);
    ebb_put_u64(w, f->in_generation);
    ebb_put_u32(w, f->base);
    if (f->layout == EBB_APBF_LAYOUT_SLICED) {
        ebb_apbf_sliced_put_fields(w, f);
        return;
    }
    ebb_put_u32(w, 0);
    if (family_of(f) == EBB_FAMILY_APBBF) {
        ebb_put_u32(w, f->block_bits);
        ebb_put_u32(w, f->block_hashes);
    }
    ebb_put_words(w, f->bits, (size_t)(f->slices * f->slice_words));
}

static ebb_frame_head head_of(const ebb_apbf *f)
{
    if (f->layout == EBB_APBF_LAYOUT_SLICED)
        return ebb_apbf_sliced_head(f);
    uint16_t family = family_of(f);
    ebb_frame_head head = {family, param_bytes(family),
                           ebb_apbf_snapshot_size(f), f->seed};
    return head;
}

ebb_status ebb_apbf_save(const ebb_apbf *f, void *buf, size_t capacity,
                         size_t *written)
{
    ebb_frame_head head = head_of(f);
    if (buf == NULL || capacity < head.total)
        return EBB_EBUFSIZE;
    ebb_frame_save(&head, put_fields, f, buf);
    if (written != NULL)
        *written = head.total;
    return EBB_OK;
}

ebb_status ebb_apbf_save_to(const ebb_apbf *f, ebb_save_sink sink,
                            void *user)
{
    if (f == NULL || sink == NULL)
        return EBB_EINVAL;
    ebb_frame_head head = head_of(f);
    return ebb_frame_stream(&head, put_fields, f, sink, user);
}

/* The fields of the parameter block, before anything is allocated. */
typedef struct apbf_header {
    ebb_apbf_params params;
    uint64_t insertions, generations, in_generation;
    uint32_t base, reserved;
} apbf_header;

static bool read_header(ebb_reader *r, uint16_t family, apbf_header *h)
{
    h->params.block_bits = 0;
    h->params.block_hashes = 0;
    h->params.layout = EBB_APBF_LAYOUT_RING;
    h->params.cell_bits = 0;
    if (family == EBB_FAMILY_APBBF) {
        ebb_reader tail = *r;
        tail.at += APBF_PARAM_BYTES;
        if (!ebb_get_u32(&tail, &h->params.block_bits) ||
            !ebb_get_u32(&tail, &h->params.block_hashes) ||
            h->params.block_bits == 0)
            return false;
    }
    return ebb_get_u32(r, &h->params.k) && ebb_get_u32(r, &h->params.l) &&
           ebb_get_u64(r, &h->params.slice_bits) &&
           ebb_get_u64(r, &h->params.generation) &&
           ebb_get_u64(r, &h->insertions) && ebb_get_u64(r, &h->generations) &&
           ebb_get_u64(r, &h->in_generation) && ebb_get_u32(r, &h->base) &&
           ebb_get_u32(r, &h->reserved);
}

static ebb_status check_header(apbf_header *h, size_t payload_len)
{
    ebb_apbf_params *p = &h->params;
    if (p->l == 0 || p->generation > UINT64_MAX / p->l)
        return EBB_ECORRUPT;
    p->window = (uint64_t)p->l * p->generation;
    size_t bit_bytes;
    if (ebb_apbf_shape_bytes(p, &bit_bytes) != EBB_OK)
        return EBB_ECORRUPT;
    if (h->reserved != 0 || h->base >= p->k + p->l ||
        h->in_generation > p->generation ||
        (h->in_generation == 0) != (h->insertions == 0) ||
        h->insertions < h->in_generation || h->generations > h->insertions ||
        payload_len != bit_bytes)
        return EBB_ECORRUPT;
    return EBB_OK;
}

/* Every slice's bits beyond slice_bits must be clear: a set one is a bit no
 * key can reach, so the snapshot was not written by us. Checked in the
 * input, before anything is allocated. */
static bool tails_clear(ebb_reader payload, const ebb_apbf_params *p)
{
    uint64_t mask = ebb_bits_tail_mask(p->slice_bits);
    uint64_t words = ebb_bits_words(p->slice_bits);
    for (uint32_t s = 0; mask != 0 && s < p->k + p->l; s++) {
        ebb_reader at = payload;
        uint64_t last;
        at.at += (size_t)(((uint64_t)s + 1) * words - 1) * 8u;
        if (!ebb_get_u64(&at, &last) || (last & mask) != 0)
            return false;
    }
    return true;
}

ebb_status ebb_apbf_load(const void *buf, size_t len, ebb_apbf **out)
{
    if (out == NULL)
        return EBB_EINVAL;
    ebb_frame frame;
    uint16_t family = EBB_FAMILY_APBF;
    ebb_status st =
        ebb_frame_open(buf, len, family, param_bytes(family), &frame);
    if (st == EBB_EFAMILY) {
        family = EBB_FAMILY_APBBF;
        st = ebb_frame_open(buf, len, family, param_bytes(family), &frame);
    }
    if (st == EBB_EFAMILY)
        return ebb_apbf_sliced_load(buf, len, out);
    if (st != EBB_OK)
        return st;
    apbf_header h;
    if (!read_header(&frame.params, family, &h))
        return EBB_ECORRUPT;
    st = check_header(&h, ebb_reader_left(&frame.payload));
    if (st != EBB_OK)
        return st;
    if (!tails_clear(frame.payload, &h.params))
        return EBB_ECORRUPT;

    ebb_apbf *f;
    st = ebb_apbf_create(&h.params, frame.seed, &f);
    if (st != EBB_OK)
        return st;
    ebb_get_words(&frame.payload, f->bits, (size_t)(f->slices * f->slice_words));
    f->insertions = h.insertions;
    f->generations = h.generations;
    f->in_generation = h.in_generation;
    f->base = h.base;
    *out = f;
    return EBB_OK;
}
