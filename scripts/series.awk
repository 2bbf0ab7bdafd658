# series.awk: a sweep.csv (docs/sweep.md) as gnuplot data blocks, one per
# value of the column `by` (one block titled `title` without `by`).
#
#   awk -F, -f scripts/series.awk -v x=tenants.0.count -v y=all.itl_s.mean \
#       -v by=protocol.kind [-v xscale=1] [-v scale=1e3] \
#       [-v per=cloud.gpus_mean] sweep.csv
#
# With -v where="COL=VALUE;COL=VALUE", only the rows whose columns hold
# those values (as the file writes them; VALUE may be the end of it, for
# paths) are taken.
#
# A block is a title line (the series value in quotes, for gnuplot's `title
# columnheader(1)`) and rows "X MEAN CI95" in file order: x times `xscale`;
# y's `_mean` and `_ci95` columns times `scale`, divided by the column
# `per` when given. Blocks are apart by two blank lines (gnuplot's
# `index`), in the order they first appear.
function col(name,   j) {
	for (j = 1; j <= NF; j++)
		if ($j == name)
			return j
	printf "series.awk: %s: no column \"%s\"\n", FILENAME, name > "/dev/stderr"
	bad = 1
	exit 2
}
NR == 1 {
	if (scale == "")
		scale = 1
	if (xscale == "")
		xscale = 1
	cx = col(x)
	cm = col(y "_mean")
	cc = col(y "_ci95")
	cb = by != "" ? col(by) : 0
	cp = per != "" ? col(per) : 0
	nw = where != "" ? split(where, conds, ";") : 0
	for (i = 1; i <= nw; i++) {
		eq = index(conds[i], "=")
		wcol[i] = col(substr(conds[i], 1, eq - 1))
		wval[i] = substr(conds[i], eq + 1)
	}
	next
}
{
	for (i = 1; i <= nw; i++) {
		v = $(wcol[i])
		if (v != wval[i] && substr(v, length(v) - length(wval[i]) + 1) != wval[i])
			next
	}
	s = cb ? $cb : (title != "" ? title : y)
	if (!(s in rows))
		order[++n] = s
	d = cp ? $cp : 1
	rows[s] = rows[s] sprintf("%.9g %.9g %.9g\n", $cx * xscale, $cm * scale / d,
				  $cc * scale / d)
}
END {
	if (bad)
		exit 2
	for (i = 1; i <= n; i++)
		printf "%s\"%s\"\n%s", (i > 1 ? "\n\n" : ""), order[i], rows[order[i]]
}
