# SPDX-License-Identifier: BSD-2-Clause
# calibration.gp: the calibration table as a reliability diagram: per
# posterior bin, the measured fraction of queries in the window against the
# bin's midpoint, at the representative bpi, one curve per condition, from
# calibration_<stream>_{eq,gt}.csv. Bins with no query are left out.
# Called by run.sh as:
#   gnuplot -e "eq='...'; gt='...'; out='...'; heading='...'; weq='...'; wgt='...'" calibration.gp

set terminal pngcairo size 800,700 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set datafile missing ''
set title heading
set xlabel 'posterior bin midpoint M'
set ylabel 'measured in-window fraction f'
set xrange [0:1]
set yrange [0:1]
set size square
set grid
set key top left
plot eq using 'midpoint':'fraction' with linespoints pt 7 lw 2 title '[Pos≈Neg], w = '.weq, \
     gt using 'midpoint':'fraction' with linespoints pt 5 lw 2 title '[Pos>Neg], w = '.wgt, \
     x with lines dt 2 lc rgb 'gray40' title 'f = M'
