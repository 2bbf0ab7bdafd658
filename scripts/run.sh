#!/bin/sh
# run.sh BUILD: the main job (`make run`). Runs the paper's configs and
# measures the engine; everything goes under results/runs/.
set -eu
build=${1:-build}
bin="$build/hybridspec"
out=results/runs

echo "== the paper's setting: 32 phones, LLaMA-2-7B W4A16 draft, FP16 target on an H100"
for p in edge_only cloud_only sync async multi_tenant; do
	echo "-- $p"
	"$bin" run "configs/paper/$p.json" -o "$out/paper-$p"
done

echo "== engine: hold-model events per second (one core)"
mkdir -p "$out/bench"
"$bin" bench engine | tee "$out/bench/engine.txt"
echo "results in $out/"
