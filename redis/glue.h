/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue.h: what the data types of ebb.so share, written once:
 *   args.c      argument parsing, error replies, INFO replies;
 *   value.c     key values, opening keys, creating filters under them;
 *   buffer.c    byte buffers on Redis's heap;
 *   persist.c   RDB, AOF rewrite, MEMORY USAGE, COPY, free;
 *   chunks.c    SCANDUMP and LOADCHUNK, restores in progress;
 *   commands.c  command registration and ACL.
 *
 * - argument parsing and error replies with the module's wording;
 * - the value a key holds (ebb_redis_value): a filter, or the bytes of a
 *   filter being restored by LOADCHUNK, plus SCANDUMP's saved snapshot;
 * - the data-type callbacks (RDB, AOF rewrite, MEMORY USAGE, COPY, free)
 *   and SCANDUMP/LOADCHUNK, written once over a small table of the
 *   family's library functions (ebb_redis_family).
 *
 * Everything a filter does lives in libebb; this is parsing and replies.
 */
#ifndef EBB_REDIS_GLUE_H
#define EBB_REDIS_GLUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ebb/ebb.h>

#include "api.h"

/* RDB encoding version of both data types (the "encver" Redis stores with
 * each value; persist.c, docs/redis.md "Persistence"). Version 1: an
 * unsigned kind (0 filter, 1 restore in progress), then for kind 0 the
 * library snapshot as one string, for kind 1 the announced snapshot length
 * and the bytes received so far. Version 2, written since: kind 0 is the
 * snapshot's length, then the snapshot in strings of at most
 * EBB_REDIS_CHUNK_BYTES streamed from the filter (no copy of it); kind 1
 * as in version 1. Both versions load. */
#define EBB_REDIS_ENCODING_VERSION 2

/* Scans of one key served at once from its kept snapshot; a newer one
 * supersedes the oldest (whose next iterator is refused at once). */
#define EBB_REDIS_SCANS_MAX 8u

/* Bytes per SCANDUMP reply and per LOADCHUNK command of an AOF rewrite. */
#define EBB_REDIS_CHUNK_BYTES ((size_t)1 << 20)

/* The library functions of one filter family, behind void pointers so the
 * glue below serves every family. */
typedef struct ebb_redis_family {
    const char *name;              /* "APBF": prefix of messages        */
    const char *loadchunk_command; /* "APBF.LOADCHUNK": AOF rewrite     */
    RedisModuleType **type;        /* the registered data type          */
    size_t (*snapshot_size)(const void *filter);
    ebb_status (*save)(const void *filter, void *buf, size_t capacity,
                       size_t *written);
    ebb_status (*save_to)(const void *filter, ebb_save_sink sink,
                          void *user);
    ebb_status (*load)(const void *buf, size_t len, void **filter);
    size_t (*memory)(const void *filter);
    void (*destroy)(void *filter);
} ebb_redis_family;

/* A growable byte buffer on Redis's heap. */
typedef struct ebb_redis_buffer {
    unsigned char *bytes;
    size_t length;
    size_t capacity;
} ebb_redis_buffer;

/* What a key of our types holds. */
typedef struct ebb_redis_value {
    /* The filter; NULL while LOADCHUNK is restoring one. */
    void *filter;
    /* LOADCHUNK: the snapshot bytes received so far, and the snapshot's
     * length as its first chunk announced it. */
    ebb_redis_buffer restore;
    uint64_t restore_total;
    /* SCANDUMP: the snapshot served chunk by chunk, taken at iterator 0 and
     * dropped by the next write, so every chunk of one scan comes from the
     * same state. Every scan gets a number of its own at iterator 0, which
     * all its iterators carry; dump_scans[0 .. dump_scan_count) are the
     * numbers of the scans served from this snapshot that have not reached
     * their end, oldest first (chunks.c). A scan's end removes only its
     * own number, and the last one's end releases the snapshot. */
    ebb_redis_buffer dump;
    uint32_t dump_scans[EBB_REDIS_SCANS_MAX];
    uint32_t dump_scan_count;
    /* MEMORY USAGE: the heap the filter took when it was created or loaded
     * (usable sizes, as used_memory counts them), and the library's count
     * of its bytes then (family->memory); 0: not measured. */
    size_t filter_heap;
    size_t filter_memory;
} ebb_redis_value;

/* ------------------------------------------------------------------------ */
/* Arguments and replies                                                    */
/* ------------------------------------------------------------------------ */

/* True when arg equals word, ignoring ASCII case. */
bool ebb_redis_arg_is(const RedisModuleString *arg, const char *word);

/* Parse an integer in [min, max]; on failure reply
 * "ERR <what> must be an integer from <min> to <max>" and return false. */
bool ebb_redis_parse_integer(RedisModuleCtx *ctx, const RedisModuleString *arg,
                             const char *what, long long min, long long max,
                             long long *out);

/* Numbers (ebb_redis_parse_rate, _positive) are read as a person types a
 * decimal: an optional sign, digits with an optional point, an optional
 * exponent (100, 0.01, 1e-3). Hexadecimal (0x0.1), inf, nan, spaces and
 * the empty string are refused. */

/* Parse a number strictly between 0 and 1 (a false-positive rate). */
bool ebb_redis_parse_rate(RedisModuleCtx *ctx, const RedisModuleString *arg,
                          const char *what, double *out);

/* Parse a finite number > 0 (or >= 0 when zero_ok). */
bool ebb_redis_parse_positive(RedisModuleCtx *ctx,
                              const RedisModuleString *arg, const char *what,
                              bool zero_ok, double *out);

/* Parse any finite number (negative too); on failure reply
 * "ERR <what> must be a finite number". */
bool ebb_redis_parse_finite(RedisModuleCtx *ctx, const RedisModuleString *arg,
                            const char *what, double *out);

/* Replies an error formatted as by printf (at most 255 bytes). Returns
 * REDISMODULE_OK. */
int ebb_redis_reply_errorf(RedisModuleCtx *ctx, const char *format, ...)
    EBB_REDIS_PRINTF(2, 3);

/* Reply "ERR <family>: <ebb_strerror(status)>" or, for the statuses a user
 * can cause, a sentence that says what to change. Returns REDISMODULE_OK
 * (the handler's return value after replying). */
int ebb_redis_reply_status(RedisModuleCtx *ctx, const char *family,
                           ebb_status status);

/* Replies why no filter shape meets a goal (ebb_apbf_choose_goal refused
 * it with EBB_EINVAL): a sentence naming the option that cannot be met
 * (ERROR, MAXNPWS or MAXACCESSES) and its bound. block_bits 0: plain
 * slices. Returns REDISMODULE_OK. */
int ebb_redis_reply_shape_refused(RedisModuleCtx *ctx, const char *family,
                                  uint64_t window, double fp, double max_npws,
                                  double max_accesses, uint32_t block_bits,
                                  uint32_t block_hashes);

/* Publishes the keyspace event "<family>.<command>" in lower case
 * ("apbf.add", "tlbf.addat") for keyname, in the module class
 * (notify-keyspace-events "d"), as the core types do for their writes.
 * Every write that changed a key calls it once. */
void ebb_redis_notify(RedisModuleCtx *ctx, const ebb_redis_family *family,
                      const char *command, RedisModuleString *keyname);

/* TLBF.ADDAT refuses a time more than this many milliseconds ahead of the
 * server's clock (config ebb.tlbf-future-ms, registered by module.c). */
#define EBB_REDIS_TLBF_FUTURE_MS_DEFAULT 1000LL
/* The largest millisecond time whose nanoseconds fit in int64 (2262). */
#define EBB_REDIS_TLBF_MAX_MS (INT64_MAX / 1000000LL)
extern long long ebb_redis_tlbf_future_ms;

/* Reply "ERR unknown option '<arg>' for <command>". */
int ebb_redis_reply_unknown_option(RedisModuleCtx *ctx,
                                   const RedisModuleString *arg,
                                   const char *command);

/* Parses one creation option of a family at argv[*i] into options (the
 * family's own struct), advancing *i past it. size_option: the option
 * naming the filter's size (WINDOW, SPAN) is allowed, as in INSERT, where
 * the size is not positional. Returns 1 when parsed, 0 when argv[*i] is
 * not a creation option, -1 after replying an error. */
typedef int (*ebb_redis_option_parser)(RedisModuleCtx *ctx,
                                       RedisModuleString **argv, int argc,
                                       int *i, bool size_option,
                                       void *options);

/* Parses the creation options of command from argv[*i] with parse. With
 * nocreate NULL (RESERVE) up to the end; otherwise (INSERT) up to ITEMS,
 * also taking NOCREATE (*nocreate) and the size option, and then *i is at
 * ITEMS with at least one item after it. Returns false after replying an
 * error, an unknown option included. */
bool ebb_redis_parse_options(RedisModuleCtx *ctx, RedisModuleString **argv,
                             int argc, int *i, const char *command,
                             ebb_redis_option_parser parse, void *options,
                             bool *nocreate);

/* A double as the shortest decimal text that reads back to the same value
 * (for commands we replicate). buf needs 32 bytes. */
void ebb_redis_format_double(double value, char *buf, size_t size);

/* The hash seed of a filter created under this key name: a function of the
 * name only, so a replica or an AOF replay that creates the key again picks
 * the same seed, and the shards of one logical filter differ. */
uint64_t ebb_redis_key_seed(const RedisModuleString *keyname);

/* INFO replies: an array of field/value pairs. Start with
 * RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN), add fields
 * (each adds 2 to *count), end with RedisModule_ReplySetArrayLength. An
 * unsigned value above LLONG_MAX (a saturated counter) is sent as LLONG_MAX. */
void ebb_redis_info_integer(RedisModuleCtx *ctx, long *count,
                            const char *field, uint64_t value);
void ebb_redis_info_signed(RedisModuleCtx *ctx, long *count,
                           const char *field, long long value);
void ebb_redis_info_double(RedisModuleCtx *ctx, long *count,
                           const char *field, double value);
void ebb_redis_info_text(RedisModuleCtx *ctx, long *count, const char *field,
                         const char *value);

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* What a command does to its key, as its key spec says (the documented
 * flags of RedisModule_SetCommandInfo; docs/redis.md "Commands, flags and
 * ACL"). Clients that route reads to replicas, and ACL read-only key
 * permissions (%R~), go by these. */
/* Reads the filter and answers from it: EXISTS, MEXISTS, INFO, SCANDUMP. */
#define EBB_REDIS_KEY_READS                                                   \
    (REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS)
/* Creates the key and never changes an existing one: RESERVE. */
#define EBB_REDIS_KEY_CREATES                                                 \
    (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_INSERT)
/* Changes the filter (an add may retire old generations or slices) and
 * answers from its state before the add: ADD, MADD, INSERT, ADDAT. */
#define EBB_REDIS_KEY_ADDS                                                    \
    (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS |                    \
     REDISMODULE_CMD_KEY_UPDATE)
/* Builds the value chunk by chunk, and may restart or drop a restore in
 * progress: LOADCHUNK. */
#define EBB_REDIS_KEY_RESTORES                                                \
    (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE)

typedef struct ebb_redis_command {
    const char *name;
    RedisModuleCmdFunc handler;
    const char *flags;  /* "write deny-oom", "readonly fast", ...         */
    int arity;          /* N words exactly, or -N: at least N (command
                           name included), checked by the server          */
    uint64_t key_flags; /* EBB_REDIS_KEY_*: the key spec of argument 1   */
    const char *summary; /* COMMAND DOCS                                  */
} ebb_redis_command;

/* Registers commands whose key is their first argument (key positions
 * 1, 1, 1, so Redis Cluster routes them). Where the server has
 * RedisModule_SetCommandInfo (7.0) each gets its arity, its key spec
 * (key_flags) and its summary; where it has module ACL categories (7.2)
 * each gets "read" or "write", "fast" or "slow" from its flags, and "ebb"
 * when ebb_redis_add_acl_category created it. */
int ebb_redis_create_commands(RedisModuleCtx *ctx,
                              const ebb_redis_command *commands,
                              size_t count);

/* Registers one command like ebb_redis_create_commands whose key at
 * argument 1 is followed by more keys from argument 2 on (SPECTRAL.MERGE's
 * sources), up to a position only the handler knows: a second key spec
 * with more_key_flags, marked incomplete, so the server asks the handler
 * for the positions (its flags must include "getkeys-api"; it answers
 * RedisModule_IsKeysPositionRequest). */
int ebb_redis_create_command_more_keys(RedisModuleCtx *ctx,
                                       const ebb_redis_command *command,
                                       uint64_t more_key_flags);

/* Creates the ACL category "ebb" on servers that can (Redis 7.4 and
 * later). Call before registering commands.
 *
 * On Redis 7.0 module commands belong to NO ACL category whatever their
 * flags: "+@all -@write" still allows APBF.ADD, and "+@read" allows none of
 * them. Read-only users there are made with per-command rules or read-only
 * key permissions (%R~, which go by the key specs above); docs/redis.md
 * gives the recipe and tests/redis/acl.sh tests it. */
void ebb_redis_add_acl_category(RedisModuleCtx *ctx);

/* The data types and their commands (apbf_type.c, tlbf_type.c). */
int ebb_redis_apbf_register(RedisModuleCtx *ctx);
int ebb_redis_tlbf_register(RedisModuleCtx *ctx);
int ebb_redis_stable_register(RedisModuleCtx *ctx);
int ebb_redis_timing_register(RedisModuleCtx *ctx);
int ebb_redis_spectral_register(RedisModuleCtx *ctx);

/* ------------------------------------------------------------------------ */
/* Keys and values                                                          */
/* ------------------------------------------------------------------------ */

/* Opens keyname with mode (REDISMODULE_READ / WRITE). On success *key is
 * open and *value is the key's value, or NULL for an empty key; returns
 * true. A key of another type is closed, answered WRONGTYPE, and false is
 * returned. */
bool ebb_redis_open(RedisModuleCtx *ctx, RedisModuleString *keyname,
                    int mode, const ebb_redis_family *family,
                    RedisModuleKey **key, ebb_redis_value **value);

/* False (after replying an error) when value is being restored by
 * LOADCHUNK and so holds no filter yet. */
bool ebb_redis_value_ready(RedisModuleCtx *ctx,
                           const ebb_redis_family *family,
                           const ebb_redis_value *value);

/* Like ebb_redis_open, and a value still being restored by LOADCHUNK is
 * answered as by ebb_redis_value_ready, its key closed, and false
 * returned. *value is NULL for an empty key. */
bool ebb_redis_open_filter(RedisModuleCtx *ctx, RedisModuleString *keyname,
                           int mode, const ebb_redis_family *family,
                           RedisModuleKey **key, ebb_redis_value **value);

/* How a family creates a filter from the options a command parsed (the
 * family's own options struct, behind a void pointer). */
/* The largest options struct of a family (value.c copies it to resolve). */
#define EBB_REDIS_OPTIONS_MAX 256

typedef struct ebb_redis_creator {
    const ebb_redis_family *family;
    /* sizeof the family's options struct, at most EBB_REDIS_OPTIONS_MAX. */
    size_t options_size;
    /* Decides, in place, every parameter of the filter that options ask
     * for, so that nothing is left to defaults or to this machine (what
     * replicate_reserve sends), and sets *bytes to what create will
     * allocate. Checks that depend on this machine are made on client
     * calls only. False after replying an error. */
    bool (*resolve)(RedisModuleCtx *ctx, void *options, size_t *bytes);
    /* A new filter for resolved options, hashing with seed. */
    ebb_status (*create)(const void *options, uint64_t seed, void **filter);
    /* Replies why create failed for options (so it can name the option
     * that cannot be met); NULL: ebb_redis_reply_status. */
    int (*reply_refused)(RedisModuleCtx *ctx, ebb_status status,
                         const void *options);
    /* Replicates the RESERVE that recreates a key created with resolved
     * options: every parameter explicit (RedisModule_Replicate). */
    void (*replicate_reserve)(RedisModuleCtx *ctx, RedisModuleString *keyname,
                              const void *options);
} ebb_redis_creator;

/* The tail of <FAMILY>.RESERVE once its options are parsed: a new filter
 * under keyname (refused on a client call when it does not fit the memory
 * limits, room.h), replicated resolved (replicate_reserve), "OK";
 * "ERR key already exists" when the key holds one. */
int ebb_redis_reserve(RedisModuleCtx *ctx, RedisModuleString *keyname,
                      const ebb_redis_creator *creator, const void *options);

/* Opens keyname for adding: an existing filter of the family, or a new one
 * created with options (its resolved RESERVE replicated) unless nocreate.
 * A write from the primary or the AOF never creates a key: a missing key is
 * then an error, logged at warning. Returns false after replying an
 * error. */
bool ebb_redis_open_for_add(RedisModuleCtx *ctx, RedisModuleString *keyname,
                            const ebb_redis_creator *creator,
                            const void *options, bool nocreate,
                            RedisModuleKey **key, ebb_redis_value **value);

/* A value owning filter, on Redis's heap; NULL when out of memory (the
 * filter is then left to the caller). */
ebb_redis_value *ebb_redis_value_new(void *filter);

/* Stores a new value holding filter under the open, empty key. On failure
 * (out of memory) destroys the filter and returns false. */
bool ebb_redis_store_new(RedisModuleKey *key, const ebb_redis_family *family,
                         void *filter);

/* The heap meter (module.c): usable bytes (RedisModule_MallocSize) that
 * libebb allocated minus released on the calling thread. Read it before a
 * filter is created or loaded and pass the reading to
 * ebb_redis_value_measured once value->filter is set: MEMORY USAGE then
 * counts the allocator's real sizes. */
int64_t ebb_redis_heap_meter(void);
void ebb_redis_value_measured(ebb_redis_value *value,
                              const ebb_redis_family *family,
                              int64_t meter_before);

/* Every write calls this: the state changes, so SCANDUMP's snapshot of the
 * old state is dropped. */
void ebb_redis_value_touch(ebb_redis_value *value);

/* ------------------------------------------------------------------------ */
/* Buffers (buffer.c)                                                       */
/* ------------------------------------------------------------------------ */

/* Frees the bytes and empties the buffer. */
void ebb_redis_buffer_release(ebb_redis_buffer *buffer);

/* Makes room for at least `needed` bytes, growing geometrically but never
 * past `limit`. False when out of memory (the buffer is unchanged). */
bool ebb_redis_buffer_reserve(ebb_redis_buffer *buffer, size_t needed,
                              size_t limit);

/* The filter's snapshot into a fresh buffer. try: TryAlloc (false when out
 * of memory); otherwise Alloc, which aborts the server when out of memory. */
bool ebb_redis_snapshot_take(const ebb_redis_family *family,
                             const void *filter, bool try,
                             ebb_redis_buffer *out);

/* ------------------------------------------------------------------------ */
/* Restores in progress (chunks.c)                                          */
/* ------------------------------------------------------------------------ */

/* The snapshot length announced by a restore's first bytes, or 0 when they
 * are not the start of a snapshot. */
uint64_t ebb_redis_snapshot_announced_total(const unsigned char *bytes,
                                            size_t len);

/* Completes a restore whose bytes have all arrived: the filter replaces the
 * bytes. On failure the value is unchanged and the status says why. */
ebb_status ebb_redis_restore_finish(const ebb_redis_family *family,
                                    ebb_redis_value *value);

/* ------------------------------------------------------------------------ */
/* Data-type callbacks (each family wraps them: snapshot_type.h)           */
/* ------------------------------------------------------------------------ */

void *ebb_redis_rdb_load(const ebb_redis_family *family, RedisModuleIO *io,
                         int encver);
void ebb_redis_rdb_save(const ebb_redis_family *family, RedisModuleIO *io,
                        const ebb_redis_value *value);
void ebb_redis_aof_rewrite(const ebb_redis_family *family, RedisModuleIO *io,
                           RedisModuleString *key,
                           const ebb_redis_value *value);
size_t ebb_redis_mem_usage(const ebb_redis_family *family,
                           const ebb_redis_value *value);
void ebb_redis_digest(const ebb_redis_family *family, RedisModuleDigest *md,
                      const ebb_redis_value *value);
void *ebb_redis_copy(const ebb_redis_family *family,
                     const ebb_redis_value *value);
void ebb_redis_free(const ebb_redis_family *family, ebb_redis_value *value);

/* ------------------------------------------------------------------------ */
/* Chunked dump and restore                                                 */
/* ------------------------------------------------------------------------ */

/* <FAMILY>.SCANDUMP key iterator */
int ebb_redis_scandump(const ebb_redis_family *family, RedisModuleCtx *ctx,
                       RedisModuleString **argv, int argc);
/* <FAMILY>.LOADCHUNK key iterator data */
int ebb_redis_loadchunk(const ebb_redis_family *family, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc);

#endif /* EBB_REDIS_GLUE_H */
