#!/bin/sh
# run.sh BUILD SECONDS JOBS [TARGET...]: runs each fuzz target (default:
# every BUILD/fz_*) for SECONDS, JOBS at a time, on its corpus
# BUILD/corpus/TARGET, seeded from fuzz/seeds/TARGET/ and, where
# ../shared/models is here, from the real tokenizers and model headers.
# Logs go to BUILD/logs/TARGET.log, crashing inputs to BUILD/artifacts/TARGET/.
# Prints a line a target (executions, seconds, result); exits 1 if any
# target found a crash, a leak, a hang or a sanitizer report.
set -u
build=$1
secs=$2
jobs=$3
shift 3
targets=$*
[ -n "$targets" ] || targets=$(cd "$build" && ls fz_* | grep -v '\.d$')
models=${HYBRIDSPEC_MODELS:-../shared/models}
status=0

# seeds from the shared models, made at fuzz time (too big to commit)
shared_seeds() {
	c=$build/corpus/$1
	case $1 in
	fz_tok_llama2c)
		f=$models/stories260K/tok512.bin
		[ -f "$f" ] && { printf '\377\001'; cat "$f"; } >"$c/shared-tok512"
		;;
	fz_tok_hf)
		f=$models/tinystories656K/tokenizer.json
		[ -f "$f" ] && { printf '\377\007'; cat "$f"; } >"$c/shared-tokenizer"
		;;
	fz_hf)
		d=$models/tinystories656K
		if [ -f "$d/model.safetensors" ]; then
			# config, NUL, the header and the first tensor bytes
			{ cat "$d/config.json"; printf '\0'; head -c 12000 \
				"$d/model.safetensors"; } >"$c/shared-header"
		fi
		;;
	fz_llama2c)
		f=$models/stories260K/stories260K.bin
		[ -f "$f" ] && head -c 4096 "$f" >"$c/shared-head"
		;;
	esac
	return 0
}

one() {
	t=$1
	mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$build/logs"
	[ -d "fuzz/seeds/$t" ] && cp fuzz/seeds/"$t"/* "$build/corpus/$t/"
	shared_seeds "$t"
	# a crash skips the target's cleanup: its files stay in BUILD/tmp
	mkdir -p "$build/tmp/$t"
	TMPDIR=$(cd "$build/tmp/$t" && pwd) \
	"$build/$t" "$build/corpus/$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/$t/" >"$build/logs/$t.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/logs/$t.log")
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$build/logs/$t.log")
	if [ $rc -eq 0 ]; then
		echo "$t: ${execs:-?} executions in ${took:-?} s, no crash"
	else
		echo "$t: FAILED (status $rc) after ${execs:-?} executions: see" \
			"$build/logs/$t.log and $build/artifacts/$t/"
	fi
	return $rc
}

n=0
pids=""
for t in $targets; do
	one "$t" &
	pids="$pids $!"
	n=$((n + 1))
	if [ $n -ge "$jobs" ]; then
		for p in $pids; do wait "$p" || status=1; done
		n=0
		pids=""
	fi
done
for p in $pids; do wait "$p" || status=1; done
exit $status
