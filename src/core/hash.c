/* SPDX-License-Identifier: BSD-2-Clause */
/* hash.c: the public hash entry point. */
#include "core/hash.h"

ebb_hash128 ebb_hash(const void *key, size_t len, uint64_t seed)
{
    return ebb_hash_inline(key, len, seed);
}
