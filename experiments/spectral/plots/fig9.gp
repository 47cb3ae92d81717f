# SPDX-License-Identifier: BSD-2-Clause
# fig9.gp: the paper's Figure 9: additive error and error ratio (both log)
# against the skew in a sliding window of M/5 items kept by deletions;
# gamma = 0.7, k = 5; from fig9.csv (exp_spectral_deletions).
# Called by run.sh as:
#   gnuplot -e "csv='...'; out='...'" fig9.gp

set terminal pngcairo size 1100,500 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,2 title 'Figure 9: sliding window of M/5 = 20,000 items, gamma = 0.7, k = 5'
set grid
set key top left
set xlabel 'skew'
set logscale y
set title '(a) additive error (log)'
set ylabel 'sqrt(sum (f^ - f)^2 / n)'
plot csv using 'skew':'ms_additive' with linespoints pt 7 lw 2 title 'MS', \
     csv using 'skew':'mi_additive' with linespoints pt 5 lw 2 title 'MI', \
     csv using 'skew':'rm_additive' with linespoints pt 9 lw 2 title 'RM'
set title '(b) error ratio (log)'
set ylabel 'error ratio'
plot csv using 'skew':'ms_ratio' with linespoints pt 7 lw 2 title 'MS', \
     csv using 'skew':'mi_ratio' with linespoints pt 5 lw 2 title 'MI', \
     csv using 'skew':'rm_ratio' with linespoints pt 9 lw 2 title 'RM'
unset multiplot
