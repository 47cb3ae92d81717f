# SPDX-License-Identifier: BSD-2-Clause
# ratio.gp: the paper's Figures 7, 9, 11: the total penalty of the standard
# BTBF over that of the inferential BTBF (each at its own best k) against
# bits per item, one curve per condition of Table 3, from
# penalty_<stream>_{eq,gt}.csv (exp_timing_<stream>_*).
# Called by run.sh as:
#   gnuplot -e "eq='...'; gt='...'; out='...'; heading='...'; weq='...'; wgt='...'" ratio.gp

set terminal pngcairo size 900,600 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set title heading
set xlabel 'bits per item (bpi)'
set ylabel 'penalty ratio standard / inferential'
set logscale x 2
set xrange [1.8:36]
set yrange [0:*]
set grid
set key top left
plot eq using 'bpi':'ratio' with linespoints pt 7 lw 2 title '[Pos≈Neg], w = '.weq, \
     gt using 'bpi':'ratio' with linespoints pt 5 lw 2 title '[Pos>Neg], w = '.wgt, \
     1 with lines dt 2 lc rgb 'gray40' title 'equal penalties'
