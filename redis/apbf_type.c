/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apbf_type.c: the APBF data type ("ebb-apbf-") and its commands.
 *
 *   APBF.RESERVE   key window [ERROR fp] [MAXNPWS f] [MAXACCESSES a]
 *                  [BLOCKED]
 *   APBF.ADD       key item [NOCREATE]             -> 1 new / 0 seen
 *   APBF.MADD      key item [item ...]             -> array of 1/0
 *   APBF.INSERT    key [NOCREATE] [WINDOW w] [ERROR fp] [MAXNPWS f]
 *                  [MAXACCESSES a]
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

#include "glue.h"
#include "snapshot_type.h"

/* Defaults of a key created by ADD, MADD or INSERT (docs/redis.md). */
#define APBF_DEFAULT_WINDOW 1000000LL
#define APBF_DEFAULT_FP 0.01
/* Every ADD answers "was it new" with a query, so the query's walk is most
 * of an ADD's cost: by default the shape is the least memory whose query
 * answering false reads at most 4 slices (or blocks) on average, not the
 * least memory outright (whose walk at 1% is ~16 slices). MAXACCESSES
 * changes it; docs/redis.md. */
#define APBF_DEFAULT_MAX_ACCESSES 4.0
/* BLOCKED: cache-line blocks with 4 bits set per block, and unless MAXNPWS
 * is given the library's blocked NPWS bound (EBB_APBF_BLOCKED_MAX_NPWS;
 * without it a million at 1% came out as k = l = 2, NPWS 0.53): for a window
 * of a million at 1%, k = 3 lines per add against 9 plain slices, for about
 * 9% more memory (docs/redis.md). */
#define APBF_BLOCK_BITS EBB_APBF_BLOCK_LINE
#define APBF_BLOCK_HASHES 4u
/* Keys hashed at once by MADD, MEXISTS and INSERT. */
#define APBF_BATCH 64

/* The family table APBF, the data-type callbacks and the handlers of
 * APBF.SCANDUMP and APBF.LOADCHUNK: persistence through the library's
 * snapshot (snapshot_type.h). */
EBB_REDIS_SNAPSHOT_FAMILY(apbf, APBF);

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct apbf_options {
    long long window;
    double fp;
    double max_npws;     /* 0: no bound; negative: not given (the default) */
    double max_accesses; /* expected reads of a false query */
    bool blocked;
} apbf_options;

static const apbf_options APBF_DEFAULTS = {
    APBF_DEFAULT_WINDOW, APBF_DEFAULT_FP, -1.0, APBF_DEFAULT_MAX_ACCESSES,
    false};

/* The NPWS bound a key is created with: MAXNPWS if given, otherwise none
 * for plain slices and EBB_APBF_BLOCKED_MAX_NPWS for BLOCKED (as `ebb dedup
 * --blocked` chooses). */
static double apbf_max_npws(const apbf_options *options)
{
    if (options->max_npws >= 0.0)
        return options->max_npws;
    return options->blocked ? EBB_APBF_BLOCKED_MAX_NPWS : 0.0;
}

/* An ebb_redis_option_parser (glue.h); opaque: the apbf_options. */
static int apbf_parse_option(RedisModuleCtx *ctx, RedisModuleString **argv,
                             int argc, int *i, bool window_option,
                             void *opaque)
{
    apbf_options *options = opaque;
    RedisModuleString *name = argv[*i];
    if (ebb_redis_arg_is(name, "BLOCKED")) {
        options->blocked = true;
        *i += 1;
        return 1;
    }
    bool is_window = window_option && ebb_redis_arg_is(name, "WINDOW");
    bool is_error = ebb_redis_arg_is(name, "ERROR");
    bool is_npws = ebb_redis_arg_is(name, "MAXNPWS");
    bool is_accesses = ebb_redis_arg_is(name, "MAXACCESSES");
    if (!is_window && !is_error && !is_npws && !is_accesses)
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
              : is_npws ? ebb_redis_parse_positive(ctx, arg, "MAXNPWS", true,
                                                   &options->max_npws)
                        : ebb_redis_parse_positive(ctx, arg, "MAXACCESSES",
                                                   true,
                                                   &options->max_accesses);
    return ok ? 1 : -1;
}

/* A filter larger than the machine's memory is refused as too large (see
 * ebb_redis_physical_memory). opaque: the apbf_options. */
static ebb_status apbf_create(const void *opaque, uint64_t seed, void **out)
{
    const apbf_options *options = opaque;
    ebb_apbf_params params;
    uint64_t window = (uint64_t)options->window;
    ebb_apbf_goal goal = {window,
                          options->fp,
                          apbf_max_npws(options),
                          options->max_accesses,
                          options->blocked ? APBF_BLOCK_BITS : 0,
                          options->blocked ? APBF_BLOCK_HASHES : 0};
    ebb_status status = ebb_apbf_choose_goal(&goal, &params);
    size_t bytes = 0;
    if (status == EBB_OK)
        status = ebb_apbf_params_memory(&params, &bytes);
    if (status == EBB_OK && bytes > ebb_redis_physical_memory())
        status = EBB_EOVERFLOW;
    ebb_apbf *filter = NULL;
    if (status == EBB_OK)
        status = ebb_apbf_create(&params, seed, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

/* Replicates the APBF.RESERVE that recreates a key exactly as created.
 * opaque: the apbf_options. */
static void apbf_replicate_reserve(RedisModuleCtx *ctx,
                                   RedisModuleString *keyname,
                                   const void *opaque)
{
    const apbf_options *options = opaque;
    char fp[32], npws[32], accesses[32];
    ebb_redis_format_double(options->fp, fp, sizeof fp);
    ebb_redis_format_double(apbf_max_npws(options), npws, sizeof npws);
    ebb_redis_format_double(options->max_accesses, accesses, sizeof accesses);
    if (options->blocked)
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slccccccc", keyname,
                              options->window, "ERROR", fp, "MAXNPWS", npws,
                              "MAXACCESSES", accesses, "BLOCKED");
    else
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slcccccc", keyname,
                              options->window, "ERROR", fp, "MAXNPWS", npws,
                              "MAXACCESSES", accesses);
}

/* Creation for RESERVE, and for ADD, MADD and INSERT on a missing key. */
static const ebb_redis_creator APBF_CREATOR = {
    .family = &APBF,
    .create = apbf_create,
    .reply_refused = NULL,
    .replicate_reserve = apbf_replicate_reserve,
};

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
    if (!ebb_redis_open_for_add(ctx, keyname, &APBF_CREATOR, options, nocreate,
                                &key, &value))
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
    int i = 3;
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "APBF.RESERVE",
                                 apbf_parse_option, &options, NULL))
        return REDISMODULE_OK;
    return ebb_redis_reserve(ctx, argv[1], &APBF_CREATOR, &options);
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
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "APBF.INSERT",
                                 apbf_parse_option, &options, &nocreate))
        return REDISMODULE_OK;
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
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_READ, &APBF, key,
                               &value))
        return false;
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

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

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
    /* Type names are exactly 9 characters. */
    if (ebb_redis_snapshot_type_create(ctx, &APBF, "ebb-apbf-",
                                       &apbf_type_methods) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return ebb_redis_create_commands(
        ctx, APBF_COMMANDS, sizeof APBF_COMMANDS / sizeof APBF_COMMANDS[0]);
}
