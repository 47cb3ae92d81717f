/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * codec.h: snapshot framing and little-endian field codec.
 *
 * The frame every family shares (docs/format.md, byte by byte):
 *
 *   0      4  magic "EBBS"        16  8  total length N
 *   4      2  format version      24  8  hash seed
 *   6      2  family id           32  P  family parameters
 *   8      4  flags (0)           32+P   payload
 *   12     4  parameter length P  N-8 8  checksum XXH3-64 of bytes [0, N-8)
 *
 * Writers size the snapshot first (ebb_frame_size), then put fields in order,
 * into one buffer (ebb_frame_save) or through a sink in bounded pieces
 * (ebb_frame_stream): the same field list serves both.
 * Readers never touch a byte before checking it is there: every ebb_get_*
 * returns false instead of reading past the end.
 */
#ifndef EBB_CORE_CODEC_H
#define EBB_CORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ebb/ebb.h"

#define EBB_FORMAT_VERSION 1u
#define EBB_FRAME_HEADER 32u
#define EBB_FRAME_TRAILER 8u

enum ebb_family_id {
    EBB_FAMILY_APBF = 1,  /* Age-Partitioned Bloom Filter, plain slices   */
    EBB_FAMILY_APBBF = 2, /* the same with blocked slices                 */
    EBB_FAMILY_TLBF = 3,  /* Time-limited Bloom Filter                    */
    EBB_FAMILY_STABLE = 4, /* Stable and importance-aware Bloom filters   */
    EBB_FAMILY_TIMING = 5, /* Timing and Block Timing Bloom filters       */
    EBB_FAMILY_SPECTRAL = 6, /* Spectral Bloom filters (counts)           */
    EBB_FAMILY_APBF_SLICED = 7 /* APBF, bit-sliced layout                  */
};

/* The state of a streaming save (codec.c). */
typedef struct ebb_stream ebb_stream;

/* Puts fields in order. In memory (ebb_frame_begin) [start, end) is the
 * whole snapshot; streaming (ebb_frame_stream) it is a bounded stage that is
 * handed to the sink whenever the next field does not fit, and stream holds
 * the sink and the running checksum. */
typedef struct ebb_writer {
    uint8_t *at;
    uint8_t *start;
    uint8_t *end;
    ebb_stream *stream; /* NULL in memory */
} ebb_writer;

typedef struct ebb_reader {
    const uint8_t *at;
    const uint8_t *end;
} ebb_reader;

/* A validated frame: where the parameters and payload are. */
typedef struct ebb_frame {
    uint64_t seed;
    ebb_reader params;
    ebb_reader payload;
} ebb_frame;

/* Total snapshot bytes for a parameter block and payload; 0 on overflow. */
size_t ebb_frame_size(size_t param_len, size_t payload_len);

/* A family's fields after the header, written once for both ways of
 * saving: the parameter block and the payload, in order. */
typedef void (*ebb_put_fields)(ebb_writer *w, const void *filter);

/* What the header of a snapshot says, known before its fields are put. */
typedef struct ebb_frame_head {
    uint16_t family;
    uint32_t param_len;
    size_t total; /* ebb_frame_size(param_len, payload bytes) */
    uint64_t seed;
} ebb_frame_head;

/* Writes a whole snapshot into buf (capacity >= head->total, checked by the
 * caller): header, put(w, filter), checksum. */
void ebb_frame_save(const ebb_frame_head *head, ebb_put_fields put,
                    const void *filter, void *buf);

/* The same bytes handed to sink in pieces of at most EBB_SAVE_PIECE_MAX
 * (include/ebb/ebb.h), staged on the stack: nothing is allocated, and the
 * checksum is computed as the pieces go. Returns EBB_OK or the first status
 * other than EBB_OK that the sink returned (it is not called again). */
ebb_status ebb_frame_stream(const ebb_frame_head *head, ebb_put_fields put,
                            const void *filter, ebb_save_sink sink,
                            void *user);

/* Checks the frame of a snapshot of `family` (steps 1-6 of docs/format.md's
 * decoding order, plus flags and parameter length) and locates its parts. */
ebb_status ebb_frame_open(const void *buf, size_t len, uint16_t family,
                          uint32_t param_len, ebb_frame *out);

void ebb_put_u16(ebb_writer *w, uint16_t v);
void ebb_put_u32(ebb_writer *w, uint32_t v);
void ebb_put_u64(ebb_writer *w, uint64_t v);
void ebb_put_words(ebb_writer *w, const uint64_t *words, size_t count);

/* A double as its IEEE-754 bits and back, for fields written with
 * ebb_put_u64 and read with ebb_get_u64 (memcpy: no aliasing, no rounding;
 * a decoder still checks the value it gets, NaN included). */
static inline uint64_t ebb_double_bits(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static inline double ebb_bits_double(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

bool ebb_get_u16(ebb_reader *r, uint16_t *v);
bool ebb_get_u32(ebb_reader *r, uint32_t *v);
bool ebb_get_u64(ebb_reader *r, uint64_t *v);
bool ebb_get_words(ebb_reader *r, uint64_t *words, size_t count);
size_t ebb_reader_left(const ebb_reader *r);

#endif
