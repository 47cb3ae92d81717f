#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# install-deps.sh: makes sure every Debian package the build, the tests, the
# sanitizer and fuzz runs and the benchmarks need is installed.
#
# Silent when everything is present. Run as root, it installs what is missing
# with apt-get; run as another user, it names what is missing and exits 1.
# Debian 12 (bookworm) package names.
set -euo pipefail

required_packages=(
    build-essential    # gcc, make, libc headers
    cmake              # >= 3.25
    pkg-config         # finds libxxhash and cmocka; consumers find ebb.pc
    libxxhash-dev      # XXH3, the one hash of the library
    libcmocka-dev      # unit tests
    libbloom-dev       # benchmark baseline
    libglib2.0-dev     # benchmark: GHashTable, the spectral filters' exact count
    g++                # benchmark: bench/sdsl_peer.cpp (C++, sdsl-lite's API)
    libsdsl-dev        # benchmark: sdsl-lite's dac_vector and vlc_vector (GPL-3,
                       # ebb-bench-sdsl only, linked into nothing else)
    time               # bench/count-bench.sh: /usr/bin/time -v (peak memory)
    clang              # second compiler, sanitizer and fuzz builds
    libclang-rt-14-dev # clang 14's libFuzzer, ASan and UBSan runtimes
    redis-server       # the Redis module's integration tests and benchmark
    redis-tools        # redis-cli, redis-benchmark
    gnuplot-nox        # make experiments: the plots
    fortunes           # make experiments: spectral Fig. 7's real word counts
    groff-base         # groff: tests/cli/manpage.sh renders man/ebb.1 with -ww
    man-db             # lexgrog (the page's NAME line) and `man -l`
    jq                 # tests/cli/timing.sh parses the JSON output
    git                # make dist: the release tarball is git archive's
    dpkg-dev           # make deb: dpkg-buildpackage
    debhelper          # make deb: dh, debian/rules (compat 13)
    lintian            # make deb: the packages' checks
)

is_installed() {
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

missing_packages=()
for package in "${required_packages[@]}"; do
    if ! is_installed "$package"; then
        missing_packages+=("$package")
    fi
done

if ((${#missing_packages[@]} == 0)); then
    exit 0
fi

if ((EUID != 0)); then
    echo "install-deps: missing Debian packages: ${missing_packages[*]}" >&2
    echo "install-deps: install them with:" >&2
    echo "  sudo apt-get install --no-install-recommends ${missing_packages[*]}" >&2
    exit 1
fi

echo "install-deps: installing ${missing_packages[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing_packages[@]}"
