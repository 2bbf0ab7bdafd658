# lines.gp: y against x, one line with 95% error bars per data block (the
# blocks series.awk writes: a title line, then "x mean ci95" rows).
#
#   gnuplot -e "lib='scripts'; data='d.dat'; out='plots/x'; xl='...'; \
#               yl='...'; ti='...'" scripts/lines.gp
#
# Optional: logx, logy (a base: logarithmic axis), key (its position),
# hline and hlabel (a dashed horizontal reference level and its name),
# vline and vlabel (a dotted vertical mark and its label).
load lib.'/common.gp'
set title ti
set xlabel xl
set ylabel yl
keypos = exists("key") ? key : "top left"
set key @keypos
if (exists("logx")) { set logscale x logx }
if (exists("logy")) { set logscale y logy } else { set yrange [0:*] }
ref = exists("hline") ? sprintf(", %.9g with lines dashtype 2 linecolor rgb '#555555' title '%s'", hline, hlabel) : ""
if (exists("vline")) {
	set arrow from vline, graph 0 to vline, graph 1 nohead dashtype 3 linecolor rgb '#555555'
	set label vlabel at vline, graph 0.95 offset 0.5, 0
}
@png
plot for [i=0:*] data index i using 1:2:3 with yerrorlines title columnheader(1) @ref
@svg
