# roofline.gp: the time of one verification batch against its tokens: the
# verify-cost table (a line per context length; blocks of "tokens ms" with
# a title line) and, when given, the simulator's roofline for the table's
# GPU and model (model: rows "tokens ms") with its ridge (ridge: tokens).
#
#   gnuplot -e "lib='scripts'; data='verify.dat'; out='plots/x'; ti='...'; \
#               [model='roof.dat'; mtitle='...'; ridge=221]" scripts/roofline.gp
load lib.'/common.gp'
set title ti
set xlabel 'tokens in the batch'
set ylabel 'time of one batch (ms)'
set logscale x 2
set logscale y 10
set key top left
roof = ""
if (exists("model")) {
	roof = sprintf(", '%s' using 1:2 with lines dashtype 2 linecolor rgb '#222222' title '%s'", model, mtitle)
	set arrow from ridge, graph 0 to ridge, graph 1 nohead dashtype 3 linecolor rgb '#555555'
	set label sprintf('ridge: %.0f tokens', ridge) at ridge, graph 0.9 offset 0.5, 0
}
@png
plot for [i=0:*] data index i using 1:2 with linespoints title columnheader(1) @roof
@svg
