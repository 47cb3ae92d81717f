# SPDX-License-Identifier: BSD-2-Clause
# fig6.gp: the paper's Figure 6 from fig6.csv (written by exp_fig6).
# Called by run.sh as: gnuplot -e "csv='...'; out='...'; meta='...'" fig6.gp
# meta (written by exp_fig6) sets `curves` and the legend `titles`.
# Columns: insertions, then per curve: probes, hits, measured fp, model fp.

set terminal pngcairo size 1100,700 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

set title 'Figure 6: false-positive rate during 10^4 distinct insertions, w = 10^3'
set xlabel 'insertions'
set ylabel 'false-positive rate'
set logscale y
set format y '10^{%L}'
set yrange [1e-6:1]
set xrange [0:10000]
set grid
set key outside right top vertical

# A measured sample is drawn when it rests on at least 10 false positives
# (fewer would scatter by a factor of 2 and more on the log scale).
counted(v, hits) = hits >= 10 ? v : NaN

plot for [i=0:curves-1] csv using 1:(counted(column(4 + 4*i), column(3 + 4*i))) \
         with points pt 7 ps 0.45 lc i+1 title word(titles, i+1).' measured', \
     for [i=0:curves-1] csv using 1:(column(5 + 4*i)) \
         with lines dt 2 lw 1.5 lc i+1 title word(titles, i+1).' model'
