/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rng.h: the small deterministic generator of the filters that decide at
 * random (the stable filter's decrements, ...). Its state lives in the
 * filter's handle and in its snapshots, so the same seed and the same
 * stream give byte-identical filters, and a restored filter continues the
 * sequence where the saved one stopped.
 *
 * The generator is xoshiro256** (Blackman and Vigna, "Scrambled linear
 * pseudorandom number generators", 2018), written here from its published
 * description: 256 bits of state, period 2^256 - 1, every output bit of
 * good quality, a handful of shifts, xors and two multiplications per
 * output. The all-zero state is its only fixed point and is invalid.
 *
 * Seeding: the four state words are the first four outputs of splitmix64
 * started at the 64-bit seed (the seeding the authors recommend). They are
 * four distinct values (splitmix64's output function is a bijection of
 * distinct states), so the state is never all zero.
 *
 * Not for cryptography: an observer of outputs can recover the state.
 */
#ifndef EBB_CORE_RNG_H
#define EBB_CORE_RNG_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/hash.h"

#define EBB_RNG_STATE_BYTES 32u

typedef struct ebb_rng {
    uint64_t s[4];
} ebb_rng;

/* Sets the state from a 64-bit seed (any value, 0 included). */
void ebb_rng_seed(ebb_rng *r, uint64_t seed);

static inline uint64_t ebb_rng_rotl_(uint64_t x, unsigned k)
{
    return (x << k) | (x >> (64u - k));
}

/* The next 64 random bits. */
static inline uint64_t ebb_rng_next(ebb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = ebb_rng_rotl_(s[1] * 5u, 7) * 9u;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ebb_rng_rotl_(s[3], 45);
    return out;
}

/* Uniform in [0, bound), bound >= 1, without bias: the high word of
 * x * bound, redrawing x when the low word falls in the 2^64 mod bound
 * values that would make some results one more likely than others
 * (Lemire, "Fast random integer generation in an interval", 2019). The
 * remainder is computed only when the low word is below bound, which for
 * small bounds is almost never. */
static inline uint64_t ebb_rng_below(ebb_rng *r, uint64_t bound)
{
    uint64_t x = ebb_rng_next(r);
    uint64_t low = x * bound;
    assert(bound >= 1);
    if (low < bound) {
        uint64_t threshold = (0u - bound) % bound; /* 2^64 mod bound */
        while (low < threshold) {
            x = ebb_rng_next(r);
            low = x * bound;
        }
    }
    return ebb_mul_high(x, bound);
}

/* Uniform double in [0, 1): the top 53 bits of an output times 2^-53. */
static inline double ebb_rng_unit(ebb_rng *r)
{
    return (double)(ebb_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Writes the state as four little-endian u64 (EBB_RNG_STATE_BYTES). */
void ebb_rng_put(ebb_writer *w, const ebb_rng *r);

/* Reads a state written by ebb_rng_put. False, *out unchanged, when the
 * reader is short or the state is all zero (invalid for xoshiro). */
bool ebb_rng_get(ebb_reader *r, ebb_rng *out);

#endif
