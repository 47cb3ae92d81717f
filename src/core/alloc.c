/* SPDX-License-Identifier: BSD-2-Clause */
/* alloc.c: the pluggable allocator table (see include/ebb/ebb.h).
 *
 * The built-in allocator asks Linux to back the whole 2 MiB pages inside a
 * zeroed block of EBB_HUGE_PAGE_BYTES or more with transparent huge pages
 * (madvise MADV_HUGEPAGE; it takes effect when the system's THP mode is
 * "always" or "madvise", the common defaults). Every filter operation
 * reads or writes random lines of its bit arrays; with 4 KiB pages nearly
 * every such access beyond the first-level TLB's reach (288 KB on Zen 4)
 * also misses it, and beyond the second level's a page walk. With 2 MiB
 * pages a 600 MB filter needs 300 TLB entries instead of 150,000
 * (docs/bench.md measured the batch query and add at w = 10^8 before and
 * after). The block itself still comes from calloc, for its zeroing: a
 * block glibc maps afresh is zeroed by the kernel when first touched, so
 * nothing is cleared twice or committed before use (a TLBF slice allocated
 * inside an add stays cheap). glibc maps blocks only above its mmap
 * threshold, which rises (up to 32 MiB) once a mapped block is freed: after
 * that a block of a few MiB may come from the heap, cleared by calloc and
 * on whatever pages it had. The APBF allocates once, so it is not
 * affected; whether the TLBF's expiring slices of 2 MiB or more keep huge
 * pages in a long run has not been measured. Smaller blocks, other
 * systems and caller-supplied allocators are unchanged. */
#if defined(__linux__)
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <sys/mman.h>
#endif

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

void ebb_advise_huge_pages(void *block, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (block == NULL || size < EBB_HUGE_PAGE_BYTES)
        return;
    uintptr_t start = ((uintptr_t)block + EBB_HUGE_PAGE_BYTES - 1u) &
                      ~(uintptr_t)(EBB_HUGE_PAGE_BYTES - 1u);
    uintptr_t end = ((uintptr_t)block + size) &
                    ~(uintptr_t)(EBB_HUGE_PAGE_BYTES - 1u);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)block;
    (void)size;
#endif
}

static void *libc_alloc_zeroed(size_t size, void *user)
{
    (void)user;
    void *block = calloc(1, size);
    if (block != NULL)
        ebb_advise_huge_pages(block, size);
    return block;
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
