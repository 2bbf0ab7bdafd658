# map.gp: where a claim holds, over alpha (x) and a second axis (y): each
# cell of a regular grid coloured by its value and marked "*" where the
# claim holds, the measured drafts as labelled points.
#
#   gnuplot -e "lib='scripts'; data='m.dat'; pts='p.dat'; out='plots/x'; \
#               xt='(\"0.5\" 0, ...)'; yt='(\"10\" 0, ...)'; xl='...'; \
#               yl='...'; ti='...'; cb='...'" scripts/map.gp
#
# data: "i j value ok" a cell (i, j the column and row, ok 1 or 0); pts:
# "x y label ylabel" a point and where its label goes, in the same index
# units (a measured alpha lies between two columns).
load lib.'/common.gp'
set title ti
set xlabel xl
set ylabel yl
set cblabel cb
eval 'set xtics '.xt
eval 'set ytics '.yt
set xrange [-0.5:*]
set yrange [-0.5:*]
set grid noxtics noytics
set palette defined (0 '#f7fbff', 1 '#6baed6', 2 '#08306b')
set key off
@png
plot data using 1:2:3 with image, \
     data using 1:2:($4 > 0 ? "*" : "") with labels font ',14' textcolor rgb '#d55e00', \
     pts using 1:2 with points pointtype 7 pointsize 1.4 linecolor rgb '#000000', \
     pts using 1:4:3 with labels left offset 0.5, 0 font ',9'
@svg
