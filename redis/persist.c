/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * persist.c: the data-type callbacks of every family: RDB load and save,
 * AOF rewrite, MEMORY USAGE, COPY and free (glue.h).
 *
 * Persistence never re-adds items: RDB (and so DUMP/RESTORE and the RDB
 * preamble of AOF files) stores the library's snapshot bytes, and an AOF
 * rewrite emits LOADCHUNK commands that carry the same bytes. A snapshot
 * carries its own checksum, so a payload damaged anywhere is refused by the
 * library's loader rather than loaded wrong.
 */
#include "glue.h"

#include <limits.h>
#include <string.h>

/* RDB kinds of encoding version 1. */
#define RDB_KIND_FILTER 0u
#define RDB_KIND_RESTORE 1u

/* ------------------------------------------------------------------------ */
/* RDB                                                                      */
/* ------------------------------------------------------------------------ */

static void *rdb_load_filter(const ebb_redis_family *family,
                             RedisModuleIO *io)
{
    size_t len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || bytes == NULL) {
        if (bytes != NULL)
            RedisModule_Free(bytes);
        return NULL;
    }
    void *filter;
    ebb_status status = family->load(bytes, len, &filter);
    RedisModule_Free(bytes);
    if (status != EBB_OK) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s snapshot rejected (%zu bytes): %s",
                               family->name, len, ebb_strerror(status));
        return NULL;
    }
    ebb_redis_value *value = ebb_redis_value_new(filter);
    if (value == NULL) {
        family->destroy(filter);
        RedisModule_LogIOError(io, "warning", "ebb: %s: out of memory",
                               family->name);
    }
    return value;
}

static void *rdb_load_restore(const ebb_redis_family *family,
                              RedisModuleIO *io)
{
    uint64_t total = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    size_t len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || bytes == NULL) {
        if (bytes != NULL)
            RedisModule_Free(bytes);
        return NULL;
    }
    /* The same rules as LOADCHUNK: a frame announcing this total, and fewer
     * bytes than that (a complete restore is saved as a filter). */
    if (ebb_redis_snapshot_announced_total((const unsigned char *)bytes,
                                           len) != total ||
        len >= total) {
        RedisModule_Free(bytes);
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s: inconsistent LOADCHUNK restore "
                               "(%zu of %llu bytes)",
                               family->name, len, (unsigned long long)total);
        return NULL;
    }
    ebb_redis_value *value = ebb_redis_value_new(NULL);
    if (value == NULL) {
        RedisModule_Free(bytes);
        RedisModule_LogIOError(io, "warning", "ebb: %s: out of memory",
                               family->name);
        return NULL;
    }
    value->restore.bytes = (unsigned char *)bytes;
    value->restore.length = len;
    value->restore.capacity = len;
    value->restore_total = total;
    return value;
}

void *ebb_redis_rdb_load(const ebb_redis_family *family, RedisModuleIO *io,
                         int encver)
{
    if (encver != EBB_REDIS_ENCODING_VERSION) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s value of encoding version %d; this "
                               "module reads version %d",
                               family->name, encver,
                               EBB_REDIS_ENCODING_VERSION);
        return NULL;
    }
    uint64_t kind = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    if (kind == RDB_KIND_FILTER)
        return rdb_load_filter(family, io);
    if (kind == RDB_KIND_RESTORE)
        return rdb_load_restore(family, io);
    RedisModule_LogIOError(io, "warning", "ebb: %s value of unknown kind %llu",
                           family->name, (unsigned long long)kind);
    return NULL;
}

void ebb_redis_rdb_save(const ebb_redis_family *family, RedisModuleIO *io,
                        const ebb_redis_value *value)
{
    if (value->filter == NULL) {
        RedisModule_SaveUnsigned(io, RDB_KIND_RESTORE);
        RedisModule_SaveUnsigned(io, value->restore_total);
        RedisModule_SaveStringBuffer(io, (const char *)value->restore.bytes,
                                     value->restore.length);
        return;
    }
    ebb_redis_buffer snapshot;
    ebb_redis_snapshot_take(family, value->filter, false, &snapshot);
    RedisModule_SaveUnsigned(io, RDB_KIND_FILTER);
    RedisModule_SaveStringBuffer(io, (const char *)snapshot.bytes,
                                 snapshot.length);
    ebb_redis_buffer_release(&snapshot);
}

/* ------------------------------------------------------------------------ */
/* AOF rewrite, MEMORY USAGE, COPY, free                                    */
/* ------------------------------------------------------------------------ */

/* LOADCHUNK commands that rebuild `len` bytes of a snapshot under key. */
static void emit_chunks(const ebb_redis_family *family, RedisModuleIO *io,
                        RedisModuleString *key, const unsigned char *bytes,
                        size_t len)
{
    for (size_t offset = 0; offset < len;) {
        size_t n = len - offset < EBB_REDIS_CHUNK_BYTES
                       ? len - offset
                       : EBB_REDIS_CHUNK_BYTES;
        RedisModule_EmitAOF(io, family->loadchunk_command, "slb", key,
                            (long long)(offset + n),
                            (const char *)bytes + offset, n);
        offset += n;
    }
}

void ebb_redis_aof_rewrite(const ebb_redis_family *family, RedisModuleIO *io,
                           RedisModuleString *key,
                           const ebb_redis_value *value)
{
    if (value->filter == NULL) {
        emit_chunks(family, io, key, value->restore.bytes,
                    value->restore.length);
        return;
    }
    ebb_redis_buffer snapshot;
    ebb_redis_snapshot_take(family, value->filter, false, &snapshot);
    emit_chunks(family, io, key, snapshot.bytes, snapshot.length);
    ebb_redis_buffer_release(&snapshot);
}

size_t ebb_redis_mem_usage(const ebb_redis_family *family,
                           const ebb_redis_value *value)
{
    size_t bytes = sizeof *value + value->restore.capacity +
                   value->dump.capacity;
    if (value->filter != NULL)
        bytes += family->memory(value->filter);
    return bytes;
}

void *ebb_redis_copy(const ebb_redis_family *family,
                     const ebb_redis_value *value)
{
    ebb_redis_value *copy = ebb_redis_value_new(NULL);
    if (copy == NULL)
        return NULL;
    if (value->filter == NULL) {
        if (!ebb_redis_buffer_reserve(&copy->restore, value->restore.length,
                            value->restore.length)) {
            RedisModule_Free(copy);
            return NULL;
        }
        memcpy(copy->restore.bytes, value->restore.bytes,
               value->restore.length);
        copy->restore.length = value->restore.length;
        copy->restore_total = value->restore_total;
        return copy;
    }
    /* Through a snapshot: the library's one exact serialisation, and the
     * copy's seed, counters and bits are the original's. */
    ebb_redis_buffer snapshot;
    if (!ebb_redis_snapshot_take(family, value->filter, true, &snapshot)) {
        RedisModule_Free(copy);
        return NULL;
    }
    ebb_status status =
        family->load(snapshot.bytes, snapshot.length, &copy->filter);
    ebb_redis_buffer_release(&snapshot);
    if (status != EBB_OK) {
        RedisModule_Free(copy);
        return NULL;
    }
    return copy;
}

void ebb_redis_free(const ebb_redis_family *family, ebb_redis_value *value)
{
    if (value->filter != NULL)
        family->destroy(value->filter);
    ebb_redis_buffer_release(&value->restore);
    ebb_redis_buffer_release(&value->dump);
    RedisModule_Free(value);
}
