#!/bin/sh
# report.sh DIR: writes DIR/REPORT.md from what scripts/run.sh left in DIR:
# the figures of plots/, and the tables, the evidence and the verdict on
# each claim of the paper ("holds", "holds only when ...", "does not hold")
# that `hybridspec claims` computed, by the thresholds it states, into
# DIR/claims.json; this script only writes them as Markdown. Written to a
# temporary file and renamed into place.
set -eu
dir=$1

# The verdicts and their evidence: `hybridspec claims` (study/claims.c, where
# every threshold is) wrote them into DIR/claims.json (scripts/run.sh runs
# it before the plots, which use claim (a)'s shares too).
claims=$dir/claims.json
if [ ! -f "$claims" ]; then
	echo "report: no $claims: run build/hybridspec claims $dir --json > $claims" >&2
	exit 1
fi

# figure NAME ALT SHOWS: the image (PNG; plots/ has the SVG beside it), when
# plots.sh made it, and the sentence SHOWS saying what it shows
figure() {
	if [ -f "$dir/plots/$1.png" ]; then
		printf '![%s](plots/%s.png)\n\n%s ([SVG](plots/%s.svg))\n\n' \
			"$2" "$1" "$3" "$1"
	else
		printf '(figure %s: not made, its inputs were missing)\n\n' "$1"
	fi
}

# blocks FILTER: the blocks (text, tables) a jq filter picks from
# claims.json, as Markdown, each followed by a blank line
blocks() {
	jq -r "$1"' | .[] |
		if .text then .text, ""
		else .table |
			("| " + (.columns | join(" | ")) + " |"),
			("|" + ([.columns[] | "---|"] | join(""))),
			(.rows[] | "| " + join(" | ") + " |"),
			""
		end' "$claims"
}

# edge_costs: the measurement the paper setting's edge costs rest on (the
# phones' profile in configs/paper/async.json, derived from the measured
# one by calib derive), with its provenance; docs/performance.md says what
# moved at each re-measurement
edge_costs() {
	phone=$(jq -r '.tenants[0].device.profile // empty' configs/paper/async.json)
	phone=${phone#../../}
	from=$(jq -r '.derivation.from // empty' "$phone" 2>/dev/null || true)
	if [ -z "$from" ] || [ ! -f "$from" ]; then
		echo 'Edge costs in these runs: the phone profile or the measurement it is derived from is missing.'
		return
	fi
	jq -r --arg phone "$phone" --arg from "$from" '"Edge costs in these runs: \($phone), derived (calib derive) from \($from): `calib cpu` on \(.provenance.machine), \(.provenance.date[0:10]), commit \(.provenance.commit), kernel set \(.kernel), \(.threads) threads, STREAM triad \(.stream_gbs * 10 | round / 10) GB/s; a draft step \(.fit.draft_base_s * 1e4 | round / 10) ms + \(.fit.draft_per_ctx_s * 1e7 | round / 10) us a context token, a prompt token \(.fit.prefill_per_token_s * 1e4 | round / 10) ms (docs/performance.md, Calibration profiles, says what moved at each re-measurement)."' "$from"
}

# claim ID: the claim's heading; claim_body ID: its evidence and verdict
claim_head() {
	printf '## (%s) %s\n\n' "$1" \
		"$(jq -r --arg id "$1" '.claims[] | select(.id == $id) | .title' "$claims")"
}
claim_body() {
	blocks "[.claims[] | select(.id == \"$1\")][0].blocks"
}

# (a) async hides WAN latency: ITL against RTT, async beside sync
claim_a() {
	claim_head a
	figure itl-vs-rtt 'ITL against RTT' 'Mean inter-token latency of the paper setting against the WAN round trip, by protocol: a flat line hides the WAN, a line rising with sync'"'"'s does not.'
	figure region-a 'where async hides the WAN: alpha against draft time' 'The share of the WAN latency async hides over alpha and the draft time a token; "*" marks where it is at least 50%, the points are the measured W4A16 drafts at the phone'"'"'s draft time.'
	figure hidden-share 'share of the WAN latency async hides, against alpha' 'The share of sync'"'"'s growth with the RTT that async removes, at each iid alpha and at the measured drafts; the dashed level is the threshold.'
	claim_body a
}

# (b) W4A16 keeps alpha high and W4A4 does not: the acceptance profiles
claim_b() {
	claim_head b
	figure quant 'alpha and perplexity against the draft format' 'Greedy acceptance (alpha) and the draft'"'"'s perplexity for each model and format measured, from the acceptance profiles.'
	figure accept-ea 'E[A] against gamma' 'Tokens committed per verification against the block length, measured along the text, beside the iid prediction at each profile'"'"'s alpha.'
	claim_body b
}

# (c) batching keeps the GPU busy: continuous against dedicated
claim_c() {
	claim_head c
	figure batching-busy 'GPU busy fraction against tenants' 'How busy the GPU is as tenants are added: one shared GPU (continuous batching) against a GPU per tenant.'
	figure batching-throughput 'tokens/s per GPU against tenants' 'Committed tokens a second per GPU as tenants are added, shared against dedicated GPUs.'
	claim_body c
}

# (d) queueing delay beyond capacity: many tenants on one GPU
claim_d() {
	claim_head d
	figure queueing 'wait for the KV cache against the offered load' 'The mean wait for a KV-cache slot against the offered load, measured and as the formulas predict it, up to the capacity where the queue stops emptying.'
	figure queueing-throughput 'delivered against offered load' 'Requests delivered a second against the offered load: the rate follows the load, then levels off at the capacity.'
	claim_body d
}

# (e) ITL close to edge drafting speed
claim_e() {
	claim_head e
	figure region-e-rtt 'where async ITL is close to the draft time: alpha against RTT' 'Async mean ITL over the draft time, over alpha and the RTT with the phone'"'"'s draft time; "*" marks where it is within 15%, the points are the measured W4A16 drafts at the paper'"'"'s 75 ms.'
	figure region-e-draft 'where async ITL is close to the draft time: alpha against draft time' 'The same over alpha and the draft time a token at RTT 75 ms.'
	claim_body e
}

# (f) cloud-side speculation, the baseline to beat (arXiv 2606.25091)
claim_f() {
	claim_head f
	figure region-f 'where edge drafting beats cloud_spec: alpha against RTT' 'The best edge protocol'"'"'s mean ITL over cloud_spec'"'"'s with a 5 ms draft, over alpha and the RTT; "*" would mark where the edge is faster.'
	for t in 'llama2-7b-tp1:LLaMA-2-7B on one H100' \
		'llama2-70b-tp4:LLaMA-2-70B on four H100s (tp 4), the 7B draft unchanged'; do
		figure "cloud-spec-tpot-${t%%:*}" "TPOT against RTT by protocol, ${t#*:}" \
			"Mean time per output token of one laptop client (M2 Pro, LLaMA-2-7B W4A16 drafts, alpha 0.8) against the RTT, by protocol, ${t#*:}."
		figure "cloud-spec-capacity-${t%%:*}" "SLO attainment against laptop clients, ${t#*:}" \
			"The share of requests that meet the SLO as laptop clients are added, ${t#*:}: where a protocol falls below 90% is its capacity."
	done
	claim_body f
}

# Energy and cost by protocol (run.sh's energy/ runs): the edge's joules a
# token by part, the battery, the cloud's joules and dollars.
energy() {
	echo '## Energy and cost by protocol'
	echo
	echo 'The paper'"'"'s setting with Raspberry Pi 5s as the edge (7.7 W computing, 2.1 W idle, the library'"'"'s one device with both published; WiFi radio from AT&T ARO'"'"'s profile), their draw taken from a 12.70 Wh battery (an iPhone 15 Pro'"'"'s, as a scale: the Pi has none); the cloud an H100 at 70 W idle, 700 W busy and $3.49 an hour (sim/gpu.c gives the sources). Joules are per answer (a finished request) and per output token; the GPU is paid by the provisioned hour (docs/design.md, section 8).'
	echo
	echo '| protocol | TPOT ms | edge J/answer | battery % per 100 answers | edge mJ/token | computing | prefill | waiting | radio | cloud mJ/token | $/M tokens | GPU-h per 1,000 tenants |'
	echo '|---|---|---|---|---|---|---|---|---|---|---|---|'
	for p in edge_only cloud_only cloud_spec sync async; do
		f=$dir/energy/$p/summary.json
		[ -f "$f" ] || { echo "| $p | (not run) |"; continue; }
		jq -r --arg p "$p" '.all as $a | def n(x; s): if x == null then "-" else (x * s * 100 | round / 100 | tostring) end;
			"| \($p) | \(n($a.tpot_s; 1000)) | \(n($a.edge_j_per_request; 1)) | \(n($a.battery_pct_per_request; 100)) | \(n($a.edge_j_per_token; 1000)) | \(n($a.edge_compute_j_per_token; 1000)) | \(n($a.edge_prefill_j_per_token; 1000)) | \(n($a.edge_wait_j_per_token; 1000)) | \(n($a.radio_j_per_token; 1000)) | \(n($a.cloud_j_per_token; 1000)) | \(n($a.usd_per_mtok; 1)) | \(n($a.gpu_hours_per_1000_tenants; 1)) |"' "$f"
	done
	echo
	echo 'The battery argument, measured: a device that drafts a 7B model computes almost all the time a request is open, so its battery drains at nearly its busy power; one that leaves the tokens to the cloud waits at its idle power. Whether the hybrid wins on the device depends on that ratio, not on the WAN.'
	echo
}

# The worked plan (run.sh's plan/): the answer and the Pareto front.
plan_section() {
	p=$dir/plan/plan.json
	echo '## A worked plan'
	echo
	if [ ! -f "$p" ]; then
		echo '(plan: not run)'
		echo
		return
	fi
	jq -r '.plan as $p | "`hybridspec plan configs/plan/phones.json`: the paper'"'"'s setting with \($p.set["/tenants/0/count"]) phones, SLO TTFT \($p.slo.ttft_s) s and TPOT \($p.slo.tpot_s * 1000) ms for \($p.slo.attainment * 100)% of requests (the lower end of the 95% interval over \($p.seeds | length) seeds), over \(.searches | length) candidates: GPUs, protocols and gammas (docs/plan.md)."' "$p"
	echo
	jq -r '.answer as $a | .one_fewer as $b |
		"Answer: **\($a.candidate) x \($a.replicas) replicas**, $\($a.usd_per_hour) an hour ($\($a.usd_per_mtok * 1000 | round / 1000) a million tokens), attainment \($a.attainment * 10000 | round / 10000) +- \($a.attainment_ci95 * 10000 | round / 10000); " +
		(if $b == null then "one replica is the least." else "with \($b.replicas) replicas it attains \($b.attainment * 10000 | round / 10000) and fails." end)' "$p"
	echo
	echo 'The Pareto front of cost against p99 TPOT among the configurations that meet the SLO:'
	echo
	echo '| candidate | replicas | $/hour | p99 TPOT ms | attainment |'
	echo '|---|---|---|---|---|'
	tail -n +2 "$dir/plan/front.csv" | awk -F, '{ printf "| %s | %s | %.2f | %.1f | %.4f |\n", $1, $2, $3, 1000 * $8, $4 }' | tr -d '"'
	echo
	figure plan-front 'plan: cost against p99 TPOT' 'Every configuration the plan simulated that meets the SLO, and the Pareto front.'
	plan_bands
}

# The plan at the ends of the phone's held-out bands (run.sh's
# plan-bands/): the answer and the best attainment an edge protocol
# reaches at each end, against the plan's own.
plan_bands() {
	b=$dir/plan-bands
	[ -f "$b/draft_band-low/plan.json" ] || return 0
	edge='[.searches[] | select(.candidate | test(" (sync|async) ")) | .points[].attainment] | max'
	said=""
	for key in draft_band prefill_band; do
		for end in low high; do
			s=$(jq -r --arg k "$key" --arg e "$end" "(.answer.candidate + \" x \" + (.answer.replicas | tostring)) as \$a | ($edge * 1000 | round / 1000) as \$m |
				\"\(\$k | sub(\"_band\"; \"\")) at its \(if \$e == \"low\" then \"fast\" else \"slow\" end) end: \(\$a) (an edge protocol at best \(\$m))\"" \
				"$b/$key-$end/plan.json")
			said="$said${said:+; }$s"
		done
	done
	same=$(for f in "$dir/plan/plan.json" "$b"/*/plan.json; do
		jq -r '.answer.candidate + " x " + (.answer.replicas | tostring)' "$f"
	done | sort -u | wc -l)
	m=$(jq -r "$edge * 1000 | round / 1000" "$dir/plan/plan.json")
	printf 'Sensitivity: with the phone'"'"'s draft and prefill at the ends of its profile'"'"'s held-out bands (device/draft_band, device/prefill_band; the best attainment an edge protocol reaches, %s with neither): %s. ' "$m" "$said"
	if [ "$same" -eq 1 ]; then
		echo 'The answer holds at every end.'
	else
		echo 'The answer moves inside the bands: the published figures cannot settle it.'
	fi
	echo
}

# Adaptive gamma against the best fixed gamma (the adaptive sweeps).
adaptive_section() {
	echo '## Adaptive speculation against the best fixed gamma'
	echo
	echo 'Each row: the best fixed gamma of the sweep at that setting and its mean TPOT over 3 seeds, adaptive'"'"'s, and how much worse adaptive is (negative: better); docs/adaptive.md says how gamma is chosen.'
	echo
	for s in adaptive:'iid alpha, RTT 10-400 ms' \
		adaptive-varying:'alpha that varies within a run (measured traces, Markov chains)' \
		adaptive-step:'an RTT that steps mid-run'; do
		f=$dir/sweeps/${s%%:*}/sweep.csv
		printf '### %s\n\n' "${s#*:}"
		if [ -f "$f" ]; then
			sh scripts/adaptive-table.sh "$f"
		else
			echo "(sweep ${s%%:*}: not run)"
		fi
		echo
	done
}

# The experiments that back no single claim.
others() {
	echo '## Other figures'
	echo
	figure itl-vs-tenants 'ITL against tenants' 'Mean inter-token latency of each protocol as tenants share one GPU.'
	blocks '.others["itl-vs-tenants"]'
	figure itl-vs-gamma 'ITL against gamma' 'Mean inter-token latency against the draft block length, by protocol.'
	figure tokens-per-verdict 'tokens per verification against gamma' 'Tokens committed per verification against the block length, by protocol.'
	blocks '.others["itl-vs-gamma"]'
	blocks '.others["handover"]'
	figure roofline 'verification time against batch tokens' 'The verify table'"'"'s time of an iteration against its tokens, beside the roofline'"'"'s.'
	figure gantt 'timeline of one async tenant' 'One async tenant'"'"'s drafting, blocks in flight and the GPU'"'"'s batches over time, from the traced run.'
}

tmp=$dir/.REPORT.md.tmp
trap 'rm -f "$tmp"' EXIT
{
	echo '# hybridspec: the claims of the paper, measured'
	echo
	printf 'Written by `make run` (scripts/run.sh, scripts/report.sh) on %s from %s. ' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" \
		"$(git describe --always --dirty 2>/dev/null || echo 'a tree without git')"
	echo 'Every number and verdict below is computed from the runs, sweeps and profiles named beside it; the verdicts use the thresholds stated in each section (hybridspec claims, study/claims.c).'
	echo
	echo '## The paper'"'"'s setting'
	echo
	echo 'configs/paper/: 32 phones drafting LLaMA-2-7B W4A16, the FP16 target on one H100 (multi_tenant: three device groups on two H100s); configs/paper/README.md gives the constants and their sources.'
	echo
	printf 'Acceptance in these runs: %s (each run'"'"'s summary.json names it per group; the profiles of every model are in claim (b)).\n' \
		"$(jq -r '.groups[0].acceptance' "$dir/runs/async/summary.json" 2>/dev/null || echo 'not recorded')"
	echo
	edge_costs
	echo
	blocks .setting
	echo 'Each verdict names where the claim holds. Claims (a), (e) and (f) are maps over alpha and the RTT or the draft time a token (sweep regions, with the measured drafts marked on them); claim (b) ranges over models and formats, (c) over tenants sharing a GPU and (d) over the offered load, each in its own table.'
	echo
	claim_a
	claim_b
	claim_c
	claim_d
	claim_e
	claim_f
	energy
	plan_section
	adaptive_section
	others
} > "$tmp"
mv "$tmp" "$dir/REPORT.md"
grep '^\*\*Verdict' "$dir/REPORT.md" | sed 's/^/report: /'
