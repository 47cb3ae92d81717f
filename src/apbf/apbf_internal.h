/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apbf_internal.h: the APBF handle, shared by the files of src/apbf only.
 */
#ifndef EBB_APBF_INTERNAL_H
#define EBB_APBF_INTERNAL_H

#include "apbf/line8.h"
#include "core/agebatch.h"
#include "core/agequery.h"
#include "core/hash.h"
#include "core/slice.h"
#include "ebb/apbf.h"

/* How a filter's slices are read and written, fixed when it is created (and
 * by the index-scheme test hook), so that each operation's loops are
 * compiled for one case. */
typedef enum ebb_apbf_path {
    EBB_APBF_PATH_PLAIN = 0,  /* plain slices, mixed derivation             */
    EBB_APBF_PATH_LINE8 = 1,  /* B = 512, b = 8, mixed: a bit per word      */
    EBB_APBF_PATH_GENERIC = 2, /* every other (B, b), and the test schemes */
    EBB_APBF_PATH_SLICED = 3   /* the bit-sliced layout (src/apbf/sliced.c) */
} ebb_apbf_path;

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
    ebb_apbf_path path;
    uint32_t layout;         /* EBB_APBF_LAYOUT_RING or _SLICED             */
    uint32_t cell_bits;      /* SLICED: W, bits per cell; RING: 0          */
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
    /* SLICED (src/apbf/sliced.c): bits is the block, plan then cells. */
    uint32_t planes;         /* P = k + l + 1, the spare included           */
    uint64_t cursor;         /* next cell whose spare-plane bit is cleared  */
    uint64_t clear_step;     /* cells cleared per add: ceil(m / g)          */
    void *cells;             /* m cells of cell_bits bits                   */
    struct ebb_apbf_sliced_plan *plan;
    /* RING test hook (ebb_apbf_set_residue_hashing): the generic path
     * hashes logical slice i with index (G - i) mod k, as SLICED does. */
    bool residue_hashing;
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

/* The bit-sliced layout (src/apbf/sliced.c): the whole add (shift
 * included, counters updated), the query, and the query then add on one
 * location of the key's cells, for EBB_APBF_PATH_SLICED. */
void ebb_apbf_sliced_add(ebb_apbf *filter, ebb_hash128 h);
bool ebb_apbf_sliced_contains(const ebb_apbf *filter, ebb_hash128 h,
                              uint32_t *accesses);
bool ebb_apbf_sliced_check_and_add(ebb_apbf *filter, ebb_hash128 h);

/* The path for a filter's (B, b) and index scheme. */
ebb_apbf_path ebb_apbf_path_for(const ebb_apbf *filter);

/* Test hook: chooses the index derivation (EBB_INDEX_MIXED by default).
 * Changing it on a filter that holds items loses them. */
void ebb_apbf_set_index_scheme(ebb_apbf *filter, ebb_index_scheme scheme);

/* Test hook: makes a RING filter hash by residue, as the sliced layout
 * does (logical slice i with index (G - i) mod k, G = generations), on the
 * generic path, so that tests can compare the two layouts answer by answer.
 * Call it on an empty filter. */
void ebb_apbf_set_residue_hashing(ebb_apbf *filter);

/* The residue hash index of the slice at buffer position pos. */
static inline uint32_t ebb_apbf_residue_index(const ebb_apbf *f, uint32_t pos)
{
    uint32_t i = pos >= f->base ? pos - f->base : pos + f->slices - f->base;
    uint32_t g = (uint32_t)(f->generations % f->k);
    return (g + f->k - i % f->k) % f->k;
}

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

/* The in-block bit of part p: the block index used the top bits of x, so the
 * part fields come from a second scramble of x, read from the top down. */
static inline uint32_t ebb_apbf_part_bit(const ebb_apbf *f, uint64_t scrambled,
                                         uint32_t p)
{
    uint32_t part_bits = UINT32_C(1) << f->field_bits; /* B / b, no division */
    uint64_t field = scrambled >> (64u - (p + 1u) * f->field_bits);
    return p * part_bits + (uint32_t)(field & (part_bits - 1u));
}

static inline uint64_t ebb_apbf_scramble(uint64_t x)
{
    return (x ^ (x >> 32)) * UINT64_C(0x9e3779b97f4a7c15);
}

/* Where a read or write of the slice at buffer position pos (its words at
 * slice; ebb_apbf_locate looks them up) lands for h:
 * probe->at is the word (plain) or the block (blocked), probe->aux the
 * bit's mask (plain) or the scrambled value the part fields come from
 * (blocked). `path` is a constant at every call site, so each operation is
 * compiled once per path with no branch on the filter's kind inside. */
static inline void ebb_apbf_locate_in(const ebb_apbf *f, uint64_t *slice,
                                      ebb_hash128 h, uint32_t pos,
                                      ebb_apbf_path path,
                                      ebb_slice_probe *probe)
{
    bool plain = path == EBB_APBF_PATH_PLAIN ||
                 (path == EBB_APBF_PATH_GENERIC && f->block_bits == 0);
    ebb_index_scheme scheme = path == EBB_APBF_PATH_GENERIC ? f->scheme
                                                            : EBB_INDEX_MIXED;
    uint32_t index = path == EBB_APBF_PATH_GENERIC && f->residue_hashing
                         ? ebb_apbf_residue_index(f, pos)
                         : pos;
    uint64_t x = ebb_derive(h, index, scheme);
    if (plain) {
        uint64_t bit = ebb_reduce(x, f->slice_bits);
        probe->at = slice + (bit >> 6);
        probe->aux = UINT64_C(1) << (bit & 63u);
        return;
    }
    uint32_t block_words = path == EBB_APBF_PATH_LINE8 ? 8u : f->block_words;
    probe->at = slice + ebb_reduce(x, f->slice_blocks) * block_words;
    probe->aux = ebb_apbf_scramble(x);
}

static inline void ebb_apbf_locate(const ebb_apbf *f, ebb_hash128 h,
                                   uint32_t pos, ebb_apbf_path path,
                                   ebb_slice_probe *probe)
{
    ebb_apbf_locate_in(f, ebb_apbf_slice(f, pos), h, pos, path, probe);
}

/* The slice test on a located word or block. Blocked: all b parts lie in
 * the one line just loaded, and testing every part without an early exit
 * avoids a mispredicted branch per part. */
static inline bool ebb_apbf_probe_match(const ebb_apbf *f,
                                        const ebb_slice_probe *probe,
                                        ebb_apbf_path path)
{
    const uint64_t *at = probe->at;
    uint64_t all = 1;
    if (path == EBB_APBF_PATH_PLAIN ||
        (path == EBB_APBF_PATH_GENERIC && f->block_bits == 0))
        return ebb_slice_probe_test(probe);
    if (path == EBB_APBF_PATH_LINE8)
        return ebb_apbf_line8_test(at, probe->aux);
    for (uint32_t p = 0; p < f->block_hashes; p++) {
        uint32_t bit = ebb_apbf_part_bit(f, probe->aux, p);
        all &= at[bit >> 6] >> (bit & 63u);
    }
    return all & 1u;
}

static inline void ebb_apbf_probe_set(const ebb_apbf *f,
                                      const ebb_slice_probe *probe,
                                      ebb_apbf_path path)
{
    uint64_t *at = probe->at;
    if (path == EBB_APBF_PATH_PLAIN ||
        (path == EBB_APBF_PATH_GENERIC && f->block_bits == 0)) {
        ebb_slice_probe_set(probe);
        return;
    }
    if (path == EBB_APBF_PATH_LINE8) {
        ebb_apbf_line8_set(at, probe->aux);
        return;
    }
    for (uint32_t p = 0; p < f->block_hashes; p++) {
        uint32_t bit = ebb_apbf_part_bit(f, probe->aux, p);
        at[bit >> 6] |= UINT64_C(1) << (bit & 63u);
    }
}

/* The locate and match functions of each path, on logical slices, in the
 * shape the shared query machinery (core/agebatch.h) takes. */
#define EBB_APBF_PATH_FUNCTIONS(name, path)                                   \
    static inline void ebb_apbf_##name##_locate(                              \
        const void *filter, ebb_hash128 h, uint32_t i, ebb_slice_probe *probe)  \
    {                                                                         \
        const ebb_apbf *f = filter;                                           \
        ebb_apbf_locate(f, h, ebb_apbf_position(f, i), path, probe);          \
    }                                                                         \
    static inline bool ebb_apbf_##name##_match(const void *filter,            \
                                               const ebb_slice_probe *probe)    \
    {                                                                         \
        return ebb_apbf_probe_match(filter, probe, path);                     \
    }

EBB_APBF_PATH_FUNCTIONS(plain, EBB_APBF_PATH_PLAIN)
EBB_APBF_PATH_FUNCTIONS(line8, EBB_APBF_PATH_LINE8)
EBB_APBF_PATH_FUNCTIONS(generic, EBB_APBF_PATH_GENERIC)

#endif
