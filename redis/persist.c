/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * persist.c: the data-type callbacks of every family: RDB load and save,
 * AOF rewrite, MEMORY USAGE, COPY and free (glue.h).
 *
 * Persistence never re-adds items: RDB (and so DUMP/RESTORE and the RDB
 * preamble of AOF files) stores the library's snapshot bytes, and an AOF
 * rewrite emits LOADCHUNK commands that carry the same bytes. A snapshot
 * carries its own checksum, so a payload damaged anywhere is refused by the
 * library's loader rather than loaded wrong.
 *
 * Saving never copies the filter: the library streams its snapshot
 * (ebb_<family>_save_to) in pieces of at most EBB_SAVE_PIECE_MAX bytes,
 * which one buffer of EBB_REDIS_CHUNK_BYTES gathers into the strings of an
 * RDB value (encoding version 2), the LOADCHUNK commands of an AOF rewrite
 * and the elements of DEBUG DIGEST-VALUE. A save of a 1 GB filter so needs
 * about 1 MiB more than the filter, wherever Redis runs it (SAVE, the BGSAVE
 * or AOF-rewrite child, DEBUG RELOAD, a full resync); DUMP still builds its
 * whole payload in Redis's own buffer (docs/redis.md "Persistence").
 *
 * RDB value layout, encoding version 2 (every integer a module unsigned):
 *   kind 0 (filter):   0, total T, then strings s_1..s_n with
 *                      1 <= |s_i| <= EBB_REDIS_CHUNK_BYTES and sum |s_i| = T
 *                      (the writer makes every one but the last exactly
 *                      EBB_REDIS_CHUNK_BYTES); their concatenation is the
 *                      snapshot, whose own header announces T.
 *   kind 1 (restore):  1, announced total, the bytes received (one string),
 *                      as in version 1.
 * Version 1 (before): kind 0 is the snapshot as one string; it still loads.
 */
#include "glue.h"
#include "room.h"

#include <limits.h>
#include <string.h>

/* RDB kinds of encoding versions 1 and 2. */
#define RDB_KIND_FILTER 0u
#define RDB_KIND_RESTORE 1u

/* The largest snapshot a version-2 value may announce: 2^40 bytes (1 TiB),
 * far above any filter a server holds, and checked before anything is
 * allocated; what is actually allocated comes from TryAlloc, so a total the
 * machine cannot hold fails that value's load (logged), not the server. */
#define RDB_MAX_SNAPSHOT_BYTES ((uint64_t)1 << 40)
/* The frame of docs/format.md: a snapshot is never shorter. */
#define RDB_MIN_SNAPSHOT_BYTES 40u

/* ------------------------------------------------------------------------ */
/* Streaming a filter's snapshot in chunks                                  */
/* ------------------------------------------------------------------------ */

/* Gathers the library's pieces into chunks of exactly EBB_REDIS_CHUNK_BYTES
 * (the last one shorter) and hands each to emit. The one buffer is static:
 * Redis calls the data-type callbacks from its main thread, or from a
 * forked child that has its own copy, never two at once, and a save then
 * needs no allocation that could fail half-way (an RDB save has no way to
 * report one). */
typedef struct chunker chunker;
struct chunker {
    void (*emit)(chunker *c, const unsigned char *bytes, size_t len);
    size_t staged;   /* bytes in chunk_stage                       */
    uint64_t offset; /* bytes emitted before chunk_stage           */
    const ebb_redis_family *family;
    RedisModuleIO *io;
    RedisModuleString *key;
    RedisModuleDigest *digest;
};

static unsigned char chunk_stage[EBB_REDIS_CHUNK_BYTES];

static ebb_status chunker_take(void *user, const void *bytes, size_t len)
{
    chunker *c = user;
    const unsigned char *at = bytes;
    while (len > 0) {
        size_t room = EBB_REDIS_CHUNK_BYTES - c->staged;
        size_t n = len < room ? len : room;
        memcpy(chunk_stage + c->staged, at, n);
        c->staged += n;
        at += n;
        len -= n;
        if (c->staged == EBB_REDIS_CHUNK_BYTES) {
            c->emit(c, chunk_stage, c->staged);
            c->offset += c->staged;
            c->staged = 0;
        }
    }
    return EBB_OK;
}

/* Streams the filter's snapshot through c. The library stops only when
 * its sink refuses, and chunker_take never does. */
static void chunker_run(chunker *c, const void *filter)
{
    c->staged = 0;
    c->offset = 0;
    (void)c->family->save_to(filter, chunker_take, c);
    if (c->staged > 0)
        c->emit(c, chunk_stage, c->staged);
    c->staged = 0;
}

/* ------------------------------------------------------------------------ */
/* RDB                                                                      */
/* ------------------------------------------------------------------------ */

/* One module string of the value, or NULL when the read failed (nothing
 * is then left allocated). */
static char *load_string(RedisModuleIO *io, size_t *len)
{
    *len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, len);
    if (RedisModule_IsIOError(io) || bytes == NULL) {
        if (bytes != NULL)
            RedisModule_Free(bytes);
        return NULL;
    }
    return bytes;
}

/* The filter of a snapshot's bytes, or NULL (logged) when the library
 * refuses them or memory runs out. Frees bytes. */
static void *value_of_snapshot(const ebb_redis_family *family,
                               RedisModuleIO *io, char *bytes, size_t len)
{
    void *filter;
    int64_t meter = ebb_redis_heap_meter(); /* MEMORY USAGE (value.c) */
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
    ebb_redis_value_measured(value, family, meter);
    return value;
}

/* RESTORE (and MIGRATE's) is a client's command that creates a filter of
 * `bytes`: refused, logged, when it does not fit the memory limits, as
 * RESERVE is (room.h). Loading (startup, a full resync, DEBUG RELOAD)
 * and a replica (its RESTOREs come from its primary) are never refused.
 * RESTORE then answers "Bad data format" and the log says why. */
static bool restore_refused(const ebb_redis_family *family,
                            RedisModuleIO *io, uint64_t bytes)
{
    RedisModuleCtx *ctx = RedisModule_GetContextFromIO(io);
    if (ctx == NULL ||
        (RedisModule_GetContextFlags(ctx) &
         (REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_SLAVE |
          REDISMODULE_CTX_FLAGS_REPLICATED)))
        return false;
    char message[256];
    if (bytes > SIZE_MAX)
        bytes = SIZE_MAX;
    if (!ebb_redis_room_refused(ctx, family->name, (size_t)bytes, message,
                                sizeof message))
        return false;
    RedisModule_LogIOError(io, "warning", "ebb: RESTORE refused: %s",
                           message);
    return true;
}

/* Version 1: the snapshot as one string. */
static void *rdb_load_filter_v1(const ebb_redis_family *family,
                                RedisModuleIO *io)
{
    size_t len;
    char *bytes = load_string(io, &len);
    if (bytes == NULL)
        return NULL;
    if (restore_refused(family, io, len)) {
        RedisModule_Free(bytes);
        return NULL;
    }
    return value_of_snapshot(family, io, bytes, len);
}

/* One string of a version-2 value: 1 to EBB_REDIS_CHUNK_BYTES bytes and
 * no more than the `left` the total still expects. NULL (logged) when the
 * read fails or the length breaks those rules. */
static char *rdb_load_piece(const ebb_redis_family *family,
                            RedisModuleIO *io, uint64_t left, size_t *len)
{
    char *piece = load_string(io, len);
    if (piece == NULL)
        return NULL;
    if (*len == 0 || *len > EBB_REDIS_CHUNK_BYTES || *len > left) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s: a snapshot piece of %zu bytes where "
                               "%llu remain (pieces hold 1 to %zu)",
                               family->name, *len, (unsigned long long)left,
                               EBB_REDIS_CHUNK_BYTES);
        RedisModule_Free(piece);
        return NULL;
    }
    return piece;
}

/* Version 2: the total, then the snapshot in pieces. The first piece must
 * announce the same total in the snapshot's own header before the whole is
 * allocated. */
static void *rdb_load_filter_v2(const ebb_redis_family *family,
                                RedisModuleIO *io)
{
    uint64_t total = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    if (total < RDB_MIN_SNAPSHOT_BYTES || total > RDB_MAX_SNAPSHOT_BYTES ||
        total > SIZE_MAX) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s: snapshot length %llu outside [%u, "
                               "%llu]",
                               family->name, (unsigned long long)total,
                               RDB_MIN_SNAPSHOT_BYTES,
                               (unsigned long long)RDB_MAX_SNAPSHOT_BYTES);
        return NULL;
    }
    size_t len;
    char *piece = rdb_load_piece(family, io, total, &len);
    if (piece == NULL)
        return NULL;
    if (ebb_redis_snapshot_announced_total((const unsigned char *)piece,
                                           len) != total) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s: the snapshot's header does not "
                               "announce the %llu bytes of its value",
                               family->name, (unsigned long long)total);
        RedisModule_Free(piece);
        return NULL;
    }
    /* The snapshot's bytes and the filter loaded from them. */
    if (restore_refused(family, io, 2 * total)) {
        RedisModule_Free(piece);
        return NULL;
    }
    char *bytes = RedisModule_TryAlloc((size_t)total);
    if (bytes == NULL) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s: out of memory for a snapshot of %llu "
                               "bytes",
                               family->name, (unsigned long long)total);
        RedisModule_Free(piece);
        return NULL;
    }
    size_t got = 0;
    for (;;) {
        memcpy(bytes + got, piece, len);
        got += len;
        RedisModule_Free(piece);
        if (got == total)
            break;
        piece = rdb_load_piece(family, io, total - got, &len);
        if (piece == NULL) {
            RedisModule_Free(bytes);
            return NULL;
        }
    }
    return value_of_snapshot(family, io, bytes, (size_t)total);
}

static void *rdb_load_restore(const ebb_redis_family *family,
                              RedisModuleIO *io)
{
    uint64_t total = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    size_t len;
    char *bytes = load_string(io, &len);
    if (bytes == NULL)
        return NULL;
    /* The same rules as LOADCHUNK: a frame announcing this total, and fewer
     * bytes than that (a complete restore is saved as a filter). */
    if (ebb_redis_snapshot_announced_total((const unsigned char *)bytes,
                                           len) != total ||
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
    if (encver < 1 || encver > EBB_REDIS_ENCODING_VERSION) {
        RedisModule_LogIOError(io, "warning",
                               "ebb: %s value of encoding version %d; this "
                               "module reads versions 1 to %d",
                               family->name, encver,
                               EBB_REDIS_ENCODING_VERSION);
        return NULL;
    }
    uint64_t kind = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    if (kind == RDB_KIND_FILTER)
        return encver == 1 ? rdb_load_filter_v1(family, io)
                           : rdb_load_filter_v2(family, io);
    if (kind == RDB_KIND_RESTORE)
        return rdb_load_restore(family, io);
    RedisModule_LogIOError(io, "warning", "ebb: %s value of unknown kind %llu",
                           family->name, (unsigned long long)kind);
    return NULL;
}

static void rdb_emit(chunker *c, const unsigned char *bytes, size_t len)
{
    RedisModule_SaveStringBuffer(c->io, (const char *)bytes, len);
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
    RedisModule_SaveUnsigned(io, RDB_KIND_FILTER);
    RedisModule_SaveUnsigned(io, family->snapshot_size(value->filter));
    chunker c = {.emit = rdb_emit, .family = family, .io = io};
    chunker_run(&c, value->filter);
}

/* ------------------------------------------------------------------------ */
/* AOF rewrite, MEMORY USAGE, COPY, free                                    */
/* ------------------------------------------------------------------------ */

/* One LOADCHUNK command: its iterator is the end offset of its bytes. */
static void aof_emit(chunker *c, const unsigned char *bytes, size_t len)
{
    RedisModule_EmitAOF(c->io, c->family->loadchunk_command, "slb", c->key,
                        (long long)(c->offset + len), (const char *)bytes,
                        len);
}

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
    /* Streamed: every command but the last carries exactly
     * EBB_REDIS_CHUNK_BYTES, as LOADCHUNK requires. */
    chunker c = {.emit = aof_emit, .family = family, .io = io, .key = key};
    chunker_run(&c, value->filter);
}

/* DEBUG DIGEST-VALUE: the snapshot's chunks as one sequence, so the digest
 * changes whenever the filter's bits, counters or parameters do. */
static void digest_emit(chunker *c, const unsigned char *bytes, size_t len)
{
    RedisModule_DigestAddStringBuffer(c->digest, (const char *)bytes, len);
}

void ebb_redis_digest(const ebb_redis_family *family, RedisModuleDigest *md,
                      const ebb_redis_value *value)
{
    if (value->filter == NULL) {
        /* A restore in progress: the bytes received so far. */
        if (value->restore.length > 0)
            RedisModule_DigestAddStringBuffer(
                md, (const char *)value->restore.bytes,
                value->restore.length);
    } else {
        chunker c = {.emit = digest_emit, .family = family, .digest = md};
        chunker_run(&c, value->filter);
    }
    RedisModule_DigestEndSequence(md);
}

/* The allocator's size of a block (its size class: what used_memory
 * counts), 0 for none. */
static size_t heap_size(const void *block)
{
    /* The API takes a non-const pointer; it only reads the block. */
    return block == NULL ? 0
                         : RedisModule_MallocSize((void *)(uintptr_t)block);
}

/* The heap the filter holds. Measured at creation or load (value.c's heap
 * meter: the usable sizes of its allocations, within a few bytes of
 * used_memory's growth); a filter that has since grown or shrunk (the TLBF
 * adds and retires slices) is scaled by the library's count, which rounds
 * in the same proportion. Unmeasured: the library's count. */
static size_t filter_heap(const ebb_redis_family *family,
                          const ebb_redis_value *value)
{
    size_t now = family->memory(value->filter);
    if (value->filter_heap == 0 || value->filter_memory == 0)
        return now;
    if (now == value->filter_memory)
        return value->filter_heap;
    return (size_t)((double)value->filter_heap * (double)now /
                    (double)value->filter_memory);
}

size_t ebb_redis_mem_usage(const ebb_redis_family *family,
                           const ebb_redis_value *value)
{
    size_t bytes = heap_size(value) + heap_size(value->restore.bytes) +
                   heap_size(value->dump.bytes);
    if (value->filter != NULL)
        bytes += filter_heap(family, value);
    return bytes;
}

void *ebb_redis_copy(const ebb_redis_family *family,
                     const ebb_redis_value *value)
{
    ebb_redis_value *copy = ebb_redis_value_new(NULL);
    if (copy == NULL)
        return NULL;
    if (value->filter == NULL) {
        if (!ebb_redis_buffer_reserve(&copy->restore, value->restore.length,
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
    if (!ebb_redis_snapshot_take(family, value->filter, true, &snapshot)) {
        RedisModule_Free(copy);
        return NULL;
    }
    int64_t meter = ebb_redis_heap_meter(); /* MEMORY USAGE (value.c) */
    ebb_status status =
        family->load(snapshot.bytes, snapshot.length, &copy->filter);
    ebb_redis_buffer_release(&snapshot);
    if (status != EBB_OK) {
        RedisModule_Free(copy);
        return NULL;
    }
    ebb_redis_value_measured(copy, family, meter);
    return copy;
}

void ebb_redis_free(const ebb_redis_family *family, ebb_redis_value *value)
{
    if (value->filter != NULL)
        family->destroy(value->filter);
    ebb_redis_buffer_release(&value->restore);
    ebb_redis_buffer_release(&value->dump);
    RedisModule_Free(value);
}
