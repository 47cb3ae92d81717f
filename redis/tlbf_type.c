/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf_type.c: the time-limited filter data type ("ebb-tlbf-") and its
 * commands.
 *
 *   TLBF.RESERVE   key span-ms [ERROR fp] [RATE per-second]
 *                  [MAXMEMORY bytes] [POLICY refuse|evict] [MAXNPWS f]
 *   TLBF.ADD       key item [NOCREATE]             -> 1 new / 0 seen
 *   TLBF.MADD      key item [item ...]             -> array of 1/0
 *   TLBF.ADDAT     key ms item [item ...]          -> array of 1/0
 *                  (a client's ms: within the span before now, at most
 *                  ebb.tlbf-future-ms ahead)
 *   TLBF.INSERT    key [NOCREATE] [SPAN ms] [ERROR fp] [RATE r]
 *                  [MAXMEMORY bytes] [POLICY p] [MAXNPWS f]
 *                  ITEMS item [item ...]           -> array of 1/0
 *   TLBF.EXISTS    key item                        -> 1 / 0
 *   TLBF.MEXISTS   key item [item ...]             -> array of 1/0
 *   TLBF.INFO      key                             -> field/value pairs
 *   TLBF.SCANDUMP  key iterator                    -> [iterator, data]
 *   TLBF.LOADCHUNK key iterator data               -> OK
 *
 * Time is the server's clock in milliseconds (RedisModule_Milliseconds),
 * passed to the library in nanoseconds. Writes must not read the clock
 * twice: ADD, MADD and INSERT read it once and replicate as
 * TLBF.ADDAT key <that ms> items..., so a replica or an AOF replay applies
 * every insertion at the primary's time, whatever its own clock says, and
 * reaches the same state bit for bit. Queries (EXISTS) read the local clock.
 */
#include <limits.h>

#include "glue.h"
#include "room.h"
#include "snapshot_type.h"

/* Defaults of a key created by ADD, MADD, ADDAT or INSERT (docs/redis.md). */
#define TLBF_DEFAULT_SPAN_MS 60000LL
#define TLBF_DEFAULT_FP 0.01
#define TLBF_DEFAULT_RATE 1000.0
#define TLBF_DEFAULT_MAX_MEMORY (64LL << 20)

#define NS_PER_MS 1000000LL
/* Items hashed and applied at once by MADD, ADDAT, INSERT and MEXISTS
 * (the library's batches; the same answers as one item at a time). */
#define TLBF_BATCH 64
/* The largest millisecond time whose nanoseconds fit in int64 (year 2262). */
#define TLBF_MAX_MS EBB_REDIS_TLBF_MAX_MS

/* How far ahead of the server's clock TLBF.ADDAT accepts a time (config
 * ebb.tlbf-future-ms, registered by module.c; docs/redis.md). */
long long ebb_redis_tlbf_future_ms = EBB_REDIS_TLBF_FUTURE_MS_DEFAULT;

/* The family table TLBF, the data-type callbacks and the handlers of
 * TLBF.SCANDUMP and TLBF.LOADCHUNK: persistence through the library's
 * snapshot (snapshot_type.h). */
EBB_REDIS_SNAPSHOT_FAMILY(tlbf, TLBF);

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct tlbf_options {
    long long span_ms;
    double fp;
    double rate; /* expected insertions per second: sizes the first slices */
    long long max_memory;
    ebb_tlbf_policy policy;
    double max_npws; /* 0: no bound */
} tlbf_options;

static const tlbf_options TLBF_DEFAULTS = {
    TLBF_DEFAULT_SPAN_MS,    TLBF_DEFAULT_FP,  TLBF_DEFAULT_RATE,
    TLBF_DEFAULT_MAX_MEMORY, EBB_TLBF_REFUSE, 0.0};

static const char *policy_name(ebb_tlbf_policy policy)
{
    return policy == EBB_TLBF_EVICT ? "evict" : "refuse";
}

static bool parse_policy(RedisModuleCtx *ctx, const RedisModuleString *arg,
                         ebb_tlbf_policy *out)
{
    if (ebb_redis_arg_is(arg, "REFUSE"))
        *out = EBB_TLBF_REFUSE;
    else if (ebb_redis_arg_is(arg, "EVICT"))
        *out = EBB_TLBF_EVICT;
    else {
        RedisModule_ReplyWithError(ctx,
                                   "ERR POLICY must be REFUSE or EVICT");
        return false;
    }
    return true;
}

/* An ebb_redis_option_parser (glue.h); opaque: the tlbf_options. */
static int tlbf_parse_option(RedisModuleCtx *ctx, RedisModuleString **argv,
                             int argc, int *i, bool span_option,
                             void *opaque)
{
    static const char *const NAMES[] = {"SPAN",      "ERROR",  "RATE",
                                        "MAXMEMORY", "POLICY", "MAXNPWS"};
    tlbf_options *options = opaque;
    int which = -1;
    for (int n = span_option ? 0 : 1; n < 6 && which < 0; n++)
        if (ebb_redis_arg_is(argv[*i], NAMES[n]))
            which = n;
    if (which < 0)
        return 0;
    if (*i + 1 >= argc) {
        RedisModule_WrongArity(ctx);
        return -1;
    }
    RedisModuleString *arg = argv[*i + 1];
    *i += 2;
    bool ok = false;
    switch (which) {
    case 0:
        ok = ebb_redis_parse_integer(ctx, arg, "span", 1, TLBF_MAX_MS,
                                     &options->span_ms);
        break;
    case 1:
        ok = ebb_redis_parse_rate(ctx, arg, "error rate", &options->fp);
        break;
    case 2:
        ok = ebb_redis_parse_positive(ctx, arg, "RATE", false,
                                      &options->rate);
        break;
    case 3:
        /* Parsed without this machine's memory: a replica must accept the
         * primary's MAXMEMORY (tlbf_resolve checks it on client calls). */
        ok = ebb_redis_parse_integer(ctx, arg, "MAXMEMORY", 1, LLONG_MAX,
                                     &options->max_memory);
        break;
    case 4:
        ok = parse_policy(ctx, arg, &options->policy);
        break;
    default:
        ok = ebb_redis_parse_positive(ctx, arg, "MAXNPWS", true,
                                      &options->max_npws);
        break;
    }
    return ok ? 1 : -1;
}

/* The library's config for options. */
static ebb_status tlbf_config(const tlbf_options *options,
                              ebb_tlbf_config *config)
{
    *config = (ebb_tlbf_config){0}; /* fields added later: defaults */
    config->span_ns = (int64_t)options->span_ms * NS_PER_MS;
    config->fp = options->fp;
    config->max_npws = options->max_npws;
    config->max_memory = (size_t)options->max_memory;
    config->policy = options->policy;
    return ebb_tlbf_capacity_for_rate(options->rate, config->span_ns,
                                      &config->initial_capacity);
}

/* opaque: the tlbf_options. */
static ebb_status tlbf_create(const void *opaque, uint64_t seed, void **out)
{
    ebb_tlbf_config config;
    ebb_status status = tlbf_config(opaque, &config);
    ebb_tlbf *filter = NULL;
    if (status == EBB_OK)
        status = ebb_tlbf_create(&config, seed, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

static int reply_create_status(RedisModuleCtx *ctx, ebb_status status,
                               const void *opaque);

/* On a client call, false (after replying) when MAXMEMORY is above what
 * this server can ever hold: the total of a memory limit (maxmemory, the
 * cgroup, RLIMIT_AS, the host), where the filter, growing to MAXMEMORY,
 * would be killed rather than refused. Never on a replicated call: the
 * primary decided (docs/redis.md, Memory limits). */
static bool tlbf_max_memory_fits(RedisModuleCtx *ctx,
                                 const tlbf_options *options)
{
    if (RedisModule_GetContextFlags(ctx) &
        (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING))
        return true;
    ebb_redis_limit limits[4];
    size_t count = ebb_redis_current_limits(ctx, limits);
    for (size_t i = 0; i < count; i++) {
        if ((uint64_t)options->max_memory <= limits[i].limit)
            continue;
        char asked[32], limit[32];
        ebb_redis_format_bytes(asked, sizeof asked,
                               (uint64_t)options->max_memory);
        ebb_redis_format_bytes(limit, sizeof limit, limits[i].limit);
        ebb_redis_reply_errorf(ctx,
                               "ERR TLBF: MAXMEMORY %lld (%s) is more than "
                               "%s can hold (%s %s)",
                               options->max_memory, asked, limits[i].name,
                               limits[i].label, limit);
        return false;
    }
    return true;
}

/* An ebb_redis_creator resolve: every TLBF option is explicit already (the
 * struct holds each, defaults filled in); the bytes are what create
 * allocates (the plan's initial_bytes; the filter then grows by slices up
 * to MAXMEMORY). opaque: the tlbf_options. */
static bool tlbf_resolve(RedisModuleCtx *ctx, void *opaque, size_t *bytes)
{
    const tlbf_options *options = opaque;
    ebb_tlbf_config config;
    ebb_tlbf_plan plan;
    ebb_status status = tlbf_config(options, &config);
    if (status == EBB_OK)
        status = ebb_tlbf_plan_config(&config, &plan);
    if (status == EBB_OK && plan.initial_bytes > config.max_memory)
        status = EBB_ELIMIT;
    if (status != EBB_OK) {
        reply_create_status(ctx, status, options);
        return false;
    }
    *bytes = plan.initial_bytes;
    return tlbf_max_memory_fits(ctx, options);
}

/* Replies why creation with options failed. opaque: the tlbf_options. */
static int reply_create_status(RedisModuleCtx *ctx, ebb_status status,
                               const void *opaque)
{
    const tlbf_options *options = opaque;
    /* The library's (k, l) come from the APBF chooser for ERROR and
     * MAXNPWS (at a window of a million; the shape does not depend on
     * it): name the one it cannot meet. */
    if (status == EBB_EINVAL)
        return ebb_redis_reply_shape_refused(ctx, TLBF.name, 1000000,
                                             options->fp, options->max_npws,
                                             0.0, 0, 0);
    if (status == EBB_ELIMIT)
        return RedisModule_ReplyWithError(
            ctx, "ERR TLBF: MAXMEMORY is too small for a filter of this "
                 "error rate and rate");
    return ebb_redis_reply_status(ctx, TLBF.name, status);
}

/* Replicates the TLBF.RESERVE that recreates a key exactly as created.
 * opaque: the tlbf_options. */
static void tlbf_replicate_reserve(RedisModuleCtx *ctx,
                                   RedisModuleString *keyname,
                                   const void *opaque)
{
    const tlbf_options *options = opaque;
    char fp[32], rate[32], npws[32];
    ebb_redis_format_double(options->fp, fp, sizeof fp);
    ebb_redis_format_double(options->rate, rate, sizeof rate);
    ebb_redis_format_double(options->max_npws, npws, sizeof npws);
    RedisModule_Replicate(ctx, "TLBF.RESERVE", "slccccclcccc", keyname,
                          options->span_ms, "ERROR", fp, "RATE", rate,
                          "MAXMEMORY", options->max_memory, "POLICY",
                          policy_name(options->policy), "MAXNPWS", npws);
}

_Static_assert(sizeof(tlbf_options) <= EBB_REDIS_OPTIONS_MAX,
               "value.c resolves a copy of the options on its stack");

/* Creation for RESERVE, and for ADD, MADD, ADDAT and INSERT on a missing
 * key. */
static const ebb_redis_creator TLBF_CREATOR = {
    .family = &TLBF,
    .options_size = sizeof(tlbf_options),
    .resolve = tlbf_resolve,
    .create = tlbf_create,
    .reply_refused = reply_create_status,
    .replicate_reserve = tlbf_replicate_reserve,
};

/* ------------------------------------------------------------------------ */
/* Adds                                                                     */
/* ------------------------------------------------------------------------ */

/* Replicates TLBF.ADDAT key ms with the items the replica must apply: every
 * item the primary added or refused (a refusal is deterministic and counted
 * in the filter's state), none that failed for want of memory here (that
 * changed nothing and depends on this machine). Returns whether anything
 * was replicated, that is whether the filter changed. */
static bool tlbf_replicate_addat(RedisModuleCtx *ctx,
                                 RedisModuleString *keyname, long long ms,
                                 RedisModuleString **items, int count,
                                 const ebb_status *statuses)
{
    int kept = 0;
    for (int i = 0; i < count; i++)
        kept += statuses[i] != EBB_ENOMEM;
    if (kept == 0)
        return false;
    if (kept == count) {
        RedisModule_Replicate(ctx, "TLBF.ADDAT", "slv", keyname, ms, items,
                              (size_t)count);
        return true;
    }
    RedisModuleString **subset = RedisModule_Alloc(sizeof *subset * kept);
    int n = 0;
    for (int i = 0; i < count; i++)
        if (statuses[i] != EBB_ENOMEM)
            subset[n++] = items[i];
    RedisModule_Replicate(ctx, "TLBF.ADDAT", "slv", keyname, ms, subset,
                          (size_t)n);
    RedisModule_Free(subset);
    return true;
}

/* Hashes items[0 .. n-1] with the filter's seed. */
static void tlbf_hash_items(const ebb_tlbf *filter, RedisModuleString **items,
                            size_t n, ebb_hash128 *hashes)
{
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *bytes = RedisModule_StringPtrLen(items[i], &len);
        hashes[i] = ebb_tlbf_hash(filter, bytes, len);
    }
}

/* Adds count items at now_ns, TLBF_BATCH at a time through the library's
 * check-and-add batch (exactly the one-at-a-time sequence, repeats inside
 * the command included): added[i] 1 when item i was not present before,
 * statuses[i] whether its add happened. */
static void tlbf_add_items(ebb_tlbf *filter, RedisModuleString **items,
                           int count, int64_t now_ns, long long *added,
                           ebb_status *statuses)
{
    ebb_hash128 hashes[TLBF_BATCH];
    bool seen[TLBF_BATCH];
    for (int start = 0; start < count; start += TLBF_BATCH) {
        size_t n = (size_t)(count - start < TLBF_BATCH ? count - start
                                                       : TLBF_BATCH);
        tlbf_hash_items(filter, items + start, n, hashes);
        ebb_tlbf_check_and_add_batch(filter, hashes, n, now_ns, seen,
                                     statuses + start);
        for (size_t i = 0; i < n; i++)
            added[start + (int)i] = seen[i] ? 0 : 1;
    }
}

/* Adds one item at now_ns: 1 when it was not present before, 0 when it
 * was; *status says whether the add happened. */
static long long tlbf_add_one(ebb_tlbf *filter, const RedisModuleString *item,
                              int64_t now_ns, ebb_status *status)
{
    size_t len;
    const char *bytes = RedisModule_StringPtrLen(item, &len);
    ebb_hash128 hash = ebb_tlbf_hash(filter, bytes, len);
    bool seen = ebb_tlbf_contains_hash(filter, hash, now_ns);
    *status = ebb_tlbf_add_hash(filter, hash, now_ns);
    return seen ? 0 : 1;
}

/* True when the command came from the primary or the AOF. */
static bool replaying(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) &
            (REDISMODULE_CTX_FLAGS_REPLICATED |
             REDISMODULE_CTX_FLAGS_LOADING)) != 0;
}

/* The common tail of ADD, MADD, ADDAT and INSERT: open (maybe create), add
 * every item at ms, reply (one integer when single, else an array with an
 * error in place of each item not added), replicate as ADDAT, notify
 * "tlbf.<command>". */
static int tlbf_add_command(RedisModuleCtx *ctx, const char *command,
                            RedisModuleString *keyname,
                            const tlbf_options *options, bool nocreate,
                            long long ms, RedisModuleString **items,
                            int count, bool single)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open_for_add(ctx, keyname, &TLBF_CREATOR, options, nocreate,
                                &key, &value))
        return REDISMODULE_OK;
    ebb_tlbf *filter = value->filter;
    ebb_redis_value_touch(value);
    int64_t now_ns = (int64_t)ms * NS_PER_MS;
    ebb_status one_status;
    long long one_added;
    ebb_status *statuses =
        single ? &one_status
               : RedisModule_Alloc(sizeof *statuses * (size_t)count);
    long long *added =
        single ? &one_added
               : RedisModule_Alloc(sizeof *added * (size_t)count);
    if (single)
        one_added = tlbf_add_one(filter, items[0], now_ns, &one_status);
    else
        tlbf_add_items(filter, items, count, now_ns, added, statuses);
    /* A refusal the primary already answered is repeated here only to
     * keep the filters identical; an error reply would have the server
     * log it as a critical replication problem. */
    bool replayed = replaying(ctx);
    if (!single)
        RedisModule_ReplyWithArray(ctx, count);
    for (int i = 0; i < count; i++) {
        if (statuses[i] == EBB_OK)
            RedisModule_ReplyWithLongLong(ctx, added[i]);
        else if (replayed && statuses[i] != EBB_ENOMEM)
            RedisModule_ReplyWithLongLong(ctx, 0);
        else {
            /* Out of memory depends on this machine: from the primary it
             * means this server now differs from it, so it is said, not
             * hidden (Redis logs the error reply as critical too). */
            if (replayed)
                RedisModule_Log(ctx, "warning",
                                "ebb: TLBF: out of memory applying the "
                                "primary's add to %s: this server no "
                                "longer matches its primary",
                                RedisModule_StringPtrLen(keyname, NULL));
            ebb_redis_reply_status(ctx, TLBF.name, statuses[i]);
        }
    }
    if (tlbf_replicate_addat(ctx, keyname, ms, items, count, statuses))
        ebb_redis_notify(ctx, &TLBF, command, keyname);
    if (!single) {
        RedisModule_Free(statuses);
        RedisModule_Free(added);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* The server's clock, read once per write command. */
static long long server_ms(void) { return RedisModule_Milliseconds(); }

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* TLBF.RESERVE key span-ms [ERROR fp] [RATE r] [MAXMEMORY bytes]
 *              [POLICY refuse|evict] [MAXNPWS f] */
static int tlbf_reserve_command(RedisModuleCtx *ctx, RedisModuleString **argv,
                                int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    tlbf_options options = TLBF_DEFAULTS;
    if (!ebb_redis_parse_integer(ctx, argv[2], "span", 1, TLBF_MAX_MS,
                                 &options.span_ms))
        return REDISMODULE_OK;
    int i = 3;
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "TLBF.RESERVE",
                                 tlbf_parse_option, &options, NULL))
        return REDISMODULE_OK;
    return ebb_redis_reserve(ctx, argv[1], &TLBF_CREATOR, &options);
}

/* TLBF.ADD key item [NOCREATE] */
static int tlbf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 4)
        return RedisModule_WrongArity(ctx);
    bool nocreate = argc == 4;
    if (nocreate && !ebb_redis_arg_is(argv[3], "NOCREATE"))
        return ebb_redis_reply_unknown_option(ctx, argv[3], "TLBF.ADD");
    return tlbf_add_command(ctx, "add", argv[1], &TLBF_DEFAULTS, nocreate,
                            server_ms(), argv + 2, 1, true);
}

/* TLBF.MADD key item [item ...] */
static int tlbf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    return tlbf_add_command(ctx, "madd", argv[1], &TLBF_DEFAULTS, false,
                            server_ms(),
                            argv + 2, argc - 2, false);
}

/* A time more than ebb.tlbf-future-ms ahead of the server's clock would
 * become the filter's latest time: every later add would be clamped to it
 * (items kept that much longer), and one more than a span ahead of the
 * newest slice would reset the filter (false negatives for the items of
 * the last span). False after replying an error. */
static bool addat_not_too_late(RedisModuleCtx *ctx, long long ms,
                               long long now)
{
    if (ms <= now || ms - now <= ebb_redis_tlbf_future_ms)
        return true;
    ebb_redis_reply_errorf(ctx,
                           "ERR TLBF: time %lld ms is %lld ms ahead of the "
                           "server clock (%lld ms); ADDAT accepts at most "
                           "%lld ms ahead (ebb.tlbf-future-ms)",
                           ms, ms - now, now, ebb_redis_tlbf_future_ms);
    return false;
}

/* An add older than the span before the later of the filter's latest time
 * and the server's clock would be clamped to the latest time and reported
 * present for a whole span: it is refused instead (it would already have
 * expired). A key ADDAT would create is judged with the default span.
 * False after replying an error (WRONGTYPE and a restore in progress
 * included). */
static bool addat_not_expired(RedisModuleCtx *ctx, RedisModuleString *keyname,
                              long long ms, long long now)
{
    RedisModuleKey *key;
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_READ, &TLBF, &key,
                               &value))
        return false;
    int64_t span_ns = (int64_t)TLBF_DEFAULTS.span_ms * NS_PER_MS;
    int64_t latest_ns = INT64_MIN;
    if (value != NULL) {
        ebb_tlbf_stats stats;
        ebb_tlbf_get_stats(value->filter, &stats);
        span_ns = stats.span_ns;
        latest_ns = stats.latest_ns;
    }
    RedisModule_CloseKey(key);
    int64_t clock_ns = (int64_t)now * NS_PER_MS;
    bool by_latest = latest_ns > clock_ns;
    int64_t reference_ns = by_latest ? latest_ns : clock_ns;
    int64_t at_ns = (int64_t)ms * NS_PER_MS;
    /* Both are >= 0, so the difference cannot overflow. */
    if (reference_ns <= at_ns ||
        (uint64_t)(reference_ns - at_ns) <= (uint64_t)span_ns)
        return true;
    ebb_redis_reply_errorf(ctx,
                           "ERR TLBF: time %lld ms is older than the span "
                           "(%lld ms) before %s (%lld ms): the item would "
                           "already have expired; nothing added",
                           ms, (long long)(span_ns / NS_PER_MS),
                           by_latest ? "the filter's latest time"
                                     : "the server clock",
                           (long long)(reference_ns / NS_PER_MS));
    return false;
}

/* TLBF.ADDAT key ms item [item ...]: the replicated form of every add.
 * From a client, the time must be within the span before now and at most
 * ebb.tlbf-future-ms ahead; from the primary or the AOF it is applied as
 * the primary decided, with no check that reads this server's clock (a
 * replica must reach the primary's state whatever its clock says). */
static int tlbf_addat(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    long long ms;
    if (!ebb_redis_parse_integer(ctx, argv[2], "time (ms)", 0, TLBF_MAX_MS,
                                 &ms))
        return REDISMODULE_OK;
    if (!replaying(ctx)) {
        long long now = server_ms();
        if (!addat_not_too_late(ctx, ms, now) ||
            !addat_not_expired(ctx, argv[1], ms, now))
            return REDISMODULE_OK;
    }
    return tlbf_add_command(ctx, "addat", argv[1], &TLBF_DEFAULTS, false, ms,
                            argv + 3, argc - 3, false);
}

/* TLBF.INSERT key [NOCREATE] [SPAN ms] [ERROR fp] [RATE r] [MAXMEMORY b]
 *             [POLICY p] [MAXNPWS f] ITEMS item [item ...] */
static int tlbf_insert(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    tlbf_options options = TLBF_DEFAULTS;
    bool nocreate = false;
    int i = 2;
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "TLBF.INSERT",
                                 tlbf_parse_option, &options, &nocreate))
        return REDISMODULE_OK;
    return tlbf_add_command(ctx, "insert", argv[1], &options, nocreate,
                            server_ms(),
                            argv + i + 1, argc - i - 1, false);
}

/* Opens keyname for a query: *filter is NULL for a missing key. Returns
 * false after replying an error. */
static bool tlbf_open_for_query(RedisModuleCtx *ctx,
                                RedisModuleString *keyname,
                                RedisModuleKey **key, const ebb_tlbf **filter)
{
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_READ, &TLBF, key,
                               &value))
        return false;
    *filter = value == NULL ? NULL : value->filter;
    return true;
}

static long long tlbf_contains(const ebb_tlbf *filter,
                               const RedisModuleString *item, int64_t now_ns)
{
    if (filter == NULL)
        return 0;
    size_t len;
    const char *bytes = RedisModule_StringPtrLen(item, &len);
    return ebb_tlbf_contains(filter, bytes, len, now_ns) ? 1 : 0;
}

/* TLBF.EXISTS key item */
static int tlbf_exists(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_tlbf *filter;
    if (!tlbf_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    long long present =
        tlbf_contains(filter, argv[2], (int64_t)server_ms() * NS_PER_MS);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, present);
}

/* TLBF.MEXISTS key item [item ...] */
static int tlbf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_tlbf *filter;
    if (!tlbf_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    int64_t now_ns = (int64_t)server_ms() * NS_PER_MS;
    int count = argc - 2;
    ebb_hash128 hashes[TLBF_BATCH];
    bool present[TLBF_BATCH];
    RedisModule_ReplyWithArray(ctx, count);
    for (int start = 0; start < count; start += TLBF_BATCH) {
        size_t n = (size_t)(count - start < TLBF_BATCH ? count - start
                                                       : TLBF_BATCH);
        if (filter == NULL) {
            for (size_t i = 0; i < n; i++)
                RedisModule_ReplyWithLongLong(ctx, 0);
            continue;
        }
        tlbf_hash_items(filter, argv + 2 + start, n, hashes);
        ebb_tlbf_contains_batch(filter, hashes, n, now_ns, present);
        for (size_t i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, present[i] ? 1 : 0);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* TLBF.INFO key */
static int tlbf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_tlbf *filter;
    if (!tlbf_open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    if (filter == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR no such key");
    }
    ebb_tlbf_stats stats;
    ebb_tlbf_get_stats(filter, &stats);
    long count = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    ebb_redis_info_signed(ctx, &count, "span_ms", stats.span_ns / NS_PER_MS);
    ebb_redis_info_integer(ctx, &count, "k", stats.k);
    ebb_redis_info_integer(ctx, &count, "l", stats.l);
    ebb_redis_info_double(ctx, &count, "fp", ebb_apbf_fp(stats.k, stats.l));
    ebb_redis_info_double(ctx, &count, "current_fp", stats.current_fp);
    ebb_redis_info_text(ctx, &count, "policy", policy_name(stats.policy));
    ebb_redis_info_integer(ctx, &count, "max_memory", stats.max_memory);
    ebb_redis_info_integer(ctx, &count, "memory", stats.memory_bytes);
    ebb_redis_info_integer(ctx, &count, "slices", stats.slices);
    ebb_redis_info_integer(ctx, &count, "live_slices", stats.live_slices);
    ebb_redis_info_integer(ctx, &count, "newest_slice_bits",
                           stats.slice0_bits);
    ebb_redis_info_integer(ctx, &count, "insertions", stats.insertions);
    ebb_redis_info_integer(ctx, &count, "items_in_span",
                           stats.items_in_span);
    ebb_redis_info_integer(ctx, &count, "shifts", stats.shifts);
    ebb_redis_info_integer(ctx, &count, "evicted_slices",
                           stats.evicted_slices);
    ebb_redis_info_integer(ctx, &count, "refused", stats.refused);
    ebb_redis_info_integer(ctx, &count, "clamped", stats.clamped);
    ebb_redis_info_integer(ctx, &count, "resets", stats.resets);
    /* -1 until the first insertion. */
    ebb_redis_info_signed(ctx, &count, "latest_ms",
                          stats.latest_ns == INT64_MIN
                              ? -1
                              : stats.latest_ns / NS_PER_MS);
    RedisModule_ReplySetArrayLength(ctx, count);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* name, handler, flags, arity, key spec, summary (glue.h). */
static const ebb_redis_command TLBF_COMMANDS[] = {
    {"TLBF.RESERVE", tlbf_reserve_command, "write deny-oom", -3,
     EBB_REDIS_KEY_CREATES, "Creates an empty filter over a span of time"},
    {"TLBF.ADD", tlbf_add, "write deny-oom fast", -3,
     EBB_REDIS_KEY_ADDS, "Adds an item now; answers whether it was new"},
    {"TLBF.MADD", tlbf_madd, "write deny-oom", -3,
     EBB_REDIS_KEY_ADDS, "Adds items now; answers for each whether it was new"},
    {"TLBF.ADDAT", tlbf_addat, "write deny-oom", -4,
     EBB_REDIS_KEY_ADDS, "Adds items at a given time in milliseconds"},
    {"TLBF.INSERT", tlbf_insert, "write deny-oom", -4,
     EBB_REDIS_KEY_ADDS,
     "Adds items, creating the filter with the given parameters"},
    {"TLBF.EXISTS", tlbf_exists, "readonly fast", 3,
     EBB_REDIS_KEY_READS, "Answers whether an item was added within the span"},
    {"TLBF.MEXISTS", tlbf_mexists, "readonly fast", -3,
     EBB_REDIS_KEY_READS,
     "Answers for each item whether it was added within the span"},
    {"TLBF.INFO", tlbf_info, "readonly fast", 2,
     EBB_REDIS_KEY_READS, "Returns the filter's parameters and counters"},
    EBB_REDIS_SNAPSHOT_COMMAND_ROWS(tlbf, TLBF),
};

int ebb_redis_tlbf_register(RedisModuleCtx *ctx)
{
    /* Type names are exactly 9 characters. */
    if (ebb_redis_snapshot_type_create(ctx, &TLBF, "ebb-tlbf-",
                                       &tlbf_type_methods) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return ebb_redis_create_commands(
        ctx, TLBF_COMMANDS, sizeof TLBF_COMMANDS / sizeof TLBF_COMMANDS[0]);
}
