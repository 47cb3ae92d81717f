/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rng.c: seeding and saving the generator of rng.h.
 */
#include "core/rng.h"

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", 2014): a Weyl sequence with step 0x9e3779b97f4a7c15 (the
 * odd integer nearest 2^64 / golden ratio) passed through a bijective mix. */
static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void ebb_rng_seed(ebb_rng *r, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64_next(&state);
}

void ebb_rng_put(ebb_writer *w, const ebb_rng *r)
{
    for (int i = 0; i < 4; i++)
        ebb_put_u64(w, r->s[i]);
}

bool ebb_rng_get(ebb_reader *r, ebb_rng *out)
{
    ebb_rng read;
    if (ebb_reader_left(r) < EBB_RNG_STATE_BYTES)
        return false;
    for (int i = 0; i < 4; i++)
        if (!ebb_get_u64(r, &read.s[i]))
            return false;
    if ((read.s[0] | read.s[1] | read.s[2] | read.s[3]) == 0)
        return false;
    *out = read;
    return true;
}
