/*
 * apbf_type.c: the APBF data type ("ebb-apbf-") and its commands.
 *
 *   APBF.RESERVE   key window [ERROR fp] [MAXNPWS f] [BLOCKED]
 *   APBF.ADD       key item [NOCREATE]             -> 1 new / 0 seen
 *   APBF.MADD      key item [item ...]             -> array of 1/0
 *   APBF.INSERT    key [NOCREATE] [WINDOW w] [ERROR fp] [MAXNPWS f]
 *                  [BLOCKED] ITEMS item [item ...] -> array of 1/0
 *   APBF.EXISTS    key item                        -> 1 / 0
 *   APBF.MEXISTS   key item [item ...]             -> array of 1/0
 *   APBF.INFO      key                             -> field/value pairs
 *   APBF.SCANDUMP  key iterator                    -> [iterator, data]
 *   APBF.LOADCHUNK key iterator data               -> OK
 *
 * The filter is deterministic (its answers depend only on the sequence of
 * adds), so writes replicate verbatim. A write that creates its key first
 * replicates an explicit APBF.RESERVE with the parameters it used, so a
 * replica or an AOF replay never depends on its own defaults.
 */
#include <limits.h>
#include <string.h>

#include "glue.h"

/* Defaults of a key created by ADD, MADD or INSERT (docs/redis.md). */
#define APBF_DEFAULT_WINDOW 1000000LL
#define APBF_DEFAULT_FP 0.01
/* BLOCKED: cache-line blocks with 4 bits set per block (for a window of a
 * million at 1%, k = 3 lines per add and less memory than plain slices). */
#define APBF_BLOCK_BITS EBB_APBF_BLOCK_LINE
#define APBF_BLOCK_HASHES 4u
/* Keys hashed at once by MADD, MEXISTS and INSERT. */
#define APBF_BATCH 64

static RedisModuleType *apbf_type;

/* ------------------------------------------------------------------------ */
/* The family table of glue.c                                               */
/* ------------------------------------------------------------------------ */

static size_t apbf_snapshot_size(const void *filter)
{
    return ebb_apbf_snapshot_size(filter);
}

static ebb_status apbf_save(const void *filter, void *buf, size_t capacity,
                            size_t *written)
{
    return ebb_apbf_save(filter, buf, capacity, written);
}

static ebb_status apbf_load(const void *buf, size_t len, void **out)
{
    ebb_apbf *filter;
    ebb_status status = ebb_apbf_load(buf, len, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

static size_t apbf_memory(const void *filter)
{
    return ebb_apbf_memory(filter);
}

static void apbf_destroy(void *filter) { ebb_apbf_destroy(filter); }

static const ebb_redis_family APBF = {
    .name = "APBF",
    .loadchunk_command = "APBF.LOADCHUNK",
    .type = &apbf_type,
    .snapshot_size = apbf_snapshot_size,
    .save = apbf_save,
    .load = apbf_load,
    .memory = apbf_memory,
    .destroy = apbf_destroy,
};

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct apbf_options {
    long long window;
    double fp;
    double max_npws; /* 0: no bound */
    bool blocked;
} apbf_options;

static const apbf_options APBF_DEFAULTS = {APBF_DEFAULT_WINDOW,
                                           APBF_DEFAULT_FP, 0.0, false};

/* Parses one creation option at argv[*i] (advancing *i past it). Returns
 * 1 when parsed, 0 when argv[*i] is not a creation option, -1 after
 * replying an error. */
static int apbf_parse_option(RedisModuleCtx *ctx, RedisModuleString **argv,
                             int argc, int *i, bool window_option,
                             apbf_options *options)
{
    RedisModuleString *name = argv[*i];
    if (ebb_redis_arg_is(name, "BLOCKED")) {
        options->blocked = true;
        *i += 1;
        return 1;
    }
    bool is_window = window_option && ebb_redis_arg_is(name, "WINDOW");
    bool is_error = ebb_redis_arg_is(name, "ERROR");
    bool is_npws = ebb_redis_arg_is(name, "MAXNPWS");
    if (!is_window && !is_error && !is_npws)
        return 0;
    if (*i + 1 >= argc) {
        RedisModule_WrongArity(ctx);
        return -1;
    }
    RedisModuleString *arg = argv[*i + 1];
    *i += 2;
    bool ok = is_window ? ebb_redis_parse_integer(ctx, arg, "window", 1,
                                                  LLONG_MAX, &options->window)
              : is_error
                  ? ebb_redis_parse_rate(ctx, arg, "error rate", &options->fp)
                  : ebb_redis_parse_positive(ctx, arg, "MAXNPWS", true,
                                             &options->max_npws);
    return ok ? 1 : -1;
}

/* A filter larger than the machine's memory is refused as too large (see
 * ebb_redis_physical_memory). */
static ebb_status apbf_create(const apbf_options *options, uint64_t seed,
                              ebb_apbf **out)
{
    ebb_apbf_params params;
    uint64_t window = (uint64_t)options->window;
    ebb_status status =
        options->blocked
            ? ebb_apbf_choose_blocked(window, options->fp, options->max_npws,
                                      APBF_BLOCK_BITS, APBF_BLOCK_HASHES,
                                      &params)
            : ebb_apbf_choose(window, options->fp, options->max_npws, &params);
    size_t bytes = 0;
    if (status == EBB_OK)
        status = ebb_apbf_params_memory(&params, &bytes);
    if (status == EBB_OK && bytes > ebb_redis_physical_memory())
        status = EBB_EOVERFLOW;
    if (status != EBB_OK)
        return status;
    return ebb_apbf_create(&params, seed, out);
}

/* Replicates the APBF.RESERVE that recreates a key exactly as created. */
static void apbf_replicate_reserve(RedisModuleCtx *ctx,
                                   RedisModuleString *keyname,
                                   const apbf_options *options)
{
    char fp[32], npws[32];
    ebb_redis_format_double(options->fp, fp, sizeof fp);
    ebb_redis_format_double(options->max_npws, npws, sizeof npws);
    if (options->blocked)
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slccccc", keyname,
                              options->window, "ERROR", fp, "MAXNPWS", npws,
                              "BLOCKED");
    else
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slcccc", keyname,
                              options->window, "ERROR", fp, "MAXNPWS", npws);
}

/* Opens keyname for adding: an existing APBF, or a new one created with
 * options unless nocreate. Returns false after replying an error. */
static bool apbf_open_for_add(RedisModuleCtx *ctx, RedisModuleString *keyname,
                              const apbf_options *options, bool nocreate,
                              RedisModuleKey **key, ebb_redis_value **value)
{
    if (!ebb_redis_open(ctx, keyname, REDISMODULE_WRITE, &APBF, key, value))
        return false;
    if (*value != NULL) {
        if (ebb_redis_value_ready(ctx, &APBF, *value))
            return true;
        RedisModule_CloseKey(*key);
        return false;
    }
    if (nocreate) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, "ERR no such key");
        return false;
    }
    ebb_apbf *filter;
    ebb_status status =
        apbf_create(options, ebb_redis_key_seed(keyname), &filter);
    if (status == EBB_OK && !ebb_redis_store_new(*key, &APBF, filter))
        status = EBB_ENOMEM;
    if (status != EBB_OK) {
        RedisModule_CloseKey(*key);
        ebb_redis_reply_status(ctx, APBF.name, status);
        return false;
    }
    *value = RedisModule_ModuleTypeGetValue(*key);
    apbf_replicate_reserve(ctx, keyname, options);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Adds and queries                                                         */
/* ------------------------------------------------------------------------ */

/* Replies 1 for each item not present before its add, 0 otherwise, in one
 * array. Items are hashed and applied APBF_BATCH at a time; the library's
 * check-and-add keeps the one-at-a-time order inside a batch. */
static void apbf_add_array(RedisModuleCtx *ctx, ebb_apbf *filter,
                           RedisModuleString **items, int count)
{
    const void *keys[APBF_BATCH];
    size_t lens[APBF_BATCH];
    ebb_hash128 hashes[APBF_BATCH];
    bool seen[APBF_BATCH];
    RedisModule_ReplyWithArray(ctx, count);
    for (int start = 0; start < count; start += APBF_BATCH) {
        size_t n = (size_t)(count - start < APBF_BATCH ? count - start
                                                       : APBF_BATCH);
        for (size_t i = 0; i < n; i++)
            keys[i] = RedisModule_StringPtrLen(items[start + (int)i], &lens[i]);
        ebb_apbf_hash_batch(filter, keys, lens, n, hashes);
        ebb_apbf_check_and_add_batch(filter, hashes, n, seen);
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, seen[i] ? 0 : 1);
    }
}

static void apbf_exists_array(RedisModuleCtx *ctx, const ebb_apbf *filter,
                              RedisModuleString **items, int count)
{
    const void *keys[APBF_BATCH];
    size_t lens[APBF_BATCH];
    ebb_hash128 hashes[APBF_BATCH];
    bool present[APBF_BATCH];
    RedisModule_ReplyWithArray(ctx, count);
    for (int start = 0; start < count; start += APBF_BATCH) {
        size_t n = (size_t)(count - start < APBF_BATCH ? count - start
                                                       : APBF_BATCH);
        if (filter == NULL) {
            for (size_t i = 0; i < n; i++)
                RedisModule_ReplyWithLongLong(ctx, 0);
            continue;
        }
        for (size_t i = 0; i < n; i++)
            keys[i] = RedisModule_StringPtrLen(items[start + (int)i], &lens[i]);
        ebb_apbf_hash_batch(filter, keys, lens, n, hashes);
        ebb_apbf_contains_batch(filter, hashes, n, present);
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, present[i] ? 1 : 0);
    }
}

/* The common tail of ADD, MADD and INSERT: open (maybe create), add, reply,
 * replicate. single: reply one integer instead of an array. */
static int apbf_add_command(RedisModuleCtx *ctx, RedisModuleString *keyname,
                            const apbf_options *options, bool nocreate,
                            RedisModuleString **items, int count, bool single)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!apbf_open_for_add(ctx, keyname, options, nocreate, &key, &value))
        return REDISMODULE_OK;
    ebb_apbf *filter = value->filter;
    ebb_redis_value_touch(value);
    if (single) {
        size_t len;
        const char *item = RedisModule_StringPtrLen(items[0], &len);
        ebb_hash128 hash = ebb_apbf_hash(filter, item, len);
        bool seen = ebb_apbf_contains_hash(filter, hash);
        ebb_apbf_add_hash(filter, hash);
        RedisModule_ReplyWithLongLong(ctx, seen ? 0 : 1);
    } else {
        apbf_add_array(ctx, filter, items, count);
    }
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* APBF.RESERVE key window [ERROR fp] [MAXNPWS f] [BLOCKED] */
static int apbf_reserve_command(RedisModuleCtx *ctx, RedisModuleString **argv,
                                int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    apbf_options options = APBF_DEFAULTS;
    if (!ebb_redis_parse_integer(ctx, argv[2], "window", 1, LLONG_MAX,
                                 &options.window))
        return REDISMODULE_OK;
    for (int i = 3; i < argc;) {
        int parsed = apbf_parse_option(ctx, argv, argc, &i, false, &options);
        if (parsed < 0)
            return REDISMODULE_OK;
        if (parsed == 0)
            return ebb_redis_reply_unknown_option(ctx, argv[i],
                                                  "APBF.RESERVE");
    }
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, argv[1], REDISMODULE_WRITE, &APBF, &key, &value))
        return REDISMODULE_OK;
    if (value != NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR key already exists");
    }
    ebb_apbf *filter;
    ebb_status status =
        apbf_create(&options, ebb_redis_key_seed(argv[1]), &filter);
    if (status == EBB_OK && !ebb_redis_store_new(key, &APBF, filter))
        status = EBB_ENOMEM;
    RedisModule_CloseKey(key);
    if (status != EBB_OK)
        return ebb_redis_reply_status(ctx, APBF.name, status);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* APBF.ADD key item [NOCREATE] */
static int apbf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 4)
        return RedisModule_WrongArity(ctx);
    bool nocreate = argc == 4;
    if (nocreate && !ebb_redis_arg_is(argv[3], "NOCREATE"))
        return ebb_redis_reply_unknown_option(ctx, argv[3], "APBF.ADD");
    return apbf_add_command(ctx, argv[1], &APBF_DEFAULTS, nocreate, argv + 2,
                            1, true);
}

/* APBF.MADD key item [item ...] */
static int apbf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    return apbf_add_command(ctx, argv[1], &APBF_DEFAULTS, false, argv + 2,
                            argc - 2, false);
}

/* APBF.INSERT key [NOCREATE] [WINDOW w] [ERROR fp] [MAXNPWS f] [BLOCKED]
 *             ITEMS item [item ...] */
static int apbf_insert(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    apbf_options options = APBF_DEFAULTS;
    bool nocreate = false;
    int i = 2;
    while (i < argc && !ebb_redis_arg_is(argv[i], "ITEMS")) {
        if (ebb_redis_arg_is(argv[i], "NOCREATE")) {
            nocreate = true;
            i++;
            continue;
        }
        int parsed = apbf_parse_option(ctx, argv, argc, &i, true, &options);
        if (parsed < 0)
            return REDISMODULE_OK;
        if (parsed == 0)
            return ebb_redis_reply_unknown_option(ctx, argv[i],
                                                  "APBF.INSERT");
    }
    if (i + 1 >= argc)
        return RedisModule_ReplyWithError(
            ctx, "ERR APBF.INSERT needs ITEMS followed by at least one item");
    return apbf_add_command(ctx, argv[1], &options, nocreate, argv + i + 1,
                            argc - i - 1, false);
}

/* Opens keyname for a query: *filter is NULL for a missing key. Returns
 * false after replying an error. */
static bool apbf_open_for_query(RedisModuleCtx *ctx,
                                RedisModuleString *keyname,
                                RedisModuleKey **key, const ebb_apbf **filter)
{
    ebb_redis_value *value;
    if (!ebb_redis_open(ctx, keyname, REDISMODULE_READ, &APBF, key, &value))
        return false;
    if (value != NULL && !ebb_redis_value_ready(ctx, &APBF, value)) {
        RedisModule_CloseKey(*key);
        return false;
    }
    *filter = value == NULL ? NULL : value->filter;
    return true;
}

/* APBF.EXISTS key item */
static int apbf_exists(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_apbf *filter;
    if (!apbf_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    bool present = false;
    if (filter != NULL) {
        size_t len;
        const char *item = RedisModule_StringPtrLen(argv[2], &len);
        present = ebb_apbf_contains(filter, item, len);
    }
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, present ? 1 : 0);
}

/* APBF.MEXISTS key item [item ...] */
static int apbf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_apbf *filter;
    if (!apbf_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    apbf_exists_array(ctx, filter, argv + 2, argc - 2);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* APBF.INFO key */
static int apbf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_apbf *filter;
    if (!apbf_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    if (filter == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR no such key");
    }
    ebb_apbf_stats stats;
    ebb_apbf_get_stats(filter, &stats);
    const ebb_apbf_params *p = &stats.params;
    long count = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    ebb_redis_info_integer(ctx, &count, "window", p->window);
    ebb_redis_info_integer(ctx, &count, "k", p->k);
    ebb_redis_info_integer(ctx, &count, "l", p->l);
    ebb_redis_info_integer(ctx, &count, "slice_bits", p->slice_bits);
    ebb_redis_info_integer(ctx, &count, "generation", p->generation);
    ebb_redis_info_double(ctx, &count, "fp", ebb_apbf_shape_fp(p));
    ebb_redis_info_double(ctx, &count, "npws", ebb_apbf_shape_npws(p));
    ebb_redis_info_integer(ctx, &count, "blocked", p->block_bits != 0);
    ebb_redis_info_integer(ctx, &count, "block_bits", p->block_bits);
    ebb_redis_info_integer(ctx, &count, "block_hashes", p->block_hashes);
    ebb_redis_info_integer(ctx, &count, "memory", stats.memory_bytes);
    ebb_redis_info_integer(ctx, &count, "insertions", stats.insertions);
    ebb_redis_info_integer(ctx, &count, "generations", stats.generations);
    ebb_redis_info_integer(ctx, &count, "in_generation",
                           stats.in_generation);
    ebb_redis_info_integer(ctx, &count, "current_slack",
                           stats.current_slack);
    RedisModule_ReplySetArrayLength(ctx, count);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int apbf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv,
                         int argc)
{
    return ebb_redis_scandump(&APBF, ctx, argv, argc);
}

static int apbf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    return ebb_redis_loadchunk(&APBF, ctx, argv, argc);
}

/* ------------------------------------------------------------------------ */
/* Data type                                                                */
/* ------------------------------------------------------------------------ */

static void *apbf_rdb_load(RedisModuleIO *io, int encver)
{
    return ebb_redis_rdb_load(&APBF, io, encver);
}

static void apbf_rdb_save(RedisModuleIO *io, void *value)
{
    ebb_redis_rdb_save(&APBF, io, value);
}

static void apbf_aof_rewrite(RedisModuleIO *io, RedisModuleString *key,
                             void *value)
{
    ebb_redis_aof_rewrite(&APBF, io, key, value);
}

static size_t apbf_mem_usage(const void *value)
{
    return ebb_redis_mem_usage(&APBF, value);
}

static void apbf_free(void *value) { ebb_redis_free(&APBF, value); }

static void *apbf_copy(RedisModuleString *fromkey, RedisModuleString *tokey,
                       const void *value)
{
    (void)fromkey;
    (void)tokey;
    return ebb_redis_copy(&APBF, value);
}

static const ebb_redis_command APBF_COMMANDS[] = {
    {"APBF.RESERVE", apbf_reserve_command, "write deny-oom"},
    {"APBF.ADD", apbf_add, "write deny-oom fast"},
    {"APBF.MADD", apbf_madd, "write deny-oom"},
    {"APBF.INSERT", apbf_insert, "write deny-oom"},
    {"APBF.EXISTS", apbf_exists, "readonly fast"},
    {"APBF.MEXISTS", apbf_mexists, "readonly fast"},
    {"APBF.INFO", apbf_info, "readonly fast"},
    {"APBF.SCANDUMP", apbf_scandump, "readonly deny-oom"},
    {"APBF.LOADCHUNK", apbf_loadchunk, "write deny-oom"},
};

int ebb_redis_apbf_register(RedisModuleCtx *ctx)
{
    RedisModuleTypeMethods methods;
    memset(&methods, 0, sizeof methods);
    methods.version = REDISMODULE_TYPE_METHOD_VERSION;
    methods.rdb_load = apbf_rdb_load;
    methods.rdb_save = apbf_rdb_save;
    methods.aof_rewrite = apbf_aof_rewrite;
    methods.mem_usage = apbf_mem_usage;
    methods.free = apbf_free;
    methods.copy = apbf_copy;
    /* Type names are exactly 9 characters. */
    apbf_type = RedisModule_CreateDataType(ctx, "ebb-apbf-",
                                           EBB_REDIS_ENCODING_VERSION,
                                           &methods);
    if (apbf_type == NULL)
        return REDISMODULE_ERR;
    return ebb_redis_create_commands(
        ctx, APBF_COMMANDS, sizeof APBF_COMMANDS / sizeof APBF_COMMANDS[0]);
}
