#!/bin/sh
# bench-smollm.sh LLAMA_BENCH [BUILD] [ROUNDS]: SmolLM2-135M's forward
# through this project's kernels beside llama.cpp's llama-bench on the same
# GGUF file, in one run: prefills of 128 and 1024 tokens and a decode step
# at depths 128 and 1024, on 1 and 2 threads, the two programs alternating
# ROUNDS times (default 2). Prints a line a measurement, then the median
# tokens/s of each over the rounds and the project's over llama.cpp's. A
# benchmark: nothing is asserted. Run it alone on the machine.
#
# The project: `calib cpu` at w4a16-g32-asym (the file's own grid: Q4_1 is
# asymmetric groups of 32) with the classifier in W4A16 too ("-head") and
# in FP16; a prefill is timed in blocks of the calibration's size, a decode
# step is one token at that context; and the first again with its draft
# steps' activations in int8 (`--decode-acts int8`, weights "...-head,a8"),
# as llama.cpp decodes (its Q4_1 products quantise the activations to
# Q8_1), where the exact FP16 path is the default. llama.cpp:
# `llama-bench -p 128,1024 -n 0` and `-p 0 -n 32 -d 128,1024` (32 tokens
# generated from that depth) with its defaults (F16 KV cache; the
# project's is FP32).
#
# LLAMA_BENCH is a llama-bench binary (never committed here). One way to
# build it without the llama.cpp repository, from the source package on
# PyPI that vendors it:
#   pip download --no-binary :all: --no-deps llama-cpp-python
#   tar xzf llama_cpp_python-*.tar.gz
#   cmake -S llama_cpp_python-*/vendor/llama.cpp -B lcpp -DCMAKE_BUILD_TYPE=Release \
#     -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF
#   cmake --build lcpp -j 2 --target llama-bench    # lcpp/bin/llama-bench
# Where the CPU reports AMX (amx_tile in /proc/cpuinfo), spell the other
# extensions out and leave AMX off, as scripts/bench-ggml.sh does: a VM may
# report AMX it does not let a program use (llama-bench then dies in
# ldtilecfg), and the project has no AMX path. On the development Xeon:
#   -DGGML_NATIVE=OFF -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON \
#   -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON -DGGML_AVX_VNNI=ON \
#   -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
#
# KERNEL=avx2: the AVX2-only pair, on any x86-64 machine with AVX2: the
# project's forward on `calib cpu --kernel avx2` against a llama-bench
# built for AVX2, FMA and F16C alone:
#   -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
#   -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF \
#   -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
# KERNEL=avx-vnni: the same on a CPU with AVX-VNNI (recent laptops; a
# Sapphire Rapids Xeon), `--kernel avx-vnni` against a llama-bench built
# with -DGGML_AVX_VNNI=ON in place of OFF above.
set -eu
[ $# -ge 1 ] || { echo "usage: bench-smollm.sh LLAMA_BENCH [BUILD] [ROUNDS]" >&2; exit 2; }
lb=$1
build=${2:-build}
rounds=${3:-2}
kernel=${KERNEL:-}
H=$build/hybridspec
[ -x "$lb" ] || { echo "bench-smollm.sh: $lb: not an executable llama-bench" >&2; exit 2; }
[ -x "$H" ] || { echo "bench-smollm.sh: $H: build the project first (make)" >&2; exit 2; }
case $rounds in ''|*[!0-9]*|0) echo "bench-smollm.sh: ROUNDS: expected a count >= 1, found '$rounds'" >&2; exit 2 ;; esac
case $kernel in
'') kopt= ;;
avx2) kopt="--kernel avx2" ;;
avx-vnni)
	grep -qw avx_vnni /proc/cpuinfo ||
		{ echo "bench-smollm.sh: KERNEL=avx-vnni: this CPU has no AVX-VNNI (no avx_vnni in /proc/cpuinfo)" >&2; exit 2; }
	kopt="--kernel avx-vnni" ;;
*) echo "bench-smollm.sh: KERNEL: expected avx2 or avx-vnni (or nothing), found '$kernel'" >&2; exit 2 ;;
esac
command -v jq >/dev/null || { echo "bench-smollm.sh: jq is missing (apt-get install jq)" >&2; exit 2; }
models=${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/hybridspec/models}
gguf=$(ls "$models"/smollm2-135m/*.gguf 2>/dev/null | head -n 1 || true)
[ -n "$gguf" ] || { echo "bench-smollm.sh: smollm2-135m is not fetched (sh scripts/fetch-models.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# lines: engine weights threads metric tokens/s
: >"$tmp/all"
for r in $(seq "$rounds"); do
	for t in 1 2; do
		for v in w4a16-g32-asym-head:fp16 w4a16-g32-asym:fp16 \
			w4a16-g32-asym-head:int8; do
			q=${v%:*}
			d=${v#*:}
			# shellcheck disable=SC2086 # $kopt is options, split
			"$H" calib cpu --model smollm2-135m --quant "$q" --threads "$t" \
				--ctx 128,1024 --prefill 128,1024 --reps 3 $kopt \
				--decode-acts "$d" -o "$tmp/e.json" --overwrite 2>"$tmp/log" ||
				{ cat "$tmp/log" >&2; exit 1; }
			# "prefill N tokens at context 0: X ms",
			# "draft 1 token at context C: X ms"
			[ "$d" = fp16 ] || q="$q,a8"
			awk -v t="$t" -v q="$q" '
				/prefill +[0-9]+ tokens at/ { n = $3; ms = $(NF - 1)
					print "hybridspec", q, t, "pp" n, n * 1000 / ms }
				/draft +1 token +at context/ { c = $(NF - 2); sub(":", "", c)
					print "hybridspec", q, t, "tg@" c, 1000 / $(NF - 1) }' \
				"$tmp/log" | tee -a "$tmp/all"
		done
		for a in "-p 128,1024 -n 0" "-p 0 -n 32 -d 128,1024"; do
			# shellcheck disable=SC2086 # $a is the options, split
			"$lb" -m "$gguf" -t "$t" $a -r 3 -o json >"$tmp/lb.json" \
				2>"$tmp/lb.log" || { cat "$tmp/lb.log" >&2; exit 1; }
			jq -r --arg t "$t" '.[] | "llama.cpp q4_1(file) \($t) " +
				(if .n_gen > 0 then "tg@\(.n_depth)" else "pp\(.n_prompt)" end) +
				" \(.avg_ts)"' "$tmp/lb.json" | tee -a "$tmp/all"
		done
	done
done

echo
echo "medians over $rounds rounds, tokens/s; x: the project's over llama.cpp's${kernel:+ (the project on --kernel $kernel)}"
# the table (median.awk beside this script)
cat >"$tmp/table.awk" <<'EOF'
{
	key = $1 " " $2 " " $3
	v[key, $4] = v[key, $4] " " $5
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
}
END {
	split("pp128 pp1024 tg@128 tg@1024", m, " ")
	printf "%-10s %-22s %7s", "engine", "weights", "threads"
	for (i = 1; i <= 4; i++)
		printf " %9s %6s", m[i], "x"
	printf "\n"
	for (k = 1; k <= nk; k++) {
		split(keys[k], f, " ")
		printf "%-10s %-22s %7s", f[1], f[2], f[3]
		for (i = 1; i <= 4; i++) {
			a = median(v[keys[k], m[i]])
			b = median(v["llama.cpp q4_1(file) " f[3], m[i]])
			if (f[1] == "hybridspec" && b > 0)
				printf " %9.1f %6.2f", a, a / b
			else
				printf " %9.1f %6s", a, "-"
		}
		printf "\n"
	}
}
EOF
awk -f "$(dirname "$0")/median.awk" -f "$tmp/table.awk" "$tmp/all"
