# SPDX-License-Identifier: BSD-2-Clause
# fig1.gp: the paper's Figure 1: the expected relative error of the i-th
# most frequent of 10,000 Zipf values given a Bloom error (k = 5): the
# paper's bound E' (a) and, per rank bin, Equation (1)'s exact sum (lines)
# against MS measured at gamma = 0.7 (points) (b), from fig1.csv
# (exp_spectral_analysis).
# Called by run.sh as:
#   gnuplot -e "csv='...'; out='...'" fig1.gp

set terminal pngcairo size 1300,550 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,2 title 'Figure 1: relative error by rank given a Bloom error, n = 10,000, k = 5'
set logscale xy
set format y '10^{%L}'
set grid
set key top left
set xlabel 'rank i'
skews = '0.2 0.6 1 1.4 1.8 2'
mid(lo, hi) = sqrt(lo * hi)
set title "(a) the paper's bound E'(RE_i)"
set ylabel "E'(RE_i)"
plot for [i=1:6] csv using (column('skew') == real(word(skews, i)) ? mid(column('bin_low'), column('bin_high')) : 1/0):'e_prime_mid' \
         with linespoints lw 2 lc i title sprintf('z = %s', word(skews, i))
set title '(b) Equation (1) (lines) and MS measured (points)'
set ylabel 'mean relative error of the values in error'
plot for [i=1:6] csv using (column('skew') == real(word(skews, i)) ? mid(column('bin_low'), column('bin_high')) : 1/0):'exact_mean' \
         with lines lw 2 lc i title sprintf('z = %s', word(skews, i)), \
     for [i=1:6] csv using (column('skew') == real(word(skews, i)) ? mid(column('bin_low'), column('bin_high')) : 1/0):'measured_mean' \
         with points pt 7 lc i notitle
unset multiplot
