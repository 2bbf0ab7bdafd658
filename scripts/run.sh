#!/bin/sh
# run.sh BUILD: the main job (`make run`). Under results/paper/: the paper's
# setting under each protocol (runs/), the sweeps of configs/sweeps/ on 2
# workers (sweeps/), a traced async run (trace/), the formulas of the
# setting (formulas.json; formulas-cloud-*.json for the cloud-spec
# sweeps' targets), the GPU costs against published serving figures
# (gpu-check.json), the worked plan (plan/; plan-bands/: the same at the
# ends of the phone's held-out bands), the verdicts on the paper's claims
# (claims.json), the figures (plots/), REPORT.md, and the event
# queue's speed (bench/). A line "[i/N] ..." before each step.
set -eu
build=${1:-build}
bin=$build/hybridspec
out=results/paper
sweeps="itl-vs-tenants itl-vs-rtt itl-vs-rtt-alpha batching itl-vs-gamma
regions cloud-spec-itl cloud-spec-capacity adaptive adaptive-varying
adaptive-step handover handover-map"
n=$((10 + $(echo "$sweeps" | wc -w)))
i=0
t0=$(date +%s)

step() {
	i=$((i + 1))
	echo "[$i/$n] $* (at $(($(date +%s) - t0)) s)"
}

mkdir -p "$out"
step "the paper's setting: 32 phones, LLaMA-2-7B W4A16 draft, FP16 target on an H100"
for p in edge_only cloud_only cloud_spec sync async multi_tenant; do
	echo "-- $p"
	"$bin" run "configs/paper/$p.json" -o "$out/runs/$p" --overwrite
done
"$bin" formulas configs/paper/async.json --json > "$out/formulas.json"
# the cloud-spec sweeps' targets: LLaMA-2-7B on one GPU, 70B on 2 and 4
for t in llama2-7b:1 llama2-70b:2 llama2-70b:4; do
	"$bin" formulas configs/cloud/base.json --json \
		--set "/cloud/model=\"${t%:*}\"" --set "/cloud/tp=${t#*:}" \
		> "$out/formulas-cloud-${t%:*}-tp${t#*:}.json"
done

for s in $sweeps; do
	step "sweep $s"
	"$bin" sweep "configs/sweeps/$s.json" -j 2 -o "$out/sweeps/$s" --overwrite \
		--progress
done

# The stationary queue of claim (d): the paper's async setting under
# Poisson arrivals from 10,000 phones at 0.2 to 1.5 times the capacity
# `formulas` gives, 3,000 s of which the first 1,000 are a warm-up left out
# of the statistics (the sweep is written here, its rates from the
# capacity).
step "sweep queueing: Poisson load from 0.2 to 1.5 of the formulas' capacity"
cap=$(jq -r .capacity_requests_per_s "$out/formulas.json")
jq -n --arg base "$(pwd)/configs/paper/async.json" --argjson cap "$cap" '{
	name: "queueing", base: $base,
	set: {"/tenants/0/count": 10000, "/horizon_s": 3000, "/warmup_s": 1000,
	      "/tenants/0/workload": {arrival: "poisson", rate_per_s: 1,
		      requests: 1000000, prompt_tokens: 512, output_tokens: 256}},
	grid: {"/tenants/0/workload/rate_per_s":
		[0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5] | map(. * $cap / 10000)},
	replicates: 2,
	metrics: ["/all/tokens_per_s", "/cloud/admission_wait_s/mean",
		  "/cloud/admission_wait_s/p99", "/all/itl_s/mean", "/all/ttft_s/p50",
		  "/all/ttft_s/p99", "/cloud/busy_fraction", "/cloud/queue_wait_s/mean"]
}' > "$out/queueing-sweep.json"
"$bin" sweep "$out/queueing-sweep.json" -j 2 -o "$out/sweeps/queueing" \
	--overwrite --progress

# Energy and cost by protocol: the paper's setting with Raspberry Pi 5s as
# the edge (the library's one device with published busy and idle power),
# their draw taken from a 12.70 Wh battery (an iPhone 15 Pro's, as a scale:
# the Pi has none) for the battery drained per hour.
step "energy and cost: the paper's setting on Raspberry Pi 5s, by protocol"
for p in edge_only cloud_only cloud_spec sync async; do
	"$bin" run "configs/paper/$p.json" -o "$out/energy/$p" --overwrite --quiet \
		--set /tenants/0/device/profile=../../results/calib/edge-raspberry-pi-5-llama2-7b-w4a16.json \
		--set /tenants/0/device/battery_wh=12.70
done

step "plan: the cheapest deployment of 256 phones under an SLO"
"$bin" plan configs/plan/phones.json -j 2 -o "$out/plan" --overwrite
# The same at each end of the phone's held-out draft and prefill bands
# (device/draft_band, device/prefill_band: docs/config.md).
mkdir -p "$out/plan-bands"
for key in draft_band prefill_band; do
	for end in low high; do
		f=$out/plan-bands/$key-$end.json
		jq --arg base "$(pwd)/configs/paper/async.json" --arg k "$key" \
			--arg e "$end" '.base = $base |
			.set["/tenants/0/device/" + $k] = $e' \
			configs/plan/phones.json > "$f"
		"$bin" plan "$f" -j 2 -o "$out/plan-bands/$key-$end" --overwrite --quiet
	done
done

step "gpu check: the cloud's costs against published serving figures"
"$bin" gpu check --quiet -o "$out/gpu-check.json" --overwrite

step "a traced async run: one request a tenant, tenant 0's tracks"
"$bin" run configs/paper/async.json -o "$out/trace" --overwrite --trace \
	--trace-tenants 1 --set /tenants/0/workload/requests=1 --quiet

step "the verdicts on the paper's claims (claims.json)"
"$bin" claims "$out" --calib results/calib --json > "$out/claims.json.tmp"
mv "$out/claims.json.tmp" "$out/claims.json"

step "plots"
BIN=$bin sh scripts/plots.sh "$out" results/calib

step "report"
sh scripts/report.sh "$out"

step "engine: hold-model events per second (one core)"
mkdir -p "$out/bench"
"$bin" bench engine | tee "$out/bench/engine.txt"
echo "done in $(($(date +%s) - t0)) s: $out/REPORT.md"
