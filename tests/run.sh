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
		# the kernel tests again, the avx-vnni set's vpdpbusd in its
		# EVEX form: on a CPU with AVX-512 VNNI and no AVX-VNNI (where
		# AVX-VNNI is, the main tests ran the set)
		evex="avx-vnni kernel tests, vpdpbusd in its EVEX form"
		if grep -qw avx_vnni /proc/cpuinfo; then
			echo "== $evex: skipped, the main tests ran the set"
			continue
		fi
		if ! grep -qw avx512_vnni /proc/cpuinfo ||
			! grep -qw avx512vl /proc/cpuinfo; then
			echo "== $evex: skipped, no AVX-512 VNNI here"
			continue
		fi
		echo "== $evex (AVX-512 VNNI)"
		out=$("$prog" 2>&1) || status=1
		# a build whose CPU check disagreed with /proc/cpuinfo would
		# pass without the set
		case $out in
		*"kernel avx-vnni: "*) ;;
		*)
			echo "FAIL $prog: the avx-vnni set did not run"
			failed=$((failed + 1))
			status=1 ;;
		esac ;;
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
