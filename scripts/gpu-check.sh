#!/bin/sh
# gpu-check.sh [OUT [STEP...]]: everything the GPU path needs a GPU for, in
# one run, for a machine lent with one (docs/gpu.md): the binaries (the
# ones scripts/gpu-prep.sh built here, or built there where those do not
# run), the GPU tests
# (the kernels and the model forwards against the CPU reference), `bench
# gpu`, `calib gpu` for LLaMA-2 7B and 13B in FP16 and W4A16, and a
# counter profile of the W4A16 kernels at M = 1 where ncu works. Writes
# OUT (default results/runs/gpu): nvidia-smi.txt, tests.txt,
# bench-gpu.json, verify-*.json, ncu.txt, and times.txt (seconds a step;
# each step has a time limit, so that one lease brings back everything).
# With GPU_CHECK_TAR=FILE, OUT is packed into FILE after every step (a
# device call brings back 8 files at most, and what a killed call had).
# STEPs (default all): tests bench calib-7b-f16 calib-7b-w4a16 ncu
# calib-13b-f16 calib-13b-w4a16 bench-g32, for a rerun of some.
# A bare machine takes GSL, jansson and the test models from .gpu/ (made
# here by scripts/gpu-prep.sh and carried).
set -u
out=${1:-results/runs/gpu}
[ $# -gt 0 ] && shift
steps=${*:-tests bench calib-7b-f16 calib-7b-w4a16 ncu calib-13b-f16 \
	calib-13b-w4a16 bench-g32}
mkdir -p "$out"
if ! pkg-config --exists gsl jansson 2>/dev/null && [ -d .gpu/debs ]; then
	for f in .gpu/debs/*.deb; do dpkg -x "$f" /tmp/hsdeps; done
	lib=/tmp/hsdeps/usr/lib/x86_64-linux-gnu
	export CPATH=/tmp/hsdeps/usr/include LIBRARY_PATH=$lib
	export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# cuBLAS: the toolkit's, else the one PyPI's nvidia-cublas put there
blas=$(python3 -c 'import nvidia.cublas as b; print(b.__path__[0])' 2>/dev/null)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64${blas:+:$blas/lib}
[ -d .gpu/models ] && export HYBRIDSPEC_MODELS="$PWD/.gpu/models"
pack() {
	[ -z "${GPU_CHECK_TAR:-}" ] ||
		{ tar czf "$GPU_CHECK_TAR.tmp" -C "$out" . &&
			mv "$GPU_CHECK_TAR.tmp" "$GPU_CHECK_TAR"; }
}
# NAME LIMIT COMMAND...: runs it for at most LIMIT seconds; "NAME SECONDS
# STATUS" into times.txt. A failed step does not stop the rest
step() {
	name=$1
	limit=$2
	shift 2
	case " build $steps " in *" $name "*) ;; *) return 0 ;; esac
	t0=$(date +%s)
	rc=0
	timeout "$limit" "$@" || rc=$?
	echo "$name $(($(date +%s) - t0)) s, exit $rc" >> "$out/times.txt"
	pack
	return $rc
}
: > "$out/times.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
uname -a >> "$out/nvidia-smi.txt"
cat /etc/os-release >> "$out/nvidia-smi.txt" 2>&1
# the binaries: this machine's build in .gpu/bin, run where it lies (no
# minutes of nvcc on the lease, and no build/ overwritten); built there
# only where those do not run
bin=.gpu/bin
if ! "$bin/hybridspec" --version > "$out/version.txt" 2>&1; then
	bin=build
	step build 240 make -j"$(nproc)" all build/hybridspec-tests \
		> "$out/build.txt" 2>&1
	build/hybridspec --version > "$out/version.txt" 2>&1
fi
export HYBRIDSPEC_BIN="$PWD/$bin/hybridspec" # what the tests run
ldd "$bin/hybridspec-cuda.so" >> "$out/version.txt" 2>&1
pack
step tests 150 sh -c "$bin/hybridspec-tests gpu 2>&1 | tee '$out/tests.txt';
	$bin/hybridspec-tests gk_pack 2>&1 | tee -a '$out/tests.txt';
	! grep -q '^FAIL\|^skip gpu_' '$out/tests.txt'"
step bench 150 sh -c "$bin/hybridspec bench gpu --json > '$out/bench-gpu.json'"
# NAME LIMIT MODEL QUANT: a verify table
calib() {
	step "calib-$1" "$2" "$bin/hybridspec" calib gpu --model "$3" \
		--quant "$4" -o "$out/verify-$3-$4.json"
}
calib 7b-f16 75 llama2-7b f16
calib 7b-w4a16 75 llama2-7b w4a16
# the counters of both W4A16 kernels on 4096 x 4096 at M = 1 (GEMM and
# GEMV, 13 launches each)
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$ncu" ]; then
	step ncu 60 sh -c "'$ncu' --clock-control none --kernel-name regex:q4_ \
		--launch-count 26 --section SpeedOfLight --section Occupancy \
		--section LaunchStats --section MemoryWorkloadAnalysis \
		$bin/hybridspec bench gpu --quick > '$out/ncu.txt' 2>&1"
fi
calib 13b-f16 60 llama2-13b f16
calib 13b-w4a16 60 llama2-13b w4a16
step bench-g32 40 sh -c "$bin/hybridspec bench gpu --json --models llama2-7b \
	--group 32 > '$out/bench-gpu-g32.json'"
pack
cat "$out/times.txt"
echo "gpu-check: wrote $out"
