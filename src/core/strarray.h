/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strarray.h: the string-array index (issue 15; section 4 of Cohen and
 * Matias, "Spectral Bloom Filters"): m counters, each stored as a
 * prefix-free code (codes.h) of about log2 of its value, back to back in
 * one base array, with O(1) access to the i-th and in-place growth.
 *
 * Shape (strarray.c's essay has the layout, byte by byte in
 * docs/format.md): counters in blocks of `block` counters, each block's
 * start in a coarse offset array (the paper's C^1); within a block an
 * offset every `sub` counters (C^2 and its offset vectors; the paper's
 * lookup table L(S'') is replaced by the table-driven skip of codes.h over
 * at most sub - 1 codes); `slack_bits` free bits at the end of every
 * block, so that a counter whose code grows shifts the rest of its block
 * only, or, when its block's slack is used up, pushes the following
 * blocks up to the nearest block with room (section 4.4). After
 * `rebuild_after` x m blocks pushed (each expansion that pushed past its
 * block counts the blocks it moved) the array is rebuilt with fresh slack
 * everywhere (amortised O(1) per update).
 * sub = block is the scan-only variant (section 4.5; with a large block,
 * the memory reduction of section 4.6).
 *
 * Everything (a header, the coarse and sub-block offsets, the base array)
 * lives in one allocation, which is also the snapshot payload (section
 * 4.7): ebb_strarray_image / ebb_strarray_from_image.
 *
 * Errors: EBB_EINVAL (options out of range, a value above the code's
 * maximum: callers saturate first), EBB_ENOMEM / EBB_EOVERFLOW (nothing
 * changed: a failed growth or rebuild leaves the array as it was),
 * EBB_ECORRUPT (an image whose offsets, lengths or slack do not describe
 * a valid array; refused before any read outside the image).
 */
#ifndef EBB_CORE_STRARRAY_H
#define EBB_CORE_STRARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "core/codes.h"
#include "ebb/ebb.h"

typedef struct ebb_strarray_options {
    ebb_code code;
    uint32_t width;        /* FIXED only: bits per counter, 1..32        */
    uint32_t block;        /* counters per block, a power of two 8..4096;
                              0: the default (strarray.c)                */
    uint32_t sub;          /* counters per sub-block offset, a power of
                              two dividing block; 0: the default; block:
                              scan-only                                  */
    uint32_t slack_bits;   /* free bits per block; 0: the default        */
    double rebuild_after;  /* epsilon': rebuild after this many blocks
                              pushed (each push: the blocks it moved)
                              per counter; 0: the default               */
} ebb_strarray_options;

/* Fills *o with the defaults for this code (and width for FIXED). */
void ebb_strarray_options_init(ebb_code code, uint32_t width,
                               ebb_strarray_options *o);

typedef struct ebb_strarray {
    uint64_t *image;       /* the one allocation: header, offsets, base   */
    size_t image_words;
    uint64_t count;        /* m                                           */
    ebb_strarray_options options;
    /* derived from image and options (strarray.c) */
    uint64_t *coarse;
    uint64_t *base;
    void *sub_offsets;
    uint64_t blocks;
    uint64_t base_words;
    uint64_t pushes;       /* blocks pushed since the last rebuild        */
    uint32_t block_shift;  /* log2(block)                                 */
    uint32_t sub_shift;    /* log2(sub)                                   */
    uint32_t sub_wide;     /* sub-block offsets of 32 bits (else 16)      */
} ebb_strarray;

typedef struct ebb_strarray_stats {
    uint64_t code_bits;    /* N: bits of the codes now                    */
    uint64_t index_bits;   /* coarse and sub-block offsets, header        */
    uint64_t slack_bits;   /* free bits in the base array                  */
    uint64_t expansions;   /* updates whose code grew                      */
    uint64_t pushes;       /* ... that pushed past their block            */
    uint64_t rebuilds;
} ebb_strarray_stats;

/* An array of `count` counters, all 0. */
ebb_status ebb_strarray_init(ebb_strarray *a, uint64_t count,
                             const ebb_strarray_options *o);
void ebb_strarray_free(ebb_strarray *a);

/* Counter i (< count), through the offsets: O(1). */
uint64_t ebb_strarray_get(const ebb_strarray *a, uint64_t i);
/* The same by a scan from the block's start (section 4.5's access). */
uint64_t ebb_strarray_get_scan(const ebb_strarray *a, uint64_t i);

/* Counter i = v (v <= EBB_CODE_MAX_VALUE, FIXED: < 2^width, else
 * EBB_EINVAL). A longer code shifts, pushes or rebuilds as the header
 * says; EBB_ENOMEM / EBB_EOVERFLOW leave the array as it was. */
ebb_status ebb_strarray_set(ebb_strarray *a, uint64_t i, uint64_t v);

/* Lays every counter out again with fresh slack. */
ebb_status ebb_strarray_rebuild(ebb_strarray *a);

/* Counters 0 .. count - 1 = values[0 .. count - 1], in one layout pass
 * with fresh slack (a bulk load: setting counters one by one in index
 * order makes every growth push far, O(m^2 / block) in all). EBB_EINVAL
 * when a value is out of the code's range, EBB_ENOMEM / EBB_EOVERFLOW;
 * on any error the array is as it was. */
ebb_status ebb_strarray_load(ebb_strarray *a, const uint64_t *values);

void ebb_strarray_get_stats(const ebb_strarray *a, ebb_strarray_stats *out);
/* Bytes allocated. */
size_t ebb_strarray_bytes(const ebb_strarray *a);

/* The image (the snapshot payload) and its length in bytes, little-endian
 * 64-bit words. */
const uint64_t *ebb_strarray_image(const ebb_strarray *a, size_t *bytes);
/* Builds an array from an image of `bytes` bytes, validating it whole
 * (header, every offset increasing and within the base array, every code
 * valid and inside its block, slack consistent) before it is used;
 * EBB_ECORRUPT otherwise, *a untouched. */
ebb_status ebb_strarray_from_image(ebb_strarray *a, const void *image,
                                   size_t bytes);

#endif
