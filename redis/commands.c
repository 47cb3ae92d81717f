/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * commands.c: registering the module's commands, their metadata (arity,
 * key spec, summary) and their ACL categories (glue.h).
 *
 * Metadata. RedisModule_CreateCommand gives a command only flags and the
 * key positions (1, 1, 1); Redis 7.0 then describes the key as "RW access
 * update" for every command, reads included, and checks no arity. So each
 * command also gets, through RedisModule_SetCommandInfo:
 *   - its real arity, which the server checks before calling us;
 *   - one key spec (argument 1, one key) whose flags say what the command
 *     does: RO + ACCESS for EXISTS, MEXISTS, INFO and SCANDUMP, RW + INSERT
 *     for RESERVE, RW + ACCESS + UPDATE for the adds, RW + UPDATE for
 *     LOADCHUNK (EBB_REDIS_KEY_* in glue.h). Clients that send reads to
 *     replicas go by these flags, and so do ACL read-only key permissions
 *     (%R~pattern), the one way to make read-only users of module commands
 *     on Redis 7.0. A command with more keys than argument 1
 *     (SPECTRAL.MERGE's sources, ebb_redis_create_command_more_keys) gets
 *     a second spec from argument 2, marked incomplete, and names its keys
 *     itself through the getkeys-api;
 *   - a summary and the module version that introduced it (COMMAND DOCS).
 *
 * ACL categories. Redis 7.0 puts module commands in no category, whatever
 * their flags. From 7.2 a module sets them with
 * RedisModule_SetCommandACLCategories, which replaces the whole set, so we
 * name them all: "read" or "write", "fast" or "slow", and "ebb" where 7.4
 * let us create it.
 */
#include "glue.h"

#include <string.h>

/* The module version that introduced the commands (COMMAND DOCS "since"). */
#define COMMANDS_SINCE "0.1.0"

/* ------------------------------------------------------------------------ */
/* ACL categories                                                           */
/* ------------------------------------------------------------------------ */

#define ACL_CATEGORY "ebb"

static bool acl_category_added;

void ebb_redis_add_acl_category(RedisModuleCtx *ctx)
{
    if (RedisModule_AddACLCategory == NULL ||
        RedisModule_SetCommandACLCategories == NULL ||
        RedisModule_GetCommand == NULL)
        return;
    acl_category_added =
        RedisModule_AddACLCategory(ctx, ACL_CATEGORY) == REDISMODULE_OK;
}

/* True when the space-separated flags contain word. */
static bool has_flag(const char *flags, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = flags; (p = strstr(p, word)) != NULL; p += len) {
        bool starts = p == flags || p[-1] == ' ';
        bool ends = p[len] == '\0' || p[len] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

/* The categories a command belongs to on servers that let modules say
 * (7.2 and later): what the core commands of the same flags get, plus the
 * module's own category when it exists. */
static void set_acl_categories(RedisModuleCtx *ctx,
                               RedisModuleCommand *handle,
                               const ebb_redis_command *command)
{
    char categories[32];
    strcpy(categories, has_flag(command->flags, "write") ? "write" : "read");
    strcat(categories, has_flag(command->flags, "fast") ? " fast" : " slow");
    if (acl_category_added)
        strcat(categories, " " ACL_CATEGORY);
    /* Not fatal: ACL rules by command name work whatever happens here. */
    if (RedisModule_SetCommandACLCategories(handle, categories) !=
        REDISMODULE_OK)
        RedisModule_Log(ctx, "warning",
                        "ebb: cannot put %s in the ACL categories %s",
                        command->name, categories);
}

/* ------------------------------------------------------------------------ */
/* Metadata                                                                 */
/* ------------------------------------------------------------------------ */

/* The element sizes of the arrays a RedisModuleCommandInfo points to (we
 * pass key specs only; no history, no argument descriptions). */
static const RedisModuleCommandInfoVersion COMMAND_INFO_VERSION = {
    REDISMODULE_COMMAND_INFO_LAYOUT,
    sizeof(RedisModuleCommandHistoryEntry),
    sizeof(RedisModuleCommandKeySpec),
    0,
};

/* Arity, key spec and summary. The server copies everything it is given,
 * so the structs live on the stack. */
static int set_command_info(RedisModuleCommand *handle,
                            const ebb_redis_command *command,
                            uint64_t more_key_flags)
{
    /* One key at argument 1 (and, for more_key_flags, the keys from
     * argument 2 on), then the terminating zeroed element. */
    RedisModuleCommandKeySpec key_specs[3];
    memset(key_specs, 0, sizeof key_specs);
    key_specs[0].flags = command->key_flags;
    key_specs[0].begin_search_type = REDISMODULE_KSPEC_BS_INDEX;
    key_specs[0].bs.index.pos = 1;
    key_specs[0].find_keys_type = REDISMODULE_KSPEC_FK_RANGE;
    key_specs[0].fk.range.lastkey = 0;
    key_specs[0].fk.range.keystep = 1;
    key_specs[0].fk.range.limit = 0;
    if (more_key_flags != 0) {
        key_specs[1].flags = more_key_flags | REDISMODULE_CMD_KEY_INCOMPLETE;
        key_specs[1].begin_search_type = REDISMODULE_KSPEC_BS_INDEX;
        key_specs[1].bs.index.pos = 2;
        key_specs[1].find_keys_type = REDISMODULE_KSPEC_FK_RANGE;
        key_specs[1].fk.range.lastkey = -1;
        key_specs[1].fk.range.keystep = 1;
        key_specs[1].fk.range.limit = 0;
    }

    RedisModuleCommandInfo info;
    memset(&info, 0, sizeof info);
    info.version = &COMMAND_INFO_VERSION;
    info.summary = command->summary;
    info.since = COMMANDS_SINCE;
    info.arity = command->arity;
    info.key_specs = key_specs;
    return RedisModule_SetCommandInfo(handle, &info);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static int create_command(RedisModuleCtx *ctx,
                          const ebb_redis_command *command,
                          uint64_t more_key_flags)
{
    /* Key positions 1, 1, 1 for servers without key specs; with them the
     * server recomputes the same triple from the key spec. */
    if (RedisModule_CreateCommand(ctx, command->name, command->handler,
                                  command->flags, 1, 1, 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (RedisModule_GetCommand == NULL)
        return REDISMODULE_OK;
    RedisModuleCommand *handle = RedisModule_GetCommand(ctx, command->name);
    if (handle == NULL)
        return REDISMODULE_ERR;
    if (RedisModule_SetCommandInfo != NULL &&
        set_command_info(handle, command, more_key_flags) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning",
                        "ebb: the server refused the metadata of %s",
                        command->name);
        return REDISMODULE_ERR;
    }
    if (RedisModule_SetCommandACLCategories != NULL)
        set_acl_categories(ctx, handle, command);
    return REDISMODULE_OK;
}

int ebb_redis_create_commands(RedisModuleCtx *ctx,
                              const ebb_redis_command *commands, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (create_command(ctx, &commands[i], 0) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    return REDISMODULE_OK;
}

int ebb_redis_create_command_more_keys(RedisModuleCtx *ctx,
                                       const ebb_redis_command *command,
                                       uint64_t more_key_flags)
{
    return create_command(ctx, command, more_key_flags);
}
