/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * api.h: the part of the Redis module API that ebb.so uses, declared by us.
 *
 * Written from the documented interface (the "Modules API reference" of
 * redis.io): the signatures of the functions, the layout of the type-method
 * table and the numeric values of the few constants we pass. Nothing else of
 * the server's header is needed, so none is copied. Every function is a
 * pointer filled at load time by ebb_redis_api_load(), which asks the server
 * for each one by name through RedisModule_GetApi, as the documented
 * initialisation does.
 *
 * The module is built for the API of Redis 7.0 (Debian 12). Functions added
 * later are "optional": fetched if the server has them, NULL otherwise.
 */
#ifndef EBB_REDIS_API_H
#define EBB_REDIS_API_H

#include <stddef.h>
#include <stdint.h>

/* Opaque handles owned by the server. */
typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;
typedef struct RedisModuleKeyOptCtx RedisModuleKeyOptCtx;
typedef struct RedisModuleCommand RedisModuleCommand;

/* Status of API calls and of command handlers. */
#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1

/* The API version a module registers with (the only one there is). */
#define REDISMODULE_APIVER_1 1

/* Modes of RedisModule_OpenKey. */
#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

/* Results of RedisModule_KeyType that we look at. */
#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_MODULE 6

/* RedisModule_ReplyWithArray: the length follows with ReplySetArrayLength. */
#define REDISMODULE_POSTPONED_LEN (-1L)

/* RedisModule_SetModuleOptions: our rdb_load checks RedisModule_IsIOError
 * itself instead of letting the server abort on a short read. */
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)

/* RedisModule_GetContextFlags: the command came from the primary over the
 * replication link; the server is loading (an AOF replay). */
#define REDISMODULE_CTX_FLAGS_REPLICATED (1 << 12)
/* The server is a replica (its writes come from its primary). */
#define REDISMODULE_CTX_FLAGS_SLAVE (1 << 3)
#define REDISMODULE_CTX_FLAGS_LOADING (1 << 13)

/* RedisModule_NotifyKeyspaceEvent: the class of events about module keys
 * ("d" in notify-keyspace-events). */
#define REDISMODULE_NOTIFY_MODULE (1 << 13)

/* RedisModule_RegisterNumericConfig: a config settable at any time. */
#define REDISMODULE_CONFIG_DEFAULT 0

/* The layout version of RedisModuleTypeMethods we fill (Redis 7.0's). */
#define REDISMODULE_TYPE_METHOD_VERSION 4

/* The documented reply for a key of another type. */
#define REDISMODULE_ERRORMSG_WRONGTYPE                                         \
    "WRONGTYPE Operation against a key holding the wrong kind of value"

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx,
                                  RedisModuleString **argv, int argc);

/* Data type callbacks. */
typedef void *(*RedisModuleTypeLoadFunc)(RedisModuleIO *rdb, int encver);
typedef void (*RedisModuleTypeSaveFunc)(RedisModuleIO *rdb, void *value);
typedef void (*RedisModuleTypeRewriteFunc)(RedisModuleIO *aof,
                                           RedisModuleString *key,
                                           void *value);
typedef size_t (*RedisModuleTypeMemUsageFunc)(const void *value);
typedef void (*RedisModuleTypeDigestFunc)(RedisModuleDigest *digest,
                                          void *value);
typedef void (*RedisModuleTypeFreeFunc)(void *value);
typedef int (*RedisModuleTypeAuxLoadFunc)(RedisModuleIO *rdb, int encver,
                                          int when);
typedef void (*RedisModuleTypeAuxSaveFunc)(RedisModuleIO *rdb, int when);
typedef size_t (*RedisModuleTypeFreeEffortFunc)(RedisModuleString *key,
                                                const void *value);
typedef void (*RedisModuleTypeUnlinkFunc)(RedisModuleString *key,
                                          const void *value);
typedef void *(*RedisModuleTypeCopyFunc)(RedisModuleString *fromkey,
                                         RedisModuleString *tokey,
                                         const void *value);
typedef int (*RedisModuleTypeDefragFunc)(RedisModuleDefragCtx *ctx,
                                         RedisModuleString *key,
                                         void **value);
typedef size_t (*RedisModuleTypeMemUsageFunc2)(RedisModuleKeyOptCtx *ctx,
                                               const void *value,
                                               size_t sample_size);
typedef size_t (*RedisModuleTypeFreeEffortFunc2)(RedisModuleKeyOptCtx *ctx,
                                                 const void *value);
typedef void (*RedisModuleTypeUnlinkFunc2)(RedisModuleKeyOptCtx *ctx,
                                           const void *value);
typedef void *(*RedisModuleTypeCopyFunc2)(RedisModuleKeyOptCtx *ctx,
                                          const void *value);

/* The method table of RedisModule_CreateDataType, fields in the documented
 * order up to version 4. The server reads only the fields that the version
 * it is given covers. */
typedef struct RedisModuleTypeMethods {
    uint64_t version;
    RedisModuleTypeLoadFunc rdb_load;
    RedisModuleTypeSaveFunc rdb_save;
    RedisModuleTypeRewriteFunc aof_rewrite;
    RedisModuleTypeMemUsageFunc mem_usage;
    RedisModuleTypeDigestFunc digest;
    RedisModuleTypeFreeFunc free;
    /* version 2 */
    RedisModuleTypeAuxLoadFunc aux_load;
    RedisModuleTypeAuxSaveFunc aux_save;
    int aux_save_triggers;
    /* version 3 */
    RedisModuleTypeFreeEffortFunc free_effort;
    RedisModuleTypeUnlinkFunc unlink;
    RedisModuleTypeCopyFunc copy;
    RedisModuleTypeDefragFunc defrag;
    /* version 4 */
    RedisModuleTypeMemUsageFunc2 mem_usage2;
    RedisModuleTypeFreeEffortFunc2 free_effort2;
    RedisModuleTypeUnlinkFunc2 unlink2;
    RedisModuleTypeCopyFunc2 copy2;
} RedisModuleTypeMethods;

/* Command metadata of RedisModule_SetCommandInfo (Redis 7.0), written from
 * its documentation in the Modules API reference. The server walks the
 * arrays we pass with the element sizes the version record gives, so the
 * sizes below are our own structs' (sizeof), and the layouts follow the
 * documented field order exactly. tests/redis/acl.sh reads the result back
 * (COMMAND INFO, COMMAND DOCS, COMMAND GETKEYSANDFLAGS). */

/* How a key spec finds its first key (begin_search_type). 0 ends the array
 * of key specs. */
#define REDISMODULE_KSPEC_BS_INVALID 0
#define REDISMODULE_KSPEC_BS_UNKNOWN 1
#define REDISMODULE_KSPEC_BS_INDEX 2
#define REDISMODULE_KSPEC_BS_KEYWORD 3

/* How a key spec finds the keys after the first (find_keys_type); 0 (left
 * out) means exactly one key. */
#define REDISMODULE_KSPEC_FK_OMITTED 0
#define REDISMODULE_KSPEC_FK_UNKNOWN 1
#define REDISMODULE_KSPEC_FK_RANGE 2
#define REDISMODULE_KSPEC_FK_KEYNUM 3

/* Key-spec flags: exactly one of RO, RW, OW, RM (what the command does to
 * the value), then at most one of INSERT, DELETE, UPDATE (what it does to
 * the user data), possibly with ACCESS (it returns or uses that data). */
#define REDISMODULE_CMD_KEY_RO (1ULL << 0)
#define REDISMODULE_CMD_KEY_RW (1ULL << 1)
#define REDISMODULE_CMD_KEY_OW (1ULL << 2)
#define REDISMODULE_CMD_KEY_RM (1ULL << 3)
#define REDISMODULE_CMD_KEY_ACCESS (1ULL << 4)
#define REDISMODULE_CMD_KEY_UPDATE (1ULL << 5)
#define REDISMODULE_CMD_KEY_INSERT (1ULL << 6)
#define REDISMODULE_CMD_KEY_DELETE (1ULL << 7)
/* The spec may not find every key: the server asks the command's
 * getkeys-api instead. */
#define REDISMODULE_CMD_KEY_INCOMPLETE (1ULL << 9)

/* The version record: the layout version (1) and the size of one element
 * of each array the info points to. */
typedef struct RedisModuleCommandInfoVersion {
    int version;
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} RedisModuleCommandInfoVersion;

#define REDISMODULE_COMMAND_INFO_LAYOUT 1

/* One entry of a command's history; a zeroed entry ends the array. */
typedef struct RedisModuleCommandHistoryEntry {
    const char *since;
    const char *changes;
} RedisModuleCommandHistoryEntry;

/* One key spec; an element with begin_search_type 0 ends the array. */
typedef struct RedisModuleCommandKeySpec {
    const char *notes;
    uint64_t flags; /* REDISMODULE_CMD_KEY_* */
    int begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    int find_keys_type;
    union {
        struct {
            int lastkey;
            int keystep;
            int limit;
        } range;
        struct {
            int keynumidx;
            int firstkey;
            int keystep;
        } keynum;
    } fk;
} RedisModuleCommandKeySpec;

/* The argument descriptions of COMMAND DOCS: we give none (args NULL), so
 * the server never reads an element and the type stays opaque. */
typedef struct RedisModuleCommandArg RedisModuleCommandArg;

/* The command's information; every field but version is optional. */
typedef struct RedisModuleCommandInfo {
    const RedisModuleCommandInfoVersion *version;
    const char *summary;
    const char *complexity;
    const char *since;
    RedisModuleCommandHistoryEntry *history;
    const char *tips;
    int arity; /* N: exactly N words, command included; -N: at least N */
    RedisModuleCommandKeySpec *key_specs;
    RedisModuleCommandArg *args;
} RedisModuleCommandInfo;

#if defined(__GNUC__) || defined(__clang__)
#define EBB_REDIS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define EBB_REDIS_EXPORT __attribute__((visibility("default")))
#else
#define EBB_REDIS_PRINTF(fmt, args)
#define EBB_REDIS_EXPORT
#endif

/* ------------------------------------------------------------------------ */
/* Required functions (all exist in Redis 7.0)                              */
/* ------------------------------------------------------------------------ */

/* Initialisation. */
extern void (*RedisModule_SetModuleAttribs)(RedisModuleCtx *ctx,
                                            const char *name, int ver,
                                            int apiver);
extern int (*RedisModule_IsModuleNameBusy)(const char *name);
extern int (*RedisModule_CreateCommand)(RedisModuleCtx *ctx,
                                        const char *name,
                                        RedisModuleCmdFunc cmdfunc,
                                        const char *strflags, int firstkey,
                                        int lastkey, int keystep);
extern RedisModuleType *(*RedisModule_CreateDataType)(
    RedisModuleCtx *ctx, const char *name, int encver,
    RedisModuleTypeMethods *typemethods);
extern void (*RedisModule_SetModuleOptions)(RedisModuleCtx *ctx,
                                            int options);

/* Heap: counted by the server, subject to maxmemory. TryAlloc returns NULL
 * instead of aborting the server. */
extern void *(*RedisModule_Alloc)(size_t bytes);
extern void *(*RedisModule_TryAlloc)(size_t bytes);
extern void (*RedisModule_Free)(void *ptr);

/* Keys. */
extern RedisModuleKey *(*RedisModule_OpenKey)(RedisModuleCtx *ctx,
                                              RedisModuleString *keyname,
                                              int mode);
extern void (*RedisModule_CloseKey)(RedisModuleKey *kp);
extern int (*RedisModule_KeyType)(RedisModuleKey *kp);
extern int (*RedisModule_DeleteKey)(RedisModuleKey *key);
extern int (*RedisModule_ModuleTypeSetValue)(RedisModuleKey *key,
                                             RedisModuleType *mt,
                                             void *value);
extern RedisModuleType *(*RedisModule_ModuleTypeGetType)(
    RedisModuleKey *key);
extern void *(*RedisModule_ModuleTypeGetValue)(RedisModuleKey *key);

/* Arguments. */
extern const char *(*RedisModule_StringPtrLen)(const RedisModuleString *str,
                                               size_t *len);
extern int (*RedisModule_StringToLongLong)(const RedisModuleString *str,
                                           long long *ll);
extern int (*RedisModule_StringToDouble)(const RedisModuleString *str,
                                         double *d);

/* Replies. */
extern int (*RedisModule_WrongArity)(RedisModuleCtx *ctx);
extern int (*RedisModule_ReplyWithError)(RedisModuleCtx *ctx,
                                         const char *err);
extern int (*RedisModule_ReplyWithSimpleString)(RedisModuleCtx *ctx,
                                                const char *msg);
extern int (*RedisModule_ReplyWithLongLong)(RedisModuleCtx *ctx,
                                            long long ll);
extern int (*RedisModule_ReplyWithDouble)(RedisModuleCtx *ctx, double d);
extern int (*RedisModule_ReplyWithStringBuffer)(RedisModuleCtx *ctx,
                                                const char *buf,
                                                size_t len);
extern int (*RedisModule_ReplyWithArray)(RedisModuleCtx *ctx, long len);
extern void (*RedisModule_ReplySetArrayLength)(RedisModuleCtx *ctx,
                                               long len);

/* Replication: fmt letters c (C string), s (RedisModuleString *),
 * b (buffer, length), l (long long), v (RedisModuleString **, count). */
extern int (*RedisModule_Replicate)(RedisModuleCtx *ctx,
                                    const char *cmdname, const char *fmt,
                                    ...);
extern int (*RedisModule_ReplicateVerbatim)(RedisModuleCtx *ctx);

/* Key positions of a command registered with "getkeys-api": its handler,
 * called with IsKeysPositionRequest true, names them (COMMAND GETKEYS,
 * cluster routing and ACL key checks when its key specs are incomplete). */
extern int (*RedisModule_IsKeysPositionRequest)(RedisModuleCtx *ctx);
extern void (*RedisModule_KeyAtPos)(RedisModuleCtx *ctx, int pos);

/* REDISMODULE_CTX_FLAGS_* of the calling context. */
extern int (*RedisModule_GetContextFlags)(RedisModuleCtx *ctx);
/* A context for the server calls of a data-type callback that has only
 * its IO (rdb_load of RESTORE); owned by the IO. */
extern RedisModuleCtx *(*RedisModule_GetContextFromIO)(RedisModuleIO *io);

/* The server's clock: Unix time in milliseconds. */
extern long long (*RedisModule_Milliseconds)(void);

/* Keyspace notifications: type is a REDISMODULE_NOTIFY_* class, event the
 * event's name (published on __keyevent@<db>__:<event> and as the message
 * on __keyspace@<db>__:<key>). */
extern int (*RedisModule_NotifyKeyspaceEvent)(RedisModuleCtx *ctx, int type,
                                              const char *event,
                                              RedisModuleString *key);

/* RDB and AOF. */
extern void (*RedisModule_SaveUnsigned)(RedisModuleIO *io, uint64_t value);
extern uint64_t (*RedisModule_LoadUnsigned)(RedisModuleIO *io);
extern void (*RedisModule_SaveStringBuffer)(RedisModuleIO *io,
                                            const char *str, size_t len);
extern char *(*RedisModule_LoadStringBuffer)(RedisModuleIO *io,
                                             size_t *lenptr);
extern int (*RedisModule_IsIOError)(RedisModuleIO *io);
extern void (*RedisModule_EmitAOF)(RedisModuleIO *io, const char *cmdname,
                                   const char *fmt, ...);

/* DEBUG DIGEST and DEBUG DIGEST-VALUE (the type's digest method): add the
 * elements of an ordered sequence, then end it. */
extern void (*RedisModule_DigestAddStringBuffer)(RedisModuleDigest *md,
                                                 const char *ele, size_t len);
extern void (*RedisModule_DigestEndSequence)(RedisModuleDigest *md);

/* INFO fields (room.c): a snapshot of one INFO section, its fields read
 * by name (out_err set to nonzero when absent), freed after use. */
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;
extern RedisModuleServerInfoData *(*RedisModule_GetServerInfo)(
    RedisModuleCtx *ctx, const char *section);
extern void (*RedisModule_FreeServerInfo)(RedisModuleCtx *ctx,
                                          RedisModuleServerInfoData *data);
extern unsigned long long (*RedisModule_ServerInfoGetFieldUnsigned)(
    RedisModuleServerInfoData *data, const char *field, int *out_err);
extern const char *(*RedisModule_ServerInfoGetFieldC)(
    RedisModuleServerInfoData *data, const char *field);

/* Heap, continued: calloc on the server's heap (aborts the server when out
 * of memory, like Alloc) and the usable size of an allocation (the
 * allocator's size class, what used_memory counts). */
extern void *(*RedisModule_Calloc)(size_t nmemb, size_t size);
extern size_t (*RedisModule_MallocSize)(void *ptr);

/* Logging; level is "debug", "verbose", "notice" or "warning". */
extern void (*RedisModule_Log)(RedisModuleCtx *ctx, const char *level,
                               const char *fmt, ...) EBB_REDIS_PRINTF(3, 4);
extern void (*RedisModule_LogIOError)(RedisModuleIO *io,
                                      const char *levelstr,
                                      const char *fmt, ...)
    EBB_REDIS_PRINTF(3, 4);

/* ------------------------------------------------------------------------ */
/* Optional functions (newer servers); NULL when the server lacks them      */
/* ------------------------------------------------------------------------ */

/* Redis 7.4: calloc that returns NULL instead of aborting. */
extern void *(*RedisModule_TryCalloc)(size_t nmemb, size_t size);
/* Redis 7.0: KeyAtPos with the key's REDISMODULE_CMD_KEY_* flags. */
extern void (*RedisModule_KeyAtPosWithFlags)(RedisModuleCtx *ctx, int pos,
                                             int flags);
/* Redis 7.0: the handle of a registered command (for ACL categories). */
extern RedisModuleCommand *(*RedisModule_GetCommand)(RedisModuleCtx *ctx,
                                                     const char *name);
/* Redis 7.0: a command's arity, key specs and documentation (only during
 * RedisModule_OnLoad, once per command). */
extern int (*RedisModule_SetCommandInfo)(RedisModuleCommand *command,
                                         const RedisModuleCommandInfo *info);
/* Redis 7.2: ACL categories of a module command. */
extern int (*RedisModule_SetCommandACLCategories)(RedisModuleCommand *command,
                                                  const char *ctgrsflags);
/* Redis 7.4: a module-defined ACL category. */
extern int (*RedisModule_AddACLCategory)(RedisModuleCtx *ctx,
                                         const char *name);

/* Redis 7.0: module configs, "<module>.<name>" in CONFIG GET/SET and as
 * --<module>.<name> at startup. get returns the value; set stores a value
 * already checked against [min, max] (REDISMODULE_OK, or REDISMODULE_ERR
 * with *err set); apply (may be NULL) runs after a CONFIG SET. LoadConfigs
 * applies the values given at startup; call it once, after registering. */
typedef long long (*RedisModuleConfigGetNumericFunc)(const char *name,
                                                     void *privdata);
typedef int (*RedisModuleConfigSetNumericFunc)(const char *name,
                                               long long value,
                                               void *privdata,
                                               RedisModuleString **err);
typedef int (*RedisModuleConfigApplyFunc)(RedisModuleCtx *ctx,
                                          void *privdata,
                                          RedisModuleString **err);
extern int (*RedisModule_RegisterNumericConfig)(
    RedisModuleCtx *ctx, const char *name, long long default_value,
    unsigned int flags, long long min, long long max,
    RedisModuleConfigGetNumericFunc getfn,
    RedisModuleConfigSetNumericFunc setfn, RedisModuleConfigApplyFunc applyfn,
    void *privdata);
typedef int (*RedisModuleConfigGetBoolFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetBoolFunc)(const char *name, int value,
                                            void *privdata,
                                            RedisModuleString **err);
extern int (*RedisModule_RegisterBoolConfig)(
    RedisModuleCtx *ctx, const char *name, int default_value,
    unsigned int flags, RedisModuleConfigGetBoolFunc getfn,
    RedisModuleConfigSetBoolFunc setfn, RedisModuleConfigApplyFunc applyfn,
    void *privdata);
extern int (*RedisModule_LoadConfigs)(RedisModuleCtx *ctx);

/* Fetches every function above from the server through the GetApi pointer
 * the server places at the start of the load context. Returns
 * REDISMODULE_ERR when a required function is missing. */
int ebb_redis_api_load(RedisModuleCtx *ctx);

/* The module's entry point, called by the server on MODULE LOAD. */
EBB_REDIS_EXPORT int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                        RedisModuleString **argv, int argc);

#endif /* EBB_REDIS_API_H */
