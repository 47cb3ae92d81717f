/* alloc.c: the pluggable allocator table (see include/ebb/ebb.h). */
#include "core/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebb/ebb.h"

static void *libc_alloc(size_t size, void *user)
{
    (void)user;
    return malloc(size);
}

static void *libc_alloc_zeroed(size_t size, void *user)
{
    (void)user;
    return calloc(1, size);
}

static void libc_release(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

static const ebb_allocator libc_allocator = {libc_alloc, libc_alloc_zeroed,
                                             libc_release, NULL};

static ebb_allocator current = {libc_alloc, libc_alloc_zeroed, libc_release,
                                NULL};

ebb_status ebb_set_allocator(const ebb_allocator *allocator)
{
    if (allocator == NULL) {
        current = libc_allocator;
        return EBB_OK;
    }
    if (allocator->alloc == NULL || allocator->release == NULL)
        return EBB_EINVAL;
    current = *allocator;
    return EBB_OK;
}

void ebb_get_allocator(ebb_allocator *out)
{
    if (out != NULL)
        *out = current;
}

void *ebb_mem_alloc(size_t size)
{
    return current.alloc(size ? size : 1, current.user);
}

void *ebb_mem_alloc_zeroed(size_t size)
{
    if (size == 0)
        size = 1;
    if (current.alloc_zeroed != NULL)
        return current.alloc_zeroed(size, current.user);
    void *ptr = current.alloc(size, current.user);
    if (ptr != NULL)
        memset(ptr, 0, size);
    return ptr;
}

void ebb_mem_free(void *ptr)
{
    if (ptr != NULL)
        current.release(ptr, current.user);
}

size_t ebb_mem_lines_footprint(size_t size)
{
    /* Room to slide the start up to the next line boundary. */
    if (size > SIZE_MAX - EBB_CACHE_LINE)
        return 0;
    return size + EBB_CACHE_LINE;
}

void *ebb_mem_alloc_lines(size_t size, void **raw)
{
    size_t footprint = ebb_mem_lines_footprint(size);
    if (footprint == 0)
        return NULL;
    void *block = ebb_mem_alloc_zeroed(footprint);
    if (block == NULL)
        return NULL;
    uintptr_t start = ((uintptr_t)block + EBB_CACHE_LINE - 1) &
                      ~(uintptr_t)(EBB_CACHE_LINE - 1);
    *raw = block;
    return (void *)start;
}
