# SPDX-License-Identifier: BSD-2-Clause
# fig7.gp: the paper's Figure 7 on the words of the fortunes package: the
# rank-frequency distribution (a), the additive error (b) and the error
# ratio (c) of MS, MI and RM against gamma (k = 5), from
# fig7_distribution.csv and fig7.csv (exp_spectral_words).
# Called by run.sh as:
#   gnuplot -e "dist_csv='...'; csv='...'; out='...'" fig7.gp

set terminal pngcairo size 1500,500 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,3 title 'Figure 7 on real data: the words of Debian''s fortunes package, mean of 5 runs'
set grid
set title '(a) word counts by rank'
set xlabel 'rank'
set ylabel 'occurrences'
set logscale xy
plot dist_csv using 'first_rank':'count' with steps lw 2 title 'words'
unset logscale xy
set key top left
set arrow 1 from log(2), graph 0 to log(2), graph 1 nohead dt 3 lc rgb 'gray40'
set title '(b) additive error, k = 5'
set xlabel 'gamma = nk/m'
set ylabel 'sqrt(sum (f^ - f)^2 / n)'
plot csv using 'gamma':'ms_additive' with linespoints pt 7 lw 2 title 'MS', \
     csv using 'gamma':'mi_additive' with linespoints pt 5 lw 2 title 'MI', \
     csv using 'gamma':'rm_additive' with linespoints pt 9 lw 2 title 'RM (same total m)'
set title '(c) error ratio, k = 5'
set ylabel 'error ratio (log)'
set logscale y
plot csv using 'gamma':'ms_ratio' with linespoints pt 7 lw 2 title 'MS', \
     csv using 'gamma':'mi_ratio' with linespoints pt 5 lw 2 title 'MI', \
     csv using 'gamma':'rm_ratio' with linespoints pt 9 lw 2 title 'RM (same total m)', \
     csv using 'gamma':'eb' with lines dt 2 lc rgb 'gray40' title 'E_b'
unset multiplot
