/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue.c: argument parsing, replies, values, persistence and chunked
 * dump/restore shared by the APBF and TLBF data types (see glue.h).
 *
 * Persistence never re-adds items: RDB (and so DUMP/RESTORE and the RDB
 * preamble of AOF files) stores the library's snapshot bytes, and an AOF
 * rewrite emits LOADCHUNK commands that carry the same bytes. A snapshot
 * carries its own checksum, so a payload damaged anywhere is refused by the
 * library's loader rather than loaded wrong.
 */
#include "glue.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The snapshot frame of docs/format.md, of which LOADCHUNK reads two fields
 * to learn how many bytes a restore expects: the magic at offset 0 and the
 * total length (little-endian u64) at offset 16. Everything else is checked
 * by the library when the last chunk arrives. */
#define SNAPSHOT_FRAME_BYTES 40u
#define SNAPSHOT_TOTAL_OFFSET 16u
static const unsigned char SNAPSHOT_MAGIC[4] = {'E', 'B', 'B', 'S'};

/* RDB kinds of encoding version 1. */
#define RDB_KIND_FILTER 0u
#define RDB_KIND_RESTORE 1u

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

static int reply_error_format(RedisModuleCtx *ctx, const char *format, ...)
    EBB_REDIS_PRINTF(2, 3);

static int reply_error_format(RedisModuleCtx *ctx, const char *format, ...)
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
        reply_error_format(ctx, "ERR %s must be an integer from %lld to %lld",
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
        reply_error_format(ctx,
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
        reply_error_format(ctx, "ERR %s must be a number %s 0", what,
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
        return reply_error_format(ctx, "ERR %s: out of memory", family);
    case EBB_EOVERFLOW:
        return reply_error_format(ctx,
                                  "ERR %s: the filter would be too large to "
                                  "allocate (lower the window or raise the "
                                  "error rate)",
                                  family);
    case EBB_ELIMIT:
        return reply_error_format(ctx,
                                  "ERR %s: the filter is at its MAXMEMORY "
                                  "limit: item not added",
                                  family);
    case EBB_EINVAL:
        return reply_error_format(ctx,
                                  "ERR %s: no filter meets these parameters "
                                  "(%s)",
                                  family, ebb_strerror(status));
    default:
        return reply_error_format(ctx, "ERR %s: %s", family,
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
    return reply_error_format(ctx, "ERR unknown option '%s' for %s", quoted,
                              command);
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
        reply_error_format(ctx,
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
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

static void buffer_release(ebb_redis_buffer *buffer)
{
    if (buffer->bytes != NULL)
        RedisModule_Free(buffer->bytes);
    buffer->bytes = NULL;
    buffer->length = 0;
    buffer->capacity = 0;
}

/* Makes room for at least `needed` bytes, growing geometrically but never
 * past `limit`. False when out of memory (the buffer is unchanged). */
static bool buffer_reserve(ebb_redis_buffer *buffer, size_t needed,
                           size_t limit)
{
    if (needed <= buffer->capacity)
        return true;
    size_t capacity = buffer->capacity < needed / 2 ? needed
                                                    : buffer->capacity * 2;
    if (capacity > limit)
        capacity = limit;
    if (capacity < needed)
        capacity = needed;
    unsigned char *bytes = RedisModule_TryAlloc(capacity);
    if (bytes == NULL)
        return false;
    if (buffer->length != 0)
        memcpy(bytes, buffer->bytes, buffer->length);
    if (buffer->bytes != NULL)
        RedisModule_Free(buffer->bytes);
    buffer->bytes = bytes;
    buffer->capacity = capacity;
    return true;
}

/* The filter's snapshot into a fresh buffer. try: TryAlloc (false when out
 * of memory); otherwise Alloc, which aborts the server like its own
 * allocations do (RDB saving has no way to report failure). */
static bool snapshot_take(const ebb_redis_family *family, const void *filter,
                          bool try, ebb_redis_buffer *out)
{
    size_t size = family->snapshot_size(filter);
    unsigned char *bytes =
        try ? RedisModule_TryAlloc(size) : RedisModule_Alloc(size);
    if (bytes == NULL)
        return false;
    size_t written = 0;
    if (family->save(filter, bytes, size, &written) != EBB_OK ||
        written != size) {
        /* Cannot happen: the buffer has the size the library asked for. */
        RedisModule_Free(bytes);
        return false;
    }
    out->bytes = bytes;
    out->length = size;
    out->capacity = size;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

ebb_redis_value *ebb_redis_value_new(void *filter)
{
    ebb_redis_value *value = RedisModule_TryAlloc(sizeof *value);
    if (value == NULL)
        return NULL;
    memset(value, 0, sizeof *value);
    value->filter = filter;
    return value;
}

bool ebb_redis_store_new(RedisModuleKey *key, const ebb_redis_family *family,
                         void *filter)
{
    ebb_redis_value *value = ebb_redis_value_new(filter);
    if (value == NULL) {
        family->destroy(filter);
        return false;
    }
    RedisModule_ModuleTypeSetValue(key, *family->type, value);
    return true;
}

void ebb_redis_value_touch(ebb_redis_value *value)
{
    if (value->dump.bytes != NULL)
        buffer_release(&value->dump);
}

bool ebb_redis_open(RedisModuleCtx *ctx, RedisModuleString *keyname,
                    int mode, const ebb_redis_family *family,
                    RedisModuleKey **key, ebb_redis_value **value)
{
    /* A missing key opened for reading comes back as NULL. */
    RedisModuleKey *opened = RedisModule_OpenKey(ctx, keyname, mode);
    int type = opened == NULL ? REDISMODULE_KEYTYPE_EMPTY
                              : RedisModule_KeyType(opened);
    if (type == REDISMODULE_KEYTYPE_EMPTY) {
        *key = opened;
        *value = NULL;
        return true;
    }
    if (type != REDISMODULE_KEYTYPE_MODULE ||
        RedisModule_ModuleTypeGetType(opened) != *family->type) {
        RedisModule_CloseKey(opened);
        RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        return false;
    }
    *key = opened;
    *value = RedisModule_ModuleTypeGetValue(opened);
    return true;
}

bool ebb_redis_value_ready(RedisModuleCtx *ctx,
                           const ebb_redis_family *family,
                           const ebb_redis_value *value)
{
    if (value->filter != NULL)
        return true;
    reply_error_format(ctx,
                       "ERR %s: the filter is being restored by LOADCHUNK "
                       "(%zu of %llu bytes received)",
                       family->name, value->restore.length,
                       (unsigned long long)value->restore_total);
    return false;
}

bool ebb_redis_open_filter(RedisModuleCtx *ctx, RedisModuleString *keyname,
                           int mode, const ebb_redis_family *family,
                           RedisModuleKey **key, ebb_redis_value **value)
{
    if (!ebb_redis_open(ctx, keyname, mode, family, key, value))
        return false;
    if (*value == NULL || ebb_redis_value_ready(ctx, family, *value))
        return true;
    RedisModule_CloseKey(*key);
    return false;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

/* A new filter for options stored under the open, empty key; on failure
 * the key stays empty and the status says why. */
static ebb_status create_in_key(RedisModuleKey *key,
                                const RedisModuleString *keyname,
                                const ebb_redis_creator *creator,
                                const void *options)
{
    void *filter;
    ebb_status status =
        creator->create(options, ebb_redis_key_seed(keyname), &filter);
    if (status == EBB_OK && !ebb_redis_store_new(key, creator->family, filter))
        status = EBB_ENOMEM;
    return status;
}

static int reply_refused(RedisModuleCtx *ctx, const ebb_redis_creator *creator,
                         ebb_status status)
{
    if (creator->reply_refused != NULL)
        return creator->reply_refused(ctx, status);
    return ebb_redis_reply_status(ctx, creator->family->name, status);
}

int ebb_redis_reserve(RedisModuleCtx *ctx, RedisModuleString *keyname,
                      const ebb_redis_creator *creator, const void *options)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, keyname, REDISMODULE_WRITE, creator->family,
                        &key, &value))
        return REDISMODULE_OK;
    if (value != NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR key already exists");
    }
    ebb_status status = create_in_key(key, keyname, creator, options);
    RedisModule_CloseKey(key);
    if (status != EBB_OK)
        return reply_refused(ctx, creator, status);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

bool ebb_redis_open_for_add(RedisModuleCtx *ctx, RedisModuleString *keyname,
                            const ebb_redis_creator *creator,
                            const void *options, bool nocreate,
                            RedisModuleKey **key, ebb_redis_value **value)
{
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_WRITE,
                               creator->family, key, value))
        return false;
    if (*value != NULL)
        return true;
    if (nocreate) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, "ERR no such key");
        return false;
    }
    ebb_status status = create_in_key(*key, keyname, creator, options);
    if (status != EBB_OK) {
        RedisModule_CloseKey(*key);
        reply_refused(ctx, creator, status);
        return false;
    }
    *value = RedisModule_ModuleTypeGetValue(*key);
    creator->replicate_reserve(ctx, keyname, options);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Restores in progress                                                     */
/* ------------------------------------------------------------------------ */

/* The snapshot length announced by a restore's first bytes, or 0 when they
 * are not the start of a snapshot. */
static uint64_t snapshot_announced_total(const unsigned char *bytes,
                                         size_t len)
{
    if (len < SNAPSHOT_FRAME_BYTES ||
        memcmp(bytes, SNAPSHOT_MAGIC, sizeof SNAPSHOT_MAGIC) != 0)
        return 0;
    uint64_t total = 0;
    for (unsigned i = 0; i < 8; i++)
        total |= (uint64_t)bytes[SNAPSHOT_TOTAL_OFFSET + i] << (8 * i);
    if (total < SNAPSHOT_FRAME_BYTES || total > (uint64_t)(SIZE_MAX / 2))
        return 0;
    return total;
}

/* Completes a restore whose bytes have all arrived: the filter replaces the
 * bytes. On failure the value is unchanged and the status says why. */
static ebb_status restore_finish(const ebb_redis_family *family,
                                 ebb_redis_value *value)
{
    void *filter;
    ebb_status status =
        family->load(value->restore.bytes, value->restore.length, &filter);
    if (status != EBB_OK)
        return status;
    buffer_release(&value->restore);
    value->restore_total = 0;
    value->filter = filter;
    return EBB_OK;
}

/* ------------------------------------------------------------------------ */
/* RDB                                                                      */
/* ------------------------------------------------------------------------ */

static void *rdb_load_filter(const ebb_redis_family *family,
                             RedisModuleIO *io)
{
    size_t len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || bytes == NULL) {
        if (bytes != NULL)
            RedisModule_Free(bytes);
        return NULL;
    }
    void *filter;
    ebb_status status = family->load(bytes, len, &filter);
    RedisModule_Free(bytes);
    if (status != EBB_OK) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s snapshot rejected (%zu bytes): %s",
                               family->name, len, ebb_strerror(status));
        return NULL;
    }
    ebb_redis_value *value = ebb_redis_value_new(filter);
    if (value == NULL) {
        family->destroy(filter);
        RedisModule_LogIOError(io, "warning", "ebb: %s: out of memory",
                               family->name);
    }
    return value;
}

static void *rdb_load_restore(const ebb_redis_family *family,
                              RedisModuleIO *io)
{
    uint64_t total = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    size_t len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || bytes == NULL) {
        if (bytes != NULL)
            RedisModule_Free(bytes);
        return NULL;
    }
    /* The same rules as LOADCHUNK: a frame announcing this total, and fewer
     * bytes than that (a complete restore is saved as a filter). */
    if (snapshot_announced_total((const unsigned char *)bytes, len) !=
            total ||
        len >= total) {
        RedisModule_Free(bytes);
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s: inconsistent LOADCHUNK restore "
                               "(%zu of %llu bytes)",
                               family->name, len, (unsigned long long)total);
        return NULL;
    }
    ebb_redis_value *value = ebb_redis_value_new(NULL);
    if (value == NULL) {
        RedisModule_Free(bytes);
        RedisModule_LogIOError(io, "warning", "ebb: %s: out of memory",
                               family->name);
        return NULL;
    }
    value->restore.bytes = (unsigned char *)bytes;
    value->restore.length = len;
    value->restore.capacity = len;
    value->restore_total = total;
    return value;
}

void *ebb_redis_rdb_load(const ebb_redis_family *family, RedisModuleIO *io,
                         int encver)
{
    if (encver != EBB_REDIS_ENCODING_VERSION) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s value of encoding version %d; this "
                               "module reads version %d",
                               family->name, encver,
                               EBB_REDIS_ENCODING_VERSION);
        return NULL;
    }
    uint64_t kind = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    if (kind == RDB_KIND_FILTER)
        return rdb_load_filter(family, io);
    if (kind == RDB_KIND_RESTORE)
        return rdb_load_restore(family, io);
    RedisModule_LogIOError(io, "warning", "ebb: %s value of unknown kind %llu",
                           family->name, (unsigned long long)kind);
    return NULL;
}

void ebb_redis_rdb_save(const ebb_redis_family *family, RedisModuleIO *io,
                        const ebb_redis_value *value)
{
    if (value->filter == NULL) {
        RedisModule_SaveUnsigned(io, RDB_KIND_RESTORE);
        RedisModule_SaveUnsigned(io, value->restore_total);
        RedisModule_SaveStringBuffer(io, (const char *)value->restore.bytes,
                                     value->restore.length);
        return;
    }
    ebb_redis_buffer snapshot;
    snapshot_take(family, value->filter, false, &snapshot);
    RedisModule_SaveUnsigned(io, RDB_KIND_FILTER);
    RedisModule_SaveStringBuffer(io, (const char *)snapshot.bytes,
                                 snapshot.length);
    buffer_release(&snapshot);
}

/* ------------------------------------------------------------------------ */
/* AOF rewrite, MEMORY USAGE, COPY, free                                    */
/* ------------------------------------------------------------------------ */

/* LOADCHUNK commands that rebuild `len` bytes of a snapshot under key. */
static void emit_chunks(const ebb_redis_family *family, RedisModuleIO *io,
                        RedisModuleString *key, const unsigned char *bytes,
                        size_t len)
{
    for (size_t offset = 0; offset < len;) {
        size_t n = len - offset < EBB_REDIS_CHUNK_BYTES
                       ? len - offset
                       : EBB_REDIS_CHUNK_BYTES;
        RedisModule_EmitAOF(io, family->loadchunk_command, "slb", key,
                            (long long)(offset + n),
                            (const char *)bytes + offset, n);
        offset += n;
    }
}

void ebb_redis_aof_rewrite(const ebb_redis_family *family, RedisModuleIO *io,
                           RedisModuleString *key,
                           const ebb_redis_value *value)
{
    if (value->filter == NULL) {
        emit_chunks(family, io, key, value->restore.bytes,
                    value->restore.length);
        return;
    }
    ebb_redis_buffer snapshot;
    snapshot_take(family, value->filter, false, &snapshot);
    emit_chunks(family, io, key, snapshot.bytes, snapshot.length);
    buffer_release(&snapshot);
}

size_t ebb_redis_mem_usage(const ebb_redis_family *family,
                           const ebb_redis_value *value)
{
    size_t bytes = sizeof *value + value->restore.capacity +
                   value->dump.capacity;
    if (value->filter != NULL)
        bytes += family->memory(value->filter);
    return bytes;
}

void *ebb_redis_copy(const ebb_redis_family *family,
                     const ebb_redis_value *value)
{
    ebb_redis_value *copy = ebb_redis_value_new(NULL);
    if (copy == NULL)
        return NULL;
    if (value->filter == NULL) {
        if (!buffer_reserve(&copy->restore, value->restore.length,
                            value->restore.length)) {
            RedisModule_Free(copy);
            return NULL;
        }
        memcpy(copy->restore.bytes, value->restore.bytes,
               value->restore.length);
        copy->restore.length = value->restore.length;
        copy->restore_total = value->restore_total;
        return copy;
    }
    /* Through a snapshot: the library's one exact serialisation, and the
     * copy's seed, counters and bits are the original's. */
    ebb_redis_buffer snapshot;
    if (!snapshot_take(family, value->filter, true, &snapshot)) {
        RedisModule_Free(copy);
        return NULL;
    }
    ebb_status status =
        family->load(snapshot.bytes, snapshot.length, &copy->filter);
    buffer_release(&snapshot);
    if (status != EBB_OK) {
        RedisModule_Free(copy);
        return NULL;
    }
    return copy;
}

void ebb_redis_free(const ebb_redis_family *family, ebb_redis_value *value)
{
    if (value->filter != NULL)
        family->destroy(value->filter);
    buffer_release(&value->restore);
    buffer_release(&value->dump);
    RedisModule_Free(value);
}

/* ------------------------------------------------------------------------ */
/* SCANDUMP                                                                 */
/* ------------------------------------------------------------------------ */

/* Replies [iterator, chunk] for the chunk of the saved snapshot starting
 * at offset; the iterator is where the chunk ends. */
static int scandump_reply_chunk(RedisModuleCtx *ctx,
                                const ebb_redis_buffer *dump, size_t offset)
{
    size_t n = dump->length - offset < EBB_REDIS_CHUNK_BYTES
                   ? dump->length - offset
                   : EBB_REDIS_CHUNK_BYTES;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, (long long)(offset + n));
    return RedisModule_ReplyWithStringBuffer(
        ctx, (const char *)dump->bytes + offset, n);
}

int ebb_redis_scandump(const ebb_redis_family *family, RedisModuleCtx *ctx,
                       RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long iterator;
    if (!ebb_redis_parse_integer(ctx, argv[2], "iterator", 0, LLONG_MAX,
                                 &iterator))
        return REDISMODULE_OK;
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, argv[1], REDISMODULE_READ, family, &key,
                               &value))
        return REDISMODULE_OK;
    if (value == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR no such key");
    }
    if (iterator == 0) {
        /* A new scan: the state as it is now. */
        buffer_release(&value->dump);
        if (!snapshot_take(family, value->filter, true, &value->dump)) {
            RedisModule_CloseKey(key);
            return ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
        }
        RedisModule_CloseKey(key);
        return scandump_reply_chunk(ctx, &value->dump, 0);
    }
    if (value->dump.bytes == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(
            ctx, "ERR SCANDUMP iterator is stale: the filter was written, "
                 "or its scan ended, since iterator 0; start again from 0");
    }
    if ((unsigned long long)iterator > value->dump.length) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx,
                                          "ERR invalid SCANDUMP iterator");
    }
    if ((size_t)iterator == value->dump.length) {
        /* The end: [0, ""], and the saved snapshot is no longer needed. */
        buffer_release(&value->dump);
        RedisModule_CloseKey(key);
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        return RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    }
    RedisModule_CloseKey(key);
    return scandump_reply_chunk(ctx, &value->dump, (size_t)iterator);
}

/* ------------------------------------------------------------------------ */
/* LOADCHUNK                                                                */
/* ------------------------------------------------------------------------ */

/* The first chunk: a new restore into an empty key, or a restart of a
 * restore in progress. Replies and returns false when refused. */
static bool loadchunk_begin(const ebb_redis_family *family,
                            RedisModuleCtx *ctx, RedisModuleKey *key,
                            ebb_redis_value **value,
                            const unsigned char *data, size_t len)
{
    if (*value != NULL && (*value)->filter != NULL) {
        reply_error_format(ctx,
                           "ERR %s: the key already holds a filter; "
                           "LOADCHUNK restores into an empty key",
                           family->name);
        return false;
    }
    uint64_t total = snapshot_announced_total(data, len);
    if (total == 0 || total < len) {
        reply_error_format(ctx,
                           "ERR %s: the first LOADCHUNK chunk is not the "
                           "start of an ebb snapshot",
                           family->name);
        return false;
    }
    if (*value == NULL) {
        *value = ebb_redis_value_new(NULL);
        if (*value == NULL) {
            ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
            return false;
        }
        RedisModule_ModuleTypeSetValue(key, *family->type, *value);
    }
    (*value)->restore.length = 0;
    (*value)->restore_total = total;
    return true;
}

int ebb_redis_loadchunk(const ebb_redis_family *family, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long iterator;
    if (!ebb_redis_parse_integer(ctx, argv[2], "iterator", 1, LLONG_MAX,
                                 &iterator))
        return REDISMODULE_OK;
    size_t len;
    const unsigned char *data =
        (const unsigned char *)RedisModule_StringPtrLen(argv[3], &len);
    if (len == 0 || (unsigned long long)iterator < len)
        return RedisModule_ReplyWithError(
            ctx, "ERR invalid LOADCHUNK iterator: use the iterator SCANDUMP "
                 "returned with this data");
    size_t offset = (size_t)iterator - len;

    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, argv[1], REDISMODULE_WRITE, family, &key,
                        &value))
        return REDISMODULE_OK;
    if (offset == 0) {
        if (!loadchunk_begin(family, ctx, key, &value, data, len)) {
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
    } else if (value == NULL || value->filter != NULL ||
               offset != value->restore.length ||
               offset + len > value->restore_total) {
        RedisModule_CloseKey(key);
        return reply_error_format(ctx,
                                  "ERR %s: LOADCHUNK chunk out of order: "
                                  "send the chunks in SCANDUMP's order, "
                                  "starting with its first",
                                  family->name);
    }
    if (!buffer_reserve(&value->restore, offset + len,
                        (size_t)value->restore_total)) {
        RedisModule_CloseKey(key);
        return ebb_redis_reply_status(ctx, family->name, EBB_ENOMEM);
    }
    memcpy(value->restore.bytes + offset, data, len);
    value->restore.length = offset + len;
    /* From here the key has changed whatever happens next; the replica and
     * the AOF get the same chunk and reach the same outcome. */
    RedisModule_ReplicateVerbatim(ctx);
    if (value->restore.length < value->restore_total) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    ebb_status status = restore_finish(family, value);
    if (status != EBB_OK) {
        /* The snapshot is damaged: nothing usable stays under the key. */
        RedisModule_DeleteKey(key);
        RedisModule_CloseKey(key);
        return reply_error_format(ctx,
                                  "ERR %s: LOADCHUNK snapshot rejected: %s",
                                  family->name, ebb_strerror(status));
    }
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
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
        RedisModuleCommand *handle = RedisModule_GetCommand(ctx, command->name);
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
