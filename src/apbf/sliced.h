/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sliced.h: the APBF's bit-sliced layout (src/apbf/sliced.c), for the
 * files of src/apbf only: creation, clearing, sizing, batches, snapshots.
 * The layout itself is explained at the top of sliced.c.
 */
#ifndef EBB_APBF_SLICED_H
#define EBB_APBF_SLICED_H

#include <stddef.h>
#include <stdint.h>

#include "ebb/apbf.h"

#include "core/codec.h"
#include "core/hash.h"

/* Cells of 128 bits and the masks of every width are handled as one
 * 128-bit integer, core/hash.h's ebb_u128. */
#ifndef __SIZEOF_INT128__
#error "the bit-sliced APBF needs unsigned __int128 (gcc or clang)"
#endif

/* What a query and an add need besides the cells, recomputed at each shift
 * (mask, add_bit, keep) or fixed at creation (window, shifts). It lies at
 * the start of the filter's cache-line block, the cells after it. */
typedef struct ebb_apbf_sliced_plan {
    /* mask[j]: the planes of the slices that hash index j addresses (logical
     * slices i < k + l with (G - i) mod k == j); add_bit[j]: the one of them
     * an add writes (i < k). */
    ebb_u128 mask[EBB_APBF_MAX_K];
    ebb_u128 add_bit[EBB_APBF_MAX_K];
    uint64_t mask64[EBB_APBF_MAX_K]; /* mask, for W <= 64: half the bytes */
    ebb_u128 keep;       /* every plane but the spare                    */
    ebb_u128 window;     /* the low l + 1 bits: where a run may start    */
    uint32_t shifts[8];  /* run-length doubling: t &= t >> shifts[s]    */
    uint32_t shift_count;
} ebb_apbf_sliced_plan;

/* W for a shape: cell_bits when given and valid (16, 32, 64 or 128, at least
 * k + l + 1), the smallest such when 0; 0 when there is none. */
uint32_t ebb_apbf_sliced_cell_bits(const ebb_apbf_params *p);

/* The bytes of a sliced shape's block (plan and cells); EBB_EINVAL for an
 * invalid sliced shape (blocked, k + l + 1 > 128, bad cell_bits),
 * EBB_EOVERFLOW. The rest of the shape is validated by the caller
 * (ebb_apbf_shape_bytes, which calls this). */
ebb_status ebb_apbf_sliced_bytes(const ebb_apbf_params *p, size_t *bytes);

/* Sets up a filter just created by ebb_apbf_create whose block (f->bits,
 * zeroed) is sized by ebb_apbf_sliced_bytes: planes, W, plan, cursor. */
void ebb_apbf_sliced_init(ebb_apbf *f);

/* ebb_apbf_clear for the layout. */
void ebb_apbf_sliced_clear(ebb_apbf *f);

/* The batch forms (src/apbf/batch.c dispatches to these). */
void ebb_apbf_sliced_add_batch(ebb_apbf *f, const ebb_hash128 *hashes,
                               size_t n);
size_t ebb_apbf_sliced_contains_batch(const ebb_apbf *f,
                                      const ebb_hash128 *hashes, size_t n,
                                      bool *out);
size_t ebb_apbf_sliced_check_and_add_batch(ebb_apbf *f,
                                           const ebb_hash128 *hashes,
                                           size_t n, bool *seen);

/* Snapshots of family 7 (docs/format.md), for src/apbf/snapshot.c, which
 * frames and writes them as it does families 1 and 2: the frame's head,
 * and, after the fields every layout has (k .. base), this layout's own
 * (W, the cursor, the cells). */
size_t ebb_apbf_sliced_snapshot_size(const ebb_apbf *f);
ebb_frame_head ebb_apbf_sliced_head(const ebb_apbf *f);
void ebb_apbf_sliced_put_fields(ebb_writer *w, const ebb_apbf *f);
/* Loads a family-7 snapshot; EBB_EFAMILY when buf is of another family. */
ebb_status ebb_apbf_sliced_load(const void *buf, size_t len, ebb_apbf **out);

#endif
