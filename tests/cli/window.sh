#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# window.sh EBB GEN_STREAM EXACT_WINDOW WORK_DIR
#
# The sliding-window property on millions of lines, against an exact
# oracle (exact_window.c): no line repeated within the window is ever
# printed, and lines never seen before are dropped at most at the target
# false-positive rate plus three binomial standard deviations. The stream
# (ebb-gen-stream --mode window) mixes new lines with repeats anywhere in
# the window, just inside its edge and just outside it. Plain filters and
# blocked ones (--blocked, --block-bits, --block-hashes) alike; the lines
# are answered in batches, which must not change a single decision.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GEN=$(absolute_path "$2")
EXACT=$(absolute_path "$3")
WORK=$(absolute_path "$4")
fresh_dir "$WORK"

# window_case <name> <lines> <window> <fp> <seed> [ebb dedup options...]
window_case() {
    local name=$1 lines=$2 window=$3 fp=$4 seed=$5
    shift 5
    local input="$WORK/$name.in"
    "$GEN" --mode window --window "$window" --lines "$lines" --seed "$seed" \
        >"$input"
    check "$name: generator wrote $lines lines" \
        equals "$(wc -l <"$input")" "$lines"

    "$EBB" dedup --window "$window" --fp "$fp" "$@" --stats "$input" \
        >"$WORK/$name.printed" 2>"$WORK/$name.stats"
    check "$name: dedup exit 0" equals "$?" 0
    "$EBB" dedup --window "$window" --fp "$fp" "$@" --invert "$input" \
        >"$WORK/$name.suppressed"
    check "$name: dedup --invert exit 0" equals "$?" 0

    check "$name: lines read = input lines" \
        equals "$(stat_value "$WORK/$name.stats" 'lines read')" "$lines"
    check "$name: lines written = output lines" \
        equals "$(stat_value "$WORK/$name.stats" 'lines written')" \
            "$(wc -l <"$WORK/$name.printed")"
    check "$name: printed + suppressed = read" \
        equals "$(($(wc -l <"$WORK/$name.printed") + \
                   $(wc -l <"$WORK/$name.suppressed")))" "$lines"

    echo "--- $name: $lines lines, window $window, fp $fp $*"
    check "$name: exact window oracle agrees" \
        "$EXACT" "$input" "$window" "$fp" \
        "$WORK/$name.printed" "$WORK/$name.suppressed"
}

window_case large 2000000 100000 0.01 7
window_case small 1000000 1000 0.1 11
window_case blocked 1000000 50000 0.01 13 --blocked
window_case blocked-word 1000000 2000 0.02 17 --block-bits 64 --block-hashes 4 \
    --max-npws 0.3

# The blocked runs built blocked filters, the plain ones plain filters.
check "blocked: 512-bit blocks by default" \
    equals "$(stat_value "$WORK/blocked.stats" 'block bits')" 512
check "blocked: the bits per block ebb params --blocked chooses" \
    equals "$(stat_value "$WORK/blocked.stats" 'block hashes')" \
        "$("$EBB" params --window 50000 --fp 0.01 --blocked |
            awk '/^block hashes:/ { print $3 }')"
check "blocked-word: --block-bits 64" \
    equals "$(stat_value "$WORK/blocked-word.stats" 'block bits')" 64
check "blocked-word: --block-hashes 4" \
    equals "$(stat_value "$WORK/blocked-word.stats" 'block hashes')" 4
check "large: a plain filter prints no block lines" \
    test -z "$(grep '^block' "$WORK/large.stats")"
# Blocked and plain filters make their mistakes on different lines (so the
# runs above really used two kinds of filter).
"$EBB" dedup --window 50000 --fp 0.01 "$WORK/blocked.in" >"$WORK/blocked.plain"
check "blocked and plain filters print different lines" \
    test "$(cmp -s "$WORK/blocked.printed" "$WORK/blocked.plain"; echo $?)" = 1

# Through standard input and split across files the decisions are the same.
split -l 700000 -d "$WORK/large.in" "$WORK/large.part."
"$EBB" dedup --window 100000 --fp 0.01 "$WORK/large.part.00" - \
    "$WORK/large.part.02" <"$WORK/large.part.01" >"$WORK/large.split.printed"
check "large: split input gives the same output" \
    same_file "$WORK/large.printed" "$WORK/large.split.printed"

# The inputs are large: keep them only when something needs a look.
if [ "$failures" -eq 0 ]; then
    rm -f "$WORK"/*.in "$WORK"/*.part.* "$WORK"/*.printed "$WORK"/*.suppressed \
        "$WORK"/*.plain
fi
finish
