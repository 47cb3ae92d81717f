/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chunks.c: chunked dump and restore, <FAMILY>.SCANDUMP and
 * <FAMILY>.LOADCHUNK, and the restores in progress they leave under a key
 * (glue.h, docs/redis.md "SCANDUMP and LOADCHUNK").
 *
 * Scans. SCANDUMP key 0 takes a snapshot of the filter and keeps it with
 * the key; the chunks of the scan are cut from it, so they all come from
 * one state. Several clients may scan one key at once, so each iterator
 * says which snapshot it belongs to:
 *
 *   iterator = scan << 44 | end          (a positive 63-bit integer)
 *              bits 62..44: the snapshot's scan number, 1 .. 2^19 - 1
 *              bits 43..0:  where the chunk just served ends (offset)
 *
 * A chunk is served only from the snapshot whose number the iterator
 * carries; any other iterator is refused at once ("stale ... start again
 * from 0"), never answered from another state. A second scan that starts
 * while the key is unchanged joins the kept snapshot: the snapshot is a
 * function of the filter's state only, so the bytes it gets are exactly
 * those a private snapshot would hold, and concurrent scans of a 1 GB
 * filter cost one extra copy, not one per client. A write drops the
 * snapshot (ebb_redis_value_touch); every scan still running is then
 * refused at its next iterator, and its next iterator 0 takes a snapshot
 * with a new number. The snapshot is released when the last scan that
 * joined it reaches its end (an abandoned scan keeps it until the next
 * write or DEL; it counts in MEMORY USAGE). Numbers come from one sequence
 * for the whole server, started from the clock, so an iterator of another
 * key, of before a restart or of long ago does not match.
 *
 * Restores. LOADCHUNK takes the offset from the iterator's low 44 bits, so
 * SCANDUMP's iterators and the plain offsets of AOF rewrites (and of older
 * backups) both work. Every chunk but the last is exactly
 * EBB_REDIS_CHUNK_BYTES and the last ends exactly at the total the first
 * chunk announces (SCANDUMP and the AOF rewrite cut them so); together with
 * the limits below this refuses a bad header at its first chunk, before the
 * key exists, so no restore can start that could never end. Accepted
 * chunks are replicated as they come; the last one only once the library
 * has verified the whole snapshot (checksum included). When that fails the
 * primary deletes the key and replicates DEL instead, so a replica that had
 * the earlier chunks ends without the key too.
 */
#include "glue.h"
#include "room.h"

#include <limits.h>
#include <string.h>

/* The snapshot frame of docs/format.md, of which LOADCHUNK reads two fields
 * to learn how many bytes a restore expects: the magic at offset 0 and the
 * total length (little-endian u64) at offset 16. Everything else is checked
 * by the library when the last chunk arrives. */
#define SNAPSHOT_FRAME_BYTES 40u
#define SNAPSHOT_TOTAL_OFFSET 16u
static const unsigned char SNAPSHOT_MAGIC[4] = {'E', 'B', 'B', 'S'};

/* Iterators: the offset in the low bits, the scan number above. A
 * snapshot moved in chunks is shorter than 2^44 bytes (16 TiB), so the
 * offset of every chunk fits, and a plain offset is its own iterator. */
#define ITERATOR_OFFSET_BITS 44
#define ITERATOR_OFFSET_MASK ((UINT64_C(1) << ITERATOR_OFFSET_BITS) - 1)
#define CHUNKED_SNAPSHOT_MAX ITERATOR_OFFSET_MASK
#define SCAN_NUMBER_MAX ((UINT32_C(1) << (63 - ITERATOR_OFFSET_BITS)) - 1)

/* ------------------------------------------------------------------------ */
/* Restores in progress                                                     */
/* ------------------------------------------------------------------------ */

/* The snapshot length announced by a restore's first bytes, or 0 when they
 * are not the start of a snapshot. */
uint64_t ebb_redis_snapshot_announced_total(const unsigned char *bytes,
                                            size_t len)
{
    if (len < SNAPSHOT_FRAME_BYTES ||
        memcmp(bytes, SNAPSHOT_MAGIC, sizeof SNAPSHOT_MAGIC) != 0)
        return 0;
    uint64_t total = 0;
    for (unsigned i = 0; i < 8; i++)
        total |= (uint64_t)bytes[SNAPSHOT_TOTAL_OFFSET + i] << (8 * i);
    if (total < SNAPSHOT_FRAME_BYTES || total > (uint64_t)(SIZE_MAX / 2))
        return 0;
    return total;
}

/* Completes a restore whose bytes have all arrived: the filter replaces the
 * bytes. On failure the value is unchanged and the status says why. */
ebb_status ebb_redis_restore_finish(const ebb_redis_family *family,
                                    ebb_redis_value *value)
{
    void *filter;
    int64_t meter = ebb_redis_heap_meter(); /* MEMORY USAGE (value.c) */
    ebb_status status =
        family->load(value->restore.bytes, value->restore.length, &filter);
    if (status != EBB_OK)
        return status;
    ebb_redis_buffer_release(&value->restore);
    value->restore_total = 0;
    value->filter = filter;
    ebb_redis_value_measured(value, family, meter);
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* SCANDUMP                                                                 */
/* ------------------------------------------------------------------------ */

/* The number of a new scan, in 1 .. SCAN_NUMBER_MAX: one module-wide
 * sequence, started from the clock, so numbers differ across keys and
 * across restarts until 2^19 - 1 scans have started. */
static uint32_t new_scan_number(void)
{
    static uint32_t last;
    if (last == 0)
        last = (uint32_t)((unsigned long long)RedisModule_Milliseconds() %
                          SCAN_NUMBER_MAX);
    last = last % SCAN_NUMBER_MAX + 1;
    return last;
}

/* Where scan is among the key's running scans, or -1. */
static int scan_slot(const ebb_redis_value *value, uint64_t scan)
{
    for (uint32_t i = 0; i < value->dump_scan_count; i++)
        if (value->dump_scans[i] == scan)
            return (int)i;
    return -1;
}

/* Adds a running scan; when EBB_REDIS_SCANS_MAX run already, the oldest is
 * superseded (its next iterator is refused as stale). */
static void scan_add(ebb_redis_value *value, uint32_t scan)
{
    if (value->dump_scan_count == EBB_REDIS_SCANS_MAX) {
        memmove(value->dump_scans, value->dump_scans + 1,
                (EBB_REDIS_SCANS_MAX - 1) * sizeof value->dump_scans[0]);
        value->dump_scan_count--;
    }
    value->dump_scans[value->dump_scan_count++] = scan;
}

static long long scan_iterator(uint32_t scan, size_t end)
{
    return (long long)(((uint64_t)scan << ITERATOR_OFFSET_BITS) | end);
}

/* Replies [iterator, chunk] for the chunk of the kept snapshot starting at
 * offset; the iterator carries the scan's number and where the chunk ends. */
static int scandump_reply_chunk(RedisModuleCtx *ctx,
                                const ebb_redis_value *value, uint32_t scan,
                                size_t offset)
{
    const ebb_redis_buffer *dump = &value->dump;
    size_t n = dump->length - offset < EBB_REDIS_CHUNK_BYTES
                   ? dump->length - offset
                   : EBB_REDIS_CHUNK_BYTES;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, scan_iterator(scan, offset + n));
    return RedisModule_ReplyWithStringBuffer(
        ctx, (const char *)dump->bytes + offset, n);
}

/* Iterator 0: a new scan, served from the kept snapshot of the current
 * state or from one taken now. Its number in *scan; replies and returns
 * false when refused. */
static bool scandump_start(const ebb_redis_family *family,
                           RedisModuleCtx *ctx, ebb_redis_value *value,
                           uint32_t *scan)
{
    if (value->dump.bytes == NULL) {
        size_t size = family->snapshot_size(value->filter);
        if ((uint64_t)size > CHUNKED_SNAPSHOT_MAX) {
            ebb_redis_reply_errorf(ctx,
                                   "ERR %s: the snapshot (%zu bytes) is too "
                                   "large for SCANDUMP (at most 2^44 - 1 "
                                   "bytes)",
                                   family->name, size);
            return false;
        }
        /* The kept snapshot is a copy of the filter: it must fit the
         * limits like any new filter (room.h). */
        if (!ebb_redis_room_check(ctx, family->name, size))
            return false;
        if (!ebb_redis_snapshot_take(family, value->filter, true,
                                     &value->dump)) {
            ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
            return false;
        }
        value->dump_scan_count = 0;
    }
    *scan = new_scan_number();
    scan_add(value, *scan);
    return true;
}

/* The scan in `slot` reached its end: only its own number goes (a retried
 * last call then finds it gone), and the last running scan's end releases
 * the snapshot. */
static void scandump_end(ebb_redis_value *value, int slot)
{
    memmove(value->dump_scans + slot, value->dump_scans + slot + 1,
            (value->dump_scan_count - (uint32_t)slot - 1) *
                sizeof value->dump_scans[0]);
    value->dump_scan_count--;
    if (value->dump_scan_count == 0)
        ebb_redis_buffer_release(&value->dump);
}

/* A non-zero iterator: the next chunk of its scan, or [0, ""] at the end. */
static int scandump_next(RedisModuleCtx *ctx, ebb_redis_value *value,
                         uint64_t iterator)
{
    uint64_t scan = iterator >> ITERATOR_OFFSET_BITS;
    uint64_t offset = iterator & ITERATOR_OFFSET_MASK;
    int slot = value->dump.bytes == NULL ? -1 : scan_slot(value, scan);
    if (slot < 0)
        return RedisModule_ReplyWithError(
            ctx, "ERR SCANDUMP iterator is stale: the filter was written, "
                 "its scan ended or was superseded by newer scans, since its "
                 "iterator 0 (or it is not from SCANDUMP); start again "
                 "from 0");
    if (offset == 0 || offset > value->dump.length ||
        (offset % EBB_REDIS_CHUNK_BYTES != 0 &&
         offset != value->dump.length))
        return RedisModule_ReplyWithError(
            ctx, "ERR invalid SCANDUMP iterator: send the iterator the "
                 "previous SCANDUMP of this scan returned");
    if (offset == value->dump.length) {
        scandump_end(value, slot);
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        return RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    }
    return scandump_reply_chunk(ctx, value, (uint32_t)scan, (size_t)offset);
}

int ebb_redis_scandump(const ebb_redis_family *family, RedisModuleCtx *ctx,
                       RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long iterator;
    if (!ebb_redis_parse_integer(ctx, argv[2], "iterator", 0, LLONG_MAX,
                                 &iterator))
        return REDISMODULE_OK;
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, argv[1], REDISMODULE_READ, family, &key,
                               &value))
        return REDISMODULE_OK;
    if (value == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR no such key");
    }
    if (iterator == 0) {
        uint32_t scan;
        if (scandump_start(family, ctx, value, &scan))
            scandump_reply_chunk(ctx, value, scan, 0);
    } else {
        scandump_next(ctx, value, (uint64_t)iterator);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* LOADCHUNK                                                                */
/* ------------------------------------------------------------------------ */

/* The length of the chunk that starts at offset of a snapshot of total
 * bytes: EBB_REDIS_CHUNK_BYTES, or what is left for the last one. */
static size_t expected_chunk(uint64_t total, size_t offset)
{
    uint64_t left = total - offset;
    return left < EBB_REDIS_CHUNK_BYTES ? (size_t)left
                                        : EBB_REDIS_CHUNK_BYTES;
}

/* Whether a chunk of len bytes at offset fits a snapshot of total bytes.
 * A client's chunks are cut as SCANDUMP cuts them (expected_chunk), so a
 * header that announces more than the chunks hold fails at once. From the
 * primary or the AOF any length that stays within the total is applied:
 * the primary accepted it, and a restore in progress that an older module
 * received in other lengths is rewritten into the AOF as it was cut. */
static bool chunk_length_ok(RedisModuleCtx *ctx, uint64_t total,
                            size_t offset, size_t len)
{
    if (RedisModule_GetContextFlags(ctx) &
        (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING))
        return len > 0 && len <= total - offset;
    return len == expected_chunk(total, offset);
}

static int reply_bad_chunk(RedisModuleCtx *ctx,
                           const ebb_redis_family *family, size_t len,
                           size_t offset, uint64_t total, const char *then)
{
    return ebb_redis_reply_errorf(
        ctx,
        "ERR %s: LOADCHUNK chunk of %zu bytes at offset %zu: every chunk "
        "but the last has %zu bytes and the last ends at the announced "
        "total of %llu%s",
        family->name, len, offset, (size_t)EBB_REDIS_CHUNK_BYTES,
        (unsigned long long)total, then);
}

/* Checks a first chunk: an empty key (or a restore in progress, which it
 * restarts), a snapshot header announcing a total that fits the limits,
 * and the chunk's length. Replies and returns false when refused; nothing
 * has changed then. */
static bool loadchunk_check_first(const ebb_redis_family *family,
                                  RedisModuleCtx *ctx,
                                  const ebb_redis_value *value,
                                  const unsigned char *data, size_t len,
                                  uint64_t *total)
{
    if (value != NULL && value->filter != NULL) {
        ebb_redis_reply_errorf(ctx,
                               "ERR %s: the key already holds a filter; "
                               "LOADCHUNK restores into an empty key",
                               family->name);
        return false;
    }
    *total = ebb_redis_snapshot_announced_total(data, len);
    if (*total == 0) {
        ebb_redis_reply_errorf(ctx,
                               "ERR %s: the first LOADCHUNK chunk is not the "
                               "start of an ebb snapshot",
                               family->name);
        return false;
    }
    if (*total > CHUNKED_SNAPSHOT_MAX) {
        ebb_redis_reply_errorf(ctx,
                               "ERR %s: the first LOADCHUNK chunk announces "
                               "%llu bytes, more than a chunked snapshot "
                               "holds (2^44 - 1)",
                               family->name, (unsigned long long)*total);
        return false;
    }
    if (!chunk_length_ok(ctx, *total, 0, len)) {
        reply_bad_chunk(ctx, family, len, 0, *total, "");
        return false;
    }
    /* The peak of a restore: the snapshot's bytes, and at the last chunk
     * the filter loaded from them. Never refused from the primary or the
     * AOF (room.h). */
    return ebb_redis_room_check(ctx, family->name, (size_t)(2 * *total));
}

/* Stores the first chunk: a new value under the empty key, or the restore
 * in progress restarted. False (nothing changed) when out of memory. */
static bool loadchunk_store_first(const ebb_redis_family *family,
                                  RedisModuleKey *key,
                                  ebb_redis_value **value,
                                  const unsigned char *data, size_t len,
                                  uint64_t total)
{
    ebb_redis_buffer bytes = {NULL, 0, 0};
    if (!ebb_redis_buffer_reserve(&bytes, len, (size_t)total))
        return false;
    memcpy(bytes.bytes, data, len);
    bytes.length = len;
    if (*value == NULL) {
        *value = ebb_redis_value_new(NULL);
        if (*value == NULL) {
            ebb_redis_buffer_release(&bytes);
            return false;
        }
        RedisModule_ModuleTypeSetValue(key, *family->type, *value);
    }
    ebb_redis_buffer_release(&(*value)->restore);
    (*value)->restore = bytes;
    (*value)->restore_total = total;
    return true;
}

/* Deletes a key whose restore cannot complete, and has the replicas and
 * the AOF delete it too when they had it (replicated). */
static void loadchunk_drop(RedisModuleCtx *ctx, RedisModuleKey *key,
                           RedisModuleString *keyname, bool replicated)
{
    RedisModule_DeleteKey(key);
    if (replicated)
        RedisModule_Replicate(ctx, "DEL", "s", keyname);
}

/* The chunk completed the snapshot: verify and load it. */
static int loadchunk_finish(const ebb_redis_family *family,
                            RedisModuleCtx *ctx, RedisModuleKey *key,
                            RedisModuleString *keyname,
                            ebb_redis_value *value, bool existed)
{
    ebb_status status = ebb_redis_restore_finish(family, value);
    if (status != EBB_OK) {
        /* Nothing usable stays under the key. This chunk is not replicated;
         * what the primary did is: a replica that had the earlier chunks
         * deletes the key as well. */
        loadchunk_drop(ctx, key, keyname, existed);
        RedisModule_CloseKey(key);
        return ebb_redis_reply_errorf(ctx,
                                      "ERR %s: LOADCHUNK snapshot rejected: "
                                      "%s; the key is deleted",
                                      family->name, ebb_strerror(status));
    }
    RedisModule_ReplicateVerbatim(ctx);
    ebb_redis_notify(ctx, family, "loadchunk", keyname);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* A chunk after the first. Replies; the key is open and closed here. */
static int loadchunk_continue(const ebb_redis_family *family,
                              RedisModuleCtx *ctx, RedisModuleKey *key,
                              RedisModuleString *keyname,
                              ebb_redis_value *value,
                              const unsigned char *data, size_t len,
                              size_t offset)
{
    if (value == NULL || value->filter != NULL ||
        offset != value->restore.length) {
        /* A resent or misplaced chunk changes nothing: the client may
         * still send the right one. */
        RedisModule_CloseKey(key);
        return ebb_redis_reply_errorf(ctx,
                                      "ERR %s: LOADCHUNK chunk out of order: "
                                      "send the chunks in SCANDUMP's order, "
                                      "starting with its first",
                                      family->name);
    }
    if (!chunk_length_ok(ctx, value->restore_total, offset, len)) {
        /* In place but of the wrong length: these are not a snapshot's
         * chunks (or the header lied), and no later chunk can complete
         * the restore. */
        uint64_t total = value->restore_total;
        loadchunk_drop(ctx, key, keyname, true);
        RedisModule_CloseKey(key);
        return reply_bad_chunk(ctx, family, len, offset, total,
                               "; the restore is abandoned and the key "
                               "deleted");
    }
    if (!ebb_redis_buffer_reserve(&value->restore, offset + len,
                                  (size_t)value->restore_total)) {
        RedisModule_CloseKey(key);
        return ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
    }
    memcpy(value->restore.bytes + offset, data, len);
    value->restore.length = offset + len;
    if (value->restore.length == value->restore_total)
        return loadchunk_finish(family, ctx, key, keyname, value, true);
    RedisModule_ReplicateVerbatim(ctx);
    ebb_redis_notify(ctx, family, "loadchunk", keyname);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* The first chunk. Replies; the key is open and closed here. */
static int loadchunk_begin(const ebb_redis_family *family,
                           RedisModuleCtx *ctx, RedisModuleKey *key,
                           RedisModuleString *keyname, ebb_redis_value *value,
                           const unsigned char *data, size_t len)
{
    uint64_t total;
    if (!loadchunk_check_first(family, ctx, value, data, len, &total)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    bool existed = value != NULL;
    if (!loadchunk_store_first(family, key, &value, data, len, total)) {
        RedisModule_CloseKey(key);
        return ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
    }
    if (len == total)
        return loadchunk_finish(family, ctx, key, keyname, value, existed);
    RedisModule_ReplicateVerbatim(ctx);
    ebb_redis_notify(ctx, family, "loadchunk", keyname);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

int ebb_redis_loadchunk(const ebb_redis_family *family, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long iterator;
    if (!ebb_redis_parse_integer(ctx, argv[2], "iterator", 1, LLONG_MAX,
                                 &iterator))
        return REDISMODULE_OK;
    /* SCANDUMP's iterators carry a scan number above the offset; plain
     * offsets (AOF rewrites, older backups) have none. */
    uint64_t end = (uint64_t)iterator & ITERATOR_OFFSET_MASK;
    size_t len;
    const unsigned char *data =
        (const unsigned char *)RedisModule_StringPtrLen(argv[3], &len);
    if (len == 0 || end < len)
        return RedisModule_ReplyWithError(
            ctx, "ERR invalid LOADCHUNK iterator: use the iterator SCANDUMP "
                 "returned with this data");
    size_t offset = (size_t)(end - len);

    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, argv[1], REDISMODULE_WRITE, family, &key,
                        &value))
        return REDISMODULE_OK;
    if (offset == 0)
        return loadchunk_begin(family, ctx, key, argv[1], value, data, len);
    return loadchunk_continue(family, ctx, key, argv[1], value, data, len,
                              offset);
}
