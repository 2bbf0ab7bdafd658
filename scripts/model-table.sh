#!/bin/sh
# model-table.sh [TEXT]: perplexity and acceptance of every weight format of
# both models against their FP32 forms, as a markdown table on stdout.
# Usage: sh scripts/model-table.sh ../shared/data/TinyStories-valid-excerpt.txt
set -eu
bin=${BIN:-build/hybridspec}
text=${1:-../shared/data/TinyStories-valid-excerpt.txt}
echo "| model | weights | perplexity | alpha greedy | alpha stochastic | E[A] g1 | g2 | g4 | g8 |"
echo "|---|---|---|---|---|---|---|---|---|"
for model in stories260K tinystories656K; do
	for q in f32 f16 w8a16 w4a16-g32-sym w4a16-g64-sym w4a16-g128-sym \
		w4a16-g32-sym-gptq w4a16-g128-sym-gptq w4a16-g128-asym-gptq \
		w4a16-g32-asym w4a16-g128-asym w4a4-g32-sym w4a4-g128-sym; do
		ppl=$("$bin" eval ppl --model "$model" --quant "$q" --text "$text" --json |
			sed -n 's/.*"ppl": \([0-9.e+-]*\).*/\1/p')
		acc=$("$bin" eval accept --target "$model:f32" --draft "$model:$q" \
			--text "$text" --gamma 8 --prompts 8 --json | tr -d '\n ')
		ag=$(printf '%s' "$acc" | sed -n 's/.*"alpha_greedy":\([0-9.e+-]*\).*/\1/p')
		as=$(printf '%s' "$acc" | sed -n 's/.*"alpha_stochastic":\([0-9.e+-]*\).*/\1/p')
		g() { printf '%s' "$acc" | sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }
		printf '| %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f |\n' \
			"$model" "$q" "$ppl" "$ag" "$as" "$(g 1)" "$(g 2)" "$(g 4)" "$(g 8)"
	done
done
