/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot.c: time-limited filter snapshots (family 3 of docs/format.md).
 *
 * Parameter block (136 bytes, little-endian):
 *    0 k u32            4 l u32            8 span ns i64
 *   16 max memory u64  24 policy u32      28 slices u32
 *   32 initial capacity u64               40 left u64
 *   48 since rate base u64                56 rate base ns i64
 *   64 latest ns i64   72 ring slots u32  76 reserved u32 (0)
 *   80 insertions, 88 shifts, 96 evicted, 104 refused, 112 clamped,
 *  120 resets (u64 each)                  128 estimate u64
 *  136 generation start ns i64
 * Payload, for each slice from s_0: bits u64, capacity u64, inserted u64,
 * last ns i64, hash index u32, reserved u32 (0), then ceil(bits / 64)
 * words. Times are two's complement; INT64_MIN means "never".
 */
#include <math.h>

#include "core/agequery.h"
#include "core/codec.h"
#include "tlbf/tlbf_internal.h"

#define TLBF_PARAM_BYTES 144u
#define SLICE_HEADER_BYTES 40u

static size_t payload_bytes(const ebb_tlbf *f)
{
    size_t total = 0;
    for (uint32_t i = 0; i < f->count; i++)
        total += SLICE_HEADER_BYTES +
                 (size_t)ebb_bits_words(ebb_tlbf_at(f, i)->nbits) * 8u;
    return total;
}

size_t ebb_tlbf_snapshot_size(const ebb_tlbf *f)
{
    return ebb_frame_size(TLBF_PARAM_BYTES, payload_bytes(f));
}

static void put_i64(ebb_writer *w, int64_t v)
{
    ebb_put_u64(w, (uint64_t)v);
}

static void put_fields(ebb_writer *w, const void *filter)
{
    const ebb_tlbf *f = filter;
    ebb_put_u32(w, f->k);
    ebb_put_u32(w, f->l);
    put_i64(w, f->span);
    ebb_put_u64(w, (uint64_t)f->max_memory);
    ebb_put_u32(w, (uint32_t)f->policy);
    ebb_put_u32(w, f->count);
    ebb_put_u64(w, f->initial_capacity);
    ebb_put_u64(w, f->left);
    ebb_put_u64(w, f->since_base);
    put_i64(w, f->rate_base_ns);
    put_i64(w, f->latest_ns);
    ebb_put_u32(w, f->ring_slots);
    ebb_put_u32(w, 0);
    ebb_put_u64(w, f->insertions);
    ebb_put_u64(w, f->shifts);
    ebb_put_u64(w, f->evicted);
    ebb_put_u64(w, f->refused);
    ebb_put_u64(w, f->clamped);
    ebb_put_u64(w, f->resets);
    ebb_put_u64(w, f->estimate);
    put_i64(w, f->generation_ns);
    for (uint32_t i = 0; i < f->count; i++) {
        const tlbf_slice *s = ebb_tlbf_at(f, i);
        ebb_put_u64(w, s->nbits);
        ebb_put_u64(w, s->capacity);
        ebb_put_u64(w, ebb_tlbf_inserted(f, i));
        put_i64(w, ebb_tlbf_last_ns(f, i));
        ebb_put_u32(w, s->hash_index);
        ebb_put_u32(w, 0);
        ebb_put_words(w, s->bits, (size_t)ebb_bits_words(s->nbits));
    }
}

static ebb_frame_head head_of(const ebb_tlbf *f)
{
    ebb_frame_head head = {EBB_FAMILY_TLBF, TLBF_PARAM_BYTES,
                           ebb_tlbf_snapshot_size(f), f->seed};
    return head;
}

ebb_status ebb_tlbf_save(const ebb_tlbf *f, void *buf, size_t capacity,
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

ebb_status ebb_tlbf_save_to(const ebb_tlbf *f, ebb_save_sink sink,
                            void *user)
{
    if (f == NULL || sink == NULL)
        return EBB_EINVAL;
    ebb_frame_head head = head_of(f);
    return ebb_frame_stream(&head, put_fields, f, sink, user);
}

/* The fixed part, read and checked before anything is allocated. */
typedef struct tlbf_header {
    uint32_t k, l, policy, count, slots, reserved;
    uint64_t span, max_memory, initial_capacity, left, since_base;
    uint64_t rate_base, latest;
    uint64_t counters[6];
    uint64_t estimate, generation;
} tlbf_header;

static bool read_header(ebb_reader *r, tlbf_header *h)
{
    bool ok = ebb_get_u32(r, &h->k) && ebb_get_u32(r, &h->l) &&
              ebb_get_u64(r, &h->span) && ebb_get_u64(r, &h->max_memory) &&
              ebb_get_u32(r, &h->policy) && ebb_get_u32(r, &h->count) &&
              ebb_get_u64(r, &h->initial_capacity) &&
              ebb_get_u64(r, &h->left) && ebb_get_u64(r, &h->since_base) &&
              ebb_get_u64(r, &h->rate_base) && ebb_get_u64(r, &h->latest) &&
              ebb_get_u32(r, &h->slots) && ebb_get_u32(r, &h->reserved);
    for (unsigned i = 0; ok && i < 6; i++)
        ok = ebb_get_u64(r, &h->counters[i]);
    return ok && ebb_get_u64(r, &h->estimate) &&
           ebb_get_u64(r, &h->generation);
}

static bool header_valid(const tlbf_header *h)
{
    return ebb_age_kl_valid(h->k, h->l) && (int64_t)h->span > 0 &&
           h->max_memory > 0 && h->max_memory <= SIZE_MAX &&
           (h->policy == EBB_TLBF_REFUSE || h->policy == EBB_TLBF_EVICT) &&
           h->count >= h->k && h->count <= h->k + EBB_TLBF_MAX_EXTRA &&
           h->slots >= h->count && h->slots <= 2u * (h->k + EBB_TLBF_MAX_EXTRA) &&
           h->initial_capacity >= 1 && h->reserved == 0 &&
           (int64_t)h->latest >= (int64_t)h->rate_base &&
           h->estimate >= 1 && h->estimate <= ebb_tlbf_max_estimate(h->k) &&
           (int64_t)h->generation <= (int64_t)h->latest &&
           ((int64_t)h->generation == EBB_TLBF_NEVER) ==
               ((int64_t)h->latest == EBB_TLBF_NEVER);
}

/* One slice's header, checked against its neighbour (the newer one). */
static ebb_status read_slice(ebb_reader *r, const tlbf_header *h,
                             uint32_t position, const tlbf_slice *newer,
                             tlbf_slice *out)
{
    uint64_t last;
    uint32_t reserved;
    if (!ebb_get_u64(r, &out->nbits) || !ebb_get_u64(r, &out->capacity) ||
        !ebb_get_u64(r, &out->inserted) || !ebb_get_u64(r, &last) ||
        !ebb_get_u32(r, &out->hash_index) || !ebb_get_u32(r, &reserved))
        return EBB_ECORRUPT;
    out->last_ns = (int64_t)last;
    if (reserved != 0 || out->nbits == 0 ||
        out->nbits > EBB_APBF_MAX_SLICE_BITS || out->capacity < 1 ||
        out->capacity > (uint64_t)floor((double)out->nbits * 0.69314718055994530942) ||
        out->inserted > out->capacity || out->hash_index >= h->k ||
        out->last_ns > (int64_t)h->latest ||
        (out->last_ns == EBB_TLBF_NEVER) != (out->inserted == 0))
        return EBB_ECORRUPT;
    if (newer != NULL &&
        (out->last_ns > newer->last_ns ||
         out->hash_index != (newer->hash_index + 1) % h->k))
        return EBB_ECORRUPT;
    /* Every insertion writes the k newest slices and a reset empties them
     * together, so they always share one timestamp. */
    if (newer != NULL && position < h->k && out->last_ns != newer->last_ns)
        return EBB_ECORRUPT;
    /* Slices are made with capacity >= k, and a shift's budget leaves a
     * slice at write position i room for the rest of this generation plus
     * one insertion in each of its k - 1 - i later ones. */
    if (out->capacity < h->k ||
        (position < h->k &&
         out->capacity - out->inserted < h->left + (h->k - 1u - position)))
        return EBB_ECORRUPT;
    return EBB_OK;
}

/* The footprint a writer held to max_memory. Versions before the handle
 * kept its k write descriptors (before ebb commit c6afc10) did not count
 * them, so a filter they saved at its cap loads up to k x 24 bytes over
 * it; its next shift must fit the cap again (refused or evicting as its
 * policy says). Only what no filter under its cap wrote is corrupt. */
static size_t footprint_as_written(const tlbf_header *h, size_t bits)
{
    return ebb_tlbf_footprint(0, h->slots, bits); /* k = 0: no descriptors */
}

static bool tail_clear(const tlbf_slice *s)
{
    uint64_t mask = ebb_bits_tail_mask(s->nbits);
    return (s->bits[ebb_bits_words(s->nbits) - 1] & mask) == 0;
}

static void apply_header(ebb_tlbf *f, const tlbf_header *h, uint64_t seed)
{
    f->span = (int64_t)h->span;
    f->max_memory = (size_t)h->max_memory;
    f->policy = (ebb_tlbf_policy)h->policy;
    f->seed = seed;
    f->initial_capacity = h->initial_capacity;
    f->left = h->left;
    f->since_base = h->since_base;
    f->rate_base_ns = (int64_t)h->rate_base;
    f->estimate = h->estimate;
    f->generation_ns = (int64_t)h->generation;
    f->latest_ns = (int64_t)h->latest;
    f->insertions = h->counters[0];
    f->shifts = h->counters[1];
    f->evicted = h->counters[2];
    f->refused = h->counters[3];
    f->clamped = h->counters[4];
    f->resets = h->counters[5];
}

/* Reads the slices into f; on error f keeps what it read (destroy frees). */
static ebb_status read_slices(ebb_tlbf *f, ebb_reader *r,
                              const tlbf_header *h)
{
    for (uint32_t i = 0; i < h->count; i++) {
        tlbf_slice s;
        const tlbf_slice *newer = i == 0 ? NULL : &f->ring[i - 1];
        ebb_status st = read_slice(r, h, i, newer, &s);
        if (st != EBB_OK)
            return st;
        size_t words = (size_t)ebb_bits_words(s.nbits);
        if (ebb_reader_left(r) / 8u < words)
            return EBB_ECORRUPT;
        tlbf_slice *slot = &f->ring[i];
        if ((st = ebb_tlbf_slice_alloc(slot, s.nbits, s.capacity)) != EBB_OK)
            return st;
        f->count++;
        f->bits_bytes += slot->block_bytes;
        ebb_get_words(r, slot->bits, words);
        slot->inserted = s.inserted;
        slot->last_ns = s.last_ns;
        slot->hash_index = s.hash_index;
        if (!tail_clear(slot))
            return EBB_ECORRUPT;
        if (footprint_as_written(h, f->bits_bytes) > h->max_memory)
            return EBB_ECORRUPT; /* never written by a filter under its cap */
    }
    return ebb_reader_left(r) == 0 ? EBB_OK : EBB_ECORRUPT;
}

ebb_status ebb_tlbf_load(const void *buf, size_t len, ebb_tlbf **out)
{
    if (out == NULL)
        return EBB_EINVAL;
    ebb_frame frame;
    ebb_status st = ebb_frame_open(buf, len, EBB_FAMILY_TLBF,
                                   TLBF_PARAM_BYTES, &frame);
    if (st != EBB_OK)
        return st;
    tlbf_header h;
    if (!read_header(&frame.params, &h) || !header_valid(&h))
        return EBB_ECORRUPT;
    ebb_tlbf *f;
    if ((st = ebb_tlbf_new(h.k, h.l, h.slots, &f)) != EBB_OK)
        return st;
    apply_header(f, &h, frame.seed);
    st = read_slices(f, &frame.payload, &h);
    ebb_tlbf_refresh_writes(f);
    /* The budget only shrinks as slices fill, so it never exceeds what a
     * shift would give now; 0 means the next add shifts. */
    if (st == EBB_OK && f->left > ebb_tlbf_schedule(f))
        st = EBB_ECORRUPT;
    if (st != EBB_OK) {
        ebb_tlbf_destroy(f);
        return st;
    }
    *out = f;
    return EBB_OK;
}
