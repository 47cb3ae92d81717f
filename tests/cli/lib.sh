# SPDX-License-Identifier: BSD-2-Clause
# lib.sh: helpers sourced by the cli test scripts (bash).
#
# Every check either passes silently or records a failure with a message;
# `finish` exits 1 when any check failed, so a script can never pass by
# stopping early without saying so.

set -u
set -o pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

# absolute_path <path>: the path made absolute (it need not exist yet), so
# that a script may change directory.
absolute_path() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$PWD" "$1" ;;
    esac
}

# fresh_dir <path>: an empty working directory owned by this script.
fresh_dir() {
    rm -rf -- "$1"
    mkdir -p -- "$1"
}

# same_file <expected> <actual>: byte-identical (cmp names the first
# differing byte on failure).
same_file() {
    cmp -- "$1" "$2"
}

# run_capture <prefix> <stdin> <command...>: runs the command with stdin
# from the given file, stdout to <prefix>.out, stderr to <prefix>.err, and
# its exit status to the variable status.
run_capture() {
    local prefix=$1 input=$2
    shift 2
    "$@" <"$input" >"$prefix.out" 2>"$prefix.err"
    status=$?
}

# stderr_is <file> <expected line>: the file holds exactly that one line.
stderr_is() {
    local file=$1 expected=$2
    local lines
    lines=$(wc -l <"$file")
    if [ "$lines" -ne 1 ] || [ "$(cat -- "$file")" != "$expected" ]; then
        echo "  expected stderr: $expected" >&2
        echo "  actual stderr ($lines lines): $(head -c 400 -- "$file")" >&2
        return 1
    fi
}

# stderr_starts_with <file> <prefix>: exactly one line, starting with prefix.
stderr_starts_with() {
    local file=$1 prefix=$2
    local lines first
    lines=$(wc -l <"$file")
    first=$(head -n 1 -- "$file")
    if [ "$lines" -ne 1 ] || [ "${first#"$prefix"}" = "$first" ]; then
        echo "  expected one stderr line starting: $prefix" >&2
        echo "  actual stderr ($lines lines): $(head -c 400 -- "$file")" >&2
        return 1
    fi
}

# stat_value <stats file> <name>: the value of "name: value" in --stats.
stat_value() {
    awk -v name="$2" 'index($0, name ": ") == 1 {
        print substr($0, length(name) + 3); found = 1 }
        END { if (!found) exit 1 }' "$1"
}

equals() {
    if [ "$1" != "$2" ]; then
        echo "  expected '$2', got '$1'" >&2
        return 1
    fi
}
