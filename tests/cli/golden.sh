#!/usr/bin/env bash
# golden.sh EBB GOLDEN_DIR WORK_DIR
#
# ebb dedup on small inputs whose exact output is committed under golden/:
# CRLF, empty lines, embedded NUL bytes, a last line without '\n', several
# files with '-' among them, --invert. Plus generated inputs with very long
# lines. The inputs hold a handful of keys in a 1,000,000-line window, so
# the answer is exact (a false positive is far below one in a billion).

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GOLDEN=$(absolute_path "$2")
WORK=$(absolute_path "$3")
fresh_dir "$WORK"

# golden_case <name> <expected file> <stdin file> <ebb arguments...>
golden_case() {
    local name=$1 expected=$2 input=$3
    shift 3
    run_capture "$WORK/$name" "$input" "$EBB" dedup "$@"
    check "$name: exit status 0 (got $status)" equals "$status" 0
    check "$name: output matches $expected" \
        same_file "$expected" "$WORK/$name.out"
    check "$name: nothing on stderr" test ! -s "$WORK/$name.err"
}

# Each single-file case through stdin and as a file operand, plain and
# inverted when an inverted expectation exists.
for input in "$GOLDEN"/*.in; do
    name=$(basename "$input" .in)
    expected="$GOLDEN/$name.out"
    [ -f "$expected" ] || continue
    golden_case "$name-stdin" "$expected" "$input"
    golden_case "$name-file" "$expected" /dev/null "$input"
    if [ -f "$GOLDEN/$name.invert.out" ]; then
        golden_case "$name-invert" "$GOLDEN/$name.invert.out" "$input" \
            --invert
    fi
done

# Several files, with standard input in the middle; the window spans them.
golden_case multi "$GOLDEN/multi.out" "$GOLDEN/multi-stdin.in" \
    "$GOLDEN/multi-1.in" - "$GOLDEN/multi-2.in"
golden_case multi-invert "$GOLDEN/multi.invert.out" "$GOLDEN/multi-stdin.in" \
    --invert "$GOLDEN/multi-1.in" - "$GOLDEN/multi-2.in"
# Options after operands are still options.
golden_case multi-late-option "$GOLDEN/multi.invert.out" \
    "$GOLDEN/multi-stdin.in" "$GOLDEN/multi-1.in" - "$GOLDEN/multi-2.in" \
    --invert
# A file ending without '\n' is followed directly by the next file's first
# line: each line is written back exactly as read (as cat would).
golden_case joined "$GOLDEN/joined.out" /dev/null \
    "$GOLDEN/joined-1.in" "$GOLDEN/joined-2.in"
# "--" ends the options: a file may be called "--invert".
cp -- "$GOLDEN/basic.in" "$WORK/--invert"
cd "$WORK" || exit 1
golden_case dashdash "$GOLDEN/basic.out" /dev/null -- --invert
cd - >/dev/null || exit 1

# Very long lines: two 1 MiB lines differing only in their last byte, a
# 3 MiB line, repeats of each, the last one without '\n'.
long_a="$WORK/long-a"
long_b="$WORK/long-b"
long_c="$WORK/long-c"
head -c 1048576 /dev/zero | tr '\0' 'x' >"$long_a"
{ head -c 1048575 /dev/zero | tr '\0' 'x'; printf 'y'; } >"$long_b"
head -c 3145728 /dev/zero | tr '\0' 'z' >"$long_c"
{
    cat "$long_a"; echo
    cat "$long_b"; echo
    cat "$long_a"; echo
    cat "$long_c"; echo
    echo short
    cat "$long_b"
} >"$WORK/long.in"
{
    cat "$long_a"; echo
    cat "$long_b"; echo
    cat "$long_c"; echo
    echo short
} >"$WORK/long.expected"
{
    cat "$long_a"; echo
    cat "$long_b"
} >"$WORK/long.invert.expected"
golden_case long "$WORK/long.expected" "$WORK/long.in"
golden_case long-invert "$WORK/long.invert.expected" "$WORK/long.in" --invert

# --stats counts lines read and written on a known input.
run_capture "$WORK/stats" "$GOLDEN/basic.in" "$EBB" dedup --stats
check "stats: exit 0" equals "$status" 0
check "stats: output unchanged by --stats" \
    same_file "$GOLDEN/basic.out" "$WORK/stats.out"
check "stats: lines read" equals "$(stat_value "$WORK/stats.err" 'lines read')" 8
check "stats: lines written" \
    equals "$(stat_value "$WORK/stats.err" 'lines written')" 5
check "stats: fp is the default target" \
    equals "$(stat_value "$WORK/stats.err" fp)" 0.01
check "stats: seven lines" equals "$(wc -l <"$WORK/stats.err")" 7
run_capture "$WORK/stats-invert" "$GOLDEN/basic.in" "$EBB" dedup --stats \
    --invert --fp 0.001
check "stats --invert: lines written counts the printed duplicates" \
    equals "$(stat_value "$WORK/stats-invert.err" 'lines written')" 3
check "stats: fp is the given target" \
    equals "$(stat_value "$WORK/stats-invert.err" fp)" 0.001

finish
