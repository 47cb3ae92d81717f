/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * count_table.h: the exact side of `ebb count`: a set of the distinct keys
 * seen, by their 128-bit hashes, numbering each key in first-seen order.
 *
 * The spectral filter holds the counts in fixed memory; this table is what
 * grows with the distinct keys, and only the modes that need it build it:
 * the default output (every distinct line once, in first-seen order, so
 * the lines themselves are kept) and --exact-check (an exact count beside
 * the filter's estimate). Two keys are the same when their 128-bit hashes
 * are: a collision among n keys has probability about n^2 / 2^129.
 */
#ifndef EBB_CLI_COUNT_TABLE_H
#define EBB_CLI_COUNT_TABLE_H

#include <ebb/ebb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most keys a table numbers (indices are 32-bit in the slots). */
#define COUNT_TABLE_MAX_KEYS (UINT32_MAX - 1u)

typedef struct count_table {
    uint32_t *slots;     /* 0: empty, else key index + 1               */
    size_t slot_mask;    /* slots - 1 (a power of two)                  */
    ebb_hash128 *hashes; /* by key index                                */
    int64_t *exact;      /* by key index, when counting exactly         */
    /* The kept lines in key order, each a record of its length (LEB128:
     * 7 bits a byte, low first, high bit set on all but the last) then
     * its bytes: read in order by count_table_next_line, so no per-key
     * offsets are kept (12 bytes a key less). */
    unsigned char *bytes;
    size_t bytes_used, bytes_capacity;
    size_t keys, capacity;
    bool keep_lines, count_exactly;
} count_table;

/* An empty table. Returns false when out of memory. */
bool count_table_init(count_table *table, bool keep_lines,
                      bool count_exactly);
void count_table_free(count_table *table);

/* The index of the key with this hash, added (with its line bytes when
 * keeping lines, an exact count of 0) if new. Returns false when out of
 * memory or past COUNT_TABLE_MAX_KEYS (nothing changed). */
bool count_table_find_or_add(count_table *table, ebb_hash128 hash,
                             const char *line, size_t length,
                             size_t *index);

/* Starts loading the hash's home slot into the cache, so that a
 * find_or_add of it some lines later does not wait for memory (a hint:
 * the table may have grown in between). */
void count_table_prefetch_slot(const count_table *table, ebb_hash128 hash);

/* Starts loading the key the hash's home slot names (its hash, and its
 * exact count when counting exactly): the second of a lookup's two cache
 * misses. Reads the slot, so call it after count_table_prefetch_slot has
 * had time to bring it in. */
void count_table_prefetch_key(const count_table *table, ebb_hash128 hash);

/* The index of a key already in the table; false when it is not. */
bool count_table_find(const count_table *table, ebb_hash128 hash,
                      size_t *index);

/* The kept lines in key order: *cursor starts at 0; each call sets
 * *line and *length to the next key's line and advances it. Only for a
 * table keeping lines, and at most `keys` calls. */
void count_table_next_line(const count_table *table, size_t *cursor,
                           const char **line, size_t *length);

/* The bytes the table holds (slots, per-key arrays, lines). */
size_t count_table_memory(const count_table *table);

#endif /* EBB_CLI_COUNT_TABLE_H */
