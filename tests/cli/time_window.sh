#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# time_window.sh EBB GEN_STREAM EXACT_WINDOW WORK_DIR
#
# ebb dedup --time-window on replayed logs of millions of lines, against an
# exact oracle of time (exact_window.c --time): no line whose previous
# occurrence is within the span (by its clamped time) is ever printed, and
# never-seen lines are dropped at most at 1.25 times the target rate plus
# three binomial standard deviations. The logs (ebb-gen-stream --mode
# timed) have 10x bursts, drops to 1/10, idle gaps longer than the span,
# out-of-order timestamps, and repeats just inside, exactly at and just
# outside the edge of the span. Also: split inputs, the memory ebb params
# predicts, and both policies at the memory limit.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GEN=$(absolute_path "$2")
EXACT=$(absolute_path "$3")
WORK=$(absolute_path "$4")
fresh_dir "$WORK"

# phase_count <generator log> <name>: lines of a phase, or idle gaps.
phase_count() {
    awk -v name="$2" '{
        for (i = 1; i < NF; i++) if ($i == name || $i " " $(i + 1) == name) {
            v = $(i + 1) == "gaps" ? $(i + 2) : $(i + 1); sub(/[,;]$/, "", v)
            print v; exit } }' "$1"
}

# time_case <name> <lines> <span ms> <rate> <fp> <seed> <format> <fresh %>
#           <profile>
time_case() {
    local name=$1 lines=$2 span_ms=$3 rate=$4 fp=$5 seed=$6 format=$7
    local fresh=$8 profile=$9
    local input="$WORK/$name.in"
    "$GEN" --mode timed --lines "$lines" --span-ms "$span_ms" --rate "$rate" \
        --seed "$seed" --time-format "$format" --fresh "$fresh" \
        --profile "$profile" --times "$WORK/$name.times" --verbose \
        >"$input" 2>"$WORK/$name.gen"
    check "$name: generator wrote $lines lines" \
        equals "$(wc -l <"$input")" "$lines"
    if [ "$profile" = bursty ]; then
        local phase
        for phase in burst drop 'idle gaps'; do
            check "$name: the log has $phase" \
                test "$(phase_count "$WORK/$name.gen" "$phase")" -gt 0
        done
    fi

    local options=(--time-window "${span_ms}ms" --time-field 1
                   --time-format "$format" --fp "$fp")
    "$EBB" dedup "${options[@]}" --stats "$input" \
        >"$WORK/$name.printed" 2>"$WORK/$name.stats"
    check "$name: dedup exit 0" equals "$?" 0
    "$EBB" dedup "${options[@]}" --invert "$input" >"$WORK/$name.suppressed"
    check "$name: dedup --invert exit 0" equals "$?" 0

    local stats="$WORK/$name.stats"
    check "$name: lines read = input lines" \
        equals "$(stat_value "$stats" 'lines read')" "$lines"
    check "$name: lines written = output lines" \
        equals "$(stat_value "$stats" 'lines written')" \
            "$(wc -l <"$WORK/$name.printed")"
    check "$name: printed + suppressed = read" \
        equals "$(($(wc -l <"$WORK/$name.printed") + \
                   $(wc -l <"$WORK/$name.suppressed")))" "$lines"
    local field
    for field in refused 'evicted slices' 'bad lines'; do
        check "$name: $field 0" equals "$(stat_value "$stats" "$field")" 0
    done

    echo "--- $name: $lines lines, span ${span_ms} ms, rate $rate, fp $fp," \
        "$format, $fresh% new, $profile: $(cat "$WORK/$name.gen")"
    "$EXACT" --time "${span_ms}000000" "$WORK/$name.times" "$input" "$fp" \
        "$WORK/$name.printed" "$WORK/$name.suppressed" >"$WORK/$name.oracle"
    check "$name: exact time-window oracle agrees" equals "$?" 0
    cat "$WORK/$name.oracle"
    check "$name: ebb clamped the times the oracle clamped" \
        equals "$(stat_value "$stats" clamped)" \
            "$(awk -F'[:;] ' '/^clamped times/ { print $2 }' "$WORK/$name.oracle")"
}

time_case bursty-ms 2000000 5000 1000 0.01 7 epoch-ms 40 bursty
time_case bursty-iso 1000000 2000 2000 0.001 11 iso8601 90 bursty
time_case steady-fp 1000000 5000 50000 0.01 13 epoch-ms 90 steady

# The oracle can tell: a window one millisecond short lets repeats through.
"$EBB" dedup --time-window 4999ms --time-field 1 --time-format epoch-ms \
    "$WORK/bursty-ms.in" >"$WORK/short.printed"
"$EBB" dedup --time-window 4999ms --time-field 1 --time-format epoch-ms \
    --invert "$WORK/bursty-ms.in" >"$WORK/short.suppressed"
"$EXACT" --time 5000000000 "$WORK/bursty-ms.times" "$WORK/bursty-ms.in" 0.01 \
    "$WORK/short.printed" "$WORK/short.suppressed" >"$WORK/short.oracle"
check "a span 1 ms short fails the oracle" equals "$?" 1
check "... with false negatives" grep -q '^FAIL: .* repeated within the window' \
    "$WORK/short.oracle"

# Through standard input and split across files the answers are the same.
split -l 700000 -d "$WORK/bursty-ms.in" "$WORK/bursty-ms.part."
"$EBB" dedup --time-window 5s --time-field 1 --time-format epoch-ms \
    "$WORK/bursty-ms.part.00" - "$WORK/bursty-ms.part.02" \
    <"$WORK/bursty-ms.part.01" >"$WORK/split.printed"
check "split input gives the same output" \
    same_file "$WORK/bursty-ms.printed" "$WORK/split.printed"

# At a steady rate the filter holds about k + l slices, in about the memory
# ebb params predicts for that rate (its slices' bits: at 50,000 lines a
# second the slices are large enough for the rest to be a few percent).
"$EBB" params --time-window 5s --rate 50000 --fp 0.01 --json \
    >"$WORK/steady.params"
json_number() {
    awk -v key="\"$2\"" '{ n = split($0, parts, /[{},] */)
        for (i = 1; i <= n; i++) { split(parts[i], kv, ": ")
            if (kv[1] == key) print kv[2] } }' "$1"
}
predicted=$(json_number "$WORK/steady.params" memory_bytes)
held=$(stat_value "$WORK/steady-fp.stats" 'memory bytes')
slices=$(stat_value "$WORK/steady-fp.stats" slices)
k=$(json_number "$WORK/steady.params" k)
l=$(json_number "$WORK/steady.params" l)
echo "steady: $slices slices (k + l = $((k + l))), $held bytes held," \
    "$predicted predicted"
check "steady: k as ebb params says" \
    equals "$(stat_value "$WORK/steady-fp.stats" k)" "$k"
check "steady: slices within k + l - 2 .. k + l + 4" \
    test "$slices" -ge $((k + l - 2)) -a "$slices" -le $((k + l + 4))
check "steady: memory within 10% of ebb params' prediction" \
    awk -v h="$held" -v p="$predicted" 'BEGIN { exit !(h >= 0.9 * p && h <= 1.1 * p) }'

# --- The memory limit ---------------------------------------------------
# A limit of five times the slices of the normal rate: the bursts (10x) do
# not fit.
"$EBB" params --time-window 5s --rate 1000 --fp 0.01 --json \
    >"$WORK/normal.params"
limit=$((5 * $(json_number "$WORK/normal.params" memory_bytes)))
for policy in refuse evict; do
    run_capture "$WORK/limit-$policy" "$WORK/bursty-ms.in" "$EBB" dedup \
        --time-window 5s --time-field 1 --time-format epoch-ms \
        --max-memory "$limit" --policy "$policy" --stats
    check "$policy: exit 0 (got $status)" equals "$status" 0
    check "$policy: one warning, then the stats" \
        equals "$(grep -c '^ebb dedup: warning: ' "$WORK/limit-$policy.err")" 1
    check "$policy: memory within the limit" \
        test "$(stat_value "$WORK/limit-$policy.err" 'memory bytes')" -le "$limit"
    check "$policy: lines written counted" \
        equals "$(stat_value "$WORK/limit-$policy.err" 'lines written')" \
            "$(wc -l <"$WORK/limit-$policy.out")"
done
check "refuse: lines refused" \
    test "$(stat_value "$WORK/limit-refuse.err" refused)" -gt 0
check "refuse: nothing evicted" \
    equals "$(stat_value "$WORK/limit-refuse.err" 'evicted slices')" 0
check "refuse: the warning names the line and the limit" \
    grep -Eq "^ebb dedup: warning: standard input: line [0-9]+: the memory limit of $limit bytes is reached \(--policy refuse\)" \
        "$WORK/limit-refuse.err"
check "evict: slices evicted" \
    test "$(stat_value "$WORK/limit-evict.err" 'evicted slices')" -gt 0
check "evict: nothing refused" \
    equals "$(stat_value "$WORK/limit-evict.err" refused)" 0
check "evict: the warning says what it costs" \
    grep -Eq "^ebb dedup: warning: standard input: by line [0-9]+ the memory limit of $limit bytes made the filter evict live slices \(--policy evict\): lines seen less than 5s ago may be written again" \
        "$WORK/limit-evict.err"
# The inputs are large: keep them only when something needs a look.
if [ "$failures" -eq 0 ]; then
    rm -f "$WORK"/*.in "$WORK"/*.times "$WORK"/*.part.* "$WORK"/*.printed \
        "$WORK"/*.suppressed "$WORK"/*.out
fi
finish
