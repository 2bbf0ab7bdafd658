#!/bin/sh
# install-deps.sh: makes sure the Debian packages hybridspec needs are here.
# Installs the missing ones with apt-get, as root or through sudo; otherwise
# prints the exact command to run and exits 1. Quiet when nothing is missing.
set -eu

need="build-essential pkg-config libgsl-dev libjansson-dev gnuplot-nox \
gcc-aarch64-linux-gnu qemu-user valgrind"

# the GPU path is built only where the CUDA toolkit is (not a Debian
# package of this archive): say so, do not fail
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	echo "install-deps: nvcc not found: the GPU path (bench gpu, calib gpu) is" \
		"not built; for it install NVIDIA's CUDA toolkit with cuBLAS" >&2
fi

missing=""
for p in $need; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: this is not a Debian-like system; install them (or their equivalents) by hand" >&2
	exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
	as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	as_root="sudo"
else
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq --no-install-recommends $missing
