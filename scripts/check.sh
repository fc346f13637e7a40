#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test of the project, behind `make check`: install what is needed,
# run the host tests of the wheel core, build the selftests and the
# stress tests, then boot each kernel (Debian 6.1, Debian 6.12, the debug
# kernel) once under QEMU with the module loaded and run all selftests and
# that kernel's share of the stress tests in it (vm/run.sh). The stress
# tests' summary lines (ledger:, fuzz-abi:, failslab:, memcg:, scale:)
# are repeated in the output.
#
# Each TAP line "ok N name" / "not ok N name" / "ok N name # SKIP why"
# is one test. A program that crashed, hung, exited non-zero without a
# "not ok" line, or printed no TAP is one failure under its name (exit
# code 4 without TAP, kselftest's skip, is one skip). Each kernel adds
# "module loads", "module unloads", "kernel log clean", "VM run
# completes", and on the debug kernel "kmemleak clean" and a check that
# KASAN, kmemleak and lockdep announced themselves at boot. One kernel's
# failure does not stop the others. The last line is exactly
# "N passed, N failed, N skipped"; the exit status is non-zero if any
# test failed. Environment: TWHEEL_KERNELS (default "deb61 deb612
# debug"), TWHEEL_CACHE, TWHEEL_CHECK_OUT (logs), and those of vm/run.sh.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
out=${TWHEEL_CHECK_OUT:-}
kernels=${TWHEEL_KERNELS:-deb61 deb612 debug}
passed=0 failed=0 skipped=0
failures=()
timings=()

if [ -z "$out" ]; then
	out=$cache/check
	rm -rf "$out"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

pass() { passed=$((passed + 1)); }
skip() { skipped=$((skipped + 1)); }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "FAIL: $1"; }
# expect NAME COMMAND...: one test, passed if COMMAND succeeds.
expect() { local name=$1; shift; if "$@"; then pass; else fail "$name"; fi; }

stage_start=0
stage() { stage_name=$1; stage_start=$(date +%s); echo "== $1"; }
stage_done() {
	local s=$(( $(date +%s) - stage_start ))
	timings+=("$(printf '%5d s  %s' "$s" "$stage_name")")
}

# Count the TAP lines of file $2, naming failures "$1: name". Sets tap_lines
# and tap_failed for the caller.
count_tap() {
	local line name
	tap_lines=0 tap_failed=0
	while IFS= read -r line; do
		tap_lines=$((tap_lines + 1))
		name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ //; s/ *#.*//')
		case $line in
		not\ ok*) fail "$1: $name"; tap_failed=$((tap_failed + 1)) ;;
		*'# SKIP'*|*'# skip'*) skip ;;
		*) pass ;;
		esac
	done < <(grep -E '^(not )?ok [0-9]+ ' "$2" || true)
}

# Host tests of the wheel core.
stage setup
"$top/scripts/setup.sh" >"$out/setup.log" 2>&1 || { cat "$out/setup.log"; fail "setup: scripts/setup.sh"; }
stage_done

stage "host tests (tests/core)"
rc=0
make -C "$top/tests/core" test >"$out/host.log" 2>&1 || rc=$?
count_tap host "$out/host.log"
if [ "$tap_lines" = 0 ]; then
	fail "host: tests/core printed no TAP (exit $rc, see $out/host.log)"
elif [ "$rc" != 0 ] && [ "$tap_failed" = 0 ]; then
	fail "host: tests/core exited $rc (see $out/host.log)"
fi
echo "host: $passed passed, $failed failed, $skipped skipped"
stage_done

# The selftests, static programs to copy into the VMs.
stage "build selftests"
progs=()
if ! make -C "$top" selftests >"$out/selftests-build.log" 2>&1; then
	tail -n 20 "$out/selftests-build.log"
	fail "selftests: build (see $out/selftests-build.log)"
elif ! make -s -C "$top/selftests" list-progs >"$out/selftests-list" 2>>"$out/selftests-build.log"; then
	fail "selftests: 'make -s -C selftests list-progs' failed or missing"
else
	while IFS= read -r p; do
		if [ -f "$p" ]; then progs+=("$p"); else fail "selftests: listed program $p does not exist"; fi
	done <"$out/selftests-list"
fi
[ ${#progs[@]} = 0 ] && fail "selftests: no programs to run"
echo "selftests: ${#progs[@]} programs"
stage_done

# The abuse tests of stress/, bounded; which run where is chosen per kernel
# below (fault injection needs the debug kernel, 10M ids a fast one).
stage "build stress tests"
stressdir=$top/stress
if ! make -C "$stressdir" >"$out/stress-build.log" 2>&1; then
	tail -n 20 "$out/stress-build.log"
	fail "stress: build (see $out/stress-build.log)"
fi
stage_done

# stress_progs KERNEL: the stress programs to run on KERNEL.
stress_progs() {
	local names p
	case $1 in
	deb61) names="lifetimes ledger memcg fuzz-abi" ;;
	deb612) names="lifetimes ledger memcg fuzz-abi scale" ;;
	debug) names="lifetimes ledger fuzz-abi failslab" ;;
	esac
	for p in $names; do
		if [ -x "$stressdir/$p" ]; then echo "$stressdir/$p"; else fail "stress: $p was not built"; fi
	done
}

# vm_opts KERNEL: guest size and time limits. scale holds 10M ids on deb612.
vm_opts() {
	case $1 in
	deb612) echo --mem 4G --prog-timeout 900 --timeout 3000 ;;
	*) echo --mem 2G --prog-timeout 900 --timeout 3000 ;;
	esac
}

# Sets leaks to the sum of "kmemleak ... leaks=N" lines in $1, or to
# "missing" when the VM wrote none.
kmemleak_leaks() {
	leaks=$(awk -F 'leaks=' '/^twheel-vm: kmemleak .* leaks=/ { n++; s += $2 } END { if (n) print s }' "$1")
	[ -n "$leaks" ] || leaks=missing
}

# A debug kernel that lost its sanitizers would pass everything: check
# that each announced itself at boot.
debug_banners() {
	grep -q 'KernelAddressSanitizer initialized' "$1" &&
		grep -q 'Kernel memory leak detector initialized' "$1" &&
		grep -q 'Lock dependency validator' "$1"
}

# One VM per kernel, all programs in one boot.
run_kernel() {
	local k=$1 dir=$out/$1 res rc=0 p name section exit_line code
	local p0=$passed f0=$failed s0=$skipped
	local all=(${progs[@]+"${progs[@]}"})
	mkdir -p "$dir"
	mapfile -t -O ${#all[@]} all < <(stress_progs "$k")
	# shellcheck disable=SC2046 # vm_opts prints separate words
	"$top/vm/run.sh" $(vm_opts "$k") --out "$dir" "$k" ${all[@]+"${all[@]}"} >"$dir/run.log" 2>&1 || rc=$?
	[ "$rc" = 2 ] && { tail -n 20 "$dir/run.log"; fail "$k: harness could not run (see $dir/run.log)"; }
	res=$dir/results.txt
	touch "$res"
	for p in ${all[@]+"${all[@]}"}; do
		name=$(basename "$p")
		section=$dir/$name.log
		awk -v b="twheel-vm: begin $name" -v e="twheel-vm: end $name exit=" \
			'$0 == b { on = 1; next } on && index($0, e) == 1 { on = 0 } on' "$res" >"$section"
		count_tap "$k: $name" "$section"
		exit_line=$(grep "^twheel-vm: end $name exit=" "$res" || true)
		code=$(echo "$exit_line" | sed -n 's/.* exit=\([0-9]*\).*/\1/p')
		if [ -z "$exit_line" ]; then
			fail "$k: $name: no end marker (crashed, hung or never ran)"
		elif [ "$code" = 4 ] && [ "$tap_lines" = 0 ]; then
			skip
		elif [ "$tap_lines" = 0 ]; then
			fail "$k: $name: no TAP output (exit $code)"
		elif [ "$code" != 0 ] && [ "$code" != 4 ] && [ "$tap_failed" = 0 ]; then
			fail "$k: $name: exit $code ($exit_line)"
		fi
	done
	expect "$k: module loads" grep -qx 'twheel-vm: insmod exit=0' "$res"
	expect "$k: module unloads" grep -qx 'twheel-vm: rmmod exit=0' "$res"
	expect "$k: VM run completes" grep -qx 'twheel-vm: done' "$res"
	if [ -s "$dir/kernel.log" ] && [ -f "$dir/kernel-log-problems.txt" ] && [ ! -s "$dir/kernel-log-problems.txt" ]; then
		pass
	else
		fail "$k: kernel log clean (see $dir/kernel-log-problems.txt)"
		head -n 10 "$dir/kernel-log-problems.txt" 2>/dev/null | sed 's/^/    /'
	fi
	if [ "$k" = debug ]; then
		expect "$k: KASAN, kmemleak and lockdep are on (boot banners)" debug_banners "$dir/kernel.log"
		kmemleak_leaks "$res"
		expect "$k: kmemleak clean ($leaks leaks, see $res)" [ "$leaks" = 0 ]
	fi
	echo "$k: summary lines of the stress tests:"
	grep -E '^(ledger|fuzz-abi|failslab|memcg|scale): ' "$res" || true
	echo "$k: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped; logs in $dir"
}

case " $kernels " in
*" debug "*)
	stage "build debug kernel"
	"$top/vm/build-debug-kernel.sh" >"$out/debug-kernel.log" 2>&1 ||
		{ tail -n 20 "$out/debug-kernel.log"; fail "debug: kernel builds (see $out/debug-kernel.log)"; }
	stage_done ;;
esac

for k in $kernels; do
	stage "VM $k"
	run_kernel "$k"
	stage_done
done

echo
echo "== summary (logs in $out)"
printf '%s\n' "${timings[@]}"
if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
