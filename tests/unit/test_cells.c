/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cells.c: the packed array of w-bit cells (src/core/cells.h).
 *
 * Every width 1..32 is checked against a naive model (one uint32_t per
 * cell) under long random sequences of mixed operations, with counts that
 * leave the last word partly used. After each operation the touched cell
 * and its neighbours are compared; periodically the whole array is, and
 * the words themselves are rebuilt bit by bit from the model, which pins
 * the documented layout (cell i is stream bits [i*w, i*w + w)) and the zero
 * tail. Then: cells that straddle words, saturation and its reports,
 * statistics, clear, snapshots, rejections and allocation failure.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/cells.h"
#include "support.h"

#define MODEL_OPS 20000u
#define FULL_CHECK_EVERY 997u

static uint32_t max_of(uint32_t width) {
    return (uint32_t)((UINT64_C(1) << width) - 1u);
}

static uint32_t min_u32(uint64_t a, uint64_t b) {
    return (uint32_t)(a < b ? a : b);
}

/* Counts to test at a width: one cell, one that ends exactly at a word
 * boundary when w divides 64, and several that leave the last word partly
 * used (cells straddling words among them). */
static size_t counts_for(uint32_t width, uint64_t *out) {
    size_t n = 0;
    out[n++] = 1;
    out[n++] = 64u / width + 1u;
    out[n++] = 3u * 64u / width + 1u;
    out[n++] = 301;
    if (64u % width == 0)
        out[n++] = 4u * 64u / width; /* fills the last word */
    return n;
}

/* The words the layout prescribes for the model's values. */
static void expected_words(const uint32_t *model, uint64_t count,
                           uint32_t width, uint64_t *words,
                           uint64_t word_count) {
    memset(words, 0, (size_t)word_count * sizeof *words);
    for (uint64_t bit = 0; bit < count * width; bit++) {
        uint64_t value = (model[bit / width] >> (bit % width)) & 1u;
        words[bit / 64] |= value << (bit % 64);
    }
}

static void check_all(const ebb_cells *c, const uint32_t *model,
                      const char *when) {
    uint64_t *words = malloc((size_t)c->word_count * sizeof *words);
    assert_non_null(words);
    for (uint64_t i = 0; i < c->count; i++)
        CHECK(ebb_cells_get(c, i) == model[i],
              "w=%u count=%llu %s: cell %llu is %u, model %u", c->width,
              (unsigned long long)c->count, when, (unsigned long long)i,
              ebb_cells_get(c, i), model[i]);
    expected_words(model, c->count, c->width, words, c->word_count);
    for (uint64_t j = 0; j < c->word_count; j++)
        CHECK(c->words[j] == words[j],
              "w=%u count=%llu %s: word %llu is %016llx, layout says %016llx",
              c->width, (unsigned long long)c->count, when,
              (unsigned long long)j, (unsigned long long)c->words[j],
              (unsigned long long)words[j]);
    free(words);
}

static void check_near(const ebb_cells *c, const uint32_t *model,
                       uint64_t i) {
    uint64_t lo = i > 0 ? i - 1 : 0;
    uint64_t hi = i + 1 < c->count ? i + 1 : i;
    for (uint64_t j = lo; j <= hi; j++)
        CHECK(ebb_cells_get(c, j) == model[j],
              "w=%u: after an operation on cell %llu, cell %llu is %u, "
              "model %u", c->width, (unsigned long long)i,
              (unsigned long long)j, ebb_cells_get(c, j), model[j]);
}

/* A value to store or add: often 0, 1, max - 1, max or above max, else
 * anything up to max. */
static uint32_t draw_value(uint64_t *rng, uint32_t max) {
    uint64_t x = support_splitmix64(rng);
    switch (x % 8u) {
    case 0: return 0;
    case 1: return 1;
    case 2: return max - 1u;
    case 3: return max;
    case 4: return (uint32_t)(x >> 32); /* usually above max */
    default: return (uint32_t)((x >> 8) % ((uint64_t)max + 1u));
    }
}

static void run_model(uint32_t width, uint64_t count, uint64_t seed) {
    ebb_cells c;
    uint32_t max = max_of(width);
    uint32_t *model = calloc((size_t)count, sizeof *model);
    uint64_t rng = seed;
    assert_non_null(model);
    assert_int_equal(ebb_cells_init(&c, count, width), EBB_OK);
    assert_int_equal(c.count, count);
    assert_int_equal(c.width, width);
    assert_int_equal(c.max, max);
    assert_int_equal(c.word_count, (count * width + 63u) / 64u);
    check_all(&c, model, "after init");
    for (uint32_t op = 0; op < MODEL_OPS; op++) {
        uint64_t x = support_splitmix64(&rng);
        uint64_t i = x % count;
        uint32_t v = draw_value(&rng, max);
        uint32_t old = model[i];
        switch ((x >> 40) % 5u) {
        case 0:
            ebb_cells_set(&c, i, v);
            model[i] = min_u32(v, max);
            break;
        case 1: {
            bool lost = ebb_cells_increment(&c, i, v);
            model[i] = min_u32((uint64_t)old + v, max);
            CHECK(lost == ((uint64_t)old + v > max),
                  "w=%u: increment %u by %u reported %d", width, old, v,
                  (int)lost);
            break;
        }
        case 2: {
            bool lost = ebb_cells_decrement(&c, i, v);
            model[i] = v < old ? old - v : 0u;
            CHECK(lost == (v > old), "w=%u: decrement %u by %u reported %d",
                  width, old, v, (int)lost);
            break;
        }
        case 3: {
            uint32_t got = ebb_cells_max_with(&c, i, v);
            uint32_t clamped = min_u32(v, max);
            model[i] = clamped > old ? clamped : old;
            CHECK(got == old, "w=%u: max_with returned %u, old %u", width,
                  got, old);
            break;
        }
        default:
            CHECK(ebb_cells_get(&c, i) == old, "w=%u: get %u, model %u",
                  width, ebb_cells_get(&c, i), old);
            break;
        }
        check_near(&c, model, i);
        if (op % FULL_CHECK_EVERY == 0)
            check_all(&c, model, "during the sequence");
    }
    check_all(&c, model, "at the end");

    uint64_t zeros = 0;
    for (uint64_t i = 0; i < count; i++)
        zeros += model[i] == 0;
    assert_int_equal(ebb_cells_count_zero(&c), zeros);
    if (width <= EBB_CELLS_HISTOGRAM_MAX_WIDTH) {
        uint64_t *got = calloc((size_t)max + 1u, sizeof *got);
        uint64_t *want = calloc((size_t)max + 1u, sizeof *want);
        assert_non_null(got);
        assert_non_null(want);
        got[0] = 7; /* histogram adds to what is there */
        want[0] = 7;
        for (uint64_t i = 0; i < count; i++)
            want[model[i]]++;
        assert_int_equal(ebb_cells_histogram(&c, got), EBB_OK);
        assert_memory_equal(got, want, ((size_t)max + 1u) * sizeof *got);
        free(got);
        free(want);
    }
    ebb_cells_clear(&c);
    memset(model, 0, (size_t)count * sizeof *model);
    check_all(&c, model, "after clear");
    assert_int_equal(ebb_cells_count_zero(&c), count);
    ebb_cells_free(&c);
    free(model);
}

static void model_sequences_at_every_width(void **state) {
    (void)state;
    for (uint32_t width = 1; width <= 32; width++) {
        uint64_t counts[5];
        size_t n = counts_for(width, counts);
        for (size_t k = 0; k < n; k++)
            run_model(width, counts[k], 1000u * width + k);
    }
}

/* The first, last and every straddling cell, at 0, max and a pattern, with
 * all others holding max (or 0): a write never reaches a neighbour. */
static void boundary_cells_at_every_width(void **state) {
    (void)state;
    for (uint32_t width = 1; width <= 32; width++) {
        uint64_t count = 5u * 64u / width + 3u;
        uint32_t max = max_of(width);
        uint32_t pattern = 0x5a5a5a5au & max;
        uint32_t *model = malloc((size_t)count * sizeof *model);
        ebb_cells c;
        uint64_t straddling = 0;
        assert_non_null(model);
        assert_int_equal(ebb_cells_init(&c, count, width), EBB_OK);
        for (uint32_t background = 0; background < 2; background++) {
            uint32_t fill = background ? max : 0u;
            for (uint64_t i = 0; i < count; i++) {
                ebb_cells_set(&c, i, fill);
                model[i] = fill;
            }
            check_all(&c, model, "filled");
            for (uint64_t i = 0; i < count; i++) {
                uint64_t off = (i * width) % 64u;
                bool straddles = off + width > 64u;
                if (i != 0 && i != count - 1 && !straddles)
                    continue;
                straddling += straddles;
                const uint32_t values[] = {0u, max, pattern, max ^ pattern,
                                           fill};
                for (size_t k = 0; k < 5; k++) {
                    ebb_cells_set(&c, i, values[k]);
                    model[i] = values[k];
                    check_near(&c, model, i);
                }
            }
            check_all(&c, model, "after boundary writes");
        }
        /* Straddling cells exist exactly when w does not divide 64. */
        CHECK((straddling > 0) == (64u % width != 0),
              "w=%u: %llu straddling cells", width,
              (unsigned long long)straddling);
        ebb_cells_free(&c);
        free(model);
    }
}

/* Saturation: the exact edges of the "lost" report. */
static void saturation_is_reported_at_the_edges(void **state) {
    (void)state;
    for (uint32_t width = 1; width <= 32; width++) {
        uint32_t max = max_of(width);
        ebb_cells c;
        uint64_t i = 64u / width; /* the second word's first cell or a
                                     straddling one */
        assert_int_equal(ebb_cells_init(&c, 2u * 64u / width + 2u, width),
                         EBB_OK);
        /* Up to max exactly: nothing lost. */
        assert_false(ebb_cells_increment(&c, i, max));
        assert_int_equal(ebb_cells_get(&c, i), max);
        assert_false(ebb_cells_increment(&c, i, 0));
        assert_true(ebb_cells_increment(&c, i, 1));
        assert_int_equal(ebb_cells_get(&c, i), max);
        assert_true(ebb_cells_increment(&c, i, UINT32_MAX));
        assert_int_equal(ebb_cells_get(&c, i), max);
        /* Down to 0 exactly: nothing lost. */
        assert_false(ebb_cells_decrement(&c, i, max));
        assert_int_equal(ebb_cells_get(&c, i), 0);
        assert_false(ebb_cells_decrement(&c, i, 0));
        assert_true(ebb_cells_decrement(&c, i, 1));
        assert_int_equal(ebb_cells_get(&c, i), 0);
        assert_true(ebb_cells_decrement(&c, i, UINT32_MAX));
        assert_int_equal(ebb_cells_get(&c, i), 0);
        /* Partial loss: 1 + max. */
        assert_false(ebb_cells_increment(&c, i, 1));
        assert_true(ebb_cells_increment(&c, i, max));
        assert_int_equal(ebb_cells_get(&c, i), max);
        /* set and max_with clamp values above max. */
        ebb_cells_set(&c, i, UINT32_MAX);
        assert_int_equal(ebb_cells_get(&c, i), max);
        ebb_cells_set(&c, i, 0);
        assert_int_equal(ebb_cells_max_with(&c, i, UINT32_MAX), 0);
        assert_int_equal(ebb_cells_get(&c, i), max);
        assert_int_equal(ebb_cells_max_with(&c, i, 0), max);
        assert_int_equal(ebb_cells_get(&c, i), max);
        /* Neighbours untouched throughout. */
        assert_int_equal(ebb_cells_get(&c, i - 1), 0);
        assert_int_equal(ebb_cells_get(&c, i + 1), 0);
        assert_int_equal(ebb_cells_count_zero(&c), c.count - 1);
        ebb_cells_free(&c);
    }
}

static void histogram_refuses_wide_cells(void **state) {
    uint64_t counts[4] = {1, 2, 3, 4};
    const uint64_t before[4] = {1, 2, 3, 4};
    ebb_cells c;
    (void)state;
    assert_int_equal(ebb_cells_init(&c, 10, 17), EBB_OK);
    assert_int_equal(ebb_cells_histogram(&c, counts), EBB_EINVAL);
    assert_memory_equal(counts, before, sizeof counts);
    ebb_cells_free(&c);
}

static void fill_random(ebb_cells *c, uint64_t seed) {
    uint64_t rng = seed;
    for (uint64_t i = 0; i < c->count; i++)
        ebb_cells_set(c, i, (uint32_t)support_splitmix64(&rng));
}

/* put writes the words as little-endian u64; get_words reads them back,
 * and a second put is byte-identical. */
static void snapshot_round_trip_at_every_width(void **state) {
    (void)state;
    for (uint32_t width = 1; width <= 32; width++) {
        uint64_t counts[5];
        size_t n = counts_for(width, counts);
        for (size_t k = 0; k < n; k++) {
            ebb_cells c, d;
            size_t bytes;
            unsigned char *first, *second;
            assert_int_equal(ebb_cells_init(&c, counts[k], width), EBB_OK);
            fill_random(&c, width * 31u + k);
            bytes = ebb_cells_bytes(&c);
            assert_int_equal(bytes, c.word_count * 8u);
            first = malloc(bytes);
            second = malloc(bytes);
            assert_non_null(first);
            assert_non_null(second);
            ebb_writer w = {first, first, first + bytes, NULL};
            ebb_cells_put(&w, &c);
            assert_ptr_equal(w.at, first + bytes);
            for (uint64_t j = 0; j < c.word_count; j++)
                assert_int_equal(support_get_le(first + 8u * j, 8),
                                 c.words[j]);

            assert_int_equal(ebb_cells_init(&d, counts[k], width), EBB_OK);
            ebb_reader r = {first, first + bytes};
            assert_true(ebb_cells_get_words(&r, &d));
            assert_ptr_equal(r.at, first + bytes);
            for (uint64_t i = 0; i < c.count; i++)
                assert_int_equal(ebb_cells_get(&d, i), ebb_cells_get(&c, i));
            ebb_writer w2 = {second, second, second + bytes, NULL};
            ebb_cells_put(&w2, &d);
            assert_memory_equal(first, second, bytes);
            ebb_cells_free(&c);
            ebb_cells_free(&d);
            free(first);
            free(second);
        }
    }
}

/* Every bit past count * w in the last word is refused, one at a time; a
 * reader one byte short is refused without touching the cells. */
static void snapshot_refuses_tail_bits_and_short_input(void **state) {
    (void)state;
    for (uint32_t width = 1; width <= 32; width++) {
        uint64_t count = 3u * 64u / width + 1u;
        uint64_t used = (count * width) % 64u;
        ebb_cells c, d;
        assert_int_equal(ebb_cells_init(&c, count, width), EBB_OK);
        assert_int_equal(ebb_cells_init(&d, count, width), EBB_OK);
        fill_random(&c, width);
        size_t bytes = ebb_cells_bytes(&c);
        unsigned char *buf = malloc(bytes);
        assert_non_null(buf);
        ebb_writer w = {buf, buf, buf + bytes, NULL};
        ebb_cells_put(&w, &c);
        assert_true(used != 0);
        for (uint64_t bit = used; bit < 64u; bit++) {
            size_t at = bytes - 8u + (size_t)(bit / 8u);
            buf[at] ^= (unsigned char)(1u << (bit % 8u));
            ebb_reader r = {buf, buf + bytes};
            CHECK(!ebb_cells_get_words(&r, &d),
                  "w=%u: tail bit %llu set but accepted", width,
                  (unsigned long long)bit);
            buf[at] ^= (unsigned char)(1u << (bit % 8u));
        }
        /* The last used bit is a cell's: accepted. */
        {
            ebb_reader r = {buf, buf + bytes};
            assert_true(ebb_cells_get_words(&r, &d));
        }
        ebb_cells_clear(&d);
        ebb_reader short_reader = {buf, buf + bytes - 1u};
        assert_false(ebb_cells_get_words(&short_reader, &d));
        assert_ptr_equal(short_reader.at, buf);
        assert_int_equal(ebb_cells_count_zero(&d), count);
        free(buf);
        ebb_cells_free(&c);
        ebb_cells_free(&d);
    }
}

static void word_count_edges(void **state) {
    (void)state;
    assert_int_equal(ebb_cells_word_count(1, 1), 1);
    assert_int_equal(ebb_cells_word_count(64, 1), 1);
    assert_int_equal(ebb_cells_word_count(65, 1), 2);
    assert_int_equal(ebb_cells_word_count(21, 3), 1);
    assert_int_equal(ebb_cells_word_count(22, 3), 2); /* 66 bits */
    assert_int_equal(ebb_cells_word_count(2, 32), 1);
    assert_int_equal(ebb_cells_word_count(3, 32), 2);
    assert_int_equal(ebb_cells_word_count(0, 3), 0);
    assert_int_equal(ebb_cells_word_count(5, 0), 0);
    assert_int_equal(ebb_cells_word_count(5, 33), 0);
    assert_int_equal(ebb_cells_word_count(UINT64_MAX, 1),
                     UINT64_MAX / 64u + 1u);
    assert_int_equal(ebb_cells_word_count(UINT64_MAX, 2), 0);
    assert_int_equal(ebb_cells_word_count(UINT64_MAX / 32u, 32),
                     (UINT64_MAX / 32u) / 2u + 1u);
    assert_int_equal(ebb_cells_word_count(UINT64_MAX / 32u + 1u, 32), 0);
}

/* Rejections leave the struct as it was and allocate nothing. */
static void init_rejections(void **state) {
    static const struct {
        uint64_t count;
        uint32_t width;
        ebb_status status;
    } cases[] = {
        {10, 0, EBB_EINVAL},
        {10, 33, EBB_EINVAL},
        {10, UINT32_MAX, EBB_EINVAL},
        {0, 3, EBB_EINVAL},
        {0, 0, EBB_EINVAL},
        {UINT64_MAX, 2, EBB_EOVERFLOW},
        {UINT64_MAX / 32u + 1u, 32, EBB_EOVERFLOW},
        /* Fits in bits but not in memory: the allocator refuses. */
        {UINT64_MAX / 32u, 32,
         sizeof(size_t) < 8 ? EBB_EOVERFLOW : EBB_ENOMEM},
        {(uint64_t)1 << 40, 8, EBB_ENOMEM},
    };
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ebb_cells c, before;
        memset(&c, 0xa5, sizeof c);
        before = c;
        ebb_status st = ebb_cells_init(&c, cases[k].count, cases[k].width);
        CHECK(st == cases[k].status, "case %zu: status %d, expected %d", k,
              (int)st, (int)cases[k].status);
        assert_memory_equal(&c, &before, sizeof c);
        assert_int_equal(support_alloc_live_count(), 0);
    }
}

/* The only allocation fails cleanly; the next attempt succeeds and holds
 * zeros even when the allocator hands out garbage. */
static void allocation_failure_is_clean(void **state) {
    (void)state;
    for (uint32_t width = 1; width <= 32; width += 7) {
        ebb_cells c, before;
        memset(&c, 0x5c, sizeof c);
        before = c;
        support_alloc_fail_nth(1, true);
        assert_int_equal(ebb_cells_init(&c, 1000, width), EBB_ENOMEM);
        assert_true(support_alloc_failures() > 0);
        assert_memory_equal(&c, &before, sizeof c);
        assert_int_equal(support_alloc_live_count(), 0);
        support_alloc_fail_nth(0, false);
        assert_int_equal(ebb_cells_init(&c, 1000, width), EBB_OK);
        assert_int_equal(support_alloc_live_count(), 1);
        assert_int_equal(ebb_cells_count_zero(&c), 1000);
        for (uint64_t j = 0; j < c.word_count; j++)
            assert_int_equal(c.words[j], 0);
        ebb_cells_free(&c);
        assert_null(c.words);
        ebb_cells_free(&c); /* twice: a no-op */
        assert_int_equal(support_alloc_live_count(), 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        SUPPORT_TEST(model_sequences_at_every_width, support_setup_counting),
        SUPPORT_TEST(boundary_cells_at_every_width, support_setup_counting),
        SUPPORT_TEST(saturation_is_reported_at_the_edges,
                     support_setup_counting),
        SUPPORT_TEST(histogram_refuses_wide_cells, support_setup_counting),
        SUPPORT_TEST(snapshot_round_trip_at_every_width,
                     support_setup_counting),
        SUPPORT_TEST(snapshot_refuses_tail_bits_and_short_input,
                     support_setup_counting),
        SUPPORT_TEST(word_count_edges, support_setup_counting),
        SUPPORT_TEST(init_rejections, support_setup_counting),
        SUPPORT_TEST(allocation_failure_is_clean, support_setup_counting),
        SUPPORT_TEST(allocation_failure_is_clean,
                     support_setup_counting_unzeroed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
