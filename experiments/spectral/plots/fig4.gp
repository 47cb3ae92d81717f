# SPDX-License-Identifier: BSD-2-Clause
# fig4.gp: the paper's Figure 4: the ad-hoc iceberg query's error rate
# against the threshold T for several skews (k = 5, gamma = 1): the paper's
# formula (lines) and MS measured (points), from fig4.csv
# (exp_spectral_analysis).
# Called by run.sh as:
#   gnuplot -e "csv='...'; out='...'" fig4.gp

set terminal pngcairo size 1000,600 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set title 'Figure 4: iceberg error rate, Zipf data (1,000 values, M = 100,000), k = 5, gamma = 1'
set xlabel 'threshold T'
set ylabel 'share of values below T reported'
set logscale x
set grid
set key top right
skews = '0 0.5 1 1.5 2'
plot for [i=1:5] csv using (column('skew') == real(word(skews, i)) ? column('threshold') : 1/0):'formula' \
         with lines lw 2 lc i title sprintf('skew %s, formula', word(skews, i)), \
     for [i=1:5] csv using (column('skew') == real(word(skews, i)) ? column('threshold') : 1/0):'ms' \
         with points pt 7 ps 1.2 lc i title sprintf('skew %s, MS measured', word(skews, i))
