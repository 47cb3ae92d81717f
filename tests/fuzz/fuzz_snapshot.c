/*
 * fuzz_snapshot.c: the APBF snapshot decoder against hostile bytes.
 *
 * For every input this checks, aborting on the first violation:
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ebb/ebb.h"
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
    FAMILY_APBF_BLOCKED = 2
};

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

static void *counting_alloc(size_t size, void *user)
{
    (void)user;
    void *ptr = malloc(size);
    if (ptr != NULL) {
        live_allocations++;
    }
    return ptr;
}

static void *counting_alloc_zeroed(size_t size, void *user)
{
    (void)user;
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
static ebb_status frame_verdict(const uint8_t *data, size_t size)
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
    if (family != FAMILY_APBF && family != FAMILY_APBF_BLOCKED) {
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

/* ---- properties of a loaded filter ------------------------------------ */

/* A buffer one byte short must be refused and left untouched. */
static void require_refuses_short_buffer(const ebb_apbf *filter, uint8_t *buf,
                                         size_t size)
{
    memset(buf, 0xA5, size);
    require(ebb_apbf_save(filter, buf, size - 1, NULL) == EBB_EBUFSIZE);
    for (size_t i = 0; i < size; i++) {
        require(buf[i] == 0xA5);
    }
}

/* A snapshot of filter in fresh memory; *size_out receives its size. */
static uint8_t *save_filter(const ebb_apbf *filter, size_t *size_out)
{
    size_t size = ebb_apbf_snapshot_size(filter);
    require(size >= FRAME_BYTES);
    uint8_t *bytes = malloc(size);
    require(bytes != NULL);
    require_refuses_short_buffer(filter, bytes, size);
    size_t written = 0;
    require(ebb_apbf_save(filter, bytes, size, &written) == EBB_OK);
    require(written == size);
    *size_out = size;
    return bytes;
}

static void require_saves_as(const ebb_apbf *filter, const uint8_t *expected,
                             size_t expected_size)
{
    size_t size = 0;
    uint8_t *saved = save_filter(filter, &size);
    require(size == expected_size);
    require(memcmp(saved, expected, size) == 0);
    free(saved);
}

static void add_and_query(ebb_apbf *filter)
{
    static const char *const keys[] = {"", "a", "fuzz",
                                       "a key long enough to span lanes"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        size_t len = strlen(keys[i]);
        ebb_apbf_add(filter, keys[i], len);
        require(ebb_apbf_contains(filter, keys[i], len));
    }
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    require(stats.memory_bytes == ebb_apbf_memory(filter));
}

static void require_reloads(const ebb_apbf *filter)
{
    size_t size = 0;
    uint8_t *saved = save_filter(filter, &size);
    ebb_apbf *reloaded = NULL;
    require(ebb_apbf_load(saved, size, &reloaded) == EBB_OK);
    require(reloaded != NULL);
    require_saves_as(reloaded, saved, size);
    ebb_apbf_destroy(reloaded);
    free(saved);
}

static void check_snapshot(const uint8_t *data, size_t size)
{
    size_t allocations_before = live_allocations;
    ebb_status expected = frame_verdict(data, size);
    ebb_apbf *filter = NULL;
    ebb_status status = ebb_apbf_load(data, size, &filter);

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
    require_saves_as(filter, data, size);
    add_and_query(filter);
    require_reloads(filter);
    ebb_apbf_destroy(filter);
    require(live_allocations == allocations_before);
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
    check_snapshot(data, size);
    if (size >= FRAME_BYTES) {
        uint8_t *repaired = copy_with_valid_checksum(data, size);
        if (memcmp(repaired, data, size) != 0) {
            check_snapshot(repaired, size);
        }
        free(repaired);
    }
    return 0;
}
