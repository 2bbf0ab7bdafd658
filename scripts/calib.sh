#!/bin/sh
# Regenerates the calibration profiles under results/calib/ that the default
# configs use: run on the machine the profiles are to describe, with nothing
# else running (timings are medians, but a busy machine shifts them all).
#   sh scripts/calib.sh [BUILD] [DEVICE] [derive]
# DEVICE names this machine in the profiles (default: xeon-2vcpu, the
# development machine the committed profiles come from). With `derive`,
# only the derived profiles and the held-out table are made again, from
# the committed measured profile (after a change to the device library;
# seconds, and any machine will do).
set -e
B=${1:-build}
DEV=${2:-xeon-2vcpu}
STAGE=${3:-all}
case $STAGE in all|derive) ;; *)
	echo "calib.sh: the third argument is 'derive' or nothing, not '$STAGE'" >&2
	exit 2 ;;
esac
OUT=results/calib
DATA=${HYBRIDSPEC_DATA:-../shared/data}
H="$B/hybridspec"
mkdir -p "$OUT"

# the edge device measured here: LLaMA-2-7B shaped W4A16 draft (synthetic
# weights), 2 threads, prefill through the integer path (int8 activations,
# as llama.cpp's)
EDGE="$OUT/edge-$DEV-llama2-7b-w4a16.json"
[ $STAGE = derive ] || "$H" calib cpu --shape llama2-7b --quant w4a16-g128 --threads 2 \
	--device "$DEV" --ctx 16,64,256,512,1024,2048 --prefill 16,32,64 \
	--reps 3 --block-acts int8 -o "$EDGE" --overwrite

# the paper's devices, derived from it: the level from the device model
# fitted on the library's published llama.cpp figures (results/calib/devices),
# the shape from the profile; and the model's held-out errors. A device
# prefills on the kernel family of its own used prefill figures where they
# are of one; else phones on the repacked kernels their class's figures ran
# on (llama.cpp repacks 4-bit weights on Arm cores with dot products), the
# others on the generic ones of theirs.
derive() { # DEVICE MODEL OUT
	k=$(jq -r '[.published[]? | select(.backend == "cpu" and .use != false
		and .test == "pp") | .kernel // "generic"] | unique |
		if length == 1 then .[0] else "" end' "$OUT/devices/$1.json")
	if [ -z "$k" ]; then
		k=generic
		[ "$(jq -r .class "$OUT/devices/$1.json")" = phone ] && k=repack
	fi
	"$H" calib derive "$EDGE" --device "$1" --model "$2" --kernel $k -o "$3" \
		--overwrite
}
for d in snapdragon-8-gen3 apple-a17-pro raspberry-pi-5 jetson-orin-nano \
	laptop-m2-pro laptop-core-i3-1315u; do
	derive "$d" llama2-7b "$OUT/edge-$d-llama2-7b-w4a16.json"
done
"$H" calib devices --blind > "$OUT/devices/blind.txt"
# the pairs planners use, on every device of the library: 7-8B targets
# and 0.5-1.7B drafts, W4A16
mkdir -p "$OUT/pairs"
for f in "$OUT"/devices/*.json; do
	d=$(basename "$f" .json)
	for m in llama3.1-8b qwen2.5-7b llama3.2-1b qwen2.5-0.5b qwen2.5-1.5b \
		smollm2-1.7b; do
		derive "$d" "$m" "$OUT/pairs/edge-$d-$m-w4a16.json"
	done
done
[ $STAGE = derive ] && exit 0

# acceptance of quantised drafts against the FP32 target on real text
"$H" calib accept --target stories260K \
	--drafts w4a16-g128,w4a16-g32-asym-gptq,w8a16,w4a4-g32 \
	--text "$DATA/TinyStories-valid-excerpt.txt" --gamma 8 -o "$OUT" --overwrite

# SmolLM2-135M (when scripts/fetch-models.sh has fetched it): its best
# W4A16 draft and W4A4, windows of 2,048 (about 26 minutes on 2 threads)
if ls "${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/hybridspec/models}"/smollm2-135m/*.gguf >/dev/null 2>&1; then
	"$H" calib accept --target smollm2-135m --drafts w4a16-g64-asym \
		--text "$DATA/TinyStories-valid-excerpt.txt" --window 2048 --threads 2 \
		--gamma 8 --prompts 8 -o "$OUT" --overwrite
	"$H" calib accept --target smollm2-135m --drafts w4a4-g32-sym \
		--text "$DATA/TinyStories-valid-excerpt.txt" --window 2048 --threads 2 \
		--gamma 4 --prompts 4 -o "$OUT" --overwrite
else
	echo "calib: smollm2-135m is not fetched: its profiles are left as they are"
fi

# the cloud GPU: no GPU here, so the roofline, marked uncalibrated
"$H" calib gpu --roofline --gpu H100-SXM --model llama2-7b \
	-o "$OUT/verify-H100-SXM-llama2-7b.json" --overwrite

# fidelity of the simulator with profiles measured here (kept even when a
# check misses its bound: that is a finding, and the table says which)
"$H" calib check --json > "$OUT/check.json.tmp" ||
	echo "calib: a fidelity check missed its bound, see $OUT/check.json"
mv "$OUT/check.json.tmp" "$OUT/check.json"
