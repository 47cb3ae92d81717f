/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cells.c: the parts of the packed cell array (cells.h) that run once per
 * filter or per statistic, not per item.
 */
#include "core/cells.h"

#include <string.h>

#include "core/alloc.h"
#include "core/bits.h"

uint64_t ebb_cells_word_count(uint64_t count, uint32_t width)
{
    if (width == 0 || width > EBB_CELLS_MAX_WIDTH || count == 0)
        return 0;
    if (count > UINT64_MAX / width)
        return 0;
    return ebb_bits_words(count * width);
}

ebb_status ebb_cells_init(ebb_cells *cells, uint64_t count, uint32_t width)
{
    uint64_t words;
    uint64_t *storage;
    if (width == 0 || width > EBB_CELLS_MAX_WIDTH || count == 0)
        return EBB_EINVAL;
    words = ebb_cells_word_count(count, width);
    if (words == 0 || words > SIZE_MAX / sizeof(uint64_t))
        return EBB_EOVERFLOW;
    storage = ebb_mem_alloc_zeroed((size_t)words * sizeof(uint64_t));
    if (storage == NULL)
        return EBB_ENOMEM;
    cells->words = storage;
    cells->count = count;
    cells->word_count = words;
    cells->width = width;
    /* 2^w - 1 without shifting a 32-bit value by 32. */
    cells->max = (uint32_t)((UINT64_C(1) << width) - 1u);
    return EBB_OK;
}

void ebb_cells_free(ebb_cells *cells)
{
    ebb_mem_free(cells->words);
    cells->words = NULL;
}

void ebb_cells_clear(ebb_cells *cells)
{
    memset(cells->words, 0, ebb_cells_bytes(cells));
}

/* A pass over every cell in order, for statistics: the cursor steps by w
 * bits instead of multiplying i * w, and reads a second word only for the
 * cells that straddle. */
typedef struct cell_cursor {
    const uint64_t *word;
    unsigned off;
} cell_cursor;

static inline uint32_t cursor_next(const ebb_cells *c, cell_cursor *at)
{
    uint64_t v = at->word[0] >> at->off;
    if (at->off + c->width > 64u)
        v |= at->word[1] << (64u - at->off);
    at->off += c->width;
    if (at->off >= 64u) {
        at->off -= 64u;
        at->word++;
    }
    return (uint32_t)(v & c->max);
}

uint64_t ebb_cells_count_zero(const ebb_cells *c)
{
    cell_cursor at = {c->words, 0};
    uint64_t zeros = 0;
    for (uint64_t i = 0; i < c->count; i++)
        zeros += cursor_next(c, &at) == 0;
    return zeros;
}

ebb_status ebb_cells_histogram(const ebb_cells *c, uint64_t *counts)
{
    cell_cursor at = {c->words, 0};
    if (c->width > EBB_CELLS_HISTOGRAM_MAX_WIDTH)
        return EBB_EINVAL;
    for (uint64_t i = 0; i < c->count; i++)
        counts[cursor_next(c, &at)]++;
    return EBB_OK;
}

void ebb_cells_put(ebb_writer *w, const ebb_cells *c)
{
    ebb_put_words(w, c->words, (size_t)c->word_count);
}

bool ebb_cells_get_words(ebb_reader *r, ebb_cells *c)
{
    uint64_t tail = ebb_bits_tail_mask(c->count * c->width);
    if (!ebb_get_words(r, c->words, (size_t)c->word_count))
        return false;
    return (c->words[c->word_count - 1] & tail) == 0;
}
