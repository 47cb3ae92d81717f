/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zipf-lines.c: `ebb-bench-zipf LINES RANKS SKEW SEED` writes LINES lines
 * "key<rank>" on stdout, the ranks 1..RANKS drawn independently with
 * P(rank r) proportional to 1 / r^SKEW. The same arguments give the same
 * bytes on every machine: the draws come from splitmix64 (integer
 * arithmetic), each turned into a uniform double of 53 bits and looked up
 * by bisection in the cumulative weights, summed in rank order.
 *
 * bench/count-bench.sh feeds these lines to `ebb count` and to
 * `sort | uniq -c`.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static int parse_u64(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-')
        return 0;
    *out = value;
    return 1;
}

/* The least rank whose cumulative weight reaches u (cdf[r - 1] holds the
 * weights of ranks 1..r). */
static uint64_t rank_of(const double *cdf, uint64_t ranks, double u)
{
    uint64_t lo = 0, hi = ranks - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + 1;
}

int main(int argc, char **argv)
{
    uint64_t lines, ranks, seed;
    char *end;
    double skew = argc == 5 ? strtod(argv[3], &end) : 0.0;
    if (argc != 5 || !parse_u64(argv[1], &lines) || !parse_u64(argv[2], &ranks) ||
        ranks == 0 || ranks > (UINT64_C(1) << 32) || *end != '\0' || !(skew >= 0.0) ||
        !parse_u64(argv[4], &seed)) {
        fprintf(stderr, "usage: ebb-bench-zipf LINES RANKS SKEW SEED\n");
        return 2;
    }
    double *cdf = malloc((size_t)ranks * sizeof *cdf);
    if (cdf == NULL) {
        fprintf(stderr, "ebb-bench-zipf: out of memory\n");
        return 1;
    }
    double total = 0.0;
    for (uint64_t r = 1; r <= ranks; r++) {
        total += pow((double)r, -skew);
        cdf[r - 1] = total;
    }
    static char buffer[1 << 20];
    setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
    uint64_t state = seed;
    for (uint64_t i = 0; i < lines; i++) {
        double u = (double)(splitmix64(&state) >> 11) * 0x1p-53 * total;
        printf("key%llu\n", (unsigned long long)rank_of(cdf, ranks, u));
    }
    free(cdf);
    if (fflush(stdout) != 0) {
        perror("ebb-bench-zipf: stdout");
        return 1;
    }
    return 0;
}
