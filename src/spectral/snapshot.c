/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot.c: spectral filter snapshots (family 6 of docs/format.md).
 *
 * Parameter block (136 bytes, little-endian):
 *    0 counters m u64     8 counter bits w u32   12 k u32
 *   16 method u32        20 reserved u32 (0)
 *   24 secondary m_s u64 32 marker bits u64      40 trap slots u64
 *   48 range u64
 *   56 added, 64 removed, 72 refused removals, 80 saturations, 88 moved,
 *   96 traps set, 104 traps sprung, 112 traps full, 120 net N,
 *  128 traps used (u64 each)
 * Payload, in order: ceil(m w / 64) words of the primary counters;
 * ceil(m_s w / 64) words of the secondary (RM); ceil(marker / 64) words of
 * the marker (RM with a marker); trap slots entries of 24 bytes (counter
 * u64, key hash lo u64, hi u64), an empty entry being counter 2^64 - 1 and
 * key 0. Bits past each part's cells clear. The hash seed is the frame's.
 *
 * A load checks, on the input bytes and before it allocates anything: the
 * shape (ebb_spectral_params_check), the reserved field, statistics that
 * a filter of that method can have (nothing moved or trapped outside RM
 * and trapping RM; moved and net at most added), the payload's length,
 * every part's tail bits, every counter and marker word 0 when nothing
 * was ever added, and each trap entry empty or naming a primary counter
 * (< m), with traps used the number of non-empty entries.
 */
#include <string.h>

#include "core/bits.h"
#include "core/codec.h"
#include "spectral/spectral_internal.h"

#define SPECTRAL_PARAM_BYTES 136u
#define SPECTRAL_TRAP_BYTES 24u
#define SPECTRAL_TRAP_EMPTY UINT64_MAX

/* Bytes of the payload for params (valid ones: no overflow, each part is
 * at most 2^40 counters of 32 bits; the traps at most 2^40 entries). */
static uint64_t payload_bytes(const ebb_spectral_params *p)
{
    uint64_t bytes = ebb_cells_word_count(p->counters, p->counter_bits) * 8u;
    if (p->secondary > 0)
        bytes += ebb_cells_word_count(p->secondary, p->counter_bits) * 8u;
    if (p->marker_bits > 0)
        bytes += ebb_cells_word_count(p->marker_bits, 1) * 8u;
    return bytes + p->trap_slots * SPECTRAL_TRAP_BYTES;
}

size_t ebb_spectral_snapshot_size(const ebb_spectral *f)
{
    return ebb_frame_size(SPECTRAL_PARAM_BYTES,
                          (size_t)payload_bytes(&f->params));
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

ebb_status ebb_spectral_save(const ebb_spectral *f, void *buf,
                             size_t capacity, size_t *written)
{
    size_t total = ebb_spectral_snapshot_size(f);
    if (buf == NULL || capacity < total) {
        if (written != NULL)
            *written = total;
        return EBB_EBUFSIZE;
    }
    const ebb_spectral_params *p = &f->params;
    const ebb_spectral_stats *s = &f->stats;
    ebb_writer w = ebb_frame_begin(buf, EBB_FAMILY_SPECTRAL,
                                   SPECTRAL_PARAM_BYTES, total, p->seed);
    ebb_put_u64(&w, p->counters);
    ebb_put_u32(&w, p->counter_bits);
    ebb_put_u32(&w, p->k);
    ebb_put_u32(&w, (uint32_t)p->method);
    ebb_put_u32(&w, 0);
    ebb_put_u64(&w, p->secondary);
    ebb_put_u64(&w, p->marker_bits);
    ebb_put_u64(&w, p->trap_slots);
    ebb_put_u64(&w, p->range);
    ebb_put_u64(&w, s->added);
    ebb_put_u64(&w, s->removed);
    ebb_put_u64(&w, s->refused_removals);
    ebb_put_u64(&w, s->saturations);
    ebb_put_u64(&w, s->moved);
    ebb_put_u64(&w, s->traps_set);
    ebb_put_u64(&w, s->traps_sprung);
    ebb_put_u64(&w, s->traps_full);
    ebb_put_u64(&w, f->net);
    ebb_put_u64(&w, f->traps_used);
    ebb_cells_put(&w, &f->primary);
    if (p->secondary > 0)
        ebb_cells_put(&w, &f->secondary);
    if (p->marker_bits > 0)
        ebb_cells_put(&w, &f->marker);
    put_traps(&w, f);
    ebb_frame_end(&w);
    if (written != NULL)
        *written = total;
    return EBB_OK;
}

/* ---- Reading and checking ------------------------------------------------ */

typedef struct spectral_header {
    ebb_spectral_params params;
    ebb_spectral_stats stats;
    uint64_t net, traps_used;
} spectral_header;

static bool read_header(ebb_reader *r, spectral_header *h)
{
    uint32_t method, reserved;
    ebb_spectral_params *p = &h->params;
    ebb_spectral_stats *s = &h->stats;
    memset(h, 0, sizeof *h);
    if (!ebb_get_u64(r, &p->counters) || !ebb_get_u32(r, &p->counter_bits) ||
        !ebb_get_u32(r, &p->k) || !ebb_get_u32(r, &method) ||
        !ebb_get_u32(r, &reserved) || !ebb_get_u64(r, &p->secondary) ||
        !ebb_get_u64(r, &p->marker_bits) || !ebb_get_u64(r, &p->trap_slots) ||
        !ebb_get_u64(r, &p->range) || !ebb_get_u64(r, &s->added) ||
        !ebb_get_u64(r, &s->removed) ||
        !ebb_get_u64(r, &s->refused_removals) ||
        !ebb_get_u64(r, &s->saturations) || !ebb_get_u64(r, &s->moved) ||
        !ebb_get_u64(r, &s->traps_set) || !ebb_get_u64(r, &s->traps_sprung) ||
        !ebb_get_u64(r, &s->traps_full) || !ebb_get_u64(r, &h->net) ||
        !ebb_get_u64(r, &h->traps_used))
        return false;
    /* The method is checked as an integer before it becomes an enum. */
    if (method > EBB_SPECTRAL_RM || reserved != 0)
        return false;
    p->method = (ebb_spectral_method)method;
    return true;
}

/* Statistics a filter of this shape can have. */
static bool stats_valid(const spectral_header *h)
{
    const ebb_spectral_params *p = &h->params;
    const ebb_spectral_stats *s = &h->stats;
    bool rm = p->method == EBB_SPECTRAL_RM;
    bool traps = p->trap_slots > 0;
    if (!rm && s->moved != 0)
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

static bool payload_plausible(ebb_reader payload, const spectral_header *h)
{
    const ebb_spectral_params *p = &h->params;
    bool empty = h->stats.added == 0;
    if (payload_bytes(p) != (uint64_t)ebb_reader_left(&payload))
        return false;
    return part_plausible(&payload, p->counters, p->counter_bits, empty) &&
           part_plausible(&payload, p->secondary, p->counter_bits, empty) &&
           part_plausible(&payload, p->marker_bits, 1, empty) &&
           traps_plausible(&payload, h) && (!empty || h->traps_used == 0);
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
static bool get_parts(ebb_reader *r, ebb_spectral *f)
{
    if (!ebb_cells_get_words(r, &f->primary))
        return false;
    if (f->params.secondary > 0 && !ebb_cells_get_words(r, &f->secondary))
        return false;
    if (f->params.marker_bits > 0 && !ebb_cells_get_words(r, &f->marker))
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
    ebb_spectral *f;
    if ((st = ebb_spectral_create(&h.params, &f)) != EBB_OK)
        return st;
    if (!get_parts(&frame.payload, f)) {
        ebb_spectral_destroy(f); /* not reached: checked above */
        return EBB_ECORRUPT;
    }
    f->stats = h.stats;
    f->net = h.net;
    f->traps_used = h.traps_used;
    *out = f;
    return EBB_OK;
}
