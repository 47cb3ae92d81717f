/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * module.c: the entry point of ebb.so.
 *
 *   redis-server --loadmodule /path/to/ebb.so
 *
 * Loading fetches the API (api.c), installs Redis's allocator into libebb
 * before any filter exists, so every byte a filter holds is counted by
 * INFO memory, MEMORY USAGE and maxmemory, then registers the two data
 * types and their commands. The module takes no arguments.
 */
#include <ebb/ebb.h>

#include "api.h"
#include "glue.h"

#define MODULE_NAME "ebb"

/* libebb's allocator table on Redis's heap. TryAlloc, not Alloc: a filter
 * that cannot be allocated is an error reply, not a server abort. */
static void *redis_alloc(size_t size, void *user)
{
    (void)user;
    return RedisModule_TryAlloc(size);
}

static void *redis_alloc_zeroed(size_t size, void *user)
{
    (void)user;
    return RedisModule_TryCalloc(1, size);
}

static void redis_release(void *ptr, void *user)
{
    (void)user;
    RedisModule_Free(ptr);
}

static ebb_status install_allocator(void)
{
    ebb_allocator allocator = {redis_alloc, NULL, redis_release, NULL};
    /* Zeroed allocations straight from calloc when the server offers one
     * that can fail softly (7.4); otherwise libebb clears what it gets. */
    if (RedisModule_TryCalloc != NULL)
        allocator.alloc_zeroed = redis_alloc_zeroed;
    return ebb_set_allocator(&allocator);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    (void)argv;
    if (ebb_redis_api_load(ctx) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (RedisModule_IsModuleNameBusy(MODULE_NAME))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, MODULE_NAME, (int)ebb_version_number(),
                                 REDISMODULE_APIVER_1);
    if (argc != 0) {
        RedisModule_Log(ctx, "warning", "ebb: the module takes no arguments");
        return REDISMODULE_ERR;
    }
    if (install_allocator() != EBB_OK) {
        RedisModule_Log(ctx, "warning", "ebb: cannot install the allocator");
        return REDISMODULE_ERR;
    }
    /* Our rdb_load checks every read and rejects what it cannot use, so a
     * damaged payload is an error, not a server abort. */
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    ebb_redis_add_acl_category(ctx);
    if (ebb_redis_apbf_register(ctx) != REDISMODULE_OK ||
        ebb_redis_tlbf_register(ctx) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning",
                        "ebb: cannot register the data types or commands");
        return REDISMODULE_ERR;
    }
    RedisModule_Log(ctx, "notice", "ebb %s loaded (libebb %s)",
                    EBB_VERSION_STRING, ebb_version_string());
    return REDISMODULE_OK;
}
