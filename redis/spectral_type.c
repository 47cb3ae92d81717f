/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spectral_type.c: the Spectral Bloom filter data type ("ebb-spect") and
 * its commands: counts of items, not just membership (include/ebb/
 * spectral.h, docs/spectral.md).
 *
 *   SPECTRAL.RESERVE   key [DISTINCT n] [ERROR e] | [COUNTERS m [K k]
 *                      [BITS w] [SECONDARY ms] [SECONDARYK ks]
 *                      [MARKER slots]] [METHOD MS|MI|RM]
 *                      [STORAGE FIXED|GAMMA|DELTA|STEPS] [RANGE r]
 *                      [SEED s]                        -> OK
 *   SPECTRAL.INCRBY    key item n [item n ...]         -> counts after
 *   SPECTRAL.DECRBY    key item n [item n ...]         -> counts after
 *   SPECTRAL.QUERY     key item [item ...]             -> counts
 *   SPECTRAL.ICEBERG   key threshold item [item ...]   -> array of 1/0
 *   SPECTRAL.RANGE     key lo hi                       -> count of lo..hi
 *   SPECTRAL.MERGE     dest src [src ...] [WEIGHTS w ...] [PARTITIONED]
 *   SPECTRAL.INFO      key                             -> field/value pairs
 *   SPECTRAL.SCANDUMP  key iterator                    -> [iterator, data]
 *   SPECTRAL.LOADCHUNK key iterator data               -> OK
 *
 * A count is the library's estimate, never below the truth under MS and
 * RM (exact marker) without deletions beyond the inserts; a saturated
 * estimate (EBB_SPECTRAL_SATURATED, "at least 2^bits - 1") is answered -1.
 * A filter reserved with RANGE r counts integer items 0..r - 1 (decimal)
 * through the library's _int calls, which also count the dyadic nodes
 * SPECTRAL.RANGE sums.
 *
 * MERGE names its keys for the server (getkeys-api: dest written, the
 * sources read, up to WEIGHTS), so cluster routing, CROSSSLOT and ACL key
 * patterns cover every key it touches.
 *
 * Replication: every write is replicated as the items it applied (a
 * refused decrement is applied too: the refusal is counted in the state);
 * an update that failed for want of memory (compact storage) changed
 * nothing and is left out.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ebb/spectral.h>

#include "glue.h"
#include "room.h"
#include "snapshot_type.h"

/* Defaults of a key created by INCRBY, the same as `ebb count`'s
 * (cli/spectral_options.h): 100,000 distinct keys at error ratio 0.01,
 * Minimum Selection; with COUNTERS, k 4 and 32-bit counters. */
#define SPECTRAL_DEFAULT_DISTINCT 100000ULL
#define SPECTRAL_DEFAULT_ERROR 0.01
#define SPECTRAL_DEFAULT_K 4
#define SPECTRAL_DEFAULT_BITS 32

/* Items hashed and answered per library batch. */
#define SPECTRAL_BATCH 64

/* A saturated count's reply: a count is never negative. */
#define SPECTRAL_SATURATED_REPLY (-1LL)

EBB_REDIS_SNAPSHOT_FAMILY(spectral, SPECTRAL);

static bool replaying(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) &
            (REDISMODULE_CTX_FLAGS_REPLICATED |
             REDISMODULE_CTX_FLAGS_LOADING)) != 0;
}

static long long count_reply(uint64_t estimate)
{
    if (estimate == EBB_SPECTRAL_SATURATED || estimate > (uint64_t)LLONG_MAX)
        return SPECTRAL_SATURATED_REPLY;
    return (long long)estimate;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct spectral_options {
    unsigned long long distinct;
    double error;
    long long counters; /* 0: sized by DISTINCT and ERROR */
    long long k, bits;
    long long secondary, secondary_k, marker; /* RM with COUNTERS; 0: default */
    long long range;
    unsigned long long seed;
    bool have_seed, have_distinct, have_error, have_k, have_bits;
    ebb_spectral_method method;
    ebb_spectral_storage storage;
    ebb_spectral_params params; /* resolved */
} spectral_options;

static const spectral_options SPECTRAL_DEFAULTS = {
    .distinct = SPECTRAL_DEFAULT_DISTINCT,
    .error = SPECTRAL_DEFAULT_ERROR,
    .k = SPECTRAL_DEFAULT_K,
    .bits = SPECTRAL_DEFAULT_BITS,
    .method = EBB_SPECTRAL_MS,
    .storage = EBB_SPECTRAL_FIXED,
};

static const char *const METHOD_NAMES[] = {"MS", "MI", "RM"};
static const char *const STORAGE_NAMES[] = {"FIXED", "GAMMA", "DELTA",
                                            "STEPS"};
static const char *const MARKER_NAMES[] = {"exact", "bloom", "none"};

/* An unsigned 64-bit decimal (SEED): digits only. */
static bool parse_u64(RedisModuleCtx *ctx, const RedisModuleString *arg,
                      const char *what, unsigned long long *out)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    bool ok = len > 0 && len <= 20;
    for (size_t i = 0; ok && i < len; i++)
        ok = text[i] >= '0' && text[i] <= '9';
    if (ok) {
        char buf[24];
        memcpy(buf, text, len);
        buf[len] = '\0';
        errno = 0;
        *out = strtoull(buf, NULL, 10);
        ok = errno == 0;
    }
    if (!ok)
        ebb_redis_reply_errorf(ctx,
                               "ERR %s must be an integer from 0 to "
                               "18446744073709551615",
                               what);
    return ok;
}

static bool parse_word(RedisModuleCtx *ctx, const RedisModuleString *arg,
                       const char *what, const char *const *names, int count,
                       int *out)
{
    for (int i = 0; i < count; i++) {
        if (ebb_redis_arg_is(arg, names[i])) {
            *out = i;
            return true;
        }
    }
    ebb_redis_reply_errorf(ctx, "ERR %s must be %s", what,
                           count == 3 ? "MS, MI or RM"
                                      : "FIXED, GAMMA, DELTA or STEPS");
    return false;
}

/* An ebb_redis_option_parser (glue.h); opaque: the spectral_options. */
static int spectral_parse_option(RedisModuleCtx *ctx,
                                 RedisModuleString **argv, int argc, int *i,
                                 bool size_option, void *opaque)
{
    static const char *const NAMES[] = {
        "DISTINCT",   "ERROR",  "COUNTERS", "K",     "BITS",
        "SECONDARY",  "SECONDARYK", "MARKER", "METHOD", "STORAGE",
        "RANGE",      "SEED"};
    (void)size_option;
    spectral_options *o = opaque;
    int which = -1;
    for (int n = 0; n < 12 && which < 0; n++)
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
    long long distinct = 0;
    int word = 0;
    bool ok = false;
    switch (which) {
    case 0:
        ok = ebb_redis_parse_integer(ctx, arg, "DISTINCT", 1, LLONG_MAX,
                                     &distinct);
        o->distinct = (unsigned long long)distinct;
        o->have_distinct = true;
        break;
    case 1:
        ok = ebb_redis_parse_rate(ctx, arg, "ERROR", &o->error);
        o->have_error = true;
        break;
    case 2:
        ok = ebb_redis_parse_integer(ctx, arg, "COUNTERS", 1,
                                     (long long)EBB_SPECTRAL_MAX_COUNTERS,
                                     &o->counters);
        break;
    case 3:
        ok = ebb_redis_parse_integer(ctx, arg, "K", 1, EBB_SPECTRAL_MAX_K,
                                     &o->k);
        o->have_k = true;
        break;
    case 4:
        ok = ebb_redis_parse_integer(ctx, arg, "BITS", 1,
                                     EBB_SPECTRAL_MAX_COUNTER_BITS, &o->bits);
        o->have_bits = true;
        break;
    case 5:
        ok = ebb_redis_parse_integer(ctx, arg, "SECONDARY", 1,
                                     (long long)EBB_SPECTRAL_MAX_COUNTERS,
                                     &o->secondary);
        break;
    case 6:
        ok = ebb_redis_parse_integer(ctx, arg, "SECONDARYK", 1,
                                     EBB_SPECTRAL_MAX_K, &o->secondary_k);
        break;
    case 7:
        ok = ebb_redis_parse_integer(ctx, arg, "MARKER", 1,
                                     (long long)EBB_SPECTRAL_MAX_COUNTERS,
                                     &o->marker);
        break;
    case 8:
        ok = parse_word(ctx, arg, "METHOD", METHOD_NAMES, 3, &word);
        o->method = (ebb_spectral_method)word;
        break;
    case 9:
        ok = parse_word(ctx, arg, "STORAGE", STORAGE_NAMES, 4, &word);
        o->storage = (ebb_spectral_storage)word;
        break;
    case 10:
        ok = ebb_redis_parse_integer(ctx, arg, "RANGE", 0,
                                     (long long)EBB_SPECTRAL_MAX_RANGE,
                                     &o->range);
        break;
    default:
        ok = parse_u64(ctx, arg, "SEED", &o->seed);
        o->have_seed = true;
        break;
    }
    return ok ? 1 : -1;
}

/* The option combinations `ebb count` refuses, refused alike. */
static bool spectral_options_consistent(RedisModuleCtx *ctx,
                                        const spectral_options *o)
{
    const char *problem = NULL;
    if (o->counters > 0 && (o->have_distinct || o->have_error))
        problem = "ERR COUNTERS cannot be combined with DISTINCT or ERROR";
    else if (o->counters == 0 && (o->have_k || o->have_bits))
        problem = "ERR K and BITS require COUNTERS";
    else if ((o->secondary || o->secondary_k || o->marker) &&
             (o->counters == 0 || o->method != EBB_SPECTRAL_RM))
        problem = "ERR SECONDARY, SECONDARYK and MARKER require COUNTERS "
                  "and METHOD RM";
    if (problem != NULL)
        RedisModule_ReplyWithError(ctx, problem);
    return problem == NULL;
}

/* The library's shape for options, or false after replying. */
static bool spectral_shape(RedisModuleCtx *ctx, const spectral_options *o,
                           ebb_spectral_params *p)
{
    ebb_status status;
    if (o->counters > 0) {
        status = ebb_spectral_params_init((uint64_t)o->counters,
                                          (uint32_t)o->bits, (uint32_t)o->k,
                                          o->method, p);
        if (status == EBB_OK && o->secondary > 0) {
            /* An explicit RM split: COUNTERS is then the primary's. */
            p->counters = (uint64_t)o->counters;
            p->secondary = (uint64_t)o->secondary;
            p->marker_size = (p->secondary + 1) / 2;
        }
        if (status == EBB_OK && o->secondary_k > 0)
            p->secondary_k = (uint32_t)o->secondary_k;
        if (status == EBB_OK && o->marker > 0)
            p->marker_size = (uint64_t)o->marker;
    } else {
        status = ebb_spectral_choose(o->distinct, o->error, o->method, p);
        if (status != EBB_OK) {
            ebb_redis_reply_errorf(ctx,
                                   "ERR SPECTRAL: no filter within the "
                                   "limits counts %llu distinct keys with "
                                   "ERROR %g",
                                   o->distinct, o->error);
            return false;
        }
    }
    p->range = (uint64_t)o->range;
    p->storage = o->storage;
    if (status == EBB_OK)
        status = ebb_spectral_params_check(p);
    if (status != EBB_OK) {
        ebb_redis_reply_errorf(ctx,
                               "ERR SPECTRAL: the library refused the shape "
                               "(COUNTERS, K, BITS, SECONDARY, SECONDARYK, "
                               "MARKER): %s",
                               ebb_strerror(status));
        return false;
    }
    return true;
}

/* An ebb_redis_creator resolve: the shape decided, every field explicit
 * afterwards (what replicate_reserve sends). opaque: spectral_options. */
static bool spectral_resolve(RedisModuleCtx *ctx, void *opaque, size_t *bytes)
{
    spectral_options *o = opaque;
    if (!spectral_options_consistent(ctx, o) ||
        !spectral_shape(ctx, o, &o->params))
        return false;
    const ebb_spectral_params *p = &o->params;
    o->counters = (long long)p->counters;
    o->k = p->k;
    o->bits = p->counter_bits;
    if (p->method == EBB_SPECTRAL_RM) {
        o->secondary = (long long)p->secondary;
        o->secondary_k = p->secondary_k;
        o->marker = (long long)p->marker_size;
    }
    o->have_distinct = o->have_error = false;
    *bytes = ebb_spectral_memory_for(p);
    return true;
}

static ebb_status spectral_create(const void *opaque, uint64_t seed,
                                  void **out)
{
    const spectral_options *o = opaque;
    ebb_spectral_params p = o->params;
    p.seed = o->have_seed ? o->seed : seed;
    ebb_spectral *filter = NULL;
    ebb_status status = ebb_spectral_create(&p, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

/* Replicates the SPECTRAL.RESERVE that recreates the key as created: its
 * shape, explicit (RM's split included), and its seed (the key name's
 * unless SEED was given). opaque: resolved options. */
static void spectral_replicate_reserve(RedisModuleCtx *ctx,
                                       RedisModuleString *keyname,
                                       const void *opaque)
{
    const spectral_options *o = opaque;
    char counters[24], k[24], bits[24], range[24], seed[24];
    char secondary[24], secondary_k[24], marker[24];
    snprintf(counters, sizeof counters, "%lld", o->counters);
    snprintf(k, sizeof k, "%lld", o->k);
    snprintf(bits, sizeof bits, "%lld", o->bits);
    snprintf(range, sizeof range, "%lld", o->range);
    snprintf(seed, sizeof seed, "%llu",
             o->have_seed ? o->seed
                          : (unsigned long long)ebb_redis_key_seed(keyname));
    snprintf(secondary, sizeof secondary, "%lld", o->secondary);
    snprintf(secondary_k, sizeof secondary_k, "%lld", o->secondary_k);
    snprintf(marker, sizeof marker, "%lld", o->marker);
    const char *method = METHOD_NAMES[o->method];
    const char *storage = STORAGE_NAMES[o->storage];
    if (o->method == EBB_SPECTRAL_RM)
        RedisModule_Replicate(ctx, "SPECTRAL.RESERVE", "scccccccccccccccccccc",
                              keyname, "COUNTERS", counters, "K", k, "BITS",
                              bits, "METHOD", method, "SECONDARY", secondary,
                              "SECONDARYK", secondary_k, "MARKER", marker,
                              "STORAGE", storage, "RANGE", range, "SEED",
                              seed);
    else
        RedisModule_Replicate(ctx, "SPECTRAL.RESERVE", "scccccccccccccc",
                              keyname, "COUNTERS", counters, "K", k, "BITS",
                              bits, "METHOD", method, "STORAGE", storage,
                              "RANGE", range, "SEED", seed);
}

_Static_assert(sizeof(spectral_options) <= EBB_REDIS_OPTIONS_MAX,
               "value.c resolves a copy of the options on its stack");

static const ebb_redis_creator SPECTRAL_CREATOR = {
    .family = &SPECTRAL,
    .options_size = sizeof(spectral_options),
    .resolve = spectral_resolve,
    .create = spectral_create,
    .reply_refused = NULL,
    .replicate_reserve = spectral_replicate_reserve,
};

/* SPECTRAL.RESERVE key [options] */
static int spectral_reserve(RedisModuleCtx *ctx, RedisModuleString **argv,
                            int argc)
{
    if (argc < 2)
        return RedisModule_WrongArity(ctx);
    spectral_options options = SPECTRAL_DEFAULTS;
    int i = 2;
    if (!ebb_redis_parse_options(ctx, argv, argc, &i, "SPECTRAL.RESERVE",
                                 spectral_parse_option, &options, NULL))
        return REDISMODULE_OK;
    return ebb_redis_reserve(ctx, argv[1], &SPECTRAL_CREATOR, &options);
}

/* ------------------------------------------------------------------------ */
/* Items                                                                    */
/* ------------------------------------------------------------------------ */

/* A range filter's item: an integer 0..range - 1. */
static bool parse_int_item(RedisModuleCtx *ctx, const ebb_spectral *filter,
                           const RedisModuleString *item, uint64_t *out)
{
    uint64_t range = ebb_spectral_get_params(filter)->range;
    long long x;
    if (!ebb_redis_parse_integer(ctx, item, "item (RANGE filter)", 0,
                                 (long long)(range - 1), &x))
        return false;
    *out = (uint64_t)x;
    return true;
}

/* The hash of an item: its bytes, or for a range filter the 8 bytes of
 * the integer little-endian (what the library's _int calls hash). */
static ebb_hash128 item_hash(const ebb_spectral *filter,
                             const RedisModuleString *item, uint64_t x)
{
    if (ebb_spectral_get_params(filter)->range > 0) {
        unsigned char le[8];
        for (int b = 0; b < 8; b++)
            le[b] = (unsigned char)(x >> (8 * b));
        return ebb_spectral_hash(filter, le, sizeof le);
    }
    size_t len;
    const char *bytes = RedisModule_StringPtrLen(item, &len);
    return ebb_spectral_hash(filter, bytes, len);
}

/* Validates every item of a range filter before anything changes.
 * values: out, one per item (NULL items: not a range filter). */
static bool parse_items(RedisModuleCtx *ctx, const ebb_spectral *filter,
                        RedisModuleString **items, int count, int stride,
                        uint64_t *values)
{
    bool ranged = filter != NULL && ebb_spectral_get_params(filter)->range > 0;
    for (int i = 0; i < count; i++) {
        values[i] = 0;
        if (ranged &&
            !parse_int_item(ctx, filter, items[i * stride], &values[i]))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* INCRBY and DECRBY                                                        */
/* ------------------------------------------------------------------------ */

/* One INCRBY's or DECRBY's pairs and what became of them. Small commands
 * (the usual one pair) keep their arrays in the struct: four allocations
 * and frees per call were a tenth of an INCRBY's server time. */
#define UPDATE_INLINE 4

typedef struct update_batch {
    int count;                 /* item/n pairs                        */
    RedisModuleString **pairs; /* argv + 2                            */
    uint64_t *amounts;
    uint64_t *values;          /* range filters: the integers         */
    ebb_status *statuses;
    uint64_t *estimates;
    ebb_hash128 *hashes;       /* each item's hash, computed once     */
    void *heap;                /* the arrays, when count > INLINE     */
    struct {
        uint64_t amounts[UPDATE_INLINE], values[UPDATE_INLINE];
        uint64_t estimates[UPDATE_INLINE];
        ebb_status statuses[UPDATE_INLINE];
        ebb_hash128 hashes[UPDATE_INLINE];
    } small;
} update_batch;

static void update_batch_free(update_batch *u)
{
    RedisModule_Free(u->heap);
}

static void update_batch_alloc(update_batch *u, RedisModuleString **argv,
                               int argc)
{
    u->count = (argc - 2) / 2;
    u->pairs = argv + 2;
    u->heap = NULL;
    size_t n = (size_t)u->count;
    if (n <= UPDATE_INLINE) {
        u->amounts = u->small.amounts;
        u->values = u->small.values;
        u->estimates = u->small.estimates;
        u->statuses = u->small.statuses;
        u->hashes = u->small.hashes;
        return;
    }
    /* The 16-byte hashes first, so every array stays aligned. */
    size_t each = sizeof(ebb_hash128) + 3 * sizeof(uint64_t) +
                  sizeof(ebb_status);
    char *block = RedisModule_Alloc(n * each);
    u->heap = block;
    u->hashes = (ebb_hash128 *)(void *)block;
    u->amounts = (uint64_t *)(void *)(block + n * sizeof(ebb_hash128));
    u->values = u->amounts + n;
    u->estimates = u->values + n;
    u->statuses = (ebb_status *)(void *)(u->estimates + n);
}

/* Each item's hash: its bytes, or a range filter's integer. */
static void hash_items(const ebb_spectral *filter, update_batch *u)
{
    for (int i = 0; i < u->count; i++)
        u->hashes[i] = item_hash(filter, u->pairs[2 * i], u->values[i]);
}

static bool parse_amounts(RedisModuleCtx *ctx, update_batch *u)
{
    for (int i = 0; i < u->count; i++) {
        long long n;
        if (!ebb_redis_parse_integer(ctx, u->pairs[2 * i + 1], "increment",
                                     1, LLONG_MAX, &n))
            return false;
        u->amounts[i] = (uint64_t)n;
    }
    return true;
}

/* Each item's count after the whole command. */
static void read_estimates(const ebb_spectral *filter, update_batch *u)
{
    for (int i = 0; i < u->count; i++)
        u->estimates[i] = ebb_spectral_estimate_hash(filter, u->hashes[i]);
}

/* Starts loading the counters of the items (up to the inline few), so
 * that the cache misses of a filter larger than the caches overlap the
 * command's work before the update. */
static void prefetch_items(const ebb_spectral *filter, const update_batch *u)
{
    /* A range filter's add updates the item's dyadic nodes, not the
     * counters of its own hash: nothing useful to fetch. */
    if (ebb_spectral_get_params(filter)->range > 0)
        return;
    for (int i = 0; i < u->count && i < UPDATE_INLINE; i++)
        ebb_spectral_prefetch_hash(filter, u->hashes[i]);
}

static void apply_increments_each(ebb_spectral *filter, update_batch *u)
{
    const ebb_spectral_params *p = ebb_spectral_get_params(filter);
    if (p->range > 0 || p->storage != EBB_SPECTRAL_FIXED) {
        for (int i = 0; i < u->count; i++) {
            if (p->range > 0) {
                u->statuses[i] =
                    ebb_spectral_add_int(filter, u->values[i], u->amounts[i]);
            } else {
                u->statuses[i] = ebb_spectral_add_hash(filter, u->hashes[i],
                                                       u->amounts[i]);
            }
        }
        return;
    }
    for (int i = 0; i < u->count; i++)
        u->statuses[i] = EBB_OK;
    (void)ebb_spectral_add_batch(filter, u->hashes, u->amounts,
                                 (size_t)u->count);
}

/* Applies the increments, then reads each item's count: the batch call
 * for fixed storage (never fails), one at a time for compact storage so
 * an EBB_ENOMEM names its item. One pair, the usual command, is one call
 * that answers its count from the counters it just wrote. */
static void apply_increments(ebb_spectral *filter, update_batch *u)
{
    if (u->count == 1 && ebb_spectral_get_params(filter)->range == 0) {
        u->statuses[0] = ebb_spectral_add_estimate_hash(
            filter, u->hashes[0], u->amounts[0], &u->estimates[0]);
        return;
    }
    apply_increments_each(filter, u);
    read_estimates(filter, u);
}

/* Applies the decrements, then reads each item's count. */
static void apply_decrements(ebb_spectral *filter, update_batch *u)
{
    bool ranged = ebb_spectral_get_params(filter)->range > 0;
    for (int i = 0; i < u->count; i++) {
        if (ranged) {
            u->statuses[i] = ebb_spectral_remove_int(filter, u->values[i],
                                                     u->amounts[i]);
        } else {
            u->statuses[i] = ebb_spectral_remove_hash(filter, u->hashes[i],
                                                      u->amounts[i]);
        }
    }
    read_estimates(filter, u);
}

/* Replicates the pairs that changed the state (all but EBB_ENOMEM's);
 * returns whether any did. */
static bool replicate_applied(RedisModuleCtx *ctx, const char *command,
                              RedisModuleString *keyname,
                              const update_batch *u)
{
    int kept = 0;
    for (int i = 0; i < u->count; i++)
        kept += u->statuses[i] != EBB_ENOMEM;
    if (kept == 0)
        return false;
    if (kept == u->count) {
        /* The usual case, and much cheaper than building a command. */
        RedisModule_ReplicateVerbatim(ctx);
        return true;
    }
    RedisModuleString **args =
        RedisModule_Alloc(sizeof *args * (size_t)(2 * kept + 1));
    int n = 0;
    args[n++] = keyname;
    for (int i = 0; i < u->count; i++) {
        if (u->statuses[i] == EBB_ENOMEM)
            continue;
        args[n++] = u->pairs[2 * i];
        args[n++] = u->pairs[2 * i + 1];
    }
    RedisModule_Replicate(ctx, command, "v", args, (size_t)n);
    RedisModule_Free(args);
    return true;
}

/* One element of an update's reply. */
static void reply_update(RedisModuleCtx *ctx, RedisModuleString *keyname,
                         const update_batch *u, int i, bool replayed)
{
    ebb_status status = u->statuses[i];
    if (status == EBB_OK ||
        (replayed && status == EBB_EUNDERFLOW)) {
        /* A refusal the primary answered is repeated here only to keep
         * the state identical: an error reply from the primary's stream
         * would be logged as a replication problem. */
        RedisModule_ReplyWithLongLong(ctx, count_reply(u->estimates[i]));
        return;
    }
    if (status == EBB_EUNDERFLOW) {
        ebb_redis_reply_errorf(ctx,
                               "ERR SPECTRAL: decrement refused: a counter "
                               "of the item holds less than its decrement "
                               "(more removed than added); nothing removed");
        return;
    }
    if (status == EBB_ENOMEM && replayed)
        RedisModule_Log(ctx, "warning",
                        "ebb: SPECTRAL: out of memory applying the "
                        "primary's update to %s: this server no longer "
                        "matches its primary",
                        RedisModule_StringPtrLen(keyname, NULL));
    if (status == EBB_ENOMEM) {
        RedisModule_ReplyWithError(
            ctx, "ERR SPECTRAL: out of memory growing the compact "
                 "counters: nothing changed for this item");
        return;
    }
    ebb_redis_reply_status(ctx, SPECTRAL.name, status);
}

/* The tail of INCRBY and DECRBY once the key is open: the items parsed,
 * the updates applied (apply also reads the counts), each item's count
 * answered, what was applied replicated and notified; closes the key and
 * frees the batch. */
static int update_tail(RedisModuleCtx *ctx, RedisModuleString **argv,
                       RedisModuleKey *key, ebb_redis_value *value,
                       update_batch *u,
                       void (*apply)(ebb_spectral *, update_batch *),
                       const char *command, const char *event)
{
    ebb_spectral *filter = value->filter;
    if (parse_items(ctx, filter, u->pairs, u->count, 2, u->values)) {
        hash_items(filter, u);
        prefetch_items(filter, u);
        /* Work that waits for no counter, while the prefetches load. */
        ebb_redis_value_touch(value);
        bool replayed = replaying(ctx);
        RedisModule_ReplyWithArray(ctx, u->count);
        apply(filter, u);
        for (int i = 0; i < u->count; i++)
            reply_update(ctx, argv[1], u, i, replayed);
        if (replicate_applied(ctx, command, argv[1], u))
            ebb_redis_notify(ctx, &SPECTRAL, event, argv[1]);
    }
    RedisModule_CloseKey(key);
    update_batch_free(u);
    return REDISMODULE_OK;
}

/* SPECTRAL.INCRBY key item n [item n ...] */
static int spectral_incrby(RedisModuleCtx *ctx, RedisModuleString **argv,
                           int argc)
{
    if (argc < 4 || argc % 2 != 0)
        return RedisModule_WrongArity(ctx);
    update_batch u;
    update_batch_alloc(&u, argv, argc);
    RedisModuleKey *key = NULL;
    ebb_redis_value *value;
    if (!parse_amounts(ctx, &u) ||
        !ebb_redis_open_for_add(ctx, argv[1], &SPECTRAL_CREATOR,
                                &SPECTRAL_DEFAULTS, false, &key, &value)) {
        update_batch_free(&u);
        return REDISMODULE_OK;
    }
    return update_tail(ctx, argv, key, value, &u, apply_increments,
                       "SPECTRAL.INCRBY", "incrby");
}

/* SPECTRAL.DECRBY key item n [item n ...]: never creates a key (a
 * decrement of a missing key could only underflow); refused under MI. */
static int spectral_decrby(RedisModuleCtx *ctx, RedisModuleString **argv,
                           int argc)
{
    if (argc < 4 || argc % 2 != 0)
        return RedisModule_WrongArity(ctx);
    update_batch u;
    update_batch_alloc(&u, argv, argc);
    RedisModuleKey *key = NULL;
    ebb_redis_value *value = NULL;
    if (!parse_amounts(ctx, &u) ||
        !ebb_redis_open_filter(ctx, argv[1], REDISMODULE_WRITE, &SPECTRAL,
                               &key, &value)) {
        update_batch_free(&u);
        return REDISMODULE_OK;
    }
    const char *refusal = NULL;
    if (value == NULL)
        refusal = "ERR no such key";
    else if (ebb_spectral_get_params(value->filter)->method ==
             EBB_SPECTRAL_MI)
        refusal = "ERR SPECTRAL: DECRBY is refused under METHOD MI (a "
                  "decrement there can take other items' counts below "
                  "their truth); use MS or RM";
    if (refusal != NULL) {
        RedisModule_CloseKey(key);
        update_batch_free(&u);
        return RedisModule_ReplyWithError(ctx, refusal);
    }
    return update_tail(ctx, argv, key, value, &u, apply_decrements,
                       "SPECTRAL.DECRBY", "decrby");
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */
/* ------------------------------------------------------------------------ */

/* Opens keyname for a query: *filter NULL for a missing key. */
static bool open_for_query(RedisModuleCtx *ctx, RedisModuleString *keyname,
                           RedisModuleKey **key, const ebb_spectral **filter)
{
    ebb_redis_value *value;
    if (!ebb_redis_open_filter(ctx, keyname, REDISMODULE_READ, &SPECTRAL,
                               key, &value))
        return false;
    *filter = value == NULL ? NULL : value->filter;
    return true;
}

/* The estimates of items (0 each for a missing key), or false after
 * replying an error (a range filter's item that is not an integer). */
static bool estimates_of(RedisModuleCtx *ctx, const ebb_spectral *filter,
                         RedisModuleString **items, int count,
                         uint64_t *out)
{
    uint64_t *values = RedisModule_Alloc(sizeof *values * (size_t)count);
    bool ok = parse_items(ctx, filter, items, count, 1, values);
    ebb_hash128 hashes[SPECTRAL_BATCH];
    for (int start = 0; ok && start < count; start += SPECTRAL_BATCH) {
        int n = count - start < SPECTRAL_BATCH ? count - start
                                               : SPECTRAL_BATCH;
        if (filter == NULL) {
            memset(out + start, 0, sizeof *out * (size_t)n);
            continue;
        }
        for (int i = 0; i < n; i++)
            hashes[i] = item_hash(filter, items[start + i],
                                  values[start + i]);
        ebb_spectral_estimate_batch(filter, hashes, (size_t)n, out + start);
    }
    RedisModule_Free(values);
    return ok;
}

/* SPECTRAL.QUERY key item [item ...] */
static int spectral_query(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_spectral *filter;
    if (!open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    int count = argc - 2;
    uint64_t *estimates = RedisModule_Alloc(sizeof *estimates * (size_t)count);
    if (estimates_of(ctx, filter, argv + 2, count, estimates)) {
        RedisModule_ReplyWithArray(ctx, count);
        for (int i = 0; i < count; i++)
            RedisModule_ReplyWithLongLong(ctx, count_reply(estimates[i]));
    }
    RedisModule_Free(estimates);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* SPECTRAL.ICEBERG key threshold item [item ...]: 1 for each item whose
 * count reaches the threshold (a saturated count reaches every one). */
static int spectral_iceberg(RedisModuleCtx *ctx, RedisModuleString **argv,
                            int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    long long threshold;
    if (!ebb_redis_parse_integer(ctx, argv[2], "threshold", 0, LLONG_MAX,
                                 &threshold))
        return REDISMODULE_OK;
    RedisModuleKey *key;
    const ebb_spectral *filter;
    if (!open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    int count = argc - 3;
    RedisModuleString **items = argv + 3;
    uint64_t *values = RedisModule_Alloc(sizeof *values * (size_t)count);
    if (!parse_items(ctx, filter, items, count, 1, values)) {
        RedisModule_Free(values);
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    RedisModule_ReplyWithArray(ctx, count);
    ebb_hash128 hashes[SPECTRAL_BATCH];
    bool passes[SPECTRAL_BATCH];
    for (int start = 0; start < count; start += SPECTRAL_BATCH) {
        int n = count - start < SPECTRAL_BATCH ? count - start
                                               : SPECTRAL_BATCH;
        for (int i = 0; i < n; i++) {
            passes[i] = threshold == 0;
            if (filter != NULL)
                hashes[i] = item_hash(filter, items[start + i],
                                      values[start + i]);
        }
        if (filter != NULL)
            ebb_spectral_iceberg(filter, hashes, (size_t)n,
                                 (uint64_t)threshold, passes);
        for (int i = 0; i < n; i++)
            RedisModule_ReplyWithLongLong(ctx, passes[i] ? 1 : 0);
    }
    RedisModule_Free(values);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* SPECTRAL.RANGE key lo hi: the count of the integer items lo..hi of a
 * filter reserved with RANGE. */
static int spectral_range(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long lo, hi;
    if (!ebb_redis_parse_integer(ctx, argv[2], "lo", 0, LLONG_MAX, &lo) ||
        !ebb_redis_parse_integer(ctx, argv[3], "hi", 0, LLONG_MAX, &hi))
        return REDISMODULE_OK;
    if (lo > hi)
        return RedisModule_ReplyWithError(ctx, "ERR lo must be at most hi");
    RedisModuleKey *key;
    const ebb_spectral *filter;
    if (!open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    if (filter == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithLongLong(ctx, 0);
    }
    uint64_t range = ebb_spectral_get_params(filter)->range;
    uint64_t count = 0;
    if (range == 0) {
        RedisModule_ReplyWithError(ctx, "ERR SPECTRAL: the filter was not "
                                        "reserved with RANGE");
    } else if ((uint64_t)hi >= range) {
        ebb_redis_reply_errorf(ctx, "ERR hi must be below the filter's "
                               "RANGE (%llu)",
                               (unsigned long long)range);
    } else {
        ebb_status status = ebb_spectral_range_count(
            filter, (uint64_t)lo, (uint64_t)hi, &count);
        if (status == EBB_OK)
            RedisModule_ReplyWithLongLong(ctx, count_reply(count));
        else
            ebb_redis_reply_status(ctx, SPECTRAL.name, status);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* SPECTRAL.INFO key */
static int spectral_info(RedisModuleCtx *ctx, RedisModuleString **argv,
                         int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ebb_spectral *filter;
    if (!open_for_query(ctx, argv[1], &key, &filter))
        return REDISMODULE_OK;
    if (filter == NULL) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR no such key");
    }
    const ebb_spectral_params *p = ebb_spectral_get_params(filter);
    ebb_spectral_stats s;
    ebb_spectral_get_stats(filter, &s);
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)p->seed);
    long count = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    ebb_redis_info_text(ctx, &count, "method", METHOD_NAMES[p->method]);
    ebb_redis_info_text(ctx, &count, "storage", STORAGE_NAMES[p->storage]);
    ebb_redis_info_integer(ctx, &count, "counters", p->counters);
    ebb_redis_info_integer(ctx, &count, "counter_bits", p->counter_bits);
    ebb_redis_info_integer(ctx, &count, "k", p->k);
    ebb_redis_info_integer(ctx, &count, "max_count",
                           (UINT64_C(1) << p->counter_bits) - 1);
    if (p->method == EBB_SPECTRAL_RM) {
        ebb_redis_info_integer(ctx, &count, "secondary", p->secondary);
        ebb_redis_info_integer(ctx, &count, "secondary_k", p->secondary_k);
        ebb_redis_info_text(ctx, &count, "marker", MARKER_NAMES[p->marker]);
        ebb_redis_info_integer(ctx, &count, "marker_size", p->marker_size);
    }
    ebb_redis_info_integer(ctx, &count, "range", p->range);
    ebb_redis_info_text(ctx, &count, "seed", seed);
    ebb_redis_info_integer(ctx, &count, "memory", s.memory_bytes);
    ebb_redis_info_integer(ctx, &count, "added", s.added);
    ebb_redis_info_integer(ctx, &count, "removed", s.removed);
    ebb_redis_info_integer(ctx, &count, "refused_removals",
                           s.refused_removals);
    ebb_redis_info_integer(ctx, &count, "saturations", s.saturations);
    ebb_redis_info_integer(ctx, &count, "nonzero", s.nonzero);
    ebb_redis_info_double(ctx, &count, "fill",
                          (double)s.nonzero / (double)p->counters);
    if (p->method == EBB_SPECTRAL_RM) {
        ebb_redis_info_integer(ctx, &count, "moved", s.moved);
        ebb_redis_info_integer(ctx, &count, "moves_refused",
                               s.moves_refused);
    }
    RedisModule_ReplySetArrayLength(ctx, count);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* MERGE                                                                    */
/* ------------------------------------------------------------------------ */

/* Every field the library requires equal for a union (ebb/spectral.h). */
static bool params_equal(const ebb_spectral_params *a,
                         const ebb_spectral_params *b)
{
    return a->counters == b->counters && a->counter_bits == b->counter_bits &&
           a->k == b->k && a->method == b->method &&
           a->secondary == b->secondary && a->secondary_k == b->secondary_k &&
           a->marker == b->marker && a->marker_size == b->marker_size &&
           a->trap_slots == b->trap_slots && a->range == b->range &&
           a->seed == b->seed && a->storage == b->storage;
}

typedef struct merge_args {
    int sources;              /* argv[2 .. 2 + sources)        */
    int weights_at;           /* index of WEIGHTS, or 0        */
    bool partitioned;
    int partitioned_at;       /* its index when given          */
    uint64_t *weights;
} merge_args;

static bool parse_merge(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int argc, merge_args *m)
{
    int end = argc;
    m->partitioned_at = 0;
    m->partitioned = end > 3 && ebb_redis_arg_is(argv[end - 1], "PARTITIONED");
    if (m->partitioned)
        m->partitioned_at = --end;
    m->weights_at = 0;
    for (int i = 3; i < end && m->weights_at == 0; i++)
        if (ebb_redis_arg_is(argv[i], "WEIGHTS"))
            m->weights_at = i;
    m->sources = (m->weights_at ? m->weights_at : end) - 2;
    m->weights = RedisModule_Alloc(sizeof *m->weights * (size_t)m->sources);
    for (int i = 0; i < m->sources; i++)
        m->weights[i] = 1;
    if (m->weights_at == 0)
        return true;
    if (end - m->weights_at - 1 != m->sources) {
        ebb_redis_reply_errorf(ctx, "ERR WEIGHTS needs one weight per "
                               "source (%d sources)", m->sources);
        return false;
    }
    for (int i = 0; i < m->sources; i++) {
        long long w;
        if (!ebb_redis_parse_integer(ctx, argv[m->weights_at + 1 + i],
                                     "weight", 1, LLONG_MAX, &w))
            return false;
        m->weights[i] = (uint64_t)w;
    }
    return true;
}

/* Opens the sources for reading, each an existing filter compatible with
 * dest and not dest itself. False after replying. */
static bool open_sources(RedisModuleCtx *ctx, RedisModuleString **argv,
                         const merge_args *m, const ebb_spectral *dest,
                         RedisModuleKey **keys, const ebb_spectral **filters)
{
    size_t dest_len;
    const char *dest_name = RedisModule_StringPtrLen(argv[1], &dest_len);
    for (int i = 0; i < m->sources; i++) {
        RedisModuleString *name = argv[2 + i];
        size_t len;
        const char *text = RedisModule_StringPtrLen(name, &len);
        if (len == dest_len && memcmp(text, dest_name, len) == 0) {
            RedisModule_ReplyWithError(
                ctx, "ERR SPECTRAL: a MERGE source cannot be the "
                     "destination");
            return false;
        }
        ebb_redis_value *value;
        RedisModuleKey *key;
        /* keys[i] is set only once open: a failed open closed its key. */
        if (!ebb_redis_open_filter(ctx, name, REDISMODULE_READ, &SPECTRAL,
                                   &key, &value))
            return false;
        keys[i] = key;
        filters[i] = value == NULL ? NULL : value->filter;
        if (filters[i] == NULL) {
            ebb_redis_reply_errorf(ctx, "ERR SPECTRAL: no such source key "
                                   "'%.100s'", text);
            return false;
        }
        if (!params_equal(ebb_spectral_get_params(filters[i]),
                          ebb_spectral_get_params(dest))) {
            ebb_redis_reply_errorf(
                ctx, "ERR SPECTRAL: source '%.100s' is not compatible with "
                     "the destination: every RESERVE parameter and the SEED "
                     "must be equal",
                text);
            return false;
        }
    }
    return true;
}

/* Replicates the merge of the first `applied` sources. */
static void replicate_merge(RedisModuleCtx *ctx, RedisModuleString **argv,
                            const merge_args *m, int applied)
{
    RedisModuleString **args =
        RedisModule_Alloc(sizeof *args * (size_t)(2 * applied + 3));
    int n = 0;
    args[n++] = argv[1];
    for (int i = 0; i < applied; i++)
        args[n++] = argv[2 + i];
    if (m->weights_at) {
        args[n++] = argv[m->weights_at];
        for (int i = 0; i < applied; i++)
            args[n++] = argv[m->weights_at + 1 + i];
    }
    if (m->partitioned)
        args[n++] = argv[m->partitioned_at];
    RedisModule_Replicate(ctx, "SPECTRAL.MERGE", "v", args, (size_t)n);
    RedisModule_Free(args);
}

/* MERGE's keys for the server (getkeys-api): dest, written, and the
 * sources, read; nothing after WEIGHTS or a final PARTITIONED. */
static void merge_key_positions(RedisModuleCtx *ctx, RedisModuleString **argv,
                                int argc)
{
    int end = argc;
    if (end > 3 && ebb_redis_arg_is(argv[end - 1], "PARTITIONED"))
        end--;
    for (int i = 3; i < end; i++)
        if (ebb_redis_arg_is(argv[i], "WEIGHTS"))
            end = i;
    for (int pos = 1; pos < end; pos++) {
        uint64_t flags = pos == 1 ? EBB_REDIS_KEY_ADDS : EBB_REDIS_KEY_READS;
        if (RedisModule_KeyAtPosWithFlags != NULL)
            RedisModule_KeyAtPosWithFlags(ctx, pos, (int)flags);
        else
            RedisModule_KeyAtPos(ctx, pos);
    }
}

/* SPECTRAL.MERGE dest src [src ...] [WEIGHTS w ...] [PARTITIONED]:
 * dest += w_i src_i for each source in order (ebb_spectral_merge). */
static int spectral_merge(RedisModuleCtx *ctx, RedisModuleString **argv,
                          int argc)
{
    if (RedisModule_IsKeysPositionRequest(ctx)) {
        merge_key_positions(ctx, argv, argc);
        return REDISMODULE_OK;
    }
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    merge_args m;
    if (!parse_merge(ctx, argv, argc, &m)) {
        RedisModule_Free(m.weights);
        return REDISMODULE_OK;
    }
    RedisModuleKey *dest_key;
    ebb_redis_value *dest_value;
    if (!ebb_redis_open_filter(ctx, argv[1], REDISMODULE_WRITE, &SPECTRAL,
                               &dest_key, &dest_value)) {
        RedisModule_Free(m.weights);
        return REDISMODULE_OK;
    }
    RedisModuleKey **keys =
        RedisModule_Calloc((size_t)m.sources, sizeof *keys);
    const ebb_spectral **filters =
        RedisModule_Calloc((size_t)m.sources, sizeof *filters);
    if (dest_value == NULL)
        RedisModule_ReplyWithError(ctx, "ERR SPECTRAL: no such destination "
                                        "key (RESERVE it with the sources' "
                                        "parameters and SEED)");
    else if (open_sources(ctx, argv, &m, dest_value->filter, keys, filters)) {
        ebb_spectral *dest = dest_value->filter;
        ebb_redis_value_touch(dest_value);
        unsigned flags = m.partitioned ? EBB_SPECTRAL_MERGE_PARTITIONED : 0;
        ebb_status status = EBB_OK;
        int applied = 0;
        while (applied < m.sources && status == EBB_OK) {
            status = ebb_spectral_merge(dest, filters[applied],
                                        m.weights[applied], flags);
            applied += status == EBB_OK;
        }
        if (applied > 0) {
            replicate_merge(ctx, argv, &m, applied);
            ebb_redis_notify(ctx, &SPECTRAL, "merge", argv[1]);
        }
        if (status == EBB_OK)
            RedisModule_ReplyWithSimpleString(ctx, "OK");
        else if (status == EBB_ELIMIT)
            ebb_redis_reply_errorf(ctx, "ERR SPECTRAL: the destination's "
                                   "marker cannot hold source %d's moved "
                                   "keys (PARTITIONED); sources before it "
                                   "merged", applied + 1);
        else
            ebb_redis_reply_errorf(ctx, "ERR SPECTRAL: merging source %d: "
                                   "%s; sources before it merged",
                                   applied + 1, ebb_strerror(status));
    }
    for (int i = 0; i < m.sources; i++)
        if (keys[i] != NULL)
            RedisModule_CloseKey(keys[i]);
    RedisModule_CloseKey(dest_key);
    RedisModule_Free(keys);
    RedisModule_Free(filters);
    RedisModule_Free(m.weights);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static const ebb_redis_command SPECTRAL_MERGE_COMMAND = {
    "SPECTRAL.MERGE", spectral_merge, "write deny-oom getkeys-api", -3,
    EBB_REDIS_KEY_ADDS,
    "Adds other filters' counts (keys of one slot) into the destination"};

/* name, handler, flags, arity, key spec, summary (glue.h). */
static const ebb_redis_command SPECTRAL_COMMANDS[] = {
    {"SPECTRAL.RESERVE", spectral_reserve, "write deny-oom", -2,
     EBB_REDIS_KEY_CREATES, "Creates an empty Spectral Bloom filter"},
    {"SPECTRAL.INCRBY", spectral_incrby, "write deny-oom fast", -4,
     EBB_REDIS_KEY_ADDS, "Adds to items' counts; answers the counts"},
    {"SPECTRAL.DECRBY", spectral_decrby, "write fast", -4,
     EBB_REDIS_KEY_ADDS, "Removes from items' counts (MS and RM)"},
    {"SPECTRAL.QUERY", spectral_query, "readonly fast", -3,
     EBB_REDIS_KEY_READS, "Answers items' estimated counts"},
    {"SPECTRAL.ICEBERG", spectral_iceberg, "readonly fast", -4,
     EBB_REDIS_KEY_READS,
     "Answers for each item whether its count reaches a threshold"},
    {"SPECTRAL.RANGE", spectral_range, "readonly fast", 4,
     EBB_REDIS_KEY_READS, "Answers the count of integer items lo..hi"},
    {"SPECTRAL.INFO", spectral_info, "readonly fast", 2,
     EBB_REDIS_KEY_READS, "Returns the filter's parameters and counters"},
    EBB_REDIS_SNAPSHOT_COMMAND_ROWS(spectral, SPECTRAL),
};

int ebb_redis_spectral_register(RedisModuleCtx *ctx)
{
    if (ebb_redis_snapshot_type_create(ctx, &SPECTRAL, "ebb-spect",
                                       &spectral_type_methods) !=
        REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (ebb_redis_create_commands(
            ctx, SPECTRAL_COMMANDS,
            sizeof SPECTRAL_COMMANDS / sizeof SPECTRAL_COMMANDS[0]) !=
        REDISMODULE_OK)
        return REDISMODULE_ERR;
    /* The sources follow dest up to WEIGHTS: keys the handler names. */
    return ebb_redis_create_command_more_keys(ctx, &SPECTRAL_MERGE_COMMAND,
                                              EBB_REDIS_KEY_READS);
}
