/*
 * apbf_internal.h: the APBF handle, shared by the files of src/apbf only.
 */
#ifndef EBB_APBF_INTERNAL_H
#define EBB_APBF_INTERNAL_H

#include "core/hash.h"
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
    uint64_t *bits;          /* slices * slice_words, cache-line aligned   */
    void *block;             /* what to free for bits                       */
    size_t block_bytes;      /* bytes of that block                         */
};

/* Validates a shape (EBB_EINVAL / EBB_EOVERFLOW) and computes the bytes of
 * its bit arrays. */
ebb_status ebb_apbf_shape_bytes(const ebb_apbf_params *p, size_t *bit_bytes);

/* g = floor(m ln 2 / k): the insertions that bring a slice written for k
 * generations to fill ratio 1/2. */
uint64_t ebb_apbf_generation_for(uint64_t slice_bits, uint32_t k);

/* Test hook: chooses the index derivation (EBB_INDEX_MIXED by default).
 * Changing it on a filter that holds items loses them. */
void ebb_apbf_set_index_scheme(ebb_apbf *filter, ebb_index_scheme scheme);

#endif
