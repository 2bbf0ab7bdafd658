#!/bin/sh
# report.sh DIR [CALIB]: writes DIR/REPORT.md from what scripts/run.sh left
# in DIR (runs/, sweeps/, plots/, formulas.json) and the acceptance
# profiles in CALIB (default results/calib): tables, the figures, and for
# each claim of the paper its evidence and a verdict ("holds", "holds only
# when ...", "does not hold") decided by the thresholds below, which the
# report states. Written to a temporary file and renamed into place.
set -eu
lib=$(dirname "$0")
dir=$1
calib=${2:-results/calib}

# The thresholds of the verdicts.
hide_share=0.50 # (a) async hides the WAN latency when its ITL grows with the
                #     RTT at most 50% as fast as sync's (least squares)
keep_ratio=0.80 # (b) a draft keeps alpha high at >= 80% of the reference
                #     draft's alpha (W8A16: near lossless); below, it loses it
share=0.50      # (c) batching keeps the GPU busy at N tenants when one
itl_cost=0.10   #     shared GPU commits >= 50% of N times the tokens/s of a
                #     dedicated one, at an ITL and a p99 TTFT at most 10%
                #     above dedicated's
blowup=2        # (d) past the knee (the last tenant count whose ITL is
                #     within 10% of the fewest tenants'), ITL grows >= 2x
close=0.15      # (e) ITL close to drafting speed: within 15% of the edge's
                #     draft time per token (from its profile)

# csv PROGRAM FILE [AWK ARGS]: an awk program over a sweep.csv (csv.awk)
csv() {
	prog=$1
	file=$2
	shift 2
	awk -F, "$@" "$(cat "$lib/csv.awk") $prog" "$file"
}

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

# have SWEEP: true when the sweep's table is there, else says so
have() {
	[ -f "$dir/sweeps/$1/sweep.csv" ] && return 0
	printf 'No verdict: %s/sweeps/%s/sweep.csv is missing.\n\n' "$dir" "$1"
	return 1
}

# The paper's setting: a row per protocol from the runs' summaries.
setting() {
	echo '| run | protocol | mean ITL (ms) | p99 ITL (ms) | TTFT p50 (s) | tokens/s per tenant | alpha | tokens per verification | GPU busy | SLO met |'
	echo '|---|---|---|---|---|---|---|---|---|---|'
	for p in edge_only cloud_only sync async multi_tenant; do
		f=$dir/runs/$p/summary.json
		[ -f "$f" ] || continue
		awk -f "$lib/jflat.awk" "$f" | awk -F'\t' -v run="$p" '
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

# (a) async hides WAN latency: ITL against RTT, async beside sync, with the
# measured drafts and with iid acceptance of several alphas.
claim_a() {
	echo '## (a) Asynchronous drafting hides WAN latency'
	echo
	figure itl-vs-rtt 'ITL against RTT'
	figure hidden-share 'share of the WAN latency async hides, against alpha'
	have itl-vs-rtt || return 0
	echo 'Mean ITL (ms, ± 95% interval over the seeds) against the round-trip time, in the paper setting:'
	echo
	pivot itl-vs-rtt tenants.0.wan.rtt_s 'RTT (s)' protocol.kind all.itl_s.mean 1e3 %.1f
	echo
	alpha=$(sh "$lib/jget.sh" "$dir/runs/async/summary.json" /all/alpha)
	{
		awk -F, -v by= "$(cat "$lib/csv.awk" "$lib/hidden.awk")" \
			"$dir/sweeps/itl-vs-rtt/sweep.csv" |
			awk -v a="${alpha:-0}" '{ $1 = sprintf("measured_%.3f", a); print }'
		if [ -f "$dir/sweeps/itl-vs-rtt-alpha/sweep.csv" ]; then
			awk -F, -v by=tenants.0.acceptance.alpha \
				"$(cat "$lib/csv.awk" "$lib/hidden.awk")" \
				"$dir/sweeps/itl-vs-rtt-alpha/sweep.csv"
		fi
	} | awk -v h="$hide_share" '
	BEGIN {
		printf "Sync waits out every round trip, so its ITL grows with the RTT; async hides the WAN latency when its ITL grows by at most %d%% of what sync'"'"'s grows (hidden share = 1 - async slope / sync slope >= %d%%, slopes by least squares over the RTTs swept). With the measured drafts (trace acceptance, the alpha the async run measured) and with iid acceptance at set alphas (sweep itl-vs-rtt-alpha):\n\n", 100 * (1 - h), 100 * h
		print "| acceptance | sync: ms of ITL per 100 ms of RTT | async | hidden share | hides |"
		print "|---|---|---|---|---|"
	}
	{
		ok = $4 >= h
		label = $1 ~ /^measured_/ ? "measured drafts, alpha " substr($1, 10) : "iid, alpha " $1
		printf "| %s | %.1f | %.1f | %.0f%% | %s |\n", label, 100 * $2, 100 * $3, 100 * $4, ok ? "yes" : "no"
		if ($1 ~ /^measured_/) {
			measured = ok
			ma = substr($1, 10)
		}
		else if (ok && !from)
			from = $1
		else if (!ok)
			from = ""
	}
	END {
		print ""
		if (measured)
			v = "holds"
		else if (from != "")
			v = "holds only when alpha is at least " from " (the measured drafts, alpha " ma ", do not hide it)"
		else
			v = "does not hold"
		printf "**Verdict: %s.**\n\n", v
	}'
}

# (b) W4A16 keeps alpha high and W4A4 does not: the acceptance profiles.
claim_b() {
	echo '## (b) W4A16 drafting keeps acceptance high, W4A4 does not'
	echo
	figure quant 'alpha and perplexity against the draft format'
	figure accept-ea 'E[A] against gamma'
	set -- "$calib"/accept-*.json
	if [ ! -f "$1" ]; then
		printf 'No verdict: no acceptance profiles in %s.\n\n' "$calib"
		return 0
	fi
	for f; do
		awk -f "$lib/jflat.awk" "$f" | awk -F'\t' -v file="${f##*/}" '
			{ v[$1] = $2 }
			END {
				print v["/draft_quant"], v["/alpha_greedy"], v["/alpha_stochastic"],
				      v["/ppl"], v["/ppl_draft"], v["/mean_accepted_per_gamma/4"], file
			}'
	done | sort -k2,2nr | awk -v keep="$keep_ratio" '
	{
		q[NR] = $1; ag[NR] = $2; as[NR] = $3; ppl[NR] = $4; pd[NR] = $5
		ea[NR] = $6; file[NR] = $7
		if ($1 ~ /^w8a16/)
			ref = NR
	}
	END {
		refa = ref ? ag[ref] : 1
		printf "Reference: %s (alpha greedy %.3f). Threshold: a draft keeps alpha high when its alpha greedy is at least %d%% of the reference, %.3f.\n\n", ref ? q[ref] " draft" : "the target itself", refa, 100 * keep, keep * refa
		print "| draft | alpha greedy | / reference | alpha stochastic | perplexity (target) | E[A] at gamma 4 | keeps alpha high | profile |"
		print "|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= NR; i++) {
			ok = ag[i] >= keep * refa
			printf "| %s | %.3f | %.3f | %.3f | %.3f (%.3f, %+.1f%%) | %s | %s | %s |\n", q[i], ag[i], ag[i] / refa, as[i], pd[i], ppl[i], 100 * (pd[i] / ppl[i] - 1), ea[i] == "" ? "-" : sprintf("%.2f", ea[i]), ok ? "yes" : "no", file[i]
			if (q[i] ~ /^w4a16/) {
				n16++
				if (ok)
					kept = kept (kept == "" ? "" : ", ") q[i]
				else
					k16bad++
			}
			if (q[i] ~ /^w4a4/) {
				n4++
				if (ok)
					k4ok++
			}
		}
		print ""
		if (!n16 || !n4)
			v = "not decided: a W4A16 and a W4A4 profile are both needed"
		else if (k4ok || kept == "")
			v = "does not hold"
		else if (k16bad)
			v = "holds only when the W4A16 draft is " kept
		else
			v = "holds"
		printf "**Verdict: %s.**\n\n", v
	}'
}

# (c) batching keeps the GPU busy: continuous against dedicated.
claim_c() {
	echo '## (c) Multi-tenant batching keeps the GPU busy'
	echo
	figure batching-busy 'GPU busy fraction against tenants'
	figure batching-throughput 'tokens/s per GPU against tenants'
	have batching || return 0
	csv '
	{
		t = c("tenants.0.count")
		p = c("cloud.policy")
		if (!(t in seen))
			ten[++n] = t
		seen[t] = 1
		busy[p, t] = c("cloud.busy_fraction_mean")
		gpus[p, t] = c("cloud.gpus_mean")
		tput[p, t] = c("all.tokens_per_s_mean") / gpus[p, t]
		itl[p, t] = c("all.itl_s.mean_mean") * 1e3
		ttft[p, t] = c("all.ttft_s.p99_mean")
	}
	END {
		printf "Dedicated: a GPU per tenant; continuous: every tenant on %d shared GPU, batched per iteration (Orca). Threshold: batching keeps the GPU busy at N tenants when the shared GPU commits at least %d%% of N times the tokens/s of a dedicated GPU, with a mean ITL and a p99 TTFT each at most %d%% above dedicated'"'"'s.\n\n", gpus["continuous", ten[1]], 100 * s, 100 * q
		print "| tenants | GPU busy, dedicated | continuous | tokens/s per GPU, dedicated | continuous | ratio / N | ITL (ms), dedicated | continuous | TTFT p99 (s), dedicated | continuous | keeps busy |"
		print "|---|---|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			t = ten[i]
			r = tput["continuous", t] / tput["dedicated", t]
			ok = r >= s * t && itl["continuous", t] <= (1 + q) * itl["dedicated", t] && ttft["continuous", t] <= (1 + q) * ttft["dedicated", t]
			printf "| %d | %.2f%% | %.2f%% | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %s |\n", t, 100 * busy["dedicated", t], 100 * busy["continuous", t], tput["dedicated", t], tput["continuous", t], r / t, itl["dedicated", t], itl["continuous", t], ttft["dedicated", t], ttft["continuous", t], (t > 1 ? (ok ? "yes" : "no") : "-")
			if (t == 1)
				continue
			if (ok && !bad)
				last = t
			if (ok)
				good++
			else
				bad++
		}
		print ""
		if (!bad)
			v = "holds"
		else if (last)
			v = "holds only when the tenants are at most " last
		else if (good)
			v = "holds only at some tenant counts (see the table)"
		else
			v = "does not hold"
		printf "**Verdict: %s.**\n\n", v
	}' "$dir/sweeps/batching/sweep.csv" -v s="$share" -v q="$itl_cost"
}

# (d) queueing delay beyond capacity: many tenants on one GPU.
claim_d() {
	echo '## (d) Queueing delay grows without bound beyond capacity'
	echo
	figure queueing 'ITL against tenants, past capacity'
	have queueing || return 0
	cap=$(sh "$lib/jget.sh" "$dir/formulas.json" /capacity_tenants)
	kv=$(sh "$lib/jget.sh" "$dir/runs/async/config.resolved.json" /cloud/kv_capacity_tokens)
	gpu=$(sh "$lib/jget.sh" "$dir/runs/async/config.resolved.json" /cloud/gpu/preset)
	len=$(awk -f "$lib/jflat.awk" "$dir/runs/async/config.resolved.json" |
		awk -F'\t' '$1 ~ /^\/tenants\/0\/workload\/(prompt|output)_tokens$/ { n += $2 } END { print n }')
	csv '
	{
		t[++n] = c("tenants.0.count")
		itl[n] = c("all.itl_s.mean_mean") * 1e3
		ci[n] = c("all.itl_s.mean_ci95") * 1e3
		p99[n] = c("all.itl_s.p99_mean") * 1e3
		qw[n] = c("cloud.queue_wait_s.mean_mean") * 1e3
		qw99[n] = c("cloud.queue_wait_s.p99_mean") * 1e3
		busy[n] = c("cloud.busy_fraction_mean")
		bt[n] = c("cloud.batch_tokens.mean_mean")
	}
	END {
		printf "The paper'"'"'s async setting, one request a tenant, with a KV cache that holds every tenant (the %s'"'"'s own, %d tokens, holds %d requests of %d tokens at once: past that, requests wait for admission and TTFT grows instead; see (c)). `hybridspec formulas` puts the GPU'"'"'s verification capacity at %.0f tenants. Threshold: the knee is the last tenant count whose mean ITL is within 10%% of its value at %d tenants; the claim holds when the ITL at the most tenants swept is at least %gx the ITL at the knee.\n\n", gpu, kv, kv / len, len, cap, t[1], b
		print "| tenants | mean ITL (ms) | p99 ITL (ms) | queue wait, mean (ms) | p99 (ms) | GPU busy | tokens a batch |"
		print "|---|---|---|---|---|---|---|"
		knee = 1
		for (i = 1; i <= n; i++) {
			printf "| %d | %.1f ± %.1f | %.0f | %.2f | %.1f | %.1f%% | %.0f |\n", t[i], itl[i], ci[i], p99[i], qw[i], qw99[i], 100 * busy[i], bt[i]
			if (itl[i] <= 1.1 * itl[1] && knee == i - 1)
				knee = i
		}
		growth = itl[n] / itl[knee]
		printf "\nKnee at %d tenants; from there to %d tenants the mean ITL grows %.1fx and the mean queue wait from %.2f to %.1f ms.\n\n", t[knee], t[n], growth, qw[knee], qw[n]
		if (knee == n)
			v = "not decided: no knee within the tenants swept"
		else if (growth >= b)
			v = "holds"
		else
			v = "does not hold"
		printf "**Verdict: %s.**\n\n", v
	}' "$dir/sweeps/queueing/sweep.csv" -v b="$blowup" -v cap="${cap:-0}" \
		-v kv="${kv:-0}" -v len="${len:-1}" -v gpu="${gpu:-GPU}"
}

# (e) ITL close to edge drafting speed: async ITL against the draft time,
# over the RTTs swept, with the measured drafts and at iid alphas.
claim_e() {
	echo '## (e) Inter-token latency close to the edge'"'"'s drafting speed'
	echo
	td=$(sh "$lib/jget.sh" "$dir/formulas.json" /t_draft_s)
	eo=$(sh "$lib/jget.sh" "$dir/runs/edge_only/summary.json" /all/itl_s/mean)
	as=$(sh "$lib/jget.sh" "$dir/runs/async/summary.json" /all/itl_s/mean)
	alpha=$(sh "$lib/jget.sh" "$dir/runs/async/summary.json" /all/alpha)
	if [ -z "$td" ] || [ -z "$eo" ] || [ -z "$as" ]; then
		echo 'No verdict: formulas.json or the edge_only and async runs are missing.'
		echo
		return 0
	fi
	have itl-vs-rtt || return 0
	{
		csv 'c("protocol.kind") == "async" { print "measured_" a, c("tenants.0.wan.rtt_s"), c("all.itl_s.mean_mean") }' \
			"$dir/sweeps/itl-vs-rtt/sweep.csv" -v a="$(printf '%.3f' "$alpha")"
		if [ -f "$dir/sweeps/itl-vs-rtt-alpha/sweep.csv" ]; then
			csv 'c("protocol.kind") == "async" { print c("tenants.0.acceptance.alpha"), c("tenants.0.wan.rtt_s"), c("all.itl_s.mean_mean") }' \
				"$dir/sweeps/itl-vs-rtt-alpha/sweep.csv"
		fi
	} | awk -v td="$td" -v eo="$eo" -v as="$as" -v cl="$close" '
	BEGIN {
		printf "The edge drafts a token in %.1f ms (its profile, at the mean context); edge-only serving gives a mean ITL of %.1f ms, async speculative decoding %.1f ms in the paper setting: %.2fx the draft time, %.2fx edge-only. Threshold: async ITL is close to the drafting speed when it is at most %d%% above the draft time (%.1f ms) at every RTT swept. Mean async ITL over the RTTs of the sweeps itl-vs-rtt and itl-vs-rtt-alpha:\n\n", 1e3 * td, 1e3 * eo, 1e3 * as, as / td, as / eo, 100 * cl, 1e3 * td * (1 + cl)
	}
	{
		if (!($1 in seen))
			acc[++n] = $1
		seen[$1] = 1
		if (!lo[$1] || $3 < lo[$1])
			lo[$1] = $3
		if ($3 > hi[$1])
			hi[$1] = $3
		rtts[$1] = rtts[$1] (rtts[$1] == "" ? "" : ", ") 1e3 * $2
	}
	END {
		print "| acceptance | RTTs (ms) | async ITL (ms), lowest | highest | highest / draft time | close |"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			k = acc[i]
			ok = hi[k] <= (1 + cl) * td
			label = k ~ /^measured_/ ? "measured drafts, alpha " substr(k, 10) : "iid, alpha " k
			printf "| %s | %s | %.1f | %.1f | %.2f | %s |\n", label, rtts[k], 1e3 * lo[k], 1e3 * hi[k], hi[k] / td, ok ? "yes" : "no"
			if (k ~ /^measured_/) {
				measured = ok
				ma = substr(k, 10)
			} else if (ok && from == "")
				from = k
			else if (!ok)
				from = ""
		}
		print ""
		if (measured)
			v = "holds"
		else if (from != "")
			v = "holds only when alpha is at least " from " (the measured drafts, alpha " ma ", are not close)"
		else
			v = "does not hold"
		printf "**Verdict: %s.**\n\n", v
	}'
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
	echo 'Every number and verdict below is computed from the runs, sweeps and profiles named beside it; the verdicts use the thresholds stated in each section (scripts/report.sh).'
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
