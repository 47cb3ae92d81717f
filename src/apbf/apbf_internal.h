/*
 * apbf_internal.h: the APBF handle, shared by the files of src/apbf only.
 */
#ifndef EBB_APBF_INTERNAL_H
#define EBB_APBF_INTERNAL_H

#include "core/agequery.h"
#include "core/hash.h"
#include "core/slice.h"
#include "ebb/apbf.h"

struct ebb_apbf {
    uint32_t k;              /* slices written per insertion               */
    uint32_t l;              /* window in generations                       */
    uint32_t slices;         /* k + l                                       */
    uint32_t base;           /* buffer position of the newest slice s_0    */
    uint64_t slice_bits;     /* m                                           */
    uint64_t generation;     /* g                                           */
    uint64_t slice_words;    /* 64-bit words per slice                      */
    uint64_t insertions;     /* adds since creation or clear                */
    uint64_t generations;    /* shifts performed                            */
    uint64_t in_generation;  /* adds into the current generation, 0..g     */
    uint64_t seed;
    ebb_index_scheme scheme;
    /* Blocked slices (0 when plain): B bits per block, b bits set per key in
     * b parts of B / b bits; a part index takes field_bits = log2(B / b). */
    uint32_t block_bits;
    uint32_t block_hashes;
    uint32_t field_bits;
    uint32_t block_words;    /* B / 64                                      */
    uint64_t slice_blocks;   /* slice_bits / B                              */
    uint64_t *bits;          /* slices * slice_words, cache-line aligned   */
    void *block;             /* what to free for bits                       */
    size_t block_bytes;      /* bytes of that block                         */
};

/* Validates a shape (EBB_EINVAL / EBB_EOVERFLOW) and computes the bytes of
 * its bit arrays. */
ebb_status ebb_apbf_shape_bytes(const ebb_apbf_params *p, size_t *bit_bytes);

/* The largest g for a shape: the insertions that bring a slice written for
 * k generations to fill ratio 1/2 (plain: floor(m ln 2 / k); blocked: the
 * average block to half-full parts). 0 when the shape is invalid. */
uint64_t ebb_apbf_generation_for(const ebb_apbf_params *p);

/* Items per block at which each of a block's b parts of B / b bits is half
 * full on average: ln(1/2) / ln(1 - b / B). */
double ebb_apbf_block_load(uint32_t block_bits, uint32_t block_hashes);

/* The probability that a block holding a Poisson(lambda) number of keys
 * matches a new key: all b parts have the key's bit set. */
double ebb_apbf_block_fp(double lambda, uint32_t block_bits,
                         uint32_t block_hashes);

/* The match probability of each blocked slice when every generation puts
 * generation_load keys on the average block (Poisson block loads). */
void ebb_apbf_block_ratios(const ebb_apbf_params *p, double generation_load,
                           double *ratios);

/* True for a valid (B, b) pair, including (0, 0) for plain slices. */
bool ebb_apbf_block_valid(uint32_t block_bits, uint32_t block_hashes);

/* Ages every slice by one: the oldest is cleared and becomes s_0. */
void ebb_apbf_shift(ebb_apbf *filter);

/* Test hook: chooses the index derivation (EBB_INDEX_MIXED by default).
 * Changing it on a filter that holds items loses them. */
void ebb_apbf_set_index_scheme(ebb_apbf *filter, ebb_index_scheme scheme);

/* Logical slice i's bit array. */
static inline uint32_t ebb_apbf_position(const ebb_apbf *f, uint32_t i)
{
    uint32_t pos = f->base + i; /* i < k + l, so one subtraction suffices */
    return pos >= f->slices ? pos - f->slices : pos;
}

static inline uint64_t *ebb_apbf_slice(const ebb_apbf *f, uint32_t pos)
{
    return f->bits + (size_t)pos * f->slice_words;
}

/* The block a key selects in the blocked slice at buffer position pos, and
 * the derived value the bits inside it come from. */
static inline uint64_t *ebb_apbf_block_of(const ebb_apbf *f, ebb_hash128 h,
                                          uint32_t pos, uint64_t *derived)
{
    uint64_t x = ebb_derive(h, pos, f->scheme);
    *derived = x;
    return ebb_apbf_slice(f, pos) + ebb_reduce(x, f->slice_blocks) *
                                        f->block_words;
}

/* The bit of a plain slice: the hash function is the buffer position's. */
static inline uint64_t ebb_apbf_plain_bit(const ebb_apbf *f, ebb_hash128 h,
                                          uint32_t pos)
{
    return ebb_slice_bit(h, pos, f->slice_bits, f->scheme);
}

/* The cache line an operation on slice pos touches (for prefetching). */
static inline const void *ebb_apbf_line_of(const ebb_apbf *f, ebb_hash128 h,
                                           uint32_t pos)
{
    uint64_t derived;
    if (f->block_bits == 0)
        return ebb_apbf_slice(f, pos) + (ebb_apbf_plain_bit(f, h, pos) >> 6);
    return ebb_apbf_block_of(f, h, pos, &derived);
}

/* The in-block bit of part p: the block index used the top bits of x, so the
 * part fields come from a second scramble of x, read from the top down. */
static inline uint32_t ebb_apbf_part_bit(const ebb_apbf *f, uint64_t scrambled,
                                         uint32_t p)
{
    uint32_t part_bits = f->block_bits / f->block_hashes;
    uint64_t field = scrambled >> (64u - (p + 1u) * f->field_bits);
    return p * part_bits + (uint32_t)(field & (part_bits - 1u));
}

static inline uint64_t ebb_apbf_scramble(uint64_t x)
{
    return (x ^ (x >> 32)) * UINT64_C(0x9e3779b97f4a7c15);
}

static inline void ebb_apbf_slice_set(ebb_apbf *f, ebb_hash128 h, uint32_t pos)
{
    if (f->block_bits == 0) {
        ebb_bit_set(ebb_apbf_slice(f, pos), ebb_apbf_plain_bit(f, h, pos));
        return;
    }
    uint64_t x;
    uint64_t *block = ebb_apbf_block_of(f, h, pos, &x);
    uint64_t y = ebb_apbf_scramble(x);
    for (uint32_t p = 0; p < f->block_hashes; p++) {
        uint32_t bit = ebb_apbf_part_bit(f, y, p);
        block[bit >> 6] |= UINT64_C(1) << (bit & 63u);
    }
}

static inline bool ebb_apbf_slice_test(const void *filter, ebb_hash128 h,
                                       uint32_t i)
{
    const ebb_apbf *f = filter;
    uint32_t pos = ebb_apbf_position(f, i);
    if (f->block_bits == 0)
        return ebb_bit_test(ebb_apbf_slice(f, pos), ebb_apbf_plain_bit(f, h, pos));
    uint64_t x;
    const uint64_t *block = ebb_apbf_block_of(f, h, pos, &x);
    /* All b parts lie in the one cache line just loaded: testing every
     * part without an early exit avoids a mispredicted branch per part. */
    uint64_t y = ebb_apbf_scramble(x);
    uint64_t all = 1;
    for (uint32_t p = 0; p < f->block_hashes; p++) {
        uint32_t bit = ebb_apbf_part_bit(f, y, p);
        all &= block[bit >> 6] >> (bit & 63u);
    }
    return all & 1u;
}

#endif
