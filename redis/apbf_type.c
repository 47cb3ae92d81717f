/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apbf_type.c: the APBF data type ("ebb-apbf-") and its commands.
 *
 *   APBF.RESERVE   key window [ERROR fp] [MAXNPWS f] [MAXACCESSES a]
 *                  [BLOCKED] [LAYOUT RING|SLICED]
 *   APBF.RESERVE   key window SHAPE k l slice-bits [BLOCKS bits hashes]
 *                  [LAYOUT RING|SLICED [CELLBITS w]]
 *   APBF.ADD       key item [NOCREATE]             -> 1 new / 0 seen
 *   APBF.MADD      key item [item ...]             -> array of 1/0
 *   APBF.INSERT    key [NOCREATE] [WINDOW w] [ERROR fp] [MAXNPWS f]
 *                  [MAXACCESSES a] [BLOCKED] [LAYOUT RING|SLICED]
 *                  ITEMS item [item ...]           -> array of 1/0
 *   APBF.EXISTS    key item                        -> 1 / 0
 *   APBF.MEXISTS   key item [item ...]             -> array of 1/0
 *   APBF.INFO      key                             -> field/value pairs
 *   APBF.SCANDUMP  key iterator                    -> [iterator, data]
 *   APBF.LOADCHUNK key iterator data               -> OK
 *
 * The filter is deterministic (its answers depend only on the sequence of
 * adds), so writes replicate verbatim. RESERVE, and a write that creates
 * its key, replicate the shape that was chosen (the SHAPE form, with
 * LAYOUT SLICED CELLBITS w for the bit-sliced layout), so a replica or an
 * AOF replay never depends on its own defaults, chooser or memory. SHAPE
 * without LAYOUT is the ring, whatever the default layout of a new key
 * (apbf_default_layout) becomes: that is what older primaries replicated.
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
/* The layout of a key created without LAYOUT, for plain slices without
 * MAXNPWS or MAXACCESSES: the library's choice against the ring such a key
 * would be, the least memory with at most APBF_DEFAULT_MAX_ACCESSES reads
 * (ebb_apbf_preferred_layout; docs/bench.md measures it). BLOCKED keys are
 * always rings. */
static uint32_t apbf_default_layout(long long window, double fp)
{
    ebb_apbf_goal ring = {(uint64_t)window, fp, 0.0, APBF_DEFAULT_MAX_ACCESSES,
                          0, 0, EBB_APBF_LAYOUT_RING};
    return ebb_apbf_preferred_layout(&ring);
}
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
    bool accesses_given; /* MAXACCESSES was given */
    bool blocked;
    /* LAYOUT RING|SLICED (layout_given), and with SHAPE, CELLBITS w (0:
     * the smallest cell for k + l + 1 planes). */
    bool layout_given;
    uint32_t layout;
    uint32_t cell_bits;
    /* ERROR, MAXNPWS, MAXACCESSES or BLOCKED was given: a goal the chooser
     * meets. */
    bool goal_given;
    /* SHAPE k l slice-bits [BLOCKS bits hashes]: the shape itself, as a
     * primary replicates it (its window must be l * generation); after
     * resolving (apbf_resolve), always set, with params the shape. */
    bool shape;
    bool blocks_given;
    ebb_apbf_params params;
} apbf_options;

static const apbf_options APBF_DEFAULTS = {
    .window = APBF_DEFAULT_WINDOW,
    .fp = APBF_DEFAULT_FP,
    .max_npws = -1.0,
    .max_accesses = APBF_DEFAULT_MAX_ACCESSES,
    .layout = EBB_APBF_LAYOUT_RING,
};

/* SHAPE k l slice-bits at argv[*i + 1 ..]: each an integer within the
 * library's limits (the rest of the shape is checked as a snapshot's is,
 * by ebb_apbf_params_memory, once the window is known). */
static bool apbf_parse_shape(RedisModuleCtx *ctx, RedisModuleString **argv,
                             apbf_options *options)
{
    long long k, l, slice_bits;
    if (!ebb_redis_parse_integer(ctx, argv[0], "SHAPE k", 1, EBB_APBF_MAX_K,
                                 &k) ||
        !ebb_redis_parse_integer(ctx, argv[1], "SHAPE l", 1, EBB_APBF_MAX_L,
                                 &l) ||
        !ebb_redis_parse_integer(ctx, argv[2], "SHAPE slice-bits", 1,
                                 (long long)EBB_APBF_MAX_SLICE_BITS,
                                 &slice_bits))
        return false;
    options->shape = true;
    options->params.k = (uint32_t)k;
    options->params.l = (uint32_t)l;
    options->params.slice_bits = (uint64_t)slice_bits;
    return true;
}

/* BLOCKS bits hashes at argv[0 ..]: the blocked variant of SHAPE. */
static bool apbf_parse_blocks(RedisModuleCtx *ctx, RedisModuleString **argv,
                              apbf_options *options)
{
    long long bits, hashes;
    if (!ebb_redis_parse_integer(ctx, argv[0], "BLOCKS bits", 64, 512,
                                 &bits) ||
        !ebb_redis_parse_integer(ctx, argv[1], "BLOCKS hashes", 1, 8,
                                 &hashes))
        return false;
    options->blocks_given = true;
    options->params.block_bits = (uint32_t)bits;
    options->params.block_hashes = (uint32_t)hashes;
    return true;
}

/* LAYOUT RING|SLICED at argv[0]. */
static bool apbf_parse_layout(RedisModuleCtx *ctx, RedisModuleString *arg,
                              apbf_options *options)
{
    if (ebb_redis_arg_is(arg, "RING"))
        options->layout = EBB_APBF_LAYOUT_RING;
    else if (ebb_redis_arg_is(arg, "SLICED"))
        options->layout = EBB_APBF_LAYOUT_SLICED;
    else {
        RedisModule_ReplyWithError(ctx, "ERR APBF: LAYOUT must be RING or "
                                        "SLICED");
        return false;
    }
    options->layout_given = true;
    return true;
}

/* CELLBITS w at argv[0]: 16, 32, 64 or 128 (the rest is checked with the
 * shape). */
static bool apbf_parse_cell_bits(RedisModuleCtx *ctx, RedisModuleString *arg,
                                 apbf_options *options)
{
    long long bits;
    if (!ebb_redis_parse_integer(ctx, arg, "CELLBITS", 16, 128, &bits))
        return false;
    options->cell_bits = (uint32_t)bits;
    return true;
}

/* LAYOUT or CELLBITS (1 argument each) at argv[*i]: 1 parsed, 0 neither,
 * -1 after replying an error. */
static int apbf_parse_layout_option(RedisModuleCtx *ctx,
                                    RedisModuleString **argv, int argc,
                                    int *i, apbf_options *options)
{
    bool is_layout = ebb_redis_arg_is(argv[*i], "LAYOUT");
    if (!is_layout && !ebb_redis_arg_is(argv[*i], "CELLBITS"))
        return 0;
    if (*i + 1 >= argc) {
        RedisModule_WrongArity(ctx);
        return -1;
    }
    bool ok = is_layout ? apbf_parse_layout(ctx, argv[*i + 1], options)
                        : apbf_parse_cell_bits(ctx, argv[*i + 1], options);
    *i += 2;
    return ok ? 1 : -1;
}

/* SHAPE (3 arguments) or BLOCKS (2) at argv[*i]: 1 parsed, 0 neither, -1
 * after replying an error. */
static int apbf_parse_explicit_shape(RedisModuleCtx *ctx,
                                     RedisModuleString **argv, int argc,
                                     int *i, apbf_options *options)
{
    bool is_shape = ebb_redis_arg_is(argv[*i], "SHAPE");
    if (!is_shape && !ebb_redis_arg_is(argv[*i], "BLOCKS"))
        return 0;
    int count = is_shape ? 3 : 2;
    if (*i + count >= argc) {
        RedisModule_WrongArity(ctx);
        return -1;
    }
    bool ok = is_shape ? apbf_parse_shape(ctx, argv + *i + 1, options)
                       : apbf_parse_blocks(ctx, argv + *i + 1, options);
    *i += count + 1;
    return ok ? 1 : -1;
}

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
    int explicit_shape = apbf_parse_explicit_shape(ctx, argv, argc, i,
                                                   options);
    if (explicit_shape != 0)
        return explicit_shape;
    int layout = apbf_parse_layout_option(ctx, argv, argc, i, options);
    if (layout != 0)
        return layout;
    if (ebb_redis_arg_is(name, "BLOCKED")) {
        options->blocked = true;
        options->goal_given = true;
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
    options->goal_given = options->goal_given || !is_window;
    options->accesses_given = options->accesses_given || is_accesses;
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

static const ebb_redis_creator APBF_CREATOR;

/* Replies why creation failed with status, as the creator does. */
static bool apbf_refused(RedisModuleCtx *ctx, ebb_status status,
                         const apbf_options *options)
{
    if (APBF_CREATOR.reply_refused != NULL)
        APBF_CREATOR.reply_refused(ctx, status, options);
    else
        ebb_redis_reply_status(ctx, APBF.name, status);
    return false;
}

/* The explicit shape of SHAPE/BLOCKS for options->window, checked as a
 * snapshot's parameters are (ebb_apbf_params_memory: k and l in range,
 * slices a multiple of the block, generation within what the slices hold,
 * window = l * generation). */
static bool apbf_resolve_shape(RedisModuleCtx *ctx, apbf_options *options,
                               size_t *bytes)
{
    ebb_apbf_params *p = &options->params;
    if (options->goal_given) {
        RedisModule_ReplyWithError(ctx, "ERR APBF: SHAPE cannot be combined "
                                        "with ERROR, MAXNPWS, MAXACCESSES "
                                        "or BLOCKED");
        return false;
    }
    if (!options->blocks_given)
        p->block_bits = p->block_hashes = 0;
    /* SHAPE without LAYOUT: the ring (what older primaries replicate). */
    p->layout = options->layout_given ? options->layout : EBB_APBF_LAYOUT_RING;
    p->cell_bits = 0;
    if (options->cell_bits != 0 && p->layout != EBB_APBF_LAYOUT_SLICED) {
        RedisModule_ReplyWithError(ctx, "ERR APBF: CELLBITS needs LAYOUT "
                                        "SLICED");
        return false;
    }
    if (p->layout == EBB_APBF_LAYOUT_SLICED) {
        if (options->blocks_given) {
            RedisModule_ReplyWithError(ctx, "ERR APBF: LAYOUT SLICED cannot "
                                            "be combined with BLOCKS");
            return false;
        }
        if (ebb_apbf_params_set_layout(p, p->layout) != EBB_OK) {
            RedisModule_ReplyWithError(ctx, "ERR APBF: LAYOUT SLICED needs "
                                            "k + l + 1 <= 128");
            return false;
        }
        if (options->cell_bits != 0)
            p->cell_bits = options->cell_bits;
    }
    p->window = (uint64_t)options->window;
    p->generation = p->window / p->l;
    if (p->window % p->l != 0) {
        ebb_redis_reply_errorf(ctx,
                               "ERR APBF: SHAPE l (%u) must divide the "
                               "window (%llu)",
                               (unsigned)p->l, (unsigned long long)p->window);
        return false;
    }
    ebb_status status = ebb_apbf_params_memory(p, bytes);
    if (status == EBB_EINVAL) {
        ebb_redis_reply_errorf(
            ctx,
            "ERR APBF: SHAPE %u %u %llu%s is not a valid shape for a window "
            "of %llu (BLOCKS 64 or 512 bits with 1, 2, 4 or 8 hashes, "
            "dividing slice-bits; at most slice-bits * ln 2 / k items per "
            "generation; CELLBITS 16, 32, 64 or 128, at least k + l + 1)",
            (unsigned)p->k, (unsigned)p->l, (unsigned long long)p->slice_bits,
            options->blocks_given                    ? " BLOCKS .."
            : p->layout == EBB_APBF_LAYOUT_SLICED ? " LAYOUT SLICED .."
                                                  : "",
            (unsigned long long)p->window);
        return false;
    }
    if (status != EBB_OK)
        return apbf_refused(ctx, status, options);
    return true;
}

/* An ebb_redis_creator resolve: chooses the shape (unless SHAPE gave it)
 * and turns options into that explicit shape, so the RESERVE replicated is
 * "APBF.RESERVE key window SHAPE k l slice-bits [BLOCKS bits hashes]" and
 * no replica chooses again (its library version could choose otherwise).
 * opaque: the apbf_options. */
static bool apbf_resolve(RedisModuleCtx *ctx, void *opaque, size_t *bytes)
{
    apbf_options *options = opaque;
    if (options->blocks_given && !options->shape) {
        RedisModule_ReplyWithError(ctx, "ERR APBF: BLOCKS needs SHAPE");
        return false;
    }
    if (options->cell_bits != 0 && !options->shape) {
        RedisModule_ReplyWithError(ctx, "ERR APBF: CELLBITS needs SHAPE");
        return false;
    }
    if (options->shape)
        return apbf_resolve_shape(ctx, options, bytes);
    /* MAXNPWS and MAXACCESSES bound a ring's walk: a key reserved with
     * them stays a ring unless LAYOUT says otherwise. */
    if (!options->layout_given)
        options->layout =
            options->blocked || options->accesses_given ||
                    options->max_npws >= 0.0
                ? EBB_APBF_LAYOUT_RING
                : apbf_default_layout(options->window, options->fp);
    bool sliced = options->layout == EBB_APBF_LAYOUT_SLICED;
    if (sliced && options->blocked) {
        RedisModule_ReplyWithError(ctx, "ERR APBF: LAYOUT SLICED cannot be "
                                        "combined with BLOCKED");
        return false;
    }
    /* A bit-sliced query loads its k cells whatever the shape: the
     * default bound on a ring's walk does not apply (MAXACCESSES given
     * bounds k). */
    double max_accesses = sliced && !options->accesses_given
                              ? 0.0
                              : options->max_accesses;
    ebb_apbf_goal goal = {(uint64_t)options->window,
                          options->fp,
                          apbf_max_npws(options),
                          max_accesses,
                          options->blocked ? APBF_BLOCK_BITS : 0,
                          options->blocked ? APBF_BLOCK_HASHES : 0,
                          options->layout};
    ebb_status status = ebb_apbf_choose_goal(&goal, &options->params);
    if (status == EBB_OK && options->params.window > (uint64_t)LLONG_MAX)
        status = EBB_EOVERFLOW;
    if (status == EBB_OK)
        status = ebb_apbf_params_memory(&options->params, bytes);
    if (status != EBB_OK)
        return apbf_refused(ctx, status, options);
    options->shape = true;
    options->blocks_given = options->blocked;
    options->goal_given = false;
    options->layout_given = true;
    options->cell_bits = options->params.cell_bits;
    options->window = (long long)options->params.window;
    return true;
}

/* A filter of the resolved shape. opaque: the apbf_options. */
static ebb_status apbf_create(const void *opaque, uint64_t seed, void **out)
{
    const apbf_options *options = opaque;
    ebb_apbf *filter = NULL;
    ebb_status status = ebb_apbf_create(&options->params, seed, &filter);
    if (status == EBB_OK)
        *out = filter;
    return status;
}

/* Replicates the APBF.RESERVE that recreates a key exactly as created: its
 * shape, explicit. opaque: the resolved apbf_options. */
static void apbf_replicate_reserve(RedisModuleCtx *ctx,
                                   RedisModuleString *keyname,
                                   const void *opaque)
{
    const apbf_options *options = opaque;
    const ebb_apbf_params *p = &options->params;
    if (p->layout == EBB_APBF_LAYOUT_SLICED)
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slclllcccl", keyname,
                              (long long)p->window, "SHAPE", (long long)p->k,
                              (long long)p->l, (long long)p->slice_bits,
                              "LAYOUT", "SLICED", "CELLBITS",
                              (long long)p->cell_bits);
    else if (p->block_bits != 0)
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slclllcll", keyname,
                              (long long)p->window, "SHAPE", (long long)p->k,
                              (long long)p->l, (long long)p->slice_bits,
                              "BLOCKS", (long long)p->block_bits,
                              (long long)p->block_hashes);
    else
        RedisModule_Replicate(ctx, "APBF.RESERVE", "slclll", keyname,
                              (long long)p->window, "SHAPE", (long long)p->k,
                              (long long)p->l, (long long)p->slice_bits);
}

/* Replies why creation with options failed: for EBB_EINVAL (the chooser
 * found no shape), the option that cannot be met and its bound.
 * opaque: the apbf_options. */
static int apbf_reply_refused(RedisModuleCtx *ctx, ebb_status status,
                              const void *opaque)
{
    const apbf_options *options = opaque;
    if (status != EBB_EINVAL || options->shape)
        return ebb_redis_reply_status(ctx, APBF.name, status);
    if (options->layout == EBB_APBF_LAYOUT_SLICED)
        return ebb_redis_reply_errorf(
            ctx,
            "ERR APBF: no shape of the sliced layout (k + l + 1 <= 128) "
            "meets ERROR %g%s for a window of %lld",
            options->fp,
            options->max_npws > 0.0 || options->accesses_given
                ? " with the MAXNPWS / MAXACCESSES given"
                : "",
            options->window);
    return ebb_redis_reply_shape_refused(
        ctx, APBF.name, (uint64_t)options->window, options->fp,
        apbf_max_npws(options), options->max_accesses,
        options->blocked ? APBF_BLOCK_BITS : 0,
        options->blocked ? APBF_BLOCK_HASHES : 0);
}

_Static_assert(sizeof(apbf_options) <= EBB_REDIS_OPTIONS_MAX,
               "value.c resolves a copy of the options on its stack");

/* Creation for RESERVE, and for ADD, MADD and INSERT on a missing key. */
static const ebb_redis_creator APBF_CREATOR = {
    .family = &APBF,
    .options_size = sizeof(apbf_options),
    .resolve = apbf_resolve,
    .create = apbf_create,
    .reply_refused = apbf_reply_refused,
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
 * replicate, notify "apbf.<command>". single: reply one integer instead of
 * an array. */
static int apbf_add_command(RedisModuleCtx *ctx, const char *command,
                            RedisModuleString *keyname,
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
        bool seen = ebb_apbf_check_and_add(filter, item, len);
        RedisModule_ReplyWithLongLong(ctx, seen ? 0 : 1);
    } else {
        apbf_add_array(ctx, filter, items, count);
    }
    RedisModule_ReplicateVerbatim(ctx);
    ebb_redis_notify(ctx, &APBF, command, keyname);
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
    return apbf_add_command(ctx, "add", argv[1], &APBF_DEFAULTS, nocreate,
                            argv + 2, 1, true);
}

/* APBF.MADD key item [item ...] */
static int apbf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    return apbf_add_command(ctx, "madd", argv[1], &APBF_DEFAULTS, false,
                            argv + 2, argc - 2, false);
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
    return apbf_add_command(ctx, "insert", argv[1], &options, nocreate,
                            argv + i + 1, argc - i - 1, false);
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
    uint32_t padding_bits = 0;
    uint64_t padding_bytes = 0;
    (void)ebb_apbf_layout_padding(p, &padding_bits, &padding_bytes);
    ebb_redis_info_text(ctx, &count, "layout",
                        p->layout == EBB_APBF_LAYOUT_SLICED ? "sliced"
                                                            : "ring");
    ebb_redis_info_integer(ctx, &count, "cell_bits", p->cell_bits);
    ebb_redis_info_integer(ctx, &count, "padding_bytes", padding_bytes);
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

/* name, handler, flags, arity, key spec, summary (glue.h). */
static const ebb_redis_command APBF_COMMANDS[] = {
    {"APBF.RESERVE", apbf_reserve_command, "write deny-oom", -3,
     EBB_REDIS_KEY_CREATES,
     "Creates an empty filter over a window of the last N adds"},
    {"APBF.ADD", apbf_add, "write deny-oom fast", -3,
     EBB_REDIS_KEY_ADDS, "Adds an item; answers whether it was new"},
    {"APBF.MADD", apbf_madd, "write deny-oom", -3,
     EBB_REDIS_KEY_ADDS, "Adds items; answers for each whether it was new"},
    {"APBF.INSERT", apbf_insert, "write deny-oom", -4,
     EBB_REDIS_KEY_ADDS,
     "Adds items, creating the filter with the given parameters"},
    {"APBF.EXISTS", apbf_exists, "readonly fast", 3,
     EBB_REDIS_KEY_READS, "Answers whether an item is in the window"},
    {"APBF.MEXISTS", apbf_mexists, "readonly fast", -3,
     EBB_REDIS_KEY_READS, "Answers for each item whether it is in the window"},
    {"APBF.INFO", apbf_info, "readonly fast", 2,
     EBB_REDIS_KEY_READS, "Returns the filter's parameters and counters"},
    EBB_REDIS_SNAPSHOT_COMMAND_ROWS(apbf, APBF),
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
