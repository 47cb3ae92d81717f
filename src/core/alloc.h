/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * alloc.h: the library's only way to get memory.
 *
 * Every allocation goes through the table installed with ebb_set_allocator
 * (include/ebb/ebb.h). Filters hold their bit arrays in one cache-line
 * aligned block, so blocked variants and prefetching see whole lines.
 */
#ifndef EBB_CORE_ALLOC_H
#define EBB_CORE_ALLOC_H

#include <stddef.h>

#define EBB_CACHE_LINE 64u

/* On Linux, the whole pages of this size inside a zeroed block of at least
 * this size from the built-in allocator are backed by transparent huge
 * pages where the system offers them (alloc.c). */
#define EBB_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* size bytes, or NULL. size 0 is treated as 1. */
void *ebb_mem_alloc(size_t size);
/* size zero bytes, or NULL. */
void *ebb_mem_alloc_zeroed(size_t size);
/* Frees what ebb_mem_alloc or ebb_mem_alloc_zeroed returned; NULL is a no-op. */
void ebb_mem_free(void *ptr);

/* A zero-filled block whose start is aligned to EBB_CACHE_LINE. *raw
 * receives the pointer to give to ebb_mem_free; NULL on failure (including
 * size overflow). */
void *ebb_mem_alloc_lines(size_t size, void **raw);

/* Bytes ebb_mem_alloc_lines really takes for size bytes (0 on overflow). */
size_t ebb_mem_lines_footprint(size_t size);

#endif
