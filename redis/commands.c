/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * commands.c: registering the module's commands and its ACL category
 * (glue.h).
 */
#include "glue.h"

#include <limits.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
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

static int create_command(RedisModuleCtx *ctx,
                          const ebb_redis_command *command)
{
    if (RedisModule_CreateCommand(ctx, command->name, command->handler,
                                  command->flags, 1, 1, 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (acl_category_added) {
        RedisModuleCommand *handle =
            RedisModule_GetCommand(ctx, command->name);
        if (handle == NULL || RedisModule_SetCommandACLCategories(
                                  handle, ACL_CATEGORY) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

int ebb_redis_create_commands(RedisModuleCtx *ctx,
                              const ebb_redis_command *commands, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (create_command(ctx, &commands[i]) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
