# accept.awk: one acceptance profile (docs/calib.md), flattened by jflat
# (scripts/json.sh), appended to the data of the acceptance plots:
#
#   jflat P.json | awk -F'\t' -f scripts/accept.awk \
#       -v quant=quant.dat -v ea=ea.dat
#
# quant: a row "format alpha_greedy alpha_stochastic ppl_target ppl_draft"
# (format: the target model's name, then the draft's format, one word);
# ea: a block (title line: the format) of rows "gamma E[A] iid_E[A]", the
# measured tokens per verification and (1 - a^(g+1)) / (1 - a) at the
# profile's alpha_greedy, by gamma; blocks apart by two blank lines.
$1 == "/draft_quant" { format = $2 }
$1 == "/target" { model = $2; sub(/:.*/, "", model) }
$1 == "/alpha_greedy" { ag = $2 }
$1 == "/alpha_stochastic" { as = $2 }
$1 == "/ppl" { ppl = $2 }
$1 == "/ppl_draft" { pd = $2 }
$1 ~ /^\/mean_accepted_per_gamma\// {
	g = substr($1, length("/mean_accepted_per_gamma/") + 1) + 0
	measured[g] = $2
	if (g > gmax)
		gmax = g
}
END {
	if (format == "" || ag == "" || !gmax) {
		print "accept.awk: not an acceptance profile" > "/dev/stderr"
		exit 2
	}
	if (model != "")
		format = model "/" format
	print format, ag, as, ppl, pd >> quant
	# a first block has no separator before it
	getline first < ea
	close(ea)
	printf "%s%s\n", (first != "" ? "\n\n" : ""), format >> ea
	for (g = 1; g <= gmax; g++)
		if (g in measured)
			printf "%d %s %.6g\n", g, measured[g],
			       (ag < 1 ? (1 - ag ^ (g + 1)) / (1 - ag) : g + 1) >> ea
}
