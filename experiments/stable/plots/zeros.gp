# SPDX-License-Identifier: BSD-2-Clause
# zeros.gp: the IBF paper's Figure 20, the fraction of zero cells over
# iterations, from zeros.csv (exp_stable_zeros): measured (points), the
# chain from all zeros (solid) and the stationary V_0 (dashed).
# Called by run.sh as: gnuplot -e "csv='...'; out='...'; meta='...'" zeros.gp
# meta sets filters, titles, iterations.

set terminal pngcairo size 1100,700 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

set title "Figure 20: fraction of zero cells over iterations\n16 KB (43,690 cells of 3 bits; BF 131,072 bits), K = 5, P = 10, distinct keys, importance uniform on 1..50"
set xlabel 'iterations (insertions)'
set ylabel 'fraction of zero cells'
set xrange [0:iterations]
set yrange [0:1]
set grid
set key outside right top vertical

plot for [i=0:filters-1] csv using 1:(column(2 + 3*i)) every 5 \
         with points pt 7 ps 0.5 lc i+1 title word(titles, i+1).' measured', \
     for [i=0:filters-1] csv using 1:(column(3 + 3*i)) \
         with lines lw 1.5 lc i+1 title word(titles, i+1).' expected from zeros', \
     for [i=1:filters-1] csv using 1:(column(4 + 3*i)) \
         with lines dt 2 lw 1 lc i+1 title word(titles, i+1).' stationary V_0'
