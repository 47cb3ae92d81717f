#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# time_fields.sh EBB WORK_DIR
#
# ebb dedup --time-window on small inputs with known answers:
#   - each time format parses to the exact nanosecond (--stats 'latest ns'),
#     iso8601 dates against GNU date's, offsets applied, leap years, the
#     range limits of int64 nanoseconds;
#   - the window's edge to the nanosecond: a repeat exactly the span later
#     is dropped, one nanosecond later printed; clamped (out-of-order) times;
#   - keys: the line without its time field, --key-field;
#   - bad time or key fields: one message naming the input and line, exit
#     1, lines before it answered, no state saved; --skip-bad passes them
#     through and counts them;
#   - the arrival clock.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
WORK=$(absolute_path "$2")
fresh_dir "$WORK"

# latest_ns <format> <line>: the time the filter remembers after one line.
latest_ns() {
    printf '%s a\n' "$2" |
        "$EBB" dedup --time-window 1s --time-field 1 --time-format "$1" \
            --stats 2>&1 >/dev/null | awk -F': ' '$1 == "latest ns" { print $2 }'
}

# expect_time <format> <timestamp> <nanoseconds>
expect_time() {
    check "$1 '$2' is $3 ns" equals "$(latest_ns "$1" "$2")" "$3"
}

# --- epoch and epoch-ms ---------------------------------------------------
expect_time epoch 0 0
expect_time epoch 1709294400 1709294400000000000
expect_time epoch 1709294400.5 1709294400500000000
expect_time epoch 1709294400.123456789 1709294400123456789
expect_time epoch 1709294400.000000001 1709294400000000001
expect_time epoch 0001709294400.10 1709294400100000000
expect_time epoch 9223372036.854775807 9223372036854775807
expect_time epoch-ms 0 0
expect_time epoch-ms 1709294400123 1709294400123000000
expect_time epoch-ms 9223372036854 9223372036854000000

# --- iso8601 ---------------------------------------------------------------
expect_time iso8601 2024-03-01T12:34:56Z 1709296496000000000
expect_time iso8601 2024-03-01t12:34:56z 1709296496000000000
expect_time iso8601 2024-03-01T12:34:56 1709296496000000000
expect_time iso8601 2024-03-01T12:34:56+00:00 1709296496000000000
expect_time iso8601 2024-03-01T12:34:56-00:00 1709296496000000000
expect_time iso8601 2024-03-01T12:34:56.123456789+02:00 1709289296123456789
expect_time iso8601 2024-03-01T12:34:56.1+0530 1709276696100000000
expect_time iso8601 2024-03-01T12:34:56.000001-03 1709307296000001000
expect_time iso8601 2024-03-01T00:00:00-23:59 1709337540000000000
expect_time iso8601 1970-01-01T00:00:00Z 0
expect_time iso8601 1969-12-31T23:59:59.999999999Z -1
expect_time iso8601 2016-12-31T23:59:60Z 1483228800000000000
expect_time iso8601 2262-04-11T23:47:16.854775807Z 9223372036854775807
expect_time iso8601 1677-09-21T00:12:44Z -9223372036000000000
# The space form: the date and the time of day are two fields.
expect_time iso8601 '2024-03-01 12:34:56.5Z' 1709296496500000000
expect_time iso8601 "$(printf '2024-03-01\t \t12:34:56+01:00')" 1709292896000000000

# Calendar arithmetic against GNU date on the days that trip it up: month
# ends, leap days of leap years, century years that are not leap years
# (1700, 1800, 1900, 2100, 2200) and one that is (2000).
for day in 1678-01-01 1699-12-31 1700-02-28 1700-03-01 1800-03-01 \
           1899-12-31 1900-02-28 1900-03-01 1969-12-31 1970-01-01 \
           1972-02-29 1999-12-31 2000-02-28 2000-02-29 2000-03-01 \
           2000-12-31 2001-01-01 2023-02-28 2023-03-01 2024-02-29 \
           2024-12-31 2038-01-19 2100-02-28 2100-03-01 2200-03-01 \
           2261-12-31; do
    seconds=$(date -u -d "${day}T12:00:00Z" +%s)
    expect_time iso8601 "${day}T12:00:00Z" "${seconds}000000000"
done

# --- The edge of the span, to the nanosecond ------------------------------
# dedup_case <name> <expected stdout> <input> <dedup options...>
dedup_case() {
    local name=$1 expected=$2 input=$3
    shift 3
    printf '%s' "$input" >"$WORK/$name.in"
    printf '%s' "$expected" >"$WORK/$name.expected"
    run_capture "$WORK/$name" "$WORK/$name.in" "$EBB" dedup "$@"
    check "$name: exit 0 (got $status)" equals "$status" 0
    check "$name: output" same_file "$WORK/$name.expected" "$WORK/$name.out"
    check "$name: nothing on stderr" test ! -s "$WORK/$name.err"
}
dedup_case epoch-edge $'100 a\n102.000000001 a\n103.000000001 b\n' \
    $'100 a\n101 a\n102.000000001 a\n103.000000001 b\n104.000000001 b\n' \
    --time-window 1s --time-field 1
dedup_case epoch-ms-edge $'1000 a\n3001 a\n' $'1000 a\n2000 a\n3001 a\n' \
    --time-window 1s --time-field 1 --time-format epoch-ms
# Offsets: 12:00:00+02:00 is 10:00:00Z; the same instant written three ways
# and one nanosecond past a one-second span.
dedup_case iso-edge \
    $'2024-03-01T12:00:00+02:00 a\n2024-03-01T10:00:02.000000001Z a\n' \
    $'2024-03-01T12:00:00+02:00 a\n2024-03-01T10:00:01Z a\n2024-03-01T05:00:01-05:00 a\n2024-03-01T10:00:02.000000001Z a\n' \
    --time-window 1s --time-field 1 --time-format iso8601
# Across a leap day: 2024-02-28T12:00 to 2024-03-01T12:00 is two days (the
# repeat of a is dropped, b's one nanosecond later is printed); 2023's is one.
dedup_case leap-day \
    $'2024-02-28T12:00:00Z a\n2024-02-28T12:00:00.000000001Z b\n2024-03-01T12:00:00.000000002Z b\n' \
    $'2024-02-28T12:00:00Z a\n2024-02-28T12:00:00.000000001Z b\n2024-03-01T12:00:00Z a\n2024-03-01T12:00:00.000000002Z b\n' \
    --time-window 2d --time-field 1 --time-format iso8601
dedup_case no-leap-day \
    $'2023-02-28T12:00:00Z a\n2023-03-01T12:00:00.000000001Z a\n' \
    $'2023-02-28T12:00:00Z a\n2023-03-01T12:00:00.000000001Z a\n' \
    --time-window 1d --time-field 1 --time-format iso8601
# Clamping: a time earlier than the latest counts as the latest, so the
# late "c" at 90 is at 200, and its repeat at 200.5 is within the span.
dedup_case clamped $'100 a\n200 b\n90 c\n' \
    $'100 a\n200 b\n90 c\n200.5 c\n95 b\n' \
    --time-window 1s --time-field 1
run_capture "$WORK/clamped-stats" "$WORK/clamped.in" "$EBB" dedup \
    --time-window 1s --time-field 1 --stats
check "clamped: two times clamped" \
    equals "$(stat_value "$WORK/clamped-stats.err" clamped)" 2
check "clamped: latest ns 200.5 s" \
    equals "$(stat_value "$WORK/clamped-stats.err" 'latest ns')" 200500000000
check "clamped: no bad lines" \
    equals "$(stat_value "$WORK/clamped-stats.err" 'bad lines')" 0
# An idle gap longer than the span forgets everything; the window is per key.
dedup_case idle $'0 a\n0 b\n100 a\n100 b\n' \
    $'0 a\n0 b\n0.5 a\n100 a\n100 b\n100.9 b\n' \
    --time-window 1s --time-field 1

# --- Keys -----------------------------------------------------------------
# The key is the line without its time field: separators stay, so "\ta" and
# " a" differ; with --key-field it is that field alone. The time may be any
# field.
dedup_case key-cut $'100 a\n101\ta\n103 a b\n103 a  b\n' \
    $'100 a\n101 a\n101\ta\n102\ta\n103 a b\n103 a  b\n' \
    --time-window 10s --time-field 1
dedup_case key-cut-space-form \
    $'2024-03-01 12:00:00Z a\n' \
    $'2024-03-01 12:00:00Z a\n2024-03-01T12:00:01Z a\n2024-03-01 12:00:02Z a\n' \
    --time-window 10s --time-field 1 --time-format iso8601
dedup_case time-field-2 $'GET 100 /a\nGET 101 /b\nPOST 102 /a\n' \
    $'GET 100 /a\nGET 101 /b\nGET 102 /a\nPOST 102 /a\n' \
    --time-window 10s --time-field 2
dedup_case key-field-time $'100 alice x\n101 bob x\n' \
    $'100 alice x\n101 bob x\n102 alice y\n' \
    --time-window 10s --time-field 1 --key-field 2
dedup_case key-field-count $'alice 1\nbob 1\n' \
    $'alice 1\nbob 1\nalice 2\n' --key-field 1
dedup_case key-field-count-invert $'alice 2\n' \
    $'alice 1\nbob 1\nalice 2\n' --key-field 1 --invert

# --- Bad fields -------------------------------------------------------------
# bad_case <name> <format> <expected stderr> <expected stdout> <input> [options]
bad_case() {
    local name=$1 format=$2 expected=$3 output=$4 input=$5
    shift 5
    printf '%s' "$input" >"$WORK/$name.in"
    printf '%s' "$output" >"$WORK/$name.expected"
    run_capture "$WORK/$name" /dev/null "$EBB" dedup --time-window 1s \
        --time-field 1 --time-format "$format" "$@" "$WORK/$name.in"
    check "$name: exit 1 (got $status)" equals "$status" 1
    check "$name: the one message" stderr_is "$WORK/$name.err" \
        "ebb dedup: $WORK/$name.in: $expected"
    check "$name: the lines before it answered" \
        same_file "$WORK/$name.expected" "$WORK/$name.out"
}
cannot() { printf "line %s: cannot parse time field %s '%s' as %s" "$@"; }
bad_case epoch-word epoch "$(cannot 3 1 xx epoch)" $'100 a\n101 b\n' \
    $'100 a\n101 b\nxx c\n102 d\n'
for text in -5 +5 1e9 1. .5 1,5 0x10 1.0000000001 12:00; do
    bad_case "epoch-$text" epoch "$(cannot 2 1 "$text" epoch)" $'100 a\n' \
        "100 a"$'\n'"$text a"$'\n'
done
for text in 1.5 -1 1e3 1709294400123x; do
    bad_case "epoch-ms-$text" epoch-ms "$(cannot 1 1 "$text" epoch-ms)" '' \
        "$text a"$'\n'
done
for text in 2023-02-29T00:00:00Z 1900-02-29T00:00:00Z 2024-13-01T00:00:00Z \
            2024-00-10T00:00:00Z 2024-04-31T00:00:00Z 2024-03-01T24:00:00Z \
            2024-03-01T12:60:00Z 2024-03-01T12:00:61Z 2024-03-01T12:00:00.Z \
            2024-03-01T12:00:00.1234567890Z 2024-03-01T12:00:00+24:00 \
            2024-03-01T12:00:00+05:60 2024-03-01T12:00:00+5 \
            2024-03-01T12:00:00+05:3 2024-03-01T12:00:00Zx 2024-3-01T12:00:00Z \
            2024-03-01T12:00Z 2024-03-01X12:00:00Z 20240301T120000Z \
            2024-03-01T12:00:00,5Z; do
    bad_case "iso-$text" iso8601 "$(cannot 1 1 "$text" iso8601)" '' \
        "$text a"$'\n'
done
# A date alone, then something that is not a time of day: the message
# shows both fields and what separates them.
bad_case iso-space-bad iso8601 "$(cannot 1 1 '2024-03-01 noon' iso8601)" '' \
    $'2024-03-01 noon a\n'
bad_case iso-date-last iso8601 "$(cannot 1 2 2024-03-01 iso8601)" '' \
    $'x 2024-03-01\n' --time-field 2
range() { printf "line %s: time field %s '%s' is out of range for %s (years 1677 to 2262)" "$@"; }
bad_case epoch-range epoch "$(range 1 1 9223372036.854775808 epoch)" '' \
    $'9223372036.854775808 a\n'
bad_case epoch-huge epoch "$(range 1 1 99999999999999999999999 epoch)" '' \
    $'99999999999999999999999 a\n'
bad_case epoch-ms-range epoch-ms "$(range 1 1 9223372036855 epoch-ms)" '' \
    $'9223372036855 a\n'
bad_case iso-range-high iso8601 \
    "$(range 1 1 2262-04-11T23:47:16.854775808Z iso8601)" '' \
    $'2262-04-11T23:47:16.854775808Z a\n'
bad_case iso-range-low iso8601 \
    "$(range 1 1 1677-09-21T00:12:43.999999999Z iso8601)" '' \
    $'1677-09-21T00:12:43.999999999Z a\n'
bad_case missing epoch "line 2: no time field 1 (the line has 0 fields)" \
    $'100 a\n' $'100 a\n\n'
bad_case missing-3 epoch "line 1: no time field 3 (the line has 2 fields)" '' \
    $'100 a\n' --time-field 3
bad_case missing-1-field epoch "line 1: no time field 2 (the line has 1 field)" \
    '' $'100\n' --time-field 2
bad_case missing-key epoch "line 2: no key field 3 (the line has 2 fields)" \
    $'100 a b\n' $'100 a b\n101 a\n' --key-field 3
# Bytes that are not printable are shown as \xHH, and a long field is cut.
bad_case quoted epoch "$(cannot 1 1 "1\\x27\\x01\\x5c\\xff" epoch)" '' \
    "$(printf '1\047\001\134\377 a\n')"
long=$(head -c 100 /dev/zero | tr '\0' 7)x
bad_case long epoch "$(cannot 1 1 "${long:0:64}..." epoch)" '' "$long a"$'\n'

# Line numbers count within each input; a failed run saves no state.
printf '100 a\n101 b\n' >"$WORK/good.in"
printf '102 a\nbad b\n' >"$WORK/second.in"
run_capture "$WORK/second" "$WORK/good.in" "$EBB" dedup --time-window 10s \
    --time-field 1 --state "$WORK/never.state" - "$WORK/second.in"
check "second input: exit 1" equals "$status" 1
check "second input: names the file and its line" stderr_is "$WORK/second.err" \
    "ebb dedup: $WORK/second.in: $(cannot 2 1 bad epoch)"
check "second input: the earlier lines answered" \
    equals "$(cat "$WORK/second.out")" $'100 a\n101 b'
check "second input: no state saved" test ! -e "$WORK/never.state"
run_capture "$WORK/stdin-bad" "$WORK/second.in" "$EBB" dedup --time-window 10s \
    --time-field 1
check "standard input is named" stderr_is "$WORK/stdin-bad.err" \
    "ebb dedup: standard input: $(cannot 2 1 bad epoch)"

# --skip-bad: bad lines are written (not with --invert), not remembered,
# and counted.
skip_in=$'100 a\nxx a\n100.5 a\n\n2024 b\nxx a\n101 c\n'
dedup_case skip-bad $'100 a\nxx a\n\n2024 b\nxx a\n101 c\n' "$skip_in" \
    --time-window 10s --time-field 1 --skip-bad
dedup_case skip-bad-invert $'100.5 a\n' "$skip_in" \
    --time-window 10s --time-field 1 --skip-bad --invert
run_capture "$WORK/skip-stats" "$WORK/skip-bad.in" "$EBB" dedup \
    --time-window 10s --time-field 1 --skip-bad --stats
check "skip-bad: three bad lines counted" \
    equals "$(stat_value "$WORK/skip-stats.err" 'bad lines')" 3
check "skip-bad: lines read" \
    equals "$(stat_value "$WORK/skip-stats.err" 'lines read')" 7
check "skip-bad: lines written" \
    equals "$(stat_value "$WORK/skip-stats.err" 'lines written')" 6
check "skip-bad: 101 c was clamped" \
    equals "$(stat_value "$WORK/skip-stats.err" clamped)" 1
dedup_case skip-bad-key $'1 alice\nbob\n' $'1 alice\nbob\n2 alice\n' \
    --key-field 2 --skip-bad
run_capture "$WORK/skip-count-stats" "$WORK/skip-bad-key.in" "$EBB" dedup \
    --key-field 2 --skip-bad --stats
check "count window with --skip-bad: bad lines counted" \
    equals "$(stat_value "$WORK/skip-count-stats.err" 'bad lines')" 1
check "count window with --skip-bad: the eight lines and the layout's four" \
    equals "$(wc -l <"$WORK/skip-count-stats.err")" 12

# --- --stats of a time window -------------------------------------------
run_capture "$WORK/stats" "$WORK/clamped.in" "$EBB" dedup --time-window 90m \
    --time-field 1 --fp 0.001 --stats
check "stats: the fourteen lines in order" \
    equals "$(cut -d: -f1 "$WORK/stats.err" | tr '\n' ,)" \
        "lines read,lines written,k,l,span,slices,memory bytes,fp,current fp,clamped,refused,evicted slices,bad lines,latest ns,"
check "stats: span in the largest exact unit" \
    equals "$(stat_value "$WORK/stats.err" span)" 90m
check "stats: fp is the target" equals "$(stat_value "$WORK/stats.err" fp)" 0.001
check "stats: refused 0" equals "$(stat_value "$WORK/stats.err" refused)" 0
"$EBB" dedup --time-window 1s --stats </dev/null 2>"$WORK/empty.stats"
check "stats: no line, no latest time" \
    equals "$(stat_value "$WORK/empty.stats" 'latest ns')" none

# --- The arrival clock ------------------------------------------------------
printf 'a\nb\na\n' >"$WORK/arrival.in"
run_capture "$WORK/arrival" "$WORK/arrival.in" "$EBB" dedup --time-window 1h \
    --stats
check "arrival clock: a repeat within the hour is dropped" \
    equals "$(cat "$WORK/arrival.out")" $'a\nb'
now_s=$(date +%s)
latest=$(stat_value "$WORK/arrival.err" 'latest ns')
check "arrival clock: the latest time is the wall clock" \
    test "$(( latest / 1000000000 - now_s ))" -le 5 -a \
         "$(( now_s - latest / 1000000000 ))" -le 5
# The clock is read as each line is read, whatever the batching: a repeat
# 300 ms later is beyond a 100 ms window.
{ echo a; sleep 0.3; echo a; } |
    "$EBB" dedup --time-window 100ms >"$WORK/arrival-slow.out"
check "arrival clock: a repeat after the window is printed" \
    equals "$(cat "$WORK/arrival-slow.out")" $'a\na'

finish
