#!/bin/sh
# gpu-prep.sh: run here, before a session with a lent GPU machine: puts in
# .gpu/ (ignored by git) what that bare machine lacks and cannot fetch:
# the Debian packages of GSL and jansson (debs/) and a copy of the two
# small models the GPU tests load (models/). Carry .gpu to the machine and
# run scripts/gpu-check.sh there (docs/gpu.md).
set -eu
cd "$(dirname "$0")/.."
models=${HYBRIDSPEC_MODELS:-../shared/models}
mkdir -p .gpu/debs .gpu/models
(cd .gpu/debs && apt-get download libgsl-dev libgsl27 libgslcblas0 \
	libjansson-dev libjansson4)
for m in stories260K tinystories656K; do
	rm -rf ".gpu/models/$m"
	cp -r "$models/$m" .gpu/models/
done
du -sh .gpu
