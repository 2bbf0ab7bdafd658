# gantt.gp: one tenant's timeline as horizontal bars, a row per stage (the
# rows gantt.awk writes: "row start_ms end_ms label").
#
#   gnuplot -e "lib='scripts'; data='gantt.dat'; out='plots/gantt'; \
#               ti='...'" scripts/gantt.gp
load lib.'/common.gp'
set title ti
set xlabel 'time since the tenant first drafts (ms)'
set yrange [4.6:-0.6]
set grid noytics
set key off
set style fill solid 0.9 noborder
@png
plot data using (($2 + $3) / 2):1:(($3 - $2) / 2):(0.35):($1 + 1):ytic(4) \
	with boxxyerror linecolor variable
@svg
