/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * module.c: the entry point of ebb.so.
 *
 *   redis-server --loadmodule /path/to/ebb.so
 *
 * Loading fetches the API (api.c), installs Redis's allocator into libebb
 * before any filter exists, so every byte a filter holds is counted by
 * INFO memory, MEMORY USAGE and maxmemory, then registers the two data
 * types and their commands, and the config ebb.tlbf-future-ms (how far
 * ahead of the server's clock TLBF.ADDAT accepts a time). The module takes
 * no arguments: configs are set with --ebb.<name> at start or CONFIG SET.
 */
#include <ebb/ebb.h>

#include <string.h>

#include "api.h"
#include "glue.h"
#include "room.h"

#define MODULE_NAME "ebb"

/* libebb's allocator table on Redis's heap. TryAlloc, not Alloc: a filter
 * that cannot be allocated is an error reply, not a server abort.
 *
 * Zeroed memory without a stall: clearing a window of 1e9 (2.6 GB) by hand
 * blocked the server 3.9 s here (6.7 s in issue 19). calloc of a large
 * block maps fresh pages, which the kernel zeroes on first touch (jemalloc
 * clears only what it reuses), so a RESERVE touches nothing: 21 ms and an
 * RSS of 8 MB after it (tests/redis/limits.sh). Redis 7.4 has TryCalloc;
 * 7.0 has only Calloc, which aborts the server when it fails. So a large
 * zeroed block is first probed (room.c: the kernel grants a mapping of
 * that size now, under RLIMIT_AS and the overcommit policy), and only then
 * asked of Calloc: a refusal is ENOMEM, not an abort. RESERVE has checked
 * the room before (ebb_redis_room_check); a replicated RESERVE has not, and
 * then this probe is what stands between a replica without memory and an
 * abort. Small blocks are cleared by hand (cheaper than a mapping). */
#define ZEROED_BY_HAND_MAX ((size_t)1 << 20)

/* The heap meter (glue.h): usable bytes libebb holds, per thread (the
 * main thread creates and loads; a lazy-free thread only frees). */
static _Thread_local int64_t heap_meter;

int64_t ebb_redis_heap_meter(void)
{
    return heap_meter;
}

static void *metered(void *ptr)
{
    if (ptr != NULL)
        heap_meter += (int64_t)RedisModule_MallocSize(ptr);
    return ptr;
}

static void *redis_alloc(size_t size, void *user)
{
    (void)user;
    return metered(RedisModule_TryAlloc(size));
}

/* Config ebb.huge-pages: whether the zeroed blocks of 2 MiB or more that
 * hold filters ask for transparent huge pages (docs/redis.md). */
static int huge_pages = 1;

static void advise(void *ptr, size_t size)
{
    if (huge_pages)
        ebb_advise_huge_pages(ptr, size);
}

/* A zeroed block, advised before its first touch where it is cleared by
 * hand, so that the clearing faults in huge pages. */
static void *zeroed_block(size_t size)
{
    void *ptr;
    if (RedisModule_TryCalloc != NULL) {
        ptr = RedisModule_TryCalloc(1, size);
        advise(ptr, size);
        return ptr;
    }
    if (size <= ZEROED_BY_HAND_MAX) {
        ptr = RedisModule_TryAlloc(size);
        if (ptr != NULL) {
            advise(ptr, size);
            memset(ptr, 0, size);
        }
        return ptr;
    }
    if (!ebb_redis_mapping_probe(size))
        return NULL;
    ptr = RedisModule_Calloc(1, size);
    advise(ptr, size);
    return ptr;
}

static void *redis_alloc_zeroed(size_t size, void *user)
{
    (void)user;
    return metered(zeroed_block(size));
}

static void redis_release(void *ptr, void *user)
{
    (void)user;
    if (ptr != NULL)
        heap_meter -= (int64_t)RedisModule_MallocSize(ptr);
    RedisModule_Free(ptr);
}

static ebb_status install_allocator(void)
{
    ebb_allocator allocator = {redis_alloc, redis_alloc_zeroed, redis_release,
                               NULL};
    return ebb_set_allocator(&allocator);
}

/* ------------------------------------------------------------------------ */
/* Configs (CONFIG GET/SET ebb.<name>, --ebb.<name> at startup)            */
/* ------------------------------------------------------------------------ */

/* privdata: the long long the config sets. */
static long long config_get_numeric(const char *name, void *privdata)
{
    (void)name;
    return *(const long long *)privdata;
}

static int config_set_numeric(const char *name, long long value,
                              void *privdata, RedisModuleString **err)
{
    (void)name;
    (void)err; /* the server checked [min, max] */
    *(long long *)privdata = value;
    return REDISMODULE_OK;
}

/* privdata: the int the config sets. */
static int config_get_bool(const char *name, void *privdata)
{
    (void)name;
    return *(const int *)privdata;
}

static int config_set_bool(const char *name, int value, void *privdata,
                           RedisModuleString **err)
{
    (void)name;
    (void)err;
    *(int *)privdata = value;
    return REDISMODULE_OK;
}

/* Registers the module's configs and applies the values given at startup.
 * A server without module configs (before 7.0) keeps the defaults. */
static int register_configs(RedisModuleCtx *ctx)
{
    if (RedisModule_RegisterNumericConfig == NULL ||
        RedisModule_RegisterBoolConfig == NULL ||
        RedisModule_LoadConfigs == NULL)
        return REDISMODULE_OK;
    if (RedisModule_RegisterNumericConfig(
            ctx, "tlbf-future-ms", EBB_REDIS_TLBF_FUTURE_MS_DEFAULT,
            REDISMODULE_CONFIG_DEFAULT, 0, EBB_REDIS_TLBF_MAX_MS,
            config_get_numeric, config_set_numeric, NULL,
            &ebb_redis_tlbf_future_ms) != REDISMODULE_OK ||
        RedisModule_RegisterBoolConfig(ctx, "huge-pages", huge_pages,
                                       REDISMODULE_CONFIG_DEFAULT,
                                       config_get_bool, config_set_bool, NULL,
                                       &huge_pages) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return RedisModule_LoadConfigs(ctx);
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
        ebb_redis_tlbf_register(ctx) != REDISMODULE_OK ||
        ebb_redis_stable_register(ctx) != REDISMODULE_OK ||
        ebb_redis_timing_register(ctx) != REDISMODULE_OK ||
        ebb_redis_spectral_register(ctx) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning",
                        "ebb: cannot register the data types or commands");
        return REDISMODULE_ERR;
    }
    if (register_configs(ctx) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning",
                        "ebb: cannot register or load the configs "
                        "(ebb.tlbf-future-ms, ebb.huge-pages)");
        return REDISMODULE_ERR;
    }
    RedisModule_Log(ctx, "notice", "ebb %s loaded (libebb %s)",
                    EBB_VERSION_STRING, ebb_version_string());
    return REDISMODULE_OK;
}
