/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot.c: spectral filter snapshots (family 6 of docs/format.md).
 *
 * Parameter block (160 bytes, little-endian):
 *    0 counters m u64     8 counter bits w u32   12 k u32
 *   16 method u32        20 secondary k u32 (RM, else 0)
 *   24 secondary m_s u64 32 marker kind u32      36 storage u32 (0 FIXED;
 *                                                   was reserved, 0)
 *   40 marker size u64   48 trap slots u64       56 range u64
 *   64 added, 72 removed, 80 refused removals, 88 saturations, 96 moved,
 *  104 moves refused, 112 traps set, 120 traps sprung, 128 traps full,
 *  136 net N, 144 traps used, 152 fingerprints used (u64 each)
 * Payload, in order: ceil(m w / 64) words of the primary counters;
 * ceil(m_s w / 64) words of the secondary (RM); the marker (RM): BLOOM,
 * ceil(marker size / 64) words of bits; EXACT, marker size u64
 * fingerprints (0: an empty slot); NONE, nothing; trap slots entries of
 * 24 bytes (counter u64, key hash lo u64, hi u64), an empty entry being
 * counter 2^64 - 1 and key 0. Bits past each part's cells clear. The
 * hash seed is the frame's. Compact storage (storage 1..3, issue 15)
 * replaces the words of the primary and of the secondary each by a u64
 * byte length L (a multiple of 8) and the L bytes of the string-array
 * index's image (ebb_strarray_image, documented in docs/format.md); the
 * rest is as above. A FIXED snapshot is byte for byte what it was before
 * the storage field existed.
 *
 * A load checks, on the input bytes and before it allocates anything: the
 * shape (ebb_spectral_params_check), the reserved field, statistics that
 * a filter of that method can have (nothing moved or trapped outside RM
 * and trapping RM; moves refused and fingerprints only with an exact
 * marker; moved and net at most added), the payload's length, every
 * part's tail bits, every counter, marker word and fingerprint 0 when
 * nothing was ever added, the fingerprint table as rm.c builds it
 * (fingerprints used = the non-zero slots; every fingerprint reachable
 * from its home slot by linear probing without crossing an empty slot,
 * and none twice, at most 3/4 of the slots used), and each trap entry
 * empty or naming a primary counter (< m), with traps used the number of
 * non-empty entries. The fingerprint walk is bounded by a budget linear
 * in the table (fingerprint_budget), so a forged cluster cannot make a
 * load quadratic. Compact parts: their lengths must add up to the payload
 * before anything is allocated; each image is then validated whole by
 * ebb_strarray_from_image (offsets, lengths, slack, codes), and must hold
 * the part's count of counters in the storage's code, each at most
 * 2^counter_bits - 1, all 0 when nothing was ever added.
 */
#include <string.h>

#include "core/bits.h"
#include "core/codec.h"
#include "spectral/store.h"

#define SPECTRAL_PARAM_BYTES 160u
#define SPECTRAL_TRAP_BYTES 24u
#define SPECTRAL_TRAP_EMPTY UINT64_MAX

/* Bytes of the payload after the counters (marker, traps) for params
 * (valid ones: no overflow, the traps at most 2^40 entries). */
static uint64_t rest_bytes(const ebb_spectral_params *p)
{
    uint64_t bytes = 0;
    if (p->method == EBB_SPECTRAL_RM && p->marker == EBB_SPECTRAL_MARKER_BLOOM)
        bytes += ebb_cells_word_count(p->marker_size, 1) * 8u;
    if (p->method == EBB_SPECTRAL_RM && p->marker == EBB_SPECTRAL_MARKER_EXACT)
        bytes += p->marker_size * 8u;
    return bytes + p->trap_slots * SPECTRAL_TRAP_BYTES;
}

/* Bytes of a FIXED payload (each part at most 2^40 counters of 32 bits). */
static uint64_t payload_bytes(const ebb_spectral_params *p)
{
    uint64_t bytes = ebb_cells_word_count(p->counters, p->counter_bits) * 8u;
    if (p->secondary > 0)
        bytes += ebb_cells_word_count(p->secondary, p->counter_bits) * 8u;
    return bytes + rest_bytes(p);
}

/* Compact: the parts' lengths and images, then the rest. */
static uint64_t compact_payload_bytes(const ebb_spectral *f)
{
    uint64_t bytes = rest_bytes(&f->params);
    for (unsigned part = 0; part < 2; part++) {
        if (spectral_store_count(f, (spectral_part)part) == 0)
            continue;
        size_t image;
        (void)ebb_strarray_image(&f->compact->parts[part], &image);
        bytes += 8u + image;
    }
    return bytes;
}

size_t ebb_spectral_snapshot_size(const ebb_spectral *f)
{
    uint64_t payload = f->compact != NULL ? compact_payload_bytes(f)
                                          : payload_bytes(&f->params);
    return ebb_frame_size(SPECTRAL_PARAM_BYTES, (size_t)payload);
}

static void put_compact_parts(ebb_writer *w, const ebb_spectral *f)
{
    for (unsigned part = 0; part < 2; part++) {
        if (spectral_store_count(f, (spectral_part)part) == 0)
            continue;
        size_t bytes;
        const uint64_t *image =
            ebb_strarray_image(&f->compact->parts[part], &bytes);
        ebb_put_u64(w, bytes);
        ebb_put_words(w, image, bytes / 8u);
    }
}

static void put_traps(ebb_writer *w, const ebb_spectral *f)
{
    for (uint64_t i = 0; i < f->params.trap_slots; i++) {
        const spectral_trap *t = &f->traps[i];
        bool empty = t->counter == SPECTRAL_TRAP_EMPTY;
        ebb_put_u64(w, t->counter);
        ebb_put_u64(w, empty ? 0 : t->key.lo);
        ebb_put_u64(w, empty ? 0 : t->key.hi);
    }
}

static void put_fields(ebb_writer *w, const void *filter)
{
    const ebb_spectral *f = filter;
    const ebb_spectral_params *p = &f->params;
    const ebb_spectral_stats *s = &f->stats;
    ebb_put_u64(w, p->counters);
    ebb_put_u32(w, p->counter_bits);
    ebb_put_u32(w, p->k);
    ebb_put_u32(w, (uint32_t)p->method);
    ebb_put_u32(w, p->secondary_k);
    ebb_put_u64(w, p->secondary);
    ebb_put_u32(w, (uint32_t)p->marker);
    ebb_put_u32(w, (uint32_t)p->storage);
    ebb_put_u64(w, p->marker_size);
    ebb_put_u64(w, p->trap_slots);
    ebb_put_u64(w, p->range);
    ebb_put_u64(w, s->added);
    ebb_put_u64(w, s->removed);
    ebb_put_u64(w, s->refused_removals);
    ebb_put_u64(w, s->saturations);
    ebb_put_u64(w, s->moved);
    ebb_put_u64(w, s->moves_refused);
    ebb_put_u64(w, s->traps_set);
    ebb_put_u64(w, s->traps_sprung);
    ebb_put_u64(w, s->traps_full);
    ebb_put_u64(w, f->net);
    ebb_put_u64(w, f->traps_used);
    ebb_put_u64(w, f->fingerprints_used);
    if (f->compact != NULL) {
        put_compact_parts(w, f);
    } else {
        ebb_cells_put(w, &f->primary);
        if (p->secondary > 0)
            ebb_cells_put(w, &f->secondary);
    }
    if (f->marker.words != NULL)
        ebb_cells_put(w, &f->marker);
    if (f->fingerprints != NULL)
        for (uint64_t i = 0; i < p->marker_size; i++)
            ebb_put_u64(w, f->fingerprints[i]);
    put_traps(w, f);
}

static ebb_frame_head head_of(const ebb_spectral *f)
{
    ebb_frame_head head = {EBB_FAMILY_SPECTRAL, SPECTRAL_PARAM_BYTES,
                           ebb_spectral_snapshot_size(f), f->params.seed};
    return head;
}

ebb_status ebb_spectral_save(const ebb_spectral *f, void *buf,
                             size_t capacity, size_t *written)
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

ebb_status ebb_spectral_save_to(const ebb_spectral *f, ebb_save_sink sink,
                                void *user)
{
    if (f == NULL || sink == NULL)
        return EBB_EINVAL;
    ebb_frame_head head = head_of(f);
    return ebb_frame_stream(&head, put_fields, f, sink, user);
}

/* ---- Reading and checking ------------------------------------------------ */

typedef struct spectral_header {
    ebb_spectral_params params;
    ebb_spectral_stats stats;
    uint64_t net, traps_used, fingerprints_used;
} spectral_header;

static bool read_header(ebb_reader *r, spectral_header *h)
{
    uint32_t method, marker, storage;
    ebb_spectral_params *p = &h->params;
    ebb_spectral_stats *s = &h->stats;
    memset(h, 0, sizeof *h);
    if (!ebb_get_u64(r, &p->counters) || !ebb_get_u32(r, &p->counter_bits) ||
        !ebb_get_u32(r, &p->k) || !ebb_get_u32(r, &method) ||
        !ebb_get_u32(r, &p->secondary_k) || !ebb_get_u64(r, &p->secondary) ||
        !ebb_get_u32(r, &marker) || !ebb_get_u32(r, &storage) ||
        !ebb_get_u64(r, &p->marker_size) || !ebb_get_u64(r, &p->trap_slots) ||
        !ebb_get_u64(r, &p->range) || !ebb_get_u64(r, &s->added) ||
        !ebb_get_u64(r, &s->removed) ||
        !ebb_get_u64(r, &s->refused_removals) ||
        !ebb_get_u64(r, &s->saturations) || !ebb_get_u64(r, &s->moved) ||
        !ebb_get_u64(r, &s->moves_refused) ||
        !ebb_get_u64(r, &s->traps_set) || !ebb_get_u64(r, &s->traps_sprung) ||
        !ebb_get_u64(r, &s->traps_full) || !ebb_get_u64(r, &h->net) ||
        !ebb_get_u64(r, &h->traps_used) ||
        !ebb_get_u64(r, &h->fingerprints_used))
        return false;
    /* Enums are checked as integers before they become enums. */
    if (method > EBB_SPECTRAL_RM || marker > EBB_SPECTRAL_MARKER_NONE ||
        storage > EBB_SPECTRAL_COMPACT_STEPS)
        return false;
    p->method = (ebb_spectral_method)method;
    p->marker = (ebb_spectral_marker)marker;
    p->storage = (ebb_spectral_storage)storage;
    return true;
}

/* Statistics a filter of this shape can have. */
static bool stats_valid(const spectral_header *h)
{
    const ebb_spectral_params *p = &h->params;
    const ebb_spectral_stats *s = &h->stats;
    bool rm = p->method == EBB_SPECTRAL_RM;
    bool traps = p->trap_slots > 0;
    bool exact = rm && p->marker == EBB_SPECTRAL_MARKER_EXACT;
    if (!rm && s->moved != 0)
        return false;
    if (!exact && (s->moves_refused | h->fingerprints_used) != 0)
        return false;
    if (h->fingerprints_used > p->marker_size)
        return false;
    if (!traps && (s->traps_set | s->traps_sprung | s->traps_full |
                   h->traps_used) != 0)
        return false;
    return s->moved <= s->added && h->net <= s->added &&
           h->traps_used <= p->trap_slots;
}

/* Walks one part of count cells of width bits in the payload: its last
 * word's bits past the cells clear and, when nothing was added, every
 * word 0. */
static bool part_plausible(ebb_reader *r, uint64_t count, uint32_t width,
                           bool empty)
{
    if (count == 0)
        return true;
    uint64_t words = ebb_cells_word_count(count, width);
    uint64_t word = 0;
    for (uint64_t i = 0; i < words; i++) {
        if (!ebb_get_u64(r, &word) || (empty && word != 0))
            return false;
    }
    return (word & ebb_bits_tail_mask(count * width)) == 0;
}

/* Every trap entry empty (key 0) or naming a primary counter; the
 * non-empty ones counted against traps used. */
static bool traps_plausible(ebb_reader *r, const spectral_header *h)
{
    uint64_t used = 0;
    for (uint64_t i = 0; i < h->params.trap_slots; i++) {
        uint64_t counter, lo, hi;
        if (!ebb_get_u64(r, &counter) || !ebb_get_u64(r, &lo) ||
            !ebb_get_u64(r, &hi))
            return false;
        if (counter == SPECTRAL_TRAP_EMPTY) {
            if ((lo | hi) != 0)
                return false;
        } else if (counter >= h->params.counters) {
            return false;
        } else {
            used++;
        }
    }
    return used == h->traps_used;
}

/* The little-endian u64 at index i of a table of the payload. */
static uint64_t table_get(const uint8_t *at, uint64_t i)
{
    uint64_t v = 0;
    for (unsigned b = 0; b < 8; b++)
        v |= (uint64_t)at[i * 8u + b] << (8u * b);
    return v;
}

/* Fingerprint slot i (non-zero fp) is where rm.c's insert would have put
 * it: every slot from fp's home up to i is occupied by another value.
 * Each slot walked is taken from *budget; false when it runs out. */
static bool fingerprint_placed(const uint8_t *table, uint64_t slots,
                               uint64_t i, uint64_t fp, uint64_t *budget)
{
    uint64_t j = spectral_fingerprint_home(fp, slots);
    while (j != i) {
        uint64_t v = table_get(table, j);
        if (v == 0 || v == fp || *budget == 0)
            return false;
        --*budget;
        j = j + 1 == slots ? 0 : j + 1;
    }
    return true;
}

/* The walks' total length, the table's probe displacement, is bounded: a
 * table rm.c built at most 3/4 full displaces a fingerprint by about 1.5
 * slots on average, so 16 per slot (plus a floor that no table of up to
 * 64 slots can reach, n <= slots entries displaced < slots each) is
 * never met by one, while a forged table of one long run, which would
 * cost a walk quadratic in its size, is refused in linear time. */
static uint64_t fingerprint_budget(uint64_t slots)
{
    return slots <= (UINT64_MAX - 4096u) / 16u ? 16u * slots + 4096u
                                                : UINT64_MAX;
}

/* RM's exact marker: marker size fingerprints, the non-zero ones counted
 * against fingerprints used, each placed as an insert places it. */
static bool fingerprints_plausible(ebb_reader *r, const spectral_header *h)
{
    const ebb_spectral_params *p = &h->params;
    if (p->method != EBB_SPECTRAL_RM || p->marker != EBB_SPECTRAL_MARKER_EXACT)
        return true;
    const uint8_t *table = r->at;
    uint64_t used = 0, budget = fingerprint_budget(p->marker_size);
    if (h->fingerprints_used > spectral_fingerprint_capacity(p->marker_size))
        return false;
    for (uint64_t i = 0; i < p->marker_size; i++) {
        uint64_t fp;
        if (!ebb_get_u64(r, &fp))
            return false;
        if (fp == 0)
            continue;
        if (!fingerprint_placed(table, p->marker_size, i, fp, &budget))
            return false;
        used++;
    }
    return used == h->fingerprints_used;
}

/* Skips a compact part (u64 length, image) after checking that its length
 * is a multiple of 8 within the payload; the image is validated on load. */
static bool compact_part_skip(ebb_reader *r, uint64_t count)
{
    uint64_t bytes;
    if (count == 0)
        return true;
    if (!ebb_get_u64(r, &bytes) || bytes % 8u != 0 ||
        bytes > (uint64_t)ebb_reader_left(r))
        return false;
    r->at += bytes;
    return true;
}

/* The counters' parts: FIXED words checked here; compact images sized
 * here and validated by read_compact_parts. */
static bool counters_plausible(ebb_reader *r, const spectral_header *h)
{
    const ebb_spectral_params *p = &h->params;
    bool empty = h->stats.added == 0;
    if (p->storage != EBB_SPECTRAL_FIXED)
        return compact_part_skip(r, p->counters) &&
               compact_part_skip(r, p->secondary) &&
               rest_bytes(p) == (uint64_t)ebb_reader_left(r);
    if (payload_bytes(p) != (uint64_t)ebb_reader_left(r))
        return false;
    return part_plausible(r, p->counters, p->counter_bits, empty) &&
           part_plausible(r, p->secondary, p->counter_bits, empty);
}

static bool payload_plausible(ebb_reader payload, const spectral_header *h)
{
    const ebb_spectral_params *p = &h->params;
    bool empty = h->stats.added == 0;
    return counters_plausible(&payload, h) &&
           part_plausible(&payload,
                          p->marker == EBB_SPECTRAL_MARKER_BLOOM
                              ? p->marker_size
                              : 0,
                          1, empty) &&
           fingerprints_plausible(&payload, h) &&
           traps_plausible(&payload, h) &&
           (!empty || (h->traps_used | h->fingerprints_used) == 0);
}

static void get_traps(ebb_reader *r, ebb_spectral *f)
{
    for (uint64_t i = 0; i < f->params.trap_slots; i++) {
        spectral_trap *t = &f->traps[i];
        (void)(ebb_get_u64(r, &t->counter) && ebb_get_u64(r, &t->key.lo) &&
               ebb_get_u64(r, &t->key.hi)); /* length checked */
    }
}

/* The parts' words into a fresh filter; false only if the checks above
 * were wrong. */
/* A compact part's image, validated before the filter is created (so that
 * the empty arrays creation allocates are bounded by the input: an image
 * of m counters holds at least m bits): valid as a whole, of the part's
 * count and the storage's code, every counter at most 2^w - 1, all 0 when
 * the filter is empty. *a is left zeroed for an absent part. */
static ebb_status read_compact_part(ebb_reader *r, const spectral_header *h,
                                    uint64_t count, ebb_strarray *a)
{
    const ebb_spectral_params *p = &h->params;
    memset(a, 0, sizeof *a);
    if (count == 0)
        return EBB_OK;
    uint64_t bytes;
    if (!ebb_get_u64(r, &bytes))
        return EBB_ECORRUPT; /* not reached: sized above */
    ebb_strarray got;
    ebb_status st = ebb_strarray_from_image(&got, r->at, (size_t)bytes);
    if (st != EBB_OK)
        return st;
    r->at += bytes;
    bool ok = got.count == count &&
              got.options.code == spectral_storage_code(p->storage);
    uint64_t max = p->counter_bits >= 32u
                       ? UINT32_MAX
                       : (UINT64_C(1) << p->counter_bits) - 1u;
    bool empty = h->stats.added == 0;
    for (uint64_t i = 0; ok && i < count; i++) {
        uint64_t v = ebb_strarray_get(&got, i);
        ok = v <= max && (!empty || v == 0);
    }
    if (!ok) {
        ebb_strarray_free(&got);
        return EBB_ECORRUPT;
    }
    *a = got;
    return EBB_OK;
}

/* Both compact parts, or neither (an error frees what was read). */
static ebb_status read_compact_parts(ebb_reader *r, const spectral_header *h,
                                     ebb_strarray *parts)
{
    ebb_status st = read_compact_part(r, h, h->params.counters, &parts[0]);
    if (st != EBB_OK)
        return st;
    st = read_compact_part(r, h, h->params.secondary, &parts[1]);
    if (st != EBB_OK)
        ebb_strarray_free(&parts[0]);
    return st;
}

/* The fresh filter's empty arrays replaced by the snapshot's. */
static void adopt_compact_parts(ebb_spectral *f, ebb_strarray *parts)
{
    for (unsigned part = 0; part < 2; part++) {
        if (parts[part].image == NULL)
            continue;
        ebb_strarray_free(&f->compact->parts[part]);
        f->compact->parts[part] = parts[part];
    }
}

static bool get_parts(ebb_reader *r, ebb_spectral *f)
{
    if (f->compact != NULL) {
        /* read_compact_parts read them */
    } else if (!ebb_cells_get_words(r, &f->primary)) {
        return false;
    }
    if (f->compact == NULL && f->params.secondary > 0 &&
        !ebb_cells_get_words(r, &f->secondary))
        return false;
    if (f->marker.words != NULL && !ebb_cells_get_words(r, &f->marker))
        return false;
    if (f->fingerprints != NULL &&
        !ebb_get_words(r, f->fingerprints, (size_t)f->params.marker_size))
        return false;
    get_traps(r, f);
    return true;
}

ebb_status ebb_spectral_load(const void *buf, size_t len, ebb_spectral **out)
{
    if (out == NULL)
        return EBB_EINVAL;
    ebb_frame frame;
    ebb_status st = ebb_frame_open(buf, len, EBB_FAMILY_SPECTRAL,
                                   SPECTRAL_PARAM_BYTES, &frame);
    if (st != EBB_OK)
        return st;
    spectral_header h;
    if (!read_header(&frame.params, &h))
        return EBB_ECORRUPT;
    h.params.seed = frame.seed;
    if (ebb_spectral_params_check(&h.params) != EBB_OK || !stats_valid(&h) ||
        !payload_plausible(frame.payload, &h))
        return EBB_ECORRUPT;
    ebb_strarray parts[2];
    memset(parts, 0, sizeof parts);
    if (h.params.storage != EBB_SPECTRAL_FIXED &&
        (st = read_compact_parts(&frame.payload, &h, parts)) != EBB_OK)
        return st;
    ebb_spectral *f;
    if ((st = ebb_spectral_create(&h.params, &f)) != EBB_OK) {
        ebb_strarray_free(&parts[0]);
        ebb_strarray_free(&parts[1]);
        return st;
    }
    if (f->compact != NULL)
        adopt_compact_parts(f, parts);
    if (!get_parts(&frame.payload, f)) {
        ebb_spectral_destroy(f); /* not reached: checked above */
        return EBB_ECORRUPT;
    }
    f->stats = h.stats;
    f->net = h.net;
    f->traps_used = h.traps_used;
    f->fingerprints_used = h.fingerprints_used;
    *out = f;
    return EBB_OK;
}
