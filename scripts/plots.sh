#!/bin/sh
# plots.sh DIR [CALIB]: the figures of `make run` as DIR/plots/NAME.png and
# NAME.svg, from whichever of their inputs are there (a figure without its
# input is skipped, with a note):
#   DIR/sweeps/NAME/sweep.csv  the sweeps of configs/sweeps/
#   DIR/formulas.json          `hybridspec formulas --json` of the paper's
#                              async setting (the edge's draft time)
#   DIR/trace/trace.json       a traced async run (the timeline)
#   CALIB/accept-*.json        acceptance profiles  (CALIB: results/calib)
#   CALIB/verify-*.json        a verify-cost table (the first one)
# The data behind each figure stays in DIR/plots/data/. BIN (default
# build/hybridspec) computes the roofline beside the verify table.
set -eu
lib=$(dirname "$0")
. "$lib/json.sh"
dir=$1
calib=${2:-results/calib}
bin=${BIN:-build/hybridspec}
pl=$dir/plots
data=$pl/data
mkdir -p "$data"

# gp SCRIPT FIGURE SETTINGS: draws DIR/plots/FIGURE.png and .svg with
# scripts/SCRIPT.gp, its variables set by SETTINGS
gp() {
	gnuplot -e "lib='$lib'; out='$pl/$2'; $3" "$lib/$1.gp"
	echo "plots: $pl/$2.png"
}

# sweep NAME FIGURE X XSCALE Y YSCALE BY PER SETTINGS [WHERE]: Y (times
# YSCALE, over the column PER when given) against X (times XSCALE), a line
# per value of BY, from sweep NAME (its rows that WHERE, series.awk's
# filter, keeps); SETTINGS are lines.gp's labels and options.
sweep() {
	f=$dir/sweeps/$1/sweep.csv
	if [ ! -f "$f" ]; then
		echo "plots: skipped $2: no $f"
		return
	fi
	awk -F, -f "$lib/series.awk" -v x="$3" -v xscale="$4" -v y="$5" \
		-v scale="$6" -v by="$7" -v per="$8" -v where="${10:-}" "$f" \
		> "$data/$2.dat"
	gp lines "$2" "data='$data/$2.dat'; $9"
}

# the edge's draft time per token, a reference level on the ITL figures
td=$(jget "$dir/formulas.json" /t_draft_s)
ref=${td:+$(awk -v t="$td" 'BEGIN { printf "hline=%.6g; hlabel=\"edge draft time per token\"", 1e3 * t }')}
tenants="xl='tenants (edge devices)'; logx=2"
itl="yl='mean inter-token latency (ms)'"

sweep itl-vs-tenants itl-vs-tenants tenants.0.count 1 all.itl_s.mean 1e3 \
	protocol.kind "" "$tenants; $itl; ti='ITL against tenants, by protocol'; $ref"
sweep itl-vs-rtt itl-vs-rtt tenants.0.wan.rtt_s 1e3 all.itl_s.mean 1e3 \
	protocol.kind "" "xl='WAN round-trip time (ms)'; $itl; ti='ITL against RTT: where async hides the WAN'; $ref"
# the batching sweep as derived (it also runs the device at its bands' ends)
sweep batching batching-busy tenants.0.count 1 cloud.busy_fraction 100 \
	cloud.policy "" "$tenants; yl='GPU busy (% of GPU time)'; ti='Busy fraction: shared GPU (continuous) against a GPU per tenant (dedicated)'" \
	"tenants.0.device.draft_band=none"
sweep batching batching-throughput tenants.0.count 1 all.tokens_per_s 1 \
	cloud.policy cloud.gpus_mean "$tenants; logy=10; yl='committed tokens/s per GPU'; ti='Throughput per GPU: continuous batching against dedicated GPUs'" \
	"tenants.0.device.draft_band=none"
sweep itl-vs-gamma itl-vs-gamma protocol.gamma 1 all.itl_s.mean 1e3 \
	protocol.kind "" "xl='gamma (draft tokens per block)'; $itl; ti='ITL against gamma'; key='top right'; $ref"
sweep itl-vs-gamma tokens-per-verdict protocol.gamma 1 all.tokens_per_verdict 1 \
	protocol.kind "" "xl='gamma (draft tokens per block)'; yl='tokens committed per verification'; ti='Tokens per verification against gamma'"

# cloud-side speculation against edge drafting (claim (f)): the laptop's
# drafts, LLaMA-2-7B on one H100 and 70B on four
laptop="tenants.0.device.profile=edge-laptop-m2-pro-llama2-7b-w4a16.json"
for t in llama2-7b:1 llama2-70b:4; do
	m=${t%:*} tp=${t#*:}
	sweep cloud-spec-itl "cloud-spec-tpot-$m-tp$tp" tenants.0.wan.rtt_s 1e3 \
		all.tpot_s 1e3 protocol.kind "" "xl='WAN round-trip time (ms)'; yl='mean time per output token (ms)'; logx=2; logy=10; key='center right'; ti='TPOT against RTT, one laptop client, $m on $tp GPU(s), alpha 0.8'" \
		"$laptop;cloud.model=$m;cloud.tp=$tp;tenants.0.acceptance.alpha=0.8"
	sweep cloud-spec-capacity "cloud-spec-capacity-$m-tp$tp" tenants.0.count 1 \
		all.slo_attainment 100 protocol.kind "" "$tenants; yl='requests meeting the SLO (%)'; key='bottom left'; ti='SLO attainment against laptop clients, $m on $tp GPU(s)'" \
		"$laptop;cloud.model=$m;cloud.tp=$tp"
done

# Where each claim holds over alpha and a second axis (RTT or draft time):
# the maps claims.json carries (claims (a), (e), (f); sweep regions).
maps=""
[ -f "$dir/claims.json" ] &&
	maps=$(jq -r '.claims[].maps[]?.name' "$dir/claims.json")
for m in $maps; do
	sel=".claims[].maps[]? | select(.name == \"$m\")"
	jq -r "$sel"' | . as $m | range(0; .y | length) as $j |
		range(0; .x | length) as $i |
		"\($i) \($j) \($m.value[$j][$i]) \(if $m.ok[$j][$i] then 1 else 0 end)"' \
		"$dir/claims.json" > "$data/$m.dat"
	# a measured alpha between columns i and i + 1 sits between them; the
	# labels are stacked above their row in alpha order, apart
	jq -r "$sel"' | . as $m | .points | sort_by(.alpha) | to_entries[] |
		.key as $k | .value | .alpha as $a | .y as $y |
		([range(0; $m.x | length) | select($m.x[.] <= $a)] | last) as $i |
		select($i != null) |
		(if $i + 1 < ($m.x | length)
		 then $i + ($a - $m.x[$i]) / ($m.x[$i + 1] - $m.x[$i]) else $i end) as $x |
		([range(0; $m.y | length)] | min_by(($m.y[.] - $y) | fabs)) as $jy |
		"\($x) \($jy) \"\(.label)\" \($jy + 0.2 + 0.17 * $k)"' \
		"$dir/claims.json" > "$data/$m.pts"
	xt=$(jq -r "$sel"' | [.x | to_entries[] | "\"\(.value)\" \(.key)"] | "(" + join(", ") + ")"' "$dir/claims.json")
	yt=$(jq -r "$sel"' | [.y | to_entries[] | "\"\(.value)\" \(.key)"] | "(" + join(", ") + ")"' "$dir/claims.json")
	gnuplot -e "lib='$lib'; out='$pl/$m'; data='$data/$m.dat'; pts='$data/$m.pts'; xt='$xt'; yt='$yt'; xl='alpha (iid)'; yl='$(jq -r "$sel | .ylabel" "$dir/claims.json")'; ti='$(jq -r "$sel | .title" "$dir/claims.json")'; cb='$(jq -r "$sel | .vlabel" "$dir/claims.json")'" "$lib/map.gp"
	echo "plots: $pl/$m.png"
done

# The share of the WAN latency async hides against alpha, at iid alphas
# and, as a point of its own, with the measured drafts: claim (a)'s shares
# in DIR/claims.json (`hybridspec claims`, which scripts/run.sh runs first).
# shares MEASURED: "alpha percent 0" a line, of the iid (false) or measured
# (true) groups
shares() {
	jq -r --argjson m "$1" '.claims[] | select(.id == "a") | .hidden[] |
		select(.measured == $m) | "\(.alpha) \(.share)"' "$dir/claims.json" |
		awk '{ print $1, 100 * $2, 0 }'
}
if [ -f "$dir/claims.json" ] && [ -n "$(shares false)" ]; then
	{
		echo '"iid acceptance"'
		shares false
		if [ -n "$(shares true)" ]; then
			printf '\n\n"measured drafts"\n'
			shares true
		fi
	} > "$data/hidden-share.dat"
	gp lines hidden-share "data='$data/hidden-share.dat'; xl='acceptance rate alpha'; yl='WAN latency hidden by async (% of what sync shows)'; ti='How much of the RTT async hides: 1 - its ITL slope over sync slope'"
else
	echo "plots: skipped hidden-share: no iid shares in $dir/claims.json"
fi

# The stationary queue of claim (d), from its numbers in claims.json: the
# mean wait for the KV cache, measured and predicted, and the delivered
# rate, against the offered load (both in units of the capacity).
if [ -f "$dir/claims.json" ] &&
	[ -n "$(jq -r '.claims[] | select(.id == "d") | .queue[]?' "$dir/claims.json")" ]; then
	q() { jq -r ".claims[] | select(.id == \"d\") | .queue[] | $1" "$dir/claims.json"; }
	{
		echo '"measured"'
		q 'select(.wait_s > 0) | "\(.load) \(.wait_s) 0"'
		printf '\n\n"predicted (M/D/c, then L - c / lambda)"\n'
		q 'select(.predicted_s > 0.01) | "\(.load) \(.predicted_s) 0"'
	} > "$data/queueing.dat"
	gp lines queueing "data='$data/queueing.dat'; xl='offered load (1 = the capacity formulas gives)'; yl='mean wait for the KV cache (s)'; logy=10; key='bottom right'; ti='A stationary queue: the wait for the cache against the load'; vline=1; vlabel='capacity'"
	{
		echo '"delivered"'
		q '"\(.load) \(.delivered) 0"'
	} > "$data/queueing-throughput.dat"
	gp lines queueing-throughput "data='$data/queueing-throughput.dat'; xl='offered load (1 = the capacity formulas gives)'; yl='delivered requests/s (1 = the capacity)'; key='top left'; ti='Delivered rate against the offered load'; vline=1; vlabel='capacity'"
else
	echo "plots: skipped queueing: no queueing figures in $dir/claims.json"
fi

# Acceptance profiles, by alpha: alpha and perplexity per format, and E[A].
set -- "$calib"/accept-*.json
if [ -f "$1" ]; then
	: > "$data/quant.dat"
	: > "$data/accept-ea.dat"
	for f; do
		printf '%s %s\n' "$(jget "$f" /alpha_greedy)" "$f"
	done | sort -k1,1nr | while read -r _ f; do
		jflat "$f" | awk -F'\t' -f "$lib/accept.awk" \
			-v quant="$data/quant.dat" -v ea="$data/accept-ea.dat"
	done
	gp accept quant "data='$data/quant.dat'; what='quant'; ti='Acceptance and perplexity of each draft format (target: the model unquantised)'"
	gp accept accept-ea "data='$data/accept-ea.dat'; what='ea'; ti='Tokens per verification: measured, and the iid formula'"
else
	echo "plots: skipped quant, accept-ea: no $calib/accept-*.json"
fi

# The verify-cost table (a line for each of up to 4 of its contexts) and
# the simulator's roofline for its GPU and model at its middle context.
set -- "$calib"/verify-*.json
if [ -f "$1" ]; then
	jflat "$1" > "$data/verify.flat"
	awk -F'\t' '
		$1 ~ /^\/tokens\// { tok[substr($1, 9)] = $2; nt++ }
		$1 ~ /^\/ctx\// { ctx[substr($1, 6)] = $2; nc++ }
		$1 ~ /^\/seconds\// { split(substr($1, 10), ij, "/"); s[ij[1], ij[2]] = $2 }
		END {
			step = nc > 4 ? (nc - 1) / 3 : 1
			for (k = 0; k < nc && k < 4; k++) {
				j = int(k * step + 0.5)
				printf "%sctx=%d\n", k ? "\n\n" : "", ctx[j]
				for (i = 0; i < nt; i++)
					printf "%s %.6g\n", tok[i], 1e3 * s[i, j]
			}
		}' "$data/verify.flat" > "$data/verify.dat"
	gpu=$(awk -F'\t' '$1 == "/gpu" { print $2 }' "$data/verify.flat")
	model=$(awk -F'\t' '$1 == "/model" { print $2 }' "$data/verify.flat")
	ctx=$(awk -F'\t' '$1 ~ /^\/ctx\// { c[n++] = $2 } END { print c[int((n - 1) / 2)] }' "$data/verify.flat")
	kind=$(awk -F'\t' '$1 == "/calibrated" { print $2 == "true" ? "measured" : "uncalibrated" }' "$data/verify.flat")
	# one tenant whose mean context is ctx, on the table's GPU without the
	# table: the formulas of that config give the roofline
	printf '{"tenants": [{"device": {"draft_base_s": 0.01, "prefill_per_token_s": 0.001}, "acceptance": {"alpha": 0.5}, "wan": {"rtt_s": 0.05}, "workload": {"prompt_tokens": %s, "output_tokens": 1}}], "cloud": {"model": "%s", "gpu": {"preset": "%s"}}}\n' \
		"$ctx" "$model" "$gpu" > "$data/roofline-config.json"
	roof=""
	if "$bin" formulas "$data/roofline-config.json" --json > "$data/roofline.json"; then
		jflat "$data/roofline.json" | awk -F'\t' '
			$1 ~ /^\/roofline\/[0-9]+\/tokens$/ { t = $2 }
			$1 ~ /^\/roofline\/[0-9]+\/seconds$/ { printf "%s %.6g\n", t, 1e3 * $2 }' \
			> "$data/roofline.dat"
		roof="model='$data/roofline.dat'; mtitle='roofline model, ctx=$ctx'; ridge=$(jget "$data/roofline.json" /ridge_tokens)"
	else
		echo "plots: no roofline beside the table (hybridspec formulas failed)"
	fi
	gp roofline roofline "data='$data/verify.dat'; ti='Verification time against batch tokens: $gpu, $model, the table ($kind)'; $roof"
else
	echo "plots: skipped roofline: no $calib/verify-*.json"
fi

# The timeline of tenant 0 over its first 2 s of drafting.
if [ -f "$dir/trace/trace.json" ]; then
	awk -f "$lib/gantt.awk" -v tenant=0 -v window_s=2 \
		"$dir/trace/trace.json" "$dir/trace/trace.json" > "$data/gantt.dat"
	gp gantt gantt "data='$data/gantt.dat'; ti='One async tenant (tenant 0): the first 2 s after it starts drafting'"
else
	echo "plots: skipped gantt: no $dir/trace/trace.json"
fi

# The worked plan's configurations and Pareto front.
if [ -f "$dir/plan/points.csv" ]; then
	gp front plan-front "points='$dir/plan/points.csv'; front='$dir/plan/front.csv'; ti='plan: 256 phones, cost against p99 TPOT'"
else
	echo "plots: skipped plan-front: no $dir/plan/points.csv"
fi
