#!/bin/sh
# soak.sh [EDGES] [SECONDS] [OUT]: the deployment under load: one `serve`
# (tinystories656K, f32, on the last CPU) and EDGES edge processes (default
# 256; half sync, half async, on the other CPUs) over loopback, each with a
# 50 ms emulated RTT, requesting 64 tokens after "Once upon a time" again
# and again for SECONDS (default 600). The server writes a line of
# counters every 30 s (verdicts a second, verdict latency p50 and p99,
# RSS); at the end this prints them as a markdown table, with how many
# requests were done and whether every output equals the first edge's
# first (each is the target's greedy continuation of the same prompt;
# the tests check that equality against the target itself). Files go to
# OUT (default results/runs/soak). A benchmark: run it alone on the
# machine; it asserts only that nothing was lost (exit 1 otherwise).
set -eu
edges=${1:-256}
secs=${2:-600}
out=${3:-results/runs/soak}
H=${HYBRIDSPEC_BIN:-build/hybridspec}
port=${SOAK_PORT:-7391}
cpus=$(nproc)
last=$((cpus - 1))
rest=0
[ "$cpus" -gt 1 ] && rest="0-$((cpus - 2))"

rm -rf "$out"
mkdir -p "$out"
taskset -c "$last" "$H" serve --port "$port" --max-clients $((edges + 8)) \
	--exit-after "$edges" --log "$out/serve.jsonl" --log-every-s "${SOAK_EVERY_S:-30}" \
	--stats "$out/serve.json" 2> "$out/serve.err" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT INT TERM
sleep 1
i=0
while [ "$i" -lt "$edges" ]; do
	proto=sync
	[ $((i % 2)) -eq 1 ] && proto=async
	taskset -c "$rest" "$H" edge --connect "127.0.0.1:$port" --tenant "$i" \
		--seed $((i + 1)) --protocol "$proto" --gamma 4 --tokens 64 \
		--requests 5000 --duration-s "$secs" --wan '{"rtt_s": 0.05}' --ids \
		> "$out/edge-$i.txt" 2> "$out/edge-$i.err" &
	i=$((i + 1))
done
echo "soak.sh: $edges edges for $secs s; the server logs to $out/serve.jsonl" >&2
failed=0
for pid in $(jobs -p); do
	[ "$pid" = "$server" ] && continue
	wait "$pid" || failed=$((failed + 1))
done
wait "$server" || { echo "soak.sh: the server failed" >&2; failed=$((failed + 1)); }
trap - EXIT INT TERM

ref=$(head -n 1 "$out/edge-0.txt")
lines=$(cat "$out"/edge-*.txt | wc -l)
differ=$(cat "$out"/edge-*.txt | grep -cvxF -- "$ref" || true)
echo "| t (s) | connected | verdicts/s | accepted drafts/s | verdict p50 (ms) | verdict p99 (ms) | server RSS (MiB) |"
echo "|---|---|---|---|---|---|---|"
awk -F'[:,} ]+' '{
	for (i = 1; i < NF; i++) v[$i] = $(i + 1)
	printf "| %.0f | %d | %.0f | %.0f | %.2f | %.2f | %.1f |\n", v["{\"t_s\""] + 0,
	       v["\"connected\""], v["\"verdicts_per_s\""],
	       v["\"drafts_accepted_per_s\""], 1e3 * v["\"verdict_p50_s\""],
	       1e3 * v["\"verdict_p99_s\""], v["\"rss_kb\""] / 1024
}' "$out/serve.jsonl"
echo
echo "requests done: $lines; outputs unlike the first: $differ; edges failed: $failed"
grep -h . "$out"/edge-*.err | sort | uniq -c | sort -rn | head -5 >&2 || true
[ "$differ" -eq 0 ] && [ "$failed" -eq 0 ]
