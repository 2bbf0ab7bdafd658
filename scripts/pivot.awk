# pivot.awk: a sweep.csv as a Markdown table, a row per value of `row` and
# a column per value of `by` (in the order they first appear), each cell
# the mean of metric `y` (times `scale`, printf format `fmt`) and the
# half-width of its 95% interval.
#
#   awk -F, -v row=tenants.0.count -v by=protocol.kind -v y=all.itl_s.mean \
#       -v scale=1e3 -v fmt=%.1f -v head=tenants \
#       "$(cat scripts/csv.awk scripts/pivot.awk)" sweep.csv
{
	r = c(row)
	b = c(by)
	if (!(r in seen_r))
		rows[++nr] = r
	if (!(b in seen_b))
		cols[++nb] = b
	seen_r[r] = seen_b[b] = 1
	cell[r, b] = sprintf(fmt " ± " fmt, c(y "_mean") * scale, c(y "_ci95") * scale)
}
END {
	line = "| " head " |"
	rule = "|---|"
	for (j = 1; j <= nb; j++) {
		line = line " " cols[j] " |"
		rule = rule "---|"
	}
	print line
	print rule
	for (i = 1; i <= nr; i++) {
		line = "| " rows[i] " |"
		for (j = 1; j <= nb; j++)
			line = line " " ((rows[i], cols[j]) in cell ? cell[rows[i], cols[j]] : "") " |"
		print line
	}
}
