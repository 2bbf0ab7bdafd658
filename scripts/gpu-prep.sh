#!/bin/sh
# gpu-prep.sh: run here, before a session with a lent GPU machine: puts in
# .gpu/ (ignored by git) what that bare machine lacks and cannot fetch:
#   debs/    the Debian packages of GSL and jansson
#   models/  the two small test models, and SmolLM2-135M cut to its first
#            6 layers: the 98 MB file is over what one device call
#            carries (64 MiB); 6 layers hold every shape of the model and
#            weigh 45 MB (the cut: gguf-py, PyPI's "gguf", in a scratch
#            virtual environment)
#   bin/     this machine's build of the binaries and the CUDA plugin,
#            stripped: what gpu-check.sh runs on a bare machine (it builds
#            there only where these do not run)
# Carry .gpu to the machine and run scripts/gpu-check.sh there (docs/gpu.md).
set -eu
cd "$(dirname "$0")/.."
models=${HYBRIDSPEC_MODELS:-../shared/models}
layers=6
mkdir -p .gpu/debs .gpu/models .gpu/bin
(cd .gpu/debs && apt-get download libgsl-dev libgsl27 libgslcblas0 \
	libjansson-dev libjansson4)
for m in stories260K tinystories656K; do
	rm -rf ".gpu/models/$m"
	cp -r "$models/$m" .gpu/models/
done
smol=${XDG_CACHE_HOME:-$HOME/.cache}/hybridspec/models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf
if [ -f "$smol" ]; then
	venv=${TMPDIR:-/tmp}/hybridspec-gguf
	[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" &&
		"$venv/bin/pip" install -q gguf; }
	rm -rf .gpu/models/smollm2-135m
	mkdir -p .gpu/models/smollm2-135m
	"$venv/bin/python" scripts/gguf-cut.py "$smol" \
		.gpu/models/smollm2-135m/SmolLM2-135M-Instruct-first$layers.gguf \
		"$layers"
else
	echo "gpu-prep: no SmolLM2-135M here (sh scripts/fetch-models.sh);" \
		"its GPU tests will skip" >&2
fi
make -j2 all build/hybridspec-tests
for f in hybridspec hybridspec-tests hybridspec-cuda.so; do
	strip --strip-debug -o ".gpu/bin/$f" "build/$f"
done
du -sh .gpu
