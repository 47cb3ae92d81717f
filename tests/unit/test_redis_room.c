/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_redis_room.c: the Redis module's memory limits (redis/room.c)
 * on fake kernel trees in a temporary directory: cgroup v1 and v2, nested
 * cgroups, "max", missing files, statm, meminfo; the refusal's wording; and
 * ebb_redis_room_check with a fake server (context flags, INFO memory,
 * error replies).
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* mkdtemp */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../redis/room.h"

/* ------------------------------------------------------------------------ */
/* A fake server: the API pointers room.c calls                             */
/* ------------------------------------------------------------------------ */

struct RedisModuleServerInfoData {
    unsigned long long maxmemory, used_memory;
    const char *policy;
    const char *allocator;
};

static int fake_flags;
static bool fake_has_info;
static struct RedisModuleServerInfoData fake_info;
static char fake_reply[512];

static int fake_get_context_flags(RedisModuleCtx *ctx)
{
    (void)ctx;
    return fake_flags;
}

static RedisModuleServerInfoData *fake_get_server_info(RedisModuleCtx *ctx,
                                                       const char *section)
{
    (void)ctx;
    assert_string_equal(section, "memory");
    return fake_has_info ? &fake_info : NULL;
}

static void fake_free_server_info(RedisModuleCtx *ctx,
                                  RedisModuleServerInfoData *data)
{
    (void)ctx;
    assert_ptr_equal(data, &fake_info);
}

static unsigned long long fake_field_unsigned(RedisModuleServerInfoData *data,
                                              const char *field, int *err)
{
    *err = 0;
    if (strcmp(field, "maxmemory") == 0)
        return data->maxmemory;
    if (strcmp(field, "used_memory") == 0)
        return data->used_memory;
    *err = 1;
    return 0;
}

static const char *fake_field_c(RedisModuleServerInfoData *data,
                                const char *field)
{
    if (strcmp(field, "mem_allocator") == 0)
        return data->allocator;
    return strcmp(field, "maxmemory_policy") == 0 ? data->policy : NULL;
}

static int fake_reply_with_error(RedisModuleCtx *ctx, const char *err)
{
    (void)ctx;
    snprintf(fake_reply, sizeof fake_reply, "%s", err);
    return REDISMODULE_OK;
}

int (*RedisModule_GetContextFlags)(RedisModuleCtx *) = fake_get_context_flags;
RedisModuleServerInfoData *(*RedisModule_GetServerInfo)(
    RedisModuleCtx *, const char *) = fake_get_server_info;
void (*RedisModule_FreeServerInfo)(RedisModuleCtx *,
                                   RedisModuleServerInfoData *) =
    fake_free_server_info;
unsigned long long (*RedisModule_ServerInfoGetFieldUnsigned)(
    RedisModuleServerInfoData *, const char *, int *) = fake_field_unsigned;
const char *(*RedisModule_ServerInfoGetFieldC)(RedisModuleServerInfoData *,
                                               const char *) = fake_field_c;
int (*RedisModule_ReplyWithError)(RedisModuleCtx *, const char *) =
    fake_reply_with_error;

/* ------------------------------------------------------------------------ */
/* Fake trees                                                               */
/* ------------------------------------------------------------------------ */

static char tree[256];

static int make_tree(void **state)
{
    (void)state;
    snprintf(tree, sizeof tree, "/tmp/ebb-limits-XXXXXX");
    return mkdtemp(tree) == NULL ? -1 : 0;
}

static int remove_tree(void **state)
{
    (void)state;
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", tree);
    return system(command) == 0 ? 0 : -1;
}

/* tree/relative, in one of 4 static buffers (so a call can take two). */
static const char *at(const char *relative)
{
    static char paths[4][512];
    static unsigned next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", tree, relative);
    return path;
}

/* Creates tree/dir and its parents. */
static void make_dir(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tree, dir);
    for (char *p = path + strlen(tree) + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static void write_file(const char *relative, const char *text)
{
    FILE *file = fopen(at(relative), "w");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
}

/* ------------------------------------------------------------------------ */
/* Readers                                                                  */
/* ------------------------------------------------------------------------ */

static void test_limit_file(void **state)
{
    (void)state;
    uint64_t value = 7;
    write_file("number", "1073741824\n");
    assert_true(ebb_redis_read_limit_file(at("number"), &value));
    assert_int_equal(value, UINT64_C(1073741824));
    write_file("max", "max\n");
    assert_true(ebb_redis_read_limit_file(at("max"), &value));
    assert_true(value == UINT64_MAX);
    write_file("word", "maximum\n");
    assert_false(ebb_redis_read_limit_file(at("word"), &value));
    write_file("negative", "-1\n");
    assert_false(ebb_redis_read_limit_file(at("negative"), &value));
    write_file("empty", "");
    assert_false(ebb_redis_read_limit_file(at("empty"), &value));
    write_file("trailing", "12 kB\n");
    assert_false(ebb_redis_read_limit_file(at("trailing"), &value));
    assert_false(ebb_redis_read_limit_file(at("missing"), &value));
}

static void test_stat_field(void **state)
{
    (void)state;
    uint64_t value = 0;
    write_file("memory.stat", "anon 5\ninactive_file_x 9\n"
                              "inactive_file 100\nactive_file 7\n"
                              "total_inactive_file 300\n");
    assert_true(ebb_redis_read_stat_field(at("memory.stat"), "inactive_file",
                                          &value));
    assert_int_equal(value, 100);
    assert_true(ebb_redis_read_stat_field(at("memory.stat"),
                                          "total_inactive_file", &value));
    assert_int_equal(value, 300);
    assert_false(ebb_redis_read_stat_field(at("memory.stat"), "file",
                                           &value));
    assert_false(ebb_redis_read_stat_field(at("none.stat"), "anon", &value));
}

static void test_cgroup_path(void **state)
{
    (void)state;
    char path[64];
    write_file("cgroup", "12:memory:/a/b\n11:cpu,cpuacct:/x\n0::/u/v\n");
    assert_true(ebb_redis_cgroup_path(at("cgroup"), true, path, sizeof path));
    assert_string_equal(path, "/a/b");
    assert_true(ebb_redis_cgroup_path(at("cgroup"), false, path,
                                      sizeof path));
    assert_string_equal(path, "/u/v");
    write_file("cgroup", "5:cpuacct,memory:/c\n4:memoryx:/d\n");
    assert_true(ebb_redis_cgroup_path(at("cgroup"), true, path, sizeof path));
    assert_string_equal(path, "/c");
    assert_false(ebb_redis_cgroup_path(at("cgroup"), false, path,
                                       sizeof path));
    write_file("cgroup", "4:memoryx:/d\n3:pids:/e\n");
    assert_false(ebb_redis_cgroup_path(at("cgroup"), true, path, sizeof path));
    /* A path longer than the buffer is not truncated into another. */
    write_file("cgroup", "0::/a-long-cgroup-name\n");
    assert_false(ebb_redis_cgroup_path(at("cgroup"), false, path, 8));
    assert_false(ebb_redis_cgroup_path(at("no-cgroup"), false, path,
                                       sizeof path));
}

static void test_cgroup_v2_nested(void **state)
{
    (void)state;
    ebb_redis_limit limit;
    make_dir("v2/a/b");
    write_file("v2/cgroup.controllers", "cpu memory pids\n");
    write_file("v2/a/b/memory.max", "1000000\n");
    write_file("v2/a/b/memory.current", "300000\n");
    write_file("v2/a/b/memory.stat", "anon 200000\ninactive_file 100000\n");
    write_file("v2/a/memory.max", "500000\n");
    write_file("v2/a/memory.current", "450000\n");
    write_file("proc-v2", "0::/a/b\n");
    /* /a/b leaves 1000000 - (300000 - 100000) = 800000; /a leaves 50000. */
    assert_true(ebb_redis_cgroup_limit(at("proc-v2"), at("v2"), &limit));
    assert_int_equal(limit.limit, 500000);
    assert_int_equal(limit.used, 450000);
    assert_string_equal(limit.label, "memory.max");
    assert_int_equal(ebb_redis_limit_headroom(&limit), 50000);
    /* The parent without a limit: the child's, less its inactive files. */
    write_file("v2/a/memory.max", "max\n");
    assert_true(ebb_redis_cgroup_limit(at("proc-v2"), at("v2"), &limit));
    assert_int_equal(limit.limit, 1000000);
    assert_int_equal(limit.used, 200000);
    /* "max" everywhere: no limit. */
    write_file("v2/a/b/memory.max", "max\n");
    assert_false(ebb_redis_cgroup_limit(at("proc-v2"), at("v2"), &limit));
    /* A limit without its usage file is not a limit we can measure. */
    write_file("v2/a/memory.max", "4096\n");
    remove(at("v2/a/memory.current"));
    assert_false(ebb_redis_cgroup_limit(at("proc-v2"), at("v2"), &limit));
}

static void test_cgroup_v1(void **state)
{
    (void)state;
    ebb_redis_limit limit;
    make_dir("v1/memory/redis");
    make_dir("v1/cpu");
    write_file("proc-v1", "9:cpu,cpuacct:/redis\n7:memory:/redis\n0::/\n");
    /* The kernel's "unlimited" (PAGE_COUNTER_MAX pages) is no limit. */
    write_file("v1/memory/redis/memory.limit_in_bytes",
               "9223372036854771712\n");
    write_file("v1/memory/redis/memory.usage_in_bytes", "123\n");
    write_file("v1/memory/memory.limit_in_bytes", "9223372036854771712\n");
    write_file("v1/memory/memory.usage_in_bytes", "5000\n");
    assert_false(ebb_redis_cgroup_limit(at("proc-v1"), at("v1"), &limit));
    write_file("v1/memory/redis/memory.limit_in_bytes", "1073741824\n");
    write_file("v1/memory/redis/memory.usage_in_bytes", "104857600\n");
    write_file("v1/memory/redis/memory.stat",
               "cache 10\ninactive_file 5\ntotal_inactive_file 4857600\n");
    assert_true(ebb_redis_cgroup_limit(at("proc-v1"), at("v1"), &limit));
    assert_int_equal(limit.limit, UINT64_C(1073741824));
    assert_int_equal(limit.used, UINT64_C(100000000));
    assert_string_equal(limit.label, "memory.limit_in_bytes");
    assert_string_equal(limit.name, "the memory cgroup");
}

/* In a container the process's path (from the host's view) may not exist
 * under the mount, whose root is the container's own cgroup. */
static void test_cgroup_container_root(void **state)
{
    (void)state;
    ebb_redis_limit limit;
    make_dir("c1/memory");
    write_file("proc-c1", "4:memory:/docker/0123abcd\n");
    write_file("c1/memory/memory.limit_in_bytes", "268435456\n");
    write_file("c1/memory/memory.usage_in_bytes", "68435456\n");
    assert_true(ebb_redis_cgroup_limit(at("proc-c1"), at("c1"), &limit));
    assert_int_equal(limit.limit, UINT64_C(268435456));
    assert_int_equal(ebb_redis_limit_headroom(&limit), UINT64_C(200000000));
    /* No memory controller in the process's list: none. */
    write_file("proc-c1", "4:cpu:/docker/0123abcd\n");
    assert_false(ebb_redis_cgroup_limit(at("proc-c1"), at("c1"), &limit));
    /* No cgroup file system at all. */
    assert_false(ebb_redis_cgroup_limit(at("proc-c1"), at("nothing"),
                                        &limit));
}

static void test_address_space(void **state)
{
    (void)state;
    ebb_redis_limit limit;
    write_file("statm", "1000 20 5 1 0 30 0\n");
    assert_true(ebb_redis_address_space_limit(at("statm"), 8000000, 4096,
                                              &limit));
    assert_int_equal(limit.used, 4096000);
    assert_int_equal(limit.limit, 8000000);
    assert_int_equal(ebb_redis_limit_headroom(&limit), 3904000);
    assert_string_equal(limit.label, "RLIMIT_AS");
    assert_false(ebb_redis_address_space_limit(at("statm"), UINT64_MAX, 4096,
                                               &limit));
    assert_false(ebb_redis_address_space_limit(at("no-statm"), 8000000,
                                               4096, &limit));
    /* Used beyond the limit (lowered after the fact): no headroom. */
    assert_true(ebb_redis_address_space_limit(at("statm"), 4096, 4096,
                                              &limit));
    assert_int_equal(ebb_redis_limit_headroom(&limit), 0);
}

static void test_host_memory(void **state)
{
    (void)state;
    ebb_redis_limit limit;
    write_file("meminfo", "MemTotal:       16000000 kB\n"
                          "MemFree:         1000000 kB\n"
                          "MemAvailable:   12000000 kB\n");
    assert_true(ebb_redis_host_memory_limit(at("meminfo"), &limit));
    assert_int_equal(limit.limit, UINT64_C(16000000) * 1024);
    assert_int_equal(limit.used, UINT64_C(4000000) * 1024);
    write_file("meminfo", "MemTotal:       16000000 kB\n");
    assert_false(ebb_redis_host_memory_limit(at("meminfo"), &limit));
}

/* ------------------------------------------------------------------------ */
/* Wording and the check                                                    */
/* ------------------------------------------------------------------------ */

#define MB (UINT64_C(1) << 20)

static void test_format(void **state)
{
    (void)state;
    char text[256];
    ebb_redis_format_bytes(text, sizeof text, 1023);
    assert_string_equal(text, "1023 B");
    ebb_redis_format_bytes(text, sizeof text, 336 * MB);
    assert_string_equal(text, "336.0 MB");
    ebb_redis_format_bytes(text, sizeof text, 3 * 1024 * MB + 512 * MB);
    assert_string_equal(text, "3.5 GB");
    ebb_redis_limit maxmemory = {"maxmemory", "maxmemory", 100 * MB,
                                 (uint64_t)(4.8 * (double)MB)};
    ebb_redis_format_refusal(text, sizeof text, "APBF", 336 * MB, &maxmemory);
    assert_string_equal(text, "APBF: the filter needs 336.0 MB but maxmemory "
                              "leaves 95.2 MB (maxmemory 100.0 MB, used 4.8 "
                              "MB)");
    ebb_redis_limit limits[3] = {{"a", "a", 100, 10},
                                 {"b", "b", 50, 45},
                                 {"c", "c", 10, 20}};
    assert_ptr_equal(ebb_redis_tightest_limit(limits, 2), &limits[1]);
    assert_ptr_equal(ebb_redis_tightest_limit(limits, 3), &limits[2]);
    assert_null(ebb_redis_tightest_limit(limits, 0));
}

static void test_room_check(void **state)
{
    (void)state;
    RedisModuleCtx *ctx = NULL;
    fake_has_info = true;
    fake_info = (struct RedisModuleServerInfoData){100 * MB, 5 * MB,
                                                   "noeviction", "libc"};
    /* A client call over maxmemory's headroom: refused, named. */
    fake_flags = 0;
    fake_reply[0] = '\0';
    assert_false(ebb_redis_room_check(ctx, "APBF", 336 * MB));
    assert_string_equal(fake_reply, "ERR APBF: the filter needs 336.0 MB but "
                                    "maxmemory leaves 95.0 MB (maxmemory "
                                    "100.0 MB, used 5.0 MB)");
    /* Within it: accepted, no reply. */
    fake_reply[0] = '\0';
    assert_true(ebb_redis_room_check(ctx, "APBF", 1 * MB));
    assert_string_equal(fake_reply, "");
    /* An eviction policy makes room: only maxmemory itself bounds it. */
    fake_info.policy = "allkeys-lru";
    assert_true(ebb_redis_room_check(ctx, "APBF", 99 * MB));
    assert_false(ebb_redis_room_check(ctx, "TLBF", 101 * MB));
    assert_non_null(strstr(fake_reply, "ERR TLBF: the filter needs 101.0 MB"));
    /* On jemalloc the filter takes its size class: 90 MB asks for 96 MB
     * (classes 16 MB apart between 64 and 128 MB), more than 95 MB. */
    fake_info.policy = "noeviction";
    assert_true(ebb_redis_room_check(ctx, "APBF", 90 * MB));
    fake_info.allocator = "jemalloc-5.3.0";
    assert_false(ebb_redis_room_check(ctx, "APBF", 90 * MB));
    assert_string_equal(fake_reply, "ERR APBF: the filter needs 96.0 MB but "
                                    "maxmemory leaves 95.0 MB (maxmemory "
                                    "100.0 MB, used 5.0 MB)");
    /* From the primary or the AOF: never refused, nothing replied. */
    fake_reply[0] = '\0';
    fake_flags = REDISMODULE_CTX_FLAGS_REPLICATED;
    assert_true(ebb_redis_room_check(ctx, "APBF", 336 * MB));
    fake_flags = REDISMODULE_CTX_FLAGS_LOADING;
    assert_true(ebb_redis_room_check(ctx, "APBF", SIZE_MAX / 2));
    assert_string_equal(fake_reply, "");
    /* Without maxmemory: the system's limits still refuse the absurd. */
    fake_flags = 0;
    fake_has_info = false;
    assert_false(ebb_redis_room_check(ctx, "APBF", SIZE_MAX / 2));
    assert_non_null(strstr(fake_reply, "ERR APBF: the filter needs "));
}

static void test_jemalloc_size(void **state)
{
    (void)state;
    assert_int_equal(ebb_redis_jemalloc_size(100), 100);
    assert_int_equal(ebb_redis_jemalloc_size(16384), 16384);
    assert_int_equal(ebb_redis_jemalloc_size(16385), 20480);
    assert_int_equal(ebb_redis_jemalloc_size(32768), 32768);
    assert_int_equal(ebb_redis_jemalloc_size(32769), 40960);
    /* Measured on Redis 7.0.15 (jemalloc 5.3.0): a window of 1e8 asks
     * 274.6 MB and takes 320 MB; 1e9 asks 2.6 GB and takes 3 GB. */
    assert_int_equal(ebb_redis_jemalloc_size(274600000), 320 * MB);
    assert_int_equal(ebb_redis_jemalloc_size(2746669000u), 3072 * MB);
    assert_int_equal(ebb_redis_jemalloc_size(3072 * MB), 3072 * MB);
    /* Beyond any allocation: unchanged, not overflowed. */
    assert_true(ebb_redis_jemalloc_size(SIZE_MAX) == SIZE_MAX);
    assert_true(ebb_redis_jemalloc_size(SIZE_MAX / 2) == SIZE_MAX / 2);
}

static void test_mapping_probe(void **state)
{
    (void)state;
    assert_true(ebb_redis_mapping_probe(1 << 20));
    /* More than a 64-bit process's address space. */
    assert_false(ebb_redis_mapping_probe(SIZE_MAX / 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_file),
        cmocka_unit_test(test_stat_field),
        cmocka_unit_test(test_cgroup_path),
        cmocka_unit_test(test_cgroup_v2_nested),
        cmocka_unit_test(test_cgroup_v1),
        cmocka_unit_test(test_cgroup_container_root),
        cmocka_unit_test(test_address_space),
        cmocka_unit_test(test_host_memory),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_room_check),
        cmocka_unit_test(test_jemalloc_size),
        cmocka_unit_test(test_mapping_probe),
    };
    return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
