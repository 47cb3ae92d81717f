/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * count_table.c: the exact key set of `ebb count` (count_table.h): open
 * addressing with linear probing over 32-bit key indices, at most half
 * full, doubled when it would pass that; the per-key arrays and the line
 * bytes grow by doubling too, so an add costs amortised O(1).
 */
#include "count_table.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_SLOTS ((size_t)1 << 12)
#define INITIAL_KEYS ((size_t)1 << 11)
#define INITIAL_BYTES ((size_t)1 << 16)

/* Grows an array of `size`-byte elements to hold `want` of them. */
static bool grow(void **array, size_t size, size_t want)
{
    if (want > SIZE_MAX / size)
        return false;
    void *bigger = realloc(*array, want * size);
    if (bigger == NULL)
        return false;
    *array = bigger;
    return true;
}

bool count_table_init(count_table *table, bool keep_lines, bool count_exactly)
{
    memset(table, 0, sizeof *table);
    table->keep_lines = keep_lines;
    table->count_exactly = count_exactly;
    table->slots = calloc(INITIAL_SLOTS, sizeof *table->slots);
    table->slot_mask = INITIAL_SLOTS - 1;
    table->capacity = INITIAL_KEYS;
    bool ok = table->slots != NULL &&
              grow((void **)&table->hashes, sizeof *table->hashes,
                   INITIAL_KEYS);
    if (ok && count_exactly)
        ok = grow((void **)&table->exact, sizeof *table->exact, INITIAL_KEYS);
    if (ok && keep_lines) {
        table->bytes_capacity = INITIAL_BYTES;
        ok = grow((void **)&table->bytes, 1, INITIAL_BYTES);
    }
    if (!ok)
        count_table_free(table);
    return ok;
}

void count_table_free(count_table *table)
{
    free(table->slots);
    free(table->hashes);
    free(table->exact);
    free(table->bytes);
    memset(table, 0, sizeof *table);
}

static size_t home_slot(ebb_hash128 hash, size_t mask)
{
    return (size_t)(hash.hi ^ (hash.lo >> 32)) & mask;
}

static bool same_hash(ebb_hash128 a, ebb_hash128 b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

/* The slot holding the hash, or the empty slot where it would go. */
static size_t probe(const count_table *table, ebb_hash128 hash)
{
    size_t slot = home_slot(hash, table->slot_mask);
    while (table->slots[slot] != 0 &&
           !same_hash(table->hashes[table->slots[slot] - 1], hash))
        slot = (slot + 1) & table->slot_mask;
    return slot;
}

bool count_table_find(const count_table *table, ebb_hash128 hash,
                      size_t *index)
{
    size_t slot = probe(table, hash);
    if (table->slots[slot] == 0)
        return false;
    *index = table->slots[slot] - 1;
    return true;
}

void count_table_prefetch_slot(const count_table *table, ebb_hash128 hash)
{
    __builtin_prefetch(&table->slots[home_slot(hash, table->slot_mask)]);
}

void count_table_prefetch_key(const count_table *table, ebb_hash128 hash)
{
    uint32_t entry = table->slots[home_slot(hash, table->slot_mask)];
    if (entry == 0)
        return;
    __builtin_prefetch(&table->hashes[entry - 1]);
    if (table->count_exactly)
        __builtin_prefetch(&table->exact[entry - 1], 1);
}

/* Keys ahead of the one placed whose new slot is prefetched while the
 * slots are placed again: the hashes are read in order, but each lands
 * in a random slot of a table larger than the caches. */
#define GROW_AHEAD 16u

/* Doubles the slots and places every key again. */
static bool grow_slots(count_table *table)
{
    size_t count = (table->slot_mask + 1) * 2;
    uint32_t *slots = calloc(count, sizeof *slots);
    if (slots == NULL)
        return false;
    free(table->slots);
    table->slots = slots;
    table->slot_mask = count - 1;
    for (size_t i = 0; i < table->keys; i++) {
        if (i + GROW_AHEAD < table->keys)
            count_table_prefetch_slot(table, table->hashes[i + GROW_AHEAD]);
        table->slots[probe(table, table->hashes[i])] = (uint32_t)(i + 1);
    }
    return true;
}

/* Room for one more key in every per-key array. */
static bool grow_keys(count_table *table)
{
    if (table->keys < table->capacity)
        return true;
    size_t want = table->capacity * 2;
    bool ok = grow((void **)&table->hashes, sizeof *table->hashes, want);
    if (ok && table->count_exactly)
        ok = grow((void **)&table->exact, sizeof *table->exact, want);
    if (ok)
        table->capacity = want;
    return ok;
}

/* Appends the line's record (LEB128 length, then the bytes). */
static bool keep_line(count_table *table, const char *line, size_t length)
{
    unsigned char prefix[10];
    size_t n = 0;
    size_t rest = length;
    do {
        prefix[n] = (unsigned char)(rest & 0x7fu);
        rest >>= 7;
        prefix[n] |= rest != 0 ? 0x80u : 0u;
        n++;
    } while (rest != 0);
    size_t want = table->bytes_used + n + length;
    if (want < length)
        return false;
    if (want > table->bytes_capacity) {
        size_t capacity = table->bytes_capacity;
        while (capacity < want) {
            if (capacity > SIZE_MAX / 2)
                return false;
            capacity *= 2;
        }
        if (!grow((void **)&table->bytes, 1, capacity))
            return false;
        table->bytes_capacity = capacity;
    }
    memcpy(table->bytes + table->bytes_used, prefix, n);
    memcpy(table->bytes + table->bytes_used + n, line, length);
    table->bytes_used = want;
    return true;
}

void count_table_next_line(const count_table *table, size_t *cursor,
                           const char **line, size_t *length)
{
    size_t at = *cursor, value = 0;
    unsigned shift = 0;
    unsigned char byte;
    do {
        byte = table->bytes[at++];
        value |= (size_t)(byte & 0x7fu) << shift;
        shift += 7;
    } while (byte & 0x80u);
    *line = (const char *)table->bytes + at;
    *length = value;
    *cursor = at + value;
}

bool count_table_find_or_add(count_table *table, ebb_hash128 hash,
                             const char *line, size_t length, size_t *index)
{
    size_t slot = probe(table, hash);
    if (table->slots[slot] != 0) {
        *index = table->slots[slot] - 1;
        return true;
    }
    if (table->keys >= COUNT_TABLE_MAX_KEYS || !grow_keys(table))
        return false;
    size_t bytes_before = table->bytes_used;
    if (table->keep_lines && !keep_line(table, line, length))
        return false;
    size_t key = table->keys;
    table->hashes[key] = hash;
    if (table->count_exactly)
        table->exact[key] = 0;
    table->keys++;
    /* At most half full: a probe then reads about 1.5 slots. */
    if (2 * table->keys > table->slot_mask + 1) {
        if (!grow_slots(table)) {
            table->keys--;
            table->bytes_used = bytes_before;
            return false;
        }
    } else {
        table->slots[slot] = (uint32_t)(key + 1);
    }
    *index = key;
    return true;
}

size_t count_table_memory(const count_table *table)
{
    size_t per_key = sizeof *table->hashes +
                     (table->count_exactly ? sizeof *table->exact : 0);
    return (table->slot_mask + 1) * sizeof *table->slots +
           table->capacity * per_key + table->bytes_capacity;
}
