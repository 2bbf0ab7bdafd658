# hidden.awk: how much of the WAN latency async drafting hides, from a
# sweep over /tenants/0/wan/rtt_s and /protocol/kind (sync and async), for
# each value of the column `by` (one group, "-", without it). After
# csv.awk:
#
#   awk -F, -v by=tenants.0.acceptance.alpha \
#       "$(cat scripts/csv.awk scripts/hidden.awk)" sweep.csv
#
# Out, a row per group in order: "group sync_slope async_slope share": the
# least-squares slopes of mean ITL against RTT (s of ITL per s of RTT) and
# the hidden share 1 - async slope / sync slope (sync waits out every
# round trip: its slope is what the WAN costs without hiding).
{
	g = by != "" ? c(by) : "-"
	k = c("protocol.kind")
	if (k != "sync" && k != "async")
		next
	if (!(g in seen))
		groups[++n] = g
	seen[g] = 1
	x = c("tenants.0.wan.rtt_s")
	y = c("all.itl_s.mean_mean")
	m[g, k]++
	sx[g, k] += x
	sy[g, k] += y
	sxx[g, k] += x * x
	sxy[g, k] += x * y
}
function slope(g, k,   d) {
	d = m[g, k] * sxx[g, k] - sx[g, k] * sx[g, k]
	return (m[g, k] * sxy[g, k] - sx[g, k] * sy[g, k]) / d
}
END {
	for (i = 1; i <= n; i++) {
		g = groups[i]
		s = slope(g, "sync")
		a = slope(g, "async")
		printf "%s %.6g %.6g %.6g\n", g, s, a, 1 - a / s
	}
}
