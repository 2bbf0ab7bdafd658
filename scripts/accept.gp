# accept.gp: the acceptance profiles. With what='ea' (ea.dat of
# accept.awk): tokens per verification E[A] against gamma, measured by
# real speculative decoding (points) beside the iid formula at each
# draft's alpha (dashed). With what='quant' (quant.dat): alpha (bars, left
# axis) and perplexity (points, right axis) of each draft format.
#
#   gnuplot -e "lib='scripts'; data='ea.dat'; out='plots/x'; what='ea'; \
#               ti='...'" scripts/accept.gp
load lib.'/common.gp'
set title ti
if (what eq 'ea') {
	set xlabel 'gamma (draft tokens per block)'
	set ylabel 'E[A]: tokens committed per verification'
	set key top left
	set yrange [1:*]
	@png
	plot for [i=0:*] data index i using 1:2 with linespoints linetype i+1 \
		title columnheader(1), \
	     for [i=0:*] data index i using 1:3 with lines dashtype 2 \
		linetype i+1 notitle, \
	     NaN with lines dashtype 2 linecolor rgb '#555555' \
		title 'iid formula at the draft alpha'
	@svg
} else {
	set ylabel 'acceptance rate alpha'
	set y2label 'perplexity on the text (log scale)'
	set yrange [0:1.05]
	set logscale y2
	set xtics rotate by -35
	set ytics nomirror
	set y2tics
	set key below maxrows 2
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 noborder
	@png
	plot data using 2:xtic(1) title 'alpha greedy', \
	     '' using 3 title 'alpha stochastic', \
	     '' using 0:5 axes x1y2 with points linetype 3 pointsize 1.6 \
		title 'draft perplexity (right)', \
	     '' using 0:4 axes x1y2 with lines dashtype 2 linetype 4 \
		title 'target perplexity (right)'
	@svg
}
