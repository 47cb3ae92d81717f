/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * codes.h: prefix-free codes for counters in a bit stream (issue 15;
 * section 4.5 of Cohen and Matias, "Spectral Bloom Filters"): the base
 * array of the string-array index (strarray.h) holds one code per counter.
 *
 * The stream is the layout of cells.h: 64-bit words, bit b of the stream
 * is bit b % 64 of word b / 64; a code's first bit is its lowest. Codes
 * (n >= 0 is the counter's value):
 *
 *   FIXED  `width` bits of n (1..32), n < 2^width.
 *   GAMMA  Elias gamma of n + 1 (the paper counts n + 1, since Elias codes
 *          start at 1): floor(log2(n + 1)) zeros, then n + 1's bits from
 *          the most significant; 2 floor(log2(n + 1)) + 1 bits.
 *   DELTA  Elias delta of n + 1: gamma of L = floor(log2(n + 1)) + 1, then
 *          n + 1's low L - 1 bits, most significant first.
 *   STEPS  ebb's code for small counters (the paper only sketches one):
 *          defined in codes.c's opening comment and docs/format.md, bit by
 *          bit; 1 bit for 0 and 2 bits for 1 at most.
 *
 * Values: every code takes n in 0..EBB_CODE_MAX_VALUE (FIXED: < 2^width);
 * callers saturate above it. Preconditions (unchecked in the inline
 * paths, asserted in debug builds): the words hold the bits read or
 * written, plus one spare word after the last code (reads may load it).
 * Nothing here allocates.
 */
#ifndef EBB_CORE_CODES_H
#define EBB_CORE_CODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EBB_CODE_MAX_VALUE UINT64_C(0xffffffff) /* 2^32 - 1 */
/* The longest code of a value up to EBB_CODE_MAX_VALUE, any code: gamma of
 * 2^32 takes 65 bits. */
#define EBB_CODE_MAX_BITS 65u

typedef enum ebb_code {
    EBB_CODE_FIXED = 0,
    EBB_CODE_GAMMA = 1,
    EBB_CODE_DELTA = 2,
    EBB_CODE_STEPS = 3
} ebb_code;

/* Bits of n's code (FIXED: width). n <= EBB_CODE_MAX_VALUE. */
uint32_t ebb_code_length(ebb_code code, uint32_t width, uint64_t n);

/* Writes n's code at bit `pos`; returns its length. The bits after it are
 * left as they were. */
uint32_t ebb_code_put(uint64_t *words, uint64_t pos, ebb_code code,
                      uint32_t width, uint64_t n);

/* Reads the code at bit `pos`; *length (may be NULL) = its bits. A code
 * that is not valid (e.g. a gamma prefix of more than 32 zeros) reads as
 * EBB_CODE_MAX_VALUE + 1 with *length 0: callers validating a snapshot
 * check for it. */
uint64_t ebb_code_get(const uint64_t *words, uint64_t pos, ebb_code code,
                      uint32_t width, uint32_t *length);

/* The position after the n codes starting at `pos` (the sequential scan
 * of section 4.5); table-driven where the code allows, several short
 * codes a step. UINT64_MAX when an invalid code is met. */
uint64_t ebb_code_skip(const uint64_t *words, uint64_t pos, ebb_code code,
                       uint32_t width, uint64_t n);

/* "fixed", "gamma", "delta", "steps"; NULL for others. */
const char *ebb_code_name(ebb_code code);

#endif
