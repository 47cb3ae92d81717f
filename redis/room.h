/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * room.h: the room a new filter has, checked before anything is
 * allocated (docs/redis.md, "Memory limits").
 *
 * A filter's bytes are allocated at creation (RESERVE, a write that creates
 * its key, LOADCHUNK's announced total). On a client call they must fit
 * every limit the server runs under:
 *   - maxmemory's headroom, when maxmemory is set;
 *   - the memory cgroup's limit minus its usage (v1 or v2), the tightest
 *     along the process's cgroup path;
 *   - RLIMIT_AS minus the process's current address space;
 *   - the host's available memory.
 * A command that comes from the primary or from the AOF is never refused
 * for such a machine-dependent limit: the primary decided, the replica
 * follows (or fails loudly), so it never diverges.
 *
 * The readers of the kernel's files are pure functions of their paths, so
 * tests check them on fake trees (tests/unit/test_redis_room.c); they
 * need no Redis.
 */
#ifndef EBB_REDIS_ROOM_H
#define EBB_REDIS_ROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* One limit on new memory: `limit` bytes of which `used` are taken. The
 * headroom is limit - used (0 when used >= limit). */
typedef struct ebb_redis_limit {
    const char *name;  /* "maxmemory", "the memory cgroup", ...         */
    const char *label; /* the setting: "maxmemory", "memory.max", ...   */
    uint64_t limit;
    uint64_t used;
} ebb_redis_limit;

/* Headroom of a limit: limit - used, or 0. */
uint64_t ebb_redis_limit_headroom(const ebb_redis_limit *limit);

/* ------------------------------------------------------------------------ */
/* Readers of the kernel's files (pure: no Redis, paths given)              */
/* ------------------------------------------------------------------------ */

/* Reads a file holding one unsigned decimal number or the word "max"
 * (cgroup v2's "no limit"). On success returns true with *value set, or
 * UINT64_MAX for "max". False when the file is missing or holds anything
 * else. */
bool ebb_redis_read_limit_file(const char *path, uint64_t *value);

/* Reads the value of `field` (e.g. "inactive_file") in a file of
 * "name value" lines such as memory.stat. False when absent. */
bool ebb_redis_read_stat_field(const char *path, const char *field,
                               uint64_t *value);

/* The path (starting with '/') of the process's memory cgroup in a
 * /proc/<pid>/cgroup file: the v1 line whose controllers include "memory"
 * when v1 is true, otherwise the v2 line "0::<path>". False when absent or
 * when the path does not fit in size bytes. */
bool ebb_redis_cgroup_path(const char *proc_cgroup, bool v1, char *out,
                           size_t size);

/* The tightest memory-cgroup limit of the process whose /proc/<pid>/cgroup
 * is proc_cgroup, with the cgroup file systems mounted under root (normally
 * "/sys/fs/cgroup"): cgroup v1 when root/memory exists (memory.limit_in_bytes
 * and memory.usage_in_bytes), otherwise v2 (memory.max and memory.current).
 * Every directory from the process's cgroup up to the root of the hierarchy
 * is read (a directory that does not exist, as in a container that sees its
 * own cgroup as the root, is skipped) and the smallest headroom wins. Usage
 * excludes inactive file pages (reclaimable page cache, from memory.stat).
 * Returns true with *out set when a finite limit was found; false when there
 * is no memory cgroup or no limit. */
bool ebb_redis_cgroup_limit(const char *proc_cgroup, const char *root,
                            ebb_redis_limit *out);

/* The address-space limit: rlimit (RLIMIT_AS's soft limit; UINT64_MAX or
 * RLIM_INFINITY for none) against the process's size, the first field of
 * statm (pages of page_size bytes). False when there is no limit or statm
 * cannot be read. */
bool ebb_redis_address_space_limit(const char *statm, uint64_t rlimit,
                                   uint64_t page_size, ebb_redis_limit *out);

/* The host's memory from a /proc/meminfo file: MemTotal, of which
 * MemTotal - MemAvailable is used. False when unreadable. */
bool ebb_redis_host_memory_limit(const char *meminfo, ebb_redis_limit *out);

/* Of count limits, the one with the least headroom (NULL when count is 0). */
const ebb_redis_limit *ebb_redis_tightest_limit(const ebb_redis_limit *limits,
                                                size_t count);

/* Writes "<family>: the filter needs <size> but <name> leaves <headroom>
 * (<label> <limit>, used <used>)" (sizes as "336.0 MB": units of 2^20,
 * as Redis's own "100mb"), without the "ERR " prefix, into buf. */
void ebb_redis_format_refusal(char *buf, size_t size, const char *family,
                              uint64_t bytes, const ebb_redis_limit *limit);

/* The size jemalloc gives a block of `bytes`: above 16 KiB, rounded up to
 * its size classes, four per doubling (a block in (2^n, 2^(n+1)] takes a
 * multiple of 2^(n-2)); what used_memory grows by. */
size_t ebb_redis_jemalloc_size(size_t bytes);

/* Bytes as "95.2 MB" (B, KB, MB, GB, TB in powers of 1024). */
void ebb_redis_format_bytes(char *buf, size_t size, uint64_t bytes);

/* ------------------------------------------------------------------------ */
/* The check (Redis)                                                        */
/* ------------------------------------------------------------------------ */

/* Every limit that applies to this server now (maxmemory from the server's
 * INFO, then the system's) into limits (room for 4); returns how many. */
size_t ebb_redis_current_limits(RedisModuleCtx *ctx, ebb_redis_limit *limits);

/* True when a new allocation of `bytes` for a filter of `family` ("APBF",
 * "TLBF") fits every limit, or when the command comes from the primary or
 * the AOF (never refused there). Otherwise replies
 *   "ERR <family>: the filter needs 336.0 MB but maxmemory leaves 95.2 MB
 *    (maxmemory 100.0 MB, used 4.8 MB)"
 * naming the tightest limit, and returns false. Also false (after replying)
 * when the kernel would not map `bytes` now (the probe below). `bytes` is
 * the library's count; on a jemalloc server it is rounded up to jemalloc's
 * size classes first (ebb_redis_jemalloc_size), what the filter will
 * really take. */
bool ebb_redis_room_check(RedisModuleCtx *ctx, const char *family,
                          size_t bytes);

/* The check of ebb_redis_room_check without its reply, whatever the
 * command's origin: true when `bytes` do not fit, with the reason (no
 * "ERR " prefix) in message. */
bool ebb_redis_room_refused(RedisModuleCtx *ctx, const char *family,
                            size_t bytes, char *message, size_t size);

/* True when the kernel grants a private anonymous mapping the size of what
 * calloc of `bytes` maps (jemalloc's size class plus one page) and 4 MiB
 * for its metadata, now (mmap and munmap at once, touching no page), under
 * RLIMIT_AS and the overcommit policy. */
bool ebb_redis_mapping_probe(size_t bytes);

#endif /* EBB_REDIS_ROOM_H */
