# SPDX-License-Identifier: BSD-2-Clause
# fig6.gp: the paper's Figure 6: additive error (a) and error ratio (b) of
# MS, MI, RM (the library's defaults) and RM with the paper's split, all
# at equal memory in bytes, against gamma (k = 5), and the additive error against k
# (gamma = 0.7) (c), from fig6_gamma.csv and fig6_k.csv
# (exp_spectral_sweeps). The dotted line is the optimal gamma, ln 2.
# Called by run.sh as:
#   gnuplot -e "gamma_csv='...'; k_csv='...'; out='...'" fig6.gp

set terminal pngcairo size 1500,500 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,3 title 'Figure 6: Zipf skew 0.5, 1,000 values, M = 100,000, mean of 5 runs'
set grid
set key top left
set arrow 1 from log(2), graph 0 to log(2), graph 1 nohead dt 3 lc rgb 'gray40'
set title '(a) additive error, k = 5'
set xlabel 'gamma = nk/m'
set ylabel 'sqrt(sum (f^ - f)^2 / n)'
plot gamma_csv using 'gamma':'ms_additive' with linespoints pt 7 lw 2 title 'MS', \
     gamma_csv using 'gamma':'mi_additive' with linespoints pt 5 lw 2 title 'MI', \
     gamma_csv using 'gamma':'rm_additive' with linespoints pt 9 lw 2 title 'RM (equal bytes)', \
     gamma_csv using 'gamma':'rmp_additive' with linespoints pt 8 lw 2 title 'RM, paper split'
set title '(b) error ratio, k = 5'
set ylabel 'error ratio (log)'
set logscale y
plot gamma_csv using 'gamma':'ms_ratio' with linespoints pt 7 lw 2 title 'MS', \
     gamma_csv using 'gamma':'mi_ratio' with linespoints pt 5 lw 2 title 'MI', \
     gamma_csv using 'gamma':'rm_ratio' with linespoints pt 9 lw 2 title 'RM (equal bytes)', \
     gamma_csv using 'gamma':'rmp_ratio' with linespoints pt 8 lw 2 title 'RM, paper split', \
     gamma_csv using 'gamma':'eb_exact' with lines dt 2 lc rgb 'gray40' title 'E_b'
unset logscale y
unset arrow 1
set title '(c) additive error, gamma = 0.7'
set xlabel 'k'
set ylabel 'sqrt(sum (f^ - f)^2 / n)'
plot k_csv using 'k':'ms_additive' with linespoints pt 7 lw 2 title 'MS', \
     k_csv using 'k':'mi_additive' with linespoints pt 5 lw 2 title 'MI', \
     k_csv using 'k':'rm_additive' with linespoints pt 9 lw 2 title 'RM (equal bytes)', \
     k_csv using 'k':'rmp_additive' with linespoints pt 8 lw 2 title 'RM, paper split'
unset multiplot
