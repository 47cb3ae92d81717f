#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# experiments/run.sh: reproduce the tables and figures of the APBF paper.
#
#   bash experiments/run.sh <build-dir>      (what `make experiments` runs)
#
# Runs the exp_* programs built in <build-dir>/experiments (two at a time,
# one per core), which write CSV into docs/results/apbf/ and Markdown
# fragments and verdicts into <build-dir>/experiments/work/; draws the PNG
# figures with gnuplot; then assembles docs/results/apbf.md from the
# template experiments/apbf.md.in, so every number on that page comes from
# this run.
#
# Deterministic: the same seed (EBB_EXPERIMENT_SEED, default 1) and the same
# library give the same files.
#
# Exit status: 0 when every check that must hold did; 1 when a value that
# should agree with the paper does not, a documented discrepancy no longer
# shows, or a guarantee broke (no false negatives, APBBF < SWAMP); 2 on
# usage or runtime errors. Statistical checks (|z| <= 3, reads within 5%)
# are reported in the summary and on the page but do not change the status.

set -euo pipefail

# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: bash experiments/run.sh <build-dir>" >&2
    exit 2
}

[[ $# -eq 1 ]] || usage
[[ -d $1 ]] || { echo "run.sh: no build directory '$1'" >&2; exit 2; }

build_dir=$(cd "$1" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir=$build_dir/experiments
work_dir=$bin_dir/work
page=$root/docs/results/apbf.md
out_dir=$root/docs/results/apbf
template=$root/experiments/apbf.md.in
plots=$root/experiments/plots
seed=${EBB_EXPERIMENT_SEED:-1}

check_tools "run.sh" "$seed"

# Two lanes of about the same length, one per core.
lane_a=(table3 table1)
lane_b=(table2 fig6 duplicates)
check_built "run.sh" "$1" exp_ "${lane_a[@]}" "${lane_b[@]}"

rm -rf "$work_dir"
mkdir -p "$work_dir" "$out_dir"
started=$SECONDS

echo "experiments: seed $seed, outputs in ${out_dir#"$root"/}"
run_two_lanes "run.sh" exp_ "${lane_a[*]}" "${lane_b[*]}"

# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------

plot() { # plot <script> <figure>
    gnuplot -e "csv='$out_dir/$2.csv'; out='$out_dir/$2.png'; meta='$work_dir/$2.plot'" \
        "$plots/$1.gp" || { echo "run.sh: gnuplot failed on $2" >&2; exit 2; }
}
plot fig6 fig6
for figure in fig7 fig8 zipf; do
    plot duplicates "$figure"
done

# ---------------------------------------------------------------------------
# Summary of the verdicts
# ---------------------------------------------------------------------------

checks=("$work_dir"/*.checks)
summary=$work_dir/summary.md
kinds=$work_dir/kinds.tsv
printf '%s\t%s\n' \
    'paper' 'agree with the paper'"'"'s printed value' \
    'discrepancy' 'documented discrepancies with the paper still differ' \
    'guarantee' 'guarantees (no false negatives, model bounds, APBBF < SWAMP)' \
    'stat' 'measured against predicted (\|z\| <= 3, reads within 5%)' \
    >"$kinds"
write_summary "$summary" "$kinds" "${checks[@]}"
if any_fatal_failure "${checks[@]}"; then
    fatal=1
fi

# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

fill_template "$template" "$page" "$work_dir" "$seed" "run.sh"

echo
cat "$summary"
echo
echo "experiments: wrote ${page#"$root"/} and ${out_dir#"$root"/}/ in $((SECONDS - started)) s"
if [[ $fatal -ne 0 ]]; then
    echo "run.sh: a value that must agree with the paper, or a guarantee, failed (see above)" >&2
    exit 1
fi
