# SPDX-License-Identifier: BSD-2-Clause
# rates.gp: steady state across rates (exp_tlbf_rates, rates.csv): bits per
# item and the false-positive rate against the items a generation holds.
# Called by run.sh as: gnuplot -e "csv='...'; out='...'; meta='...'" rates.gp

set terminal pngcairo size 1100,850 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

# Rows of one fp: column 1 holds its label.
of(i, v) = strcol(1) eq fps[i] ? v : NaN

set multiplot layout 2,1 title "Steady state across rates (T = 60 s, Poisson arrivals, 10 to 30,000 items/s)"
set grid
set key outside right top vertical
set logscale x
set format x '10^{%L}'
set xlabel 'items per generation (rate · T / l)'

set ylabel 'bits per item / APBF (k+l)k/(l ln 2)'
set logscale y
set yrange [0.9:*]
plot for [i=1:|fps|] csv using 5:(of(i, $6/$8)) with linespoints pt 7 lw 1.5 lc i title 'fp '.fps[i].' slice bits', \
     for [i=1:|fps|] csv using 5:(of(i, $7/$8)) with linespoints pt 5 dt 2 lw 1.5 lc i title 'fp '.fps[i].' memory\_bytes·8'

unset logscale y
set ylabel 'false-positive rate / target'
set yrange [0:1.3]
plot for [i=1:|fps|] csv using 5:(of(i, $14)) with linespoints pt 7 lw 1.5 lc i title 'fp '.fps[i].' measured', \
     for [i=1:|fps|] csv using 5:(of(i, $15)) with linespoints pt 6 dt 2 lw 1.5 lc i title 'fp '.fps[i].' current\_fp', \
     1.25 with lines dt 3 lc rgb '#888888' title '1.25 x target', 1 with lines dt 2 lc rgb '#444444' title 'target'
