/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * codes.c: prefix-free codes for counters in a bit stream (codes.h).
 *
 * The paper
 * ---------
 * Cohen and Matias, "Spectral Bloom Filters" (SIGMOD 2003), section 4.5:
 * the string-array index keeps each counter as a variable-length code, so
 * a counter C costs about log2 C bits instead of a fixed width. The codes
 * must be prefix-free and readable in sequence (the index finds a group
 * of codes, then scans). The paper uses Elias codes [Eli75] of n + 1
 * (Elias codes start at 1) and sketches "the steps method", a Huffman-like
 * code for small counters ("0" is 0, "10" is 1, "11" means more, an Elias
 * code follows), whose details it omits. ebb completes the sketch below.
 *
 * The stream
 * ----------
 * As in cells.h: bit b is bit b % 64 of word b / 64, and a code's first
 * bit is its lowest. "First bit first" below is the stream order.
 *
 *   FIXED(w)  n's w bits, low bit first (exactly a cells.h cell).
 *   GAMMA     v = n + 1, z = floor(log2 v): z zeros, then v's z + 1 bits
 *             from the most significant (which is the 1 that ends the
 *             zeros): 2z + 1 bits.      0 -> 1   1 -> 010   2 -> 011
 *             3 -> 00100   8 -> 0001001   2^32 - 1 -> 32 zeros, 1, 32 zeros
 *   DELTA     v = n + 1, L = z + 1 (v's bit count, 1..33): GAMMA of L
 *             (our GAMMA of L - 1), then v's low L - 1 bits, most
 *             significant first: L + 2 floor(log2 L) bits, at most 43.
 *             0 -> 1   1 -> 0100   2 -> 0101   3 -> 01100   7 -> 00100000
 *   STEPS     0 -> 0   1 -> 10   n >= 2 -> 11 then GAMMA of n - 2:
 *             2 -> 111   3 -> 11010   4 -> 11011   5 -> 1100100;
 *             n + 1 bits for n < 2, 2 floor(log2(n - 1)) + 3 above, at
 *             most 65 (EBB_CODE_MAX_BITS, the same as GAMMA's).
 *
 * Why each. FIXED is the baseline (and the right code when counters are
 * large and even). GAMMA is the shortest simple universal code for small
 * values: 1 bit for 0, 3 for 1..2, 5 for 3..6. DELTA gives up a bit on
 * v = 2..3 and 8..15 to win on large values (log2 v + 2 log2 log2 v
 * against 2 log2 v: 16 bits for v = 1000 against GAMMA's 19). STEPS is
 * for what a spectral filter holds: at load gamma = kn/m = 0.7 half its
 * counters are 0 and most others 1, so 0 and 1 get the two shortest words
 * (1 and 2 bits, against GAMMA's 1 and 3), and GAMMA, not DELTA, follows
 * "11" because the values that reach the tail are mostly below 32, where
 * GAMMA is never longer than DELTA.
 *
 * Worked example: counters 0, 1, 2, 5 in STEPS are 0 | 10 | 111 | 1100100,
 * 13 bits; the stream's first word is 0x4fa (bits 1, 3..7 and 10 set). In
 * GAMMA they are 1 | 010 | 011 | 00110, 12 bits (word 0x665); test_codes.c
 * checks both streams.
 *
 * The choice, measured
 * --------------------
 * Mean bits per counter; m = 200,000 counters at load kn/m = 0.7 (the
 * items on a counter are Poisson(0.7)), item frequencies Zipf,
 * P(f) ~ f^-a on 1..2^20 with a set for the mean frequency (a = 2.48, 1.98,
 * 1.70; mean 1 is every frequency 1); a fixed-seed scratch simulation,
 * STEPS(K, tail) being K unary words then the tail code of n - K:
 *
 *   mean frequency           1      2      10     100
 *   P(C = 0)               .50    .49    .50    .50
 *   P(C = 1)               .35    .26    .21    .17
 *   P(C = 2)               .12    .11    .10    .08
 *   sum log2(C + 1) / m    0.61   0.78   0.96   1.22   (not a code)
 *   GAMMA                  2.08   2.36   2.68   3.16
 *   DELTA                  2.55   2.75   3.01   3.39
 *   STEPS = (2, GAMMA)     1.73   2.19   2.65   3.27
 *   (2, DELTA) sketch      1.76   2.28   2.74   3.31
 *   (3, DELTA)             1.71   2.23   2.74   3.37
 *   (3, GAMMA)             1.71   2.18   2.69   3.36   (66 bits at 2^32-1)
 *   (4, DELTA)             1.70   2.21   2.76   3.44
 *
 * STEPS = (2, GAMMA) is within 0.03 bits of the best for the paper's
 * "almost sets" (mean frequency 1), within 0.01 of the best at mean 2 and
 * the best at 10, and 0.11 bits behind GAMMA at 100 (use GAMMA there, as the
 * paper's figure 10 also finds for Elias); it saves 17% on GAMMA and 32%
 * on DELTA at mean 1. Longer unary runs (K = 3, 4) gain 0.03 bits at mean
 * 1 only and lose elsewhere; (3, GAMMA) would also pass 65 bits.
 *
 * Decoding
 * --------
 * Every read loads a 64-bit window at the code's position from two words
 * ((w[i] >> s) | (w[i + 1] << (64 - s)), the second load always made: the
 * caller keeps a spare word), so a code of up to 64 bits is one window.
 * A GAMMA prefix is __builtin_ctzll of the window; its z + 1 value bits,
 * most significant first in a low-first stream, are the window shifted by
 * z and bit-reversed (byte swap and three mask steps). Only GAMMA of 2^32
 * (65 bits) takes a second window. DELTA is two such steps in one window;
 * STEPS tests its first two bits (0 and 1 need no more), then GAMMA.
 * A prefix longer than any valid code (more than 32 zeros for GAMMA, more
 * than 5 for DELTA's length, a length above 33) or a value above 2^32 - 1
 * reads as EBB_CODE_MAX_VALUE + 1 with length 0, without reading further.
 *
 * Skipping (the scan of section 4.5, the paper's lookup table L(S'')):
 * GAMMA needs no table: a code's zeros give its length, 2z + 1, so the
 * scan is one ctz a code (skip_gamma; a scratch probe of random lookups
 * on the counters of make bench's string-array rows took 27-43 ns a
 * lookup where the table below took 52-61, in turns in one process, on a
 * shared machine). For DELTA and STEPS (where a
 * ctz loop measured no faster: their lengths need more than the zeros)
 * a 256-entry table maps the next 8 bits to the codes that end within
 * them: how many, and where each ends (4 bits
 * apiece, so the last step of a scan, with fewer codes left than the
 * byte holds, is one lookup too). One window feeds up to 8 lookups; a run
 * of STEPS 0s and 1s advances about 4 codes a lookup. Only a code
 * longer than 8 bits is decoded singly. The tables are static const data
 * written by scripts/gen-code-tables.py (a reference decoder run on each byte
 * from bit 0 until a code needs a bit past 7); test_codes.c checks skip
 * against repeated get from every 16-bit prefix, so each entry is
 * pinned. No state, no allocation: everything here is thread-safe.
 *
 * Speed
 * -----
 * Indicative only (scratch benchmark outside the repository, Release
 * library, 4M Poisson(0.7) counters, a shared 2-core AMD EPYC VM, ranges
 * over 3 runs), in ns per code, with GAMMA's skip still by table (random
 * lookups, in make bench: strarray.c's essay):
 *
 *                 bits/counter  get, sequential  skip, whole  skip, 16 a call
 *   GAMMA            2.08          4.5 - 5.4     0.95 - 1.2     1.2 - 1.4
 *   DELTA            2.54          7.5 - 8.7     1.2 - 1.5      1.6 - 1.7
 *   STEPS            1.73          4.7 - 5.4     0.70 - 0.77    1.0 - 1.1
 *
 * A scan of 15 codes (a sub-block of 16) then costs ~15-20 ns, and
 * a get after it ~5: the table's lookups, a dependent chain of a load, a
 * mask and an add, are what the scan waits on.
 */
#include "codes.h"

#include <assert.h>

#include "core/bits.h"

#define CODE_INVALID (EBB_CODE_MAX_VALUE + 1u)

/* Skip tables (see "Skipping"), indexed by the next 8 stream bits: bits
 * 0..3 = where the last code that ends within them ends, 4..7 = how many
 * codes end within them, 8 + 4i..11 + 4i = where the (i+1)-th ends. The
 * bits used come first: they are on the scan's critical path. */
static const uint64_t delta_skip_table[256] = {
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000002122,
    0x0000000818, 0x0000005125, 0x0000000515, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000062136,
    0x0000000000, 0x0000006126, 0x0000000515, 0x0000432144,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000002122,
    0x0000000000, 0x0000005125, 0x0000000515, 0x0000732147,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000072137,
    0x0000000000, 0x0000006126, 0x0000000515, 0x0005432155,
    0x0000000000, 0x0000000111, 0x0000008428, 0x0000002122,
    0x0000000818, 0x0000065136, 0x0000006526, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000008428, 0x0000062136,
    0x0000000000, 0x0000006126, 0x0000006526, 0x0008432158,
    0x0000000000, 0x0000000111, 0x0000065436, 0x0000002122,
    0x0000000000, 0x0000065136, 0x0000006526, 0x0000832148,
    0x0000000000, 0x0000000111, 0x0000065436, 0x0000072137,
    0x0000000000, 0x0000006126, 0x0000006526, 0x0065432166,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000002122,
    0x0000000818, 0x0000005125, 0x0000000515, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000762147,
    0x0000000000, 0x0000076137, 0x0000000515, 0x0000432144,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000002122,
    0x0000000000, 0x0000005125, 0x0000000515, 0x0000732147,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000072137,
    0x0000000000, 0x0000076137, 0x0000000515, 0x0005432155,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000002122,
    0x0000000818, 0x0000765147, 0x0000076537, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000762147,
    0x0000000000, 0x0000076137, 0x0000076537, 0x0000432144,
    0x0000000000, 0x0000000111, 0x0000765447, 0x0000002122,
    0x0000000000, 0x0000765147, 0x0000076537, 0x0000832148,
    0x0000000000, 0x0000000111, 0x0000765447, 0x0000072137,
    0x0000000000, 0x0000076137, 0x0000076537, 0x0765432177,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000002122,
    0x0000000818, 0x0000005125, 0x0000000515, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000062136,
    0x0000000000, 0x0000006126, 0x0000000515, 0x0000432144,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000002122,
    0x0000000000, 0x0000005125, 0x0000000515, 0x0008732158,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000872148,
    0x0000000000, 0x0000006126, 0x0000000515, 0x0005432155,
    0x0000000000, 0x0000000111, 0x0000008428, 0x0000002122,
    0x0000000818, 0x0000065136, 0x0000006526, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000008428, 0x0000062136,
    0x0000000000, 0x0000006126, 0x0000006526, 0x0008432158,
    0x0000000000, 0x0000000111, 0x0000065436, 0x0000002122,
    0x0000000000, 0x0000065136, 0x0000006526, 0x0000832148,
    0x0000000000, 0x0000000111, 0x0000065436, 0x0000872148,
    0x0000000000, 0x0000006126, 0x0000006526, 0x0065432166,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000002122,
    0x0000000818, 0x0000005125, 0x0000000515, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0008762158,
    0x0000000000, 0x0000876148, 0x0000000515, 0x0000432144,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000002122,
    0x0000000000, 0x0000005125, 0x0000000515, 0x0008732158,
    0x0000000000, 0x0000000111, 0x0000005425, 0x0000872148,
    0x0000000000, 0x0000876148, 0x0000000515, 0x0005432155,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0000002122,
    0x0000000818, 0x0008765158, 0x0000876548, 0x0000032133,
    0x0000000000, 0x0000000111, 0x0000000414, 0x0008762158,
    0x0000000000, 0x0000876148, 0x0000876548, 0x0000432144,
    0x0000000000, 0x0000000111, 0x0008765458, 0x0000002122,
    0x0000000000, 0x0008765158, 0x0000876548, 0x0000832148,
    0x0000000000, 0x0000000111, 0x0008765458, 0x0000872148,
    0x0000000000, 0x0000876148, 0x0000876548, 0x8765432188,
};
static const uint64_t steps_skip_table[256] = {
    0x8765432188, 0x0876543278, 0x0876543178, 0x0000000000,
    0x0876542178, 0x0087654268, 0x0000000111, 0x0087654368,
    0x0876532178, 0x0087653268, 0x0087653168, 0x0000876548,
    0x0000002122, 0x0000000212, 0x0087654168, 0x0008765358,
    0x0876432178, 0x0087643268, 0x0087643168, 0x0000008728,
    0x0087642168, 0x0008764258, 0x0000876148, 0x0008764358,
    0x0000032133, 0x0000003223, 0x0000003123, 0x0000876548,
    0x0087652168, 0x0008765258, 0x0008764158, 0x0000000313,
    0x0875432178, 0x0087543268, 0x0087543168, 0x0000000000,
    0x0087542168, 0x0008754258, 0x0000008128, 0x0008754358,
    0x0087532168, 0x0008753258, 0x0008753158, 0x0000087538,
    0x0000872148, 0x0000087238, 0x0008754158, 0x0000875348,
    0x0000432144, 0x0000043234, 0x0000043134, 0x0000008728,
    0x0000042134, 0x0000004224, 0x0000876148, 0x0000004324,
    0x0087632168, 0x0008763258, 0x0008763158, 0x0000087538,
    0x0008752158, 0x0000875248, 0x0000004124, 0x0000876348,
    0x0865432178, 0x0086543268, 0x0086543168, 0x0000000000,
    0x0086542168, 0x0008654258, 0x0000000111, 0x0008654358,
    0x0086532168, 0x0008653258, 0x0008653158, 0x0000086538,
    0x0000002122, 0x0000000212, 0x0008654158, 0x0000865348,
    0x0086432168, 0x0008643258, 0x0008643158, 0x0000008728,
    0x0008642158, 0x0000864248, 0x0000086138, 0x0000864348,
    0x0000832148, 0x0000083238, 0x0000083138, 0x0000086538,
    0x0008652158, 0x0000865248, 0x0000864148, 0x0000008328,
    0x0005432155, 0x0000543245, 0x0000543145, 0x0000000000,
    0x0000542145, 0x0000054235, 0x0000008128, 0x0000054335,
    0x0000532145, 0x0000053235, 0x0000053135, 0x0000000515,
    0x0000872148, 0x0000087238, 0x0000054135, 0x0000005325,
    0x0087432168, 0x0008743258, 0x0008743158, 0x0000008728,
    0x0008742158, 0x0000874248, 0x0000086138, 0x0000874348,
    0x0008632158, 0x0000863248, 0x0000863148, 0x0000000515,
    0x0000052135, 0x0000005225, 0x0000874148, 0x0000086338,
    0x0765432177, 0x0076543267, 0x0076543167, 0x0000000000,
    0x0076542167, 0x0007654257, 0x0000000111, 0x0007654357,
    0x0076532167, 0x0007653257, 0x0007653157, 0x0000076537,
    0x0000002122, 0x0000000212, 0x0007654157, 0x0000765347,
    0x0076432167, 0x0007643257, 0x0007643157, 0x0000000717,
    0x0007642157, 0x0000764247, 0x0000076137, 0x0000764347,
    0x0000032133, 0x0000003223, 0x0000003123, 0x0000076537,
    0x0007652157, 0x0000765247, 0x0000764147, 0x0000000313,
    0x0075432167, 0x0007543257, 0x0007543157, 0x0000000000,
    0x0007542157, 0x0000754247, 0x0000008128, 0x0000754347,
    0x0007532157, 0x0000753247, 0x0000753147, 0x0000007527,
    0x0000072137, 0x0000007227, 0x0000754147, 0x0000075337,
    0x0000432144, 0x0000043234, 0x0000043134, 0x0000000717,
    0x0000042134, 0x0000004224, 0x0000076137, 0x0000004324,
    0x0007632157, 0x0000763247, 0x0000763147, 0x0000007527,
    0x0000752147, 0x0000075237, 0x0000004124, 0x0000076337,
    0x0065432166, 0x0006543256, 0x0006543156, 0x0000000000,
    0x0006542156, 0x0000654246, 0x0000000111, 0x0000654346,
    0x0006532156, 0x0000653246, 0x0000653146, 0x0000006526,
    0x0000002122, 0x0000000212, 0x0000654146, 0x0000065336,
    0x0006432156, 0x0000643246, 0x0000643146, 0x0000000717,
    0x0000642146, 0x0000064236, 0x0000006126, 0x0000064336,
    0x0000832148, 0x0000083238, 0x0000083138, 0x0000006526,
    0x0000652146, 0x0000065236, 0x0000064136, 0x0000008328,
    0x0085432168, 0x0008543258, 0x0008543158, 0x0000000000,
    0x0008542158, 0x0000854248, 0x0000008128, 0x0000854348,
    0x0008532158, 0x0000853248, 0x0000853148, 0x0000008528,
    0x0000072137, 0x0000007227, 0x0000854148, 0x0000085338,
    0x0007432157, 0x0000743247, 0x0000743147, 0x0000000717,
    0x0000742147, 0x0000074237, 0x0000006126, 0x0000074337,
    0x0000632146, 0x0000063236, 0x0000063136, 0x0000008528,
    0x0000852148, 0x0000085238, 0x0000074137, 0x0000006326,
};

/* 64 stream bits from pos; loads words[pos / 64 + 1] always. */
static inline uint64_t code_window(const uint64_t *words, uint64_t pos)
{
    uint64_t i = pos >> 6;
    unsigned s = (unsigned)(pos & 63u);
    /* (x << 1) << (63 - s) is x << (64 - s), and 0 when s == 0. */
    return (words[i] >> s) | ((words[i + 1] << 1) << (63u - s));
}

/* Writes the low `bits` (0..64) of value at pos (core/bits.h). */
static inline void write_bits(uint64_t *words, uint64_t pos, uint64_t value,
                              uint32_t bits)
{
    ebb_bits_field_put(words, pos, bits, value);
}

static inline uint64_t reverse64(uint64_t x)
{
    x = __builtin_bswap64(x);
    x = ((x >> 4) & UINT64_C(0x0f0f0f0f0f0f0f0f)) |
        ((x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4);
    x = ((x >> 2) & UINT64_C(0x3333333333333333)) |
        ((x & UINT64_C(0x3333333333333333)) << 2);
    x = ((x >> 1) & UINT64_C(0x5555555555555555)) |
        ((x & UINT64_C(0x5555555555555555)) << 1);
    return x;
}

/* The low k (1..64) bits of x in reverse order: turns "most significant
 * first" into the stream's low-first order and back. */
static inline uint64_t reverse_bits(uint64_t x, uint32_t k)
{
    return reverse64(x) >> (64u - k);
}

static inline uint32_t floor_log2(uint64_t v) /* v >= 1 */
{
    return 63u - (uint32_t)__builtin_clzll(v);
}

static inline uint32_t gamma_length(uint64_t n)
{
    return 2u * floor_log2(n + 1u) + 1u;
}

static inline uint32_t delta_length(uint64_t n)
{
    uint32_t l = floor_log2(n + 1u) + 1u;
    return l + 2u * floor_log2(l);
}

static inline uint32_t steps_length(uint64_t n)
{
    return n < 2u ? (uint32_t)n + 1u : 2u + gamma_length(n - 2u);
}

uint32_t ebb_code_length(ebb_code code, uint32_t width, uint64_t n)
{
    assert(n <= EBB_CODE_MAX_VALUE);
    switch (code) {
    case EBB_CODE_FIXED:
        return width;
    case EBB_CODE_GAMMA:
        return gamma_length(n);
    case EBB_CODE_DELTA:
        return delta_length(n);
    case EBB_CODE_STEPS:
        return steps_length(n);
    }
    return 0;
}

static uint32_t put_gamma(uint64_t *words, uint64_t pos, uint64_t n)
{
    uint64_t v = n + 1u;
    uint32_t z = floor_log2(v);
    write_bits(words, pos, 0, z);
    write_bits(words, pos + z, reverse_bits(v, z + 1u), z + 1u);
    return 2u * z + 1u;
}

static uint32_t put_delta(uint64_t *words, uint64_t pos, uint64_t n)
{
    uint64_t v = n + 1u;
    uint32_t l = floor_log2(v) + 1u;
    uint32_t head = put_gamma(words, pos, l - 1u);
    if (l > 1u)
        write_bits(words, pos + head, reverse_bits(v, l - 1u), l - 1u);
    return head + l - 1u;
}

static uint32_t put_steps(uint64_t *words, uint64_t pos, uint64_t n)
{
    if (n < 2u) { /* 0 -> "0", 1 -> "10": n ones, then a zero */
        write_bits(words, pos, n, (uint32_t)n + 1u);
        return (uint32_t)n + 1u;
    }
    write_bits(words, pos, 3u, 2u);
    return 2u + put_gamma(words, pos + 2u, n - 2u);
}

uint32_t ebb_code_put(uint64_t *words, uint64_t pos, ebb_code code,
                      uint32_t width, uint64_t n)
{
    assert(n <= EBB_CODE_MAX_VALUE);
    switch (code) {
    case EBB_CODE_FIXED:
        assert(width >= 1 && width <= 32 && n < (UINT64_C(1) << width));
        write_bits(words, pos, n, width);
        return width;
    case EBB_CODE_GAMMA:
        return put_gamma(words, pos, n);
    case EBB_CODE_DELTA:
        return put_delta(words, pos, n);
    case EBB_CODE_STEPS:
        return put_steps(words, pos, n);
    }
    return 0;
}

/* GAMMA at pos, where w holds the stream's next `valid` (>= 32) bits and
 * zeros above them. */
static inline uint64_t get_gamma(const uint64_t *words, uint64_t pos,
                                 uint64_t w, uint32_t valid, uint32_t *length)
{
    if (w == 0) /* at least `valid` >= 32 zeros... */
        goto invalid;
    uint32_t z = (uint32_t)__builtin_ctzll(w);
    if (z > 32u) /* ...or more than 32: longer than 2^32's code */
        goto invalid;
    uint64_t tail = 2u * z + 1u <= valid ? w >> z
                                         : code_window(words, pos + z);
    uint64_t v = reverse_bits(tail, z + 1u);
    if (v > EBB_CODE_MAX_VALUE + 1u)
        goto invalid;
    *length = 2u * z + 1u;
    return v - 1u;
invalid:
    *length = 0;
    return CODE_INVALID;
}

/* DELTA in the low bits of w (its 43 bits at most are all in w). */
static inline uint64_t get_delta(uint64_t w, uint32_t *length)
{
    if (w == 0)
        goto invalid;
    uint32_t z = (uint32_t)__builtin_ctzll(w);
    if (z > 5u) /* a length of 64 or more */
        goto invalid;
    uint32_t l = (uint32_t)reverse_bits(w >> z, z + 1u);
    if (l > 33u)
        goto invalid;
    uint32_t head = 2u * z + 1u;
    /* v = 1 then its low l - 1 bits: prepend the 1 and reverse l bits
     * (no branch on l = 1, half of a spectral filter's counters). */
    uint64_t v = reverse_bits((w >> head) << 1 | 1u, l);
    if (v > EBB_CODE_MAX_VALUE + 1u)
        goto invalid;
    *length = head + l - 1u;
    return v - 1u;
invalid:
    *length = 0;
    return CODE_INVALID;
}

static inline uint64_t get_steps(const uint64_t *words, uint64_t pos,
                                 uint64_t w, uint32_t *length)
{
    if ((w & 3u) != 3u) { /* "0" or "10" */
        uint32_t one = (uint32_t)(w & 1u);
        *length = one + 1u;
        return one;
    }
    uint64_t t = get_gamma(words, pos + 2u, w >> 2, 62u, length);
    if (*length == 0 || t > EBB_CODE_MAX_VALUE - 2u) {
        *length = 0;
        return CODE_INVALID;
    }
    *length += 2u;
    return t + 2u;
}

/* One code at pos, w being the window there. Inlined with a constant
 * `code` by the callers below, so the switch folds away. */
static inline uint64_t get_one(const uint64_t *words, uint64_t pos,
                               uint64_t w, ebb_code code, uint32_t width,
                               uint32_t *length)
{
    switch (code) {
    case EBB_CODE_FIXED:
        *length = width;
        return w & ebb_low_mask(width);
    case EBB_CODE_GAMMA:
        return get_gamma(words, pos, w, 64u, length);
    case EBB_CODE_DELTA:
        return get_delta(w, length);
    case EBB_CODE_STEPS:
        return get_steps(words, pos, w, length);
    }
    *length = 0;
    return CODE_INVALID;
}

uint64_t ebb_code_get(const uint64_t *words, uint64_t pos, ebb_code code,
                      uint32_t width, uint32_t *length)
{
    assert(code != EBB_CODE_FIXED || (width >= 1 && width <= 32));
    uint32_t len;
    uint64_t n = get_one(words, pos, code_window(words, pos), code, width,
                         &len);
    if (length)
        *length = len;
    return n;
}

/* The scan: table lookups while a byte holds whole codes, else one code
 * decoded; `code` is a constant at each call. */
static inline uint64_t skip_table(const uint64_t *words, uint64_t pos,
                                  ebb_code code, const uint64_t *table,
                                  uint64_t n)
{
    while (n > 0) {
        uint64_t w = code_window(words, pos);
        uint32_t used = 0;
        while (used <= 56u) {
            uint64_t e = table[(w >> used) & 255u];
            uint32_t count = (uint32_t)(e >> 4) & 15u;
            if (count == 0)
                break;
            if (count >= n) { /* the last codes: where the n-th ends */
                used += (uint32_t)(e >> (4u * (n + 1u))) & 15u;
                n = 0;
                break;
            }
            used += (uint32_t)e & 15u;
            n -= count;
        }
        if (used > 0) {
            pos += used;
            continue;
        }
        uint32_t len;
        get_one(words, pos, w, code, 0, &len);
        if (len == 0)
            return UINT64_MAX;
        pos += len;
        n--;
    }
    return pos;
}

/* GAMMA's scan: a code's zeros give its length (2z + 1), so one ctz a code
 * in a window refilled once 32 bits are used (a code's zeros, at most 31
 * here, then lie inside it). A chain of a shift, a ctz and an add a code,
 * with no table load: measured 1.5x faster than the byte table on random
 * reads (strarray.c's essay). 32 zeros or more (2^32 - 1, or an invalid
 * code) take get_gamma and its checks. */
static inline uint64_t skip_gamma(const uint64_t *words, uint64_t pos,
                                  uint64_t n)
{
    uint64_t w = code_window(words, pos);
    uint32_t p = 0;
    for (; n > 0; n--) {
        if (p >= 32u) {
            pos += p;
            p = 0;
            w = code_window(words, pos);
        }
        uint64_t x = w >> p;
        uint32_t z = x != 0 ? (uint32_t)__builtin_ctzll(x) : 64u;
        if (z >= 32u) {
            uint32_t len;
            pos += p;
            p = 0;
            (void)get_gamma(words, pos, code_window(words, pos), 64u, &len);
            if (len == 0)
                return UINT64_MAX;
            pos += len;
            w = code_window(words, pos);
            continue;
        }
        p += 2u * z + 1u;
    }
    return pos + p;
}

uint64_t ebb_code_skip(const uint64_t *words, uint64_t pos, ebb_code code,
                       uint32_t width, uint64_t n)
{
    switch (code) {
    case EBB_CODE_FIXED:
        assert(width >= 1 && width <= 32);
        return pos + n * width;
    case EBB_CODE_GAMMA:
        return skip_gamma(words, pos, n);
    case EBB_CODE_DELTA:
        return skip_table(words, pos, EBB_CODE_DELTA, delta_skip_table, n);
    case EBB_CODE_STEPS:
        return skip_table(words, pos, EBB_CODE_STEPS, steps_skip_table, n);
    }
    return UINT64_MAX;
}

const char *ebb_code_name(ebb_code code)
{
    switch (code) {
    case EBB_CODE_FIXED:
        return "fixed";
    case EBB_CODE_GAMMA:
        return "gamma";
    case EBB_CODE_DELTA:
        return "delta";
    case EBB_CODE_STEPS:
        return "steps";
    }
    return NULL;
}
