/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sdsl_peer.cpp: `ebb-bench-sdsl`, the string-array index (issue 15) beside
 * sdsl-lite's static compressed integer arrays, in one process on the same
 * counters and the same random reads. make bench runs it after ebb-bench.
 *
 * sdsl-lite (Debian: libsdsl-dev) is GPL-3: this program is a benchmark
 * tool only, built when the library is found (bench/CMakeLists.txt),
 * never installed, and nothing of it is linked into libebb, ebb or the
 * Redis module. Only this file's own code is BSD-2-Clause.
 *
 * Subjects, all built from the counters of strarray_counters.h (a
 * simulated spectral filter at average frequency 10, m = 1,442,696):
 *   - a 32-bit fixed-width counter read (ebb_cells_get);
 *   - ebb_strarray_get in GAMMA, DELTA and STEPS at the defaults (block
 *     512, sub 16, slack 64);
 *   - sdsl::dac_vector<> (directly addressable codes, 4-bit chunks, rank
 *     over the overflow bits);
 *   - sdsl::vlc_vector<> (Elias delta, a pointer every 128 values) and
 *     vlc_vector<coder::elias_gamma, 16> (a pointer every 16 values, as
 *     ebb's sub offsets).
 * The sdsl arrays are static: built once from the values (an update means
 * a rebuild, whose time is the build column). Space is sdsl::size_in_bytes
 * and ebb_strarray_bytes. Reads: 2^21 independent (summed) and 2^19
 * dependent (the next index adds the value's low bit), median of 3 runs,
 * every value checked. Target (issue 15): ebb's lookup within 2x of
 * dac_vector's access, both ways. Exit status 1 when a value read is
 * wrong.
 */
extern "C" {
#include "core/cells.h"
#include "core/strarray.h"
#include "strarray_counters.h"
}

#include <sdsl/coder_elias_gamma.hpp>
#include <sdsl/dac_vector.hpp>
#include <sdsl/vlc_vector.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr uint64_t keys = 200000;
constexpr size_t independent_reads = size_t(1) << 21;
constexpr size_t dependent_reads = size_t(1) << 19;
constexpr int runs = 3;
constexpr double target = 2.0;

double now_ns()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::nano>(
               clock::now().time_since_epoch())
        .count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct result {
    std::string name;
    double bits_per_counter;
    double build_ns;       // per counter, median of the runs
    double independent_ns; // per read
    double dependent_ns;
    bool correct;
};

// Times the reads of one subject; `get` is a template argument so that
// each loop is compiled for its subject.
template <class Get>
void time_reads(const Get &get, const std::vector<uint64_t> &queries,
                const std::vector<uint64_t> &counters, result &out)
{
    std::vector<double> ind, dep;
    out.correct = true;
    for (int run = 0; run < runs; run++) {
        uint64_t sum = 0;
        double start = now_ns();
        for (size_t q = 0; q < independent_reads; q++)
            sum += get(queries[q]);
        ind.push_back((now_ns() - start) / independent_reads);
        uint64_t v = 0;
        start = now_ns();
        for (size_t q = 0; q < dependent_reads; q++)
            v = get(queries[q] + (v & 1u));
        dep.push_back((now_ns() - start) / dependent_reads);
        if (run == 0) {
            uint64_t want = 0, w = 0;
            for (size_t q = 0; q < independent_reads; q++)
                want += counters[queries[q]];
            for (size_t q = 0; q < dependent_reads; q++)
                w = counters[queries[q] + (w & 1u)];
            out.correct = sum == want && v == w;
        }
    }
    out.independent_ns = median(ind);
    out.dependent_ns = median(dep);
}

template <class Vector>
result sdsl_subject(const char *name, const std::vector<uint64_t> &counters,
                    const std::vector<uint64_t> &queries)
{
    result r;
    r.name = name;
    std::vector<double> build;
    Vector v;
    for (int run = 0; run < runs; run++) {
        double start = now_ns();
        v = Vector(counters);
        build.push_back((now_ns() - start) / double(counters.size()));
    }
    r.build_ns = median(build);
    r.bits_per_counter =
        double(sdsl::size_in_bytes(v)) * 8.0 / double(counters.size());
    time_reads([&v](uint64_t i) -> uint64_t { return v[i]; }, queries,
               counters, r);
    return r;
}

result ebb_subject(ebb_code code, const std::vector<uint64_t> &counters,
                   const std::vector<uint64_t> &queries)
{
    result r;
    r.name = std::string("ebb ") + ebb_code_name(code);
    ebb_strarray_options o;
    ebb_strarray a;
    ebb_strarray_options_init(code, 0, &o);
    if (ebb_strarray_init(&a, counters.size(), &o) != EBB_OK) {
        std::fprintf(stderr, "ebb-bench-sdsl: ebb_strarray_init failed\n");
        std::exit(1);
    }
    std::vector<double> build;
    for (int run = 0; run < runs; run++) {
        double start = now_ns();
        if (ebb_strarray_load(&a, counters.data()) != EBB_OK) {
            std::fprintf(stderr, "ebb-bench-sdsl: ebb_strarray_load failed\n");
            std::exit(1);
        }
        build.push_back((now_ns() - start) / double(counters.size()));
    }
    r.build_ns = median(build);
    r.bits_per_counter =
        double(ebb_strarray_bytes(&a)) * 8.0 / double(counters.size());
    const ebb_strarray *p = &a;
    time_reads([p](uint64_t i) -> uint64_t { return ebb_strarray_get(p, i); },
               queries, counters, r);
    ebb_strarray_free(&a);
    return r;
}

result fixed_subject(const std::vector<uint64_t> &counters,
                     const std::vector<uint64_t> &queries)
{
    result r;
    r.name = "fixed 32-bit read";
    ebb_cells cells;
    if (ebb_cells_init(&cells, counters.size(), 32) != EBB_OK) {
        std::fprintf(stderr, "ebb-bench-sdsl: ebb_cells_init failed\n");
        std::exit(1);
    }
    double start = now_ns();
    for (size_t i = 0; i < counters.size(); i++)
        ebb_cells_set(&cells, i, uint32_t(counters[i]));
    r.build_ns = (now_ns() - start) / double(counters.size());
    r.bits_per_counter = 32.0;
    const ebb_cells *p = &cells;
    time_reads([p](uint64_t i) -> uint64_t { return ebb_cells_get(p, i); },
               queries, counters, r);
    ebb_cells_free(&cells);
    return r;
}

} // namespace

int main()
{
    uint64_t m = sa_counter_count(keys);
    std::vector<uint64_t> counters(m, 0), queries(independent_reads);
    sa_counters_fill(counters.data(), keys);
    sa_queries_fill(queries.data(), queries.size(), m);

    std::vector<result> results;
    results.push_back(fixed_subject(counters, queries));
    static const ebb_code codes[] = {EBB_CODE_GAMMA, EBB_CODE_DELTA,
                                     EBB_CODE_STEPS};
    for (ebb_code c : codes)
        results.push_back(ebb_subject(c, counters, queries));
    results.push_back(
        sdsl_subject<sdsl::dac_vector<>>("sdsl dac_vector<4>", counters, queries));
    results.push_back(
        sdsl_subject<sdsl::vlc_vector<>>("sdsl vlc_vector delta/128", counters,
                                         queries));
    results.push_back(
        sdsl_subject<sdsl::vlc_vector<sdsl::coder::elias_gamma, 16>>(
            "sdsl vlc_vector gamma/16", counters, queries));

    std::printf("\nissue 15: the string-array index beside sdsl-lite (GPL-3, "
                "a benchmark-only peer), the same %llu counters\n(%llu keys, "
                "Zipf counts of mean %.0f, k = %u) and the same random reads; "
                "bench/sdsl_peer.cpp\n",
                (unsigned long long)m, (unsigned long long)keys,
                SA_MEAN_FREQUENCY, SA_HASHES);
    std::printf("   %-26s %12s %12s %12s %12s\n", "array", "bits/counter",
                "build ns/c", "indep. ns", "dep. ns");
    bool correct = true;
    const result *dac = nullptr;
    for (const result &r : results) {
        std::printf("   %-26s %12.3f %12.2f %12.2f %12.2f\n", r.name.c_str(),
                    r.bits_per_counter, r.build_ns, r.independent_ns,
                    r.dependent_ns);
        if (!r.correct) {
            std::printf("  check FAILED: %s read values other than the "
                        "counters\n",
                        r.name.c_str());
            correct = false;
        }
        if (r.name == "sdsl dac_vector<4>")
            dac = &r;
    }
    for (const result &r : results) {
        if (r.name.rfind("ebb ", 0) != 0)
            continue;
        double ri = r.independent_ns / dac->independent_ns;
        double rd = r.dependent_ns / dac->dependent_ns;
        std::printf("  issue 15 %-5s lookup / sdsl dac_vector access, "
                    "independent %6.2fx (<= %.2fx)  target met: %s\n",
                    r.name.c_str() + 4, ri, target, ri <= target ? "yes" : "no");
        std::printf("  issue 15 %-5s lookup / sdsl dac_vector access, "
                    "dependent   %6.2fx (<= %.2fx)  target met: %s\n",
                    r.name.c_str() + 4, rd, target, rd <= target ? "yes" : "no");
    }
    std::printf(correct ? "all sdsl peer checks passed (every value read "
                          "equals its counter)\n"
                        : "sdsl peer correctness check(s) FAILED\n");
    return correct ? 0 : 1;
}
