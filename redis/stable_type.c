/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stable_type.c: the stable (and importance-aware) filter data type
 * ("ebb-stabl") and its commands (docs/redis.md, "STABLE").
 *
 *   STABLE.RESERVE   key [MEMORY bytes] [ERROR fp] [CELLBITS d]
 *                    [VARIANT plain|ibf-2c|ibf-mc|ibf-h]
 *                    [DRAW consecutive|independent] [RANGE low high]
 *                    [THRESHOLD x] [OUTOFRANGE clamp|refuse]
 *   STABLE.RESERVE   key SHAPE cells cell-bits k p [VARIANT ...] ...
 *   STABLE.ADD       key item [IMPORTANCE x] [NOCREATE]  -> 1 new / 0 seen
 *   STABLE.MADD      key item [item ...]             -> array of 1/0
 *   STABLE.TESTADD   key item [IMPORTANCE x] [NOCREATE]  -> 1 seen / 0 new
 *   STABLE.EXISTS    key item                        -> 1 / 0
 *   STABLE.MEXISTS   key item [item ...]             -> array of 1/0
 *   STABLE.INFO      key                             -> field/value pairs
 *   STABLE.SCANDUMP  key iterator                    -> [iterator, data]
 *   STABLE.LOADCHUNK key iterator data               -> OK
 *
 * The defaults are those of `ebb dedup --stable` (cli/stable_options.c):
 * 16 MiB of cells, a stable false-positive rate of 0.01, 3-bit cells, the
 * plain variant, the consecutive draw, importances in [0, 1] clamped.
 *
 * An insertion decrements P cells drawn from the generator in the filter's
 * state, seeded with the key's hash seed at creation and saved in every
 * snapshot. So a write is a function of the filter's state and the
 * command alone: writes replicate verbatim, and a replica (or an AOF
 * replay) that starts from the same state, created by the resolved
 * RESERVE (SHAPE and every option explicit) or loaded from the primary's
 * RDB, ends byte-identical (tests/redis/stable.sh checks the DUMPs).
 */
#include <math.h>
#include <stdint.h>

#include <ebb/stable.h>

#include "glue.h"
#include "snapshot_type.h"

/* Defaults of a key created by ADD, MADD or TESTADD (docs/redis.md), those
 * of `ebb dedup --stable` (CLI_STABLE_DEFAULT_MEMORY, DEDUP_DEFAULT_FP,
 * ebb_stable_goal_init's cell bits). */
#define STABLE_DEFAULT_MEMORY (16LL << 20)
#define STABLE_DEFAULT_FP 0.01
#define STABLE_DEFAULT_CELL_BITS 3u
/* MEMORY: at least one 64-bit word (ebb_stable_goal), at most 2^40 bytes. */
#define STABLE_MIN_MEMORY 8LL
#define STABLE_MAX_MEMORY (1LL << 40)
/* Keys hashed at once by MADD and MEXISTS. */
#define STABLE_BATCH 64

/* The family table STABLE, the data-type callbacks and the handlers of
 * STABLE.SCANDUMP and STABLE.LOADCHUNK: persistence through the library's
 * snapshot (snapshot_type.h). */
EBB_REDIS_SNAPSHOT_FAMILY(stable, STABLE);

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct stable_options {
    long long memory; /* MEMORY: cell storage budget                       */
    double fp;        /* ERROR: target stable false-positive rate          */
    long long cell_bits;
    bool have_cell_bits;
    bool have_memory, have_fp; /* given (SHAPE excludes them)             */
    bool have_shape;           /* SHAPE cells cell-bits k p               */
    long long cells, k, p;
    ebb_stable_variant variant;
    ebb_stable_draw draw;
    ebb_stable_importance importance;
    bool have_range, have_threshold, have_policy;
} stable_options;

static const stable_options STABLE_DEFAULTS = {
    .memory = STABLE_DEFAULT_MEMORY,
    .fp = STABLE_DEFAULT_FP,
    .cell_bits = STABLE_DEFAULT_CELL_BITS,
    .variant = EBB_STABLE_PLAIN,
    .draw = EBB_STABLE_DRAW_CONSECUTIVE,
    .importance = {0.0, 1.0, 0.5, EBB_STABLE_CLAMP},
};

static const char *const VARIANT_NAMES[] = {"plain", "ibf-2c", "ibf-mc",
                                            "ibf-h"};

static const char *variant_name(ebb_stable_variant variant)
{
    return (unsigned)variant < 4 ? VARIANT_NAMES[variant] : "?";
}

static const char *draw_name(ebb_stable_draw draw)
{
    return draw == EBB_STABLE_DRAW_INDEPENDENT ? "independent"
                                               : "consecutive";
}

static const char *policy_name(ebb_stable_range_policy policy)
{
    return policy == EBB_STABLE_REFUSE ? "refuse" : "clamp";
}

/* VARIANT, DRAW or OUTOFRANGE's word; false after replying. */
static bool parse_kind(RedisModuleCtx *ctx, int which,
                       const RedisModuleString *arg, stable_options *options)
{
    if (which == 0) {
        for (int v = 0; v < 4; v++)
            if (ebb_redis_arg_is(arg, VARIANT_NAMES[v])) {
                options->variant = (ebb_stable_variant)v;
                return true;
            }
        RedisModule_ReplyWithError(
            ctx, "ERR VARIANT must be PLAIN, IBF-2C, IBF-MC or IBF-H");
        return false;
    }
    if (which == 1) {
        if (ebb_redis_arg_is(arg, "CONSECUTIVE"))
            options->draw = EBB_STABLE_DRAW_CONSECUTIVE;
        else if (ebb_redis_arg_is(arg, "INDEPENDENT"))
            options->draw = EBB_STABLE_DRAW_INDEPENDENT;
        else {
            RedisModule_ReplyWithError(
                ctx, "ERR DRAW must be CONSECUTIVE or INDEPENDENT");
            return false;
        }
        return true;
    }
    if (ebb_redis_arg_is(arg, "CLAMP"))
        options->importance.policy = EBB_STABLE_CLAMP;
    else if (ebb_redis_arg_is(arg, "REFUSE"))
        options->importance.policy = EBB_STABLE_REFUSE;
    else {
        RedisModule_ReplyWithError(ctx,
                                   "ERR OUTOFRANGE must be CLAMP or REFUSE");
        return false;
    }
    options->have_policy = true;
    return true;
}

/* SHAPE cells cell-bits k p at argv[i + 1 ..]. */
static bool parse_shape(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int i, stable_options *options)
{
    options->have_shape = true;
    return ebb_redis_parse_integer(ctx, argv[i + 1], "cells", 1,
                                   (long long)EBB_STABLE_MAX_CELLS,
                                   &options->cells) &&
           ebb_redis_parse_integer(ctx, argv[i + 2], "cell bits", 1,
                                   EBB_STABLE_MAX_CELL_BITS,
                                   &options->cell_bits) &&
           ebb_redis_parse_integer(ctx, argv[i + 3], "k", 1,
                                   EBB_STABLE_MAX_K, &options->k) &&
           ebb_redis_parse_integer(ctx, argv[i + 4], "p", 0, UINT32_MAX,
                                   &options->p);
}

/* RANGE low high at argv[i + 1 ..]. */
static bool parse_range(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int i, stable_options *options)
{
    double low, high;
    if (!ebb_redis_parse_finite(ctx, argv[i + 1], "RANGE low", &low) ||
        !ebb_redis_parse_finite(ctx, argv[i + 2], "RANGE high", &high))
        return false;
    if (!(low < high)) {
        RedisModule_ReplyWithError(ctx,
                                   "ERR RANGE low must be below RANGE high");
        return false;
    }
    options->importance.low = low;
    options->importance.high = high;
    options->have_range = true;
    return true;
}

/* An ebb_redis_option_parser (glue.h); opaque: the stable_options. */
static int stable_parse_option(RedisModuleCtx *ctx, RedisModuleString **argv,
                               int argc, int *i, bool size_option,
                               void *opaque)
{
    static const struct {
        const char *name;
        int values;
    } OPTIONS[] = {{"MEMORY", 1},  {"ERROR", 1},      {"CELLBITS", 1},
                   {"SHAPE", 4},   {"VARIANT", 1},    {"DRAW", 1},
                   {"RANGE", 2},   {"THRESHOLD", 1},  {"OUTOFRANGE", 1}};
    (void)size_option;
    stable_options *options = opaque;
    int which = -1;
    for (int n = 0; n < 9 && which < 0; n++)
        if (ebb_redis_arg_is(argv[*i], OPTIONS[n].name))
            which = n;
    if (which < 0)
        return 0;
    int at = *i;
    if (at + OPTIONS[which].values >= argc) {
        RedisModule_WrongArity(ctx);
        return -1;
    }
    *i += 1 + OPTIONS[which].values;
    bool ok;
    switch (which) {
    case 0:
        options->have_memory = true;
        ok = ebb_redis_parse_integer(ctx, argv[at + 1], "MEMORY",
                                     STABLE_MIN_MEMORY, STABLE_MAX_MEMORY,
                                     &options->memory);
        break;
    case 1:
        options->have_fp = true;
        ok = ebb_redis_parse_rate(ctx, argv[at + 1], "error rate",
                                  &options->fp);
        break;
    case 2:
        options->have_cell_bits = true;
        ok = ebb_redis_parse_integer(ctx, argv[at + 1], "CELLBITS", 1,
                                     EBB_STABLE_MAX_CELL_BITS,
                                     &options->cell_bits);
        break;
    case 3:
        ok = parse_shape(ctx, argv, at, options);
        break;
    case 4:
    case 5:
        ok = parse_kind(ctx, which - 4, argv[at + 1], options);
        break;
    case 6:
        ok = parse_range(ctx, argv, at, options);
        break;
    case 7:
        options->have_threshold = true;
        ok = ebb_redis_parse_finite(ctx, argv[at + 1], "THRESHOLD",
                                    &options->importance.threshold);
        break;
    default:
        ok = parse_kind(ctx, 2, argv[at + 1], options);
        break;
    }
    return ok ? 1 : -1;
}

/* The combinations `ebb dedup --stable` refuses too (cli_stable_check);
 * fills the threshold's default, the middle of the range. False after
 * replying. */
static bool stable_check_options(RedisModuleCtx *ctx,
                                 stable_options *options)
{
    const char *message = NULL;
    if (options->have_shape &&
        (options->have_memory || options->have_fp || options->have_cell_bits))
        message = "ERR SHAPE cannot be combined with MEMORY, ERROR or "
                  "CELLBITS";
    else if (options->variant == EBB_STABLE_PLAIN &&
             (options->have_range || options->have_threshold ||
              options->have_policy))
        message = "ERR RANGE, THRESHOLD and OUTOFRANGE require an "
                  "importance-aware VARIANT (IBF-2C, IBF-MC or IBF-H)";
    else if (options->have_threshold &&
             options->variant != EBB_STABLE_IBF_2C)
        message = "ERR THRESHOLD requires VARIANT IBF-2C";
    if (message != NULL) {
        RedisModule_ReplyWithError(ctx, message);
        return false;
    }
    if (!options->have_threshold)
        options->importance.threshold =
            options->importance.low / 2 + options->importance.high / 2;
    return true;
}

/* The library's params for options: the explicit SHAPE, or the chooser's
 * pick for MEMORY, ERROR and CELLBITS (as `ebb dedup --stable`). */
static ebb_status stable_params(const stable_options *options,
                                ebb_stable_params *params)
{
    if (options->have_shape) {
        ebb_status status = ebb_stable_params_init(
            (uint64_t)options->cells, (uint32_t)options->cell_bits,
            (uint32_t)options->k, (uint32_t)options->p, params);
        if (status != EBB_OK)
            return status;
        params->variant = options->variant;
        params->draw = options->draw;
        params->importance = options->importance;
        return ebb_stable_params_check(params);
    }
    ebb_stable_goal goal;
    ebb_status status = ebb_stable_goal_init((uint64_t)options->memory,
                                             options->fp, &goal);
    if (status != EBB_OK)
        return status;
    goal.cell_bits = (uint32_t)options->cell_bits;
    goal.variant = options->variant;
    goal.draw = options->draw;
    goal.importance = options->importance;
    return ebb_stable_choose(&goal, params);
}

/* opaque: the stable_options, resolved (SHAPE). */
static ebb_status stable_create(const void *opaque, uint64_t seed, void **out)
{
    ebb_stable_params params;
    ebb_stable *filter = NULL;
    ebb_status status = stable_params(opaque, &params);
    if (status == EBB_OK)
        status = ebb_stable_create(&params, seed, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

/* Replies why creation with options failed. opaque: the stable_options. */
static int stable_reply_refused(RedisModuleCtx *ctx, ebb_status status,
                                const void *opaque)
{
    const stable_options *options = opaque;
    if (status != EBB_EINVAL)
        return ebb_redis_reply_status(ctx, STABLE.name, status);
    if (options->have_shape)
        return ebb_redis_reply_errorf(ctx,
                                      "ERR STABLE: SHAPE %lld %lld %lld %lld "
                                      "is not a filter: p must be at most "
                                      "the cells",
                                      options->cells, options->cell_bits,
                                      options->k, options->p);
    char fp[32];
    ebb_redis_format_double(options->fp, fp, sizeof fp);
    return ebb_redis_reply_errorf(ctx,
                                  "ERR STABLE: no filter of MEMORY %lld "
                                  "bytes and CELLBITS %lld reaches ERROR %s "
                                  "(give more MEMORY or a higher ERROR)",
                                  options->memory, options->cell_bits, fp);
}

/* An ebb_redis_creator resolve: runs the chooser once and keeps its pick as
 * an explicit SHAPE, so a replica or an AOF replay never chooses again (an
 * other library version could choose otherwise). *bytes: the cells. */
static bool stable_resolve(RedisModuleCtx *ctx, void *opaque, size_t *bytes)
{
    stable_options *options = opaque;
    ebb_stable_params params;
    ebb_status status = stable_params(options, &params);
    if (status != EBB_OK) {
        stable_reply_refused(ctx, status, options);
        return false;
    }
    options->have_shape = true;
    options->have_memory = options->have_fp = options->have_cell_bits = false;
    options->cells = (long long)params.cells;
    options->cell_bits = params.cell_bits;
    options->k = params.k;
    options->p = params.p;
    *bytes = (size_t)ebb_stable_cell_bytes(params.cells, params.cell_bits);
    return true;
}

/* Replicates the STABLE.RESERVE that recreates a key exactly as created:
 * SHAPE, VARIANT, DRAW and, for the importance-aware variants, the
 * importance mapping. opaque: the stable_options, resolved. */
static void stable_replicate_reserve(RedisModuleCtx *ctx,
                                     RedisModuleString *keyname,
                                     const void *opaque)
{
    const stable_options *o = opaque;
    const char *variant = variant_name(o->variant);
    const char *draw = draw_name(o->draw);
    if (o->variant == EBB_STABLE_PLAIN) {
        RedisModule_Replicate(ctx, "STABLE.RESERVE", "scllllcccc", keyname,
                              "SHAPE", o->cells, o->cell_bits, o->k, o->p,
                              "VARIANT", variant, "DRAW", draw);
        return;
    }
    char low[32], high[32], threshold[32];
    ebb_redis_format_double(o->importance.low, low, sizeof low);
    ebb_redis_format_double(o->importance.high, high, sizeof high);
    ebb_redis_format_double(o->importance.threshold, threshold,
                            sizeof threshold);
    const char *policy = policy_name(o->importance.policy);
    if (o->variant == EBB_STABLE_IBF_2C)
        RedisModule_Replicate(ctx, "STABLE.RESERVE", "scllll" "ccccccccccc",
                              keyname, "SHAPE", o->cells, o->cell_bits, o->k,
                              o->p, "VARIANT", variant, "DRAW", draw,
                              "RANGE", low, high, "THRESHOLD", threshold,
                              "OUTOFRANGE", policy);
    else
        RedisModule_Replicate(ctx, "STABLE.RESERVE", "scllll" "ccccccccc",
                              keyname, "SHAPE", o->cells, o->cell_bits, o->k,
                              o->p, "VARIANT", variant, "DRAW", draw,
                              "RANGE", low, high, "OUTOFRANGE", policy);
}

_Static_assert(sizeof(stable_options) <= EBB_REDIS_OPTIONS_MAX,
               "value.c resolves a copy of the options on its stack");

/* Creation for RESERVE, and for ADD, MADD and TESTADD on a missing key. */
static const ebb_redis_creator STABLE_CREATOR = {
    .family = &STABLE,
    .options_size = sizeof(stable_options),
    .resolve = stable_resolve,
    .create = stable_create,
    .reply_refused = stable_reply_refused,
    .replicate_reserve = stable_replicate_reserve,
};

/* ------------------------------------------------------------------------ */
/* Adds and queries                                                         */
/* ------------------------------------------------------------------------ */

/* True when the command came from the primary or the AOF. */
static bool replaying(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) &
            (REDISMODULE_CTX_FLAGS_REPLICATED |
             REDISMODULE_CTX_FLAGS_LOADING)) != 0;
}

/* Hashes items[0 .. n) with the filter's seed. */
static void hash_items(const ebb_stable *filter, RedisModuleString **items,
                       size_t n, ebb_hash128 *hashes)
{
    const void *keys[STABLE_BATCH];
    size_t lens[STABLE_BATCH];
    for (size_t i = 0; i < n; i++)
        keys[i] = RedisModule_StringPtrLen(items[i], &lens[i]);
    ebb_stable_hash_batch(filter, keys, lens, n, hashes);
}

/* MADD: test-and-add in batches (the same answers and state as one at a
 * time), every item at the range's high end (Max), never refused. */
static void stable_madd_array(RedisModuleCtx *ctx, ebb_stable *filter,
                              RedisModuleString **items, int count)
{
    ebb_hash128 hashes[STABLE_BATCH];
    bool seen[STABLE_BATCH];
    RedisModule_ReplyWithArray(ctx, count);
    for (int start = 0; start < count; start += STABLE_BATCH) {
        size_t n = (size_t)(count - start < STABLE_BATCH ? count - start
                                                         : STABLE_BATCH);
        hash_items(filter, items + start, n, hashes);
        ebb_stable_test_and_add_batch(filter, hashes, NULL, n, seen, NULL);
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, seen[i] ? 0 : 1);
    }
}

/* [IMPORTANCE x] [NOCREATE] after the item of ADD and TESTADD, in any
 * order. Without IMPORTANCE, the range's high end (Max), as MADD; *out is
 * INFINITY then, resolved against the filter's range. False after
 * replying. */
static bool parse_add_options(RedisModuleCtx *ctx, RedisModuleString **argv,
                              int argc, const char *command, double *out,
                              bool *nocreate)
{
    bool have_importance = false;
    *out = INFINITY;
    *nocreate = false;
    for (int i = 3; i < argc; i++) {
        if (!*nocreate && ebb_redis_arg_is(argv[i], "NOCREATE")) {
            *nocreate = true;
            continue;
        }
        if (have_importance || !ebb_redis_arg_is(argv[i], "IMPORTANCE")) {
            ebb_redis_reply_unknown_option(ctx, argv[i], command);
            return false;
        }
        if (i + 1 >= argc) {
            RedisModule_WrongArity(ctx);
            return false;
        }
        have_importance = true;
        if (!ebb_redis_parse_finite(ctx, argv[++i], "IMPORTANCE", out))
            return false;
    }
    return true;
}

/* The refusal of an importance outside the range under OUTOFRANGE refuse. */
static int reply_refused_importance(RedisModuleCtx *ctx,
                                    const ebb_stable *filter,
                                    double importance)
{
    const ebb_stable_importance *range =
        &ebb_stable_get_params(filter)->importance;
    char value[32], low[32], high[32];
    ebb_redis_format_double(importance, value, sizeof value);
    ebb_redis_format_double(range->low, low, sizeof low);
    ebb_redis_format_double(range->high, high, sizeof high);
    return ebb_redis_reply_errorf(ctx,
                                  "ERR STABLE: IMPORTANCE %s is outside the "
                                  "range %s to %s (OUTOFRANGE refuse): item "
                                  "not added",
                                  value, low, high);
}

/* The common tail of ADD, MADD and TESTADD: open (maybe create), test and
 * add, reply, replicate verbatim, notify "stable.<command>". single: one
 * item at importance (INFINITY: the range's high end); the reply is 1 for
 * "seen" when seen_is_one (TESTADD), else 1 for "new" (ADD). */
static int stable_add_command(RedisModuleCtx *ctx, const char *command,
                              RedisModuleString *keyname,
                              RedisModuleString **items, int count,
                              bool single, double importance,
                              bool seen_is_one, bool nocreate)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open_for_add(ctx, keyname, &STABLE_CREATOR,
                                &STABLE_DEFAULTS, nocreate, &key, &value))
        return REDISMODULE_OK;
    ebb_stable *filter = value->filter;
    ebb_redis_value_touch(value);
    if (single) {
        if (isinf(importance))
            importance = ebb_stable_get_params(filter)->importance.high;
        size_t len;
        const char *item = RedisModule_StringPtrLen(items[0], &len);
        bool seen = false;
        ebb_status status =
            ebb_stable_test_and_add(filter, item, len, importance, &seen);
        /* A refusal is counted in the filter (refused), so it changes the
         * state and is replicated; a replica repeats it silently, since an
         * error reply from the primary's stream is logged as critical. */
        if (status != EBB_OK && !replaying(ctx))
            reply_refused_importance(ctx, filter, importance);
        else
            RedisModule_ReplyWithLongLong(ctx, seen == seen_is_one ? 1 : 0);
    } else {
        stable_madd_array(ctx, filter, items, count);
    }
    RedisModule_ReplicateVerbatim(ctx);
    ebb_redis_notify(ctx, &STABLE, command, keyname);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Opens keyname for a query: *filter is NULL for a missing key. Returns
 * false after replying an error. */
static bool stable_open_for_query(RedisModuleCtx *ctx,
                                  RedisModuleString *keyname,
                                  RedisModuleKey **key,
                                  const ebb_stable **filter)
{
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_READ, &STABLE, key,
                               &value))
        return false;
    *filter = value == NULL ? NULL : value->filter;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* STABLE.RESERVE key [options] */
static int stable_reserve_command(RedisModuleCtx *ctx,
                                  RedisModuleString **argv, int argc)
{
    if (argc < 2)
        return RedisModule_WrongArity(ctx);
    stable_options options = STABLE_DEFAULTS;
    int i = 2;
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "STABLE.RESERVE",
                                 stable_parse_option, &options, NULL) ||
        !stable_check_options(ctx, &options))
        return REDISMODULE_OK;
    return ebb_redis_reserve(ctx, argv[1], &STABLE_CREATOR, &options);
}

/* STABLE.ADD key item [IMPORTANCE x] [NOCREATE] */
static int stable_add(RedisModuleCtx *ctx, RedisModuleString **argv,
                      int argc)
{
    if (argc < 3 || argc > 6)
        return RedisModule_WrongArity(ctx);
    double importance;
    bool nocreate;
    if (!parse_add_options(ctx, argv, argc, "STABLE.ADD", &importance,
                           &nocreate))
        return REDISMODULE_OK;
    return stable_add_command(ctx, "add", argv[1], argv + 2, 1, true,
                              importance, false, nocreate);
}

/* STABLE.TESTADD key item [IMPORTANCE x] [NOCREATE] */
static int stable_testadd(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    if (argc < 3 || argc > 6)
        return RedisModule_WrongArity(ctx);
    double importance;
    bool nocreate;
    if (!parse_add_options(ctx, argv, argc, "STABLE.TESTADD", &importance,
                           &nocreate))
        return REDISMODULE_OK;
    return stable_add_command(ctx, "testadd", argv[1], argv + 2, 1, true,
                              importance, true, nocreate);
}

/* STABLE.MADD key item [item ...] */
static int stable_madd(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    return stable_add_command(ctx, "madd", argv[1], argv + 2, argc - 2,
                              false, INFINITY, false, false);
}

/* STABLE.EXISTS key item */
static int stable_exists(RedisModuleCtx *ctx, RedisModuleString **argv,
                         int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_stable *filter;
    if (!stable_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    long long present = 0;
    if (filter != NULL) {
        size_t len;
        const char *item = RedisModule_StringPtrLen(argv[2], &len);
        present = ebb_stable_contains(filter, item, len) ? 1 : 0;
    }
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, present);
}

/* STABLE.MEXISTS key item [item ...] */
static int stable_mexists(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_stable *filter;
    if (!stable_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    int count = argc - 2;
    ebb_hash128 hashes[STABLE_BATCH];
    bool present[STABLE_BATCH];
    RedisModule_ReplyWithArray(ctx, count);
    for (int start = 0; start < count; start += STABLE_BATCH) {
        size_t n = (size_t)(count - start < STABLE_BATCH ? count - start
                                                         : STABLE_BATCH);
        if (filter != NULL) {
            hash_items(filter, argv + 2 + start, n, hashes);
            ebb_stable_contains_batch(filter, hashes, n, present);
        }
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(
                ctx, filter != NULL && present[i] ? 1 : 0);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* The stable state's analysis fields (P = 0 has none: every cell fills). */
static void info_analysis(RedisModuleCtx *ctx, long *count,
                          const ebb_stable *filter)
{
    ebb_stable_analysis analysis;
    if (ebb_stable_analyse(ebb_stable_get_params(filter), NULL, &analysis) !=
        EBB_OK) {
        ebb_redis_info_text(ctx, count, "stable_zero_fraction", "none");
        ebb_redis_info_text(ctx, count, "fps", "none");
        return;
    }
    ebb_redis_info_double(ctx, count, "stable_zero_fraction",
                          analysis.zero_fraction);
    ebb_redis_info_double(ctx, count, "fps", analysis.fps);
}

/* STABLE.INFO key */
static int stable_info(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_stable *filter;
    if (!stable_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    if (filter == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR no such key");
    }
    const ebb_stable_params *p = ebb_stable_get_params(filter);
    ebb_stable_stats stats;
    ebb_stable_get_stats(filter, &stats);
    long count = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    ebb_redis_info_text(ctx, &count, "variant", variant_name(p->variant));
    ebb_redis_info_text(ctx, &count, "draw", draw_name(p->draw));
    ebb_redis_info_integer(ctx, &count, "cells", p->cells);
    ebb_redis_info_integer(ctx, &count, "cell_bits", p->cell_bits);
    ebb_redis_info_integer(ctx, &count, "max_level", stats.max_level);
    ebb_redis_info_integer(ctx, &count, "k", p->k);
    ebb_redis_info_integer(ctx, &count, "p", p->p);
    ebb_redis_info_double(ctx, &count, "importance_low", p->importance.low);
    ebb_redis_info_double(ctx, &count, "importance_high",
                          p->importance.high);
    ebb_redis_info_double(ctx, &count, "threshold", p->importance.threshold);
    ebb_redis_info_text(ctx, &count, "out_of_range",
                        policy_name(p->importance.policy));
    ebb_redis_info_integer(ctx, &count, "memory", ebb_stable_memory(filter));
    info_analysis(ctx, &count, filter);
    ebb_redis_info_integer(ctx, &count, "insertions", stats.insertions);
    ebb_redis_info_integer(ctx, &count, "zero_cells", stats.zero_cells);
    ebb_redis_info_double(ctx, &count, "zero_fraction", stats.zero_fraction);
    ebb_redis_info_integer(ctx, &count, "clamped", stats.clamped);
    ebb_redis_info_integer(ctx, &count, "refused", stats.refused);
    ebb_redis_info_integer(ctx, &count, "decrements", stats.decrements);
    ebb_redis_info_integer(ctx, &count, "h_gave_up", stats.h_gave_up);
    RedisModule_ReplySetArrayLength(ctx, count);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* name, handler, flags, arity, key spec, summary (glue.h). */
static const ebb_redis_command STABLE_COMMANDS[] = {
    {"STABLE.RESERVE", stable_reserve_command, "write deny-oom", -2,
     EBB_REDIS_KEY_CREATES, "Creates an empty stable filter"},
    {"STABLE.ADD", stable_add, "write deny-oom fast", -3, EBB_REDIS_KEY_ADDS,
     "Adds an item; answers whether it was new"},
    {"STABLE.MADD", stable_madd, "write deny-oom", -3, EBB_REDIS_KEY_ADDS,
     "Adds items; answers for each whether it was new"},
    {"STABLE.TESTADD", stable_testadd, "write deny-oom fast", -3,
     EBB_REDIS_KEY_ADDS,
     "Answers whether an item was seen, then adds it"},
    {"STABLE.EXISTS", stable_exists, "readonly fast", 3, EBB_REDIS_KEY_READS,
     "Answers whether an item was seen (within the filter's memory)"},
    {"STABLE.MEXISTS", stable_mexists, "readonly fast", -3,
     EBB_REDIS_KEY_READS, "Answers for each item whether it was seen"},
    {"STABLE.INFO", stable_info, "readonly", 2, EBB_REDIS_KEY_READS,
     "Returns the filter's parameters and counters"},
    EBB_REDIS_SNAPSHOT_COMMAND_ROWS(stable, STABLE),
};

int ebb_redis_stable_register(RedisModuleCtx *ctx)
{
    /* Type names are exactly 9 characters. */
    if (ebb_redis_snapshot_type_create(ctx, &STABLE, "ebb-stabl",
                                       &stable_type_methods) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return ebb_redis_create_commands(
        ctx, STABLE_COMMANDS,
        sizeof STABLE_COMMANDS / sizeof STABLE_COMMANDS[0]);
}
