/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strarray_counters.h: the counters of the string-array rows of the
 * benchmark (bench/strarray.c) and of its sdsl-lite peer
 * (bench/sdsl_peer.cpp), generated the same way by both (C and C++), so
 * that the two programs measure the same arrays without a file between
 * them.
 *
 * A simulated spectral filter at average frequency 10, as test_strarray's
 * storage test builds it: `keys` keys, key r (rank 1..keys) occurring
 * max(1, floor(s / r)) times (Zipf, skew 1) with s chosen so that the mean
 * is 10; each key adds its count to k = 5 counters drawn uniformly with
 * splitmix64 from `seed`; m = ceil(keys k / ln 2) counters (load ln 2:
 * half the counters 0). Counters above 2^32 - 1 are cut there (none are
 * at these sizes). Queries are uniform in [0, m - 1) from another
 * splitmix64 stream: a dependent read may add 1 and stay in range.
 */
#ifndef EBB_BENCH_STRARRAY_COUNTERS_H
#define EBB_BENCH_STRARRAY_COUNTERS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define SA_HASHES 5u
#define SA_MEAN_FREQUENCY 10.0
#define SA_SEED UINT64_C(2026)
#define SA_QUERY_SEED UINT64_C(4242)

static inline uint64_t sa_splitmix64(uint64_t *state)
{
    uint64_t x = (*state += UINT64_C(0x9e3779b97f4a7c15));
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static inline uint64_t sa_zipf_count(double s, uint64_t r)
{
    double c = floor(s / (double)r);
    return c < 1 ? 1u : (uint64_t)c;
}

/* s for a mean count of SA_MEAN_FREQUENCY over `keys` keys (bisection). */
static inline double sa_zipf_scale(uint64_t keys)
{
    double lo = 1, hi = 1e9;
    for (int it = 0; it < 100; it++) {
        double mid = sqrt(lo * hi), total = 0;
        for (uint64_t r = 1; r <= keys; r++) {
            uint64_t c = sa_zipf_count(mid, r);
            if (c == 1) { /* the rest are 1 too */
                total += (double)(keys - r + 1u);
                break;
            }
            total += (double)c;
        }
        if (total / (double)keys < SA_MEAN_FREQUENCY)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* m for `keys` keys. */
static inline uint64_t sa_counter_count(uint64_t keys)
{
    return (uint64_t)ceil((double)keys * SA_HASHES / log(2.0));
}

/* counters[0 .. sa_counter_count(keys) - 1], zeroed by the caller. */
static inline void sa_counters_fill(uint64_t *counters, uint64_t keys)
{
    uint64_t m = sa_counter_count(keys);
    double s = sa_zipf_scale(keys);
    uint64_t rng = SA_SEED;
    for (uint64_t r = 1; r <= keys; r++) {
        uint64_t c = sa_zipf_count(s, r);
        for (unsigned h = 0; h < SA_HASHES; h++)
            counters[sa_splitmix64(&rng) % m] += c;
    }
    for (uint64_t i = 0; i < m; i++)
        if (counters[i] > UINT64_C(0xffffffff))
            counters[i] = UINT64_C(0xffffffff);
}

/* count indices uniform in [0, m - 1). */
static inline void sa_queries_fill(uint64_t *queries, size_t count, uint64_t m)
{
    uint64_t rng = SA_QUERY_SEED;
    for (size_t i = 0; i < count; i++)
        queries[i] = sa_splitmix64(&rng) % (m - 1u);
}

#endif
