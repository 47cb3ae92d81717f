#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# stable.sh EBB GEN_STREAM WORK_DIR
#
# `ebb dedup --stable` and `ebb params --stable` end to end:
#
#  - usage errors: exit 2, one line naming the argument, nothing on stdout;
#  - `ebb params --stable --json`: one valid JSON object of the documented
#    keys, the human output agreeing with it;
#  - false positives: on 2,000,000 (and 1,000,000) lines none of which
#    repeats, the fraction dropped after the warm-up is within three
#    binomial standard deviations of the fps `ebb params --stable --json`
#    prints for the same options (why the warm-up is long enough: below);
#  - false negatives with an importance field (IBF-2C): on a stream whose
#    probes repeat exactly G lines later, the fraction of repeats written
#    again, per class, is within three standard deviations of
#    `ebb params --stable --gap G --json`, and important lines are missed
#    less often than unimportant ones by more than three standard
#    deviations of the difference; IBF-MC and IBF-H likewise order lines of
#    high and low importance;
#  - --stats counters consistent with the output, --invert, malformed and
#    refused importance fields with and without --skip-bad;
#  - --state: a stream run in two parts gives byte for byte the output and
#    the state file of one run; damaged states and mismatched options are
#    refused with the file left untouched.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GEN=$(absolute_path "$2")
WORK=$(absolute_path "$3")
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

# json_scalar <file> <key>: the value of a top-level scalar key.
json_scalar() {
    awk -v key="$2" '{
        if (match($0, "\"" key "\": [^,}]*")) {
            value = substr($0, RSTART, RLENGTH)
            sub(/^"[^"]*": /, "", value); gsub(/"/, "", value)
            print value; found = 1
        }
    } END { if (!found) exit 1 }' "$1"
}

# json_fn <file> <class> <gap>: the probability of the fn entry.
json_fn() {
    awk -v class="$2" -v gap="$3" '{
        pattern = "\"class\": \"" class "\", \"level\": [0-9]+, \"gap\": " \
                  gap ", \"probability\": [^}]*"
        if (match($0, pattern)) {
            value = substr($0, RSTART, RLENGTH)
            sub(/.*"probability": /, "", value)
            print value; found = 1
        }
    } END { if (!found) exit 1 }' "$1"
}

# json_valid <file>: exactly one line, the documented object (a regular
# expression of the whole line: valid JSON with exactly these keys).
json_valid() {
    local int='(0|[1-9][0-9]*)'
    local num='-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][-+]?[0-9]+)?'
    local fn="\\{\"class\": \"[a-z]+\", \"level\": $int, \"gap\": $int, \"probability\": $num\\}"
    [ "$(wc -l <"$1")" -eq 1 ] &&
        grep -Eq "^\\{\"variant\": \"(plain|ibf-2c|ibf-mc|ibf-h)\", \"draw\": \"(consecutive|independent)\", \"cells\": $int, \"cell_bits\": $int, \"k\": $int, \"p\": $int, \"memory_bytes\": $int, \"zero_fraction\": $num, \"fps\": $num, \"mean_level\": $num, \"fn\": \\[$fn(, $fn)*\\]\\}\$" "$1"
}

# within_sd <measured count> <trials> <probability>: |count - n p| is at
# most three binomial standard deviations.
within_sd() {
    awk -v x="$1" -v n="$2" -v p="$3" 'BEGIN {
        sd = sqrt(n * p * (1 - p))
        printf "    measured %d / %d = %.6f, predicted %.6f, %.2f sd\n",
            x, n, x / n, p, (x - n * p) / sd
        exit !(n > 0 && (x - n * p) <= 3 * sd && (n * p - x) <= 3 * sd)
    }' >&2
}

# ------------------------------------------------------------------------
# Usage errors
# ------------------------------------------------------------------------

memory_requirement='must be a positive number of bytes, optionally followed by k, M, G or T (powers of 1024)'
expect_usage "ebb dedup: --window cannot be combined with --stable" \
    dedup --stable --window 1000
expect_usage "ebb dedup: --time-window cannot be combined with --stable" \
    dedup --stable --time-window 10s
expect_usage "ebb dedup: --max-npws cannot be combined with --stable" \
    dedup --stable --max-npws 0.1
expect_usage "ebb dedup: --blocked cannot be combined with --stable" \
    dedup --blocked --stable
for bad in 0 1.5G 1g 1KB 1e9 -1 ''; do
    expect_usage "ebb dedup: invalid --memory '$bad': $memory_requirement" \
        dedup --stable --memory "$bad"
done
for bad in 0 1 1.5 nan; do
    expect_usage "ebb dedup: invalid --fp '$bad': must be a number between 0 and 1 (exclusive)" \
        dedup --stable --fp "$bad"
done
expect_usage "ebb dedup: --cells, --cell-bits, --k and --p must be given together" \
    dedup --stable --cells 1000
expect_usage "ebb dedup: --cells, --cell-bits, --k and --p must be given together" \
    dedup --stable --cells 1000 --cell-bits 3 --k 4
expect_usage "ebb dedup: --memory cannot be combined with --cells, --cell-bits, --k and --p" \
    dedup --stable --cells 1000 --cell-bits 3 --k 4 --p 5 --memory 1M
expect_usage "ebb dedup: --fp cannot be combined with --cells, --cell-bits, --k and --p" \
    dedup --stable --cells 1000 --cell-bits 3 --k 4 --p 5 --fp 0.1
expect_usage "ebb dedup: invalid --k '33': must be an integer from 1 to 32" \
    dedup --stable --k 33
expect_usage "ebb dedup: invalid --cell-bits '17': must be an integer from 1 to 16" \
    dedup --stable --cell-bits 17
expect_usage "ebb dedup: invalid --cells '0': must be an integer from 1 to 1099511627776" \
    dedup --stable --cells 0
expect_usage "ebb dedup: invalid --draw 'random': must be independent or consecutive" \
    dedup --stable --draw random
expect_usage "ebb dedup: cannot build a stable filter of 10 cells of 3 bits with k 3 and p 11: invalid argument" \
    dedup --stable --cells 10 --cell-bits 3 --k 3 --p 11
for option in "--importance-range 0:1" "--importance-classes 2" \
    "--decrement weighted" "--importance-out-of-range refuse"; do
    expect_usage "ebb dedup: ${option%% *} requires --importance-field" \
        dedup --stable $option
done
for bad in 0 x -1 4294967296; do
    expect_usage "ebb dedup: invalid --importance-field '$bad': must be a field number from 1 to 4294967295" \
        dedup --stable --importance-field "$bad"
done
expect_usage "ebb dedup: --importance-field requires --importance-range LOW:HIGH for a new filter" \
    dedup --stable --importance-field 2
for bad in 1:0 1 0:x :1 0:1:2 nan:1; do
    expect_usage "ebb dedup: invalid --importance-range '$bad': must be LOW:HIGH, two numbers with LOW < HIGH" \
        dedup --stable --importance-field 2 --importance-range "$bad"
done
expect_usage "ebb dedup: --important-above requires --importance-classes 2" \
    dedup --stable --importance-field 2 --importance-range 0:1 --important-above 0.3
expect_usage "ebb dedup: --decrement weighted cannot be combined with --importance-classes 2" \
    dedup --stable --importance-field 2 --importance-range 0:1 \
    --importance-classes 2 --decrement weighted
expect_usage "ebb dedup: invalid --importance-classes '3': must be 2 or levels" \
    dedup --stable --importance-field 2 --importance-classes 3
expect_usage "ebb dedup: invalid --importance-out-of-range 'drop': must be clamp or refuse" \
    dedup --stable --importance-field 2 --importance-out-of-range drop
expect_usage "ebb dedup: --memory requires --stable" dedup --memory 1M
expect_usage "ebb dedup: --importance-field requires --stable" \
    dedup --importance-field 2
expect_usage "ebb dedup: --draw requires --stable" \
    dedup --time-window 1s --draw independent
expect_usage "ebb dedup: --skip-bad requires --importance-field or --key-field" \
    dedup --stable --skip-bad

expect_usage "ebb params: give --memory and --fp, or --cells, --cell-bits, --k and --p (run 'ebb params --help')" \
    params --stable --memory 1M
expect_usage "ebb params: --window cannot be combined with --stable" \
    params --stable --window 1000 --fp 0.01
expect_usage "ebb params: --l cannot be combined with --stable" \
    params --stable --k 3 --l 4
expect_usage "ebb params: invalid --k '33': must be an integer from 1 to 32" \
    params --stable --k 33 --cells 100 --cell-bits 3 --p 2
expect_usage "ebb params: invalid --k '65': must be an integer from 1 to 64" \
    params --k 65 --l 3
expect_usage "ebb params: --important-fraction requires --importance-classes 2" \
    params --stable --memory 1M --fp 0.01 --important-fraction 0.2
expect_usage "ebb params: invalid --important-fraction '1.5': must be a number from 0 to 1" \
    params --stable --memory 1M --fp 0.01 --importance-classes 2 \
    --important-fraction 1.5
expect_usage "ebb params: invalid --gap '0': must be a positive integer" \
    params --stable --memory 1M --fp 0.01 --gap 0
expect_usage "ebb params: --gap requires --stable" params --window 10 --fp 0.1 --gap 5
expect_usage "ebb params: --memory requires --stable" params --window 10 --fp 0.1 --memory 1M
expect_usage "ebb params: at most 16 --gap values" \
    params --stable --memory 1M --fp 0.01 $(printf -- '--gap %d ' $(seq 1 17))
expect_usage "ebb params: cannot size a stable filter for --memory 8 --fp 1e-9: invalid argument" \
    params --stable --memory 8 --fp 1e-9

# ------------------------------------------------------------------------
# ebb params --stable: the JSON object and the human output
# ------------------------------------------------------------------------

for variant in "" "--importance-classes 2" "--importance-classes levels" \
    "--decrement weighted"; do
    # shellcheck disable=SC2086
    "$EBB" params --stable --memory 64K --fp 0.02 $variant --json \
        >"$WORK/params.json"
    check "params --stable $variant --json: exit 0" equals "$?" 0
    check "params --stable $variant --json: the documented object" \
        json_valid "$WORK/params.json"
    # shellcheck disable=SC2086
    "$EBB" params --stable --memory 64K --fp 0.02 $variant >"$WORK/params.txt"
    for key in cells k p zero_fraction fps; do
        label=${key/_/ }
        check "params --stable $variant: human $label = JSON $key" \
            equals "$(awk -v l="$label:" 'index($0, l) == 1 { print $NF }' \
                      "$WORK/params.txt")" \
                   "$(json_scalar "$WORK/params.json" "$key")"
    done
    check "params --stable $variant: fps <= --fp" \
        in_range "$(json_scalar "$WORK/params.json" fps)" 0 0.02
done
check "params --stable: 2C classes" \
    test "$(grep -o '"class": "[a-z]*"' "$WORK/params.json" | sort -u | wc -l)" -eq 3
"$EBB" params --stable --cells 1000 --cell-bits 2 --k 3 --p 7 --gap 10 \
    --gap 100 --draw independent --json >"$WORK/explicit.json"
check "params explicit shape: valid" json_valid "$WORK/explicit.json"
check "params explicit shape: the given shape" \
    equals "$(json_scalar "$WORK/explicit.json" cells) $(json_scalar "$WORK/explicit.json" cell_bits) $(json_scalar "$WORK/explicit.json" k) $(json_scalar "$WORK/explicit.json" p) $(json_scalar "$WORK/explicit.json" draw)" \
        "1000 2 3 7 independent"
check "params explicit shape: two gaps, one class" \
    test "$(grep -o '"gap"' "$WORK/explicit.json" | wc -l)" -eq 2

# ------------------------------------------------------------------------
# False positives on lines that never repeat
# ------------------------------------------------------------------------
#
# Warm-up. The filter starts with every cell at 0; the stationary state
# the analysis describes is reached cell by cell. Couple a cell that
# started at 0 with one drawn from the stationary distribution, under the
# same sets and decrements: a set (to Max) makes them equal, and so do Max
# decrements (both are then 0). So after W lines they differ with
# probability at most min(exp(-K W / m), P(Poisson(P W / m) < Max)). With
# W = m min(12 / K, 30 / P) that is below 6e-6 (Max = 7: P(Poisson(30) < 7)
# is 2e-7), and the fps of the lines after W is the stationary one to a
# relative 1e-4, far inside one standard deviation.
#
# Standard deviation. The lines' answers are not quite independent: the
# zero fraction fluctuates by about sqrt(V0 (1 - V0) / m) with a correlation
# time of about m / (K + P / Max) lines, which adds about
# 2 K^2 fps V0 / ((1 - V0) (K + P / Max)) to the binomial variance: 2%
# for the chooser's --fp 0.01 shape (K = 1, P = 696), 18% for --fp 0.05
# (K = 4, P = 42), the binomial deviation understating the real one by
# 1% and 8%. The check uses the binomial deviation, as every other rate
# check of ebb does.

fp_case() {
    local name=$1 lines=$2
    shift 2
    local input="$WORK/$name.in"
    "$GEN" --mode gaps --probes 0 --lines "$lines" --seed 3 >"$input"
    "$EBB" params --stable "$@" --json >"$WORK/$name.json"
    check "$name: params exit 0" equals "$?" 0
    local m k p fps warm
    m=$(json_scalar "$WORK/$name.json" cells)
    k=$(json_scalar "$WORK/$name.json" k)
    p=$(json_scalar "$WORK/$name.json" p)
    fps=$(json_scalar "$WORK/$name.json" fps)
    warm=$(awk -v m="$m" -v k="$k" -v p="$p" 'BEGIN {
        w = 12 / k; if (30 / p < w) w = 30 / p; printf "%d", m * w + 1 }')
    "$EBB" dedup --stable "$@" --invert --stats "$input" \
        >"$WORK/$name.dropped" 2>"$WORK/$name.stats"
    check "$name: dedup exit 0" equals "$?" 0
    local dropped printed
    dropped=$(wc -l <"$WORK/$name.dropped")
    if [ "$lines" -le 1000000 ]; then # once is enough
        "$EBB" dedup --stable "$@" "$input" >"$WORK/$name.printed"
        printed=$(wc -l <"$WORK/$name.printed")
        check "$name: printed + dropped = lines" \
            equals "$((printed + dropped))" "$lines"
    fi
    check "$name: --stats duplicates = lines --invert printed" \
        equals "$(stat_value "$WORK/$name.stats" duplicates)" "$dropped"
    check "$name: --stats lines written (--invert) = duplicates" \
        equals "$(stat_value "$WORK/$name.stats" 'lines written')" "$dropped"
    check "$name: --stats lines read" \
        equals "$(stat_value "$WORK/$name.stats" 'lines read')" "$lines"
    check "$name: --stats shape = params'" \
        equals "$(stat_value "$WORK/$name.stats" cells) $(stat_value "$WORK/$name.stats" k) $(stat_value "$WORK/$name.stats" p)" \
            "$m $k $p"
    check "$name: --stats fps = params' (the same analysis)" \
        equals "$(stat_value "$WORK/$name.stats" fps)" "$fps"
    # Line n is user<n - 1>: the lines after the warm-up are ids >= warm.
    local late
    late=$(awk -v w="$warm" '{ id = substr($1, 5) + 0; if (id >= w) n++ }
        END { print n + 0 }' "$WORK/$name.dropped")
    echo "--- $name: m $m, K $k, P $p, warm-up $warm lines, fps $fps" >&2
    check "$name: false positives after the warm-up within 3 sd of fps" \
        within_sd "$late" "$((lines - warm))" "$fps"
}

fp_case fp-chosen 2000000 --memory 64K --fp 0.01
fp_case fp-independent 1000000 --memory 64K --fp 0.05 --draw independent

# ------------------------------------------------------------------------
# False negatives by importance at an exact gap
# ------------------------------------------------------------------------
#
# Probes (2% of the lines, half of them important) repeat exactly G lines
# later; every other line is new, important with probability 1/2, so the
# levels set are half Max and half Half, the distribution
# `ebb params --importance-classes 2` assumes by default. Within the G
# lines between a probe and its repeat every other key occurs at most
# once, so the sets that may refresh the probe's cells are independent of
# them, as in the analysis; an important probe's cells start at Max
# whatever they held, so its rate is exact. An unimportant one starts at
# max(cell, Half), and the cell's earlier history is slightly coloured by
# other probes' pairs of sets (a perturbation of the order of the probe
# fraction; measured well inside one sd). The repeats counted are those
# after the warm-up of 300000 lines (m max(12 / K, 30 / P) = 209715).

shape=(--cells 174762 --cell-bits 3 --k 10 --p 51)
gap=6000
warm=300000
"$GEN" --mode gaps --gap "$gap" --probes 2 --lines 2000000 --seed 5 |
    awk '{ print NR, $0 }' >"$WORK/gaps.in"
awk -v w="$warm" '$1 > w && $4 == "repeat"' "$WORK/gaps.in" >"$WORK/repeats.in"
importance=(--key-field 2 --importance-field 3 --importance-range 0:1)

# fn_case <name> <params variant options> -- <dedup variant options>:
# leaves "<class> <missed> <repeats>" lines in $WORK/<name>.fn, the
# classes "important" (importance > 0.5) and "unimportant".
fn_run() {
    local name=$1
    shift
    "$EBB" dedup --stable "${run_shape[@]}" "${importance[@]}" "$@" --stats \
        "$WORK/gaps.in" >"$WORK/$name.out" 2>"$WORK/$name.stats"
    check "$name: dedup exit 0" equals "$?" 0
    check "$name: printed + duplicates = lines" \
        equals "$(($(wc -l <"$WORK/$name.out") + \
                   $(stat_value "$WORK/$name.stats" duplicates)))" 2000000
    grep ' repeat$' "$WORK/$name.out" >"$WORK/$name.repeats"
    awk 'NR == FNR { printed[$1] = 1; next }
        {
            c = $3 > 0.75 ? "high" : ($3 > 0.5 ? "important" : ($3 >= 0.25 ? "unimportant" : "low"))
            n[c]++; if ($1 in printed) missed[c]++
        }
        END {
            print "important", missed["important"] + missed["high"] + 0,
                n["important"] + n["high"]
            print "unimportant", missed["unimportant"] + missed["low"] + 0,
                n["unimportant"] + n["low"]
            print "high", missed["high"] + 0, n["high"] + 0
            print "low", missed["low"] + 0, n["low"] + 0
        }' "$WORK/$name.repeats" "$WORK/repeats.in" >"$WORK/$name.fn"
}

fn_value() { # <file> <class> <field 2 or 3>
    awk -v c="$2" -v f="$3" '$1 == c { print $f }' "$1"
}

# apart <file> <lower class> <higher class>: the higher class's miss rate
# exceeds the lower's by more than three sd of the difference.
apart() {
    awk -v lo="$2" -v hi="$3" '
        { x[$1] = $2; n[$1] = $3 }
        END {
            a = x[lo] / n[lo]; b = x[hi] / n[hi]
            sd = sqrt(a * (1 - a) / n[lo] + b * (1 - b) / n[hi])
            printf "    %s %.5f (%d), %s %.5f (%d): %.1f sd apart\n",
                lo, a, n[lo], hi, b, n[hi], (b - a) / sd
            exit !(n[lo] > 0 && n[hi] > 0 && b - a > 3 * sd)
        }' "$1" >&2
}

run_shape=("${shape[@]}")
fn_run fn-2c --importance-classes 2 --important-above 0.5
"$EBB" params --stable "${shape[@]}" --importance-classes 2 --gap "$gap" \
    --json >"$WORK/fn-2c.json"
echo "--- fn-2c: IBF-2C, gap $gap" >&2
for class in important unimportant; do
    check "fn-2c: $class repeats missed within 3 sd of the analysis" \
        within_sd "$(fn_value "$WORK/fn-2c.fn" "$class" 2)" \
            "$(fn_value "$WORK/fn-2c.fn" "$class" 3)" \
            "$(json_fn "$WORK/fn-2c.json" "$class" "$gap")"
done
check "fn-2c: the analysis misses important lines less often" \
    awk -v a="$(json_fn "$WORK/fn-2c.json" important "$gap")" \
        -v b="$(json_fn "$WORK/fn-2c.json" unimportant "$gap")" \
        'BEGIN { exit !(a < b) }'
check "fn-2c: important lines missed less often, by more than 3 sd" \
    apart "$WORK/fn-2c.fn" important unimportant

# IBF-MC and IBF-H: lines of importance above 0.75 (levels 6 and 7) are
# missed less often than those below 0.25 (levels 1 and 2). IBF-H spends
# all P decrements on non-zero cells, so it forgets far faster at the same
# P: P = 10 puts its rates at this gap near those of IBF-MC at P = 51
# (`ebb params --decrement weighted --gap 6000`: 0.65, 0.02 and 6e-6 for
# levels 1, 4 and 7).
fn_run fn-mc
echo "--- fn-mc: IBF-MC, gap $gap" >&2
check "fn-mc: high importance missed less often, by more than 3 sd" \
    apart "$WORK/fn-mc.fn" high low
run_shape=(--cells 174762 --cell-bits 3 --k 10 --p 10)
fn_run fn-h --decrement weighted
echo "--- fn-h: IBF-H, gap $gap" >&2
check "fn-h: high importance missed less often, by more than 3 sd" \
    apart "$WORK/fn-h.fn" high low
check "fn-mc: --stats variant" \
    equals "$(stat_value "$WORK/fn-mc.stats" variant)" ibf-mc
check "fn-h: --stats variant" \
    equals "$(stat_value "$WORK/fn-h.stats" variant)" ibf-h
check "fn-2c: --stats important above" \
    equals "$(stat_value "$WORK/fn-2c.stats" 'important above')" 0.5

# ------------------------------------------------------------------------
# Malformed and refused importance fields
# ------------------------------------------------------------------------

printf 'a 0.5\nb x\nc\nd 7\na 0.9\ne -3\n' >"$WORK/bad.in"
base=(dedup --stable --memory 4K --importance-field 2 --importance-range 0:1)
run_capture "$WORK/bad" "$WORK/bad.in" "$EBB" "${base[@]}"
check "bad importance: exit 1" equals "$status" 1
check "bad importance: the message names the line" \
    stderr_is "$WORK/bad.err" \
    "ebb dedup: standard input: line 2: cannot parse importance field 2 'x' as a number"
check "bad importance: the lines before it answered" \
    equals "$(cat "$WORK/bad.out")" "a 0.5"
printf 'a 0.5\nc\n' >"$WORK/missing.in"
run_capture "$WORK/missing" "$WORK/missing.in" "$EBB" "${base[@]}"
check "missing importance: exit 1" equals "$status" 1
check "missing importance: the message" stderr_is "$WORK/missing.err" \
    "ebb dedup: standard input: line 2: no importance field 2 (the line has 1 field)"
printf 'a 0.5\nd 7\n' >"$WORK/range.in"
run_capture "$WORK/range" "$WORK/range.in" "$EBB" "${base[@]}" \
    --importance-out-of-range refuse
check "refused importance: exit 1" equals "$status" 1
check "refused importance: the message" stderr_is "$WORK/range.err" \
    "ebb dedup: standard input: line 2: importance field 2 '7' is outside the importance range 0:1 (--importance-out-of-range refuse)"

run_capture "$WORK/skip" "$WORK/bad.in" "$EBB" "${base[@]}" --skip-bad --stats
check "--skip-bad: exit 0" equals "$status" 0
check "--skip-bad: bad lines written, clamped ones remembered" \
    equals "$(cat "$WORK/skip.out")" $'a 0.5\nb x\nc\nd 7\ne -3'
check "--skip-bad: two bad lines" equals "$(stat_value "$WORK/skip.err" 'bad lines')" 2
check "--skip-bad: two clamped" equals "$(stat_value "$WORK/skip.err" clamped)" 2
check "--skip-bad: none refused" equals "$(stat_value "$WORK/skip.err" refused)" 0
run_capture "$WORK/skip-refuse" "$WORK/bad.in" "$EBB" "${base[@]}" --skip-bad \
    --importance-out-of-range refuse --stats
check "--skip-bad refuse: exit 0" equals "$status" 0
check "--skip-bad refuse: refused lines written, not remembered" \
    equals "$(cat "$WORK/skip-refuse.out")" $'a 0.5\nb x\nc\nd 7\ne -3'
check "--skip-bad refuse: two refused" \
    equals "$(stat_value "$WORK/skip-refuse.err" refused)" 2
check "--skip-bad refuse: none clamped" \
    equals "$(stat_value "$WORK/skip-refuse.err" clamped)" 0
run_capture "$WORK/skip-invert" "$WORK/bad.in" "$EBB" "${base[@]}" --skip-bad \
    --invert --stats
check "--invert: only the repeat" equals "$(cat "$WORK/skip-invert.out")" "a 0.9"
check "--invert: lines written = duplicates" \
    equals "$(stat_value "$WORK/skip-invert.err" 'lines written')" \
        "$(stat_value "$WORK/skip-invert.err" duplicates)"
# The key is the line without the importance field.
printf 'x 0.1 y\nx 0.9 y\nx 0.5 z\n' >"$WORK/key.in"
"$EBB" "${base[@]}" "$WORK/key.in" >"$WORK/key.out"
check "the key is the line without the importance field" \
    equals "$(cat "$WORK/key.out")" $'x 0.1 y\nx 0.5 z'

# ------------------------------------------------------------------------
# --state
# ------------------------------------------------------------------------

head -n 400001 "$WORK/gaps.in" >"$WORK/part.in"
head -n 200003 "$WORK/part.in" >"$WORK/part.1"
tail -n +200004 "$WORK/part.in" >"$WORK/part.2"
# state_case <name> <reading options> <shape options...>: the reading
# options (one word list) go to both parts, the shape options only to the
# first (the second takes the shape from the state).
state_case() {
    local name=$1 reading=$2
    shift 2
    rm -f "$WORK/$name.whole.ebb" "$WORK/$name.parts.ebb"
    # shellcheck disable=SC2086
    "$EBB" dedup --stable "$@" $reading --state "$WORK/$name.whole.ebb" \
        "$WORK/part.in" >"$WORK/$name.whole.out"
    check "$name: whole run exit 0" equals "$?" 0
    # shellcheck disable=SC2086
    "$EBB" dedup --stable "$@" $reading --state "$WORK/$name.parts.ebb" \
        "$WORK/part.1" >"$WORK/$name.parts.out"
    check "$name: first part exit 0" equals "$?" 0
    # shellcheck disable=SC2086
    "$EBB" dedup $reading --state "$WORK/$name.parts.ebb" \
        "$WORK/part.2" >>"$WORK/$name.parts.out"
    check "$name: second part exit 0" equals "$?" 0
    check "$name: the same output in two parts" \
        same_file "$WORK/$name.whole.out" "$WORK/$name.parts.out"
    check "$name: the same state in two parts" \
        same_file "$WORK/$name.whole.ebb" "$WORK/$name.parts.ebb"
}
state_case plain "--key-field 2" --memory 16K --fp 0.05
state_case mc "--key-field 2 --importance-field 3" --memory 16K \
    --importance-range 0:1
state_case h-independent "--key-field 2 --importance-field 3" "${shape[@]}" \
    --draw independent --decrement weighted --importance-range 0:1

# One line at a time (standard output a terminal: `script` gives it a
# pseudo-terminal) and in batches of 256 (a pipe): the same answers and the
# same state, the random generator included.
head -n 20000 "$WORK/part.in" >"$WORK/tty.in"
for variant in "--memory 4K" "--memory 4K --importance-field 3 --importance-range 0:1" \
    "--cells 3000 --cell-bits 3 --k 4 --p 9 --draw independent --importance-field 3 --importance-range 0:1 --decrement weighted"; do
    rm -f "$WORK/tty.ebb" "$WORK/pipe.ebb"
    script -qec "'$EBB' dedup --stable $variant --key-field 2 --state '$WORK/tty.ebb' '$WORK/tty.in'" \
        /dev/null | tr -d '\r' >"$WORK/tty.out"
    # shellcheck disable=SC2086
    "$EBB" dedup --stable $variant --key-field 2 --state "$WORK/pipe.ebb" \
        "$WORK/tty.in" >"$WORK/pipe.out"
    check "$variant: one at a time = batched (output)" \
        same_file "$WORK/pipe.out" "$WORK/tty.out"
    check "$variant: one at a time = batched (state)" \
        same_file "$WORK/pipe.ebb" "$WORK/tty.ebb"
    check "$variant: some lines dropped" \
        test "$(wc -l <"$WORK/pipe.out")" -lt 20000
done

state="$WORK/mc.whole.ebb"
cp "$state" "$WORK/state.bak"
state_refused() { # <expected stderr> <exit> <dedup arguments...>
    local expected=$1 code=$2
    shift 2
    run_capture "$WORK/refused" "$WORK/part.2" "$EBB" dedup "$@"
    check "dedup $*: exit $code (got $status)" equals "$status" "$code"
    check "dedup $*: the message" stderr_is "$WORK/refused.err" "$expected"
    check "dedup $*: nothing written" test ! -s "$WORK/refused.out"
    check "dedup $*: the state untouched" same_file "$WORK/state.bak" "$state"
}
state_refused "ebb dedup: the state in '$state' is an importance-aware filter (ibf-mc): give --importance-field" \
    2 --state "$state"
state_refused "ebb dedup: --window 10 disagrees with the state in '$state' (a stable filter)" \
    2 --state "$state" --window 10 --importance-field 3
state_refused "ebb dedup: --importance-classes 2 disagrees with the state in '$state' (variant ibf-mc)" \
    2 --state "$state" --importance-field 3 --importance-classes 2
state_refused "ebb dedup: --decrement weighted disagrees with the state in '$state' (variant ibf-mc)" \
    2 --state "$state" --importance-field 3 --decrement weighted
state_refused "ebb dedup: --importance-range 0:2 disagrees with the state in '$state' (importance range 0:1)" \
    2 --state "$state" --importance-field 3 --importance-range 0:2
state_refused "ebb dedup: --draw independent disagrees with the state in '$state' (draw consecutive)" \
    2 --state "$state" --importance-field 3 --draw independent
state_refused "ebb dedup: --importance-out-of-range refuse disagrees with the state in '$state' (importance out of range: clamp)" \
    2 --state "$state" --importance-field 3 --importance-out-of-range refuse
mc_shape=$(awk '/^cells:/ { m = $2 } /^cell bits:/ { d = $3 } /^k:/ { k = $2 }
    /^p:/ { p = $2 } END { print m " cells of " d " bits, k " k ", p " p }' \
    <("$EBB" dedup --stable --memory 16K --importance-range 0:1 \
        --importance-field 3 --stats </dev/null 2>&1))
state_refused "ebb dedup: --memory 32K disagrees with the state in '$state' ($mc_shape)" \
    2 --state "$state" --importance-field 3 --memory 32K
state_refused "ebb dedup: --memory 16K --fp 0.2 disagrees with the state in '$state' ($mc_shape)" \
    2 --state "$state" --importance-field 3 --memory 16K --fp 0.2
"$EBB" dedup --state "$state" --importance-field 3 --key-field 2 --memory 16K \
    --fp 0.01 --stable "$WORK/part.2" >/dev/null
check "the creating options are accepted again" equals "$?" 0
cp "$WORK/state.bak" "$state"
# Another kind of state.
echo a | "$EBB" dedup --state "$WORK/count.ebb" >/dev/null
cp "$WORK/count.ebb" "$WORK/count.bak"
run_capture "$WORK/kind" "$WORK/part.2" "$EBB" dedup --stable --state "$WORK/count.ebb"
check "a count-window state with --stable: exit 2" equals "$status" 2
check "a count-window state with --stable: the message" stderr_is "$WORK/kind.err" \
    "ebb dedup: --stable disagrees with the state in '$WORK/count.ebb' (a count-window filter)"
check "a count-window state: untouched" same_file "$WORK/count.bak" "$WORK/count.ebb"
# Damaged states: exit 1, one line, nothing written, the file as it was.
head -c 1000 "$WORK/state.bak" >"$WORK/truncated.ebb"
cp "$WORK/state.bak" "$WORK/corrupt.ebb"
printf '\125' | dd of="$WORK/corrupt.ebb" bs=1 seek=5000 conv=notrunc 2>/dev/null
for damaged in truncated corrupt; do
    cp "$WORK/$damaged.ebb" "$WORK/$damaged.bak"
    run_capture "$WORK/$damaged" "$WORK/part.2" "$EBB" dedup --importance-field 3 \
        --state "$WORK/$damaged.ebb"
    check "$damaged state: exit 1" equals "$status" 1
    check "$damaged state: one line naming the file" \
        stderr_starts_with "$WORK/$damaged.err" "ebb dedup: $WORK/$damaged.ebb: "
    check "$damaged state: nothing written" test ! -s "$WORK/$damaged.out"
    check "$damaged state: the file untouched" \
        same_file "$WORK/$damaged.bak" "$WORK/$damaged.ebb"
done

if [ "$failures" -eq 0 ]; then
    rm -f "$WORK"/*.in "$WORK"/*.out "$WORK"/*.printed "$WORK"/*.dropped \
        "$WORK"/*.repeats "$WORK"/part.*
fi
finish
