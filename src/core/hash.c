/* hash.c: the public hash entry point. */
#include "core/hash.h"

ebb_hash128 ebb_hash(const void *key, size_t len, uint64_t seed)
{
    static const unsigned char empty = 0;
    return ebb_hash_inline(len ? key : &empty, len, seed);
}
