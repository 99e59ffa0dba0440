# Throughput against caller threads, one line per workload and
# implementation (podref solid, baseline dashed), from the data file that
# `podref bench --plot` writes: one block per workload, separated by two
# blank lines, each starting with a header line.
# Variables set with -e: datafile, outfile, blocks.
set terminal pngcairo size 1000,640 noenhanced
set output outfile
set title "podref vs kubelet-design baseline: throughput"
set xlabel "caller threads"
set ylabel "operations per second"
set logscale x 2
set logscale y
set grid
set key outside right
set style data linespoints
plot for [i=0:blocks-1] datafile index i using 1:2 title columnheader(2) \
       lw 2 pt 7, \
     for [i=0:blocks-1] datafile index i using 1:3 title columnheader(3) \
       dt 2 lw 2 pt 6
