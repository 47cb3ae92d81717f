/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_snapshot.c: the snapshot decoders against hostile bytes.
 *
 * Every input goes to each decoder (ebb_apbf_load for families 1, 2, 7,
 * ebb_tlbf_load for family 3, ebb_stable_load for family 4,
 * ebb_timing_load for family 5, ebb_spectral_load for family 6). For
 * each, this
 * checks, aborting on the first violation:
 *   1. the status agrees with the frame rules of docs/format.md (steps 1 to
 *      6 of "Decoding order and errors" are fully determined by the frame,
 *      so the harness recomputes them and demands the same code);
 *   2. a failed load writes nothing to *out and leaves no allocation behind;
 *   3. a successful load saves back to exactly the input bytes (one encoding
 *      per state, so a snapshot never drifts through load/save cycles);
 *   4. the loaded filter takes adds and queries, and a key just added is
 *      found (w >= 1 for every accepted shape);
 *   5. what it saves after those adds loads again and round-trips;
 *   6. destroy returns every byte (counted through ebb_set_allocator).
 *
 * A random mutation almost never carries a matching XXH3-64 checksum, so on
 * its own the fuzzer would spend nearly all its time failing at step 6 of the
 * decoder. Each input is therefore tried twice: as is, which exercises the
 * checksum check, and with its last 8 bytes replaced by the checksum the
 * format asks for, which lets mutations reach the parameter and payload
 * checks behind it.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ebb/ebb.h"
#include "ebb/spectral.h"
#include "ebb/stable.h"
#include "ebb/timing.h"
#include "fuzz_target.h"

/* Frame layout (docs/format.md). */
enum {
    MAGIC_BYTES = 4,
    VERSION_OFFSET = 4,
    FAMILY_OFFSET = 6,
    TOTAL_LENGTH_OFFSET = 16,
    FRAME_BYTES = 40,
    CHECKSUM_BYTES = 8,
    FORMAT_VERSION = 1,
    FAMILY_APBF = 1, /* ebb_apbf_load accepts both (docs/format.md) */
    FAMILY_APBF_BLOCKED = 2,
    FAMILY_TLBF = 3,
    FAMILY_STABLE = 4,
    FAMILY_TIMING = 5,
    FAMILY_SPECTRAL = 6,
    FAMILY_APBF_SLICED = 7 /* ebb_apbf_load too: the bit-sliced layout */
};

/* One decoder and the operations the properties need, on an opaque filter. */
typedef struct decoder {
    uint16_t family_low, family_high; /* the families it accepts */
    ebb_status (*load)(const void *buf, size_t len, void **out);
    size_t (*size)(const void *filter);
    ebb_status (*save)(const void *filter, void *buf, size_t cap,
                       size_t *written);
    void (*destroy)(void *filter);
    /* Adds a few keys and checks each is found at once. */
    void (*add_and_query)(void *filter);
    size_t (*memory)(const void *filter);
    size_t (*stats_memory)(const void *filter);
    uint16_t family_also; /* one more family it accepts; 0: none */
} decoder;

static const uint8_t snapshot_magic[MAGIC_BYTES] = {0x45, 0x42, 0x42, 0x53};

/* Not assert(): the check must stay in release builds. The failed condition
 * is named so a crash report says which property broke. */
#define require(condition) require_at((condition), #condition, __LINE__)

static void require_at(bool holds, const char *condition, int line)
{
    if (!holds) {
        fprintf(stderr, "fuzz_snapshot.c:%d: property violated: %s\n", line,
                condition);
        abort();
    }
}

/* ---- allocation accounting ------------------------------------------- */

static size_t live_allocations;

/* A hostile snapshot may name a memory limit of many gigabytes, and a
 * filter may then rightly ask for that much; under the sanitizers and
 * libFuzzer's malloc limit that aborts instead of failing. Refusing large
 * requests here turns them into the EBB_ENOMEM path, which every property
 * accepts, and keeps the harness well inside -rss_limit_mb. */
#define ALLOCATION_CAP ((size_t)64 << 20)

static void *counting_alloc(size_t size, void *user)
{
    (void)user;
    if (size > ALLOCATION_CAP) {
        return NULL;
    }
    void *ptr = malloc(size);
    if (ptr != NULL) {
        live_allocations++;
    }
    return ptr;
}

static void *counting_alloc_zeroed(size_t size, void *user)
{
    (void)user;
    if (size > ALLOCATION_CAP) {
        return NULL;
    }
    void *ptr = calloc(1, size);
    if (ptr != NULL) {
        live_allocations++;
    }
    return ptr;
}

static void counting_release(void *ptr, void *user)
{
    (void)user;
    require(ptr != NULL && live_allocations > 0);
    live_allocations--;
    free(ptr);
}

static void install_counting_allocator_once(void)
{
    static bool installed;
    if (!installed) {
        const ebb_allocator counting = {counting_alloc, counting_alloc_zeroed,
                                        counting_release, NULL};
        require(ebb_set_allocator(&counting) == EBB_OK);
        installed = true;
    }
}

/* ---- the frame rules, recomputed --------------------------------------- */

static uint64_t load_le(const uint8_t *bytes, size_t width)
{
    uint64_t value = 0;
    for (size_t i = 0; i < width; i++) {
        value |= (uint64_t)bytes[i] << (8 * i);
    }
    return value;
}

static void store_le64(uint8_t *bytes, uint64_t value)
{
    for (size_t i = 0; i < 8; i++) {
        bytes[i] = (uint8_t)(value >> (8 * i));
    }
}

static bool has_magic_prefix(const uint8_t *data, size_t size)
{
    size_t compared = size < MAGIC_BYTES ? size : MAGIC_BYTES;
    return memcmp(data, snapshot_magic, compared) == 0;
}

/* The status steps 1-6 of the decoding order dictate, or EBB_OK when the
 * frame passes them and the verdict depends on the family's checks. */
static ebb_status frame_verdict(const decoder *d, const uint8_t *data,
                                size_t size)
{
    if (size == 0) {
        return EBB_ETRUNCATED; /* zero bytes match the start of the magic */
    }
    if (!has_magic_prefix(data, size)) {
        return EBB_EMAGIC;
    }
    if (size < FRAME_BYTES) {
        return EBB_ETRUNCATED; /* covers 1..3 matching bytes too */
    }
    uint64_t version = load_le(data + VERSION_OFFSET, 2);
    if (version > FORMAT_VERSION) {
        return EBB_EVERSION;
    }
    if (version == 0) {
        return EBB_ECORRUPT;
    }
    uint64_t family = load_le(data + FAMILY_OFFSET, 2);
    if ((family < d->family_low || family > d->family_high) &&
        (d->family_also == 0 || family != d->family_also)) {
        return EBB_EFAMILY;
    }
    uint64_t total_length = load_le(data + TOTAL_LENGTH_OFFSET, 8);
    if (total_length > size) {
        return EBB_ETRUNCATED;
    }
    if (total_length < size || total_length < FRAME_BYTES) {
        return EBB_ECORRUPT;
    }
    uint64_t stored = load_le(data + size - CHECKSUM_BYTES, CHECKSUM_BYTES);
    if (stored != XXH3_64bits(data, size - CHECKSUM_BYTES)) {
        return EBB_ECHECKSUM;
    }
    return EBB_OK;
}

static bool is_family_check_failure(ebb_status status)
{
    return status == EBB_ECORRUPT || status == EBB_ENOMEM ||
           status == EBB_EOVERFLOW;
}

/* ---- the decoders ------------------------------------------------------ */

/* The loaders write *out only on success; so do these wrappers. */
static ebb_status apbf_load(const void *buf, size_t len, void **out)
{
    ebb_apbf *filter = NULL;
    ebb_status status = ebb_apbf_load(buf, len, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}
static size_t apbf_size(const void *f) { return ebb_apbf_snapshot_size(f); }
static ebb_status apbf_save(const void *f, void *buf, size_t cap, size_t *w)
{
    return ebb_apbf_save(f, buf, cap, w);
}
static void apbf_destroy(void *f) { ebb_apbf_destroy(f); }
static size_t apbf_memory(const void *f) { return ebb_apbf_memory(f); }
static size_t apbf_stats_memory(const void *f)
{
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(f, &stats);
    return stats.memory_bytes;
}

static const char *const probe_keys[] = {"", "a", "fuzz",
                                         "a key long enough to span lanes"};
#define PROBE_KEYS (sizeof probe_keys / sizeof probe_keys[0])

static void apbf_add_and_query(void *f)
{
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        size_t len = strlen(probe_keys[i]);
        ebb_apbf_add(f, probe_keys[i], len);
        require(ebb_apbf_contains(f, probe_keys[i], len));
    }
}

static ebb_status tlbf_load(const void *buf, size_t len, void **out)
{
    ebb_tlbf *filter = NULL;
    ebb_status status = ebb_tlbf_load(buf, len, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}
static size_t tlbf_size(const void *f) { return ebb_tlbf_snapshot_size(f); }
static ebb_status tlbf_save(const void *f, void *buf, size_t cap, size_t *w)
{
    return ebb_tlbf_save(f, buf, cap, w);
}
static void tlbf_destroy(void *f) { ebb_tlbf_destroy(f); }
static size_t tlbf_memory(const void *f) { return ebb_tlbf_memory(f); }
static size_t tlbf_stats_memory(const void *f)
{
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(f, &stats);
    return stats.memory_bytes;
}

/* Adds at the latest time seen and a little later (a shift, maybe a reset
 * when the span is short); a key just added must be found at its time. A
 * refusal by the memory limit is a legitimate answer, not a violation. */
static void tlbf_add_and_query(void *f)
{
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(f, &stats);
    int64_t now = stats.latest_ns == INT64_MIN ? 0 : stats.latest_ns;
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        size_t len = strlen(probe_keys[i]);
        /* A hostile max_memory may ask for more than the machine has. */
        ebb_status st = ebb_tlbf_add(f, probe_keys[i], len, now);
        require(st == EBB_OK || st == EBB_ELIMIT || st == EBB_ENOMEM);
        if (st == EBB_OK)
            require(ebb_tlbf_contains(f, probe_keys[i], len, now));
        require(ebb_tlbf_memory(f) <= stats.max_memory);
        now = now > INT64_MAX - 1000 ? now : now + 1000;
    }
}

static ebb_status stable_load(const void *buf, size_t len, void **out)
{
    ebb_stable *filter = NULL;
    ebb_status status = ebb_stable_load(buf, len, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}
static size_t stable_size(const void *f) { return ebb_stable_snapshot_size(f); }
static ebb_status stable_save(const void *f, void *buf, size_t cap, size_t *w)
{
    return ebb_stable_save(f, buf, cap, w);
}
static void stable_destroy(void *f) { ebb_stable_destroy(f); }
static size_t stable_memory(const void *f) { return ebb_stable_memory(f); }
/* The stable filter's statistics carry no memory figure; what they say
 * must fit in what ebb_stable_memory reports: the cells' words of the
 * shape they describe (0, failing the equality, otherwise). */
static size_t stable_stats_memory(const void *f)
{
    ebb_stable_stats stats;
    ebb_stable_get_stats(f, &stats);
    size_t memory = ebb_stable_memory(f);
    uint64_t cells = ebb_stable_cell_bytes(stats.cells, stats.cell_bits);
    return cells != 0 && cells < memory ? memory : 0;
}

/* A key just added is found at once (the decrements precede the set, and
 * every level is >= 1), and test-and-add then reports it seen; an
 * importance is refused only when NaN. The statistics stay consistent. */
static void stable_add_and_query(void *f)
{
    const ebb_stable_params *params = ebb_stable_get_params(f);
    double mid = params->importance.low * 0.5 + params->importance.high * 0.5;
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        size_t len = strlen(probe_keys[i]);
        bool seen = false;
        require(ebb_stable_add(f, probe_keys[i], len, mid) == EBB_OK);
        require(ebb_stable_contains(f, probe_keys[i], len));
        require(ebb_stable_test_and_add(f, probe_keys[i], len, mid, &seen) ==
                EBB_OK);
        require(seen);
        require(ebb_stable_add(f, probe_keys[i], len, NAN) == EBB_EINVAL);
    }
    ebb_stable_stats stats;
    ebb_stable_get_stats(f, &stats);
    require(stats.zero_cells <= stats.cells && stats.max_level >= 1);
}

static ebb_status timing_load(const void *buf, size_t len, void **out)
{
    ebb_timing *filter = NULL;
    ebb_status status = ebb_timing_load(buf, len, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}
static size_t timing_size(const void *f) { return ebb_timing_snapshot_size(f); }
static ebb_status timing_save(const void *f, void *buf, size_t cap, size_t *w)
{
    return ebb_timing_save(f, buf, cap, w);
}
static void timing_destroy(void *f) { ebb_timing_destroy(f); }
static size_t timing_memory(const void *f) { return ebb_timing_memory(f); }
static size_t timing_stats_memory(const void *f)
{
    ebb_timing_stats stats;
    ebb_timing_get_stats(f, &stats);
    return stats.memory_bytes;
}

/* A key just added is in the window (w >= 1): found at once, and still
 * found after up to w - 1 other insertions, which sweep and may wrap T_+
 * (the loader accepted only states whose sweep invariant holds). The
 * statistics stay within the shape. */
static void timing_add_and_query(void *f)
{
    const ebb_timing_params *params = ebb_timing_get_params(f);
    uint64_t others = params->window - 1 < 64 ? params->window - 1 : 64;
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        size_t len = strlen(probe_keys[i]);
        ebb_timing_add(f, probe_keys[i], len);
        require(ebb_timing_contains(f, probe_keys[i], len));
        for (uint64_t n = 0; n < others; n++) {
            char key[24];
            int key_len = snprintf(key, sizeof key, "other-%zu-%llu", i,
                                   (unsigned long long)n);
            ebb_timing_add(f, key, (size_t)key_len);
        }
        require(ebb_timing_contains(f, probe_keys[i], len));
    }
    ebb_timing_stats stats;
    ebb_timing_get_stats(f, &stats);
    ebb_timing_shape shape;
    require(ebb_timing_describe(params, &shape) == EBB_OK);
    require(stats.live_timers <= params->timers &&
            stats.in_block < params->block && stats.current <= shape.t_omega);
}

static ebb_status spectral_load(const void *buf, size_t len, void **out)
{
    ebb_spectral *filter = NULL;
    ebb_status status = ebb_spectral_load(buf, len, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}
static size_t spectral_size(const void *f)
{
    return ebb_spectral_snapshot_size(f);
}
static ebb_status spectral_save(const void *f, void *buf, size_t cap,
                                size_t *w)
{
    return ebb_spectral_save(f, buf, cap, w);
}
static void spectral_destroy(void *f) { ebb_spectral_destroy(f); }
static size_t spectral_memory(const void *f) { return ebb_spectral_memory(f); }
static size_t spectral_stats_memory(const void *f)
{
    ebb_spectral_stats stats;
    ebb_spectral_get_stats(f, &stats);
    return stats.memory_bytes;
}

/* An add is never below itself: the estimate after adding 2 is at least
 * 2 (or SATURATED) for every method but trapping RM (its traps may take
 * counters below a count: docs/spectral.md); MS takes the 2 back (its
 * counters hold at least 2 at each position, or are saturated). */
static void spectral_add_and_query(void *f)
{
    const ebb_spectral_params *params = ebb_spectral_get_params(f);
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        size_t len = strlen(probe_keys[i]);
        require(ebb_spectral_add(f, probe_keys[i], len, 2) == EBB_OK);
        require(params->trap_slots > 0 ||
                ebb_spectral_estimate(f, probe_keys[i], len) >= 2);
        if (params->method == EBB_SPECTRAL_MS)
            require(ebb_spectral_remove(f, probe_keys[i], len, 2) == EBB_OK);
    }
    ebb_spectral_stats stats;
    ebb_spectral_get_stats(f, &stats);
    require(stats.nonzero <= params->counters);
}

static const decoder decoders[] = {
    {FAMILY_APBF, FAMILY_APBF_BLOCKED, apbf_load, apbf_size, apbf_save,
     apbf_destroy, apbf_add_and_query, apbf_memory, apbf_stats_memory,
     FAMILY_APBF_SLICED},
    {FAMILY_TLBF, FAMILY_TLBF, tlbf_load, tlbf_size, tlbf_save, tlbf_destroy,
     tlbf_add_and_query, tlbf_memory, tlbf_stats_memory, 0},
    {FAMILY_STABLE, FAMILY_STABLE, stable_load, stable_size, stable_save,
     stable_destroy, stable_add_and_query, stable_memory, stable_stats_memory,
     0},
    {FAMILY_TIMING, FAMILY_TIMING, timing_load, timing_size, timing_save,
     timing_destroy, timing_add_and_query, timing_memory, timing_stats_memory,
     0},
    {FAMILY_SPECTRAL, FAMILY_SPECTRAL, spectral_load, spectral_size,
     spectral_save, spectral_destroy, spectral_add_and_query, spectral_memory,
     spectral_stats_memory, 0},
};

/* ---- properties of a loaded filter ------------------------------------ */

/* A buffer one byte short must be refused and left untouched. */
static void require_refuses_short_buffer(const decoder *d, const void *filter,
                                         uint8_t *buf, size_t size)
{
    memset(buf, 0xA5, size);
    require(d->save(filter, buf, size - 1, NULL) == EBB_EBUFSIZE);
    for (size_t i = 0; i < size; i++) {
        require(buf[i] == 0xA5);
    }
}

/* A snapshot of filter in fresh memory; *size_out receives its size. */
static uint8_t *save_filter(const decoder *d, const void *filter,
                            size_t *size_out)
{
    size_t size = d->size(filter);
    require(size >= FRAME_BYTES);
    uint8_t *bytes = malloc(size);
    require(bytes != NULL);
    require_refuses_short_buffer(d, filter, bytes, size);
    size_t written = 0;
    require(d->save(filter, bytes, size, &written) == EBB_OK);
    require(written == size);
    *size_out = size;
    return bytes;
}

static void require_saves_as(const decoder *d, const void *filter,
                             const uint8_t *expected, size_t expected_size)
{
    size_t size = 0;
    uint8_t *saved = save_filter(d, filter, &size);
    require(size == expected_size);
    require(memcmp(saved, expected, size) == 0);
    free(saved);
}

static void require_reloads(const decoder *d, const void *filter)
{
    size_t size = 0;
    uint8_t *saved = save_filter(d, filter, &size);
    void *reloaded = NULL;
    require(d->load(saved, size, &reloaded) == EBB_OK);
    require(reloaded != NULL);
    require_saves_as(d, reloaded, saved, size);
    d->destroy(reloaded);
    free(saved);
}

static void check_snapshot(const decoder *d, const uint8_t *data, size_t size)
{
    size_t allocations_before = live_allocations;
    ebb_status expected = frame_verdict(d, data, size);
    void *filter = NULL;
    ebb_status status = d->load(data, size, &filter);

    if (expected != EBB_OK) {
        require(status == expected);
    } else {
        require(status == EBB_OK || is_family_check_failure(status));
    }
    if (status != EBB_OK) {
        require(filter == NULL);
        require(live_allocations == allocations_before);
        return;
    }
    require(filter != NULL);
    require_saves_as(d, filter, data, size);
    d->add_and_query(filter);
    require(d->stats_memory(filter) == d->memory(filter));
    require_reloads(d, filter);
    d->destroy(filter);
    require(live_allocations == allocations_before);
}

static void check_every_decoder(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < sizeof decoders / sizeof decoders[0]; i++)
        check_snapshot(&decoders[i], data, size);
}

/* A copy of data whose checksum field holds the right checksum. */
static uint8_t *copy_with_valid_checksum(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size);
    require(copy != NULL);
    memcpy(copy, data, size);
    store_le64(copy + size - CHECKSUM_BYTES,
               XXH3_64bits(copy, size - CHECKSUM_BYTES));
    return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    install_counting_allocator_once();
    check_every_decoder(data, size);
    if (size >= FRAME_BYTES) {
        uint8_t *repaired = copy_with_valid_checksum(data, size);
        if (memcmp(repaired, data, size) != 0) {
            check_every_decoder(repaired, size);
        }
        free(repaired);
    }
    return 0;
}
