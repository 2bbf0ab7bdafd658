#!/bin/sh
# run.sh BUILD: the main job (`make run`). Under results/paper/: the paper's
# setting under each protocol (runs/), the sweeps of configs/sweeps/ on 2
# workers (sweeps/), a traced async run (trace/), the formulas of the
# setting (formulas.json; formulas-cloud-*.json for the cloud-spec
# sweeps' targets), the verdicts on the paper's claims
# (claims.json), the figures (plots/), REPORT.md, and the event
# queue's speed (bench/). A line "[i/N] ..." before each step.
set -eu
build=${1:-build}
bin=$build/hybridspec
out=results/paper
sweeps="itl-vs-tenants itl-vs-rtt itl-vs-rtt-alpha batching itl-vs-gamma queueing
cloud-spec-itl cloud-spec-capacity"
n=$((6 + $(echo "$sweeps" | wc -w)))
i=0
t0=$(date +%s)

step() {
	i=$((i + 1))
	echo "[$i/$n] $* (at $(($(date +%s) - t0)) s)"
}

mkdir -p "$out"
step "the paper's setting: 32 phones, LLaMA-2-7B W4A16 draft, FP16 target on an H100"
for p in edge_only cloud_only sync async multi_tenant; do
	echo "-- $p"
	"$bin" run "configs/paper/$p.json" -o "$out/runs/$p"
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
	rm -rf "$out/sweeps/$s"
	"$bin" sweep "configs/sweeps/$s.json" -j 2 -o "$out/sweeps/$s" --progress
done

step "a traced async run: one request a tenant, tenant 0's tracks"
"$bin" run configs/paper/async.json -o "$out/trace" --trace \
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
