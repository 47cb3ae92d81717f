#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# experiments/timing/run.sh: reproduce section 5 of Dautrich and
# Ravishankar, "Inferential Time-Decaying Bloom Filters" (Table 3's streams
# and conditions, Figures 7-12) with ebb's Block Timing Bloom filter,
# standard and inferential, and go beyond it: the calibration table, the
# APBF at equal memory, the expected and most likely age against the true
# age.
#
#   bash experiments/timing/run.sh <build-dir>   (part of `make experiments`)
#
# Builds nothing: runs the exp_timing_* programs already built in
# <build-dir>/experiments/timing (two at a time, one per core). They write
# CSV into docs/results/timing/ and Markdown fragments and verdicts into
# <build-dir>/experiments/timing/work/; this script draws the PNG figures
# with gnuplot, adds the checks that span both conditions of a figure, then
# assembles docs/results/timing.md from experiments/timing/timing.md.in, so
# every number on that page comes from this run.
#
# Deterministic: the same seed (EBB_EXPERIMENT_SEED, default 1) and the same
# library give the same files.
#
# Exit status: 0 when every guarantee and issue bar held; 1 when one failed
# (a false negative of the standard BTBF or the APBF; on the uniform and
# power-law streams: a least-penalty total above the standard one at some
# bpi, none 10% below it, a posterior error >= 0.05, a posterior bin of
# >= 1000 queries off its midpoint by more than 3 sd + 0.025); 2 on usage
# or runtime errors. Statistical checks and the bursty stream's are
# reported but do not change it: on its bursty IP trace the paper itself
# reports posterior errors and (under [Pos>Neg], at some low bpi) penalties
# above the standard filter's, without numbers to hold ours to.

set -euo pipefail

# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

family_paths timing "$@"

# Two lanes of about the same length, one per core.
lane_a=(uniform_gt powerlaw_eq bursty_eq)
lane_b=(uniform_eq powerlaw_gt bursty_gt)
check_built "timing/run.sh" "$1" exp_timing_ "${lane_a[@]}" "${lane_b[@]}"

rm -rf "$work_dir"
mkdir -p "$work_dir" "$out_dir"
started=$SECONDS

echo "timing experiments: seed $seed, outputs in ${out_dir#"$root"/}"
run_two_lanes "timing/run.sh" exp_timing_ "${lane_a[*]}" "${lane_b[*]}"

# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------

# figure <script> <png> <stream> <csv prefix> <title> <w eq> <w gt>
figure() {
    gnuplot -e "eq='$out_dir/$4_$3_eq.csv'; gt='$out_dir/$4_$3_gt.csv'; out='$out_dir/$2.png'; heading=\"$5\"; weq='$6'; wgt='$7'" \
        "$plots/$1.gp" || { echo "timing/run.sh: gnuplot failed on $2" >&2; exit 2; }
}

streams=(uniform powerlaw bursty)
titles=('Uniform stream, |U| = 2^{16}' 'Power law stream, |U| = 2^{16}' 'Bursty synthetic stream (in place of the IP source trace)')
w_eq=('2^{16}' '2^{11}' '2^{8}')
w_gt=('2^{18}' '2^{18}' '2^{15}')
ratio_fig=(7 9 11)
for i in 0 1 2; do
    s=${streams[$i]}
    r=${ratio_fig[$i]}
    figure ratio "fig${r}_${s}_penalty_ratio" "$s" penalty \
        "Figure $r: penalty ratios, ${titles[$i]}" "${w_eq[$i]}" "${w_gt[$i]}"
    figure perr "fig$((r + 1))_${s}_posterior_error" "$s" penalty \
        "Figure $((r + 1)): posterior errors, ${titles[$i]}" "${w_eq[$i]}" "${w_gt[$i]}"
    figure beyond "beyond_${s}_penalties" "$s" penalty \
        "Equal memory: APBF, standard and inferential BTBF, ${titles[$i]}" "${w_eq[$i]}" "${w_gt[$i]}"
    figure calibration "calibration_${s}" "$s" calibration \
        "Calibration at 8 bits per item, ${titles[$i]}" "${w_eq[$i]}" "${w_gt[$i]}"
    figure ages "ages_${s}" "$s" ages \
        "Age estimates against the true age at 8 bits per item, ${titles[$i]}" "${w_eq[$i]}" "${w_gt[$i]}"
done

# ---------------------------------------------------------------------------
# Checks across both conditions of a figure: the least-penalty answers at
# least 10% below the standard's at some bpi of Figures 7 and 9.
# ---------------------------------------------------------------------------

figure_checks=$work_dir/figures.checks
: >"$figure_checks"
for i in 0 1; do
    s=${streams[$i]}
    awk -F, -v fig="${ratio_fig[$i]}" -v s="$s" '
        FNR == 1 { next }
        {
            share = $6 / $4
            if (best == "" || share < best) { best = share; at = $1; cond = FILENAME }
        }
        END {
            sub(/.*_/, "", cond); sub(/\.csv$/, "", cond)
            printf "%s guarantee figures: issue bar: Fig. %s (%s): least-penalty total at least 10%% below the standard at some bpi (lowest inferential/standard %.4f, bpi %s, condition %s)\n",
                (best <= 0.9 ? "PASS" : "FAIL"), fig, s, best, at, cond
        }' "$out_dir/penalty_${s}_eq.csv" "$out_dir/penalty_${s}_gt.csv" >>"$figure_checks"
done

# ---------------------------------------------------------------------------
# Summary of the verdicts
# ---------------------------------------------------------------------------

checks=("$work_dir"/*.checks)
summary=$work_dir/summary.md
kinds=$work_dir/kinds.tsv
printf '%s\t%s\n' \
    'guarantee' 'guarantees (no false negative of the standard BTBF or the APBF in any trial)' \
    'bar' 'the issue'"'"'s bars on the uniform and power-law streams (least penalty <= standard at every bpi and >= 10% below at some; posterior error < 0.05; every bin of >= 1000 queries within 3 sd + 0.025 of its midpoint)' \
    'stat' 'the same bars on the bursty stream (on its IP trace the paper reports higher posterior errors at low bpi and higher penalties at some low bpi under [Pos>Neg]; ours misses more widely, see Figures 11 and 12), in-window fractions against the exact ones (\|z\| <= 3)' \
    >"$kinds"
write_summary "$summary" "$kinds" "${checks[@]}"
if any_fatal_failure "${checks[@]}"; then
    fatal=1
fi

# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

fill_template "$template" "$page" "$work_dir" "$seed" "timing/run.sh"

echo
cat "$summary"
echo
echo "timing experiments: wrote ${page#"$root"/} and ${out_dir#"$root"/}/ in $((SECONDS - started)) s"
if [[ $fatal -ne 0 ]]; then
    echo "timing/run.sh: a guarantee or an issue bar failed (see above)" >&2
    exit 1
fi
