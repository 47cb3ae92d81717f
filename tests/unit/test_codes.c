/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_codes.c: the counter codes (src/core/codes.h).
 *
 * A reference encoder below writes every code as a string of '0'/'1'
 * straight from its definition (docs/format.md, "Counter codes"), one bit
 * at a time; the library's streams are compared with it bit for bit, so
 * the layout is pinned, not only the round trip. Then: hand-written
 * patterns, lengths against the closed forms, round trips of 0..2^16,
 * powers of two and their neighbours up to 2^32 - 1 and random values at
 * every bit offset (straddling words), neighbouring bits left intact,
 * skip against repeated get over random mixed streams, invalid codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/codes.h"
#include "support.h"

#define STREAM_WORDS 64u
#define INVALID (EBB_CODE_MAX_VALUE + 1u)

static const ebb_code all_codes[] = {EBB_CODE_FIXED, EBB_CODE_GAMMA,
                                     EBB_CODE_DELTA, EBB_CODE_STEPS};

static uint32_t floor_log2(uint64_t v) {
    uint32_t l = 0;
    while (v >>= 1)
        l++;
    return l;
}

/* Appends v's `bits` low bits, most significant first. */
static size_t ref_msb_first(char *out, size_t at, uint64_t v, uint32_t bits) {
    for (uint32_t i = bits; i-- > 0;)
        out[at++] = (char)('0' + ((v >> i) & 1u));
    return at;
}

static size_t ref_gamma(char *out, size_t at, uint64_t n) {
    uint64_t v = n + 1u;
    uint32_t z = floor_log2(v);
    for (uint32_t i = 0; i < z; i++)
        out[at++] = '0';
    return ref_msb_first(out, at, v, z + 1u);
}

static size_t ref_delta(char *out, size_t at, uint64_t n) {
    uint64_t v = n + 1u;
    uint32_t l = floor_log2(v) + 1u;
    at = ref_gamma(out, at, l - 1u); /* gamma of L = our GAMMA of L - 1 */
    return ref_msb_first(out, at, v, l - 1u);
}

/* STEPS: 0 -> 0, 1 -> 10, n >= 2 -> 11 then GAMMA of n - 2. */
static size_t ref_steps(char *out, size_t at, uint64_t n) {
    if (n < 2u) {
        if (n == 1u)
            out[at++] = '1';
        out[at++] = '0';
        return at;
    }
    out[at++] = '1';
    out[at++] = '1';
    return ref_gamma(out, at, n - 2u);
}

/* The code of n as a '0'/'1' string, first bit first; returns its length. */
static size_t ref_code(ebb_code code, uint32_t width, uint64_t n, char *out) {
    size_t len = 0;
    switch (code) {
    case EBB_CODE_FIXED: /* low bit first, like cells.h */
        for (uint32_t i = 0; i < width; i++)
            out[len++] = (char)('0' + ((n >> i) & 1u));
        break;
    case EBB_CODE_GAMMA:
        len = ref_gamma(out, 0, n);
        break;
    case EBB_CODE_DELTA:
        len = ref_delta(out, 0, n);
        break;
    case EBB_CODE_STEPS:
        len = ref_steps(out, 0, n);
        break;
    }
    out[len] = '\0';
    return len;
}

static int bit_at(const uint64_t *words, uint64_t b) {
    return (int)((words[b >> 6] >> (b & 63u)) & 1u);
}

static uint32_t width_for(ebb_code code, uint64_t n) {
    if (code != EBB_CODE_FIXED)
        return 0;
    return n == 0 ? 1u : floor_log2(n) + 1u;
}

/* Puts n at pos over a random background; checks the bits against the
 * reference, the bits around untouched, the length and the read back. */
static void check_one(ebb_code code, uint32_t width, uint64_t n, uint64_t pos,
                      uint64_t *seed) {
    uint64_t words[STREAM_WORDS], before[STREAM_WORDS];
    char ref[EBB_CODE_MAX_BITS + 8];
    for (unsigned i = 0; i < STREAM_WORDS; i++)
        words[i] = before[i] = support_splitmix64(seed);
    size_t ref_len = ref_code(code, width, n, ref);
    uint32_t len = ebb_code_put(words, pos, code, width, n);
    assert_int_equal(len, ref_len);
    assert_int_equal(ebb_code_length(code, width, n), ref_len);
    assert_true(len <= EBB_CODE_MAX_BITS);
    for (uint64_t b = 0; b < STREAM_WORDS * 64u; b++) {
        if (b >= pos && b < pos + len)
            assert_int_equal(bit_at(words, b), ref[b - pos] - '0');
        else if (bit_at(words, b) != bit_at(before, b))
            fail_msg("%s n=%llu pos=%llu: bit %llu changed",
                     ebb_code_name(code), (unsigned long long)n,
                     (unsigned long long)pos, (unsigned long long)b);
    }
    uint32_t got_len = 99;
    assert_true(ebb_code_get(words, pos, code, width, &got_len) == n);
    assert_int_equal(got_len, len);
    assert_true(ebb_code_get(words, pos, code, width, NULL) == n);
    assert_true(ebb_code_skip(words, pos, code, width, 1) == pos + len);
}

static void test_names(void **state) {
    (void)state;
    assert_string_equal(ebb_code_name(EBB_CODE_FIXED), "fixed");
    assert_string_equal(ebb_code_name(EBB_CODE_GAMMA), "gamma");
    assert_string_equal(ebb_code_name(EBB_CODE_DELTA), "delta");
    assert_string_equal(ebb_code_name(EBB_CODE_STEPS), "steps");
    assert_null(ebb_code_name((ebb_code)4));
}

/* Patterns written by hand from the definitions (first bit first). */
static void test_known_patterns(void **state) {
    (void)state;
    static const struct {
        ebb_code code;
        uint32_t width;
        uint64_t n;
        const char *bits;
    } known[] = {
        {EBB_CODE_FIXED, 3, 6, "011"},
        {EBB_CODE_FIXED, 1, 1, "1"},
        {EBB_CODE_FIXED, 5, 1, "10000"},
        {EBB_CODE_GAMMA, 0, 0, "1"},
        {EBB_CODE_GAMMA, 0, 1, "010"},
        {EBB_CODE_GAMMA, 0, 2, "011"},
        {EBB_CODE_GAMMA, 0, 3, "00100"},
        {EBB_CODE_GAMMA, 0, 8, "0001001"},
        {EBB_CODE_DELTA, 0, 0, "1"},
        {EBB_CODE_DELTA, 0, 1, "0100"},
        {EBB_CODE_DELTA, 0, 2, "0101"},
        {EBB_CODE_DELTA, 0, 3, "01100"},
        {EBB_CODE_DELTA, 0, 6, "01111"},
        {EBB_CODE_DELTA, 0, 7, "00100000"},
        {EBB_CODE_DELTA, 0, 16, "001010001"},
        {EBB_CODE_STEPS, 0, 0, "0"},
        {EBB_CODE_STEPS, 0, 1, "10"},
        {EBB_CODE_STEPS, 0, 2, "111"},
        {EBB_CODE_STEPS, 0, 3, "11010"},
        {EBB_CODE_STEPS, 0, 4, "11011"},
        {EBB_CODE_STEPS, 0, 5, "1100100"},
        {EBB_CODE_STEPS, 0, 9, "110001000"},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        char ref[EBB_CODE_MAX_BITS + 8];
        ref_code(known[k].code, known[k].width, known[k].n, ref);
        assert_string_equal(ref, known[k].bits);
        for (uint64_t pos = 0; pos < 64; pos += 9) {
            uint64_t words[3] = {0, 0, 0};
            uint32_t len = ebb_code_put(words, pos, known[k].code,
                                        known[k].width, known[k].n);
            assert_int_equal(len, strlen(known[k].bits));
            for (uint32_t b = 0; b < len; b++)
                assert_int_equal(bit_at(words, pos + b),
                                 known[k].bits[b] - '0');
        }
    }
}

/* Lengths against the closed forms. */
static void test_length_formulas(void **state) {
    (void)state;
    for (uint64_t n = 0; n <= EBB_CODE_MAX_VALUE; n = n * 3u + 1u) {
        for (uint64_t m = n; m < n + 3u && m <= EBB_CODE_MAX_VALUE; m++) {
            uint32_t lg = floor_log2(m + 1u);
            uint32_t l = lg + 1u;
            assert_int_equal(ebb_code_length(EBB_CODE_GAMMA, 0, m),
                             2u * lg + 1u);
            assert_int_equal(ebb_code_length(EBB_CODE_DELTA, 0, m),
                             l + 2u * floor_log2(l));
            uint32_t steps = m < 2u ? (uint32_t)m + 1u
                                    : 2u * floor_log2(m - 1u) + 3u;
            assert_int_equal(ebb_code_length(EBB_CODE_STEPS, 0, m), steps);
        }
    }
    assert_int_equal(ebb_code_length(EBB_CODE_GAMMA, 0, EBB_CODE_MAX_VALUE),
                     65);
    assert_int_equal(ebb_code_length(EBB_CODE_DELTA, 0, EBB_CODE_MAX_VALUE),
                     43);
    assert_int_equal(ebb_code_length(EBB_CODE_STEPS, 0, EBB_CODE_MAX_VALUE),
                     65);
    assert_int_equal(ebb_code_length(EBB_CODE_FIXED, 17, 5), 17);
}

static void test_round_trip_small(void **state) {
    (void)state;
    uint64_t seed = 1;
    for (size_t c = 0; c < 4; c++)
        for (uint64_t n = 0; n <= 65536u; n++)
            check_one(all_codes[c], width_for(all_codes[c], n), n,
                      64u + (n * 7u) % 64u, &seed);
}

static void check_at_all_offsets(uint64_t n, uint64_t *seed) {
    for (size_t c = 0; c < 4; c++) {
        uint32_t width = width_for(all_codes[c], n);
        for (uint64_t off = 0; off < 64; off++)
            check_one(all_codes[c], width, n, 128u + off, seed);
        if (all_codes[c] == EBB_CODE_FIXED && width < 32)
            check_one(all_codes[c], 32, n, 100, seed);
    }
}

static void test_round_trip_powers(void **state) {
    (void)state;
    uint64_t seed = 2;
    for (uint32_t e = 0; e <= 32; e++) {
        uint64_t p = UINT64_C(1) << e;
        for (uint64_t n = p - (p > 1 ? 2u : 1u); n <= p + 1u; n++)
            if (n <= EBB_CODE_MAX_VALUE)
                check_at_all_offsets(n, &seed);
    }
}

static void test_round_trip_random(void **state) {
    (void)state;
    uint64_t seed = 3;
    for (unsigned i = 0; i < 300; i++) {
        uint64_t r = support_splitmix64(&seed);
        /* log-uniform: every length is hit */
        uint64_t n = (r & EBB_CODE_MAX_VALUE) >> (r >> 59);
        check_at_all_offsets(n, &seed);
    }
}

/* A value drawn like a spectral filter's counters, with a few big ones. */
static uint64_t mixed_value(uint64_t *seed) {
    uint64_t r = support_splitmix64(seed);
    switch (r & 7u) {
    case 0:
    case 1:
    case 2:
        return 0;
    case 3:
    case 4:
        return 1;
    case 5:
        return 2u + ((r >> 8) & 1u);
    case 6:
        return (r >> 8) & 63u;
    default:
        return (r >> 8 & EBB_CODE_MAX_VALUE) >> ((r >> 58) & 31u);
    }
}

static void test_skip_matches_get(void **state) {
    (void)state;
    uint64_t seed = 4;
    enum { VALUES = 301, WORDS = VALUES * 65 / 64 + 8 };
    static uint64_t words[WORDS];
    static uint64_t starts[VALUES + 1];
    for (size_t c = 0; c < 4; c++) {
        ebb_code code = all_codes[c];
        for (unsigned round = 0; round < 40; round++) {
            uint32_t width = code == EBB_CODE_FIXED ? 1u + round % 32u : 0;
            for (unsigned i = 0; i < WORDS; i++)
                words[i] = support_splitmix64(&seed);
            uint64_t pos = support_splitmix64(&seed) & 127u;
            for (unsigned i = 0; i < VALUES; i++) {
                uint64_t n = mixed_value(&seed);
                if (code == EBB_CODE_FIXED)
                    n &= (UINT64_C(1) << width) - 1u;
                if (round % 4 == 0)
                    n = n < 4 ? n : n & 1u; /* runs of short codes */
                starts[i] = pos;
                pos += ebb_code_put(words, pos, code, width, n);
            }
            starts[VALUES] = pos;
            uint64_t at = starts[0];
            for (unsigned n = 0; n <= VALUES - 1; n++) {
                assert_true(ebb_code_skip(words, starts[0], code, width, n) ==
                            at);
                assert_true(ebb_code_skip(words, starts[n], code, width,
                                          VALUES - n) == starts[VALUES]);
                uint32_t len;
                ebb_code_get(words, at, code, width, &len);
                assert_true(len > 0);
                at += len;
            }
            assert_true(at == starts[VALUES]);
        }
    }
}

/* Whole streams (codes.c's worked example). */
static void test_streams(void **state) {
    (void)state;
    static const uint64_t values[] = {0, 1, 2, 5};
    static const struct {
        ebb_code code;
        uint64_t word;
        uint64_t bits;
    } streams[] = {{EBB_CODE_STEPS, 0x4fa, 13}, {EBB_CODE_GAMMA, 0x665, 12}};
    for (size_t s = 0; s < 2; s++) {
        uint64_t words[2] = {0, 0}, pos = 0;
        for (size_t i = 0; i < 4; i++)
            pos += ebb_code_put(words, pos, streams[s].code, 0, values[i]);
        assert_true(pos == streams[s].bits);
        assert_true(words[0] == streams[s].word);
        pos = 0;
        for (size_t i = 0; i < 4; i++) {
            uint32_t len;
            assert_true(ebb_code_get(words, pos, streams[s].code, 0, &len) ==
                        values[i]);
            pos += len;
        }
    }
}

/* Every 16-bit prefix, followed by random bits: skip of 1..12 codes lands
 * where repeated get does (pins each entry of the skip tables). */
static void test_skip_every_prefix(void **state) {
    (void)state;
    uint64_t seed = 5;
    for (size_t c = 1; c < 4; c++) {
        for (uint64_t p = 0; p < 65536u; p++) {
            uint64_t words[4];
            words[0] = p | support_splitmix64(&seed) << 16;
            for (unsigned i = 1; i < 4; i++)
                words[i] = support_splitmix64(&seed);
            uint64_t at = 0;
            for (uint64_t n = 1; n <= 12; n++) {
                uint32_t len;
                ebb_code_get(words, at, all_codes[c], 0, &len);
                uint64_t want = len == 0 || at + len > 128 ? UINT64_MAX
                                                           : at + len;
                if (want == UINT64_MAX)
                    break; /* invalid or past what the test owns */
                at = want;
                assert_true(ebb_code_skip(words, 0, all_codes[c], 0, n) ==
                            at);
            }
        }
    }
}

static void test_invalid(void **state) {
    (void)state;
    uint64_t words[4] = {0, 0, 0, 0};
    uint32_t len = 7;
    /* A gamma prefix of 40 zeros, then ones. */
    words[0] = ~UINT64_C(0) << 40;
    words[1] = ~UINT64_C(0);
    assert_true(ebb_code_get(words, 0, EBB_CODE_GAMMA, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    assert_true(ebb_code_skip(words, 0, EBB_CODE_GAMMA, 0, 1) == UINT64_MAX);
    /* After valid codes, too: skip reports it. */
    words[0] = (~UINT64_C(0) << 43) | 5u; /* "1", "010", 39 zeros */
    assert_true(ebb_code_skip(words, 0, EBB_CODE_GAMMA, 0, 2) == 4u);
    assert_true(ebb_code_skip(words, 0, EBB_CODE_GAMMA, 0, 3) == UINT64_MAX);
    /* All zeros (gamma, delta) and all ones after STEPS' "111". */
    memset(words, 0, sizeof words);
    assert_true(ebb_code_get(words, 5, EBB_CODE_GAMMA, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    assert_true(ebb_code_get(words, 5, EBB_CODE_DELTA, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    assert_true(ebb_code_skip(words, 5, EBB_CODE_DELTA, 0, 9) == UINT64_MAX);
    words[0] = 3u; /* "11" then zeros */
    assert_true(ebb_code_get(words, 0, EBB_CODE_STEPS, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    assert_true(ebb_code_skip(words, 0, EBB_CODE_STEPS, 0, 1) == UINT64_MAX);
    /* STEPS "11" then GAMMA of 2^32 - 2 would be 2^32: out of range. */
    words[0] = 3u | ~UINT64_C(0) << 33; /* 31 zeros, then 32 ones */
    words[1] = 1u;
    assert_true(ebb_code_get(words, 0, EBB_CODE_STEPS, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    words[1] = 0; /* 31 zeros, then 31 ones and a zero: 2^32 - 3 + 2 */
    assert_true(ebb_code_get(words, 0, EBB_CODE_STEPS, 0, &len) ==
                EBB_CODE_MAX_VALUE);
    assert_int_equal(len, 65);
    /* Gamma with 32 zeros: only 2^32 (n = 2^32 - 1) is in range. */
    memset(words, 0, sizeof words);
    words[0] = UINT64_C(3) << 32; /* v = 1 then 1: 2^32 + 2^31 */
    assert_true(ebb_code_get(words, 0, EBB_CODE_GAMMA, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    words[0] = UINT64_C(1) << 32;
    assert_true(ebb_code_get(words, 0, EBB_CODE_GAMMA, 0, &len) ==
                EBB_CODE_MAX_VALUE);
    assert_int_equal(len, 65);
    /* Delta of a length L > 33: gamma(L = 34) = 00000 100010. */
    memset(words, 0, sizeof words);
    words[0] = UINT64_C(1) << 5 | UINT64_C(1) << 9;
    assert_true(ebb_code_get(words, 0, EBB_CODE_DELTA, 0, &len) == INVALID);
    assert_int_equal(len, 0);
    /* Delta of L = 33 with low bits not all zero: 2^32 + 1 > 2^32. */
    words[0] = UINT64_C(1) << 5 | UINT64_C(1) << 10 | UINT64_C(1) << 42;
    assert_true(ebb_code_get(words, 0, EBB_CODE_DELTA, 0, &len) == INVALID);
    words[0] = UINT64_C(1) << 5 | UINT64_C(1) << 10;
    assert_true(ebb_code_get(words, 0, EBB_CODE_DELTA, 0, &len) ==
                EBB_CODE_MAX_VALUE);
    assert_int_equal(len, 43);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_known_patterns),
        cmocka_unit_test(test_length_formulas),
        cmocka_unit_test(test_round_trip_small),
        cmocka_unit_test(test_round_trip_powers),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_skip_matches_get),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_skip_every_prefix),
        cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
