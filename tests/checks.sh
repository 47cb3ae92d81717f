# SPDX-License-Identifier: BSD-2-Clause
# checks.sh: the check counter shared by the bash test layers (tests/cli,
# tests/redis). Sourced, not run.
#
# Every check either passes silently or records a failure with a message;
# `finish` exits 1 when any check failed, or when none ran, so a script can
# never pass by stopping early without saying so.

failures=0
checks=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# check <description> <command...>: the command must succeed.
check() {
    local description=$1
    shift
    checks=$((checks + 1))
    if ! "$@"; then
        fail "$description"
        return 1
    fi
    return 0
}

# in_range <value> <low> <high>: value is a number with low < value <= high.
# An empty or non-numeric value fails (awk would compare it as a string,
# and "" <= 0.25 holds).
in_range() {
    awk -v v="$1" -v low="$2" -v high="$3" 'BEGIN {
        if (v !~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/)
            exit 1
        exit !(v + 0 > low + 0 && v + 0 <= high + 0)
    }'
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$failures of $checks checks failed" >&2
        exit 1
    fi
    if [ "$checks" -eq 0 ]; then
        echo "no checks ran" >&2
        exit 1
    fi
    echo "all $checks checks passed"
    exit 0
}
