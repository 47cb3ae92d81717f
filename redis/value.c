/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * value.c: what a key of ebb's types holds, opening keys, and creating
 * filters under them for RESERVE and for writes to a missing key (glue.h).
 */
#include "glue.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "room.h"

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

ebb_redis_value *ebb_redis_value_new(void *filter)
{
    ebb_redis_value *value = RedisModule_TryAlloc(sizeof *value);
    if (value == NULL)
        return NULL;
    memset(value, 0, sizeof *value);
    value->filter = filter;
    return value;
}

bool ebb_redis_store_new(RedisModuleKey *key, const ebb_redis_family *family,
                         void *filter)
{
    ebb_redis_value *value = ebb_redis_value_new(filter);
    if (value == NULL) {
        family->destroy(filter);
        return false;
    }
    RedisModule_ModuleTypeSetValue(key, *family->type, value);
    return true;
}

void ebb_redis_value_measured(ebb_redis_value *value,
                              const ebb_redis_family *family,
                              int64_t meter_before)
{
    int64_t heap = ebb_redis_heap_meter() - meter_before;
    if (value == NULL || value->filter == NULL || heap <= 0)
        return;
    value->filter_heap = (size_t)heap;
    value->filter_memory = family->memory(value->filter);
}

void ebb_redis_value_touch(ebb_redis_value *value)
{
    if (value->dump.bytes != NULL)
        ebb_redis_buffer_release(&value->dump);
    value->dump_scan_count = 0;
}

bool ebb_redis_open(RedisModuleCtx *ctx, RedisModuleString *keyname,
                    int mode, const ebb_redis_family *family,
                    RedisModuleKey **key, ebb_redis_value **value)
{
    /* A missing key opened for reading comes back as NULL. */
    RedisModuleKey *opened = RedisModule_OpenKey(ctx, keyname, mode);
    int type = opened == NULL ? REDISMODULE_KEYTYPE_EMPTY
                              : RedisModule_KeyType(opened);
    if (type == REDISMODULE_KEYTYPE_EMPTY) {
        *key = opened;
        *value = NULL;
        return true;
    }
    if (type != REDISMODULE_KEYTYPE_MODULE ||
        RedisModule_ModuleTypeGetType(opened) != *family->type) {
        RedisModule_CloseKey(opened);
        RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        return false;
    }
    *key = opened;
    *value = RedisModule_ModuleTypeGetValue(opened);
    return true;
}

bool ebb_redis_value_ready(RedisModuleCtx *ctx,
                           const ebb_redis_family *family,
                           const ebb_redis_value *value)
{
    if (value->filter != NULL)
        return true;
    ebb_redis_reply_errorf(ctx,
                       "ERR %s: the filter is being restored by LOADCHUNK "
                       "(%zu of %llu bytes received)",
                       family->name, value->restore.length,
                       (unsigned long long)value->restore_total);
    return false;
}

bool ebb_redis_open_filter(RedisModuleCtx *ctx, RedisModuleString *keyname,
                           int mode, const ebb_redis_family *family,
                           RedisModuleKey **key, ebb_redis_value **value)
{
    if (!ebb_redis_open(ctx, keyname, mode, family, key, value))
        return false;
    if (*value == NULL || ebb_redis_value_ready(ctx, family, *value))
        return true;
    RedisModule_CloseKey(*key);
    return false;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static int reply_refused(RedisModuleCtx *ctx, const ebb_redis_creator *creator,
                         ebb_status status, const void *options);

/* The family's options struct, resolved, on the stack. */
typedef union resolved_options {
    max_align_t align;
    unsigned char bytes[EBB_REDIS_OPTIONS_MAX];
} resolved_options;

/* A new filter for options stored under the open, empty key, its options
 * resolved into *resolved (what replicate_reserve sends). On a client call
 * the filter's bytes are checked against every memory limit first
 * (room.h), before anything is allocated. False after replying an error;
 * the key stays empty. */
static bool create_in_key(RedisModuleCtx *ctx, RedisModuleKey *key,
                          const RedisModuleString *keyname,
                          const ebb_redis_creator *creator,
                          const void *options, resolved_options *resolved)
{
    size_t bytes = 0;
    memcpy(resolved->bytes, options, creator->options_size);
    if (!creator->resolve(ctx, resolved->bytes, &bytes) ||
        !ebb_redis_room_check(ctx, creator->family->name, bytes))
        return false;
    void *filter;
    int64_t meter = ebb_redis_heap_meter();
    ebb_status status = creator->create(resolved->bytes,
                                        ebb_redis_key_seed(keyname), &filter);
    if (status == EBB_OK && !ebb_redis_store_new(key, creator->family, filter))
        status = EBB_ENOMEM;
    if (status != EBB_OK) {
        reply_refused(ctx, creator, status, resolved->bytes);
        return false;
    }
    ebb_redis_value_measured(RedisModule_ModuleTypeGetValue(key),
                             creator->family, meter);
    return true;
}

/* A write from the primary or the AOF found no key: the primary always
 * sends a resolved RESERVE before the first write, so the RESERVE did not
 * apply here (refused, or lost). Creating the key with this server's
 * defaults would diverge silently; this is loud instead. */
static void refuse_replicated_create(RedisModuleCtx *ctx,
                                     RedisModuleString *keyname,
                                     const ebb_redis_family *family)
{
    size_t len;
    const char *name = RedisModule_StringPtrLen(keyname, &len);
    RedisModule_Log(ctx, "warning",
                    "ebb: %s: the primary's RESERVE of %.*s did not apply "
                    "here (or the AOF lacks it): a write to the missing key "
                    "is refused rather than creating it with this server's "
                    "defaults",
                    family->name, len > 200 ? 200 : (int)len, name);
    ebb_redis_reply_errorf(ctx,
                           "ERR %s: no such key (a replicated write never "
                           "creates a key)",
                           family->name);
}

static int reply_refused(RedisModuleCtx *ctx, const ebb_redis_creator *creator,
                         ebb_status status, const void *options)
{
    if (creator->reply_refused != NULL)
        return creator->reply_refused(ctx, status, options);
    return ebb_redis_reply_status(ctx, creator->family->name, status);
}

int ebb_redis_reserve(RedisModuleCtx *ctx, RedisModuleString *keyname,
                      const ebb_redis_creator *creator, const void *options)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, keyname, REDISMODULE_WRITE, creator->family,
                        &key, &value))
        return REDISMODULE_OK;
    if (value != NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR key already exists");
    }
    resolved_options resolved;
    bool created =
        create_in_key(ctx, key, keyname, creator, options, &resolved);
    RedisModule_CloseKey(key);
    if (!created)
        return REDISMODULE_OK;
    /* What was decided, not what was typed (docs/redis.md, Replication). */
    creator->replicate_reserve(ctx, keyname, resolved.bytes);
    ebb_redis_notify(ctx, creator->family, "reserve", keyname);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

bool ebb_redis_open_for_add(RedisModuleCtx *ctx, RedisModuleString *keyname,
                            const ebb_redis_creator *creator,
                            const void *options, bool nocreate,
                            RedisModuleKey **key, ebb_redis_value **value)
{
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_WRITE,
                               creator->family, key, value))
        return false;
    if (*value != NULL)
        return true;
    if (RedisModule_GetContextFlags(ctx) &
        (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING)) {
        RedisModule_CloseKey(*key);
        refuse_replicated_create(ctx, keyname, creator->family);
        return false;
    }
    if (nocreate) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, "ERR no such key");
        return false;
    }
    resolved_options resolved;
    if (!create_in_key(ctx, *key, keyname, creator, options, &resolved)) {
        RedisModule_CloseKey(*key);
        return false;
    }
    *value = RedisModule_ModuleTypeGetValue(*key);
    creator->replicate_reserve(ctx, keyname, resolved.bytes);
    return true;
}
