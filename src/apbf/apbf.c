/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apbf.c: the Age-Partitioned Bloom Filter.
 *
 * The paper
 * ---------
 * Ariel Shtul, Carlos Baquero, Paulo Sérgio Almeida, "Age-Partitioned Bloom
 * Filters" (2020), section 5. The problem: remember the last w items of an
 * unbounded stream in fixed memory, never forget one of them (no false
 * negatives), and report anything older than w + slack only at a chosen
 * false-positive rate.
 *
 * The structure
 * -------------
 * A partitioned Bloom filter whose partitions ("slices") age. There are
 * k + l slices of m bits, kept in a circular buffer; `base` is the buffer
 * position of the newest slice s_0, and logical slice s_i lives at position
 * (base + i) mod (k + l). Each buffer position has its own hash function
 * (derived from the key's one 128-bit hash by double hashing, core/hash.h),
 * so a bit set while a slice was s_0 is found again when it has become s_5.
 *
 *   buffer position:   0     1     2     3     4     5     6
 *                   +-----+-----+-----+-----+-----+-----+-----+
 *   k = 3, l = 4    | s_5 | s_6 | s_0 | s_1 | s_2 | s_3 | s_4 |   base = 2
 *                   +-----+-----+-----+-----+-----+-----+-----+
 *   fill ratio        1/2   1/2   low   mid   1/2   1/2   1/2
 *                               <-- written -->
 *
 * add(x):   if the current generation holds g items, shift: clear the
 *           oldest slice s_{k+l-1} and make it the new s_0 (base - 1);
 *           then set bit h_pos(i)(x) in s_0 .. s_{k-1}.
 * query(x): true iff some j in 0..l has s_j .. s_{j+k-1} all matching.
 *           Algorithm 1 of the paper: start at s_l, count consecutive
 *           matches c walking towards older slices; on a miss jump k slices
 *           towards the new end carrying the run so far (p := c), since the
 *           slices just below the miss can still complete it.
 *
 * The numbers
 * -----------
 * g = floor(m ln 2 / k): a slice is written during k generations, so it
 * ends at fill ratio 1/2, the optimum of a partitioned Bloom filter.
 * An item inserted into generation G has its k bits in slices that are
 * (current generation - G) .. +k-1 old; the query still sees all of them
 * while that age is <= l, so the window is w = l * g insertions, always,
 * whatever the keys. The next k generations are slack: each shift destroys
 * one more of their k bits, so they are reported with probability that
 * halves per shift (the probability-weighted slack, NPWS <= 2 / l).
 *
 * The false-positive rate is the recursion F(k, l, 0, 0) of section 5.3 on
 * the fill ratios just before a shift (src/apbf/analytics.c). The paper
 * draws the k slices being written as a linear ramp i/(2k); a slice that has
 * received j of its k generations is really filled to 1 - 2^(-j/k), which
 * is more, so ebb sizes with that geometric ramp and the promised rate holds
 * (docs/apbf.md has the measured comparison).
 *
 * Worked example: `ebb params --window 1000 --fp 0.01` chooses k = 11,
 * l = 42 (the least memory whose geometric worst case is <= 0.01), so
 * g = ceil(1000 / 42) = 24, m = ceil(24 * 11 / ln 2) = 381 bits (6 words),
 * 53 slices; the window is really 42 * 24 = 1008 items and the slack
 * k * g = 264 items, reported with probability halving per generation.
 *
 * Measured (`ctest -L stats -V`, seeds fixed): the worst-moment false-
 * positive rate lies within 3 binomial standard deviations of F on the
 * exact fill ratios for every shape tests/stats tries, from m = 64 to
 * m = 2^17; the paper's linear ramp is rejected for all of them.
 *
 * Invariants kept by this file
 * ----------------------------
 *   in_generation <= generation; in_generation == 0 only before the first
 *   add; bits beyond slice_bits in each slice's last word are 0; add and
 *   contains never allocate and never fail.
 */
#include "apbf/apbf_internal.h"

#include <string.h>

#include "apbf/sliced.h"
#include "apbf/wide.h"

#include "core/agequery.h"
#include "core/alloc.h"
#include "core/bits.h"

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

ebb_status ebb_apbf_create(const ebb_apbf_params *params, uint64_t seed,
                           ebb_apbf **out)
{
    if (params == NULL || out == NULL)
        return EBB_EINVAL;
    size_t bit_bytes;
    ebb_status st = ebb_apbf_shape_bytes(params, &bit_bytes);
    if (st != EBB_OK)
        return st;

    ebb_apbf *f = ebb_mem_alloc(sizeof *f);
    if (f == NULL)
        return EBB_ENOMEM;
    void *block = NULL;
    uint64_t *bits = ebb_mem_alloc_lines(bit_bytes, &block);
    if (bits == NULL) {
        ebb_mem_free(f);
        return EBB_ENOMEM;
    }
    *f = (ebb_apbf){
        .k = params->k,
        .l = params->l,
        .slices = params->k + params->l,
        .slice_bits = params->slice_bits,
        .generation = params->generation,
        .slice_words = ebb_bits_words(params->slice_bits),
        .seed = seed,
        .scheme = EBB_INDEX_MIXED,
        .layout = params->layout,
        .cell_bits = params->cell_bits,
        .block_bits = params->block_bits,
        .block_hashes = params->block_hashes,
        .field_bits = params->block_bits == 0
                          ? 0
                          : ebb_log2_u32(params->block_bits /
                                         params->block_hashes),
        .block_words = params->block_bits / 64u,
        .slice_blocks = params->block_bits == 0
                            ? 0
                            : params->slice_bits / params->block_bits,
        .bits = bits,
        .block = block,
        .block_bytes = ebb_mem_lines_footprint(bit_bytes),
    };
    f->path = ebb_apbf_path_for(f);
    if (f->layout == EBB_APBF_LAYOUT_SLICED)
        ebb_apbf_sliced_init(f);
    *out = f;
    return EBB_OK;
}

void ebb_apbf_destroy(ebb_apbf *filter)
{
    if (filter == NULL)
        return;
    ebb_mem_free(filter->block);
    ebb_mem_free(filter);
}

void ebb_apbf_clear(ebb_apbf *f)
{
    if (f->layout == EBB_APBF_LAYOUT_SLICED) {
        ebb_apbf_sliced_clear(f);
        return;
    }
    memset(f->bits, 0, (size_t)(f->slices * f->slice_words) * 8u);
    f->base = 0;
    f->insertions = 0;
    f->generations = 0;
    f->in_generation = 0;
}

void ebb_apbf_set_residue_hashing(ebb_apbf *filter)
{
    filter->residue_hashing = filter->layout == EBB_APBF_LAYOUT_RING;
    filter->path = ebb_apbf_path_for(filter);
}

void ebb_apbf_set_index_scheme(ebb_apbf *filter, ebb_index_scheme scheme)
{
    filter->scheme = scheme;
    filter->path = ebb_apbf_path_for(filter);
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

/* Ages every slice by one: the oldest is cleared and becomes s_0. */
void ebb_apbf_shift(ebb_apbf *f)
{
    f->base = f->base == 0 ? f->slices - 1 : f->base - 1;
    memset(ebb_apbf_slice(f, f->base), 0, (size_t)f->slice_words * 8u);
    f->generations = ebb_saturating_add(f->generations, 1);
    f->in_generation = 0;
}

ebb_apbf_path ebb_apbf_path_for(const ebb_apbf *f)
{
    if (f->layout == EBB_APBF_LAYOUT_SLICED)
        return EBB_APBF_PATH_SLICED;
    if (f->scheme != EBB_INDEX_MIXED || f->residue_hashing)
        return EBB_APBF_PATH_GENERIC;
    if (f->block_bits == 0)
        return EBB_APBF_PATH_PLAIN;
    if (f->block_bits == 512u && f->block_hashes == 8u)
        return EBB_APBF_PATH_LINE8;
    return EBB_APBF_PATH_GENERIC;
}

/* Each operation is written once as a function of a constant path and
 * instantiated per path: the kind-of-filter branches of a general slice
 * function cost a third of a plain add (docs/bench.md). Always inlined:
 * left to gcc, the larger AVX2 block write made it compile one add_on for
 * every path with the path as an argument, and a plain add went from
 * 36-46 to 61-69 ns (k = 12, w = 1e6, scratch driver). */
EBB_ALWAYS_INLINE void add_on(ebb_apbf *f, ebb_hash128 h, ebb_apbf_path path)
{
    if (path == EBB_APBF_PATH_LINE8) {
        /* Eight read-modify-writes per line: every line is located and
         * prefetched first, so the k misses overlap instead of the first
         * line's writes holding up the next line's (one call, (2, 5) at
         * 10^6, scratch driver: 21-30 ns against 31-33 ns). Plain slices
         * write one word each and were slower this way (52 -> 63-82 ns at
         * k = 20). */
        ebb_slice_probe probes[EBB_APBF_MAX_K];
        for (uint32_t i = 0; i < f->k; i++) {
            ebb_apbf_locate(f, h, ebb_apbf_position(f, i), path, &probes[i]);
            __builtin_prefetch(probes[i].at, 1, 3);
        }
        for (uint32_t i = 0; i < f->k; i++)
            ebb_apbf_probe_set(f, &probes[i], path);
        return;
    }
    for (uint32_t i = 0; i < f->k; i++) {
        ebb_slice_probe probe;
        ebb_apbf_locate(f, h, ebb_apbf_position(f, i), path, &probe);
        ebb_apbf_probe_set(f, &probe, path);
    }
}

#if defined(EBB_HAVE_X8)
/* The same bits as add_on on the plain path, its slices located eight at a
 * time (wide.h). */
static inline void add_plain_wide(ebb_apbf *f, ebb_hash128 h)
{
    _Alignas(64) uint64_t word[EBB_APBF_WIDE_MAX_K], mask[EBB_APBF_WIDE_MAX_K];
    ebb_apbf_plain_locate_newest(f, h, word, mask);
    uint64_t *bits = f->bits;
    for (uint32_t i = 0; i < f->k; i++)
        bits[word[i]] |= mask[i];
}
#endif

/* One function per path, kept out of line: compiled into one function, the
 * three paths shared its registers and its frame (the line8 probes), and
 * the plain loop reloaded the hash and the filter's fields from the stack
 * on every slice. Same instruction count (callgrind, x86-64-v3: 325 per
 * plain add at (7, 5)), add 30.0 -> 29.3 ns at w = 10^6 (three
 * interleaved runs); the walk's query 60.7 -> 54.9 ns. */
__attribute__((noinline)) static void add_plain(ebb_apbf *f, ebb_hash128 h)
{
    add_on(f, h, EBB_APBF_PATH_PLAIN);
}

__attribute__((noinline)) static void add_line8(ebb_apbf *f, ebb_hash128 h)
{
    add_on(f, h, EBB_APBF_PATH_LINE8);
}

__attribute__((noinline)) static void add_generic(ebb_apbf *f, ebb_hash128 h)
{
    add_on(f, h, EBB_APBF_PATH_GENERIC);
}

static inline void add_on_path(ebb_apbf *f, ebb_hash128 h)
{
    switch (f->path) {
    case EBB_APBF_PATH_PLAIN:
        add_plain(f, h);
        break;
    case EBB_APBF_PATH_LINE8:
        add_line8(f, h);
        break;
    default:
        add_generic(f, h);
        break;
    }
}

void ebb_apbf_add_hash(ebb_apbf *f, ebb_hash128 h)
{
    if (f->path == EBB_APBF_PATH_SLICED) {
        ebb_apbf_sliced_add(f, h);
        return;
    }
    if (f->in_generation == f->generation)
        ebb_apbf_shift(f);
#if defined(EBB_HAVE_X8)
    /* Inline, without the switch and the call: 1-3 ns of a 23 ns add at
     * (7, 5), w = 10^6 (scratch driver, interleaved chunks). */
    if (ebb_apbf_adds_located(f))
        add_plain_wide(f, h);
    else
#endif
        add_on_path(f, h);
    f->in_generation++;
    f->insertions = ebb_saturating_add(f->insertions, 1);
}

/* Logical slice i's test, for the walk. */
static inline bool matches_on(const ebb_apbf *f, ebb_hash128 h, uint32_t i,
                              ebb_apbf_path path)
{
    ebb_slice_probe probe;
    ebb_apbf_locate(f, h, ebb_apbf_position(f, i), path, &probe);
    return ebb_apbf_probe_match(f, &probe, path);
}

static inline bool plain_matches(const void *f, ebb_hash128 h, uint32_t i)
{
    return matches_on(f, h, i, EBB_APBF_PATH_PLAIN);
}

static inline bool line8_matches(const void *f, ebb_hash128 h, uint32_t i)
{
    return matches_on(f, h, i, EBB_APBF_PATH_LINE8);
}

static inline bool generic_matches(const void *f, ebb_hash128 h, uint32_t i)
{
    return matches_on(f, h, i, EBB_APBF_PATH_GENERIC);
}

#if defined(EBB_HAVE_X8)
/* A one-call query on plain slices, with AVX-512, can read every slice at
 * once: eight derivations per instruction and one gather per eight slices,
 * no branch on a bit, so nothing to mispredict and every load in flight
 * together. The walk reads fewer slices (5.0 of 12 at (7, 5) with half
 * the keys present, 20 of 100 at (12, 88)) but waits on each read it
 * mispredicted; an absent key's walk reads about 2 (l / k + 1) of the
 * k + l slices, a fraction near 2 / k, so reading all of them pays up to
 * a k. Scratch driver, w = 10^6, 16-byte keys, half present, medians of 3
 * interleaved runs, ns per query (walk / all at once): (7, 5) 56.7 / 39.7;
 * (10, 7) 66.4 / 54.8; (12, 88) 254.5 / 161.1; single runs (8, 8) 66 / 44,
 * (16, 16) 85 / 76, (16, 32) 105 / 97, (8, 100) 375 / 173, (20, 100)
 * 217 / 222, (24, 40) 118-183 / 131-232. Out of the caches (w = 10^7,
 * 25-30 MB) the extra lines eat most of the gain: (7, 5) 209 / 215,
 * (10, 7) 259 / 247, (12, 88) 811 / 719 (another run 796 / 812), and a
 * walk on slices located eight at a time beats both
 * (EBB_APBF_WIDE_QUERY_MAX_BYTES, below). */

/* Bit p set when buffer position first + p matches h, for p < count <= 8:
 * the walk's plain test (ebb_apbf_locate_in) lane by lane. x holds
 * h.lo + pos * h.hi and word0 pos * slice_words for the eight positions. */
static inline uint64_t plain_positions_x8(const ebb_apbf *f, __m512i x,
                                          __m512i word0, uint32_t count)
{
    __mmask8 live = (__mmask8)(0xffu >> (8u - count));
    __m512i bit = ebb_apbf_plain_bits_x8(f, x);
    __m512i word = _mm512_add_epi64(word0, _mm512_srli_epi64(bit, 6));
    __m512i words = _mm512_mask_i64gather_epi64(
        _mm512_setzero_si512(), live, word, (const void *)f->bits, 8);
    __m512i shifted = _mm512_srlv_epi64(
        words, _mm512_and_si512(bit, _mm512_set1_epi64(63)));
    return _mm512_mask_test_epi64_mask(live, shifted, _mm512_set1_epi64(1));
}

static inline bool wide_pays(const ebb_apbf *f)
{
    return f->k <= EBB_APBF_WIDE_MAX_K && f->slices <= EBB_AGE_RUN_MAX_SLICES;
}

/* Bits 0..n-1 of a word rotated right by r < n: buffer order to age order
 * (logical i is at position (base + i) mod (k + l)). */
static inline uint64_t rotate_within(uint64_t bits, uint32_t r, uint32_t n)
{
    if (r == 0)
        return bits;
    uint64_t all = n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1u;
    return ((bits >> r) | (bits << (n - r))) & all;
}

/* Every slice's test, then the run test in age order. The lanes'
 * h.lo + pos * h.hi and pos * slice_words advance by additions; positions
 * 0..63 collect in low, 64..127 in high (a whole group of eight lands in
 * one or the other). */
static bool contains_plain_wide(const ebb_apbf *f, ebb_hash128 h)
{
    uint32_t n = f->slices;
    const __m512i lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    __m512i x = _mm512_add_epi64(
        _mm512_set1_epi64((long long)h.lo),
        _mm512_mullo_epi64(lanes, _mm512_set1_epi64((long long)h.hi)));
    __m512i word0 = _mm512_mullo_epi64(
        lanes, _mm512_set1_epi64((long long)f->slice_words));
    const __m512i x_step = _mm512_set1_epi64((long long)(h.hi * 8u));
    const __m512i word_step =
        _mm512_set1_epi64((long long)(f->slice_words * 8u));
    uint64_t low = 0, high = 0;
    for (uint32_t p = 0; p < n; p += 8) {
        uint64_t found = plain_positions_x8(f, x, word0,
                                            n - p < 8u ? n - p : 8u);
        if (p < 64)
            low |= found << p;
        else
            high |= found << (p - 64u);
        x = _mm512_add_epi64(x, x_step);
        word0 = _mm512_add_epi64(word0, word_step);
    }
    if (n <= 64)
        return ebb_age_run_present(rotate_within(low, f->base, n), f->k,
                                   f->l);
#if EBB_AGE_RUN_MAX_SLICES > 64
    ebb_age_bits128 by_position = ((ebb_age_bits128)high << 64) | low;
    ebb_age_bits128 by_age = by_position;
    if (f->base != 0) {
        ebb_age_bits128 all = n == 128 ? ~(ebb_age_bits128)0
                                       : ((ebb_age_bits128)1 << n) - 1u;
        by_age = ((by_position >> f->base) |
                  (by_position << (n - f->base))) & all;
    }
    return ebb_age_run_present128(by_age, f->k, f->l);
#else
    return false; /* unreachable: wide_pays keeps n <= 64 */
#endif
}

/* Out of the caches the wide query loses: every one of its k + l loads
 * holds up retirement, and an absent key's walk needs about two. Past
 * EBB_APBF_WIDE_QUERY_MAX_BYTES of slices (wide.h) a one-call query walks
 * instead, on slices located
 * eight at a time, with every slice's line prefetched first when there are
 * at most 16 (a prefetch does not hold up retirement, so the next calls'
 * instructions still enter the core). Half-present shuffled queries, median
 * of 5 interleaved passes of 2^20 (scratch driver), ns per query, wide /
 * located walk: (7, 5) at w = 10^6 (3 MB) 38.5 / 50.5, 2 * 10^6 (6 MB)
 * 43.0 / 54.5, 4 * 10^6 (12 MB) 76.0 / 62.8, 10^7 199 / 119, 10^8 225 /
 * 147; (10, 7) at 10^7 259 / 194; (12, 88) at 10^7 796 / 564. */
#define PREFETCH_ALL_MAX_SLICES 16u

_Static_assert(EBB_AGE_RUN_MAX_SLICES % 8u == 0,
               "locate_all stores eight lanes at a time");

/* Every slice of h located, logical slice i in word[i] and mask[i]
 * (64-byte aligned arrays of EBB_AGE_RUN_MAX_SLICES; wide_pays). */
static inline void locate_all(const ebb_apbf *f, ebb_hash128 h,
                              uint64_t *word, uint64_t *mask)
{
    for (uint32_t first = 0; first < f->slices; first += 8)
        ebb_apbf_plain_locate_x8(f, h, first, word + first, mask + first);
}

static bool walk_located(const ebb_apbf *f, const uint64_t *word,
                         const uint64_t *mask)
{
    const uint64_t *bits = f->bits;
    if (f->slices <= PREFETCH_ALL_MAX_SLICES)
        for (uint32_t i = 0; i < f->slices; i++)
            __builtin_prefetch(bits + word[i], 0, 3);
    /* Algorithm 1 written out on the located arrays rather than through
     * ebb_age_query, whose step also counts reads and updates a walk record
     * (both compile to branches). Equal or a little faster: A/B in one
     * process, interleaved, median of 5 passes of 2^20 queries, w = 10^7,
     * ns per query, this loop / ebb_age_query: (7, 5) 110-113 / 111;
     * (12, 88) 381-384 / 397-406 (scratch driver, the machine quiet; on a
     * noisy one earlier the gap looked larger and was not repeatable). */
    uint32_t k = f->k, previous = 0, run = 0;
    int64_t i = f->l;
    while (i >= 0) {
        if (bits[word[i]] & mask[i]) {
            if (previous + ++run == k)
                return true;
            i++;
        } else {
            previous = run;
            run = 0;
            i -= k;
        }
    }
    return false;
}

static bool contains_plain_located(const ebb_apbf *f, ebb_hash128 h)
{
    _Alignas(64) uint64_t word[EBB_AGE_RUN_MAX_SLICES];
    _Alignas(64) uint64_t mask[EBB_AGE_RUN_MAX_SLICES];
    locate_all(f, h, word, mask);
    return walk_located(f, word, mask);
}

/* The one-call query that need not count its reads, where wide_pays. */
static inline bool contains_plain_fast(const ebb_apbf *f, ebb_hash128 h)
{
    return f->block_bytes <= EBB_APBF_WIDE_QUERY_MAX_BYTES
               ? contains_plain_wide(f, h)
               : contains_plain_located(f, h);
}

/* The dedup step past EBB_APBF_WIDE_QUERY_MAX_BYTES, where wide_pays: the
 * walk's located slices 0 .. k - 1 are those the add writes, unless the add
 * shifts first (which moves every slice one position), so one locate
 * serves both. (Below that size the query never stores its lanes, and
 * the add locates its k slices itself.) */
static bool check_and_add_plain_located(ebb_apbf *f, ebb_hash128 h)
{
    _Alignas(64) uint64_t word[EBB_AGE_RUN_MAX_SLICES];
    _Alignas(64) uint64_t mask[EBB_AGE_RUN_MAX_SLICES];
    locate_all(f, h, word, mask);
    bool seen = walk_located(f, word, mask);
    if (f->in_generation == f->generation) {
        ebb_apbf_shift(f);
        add_plain_wide(f, h);
    } else {
        for (uint32_t i = 0; i < f->k; i++)
            f->bits[word[i]] |= mask[i];
    }
    f->in_generation++;
    f->insertions = ebb_saturating_add(f->insertions, 1);
    return seen;
}
#endif

/* Out of line per path, as the adds. The walk counts its reads; a query
 * that need not count them takes the located forms where they apply
 * (contains_plain_fast: every slice at once, or the located walk). */
__attribute__((noinline)) static bool
contains_plain(const ebb_apbf *f, ebb_hash128 h, uint32_t *accesses)
{
#if defined(EBB_HAVE_X8)
    if (accesses == NULL && wide_pays(f))
        return contains_plain_fast(f, h);
#endif
    return ebb_age_query(f->k, f->l, plain_matches, f, h, accesses);
}

__attribute__((noinline)) static bool
contains_line8(const ebb_apbf *f, ebb_hash128 h, uint32_t *accesses)
{
    return ebb_age_query(f->k, f->l, line8_matches, f, h, accesses);
}

__attribute__((noinline)) static bool
contains_generic(const ebb_apbf *f, ebb_hash128 h, uint32_t *accesses)
{
    return ebb_age_query(f->k, f->l, generic_matches, f, h, accesses);
}

bool ebb_apbf_contains_counted(const ebb_apbf *f, ebb_hash128 h,
                               uint32_t *accesses)
{
    switch (f->path) {
    case EBB_APBF_PATH_PLAIN:
        return contains_plain(f, h, accesses);
    case EBB_APBF_PATH_LINE8:
        return contains_line8(f, h, accesses);
    case EBB_APBF_PATH_SLICED:
        return ebb_apbf_sliced_contains(f, h, accesses);
    default:
        return contains_generic(f, h, accesses);
    }
}

bool ebb_apbf_contains_hash(const ebb_apbf *f, ebb_hash128 h)
{
#if defined(EBB_HAVE_X8)
    /* Without the switch and the out-of-line call, as the add. */
    if (f->path == EBB_APBF_PATH_PLAIN && wide_pays(f))
        return contains_plain_fast(f, h);
#endif
    return ebb_apbf_contains_counted(f, h, NULL);
}

bool ebb_apbf_check_and_add_hash(ebb_apbf *f, ebb_hash128 h)
{
    if (f->path == EBB_APBF_PATH_SLICED)
        return ebb_apbf_sliced_check_and_add(f, h);
#if defined(EBB_HAVE_X8)
    if (f->path == EBB_APBF_PATH_PLAIN && wide_pays(f) &&
        f->block_bytes > EBB_APBF_WIDE_QUERY_MAX_BYTES)
        return check_and_add_plain_located(f, h);
#endif
    bool seen = ebb_apbf_contains_hash(f, h);
    ebb_apbf_add_hash(f, h);
    return seen;
}

bool ebb_apbf_check_and_add(ebb_apbf *f, const void *key, size_t len)
{
    return ebb_apbf_check_and_add_hash(f, ebb_apbf_hash(f, key, len));
}

ebb_hash128 ebb_apbf_hash(const ebb_apbf *f, const void *key, size_t len)
{
    return ebb_hash_inline(key, len, f->seed);
}

void ebb_apbf_add(ebb_apbf *f, const void *key, size_t len)
{
    ebb_apbf_add_hash(f, ebb_apbf_hash(f, key, len));
}

bool ebb_apbf_contains(const ebb_apbf *f, const void *key, size_t len)
{
    return ebb_apbf_contains_hash(f, ebb_apbf_hash(f, key, len));
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

size_t ebb_apbf_memory(const ebb_apbf *f)
{
    return sizeof *f + f->block_bytes;
}

/* Items of generations that left the window but still have a slice here:
 * the newest k + l - 1 generations hold at most in_generation +
 * (k + l - 1) g items, of which the last w are the window. */
static uint64_t current_slack(const ebb_apbf *f)
{
    uint64_t window = (uint64_t)f->l * f->generation;
    uint64_t held = f->in_generation + (uint64_t)(f->slices - 1) * f->generation;
    if (held > f->insertions)
        held = f->insertions;
    return held > window ? held - window : 0;
}

void ebb_apbf_get_stats(const ebb_apbf *f, ebb_apbf_stats *out)
{
    memset(out, 0, sizeof *out); /* padding too: callers compare bytes */
    out->params.k = f->k;
    out->params.l = f->l;
    out->params.slice_bits = f->slice_bits;
    out->params.generation = f->generation;
    out->params.window = (uint64_t)f->l * f->generation;
    out->params.block_bits = f->block_bits;
    out->params.block_hashes = f->block_hashes;
    out->params.layout = f->layout;
    out->params.cell_bits = f->cell_bits;
    out->seed = f->seed;
    out->insertions = f->insertions;
    out->generations = f->generations;
    out->in_generation = f->in_generation;
    out->current_slack = current_slack(f);
    out->memory_bytes = ebb_apbf_memory(f);
}
