#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the core differential fuzzer and report it as TAP.
#   fuzz-run.sh bounded RUNS   fixed seed, RUNS inputs, fresh scratch corpus
#                              seeded from corpus/ (read only), < 1 min
#   fuzz-run.sh long SECONDS   campaign that grows corpus/ in place
# Both print the number of inputs executed; a crash leaves its input in
# fuzz-out/ for ./fuzz_replay (built without libFuzzer, for gdb).
set -eu
cd "$(dirname "$0")"
mode=$1 limit=$2
mkdir -p corpus fuzz-out
log=fuzz-out/$mode.log
common=(-max_len=4096 -print_final_stats=1 -artifact_prefix=fuzz-out/)

if [ "$mode" = bounded ]; then
	rm -rf fuzz-out/scratch
	mkdir -p fuzz-out/scratch
	set +e
	./fuzz_wheel "${common[@]}" -seed=1 -runs="$limit" -max_total_time=55 \
		fuzz-out/scratch corpus >"$log" 2>&1
	rc=$?
	set -e
	name="core differential fuzz"
else
	touch "$log.start"
	set +e
	./fuzz_wheel "${common[@]}" -max_total_time="$limit" \
		-timeout=10 corpus >"$log" 2>&1
	rc=$?
	set -e
	name="core differential fuzz, long"
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
if [ "$mode" = long ]; then
	# Every difference from the model aborts the run and leaves its input.
	divergences=$(find fuzz-out -maxdepth 1 -name 'crash-*' -newer "$log.start" | wc -l)
	echo "fuzz-core: execs=${execs:-0} divergences=$divergences"
fi
echo "1..1"
if [ "$rc" -eq 0 ]; then
	echo "ok 1 $name (execs=${execs:-?}, corpus=$(ls corpus | wc -l) files)"
else
	tail -30 "$log" | sed 's/^/# /'
	echo "not ok 1 $name (execs=${execs:-?}, see tests/core/$log)"
	exit 1
fi
