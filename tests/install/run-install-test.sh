# SPDX-License-Identifier: BSD-2-Clause
    # ldd output is captured first: grep -q closing the pipe early would
    # fail the pipeline under pipefail.
    local loaded
    loaded=$(LD_LIBRARY_PATH=$libdir ldd "$work/consumer-pc-shared")
    [[ $loaded == *"$libdir/libebb.so"* ]] ||
        fail#!/usr/bin/env bash
# run-install-test.sh CMAKE BUILD_DIR CONSUMER_DIR WORK_DIR CC VERSION
#
# Installs BUILD_DIR into WORK_DIR/prefix and proves an outside program can
# use it: through pkg-config (shared, and static with Libs.private /
# Requires.private) and through find_package(ebb) (ebb::ebb and
# ebb::ebb_static, with the version file accepting VERSION and refusing an
# incompatible one). Every consumer runs and must exit 0.
set -euo pipefail

cmake_command=$1
build_dir=$2
consumer_dir=$3
work=$4
cc=$5
version=$6

trap 'echo "install test: failed at line $LINENO: $BASH_COMMAND (logs in $work)" >&2' ERR

prefix=$work/prefix
strict_c=(-std=c11 -Wall -Wextra -Wpedantic -Werror)

fail() {
    echo "install test: $*" >&2
    exit 1
}

install_into_prefix() {
    rm -rf "$work"
    mkdir -p "$work"
    "$cmake_command" --install "$build_dir" --prefix "$prefix" >"$work/install.log"
    pc_file=$(find "$prefix" -name ebb.pc -path '*/pkgconfig/*' -print -quit)
    [[ -n $pc_file ]] || fail "no ebb.pc installed under $prefix"
    export PKG_CONFIG_PATH=$(dirname "$pc_file")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    libdir=$(realpath "$(pkg-config --variable=libdir ebb)")
    [[ -f $libdir/libebb.a ]] || fail "libebb.a missing from $libdir"
    [[ -e $libdir/libebb.so.0 ]] || fail "libebb.so.0 missing from $libdir"
    [[ $(pkg-config --modversion ebb) == "$version" ]] ||
        fail "ebb.pc says version $(pkg-config --modversion ebb), want $version"
}

# ldd's output is captured before matching: `ldd | grep -q` fails under
# pipefail whenever grep exits before ldd has written everything.
loaded_libraries() {
    LD_LIBRARY_PATH=$libdir ldd "$1"
}

# Shared: plain `pkg-config --cflags --libs`, run against the installed .so.
check_pkg_config_shared() {
    # shellcheck disable=SC2046  # pkg-config output is meant to be split
    "$cc" "${strict_c[@]}" "$consumer_dir/consumer.c" -o "$work/consumer-pc-shared" \
        $(pkg-config --cflags --libs ebb)
    LD_LIBRARY_PATH=$libdir "$work/consumer-pc-shared"
    local loaded
    loaded=$(loaded_libraries "$work/consumer-pc-shared")
    [[ $loaded == *"$libdir/libebb.so"* ]] ||
        fail "pkg-config consumer did not load libebb.so from $libdir"
}

# Static: the archive instead of -lebb, plus what `pkg-config --static`
# adds (libxxhash, -lm); proves Requires.private and Libs.private suffice.
check_pkg_config_static() {
    local static_libs
    static_libs=$(pkg-config --static --libs ebb)
    [[ " $static_libs " == *" -lxxhash "* ]] || fail "--static libs lack -lxxhash: $static_libs"
    [[ " $static_libs " == *" -lm "* ]] || fail "--static libs lack -lm: $static_libs"
    static_libs=${static_libs//-lebb/}
    # shellcheck disable=SC2046,SC2086
    "$cc" "${strict_c[@]}" "$consumer_dir/consumer.c" -o "$work/consumer-pc-static" \
        $(pkg-config --cflags ebb) "$libdir/libebb.a" $static_libs
    local loaded
    loaded=$(loaded_libraries "$work/consumer-pc-static")
    [[ $loaded != *libebb* ]] || fail "static consumer still needs a shared libebb"
    "$work/consumer-pc-static"
}

check_find_package() {
    local build=$work/cmake-consumer
    "$cmake_command" -S "$consumer_dir" -B "$build" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$prefix" -DEBB_REQUESTED_VERSION="$version" \
        >"$work/consumer-configure.log"
    "$cmake_command" --build "$build" >"$work/consumer-build.log"
    "$build/consumer_shared"
    "$build/consumer_static"
}

check_incompatible_version_refused() {
    local major=${version%%.*}
    if "$cmake_command" -S "$consumer_dir" -B "$work/cmake-consumer-wrong" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
        -DEBB_REQUESTED_VERSION="$((major + 1)).0" >"$work/wrong-version.log" 2>&1; then
        fail "find_package(ebb $((major + 1)).0) accepted version $version"
    fi
}

install_into_prefix
check_pkg_config_shared
check_pkg_config_static
check_find_package
check_incompatible_version_refused
