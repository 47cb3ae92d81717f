# SPDX-License-Identifier: BSD-2-Clause
# fig8.gp: the paper's Figure 8: additive error, error ratio and MI's share
# of errors below the truth against the skew (RM: the library's defaults;
# RM paper: the paper's split; equal memory in bytes), without deletions (solid)
# and with five deletion phases of 5% of the values (dashed); gamma = 0.7,
# k = 5; from fig8.csv (exp_spectral_deletions).
# Called by run.sh as:
#   gnuplot -e "csv='...'; out='...'" fig8.gp

set terminal pngcairo size 1500,500 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,3 title 'Figure 8: Zipf data, gamma = 0.7, k = 5; solid: insertions only, dashed: with deletion phases'
set grid
set key bottom left
set xlabel 'skew'
set title '(a) additive error (log)'
set ylabel 'sqrt(sum (f^ - f)^2 / n)'
set logscale y
plot csv using 'skew':'ms_additive' with linespoints pt 7 lw 2 lc 1 title 'MS', \
     csv using 'skew':'mi_additive' with linespoints pt 5 lw 2 lc 2 title 'MI', \
     csv using 'skew':'rm_additive' with linespoints pt 9 lw 2 lc 3 title 'RM', \
     csv using 'skew':'rmp_additive' with linespoints pt 11 lw 2 lc 4 title 'RM paper', \
     csv using 'skew':'del_ms_additive' with linespoints pt 6 lw 2 lc 1 dt 2 title 'MS, deletions', \
     csv using 'skew':'del_mi_additive' with linespoints pt 4 lw 2 lc 2 dt 2 title 'MI, deletions', \
     csv using 'skew':'del_rm_additive' with linespoints pt 8 lw 2 lc 3 dt 2 title 'RM, deletions', \
     csv using 'skew':'del_rmp_additive' with linespoints pt 10 lw 2 lc 4 dt 2 title 'RM paper, deletions'
set title '(b) error ratio (log)'
set ylabel 'error ratio'
plot csv using 'skew':'ms_ratio' with linespoints pt 7 lw 2 lc 1 title 'MS', \
     csv using 'skew':'mi_ratio' with linespoints pt 5 lw 2 lc 2 title 'MI', \
     csv using 'skew':'rm_ratio' with linespoints pt 9 lw 2 lc 3 title 'RM', \
     csv using 'skew':'rmp_ratio' with linespoints pt 11 lw 2 lc 4 title 'RM paper', \
     csv using 'skew':'del_ms_ratio' with linespoints pt 6 lw 2 lc 1 dt 2 title 'MS, deletions', \
     csv using 'skew':'del_mi_ratio' with linespoints pt 4 lw 2 lc 2 dt 2 title 'MI, deletions', \
     csv using 'skew':'del_rm_ratio' with linespoints pt 8 lw 2 lc 3 dt 2 title 'RM, deletions', \
     csv using 'skew':'del_rmp_ratio' with linespoints pt 10 lw 2 lc 4 dt 2 title 'RM paper, deletions'
unset logscale y
set title '(c) MI after deletions: share of its errors below the truth'
set ylabel 'false negatives / errors'
set yrange [0:1.05]
plot csv using 'skew':'del_mi_fn_share' with linespoints pt 4 lw 2 lc 2 title 'MI'
unset multiplot
