#!/bin/sh
# adaptive-table.sh SWEEP.csv: adaptive gamma against the best fixed gamma
# in a sweep whose innermost axis is /protocol/gamma ("adaptive" and fixed
# values; configs/sweeps/adaptive*.json), as a Markdown table: a row per
# setting of the other axes, with the best fixed gamma and its mean TPOT,
# adaptive's, and how much worse adaptive is (negative: better); then the
# worst row.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 SWEEP.csv" >&2; exit 2; }
# commas inside quoted fields (JSON values of an axis) become semicolons
sed -E ':a; s/^(([^"]*"[^"]*")*[^"]*"[^",]*),/\1;/; ta' "$1" | awk -F, '
NR == 1 {
	for (i = 1; i <= NF; i++) col[$i] = i
	ng = col["protocol.gamma"]
	head = $2
	for (i = 3; i < ng; i++) head = head " | " $i
	next
}
{
	key = $2
	for (i = 3; i < ng; i++) key = key " | " $i
	g = $ng; t = $col["all.tpot_s_mean"]
	if (!(key in seen)) { order[n++] = key; seen[key] = 1 }
	if (g == "adaptive") ad[key] = t
	else if (!(key in best) || t < best[key]) { best[key] = t; bg[key] = g }
}
END {
	print "| " head " | best fixed gamma | its TPOT ms | adaptive TPOT ms | adaptive vs best |"
	s = "|"; for (i = 2; i < ng + 4; i++) s = s "---|"
	print s
	for (i = 0; i < n; i++) {
		k = order[i]; d = 100 * (ad[k] / best[k] - 1)
		if (i == 0 || d > worst) { worst = d; wk = k }
		gsub(/"/, "", k); gsub(/;/, ",", k)
		printf "| %s | %s | %.2f | %.2f | %+.2f%% |\n", k, bg[order[i]],
		       1000 * best[order[i]], 1000 * ad[order[i]], d
	}
	gsub(/"/, "", wk); gsub(/;/, ",", wk)
	printf "\nworst: adaptive %+.2f%% against the best fixed gamma (%s)\n", worst, wk
}'
