#!/bin/sh
# run.sh BUILD: the main job (`make run`). Checks every committed config and
# measures the engine; results go under results/runs/.
set -eu
build=${1:-build}
bin="$build/hybridspec"
out=results/runs/main
mkdir -p "$out"

echo "== configs: strict check of every committed config"
for c in configs/*.json configs/*/*.json; do
	[ -f "$c" ] || continue
	"$bin" config "$c" >/dev/null
	echo "   ok $c"
done

echo "== engine: hold-model events per second (one core)"
"$bin" bench engine | tee "$out/bench-engine.txt"
echo "results in $out/"
