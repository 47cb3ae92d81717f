/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ceiling.c: how many random, independent cache-line reads per second this
 * machine serves from a buffer the size of a filter.
 *
 * Every filter operation is, at bottom, a few reads or writes of random
 * cache lines; a filter cannot do better than the memory system serves
 * such lines. The probe allocates a buffer of the filter's size through
 * libebb's own ebb_mem_alloc_lines (through the installed allocator: the
 * built-in one unless the caller installed another), as the filter's bit
 * arrays are: the same alignment and page size (2 MiB transparent huge
 * pages for blocks of 2 MiB or more on Linux, src/core/alloc.c), so the
 * same TLB reach. It writes every byte (no page left on the shared zero
 * page), and reads 64-bit words at random line addresses, each address
 * independent of every load, in several ways:
 *
 *   independent loads       a loop summing loads at random lines: the
 *                           out-of-order core overlaps what it can;
 *   prefetch D ahead        each iteration prefetches the line it will read
 *                           D iterations later (D = 16, 32);
 *   batch of B prefetched   B addresses computed and prefetched, then the B
 *                           loads summed (B = 32, 64, 128): what a filter's
 *                           batch calls do.
 *
 * Addresses come from a counter-based generator (splitmix64's finaliser of
 * a counter), so no address depends on the one before and the generator
 * has no serial chain; the line index is a multiply-high reduction. The
 * ceiling is the best rate over all variants and repetitions: the most the
 * machine was seen to do, the fair denominator for a filter's fraction.
 */
#include "bench_internal.h"

#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>

#define LINE_BYTES 64u
#define WORDS_PER_LINE (LINE_BYTES / sizeof(uint64_t))
/* Loads per timed trial: 2 Mi, tens of milliseconds beyond the caches. */
#define PROBE_LOADS ((uint64_t)1 << 21)
#define PROBE_SEED UINT64_C(0x6365696c696e6721) /* "ceiling!" */
#define MAX_BATCH 128u

typedef struct probe_buffer {
    const uint64_t *words;
    uint64_t lines; /* < 2^32, so the 32-bit multiply-high reduction works */
} probe_buffer;

static inline uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Word offset of the line the i-th address of a trial points at. */
static inline uint64_t line_word(const probe_buffer *b, uint64_t i)
{
    uint64_t r = mix(PROBE_SEED + i * UINT64_C(0x9e3779b97f4a7c15)) >> 32;
    return ((r * b->lines) >> 32) * WORDS_PER_LINE;
}

static uint64_t independent_loads(const probe_buffer *b, uint64_t n)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += b->words[line_word(b, i)];
    return sum;
}

static uint64_t prefetch_ahead(const probe_buffer *b, uint64_t n,
                               unsigned distance)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < distance && i < n; i++)
        __builtin_prefetch(b->words + line_word(b, i), 0, 3);
    for (uint64_t i = 0; i < n; i++) {
        __builtin_prefetch(b->words + line_word(b, i + distance), 0, 3);
        sum += b->words[line_word(b, i)];
    }
    return sum;
}

static uint64_t prefetched_batches(const probe_buffer *b, uint64_t n,
                                   unsigned batch)
{
    uint64_t offsets[MAX_BATCH];
    uint64_t sum = 0;
    for (uint64_t start = 0; start + batch <= n; start += batch) {
        for (unsigned j = 0; j < batch; j++) {
            offsets[j] = line_word(b, start + j);
            __builtin_prefetch(b->words + offsets[j], 0, 3);
        }
        for (unsigned j = 0; j < batch; j++)
            sum += b->words[offsets[j]];
    }
    return sum;
}

typedef enum probe_kind { INDEPENDENT, AHEAD, BATCHED } probe_kind;

typedef struct probe_variant {
    probe_kind kind;
    unsigned parameter;
    const char *name;
} probe_variant;

static const probe_variant variants[] = {
    {INDEPENDENT, 0, "independent loads"},
    {AHEAD, 16, "prefetch 16 ahead"},
    {AHEAD, 32, "prefetch 32 ahead"},
    {BATCHED, 32, "batch of 32 prefetched"},
    {BATCHED, 64, "batch of 64 prefetched"},
    {BATCHED, 128, "batch of 128 prefetched"},
};

static uint64_t run_variant(const probe_buffer *b, const probe_variant *v)
{
    switch (v->kind) {
    case AHEAD:
        return prefetch_ahead(b, PROBE_LOADS, v->parameter);
    case BATCHED:
        return prefetched_batches(b, PROBE_LOADS, v->parameter);
    case INDEPENDENT:
    default:
        return independent_loads(b, PROBE_LOADS);
    }
}

bench_ceiling bench_probe_ceiling(size_t bytes, unsigned repeats)
{
    bench_ceiling ceiling;
    size_t lines = bytes / LINE_BYTES;
    if (lines < 1)
        lines = 1;
    /* ebb_mem_alloc_lines, the call the filters' bit arrays are made with:
     * zeroed, line aligned, and given huge pages by the built-in allocator
     * on the same terms; its pages are zeroed lazily, so the memset below is
     * their only write. */
    void *raw = NULL;
    uint64_t *words = ebb_mem_alloc_lines(lines * LINE_BYTES, &raw);
    if (words == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", lines * LINE_BYTES);
        exit(EXIT_FAILURE);
    }
    memset(words, 0x5a, lines * LINE_BYTES);
    probe_buffer buffer = {words, (uint64_t)lines};
    uint64_t sink = 0;

    memset(&ceiling, 0, sizeof ceiling);
    ceiling.bytes = lines * LINE_BYTES;
    snprintf(ceiling.method, sizeof ceiling.method, "none");
    independent_loads(&buffer, PROBE_LOADS / 4); /* warm the TLB and caches */
    for (unsigned r = 0; r < repeats; r++) {
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            uint64_t start = bench_now_ns();
            sink += run_variant(&buffer, &variants[v]);
            uint64_t elapsed = bench_now_ns() - start;
            double rate = (double)PROBE_LOADS * 1e9 / (double)(elapsed ? elapsed : 1);
            if (rate > ceiling.lines_per_s) {
                ceiling.lines_per_s = rate;
                snprintf(ceiling.method, sizeof ceiling.method, "%s",
                         variants[v].name);
            }
        }
    }
    /* The sum is used, so the loads cannot be optimised away. */
    if (sink == 0 && repeats > 0)
        fprintf(stderr, "bench: ceiling probe read nothing\n");
    ebb_mem_free(raw);
    return ceiling;
}
