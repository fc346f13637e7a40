#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the core differential fuzzer and report it as TAP (kselftest's
# ktap_helpers.sh, path in $KTAP_HELPERS; the Makefile extracts it).
#   fuzz-run.sh bounded RUNS   fixed seed, RUNS inputs, fresh scratch corpus
#                              seeded from corpus/ (read only), < 1 min
#   fuzz-run.sh long SECONDS   campaign that grows $FUZZ_CORPUS (outside
#                              the tree), seeded from corpus/ (read only)
# Both print the number of inputs executed; a crash leaves its input in
# fuzz-out/ for ./fuzz_replay (built without libFuzzer, for gdb).
# `make corpus-min` folds what a campaign found back into corpus/.
set -eu
cd "$(dirname "$0")"
mode=$1 limit=$2
# shellcheck source=/dev/null
. "${KTAP_HELPERS:?path of kselftest/ktap_helpers.sh}"
mkdir -p fuzz-out
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
	grow=${FUZZ_CORPUS:?directory for the campaign corpus}
	mkdir -p "$grow"
	touch "$log.start"
	set +e
	./fuzz_wheel "${common[@]}" -max_total_time="$limit" \
		-timeout=10 "$grow" corpus >"$log" 2>&1
	rc=$?
	set -e
	name="core differential fuzz, long"
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
seeds=$(sed -n 's/.*INFO: seed corpus: files: \([0-9]*\).*/\1/p' "$log" | tail -1)
if [ "$mode" = long ]; then
	# Every difference from the model aborts the run and leaves its input.
	divergences=$(find fuzz-out -maxdepth 1 -name 'crash-*' -newer "$log.start" | wc -l)
	echo "fuzz-core: execs=${execs:-0} divergences=$divergences corpus=$(find "$grow" -type f | wc -l)"
fi
ktap_print_header
ktap_set_plan 1
if [ "$rc" -eq 0 ]; then
	ktap_test_pass "$name (execs=${execs:-?}, seed corpus ${seeds:-?} inputs)"
else
	tail -30 "$log" | sed 's/^/# /'
	ktap_test_fail "$name (execs=${execs:-?}, see tests/core/$log)"
fi
ktap_finished
