/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * args.c: argument parsing and replies with the module's wording, shared
 * by every data type of ebb.so (glue.h).
 */
#include "glue.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Arguments and replies                                                    */
/* ------------------------------------------------------------------------ */

bool ebb_redis_arg_is(const RedisModuleString *arg, const char *word)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    size_t word_len = strlen(word);
    if (len != word_len)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char a = (unsigned char)text[i];
        unsigned char b = (unsigned char)word[i];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 'a' + 'A');
        if (b >= 'a' && b <= 'z')
            b = (unsigned char)(b - 'a' + 'A');
        if (a != b)
            return false;
    }
    return true;
}

int ebb_redis_reply_errorf(RedisModuleCtx *ctx, const char *format, ...)
{
    char message[256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return RedisModule_ReplyWithError(ctx, message);
}

bool ebb_redis_parse_integer(RedisModuleCtx *ctx, const RedisModuleString *arg,
                             const char *what, long long min, long long max,
                             long long *out)
{
    long long value;
    if (RedisModule_StringToLongLong(arg, &value) != REDISMODULE_OK ||
        value < min || value > max) {
        ebb_redis_reply_errorf(ctx,
                               "ERR %s must be an integer from %lld to %lld",
                           what, min, max);
        return false;
    }
    *out = value;
    return true;
}

bool ebb_redis_parse_rate(RedisModuleCtx *ctx, const RedisModuleString *arg,
                          const char *what, double *out)
{
    double value;
    if (RedisModule_StringToDouble(arg, &value) != REDISMODULE_OK ||
        !(value > 0.0 && value < 1.0)) {
        ebb_redis_reply_errorf(ctx,
                           "ERR %s must be a number between 0 and 1 "
                           "(both excluded)",
                           what);
        return false;
    }
    *out = value;
    return true;
}

bool ebb_redis_parse_positive(RedisModuleCtx *ctx,
                              const RedisModuleString *arg, const char *what,
                              bool zero_ok, double *out)
{
    double value;
    bool ok = RedisModule_StringToDouble(arg, &value) == REDISMODULE_OK &&
              isfinite(value) && (zero_ok ? value >= 0.0 : value > 0.0);
    if (!ok) {
        ebb_redis_reply_errorf(ctx, "ERR %s must be a number %s 0", what,
                           zero_ok ? ">=" : ">");
        return false;
    }
    *out = value;
    return true;
}

int ebb_redis_reply_status(RedisModuleCtx *ctx, const char *family,
                           ebb_status status)
{
    switch (status) {
    case EBB_ENOMEM:
        return ebb_redis_reply_errorf(ctx, "ERR %s: out of memory", family);
    case EBB_EOVERFLOW:
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: the filter would be too large to "
                                  "allocate (lower the window or raise the "
                                  "error rate)",
                                  family);
    case EBB_ELIMIT:
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: the filter is at its MAXMEMORY "
                                  "limit: item not added",
                                  family);
    case EBB_EINVAL:
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: no filter meets these parameters "
                                  "(%s)",
                                  family, ebb_strerror(status));
    default:
        return ebb_redis_reply_errorf(ctx, "ERR %s: %s", family,
                                  ebb_strerror(status));
    }
}

int ebb_redis_reply_unknown_option(RedisModuleCtx *ctx,
                                   const RedisModuleString *arg,
                                   const char *command)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    /* Quote at most 64 bytes and keep the reply on one line. */
    char quoted[65];
    size_t n = len < 64 ? len : 64;
    for (size_t i = 0; i < n; i++)
        quoted[i] = (text[i] == '\r' || text[i] == '\n') ? ' ' : text[i];
    quoted[n] = '\0';
    return ebb_redis_reply_errorf(ctx, "ERR unknown option '%s' for %s",
                                  quoted, command);
}

bool ebb_redis_parse_options(RedisModuleCtx *ctx, RedisModuleString **argv,
                             int argc, int *i, const char *command,
                             ebb_redis_option_parser parse, void *options,
                             bool *nocreate)
{
    bool insert = nocreate != NULL;
    while (*i < argc && !(insert && ebb_redis_arg_is(argv[*i], "ITEMS"))) {
        if (insert && ebb_redis_arg_is(argv[*i], "NOCREATE")) {
            *nocreate = true;
            *i += 1;
            continue;
        }
        int parsed = parse(ctx, argv, argc, i, insert, options);
        if (parsed < 0)
            return false;
        if (parsed == 0) {
            ebb_redis_reply_unknown_option(ctx, argv[*i], command);
            return false;
        }
    }
    if (insert && *i + 1 >= argc) {
        ebb_redis_reply_errorf(ctx,
                           "ERR %s needs ITEMS followed by at least one item",
                           command);
        return false;
    }
    return true;
}

size_t ebb_redis_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0 ||
        (unsigned long)pages > SIZE_MAX / (unsigned long)page_size)
        return SIZE_MAX;
    return (size_t)pages * (size_t)page_size;
}

void ebb_redis_format_double(double value, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, value);
        if (strtod(buf, NULL) == value)
            return;
    }
}

uint64_t ebb_redis_key_seed(const RedisModuleString *keyname)
{
    size_t len;
    const char *name = RedisModule_StringPtrLen(keyname, &len);
    return ebb_hash(name, len, 0).lo;
}

/* ------------------------------------------------------------------------ */
/* INFO replies                                                             */
/* ------------------------------------------------------------------------ */

void ebb_redis_info_integer(RedisModuleCtx *ctx, long *count,
                            const char *field, uint64_t value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithLongLong(
        ctx, value > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)value);
    *count += 2;
}

void ebb_redis_info_signed(RedisModuleCtx *ctx, long *count,
                           const char *field, long long value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithLongLong(ctx, value);
    *count += 2;
}

void ebb_redis_info_double(RedisModuleCtx *ctx, long *count,
                           const char *field, double value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithDouble(ctx, value);
    *count += 2;
}

void ebb_redis_info_text(RedisModuleCtx *ctx, long *count, const char *field,
                         const char *value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithSimpleString(ctx, value);
    *count += 2;
}
