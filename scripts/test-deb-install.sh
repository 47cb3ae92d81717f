#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# test-deb-install.sh: installs the packages of `make deb` (build-deb/) with
# apt-get, as a user would, and uses each one from a clean temporary
# directory: the ebb command, its manual page, pkg-config, a C program and a
# CMake project built against libebb-dev, and the Redis module loaded into a
# redis-server on a free loopback port. Every check fails the script with a
# message naming it. At the end, on failure too, the packages are purged so
# the machine is as before. Run as root (make test-install).
set -euo pipefail

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)
packages=(libebb0 libebb-dev ebb redis-ebb)
module=/usr/lib/redis/modules/ebb.so

fail() {
    echo "test-install: FAILED: $*" >&2
    exit 1
}

((EUID == 0)) || fail "run as root: it installs and purges packages"

debs=()
for package in "${packages[@]}"; do
    deb=$(find "$root/build-deb" -maxdepth 1 -name "${package}_*.deb" -print -quit 2>/dev/null)
    [[ -n $deb ]] || fail "no build-deb/${package}_*.deb: run make deb first"
    debs+=("$deb")
done
for package in "${packages[@]}"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null) == installed ]]; then
        fail "$package is installed already; the test purges what it installs," \
             "so it will not start over an installation it did not make" \
             "(apt-get purge ${packages[*]})"
    fi
done

start=$SECONDS
work=$(mktemp -d /tmp/ebb-test-install.XXXXXX)
redis_pid=
installed=0

cleanup() {
    local status=$?
    if [[ -n $redis_pid ]] && kill -0 "$redis_pid" 2>/dev/null; then
        kill "$redis_pid"
        wait "$redis_pid" 2>/dev/null || true
    fi
    if ((installed)); then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${packages[@]}" \
            >"$work/purge.log" 2>&1 ||
            { cat "$work/purge.log" >&2; echo "test-install: purge failed" >&2; status=1; }
    fi
    if ((status == 0)); then
        rm -rf "$work"
        echo "test-install: passed in $((SECONDS - start)) s"
    else
        echo "test-install: logs kept in $work" >&2
    fi
    exit "$status"
}
trap cleanup EXIT
cd "$work"

# Minimal Debian images exclude /usr/share/man from every package
# (path-exclude in /etc/dpkg/dpkg.cfg.d/); the include given after it wins,
# so the manual page is really installed there too. Harmless elsewhere.
installed=1
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Options::=--path-include=/usr/share/man/man1/ebb.1* \
    "${debs[@]}" >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    fail "apt-get install of ${debs[*]}"
fi
echo "test-install: installed ${packages[*]}"

check_dedup() {
    local out
    out=$(printf 'a\nb\na\nc\nb\nd\n' | /usr/bin/ebb dedup --window 100) ||
        fail "ebb dedup exited with $?"
    [[ $out == $'a\nb\nc\nd' ]] ||
        fail "ebb dedup printed '${out//$'\n'/ }', want 'a b c d'"
    echo "test-install: ebb dedup ok"
}

# MANPATH: the installed page, not one a `make install` put in /usr/local.
check_man() {
    command -v man >/dev/null || fail "man not found (apt-get install man-db)"
    local page text
    page=$(MANPATH=/usr/share/man man -w ebb) || fail "man -w ebb: no page"
    [[ $page == /usr/share/man/man1/ebb.1.gz ]] || fail "man ebb finds $page"
    text=$(MANPATH=/usr/share/man MANWIDTH=80 MANPAGER=cat man ebb 2>"$work/man.err") ||
        fail "man ebb exited with $?: $(cat "$work/man.err")"
    [[ $text == *NAME*ebb*SYNOPSIS* && $text == *dedup* ]] ||
        fail "man ebb did not render a page with NAME, SYNOPSIS and dedup"
    [[ ! -s $work/man.err ]] || fail "man ebb warned: $(cat "$work/man.err")"
    echo "test-install: man ebb ok ($(wc -l <<<"$text") lines)"
}

# PKG_CONFIG_LIBDIR: the system's directories only, so a copy in /usr/local
# cannot stand in for the package's.
pkg_config() {
    PKG_CONFIG_LIBDIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/pkgconfig:/usr/share/pkgconfig \
        pkg-config "$@"
}

check_pkg_config() {
    local libs
    libs=$(pkg_config --libs ebb) || fail "pkg-config --libs ebb failed"
    [[ " $libs " == *" -lebb "* ]] || fail "pkg-config --libs ebb printed '$libs'"
    echo "test-install: pkg-config --libs ebb: $libs"
}

check_c_program() {
    cat >prog.c <<'EOF'
#include <stdio.h>
#include <string.h>

#include <ebb/ebb.h>

int main(void)
{
    ebb_apbf_params params;
    ebb_apbf *filter = NULL;
    if (ebb_version_number() != EBB_VERSION_NUMBER ||
        ebb_apbf_choose(1000, 0.01, 0, &params) != EBB_OK ||
        ebb_apbf_create(&params, 7, &filter) != EBB_OK) {
        return 2;
    }
    ebb_apbf_add(filter, "packaged", strlen("packaged"));
    int seen = ebb_apbf_contains(filter, "packaged", strlen("packaged"));
    ebb_apbf_destroy(filter);
    printf("%s %d\n", ebb_version_string(), seen);
    return seen ? 0 : 1;
}
EOF
    # shellcheck disable=SC2046  # pkg-config output is meant to be split
    cc -std=c11 -Wall -Wextra -Werror prog.c -o prog $(pkg_config --cflags --libs ebb) ||
        fail "prog.c did not compile against the installed headers and library"
    local out libs
    out=$(./prog) || fail "prog exited with $?"
    [[ $out == "$(pkg_config --modversion ebb) 1" ]] || fail "prog printed '$out'"
    libs=$(ldd ./prog)
    [[ $libs == *"libebb.so.0 => /usr/lib/"* || $libs == *"libebb.so.0 => /lib/"* ]] ||
        fail "prog did not load the packaged libebb.so.0: $libs"
    echo "test-install: C program with pkg-config ok"
}

# The consumer project of the CMake install test (tests/install), pointed at
# the package's CMake files.
check_cmake_consumer() {
    local config_dir
    config_dir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/cmake/ebb
    cmake -S "$root/tests/install/consumer" -B consumer -Debb_DIR="$config_dir" \
        -DEBB_REQUESTED_VERSION="$(pkg_config --modversion ebb)" >consumer.log 2>&1 ||
        { cat consumer.log >&2; fail "find_package(ebb) project did not configure"; }
    cmake --build consumer >>consumer.log 2>&1 ||
        { cat consumer.log >&2; fail "find_package(ebb) project did not build"; }
    consumer/consumer_shared || fail "consumer_shared exited with $?"
    consumer/consumer_static || fail "consumer_static exited with $?"
    echo "test-install: find_package(ebb) consumer ok"
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
    local port
    for _ in $(seq 1 100); do
        port=$((20000 + RANDOM % 10000))
        if ! port_in_use "$port"; then
            echo "$port"
            return 0
        fi
    done
    fail "no free loopback port found"
}

# rcli <command...>: the reply as redis-cli prints it to a pipe.
rcli() {
    redis-cli -h 127.0.0.1 -p "$port" "$@"
}

expect_reply() {
    local want=$1 got
    shift
    got=$(rcli "$@") || fail "redis-cli $* failed"
    [[ $got == "$want" ]] || fail "$* replied '$got', want '$want'"
}

check_redis_module() {
    [[ -f $module ]] || fail "$module not installed"
    port=$(free_port)
    redis-server --port "$port" --bind 127.0.0.1 --daemonize no --save '' \
        --appendonly no --dir "$work" --loadmodule "$module" >redis.log 2>&1 &
    redis_pid=$!
    for _ in $(seq 1 50); do
        [[ $(rcli ping 2>/dev/null) == PONG ]] && break
        kill -0 "$redis_pid" 2>/dev/null ||
            { cat redis.log >&2; fail "redis-server with $module exited"; }
        sleep 0.1
    done
    expect_reply OK APBF.RESERVE seen 1000
    expect_reply 1 APBF.ADD seen packaged
    expect_reply 0 APBF.ADD seen packaged
    expect_reply 1 APBF.EXISTS seen packaged
    rcli shutdown nosave >/dev/null 2>&1 || true
    wait "$redis_pid" || true
    redis_pid=
    echo "test-install: redis-server --loadmodule $module ok (port $port)"
}

check_dedup
check_man
check_pkg_config
check_c_program
check_cmake_consumer
check_redis_module
