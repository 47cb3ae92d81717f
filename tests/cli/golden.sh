#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# golden.sh EBB GOLDEN_DIR WORK_DIR
#
# ebb dedup on small inputs whose exact output is committed under golden/:
# CRLF, empty lines, embedded NUL bytes, a last line without '\n', several
# files with '-' among them, --invert. Plus generated inputs with very long
# lines. The inputs hold a handful of keys in a 1,000,000-line window, so
# the answer is exact (a false positive is far below one in a billion), for
# a plain and for a blocked (--blocked) filter alike.

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

# Empty blocked filters, saved once: choosing a blocked shape takes the
# library a noticeable time, loading a state none.
"$EBB" dedup --window 1e5 --blocked --state "$WORK/empty-line.state" </dev/null
check "empty blocked state (512, 8) created" test -s "$WORK/empty-line.state"
"$EBB" dedup --window 1e5 --block-bits 64 --block-hashes 4 \
    --state "$WORK/empty-word.state" </dev/null
check "empty blocked state (64, 4) created" test -s "$WORK/empty-word.state"

# blocked_case <name> <expected file> <stdin file> line|word <arguments...>:
# golden_case on a fresh copy of an empty blocked filter.
blocked_case() {
    local name=$1 expected=$2 input=$3 kind=$4
    shift 4
    cp "$WORK/empty-$kind.state" "$WORK/$name.state"
    golden_case "$name" "$expected" "$input" --state "$WORK/$name.state" "$@"
}

# Each single-file case through stdin and as a file operand, plain and
# inverted when an inverted expectation exists; and with blocked filters.
for input in "$GOLDEN"/*.in; do
    name=$(basename "$input" .in)
    expected="$GOLDEN/$name.out"
    [ -f "$expected" ] || continue
    golden_case "$name-stdin" "$expected" "$input"
    golden_case "$name-file" "$expected" /dev/null "$input"
    if [ -f "$GOLDEN/$name.invert.out" ]; then
        golden_case "$name-invert" "$GOLDEN/$name.invert.out" "$input" \
            --invert
        blocked_case "$name-blocked-invert" "$GOLDEN/$name.invert.out" \
            "$input" line --invert
    fi
    blocked_case "$name-blocked" "$expected" "$input" line
    blocked_case "$name-blocked-word" "$expected" /dev/null word "$input"
done

# Several files, with standard input in the middle; the window spans them.
golden_case multi "$GOLDEN/multi.out" "$GOLDEN/multi-stdin.in" \
    "$GOLDEN/multi-1.in" - "$GOLDEN/multi-2.in"
golden_case multi-invert "$GOLDEN/multi.invert.out" "$GOLDEN/multi-stdin.in" \
    --invert "$GOLDEN/multi-1.in" - "$GOLDEN/multi-2.in"
blocked_case multi-blocked "$GOLDEN/multi.out" "$GOLDEN/multi-stdin.in" \
    line "$GOLDEN/multi-1.in" - "$GOLDEN/multi-2.in"
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
blocked_case long-blocked "$WORK/long.expected" "$WORK/long.in" line

# Batches: 1000 lines, every one repeated right after itself (inside the same
# batch), every fifth one again 300 lines later (across batches): exactly
# the first occurrences are printed, plain and blocked.
awk 'BEGIN {
    for (i = 0; i < 1000; i++) {
        printf "line %d\n", i; printf "line %d\n", i
        if (i >= 300 && i % 5 == 0) printf "line %d\n", i - 300
    }
}' >"$WORK/batch.in"
awk '!seen[$0]++' "$WORK/batch.in" >"$WORK/batch.expected"
awk 'seen[$0]++' "$WORK/batch.in" >"$WORK/batch.invert.expected"
check "batch input is as intended" equals "$(wc -l <"$WORK/batch.in")" 2140
golden_case batch "$WORK/batch.expected" "$WORK/batch.in"
golden_case batch-invert "$WORK/batch.invert.expected" "$WORK/batch.in" --invert
blocked_case batch-blocked "$WORK/batch.expected" "$WORK/batch.in" word

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
# Seven lines, then the layout's four: the default window and fp (10^6
# at 1%) are bit-sliced (ebb_apbf_preferred_layout).
check "stats: seven lines and the layout's four" \
    equals "$(wc -l <"$WORK/stats.err")" 11
check "stats: the layout lines" \
    equals "$(tail -n 4 "$WORK/stats.err" | cut -d: -f1 | tr '\n' ,)" \
        "layout,cell bits,padding bits per cell,padding bytes,"
check "stats: the default layout is sliced" \
    equals "$(stat_value "$WORK/stats.err" layout)" sliced
run_capture "$WORK/stats-invert" "$GOLDEN/basic.in" "$EBB" dedup --stats \
    --invert --fp 0.001
check "stats --invert: lines written counts the printed duplicates" \
    equals "$(stat_value "$WORK/stats-invert.err" 'lines written')" 3
check "stats: fp is the given target" \
    equals "$(stat_value "$WORK/stats-invert.err" fp)" 0.001

# A blocked filter adds its block shape, after the seven lines.
run_capture "$WORK/stats-blocked" "$GOLDEN/basic.in" "$EBB" dedup --stats \
    --blocked
check "stats --blocked: exit 0" equals "$status" 0
check "stats --blocked: output unchanged" \
    same_file "$GOLDEN/basic.out" "$WORK/stats-blocked.out"
check "stats --blocked: nine lines" \
    equals "$(wc -l <"$WORK/stats-blocked.err")" 9
check "stats --blocked: the seven lines first" \
    equals "$(head -n 7 "$WORK/stats-blocked.err" | cut -d: -f1 | tr '\n' ,)" \
        "lines read,lines written,k,l,window,memory bytes,fp,"
check "stats --blocked: block bits 512" \
    equals "$(sed -n 8p "$WORK/stats-blocked.err")" "block bits: 512"
# b is the chooser's (ebb params --blocked shows the same shape).
chosen_b=$("$EBB" params --window 1e6 --fp 0.01 --blocked |
    awk '/^block hashes:/ { print $3 }')
check "stats --blocked: block hashes as ebb params --blocked chooses" \
    equals "$(sed -n 9p "$WORK/stats-blocked.err")" "block hashes: $chosen_b"
run_capture "$WORK/stats-word" "$GOLDEN/basic.in" "$EBB" dedup --stats \
    --block-hashes 2 --block-bits 64
check "stats --block-bits 64 --block-hashes 2: exit 0" equals "$status" 0
check "stats: block bits 64" \
    equals "$(stat_value "$WORK/stats-word.err" 'block bits')" 64
check "stats: block hashes 2" \
    equals "$(stat_value "$WORK/stats-word.err" 'block hashes')" 2
check "stats: a plain filter prints no block lines" \
    test -z "$(grep '^block' "$WORK/stats.err")"

finish
