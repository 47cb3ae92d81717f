/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * room.c: the room a new filter has (room.h, docs/redis.md "Memory
 * limits").
 *
 * Why every limit: a filter's bits are allocated at once and filled later.
 * Allocation itself touches no page (zeroed pages come from the kernel on
 * first write), so nothing fails at RESERVE: the server dies later, when the
 * filter fills, killed by the kernel (cgroup, host) or aborted by the
 * allocator (RLIMIT_AS). maxmemory is Redis's own budget, which a single
 * allocation of a module bypasses. So each is checked before allocating,
 * with the numbers the operator sees in the error:
 *
 *   maxmemory        INFO memory: maxmemory, used_memory minus
 *                    mem_not_counted_for_evict (what eviction compares);
 *                    with an eviction policy only maxmemory itself bounds
 *                    a filter (the rest can be evicted);
 *   memory cgroup    v2 memory.max - memory.current, v1
 *                    memory.limit_in_bytes - memory.usage_in_bytes, each
 *                    less its inactive file pages (page cache the kernel
 *                    reclaims first), the tightest from the process's
 *                    cgroup up to the hierarchy's root;
 *   address space    RLIMIT_AS - statm's size;
 *   host memory      MemTotal, of which MemTotal - MemAvailable is used.
 *
 * The file readers take paths, so the unit test runs them on fake trees.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* getline, MAP_ANONYMOUS */
#endif
#include "room.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* A v1 limit at or above this means "no limit" (the kernel reports
 * PAGE_COUNTER_MAX pages, about 2^63 bytes). */
#define CGROUP_V1_UNLIMITED (UINT64_C(1) << 62)

uint64_t ebb_redis_limit_headroom(const ebb_redis_limit *limit)
{
    return limit->used < limit->limit ? limit->limit - limit->used : 0;
}

/* ------------------------------------------------------------------------ */
/* Readers                                                                  */
/* ------------------------------------------------------------------------ */

/* Parses a decimal unsigned number that is all of text (after trimming
 * trailing white space). */
static bool parse_decimal(const char *text, uint64_t *value)
{
    if (!isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long parsed = strtoull(text, &end, 10);
    if (errno != 0)
        return false;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return false;
    *value = (uint64_t)parsed;
    return true;
}

bool ebb_redis_read_limit_file(const char *path, uint64_t *value)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return false;
    char text[64];
    bool ok = fgets(text, sizeof text, file) != NULL;
    fclose(file);
    if (!ok)
        return false;
    if (strncmp(text, "max", 3) == 0 &&
        (text[3] == '\0' || isspace((unsigned char)text[3]))) {
        *value = UINT64_MAX;
        return true;
    }
    return parse_decimal(text, value);
}

bool ebb_redis_read_stat_field(const char *path, const char *field,
                               uint64_t *value)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return false;
    size_t field_len = strlen(field);
    char *line = NULL;
    size_t capacity = 0;
    bool found = false;
    while (!found && getline(&line, &capacity, file) > 0)
        if (strncmp(line, field, field_len) == 0 &&
            line[field_len] == ' ')
            found = parse_decimal(line + field_len + 1, value);
    free(line);
    fclose(file);
    return found;
}

/* True when the comma-separated list [list, list + len) holds word. */
static bool list_has(const char *list, size_t len, const char *word)
{
    size_t word_len = strlen(word);
    const char *end = list + len;
    while (list < end) {
        const char *comma = memchr(list, ',', (size_t)(end - list));
        const char *item_end = comma != NULL ? comma : end;
        if ((size_t)(item_end - list) == word_len &&
            memcmp(list, word, word_len) == 0)
            return true;
        list = item_end + 1;
    }
    return false;
}

bool ebb_redis_cgroup_path(const char *proc_cgroup, bool v1, char *out,
                           size_t size)
{
    FILE *file = fopen(proc_cgroup, "r");
    if (file == NULL)
        return false;
    char *line = NULL;
    size_t capacity = 0;
    bool found = false;
    ssize_t len;
    while (!found && (len = getline(&line, &capacity, file)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        /* "hierarchy-id:controllers:path" */
        char *first = strchr(line, ':');
        char *second = first == NULL ? NULL : strchr(first + 1, ':');
        if (second == NULL || second[1] != '/')
            continue;
        size_t controllers_len = (size_t)(second - first - 1);
        bool match = v1 ? list_has(first + 1, controllers_len, "memory")
                        : first - line == 1 && line[0] == '0' &&
                              controllers_len == 0;
        if (match && strlen(second + 1) < size) {
            strcpy(out, second + 1);
            found = true;
        }
    }
    free(line);
    fclose(file);
    return found;
}

/* The files of one cgroup version. */
typedef struct cgroup_files {
    const char *limit;    /* memory.max / memory.limit_in_bytes         */
    const char *usage;    /* memory.current / memory.usage_in_bytes     */
    const char *inactive; /* memory.stat field of reclaimable file pages */
} cgroup_files;

static const cgroup_files CGROUP_V1 = {
    "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"};
static const cgroup_files CGROUP_V2 = {"memory.max", "memory.current",
                                       "inactive_file"};

/* "<dir>/<name>" into path (PATH_BYTES); false when it does not fit. */
#define PATH_BYTES 4096
static bool join_path(char *path, const char *dir, const char *name)
{
    int len = snprintf(path, PATH_BYTES, "%s/%s", dir, name);
    return len > 0 && len < PATH_BYTES;
}

/* The limit of the cgroup directory dir, if it has a finite one. */
static bool cgroup_dir_limit(const char *dir, const cgroup_files *files,
                             ebb_redis_limit *out)
{
    char path[PATH_BYTES];
    uint64_t limit, usage, inactive = 0;
    if (!join_path(path, dir, files->limit) ||
        !ebb_redis_read_limit_file(path, &limit) ||
        limit >= CGROUP_V1_UNLIMITED)
        return false;
    if (!join_path(path, dir, files->usage) ||
        !ebb_redis_read_limit_file(path, &usage))
        return false;
    if (join_path(path, dir, "memory.stat") &&
        ebb_redis_read_stat_field(path, files->inactive, &inactive) &&
        inactive < usage)
        usage -= inactive;
    out->name = "the memory cgroup";
    out->label = files->limit;
    out->limit = limit;
    out->used = usage;
    return true;
}

bool ebb_redis_cgroup_limit(const char *proc_cgroup, const char *root,
                            ebb_redis_limit *out)
{
    char base[PATH_BYTES], cgroup[PATH_BYTES], dir[2 * PATH_BYTES];
    struct stat info;
    snprintf(base, sizeof base, "%s/memory", root);
    bool v1 = stat(base, &info) == 0 && S_ISDIR(info.st_mode);
    const cgroup_files *files = v1 ? &CGROUP_V1 : &CGROUP_V2;
    if (!v1)
        snprintf(base, sizeof base, "%s", root);
    if (!ebb_redis_cgroup_path(proc_cgroup, v1, cgroup, sizeof cgroup))
        return false;
    bool found = false;
    /* From the process's cgroup up to the root ("" after the last '/'). */
    for (;;) {
        snprintf(dir, sizeof dir, "%s%s", base, cgroup);
        ebb_redis_limit here;
        if (cgroup_dir_limit(dir, files, &here) &&
            (!found || ebb_redis_limit_headroom(&here) <
                           ebb_redis_limit_headroom(out))) {
            *out = here;
            found = true;
        }
        char *slash = strrchr(cgroup, '/');
        if (slash == NULL)
            break;
        *slash = '\0';
    }
    return found;
}

bool ebb_redis_address_space_limit(const char *statm, uint64_t rlimit,
                                   uint64_t page_size, ebb_redis_limit *out)
{
    if (rlimit == UINT64_MAX || rlimit == (uint64_t)RLIM_INFINITY)
        return false;
    FILE *file = fopen(statm, "r");
    if (file == NULL)
        return false;
    unsigned long long pages;
    bool ok = fscanf(file, "%llu", &pages) == 1;
    fclose(file);
    if (!ok)
        return false;
    out->name = "the address-space limit";
    out->label = "RLIMIT_AS";
    out->limit = rlimit;
    out->used = (uint64_t)pages * page_size;
    return true;
}

bool ebb_redis_host_memory_limit(const char *meminfo, ebb_redis_limit *out)
{
    uint64_t total_kb = 0, available_kb = 0;
    /* The fields read "MemTotal:       24000000 kB". */
    FILE *file = fopen(meminfo, "r");
    if (file == NULL)
        return false;
    char *line = NULL;
    size_t capacity = 0;
    int found = 0;
    while (found != 3 && getline(&line, &capacity, file) > 0) {
        unsigned long long kb;
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
            total_kb = kb;
            found |= 1;
        } else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            available_kb = kb;
            found |= 2;
        }
    }
    free(line);
    fclose(file);
    if (found != 3)
        return false;
    out->name = "the host's memory";
    out->label = "MemTotal";
    out->limit = total_kb * 1024u;
    out->used = available_kb < total_kb ? (total_kb - available_kb) * 1024u
                                        : 0;
    return true;
}

const ebb_redis_limit *ebb_redis_tightest_limit(const ebb_redis_limit *limits,
                                                size_t count)
{
    const ebb_redis_limit *tightest = NULL;
    for (size_t i = 0; i < count; i++)
        if (tightest == NULL || ebb_redis_limit_headroom(&limits[i]) <
                                    ebb_redis_limit_headroom(tightest))
            tightest = &limits[i];
    return tightest;
}

void ebb_redis_format_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *const UNITS[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
    if (bytes < 1024u) {
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
        return;
    }
    double value = (double)bytes / 1024.0;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < sizeof UNITS / sizeof UNITS[0]) {
        value /= 1024.0;
        unit++;
    }
    snprintf(buf, size, "%.1f %s", value, UNITS[unit]);
}

void ebb_redis_format_refusal(char *buf, size_t size, const char *family,
                              uint64_t bytes, const ebb_redis_limit *limit)
{
    char need[32], room[32], total[32], used[32];
    ebb_redis_format_bytes(need, sizeof need, bytes);
    ebb_redis_format_bytes(room, sizeof room,
                           ebb_redis_limit_headroom(limit));
    ebb_redis_format_bytes(total, sizeof total, limit->limit);
    ebb_redis_format_bytes(used, sizeof used, limit->used);
    snprintf(buf, size,
             "%s: the filter needs %s but %s leaves %s (%s %s, used %s)",
             family, need, limit->name, room, limit->label, total, used);
}

/* What ebb_redis_mapping_probe asks beyond the block: room for jemalloc's
 * metadata mappings. */
#define PROBE_SLACK ((size_t)4 << 20)

bool ebb_redis_mapping_probe(size_t bytes)
{
    if (bytes == 0)
        return true;
    /* jemalloc maps a large block's size class plus one page (its
     * large_pad), and may map metadata beside it (its base blocks): with
     * the address space capped a few MB above the server's size, a 1.3 MB
     * block once passed a probe of its own size and aborted the server in
     * Calloc (tests/redis/spectral.sh, 1 run in 5). The probe asks for
     * PROBE_SLACK more, so a refusal comes a little early rather than as
     * an abort. */
    bytes = ebb_redis_jemalloc_size(bytes);
    long page = sysconf(_SC_PAGESIZE);
    size_t pad = (page > 0 ? (size_t)page : 4096u) + PROBE_SLACK;
    if (bytes > SIZE_MAX - pad)
        return false;
    bytes += pad;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return false;
    munmap(map, bytes);
    return true;
}

/* ------------------------------------------------------------------------ */
/* The check                                                                */
/* ------------------------------------------------------------------------ */

size_t ebb_redis_jemalloc_size(size_t bytes)
{
    if (bytes <= ((size_t)16 << 10) || bytes > SIZE_MAX / 4)
        return bytes;
    /* bytes in (2^n, 2^(n+1)]: classes 2^(n-2) apart. */
    unsigned n = 0;
    while (((size_t)2 << n) < bytes)
        n++;
    size_t spacing = (size_t)1 << (n - 2);
    if (bytes > SIZE_MAX - spacing)
        return bytes;
    return (bytes + spacing - 1) / spacing * spacing;
}

/* maxmemory from the server's INFO memory into *out, when set (true);
 * *jemalloc: whether the allocator (mem_allocator) is jemalloc, whose size
 * classes a large block is rounded up to; *untouched: the bytes allocated
 * but not resident (used_memory above used_memory_rss), which the kernel's
 * counts (cgroup usage, MemAvailable) do not see yet. */
static bool server_memory(RedisModuleCtx *ctx, ebb_redis_limit *out,
                          bool *jemalloc, uint64_t *untouched)
{
    *jemalloc = false;
    *untouched = 0;
    if (RedisModule_GetServerInfo == NULL)
        return false;
    RedisModuleServerInfoData *info =
        RedisModule_GetServerInfo(ctx, "memory");
    if (info == NULL)
        return false;
    int err_max = 0, err_used = 0, err_excluded = 0;
    uint64_t maxmemory =
        RedisModule_ServerInfoGetFieldUnsigned(info, "maxmemory", &err_max);
    uint64_t used =
        RedisModule_ServerInfoGetFieldUnsigned(info, "used_memory", &err_used);
    uint64_t excluded = RedisModule_ServerInfoGetFieldUnsigned(
        info, "mem_not_counted_for_evict", &err_excluded);
    int err_rss = 0;
    uint64_t rss = RedisModule_ServerInfoGetFieldUnsigned(
        info, "used_memory_rss", &err_rss);
    if (!err_used && !err_rss && used > rss)
        *untouched = used - rss;
    const char *policy =
        RedisModule_ServerInfoGetFieldC(info, "maxmemory_policy");
    const char *allocator =
        RedisModule_ServerInfoGetFieldC(info, "mem_allocator");
    bool evicts = policy != NULL && strcmp(policy, "noeviction") != 0;
    *jemalloc = allocator != NULL && strncmp(allocator, "jemalloc", 8) == 0;
    RedisModule_FreeServerInfo(ctx, info);
    if (err_max || err_used || maxmemory == 0)
        return false;
    if (!err_excluded && excluded < used)
        used -= excluded;
    out->name = "maxmemory";
    out->label = "maxmemory";
    out->limit = maxmemory;
    /* Under an eviction policy the server makes room by evicting keys. */
    out->used = evicts ? 0 : used;
    return true;
}

/* The kernel's view of a limit plus what the server allocated and has not
 * touched yet: filters come zeroed from calloc and fill over time, so
 * every one must be counted from its creation, or N of them would each
 * pass a check against memory they will all take. */
static void count_untouched(ebb_redis_limit *limit, uint64_t untouched)
{
    if (untouched > UINT64_MAX - limit->used)
        limit->used = UINT64_MAX;
    else
        limit->used += untouched;
}

/* ebb_redis_current_limits, and whether the allocator is jemalloc. */
static size_t collect_limits(RedisModuleCtx *ctx, ebb_redis_limit *limits,
                             bool *jemalloc)
{
    size_t count = 0;
    uint64_t untouched;
    if (server_memory(ctx, &limits[count], jemalloc, &untouched))
        count++;
    if (ebb_redis_cgroup_limit("/proc/self/cgroup", "/sys/fs/cgroup",
                               &limits[count]))
        count_untouched(&limits[count++], untouched);
    struct rlimit as;
    long page = sysconf(_SC_PAGESIZE);
    if (getrlimit(RLIMIT_AS, &as) == 0 && page > 0 &&
        ebb_redis_address_space_limit("/proc/self/statm",
                                      as.rlim_cur == RLIM_INFINITY
                                          ? UINT64_MAX
                                          : (uint64_t)as.rlim_cur,
                                      (uint64_t)page, &limits[count]))
        count++;
    if (ebb_redis_host_memory_limit("/proc/meminfo", &limits[count]))
        count_untouched(&limits[count++], untouched);
    return count;
}

size_t ebb_redis_current_limits(RedisModuleCtx *ctx, ebb_redis_limit *limits)
{
    bool jemalloc;
    return collect_limits(ctx, limits, &jemalloc);
}

bool ebb_redis_room_refused(RedisModuleCtx *ctx, const char *family,
                            size_t bytes, char *message, size_t size)
{
    ebb_redis_limit limits[4];
    bool jemalloc;
    size_t count = collect_limits(ctx, limits, &jemalloc);
    /* What the filter will take: its blocks in the allocator's size
     * classes (up to 25% more than asked, as used_memory counts them). */
    if (jemalloc)
        bytes = ebb_redis_jemalloc_size(bytes);
    const ebb_redis_limit *refusing = NULL;
    for (size_t i = 0; i < count; i++)
        if ((uint64_t)bytes > ebb_redis_limit_headroom(&limits[i]) &&
            (refusing == NULL || ebb_redis_limit_headroom(&limits[i]) <
                                     ebb_redis_limit_headroom(refusing)))
            refusing = &limits[i];
    if (refusing != NULL) {
        ebb_redis_format_refusal(message, size, family, bytes, refusing);
        return true;
    }
    if (!ebb_redis_mapping_probe(bytes)) {
        char need[32];
        ebb_redis_format_bytes(need, sizeof need, bytes);
        snprintf(message, size,
                 "%s: the filter needs %s but the kernel refuses a "
                 "mapping of that size (vm.overcommit_memory, address "
                 "space)",
                 family, need);
        return true;
    }
    return false;
}

bool ebb_redis_room_check(RedisModuleCtx *ctx, const char *family,
                          size_t bytes)
{
    if (RedisModule_GetContextFlags(ctx) &
        (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING))
        return true;
    char message[256];
    memcpy(message, "ERR ", 4);
    if (!ebb_redis_room_refused(ctx, family, bytes, message + 4,
                                sizeof message - 4))
        return true;
    RedisModule_ReplyWithError(ctx, message);
    return false;
}
