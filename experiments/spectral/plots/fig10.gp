# SPDX-License-Identifier: BSD-2-Clause
# fig10.gp: the paper's Figure 10: bits per counter of each code against
# the mean frequency of the keys, beside sum log2(C + 1) / m and the
# entropy H of the counter values; (a) the encoded counters alone, (b) the
# whole array (index and slack included); from fig10.csv
# (exp_spectral_strarray).
# Called by run.sh as:
#   gnuplot -e "csv='...'; out='...'" fig10.gp

set terminal pngcairo size 1100,500 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,2 title 'Figure 10: codes of a spectral filter''s counters (Zipf keys, k = 5, gamma = ln 2)'
set grid
set key bottom right
set xlabel 'mean frequency of a key'
set logscale x
set xrange [0.8:130]
set logscale y
set yrange [0.4:32]
set ylabel 'bits per counter'
set title '(a) encoded counters alone (N / m)'
plot csv using 'mean_frequency':'fixed_codes' with linespoints pt 4 lw 2 title 'fixed-width', \
     csv using 'mean_frequency':'gamma_codes' with linespoints pt 7 lw 2 title 'Elias gamma', \
     csv using 'mean_frequency':'delta_codes' with linespoints pt 5 lw 2 title 'Elias delta', \
     csv using 'mean_frequency':'steps_codes' with linespoints pt 9 lw 2 title 'steps', \
     csv using 'mean_frequency':'entropy' with lines dt 2 lw 2 lc rgb 'black' title 'entropy H', \
     csv using 'mean_frequency':'sum_log' with lines dt 3 lw 2 lc rgb 'gray40' title 'sum log2(C+1) / m'
set title '(b) total: codes, index and slack'
plot csv using 'mean_frequency':'fixed_total' with linespoints pt 4 lw 2 title 'fixed-width', \
     csv using 'mean_frequency':'gamma_total' with linespoints pt 7 lw 2 title 'Elias gamma', \
     csv using 'mean_frequency':'delta_total' with linespoints pt 5 lw 2 title 'Elias delta', \
     csv using 'mean_frequency':'steps_total' with linespoints pt 9 lw 2 title 'steps', \
     csv using 'mean_frequency':'entropy' with lines dt 2 lw 2 lc rgb 'black' title 'entropy H', \
     csv using 'mean_frequency':'sum_log' with lines dt 3 lw 2 lc rgb 'gray40' title 'sum log2(C+1) / m'
unset multiplot
