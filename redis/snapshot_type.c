/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot_type.c: registration of a data type whose values persist as
 * library snapshots (snapshot_type.h).
 */
#include "snapshot_type.h"

int ebb_redis_snapshot_type_create(RedisModuleCtx *ctx,
                                   const ebb_redis_family *family,
                                   const char *type_name,
                                   const RedisModuleTypeMethods *methods)
{
    /* The server's prototype takes the table writable; it only reads it. */
    RedisModuleTypeMethods writable = *methods;
    *family->type = RedisModule_CreateDataType(
        ctx, type_name, EBB_REDIS_ENCODING_VERSION, &writable);
    return *family->type == NULL ? REDISMODULE_ERR : REDISMODULE_OK;
}
