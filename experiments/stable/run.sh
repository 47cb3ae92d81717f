#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# experiments/stable/run.sh: reproduce section IV of the Importance-aware
# Bloom Filter paper (its synthetic data: Figures 11-20, Table I's metrics)
# with ebb's stable filter and its importance-aware variants, and measure
# the analysis (stationary zero fraction, FPS, FN at a gap) against the
# filter for several shapes and both ways of drawing the P cells.
#
#   bash experiments/stable/run.sh <build-dir>   (part of `make experiments`)
#
# Builds nothing: runs the exp_stable_* programs already built in
# <build-dir>/experiments/stable (two at a time, one per core). They write
# CSV into docs/results/stable/ and Markdown fragments, plot metadata and
# verdicts into <build-dir>/experiments/stable/work/; this script draws the
# PNG figures with gnuplot, then assembles docs/results/stable.md from the
# template experiments/stable/stable.md.in, so every number on that page
# comes from this run.
#
# Deterministic: the same seed (EBB_EXPERIMENT_SEED, default 1) and the same
# library give the same files.
#
# Exit status: 0 when every check that must hold did; 1 when a guarantee
# failed (a Bloom filter missed a repeat, a duplicate right after its item
# was missed, the chain from all zeros does not reach the library's
# stationary distribution, the ground truth disagrees with the generator)
# or a claim of the paper we reproduce exactly (the BF fills up) did not
# hold; 2 on usage or runtime errors. Statistical checks (|z| <= 3) and the
# paper's qualitative claims are reported in the summary and on the page
# but do not change the status.

set -euo pipefail

# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

family_paths stable "$@"

# Two lanes of about the same length, one per core.
lane_a=(analysis)
lane_b=(importance zeros)
check_built "stable/run.sh" "$1" exp_stable_ "${lane_a[@]}" "${lane_b[@]}"
start_family stable exp_stable_ "${lane_a[*]}" "${lane_b[*]}"

# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------

plot() { # plot <script> <figure> [gnuplot assignments]
    gnuplot -e "csv='$out_dir/$2.csv'; out='$out_dir/$2.png'; ${3:-}" \
        "$plots/$1.gp" || { echo "stable/run.sh: gnuplot failed on $2" >&2; exit 2; }
}
plot zeros zeros "meta='$work_dir/zeros.plot'"

importance_plot() { # importance_plot <reading> <distribution> <title>
    plot importance "importance_$1_$2" "heading=\"$3\""
}
for reading in 16KB 16384cells; do
    case $reading in
        16KB) memory='16 KB: 43,690 cells of 3 bits (BF 131,072 bits)' ;;
        *) memory='16,384 cells of Max 7 (BF 16,384 bits)' ;;
    esac
    importance_plot "$reading" uniform \
        "Synthetic Data 1 (Figs. 11-13): repeats uniform over importance; $memory, K = 5, P = 10"
    importance_plot "$reading" inverse \
        "Synthetic Data 3 (Figs. 14-16): repeats inversely proportional to importance; $memory, K = 5, P = 10"
    importance_plot "$reading" proportional \
        "Synthetic Data 2 (Figs. 17-19): repeats proportional to importance; $memory, K = 5, P = 10"
done

# ---------------------------------------------------------------------------
# Summary of the verdicts
# ---------------------------------------------------------------------------

checks=("$work_dir"/*.checks)
summary=$work_dir/summary.md
kinds=$work_dir/kinds.tsv
printf '%s\t%s\n' \
    'guarantee' 'guarantees (no missed repeat in the BF, none right after its item, the chain from zeros reaches the stationary distribution, the ground truth)' \
    'paper' 'the paper'"'"'s Figure 20: the BF fills up' \
    'stat' 'measured against the analysis (\|z\| <= 3, the transient within 4 sd) and the paper'"'"'s qualitative claims' \
    >"$kinds"

# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

finish_family stable "a guarantee or a value that must agree with the paper" "$summary" "$kinds" "${checks[@]}"
