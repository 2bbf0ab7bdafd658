#!/bin/sh
# model-table.sh [TEXT]: perplexity and acceptance of each weight format of
# each model against its FP32 form, one markdown row a format. MODELS and
# FORMATS (space-separated) choose; HEADER=0 leaves the header out, so that
# runs of parts of the list can be joined. GAMMA (default 8; 0: no
# speculative decoding, the E[A] cells are "-"), PROMPTS (8), WINDOW (0:
# the model's context) and THREADS (1) go to eval accept.
#   sh scripts/model-table.sh ../shared/data/TinyStories-valid-excerpt.txt
#   MODELS=smollm2-135m GAMMA=0 WINDOW=2048 THREADS=2 sh scripts/model-table.sh
set -eu
bin=${BIN:-build/hybridspec}
text=${1:-../shared/data/TinyStories-valid-excerpt.txt}
models=${MODELS:-stories260K tinystories656K}
formats=${FORMATS:-f32 f16 w8a16 w4a16-g32-sym w4a16-g64-sym w4a16-g128-sym \
w4a16-g32-sym-gptq w4a16-g128-sym-gptq w4a16-g128-asym-gptq w4a16-g32-asym \
w4a16-g128-asym w4a4-g32-sym w4a4-g128-sym}
if [ "${HEADER:-1}" = 1 ]; then
	echo "| model | weights | perplexity | alpha greedy | alpha stochastic | E[A] g1 | g2 | g3 | g4 | g5 | g6 | g7 | g8 |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
fi
for model in $models; do
	for q in $formats; do
		acc=$("$bin" eval accept --target "$model:f32" --draft "$model:$q" \
			--text "$text" --gamma "${GAMMA:-8}" --prompts "${PROMPTS:-8}" \
			--window "${WINDOW:-0}" --threads "${THREADS:-1}" --json |
			tr -d '\n ')
		field() { printf '%s' "$acc" | sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }
		printf '| %s | %s | %.3f | %.3f | %.3f' "$model" "$q" \
			"$(field ppl_draft)" "$(field alpha_greedy)" "$(field alpha_stochastic)"
		for g in 1 2 3 4 5 6 7 8; do
			if [ "$g" -le "${GAMMA:-8}" ]; then
				printf ' | %.2f' "$(field "$g")"
			else
				printf ' | -'
			fi
		done
		printf ' |\n'
	done
done
