#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# timing.sh EBB GEN_STREAM EXACT_WINDOW WORK_DIR
#
# The timing filters end to end: `ebb dedup --timing`, `ebb recent` and
# `ebb params --timing`.
#
#  - usage errors: exit 2, one line naming the argument, nothing on stdout;
#  - `ebb params --timing --json`: one valid JSON object (jq) of the
#    documented keys, the human output agreeing with it;
#  - `ebb dedup --timing`: no line repeated within the window is ever
#    written (the exact window oracle, exact_window.c, on streams probing
#    the window's edge), for the three sizings; on lines none of which
#    repeats, the fraction dropped once the filter is warm (after 3 windows:
#    the timers of the first lines have expired) is within three binomial
#    standard deviations of the analytic fp of `ebb params --timing --json`,
#    both ways;
#  - `ebb recent`: the TSV (with --header) and JSON (jq) outputs, every
#    posterior in [0, 1], the standard answer never 0 for a key repeated
#    within the window (an exact window in awk), every decision the rule
#    cost_fp (1 - posterior) <= cost_fn posterior recomputed from the
#    printed posterior and the line's costs, the standard answers those of
#    `ebb dedup --timing` on the same input (same seed), bad fields with
#    and without --skip-bad, a D(j) table;
#  - --state: a stream run in two halves gives byte for byte the output and
#    the state file of one run, for both commands; states of another kind
#    and mismatched options are refused.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GEN=$(absolute_path "$2")
EXACT=$(absolute_path "$3")
WORK=$(absolute_path "$4")
fresh_dir "$WORK"

# ------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------

expect_usage() {
    local expected=$1
    shift
    run_capture "$WORK/usage" /dev/null "$EBB" "$@"
    check "ebb $*: exit status 2 (got $status)" equals "$status" 2
    check "ebb $*: the one expected stderr line" \
        stderr_is "$WORK/usage.err" "$expected"
    check "ebb $*: nothing on stdout" test ! -s "$WORK/usage.out"
}

# json_number <file> <key>: a top-level key of the one JSON object (jq).
json_number() {
    jq -e --arg key "$2" '.[$key] | numbers' "$1"
}

# params_fp <window> <sizing options...>: the analytic fp of the shape.
params_fp() {
    local window=$1
    shift
    "$EBB" params --timing --window "$window" "$@" --json |
        jq -e '.fp | numbers'
}

# shape_text <sizing options...>: the shape as the state messages name it.
shape_text() {
    "$EBB" params --timing "$@" --json | jq -r '"window \(.window), \(.timers) timers of \(.timer_bits) bits, k \(.k), block \(.block), padding \(.padding)"'
}

# A never-repeating stream: ids from 2^62.
distinct_stream() {
    "$GEN" --mode uniform --distinct 4611686018427387904 --lines "$1" \
        --seed "$2"
}

# ------------------------------------------------------------------------
# Usage errors
# ------------------------------------------------------------------------

expect_usage "ebb dedup: --time-window cannot be combined with --timing" \
    dedup --timing --time-window 1s
expect_usage "ebb dedup: --stable cannot be combined with --timing" \
    dedup --bits-per-item 8 --stable
expect_usage "ebb dedup: --blocked cannot be combined with --timing" \
    dedup --timing --blocked
expect_usage "ebb dedup: --bits-per-item cannot be combined with --fp" \
    dedup --timing --bits-per-item 8 --fp 0.1
expect_usage "ebb dedup: --memory cannot be combined with --fp" \
    dedup --timing --memory 1M --fp 0.1
expect_usage "ebb dedup: --k requires --bits-per-item" \
    dedup --timing --k 3
expect_usage "ebb dedup: invalid --k '33': must be an integer from 1 to 32" \
    dedup --timing --bits-per-item 8 --k 33
expect_usage "ebb dedup: invalid --bits-per-item '0': must be a positive number" \
    dedup --bits-per-item 0
expect_usage "ebb dedup: cannot size a timing filter for --window 1000 --bits-per-item 0.001 --k 4: no shape fits (too few bits per item for k, too little memory, or a window too large)" \
    dedup --window 1000 --bits-per-item 0.001 --k 4
expect_usage "ebb params: give --window and one of --bits-per-item, --memory or --fp (run 'ebb params --help')" \
    params --timing --fp 0.01
expect_usage "ebb params: --l cannot be combined with --timing" \
    params --timing --window 100 --fp 0.01 --l 3
expect_usage "ebb params: --stable cannot be combined with --timing" \
    params --timing --stable --window 100 --fp 0.01
expect_usage "ebb recent: invalid --prior '0': must be a number in (0, 1]" \
    recent --prior 0
expect_usage "ebb recent: invalid --prior '1.5': must be a number in (0, 1]" \
    recent --prior 1.5
expect_usage "ebb recent: invalid --cost-fp '-1': must be a number >= 0" \
    recent --cost-fp -1
expect_usage "ebb recent: invalid --cost-fn 'nan': must be a number >= 0" \
    recent --cost-fn nan
expect_usage "ebb recent: --zipf cannot be combined with --universe" \
    recent --universe 10 --zipf 10
expect_usage "ebb recent: --prior-field requires --key-field" \
    recent --prior-field 2
expect_usage "ebb recent: --prior cannot be combined with --prior-field" \
    recent --key-field 1 --prior 0.5 --prior-field 2
expect_usage "ebb recent: --header cannot be combined with --json" \
    recent --universe 10 --json --header
expect_usage "ebb recent: --skip-bad requires --key-field, --prior-field, --cost-fp-field or --cost-fn-field" \
    recent --universe 10 --skip-bad
expect_usage "ebb recent: the distinct model has no prior of its own: give --prior or --prior-field, or --universe N" \
    recent --window 100
expect_usage "ebb recent: the zipf model has no prior of its own: give --prior or --prior-field" \
    recent --window 100 --zipf 1000
expect_usage "ebb recent: --k requires --bits-per-item" \
    recent --universe 10 --k 2

# ------------------------------------------------------------------------
# ebb params --timing
# ------------------------------------------------------------------------

"$EBB" params --timing --window 100000 --fp 0.01 --json >"$WORK/params.json"
check "params --timing --json: exit 0" equals "$?" 0
check "params --timing --json: one line" \
    equals "$(wc -l <"$WORK/params.json")" 1
check "params --timing --json: exactly the documented keys (jq)" \
    equals "$(jq -c 'keys_unsorted' "$WORK/params.json")" \
    '["window","timers","k","timer_bits","block","padding","t_omega","sweep_per_add","memory_bytes","bits_per_item","fp"]'
check "params --timing --fp 0.01: analytic fp at most 0.01" \
    in_range "$(json_number "$WORK/params.json" fp)" 0 0.01
"$EBB" params --timing --window 100000 --fp 0.01 >"$WORK/params.txt"
for pair in window:window timers:timers k:k "timer bits:timer_bits" \
    block:block padding:padding "t omega:t_omega" \
    "sweep per insertion:sweep_per_add" "memory bytes:memory_bytes"; do
    check "params --timing: human '${pair%%:*}' is the JSON's" \
        equals "$(awk -v label="${pair%%:*}:" \
            'index($0, label) == 1 { print $NF }' "$WORK/params.txt")" \
            "$(json_number "$WORK/params.json" "${pair#*:}")"
done
check "params --timing --bits-per-item 16 --k 4: k 4, bpt 4" \
    equals "$("$EBB" params --timing --window 10000 --bits-per-item 16 \
        --k 4 --json | jq -c '[.k, .timer_bits]')" '[4,4]'
check "params --memory 64k --timing: within 64 KiB of timers" \
    in_range "$("$EBB" params --memory 64k --timing --window 10000 --json |
        jq '.memory_bytes')" 0 65536

# ------------------------------------------------------------------------
# dedup --timing: no false negatives (exact window), fp (analytic)
# ------------------------------------------------------------------------

# window_case <name> <lines> <window> <seed> <sizing options...>
window_case() {
    local name=$1 lines=$2 window=$3 seed=$4
    shift 4
    local input="$WORK/$name.in" fp
    "$GEN" --mode window --window "$window" --lines "$lines" --seed "$seed" \
        >"$input"
    fp=$(params_fp "$window" "$@")
    "$EBB" dedup --timing --window "$window" "$@" --stats "$input" \
        >"$WORK/$name.printed" 2>"$WORK/$name.stats"
    check "$name: dedup exit 0" equals "$?" 0
    "$EBB" dedup --timing --window "$window" "$@" --invert "$input" \
        >"$WORK/$name.suppressed"
    check "$name: lines written = output lines" \
        equals "$(stat_value "$WORK/$name.stats" 'lines written')" \
            "$(wc -l <"$WORK/$name.printed")"
    check "$name: duplicates = suppressed lines" \
        equals "$(stat_value "$WORK/$name.stats" 'duplicates')" \
            "$(wc -l <"$WORK/$name.suppressed")"
    check "$name: --stats fp is ebb params' analytic fp" \
        equals "$(stat_value "$WORK/$name.stats" fp)" \
            "$(awk -v p="$fp" 'BEGIN { printf "%.10g", p }')"
    echo "--- $name: $lines lines, window $window, $*, analytic fp $fp"
    check "$name: exact window oracle (no false negative, fp)" \
        "$EXACT" "$input" "$window" "$fp" \
        "$WORK/$name.printed" "$WORK/$name.suppressed"
}

window_case fp-sized 300000 5000 21 --fp 0.02
window_case paper 300000 3000 23 --bits-per-item 24 --k 6
window_case memory 200000 777 25 --memory 4k
window_case tiny 50000 7 27 --bits-per-item 30

# fp_case <name> <lines> <window> <seed> <sizing options...>: every line
# new; dropped after 3 windows vs the analytic rate, both ways.
fp_case() {
    local name=$1 lines=$2 window=$3 seed=$4
    shift 4
    local input="$WORK/$name.in" fp measured
    distinct_stream "$lines" "$seed" >"$input"
    fp=$(params_fp "$window" "$@")
    "$EBB" dedup --timing --window "$window" "$@" --invert "$input" \
        >"$WORK/$name.suppressed"
    check "$name: dedup --invert exit 0" equals "$?" 0
    # Lines are unique: a suppressed line names its position.
    measured=$(awk -v warm=$((3 * window)) 'NR == FNR { dropped[$0]; next }
        FNR > warm { n++; if ($0 in dropped) d++ }
        END { printf "%d %d\n", d, n }' "$WORK/$name.suppressed" "$input")
    echo "--- $name: $window window, $*: dropped ${measured% *} of" \
        "${measured#* } warm new lines, analytic fp $fp"
    check "$name: measured fp within 3 sd of the analytic $fp" \
        awk -v d="${measured% *}" -v n="${measured#* }" -v p="$fp" 'BEGIN {
            sd = sqrt(p * (1 - p) / n)
            exit !(n > 0 && d / n >= p - 3 * sd && d / n <= p + 3 * sd) }'
}

fp_case fp-rate 300000 10000 31 --fp 0.01
fp_case fp-paper 300000 10000 33 --bits-per-item 16 --k 4
fp_case fp-memory 300000 10000 35 --memory 64k
fp_case fp-high 200000 2000 37 --bits-per-item 12

# ------------------------------------------------------------------------
# recent: formats, posterior range, no false negative, decisions
# ------------------------------------------------------------------------

# "user<id> <cost-fp> <cost-fn> <n>": ids uniform over 400, costs from the
# line number (1..10 and 0.5..8.5), n makes each line unique.
"$GEN" --mode uniform --distinct 400 --lines 60000 --seed 41 |
    awk '{ print $1, NR * 7 % 10 + 1, NR * 13 % 9 + 0.5, NR }' \
        >"$WORK/recent.in"
RECENT=(recent --window 300 --bits-per-item 20 --universe 400
    --key-field 1 --cost-fp-field 2 --cost-fn-field 3)
"$EBB" "${RECENT[@]}" --header --stats "$WORK/recent.in" \
    >"$WORK/recent.tsv" 2>"$WORK/recent.stats"
check "recent: exit 0" equals "$?" 0
check "recent --header: the header line" \
    equals "$(head -n 1 "$WORK/recent.tsv")" \
        "$(printf 'key\tposterior\texpected_age\tlikely_age\tdecision\tstandard')"
check "recent: one answer per line" \
    equals "$(($(wc -l <"$WORK/recent.tsv") - 1))" 60000
check "recent --stats: lines written" \
    equals "$(stat_value "$WORK/recent.stats" 'lines written')" 60000
check "recent --stats: the uniform model" \
    equals "$(stat_value "$WORK/recent.stats" model)" uniform
check "recent: six tab-separated fields, numbers where numbers belong" \
    awk -F '\t' 'NR > 1 && (NF != 6 || $2 !~ /^[0-9.e+-]+$/ ||
        $3 !~ /^[0-9.e+-]+$/ || $4 !~ /^[0-9]+$/ || $5 !~ /^[01]$/ ||
        $6 !~ /^[01]$/) { bad++ } END { exit bad > 0 }' "$WORK/recent.tsv"
check "recent: every posterior in [0, 1]" \
    awk -F '\t' 'NR > 1 && !($2 + 0 >= 0 && $2 + 0 <= 1) { bad++ }
        END { exit bad > 0 }' "$WORK/recent.tsv"
check "recent: the keys are the input's field 1, in order" \
    equals "$(tail -n +2 "$WORK/recent.tsv" | cut -f1 | md5sum)" \
        "$(awk '{ print $1 }' "$WORK/recent.in" | md5sum)"
# An exact window in awk: a key last seen at most 300 lines before.
repeats=$(tail -n +2 "$WORK/recent.tsv" | paste - "$WORK/recent.in" |
    awk -F '\t' '{ split($7, f, " ")
        if ((f[1] in last) && NR - last[f[1]] <= 300) {
            within++; if ($6 != 1) missed++ }
        last[f[1]] = NR }
        END { printf "%d %d\n", within, missed }')
check "recent: keys repeated within the window were probed (${repeats% *})" \
    test "${repeats% *}" -gt 10000
check "recent: the standard answer is never 0 for them" \
    equals "${repeats#* }" 0
decisions=$(tail -n +2 "$WORK/recent.tsv" | paste - "$WORK/recent.in" |
    awk -F '\t' '{ split($7, f, " "); p = $2 + 0
        rule = (f[2] * (1 - p) <= f[3] * p) ? 1 : 0
        if (rule != $5) wrong++; yes += $5 }
        END { printf "%d %d\n", yes, wrong }')
check "recent: both decisions occur (${decisions% *} positive)" \
    in_range "${decisions% *}" 1000 59000
check "recent: every decision is cost_fp (1 - p) <= cost_fn p" \
    equals "${decisions#* }" 0
check "recent --stats: decisions yes" \
    equals "$(stat_value "$WORK/recent.stats" 'decisions yes')" \
        "${decisions% *}"
# The same filter, seed and input as dedup --timing: the same answers.
"$EBB" dedup --timing --window 300 --bits-per-item 20 --key-field 1 \
    --invert "$WORK/recent.in" >"$WORK/recent.dedup"
check "recent: standard answers are dedup --timing's" \
    awk -F '\t' 'NR == FNR { dropped[$0]; next }
        { if (($2 in dropped) != ($1 == 1)) bad++ }
        END { exit bad > 0 }' "$WORK/recent.dedup" \
        <(tail -n +2 "$WORK/recent.tsv" | cut -f6 | paste - "$WORK/recent.in")

"$EBB" "${RECENT[@]}" --json "$WORK/recent.in" >"$WORK/recent.json"
check "recent --json: exit 0" equals "$?" 0
check "recent --json: every line a JSON object of the documented keys (jq)" \
    equals "$(jq -c 'keys_unsorted' "$WORK/recent.json" | sort -u)" \
        '["key","posterior","expected_age","likely_age","decision","standard"]'
check "recent --json: the TSV's answers (jq)" \
    equals "$(jq -r '[.key, .posterior, .expected_age, .likely_age,
        (if .decision then 1 else 0 end), (if .standard then 1 else 0 end)]
        | @tsv' "$WORK/recent.json" | md5sum)" \
        "$(tail -n +2 "$WORK/recent.tsv" | md5sum)"
printf 'a"b\\c\tx\n\001\303\251\377\n' >"$WORK/odd.in"
"$EBB" recent --prior 0.5 --json "$WORK/odd.in" >"$WORK/odd.json"
check "recent --json: odd keys stay valid JSON (jq)" \
    equals "$(jq -r '.key | @json' "$WORK/odd.json" | tr '\n' ' ')" \
        '"a\"b\\c\tx" "\u0001éÿ" '

# ------------------------------------------------------------------------
# recent: bad fields
# ------------------------------------------------------------------------

printf 'a 0.5 1\nb 0.2 2\n' >"$WORK/good.part"
# bad_field <name> <line 3> <expected stderr>
bad_field() {
    local name=$1 line=$2 expected=$3
    { cat "$WORK/good.part"; printf '%s\n' "$line" 'c 0.1 3'; } \
        >"$WORK/$name.in"
    run_capture "$WORK/$name" "$WORK/$name.in" "$EBB" recent --window 10 \
        --key-field 1 --prior-field 2 --cost-fn-field 3
    check "recent $name: exit 1 (got $status)" equals "$status" 1
    check "recent $name: the message" stderr_is "$WORK/$name.err" \
        "ebb recent: standard input: line 3: $expected"
    check "recent $name: the lines before it answered" \
        equals "$(cut -f1 "$WORK/$name.out" | tr '\n' ' ')" "a b "
    run_capture "$WORK/$name.skip" "$WORK/$name.in" "$EBB" recent \
        --window 10 --key-field 1 --prior-field 2 --cost-fn-field 3 \
        --skip-bad --stats
    check "recent $name --skip-bad: exit 0" equals "$status" 0
    check "recent $name --skip-bad: the line skipped" \
        equals "$(cut -f1 "$WORK/$name.skip.out" | tr '\n' ' ')" "a b c "
    check "recent $name --skip-bad: counted" \
        equals "$(stat_value "$WORK/$name.skip.err" 'bad lines')" 1
}
bad_field prior-text 'x abc 1' "prior field 2 'abc' is not a number in (0, 1]"
bad_field prior-zero 'x 0 1' "prior field 2 '0' is not a number in (0, 1]"
bad_field prior-big 'x 1.5 1' "prior field 2 '1.5' is not a number in (0, 1]"
bad_field cost-negative 'x 0.5 -2' "cost-fn field 3 '-2' is not a number >= 0"
bad_field cost-nan 'x 0.5 nan' "cost-fn field 3 'nan' is not a number >= 0"
bad_field cost-missing 'x 0.5' "no cost-fn field 3 (the line has 2 fields)"
bad_field key-missing '' "no key field 1 (the line has 0 fields)"

# ------------------------------------------------------------------------
# recent: a D(j) table
# ------------------------------------------------------------------------

printf '# j D(j) of ids uniform over 400\n1 1\n100 88.6\n1000 365.6\n' \
    >"$WORK/table.txt"
"$EBB" recent --window 300 --distinct-table "$WORK/table.txt" --prior 0.0025 \
    --key-field 1 --stats "$WORK/recent.in" >"$WORK/table.out" \
    2>"$WORK/table.stats"
check "recent --distinct-table: exit 0" equals "$?" 0
check "recent --distinct-table: the table model" \
    equals "$(stat_value "$WORK/table.stats" model)" table
check "recent --distinct-table: posteriors in [0, 1]" \
    awk -F '\t' '!($2 + 0 >= 0 && $2 + 0 <= 1) { bad++ }
        END { exit bad > 0 || NR != 60000 }' "$WORK/table.out"
printf '1 1\n100 200\n' >"$WORK/bad-table.txt"
run_capture "$WORK/bad-table" /dev/null "$EBB" recent --prior 0.1 \
    --distinct-table "$WORK/bad-table.txt"
check "recent: a table with D(j) > j: exit 1" equals "$status" 1
check "recent: a table with D(j) > j: the message" \
    stderr_starts_with "$WORK/bad-table.err" \
    "ebb recent: $WORK/bad-table.txt: not a table of D(j)"
printf '1 1\n100 x\n' >"$WORK/bad-table.txt"
run_capture "$WORK/bad-table" /dev/null "$EBB" recent --prior 0.1 \
    --distinct-table "$WORK/bad-table.txt"
check "recent: a table with a bad number: exit 1" equals "$status" 1
check "recent: a table with a bad number: the line" \
    stderr_is "$WORK/bad-table.err" \
    "ebb recent: $WORK/bad-table.txt: line 2: D(j) must be a number"

# ------------------------------------------------------------------------
# --state: two halves are one run
# ------------------------------------------------------------------------

head -n 25000 "$WORK/recent.in" >"$WORK/half.1"
tail -n +25001 "$WORK/recent.in" >"$WORK/half.2"
# state_case <name> <command and options...>
state_case() {
    local name=$1
    shift
    rm -f "$WORK/$name.whole.state" "$WORK/$name.parts.state"
    "$@" --state "$WORK/$name.whole.state" "$WORK/recent.in" \
        >"$WORK/$name.whole.out"
    check "$name --state: one run exit 0" equals "$?" 0
    { "$@" --state "$WORK/$name.parts.state" "$WORK/half.1" &&
        "$@" --state "$WORK/$name.parts.state" "$WORK/half.2"; } \
        >"$WORK/$name.parts.out"
    check "$name --state: two runs exit 0" equals "$?" 0
    check "$name --state: the same output" \
        same_file "$WORK/$name.whole.out" "$WORK/$name.parts.out"
    check "$name --state: the same state file" \
        same_file "$WORK/$name.whole.state" "$WORK/$name.parts.state"
}
state_case recent "$EBB" "${RECENT[@]}"
state_case dedup "$EBB" dedup --timing --window 300 --fp 0.05 --key-field 1

# A recent state continued without the model options keeps its model.
"$EBB" recent --key-field 1 --state "$WORK/recent.parts.state" --stats "$WORK/half.1" \
    >/dev/null 2>"$WORK/kept.stats"
check "recent --state: the state's model kept" \
    equals "$(stat_value "$WORK/kept.stats" universe)" 400
expect_usage "ebb recent: --window 301 disagrees with the state in '$WORK/recent.parts.state' ($(shape_text --window 300 --bits-per-item 20))" \
    recent --window 301 --state "$WORK/recent.parts.state"
expect_usage "ebb dedup: --blocked disagrees with the state in '$WORK/dedup.whole.state' (a timing filter)" \
    dedup --blocked --state "$WORK/dedup.whole.state"
expect_usage "ebb dedup: --fp 0.01 disagrees with the state in '$WORK/dedup.whole.state' ($(shape_text --window 300 --fp 0.05))" \
    dedup --fp 0.01 --state "$WORK/dedup.whole.state"
"$EBB" dedup --window 300 --state "$WORK/apbf.state" </dev/null
expect_usage "ebb dedup: --timing disagrees with the state in '$WORK/apbf.state' (a count-window filter)" \
    dedup --timing --state "$WORK/apbf.state"
expect_usage "ebb recent: the state in '$WORK/apbf.state' is not a timing filter (the states of 'ebb recent' and 'ebb dedup --timing' are)" \
    recent --universe 10 --state "$WORK/apbf.state"

if [ "$failures" -eq 0 ]; then
    rm -f "$WORK"/*.in "$WORK"/*.printed "$WORK"/*.suppressed \
        "$WORK"/*.tsv "$WORK"/*.json "$WORK"/*.out
fi
finish
