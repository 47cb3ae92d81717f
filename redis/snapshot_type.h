/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * snapshot_type.h: the snapshot-based persistence of a data type of ebb.so,
 * written once for every filter family.
 *
 * A family's values are kept on disk and on the wire as the library's
 * snapshot bytes, streamed from the filter in bounded pieces (never a second
 * copy of it): RDB save and load, AOF rewrite (as <FAMILY>.LOADCHUNK
 * commands), DEBUG DIGEST-VALUE; and MEMORY USAGE, COPY, free, and the
 * commands <FAMILY>.SCANDUMP
 * and <FAMILY>.LOADCHUNK. The logic lives in persist.c and chunks.c, over
 * the family's table of library functions (ebb_redis_family).
 *
 * Redis hands its data-type callbacks no user pointer, and a command
 * handler learns nothing of which family it serves, so every family needs
 * functions of its own that name its table. EBB_REDIS_SNAPSHOT_FAMILY
 * writes those one-line trampolines, and the adapters from the library's
 * typed functions to the table's void pointers, from the family's prefix:
 *
 *   EBB_REDIS_SNAPSHOT_FAMILY(apbf, APBF);
 *
 * defines, all static:
 *   apbf_type                the registered data type (set by
 *                            ebb_redis_snapshot_type_create);
 *   APBF                     the family table: name "APBF", AOF rewrite
 *                            through "APBF.LOADCHUNK", and the adapters of
 *                            ebb_apbf_snapshot_size, ebb_apbf_save,
 *                            ebb_apbf_save_to, ebb_apbf_load,
 *                            ebb_apbf_memory and ebb_apbf_destroy;
 *   apbf_scandump,           the handlers of APBF.SCANDUMP and
 *   apbf_loadchunk           APBF.LOADCHUNK (for the command table);
 *   apbf_type_methods        the data-type callbacks (DEBUG DIGEST-VALUE's
 *                            digest included), for
 *                            ebb_redis_snapshot_type_create.
 */
#ifndef EBB_REDIS_SNAPSHOT_TYPE_H
#define EBB_REDIS_SNAPSHOT_TYPE_H

#include <ebb/ebb.h>

#include "api.h"
#include "glue.h"

/* Creates the data type type_name (exactly 9 characters) with methods and
 * stores it in *family->type. REDISMODULE_OK or REDISMODULE_ERR. */
int ebb_redis_snapshot_type_create(RedisModuleCtx *ctx,
                                   const ebb_redis_family *family,
                                   const char *type_name,
                                   const RedisModuleTypeMethods *methods);

/* The family table over ebb_<prefix>_*: the library takes and returns
 * typed filters, the table void pointers. */
#define EBB_REDIS_SNAPSHOT_ADAPTERS_(prefix, NAME)                            \
    static RedisModuleType *prefix##_type;                                    \
    static size_t prefix##_snapshot_size(const void *filter)                  \
    {                                                                         \
        return ebb_##prefix##_snapshot_size(filter);                          \
    }                                                                         \
    static ebb_status prefix##_save(const void *filter, void *buf,            \
                                    size_t capacity, size_t *written)         \
    {                                                                         \
        return ebb_##prefix##_save(filter, buf, capacity, written);           \
    }                                                                         \
    static ebb_status prefix##_save_to(const void *filter,                    \
                                       ebb_save_sink sink, void *user)        \
    {                                                                         \
        return ebb_##prefix##_save_to(filter, sink, user);                    \
    }                                                                         \
    static ebb_status prefix##_load(const void *buf, size_t len, void **out)  \
    {                                                                         \
        ebb_##prefix *filter;                                                 \
        ebb_status status = ebb_##prefix##_load(buf, len, &filter);           \
        if (status == EBB_OK)                                                 \
            *out = filter;                                                    \
        return status;                                                        \
    }                                                                         \
    static size_t prefix##_memory(const void *filter)                         \
    {                                                                         \
        return ebb_##prefix##_memory(filter);                                 \
    }                                                                         \
    static void prefix##_destroy(void *filter)                                \
    {                                                                         \
        ebb_##prefix##_destroy(filter);                                       \
    }                                                                         \
    static const ebb_redis_family NAME = {                                    \
        .name = #NAME,                                                        \
        .loadchunk_command = #NAME ".LOADCHUNK",                              \
        .type = &prefix##_type,                                               \
        .snapshot_size = prefix##_snapshot_size,                              \
        .save = prefix##_save,                                                \
        .save_to = prefix##_save_to,                                          \
        .load = prefix##_load,                                                \
        .memory = prefix##_memory,                                            \
        .destroy = prefix##_destroy,                                          \
    };

/* <FAMILY>.SCANDUMP and <FAMILY>.LOADCHUNK over the family table NAME. */
#define EBB_REDIS_SNAPSHOT_COMMANDS_(prefix, NAME)                            \
    static int prefix##_scandump(RedisModuleCtx *ctx,                         \
                                 RedisModuleString **argv, int argc)          \
    {                                                                         \
        return ebb_redis_scandump(&NAME, ctx, argv, argc);                    \
    }                                                                         \
    static int prefix##_loadchunk(RedisModuleCtx *ctx,                        \
                                  RedisModuleString **argv, int argc)         \
    {                                                                         \
        return ebb_redis_loadchunk(&NAME, ctx, argv, argc);                   \
    }

/* The command-table rows (ebb_redis_command) of <NAME>.SCANDUMP and
 * <NAME>.LOADCHUNK, the same for every family. */
#define EBB_REDIS_SNAPSHOT_COMMAND_ROWS(prefix, NAME)                         \
    {#NAME ".SCANDUMP", prefix##_scandump, "readonly deny-oom", 3,            \
     EBB_REDIS_KEY_READS, "Returns the filter's snapshot chunk by chunk"},    \
    {#NAME ".LOADCHUNK", prefix##_loadchunk, "write deny-oom", 4,             \
     EBB_REDIS_KEY_RESTORES, "Restores a filter from SCANDUMP's chunks"}

/* The data-type callbacks over the family table NAME. Ends without a
 * semicolon: the invocation supplies it. */
#define EBB_REDIS_SNAPSHOT_CALLBACKS_(prefix, NAME)                           \
    static void *prefix##_rdb_load(RedisModuleIO *io, int encver)             \
    {                                                                         \
        return ebb_redis_rdb_load(&NAME, io, encver);                         \
    }                                                                         \
    static void prefix##_rdb_save(RedisModuleIO *io, void *value)             \
    {                                                                         \
        ebb_redis_rdb_save(&NAME, io, value);                                 \
    }                                                                         \
    static void prefix##_aof_rewrite(RedisModuleIO *io,                       \
                                     RedisModuleString *key, void *value)     \
    {                                                                         \
        ebb_redis_aof_rewrite(&NAME, io, key, value);                         \
    }                                                                         \
    static size_t prefix##_mem_usage(const void *value)                       \
    {                                                                         \
        return ebb_redis_mem_usage(&NAME, value);                             \
    }                                                                         \
    static void prefix##_digest(RedisModuleDigest *md, void *value)           \
    {                                                                         \
        ebb_redis_digest(&NAME, md, value);                                   \
    }                                                                         \
    static void prefix##_free(void *value) { ebb_redis_free(&NAME, value); }  \
    static void *prefix##_copy(RedisModuleString *fromkey,                    \
                               RedisModuleString *tokey, const void *value)   \
    {                                                                         \
        (void)fromkey;                                                        \
        (void)tokey;                                                          \
        return ebb_redis_copy(&NAME, value);                                  \
    }                                                                         \
    static const RedisModuleTypeMethods prefix##_type_methods = {             \
        .version = REDISMODULE_TYPE_METHOD_VERSION,                           \
        .rdb_load = prefix##_rdb_load,                                        \
        .rdb_save = prefix##_rdb_save,                                        \
        .aof_rewrite = prefix##_aof_rewrite,                                  \
        .mem_usage = prefix##_mem_usage,                                      \
        .digest = prefix##_digest,                                            \
        .free = prefix##_free,                                                \
        .copy = prefix##_copy,                                                \
    }

/* See the top of this file. prefix: the library's (apbf for ebb_apbf_*);
 * NAME: the family's command prefix, also the name of its table. */
#define EBB_REDIS_SNAPSHOT_FAMILY(prefix, NAME)                               \
    EBB_REDIS_SNAPSHOT_ADAPTERS_(prefix, NAME)                                \
    EBB_REDIS_SNAPSHOT_COMMANDS_(prefix, NAME)                                \
    EBB_REDIS_SNAPSHOT_CALLBACKS_(prefix, NAME)

#endif /* EBB_REDIS_SNAPSHOT_TYPE_H */
