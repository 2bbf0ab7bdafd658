#!/bin/sh
# run.sh BUILD: runs every test program, and the include graph's check
# (scripts/layers.sh), and sums their "N passed, N failed" lines into the
# last line of the output.
build=${1:-build}
# the tests run the binary of the same build (make test-asan: the ASan one)
HYBRIDSPEC_BIN=$(cd "$build" && pwd)/hybridspec
export HYBRIDSPEC_BIN
passed=0
failed=0
status=0
for prog in scripts/layers.sh "$build/hybridspec-tests" \
	"$build/aarch64/kernel-tests" "$build/vnni-evex/kernel-tests"; do
	case $prog in
	*.sh)
		out=$(sh "$prog" 2>&1) || status=1 ;;
	*aarch64*)
		echo "== aarch64 (NEON) kernel tests under qemu-aarch64"
		out=$(qemu-aarch64 "$prog" 2>&1) || status=1 ;;
	*vnni-evex*)
		# the avx-vnni set's code, vpdpbusd in its EVEX form: on a CPU
		# with AVX-512 VNNI and no AVX-VNNI (the main tests run the set
		# where AVX-VNNI is)
		if ! grep -qw avx512_vnni /proc/cpuinfo ||
			! grep -qw avx512vl /proc/cpuinfo; then
			echo "== avx-vnni kernel tests in the EVEX form: skipped, no AVX-512 VNNI here"
			continue
		fi
		if grep -qw avx_vnni /proc/cpuinfo; then
			echo "== avx-vnni kernel tests in the EVEX form: skipped, the main tests ran the set"
			continue
		fi
		echo "== avx-vnni kernel tests, vpdpbusd in its EVEX form (AVX-512 VNNI)"
		out=$("$prog" 2>&1) || status=1 ;;
	*)
		out=$("$prog" 2>&1) || status=1 ;;
	esac
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	p=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
		echo "FAIL $prog: ended without a summary line: $last"
		failed=$((failed + 1))
		status=1
		continue
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
