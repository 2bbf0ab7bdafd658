#!/bin/sh
# bench-mm1.sh [BUILD] [RUNS]: the M/M/1 queue of cimba's MM1_single
# benchmark (one million customers, arrival rate 0.9, service rate 1) on
# this project's engine (`hybridspec bench engine --mm1`) and, when CIMBA
# names cimba's MM1_single built here, on cimba, alternating the two RUNS
# times (default 5) in one run. Prints the wall time of each run and the
# range and median of each program; a benchmark, so nothing is asserted.
# Run it alone on the machine.
#
# cimba (github.com/ambonvik/cimba, never committed here) builds with
# meson, ninja and nasm from Debian; with GCC 12, whose C2x has neither
# the bool nor the static_assert keyword, add the headers that give them:
#   CFLAGS="-include assert.h -include stdbool.h" meson setup build \
#       --buildtype=release -Denable_docs=false -Denable_cuda_tutorials=false
#   ninja -C build benchmark/MM1_single
set -eu
build=${1:-build}
runs=${2:-5}
H=$build/hybridspec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# wall seconds of a command, its output kept in $tmp/out
wall() {
	t0=$(date +%s.%N)
	"$@" > "$tmp/out"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'
}

: > "$tmp/ours"
: > "$tmp/cimba"
for i in $(seq "$runs"); do
	w=$(wall "$H" bench engine --mm1 --json)
	echo "$w" >> "$tmp/ours"
	echo "run $i  hybridspec  $w s  $(cat "$tmp/out")"
	if [ -n "${CIMBA:-}" ]; then
		w=$(wall "$CIMBA")
		echo "$w" >> "$tmp/cimba"
		echo "run $i  cimba       $w s  $(cat "$tmp/out")"
	fi
done
summary() {
	sort -n "$2" | awk -v name="$1" '{ v[NR] = $1 } END {
		if (NR) printf "%-11s wall %.3f-%.3f s, median %.3f s (%d runs)\n",
			name, v[1], v[NR], v[int((NR + 1) / 2)], NR }'
}
summary hybridspec "$tmp/ours"
summary cimba "$tmp/cimba"
