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
    /* The server's prototype takes the table writable; it only reads it.
     * Values are written in EBB_REDIS_ENCODING_VERSION (2); Redis stores
     * each value's version and hands it back to rdb_load, which still
     * reads version 1 (persist.c). */
    RedisModuleTypeMethods writable = *methods;
    *family->type = RedisModule_CreateDataType(
        ctx, type_name, EBB_REDIS_ENCODING_VERSION, &writable);
    return *family->type == NULL ? REDISMODULE_ERR : REDISMODULE_OK;
}
