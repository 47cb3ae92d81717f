# SPDX-License-Identifier: BSD-2-Clause
# ebb: build, test, run, benchmark, install.
#
#   make build    configure and build (gcc, warnings are errors) in build/
#   make test     everything CI checks: the full suite, then the unit layer
#                 again on the library as make bench builds it (-march=native:
#                 its AVX2 block test and write, and ebb-bench-bound's answer
#                 checks), then ASan+UBSan
#                 (clang) on the unit, cli and fuzz layers, then the libFuzzer
#                 target for FUZZ_SECONDS on a copy of the seed corpus, then
#                 make test-install
#   make run      build, then a sample session of the ebb command
#   make bench    Release -O3 -march=native build in build-bench/, run it,
#                 then ebb-bench-sdsl (the string-array index beside
#                 sdsl-lite's dac_vector and vlc_vector: bench/sdsl_peer.cpp,
#                 a GPL-3 peer, benchmark only), then ebb-bench-bound (the
#                 cheapest blocked query we could write beside libbloom:
#                 bench/bound.c), then ebb-bench-prototype (issue 17: the
#                 APBF beside a model of RedisBloom's prototype APBF,
#                 bench/prototype.c; ~8 min),
#                 then the Redis module under redis-benchmark
#   make experiments  reproduce the papers' tables and figures into
#                 docs/results/ (CSV, PNG, markdown); minutes, not in CI
#   make install  build, then install into PREFIX (default /usr/local)
#   make dist     the release tarball build-dist/ebb-VERSION.tar.gz: git
#                 archive of the tracked files as the work tree has them
#   make deb      the Debian packages, built from that tarball in build-deb/
#                 and checked with lintian (docs/packaging.md)
#   make test-install  make deb, then (as root) install the packages with
#                 apt-get, use each one, and purge them again
#   make clean    remove every build directory
#
# Each step stops make on failure (bash -e, pipefail).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

JOBS ?= 2
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 60
# A fixed seed makes a CI run reproducible; FUZZ_SEED=0 lets libFuzzer pick.
FUZZ_SEED ?= 1

BUILD_DIR := build
ASAN_DIR := build-asan
FUZZ_DIR := build-fuzz
BENCH_DIR := build-bench
DEB_DIR := build-deb
DIST_DIR := build-dist
NATIVE_DIR := build-native

FUZZ_CORPUS := tests/fuzz/corpus
FUZZ_REGRESSIONS := tests/fuzz/regressions
FUZZ_WORK_CORPUS := $(FUZZ_DIR)/corpus
FUZZ_ARTIFACTS := $(FUZZ_DIR)/artifacts

# Sanitizer reports must fail the test that triggers them.
SANITIZER_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
                 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.DEFAULT_GOAL := build
.PHONY: all deps build test test-native test-asan test-fuzz run bench experiments install clean \
        dist deb test-install

all: build

deps:
	bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEBB_WERROR=ON
	cmake --build $(BUILD_DIR) -j$(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)
	$(MAKE) --no-print-directory test-native
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory test-fuzz
	$(MAKE) --no-print-directory test-install

# The library compiled for this machine, as make bench compiles it: the code
# behind #if __AVX2__ (the B = 512, b = 8 block test and write) and whatever
# else -march=native turns on runs only here, under the exact unit tests
# (batch against single calls, fast paths against the general one, snapshots
# byte for byte), and ebb-bench-bound's AVX2 code, built under the strict
# warnings and run for its answer checks (it exits 1 on a wrong answer).
test-native: deps
	cmake -S . -B $(NATIVE_DIR) -DCMAKE_BUILD_TYPE=Release -DEBB_NATIVE=ON -DEBB_WERROR=ON
	cmake --build $(NATIVE_DIR) -j$(JOBS) --target ebb_tests_unit ebb_bench_bound
	ctest --test-dir $(NATIVE_DIR) --output-on-failure -j$(JOBS) -L unit
	$(NATIVE_DIR)/bench/ebb-bench-bound

# Debug keeps assert() on; -O1 keeps sanitized code fast enough.
test-asan: deps
	cmake -S . -B $(ASAN_DIR) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS=-O1 -DEBB_SANITIZE=ON -DEBB_WERROR=ON
	cmake --build $(ASAN_DIR) -j$(JOBS)
	$(SANITIZER_ENV) ctest --test-dir $(ASAN_DIR) --output-on-failure -j$(JOBS) \
	    -L 'unit|cli|fuzz'

# The fuzzer only ever writes into a copy of the committed seeds and
# regressions. Its log stays in build-fuzz/fuzz.log; its end is shown when it
# fails (the crashing input, the violated property).
test-fuzz: deps
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS=-O1 -DEBB_FUZZ=ON -DEBB_WERROR=ON
	cmake --build $(FUZZ_DIR) -j$(JOBS) \
	    --target fuzz_snapshot fuzz_snapshot_replay ebb_make_corpus
	$(SANITIZER_ENV) ctest --test-dir $(FUZZ_DIR) --output-on-failure -L fuzz
	rm -rf $(FUZZ_WORK_CORPUS) $(FUZZ_ARTIFACTS)
	mkdir -p $(FUZZ_WORK_CORPUS) $(FUZZ_ARTIFACTS)
	cp -R $(FUZZ_CORPUS)/. $(FUZZ_REGRESSIONS)/. $(FUZZ_WORK_CORPUS)/
	@echo "fuzzing the snapshot loader for $(FUZZ_SECONDS) s"
	$(SANITIZER_ENV) $(FUZZ_DIR)/tests/fuzz/fuzz_snapshot \
	    -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -timeout=10 -rss_limit_mb=2048 \
	    -dict=tests/fuzz/snapshot.dict -artifact_prefix=$(FUZZ_ARTIFACTS)/ \
	    -print_final_stats=1 $(FUZZ_WORK_CORPUS) >$(FUZZ_DIR)/fuzz.log 2>&1 \
	    || { tail -n 60 $(FUZZ_DIR)/fuzz.log; echo "fuzzing failed: see $(FUZZ_ARTIFACTS)"; exit 1; }
	@grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' $(FUZZ_DIR)/fuzz.log

run: build
	bash scripts/run-sample.sh $(BUILD_DIR)/cli/ebb

bench: deps
	cmake -S . -B $(BENCH_DIR) -DCMAKE_BUILD_TYPE=Release -DEBB_NATIVE=ON
	cmake --build $(BENCH_DIR) -j$(JOBS) --target ebb_bench ebb_bench_bound ebb_bench_zipf \
	    ebb_bench_prototype ebb
	$(BENCH_DIR)/bench/ebb-bench
	if [ -x $(BENCH_DIR)/bench/ebb-bench-sdsl ]; then $(BENCH_DIR)/bench/ebb-bench-sdsl; \
	else echo "bench: ebb-bench-sdsl not built (libsdsl-dev or g++ missing): no sdsl-lite rows"; fi
	$(BENCH_DIR)/bench/ebb-bench-bound
	$(BENCH_DIR)/bench/ebb-bench-prototype
	bash bench/count-bench.sh $(BENCH_DIR)
	if [ -f bench/redis-bench.sh ]; then \
	    cmake --build $(BENCH_DIR) -j$(JOBS) --target ebb_redis_module && \
	    bash bench/redis-bench.sh $(BENCH_DIR); fi

experiments: build
	bash experiments/run.sh $(BUILD_DIR)
	bash experiments/tlbf/run.sh $(BUILD_DIR)
	bash experiments/stable/run.sh $(BUILD_DIR)
	bash experiments/timing/run.sh $(BUILD_DIR)
	bash experiments/spectral/run.sh $(BUILD_DIR)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

dist:
	bash scripts/dist.sh $(DIST_DIR)

deb: deps
	JOBS=$(JOBS) bash scripts/deb.sh

test-install: deb
	bash scripts/test-deb-install.sh

clean:
	rm -rf $(BUILD_DIR) $(NATIVE_DIR) $(ASAN_DIR) $(FUZZ_DIR) $(BENCH_DIR) $(DEB_DIR) $(DIST_DIR)
