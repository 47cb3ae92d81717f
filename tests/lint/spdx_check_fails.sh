#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# spdx_check_fails.sh SOURCE_DIR WORK_DIR: scripts/check-spdx.sh passes on a
# copy of the tracked tree, and fails, naming the file, once the license line
# is removed from one C source, one shell script and one CMake file (one at a
# time). The copy is not a git tree, so this also covers the tarball path.
set -euo pipefail

src=$1
work=$2
check="$src/scripts/check-spdx.sh"
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

fresh_copy() {
    rm -rf "$work"
    mkdir -p "$work"
    (cd "$src" && git ls-files -z | xargs -0 tar cf -) | tar xf - -C "$work"
}

fresh_copy
if ! out=$(bash "$check" "$work" 2>&1); then
    fail "check fails on an intact copy: $out"
fi

for victim in src/core/hash.c scripts/install-deps.sh src/CMakeLists.txt; do
    fresh_copy
    grep -q 'SPDX-License-Identifier' "$work/$victim" || { fail "$victim has no line to remove"; continue; }
    sed -i '/SPDX-License-Identifier/d' "$work/$victim"
    if out=$(bash "$check" "$work" 2>&1); then
        fail "check passes with the line removed from $victim"
    elif ! grep -q -- "$victim" <<<"$out"; then
        fail "check failed without naming $victim: $out"
    fi
done

rm -rf "$work"
if ((failures > 0)); then
    echo "spdx_check_fails: $failures failures" >&2
    exit 1
fi
echo "spdx_check_fails: the check passes intact and fails on each removed line"
