#!/bin/sh
# install-deps.sh [--check] [fuzz] [mpi]: makes sure hybridspec's Debian packages
# are here and that the toolchains they make up work.
#
# First it installs the missing packages with apt-get (as root or through
# sudo; otherwise it prints the exact command and exits 1). Then it proves
# each toolchain by use, not by package lists: a C program built against GSL
# and jansson and run natively and under valgrind, a static C program built
# for aarch64 and run under qemu-aarch64, a PNG with text drawn by gnuplot,
# jq reading JSON, curl and unzip for fetch-models.sh, with "fuzz" a
# libFuzzer target built by clang and run once, and with "mpi" a program
# built by mpicc and run on two mpirun ranks. A check that fails names the
# package that is missing and exits 1.
# Quiet when all is well.
#
#   --check  install nothing, only check (what a fresh machine lacks shows)
#   fuzz     also what `make fuzz` needs (clang and its libFuzzer runtime)
#   mpi      also what `make MPI=1` and its tests need (OpenMPI; CI runs them)
set -eu

check_only=0
fuzz=0
mpi=0
for a in "$@"; do
	case $a in
	--check) check_only=1 ;;
	fuzz) fuzz=1 ;;
	mpi) mpi=1 ;;
	-h | --help)
		sed -n '2,18s/^# \{0,1\}//p' "$0"
		exit 0 ;;
	*)
		echo "install-deps: unknown argument '$a' (expected --check, fuzz or mpi)" >&2
		exit 2 ;;
	esac
done

# build-essential, pkg-config, GSL, jansson: the build. The cross compiler
# and its C library (only a Recommends of the compiler, so named here),
# qemu-user: the NEON kernel tests. valgrind: `make valgrind` in CI. gnuplot
# and a font for the PNGs' text (gnuplot-nox only recommends one), jq (the
# report's claims from JSON): `make run`. curl and unzip:
# scripts/fetch-models.sh (PyPI, Hugging Face). procps (pgrep): the
# tests that check no process outlives a stopped command.
need="build-essential pkg-config libgsl-dev libjansson-dev \
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user valgrind \
gnuplot-nox fonts-dejavu-core jq curl unzip procps"
[ $fuzz -eq 1 ] && need="$need clang libclang-rt-dev"
[ $mpi -eq 1 ] && need="$need openmpi-bin libopenmpi-dev"

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

if [ -n "$missing" ] && [ $check_only -eq 0 ]; then
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
		echo "install-deps: run: sudo apt-get update &&" \
			"sudo apt-get install -y --no-install-recommends$missing" >&2
		exit 1
	fi
	echo "install-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	$as_root apt-get update -qq
	# shellcheck disable=SC2086
	$as_root apt-get install -y -qq --no-install-recommends $missing
fi

# The checks, in a scratch folder, each a command and the package to blame
# when it fails; the failing command's first lines follow the message.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
bad=0

# blame PROBLEM PACKAGE: says what is wrong and which package mends it
blame() {
	echo "install-deps: $1: install $2" \
		"(apt-get install --no-install-recommends $2)" >&2
	bad=1
	return 1
}

# check WHAT PACKAGE COMMAND...: runs COMMAND, blames PACKAGE if it fails
check() {
	what=$1 pkg=$2
	shift 2
	"$@" >log 2>&1 && return 0
	blame "$what does not work" "$pkg" || :
	if [ -s log ]; then
		echo "install-deps: '$*' said:" >&2
		head -n 4 log | sed 's/^/    /' >&2
	fi
	return 1
}

# tool COMMAND PACKAGE: COMMAND is on the PATH, or PACKAGE is blamed
tool() {
	command -v "$1" >/dev/null 2>&1 || blame "$1 not found" "$2"
}

printf '#include <stdio.h>\nint main(void) { return puts("hello") < 0; }\n' >hello.c
printf '%s\n' '#include <gsl/gsl_rng.h>' '#include <jansson.h>' \
	'int main(void) {' \
	'	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);' \
	'	json_t *j = json_integer(1);' \
	'	int ok = r && j && json_integer_value(j) == 1;' \
	'	gsl_rng_free(r);' \
	'	json_decref(j);' \
	'	return !ok;' \
	'}' >libs.c

# native: compiler and C library, valgrind on what they built, then each
# library on its own, so that a failure names the one that is missing
if tool cc build-essential &&
	check "the C compiler" build-essential cc -o hello hello.c; then
	check "running a C program" build-essential ./hello || :
	tool valgrind valgrind &&
		check "valgrind" valgrind valgrind -q --error-exitcode=1 ./hello || :
fi
if tool pkg-config pkg-config; then
	libs=1
	check "GSL" libgsl-dev pkg-config --exists gsl || libs=0
	check "jansson" libjansson-dev pkg-config --exists jansson || libs=0
	[ $libs -eq 0 ] ||
		check "a program with GSL and jansson" "libgsl-dev libjansson-dev" \
			sh -c 'cc $(pkg-config --cflags gsl jansson) -o libs libs.c \
				$(pkg-config --libs gsl jansson) && ./libs' || :
fi

# aarch64: compiler, C library (static, as the kernel tests are), emulator
tool aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu &&
	check "the aarch64 C library" libc6-dev-arm64-cross \
		aarch64-linux-gnu-gcc -static -o hello-arm hello.c &&
	tool qemu-aarch64 qemu-user &&
	check "running an aarch64 program under qemu-aarch64" qemu-user \
		qemu-aarch64 ./hello-arm || :

# plots: gnuplot's cairo PNG terminal, and a TrueType font for its text
tool gnuplot gnuplot-nox &&
	check "gnuplot's PNG terminal" gnuplot-nox sh -c "gnuplot -e \"set \
terminal pngcairo font 'Sans,11'; set output 'p.png'; set title 'check'; \
plot x\" && test -s p.png" || :
tool jq jq && check "jq" jq sh -c 'echo "{\"a\": [1]}" | jq -e ".a[0] == 1"' || :
# fetch-models.sh's download and unpacking
tool curl curl && check "curl" curl curl --version || :
tool unzip unzip && check "unzip" unzip unzip -v || :
[ -n "$(find /usr/share/fonts -name '*.ttf' 2>/dev/null | head -n 1)" ] ||
	blame "no TrueType font for the plots' text" fonts-dejavu-core || :

if [ $fuzz -eq 1 ]; then
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
		'{ return (void)d, (int)(n & 0); }' >fz.c
	tool clang clang &&
		check "clang's libFuzzer" libclang-rt-dev sh -c \
			'clang -fsanitize=fuzzer,address,undefined -o fz fz.c && ./fz -runs=1' || :
fi

if [ $mpi -eq 1 ]; then
	printf '%s\n' '#include <mpi.h>' \
		'int main(int argc, char **argv) {' \
		'	int n = 0;' \
		'	MPI_Init(&argc, &argv);' \
		'	MPI_Comm_size(MPI_COMM_WORLD, &n);' \
		'	MPI_Finalize();' \
		'	return n != 2;' \
		'}' >mpi.c
	tool mpicc libopenmpi-dev && tool mpirun openmpi-bin &&
		check "an MPI program on two ranks" "openmpi-bin libopenmpi-dev" \
			sh -c 'mpicc -o mpi mpi.c && mpirun --allow-run-as-root \
				--oversubscribe -np 2 ./mpi' || :
fi

if [ $bad -ne 0 ]; then
	[ -n "$missing" ] && [ $check_only -eq 1 ] &&
		echo "install-deps: not installed:$missing (run without --check to install)" >&2
	exit 1
fi
exit 0
