#!/bin/sh
# report.sh DIR [CALIB]: writes DIR/REPORT.md from what scripts/run.sh left
# in DIR (runs/, sweeps/, plots/, formulas.json) and the acceptance
# profiles in CALIB (default results/calib): tables, the figures, and for
# each claim of the paper its evidence and a verdict ("holds", "holds only
# when ...", "does not hold"), which `hybridspec claims` decides by the
# thresholds it states (BIN: the binary, default build/hybridspec). Written
# to a temporary file and renamed into place.
set -eu
lib=$(dirname "$0")
. "$lib/json.sh"
dir=$1
calib=${2:-results/calib}

# The verdicts and their evidence: `hybridspec claims` (sim/claims.c, where
# every threshold is), into DIR/claims.json; this script writes them out.
bin=${BIN:-build/hybridspec}
claims=$dir/claims.json
"$bin" claims "$dir" --calib "$calib" --json >"$claims.tmp"
mv "$claims.tmp" "$claims"

# pivot SWEEP ROW ROWHEAD BY METRIC SCALE FORMAT: a Markdown table
pivot() {
	awk -F, -v row="$2" -v head="$3" -v by="$4" -v y="$5" -v scale="$6" \
		-v fmt="$7" "$(cat "$lib/csv.awk" "$lib/pivot.awk")" \
		"$dir/sweeps/$1/sweep.csv"
}

# figure NAME CAPTION: the image, when plots.sh made it
figure() {
	if [ -f "$dir/plots/$1.png" ]; then
		printf '![%s](plots/%s.png)\n\n' "$2" "$1"
	else
		printf '(figure %s: not made, its inputs were missing)\n\n' "$1"
	fi
}

# The paper's setting: a row per protocol from the runs' summaries.
setting() {
	echo '| run | protocol | mean ITL (ms) | p99 ITL (ms) | TTFT p50 (s) | tokens/s per tenant | alpha | tokens per verification | GPU busy | SLO met |'
	echo '|---|---|---|---|---|---|---|---|---|---|'
	for p in edge_only cloud_only sync async multi_tenant; do
		f=$dir/runs/$p/summary.json
		[ -f "$f" ] || continue
		jflat "$f" | awk -F'\t' -v run="$p" '
			{ v[$1] = $2 }
			END {
				proto = v["/groups/0/protocol"]
				for (g = 1; ("/groups/" g "/protocol") in v; g++)
					if (v["/groups/" g "/protocol"] != proto)
						proto = "mixed"
				printf "| %s | %s | %.1f | %.1f | %.2f | %.2f | %.3f | %.2f | %.1f%% | %.1f%% |\n",
				       run, proto, 1e3 * v["/all/itl_s/mean"],
				       1e3 * v["/all/itl_s/p99"], v["/all/ttft_s/p50"],
				       v["/all/tokens_per_s_per_tenant"], v["/all/alpha"],
				       v["/all/tokens_per_verdict"],
				       100 * v["/cloud/busy_fraction"],
				       100 * v["/all/slo_attainment"]
			}'
	done
	echo
}

# claim ID: the claim's heading, then its evidence and verdict as
# claims.json gives them (text blocks, then tables), each with a blank line
claim_head() {
	printf '## (%s) %s\n\n' "$1" \
		"$(jq -r --arg id "$1" '.claims[] | select(.id == $id) | .title' "$claims")"
}
claim_body() {
	jq -r --arg id "$1" '
		.claims[] | select(.id == $id) | .blocks[] |
		if .text then .text, ""
		else .table |
			("| " + (.columns | join(" | ")) + " |"),
			("|" + ([.columns[] | "---|"] | join(""))),
			(.rows[] | "| " + join(" | ") + " |"),
			""
		end' "$claims"
}

# (a) async hides WAN latency: ITL against RTT, async beside sync
claim_a() {
	claim_head a
	figure itl-vs-rtt 'ITL against RTT'
	figure hidden-share 'share of the WAN latency async hides, against alpha'
	if [ "$(jq -r '.claims[] | select(.id == "a") | .pivot // false' "$claims")" = true ]; then
		echo 'Mean ITL (ms, ± 95% interval over the seeds) against the round-trip time, in the paper setting:'
		echo
		pivot itl-vs-rtt tenants.0.wan.rtt_s 'RTT (s)' protocol.kind all.itl_s.mean 1e3 %.1f
		echo
	fi
	claim_body a
}

# (b) W4A16 keeps alpha high and W4A4 does not: the acceptance profiles
claim_b() {
	claim_head b
	figure quant 'alpha and perplexity against the draft format'
	figure accept-ea 'E[A] against gamma'
	claim_body b
}

# (c) batching keeps the GPU busy: continuous against dedicated
claim_c() {
	claim_head c
	figure batching-busy 'GPU busy fraction against tenants'
	figure batching-throughput 'tokens/s per GPU against tenants'
	claim_body c
}

# (d) queueing delay beyond capacity: many tenants on one GPU
claim_d() {
	claim_head d
	figure queueing 'ITL against tenants, past capacity'
	claim_body d
}

# (e) ITL close to edge drafting speed
claim_e() {
	claim_head e
	claim_body e
}

# The experiments that back no single claim.
others() {
	echo '## Other figures'
	echo
	figure itl-vs-tenants 'ITL against tenants'
	if [ -f "$dir/sweeps/itl-vs-tenants/sweep.csv" ]; then
		echo 'Mean ITL (ms) against the number of tenants on one GPU:'
		echo
		pivot itl-vs-tenants tenants.0.count tenants protocol.kind all.itl_s.mean 1e3 %.1f
		echo
	fi
	figure itl-vs-gamma 'ITL against gamma'
	figure tokens-per-verdict 'tokens per verification against gamma'
	if [ -f "$dir/sweeps/itl-vs-gamma/sweep.csv" ]; then
		echo 'Mean ITL (ms) and tokens committed per verification against gamma:'
		echo
		pivot itl-vs-gamma protocol.gamma gamma protocol.kind all.itl_s.mean 1e3 %.1f
		echo
		pivot itl-vs-gamma protocol.gamma gamma protocol.kind all.tokens_per_verdict 1 %.2f
		echo
	fi
	figure roofline 'verification time against batch tokens'
	figure gantt 'timeline of one async tenant'
}

tmp=$dir/.REPORT.md.tmp
trap 'rm -f "$tmp"' EXIT
{
	echo '# hybridspec: the claims of the paper, measured'
	echo
	printf 'Written by `make run` (scripts/run.sh, scripts/report.sh) on %s from %s. ' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" \
		"$(git describe --always --dirty 2>/dev/null || echo 'a tree without git')"
	echo 'Every number and verdict below is computed from the runs, sweeps and profiles named beside it; the verdicts use the thresholds stated in each section (hybridspec claims, sim/claims.c).'
	echo
	echo '## The paper'"'"'s setting'
	echo
	echo 'configs/paper/: 32 phones drafting LLaMA-2-7B W4A16, the FP16 target on one H100 (multi_tenant: three device groups on two H100s); configs/paper/README.md gives the constants and their sources.'
	echo
	setting
	claim_a
	claim_b
	claim_c
	claim_d
	claim_e
	others
} > "$tmp"
mv "$tmp" "$dir/REPORT.md"
grep '^\*\*Verdict' "$dir/REPORT.md" | sed 's/^/report: /'
