#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# run-sample.sh <path-to-ebb>: the `make run` session.
#
# Generates a deterministic click stream with ebb-gen-stream (built next to
# ebb) into <build>/sample/, drops the clicks repeated within a window with
# `ebb dedup --stats`, and prints a short summary. The summary is checked,
# not only printed: lines read must equal the lines generated, lines written
# the lines in the output, and ebb must never print more lines than an
# exact sliding window would (it has no false negatives). Exit 1 otherwise.

set -euo pipefail

LINES=1000000
DISTINCT=300000
WINDOW=100000
FP=0.01
SEED=42

die() {
    echo "run-sample: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: run-sample.sh <path-to-ebb>"
ebb=$1
[ -x "$ebb" ] || die "no ebb executable at '$ebb' (run 'make build' first)"
ebb_dir=$(cd "$(dirname "$ebb")" && pwd)
ebb="$ebb_dir/$(basename "$ebb")"

# The generator is built next to ebb (cli/CMakeLists.txt); also look where
# an install or a different layout would put it.
gen=
for candidate in "$ebb_dir/ebb-gen-stream" "$ebb_dir/../tools/ebb-gen-stream" \
                 "$ebb_dir/../bin/ebb-gen-stream"; do
    if [ -x "$candidate" ]; then
        gen=$candidate
        break
    fi
done
[ -n "$gen" ] || die "ebb-gen-stream not found next to $ebb (build target ebb_gen_stream)"

# The build tree is the nearest directory above ebb holding CMakeCache.txt;
# the sample never goes into the source tree.
build_dir=$ebb_dir
while [ "$build_dir" != / ] && [ ! -f "$build_dir/CMakeCache.txt" ]; do
    build_dir=$(dirname "$build_dir")
done
[ -f "$build_dir/CMakeCache.txt" ] || build_dir=$ebb_dir
sample_dir="$build_dir/sample"
mkdir -p "$sample_dir"

clicks="$sample_dir/clicks.txt"
deduped="$sample_dir/clicks.dedup.txt"
stats="$sample_dir/clicks.stats.txt"

"$gen" --mode clicks --lines "$LINES" --distinct "$DISTINCT" --seed "$SEED" \
    >"$clicks"

start=$(date +%s%N)
"$ebb" dedup --window "$WINDOW" --fp "$FP" --stats "$clicks" \
    >"$deduped" 2>"$stats"
end=$(date +%s%N)

stat_value() {
    awk -v name="$1" 'index($0, name ": ") == 1 {
        print substr($0, length(name) + 3); found = 1 }
        END { if (!found) exit 1 }' "$stats" || die "no '$1' in --stats output"
}
read_count=$(stat_value 'lines read')
written=$(stat_value 'lines written')
k=$(stat_value k)
l=$(stat_value l)
window=$(stat_value window)
memory=$(stat_value 'memory bytes')
suppressed=$((read_count - written))

# What an exact sliding window of WINDOW lines would keep.
exact_kept=$(awk -v w="$WINDOW" '
    !(($0 in last) && NR - last[$0] <= w) { kept++ }
    { last[$0] = NR }
    END { print kept + 0 }' "$clicks")

[ "$read_count" -eq "$LINES" ] ||
    die "ebb read $read_count lines, the sample has $LINES"
[ "$written" -eq "$(wc -l <"$deduped")" ] ||
    die "ebb says it wrote $written lines, the output has $(wc -l <"$deduped")"
[ "$written" -le "$exact_kept" ] ||
    die "ebb printed $written lines, more than the $exact_kept an exact window keeps"

awk -v lines="$LINES" -v distinct="$DISTINCT" -v seed="$SEED" \
    -v clicks="$clicks" -v window="$WINDOW" -v fp="$FP" \
    -v read_count="$read_count" -v written="$written" \
    -v suppressed="$suppressed" -v exact="$exact_kept" \
    -v k="$k" -v l="$l" -v fwindow="$window" -v memory="$memory" \
    -v ns=$((end - start)) 'BEGIN {
    seconds = ns / 1e9
    printf "sample: %d clicks on %d items (ebb-gen-stream --mode clicks --seed %d)\n",
        lines, distinct, seed
    printf "        %s\n", clicks
    printf "ebb dedup --window %d --fp %s\n", window, fp
    printf "  lines read:     %d\n", read_count
    printf "  lines written:  %d\n", written
    printf "  suppressed:     %d (%.1f%%)\n", suppressed, 100 * suppressed / read_count
    printf "  exact window:   would write %d; ebb dropped %d more (slack and false positives)\n",
        exact, exact - written
    printf "  filter:         k=%d l=%d window=%d memory=%d bytes (%.2f MiB, %.1f bits/item)\n",
        k, l, fwindow, memory, memory / 1048576, memory * 8 / fwindow
    if (seconds > 0)
        printf "  time:           %.2f s (%.1f M lines/s)\n", seconds, read_count / seconds / 1e6
}'
