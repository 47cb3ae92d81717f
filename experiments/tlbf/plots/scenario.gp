# SPDX-License-Identifier: BSD-2-Clause
# scenario.gp: one scenario beyond the paper (burst, drop, idle, sine) over
# time, from scenario_<name>_fp<fp>.csv (exp_tlbf_burst, exp_tlbf_scenarios).
# Panels: the arrival rate, the slices held, the memory, the false-positive
# rate (points: fresh keys; lines: stats.current_fp; dashed: the target).
# Called by run.sh as:
#   gnuplot -e "dir='...'; name='burst'; heading='...'; out='...'; meta='...'" scenario.gp

set terminal pngcairo size 1100,1300 enhanced font 'sans,11'
set output out
set datafile separator comma
set datafile columnheaders
load meta

file(i) = sprintf('%s/scenario_%s_fp%s.csv', dir, name, fps[i])
positive(v) = v > 0 ? v : NaN

set multiplot layout 4,1 title heading
set grid
set key outside right top vertical
set xlabel 'time / T'
set lmargin 12
set rmargin 36

set ylabel 'items per second'
set yrange [0:*]
plot file(1) using 2:3 with lines lw 1.5 lc rgb '#444444' title 'arrival rate'

set ylabel 'slices held'
set yrange [0:*]
plot for [i=1:|fps|] file(i) using 2:5 with steps lw 1.3 lc i title titles[i]

set ylabel 'memory (KiB)'
set logscale y
set yrange [*:*]
plot for [i=1:|fps|] file(i) using 2:($8/1024) with lines lw 1.3 lc i title titles[i]

set ylabel 'false-positive rate'
set format y '10^{%L}'
set yrange [1e-5:0.5]
plot for [i=1:|fps|] file(i) using 2:12 with lines lw 1.1 lc i title 'fp '.fps[i].' current\_fp', \
     for [i=1:|fps|] file(i) using 2:(positive(column(15))) with points pt 7 ps 0.5 lc i title 'fp '.fps[i].' measured', \
     for [i=1:|fps|] targets[i] with lines dt 2 lw 1.2 lc rgb '#000000' title (i == 1 ? 'target' : '')
unset multiplot
