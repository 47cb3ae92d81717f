/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing_internal.h: the Timing / Block Timing Bloom filter's handle and
 * the steps of an insertion and a query, shared by timing.c (one item),
 * batch.c (many), snapshot.c and inference.c. timing.c's essay says what
 * they do and why the sweep rate keeps every read exact.
 */
#ifndef EBB_TIMING_INTERNAL_H
#define EBB_TIMING_INTERNAL_H

#include "core/bits.h"
#include "core/cells.h"
#include "core/hash.h"
#include "ebb/timing.h"
#include "timing/inference.h"

struct ebb_timing {
    /* Read by every operation. */
    ebb_cells timers;        /* m timers of bpt bits                      */
    uint32_t k;
    uint64_t seed;           /* hash seed                                  */
    uint64_t current;        /* T_+, 0..T_Omega                            */
    uint64_t in_block;       /* b, 0..B-1                                  */
    /* Ages >= limit have expired: ceil((w - b) / B) + 1 for the current
     * b, kept as limit_base + (b < remainder) (no division). */
    uint64_t limit;
    uint64_t cursor;         /* the next timer the sweep examines, < m    */

    /* Fixed by the shape. */
    uint64_t block;          /* B                                          */
    uint64_t t_omega;        /* T_Omega = ceil(w / B) + 1 + P              */
    uint64_t mark;           /* T_eps = T_Omega + 1, the expired mark      */
    uint64_t limit_base;     /* floor(w / B) + 1                           */
    uint64_t remainder;      /* w mod B                                    */
    uint64_t sweep;          /* timers examined per insertion              */
    bool prefetch;           /* timers past the caches: batches prefetch  */

    /* Counters (saturating). */
    uint64_t insertions;
    uint64_t swept;

    ebb_timing_params params;
    ebb_timing_model model;  /* canonical: unused fields zero              */
    ebb_timing_cache cache;  /* inference.h: refreshed with the model      */
};

#define TIMING_INLINE static inline __attribute__((always_inline))

/* ---- Reading a timer ---------------------------------------------------- */

/* The age of timestamp v (v <= T_Omega): T_+ - v modulo T_Omega + 1, by a
 * compare instead of a division. */
TIMING_INLINE uint64_t timing_age(const ebb_timing *f, uint64_t v)
{
    uint64_t age = f->current - v;
    return v > f->current ? age + f->mark : age; /* mark = T_Omega + 1 */
}

/* The standard reading of a timer value: not the mark and younger than the
 * limit. */
TIMING_INLINE bool timing_live(const ebb_timing *f, uint64_t v)
{
    return v != f->mark && timing_age(f, v) < f->limit;
}

/* Bit offset of the item's j-th timer: uniform in [0, m), independent
 * across j (the k timers may coincide). */
TIMING_INLINE uint64_t timing_bit(const ebb_timing *f, ebb_hash128 h,
                                  uint32_t j)
{
    return ebb_reduce(ebb_derive(h, j, EBB_INDEX_MIXED), f->timers.count) *
           f->timers.width;
}

TIMING_INLINE void timing_bits(const ebb_timing *f, ebb_hash128 h,
                               uint64_t *bits)
{
    for (uint32_t j = 0; j < f->k; j++)
        bits[j] = timing_bit(f, h, j);
}

/* The standard query on computed offsets, stopping at the first expired
 * timer. */
TIMING_INLINE bool timing_query_at(const ebb_timing *f, const uint64_t *bits)
{
    for (uint32_t j = 0; j < f->k; j++)
        if (!timing_live(f, ebb_cells_read_(&f->timers, bits[j])))
            return false;
    return true;
}

/* ---- The evidence of the inference ------------------------------------ */

/* The item's offsets (all first, so the loads can issue together), then
 * its timers in order as ages; returns the oldest age, a timer holding the mark reading as age `limit` (so the
 * item has an expired timer iff the oldest age is >= limit). With `stop`
 * it returns at the first expired timer, as the standard query does: the
 * inference's answer to expired evidence reads nothing more. The ages are
 * folded by selects (they are random: a branch per timer mispredicted
 * about every other one and serialised the loads); the only branch is the
 * stop, taken once. */
TIMING_INLINE uint64_t timing_ages(const ebb_timing *f, ebb_hash128 hash,
                                   bool stop, uint64_t *bits, uint64_t *ages)
{
    uint64_t oldest = 0;
    timing_bits(f, hash, bits);
    for (uint32_t j = 0; j < f->k; j++) {
        uint64_t v = ebb_cells_read_(&f->timers, bits[j]);
        uint64_t age = v == f->mark ? f->limit : timing_age(f, v);
        ages[j] = age;
        oldest = age > oldest ? age : oldest;
        if (stop && age >= f->limit)
            break;
    }
    return oldest;
}

/* The evidence (ebb_timing_observe_hash; timing.c's essay): r distinct
 * positions; expired, and then c the distinct expired timers and lambda
 * 0; else lambda the oldest age and c the distinct timers holding it.
 * With `stop` (the inference's own read, inference.c) expired evidence
 * comes from the first expired timer, with r = c = 0 (the answer reads
 * neither).
 *
 * The counts have no data-dependent branch (how many timers share the
 * oldest age is random, and a loop over them mispredicted its exit): an
 * offset counts unless an earlier one equals it (k (k - 1) / 2 compares,
 * fixed for the filter), towards c when its age is at least `floor`
 * (equal offsets hold equal ages, so a repeat is in or out with its
 * first). */
TIMING_INLINE void timing_observe(const ebb_timing *f, ebb_hash128 hash,
                                  bool stop, ebb_timing_evidence *out)
{
    uint64_t bits[EBB_TIMING_MAX_K];
    uint64_t ages[EBB_TIMING_MAX_K];
    uint64_t oldest = timing_ages(f, hash, stop, bits, ages);
    bool expired = oldest >= f->limit;
    out->expired = expired;
    out->lambda = expired ? 0 : oldest;
    out->b = f->in_block;
    out->r = out->c = 0;
    if (stop && expired)
        return;
    /* expired: every timer of age >= limit; else the oldest */
    uint64_t floor = expired ? f->limit : oldest;
    uint32_t r = 0, c = 0;
    for (uint32_t j = 0; j < f->k; j++) {
        bool repeat = false;
        for (uint32_t i = 0; i < j; i++)
            repeat |= bits[i] == bits[j];
        r += !repeat;
        c += !repeat & (ages[j] >= floor);
    }
    out->r = r;
    out->c = c;
}

/* ---- An insertion ------------------------------------------------------- */

/* Examines `sweep` timers from the cursor and rewrites the expired ones
 * to the mark; the cursor wraps at m by a compare. */
TIMING_INLINE void timing_sweep(ebb_timing *f)
{
    uint64_t i = f->cursor;
    uint64_t m = f->timers.count;
    uint32_t width = f->timers.width;
    uint64_t bit = i * width;
    uint64_t swept = 0;
    for (uint64_t n = 0; n < f->sweep; n++) {
        uint64_t v = ebb_cells_read_(&f->timers, bit);
        if (v != f->mark && timing_age(f, v) >= f->limit) {
            ebb_cells_write_(&f->timers, bit, (uint32_t)f->mark);
            swept++;
        }
        bit += width;
        if (++i == m) {
            i = 0;
            bit = 0;
        }
    }
    f->cursor = i;
    f->swept = ebb_saturating_add(f->swept, swept);
}

/* b and T_+ after one more insertion, and the limit for the new b. */
TIMING_INLINE void timing_advance(ebb_timing *f)
{
    f->insertions = ebb_saturating_add(f->insertions, 1u);
    if (++f->in_block == f->block) {
        f->in_block = 0;
        f->current = f->current == f->t_omega ? 0 : f->current + 1u;
    }
    f->limit = f->limit_base + (f->in_block < f->remainder);
}

/* One insertion on computed offsets: write T_+ into the k timers, advance
 * b and T_+, then sweep under the new (T_+, b). */
TIMING_INLINE void timing_insert_at(ebb_timing *f, const uint64_t *bits)
{
    uint32_t stamp = (uint32_t)f->current;
    for (uint32_t j = 0; j < f->k; j++)
        ebb_cells_write_(&f->timers, bits[j], stamp);
    timing_advance(f);
    timing_sweep(f);
}

/* ---- Shared by timing.c and snapshot.c ---------------------------------- */

/* A handle for valid params and a valid model (canonicalised into it),
 * every timer the mark, T_+ = b = cursor = 0. */
ebb_status ebb_timing_new(const ebb_timing_params *params,
                          const ebb_timing_model *model, uint64_t seed,
                          ebb_timing **out);

/* The model with the fields its kind does not use set to zero (so that a
 * snapshot has one encoding per state). */
void ebb_timing_model_canonical(const ebb_timing_model *in,
                                ebb_timing_model *out);

/* Sets (T_+, b) and the limit that goes with b (b < B, T_+ <= T_Omega). */
void ebb_timing_set_clock(ebb_timing *f, uint64_t current, uint64_t in_block);

/* Timers examined per insertion: ceil(m / (B (P + 1))) (valid params). */
uint64_t ebb_timing_sweep_rate(const ebb_timing_params *params);

/* T_Omega = ceil(w / B) + 1 + P (valid params). */
uint64_t ebb_timing_t_omega(const ebb_timing_params *params);

#endif
