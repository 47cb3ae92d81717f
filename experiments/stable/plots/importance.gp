# SPDX-License-Identifier: BSD-2-Clause
# importance.gp: the IBF paper's Figures 11-19 for one distribution, from
# importance_<reading>_<distribution>.csv (exp_stable_importance): per
# importance bucket, the data distribution (occurrences in the steady part),
# the false-positive and the false-negative rate of the five filters, one
# column per repeat fraction.
# Called by run.sh as:
#   gnuplot -e "csv='...'; out='...'; heading='...'" importance.gp

set terminal pngcairo size 1500,1100 enhanced font 'sans,10'
set output out
set datafile separator comma
set datafile columnheaders

filters = "BF stable IBF-2C IBF-MC IBF-H"
repeats = "10 30 50"

set multiplot layout 3,3 title heading
set grid
set xrange [0:51]
set xtics 5
set xlabel 'importance (buckets of 5)'
set style fill solid 0.6

do for [r=1:3] {
    rp = word(repeats, r)
    set title sprintf('data distribution, %s%% repeats', rp)
    set ylabel 'occurrences'
    set yrange [0:*]
    set key off
    plot csv using 3:(column('occurrences_r'.rp)) with boxes lc rgb '#6a8caf' notitle
}
do for [r=1:3] {
    rp = word(repeats, r)
    set title sprintf('false positives, %s%% repeats', rp)
    set ylabel 'FP rate (never-seen items)'
    set yrange [0:1]
    if (r == 3) { set key outside right top vertical } else { set key off }
    plot for [f=1:5] csv using 3:(column('fp_'.word(filters, f).'_r'.rp)) \
        with linespoints pt 7 ps 0.6 lw 1.5 lc f title word(filters, f)
}
do for [r=1:3] {
    rp = word(repeats, r)
    set title sprintf('false negatives, %s%% repeats', rp)
    set ylabel 'FN rate (repeated items)'
    set yrange [0:1]
    if (r == 3) { set key outside right top vertical } else { set key off }
    plot for [f=1:5] csv using 3:(column('fn_'.word(filters, f).'_r'.rp)) \
        with linespoints pt 7 ps 0.6 lw 1.5 lc f title word(filters, f)
}
unset multiplot
