/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cells.h: a packed array of w-bit counters (w = 1..32), shared by the
 * families that keep small counters per cell: the stable and
 * importance-aware filters, the timing filters, the spectral filters.
 *
 * Layout. The cells form one little-endian bit stream cut into 64-bit
 * words: cell i occupies bits [i*w, i*w + w) of the stream, bit b of the
 * stream being bit b % 64 of word b / 64, and the low bit of the cell being
 * the low bit of its value. With w = 3, cell 21 straddles words 0 and 1:
 *
 *   stream bit   63 62 61 60 ...  2  1  0 | 127 ... 66 65 64
 *   word 0      [c21  |c20    |...|c0     ]
 *   word 1                                 [ ... |c22   |c21 ]
 *                 ^ bit 0 of c21 is bit 63 of word 0,
 *                   bits 1..2 of c21 are bits 0..1 of word 1
 *
 * When w divides 64 (w = 1, 2, 4, 8, 16, 32) no cell straddles a word: a
 * read is one load, one shift and one mask, a write one read-modify-write
 * of one word, and the straddle test below is never true, so the branch
 * predictor retires it for free. Other widths take the same code, which
 * touches the next word only for the cells that straddle (w - 1 of every
 * 64 cells, at most). The layout is the same for every width, so a
 * snapshot's words are the array itself, bit for bit.
 *
 * Words: exactly ceil(count * w / 64) of them; the bits of the last word
 * past count * w are always zero (the reader checks it: a snapshot with
 * other bits there is corrupt).
 *
 * Saturation is explicit and reported. A w-bit counter that wrapped would
 * turn a full cell into an empty one (a false negative for every key on
 * it) or an empty one into a full one; so increments stop at max = 2^w - 1
 * and decrements at 0. The clamp is not silent: increment and decrement
 * return true when part of `by` was lost, because whether a counter ever
 * saturated is a fact the families count (a counting filter that saturated
 * can no longer delete exactly; a stable filter's analysis assumes
 * set-to-max, not overflow) and a caller cannot recover it afterwards.
 *
 * Preconditions of the inline functions: c was initialised and i < count
 * (asserted in debug builds, unchecked otherwise: these run K + P times per
 * item). Nothing here allocates except ebb_cells_init.
 */
#ifndef EBB_CORE_CELLS_H
#define EBB_CORE_CELLS_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "ebb/ebb.h"

#define EBB_CELLS_MAX_WIDTH 32u
/* Widest cells ebb_cells_histogram accepts (its table has 2^w entries). */
#define EBB_CELLS_HISTOGRAM_MAX_WIDTH 16u

typedef struct ebb_cells {
    uint64_t *words;      /* little-endian bit stream: cell i is bits
                             [i*w, i*w + w) */
    uint64_t count;       /* cells */
    uint64_t word_count;  /* 64-bit words allocated (exactly
                             ceil(count*w/64)) */
    uint32_t width;       /* w: bits per cell, 1..32 */
    uint32_t max;         /* 2^w - 1 */
} ebb_cells;

/* Words needed for count cells of width bits: ceil(count * width / 64).
 * 0 when width is not 1..32, count is 0 or count * width overflows. */
uint64_t ebb_cells_word_count(uint64_t count, uint32_t width);

/* Bytes of the words (word_count * 8): what ebb_cells_put writes. */
static inline size_t ebb_cells_bytes(const ebb_cells *c)
{
    return (size_t)c->word_count * sizeof(uint64_t);
}

/* Allocates count zeroed cells of width bits (ebb_mem_alloc_zeroed).
 * Errors, with *cells untouched: EBB_EINVAL when width is not 1..32 or
 * count is 0; EBB_EOVERFLOW when count * width bits or their bytes do not
 * fit; EBB_ENOMEM when the allocator fails. */
ebb_status ebb_cells_init(ebb_cells *cells, uint64_t count, uint32_t width);

/* Releases the words; words is NULL afterwards, so a second call (or a
 * call on a zero-filled struct) is a no-op. count and width are kept. */
void ebb_cells_free(ebb_cells *cells);

/* Sets every cell to 0. */
void ebb_cells_clear(ebb_cells *cells);

/* Where cell i starts: word index and bit offset inside it. */
static inline uint64_t ebb_cells_bit_(const ebb_cells *c, uint64_t i)
{
    assert(c->words != NULL && i < c->count);
    return i * c->width;
}

/* True when a cell starting at bit offset off runs into the next word;
 * never for widths dividing 64. */
static inline bool ebb_cells_straddles_(const ebb_cells *c, unsigned off)
{
    return off + c->width > 64u;
}

static inline uint32_t ebb_cells_read_(const ebb_cells *c, uint64_t bit)
{
    uint64_t word = bit >> 6;
    unsigned off = (unsigned)(bit & 63u);
    uint64_t v = c->words[word] >> off;
    if (ebb_cells_straddles_(c, off))
        v |= c->words[word + 1] << (64u - off);
    return (uint32_t)(v & c->max);
}

/* v <= max. */
static inline void ebb_cells_write_(ebb_cells *c, uint64_t bit, uint32_t v)
{
    uint64_t word = bit >> 6;
    unsigned off = (unsigned)(bit & 63u);
    uint64_t mask = c->max;
    c->words[word] = (c->words[word] & ~(mask << off)) | ((uint64_t)v << off);
    if (ebb_cells_straddles_(c, off)) {
        unsigned low = 64u - off; /* bits of the cell in the first word */
        c->words[word + 1] =
            (c->words[word + 1] & ~(mask >> low)) | ((uint64_t)v >> low);
    }
}

/* The value of cell i. */
static inline uint32_t ebb_cells_get(const ebb_cells *c, uint64_t i)
{
    return ebb_cells_read_(c, ebb_cells_bit_(c, i));
}

/* Cell i = v; a v above max is stored as max. */
static inline void ebb_cells_set(ebb_cells *c, uint64_t i, uint32_t v)
{
    ebb_cells_write_(c, ebb_cells_bit_(c, i), v < c->max ? v : c->max);
}

/* Cell i += by, stopping at max. Returns true when it stopped short, i.e.
 * old + by > max and part of by was lost (reaching max exactly is not a
 * clamp). */
static inline bool ebb_cells_increment(ebb_cells *c, uint64_t i, uint32_t by)
{
    uint64_t bit = ebb_cells_bit_(c, i);
    uint32_t old = ebb_cells_read_(c, bit);
    uint32_t room = c->max - old;
    ebb_cells_write_(c, bit, by < room ? old + by : c->max);
    return by > room;
}

/* Cell i -= by, stopping at 0. Returns true when by > old (part of by was
 * lost). */
static inline bool ebb_cells_decrement(ebb_cells *c, uint64_t i, uint32_t by)
{
    uint64_t bit = ebb_cells_bit_(c, i);
    uint32_t old = ebb_cells_read_(c, bit);
    ebb_cells_write_(c, bit, by < old ? old - by : 0u);
    return by > old;
}

/* Cell i = max(cell i, v), a v above max counting as max. Returns the old
 * value. Writes only when the cell grows. */
static inline uint32_t ebb_cells_max_with(ebb_cells *c, uint64_t i,
                                          uint32_t v)
{
    uint64_t bit = ebb_cells_bit_(c, i);
    uint32_t old = ebb_cells_read_(c, bit);
    if (v > old)
        ebb_cells_write_(c, bit, v < c->max ? v : c->max);
    return old;
}

/* Cells at value 0. */
uint64_t ebb_cells_count_zero(const ebb_cells *c);

/* counts[v] += cells at value v, v = 0..max (counts has max + 1 entries).
 * EBB_EINVAL, counts untouched, when width > 16. */
ebb_status ebb_cells_histogram(const ebb_cells *c, uint64_t *counts);

/* Writes the words as little-endian u64 (ebb_cells_bytes(c) bytes; the
 * writer must have room, as every ebb_put_*). */
void ebb_cells_put(ebb_writer *w, const ebb_cells *c);

/* Reads word_count words into c, which was initialised with the count and
 * width the snapshot declares. False when the reader is short (c
 * unchanged) or when bits past count * width in the last word are not zero
 * (the words were read: the caller frees c and reports EBB_ECORRUPT). */
bool ebb_cells_get_words(ebb_reader *r, ebb_cells *c);

#endif
