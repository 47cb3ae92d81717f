/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebb.h: Bloom filters for streams whose memory fades.
 *
 * This is the umbrella header of libebb. It declares what every filter family
 * shares: the library version, status codes, the pluggable allocator and the
 * one hash function every key goes through. Each family has its own header
 * (ebb/apbf.h, ...) which this file includes.
 *
 * Conventions that hold for the whole library
 * -------------------------------------------
 * - Handles are opaque. Layouts are private and may change between versions;
 *   only the snapshot format (docs/format.md) is a stable contract.
 * - Functions that can fail return an ebb_status; EBB_OK is zero. Output
 *   parameters are written only on success.
 * - The library never prints, never exits, never reads a clock inside a query
 *   and never allocates in a query. An APBF never allocates after creation;
 *   a time-limited filter allocates a slice at most once per generation (its
 *   add says so). Memory comes only from the allocator installed with
 *   ebb_set_allocator (the built-in one, over libc, by default).
 * - A filter handle is not internally locked: concurrent readers are safe,
 *   a writer needs exclusive access.
 */
#ifndef EBB_EBB_H
#define EBB_EBB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

#define EBB_VERSION_MAJOR 0
#define EBB_VERSION_MINOR 1
#define EBB_VERSION_PATCH 0
/* One number for compile-time comparisons: major*10000 + minor*100 + patch. */
#define EBB_VERSION_NUMBER                                                     \
    (EBB_VERSION_MAJOR * 10000 + EBB_VERSION_MINOR * 100 + EBB_VERSION_PATCH)
#define EBB_VERSION_STRING "0.1.0"

/* The version of the library actually linked, as EBB_VERSION_NUMBER. Compare
 * with the macro to detect a header/library mismatch. */
unsigned ebb_version_number(void);
/* The linked library's version as "major.minor.patch". Never NULL. */
const char *ebb_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

typedef enum ebb_status {
    EBB_OK = 0,
    EBB_EINVAL = 1,     /* an argument is out of its documented range       */
    EBB_ENOMEM = 2,     /* the allocator returned NULL                       */
    EBB_EOVERFLOW = 3,  /* the requested sizes do not fit in memory         */
    EBB_EBUFSIZE = 4,   /* an output buffer is smaller than needed          */
    EBB_EMAGIC = 5,     /* input is not an ebb snapshot                      */
    EBB_EVERSION = 6,   /* snapshot written by a newer format version       */
    EBB_EFAMILY = 7,    /* snapshot of another filter family                */
    EBB_ETRUNCATED = 8, /* snapshot shorter than its header says             */
    EBB_ECHECKSUM = 9,  /* snapshot bytes do not match their checksum       */
    EBB_ECORRUPT = 10,  /* snapshot fields are inconsistent or out of range */
    EBB_ELIMIT = 11,    /* the operation would pass a configured memory limit */
    EBB_EUNDERFLOW = 12, /* a removal would take a count below zero          */
    EBB_ESTATUS_COUNT_ /* not a status: the number of codes above           */
} ebb_status;

/* A static, human-readable sentence for a status (no trailing newline).
 * Unknown values give "unknown ebb status". Never NULL. */
const char *ebb_strerror(ebb_status status);

/* ------------------------------------------------------------------------ */
/* Streaming saves                                                          */
/* ------------------------------------------------------------------------ */

/* Largest piece a streaming save hands its sink, in bytes. */
#define EBB_SAVE_PIECE_MAX 32768u

/*
 * Where ebb_<family>_save_to sends a snapshot: called with the snapshot's
 * bytes in order, in pieces of 1 to EBB_SAVE_PIECE_MAX bytes, which
 * together are exactly the bytes ebb_<family>_save writes. `bytes` is valid
 * only during the call (it may point into the filter itself or into a
 * buffer on the saver's stack). Return EBB_OK to continue; any other status
 * stops the save, which returns that status without calling the sink
 * again. The sink must not modify the filter being saved.
 */
typedef ebb_status (*ebb_save_sink)(void *user, const void *bytes,
                                    size_t len);

/* ------------------------------------------------------------------------ */
/* Allocator                                                                */
/* ------------------------------------------------------------------------ */

/*
 * The one allocator table of the library (in the spirit of SQLite's
 * sqlite3_config(SQLITE_CONFIG_MALLOC)). Every byte libebb holds comes from
 * it: the CLI leaves the built-in default, the Redis module installs Redis's
 * allocator, tests install counting and failing allocators.
 *
 * The built-in allocator is libc's malloc, calloc and free, except that on
 * Linux the whole 2 MiB pages inside a zeroed block of 2 MiB or more are
 * marked for transparent huge pages (madvise(MADV_HUGEPAGE) after calloc):
 * a filter's random line reads then miss the TLB far less often
 * (docs/bench.md measured the effect at 10^8 items). A caller's allocator
 * is used as given.
 *
 *   alloc(size, user)        returns size bytes aligned for any object, or
 *                            NULL. Required.
 *   alloc_zeroed(size, user) as alloc but zero-filled. Optional: when NULL
 *                            the library calls alloc and clears the bytes.
 *                            Worth providing for large filters (calloc gets
 *                            zero pages from the kernel for free).
 *   release(ptr, user)       frees a pointer from alloc or alloc_zeroed.
 *                            Never called with NULL. Required.
 *   user                     passed back to every call.
 */
typedef struct ebb_allocator {
    void *(*alloc)(size_t size, void *user);
    void *(*alloc_zeroed)(size_t size, void *user);
    void (*release)(void *ptr, void *user);
    void *user;
} ebb_allocator;

/* Installs the allocator (copied). NULL restores the built-in one.
 * Returns EBB_EINVAL, changing nothing, when alloc or release is NULL.
 * Precondition: no live ebb object was allocated by the previous allocator
 * (set it once, before creating filters). Not thread-safe. */
ebb_status ebb_set_allocator(const ebb_allocator *allocator);

/* Copies the allocator in force into *out. */
void ebb_get_allocator(ebb_allocator *out);

/* What the built-in allocator does to its large zeroed blocks, for a
 * caller's allocator to do to its own: on Linux, marks the whole 2 MiB
 * pages inside [block, block + size) for transparent huge pages
 * (madvise(MADV_HUGEPAGE)). Advisory: it changes no byte, and when the
 * kernel declines (THP mode "never", a process that turned THP off,
 * another system) the block stays on small pages. Call it before the
 * block is first touched (right after a calloc that got fresh pages) so
 * the first faults map huge pages; later, khugepaged may still collapse
 * the range. A no-op for blocks under 2 MiB and on other systems. */
void ebb_advise_huge_pages(void *block, size_t size);

/* ------------------------------------------------------------------------ */
/* Hashing                                                                  */
/* ------------------------------------------------------------------------ */

/* A 128-bit key hash. Every key is hashed exactly once; each filter derives
 * all the bit positions it needs from these two words. */
typedef struct ebb_hash128 {
    uint64_t lo;
    uint64_t hi;
} ebb_hash128;

/* XXH3-128 of len bytes at key (key may be NULL when len is 0) under seed.
 * Stable across platforms and versions: snapshots depend on it. */
ebb_hash128 ebb_hash(const void *key, size_t len, uint64_t seed);

#ifdef __cplusplus
}
#endif

#include "ebb/apbf.h"
#include "ebb/tlbf.h"
#include "ebb/stable.h"
#include "ebb/timing.h"

#endif /* EBB_EBB_H */
