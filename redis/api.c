/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * api.c: fills the function pointers of api.h from the server.
 *
 * The documented initialisation of a module reads the server's GetApi
 * function from the first pointer-sized field of the load context, then
 * asks it for every API function by name ("RedisModule_Alloc", ...). We do
 * the same from a table, and refuse to load when a required one is missing
 * rather than dereference NULL later.
 */
#include "api.h"

#include <string.h>

void (*RedisModule_SetModuleAttribs)(RedisModuleCtx *, const char *, int,
                                     int);
int (*RedisModule_IsModuleNameBusy)(const char *);
int (*RedisModule_CreateCommand)(RedisModuleCtx *, const char *,
                                 RedisModuleCmdFunc, const char *, int, int,
                                 int);
RedisModuleType *(*RedisModule_CreateDataType)(RedisModuleCtx *,
                                               const char *, int,
                                               RedisModuleTypeMethods *);
void (*RedisModule_SetModuleOptions)(RedisModuleCtx *, int);
void *(*RedisModule_Alloc)(size_t);
void *(*RedisModule_TryAlloc)(size_t);
void (*RedisModule_Free)(void *);
RedisModuleKey *(*RedisModule_OpenKey)(RedisModuleCtx *, RedisModuleString *,
                                       int);
void (*RedisModule_CloseKey)(RedisModuleKey *);
int (*RedisModule_KeyType)(RedisModuleKey *);
int (*RedisModule_DeleteKey)(RedisModuleKey *);
int (*RedisModule_ModuleTypeSetValue)(RedisModuleKey *, RedisModuleType *,
                                      void *);
RedisModuleType *(*RedisModule_ModuleTypeGetType)(RedisModuleKey *);
void *(*RedisModule_ModuleTypeGetValue)(RedisModuleKey *);
const char *(*RedisModule_StringPtrLen)(const RedisModuleString *, size_t *);
int (*RedisModule_StringToLongLong)(const RedisModuleString *, long long *);
int (*RedisModule_StringToDouble)(const RedisModuleString *, double *);
int (*RedisModule_WrongArity)(RedisModuleCtx *);
int (*RedisModule_ReplyWithError)(RedisModuleCtx *, const char *);
int (*RedisModule_ReplyWithSimpleString)(RedisModuleCtx *, const char *);
int (*RedisModule_ReplyWithLongLong)(RedisModuleCtx *, long long);
int (*RedisModule_ReplyWithDouble)(RedisModuleCtx *, double);
int (*RedisModule_ReplyWithStringBuffer)(RedisModuleCtx *, const char *,
                                         size_t);
int (*RedisModule_ReplyWithArray)(RedisModuleCtx *, long);
void (*RedisModule_ReplySetArrayLength)(RedisModuleCtx *, long);
int (*RedisModule_Replicate)(RedisModuleCtx *, const char *, const char *,
                             ...);
int (*RedisModule_ReplicateVerbatim)(RedisModuleCtx *);
int (*RedisModule_IsKeysPositionRequest)(RedisModuleCtx *);
void (*RedisModule_KeyAtPos)(RedisModuleCtx *, int);
void (*RedisModule_KeyAtPosWithFlags)(RedisModuleCtx *, int, int);
int (*RedisModule_GetContextFlags)(RedisModuleCtx *);
RedisModuleCtx *(*RedisModule_GetContextFromIO)(RedisModuleIO *);
long long (*RedisModule_Milliseconds)(void);
int (*RedisModule_NotifyKeyspaceEvent)(RedisModuleCtx *, int, const char *,
                                       RedisModuleString *);
void (*RedisModule_SaveUnsigned)(RedisModuleIO *, uint64_t);
uint64_t (*RedisModule_LoadUnsigned)(RedisModuleIO *);
void (*RedisModule_SaveStringBuffer)(RedisModuleIO *, const char *, size_t);
char *(*RedisModule_LoadStringBuffer)(RedisModuleIO *, size_t *);
int (*RedisModule_IsIOError)(RedisModuleIO *);
void (*RedisModule_EmitAOF)(RedisModuleIO *, const char *, const char *,
                            ...);
void (*RedisModule_DigestAddStringBuffer)(RedisModuleDigest *, const char *,
                                          size_t);
void (*RedisModule_DigestEndSequence)(RedisModuleDigest *);
RedisModuleServerInfoData *(*RedisModule_GetServerInfo)(RedisModuleCtx *,
                                                        const char *);
void (*RedisModule_FreeServerInfo)(RedisModuleCtx *,
                                   RedisModuleServerInfoData *);
unsigned long long (*RedisModule_ServerInfoGetFieldUnsigned)(
    RedisModuleServerInfoData *, const char *, int *);
const char *(*RedisModule_ServerInfoGetFieldC)(RedisModuleServerInfoData *,
                                               const char *);
void *(*RedisModule_Calloc)(size_t, size_t);
size_t (*RedisModule_MallocSize)(void *);
void (*RedisModule_Log)(RedisModuleCtx *, const char *, const char *, ...);
void (*RedisModule_LogIOError)(RedisModuleIO *, const char *, const char *,
                               ...);

void *(*RedisModule_TryCalloc)(size_t, size_t);
RedisModuleCommand *(*RedisModule_GetCommand)(RedisModuleCtx *,
                                              const char *);
int (*RedisModule_SetCommandInfo)(RedisModuleCommand *,
                                  const RedisModuleCommandInfo *);
int (*RedisModule_SetCommandACLCategories)(RedisModuleCommand *,
                                           const char *);
int (*RedisModule_AddACLCategory)(RedisModuleCtx *, const char *);
int (*RedisModule_RegisterNumericConfig)(RedisModuleCtx *, const char *,
                                         long long, unsigned int, long long,
                                         long long,
                                         RedisModuleConfigGetNumericFunc,
                                         RedisModuleConfigSetNumericFunc,
                                         RedisModuleConfigApplyFunc, void *);
int (*RedisModule_RegisterBoolConfig)(RedisModuleCtx *, const char *, int,
                                      unsigned int,
                                      RedisModuleConfigGetBoolFunc,
                                      RedisModuleConfigSetBoolFunc,
                                      RedisModuleConfigApplyFunc, void *);
int (*RedisModule_LoadConfigs)(RedisModuleCtx *);

typedef int (*get_api_function)(const char *name, void *funcptr);

/* One API function: its name on the server and where its pointer goes
 * (the address of one of the pointers above, passed to GetApi as the
 * documented void * out-parameter). */
typedef struct api_entry {
    const char *name;
    void *slot;
} api_entry;

#define API_ENTRY(function) {"RedisModule_" #function, &RedisModule_##function}

static const api_entry REQUIRED[] = {
    API_ENTRY(SetModuleAttribs),
    API_ENTRY(IsModuleNameBusy),
    API_ENTRY(CreateCommand),
    API_ENTRY(CreateDataType),
    API_ENTRY(SetModuleOptions),
    API_ENTRY(Alloc),
    API_ENTRY(TryAlloc),
    API_ENTRY(Free),
    API_ENTRY(OpenKey),
    API_ENTRY(CloseKey),
    API_ENTRY(KeyType),
    API_ENTRY(DeleteKey),
    API_ENTRY(ModuleTypeSetValue),
    API_ENTRY(ModuleTypeGetType),
    API_ENTRY(ModuleTypeGetValue),
    API_ENTRY(StringPtrLen),
    API_ENTRY(StringToLongLong),
    API_ENTRY(StringToDouble),
    API_ENTRY(WrongArity),
    API_ENTRY(ReplyWithError),
    API_ENTRY(ReplyWithSimpleString),
    API_ENTRY(ReplyWithLongLong),
    API_ENTRY(ReplyWithDouble),
    API_ENTRY(ReplyWithStringBuffer),
    API_ENTRY(ReplyWithArray),
    API_ENTRY(ReplySetArrayLength),
    API_ENTRY(Replicate),
    API_ENTRY(ReplicateVerbatim),
    API_ENTRY(IsKeysPositionRequest),
    API_ENTRY(KeyAtPos),
    API_ENTRY(GetContextFlags),
    API_ENTRY(GetContextFromIO),
    API_ENTRY(Milliseconds),
    API_ENTRY(NotifyKeyspaceEvent),
    API_ENTRY(SaveUnsigned),
    API_ENTRY(LoadUnsigned),
    API_ENTRY(SaveStringBuffer),
    API_ENTRY(LoadStringBuffer),
    API_ENTRY(IsIOError),
    API_ENTRY(EmitAOF),
    API_ENTRY(DigestAddStringBuffer),
    API_ENTRY(DigestEndSequence),
    API_ENTRY(GetServerInfo),
    API_ENTRY(FreeServerInfo),
    API_ENTRY(ServerInfoGetFieldUnsigned),
    API_ENTRY(ServerInfoGetFieldC),
    API_ENTRY(Calloc),
    API_ENTRY(MallocSize),
    API_ENTRY(Log),
    API_ENTRY(LogIOError),
};

static const api_entry OPTIONAL[] = {
    API_ENTRY(TryCalloc),
    API_ENTRY(KeyAtPosWithFlags),
    API_ENTRY(GetCommand),
    API_ENTRY(SetCommandInfo),
    API_ENTRY(SetCommandACLCategories),
    API_ENTRY(AddACLCategory),
    API_ENTRY(RegisterNumericConfig),
    API_ENTRY(RegisterBoolConfig),
    API_ENTRY(LoadConfigs),
};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

int ebb_redis_api_load(RedisModuleCtx *ctx)
{
    /* The context's first field is the GetApi function pointer. Copying its
     * bytes (rather than casting a data pointer to a function pointer, which
     * ISO C leaves undefined) reads it portably. */
    get_api_function get_api;
    memcpy(&get_api, (const void *)ctx, sizeof get_api);
    if (get_api == NULL)
        return REDISMODULE_ERR;

    for (size_t i = 0; i < COUNT(REQUIRED); i++)
        if (get_api(REQUIRED[i].name, REQUIRED[i].slot) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    /* GetApi writes nothing for a function the server lacks, so its pointer
     * keeps the NULL of static initialisation. */
    for (size_t i = 0; i < COUNT(OPTIONAL); i++)
        (void)get_api(OPTIONAL[i].name, OPTIONAL[i].slot);
    return REDISMODULE_OK;
}
