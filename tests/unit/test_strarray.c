/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_strarray.c: the string-array index (src/core/strarray.h).
 *
 * - The essay's worked example, offsets and all.
 * - A property test against a plain uint64_t array: random increments,
 *   decrements, jumps to 0, small and large values, rebuilds and image
 *   round trips, for every code (FIXED 1, 5, 32, GAMMA, DELTA, STEPS) and
 *   several shapes (defaults, scan-only, tiny slack forcing pushes and
 *   rebuilds, large blocks, sub = 1); get and get_scan are compared with
 *   the model after every operation, the whole array periodically.
 * - Allocation failure at every point of a growth that must rebuild, of a
 *   rebuild, of from_image and init: the array is left as it was.
 * - Corrupt images: truncations, forged fields, every header/index byte
 *   flipped, every base bit flipped (refused, or a consistent array whose
 *   image is exactly the bytes given).
 * - The storage bar of issue 15 on a simulated spectral filter's counters
 *   (Zipf counts of mean 10 per key, k = 5, m = n k / ln 2).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strarray.h"
#include "support.h"

#define COUNT 2999u /* a partial last block for every block size */
#define FULL_CHECK_EVERY 4999u

typedef struct config {
    ebb_code code;
    uint32_t width;
    uint32_t block, sub, slack;
    double rebuild_after;
    bool must_push; /* growth must cross blocks and rebuild */
    uint64_t ops;
} config;

static const config CONFIGS[] = {
    {EBB_CODE_FIXED, 1, 0, 0, 0, 0, false, 300000},
    {EBB_CODE_FIXED, 5, 0, 0, 0, 0, false, 300000},
    {EBB_CODE_FIXED, 5, 8, 2, 3, 0, false, 300000},
    {EBB_CODE_FIXED, 32, 0, 0, 0, 0, false, 300000},
    {EBB_CODE_FIXED, 32, 64, 8, 0, 0, false, 300000},
    {EBB_CODE_GAMMA, 0, 0, 0, 0, 0, false, 50000},
    {EBB_CODE_GAMMA, 0, 8, 8, 1, 0, true, 50000},
    {EBB_CODE_GAMMA, 0, 64, 8, 2, 0.01, true, 50000},
    {EBB_CODE_GAMMA, 0, 4096, 4096, 16, 0, false, 13333}, /* one block */
    {EBB_CODE_GAMMA, 0, 512, 512, 16, 0, true, 20000},
    {EBB_CODE_GAMMA, 0, 512, 1, 8, 0, true, 33333},
    {EBB_CODE_DELTA, 0, 0, 0, 0, 0, false, 50000},
    {EBB_CODE_DELTA, 0, 8, 8, 1, 0, true, 50000},
    {EBB_CODE_DELTA, 0, 64, 8, 2, 0.01, true, 50000},
    {EBB_CODE_DELTA, 0, 1024, 32, 16, 0, true, 33333},
    {EBB_CODE_STEPS, 0, 0, 0, 0, 0, false, 50000},
    {EBB_CODE_STEPS, 0, 8, 8, 1, 0, true, 50000},
    {EBB_CODE_STEPS, 0, 64, 8, 2, 0.01, true, 50000},
    {EBB_CODE_STEPS, 0, 2048, 2048, 16, 0, true, 13333},
    {EBB_CODE_STEPS, 0, 256, 1, 4, 0, true, 33333},
};
#define CONFIG_COUNT (sizeof CONFIGS / sizeof CONFIGS[0])

static ebb_strarray_options options_of(const config *c)
{
    ebb_strarray_options o;
    ebb_strarray_options_init(c->code, c->width, &o);
    if (c->block)
        o.block = c->block;
    if (c->sub)
        o.sub = c->sub;
    if (c->slack)
        o.slack_bits = c->slack;
    if (c->rebuild_after > 0)
        o.rebuild_after = c->rebuild_after;
    return o;
}

static uint64_t max_value(const config *c)
{
    if (c->code == EBB_CODE_FIXED)
        return (UINT64_C(1) << c->width) - 1u;
    return EBB_CODE_MAX_VALUE;
}

static uint64_t below(uint64_t *rng, uint64_t n)
{
    return support_splitmix64(rng) % n;
}

/* A value of uniformly random bit length, up to max. */
static uint64_t random_large(uint64_t *rng, uint64_t max)
{
    uint32_t bits = (uint32_t)below(rng, 33);
    uint64_t v = bits == 0 ? 0 : support_splitmix64(rng) >> (64u - bits);
    return v > max ? max : v;
}

/* The next value of counter i under a random operation. */
static uint64_t next_value(uint64_t *rng, uint64_t old, uint64_t max)
{
    uint64_t pick = below(rng, 100);
    if (pick < 40)
        return old < max ? old + 1u : old;
    if (pick < 65)
        return old > 0 ? old - 1u : old;
    if (pick < 75)
        return 0;
    if (pick < 87) {
        uint64_t small = below(rng, 16);
        return small > max ? max : small;
    }
    if (pick < 97)
        return random_large(rng, max);
    return max;
}

static void check_all(const ebb_strarray *a, const uint64_t *model)
{
    for (uint64_t i = 0; i < a->count; i++) {
        uint64_t got = ebb_strarray_get(a, i);
        uint64_t scan = ebb_strarray_get_scan(a, i);
        CHECK(got == model[i] && scan == model[i],
              "counter %llu: get %llu scan %llu model %llu",
              (unsigned long long)i, (unsigned long long)got,
              (unsigned long long)scan, (unsigned long long)model[i]);
    }
}

static void check_one(const ebb_strarray *a, const uint64_t *model,
                      uint64_t i)
{
    if (i >= a->count)
        return;
    uint64_t got = ebb_strarray_get(a, i);
    uint64_t scan = ebb_strarray_get_scan(a, i);
    if (got != model[i] || scan != model[i])
        check_all(a, model); /* names the counter */
}

/* Replaces *a by an array read back from its own image. */
static void round_trip(ebb_strarray *a)
{
    size_t bytes;
    const uint64_t *image = ebb_strarray_image(a, &bytes);
    ebb_strarray b;
    assert_int_equal(ebb_strarray_from_image(&b, image, bytes), EBB_OK);
    size_t bytes_b;
    const uint64_t *image_b = ebb_strarray_image(&b, &bytes_b);
    assert_int_equal(bytes, bytes_b);
    assert_memory_equal(image, image_b, bytes);
    ebb_strarray_free(a);
    *a = b;
}

/* Picks a counter: mostly anywhere, sometimes the last block (growth
 * there cannot push and must rebuild). */
static uint64_t pick_index(uint64_t *rng, uint64_t count, uint32_t block)
{
    if (below(rng, 8) == 0) {
        uint64_t tail = count < block ? count : block;
        return count - 1u - below(rng, tail);
    }
    return below(rng, count);
}

static uint64_t run_config(const config *c, uint64_t seed)
{
    ebb_strarray_options o = options_of(c);
    ebb_strarray a;
    assert_int_equal(ebb_strarray_init(&a, COUNT, &o), EBB_OK);
    uint64_t *model = calloc(COUNT, sizeof *model);
    assert_non_null(model);
    uint64_t rng = seed * 0x9e3779b97f4a7c15u + (uint64_t)c->code * 131u +
                   c->width + c->block;
    uint64_t max = max_value(c);
    check_all(&a, model);
    for (uint64_t op = 1; op <= c->ops; op++) {
        uint64_t i = pick_index(&rng, COUNT, o.block);
        uint64_t v = next_value(&rng, model[i], max);
        assert_int_equal(ebb_strarray_set(&a, i, v), EBB_OK);
        model[i] = v;
        check_one(&a, model, i);
        check_one(&a, model, i + 1u);
        check_one(&a, model, below(&rng, COUNT));
        if (op % FULL_CHECK_EVERY == 0) {
            check_all(&a, model);
            uint64_t pick = below(&rng, 3);
            if (pick == 0)
                assert_int_equal(ebb_strarray_rebuild(&a), EBB_OK);
            else if (pick == 1)
                assert_int_equal(ebb_strarray_load(&a, model), EBB_OK);
            else
                round_trip(&a);
            check_all(&a, model);
        }
    }
    ebb_strarray_stats st;
    ebb_strarray_get_stats(&a, &st);
    if (c->must_push) {
        CHECK(st.pushes > 0 && st.rebuilds > 0 && st.expansions > st.pushes,
              "code %d block %u: expansions %llu pushes %llu rebuilds %llu",
              (int)c->code, o.block, (unsigned long long)st.expansions,
              (unsigned long long)st.pushes,
              (unsigned long long)st.rebuilds);
    }
    if (c->code == EBB_CODE_FIXED)
        assert_int_equal(st.expansions, 0);
    round_trip(&a);
    check_all(&a, model);
    ebb_strarray_free(&a);
    free(model);
    return c->ops;
}

static void test_model(void **state)
{
    (void)state;
    uint64_t ops = 0;
    for (uint64_t seed = 1; seed <= 2; seed++)
        for (size_t k = 0; k < CONFIG_COUNT; k++)
            ops += run_config(&CONFIGS[k], seed);
    print_message("model: %llu sets, each checked with get and get_scan\n",
                  (unsigned long long)ops);
    assert_true(ops >= 3000000u);
}

/* The essay's worked example, offsets included. */
static void test_worked_example(void **state)
{
    (void)state;
    ebb_strarray_options o;
    ebb_strarray_options_init(EBB_CODE_GAMMA, 0, &o);
    o.block = 8;
    o.sub = 4;
    o.slack_bits = 4;
    o.rebuild_after = 100; /* no periodic rebuild here */
    ebb_strarray a;
    assert_int_equal(ebb_strarray_init(&a, 16, &o), EBB_OK);
    static const uint64_t values[8] = {0, 1, 0, 2, 0, 0, 0, 3};
    for (uint64_t i = 0; i < 8; i++)
        assert_int_equal(ebb_strarray_set(&a, i, values[i]), EBB_OK);
    assert_int_equal(ebb_strarray_rebuild(&a), EBB_OK);
    const uint16_t *sub = a.sub_offsets;
    assert_int_equal(a.coarse[1], 20);
    assert_int_equal(sub[0], 8);
    assert_int_equal(ebb_strarray_set(&a, 1, 3), EBB_OK);
    assert_int_equal(sub[0], 10);
    assert_int_equal(a.coarse[1], 20);
    assert_int_equal(ebb_strarray_set(&a, 7, 7), EBB_OK);
    assert_int_equal(a.coarse[1], 20);
    ebb_strarray_stats st;
    ebb_strarray_get_stats(&a, &st);
    uint64_t pushes = st.pushes;
    assert_int_equal(ebb_strarray_set(&a, 0, 1), EBB_OK); /* +2 bits */
    ebb_strarray_get_stats(&a, &st);
    assert_int_equal(st.pushes, pushes + 1u);
    assert_int_equal(a.coarse[1], 22);
    static const uint64_t after[8] = {1, 3, 0, 2, 0, 0, 0, 7};
    for (uint64_t i = 0; i < 8; i++) {
        assert_int_equal(ebb_strarray_get(&a, i), after[i]);
        assert_int_equal(ebb_strarray_get_scan(&a, i), after[i]);
    }
    for (uint64_t i = 8; i < 16; i++)
        assert_int_equal(ebb_strarray_get(&a, i), 0);
    ebb_strarray_free(&a);
}

static void test_options(void **state)
{
    (void)state;
    ebb_strarray a;
    ebb_strarray_options o;
    ebb_strarray_options_init(EBB_CODE_GAMMA, 0, &o);
    assert_int_equal(o.block, 512);
    assert_int_equal(o.sub, 16);
    assert_int_equal(o.slack_bits, 64);
    assert_int_equal(ebb_strarray_init(&a, 0, &o), EBB_EINVAL);
    o.block = 12;
    assert_int_equal(ebb_strarray_init(&a, 10, &o), EBB_EINVAL);
    o.block = 8192;
    assert_int_equal(ebb_strarray_init(&a, 10, &o), EBB_EINVAL);
    o.block = 8;
    o.sub = 16;
    assert_int_equal(ebb_strarray_init(&a, 10, &o), EBB_EINVAL);
    ebb_strarray_options_init(EBB_CODE_FIXED, 33, &o);
    assert_int_equal(ebb_strarray_init(&a, 10, &o), EBB_EINVAL);
    ebb_strarray_options_init(EBB_CODE_FIXED, 4, &o);
    assert_int_equal(ebb_strarray_init(&a, 10, &o), EBB_OK);
    assert_int_equal(ebb_strarray_set(&a, 3, 16), EBB_EINVAL);
    assert_int_equal(ebb_strarray_set(&a, 10, 1), EBB_EINVAL);
    assert_int_equal(ebb_strarray_set(&a, 3, 15), EBB_OK);
    assert_int_equal(ebb_strarray_get(&a, 3), 15);
    ebb_strarray_free(&a);
    ebb_strarray_options_init(EBB_CODE_DELTA, 0, &o);
    assert_int_equal(ebb_strarray_init(&a, 10, &o), EBB_OK);
    assert_int_equal(ebb_strarray_set(&a, 3, EBB_CODE_MAX_VALUE + 1u),
                     EBB_EINVAL);
    assert_int_equal(ebb_strarray_set(&a, 3, EBB_CODE_MAX_VALUE), EBB_OK);
    assert_int_equal(ebb_strarray_get(&a, 3), EBB_CODE_MAX_VALUE);
    ebb_strarray_free(&a);
}

/* A copy of a's image, to compare after a failed operation. */
static uint64_t *image_copy(const ebb_strarray *a, size_t *bytes)
{
    const uint64_t *image = ebb_strarray_image(a, bytes);
    uint64_t *copy = malloc(*bytes);
    assert_non_null(copy);
    memcpy(copy, image, *bytes);
    return copy;
}

static void assert_unchanged(const ebb_strarray *a, const uint64_t *copy,
                             size_t bytes, const uint64_t *model)
{
    size_t now;
    const uint64_t *image = ebb_strarray_image(a, &now);
    assert_int_equal(now, bytes);
    assert_memory_equal(image, copy, bytes);
    check_all(a, model);
}

/* Growth at the end (no block after it to push): every such set rebuilds,
 * and failing its allocation leaves the array exactly as it was. */
static void test_alloc_failure(void **state)
{
    (void)state;
    ebb_strarray_options o;
    ebb_strarray_options_init(EBB_CODE_GAMMA, 0, &o);
    o.block = 8;
    o.sub = 4;
    o.slack_bits = 1;
    uint64_t model[64] = {0};
    ebb_strarray a;
    for (uint64_t n = 1; n <= 2; n++) {
        support_alloc_fail_nth(n, false);
        ebb_status st = ebb_strarray_init(&a, 64, &o);
        if (st == EBB_OK)
            ebb_strarray_free(&a);
        else
            assert_int_equal(st, EBB_ENOMEM);
        assert_int_equal(support_alloc_live_count(), 0);
    }
    support_alloc_fail_nth(0, false);
    assert_int_equal(ebb_strarray_init(&a, 64, &o), EBB_OK);
    uint64_t rng = 7;
    uint64_t failures = 0;
    for (uint64_t step = 0; step < 400; step++) {
        uint64_t i = step % 3 == 0 ? 63u - below(&rng, 8) : below(&rng, 64);
        uint64_t v = model[i] + 1u + below(&rng, 3) * model[i];
        if (v > EBB_CODE_MAX_VALUE)
            v = below(&rng, 4);
        size_t bytes;
        uint64_t *copy = image_copy(&a, &bytes);
        support_alloc_fail_nth(1, true);
        ebb_status st = ebb_strarray_set(&a, i, v);
        support_alloc_fail_nth(0, false);
        if (st == EBB_ENOMEM) {
            failures++;
            assert_unchanged(&a, copy, bytes, model);
            assert_int_equal(ebb_strarray_set(&a, i, v), EBB_OK);
        } else {
            assert_int_equal(st, EBB_OK);
        }
        model[i] = v;
        check_all(&a, model);
        free(copy);
        if (step % 50 == 0) {
            copy = image_copy(&a, &bytes);
            support_alloc_fail_nth(1, true);
            assert_int_equal(ebb_strarray_rebuild(&a), EBB_ENOMEM);
            support_alloc_fail_nth(0, false);
            assert_unchanged(&a, copy, bytes, model);
            const uint64_t *image = ebb_strarray_image(&a, &bytes);
            ebb_strarray b;
            support_alloc_fail_nth(1, true);
            assert_int_equal(ebb_strarray_from_image(&b, image, bytes),
                             EBB_ENOMEM);
            assert_int_equal(ebb_strarray_load(&a, model), EBB_ENOMEM);
            support_alloc_fail_nth(0, false);
            assert_unchanged(&a, copy, bytes, model);
            uint64_t bad[64];
            memcpy(bad, model, sizeof bad);
            bad[5] = EBB_CODE_MAX_VALUE + 1u;
            assert_int_equal(ebb_strarray_load(&a, bad), EBB_EINVAL);
            assert_unchanged(&a, copy, bytes, model);
            free(copy);
        }
    }
    print_message("alloc failure: %llu growths refused, array unchanged\n",
                  (unsigned long long)failures);
    assert_true(failures > 20);
    assert_int_equal(support_alloc_live_count(), 1);
    ebb_strarray_free(&a);
}

/* A small array with pushes behind it, for the image tests. */
static void busy_array(ebb_strarray *a, ebb_code code, uint32_t width)
{
    ebb_strarray_options o;
    ebb_strarray_options_init(code, width, &o);
    o.block = 16;
    o.sub = 4;
    o.slack_bits = 3;
    assert_int_equal(ebb_strarray_init(a, 100, &o), EBB_OK);
    uint64_t rng = 11;
    uint64_t max = code == EBB_CODE_FIXED ? (UINT64_C(1) << width) - 1u
                                          : 5000u;
    for (int step = 0; step < 300; step++) {
        uint64_t i = below(&rng, 100);
        assert_int_equal(ebb_strarray_set(a, i, below(&rng, max + 1u)),
                         EBB_OK);
    }
}

/* Either refused, or a consistent array whose image is these bytes. */
static bool accepted_consistent(const unsigned char *bytes, size_t size)
{
    ebb_strarray b;
    ebb_status st = ebb_strarray_from_image(&b, bytes, size);
    if (st != EBB_OK) {
        assert_int_equal(st, EBB_ECORRUPT);
        assert_int_equal(support_alloc_live_count(), 1);
        return false;
    }
    size_t got;
    const uint64_t *image = ebb_strarray_image(&b, &got);
    assert_int_equal(got, size);
    assert_memory_equal(image, bytes, size);
    for (uint64_t i = 0; i < b.count; i++)
        assert_int_equal(ebb_strarray_get(&b, i), ebb_strarray_get_scan(&b, i));
    ebb_strarray_free(&b);
    return true;
}

static void corrupt_one(ebb_code code, uint32_t width)
{
    ebb_strarray a;
    busy_array(&a, code, width);
    size_t size;
    const uint64_t *image = ebb_strarray_image(&a, &size);
    unsigned char *bytes = malloc(size + 16u);
    assert_non_null(bytes);
    memcpy(bytes, image, size);
    assert_true(accepted_consistent(bytes, size));
    /* truncations and one word too many */
    for (size_t cut = 0; cut < size; cut += 1)
        assert_int_equal(ebb_strarray_from_image(&a, bytes, cut) == EBB_OK,
                         false);
    memset(bytes + size, 0, 16);
    assert_int_equal(ebb_strarray_from_image(&a, bytes, size + 8u),
                     EBB_ECORRUPT);
    /* every bit of the header and the index */
    size_t index_bytes = (size_t)(a.base - a.image) * 8u;
    uint64_t refused = 0, flips = 0;
    for (size_t bit = 0; bit < index_bytes * 8u; bit++) {
        bytes[bit / 8u] ^= (unsigned char)(1u << (bit % 8u));
        bool accepted = accepted_consistent(bytes, size);
        bytes[bit / 8u] ^= (unsigned char)(1u << (bit % 8u));
        /* the statistics (words 5 .. 8), rebuild_after (word 3) and
           slack_bits (word 2's high half) may take other valid values;
           the rest of the header may not, nor (but for FIXED codes, whose
           zeros are valid counters) the offsets */
        size_t word = bit / 64u;
        if (word == 3u || (word >= 5u && word <= 8u) ||
            (word == 2u && bit % 64u >= 32u))
            continue;
        if (word >= 9u && code == EBB_CODE_FIXED)
            continue;
        /* the end of the last region moves inside its zero word */
        if (word == 9u + a.blocks)
            continue;
        refused += !accepted;
        flips++;
    }
    CHECK(refused == flips, "%s: %llu of %llu flips accepted",
          ebb_code_name(code), (unsigned long long)(flips - refused),
          (unsigned long long)flips);
    /* every bit of the base: a different counter, or refused */
    for (size_t bit = index_bytes * 8u; bit < size * 8u; bit++) {
        bytes[bit / 8u] ^= (unsigned char)(1u << (bit % 8u));
        (void)accepted_consistent(bytes, size);
        bytes[bit / 8u] ^= (unsigned char)(1u << (bit % 8u));
    }
    /* forged fields */
    unsigned char *coarse = bytes + 9u * 8u;
    support_put_le(coarse + 8, 8, support_get_le(coarse + 8, 8) + 1u);
    assert_int_equal(ebb_strarray_from_image(&a, bytes, size), EBB_ECORRUPT);
    memcpy(bytes, image, size);
    support_put_le(bytes + 8, 8, 101); /* count */
    assert_int_equal(ebb_strarray_from_image(&a, bytes, size), EBB_ECORRUPT);
    memcpy(bytes, image, size);
    support_put_le(bytes + 4u * 8u, 8, support_get_le(bytes + 32, 8) + 1u);
    assert_int_equal(ebb_strarray_from_image(&a, bytes, size), EBB_ECORRUPT);
    memcpy(bytes, image, size);
    bytes[size - 1u] = 0x80; /* the spare word */
    assert_int_equal(ebb_strarray_from_image(&a, bytes, size), EBB_ECORRUPT);
    free(bytes);
    ebb_strarray_free(&a);
}

static void test_corrupt_images(void **state)
{
    (void)state;
    corrupt_one(EBB_CODE_GAMMA, 0);
    corrupt_one(EBB_CODE_DELTA, 0);
    corrupt_one(EBB_CODE_STEPS, 0);
    corrupt_one(EBB_CODE_FIXED, 7);
}

/* ------------------------------------------------------------------------ */
/* Storage                                                                  */
/* ------------------------------------------------------------------------ */

#define KEYS 100000u
#define HASHES 5u
#define MEAN_COUNT 10.0

/* Zipf counts (skew 1) of KEYS keys: key r (1-based rank) occurs
 * max(1, floor(s / r)) times, s chosen so that the mean is MEAN_COUNT. */
static uint64_t zipf_count(double s, uint64_t r)
{
    double c = floor(s / (double)r);
    return c < 1 ? 1u : (uint64_t)c;
}

static double zipf_scale(void)
{
    double lo = 1, hi = 1e9;
    for (int it = 0; it < 100; it++) {
        double mid = sqrt(lo * hi);
        double total = 0;
        for (uint64_t r = 1; r <= KEYS; r++)
            total += (double)zipf_count(mid, r);
        if (total / KEYS < MEAN_COUNT)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

static void test_storage(void **state)
{
    (void)state;
    uint64_t m = (uint64_t)ceil(KEYS * HASHES / log(2.0));
    uint64_t *counters = calloc(m, sizeof *counters);
    assert_non_null(counters);
    double s = zipf_scale();
    uint64_t rng = 2026;
    for (uint64_t r = 1; r <= KEYS; r++) {
        uint64_t c = zipf_count(s, r);
        for (uint32_t h = 0; h < HASHES; h++)
            counters[support_splitmix64(&rng) % m] += c;
    }
    double ideal = 0;
    for (uint64_t i = 0; i < m; i++) {
        if (counters[i] > EBB_CODE_MAX_VALUE)
            counters[i] = EBB_CODE_MAX_VALUE;
        ideal += log2((double)counters[i] + 1.0);
    }
    ideal /= (double)m;
    uint64_t *order = malloc(m * sizeof *order);
    assert_non_null(order);
    for (uint64_t i = 0; i < m; i++)
        order[i] = i;
    for (uint64_t i = m - 1u; i > 0; i--) {
        uint64_t j = below(&rng, i + 1u), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    double best_total = INFINITY;
    static const ebb_code codes[] = {EBB_CODE_GAMMA, EBB_CODE_DELTA,
                                     EBB_CODE_STEPS};
    for (size_t k = 0; k < 3; k++) {
        ebb_strarray_options o;
        ebb_strarray_options_init(codes[k], 0, &o);
        ebb_strarray a;
        assert_int_equal(ebb_strarray_init(&a, m, &o), EBB_OK);
        /* in a random order, as a filter's hashes update them */
        for (uint64_t j = 0; j < m; j++) {
            uint64_t i = order[j];
            assert_int_equal(ebb_strarray_set(&a, i, counters[i]), EBB_OK);
        }
        assert_int_equal(ebb_strarray_rebuild(&a), EBB_OK);
        for (uint64_t i = 0; i < m; i += 97)
            assert_int_equal(ebb_strarray_get(&a, i), counters[i]);
        /* a bulk load lays the same counters out identically (the
           header's statistics aside) */
        ebb_strarray bulk;
        assert_int_equal(ebb_strarray_init(&bulk, m, &o), EBB_OK);
        assert_int_equal(ebb_strarray_load(&bulk, counters), EBB_OK);
        size_t bytes_a, bytes_bulk;
        const uint64_t *image_a = ebb_strarray_image(&a, &bytes_a);
        const uint64_t *image_bulk = ebb_strarray_image(&bulk, &bytes_bulk);
        assert_int_equal(bytes_a, bytes_bulk);
        assert_memory_equal(image_a + 9, image_bulk + 9, bytes_a - 72u);
        ebb_strarray_free(&bulk);
        ebb_strarray_stats st;
        ebb_strarray_get_stats(&a, &st);
        double n_bits = (double)st.code_bits;
        double over = (double)(st.index_bits + st.slack_bits) / n_bits;
        double total = (double)ebb_strarray_bytes(&a) * 8.0 / (double)m;
        print_message("storage %-5s: m %llu, N/m %.3f, index %.3f + slack "
                      "%.3f bits/counter = %.3f N; total %.3f bits/counter "
                      "(sum log2(C+1)/m = %.3f, ratio %.3f)\n",
                      ebb_code_name(codes[k]), (unsigned long long)m,
                      n_bits / (double)m, (double)st.index_bits / (double)m,
                      (double)st.slack_bits / (double)m, over, total, ideal,
                      total / ideal);
        CHECK(over <= 0.5, "%s: index + slack %.3f N", ebb_code_name(codes[k]),
              over);
        /* the 1.5 x sum log2(C + 1) / m is out of reach of any
           code that spends a bit on a zero counter (half of them here):
           what the index controls is its share over the codes */
        CHECK(total <= 1.5 * n_bits / (double)m,
              "%s: %.3f bits/counter, the codes alone %.3f",
              ebb_code_name(codes[k]), total, n_bits / (double)m);
        if (total < best_total)
            best_total = total;
        ebb_strarray_free(&a);
    }
    print_message("storage best: %.3f bits/counter (sum log2(C+1)/m %.3f)"
                  "\n", best_total, ideal);
    CHECK(best_total > ideal, "%.3f bits/counter below %.3f", best_total,
          ideal);
    free(order);
    free(counters);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SUPPORT_TEST(test_worked_example, support_setup_counting_unzeroed),
        SUPPORT_TEST(test_options, support_setup_counting_unzeroed),
        SUPPORT_TEST(test_alloc_failure, support_setup_counting_unzeroed),
        SUPPORT_TEST(test_corrupt_images, support_setup_counting_unzeroed),
        SUPPORT_TEST(test_storage, support_setup_counting_unzeroed),
        SUPPORT_TEST(test_model, support_setup_counting_unzeroed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
