/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prototype.h: issue 17's model of the prototype APBF in RedisBloom's
 * unmerged AgePartitionedBF branch (bench/prototype.c), the peer that
 * ebb-bench-prototype times ebb's APBF against.
 */
#ifndef EBB_BENCH_PROTOTYPE_H
#define EBB_BENCH_PROTOTYPE_H

#include "bench_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MurmurHash64A (Austin Appleby's published algorithm) of len bytes. */
uint64_t bench_murmur64a(const void *key, size_t len, uint64_t seed);

/* The model as a bench subject (variant BENCH_PROTOTYPE_MODEL): the shape
 * (k, l, m, g) of p, which ebb_apbf_params_from_kl(k, l, window, p) made
 * for ebb's own filter; requested fp and promise ebb_apbf_fp(k, l). It has
 * one-call add and contains only (no batch calls, like the prototype).
 * False, with a message on stderr, when memory is short. */
bool bench_prototype_create(bench_subject *s, uint64_t window,
                            const ebb_apbf_params *p);

/* ns per key of the model's two MurmurHash64A over `count` keys of the
 * source, median of `runs` (the hashing inside each model call). */
double bench_prototype_hash_ns(bench_key_source *keys, size_t count,
                               unsigned runs);

#endif
