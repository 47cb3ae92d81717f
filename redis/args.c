/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * args.c: argument parsing and replies with the module's wording, shared
 * by every data type of ebb.so (glue.h).
 */
#include "glue.h"

#include <ebb/apbf.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Arguments and replies                                                    */
/* ------------------------------------------------------------------------ */

bool ebb_redis_arg_is(const RedisModuleString *arg, const char *word)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    size_t word_len = strlen(word);
    if (len != word_len)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char a = (unsigned char)text[i];
        unsigned char b = (unsigned char)word[i];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 'a' + 'A');
        if (b >= 'a' && b <= 'z')
            b = (unsigned char)(b - 'a' + 'A');
        if (a != b)
            return false;
    }
    return true;
}

int ebb_redis_reply_errorf(RedisModuleCtx *ctx, const char *format, ...)
{
    char message[256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return RedisModule_ReplyWithError(ctx, message);
}

bool ebb_redis_parse_integer(RedisModuleCtx *ctx, const RedisModuleString *arg,
                             const char *what, long long min, long long max,
                             long long *out)
{
    long long value;
    if (RedisModule_StringToLongLong(arg, &value) != REDISMODULE_OK ||
        value < min || value > max) {
        ebb_redis_reply_errorf(ctx,
                               "ERR %s must be an integer from %lld to %lld",
                           what, min, max);
        return false;
    }
    *out = value;
    return true;
}

/* True when text[0..len) is a decimal number as a person types one:
 * [+-] digits [. digits] [(e|E) [+-] digits], with at least one digit
 * before the exponent. No hexadecimal, inf, nan or spaces, which strtod
 * (and so RedisModule_StringToDouble) would take. */
static bool decimal_text(const char *text, size_t len)
{
    size_t i = 0, digits = 0;
    if (i < len && (text[i] == '+' || text[i] == '-'))
        i++;
    for (; i < len && text[i] >= '0' && text[i] <= '9'; i++)
        digits++;
    if (i < len && text[i] == '.')
        for (i++; i < len && text[i] >= '0' && text[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return false;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        if (i < len && (text[i] == '+' || text[i] == '-'))
            i++;
        size_t exponent_digits = 0;
        for (; i < len && text[i] >= '0' && text[i] <= '9'; i++)
            exponent_digits++;
        if (exponent_digits == 0)
            return false;
    }
    return i == len;
}

/* A decimal argument (decimal_text) as a finite double; false otherwise
 * (including a value that overflows to infinity). */
static bool parse_decimal(const RedisModuleString *arg, double *out)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    char buf[128];
    if (len == 0 || len >= sizeof buf || !decimal_text(text, len))
        return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    double value = strtod(buf, NULL);
    if (!isfinite(value))
        return false;
    *out = value;
    return true;
}

bool ebb_redis_parse_rate(RedisModuleCtx *ctx, const RedisModuleString *arg,
                          const char *what, double *out)
{
    double value;
    if (!parse_decimal(arg, &value) || !(value > 0.0 && value < 1.0)) {
        ebb_redis_reply_errorf(ctx,
                           "ERR %s must be a number between 0 and 1 "
                           "(both excluded)",
                           what);
        return false;
    }
    *out = value;
    return true;
}

bool ebb_redis_parse_finite(RedisModuleCtx *ctx, const RedisModuleString *arg,
                            const char *what, double *out)
{
    double value;
    if (!parse_decimal(arg, &value)) {
        ebb_redis_reply_errorf(ctx, "ERR %s must be a finite number", what);
        return false;
    }
    *out = value;
    return true;
}

bool ebb_redis_parse_positive(RedisModuleCtx *ctx,
                              const RedisModuleString *arg, const char *what,
                              bool zero_ok, double *out)
{
    double value;
    bool ok = parse_decimal(arg, &value) &&
              (zero_ok ? value >= 0.0 : value > 0.0);
    if (!ok) {
        ebb_redis_reply_errorf(ctx, "ERR %s must be a number %s 0", what,
                           zero_ok ? ">=" : ">");
        return false;
    }
    *out = value;
    return true;
}

int ebb_redis_reply_status(RedisModuleCtx *ctx, const char *family,
                           ebb_status status)
{
    switch (status) {
    case EBB_ENOMEM:
        return ebb_redis_reply_errorf(ctx, "ERR %s: out of memory", family);
    case EBB_EOVERFLOW:
        /* The size option of each family: APBF's window, TLBF's span
         * (a TLBF has no window). */
        return ebb_redis_reply_errorf(
            ctx,
            "ERR %s: the filter would be too large to allocate (%s)", family,
            strcmp(family, "TLBF") == 0
                ? "lower the span or RATE, or raise the error rate"
                : "lower the window or raise the error rate");
    case EBB_ELIMIT:
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: the filter is at its MAXMEMORY "
                                  "limit: item not added",
                                  family);
    case EBB_EINVAL:
        /* Creation names the option (ebb_redis_reply_shape_refused); this
         * is the fallback for a refusal no option explains. */
        return ebb_redis_reply_errorf(ctx,
                                  "ERR %s: the library refused an argument "
                                  "as out of range (%s)",
                                  family, ebb_strerror(status));
    default:
        return ebb_redis_reply_errorf(ctx, "ERR %s: %s", family,
                                  ebb_strerror(status));
    }
}

/* ------------------------------------------------------------------------ */
/* Why no shape meets a goal                                                */
/* ------------------------------------------------------------------------ */

/* The options of a shape goal, with the shape family they are asked of. */
typedef struct shape_goal {
    uint64_t window;
    double fp, max_npws, max_accesses;
    uint32_t block_bits, block_hashes;
} shape_goal;

static bool goal_met(const shape_goal *g, double max_npws,
                     double max_accesses)
{
    ebb_apbf_goal goal = {g->window,     g->fp,         max_npws,
                          max_accesses, g->block_bits, g->block_hashes,
                          EBB_APBF_LAYOUT_RING};
    ebb_apbf_params params;
    return ebb_apbf_choose_goal(&goal, &params) != EBB_EINVAL;
}

/* The worst-case rate, peak NPWS and false-query reads of (k, l) in the
 * chooser's model of plain slices. Blocked shapes have no such cheap model
 * (their expected reads take seconds to compute at l = 1024): false, and
 * the replies then name the option without its computed bound. */
typedef struct shape_figures {
    double fp, npws, accesses;
} shape_figures;

static bool figures_of(const shape_goal *g, uint32_t k, uint32_t l,
                       bool with_accesses, shape_figures *out)
{
    if (g->block_bits != 0)
        return false;
    out->fp = ebb_apbf_fp(k, l);
    out->npws = ebb_apbf_npws(k, l);
    out->accesses = with_accesses ? ebb_apbf_accesses_false(k, l) : NAN;
    return true;
}

/* The largest l with fp(k, l) <= g->fp (fp grows with l), 0 if none. */
static uint32_t largest_l_for_fp(const shape_goal *g, uint32_t k)
{
    shape_figures f;
    if (!figures_of(g, k, 1, false, &f) || !(f.fp <= g->fp))
        return 0;
    uint32_t lo = 1, hi = EBB_APBF_MAX_L;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (figures_of(g, k, mid, false, &f) && f.fp <= g->fp)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The least l with NPWS(k, l) <= max_npws (NPWS falls as 1 / l; 1 when
 * unbounded), MAX_L + 1 if none. */
static uint32_t least_l_for_npws(const shape_goal *g, uint32_t k,
                                 double max_npws)
{
    shape_figures f;
    if (!(max_npws > 0.0))
        return 1;
    if (!figures_of(g, k, 1, false, &f))
        return EBB_APBF_MAX_L + 1;
    double l = ceil(f.npws / max_npws);
    if (!(l <= (double)EBB_APBF_MAX_L))
        return EBB_APBF_MAX_L + 1;
    uint32_t least = l < 1.0 ? 1 : (uint32_t)l;
    while (least > 1 && f.npws / (double)(least - 1) <= max_npws)
        least--;
    while (least <= EBB_APBF_MAX_L && f.npws / (double)least > max_npws)
        least++;
    return least;
}

/* The least peak NPWS of a shape meeting the rate; NAN when none does. */
static double least_npws(const shape_goal *g)
{
    double best = NAN;
    for (uint32_t k = 1; k <= EBB_APBF_MAX_K; k++) {
        uint32_t l = largest_l_for_fp(g, k);
        shape_figures f;
        if (l != 0 && figures_of(g, k, l, false, &f) && !(f.npws >= best))
            best = f.npws;
    }
    return best;
}

/* The fewest expected reads of a false query of a shape meeting the rate
 * and the NPWS bound (reads grow with l, so each k's least l); NAN when
 * none does. */
static double least_accesses(const shape_goal *g)
{
    double best = NAN;
    for (uint32_t k = 1; k <= EBB_APBF_MAX_K; k++) {
        uint32_t l = least_l_for_npws(g, k, g->max_npws);
        shape_figures f;
        if (l <= EBB_APBF_MAX_L && figures_of(g, k, l, true, &f) &&
            f.fp <= g->fp && !(f.accesses >= best))
            best = f.accesses;
    }
    return best;
}

static int reply_fp_refused(RedisModuleCtx *ctx, const char *family,
                            const shape_goal *g)
{
    shape_figures f;
    if (!figures_of(g, EBB_APBF_MAX_K, 1, false, &f))
        return ebb_redis_reply_errorf(
            ctx,
            "ERR %s: ERROR %g is below the lowest false-positive rate a "
            "BLOCKED filter reaches with at most %u blocks written per "
            "insertion (the library's limit)",
            family, g->fp, EBB_APBF_MAX_K);
    return ebb_redis_reply_errorf(
        ctx,
        "ERR %s: ERROR %g is below the lowest false-positive rate a filter "
        "reaches (%.3g, with %u slices written per insertion, the "
        "library's limit)",
        family, g->fp, f.fp, EBB_APBF_MAX_K);
}

static int reply_npws_refused(RedisModuleCtx *ctx, const char *family,
                              const shape_goal *g)
{
    double floor_npws = 1.0 / (double)EBB_APBF_MAX_L;
    if (g->max_npws < floor_npws)
        return ebb_redis_reply_errorf(
            ctx,
            "ERR %s: MAXNPWS %g is below %.6f (1/%u), the least slack of "
            "any filter (one slice written per insertion, %u generations, "
            "the library's limits)",
            family, g->max_npws, floor_npws, EBB_APBF_MAX_L, EBB_APBF_MAX_L);
    if (g->block_bits != 0)
        return ebb_redis_reply_errorf(
            ctx,
            "ERR %s: MAXNPWS %g cannot be met with ERROR %g by a BLOCKED "
            "filter",
            family, g->max_npws, g->fp);
    return ebb_redis_reply_errorf(
        ctx,
        "ERR %s: MAXNPWS %g cannot be met with ERROR %g: the least NPWS of "
        "a filter with that error rate is %.4g",
        family, g->max_npws, g->fp, least_npws(g));
}

static int reply_accesses_refused(RedisModuleCtx *ctx, const char *family,
                                  const shape_goal *g)
{
    const char *with_npws = g->max_npws > 0.0 ? " and MAXNPWS" : "";
    if (g->max_accesses < 1.0)
        return ebb_redis_reply_errorf(
            ctx,
            "ERR %s: MAXACCESSES %g is below 1: a query reads at least one "
            "slice",
            family, g->max_accesses);
    if (g->block_bits != 0)
        return ebb_redis_reply_errorf(
            ctx,
            "ERR %s: MAXACCESSES %g cannot be met with ERROR %g%s by a "
            "BLOCKED filter",
            family, g->max_accesses, g->fp, with_npws);
    return ebb_redis_reply_errorf(
        ctx,
        "ERR %s: MAXACCESSES %g cannot be met with ERROR %g%s: the fewest "
        "expected reads of a query answering false is %.4g",
        family, g->max_accesses, g->fp, with_npws, least_accesses(g));
}

int ebb_redis_reply_shape_refused(RedisModuleCtx *ctx, const char *family,
                                  uint64_t window, double fp, double max_npws,
                                  double max_accesses, uint32_t block_bits,
                                  uint32_t block_hashes)
{
    shape_goal g = {window,       fp,         max_npws,
                    max_accesses, block_bits, block_hashes};
    /* Each bound alone, then with the ones before it: the first that
     * cannot be met is the one to change. */
    if (!goal_met(&g, 0.0, 0.0))
        return reply_fp_refused(ctx, family, &g);
    if (max_npws > 0.0 && !goal_met(&g, max_npws, 0.0))
        return reply_npws_refused(ctx, family, &g);
    if (max_accesses > 0.0 && !goal_met(&g, max_npws, max_accesses))
        return reply_accesses_refused(ctx, family, &g);
    return ebb_redis_reply_status(ctx, family, EBB_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* Keyspace notifications                                                   */
/* ------------------------------------------------------------------------ */

void ebb_redis_notify(RedisModuleCtx *ctx, const ebb_redis_family *family,
                      const char *command, RedisModuleString *keyname)
{
    /* "<family>.<command>" in lower case, built by hand: snprintf was a
     * twentieth of a SPECTRAL.INCRBY's server time. */
    char event[64];
    size_t name = strlen(family->name), verb = strlen(command);
    if (name + 1 + verb >= sizeof event)
        return;
    memcpy(event, family->name, name);
    event[name] = '.';
    memcpy(event + name + 1, command, verb + 1);
    for (size_t i = 0; i < name + 1 + verb; i++)
        if (event[i] >= 'A' && event[i] <= 'Z')
            event[i] = (char)(event[i] - 'A' + 'a');
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event,
                                    keyname);
}

int ebb_redis_reply_unknown_option(RedisModuleCtx *ctx,
                                   const RedisModuleString *arg,
                                   const char *command)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    /* Quote at most 64 bytes and keep the reply on one line. */
    char quoted[65];
    size_t n = len < 64 ? len : 64;
    for (size_t i = 0; i < n; i++)
        quoted[i] = (text[i] == '\r' || text[i] == '\n') ? ' ' : text[i];
    quoted[n] = '\0';
    return ebb_redis_reply_errorf(ctx, "ERR unknown option '%s' for %s",
                                  quoted, command);
}

bool ebb_redis_parse_options(RedisModuleCtx *ctx, RedisModuleString **argv,
                             int argc, int *i, const char *command,
                             ebb_redis_option_parser parse, void *options,
                             bool *nocreate)
{
    bool insert = nocreate != NULL;
    while (*i < argc && !(insert && ebb_redis_arg_is(argv[*i], "ITEMS"))) {
        if (insert && ebb_redis_arg_is(argv[*i], "NOCREATE")) {
            *nocreate = true;
            *i += 1;
            continue;
        }
        int parsed = parse(ctx, argv, argc, i, insert, options);
        if (parsed < 0)
            return false;
        if (parsed == 0) {
            ebb_redis_reply_unknown_option(ctx, argv[*i], command);
            return false;
        }
    }
    if (insert && *i + 1 >= argc) {
        ebb_redis_reply_errorf(ctx,
                           "ERR %s needs ITEMS followed by at least one item",
                           command);
        return false;
    }
    return true;
}

void ebb_redis_format_double(double value, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, value);
        if (strtod(buf, NULL) == value)
            return;
    }
}

uint64_t ebb_redis_key_seed(const RedisModuleString *keyname)
{
    size_t len;
    const char *name = RedisModule_StringPtrLen(keyname, &len);
    return ebb_hash(name, len, 0).lo;
}

/* ------------------------------------------------------------------------ */
/* INFO replies                                                             */
/* ------------------------------------------------------------------------ */

void ebb_redis_info_integer(RedisModuleCtx *ctx, long *count,
                            const char *field, uint64_t value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithLongLong(
        ctx, value > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)value);
    *count += 2;
}

void ebb_redis_info_signed(RedisModuleCtx *ctx, long *count,
                           const char *field, long long value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithLongLong(ctx, value);
    *count += 2;
}

void ebb_redis_info_double(RedisModuleCtx *ctx, long *count,
                           const char *field, double value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithDouble(ctx, value);
    *count += 2;
}

void ebb_redis_info_text(RedisModuleCtx *ctx, long *count, const char *field,
                         const char *value)
{
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithSimpleString(ctx, value);
    *count += 2;
}
