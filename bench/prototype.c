/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prototype.c: a model of the prototype APBF in RedisBloom's unmerged
 * AgePartitionedBF branch, its count-mode hot path, the peer of issue 17.
 *
 * Written here from the description of that hot path (no code of
 * the prototype was read or copied); MurmurHash64A is written from its
 * published algorithm (the constants and steps are facts). What it models:
 *
 *   hashing   two MurmurHash64A of the key bytes per call, seeds
 *             PROTOTYPE_SEED_A and PROTOTYPE_SEED_B: a and b;
 *   slices    k + l slices of m bits, each a byte array, all in one
 *             buffer, slice 0 the newest; slice i's bit for a key is
 *             (a + j_i * b) % m, one `%` per slice read or written;
 *   bit set   byte-wise: byte[pos >> 3] |= 1 << (pos & 7);
 *   count     each slice counts the insertions written into it; an add
 *             writes (and counts in) slices 0..k-1;
 *   shift     when slice 0 holds g insertions (count mode), before the
 *             add: memmove every slice one slice towards the old end (the
 *             oldest falls off), clear the new slice 0, move the counts;
 *   query     Algorithm 1 of the APBF paper (Shtul, Baquero, Almeida),
 *             written out here: start at slice l, count consecutive
 *             matches towards older slices, on a miss jump k slices back
 *             towards the new end carrying the run (ebb states it in
 *             src/core/agequery.h); present when a run reaches k.
 *
 * j_i, the index of slice i's function. The description says "slice i at
 * a + h_i * b". With memmove the data of a slice moves to the next index
 * at every shift, so the function must travel with the data or a key's
 * bits would be looked for with another function than they were set with
 * (false negatives). Each slice therefore carries its index in its
 * metadata beside its count (moved by the same memmove): the k + l slices
 * alive at once hold the distinct indices 0..k+l-1, and the new slice 0
 * takes the index of the slice that fell off. It costs one load from the
 * metadata (in L1) per slice; the description does not say how the
 * prototype solves this, and any fixed function per slice is the same work.
 *
 * Three choices make the comparison one of hot paths only, each in the
 * peer's favour or neutral:
 *
 *   - the add reads the filter's fields into locals before its loop: a
 *     byte store may alias any of them, so read through f they would be
 *     reloaded after every store and the next slice's division would wait
 *     for the store's address (about 3x slower per add in a scratch run
 *     with the filter in L1; a careful C programmer writes the locals);
 *   - the bit buffer comes from libebb's allocator, as ebb's filters' do
 *     (src/core/alloc.h: cache-line aligned, 2 MiB transparent huge pages
 *     from 2 MiB on); the prototype in Redis takes jemalloc's pages, which
 *     in this machine's "madvise" THP mode are 4 KiB, so at w = 1e8 the
 *     real prototype would pay more TLB misses than this model;
 *   - add and contains are kept out of line (noinline), so that one call
 *     costs a call, as ebb_apbf_add and ebb_apbf_contains (in libebb) do.
 *
 * Same (k, l, m, g) as ebb's shape for the window, so the same fp promise:
 * ebb_apbf_fp(k, l). (Double hashing, a + j b, makes the k + l functions of
 * one key dependent; for m of 10^5 bits and more its rate is that of
 * independent ones within the bench's 5 sd, Kirsch and Mitzenmacher 2006.)
 */
#include "prototype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* Two different seeds for a and b. */
#define PROTOTYPE_SEED_A UINT64_C(0x5eed0000a5a5a5a5)
#define PROTOTYPE_SEED_B UINT64_C(0x0000b0b0cafe5eed)

/* MurmurHash64A's multiplier and shift. */
#define MURMUR_M UINT64_C(0xc6a4a7935bd1e995)
#define MURMUR_R 47

uint64_t bench_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const unsigned char *bytes = key;
    size_t blocks = len / 8;
    uint64_t h = seed ^ ((uint64_t)len * MURMUR_M);

    for (size_t i = 0; i < blocks; i++) {
        uint64_t k;
        memcpy(&k, bytes + 8 * i, sizeof k); /* the machine's order (x86: LE) */
        k *= MURMUR_M;
        k ^= k >> MURMUR_R;
        k *= MURMUR_M;
        h ^= k;
        h *= MURMUR_M;
    }
    const unsigned char *tail = bytes + 8 * blocks;
    size_t rest = len & 7;
    if (rest != 0) {
        /* The tail bytes, byte t at bits 8t..8t+7, then one multiply. */
        for (size_t t = 0; t < rest; t++)
            h ^= (uint64_t)tail[t] << (8 * t);
        h *= MURMUR_M;
    }
    h ^= h >> MURMUR_R;
    h *= MURMUR_M;
    h ^= h >> MURMUR_R;
    return h;
}

/* ------------------------------------------------------------------------ */
/* The model                                                                */
/* ------------------------------------------------------------------------ */

/* A slice's metadata, moved with its bits at each shift. */
typedef struct prototype_slice {
    uint64_t count;    /* insertions written into this slice              */
    uint64_t function; /* j: its bit for a key is (a + j * b) % m         */
} prototype_slice;

typedef struct prototype_filter {
    uint32_t k, l, slices;     /* slices = k + l                          */
    uint64_t m;                /* bits per slice                          */
    uint64_t generation;       /* g: insertions per generation            */
    size_t slice_bytes;        /* ceil(m / 8)                             */
    unsigned char *bits;       /* slices * slice_bytes, slice 0 newest    */
    void *bits_raw;            /* for ebb_mem_free                        */
    prototype_slice *meta;     /* slices entries, slice 0 newest          */
} prototype_filter;

static void prototype_shift(prototype_filter *f)
{
    uint64_t recycled = f->meta[f->slices - 1].function;
    memmove(f->bits + f->slice_bytes, f->bits,
            (size_t)(f->slices - 1) * f->slice_bytes);
    memset(f->bits, 0, f->slice_bytes);
    memmove(f->meta + 1, f->meta, (size_t)(f->slices - 1) * sizeof *f->meta);
    f->meta[0].count = 0;
    f->meta[0].function = recycled;
}

static uint64_t prototype_bit(const prototype_filter *f, uint64_t a, uint64_t b,
                              uint32_t slice)
{
    return (a + f->meta[slice].function * b) % f->m;
}

__attribute__((noinline)) static void prototype_add(prototype_filter *f,
                                                    const void *key, size_t len)
{
    uint64_t a = bench_murmur64a(key, len, PROTOTYPE_SEED_A);
    uint64_t b = bench_murmur64a(key, len, PROTOTYPE_SEED_B);
    if (f->meta[0].count == f->generation)
        prototype_shift(f);
    uint32_t k = f->k;
    uint64_t m = f->m;
    size_t slice_bytes = f->slice_bytes;
    unsigned char *bits = f->bits;
    prototype_slice *meta = f->meta;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t pos = (a + meta[i].function * b) % m;
        bits[(size_t)i * slice_bytes + (pos >> 3)] |= (unsigned char)(1u << (pos & 7));
        meta[i].count++;
    }
}

static bool prototype_has(const prototype_filter *f, uint64_t a, uint64_t b,
                          uint32_t slice)
{
    uint64_t pos = prototype_bit(f, a, b, slice);
    return (f->bits[(size_t)slice * f->slice_bytes + (pos >> 3)] >> (pos & 7)) & 1u;
}

/* Algorithm 1; *reads (when not NULL) receives the slices read. */
static inline bool prototype_query(const prototype_filter *f, const void *key,
                                   size_t len, uint32_t *reads)
{
    uint64_t a = bench_murmur64a(key, len, PROTOTYPE_SEED_A);
    uint64_t b = bench_murmur64a(key, len, PROTOTYPE_SEED_B);
    int64_t slice = f->l;
    uint32_t previous = 0, run = 0, count = 0;
    bool found = false;
    while (slice >= 0) {
        count++;
        if (prototype_has(f, a, b, (uint32_t)slice)) {
            run++;
            if (previous + run == f->k) {
                found = true;
                break;
            }
            slice++;
        } else {
            previous = run;
            run = 0;
            slice -= f->k;
        }
    }
    if (reads != NULL)
        *reads = count;
    return found;
}

__attribute__((noinline)) static bool prototype_contains(const prototype_filter *f,
                                                         const void *key, size_t len)
{
    return prototype_query(f, key, len, NULL);
}

static void prototype_free(prototype_filter *f)
{
    if (f == NULL)
        return;
    ebb_mem_free(f->bits_raw);
    free(f->meta);
    free(f);
}

static prototype_filter *prototype_new(const ebb_apbf_params *p)
{
    prototype_filter *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->k = p->k;
    f->l = p->l;
    f->slices = p->k + p->l;
    f->m = p->slice_bits;
    f->generation = p->generation;
    f->slice_bytes = (size_t)((p->slice_bits + 7) / 8);
    f->bits = ebb_mem_alloc_lines((size_t)f->slices * f->slice_bytes, &f->bits_raw);
    f->meta = calloc(f->slices, sizeof *f->meta);
    if (f->bits == NULL || f->meta == NULL) {
        prototype_free(f);
        return NULL;
    }
    for (uint32_t i = 0; i < f->slices; i++)
        f->meta[i].function = i;
    return f;
}

/* ------------------------------------------------------------------------ */
/* As a bench subject                                                       */
/* ------------------------------------------------------------------------ */

static void model_add(bench_subject *s, const bench_key *keys, size_t n)
{
    prototype_filter *f = s->filter;
    for (size_t i = 0; i < n; i++)
        prototype_add(f, &keys[i], sizeof keys[i]);
}

static size_t model_contains(const bench_subject *s, const bench_key *keys, size_t n)
{
    const prototype_filter *f = s->filter;
    size_t positives = 0;
    for (size_t i = 0; i < n; i++)
        positives += prototype_contains(f, &keys[i], sizeof keys[i]);
    return positives;
}

static bool model_probe(const bench_subject *s, const bench_key *key, double *lines)
{
    uint32_t reads = 0;
    bool hit = prototype_query(s->filter, key, sizeof *key, &reads);
    *lines = (double)reads;
    return hit;
}

static size_t model_memory(const bench_subject *s)
{
    const prototype_filter *f = s->filter;
    return sizeof *f + (size_t)f->slices * (f->slice_bytes + sizeof *f->meta);
}

static void model_destroy(bench_subject *s)
{
    prototype_free(s->filter);
    s->filter = NULL;
}

bool bench_prototype_create(bench_subject *s, uint64_t window,
                            const ebb_apbf_params *p)
{
    memset(s, 0, sizeof *s);
    s->variant = BENCH_PROTOTYPE_MODEL;
    s->window = window;
    s->filter = prototype_new(p);
    if (s->filter == NULL) {
        fprintf(stderr, "bench: the prototype model (k = %u, l = %u, m = %llu): "
                        "out of memory\n",
                p->k, p->l, (unsigned long long)p->slice_bits);
        return false;
    }
    s->k = p->k;
    s->l = p->l;
    s->fp = ebb_apbf_fp(p->k, p->l);
    s->fp_promise = s->fp;
    s->fp_factor = 1.0;
    snprintf(s->shape, sizeof s->shape, "k=%u l=%u", p->k, p->l);
    snprintf(s->chooser, sizeof s->chooser,
             "model of the prototype, ebb's (k, l, m, g), 2x MurmurHash64A");
    /* As ebb's filters: (k + l) generations, every slice written and aged. */
    s->fill = (uint64_t)(p->k + p->l) * p->generation;
    s->present_span = window;
    s->add = model_add;
    s->contains = model_contains;
    s->probe = model_probe;
    s->memory = model_memory;
    s->destroy = model_destroy;
    return true;
}

static uint64_t model_key_hash(const bench_key *key)
{
    return bench_murmur64a(key, sizeof *key, PROTOTYPE_SEED_A) ^
           bench_murmur64a(key, sizeof *key, PROTOTYPE_SEED_B);
}

double bench_prototype_hash_ns(bench_key_source *keys, size_t count, unsigned runs)
{
    return bench_key_hash_ns(keys, count, runs, model_key_hash);
}
