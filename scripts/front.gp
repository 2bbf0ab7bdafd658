# front.gp: a plan's configurations that meet the SLO, $/hour against p99
# TPOT, and its Pareto front (hybridspec plan's points.csv and front.csv).
#
#   gnuplot -e "lib='scripts'; points='points.csv'; front='front.csv'; \
#               out='plots/x'; ti='...'" scripts/front.gp
load lib.'/common.gp'
set datafile separator ','
set title ti
set xlabel 'provisioned cost ($ an hour)'
set ylabel 'p99 TPOT over requests (ms)'
set key top right
set grid
set logscale x 2
@png
plot points using ($10 == 1 ? $3 : 1/0):(1000 * $8) every ::1 with points pointtype 7 linecolor rgb '#999999' title 'meets the SLO', \
     front using 3:(1000 * $8) every ::1 with linespoints pointtype 7 linewidth 2 linecolor rgb '#1f77b4' title 'Pareto front'
@svg
