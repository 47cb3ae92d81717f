/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * support.c: counting/failing allocator, reproducible keys, little-endian
 * fields. See support.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "support.h"

/* Every block carries its size in a header so release can account for it;
 * the header keeps the user pointer aligned for any object. */
#define HEADER_BYTES                                                           \
    (sizeof(max_align_t) > sizeof(size_t) ? sizeof(max_align_t)               \
                                          : sizeof(size_t))

/* Garbage written into blocks from alloc: a filter that does not clear its
 * bits would see set bits everywhere. */
#define GARBAGE_BYTE 0xA5

static struct {
    uint64_t calls;
    uint64_t zeroed_calls;
    uint64_t live_count;
    uint64_t live_bytes;
    uint64_t failures;
    uint64_t fail_at;   /* 1-based call number to fail; 0 = none */
    bool fail_after;    /* also fail every call after fail_at     */
    uint64_t calls_at_plan;
} counters;

static bool should_fail(size_t size) {
    uint64_t since_plan = counters.calls - counters.calls_at_plan;
    if (size > SUPPORT_ALLOC_CAP || size > SIZE_MAX - HEADER_BYTES)
        return true;
    if (counters.fail_at == 0)
        return false;
    if (since_plan == counters.fail_at)
        return true;
    return counters.fail_after && since_plan > counters.fail_at;
}

static void *counted_block(size_t size, bool zeroed) {
    unsigned char *raw;
    counters.calls++;
    if (should_fail(size)) {
        counters.failures++;
        return NULL;
    }
    raw = zeroed ? calloc(1, HEADER_BYTES + size) : malloc(HEADER_BYTES + size);
    if (raw == NULL) {
        counters.failures++;
        return NULL;
    }
    if (!zeroed)
        memset(raw + HEADER_BYTES, GARBAGE_BYTE, size);
    memcpy(raw, &size, sizeof size);
    counters.live_count++;
    counters.live_bytes += size;
    return raw + HEADER_BYTES;
}

static void *counting_alloc(size_t size, void *user) {
    (void)user;
    return counted_block(size, false);
}

static void *counting_alloc_zeroed(size_t size, void *user) {
    (void)user;
    counters.zeroed_calls++;
    return counted_block(size, true);
}

static void counting_release(void *ptr, void *user) {
    unsigned char *raw;
    size_t size;
    (void)user;
    /* The header promises release is never called with NULL. */
    assert_non_null(ptr);
    raw = (unsigned char *)ptr - HEADER_BYTES;
    memcpy(&size, raw, sizeof size);
    assert_true(counters.live_count > 0);
    assert_true(counters.live_bytes >= size);
    counters.live_count--;
    counters.live_bytes -= size;
    free(raw);
}

void support_alloc_table(bool with_zeroed, ebb_allocator *out) {
    out->alloc = counting_alloc;
    out->alloc_zeroed = with_zeroed ? counting_alloc_zeroed : NULL;
    out->release = counting_release;
    out->user = &counters;
}

void support_alloc_install(bool with_zeroed) {
    ebb_allocator table;
    memset(&counters, 0, sizeof counters);
    support_alloc_table(with_zeroed, &table);
    assert_int_equal(ebb_set_allocator(&table), EBB_OK);
}

void support_alloc_uninstall(void) {
    assert_int_equal(ebb_set_allocator(NULL), EBB_OK);
}

uint64_t support_alloc_live_count(void) { return counters.live_count; }
uint64_t support_alloc_live_bytes(void) { return counters.live_bytes; }
uint64_t support_alloc_calls(void) { return counters.calls; }
uint64_t support_alloc_zeroed_calls(void) { return counters.zeroed_calls; }
uint64_t support_alloc_failures(void) { return counters.failures; }

void support_alloc_fail_nth(uint64_t n, bool and_after) {
    counters.fail_at = n;
    counters.fail_after = and_after;
    counters.calls_at_plan = counters.calls;
    counters.failures = 0;
}

int support_setup_counting(void **state) {
    (void)state;
    support_alloc_install(true);
    return 0;
}

int support_setup_counting_unzeroed(void **state) {
    (void)state;
    support_alloc_install(false);
    return 0;
}

int support_teardown_counting(void **state) {
    (void)state;
    assert_int_equal(support_alloc_live_count(), 0);
    assert_int_equal(support_alloc_live_bytes(), 0);
    support_alloc_uninstall();
    return 0;
}

uint64_t support_mix64(uint64_t x) {
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

uint64_t support_splitmix64(uint64_t *state) {
    *state += UINT64_C(0x9e3779b97f4a7c15);
    return support_mix64(*state);
}

support_key support_key_make(uint32_t stream, uint64_t index) {
    support_key key;
    uint64_t word = ((uint64_t)stream << 48) ^ (index & ((UINT64_C(1) << 48) - 1));
    support_put_le(key.bytes, sizeof key.bytes, support_mix64(word));
    return key;
}

uint64_t support_get_le(const unsigned char *p, size_t width) {
    uint64_t value = 0;
    size_t i;
    for (i = width; i > 0; i--)
        value = (value << 8) | p[i - 1];
    return value;
}

void support_put_le(unsigned char *p, size_t width, uint64_t value) {
    size_t i;
    for (i = 0; i < width; i++) {
        p[i] = (unsigned char)(value & 0xFF);
        value >>= 8;
    }
}

support_snap support_snap_alloc(size_t size) {
    support_snap s = {malloc(size), size};
    assert_non_null(s.bytes);
    return s;
}

void support_snap_free(support_snap *s) {
    free(s->bytes);
    s->bytes = NULL;
}

void support_snap_forge_checksum(support_snap *s) {
    support_put_le(s->bytes + s->size - 8, 8,
                   XXH3_64bits(s->bytes, s->size - 8));
}

void support_snap_assert_same(support_snap *a, support_snap *b) {
    assert_int_equal(a->size, b->size);
    assert_memory_equal(a->bytes, b->bytes, a->size);
    support_snap_free(a);
    support_snap_free(b);
}

void support_zipf_table(double *cdf, uint32_t n, double skew)
{
    double sum = 0, acc = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += 1.0 / pow(i + 1.0, skew);
    for (uint32_t i = 0; i < n; i++) {
        acc += 1.0 / pow(i + 1.0, skew) / sum;
        cdf[i] = acc;
    }
    cdf[n - 1] = 1.0;
}

uint32_t support_zipf_draw(const double *cdf, uint32_t n, ebb_rng *rng)
{
    double u = ebb_rng_unit(rng);
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
