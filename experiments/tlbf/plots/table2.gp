# table2.gp: bits per element at steady state against the paper's Table 2
# ranges (exp_tlbf_bits, table2_summary.csv).
# Called by run.sh as: gnuplot -e "csv='...'; out='...'" table2.gp

set terminal pngcairo size 1000,650 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders

set title "Bits per element at steady state (T = 60 s, 10,000 items/s)\nthe paper's Table 2 range beside ebb's TLBF and an APBF of the same (k, l)"
set grid
set key left top
set logscale x
set format x '10^{%L}'
set xrange [3e-6:0.3]
set xlabel 'target false-positive rate'
set ylabel 'bits per element'
set yrange [0:60]

plot csv using 1:(($4+$5)/2):4:5 with yerrorbars pt 0 lw 6 lc rgb '#b0b0b0' title "paper's Table 2 range (min – max)", \
     csv using 1:10 with linespoints dt 2 pt 6 ps 1.5 lc rgb '#000000' title 'APBF, same (k, l): (k+l)k/(l ln 2)', \
     csv using 1:6 with points pt 7 ps 1.3 lc rgb '#1f77b4' title 'ebb TLBF: slice bits per item', \
     csv using 1:9 with points pt 5 ps 1.1 lc rgb '#d62728' title 'ebb TLBF: memory\_bytes·8 per item'
