# SPDX-License-Identifier: BSD-2-Clause
# fig13.gp: the paper's Figures 13 and 14: (a) bits per counter of the
# encoded counters (N / m) and of the index with its slack, gamma code,
# against the array size, empty and after 10 m uniform increments (from
# fig13_gamma.csv); (b) the parts of the array in bits per counter, stacked
# (from fig14.csv); both written by exp_spectral_strarray.
# Called by run.sh as:
#   gnuplot -e "gamma_csv='...'; parts_csv='...'; out='...'" fig13.gp

set terminal pngcairo size 1100,500 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
set multiplot layout 1,2 title 'Figures 13 and 14: the string-array index''s size'
set grid
set key top left
set title '(a) Fig. 13: codes and index, Elias gamma'
set xlabel 'counters m'
set ylabel 'bits per counter'
set logscale x
set xrange [500:2e6]
set format x '10^{%T}'
set yrange [0:8]
set key right center
plot gamma_csv using 'counters':'empty_codes' with linespoints pt 4 lw 2 title 'codes N/m, empty', \
     gamma_csv using 'counters':'empty_index_slack' with linespoints pt 5 lw 2 title 'index + slack, empty', \
     gamma_csv using 'counters':'average10_codes' with linespoints pt 6 lw 2 title 'codes N/m, average 10', \
     gamma_csv using 'counters':'average10_index_slack' with linespoints pt 7 lw 2 title 'index + slack, average 10'
unset logscale x
set xrange [*:*]
set yrange [0:9]
set format x '%g'
set title '(b) Fig. 14: the parts (10^6 counters; spectral filter 721,348)'
set xlabel ''
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set xtics rotate by -15
set key top right
plot parts_csv using 'codes':xtic(1) title 'codes (N)', \
     '' using 'coarse' title 'coarse offsets', \
     '' using 'sub' title 'sub-block offsets', \
     '' using 'slack' title 'slack', \
     '' using 'fixed' title 'header, spare, guard'
unset multiplot
