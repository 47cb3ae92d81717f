# SPDX-License-Identifier: BSD-2-Clause
# duplicates.gp: Figures 7, 8 and the Zipf figure from the CSV files written
# by exp_duplicates. Called by run.sh as
#   gnuplot -e "csv='...'; out='...'; meta='...'" duplicates.gp
# meta (written by exp_duplicates) sets `curves`, the legend `titles`, the
# plot's `heading`, `ymin` (the lower end of the y axis, 0 for auto) and
# `dashes`, the dash type of each curve's model line.
# Columns: repeat probability, then per curve: duplicate rate, measured fp,
# model fp, false positives, probes.

set terminal pngcairo size 1100,700 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

set title heading
set xlabel 'duplicate rate 1 - |unique(W)| / |W|, W the last w items'
set ylabel 'false-positive rate at the worst moment'
set logscale y
set format y '10^{%L}'
set xrange [0:1]
if (ymin > 0) { set yrange [ymin:*] }
set grid
set key outside right top vertical

# A measured point is drawn when it rests on at least 10 false positives
# (fewer would scatter by a factor of 2 and more on the log scale).
counted(v, hits) = hits >= 10 ? v : NaN

plot for [i=0:curves-1] csv \
         using (column(2 + 5*i)):(counted(column(3 + 5*i), column(5 + 5*i))) \
         with points pt 7 ps 0.9 lc i+1 title word(titles, i+1).' measured', \
     for [i=0:curves-1] csv using (column(2 + 5*i)):(column(4 + 5*i)) \
         with lines lw 2 lc i+1 dt int(word(dashes, i+1)) \
         title word(titles, i+1).' model'
