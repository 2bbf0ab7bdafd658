#!/bin/sh
# layers.sh [--graph]: checks the include graph of the C sources against the
# layers of docs/design.md, bottom to top:
#
#   base  kernels (with kernels/cuda)  models  sim  calib  deploy  study  cli
#
# A file may include headers of its own layer and of the layers below, never
# of one above; and no two modules (a .c/.h pair) depend on each other in a
# loop, directly or through others. Prints a line a check and "N passed, N
# failed"; exits 1 on a violation, naming the file and the include. With
# --graph, first prints which folder includes which, and how often.
set -eu
cd "$(dirname "$0")/.."
layers="base kernels models sim calib deploy study cli"

rank() {
	r=0
	for l in $layers; do
		[ "$l" = "$1" ] && { echo $r; return; }
		r=$((r + 1))
	done
	echo "layers.sh: '$1' is not a layer" >&2
	exit 2
}

# the folder a header resolves to: the includer's own, else the first layer
# that has it (the order of the -I flags)
where() {
	[ -f "$2/$1" ] && { echo "$2"; return; }
	for l in $layers kernels/cuda; do
		[ -f "$l/$1" ] && { echo "$l"; return; }
	done
	return 0 # a system or generated header (build/version.h)
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for dir in $layers kernels/cuda; do
	for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu; do
		[ -f "$f" ] || continue
		sed -n 's/^#include "\(.*\)".*/\1/p' "$f" | while read -r h; do
			to=$(where "$h" "$dir")
			[ -n "$to" ] || continue
			echo "$dir $to $f $h"
		done
	done
done >"$tmp/edges"

while read -r from to f h; do
	[ "$from" = "$to" ] && continue
	fl=${from%/cuda}
	tl=${to%/cuda}
	if [ "$(rank "$tl")" -gt "$(rank "$fl")" ]; then
		echo "FAIL layers: $f includes $to/$h, a layer above $fl"
		bad=$((bad + 1))
	fi
done <"$tmp/edges"

if [ "${1:-}" = "--graph" ]; then
	echo "folder -> folder it includes (includes):"
	awk '$1 != $2 { n[$1 " -> " $2]++ } END { for (k in n) print "  " k " (" n[k] ")" }' \
		"$tmp/edges" | sort
fi

# modules: dir/stem of the file, to dir/stem of the header; tsort finds loops
awk '{ a = $3; sub(/\.(c|h|cu)$/, "", a); b = $2 "/" $4; sub(/\.h$/, "", b);
	if (a != b) print a, b }' "$tmp/edges" | sort -u >"$tmp/mods"
if ! tsort "$tmp/mods" >/dev/null 2>"$tmp/loop"; then
	echo "FAIL layers: modules that depend on each other in a loop:"
	grep -v "input contains a loop" "$tmp/loop" | sed 's/^tsort: /  /'
	bad=$((bad + 1))
fi

if [ $bad -eq 0 ]; then
	echo "ok   layers: no include runs upward, no loop between modules"
	echo "1 passed, 0 failed"
else
	echo "0 passed, $bad failed"
	exit 1
fi
