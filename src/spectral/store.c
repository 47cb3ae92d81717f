/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store.c: the spectral filter's compact counters, their pending updates
 * and the commit that applies them all or none (store.h says why and how).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/bits.h"
#include "spectral/store.h"

ebb_code spectral_storage_code(ebb_spectral_storage storage)
{
    switch (storage) {
    case EBB_SPECTRAL_COMPACT_DELTA:
        return EBB_CODE_DELTA;
    case EBB_SPECTRAL_COMPACT_STEPS:
        return EBB_CODE_STEPS;
    case EBB_SPECTRAL_COMPACT_GAMMA:
    case EBB_SPECTRAL_FIXED:
        break;
    }
    return EBB_CODE_GAMMA;
}

/* Entries of the pending table: an update of one key touches at most k
 * primary and k_s secondary counters and sets at most k marker bits or
 * one fingerprint; add_int updates L + 1 keys in one transaction. */
static uint64_t pending_capacity(const ebb_spectral_params *p)
{
    uint64_t per_key = 2u * (uint64_t)p->k + p->secondary_k + 4u;
    return per_key * ((uint64_t)spectral_range_levels(p->range) + 1u);
}

/* ---- Counters ------------------------------------------------------------ */

static spectral_pending *pending_find(const spectral_compact *c,
                                      spectral_part part, uint64_t i)
{
    for (size_t e = 0; e < c->used; e++) {
        spectral_pending *p = &c->pending[e];
        if (p->kind == SPECTRAL_NOTE_COUNTER && p->index == i &&
            p->part == (uint8_t)part)
            return p;
    }
    return NULL;
}

uint32_t spectral_compact_get(const ebb_spectral *f, spectral_part part,
                              uint64_t i)
{
    const spectral_compact *c = f->compact;
    if (c->used != 0) {
        const spectral_pending *p = pending_find(c, part, i);
        if (p != NULL)
            return p->value;
    }
    return (uint32_t)ebb_strarray_get(&c->parts[part], i);
}

void spectral_compact_set(ebb_spectral *f, spectral_part part, uint64_t i,
                          uint32_t v)
{
    spectral_compact *c = f->compact;
    if (c->depth == 0) {
        /* clear and forget: counters only shrink, which cannot fail */
        (void)ebb_strarray_set(&c->parts[part], i, v);
        return;
    }
    spectral_pending *p = pending_find(c, part, i);
    if (p != NULL) {
        p->value = v;
        return;
    }
    if (c->used == c->capacity) {
        c->overflow = true; /* the commit refuses the update */
        return;
    }
    p = &c->pending[c->used++];
    p->index = i;
    p->old = (uint32_t)ebb_strarray_get(&c->parts[part], i);
    p->value = v;
    p->part = (uint8_t)part;
    p->kind = SPECTRAL_NOTE_COUNTER;
}

/* ---- Transactions ---------------------------------------------------------- */

void spectral_compact_begin(ebb_spectral *f)
{
    spectral_compact *c = f->compact;
    if (c->depth++ > 0)
        return;
    c->used = 0;
    c->overflow = false;
    c->saved_stats = f->stats;
    c->saved_net = f->net;
    c->saved_fingerprints_used = f->fingerprints_used;
}

void spectral_compact_note(ebb_spectral *f, spectral_note_kind kind,
                           uint64_t index)
{
    spectral_compact *c = f->compact;
    if (c->used == c->capacity) {
        c->overflow = true;
        return;
    }
    spectral_pending *p = &c->pending[c->used++];
    memset(p, 0, sizeof *p);
    p->index = index;
    p->kind = (uint8_t)kind;
}

/* Clears what the update set outside the counters, newest first (so the
 * fingerprint table's probe chains come back as they were), and restores
 * the statistics. */
static void undo_notes(ebb_spectral *f)
{
    spectral_compact *c = f->compact;
    for (size_t e = c->used; e-- > 0;) {
        const spectral_pending *p = &c->pending[e];
        if (p->kind == SPECTRAL_NOTE_MARKER_BIT)
            ebb_cells_set(&f->marker, p->index, 0);
        else if (p->kind == SPECTRAL_NOTE_FINGERPRINT)
            f->fingerprints[p->index] = 0;
    }
    f->stats = c->saved_stats;
    f->net = c->saved_net;
    f->fingerprints_used = c->saved_fingerprints_used;
}

/* Applies the growing counters of the pending table; on failure sets back
 * those applied (they shrink: cannot fail) and returns the status. */
static ebb_status apply_growths(spectral_compact *c)
{
    for (size_t e = 0; e < c->used; e++) {
        const spectral_pending *p = &c->pending[e];
        if (p->kind != SPECTRAL_NOTE_COUNTER || p->value <= p->old)
            continue;
        ebb_status st = ebb_strarray_set(&c->parts[p->part], p->index,
                                         p->value);
        if (st == EBB_OK)
            continue;
        for (size_t u = e; u-- > 0;) {
            const spectral_pending *q = &c->pending[u];
            if (q->kind == SPECTRAL_NOTE_COUNTER && q->value > q->old)
                (void)ebb_strarray_set(&c->parts[q->part], q->index, q->old);
        }
        return st;
    }
    return EBB_OK;
}

ebb_status spectral_compact_commit(ebb_spectral *f)
{
    spectral_compact *c = f->compact;
    if (--c->depth > 0)
        return EBB_OK;
    ebb_status st = c->overflow ? EBB_ENOMEM : apply_growths(c);
    if (st != EBB_OK) {
        undo_notes(f);
        c->used = 0;
        return st;
    }
    for (size_t e = 0; e < c->used; e++) {
        const spectral_pending *p = &c->pending[e];
        if (p->kind == SPECTRAL_NOTE_COUNTER && p->value < p->old)
            (void)ebb_strarray_set(&c->parts[p->part], p->index, p->value);
    }
    c->used = 0;
    return EBB_OK;
}

/* ---- Life cycle ---------------------------------------------------------- */

static void options_for(const ebb_spectral_params *p, ebb_strarray_options *o)
{
    ebb_strarray_options_init(spectral_storage_code(p->storage), 0, o);
}

/* A compact part: the cells struct keeps the shape only. */
static void shape_only(ebb_cells *c, uint64_t count, uint32_t width)
{
    memset(c, 0, sizeof *c);
    c->count = count;
    c->width = width;
    c->max = width >= 32u ? UINT32_MAX : (UINT32_C(1) << width) - 1u;
}

static ebb_status compact_alloc(ebb_spectral *f)
{
    const ebb_spectral_params *p = &f->params;
    uint64_t capacity = pending_capacity(p);
    if (capacity > SIZE_MAX / sizeof(spectral_pending))
        return EBB_EOVERFLOW;
    spectral_compact *c = ebb_mem_alloc(sizeof *c);
    if (c == NULL)
        return EBB_ENOMEM;
    memset(c, 0, sizeof *c);
    f->compact = c;
    c->capacity = (size_t)capacity;
    c->pending = ebb_mem_alloc(c->capacity * sizeof(spectral_pending));
    if (c->pending == NULL)
        return EBB_ENOMEM;
    shape_only(&f->primary, p->counters, p->counter_bits);
    shape_only(&f->secondary, p->secondary, p->counter_bits);
    ebb_strarray_options o;
    options_for(p, &o);
    ebb_status st = ebb_strarray_init(&c->parts[SPECTRAL_PRIMARY],
                                      p->counters, &o);
    if (st == EBB_OK && p->secondary > 0)
        st = ebb_strarray_init(&c->parts[SPECTRAL_SECONDARY], p->secondary,
                               &o);
    return st;
}

ebb_status spectral_store_alloc(ebb_spectral *f)
{
    const ebb_spectral_params *p = &f->params;
    if (p->storage != EBB_SPECTRAL_FIXED)
        return compact_alloc(f);
    ebb_status st = ebb_cells_init(&f->primary, p->counters, p->counter_bits);
    if (st == EBB_OK && p->secondary > 0)
        st = ebb_cells_init(&f->secondary, p->secondary, p->counter_bits);
    return st;
}

void spectral_store_free(ebb_spectral *f)
{
    ebb_cells_free(&f->primary);
    ebb_cells_free(&f->secondary);
    spectral_compact *c = f->compact;
    if (c == NULL)
        return;
    ebb_strarray_free(&c->parts[SPECTRAL_PRIMARY]);
    ebb_strarray_free(&c->parts[SPECTRAL_SECONDARY]);
    ebb_mem_free(c->pending);
    ebb_mem_free(c);
    f->compact = NULL;
}

void spectral_store_clear(ebb_spectral *f, spectral_part part)
{
    if (spectral_store_count(f, part) == 0)
        return;
    if (f->compact == NULL) {
        ebb_cells_clear(part == SPECTRAL_PRIMARY ? &f->primary
                                                 : &f->secondary);
        return;
    }
    ebb_strarray *a = &f->compact->parts[part];
    for (uint64_t i = 0; i < a->count; i++)
        if (ebb_strarray_get(a, i) != 0)
            (void)ebb_strarray_set(a, i, 0); /* shrinks: cannot fail */
}

uint64_t spectral_store_nonzero(const ebb_spectral *f, spectral_part part)
{
    uint64_t count = spectral_store_count(f, part);
    if (f->compact == NULL)
        return count - ebb_cells_count_zero(spectral_store_cells(f, part));
    const ebb_strarray *a = &f->compact->parts[part];
    uint64_t nonzero = 0;
    for (uint64_t i = 0; i < count; i++)
        nonzero += ebb_strarray_get(a, i) != 0;
    return nonzero;
}

size_t spectral_store_bytes(const ebb_spectral *f)
{
    const spectral_compact *c = f->compact;
    if (c == NULL)
        return ebb_cells_bytes(&f->primary) + ebb_cells_bytes(&f->secondary);
    size_t bytes = sizeof *c + c->capacity * sizeof(spectral_pending) +
                   ebb_strarray_bytes(&c->parts[SPECTRAL_PRIMARY]);
    if (f->params.secondary > 0)
        bytes += ebb_strarray_bytes(&c->parts[SPECTRAL_SECONDARY]);
    return bytes;
}

/* Bytes of a fresh array of count zeros with o (strarray.c's layout: a
 * 9-word header, blocks + 1 coarse offsets, the sub-block offsets, the
 * base array of codes and slack plus a spare word, and a guard word). */
static uint64_t empty_array_bytes(uint64_t count, const ebb_strarray_options *o)
{
    uint64_t blocks = (count + o->block - 1u) / o->block;
    uint64_t longest = o->code == EBB_CODE_FIXED ? o->width
                                                 : EBB_CODE_MAX_BITS;
    bool wide = (uint64_t)o->block * longest >= 65536u;
    uint64_t sub_bytes = blocks * (o->block / o->sub - 1u) * (wide ? 4u : 2u);
    uint64_t bits = count * ebb_code_length(o->code, o->width, 0) +
                    blocks * o->slack_bits;
    uint64_t words = 9u + blocks + 1u + (sub_bytes + 7u) / 8u +
                     (bits + 63u) / 64u + 1u;
    return (words + 1u) * 8u;
}

uint64_t spectral_store_bytes_for(const ebb_spectral_params *p)
{
    if (p->storage == EBB_SPECTRAL_FIXED) {
        uint64_t bytes = ebb_cells_word_count(p->counters, p->counter_bits);
        if (p->secondary > 0)
            bytes += ebb_cells_word_count(p->secondary, p->counter_bits);
        return bytes * 8u; /* at most 2 x 2^42 words */
    }
    ebb_strarray_options o;
    options_for(p, &o);
    uint64_t bytes = sizeof(spectral_compact) +
                     pending_capacity(p) * sizeof(spectral_pending) +
                     empty_array_bytes(p->counters, &o);
    if (p->secondary > 0)
        bytes += empty_array_bytes(p->secondary, &o);
    return bytes;
}

/* ---- Rebuilding a part ------------------------------------------------------ */

ebb_status spectral_stage_begin(ebb_spectral *f, spectral_part part,
                                spectral_stage *s)
{
    memset(s, 0, sizeof *s);
    if (f->compact == NULL || spectral_store_count(f, part) == 0)
        return EBB_OK;
    ebb_strarray_options o;
    options_for(&f->params, &o);
    ebb_status st = ebb_strarray_init(&s->next, spectral_store_count(f, part),
                                      &o);
    s->active = st == EBB_OK;
    return st;
}

ebb_status spectral_stage_put(ebb_spectral *f, spectral_part part,
                              spectral_stage *s, uint64_t i, uint32_t v)
{
    if (!s->active) {
        ebb_cells_set(part == SPECTRAL_PRIMARY ? &f->primary : &f->secondary,
                      i, v);
        return EBB_OK;
    }
    uint32_t max = spectral_store_max(f, part);
    return v == 0 ? EBB_OK
                  : ebb_strarray_set(&s->next, i, v < max ? v : max);
}

void spectral_stage_end(ebb_spectral *f, spectral_part part,
                        spectral_stage *s, bool keep)
{
    if (!s->active)
        return;
    if (keep) {
        ebb_strarray_free(&f->compact->parts[part]);
        f->compact->parts[part] = s->next;
    } else {
        ebb_strarray_free(&s->next);
    }
    s->active = false;
}
