#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# count-bench.sh BUILD_DIR
#
# Issue 14's benchmark of `ebb count` against `sort | uniq -c` (make bench
# runs it after ebb-bench): the same 10 million Zipf-distributed lines
# (ebb-bench-zipf: ranks 1..10^6, skew 1.0, a fixed seed; ~762,000 distinct
# lines, 74 MB) counted by
#
#   sort FILE | uniq -c                                  the exact count
#   ebb count --method M --distinct 1000000 FILE         M = ms (the target), rm
#
# both under LC_ALL=C (sort's fastest comparison). Each is timed by
# /usr/bin/time (Debian's `time`): wall seconds and the peak resident set
# size, which for the pipeline is its largest process (sort). The target
# (issue 14): ebb count (ms) takes less wall time than the pipeline, in at
# most a tenth of its peak memory; `target met: yes/no`, never fatal.
#
# Checks (exit 1 when one fails): ebb count prints exactly the distinct
# lines of the input, and every count is at least the exact one; the
# error ratio (the share of distinct lines counted too high) and the mean
# additive error are printed beside --distinct's promised ratio (0.01).
#
# COUNT_BENCH_LINES and COUNT_BENCH_METHODS override the line count and the
# methods, for a quick look (the target is only judged at 10 million).
set -euo pipefail

if (($# != 1)); then
    echo "usage: count-bench.sh BUILD_DIR" >&2
    exit 2
fi
build=$1
ebb=$build/cli/ebb
zipf=$build/bench/ebb-bench-zipf
lines=${COUNT_BENCH_LINES:-10000000}
methods=${COUNT_BENCH_METHODS:-ms rm}
ranks=1000000
skew=1.0
seed=20261125
distinct=1000000
timer=/usr/bin/time

for tool in "$ebb" "$zipf" "$timer"; do
    if [[ ! -x $tool ]]; then
        echo "count-bench: $tool is missing (build the ebb and ebb_bench_zipf targets;" \
             "/usr/bin/time comes from Debian's time package)" >&2
        exit 2
    fi
done

export LC_ALL=C
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# calc EXPRESSION: awk's arithmetic (no bc needed).
calc() {
    awk "BEGIN { print $1 }"
}

# timed NAME COMMAND...: runs COMMAND under /usr/bin/time; sets seconds
# and peak_kb.
timed() {
    local name=$1
    shift
    "$timer" -f '%e %M' -o "$work/$name.time" "$@"
    read -r seconds peak_kb <"$work/$name.time"
}

echo
echo "== ebb count against sort | uniq -c (issue 14): $lines Zipf lines" \
     "(ranks $ranks, skew $skew, seed $seed)"
echo "   machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$zipf" "$lines" "$ranks" "$skew" "$seed" >"$work/lines.txt"
echo "   input: $(wc -c <"$work/lines.txt") bytes"

timed sort sh -c 'sort "$1" | uniq -c >"$2"' sh "$work/lines.txt" "$work/exact.txt"
sort_seconds=$seconds
sort_kb=$peak_kb
exact_lines=$(wc -l <"$work/exact.txt")
printf '   %-44s %8.2f s %10.1f MB peak  %d distinct lines\n' \
    "sort | uniq -c" "$sort_seconds" "$(calc "$sort_kb / 1000")" "$exact_lines"

failures=0
for method in $methods; do
    timed "ebb-$method" "$ebb" count --method "$method" --distinct "$distinct" \
        "$work/lines.txt" >"$work/ebb-$method.txt"
    ebb_seconds=$seconds
    ebb_kb=$peak_kb
    # The exact counts ("  count line"), then ebb's ("count<TAB>line").
    verdict=$(awk -v exact_lines="$exact_lines" '
        NR == FNR { count = $1; sub(/^ *[0-9]+ /, ""); exact[$0] = count; next }
        {
            tab = index($0, "\t")
            count = substr($0, 1, tab - 1) + 0
            line = substr($0, tab + 1)
            if (!(line in exact)) { unknown++; next }
            if (line in seen) { repeated++; next }
            seen[line] = 1
            reported++
            if (count < exact[line]) below++
            if (count > exact[line]) { over++; excess += count - exact[line] }
        }
        END {
            printf "%d %d %d %d %d %.6f %.4f\n", reported, unknown + 0, repeated + 0,
                   below + 0, over + 0, reported ? over / reported : 0,
                   reported ? excess / reported : 0
        }' "$work/exact.txt" "$work/ebb-$method.txt")
    read -r reported unknown repeated below over ratio additive <<<"$verdict"
    printf '   %-44s %8.2f s %10.1f MB peak  error ratio %s, mean additive error %s\n' \
        "ebb count --method $method --distinct $distinct" "$ebb_seconds" \
        "$(calc "$ebb_kb / 1000")" "$ratio" "$additive"
    if ((reported != exact_lines || unknown != 0 || repeated != 0 || below != 0)); then
        echo "  check FAILED: ebb count --method $method: $reported of $exact_lines lines" \
             "reported, $unknown not in the input, $repeated repeated, $below counts" \
             "below the exact ones"
        failures=$((failures + 1))
    fi
    if [[ $method == ms ]]; then
        speed=$(calc "$sort_seconds / $ebb_seconds")
        memory=$(calc "$sort_kb / $ebb_kb")
        met=no
        if (($(calc "($ebb_seconds < $sort_seconds && $ebb_kb * 10 <= $sort_kb) ? 1 : 0"))); then
            met=yes
        fi
        if ((lines != 10000000)); then
            met="no (not 10 million lines)"
        fi
        target_line=$(printf '  %-8s ebb count (ms) / sort | uniq -c, %s lines: %.2fx faster' \
            "issue 14" "$lines" "$speed")
        target_line+=$(printf ' (> 1), %.2fx less peak memory (>= 10)  target met: %s' \
            "$memory" "$met")
    fi
done

echo
echo "issue 14: ebb count beats sort | uniq -c on 10 million lines in time, in a tenth" \
     "of its memory"
echo "${target_line:-  issue 14 ebb count (ms) not measured in this run  target met: no}"
if ((failures != 0)); then
    echo "$failures count check(s) FAILED"
    exit 1
fi
echo "all count checks passed (every distinct line reported once, no count below the exact one)"
