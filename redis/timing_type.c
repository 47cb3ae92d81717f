/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing_type.c: the timing filter data type ("ebb-timng") and its
 * commands: a Block Timing Bloom filter over the last w insertions that
 * answers yes/no with no false negative and, with inference, the
 * probability that an item is in the window (ebb/timing.h, docs/timing.md).
 *
 *   TIMING.RESERVE   key window [ERROR fp | MEMORY bytes]
 *                    [UNIVERSE n | ZIPF n]
 *   TIMING.RESERVE   key window SHAPE timers k timer-bits block padding
 *                    [UNIVERSE n | ZIPF n]
 *   TIMING.ADD       key item [NOCREATE]           -> 1 new / 0 seen
 *   TIMING.MADD      key item [item ...]           -> array of 1/0
 *   TIMING.EXISTS    key item                      -> 1 / 0
 *   TIMING.MEXISTS   key item [item ...]           -> array of 1/0
 *   TIMING.POSTERIOR key item [PRIOR p] [COSTS fp fn] [WINDOW w]
 *                    -> field/value pairs: posterior, expected_age,
 *                       likely_age, decision, standard
 *   TIMING.INFO      key                           -> field/value pairs
 *   TIMING.SCANDUMP  key iterator                  -> [iterator, data]
 *   TIMING.LOADCHUNK key iterator data             -> OK
 *
 * The window counts insertions, not time: the filter reads no clock, so
 * it is deterministic and writes replicate verbatim. RESERVE, and a write
 * that creates its key, replicate the shape that was chosen (the SHAPE
 * form) with the model, so a replica or an AOF replay never runs the
 * chooser again.
 *
 * The sizing mirrors `ebb recent` and `ebb dedup --timing`
 * (cli/timing_options.c): ERROR is the CLI's --fp (ebb_timing_choose with
 * a rate), MEMORY its --memory (ebb_timing_choose with a budget), and the
 * defaults are the CLI's: window 1,000,000, rate 0.01, costs 1 and 1, the
 * model of distinct items. UNIVERSE and ZIPF are `ebb recent`'s --universe
 * and --zipf.
 */
#include <float.h>
#include <limits.h>

#include <ebb/timing.h>

#include "glue.h"
#include "snapshot_type.h"

/* Defaults of a key created by ADD or MADD, and of POSTERIOR's costs:
 * those of `ebb recent` and `ebb dedup --timing` (RECENT_DEFAULT_*,
 * docs/redis.md). */
#define TIMING_DEFAULT_WINDOW 1000000LL
#define TIMING_DEFAULT_FP 0.01
#define TIMING_DEFAULT_COST 1.0
/* Keys hashed at once by MADD and MEXISTS. */
#define TIMING_BATCH 64

/* The family table TIMING, the data-type callbacks and the handlers of
 * TIMING.SCANDUMP and TIMING.LOADCHUNK: persistence through the library's
 * snapshot (snapshot_type.h). */
EBB_REDIS_SNAPSHOT_FAMILY(timing, TIMING);

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct timing_options {
    long long window;
    double fp;             /* ERROR (the default when neither is given) */
    long long memory;      /* MEMORY bytes; 0: not given                */
    bool error_given;
    /* SHAPE timers k timer-bits block padding; after resolving
     * (timing_resolve), always set, with params the shape. */
    bool shape;
    ebb_timing_params params;
    /* UNIVERSE (uniform) or ZIPF over universe items; 0: distinct. */
    ebb_timing_model_kind model;
    long long universe;
} timing_options;

static const timing_options TIMING_DEFAULTS = {
    TIMING_DEFAULT_WINDOW,    TIMING_DEFAULT_FP, 0, false, false,
    {0, 0, 0, 0, 0, 0},       EBB_TIMING_MODEL_DISTINCT, 0};

/* SHAPE timers k timer-bits block padding at argv[0 ..]: integers within
 * the library's limits (the whole shape is checked once the window is
 * known, by ebb_timing_params_init). */
static bool timing_parse_shape(RedisModuleCtx *ctx, RedisModuleString **argv,
                               timing_options *options)
{
    long long timers, k, bits, block, padding;
    if (!ebb_redis_parse_integer(ctx, argv[0], "SHAPE timers", 1,
                                 (long long)EBB_TIMING_MAX_TIMERS, &timers) ||
        !ebb_redis_parse_integer(ctx, argv[1], "SHAPE k", 1, EBB_TIMING_MAX_K,
                                 &k) ||
        !ebb_redis_parse_integer(ctx, argv[2], "SHAPE timer-bits",
                                 EBB_TIMING_MIN_TIMER_BITS,
                                 EBB_TIMING_MAX_TIMER_BITS, &bits) ||
        !ebb_redis_parse_integer(ctx, argv[3], "SHAPE block", 1,
                                 (long long)EBB_TIMING_MAX_WINDOW, &block) ||
        !ebb_redis_parse_integer(ctx, argv[4], "SHAPE padding", 0,
                                 (long long)EBB_TIMING_MAX_WINDOW, &padding))
        return false;
    options->shape = true;
    options->params.timers = (uint64_t)timers;
    options->params.k = (uint32_t)k;
    options->params.timer_bits = (uint32_t)bits;
    options->params.block = (uint64_t)block;
    options->params.padding = (uint64_t)padding;
    return true;
}

/* An ebb_redis_option_parser (glue.h); opaque: the timing_options. RESERVE
 * is the only command with options, so the window is never an option. */
static int timing_parse_option(RedisModuleCtx *ctx, RedisModuleString **argv,
                               int argc, int *i, bool window_option,
                               void *opaque)
{
    (void)window_option;
    timing_options *options = opaque;
    RedisModuleString *name = argv[*i];
    if (ebb_redis_arg_is(name, "SHAPE")) {
        if (*i + 5 >= argc) {
            RedisModule_WrongArity(ctx);
            return -1;
        }
        bool ok = timing_parse_shape(ctx, argv + *i + 1, options);
        *i += 6;
        return ok ? 1 : -1;
    }
    bool is_error = ebb_redis_arg_is(name, "ERROR");
    bool is_memory = ebb_redis_arg_is(name, "MEMORY");
    bool is_universe = ebb_redis_arg_is(name, "UNIVERSE");
    bool is_zipf = ebb_redis_arg_is(name, "ZIPF");
    if (!is_error && !is_memory && !is_universe && !is_zipf)
        return 0;
    if (*i + 1 >= argc) {
        RedisModule_WrongArity(ctx);
        return -1;
    }
    RedisModuleString *arg = argv[*i + 1];
    *i += 2;
    bool ok;
    if (is_error) {
        options->error_given = true;
        ok = ebb_redis_parse_rate(ctx, arg, "error rate", &options->fp);
    } else if (is_memory) {
        ok = ebb_redis_parse_integer(ctx, arg, "MEMORY", 1, LLONG_MAX,
                                     &options->memory);
    } else {
        options->model = is_universe ? EBB_TIMING_MODEL_UNIFORM
                                     : EBB_TIMING_MODEL_ZIPF;
        ok = ebb_redis_parse_integer(ctx, arg,
                                     is_universe ? "UNIVERSE" : "ZIPF", 1,
                                     LLONG_MAX, &options->universe);
    }
    return ok ? 1 : -1;
}

/* The model of options (ebb_timing_model; distinct when none given). */
static void timing_model(const timing_options *options,
                         ebb_timing_model *model)
{
    *model = (ebb_timing_model){0};
    model->kind = options->model;
    model->universe = (uint64_t)options->universe;
}

/* The explicit SHAPE for options->window, checked by the library. */
static bool timing_resolve_shape(RedisModuleCtx *ctx, timing_options *options)
{
    ebb_timing_params *p = &options->params;
    if (options->error_given || options->memory != 0) {
        RedisModule_ReplyWithError(ctx, "ERR TIMING: SHAPE cannot be "
                                        "combined with ERROR or MEMORY");
        return false;
    }
    ebb_timing_params checked;
    if (ebb_timing_params_init((uint64_t)options->window, p->timers, p->k,
                               p->timer_bits, p->block, p->padding,
                               &checked) != EBB_OK) {
        ebb_redis_reply_errorf(
            ctx,
            "ERR TIMING: SHAPE %llu %u %u %llu %llu is not a valid shape for "
            "a window of %lld (block at most the window; 2^timer-bits at "
            "least ceil(window / block) + 3 + padding)",
            (unsigned long long)p->timers, (unsigned)p->k,
            (unsigned)p->timer_bits, (unsigned long long)p->block,
            (unsigned long long)p->padding, options->window);
        return false;
    }
    *p = checked;
    return true;
}

/* The chooser's shape for ERROR or MEMORY, as `ebb recent --fp / --memory`
 * chooses it (cli/timing_options.c). */
static bool timing_resolve_goal(RedisModuleCtx *ctx, timing_options *options)
{
    if (options->error_given && options->memory != 0) {
        RedisModule_ReplyWithError(ctx, "ERR TIMING: ERROR cannot be "
                                        "combined with MEMORY");
        return false;
    }
    uint64_t window = (uint64_t)options->window;
    ebb_status status =
        options->memory != 0
            ? ebb_timing_choose(window, (uint64_t)options->memory, 0.0,
                                &options->params)
            : ebb_timing_choose(window, 0, options->fp, &options->params);
    if (status == EBB_OK)
        return true;
    if (status != EBB_EINVAL) {
        ebb_redis_reply_status(ctx, TIMING.name, status);
        return false;
    }
    if (options->memory != 0)
        ebb_redis_reply_errorf(ctx,
                               "ERR TIMING: no shape for a window of %lld "
                               "fits MEMORY %lld (too little memory: every "
                               "query would answer yes)",
                               options->window, options->memory);
    else
        ebb_redis_reply_errorf(ctx,
                               "ERR TIMING: no shape for a window of %lld "
                               "reaches ERROR %g (at most %u timers per "
                               "item, 2^40 timers)",
                               options->window, options->fp,
                               EBB_TIMING_MAX_K);
    return false;
}

/* An ebb_redis_creator resolve: chooses the shape (unless SHAPE gave it),
 * so the RESERVE replicated is the SHAPE form and no replica chooses
 * again; checks the model; *bytes is the filter's memory. opaque: the
 * timing_options. */
static bool timing_resolve(RedisModuleCtx *ctx, void *opaque, size_t *bytes)
{
    timing_options *options = opaque;
    bool ok = options->shape ? timing_resolve_shape(ctx, options)
                             : timing_resolve_goal(ctx, options);
    if (!ok)
        return false;
    ebb_timing_shape shape;
    ebb_status status = ebb_timing_describe(&options->params, &shape);
    if (status == EBB_OK && shape.memory_bytes > SIZE_MAX)
        status = EBB_EOVERFLOW;
    if (status != EBB_OK) {
        ebb_redis_reply_status(ctx, TIMING.name, status);
        return false;
    }
    options->shape = true;
    options->error_given = false;
    options->memory = 0;
    *bytes = (size_t)shape.memory_bytes;
    return true;
}

/* A filter of the resolved shape and model. opaque: the timing_options. */
static ebb_status timing_create(const void *opaque, uint64_t seed, void **out)
{
    const timing_options *options = opaque;
    ebb_timing_model model;
    timing_model(options, &model);
    ebb_timing *filter = NULL;
    ebb_status status =
        ebb_timing_create(&options->params, &model, seed, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

/* Replicates the TIMING.RESERVE that recreates a key exactly as created:
 * its shape, explicit, and its model. opaque: the resolved options. */
static void timing_replicate_reserve(RedisModuleCtx *ctx,
                                     RedisModuleString *keyname,
                                     const void *opaque)
{
    const timing_options *options = opaque;
    const ebb_timing_params *p = &options->params;
    long long window = (long long)p->window, timers = (long long)p->timers,
              k = (long long)p->k, bits = (long long)p->timer_bits,
              block = (long long)p->block, padding = (long long)p->padding;
    if (options->model == EBB_TIMING_MODEL_DISTINCT)
        RedisModule_Replicate(ctx, "TIMING.RESERVE", "slclllll", keyname,
                              window, "SHAPE", timers, k, bits, block,
                              padding);
    else
        RedisModule_Replicate(
            ctx, "TIMING.RESERVE", "slclllllcl", keyname, window, "SHAPE",
            timers, k, bits, block, padding,
            options->model == EBB_TIMING_MODEL_UNIFORM ? "UNIVERSE" : "ZIPF",
            options->universe);
}

_Static_assert(sizeof(timing_options) <= EBB_REDIS_OPTIONS_MAX,
               "value.c resolves a copy of the options on its stack");

/* Creation for RESERVE, and for ADD and MADD on a missing key. */
static const ebb_redis_creator TIMING_CREATOR = {
    .family = &TIMING,
    .options_size = sizeof(timing_options),
    .resolve = timing_resolve,
    .create = timing_create,
    .reply_refused = NULL,
    .replicate_reserve = timing_replicate_reserve,
};

/* ------------------------------------------------------------------------ */
/* Adds and queries                                                         */
/* ------------------------------------------------------------------------ */

/* The hashes of up to TIMING_BATCH items. */
static size_t timing_hash_items(const ebb_timing *filter,
                                RedisModuleString **items, int start,
                                int count, ebb_hash128 *hashes)
{
    const void *keys[TIMING_BATCH];
    size_t lens[TIMING_BATCH];
    size_t n = (size_t)(count - start < TIMING_BATCH ? count - start
                                                     : TIMING_BATCH);
    for (size_t i = 0; i < n; i++)
        keys[i] = RedisModule_StringPtrLen(items[start + (int)i], &lens[i]);
    ebb_timing_hash_batch(filter, keys, lens, n, hashes);
    return n;
}

/* Adds every item in order (the library's test-and-add keeps the
 * one-at-a-time answers); replies 1 for each not present before its add.
 * single: one integer instead of an array. */
static void timing_add_items(RedisModuleCtx *ctx, ebb_timing *filter,
                             RedisModuleString **items, int count,
                             bool single)
{
    ebb_hash128 hashes[TIMING_BATCH];
    bool seen[TIMING_BATCH];
    if (!single)
        RedisModule_ReplyWithArray(ctx, count);
    for (int start = 0; start < count; start += TIMING_BATCH) {
        size_t n = timing_hash_items(filter, items, start, count, hashes);
        ebb_timing_test_and_add_batch(filter, hashes, n, seen);
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, seen[i] ? 0 : 1);
    }
}

/* The common tail of ADD and MADD: open (maybe create), add, reply,
 * replicate verbatim, notify "timing.<command>". */
static int timing_add_command(RedisModuleCtx *ctx, const char *command,
                              RedisModuleString *keyname, bool nocreate,
                              RedisModuleString **items, int count,
                              bool single)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open_for_add(ctx, keyname, &TIMING_CREATOR,
                                &TIMING_DEFAULTS, nocreate, &key, &value))
        return REDISMODULE_OK;
    ebb_redis_value_touch(value);
    timing_add_items(ctx, value->filter, items, count, single);
    RedisModule_ReplicateVerbatim(ctx);
    ebb_redis_notify(ctx, &TIMING, command, keyname);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Opens keyname for a query: *filter is NULL for a missing key. Returns
 * false after replying an error. */
static bool timing_open_for_query(RedisModuleCtx *ctx,
                                  RedisModuleString *keyname,
                                  RedisModuleKey **key,
                                  const ebb_timing **filter)
{
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_READ, &TIMING, key,
                               &value))
        return false;
    *filter = value == NULL ? NULL : value->filter;
    return true;
}

/* Like timing_open_for_query, and a missing key is answered
 * "ERR no such key" (INFO, POSTERIOR). */
static bool timing_open_existing(RedisModuleCtx *ctx,
                                 RedisModuleString *keyname,
                                 RedisModuleKey **key,
                                 const ebb_timing **filter)
{
    if (!timing_open_for_query(ctx, keyname, key, filter))
        return false;
    if (*filter != NULL)
        return true;
    RedisModule_CloseKey(*key);
    RedisModule_ReplyWithError(ctx, "ERR no such key");
    return false;
}

/* Replies 1/0 for each item: the standard query (window w). */
static void timing_exists_array(RedisModuleCtx *ctx, const ebb_timing *filter,
                                RedisModuleString **items, int count)
{
    ebb_hash128 hashes[TIMING_BATCH];
    bool present[TIMING_BATCH];
    RedisModule_ReplyWithArray(ctx, count);
    if (filter == NULL) { /* a missing key holds nothing */
        for (int i = 0; i < count; i++)
            RedisModule_ReplyWithLongLong(ctx, 0);
        return;
    }
    for (int start = 0; start < count; start += TIMING_BATCH) {
        size_t n = timing_hash_items(filter, items, start, count, hashes);
        ebb_timing_contains_batch(filter, hashes, n, present);
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, present[i] ? 1 : 0);
    }
}

/* ------------------------------------------------------------------------ */
/* POSTERIOR                                                                */
/* ------------------------------------------------------------------------ */

/* The query POSTERIOR's options ask for, before the key is read; window 0
 * is the filter's (checked against it once opened). */
static bool timing_parse_query(RedisModuleCtx *ctx, RedisModuleString **argv,
                               int argc, ebb_timing_query *query)
{
    *query = (ebb_timing_query){0.0, 0, TIMING_DEFAULT_COST,
                                TIMING_DEFAULT_COST};
    for (int i = 3; i < argc;) {
        bool is_prior = ebb_redis_arg_is(argv[i], "PRIOR");
        bool is_costs = ebb_redis_arg_is(argv[i], "COSTS");
        bool is_window = ebb_redis_arg_is(argv[i], "WINDOW");
        if (!is_prior && !is_costs && !is_window) {
            ebb_redis_reply_unknown_option(ctx, argv[i], "TIMING.POSTERIOR");
            return false;
        }
        int values = is_costs ? 2 : 1;
        if (i + values >= argc) {
            RedisModule_WrongArity(ctx);
            return false;
        }
        if (is_prior) {
            if (!ebb_redis_parse_positive(ctx, argv[i + 1], "PRIOR", false,
                                          &query->prior))
                return false;
            if (query->prior > 1.0 || query->prior < DBL_MIN) {
                RedisModule_ReplyWithError(ctx, "ERR PRIOR must be a number "
                                                "> 0 and <= 1");
                return false;
            }
        } else if (is_costs) {
            if (!ebb_redis_parse_positive(ctx, argv[i + 1], "COSTS fp", true,
                                          &query->cost_fp) ||
                !ebb_redis_parse_positive(ctx, argv[i + 2], "COSTS fn", true,
                                          &query->cost_fn))
                return false;
        } else {
            long long window;
            if (!ebb_redis_parse_integer(ctx, argv[i + 1], "WINDOW", 1,
                                         LLONG_MAX, &window))
                return false;
            query->window = (uint64_t)window;
        }
        i += values + 1;
    }
    return true;
}

/* False (after replying) when the query cannot be asked of filter: no
 * prior at all, or a WINDOW above the filter's. */
static bool timing_query_fits(RedisModuleCtx *ctx, const ebb_timing *filter,
                              const ebb_timing_query *query)
{
    const ebb_timing_model *model = ebb_timing_get_model(filter);
    uint64_t window = ebb_timing_get_params(filter)->window;
    if (query->prior == 0.0 && ebb_timing_model_prior(model) <= 0.0) {
        ebb_redis_reply_errorf(ctx,
                               "ERR TIMING: the %s model has no prior of its "
                               "own: give PRIOR p%s",
                               ebb_timing_model_name(model->kind),
                               model->kind == EBB_TIMING_MODEL_ZIPF
                                   ? ""
                                   : ", or reserve with UNIVERSE n");
        return false;
    }
    if (query->window > window) {
        ebb_redis_reply_errorf(ctx,
                               "ERR WINDOW must be an integer from 1 to "
                               "%llu (the filter's window)",
                               (unsigned long long)window);
        return false;
    }
    return true;
}

/* TIMING.POSTERIOR key item [PRIOR p] [COSTS fp fn] [WINDOW w] */
static int timing_posterior(RedisModuleCtx *ctx, RedisModuleString **argv,
                            int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    ebb_timing_query query;
    if (!timing_parse_query(ctx, argv, argc, &query))
        return REDISMODULE_OK;
    RedisModuleKey *key;
    const ebb_timing *filter;
    if (!timing_open_existing(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    if (!timing_query_fits(ctx, filter, &query)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    size_t len;
    const char *item = RedisModule_StringPtrLen(argv[2], &len);
    ebb_timing_answer answer;
    ebb_status status = ebb_timing_infer(filter, item, len, &query, &answer);
    RedisModule_CloseKey(key);
    if (status != EBB_OK)
        return ebb_redis_reply_status(ctx, TIMING.name, status);
    long count = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    ebb_redis_info_double(ctx, &count, "posterior", answer.posterior);
    ebb_redis_info_double(ctx, &count, "expected_age", answer.expected_age);
    ebb_redis_info_integer(ctx, &count, "likely_age", answer.likely_age);
    ebb_redis_info_integer(ctx, &count, "decision", answer.decision);
    ebb_redis_info_integer(ctx, &count, "standard", answer.standard);
    RedisModule_ReplySetArrayLength(ctx, count);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* TIMING.RESERVE key window [ERROR fp | MEMORY bytes | SHAPE ...]
 *                [UNIVERSE n | ZIPF n] */
static int timing_reserve_command(RedisModuleCtx *ctx,
                                  RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    timing_options options = TIMING_DEFAULTS;
    if (!ebb_redis_parse_integer(ctx, argv[2], "window", 1,
                                 (long long)EBB_TIMING_MAX_WINDOW,
                                 &options.window))
        return REDISMODULE_OK;
    int i = 3;
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "TIMING.RESERVE",
                                 timing_parse_option, &options, NULL))
        return REDISMODULE_OK;
    return ebb_redis_reserve(ctx, argv[1], &TIMING_CREATOR, &options);
}

/* TIMING.ADD key item [NOCREATE] */
static int timing_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 4)
        return RedisModule_WrongArity(ctx);
    bool nocreate = argc == 4;
    if (nocreate && !ebb_redis_arg_is(argv[3], "NOCREATE"))
        return ebb_redis_reply_unknown_option(ctx, argv[3], "TIMING.ADD");
    return timing_add_command(ctx, "add", argv[1], nocreate, argv + 2, 1,
                              true);
}

/* TIMING.MADD key item [item ...] */
static int timing_madd(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    return timing_add_command(ctx, "madd", argv[1], false, argv + 2,
                              argc - 2, false);
}

/* TIMING.EXISTS key item */
static int timing_exists(RedisModuleCtx *ctx, RedisModuleString **argv,
                         int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_timing *filter;
    if (!timing_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    bool present = false;
    if (filter != NULL) {
        size_t len;
        const char *item = RedisModule_StringPtrLen(argv[2], &len);
        present = ebb_timing_contains(filter, item, len);
    }
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, present ? 1 : 0);
}

/* TIMING.MEXISTS key item [item ...] */
static int timing_mexists(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_timing *filter;
    if (!timing_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    timing_exists_array(ctx, filter, argv + 2, argc - 2);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* TIMING.INFO key */
static int timing_info(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_timing *filter;
    if (!timing_open_existing(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    const ebb_timing_params *p = ebb_timing_get_params(filter);
    const ebb_timing_model *model = ebb_timing_get_model(filter);
    ebb_timing_shape shape = {0};
    ebb_timing_describe(p, &shape);
    ebb_timing_stats stats;
    ebb_timing_get_stats(filter, &stats);
    long count = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    ebb_redis_info_integer(ctx, &count, "window", p->window);
    ebb_redis_info_integer(ctx, &count, "timers", p->timers);
    ebb_redis_info_integer(ctx, &count, "k", p->k);
    ebb_redis_info_integer(ctx, &count, "timer_bits", p->timer_bits);
    ebb_redis_info_integer(ctx, &count, "block", p->block);
    ebb_redis_info_integer(ctx, &count, "padding", p->padding);
    ebb_redis_info_integer(ctx, &count, "t_omega", shape.t_omega);
    ebb_redis_info_integer(ctx, &count, "sweep_per_add", shape.sweep_per_add);
    ebb_redis_info_double(ctx, &count, "bits_per_item", shape.bits_per_item);
    ebb_redis_info_double(ctx, &count, "fp", ebb_timing_fp(p));
    ebb_redis_info_text(ctx, &count, "model",
                        ebb_timing_model_name(model->kind));
    ebb_redis_info_integer(ctx, &count, "universe",
                           model->kind == EBB_TIMING_MODEL_UNIFORM ||
                                   model->kind == EBB_TIMING_MODEL_ZIPF
                               ? model->universe
                               : 0);
    ebb_redis_info_double(ctx, &count, "default_prior",
                          ebb_timing_model_prior(model));
    ebb_redis_info_integer(ctx, &count, "memory", stats.memory_bytes);
    ebb_redis_info_integer(ctx, &count, "insertions", stats.insertions);
    ebb_redis_info_integer(ctx, &count, "current", stats.current);
    ebb_redis_info_integer(ctx, &count, "in_block", stats.in_block);
    ebb_redis_info_integer(ctx, &count, "live_timers", stats.live_timers);
    ebb_redis_info_integer(ctx, &count, "swept", stats.swept);
    RedisModule_ReplySetArrayLength(ctx, count);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* name, handler, flags, arity, key spec, summary (glue.h). INFO counts the
 * live timers (O(m)): not "fast". */
static const ebb_redis_command TIMING_COMMANDS[] = {
    {"TIMING.RESERVE", timing_reserve_command, "write deny-oom", -3,
     EBB_REDIS_KEY_CREATES,
     "Creates an empty timing filter over the last N adds"},
    {"TIMING.ADD", timing_add, "write deny-oom fast", -3, EBB_REDIS_KEY_ADDS,
     "Adds an item; answers whether it was new"},
    {"TIMING.MADD", timing_madd, "write deny-oom", -3, EBB_REDIS_KEY_ADDS,
     "Adds items; answers for each whether it was new"},
    {"TIMING.EXISTS", timing_exists, "readonly fast", 3, EBB_REDIS_KEY_READS,
     "Answers whether an item is in the window"},
    {"TIMING.MEXISTS", timing_mexists, "readonly fast", -3,
     EBB_REDIS_KEY_READS,
     "Answers for each item whether it is in the window"},
    {"TIMING.POSTERIOR", timing_posterior, "readonly fast", -3,
     EBB_REDIS_KEY_READS,
     "Answers the probability that an item is in the window, its expected "
     "age and the least-penalty decision"},
    {"TIMING.INFO", timing_info, "readonly", 2, EBB_REDIS_KEY_READS,
     "Returns the filter's parameters and counters"},
    EBB_REDIS_SNAPSHOT_COMMAND_ROWS(timing, TIMING),
};

int ebb_redis_timing_register(RedisModuleCtx *ctx)
{
    /* Type names are exactly 9 characters. */
    if (ebb_redis_snapshot_type_create(ctx, &TIMING, "ebb-timng",
                                       &timing_type_methods) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return ebb_redis_create_commands(
        ctx, TIMING_COMMANDS,
        sizeof TIMING_COMMANDS / sizeof TIMING_COMMANDS[0]);
}
