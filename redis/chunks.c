/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chunks.c: chunked dump and restore, <FAMILY>.SCANDUMP and
 * <FAMILY>.LOADCHUNK, and the restores in progress they leave under a key
 * (glue.h).
 */
#include "glue.h"

#include <limits.h>
#include <string.h>

/* The snapshot frame of docs/format.md, of which LOADCHUNK reads two fields
 * to learn how many bytes a restore expects: the magic at offset 0 and the
 * total length (little-endian u64) at offset 16. Everything else is checked
 * by the library when the last chunk arrives. */
#define SNAPSHOT_FRAME_BYTES 40u
#define SNAPSHOT_TOTAL_OFFSET 16u
static const unsigned char SNAPSHOT_MAGIC[4] = {'E', 'B', 'B', 'S'};

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
    ebb_status status =
        family->load(value->restore.bytes, value->restore.length, &filter);
    if (status != EBB_OK)
        return status;
    ebb_redis_buffer_release(&value->restore);
    value->restore_total = 0;
    value->filter = filter;
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* SCANDUMP                                                                 */
/* ------------------------------------------------------------------------ */

/* Replies [iterator, chunk] for the chunk of the saved snapshot starting
 * at offset; the iterator is where the chunk ends. */
static int scandump_reply_chunk(RedisModuleCtx *ctx,
                                const ebb_redis_buffer *dump, size_t offset)
{
    size_t n = dump->length - offset < EBB_REDIS_CHUNK_BYTES
                   ? dump->length - offset
                   : EBB_REDIS_CHUNK_BYTES;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, (long long)(offset + n));
    return RedisModule_ReplyWithStringBuffer(
        ctx, (const char *)dump->bytes + offset, n);
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
        /* A new scan: the state as it is now. */
        ebb_redis_buffer_release(&value->dump);
        if (!ebb_redis_snapshot_take(family, value->filter, true,
                                     &value->dump)) {
            RedisModule_CloseKey(key);
            return ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
        }
        RedisModule_CloseKey(key);
        return scandump_reply_chunk(ctx, &value->dump, 0);
    }
    if (value->dump.bytes == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(
            ctx, "ERR SCANDUMP iterator is stale: the filter was written, "
                 "or its scan ended, since iterator 0; start again from 0");
    }
    if ((unsigned long long)iterator > value->dump.length) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx,
                                          "ERR invalid SCANDUMP iterator");
    }
    if ((size_t)iterator == value->dump.length) {
        /* The end: [0, ""], and the saved snapshot is no longer needed. */
        ebb_redis_buffer_release(&value->dump);
        RedisModule_CloseKey(key);
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        return RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    }
    RedisModule_CloseKey(key);
    return scandump_reply_chunk(ctx, &value->dump, (size_t)iterator);
}

/* ------------------------------------------------------------------------ */
/* LOADCHUNK                                                                */
/* ------------------------------------------------------------------------ */

/* The first chunk: a new restore into an empty key, or a restart of a
 * restore in progress. Replies and returns false when refused. */
static bool loadchunk_begin(const ebb_redis_family *family,
                            RedisModuleCtx *ctx, RedisModuleKey *key,
                            ebb_redis_value **value,
                            const unsigned char *data, size_t len)
{
    if (*value != NULL && (*value)->filter != NULL) {
        ebb_redis_reply_errorf(ctx,
                           "ERR %s: the key already holds a filter; "
                           "LOADCHUNK restores into an empty key",
                           family->name);
        return false;
    }
    uint64_t total = ebb_redis_snapshot_announced_total(data, len);
    if (total == 0 || total < len) {
        ebb_redis_reply_errorf(ctx,
                           "ERR %s: the first LOADCHUNK chunk is not the "
                           "start of an ebb snapshot",
                           family->name);
        return false;
    }
    if (*value == NULL) {
        *value = ebb_redis_value_new(NULL);
        if (*value == NULL) {
            ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
            return false;
        }
        RedisModule_ModuleTypeSetValue(key, *family->type, *value);
    }
    (*value)->restore.length = 0;
    (*value)->restore_total = total;
    return true;
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
    size_t len;
    const unsigned char *data =
        (const unsigned char *)RedisModule_StringPtrLen(argv[3], &len);
    if (len == 0 || (unsigned long long)iterator < len)
        return RedisModule_ReplyWithError(
            ctx, "ERR invalid LOADCHUNK iterator: use the iterator SCANDUMP "
                 "returned with this data");
    size_t offset = (size_t)iterator - len;

    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, argv[1], REDISMODULE_WRITE, family, &key,
                        &value))
        return REDISMODULE_OK;
    if (offset == 0) {
        if (!loadchunk_begin(family, ctx, key, &value, data, len)) {
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
    } else if (value == NULL || value->filter != NULL ||
               offset != value->restore.length ||
               offset + len > value->restore_total) {
        RedisModule_CloseKey(key);
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: LOADCHUNK chunk out of order: "
                                  "send the chunks in SCANDUMP's order, "
                                  "starting with its first",
                                  family->name);
    }
    if (!ebb_redis_buffer_reserve(&value->restore, offset + len,
                        (size_t)value->restore_total)) {
        RedisModule_CloseKey(key);
        return ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
    }
    memcpy(value->restore.bytes + offset, data, len);
    value->restore.length = offset + len;
    /* From here the key has changed whatever happens next; the replica and
     * the AOF get the same chunk and reach the same outcome. */
    RedisModule_ReplicateVerbatim(ctx);
    if (value->restore.length < value->restore_total) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    ebb_status status = ebb_redis_restore_finish(family, value);
    if (status != EBB_OK) {
        /* The snapshot is damaged: nothing usable stays under the key. */
        RedisModule_DeleteKey(key);
        RedisModule_CloseKey(key);
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: LOADCHUNK snapshot rejected: %s",
                                  family->name, ebb_strerror(status));
    }
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
