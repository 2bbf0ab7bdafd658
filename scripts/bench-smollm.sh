#!/bin/sh
# bench-smollm.sh [BUILD]: SmolLM2-135M's forward at W4A16 through this
# project's kernels (calib cpu: one decode step at contexts 128 and 1024,
# prefills of 128 and 1024 tokens) on 1 and 2 threads, and, when
# LLAMACPP names a llama.cpp build folder (its bin/llama-cli), llama.cpp on
# the same GGUF file with the same threads in the same run: the prompt's
# eval time (prefill) and the generation's (decode, 32 tokens after the
# prompt). Prints one table; a benchmark, so nothing is asserted. Run it
# alone on the machine.
set -eu
build=${1:-build}
H=$build/hybridspec
models=${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/hybridspec/models}
gguf=$(ls "$models"/smollm2-135m/*.gguf 2>/dev/null | head -n 1 || true)
[ -n "$gguf" ] || { echo "bench-smollm: smollm2-135m is not fetched (sh scripts/fetch-models.sh)" >&2; exit 1; }
data=${HYBRIDSPEC_DATA:-../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# prompts of about 128 and 1024 tokens of WikiText-2 (4.0 bytes a token)
head -c 490 "$data/wiki.test.raw" | tr -d '\r' >"$tmp/p128.txt"
head -c 3960 "$data/wiki.test.raw" | tr -d '\r' >"$tmp/p1024.txt"

printf '%-10s %-7s %-24s %12s %12s %12s %12s\n' engine threads weights \
	"pp128 tok/s" "pp1024 tok/s" "tg@128 tok/s" "tg@1024 tok/s"
for t in 1 2; do
	for q in w4a16-g32-asym-head w4a16-g32-asym; do
		"$H" calib cpu --model smollm2-135m --quant "$q" --threads "$t" \
			--ctx 128,1024 --prefill 128,1024 --reps 3 \
			-o "$tmp/e.json" 2>"$tmp/log"
		# calib's lines: "prefill N tokens at context 0: X ms",
		# "draft 1 token at context C: X ms"
		awk -v t="$t" -v q="$q" '
			/prefill +128 tokens/ { p1 = 128000 / $(NF - 1) }
			/prefill +1024 tokens/ { p2 = 1024000 / $(NF - 1) }
			/draft +1 token +at context +128:/ { d1 = 1000 / $(NF - 1) }
			/draft +1 token +at context +1024:/ { d2 = 1000 / $(NF - 1) }
			END { printf "%-10s %-7s %-24s %12.1f %12.1f %12.1f %12.1f\n",
				"hybridspec", t, q, p1, p2, d1, d2 }' "$tmp/log"
	done
	if [ -n "${LLAMACPP:-}" ] && [ -x "$LLAMACPP/bin/llama-cli" ]; then
		for n in 128 1024; do
			"$LLAMACPP/bin/llama-cli" -m "$gguf" -f "$tmp/p$n.txt" -n 32 \
				--temp 0 -t "$t" -tb "$t" -no-cnv -c 2048 --no-warmup \
				</dev/null >"$tmp/out$n" 2>"$tmp/ll$n" || true
		done
		# "prompt eval time = X ms / N tokens (... Y tokens per second)"
		awk -v t="$t" '
			FILENAME ~ /ll128$/ && /prompt eval time/ { p1 = $(NF - 3) }
			FILENAME ~ /ll1024$/ && /prompt eval time/ { p2 = $(NF - 3) }
			FILENAME ~ /ll128$/ && / eval time/ && !/prompt/ { d1 = $(NF - 3) }
			FILENAME ~ /ll1024$/ && / eval time/ && !/prompt/ { d2 = $(NF - 3) }
			END { printf "%-10s %-7s %-24s %12.1f %12.1f %12.1f %12.1f\n",
				"llama.cpp", t, "q4_1 (the file)", p1, p2, d1, d2 }' \
			"$tmp/ll128" "$tmp/ll1024"
	fi
done
