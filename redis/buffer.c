/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * buffer.c: growable byte buffers on Redis's heap, and a filter's snapshot
 * taken into one (glue.h).
 */
#include "glue.h"

#include <limits.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

void ebb_redis_buffer_release(ebb_redis_buffer *buffer)
{
    if (buffer->bytes != NULL)
        RedisModule_Free(buffer->bytes);
    buffer->bytes = NULL;
    buffer->length = 0;
    buffer->capacity = 0;
}

/* Makes room for at least `needed` bytes, growing geometrically but never
 * past `limit`. False when out of memory (the buffer is unchanged). */
bool ebb_redis_buffer_reserve(ebb_redis_buffer *buffer, size_t needed,
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
bool ebb_redis_snapshot_take(const ebb_redis_family *family,
                             const void *filter, bool try,
                             ebb_redis_buffer *out)
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
