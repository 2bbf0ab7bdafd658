#!/bin/sh
# bench-ggml.sh GGML_SRC [BUILD] [ROUNDS]: the project's W4A16 kernels
# (groups 32 and 128; the FP16-activation float path and the W4A8 integer
# path) and its FP16 kernel beside ggml's Q4_0 (plain and repacked, as
# llama.cpp places weights), Q8_0 and F16 matrix products, at 4096x4096
# and 11008x4096 for n = 1, 4, 16, 64 and 512 tokens on 2 threads, weights
# hot in the cache, the programs alternating ROUNDS times (default 2) in
# one run. GGML_SRC is a checkout of github.com/ggml-org/ggml (never
# committed here); it is built with cmake in Release with its llamafile
# path on, as llama.cpp builds it, under BUILD/ggml (BUILD: default build),
# and scripts/ggml-mm.c against it. Prints a line a timing, then a table
# of medians over the rounds: ms and GFLOP/s of each, and the speed of the
# project's g128 W4A16 (exact FP16 activations: from their digits over
# the integer path's panels on avx512-vnni and avx2) and W4A8 (int8 activations, as ggml's Q4_0 products have
# them; the models take it from four tokens on by default, and below under
# `calib cpu --decode-acts int8`) over ggml's faster Q4_0,
# and of its faster over ggml's F16; with the int8 dot-product and FMA
# peaks of `bench kernels` in the same run. A benchmark: nothing is
# asserted. Run it alone on the machine.
#
# KERNEL=avx2: the AVX2-only pair, on any x86-64 machine with AVX2: the
# project's `--kernel avx2` against ggml built for AVX2, FMA and F16C
# alone (no AVX-512, no VNNI), under BUILD/ggml-avx2. KERNEL=avx-vnni: the
# pair of a CPU with AVX-VNNI (recent laptops; a Sapphire Rapids Xeon):
# `--kernel avx-vnni` against ggml built so too, under BUILD/ggml-avx-vnni.
set -eu
[ $# -ge 1 ] || { echo "usage: bench-ggml.sh GGML_SRC [BUILD] [ROUNDS]" >&2; exit 2; }
src=$1
build=${2:-build}
rounds=${3:-2}
H=$build/hybridspec
kernel=${KERNEL:-}
gb=$build/ggml${kernel:+-$kernel}
isa="-DGGML_NATIVE=ON"
# A CPU that reports AMX: ggml's x86 extensions spelled out, AMX off. The
# project has no AMX path, and a VM may report AMX that it does not let a
# program use (ggml's AMX path faulted in ldtilecfg on the development VM,
# an Intel Xeon, 2026-12-05).
flags=$(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null || true)
case " $flags " in
*" amx_tile "*)
	isa="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
	for f in avx512f:AVX512 avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI \
		avx512_bf16:AVX512_BF16 avx_vnni:AVX_VNNI; do
		case " $flags " in *" ${f%%:*} "*) isa="$isa -DGGML_${f#*:}=ON" ;; esac
	done
	[ -n "$kernel" ] || echo "bench-ggml.sh: this CPU reports AMX: ggml is built without it" >&2 ;;
esac
avx2="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
case $kernel in
'') ;;
avx2) isa="$avx2 -DGGML_AVX_VNNI=OFF" ;;
avx-vnni)
	case " $flags " in
	*" avx_vnni "*) isa="$avx2 -DGGML_AVX_VNNI=ON" ;;
	*) echo "bench-ggml.sh: KERNEL=avx-vnni: this CPU has no AVX-VNNI (no avx_vnni in /proc/cpuinfo)" >&2; exit 2 ;;
	esac ;;
*) echo "bench-ggml.sh: KERNEL: expected avx2 or avx-vnni (or nothing), found '$kernel'" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -f "$src/CMakeLists.txt" ] || { echo "bench-ggml.sh: $src: no CMakeLists.txt (a ggml checkout?)" >&2; exit 2; }
[ -x "$H" ] || { echo "bench-ggml.sh: $H: build the project first (make)" >&2; exit 2; }

if [ ! -x "$gb/ggml-mm" ]; then
	# shellcheck disable=SC2086 # $isa is the options, split
	cmake -S "$src" -B "$gb" -DCMAKE_BUILD_TYPE=Release $isa \
		-DGGML_LLAMAFILE=ON -DBUILD_SHARED_LIBS=OFF -DGGML_BUILD_TESTS=OFF \
		-DGGML_BUILD_EXAMPLES=OFF > "$tmp/cmake.log" 2>&1 ||
		{ cat "$tmp/cmake.log" >&2; exit 1; }
	cmake --build "$gb" -j 2 --target ggml ggml-cpu > "$tmp/build.log" 2>&1 ||
		{ tail -30 "$tmp/build.log" >&2; exit 1; }
	libs=$(find "$gb" -name 'libggml.a' -o -name 'libggml-cpu.a' | sort -r)
	base=$(find "$gb" -name 'libggml-base.a')
	cc -O2 -std=c11 -D_POSIX_C_SOURCE=199309L -I"$src/include" \
		scripts/ggml-mm.c -o "$gb/ggml-mm" $libs $base -fopenmp -lstdc++ \
		-lm -lpthread
fi

shapes="4096x4096 11008x4096"
batches="1 4 16 64 512"
: > "$tmp/all"
for r in $(seq "$rounds"); do
	for s in $shapes; do
		rows=${s%x*}
		cols=${s#*x}
		for n in $batches; do
			for g in 128 32; do
				"$H" bench kernels --threads 2 --shape "$s" --batch "$n" \
					--hot --group "$g" ${kernel:+--kernel "$kernel"} --json > "$tmp/ours.json"
				jq -r --arg g "$g" '.stream[0] as $p | .rows[] |
					select(.kernel != "w8a16") |
					select($g == "128" or .kernel != "fp16") |
					"ours \(.kernel)\(if .kernel == "fp16" then "" else "-g" + $g end) \(.shape) \(.batch) \(.seconds * 1000) \(.gflops) \($p.int8_gops) \($p.fma_gflops)"' \
					"$tmp/ours.json" | tee -a "$tmp/all"
			done
			for t in q4_0:plain q4_0:repack q8_0:plain f16:plain; do
				"$gb/ggml-mm" "${t%:*}" "$rows" "$cols" "$n" 5 2 "${t#*:}" |
					awk -v s="$s" -v t="$t" '{ for (i = 1; i <= NF; i++) {
						split($i, kv, "="); v[kv[1]] = kv[2] }
						sub(":plain", "", t)
						print "ggml", t, s, v["n"], v["ms"], v["gflops"] }' |
					tee -a "$tmp/all"
			done
		done
	done
done

echo
echo "medians over $rounds rounds (ms, GFLOP/s); ratios x: ggml's time over the project's (above 1: the project faster)"
# the table (median.awk beside this script)
cat >"$tmp/table.awk" <<'EOF'
{
	key = $3 " " $4
	name = $1 " " $2
	ms[key, name] = ms[key, name] " " $5
	gf[key, name] = gf[key, name] " " $6
	if ($1 == "ours") { int8[key] = int8[key] " " $7; fma[key] = fma[key] " " $8 }
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
	if (!(name in seenn)) { seenn[name] = 1; names[++nn] = name }
}
END {
	for (k = 1; k <= nk; k++) {
		key = keys[k]
		printf "%s (peaks: int8 %.0f GOP/s, FMA %.0f GFLOP/s)\n", key,
			median(int8[key]), median(fma[key])
		a16 = 1e30; a8 = 1e30; q4 = 1e30; f16 = 1e30
		for (i = 1; i <= nn; i++) {
			name = names[i]
			if (!((key, name) in ms))
				continue
			m = median(ms[key, name])
			printf "  %-22s %10.3f ms %8.1f GFLOP/s\n", name, m,
				median(gf[key, name])
			if (name == "ours w4a16-g128") a16 = m
			if (name == "ours w4a8-g128") a8 = m
			if (name ~ /^ggml q4_0/ && m < q4) q4 = m
			if (name == "ggml f16" && m < f16) f16 = m
		}
		best = a16 < a8 ? a16 : a8
		printf "  ours g128 x ggml Q4_0 (its faster path): W4A16 %.2f", q4 / a16
		if (a8 < 1e30)
			printf ", W4A8 %.2f", q4 / a8
		printf "; our faster x ggml F16 %.2f\n", f16 / best
	}
}
EOF
awk -f "$(dirname "$0")/median.awk" -f "$tmp/table.awk" "$tmp/all"
