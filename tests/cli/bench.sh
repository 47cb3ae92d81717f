#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench.sh EBB WORK_DIR
#
# Smoke test of `ebb bench` at a tiny window (a few seconds, also under the
# sanitizers): --json prints one JSON array whose objects carry every
# required key with consistent values, the tables print a `target met` line
# for every target of issues 2, 3, 4, 12, 13 and 14, and bad command lines exit 2 with
# one line on stderr. The speeds themselves are not asserted: they belong to
# the machine (docs/bench.md); their arithmetic is.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
WORK=$(absolute_path "$2")
fresh_dir "$WORK"

WINDOW=3000
# Objects per (window, fp): APBF default, TLBF, APBF fast and APBBF b=8
# with 4 rows each (add, contains; single, batch), libbloom with 2 (no
# batch calls); at fp 1% also APBBF b=auto (4), the stable filter, drawn
# consecutive and independent, with 6 each (test_and_add too), and the BTBF
# with 6 (add and contains, single and batch; infer and infer_prior, single), the spectral
# filters MS, MI and RM with 4 each (add, estimate; single, batch) and the
# GHashTable exact count with 2 (no batch calls).
EXPECTED_ROWS=$(((4 * 4 + 2) + (4 * 4 + 2 + 4 + 2 * 6 + 6 + 3 * 4 + 2)))
# Targets: issue 2 (2 shapes x 2 ops x 2 call styles), issue 3 at 1e6
# (4 shapes x 2 x 2) and at 1e8 (2), issue 4 (2 fps x 2 x 2), issue 12 (3),
# issue 13 (the posterior query at 1e6 and 1e8), issue 14 (MS add and
# estimate, single and batch, at 1e6 and 1e8).
EXPECTED_TARGETS=$((8 + 16 + 2 + 8 + 3 + 2 + 8))

run_capture "$WORK/json" /dev/null "$EBB" bench --json --window "$WINDOW" --runs 1
check "bench --json: exit status 0 (got $status)" equals "$status" 0
check "bench --json: nothing on stderr" test ! -s "$WORK/json.err"

# The array: '[' first, ']' last, one object per line in between.
json_shape() {
    awk -v expected="$EXPECTED_ROWS" '
        NR == 1 && $0 != "[" { print "first line is not [" > "/dev/stderr"; bad = 1 }
        /^  \{/ { rows++; if ($0 !~ /\},?$/) { print "unclosed object: " $0 > "/dev/stderr"; bad = 1 } }
        { last = $0 }
        END {
            if (last != "]") { print "last line is not ]" > "/dev/stderr"; bad = 1 }
            if (rows != expected) { print rows " objects, expected " expected > "/dev/stderr"; bad = 1 }
            exit bad
        }' "$1"
}
check "bench --json: an array of $EXPECTED_ROWS objects" json_shape "$WORK/json.out"

# Every object: the required keys with numbers (not null) that agree with
# each other: mops = 1000 / ns_per_op, ceiling_fraction = ops/s x lines /
# ceiling, lines_per_op = k for an add, the window asked for, fp 1e-2 or
# 1e-4, bits per item = memory x 8 / window.
json_rows_consistent() {
    awk -v window="$WINDOW" '
        function value(key,    start, rest) {
            start = index($0, "\"" key "\": ")
            if (start == 0) { missing = missing " " key; return "" }
            rest = substr($0, start + length(key) + 4)
            sub(/[,}].*$/, "", rest)
            return rest
        }
        function number(key,    v) {
            v = value(key)
            if (v !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) { missing = missing " " key "=" v; return 0 }
            return v + 0
        }
        function near(a, b) { return (a - b) <= 1e-3 * b && (b - a) <= 1e-3 * b }
        /^  \{/ {
            missing = ""
            name = value("name")
            w = number("window"); fp = number("fp"); mops = number("mops")
            ns = number("ns_per_op"); bits = number("bits_per_item")
            lines = number("lines_per_op"); fraction = number("ceiling_fraction")
            ceiling = number("ceiling_lines_per_s"); memory = number("memory_bytes")
            k = number("k"); op = value("op"); batch = value("batch")
            source = value("lines_source")
            if (missing != "") { print name ": missing or null:" missing > "/dev/stderr"; bad = 1; next }
            if (w != window) { print name ": window " w > "/dev/stderr"; bad = 1 }
            if (fp != 0.01 && fp != 0.0001) { print name ": fp " fp > "/dev/stderr"; bad = 1 }
            if (op != "\"add\"" && op != "\"contains\"" && op != "\"test_and_add\"" &&
                op != "\"infer\"" && op != "\"infer_prior\"" && op != "\"estimate\"") {
                print name ": op " op > "/dev/stderr"; bad = 1 }
            if (batch != "true" && batch != "false") { print name ": batch " batch > "/dev/stderr"; bad = 1 }
            if (!(mops > 0) || !near(mops * ns, 1000)) { print name ": mops " mops " ns " ns > "/dev/stderr"; bad = 1 }
            if (!near(bits, memory * 8 / w)) { print name ": bits/item " bits > "/dev/stderr"; bad = 1 }
            if (!(lines >= 1)) { print name ": lines/op " lines > "/dev/stderr"; bad = 1 }
            if (op == "\"add\"" && source == "\"k\"" && lines != k) { print name ": add lines " lines " != k " k > "/dev/stderr"; bad = 1 }
            if (op != "\"contains\"" && op != "\"infer\"" && op != "\"infer_prior\"" &&
                op != "\"estimate\"" &&
                !(lines >= k)) { print name ": add lines " lines " < k " k > "/dev/stderr"; bad = 1 }
            if (!(ceiling > 0) || !near(fraction, mops * 1e6 * lines / ceiling)) {
                print name ": ceiling fraction " fraction > "/dev/stderr"; bad = 1 }
            seen[name " " fp]++
        }
        END {
            for (key in seen) if (seen[key] != 1) { print "repeated: " key > "/dev/stderr"; bad = 1 }
            exit bad
        }' "$1"
}
check "bench --json: every object has consistent required keys" \
    json_rows_consistent "$WORK/json.out"

# The tables: a verdict for every target, and the checks passed.
run_capture "$WORK/text" /dev/null "$EBB" bench --window "$WINDOW" --runs 1
check "bench: exit status 0 (got $status)" equals "$status" 0
check "bench: one 'target met' line per target" \
    equals "$(grep -c 'target met: \(yes\|no\)' "$WORK/text.out")" "$EXPECTED_TARGETS"
check "bench: the correctness checks passed" \
    grep -q '^all correctness checks passed' "$WORK/text.out"
check "bench: the ceiling probe is described" \
    grep -q 'ceiling [0-9.]* M lines/s over' "$WORK/text.out"

# Bad command lines.
expect_usage() {
    local expected=$1
    shift
    run_capture "$WORK/usage" /dev/null "$EBB" bench "$@"
    check "bench $*: exit status 2 (got $status)" equals "$status" 2
    check "bench $*: the one expected stderr line" stderr_is "$WORK/usage.err" "$expected"
    check "bench $*: nothing on stdout" test ! -s "$WORK/usage.out"
}
expect_usage "ebb bench: invalid --runs '0': must be an integer from 1 to 15" --runs 0
expect_usage "ebb bench: invalid --window '10': must be an integer from 1000 to 100000000" \
    --window 10
expect_usage "ebb bench: --quick and --full exclude each other" --quick --full
expect_usage "ebb bench: unknown option '--frob'" --frob
expect_usage "ebb bench: unexpected argument 'x'" x

run_capture "$WORK/help" /dev/null "$EBB" bench --help
check "bench --help: exit status 0" equals "$status" 0
check "bench --help: usage on stdout" grep -q '^Usage: ebb bench' "$WORK/help.out"

finish
