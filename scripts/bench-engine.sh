#!/bin/sh
# bench-engine.sh [BUILD] [RUNS]: the hold model on this project's event
# queue (`hybridspec bench engine`) beside a Python heapq loop of the same
# model, alternating the two RUNS times (default 5) in one run: N events
# pending (10^3, 10^5, 10^6); each step pops the earliest and pushes one at
# an exponentially distributed offset, the offsets drawn before the clock
# starts in both. The heapq loop is timed two ways, heappop then heappush,
# and heapreplace (one call for the step, the faster); the ratio is against
# the faster. Prints events/s for each and the ratio, per run, then the
# range of each; a benchmark, so nothing is asserted. Run it alone on the
# machine. Needs python3 (only here: the project does not).
set -eu
build=${1:-build}
runs=${2:-5}
H=$build/hybridspec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
command -v python3 > /dev/null || { echo "bench-engine.sh: needs python3" >&2; exit 2; }

cat > "$tmp/hold.py" <<'PY'
import heapq, json, random, sys, time
RING = 1 << 20
rows = []
for n in (1000, 100000, 1000000):
    rnd = random.Random(42)
    off = [rnd.expovariate(1.0) for _ in range(RING)]
    steps = 1000000
    row = {"pending": n}
    for way in ("pop_push", "replace"):
        h = [(off[i], i) for i in range(n)]
        heapq.heapify(h)
        k = n
        t0 = time.perf_counter()
        if way == "pop_push":
            for _ in range(steps):
                t, i = heapq.heappop(h)
                heapq.heappush(h, (t + off[k & (RING - 1)], i))
                k += 1
        else:
            for _ in range(steps):
                t, i = h[0]
                heapq.heapreplace(h, (t + off[k & (RING - 1)], i))
                k += 1
        row[way] = steps / (time.perf_counter() - t0)
    rows.append(row)
print(json.dumps({"rows": rows}))
PY

for i in $(seq "$runs"); do
	"$H" bench engine --json > "$tmp/ours.json"
	python3 "$tmp/hold.py" > "$tmp/py.json"
	python3 - "$tmp/ours.json" "$tmp/py.json" "$i" <<'PY' | tee -a "$tmp/all"
import json, sys
ours = {r["pending"]: r["events_per_s"] for r in json.load(open(sys.argv[1]))["rows"]}
for r in json.load(open(sys.argv[2]))["rows"]:
    n = r["pending"]
    best = max(r["pop_push"], r["replace"])
    print("run %s  pending %7d  hybridspec %.3g/s  heapq pop+push %.3g/s  replace %.3g/s  ratio %.1fx"
          % (sys.argv[3], n, ours[n], r["pop_push"], r["replace"], ours[n] / best))
PY
done
awk '{ n = $4; e = $6 + 0; x = $NF + 0
	if (!(n in lo) || e < lo[n]) lo[n] = e; if (e > hi[n]) hi[n] = e
	if (!(n in rlo) || x < rlo[n]) rlo[n] = x; if (x > rhi[n]) rhi[n] = x }
END { for (n in lo) printf "pending %7d  hybridspec %.3g-%.3g events/s  ratio to heapq %.1f-%.1fx\n", n, lo[n], hi[n], rlo[n], rhi[n] }' "$tmp/all" | sort -k2 -n
