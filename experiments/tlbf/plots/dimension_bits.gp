# SPDX-License-Identifier: BSD-2-Clause
# dimension_bits.gp: the TLBF paper's Figure 3, bits per item of the last
# span over time, under- and over-dimensioned (exp_tlbf_dimensioning).
# Called by run.sh as: gnuplot -e "dir='...'; out='...'; meta='...'" dimension_bits.gp

set terminal pngcairo size 1100,850 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

file(dim, i) = sprintf('%s/dimension_%s_fp%s.csv', dir, dim, fps[i])

set multiplot layout 2,1 title "Bits per item of the last span over time (memory\\_bytes·8 / items inserted during the last T)\nT = 60 s, 1,000 items/s (Poisson); dotted: slice bits only"
set grid
set key outside right top vertical
set xrange [0:6]
set xlabel 'time / T'
set logscale y
set yrange [8:1000]
set ylabel 'bits per item'

set title 'under-dimensioned (initial capacity 6,000)'
plot for [i=1:|fps|] file('under', i) using 2:10 with lines lw 1.5 lc i title titles[i], \
     for [i=1:|fps|] file('under', i) using 2:11 with lines dt 3 lw 1.5 lc i notitle

set title 'over-dimensioned (initial capacity 600,000)'
plot for [i=1:|fps|] file('over', i) using 2:10 with lines lw 1.5 lc i title titles[i], \
     for [i=1:|fps|] file('over', i) using 2:11 with lines dt 3 lw 1.5 lc i notitle
unset multiplot
