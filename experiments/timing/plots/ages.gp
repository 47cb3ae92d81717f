# SPDX-License-Identifier: BSD-2-Clause
# ages.gp: the error of the age estimates against the true age, binned by
# true age (powers of two), at the representative bpi: mean absolute error
# of the expected age E[I_x | R_x], of the most likely age and of the
# prior's mean (1 - p)/p, one panel per condition, from
# ages_<stream>_{eq,gt}.csv.
# Called by run.sh as:
#   gnuplot -e "eq='...'; gt='...'; out='...'; heading='...'; weq='...'; wgt='...'" ages.gp

set terminal pngcairo size 1300,550 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,2 title heading
set xlabel 'mean true age in the bin (insertions)'
set ylabel 'mean absolute error (insertions)'
set logscale x
set logscale y
set grid
set key top left
do for [i=1:2] {
    file = i == 1 ? eq : gt
    set title (i == 1 ? '[Pos≈Neg], w = '.weq : '[Pos>Neg], w = '.wgt)
    plot file using (column('mean_age') + 0.5):'mae_expected' with linespoints pt 7 lw 2 title 'E[age]', \
         file using (column('mean_age') + 0.5):'mae_likely' with linespoints pt 5 lw 2 title 'most likely age', \
         file using (column('mean_age') + 0.5):'mae_prior' with linespoints pt 9 lw 2 title 'prior mean (1-p)/p', \
         file using (column('mean_age') + 0.5):(column('mean_age') + 0.5) with lines dt 2 lc rgb 'gray40' title 'the true age'
}
unset multiplot
