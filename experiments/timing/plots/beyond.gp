# SPDX-License-Identifier: BSD-2-Clause
# beyond.gp: at equal memory (w bpi bits), the penalty per query of the
# APBF, the standard BTBF and the inferential BTBF against bits per item,
# one panel per condition, from penalty_<stream>_{eq,gt}.csv.
# Called by run.sh as:
#   gnuplot -e "eq='...'; gt='...'; out='...'; heading='...'; weq='...'; wgt='...'" beyond.gp

set terminal pngcairo size 1300,550 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,2 title heading
set xlabel 'bits per item (bpi)'
set ylabel 'penalty per query'
set logscale x 2
set logscale y
set xrange [1.8:36]
set grid
set key bottom left
do for [i=1:2] {
    file = i == 1 ? eq : gt
    set title (i == 1 ? '[Pos≈Neg], w = '.weq : '[Pos>Neg], w = '.wgt)
    plot file using 'bpi':'apbf_penalty' with linespoints pt 9 lw 2 title 'APBF (best (k, l))', \
         file using 'bpi':'std_penalty' with linespoints pt 7 lw 2 title 'standard BTBF', \
         file using 'bpi':'inf_penalty' with linespoints pt 5 lw 2 title 'inferential BTBF'
}
unset multiplot
