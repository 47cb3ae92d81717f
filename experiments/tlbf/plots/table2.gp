# SPDX-License-Identifier: BSD-2-Clause
# table2.gp: bits per element at steady state against the paper's Table 2
# ranges (exp_tlbf_bits): the range per fp (table2_summary.csv), and per
# run (table2_runs.csv) the APBF paper's five (k, l), each created for 0.5x
# and 2x the rate, beside their (k+l)k/(l ln 2), and ebb's default shape.
# Called by run.sh as:
#   gnuplot -e "csv='<summary>'; runs='<runs>'; out='...'" table2.gp

set terminal pngcairo size 1000,650 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders

set title "Bits per element at steady state (slice bits per item of the last T)\nthe paper's Table 2 range beside the APBF paper's five (k, l) per fp and ebb's default"
set grid
set key left bottom box opaque
set logscale x
set format x '10^{%L}'
set xrange [3e-6:0.3]
set xlabel 'target false-positive rate (the five (k, l) of an fp spread left to right, l growing)'
set ylabel 'bits per element'
set yrange [0:65]

# Spreads the five combinations of an fp around it on the log axis.
spread(fp, combo) = fp * 1.22 ** (combo - 3)
paper(d) = (column(2) > 0 && column(5) == d)

set style fill transparent solid 0.35 noborder
plot csv using 1:(($2+$3)/2):(spread($1, 0.4)):(spread($1, 7)):2:3 with boxxyerror lc rgb '#a0a0a0' title "paper's Table 2 range (min – max)", \
     runs using (spread($1, $2)):($2 > 0 && $5 == 0.5 ? $9 : 1/0) with points pt 6 ps 2.0 lc rgb '#000000' title '(k+l)k/(l ln 2), APBF paper (k, l)', \
     runs using (spread($1, $2)):(paper(0.5) ? $12 : 1/0) with points pt 9 ps 1.2 lc rgb '#1f77b4' title 'ebb TLBF, (k, l) given, created for 0.5x the rate', \
     runs using (spread($1, $2)):(paper(2) ? $12 : 1/0) with points pt 11 ps 1.2 lc rgb '#d62728' title 'ebb TLBF, (k, l) given, created for 2x the rate', \
     runs using (spread($1, 6.5)):($2 == 0 ? $12 : 1/0) with points pt 5 ps 1.3 lc rgb '#2ca02c' title "ebb TLBF, ebb's default (k, l) (least memory)"
