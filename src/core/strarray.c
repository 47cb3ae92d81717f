/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strarray.c: the string-array index (issue 15).
 *
 * The paper
 * ---------
 * Cohen and Matias, "Spectral Bloom Filters" (SIGMOD 2003), section 4: m
 * counters C_i kept in about log C_i bits each, back to back in a base
 * array of N bits, with the i-th found in O(1) through a string-array
 * index (4.3): a coarse offset array C^1 every log N items, below it
 * level-2 coarse offsets C^2 every log log N items, below those offset
 * vectors or a global lookup table L(S''). Updates (4.4) take slack bits
 * placed every 1/epsilon items: a counter that grows pushes its
 * neighbours up to the nearest free slack, and after epsilon' m
 * expansions the array is laid out again. 4.5 drops the last level for a
 * sequential scan of prefix-free codes (Elias, or "steps" for small
 * counters); 4.6 thins every level for an index of o(N / (log log N)^c);
 * 4.7 keeps everything in one block that is itself the message.
 *
 * What is kept, and what is not
 * -----------------------------
 * Two levels, as 4.5 and 4.6 suggest for real sizes: C^1 (`coarse`) holds
 * the bit position of every block of `block` counters; C^2 (`sub`) holds,
 * for every `sub` counters inside a block, the offset from the block's
 * start. The third level (offset vectors or L(S'')) is replaced by the
 * table-driven skip of codes.h (ebb_code_skip), which steps over several
 * short codes per table look-up: the paper's lookup table, indexed by the
 * code bits themselves rather than by a separate length string L(S'').
 * sub = block is 4.5's scan-only variant; a large block with sub = block
 * is 4.6's memory reduction (the index then costs 64 / block bits per
 * counter).
 *
 * Slack is per block, at its end, rather than every 1/epsilon counters:
 * a code that grows shifts the rest of its block only (at most `block`
 * codes, a few words), and the sub offsets that follow it move by the
 * same amount. When the block's slack is used up, the following blocks
 * are shifted as a whole up to the nearest block with room (4.4's push),
 * whose coarse offsets move: block b's region grows, block b' gives up
 * the bits. Pushes are counted, each weighted by the blocks it moved;
 * after rebuild_after x m of them (4.4's epsilon' m) the array is laid
 * out again with fresh slack in every block, in a new allocation. (With
 * random updates a push moves O(1) blocks, Lemma 8; counters growing in
 * index order push ever farther, and the weight makes rebuilds bound that
 * work.) When no block up to the end has room, the
 * set itself rebuilds (the new layout has room by construction). A code
 * that shrinks gives its bits back to its own block's slack.
 *
 * Invariants (from_image checks each one)
 * ---------------------------------------
 *  - coarse[0] = 0, coarse[b] <= coarse[b + 1], coarse[blocks] = the bits
 *    of the base array in use; base words = ceil(coarse[blocks] / 64) + 1
 *    (the spare word codes.h's reads may load).
 *  - block b's region is [coarse[b], coarse[b + 1]): its counters' codes
 *    back to back from the start, then slack, all zero bits; region size
 *    <= block x (longest code) + slack_bits (a push makes a region exactly
 *    as long as its codes; a rebuild gives it codes + slack_bits).
 *  - sub offset j (1 <= j < block / sub) of block b is the offset from
 *    coarse[b] of counter b x block + j x sub, or of the codes' end when
 *    the last block has no such counter; offset 0 is not stored.
 *  - every code is valid (FIXED: below 2^width) and inside its region;
 *    bits past coarse[blocks] are zero.
 *
 * Layout: one allocation, 64-bit little-endian words (docs/format.md)
 * ----------------------------------------------------------------------
 *
 *    word 0        9            9 + blocks + 1       ... + sub words
 *    +-----------+--------------+-------------------+------------------+
 *    | header    | coarse u64   | sub offsets       | base array       |
 *    | 9 words   | blocks + 1   | u16 (or u32) x    | base words,      |
 *    |           | bit offsets  | blocks x          | last one spare   |
 *    |           |              | (block/sub - 1),  |                  |
 *    |           |              | padded to a word  |                  |
 *    +-----------+--------------+-------------------+------------------+
 *
 *    base:  | block 0: c0 c1 c2 ... c511 | slack | block 1: c512 ... |
 *           ^ coarse[0] = 0               ^ end   ^ coarse[1]
 *
 * Coarse offsets are 64-bit: a 32-bit offset would stop the base array at
 * 512 MiB (4.3 G counters of 1 bit, or fewer), and at the default block
 * of 512 a coarse offset costs 0.125 bit per counter; halving it would
 * save 0.0625 bit per counter (about 2% of N at average frequency 10) at
 * the price of a size limit. Sub offsets are 16 bits when block x longest
 * code < 2^16 (block <= 512 for the variable codes, whose longest code is
 * 65 bits), else 32 bits: the paper's "as narrow as the block allows".
 *
 * Access
 * ------
 * get(i): b = i >> log2 block, r = i mod block, j = r >> log2 sub;
 * pos = coarse[b] + (j ? sub[b][j] : 0); skip r mod sub codes
 * (ebb_code_skip); decode one. Three dependent loads (coarse, sub, base)
 * and a skip of at most sub - 1 codes; FIXED codes skip by arithmetic.
 * get_scan(i): skip r codes from coarse[b] (4.5's access).
 *
 * Worked example: block 8, sub 4, slack 4, GAMMA (n + 1: 0 -> "1",
 * 1 -> "010", 2 -> "011", 3 -> "00100"), counters 0 1 0 2 | 0 0 0 3 in
 * block 0: codes 1 + 3 + 1 + 3 | 1 + 1 + 1 + 5 = 16 bits, sub[0][1] = 8,
 * slack 4, coarse[1] = 20. Setting counter 1 to 3 (3 -> 5 bits, +2):
 * counters 2..7 shift right by 2, sub[0][1] = 10, slack 2. Setting
 * counter 7 to 7 (5 -> 7 bits, +2) then uses up the slack; setting
 * counter 0 to 1 (+2 bits) pushes block 1 right by 2 (its own slack, 4
 * bits, has room: it is the nearest block that does), coarse[1] = 22.
 *
 * Costs and defaults
 * ------------------
 * Per counter, the index costs 64 / block (coarse) + w x (block / sub -
 * 1) / block (sub offsets of w = 16 bits) + 576 / m (the header), and
 * the slack slack_bits / block. The bar is index + slack <= 0.5 N
 * at average frequency 10. test_strarray simulates a spectral filter
 * there: 10^5 keys with Zipf counts (skew 1) of mean 10, k = 5,
 * m = n k / ln 2 = 721,348 counters, half of them 0. The codes take N / m
 * = 2.78 (GAMMA), 3.09 (DELTA), 2.79 (STEPS) bits per counter, so the
 * budget is ~1.39 bits per counter. The defaults for the variable codes,
 * block 512, sub 16, slack 64:
 *     coarse   64 / 512              = 0.125 bit per counter
 *     sub      16 x 31 / 512         = 0.969
 *     slack    64 / 512              = 0.125
 *     total                          = 1.219 (measured 0.44 N GAMMA,
 *                                             0.40 N DELTA, 0.44 N STEPS)
 * Block 256 (coarse 0.25, sub 0.94, slack 0.25: 1.44 bits) misses the bar
 * (0.525 N for GAMMA); sub 32 would halve the sub offsets but double the
 * skip; sub 8 costs 2.1 bits per counter (0.81 N). Sub offsets are the
 * index's main cost: 16 bits per sub-block is the price of O(1) access
 * without the paper's third level.
 * Lookup, measured by `make bench` (bench/strarray.c and
 * bench/sdsl_peer.cpp; rerun alone with `build-bench/bench/ebb-bench
 * --quick` and `build-bench/bench/ebb-bench-sdsl`; docs/bench.md has the
 * rows). Release, -march=native, a shared 2-core AMD EPYC VM at load ~4:
 * the ratios move by 2x between runs. The m = 1,442,696 counters of the
 * storage test's generator (mean frequency 10), 2^21 random reads,
 * median of 3, beside a 32-bit fixed-width read (cells.h) of the same
 * counters in the same run; one run, then the range over three:
 *
 *               bits/counter  independent reads     dependent reads
 *   fixed 32-bit   32.000     2.9 ns                18 ns (18 - 46)
 *   GAMMA           3.961     31 ns, 10.7x (11-21)  43 ns, 2.4x (1.0-2.4)
 *   DELTA           4.277     47 ns, 16.2x (16-29)  56 ns, 3.1x (1.9-3.1)
 *   STEPS           3.951     43 ns, 14.9x (15-28)  59 ns, 3.3x (1.5-3.3)
 *
 * Independent reads (the next index never waits for a value, as a
 * filter's k counters) overlap in the core: the fixed read is one load
 * with no branch. A lookup is a chain (coarse and sub offset, then the
 * base word, then the skip, then the decode) whose skip ends on a
 * mispredicted branch, so lookups hardly overlap: their time is their
 * latency. Dependent reads (the next index takes the value's low bit)
 * expose every read's latency, and there the lookup costs 1-3x the fixed
 * read, whose 5.8 MB miss L2 where the compact 0.7 MB do not. The issue's
 * 3x bar holds for dependent reads only, and not in every run. Where the
 * time goes (scratch probes of the same loop): ~10 ns with no code to
 * skip, ~26 ns for the 7.5 codes skipped on average (15 at most) at
 * sub = 16, before GAMMA's skip became a ctz a code (codes.c; 1.3-2x
 * faster than its byte table). Tried in scratch probes, and not kept: a
 * decode and skip with no branch on the codes' bits (4 table steps, then
 * the loop for what is left: 53-66 ns against the loop's 36), a
 * branch-free STEPS decode and an inlined read path (no change beyond
 * the noise), a batch of 32 positions prefetched before their skips
 * (~1.3x, and not a read of one counter). sub = 8 would halve the skip
 * but misses the storage bar (2.1 bits per counter, above).
 * sdsl-lite's dac_vector<4> (same counters, same reads, same process)
 * takes 5.5 ns independent and 18 ns dependent at 5.27 bits per counter
 * (and has no updates); its vlc_vector of gamma codes with a pointer
 * every 16, this index's read path without updates, 104-107 ns. The
 * issue's "within 2x of dac_vector" is not met (8-13x independent,
 * 2.5-4.4x dependent): dac_vector reads a fixed-width chunk per counter
 * directly, which a layout of back-to-back codes cannot; with no code to
 * skip this read path already costs ~10 ns.
 * Build (ebb_strarray_load, one pass): 12-23 ns per counter (dac_vector
 * 7-10 ns, vlc_vector 11-17 ns).
 * Increment (get, then set v + 1, of random counters; m / 4 of them from
 * a loaded array, so every size sees the same growth; pushes and
 * rebuilds in the time), m = 10^3 .. 10^7, ns: GAMMA 104-460, DELTA
 * 204-654, STEPS 252-561 in the run above, the slowest size 4.4x, 3.2x,
 * 2.2x the fastest (2.4x, 1.8x, 1.6x in a run a minute earlier): the
 * 10^3 array stays in L1, the 10^7 one (5 MB) in L3 at best, and a
 * growing code moves the rest of its block (~1,500 bits) and its sub
 * offsets. 32-bit fixed-width counters spread 12x over the same sizes
 * (2 to 25 ns).
 * 64 slack bits absorb ~30 gamma doublings per block before a push.
 * FIXED codes never change length and skip by arithmetic: their default
 * is block 4096, sub = block, slack 1 (index and slack ~0.016 bit per
 * counter).
 * rebuild_after defaults to 0.05: a rebuild (O(m)) after 0.05 m pushes,
 * i.e. 20 counters laid out again per push, amortised. A rebuild copies
 * each block's codes as bits and its sub offsets as they are (codes are
 * canonical: the copy is what a decode and an encode would write); only
 * the block of the counter a set changes is decoded and encoded again.
 * At 10^7 counters that takes 5-10 ms against the 400 ms of decoding and
 * encoding every counter twice, which was half the time of an increment
 * there (320 of 680 ns).
 *
 * Failure: the only allocation is a rebuild's (or a bulk load's) new
 * image; on failure the old one is untouched and the set, rebuild or load
 * returns EBB_ENOMEM. (A layout reads one block's values at a time into
 * 32 KiB of stack.)
 * Counters that grow in index order, not at random, push ever farther:
 * setting 144,000 counters one by one in order takes 2.2 s against
 * ~0.15 s at random (1.44 M: minutes); ebb_strarray_load lays such a
 * batch out in one pass. The
 * periodic rebuild after rebuild_after x m pushes follows a set that has
 * already succeeded: if it cannot allocate, the set still returns EBB_OK
 * and the next push tries again. The image is read on little-endian
 * machines only (as the rest of ebb's snapshots).
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/bits.h"
#include "core/strarray.h"

#define HEADER_WORDS 9u
#define MAGIC UINT64_C(0x3141525453626265) /* "ebbSTRA1" little-endian */
#define MAX_COUNT (UINT64_C(1) << 40)
#define MAX_SLACK (UINT32_C(1) << 20)
#define MAX_REBUILD_AFTER 1e6
#define SUB16_LIMIT 65536u

/* Header words. */
enum {
    H_MAGIC = 0,
    H_COUNT = 1,
    H_SHAPE = 2, /* code | width << 8 | block_shift << 16 | sub_shift << 24 |
                    slack_bits << 32 */
    H_REBUILD_AFTER = 3,
    H_BASE_WORDS = 4,
    H_EXPANSIONS = 5,
    H_PUSHES = 6,      /* in all */
    H_PUSHES_SINCE = 7,
    H_REBUILDS = 8
};

/* ------------------------------------------------------------------------ */
/* Bits                                                                     */
/* ------------------------------------------------------------------------ */

/* n (1..64) bits at pos, and their writing (core/bits.h). */
static inline uint64_t bits_get(const uint64_t *w, uint64_t pos, uint32_t n)
{
    return ebb_bits_field_get(w, pos, n);
}

static inline void bits_put(uint64_t *w, uint64_t pos, uint32_t n,
                            uint64_t v)
{
    ebb_bits_field_put(w, pos, n, v);
}

/* Copies len bits from src to dst, the ranges may overlap (memmove of
 * bits): forwards when moving left, backwards when moving right, 64 bits
 * a step, so no chunk is read after it was overwritten. */
static void bits_move(uint64_t *w, uint64_t dst, uint64_t src, uint64_t len)
{
    if (dst == src || len == 0)
        return;
    if (dst < src) {
        for (uint64_t off = 0; off < len; off += 64u) {
            uint32_t n = len - off < 64u ? (uint32_t)(len - off) : 64u;
            bits_put(w, dst + off, n, bits_get(w, src + off, n));
        }
        return;
    }
    uint64_t left = len;
    while (left > 0) {
        uint32_t n = left < 64u ? (uint32_t)left : 64u;
        left -= n;
        bits_put(w, dst + left, n, bits_get(w, src + left, n));
    }
}

static void bits_zero(uint64_t *w, uint64_t pos, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += 64u) {
        uint32_t n = len - off < 64u ? (uint32_t)(len - off) : 64u;
        bits_put(w, pos + off, n, 0);
    }
}

/* True when the bits [pos, pos + len) are all zero. */
static bool bits_clear(const uint64_t *w, uint64_t pos, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += 64u) {
        uint32_t n = len - off < 64u ? (uint32_t)(len - off) : 64u;
        if (bits_get(w, pos + off, n) != 0)
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Shape                                                                    */
/* ------------------------------------------------------------------------ */

static uint32_t log2_exact(uint32_t v) /* v a power of two */
{
    uint32_t s = 0;
    while ((UINT32_C(1) << s) < v)
        s++;
    return s;
}

static bool power_of_two(uint32_t v)
{
    return v != 0 && (v & (v - 1u)) == 0;
}

static uint32_t longest_code(ebb_code code, uint32_t width)
{
    return code == EBB_CODE_FIXED ? width : EBB_CODE_MAX_BITS;
}

void ebb_strarray_options_init(ebb_code code, uint32_t width,
                               ebb_strarray_options *o)
{
    bool fixed = code == EBB_CODE_FIXED;
    *o = (ebb_strarray_options){
        .code = code,
        .width = fixed ? width : 0,
        .block = fixed ? 4096u : 512u,
        .sub = fixed ? 4096u : 16u,
        .slack_bits = fixed ? 1u : 64u,
        .rebuild_after = 0.05,
    };
}

/* The options with defaults filled in, checked; false when out of range. */
static bool options_resolve(const ebb_strarray_options *in,
                            ebb_strarray_options *out)
{
    if ((unsigned)in->code > (unsigned)EBB_CODE_STEPS)
        return false;
    if (in->code == EBB_CODE_FIXED && (in->width < 1 || in->width > 32))
        return false;
    ebb_strarray_options d;
    ebb_strarray_options_init(in->code, in->width, &d);
    d.block = in->block ? in->block : d.block;
    d.sub = in->sub ? in->sub : (d.sub < d.block ? d.sub : d.block);
    d.slack_bits = in->slack_bits ? in->slack_bits : d.slack_bits;
    d.rebuild_after = in->rebuild_after != 0 ? in->rebuild_after
                                             : d.rebuild_after;
    if (!power_of_two(d.block) || d.block < 8u || d.block > 4096u)
        return false;
    if (!power_of_two(d.sub) || d.sub > d.block)
        return false;
    if (d.slack_bits > MAX_SLACK)
        return false;
    if (!(d.rebuild_after > 0 && d.rebuild_after <= MAX_REBUILD_AFTER))
        return false;
    *out = d;
    return true;
}

/* Derived sizes of an array of `count` counters with options o. */
typedef struct shape {
    uint64_t blocks;
    uint64_t subs_per_block; /* stored: block / sub - 1 */
    uint64_t sub_words;
    bool sub_wide;
} shape;

static shape shape_of(uint64_t count, const ebb_strarray_options *o)
{
    shape s;
    s.blocks = (count + o->block - 1u) / o->block;
    s.subs_per_block = o->block / o->sub - 1u;
    s.sub_wide = (uint64_t)o->block * longest_code(o->code, o->width) >=
                 SUB16_LIMIT;
    uint64_t bytes = s.blocks * s.subs_per_block * (s.sub_wide ? 4u : 2u);
    s.sub_words = (bytes + 7u) / 8u;
    return s;
}

/* Points a's derived fields into its image (header already written). */
static void attach(ebb_strarray *a, uint64_t *image, size_t words,
                   uint64_t count, const ebb_strarray_options *o)
{
    shape s = shape_of(count, o);
    a->image = image;
    a->image_words = words;
    a->count = count;
    a->options = *o;
    a->blocks = s.blocks;
    a->coarse = image + HEADER_WORDS;
    a->sub_offsets = image + HEADER_WORDS + s.blocks + 1u;
    a->base = image + HEADER_WORDS + s.blocks + 1u + s.sub_words;
    a->base_words = image[H_BASE_WORDS];
    a->pushes = image[H_PUSHES_SINCE];
    a->block_shift = log2_exact(o->block);
    a->sub_shift = log2_exact(o->sub);
    a->sub_wide = s.sub_wide;
}

static uint64_t counters_in(const ebb_strarray *a, uint64_t b)
{
    uint64_t first = b << a->block_shift;
    uint64_t left = a->count - first;
    return left < a->options.block ? left : a->options.block;
}

/* Sub offset j (1 .. block/sub - 1) of block b. */
static inline uint64_t sub_get(const ebb_strarray *a, uint64_t b, uint64_t j)
{
    uint64_t k = b * ((a->options.block >> a->sub_shift) - 1u) + j - 1u;
    if (a->sub_wide)
        return ((const uint32_t *)a->sub_offsets)[k];
    return ((const uint16_t *)a->sub_offsets)[k];
}

static inline void sub_set(ebb_strarray *a, uint64_t b, uint64_t j,
                           uint64_t v)
{
    uint64_t k = b * ((a->options.block >> a->sub_shift) - 1u) + j - 1u;
    if (a->sub_wide)
        ((uint32_t *)a->sub_offsets)[k] = (uint32_t)v;
    else
        ((uint16_t *)a->sub_offsets)[k] = (uint16_t)v;
}

/* ------------------------------------------------------------------------ */
/* Access                                                                   */
/* ------------------------------------------------------------------------ */

/* Bit position of counter i's code. */
static inline uint64_t position(const ebb_strarray *a, uint64_t i)
{
    const ebb_strarray_options *o = &a->options;
    uint64_t b = i >> a->block_shift;
    uint64_t r = i & (o->block - 1u);
    uint64_t pos = a->coarse[b];
    if (o->code == EBB_CODE_FIXED)
        return pos + r * o->width;
    uint64_t j = r >> a->sub_shift;
    if (j != 0)
        pos += sub_get(a, b, j);
    uint64_t k = r & (o->sub - 1u);
    if (k != 0)
        pos = ebb_code_skip(a->base, pos, o->code, o->width, k);
    return pos;
}

uint64_t ebb_strarray_get(const ebb_strarray *a, uint64_t i)
{
    return ebb_code_get(a->base, position(a, i), a->options.code,
                        a->options.width, NULL);
}

uint64_t ebb_strarray_get_scan(const ebb_strarray *a, uint64_t i)
{
    uint64_t b = i >> a->block_shift;
    uint64_t r = i & (a->options.block - 1u);
    uint64_t pos = a->coarse[b];
    if (r != 0)
        pos = ebb_code_skip(a->base, pos, a->options.code, a->options.width,
                            r);
    return ebb_code_get(a->base, pos, a->options.code, a->options.width,
                        NULL);
}

/* The end of block b's codes (absolute bit position). */
static uint64_t codes_end(const ebb_strarray *a, uint64_t b)
{
    const ebb_strarray_options *o = &a->options;
    uint64_t n = counters_in(a, b);
    if (o->code == EBB_CODE_FIXED)
        return a->coarse[b] + n * o->width;
    uint64_t j = (n - 1u) >> a->sub_shift;
    uint64_t pos = a->coarse[b] + (j ? sub_get(a, b, j) : 0);
    return ebb_code_skip(a->base, pos, o->code, o->width,
                         n - (j << a->sub_shift));
}

/* ------------------------------------------------------------------------ */
/* Building                                                                 */
/* ------------------------------------------------------------------------ */

/* Counter values come from a source: an old array (with one counter
 * overridden, for a set that rebuilds) or all zeros. */
typedef struct source {
    const ebb_strarray *from; /* NULL: values, or all zero */
    const uint64_t *values;   /* with from NULL: the counters, or NULL */
    uint64_t block;           /* counters per block, with values */
    uint64_t index;           /* overridden counter, or UINT64_MAX */
    uint64_t value;
} source;

/* Reads block b's values from the source into vals (block entries). */
static void source_block(const source *src, uint64_t b, uint64_t n,
                         uint64_t *vals)
{
    const ebb_strarray *f = src->from;
    if (f == NULL && src->values != NULL) {
        memcpy(vals, src->values + b * src->block, (size_t)n * sizeof *vals);
        return;
    }
    if (f == NULL) {
        memset(vals, 0, (size_t)n * sizeof *vals);
        return;
    }
    uint64_t pos = f->coarse[b];
    for (uint64_t r = 0; r < n; r++) {
        uint32_t len;
        vals[r] = ebb_code_get(f->base, pos, f->options.code,
                               f->options.width, &len);
        pos += len;
    }
    uint64_t first = b << f->block_shift;
    if (src->index >= first && src->index - first < n)
        vals[src->index - first] = src->value;
}

/* True when block b of an old array can be copied as it is: the source
 * is an array (a rebuild) and its overridden counter is not in b. Codes
 * are canonical (one code a value), so the copy is what decoding and
 * encoding again would write, at a few word operations a block instead of
 * a decode and an encode a counter. */
static bool source_copies(const source *src, uint64_t b, uint64_t n)
{
    if (src->from == NULL)
        return false;
    uint64_t first = b << src->from->block_shift;
    return !(src->index >= first && src->index - first < n);
}

/* Copies len bits from src at src_pos to dst at dst_pos (distinct
 * arrays), 64 bits a step. */
static void bits_copy(uint64_t *dst, uint64_t dst_pos, const uint64_t *src,
                      uint64_t src_pos, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += 64u) {
        uint32_t n = len - off < 64u ? (uint32_t)(len - off) : 64u;
        bits_put(dst, dst_pos + off, n, bits_get(src, src_pos + off, n));
    }
}

/* Sizes a fresh layout: image words for these options and bits of the
 * codes; false on overflow. One pass over the source. */
static bool layout_size(const source *src, uint64_t count,
                        const ebb_strarray_options *o, uint64_t *vals,
                        size_t *words_out, uint64_t *base_words_out)
{
    shape s = shape_of(count, o);
    uint64_t bits = 0;
    for (uint64_t b = 0; b < s.blocks; b++) {
        uint64_t first = b * o->block;
        uint64_t n = count - first < o->block ? count - first : o->block;
        if (source_copies(src, b, n)) {
            bits += codes_end(src->from, b) - src->from->coarse[b];
        } else {
            source_block(src, b, n, vals);
            for (uint64_t r = 0; r < n; r++)
                bits += ebb_code_length(o->code, o->width, vals[r]);
        }
        bits += o->slack_bits;
    }
    uint64_t base_words = (bits + 63u) / 64u + 1u;
    uint64_t words = HEADER_WORDS + s.blocks + 1u + s.sub_words + base_words;
    if (words > SIZE_MAX / 8u - 1u)
        return false;
    *words_out = (size_t)words;
    *base_words_out = base_words;
    return true;
}

/* Writes a fresh layout into `image` (zeroed, words long): header, codes
 * with slack_bits after every block, the offsets. */
static void layout_write(ebb_strarray *a, uint64_t *image, size_t words,
                         uint64_t base_words, const source *src,
                         uint64_t count, const ebb_strarray_options *o,
                         uint64_t *vals)
{
    image[H_MAGIC] = MAGIC;
    image[H_COUNT] = count;
    image[H_SHAPE] = (uint64_t)o->code | (uint64_t)o->width << 8 |
                     (uint64_t)log2_exact(o->block) << 16 |
                     (uint64_t)log2_exact(o->sub) << 24 |
                     (uint64_t)o->slack_bits << 32;
    memcpy(&image[H_REBUILD_AFTER], &o->rebuild_after, sizeof(double));
    image[H_BASE_WORDS] = base_words;
    attach(a, image, words, count, o);
    uint64_t pos = 0;
    for (uint64_t b = 0; b < a->blocks; b++) {
        uint64_t n = counters_in(a, b);
        a->coarse[b] = pos;
        if (source_copies(src, b, n)) {
            const ebb_strarray *f = src->from;
            uint64_t len = codes_end(f, b) - f->coarse[b];
            bits_copy(a->base, pos, f->base, f->coarse[b], len);
            for (uint64_t j = 1; j < (o->block >> a->sub_shift); j++)
                sub_set(a, b, j, sub_get(f, b, j));
            pos += len + o->slack_bits;
            continue;
        }
        source_block(src, b, n, vals);
        uint64_t start = pos;
        for (uint64_t r = 0; r < o->block; r++) {
            if (r != 0 && (r & (o->sub - 1u)) == 0)
                sub_set(a, b, r >> a->sub_shift, pos - start);
            if (r < n)
                pos += ebb_code_put(a->base, pos, o->code, o->width, vals[r]);
        }
        pos += o->slack_bits;
    }
    a->coarse[a->blocks] = pos;
}

/* Lays the source out in a new image and, on success, replaces a's (the
 * stats carry over, rebuilds + 1). On failure a is untouched. */
static ebb_status relayout(ebb_strarray *a, const source *src)
{
    uint64_t vals[4096];
    size_t words;
    uint64_t base_words;
    if (!layout_size(src, a->count, &a->options, vals, &words, &base_words))
        return EBB_EOVERFLOW;
    /* one guard word past the image: a snapshot's invalid code may make
       codes.h load one word past the spare one */
    uint64_t *image = ebb_mem_alloc_zeroed((words + 1u) * 8u);
    if (image == NULL)
        return EBB_ENOMEM;
    ebb_strarray fresh;
    layout_write(&fresh, image, words, base_words, src, a->count,
                 &a->options, vals);
    image[H_EXPANSIONS] = a->image[H_EXPANSIONS];
    image[H_PUSHES] = a->image[H_PUSHES];
    image[H_PUSHES_SINCE] = 0;
    image[H_REBUILDS] = a->image[H_REBUILDS] + 1u;
    fresh.pushes = 0;
    ebb_mem_free(a->image);
    *a = fresh;
    return EBB_OK;
}

ebb_status ebb_strarray_init(ebb_strarray *a, uint64_t count,
                             const ebb_strarray_options *o)
{
    ebb_strarray_options opt;
    if (a == NULL || o == NULL || count == 0 || !options_resolve(o, &opt))
        return EBB_EINVAL;
    if (count > MAX_COUNT)
        return EBB_EOVERFLOW;
    uint64_t vals[4096];
    source zeros = {NULL, NULL, 0, UINT64_MAX, 0};
    size_t words;
    uint64_t base_words;
    if (!layout_size(&zeros, count, &opt, vals, &words, &base_words))
        return EBB_EOVERFLOW;
    uint64_t *image = ebb_mem_alloc_zeroed((words + 1u) * 8u);
    if (image == NULL)
        return EBB_ENOMEM;
    layout_write(a, image, words, base_words, &zeros, count, &opt, vals);
    return EBB_OK;
}

void ebb_strarray_free(ebb_strarray *a)
{
    if (a == NULL)
        return;
    ebb_mem_free(a->image);
    memset(a, 0, sizeof *a);
}

ebb_status ebb_strarray_rebuild(ebb_strarray *a)
{
    source same = {a, NULL, 0, UINT64_MAX, 0};
    return relayout(a, &same);
}

ebb_status ebb_strarray_load(ebb_strarray *a, const uint64_t *values)
{
    const ebb_strarray_options *o = &a->options;
    for (uint64_t i = 0; i < a->count; i++)
        if (values[i] > EBB_CODE_MAX_VALUE ||
            (o->code == EBB_CODE_FIXED && (values[i] >> o->width) != 0))
            return EBB_EINVAL;
    source given = {NULL, values, o->block, UINT64_MAX, 0};
    return relayout(a, &given);
}

/* ------------------------------------------------------------------------ */
/* Updates                                                                  */
/* ------------------------------------------------------------------------ */

/* Moves sub offsets of block b after counter r's sub-block by delta. */
static void subs_shift(ebb_strarray *a, uint64_t b, uint64_t r,
                       int64_t delta)
{
    uint64_t subs = a->options.block >> a->sub_shift;
    for (uint64_t j = (r >> a->sub_shift) + 1u; j < subs; j++)
        sub_set(a, b, j, (uint64_t)((int64_t)sub_get(a, b, j) + delta));
}

/* Makes `need` more bits at the end of block b's region by shifting the
 * following blocks up to the nearest one with that much slack; returns how
 * many blocks moved, 0 when none has room. */
static uint64_t push(ebb_strarray *a, uint64_t b, uint64_t need)
{
    for (uint64_t t = b + 1u; t < a->blocks; t++) {
        uint64_t end = codes_end(a, t);
        if (a->coarse[t + 1u] - end < need)
            continue;
        uint64_t from = a->coarse[b + 1u];
        bits_move(a->base, from + need, from, end - from);
        for (uint64_t u = b + 1u; u <= t; u++)
            a->coarse[u] += need;
        return t - b;
    }
    return 0;
}

/* Adds to a count of the header that only statistics read: it saturates
 * rather than wrap, so that a loaded image's count near 2^64 cannot wrap
 * below another (pushes <= expansions, which the loader checks). */
static void count_up(uint64_t *count, uint64_t n)
{
    *count = n > UINT64_MAX - *count ? UINT64_MAX : *count + n;
}

/* A push counts once in the statistics, and as the blocks it moved
 * towards the next rebuild: so that the work of far pushes (counters
 * growing in index order, not at random as the paper assumes) is bounded
 * by rebuilds, not quadratic. */
static void count_push(ebb_strarray *a, uint64_t moved)
{
    count_up(&a->image[H_PUSHES], 1);
    count_up(&a->image[H_PUSHES_SINCE], moved);
    a->pushes += moved;
}

ebb_status ebb_strarray_set(ebb_strarray *a, uint64_t i, uint64_t v)
{
    const ebb_strarray_options *o = &a->options;
    if (i >= a->count || v > EBB_CODE_MAX_VALUE)
        return EBB_EINVAL;
    if (o->code == EBB_CODE_FIXED && (v >> o->width) != 0)
        return EBB_EINVAL;
    uint64_t pos = position(a, i);
    uint32_t old_len;
    (void)ebb_code_get(a->base, pos, o->code, o->width, &old_len);
    uint32_t new_len = ebb_code_length(o->code, o->width, v);
    if (new_len == old_len) {
        ebb_code_put(a->base, pos, o->code, o->width, v);
        return EBB_OK;
    }
    uint64_t b = i >> a->block_shift;
    uint64_t r = i & (o->block - 1u);
    uint64_t end = codes_end(a, b);
    uint64_t tail = pos + old_len;
    if (new_len < old_len) {
        uint64_t d = old_len - new_len;
        bits_move(a->base, tail - d, tail, end - tail);
        bits_zero(a->base, end - d, d);
    } else {
        uint64_t d = new_len - old_len;
        uint64_t slack = a->coarse[b + 1u] - end;
        uint64_t moved = 0;
        if (slack < d) {
            moved = push(a, b, d - slack);
            if (moved == 0) {
                source with = {a, NULL, 0, i, v};
                ebb_status st = relayout(a, &with);
                if (st == EBB_OK)
                    count_up(&a->image[H_EXPANSIONS], 1);
                return st;
            }
        }
        count_up(&a->image[H_EXPANSIONS], 1);
        bits_move(a->base, tail + d, tail, end - tail);
        if (moved != 0)
            count_push(a, moved);
    }
    ebb_code_put(a->base, pos, o->code, o->width, v);
    subs_shift(a, b, r, (int64_t)new_len - (int64_t)old_len);
    if (a->pushes >= (double)a->count * o->rebuild_after &&
        a->pushes > 0)
        (void)ebb_strarray_rebuild(a); /* an optimisation: retried later */
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* Statistics and images                                                    */
/* ------------------------------------------------------------------------ */

void ebb_strarray_get_stats(const ebb_strarray *a, ebb_strarray_stats *out)
{
    uint64_t code_bits = 0;
    for (uint64_t b = 0; b < a->blocks; b++)
        code_bits += codes_end(a, b) - a->coarse[b];
    uint64_t base_bits = a->base_words * 64u;
    *out = (ebb_strarray_stats){
        .code_bits = code_bits,
        .index_bits = ((uint64_t)a->image_words - a->base_words) * 64u,
        .slack_bits = base_bits - code_bits,
        .expansions = a->image[H_EXPANSIONS],
        .pushes = a->image[H_PUSHES],
        .rebuilds = a->image[H_REBUILDS],
    };
}

size_t ebb_strarray_bytes(const ebb_strarray *a)
{
    return (a->image_words + 1u) * 8u;
}

const uint64_t *ebb_strarray_image(const ebb_strarray *a, size_t *bytes)
{
    if (bytes != NULL)
        *bytes = a->image_words * 8u;
    return a->image;
}

/* The header's options, checked; false when out of range. */
static bool header_options(const uint64_t *h, ebb_strarray_options *o)
{
    uint64_t shape_word = h[H_SHAPE];
    uint32_t code = (uint32_t)(shape_word & 0xffu);
    uint32_t width = (uint32_t)(shape_word >> 8 & 0xffu);
    uint32_t block_shift = (uint32_t)(shape_word >> 16 & 0xffu);
    uint32_t sub_shift = (uint32_t)(shape_word >> 24 & 0xffu);
    if (code > (uint32_t)EBB_CODE_STEPS || block_shift < 3u ||
        block_shift > 12u || sub_shift > block_shift)
        return false;
    if (code == (uint32_t)EBB_CODE_FIXED ? width < 1u || width > 32u
                                          : width != 0)
        return false;
    *o = (ebb_strarray_options){
        .code = (ebb_code)code,
        .width = width,
        .block = UINT32_C(1) << block_shift,
        .sub = UINT32_C(1) << sub_shift,
        .slack_bits = (uint32_t)(shape_word >> 32),
    };
    memcpy(&o->rebuild_after, &h[H_REBUILD_AFTER], sizeof(double));
    ebb_strarray_options check;
    return options_resolve(o, &check) && check.slack_bits == o->slack_bits &&
           check.rebuild_after == o->rebuild_after && o->slack_bits != 0;
}

/* The header and the sizes it implies against `words`. */
static bool header_valid(const uint64_t *h, size_t words,
                         ebb_strarray_options *o)
{
    if (h[H_MAGIC] != MAGIC || h[H_COUNT] == 0 || h[H_COUNT] > MAX_COUNT)
        return false;
    if (!header_options(h, o))
        return false;
    if (h[H_PUSHES] > h[H_EXPANSIONS])
        return false;
    shape s = shape_of(h[H_COUNT], o);
    uint64_t fixed = HEADER_WORDS + s.blocks + 1u + s.sub_words;
    return h[H_BASE_WORDS] >= 1u && fixed < words &&
           h[H_BASE_WORDS] == words - fixed;
}

/* Block b's codes against its region and sub offsets, its slack zero. */
static bool block_valid(const ebb_strarray *a, uint64_t b)
{
    const ebb_strarray_options *o = &a->options;
    uint64_t start = a->coarse[b], stop = a->coarse[b + 1u];
    uint64_t n = counters_in(a, b);
    uint64_t pos = start;
    for (uint64_t r = 0; r < o->block; r++) {
        if (r != 0 && (r & (o->sub - 1u)) == 0 &&
            sub_get(a, b, r >> a->sub_shift) != pos - start)
            return false;
        if (r >= n)
            continue;
        if (stop - pos < 1u)
            return false;
        uint32_t len;
        uint64_t v = ebb_code_get(a->base, pos, o->code, o->width, &len);
        if (v > EBB_CODE_MAX_VALUE || len == 0 || len > stop - pos)
            return false;
        pos += len;
    }
    return bits_clear(a->base, pos, stop - pos);
}

static bool layout_valid(const ebb_strarray *a)
{
    const ebb_strarray_options *o = &a->options;
    uint64_t region_max = (uint64_t)o->block *
                              longest_code(o->code, o->width) +
                          o->slack_bits;
    uint64_t end = a->coarse[a->blocks];
    if (a->coarse[0] != 0 || end > (a->base_words - 1u) * 64u ||
        (end + 63u) / 64u + 1u != a->base_words)
        return false;
    for (uint64_t b = 0; b < a->blocks; b++) {
        uint64_t next = a->coarse[b + 1u];
        if (next < a->coarse[b] || next - a->coarse[b] > region_max)
            return false;
    }
    /* padding bits of the last block's word and the spare word */
    if (!bits_clear(a->base, end, a->base_words * 64u - end))
        return false;
    /* the sub offsets' padding, as bytes (they are u16 or u32 objects) */
    uint64_t used = a->blocks * ((o->block >> a->sub_shift) - 1u) *
                    (a->sub_wide ? 4u : 2u);
    const unsigned char *pad = (const unsigned char *)a->sub_offsets;
    uint64_t room = (uint64_t)(a->base - (uint64_t *)a->sub_offsets) * 8u;
    for (uint64_t k = used; k < room; k++)
        if (pad[k] != 0)
            return false;
    for (uint64_t b = 0; b < a->blocks; b++)
        if (!block_valid(a, b))
            return false;
    return true;
}

ebb_status ebb_strarray_from_image(ebb_strarray *a, const void *image,
                                   size_t bytes)
{
    if (a == NULL || image == NULL || bytes % 8u != 0 ||
        bytes < (HEADER_WORDS + 2u) * 8u)
        return EBB_ECORRUPT;
    uint64_t h[HEADER_WORDS];
    memcpy(h, image, sizeof h);
    ebb_strarray_options o;
    size_t words = bytes / 8u;
    if (!header_valid(h, words, &o))
        return EBB_ECORRUPT;
    if (words > SIZE_MAX / 8u - 1u)
        return EBB_EOVERFLOW;
    uint64_t *copy = ebb_mem_alloc_zeroed((words + 1u) * 8u);
    if (copy == NULL)
        return EBB_ENOMEM;
    memcpy(copy, image, bytes);
    ebb_strarray fresh;
    attach(&fresh, copy, words, h[H_COUNT], &o);
    if (!layout_valid(&fresh)) {
        ebb_mem_free(copy);
        return EBB_ECORRUPT;
    }
    *a = fresh;
    return EBB_OK;
}
