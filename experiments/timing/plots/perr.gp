# SPDX-License-Identifier: BSD-2-Clause
# perr.gp: the paper's Figures 8, 10, 12: the posterior error (its Eq. 28,
# 20 bins) of the inferential BTBF at its best k against bits per item, one
# curve per condition, from penalty_<stream>_{eq,gt}.csv.
# Called by run.sh as:
#   gnuplot -e "eq='...'; gt='...'; out='...'; heading='...'; weq='...'; wgt='...'" perr.gp

set terminal pngcairo size 900,600 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set title heading
set xlabel 'bits per item (bpi)'
set ylabel 'posterior error (Eq. 28)'
set logscale x 2
set xrange [1.8:36]
set yrange [0:*]
set grid
set key top left
plot eq using 'bpi':'posterior_error' with linespoints pt 7 lw 2 title '[Pos≈Neg], w = '.weq, \
     gt using 'bpi':'posterior_error' with linespoints pt 5 lw 2 title '[Pos>Neg], w = '.wgt, \
     0.025 with lines dt 2 lc rgb 'gray40' title 'half a bin (0.025)', \
     0.05 with lines dt 3 lc rgb 'red' title 'the issue''s bar (0.05)'
