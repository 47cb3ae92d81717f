# SPDX-License-Identifier: BSD-2-Clause
# dimension_fp.gp: the TLBF paper's Figures 4 and 5, the false-positive rate
# over time (exp_tlbf_dimensioning). Points: fresh keys queried every T/20
# (about 100 false positives each at the target); lines: stats.current_fp
# every T/200; dashed: the target.
# Called by run.sh as:
#   gnuplot -e "dir='...'; dim='under'; out='...'; meta='...'" dimension_fp.gp

set terminal pngcairo size 1100,700 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

file(i) = sprintf('%s/dimension_%s_fp%s.csv', dir, dim, fps[i])
what = dim eq 'under' ? 'initial capacity 10x too small' : 'initial capacity 10x too large'

set title sprintf("False-positive rate over time, %s\nT = 60 s, 1,000 items/s (Poisson); points: measured, lines: stats.current\\_fp, dashed: target", what)
set grid
set key outside right top vertical
set xrange [0:6]
set xlabel 'time / T'
set ylabel 'false-positive rate'
set logscale y
set format y '10^{%L}'
set yrange [1e-5:0.3]
# A sample with no false positive has no place on a log scale.
positive(v) = v > 0 ? v : NaN

plot for [i=1:|fps|] file(i) using 2:12 with lines lw 1.2 lc i title 'fp '.fps[i].' current\_fp', \
     for [i=1:|fps|] file(i) using 2:(positive(column(15))) with points pt 7 ps 0.6 lc i title 'fp '.fps[i].' measured', \
     for [i=1:|fps|] targets[i] with lines dt 2 lw 1.2 lc rgb '#000000' title (i == 1 ? 'target' : '')
