# SPDX-License-Identifier: BSD-2-Clause
# dimension.gp: the TLBF paper's Figures 1 and 2, number of slices and size
# of slice 0 over time, from dimension_<dim>_fp<fp>.csv (exp_tlbf_dimensioning).
# Called by run.sh as:
#   gnuplot -e "dir='...'; dim='under'; out='...'; meta='...'" dimension.gp
# meta sets the arrays fps, targets, titles.

set terminal pngcairo size 1100,850 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

file(i) = sprintf('%s/dimension_%s_fp%s.csv', dir, dim, fps[i])
what = dim eq 'under' ? 'initial capacity 10x too small (6,000 for 60,000 per span)' \
                      : 'initial capacity 10x too large (600,000 for 60,000 per span)'

set multiplot layout 2,1 title sprintf("Slices and size of slice 0 over time, %s\nT = 60 s, 1,000 items/s (Poisson); dashed: k + l and k·⌈rT/l⌉/ln 2 bits", what)
set grid
set key outside right top vertical
set xrange [0:6]
set xlabel 'time / T'

set ylabel 'slices held'
set yrange [0:*]
plot for [i=1:|fps|] file(i) using 2:5 with steps lw 1.5 lc i title titles[i], \
     for [i=1:|fps|] kl[i] with lines dt 2 lw 1 lc i notitle

set ylabel 'bits of slice 0'
set logscale y
set format y '10^{%L}'
set yrange [*:*]
plot for [i=1:|fps|] file(i) using 2:7 with steps lw 1.5 lc i title titles[i], \
     for [i=1:|fps|] ideal0[i] with lines dt 2 lw 1 lc i notitle
unset multiplot
