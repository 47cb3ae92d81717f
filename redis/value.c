/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * value.c: what a key of ebb's types holds, opening keys, and creating
 * filters under them for RESERVE and for writes to a missing key (glue.h).
 */
#include "glue.h"

#include <limits.h>
#include <string.h>

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

void ebb_redis_value_touch(ebb_redis_value *value)
{
    if (value->dump.bytes != NULL)
        ebb_redis_buffer_release(&value->dump);
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

/* A new filter for options stored under the open, empty key; on failure
 * the key stays empty and the status says why. */
static ebb_status create_in_key(RedisModuleKey *key,
                                const RedisModuleString *keyname,
                                const ebb_redis_creator *creator,
                                const void *options)
{
    void *filter;
    ebb_status status =
        creator->create(options, ebb_redis_key_seed(keyname), &filter);
    if (status == EBB_OK && !ebb_redis_store_new(key, creator->family, filter))
        status = EBB_ENOMEM;
    return status;
}

static int reply_refused(RedisModuleCtx *ctx, const ebb_redis_creator *creator,
                         ebb_status status)
{
    if (creator->reply_refused != NULL)
        return creator->reply_refused(ctx, status);
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
    ebb_status status = create_in_key(key, keyname, creator, options);
    RedisModule_CloseKey(key);
    if (status != EBB_OK)
        return reply_refused(ctx, creator, status);
    RedisModule_ReplicateVerbatim(ctx);
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
    if (nocreate) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, "ERR no such key");
        return false;
    }
    ebb_status status = create_in_key(*key, keyname, creator, options);
    if (status != EBB_OK) {
        RedisModule_CloseKey(*key);
        reply_refused(ctx, creator, status);
        return false;
    }
    *value = RedisModule_ModuleTypeGetValue(*key);
    creator->replicate_reserve(ctx, keyname, options);
    return true;
}
