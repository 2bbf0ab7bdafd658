#!/bin/sh
# gpu-check.sh [OUT]: everything the GPU path needs a GPU for, in one run,
# for a machine lent with one (docs/gpu.md): builds, runs the GPU tests
# (the kernels and the model forward against the CPU reference), then
# `bench gpu` and `calib gpu` for LLaMA-2 7B in FP16 and W4A16. Writes
# OUT (default results/runs/gpu): nvidia-smi.txt, tests.txt,
# bench-gpu.json, verify-*.json, and times.txt (seconds a step). A bare
# machine takes GSL, jansson and the test models from .gpu/ (made here by
# scripts/gpu-prep.sh and carried).
set -eu
out=${1:-results/runs/gpu}
mkdir -p "$out"
if ! pkg-config --exists gsl jansson 2>/dev/null && [ -d .gpu/debs ]; then
	for f in .gpu/debs/*.deb; do dpkg -x "$f" /tmp/hsdeps; done
	lib=/tmp/hsdeps/usr/lib/x86_64-linux-gnu
	export CPATH=/tmp/hsdeps/usr/include LIBRARY_PATH=$lib LD_LIBRARY_PATH=$lib
fi
[ -d .gpu/models ] && export HYBRIDSPEC_MODELS="$PWD/.gpu/models"
# NAME COMMAND...: runs it; "NAME SECONDS STATUS" into times.txt. A failed
# step does not stop the rest: one lease must bring back everything
step() {
	name=$1
	shift
	t0=$(date +%s)
	rc=0
	"$@" || rc=$?
	echo "$name $(($(date +%s) - t0)) s, exit $rc" >> "$out/times.txt"
}
: > "$out/times.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
step build make -j"$(nproc)" all build/hybridspec-tests
[ -x build/hybridspec-cuda.so ] || { echo "gpu-check: no CUDA plugin built" >&2; exit 1; }
# the GPU cases and the repacking against the CPU references
step tests sh -c "build/hybridspec-tests gpu 2>&1 | tee '$out/tests.txt';
	build/hybridspec-tests gk_pack 2>&1 | tee -a '$out/tests.txt';
	! grep -q '^FAIL\|^skip gpu_' '$out/tests.txt'"
step bench build/hybridspec bench gpu --json > "$out/bench-gpu.json"
for q in f16 w4a16; do
	step "calib-$q" build/hybridspec calib gpu --model llama2-7b --quant "$q" \
		-o "$out/verify-llama2-7b-$q.json"
done
cat "$out/times.txt"
echo "gpu-check: wrote $out"
