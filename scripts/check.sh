#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test of the project, behind `make check`. This header is the one
# place that says what the check runs (README, Makefile and .ci/run point
# here). In order, each a stage with its wall and CPU time:
#
#  1. setup: the packages of scripts/setup.sh's "check" purpose; the
#     linux-source tarball (the kselftest framework and checkpatch come
#     from it) and the kernels built on the host (vm/fetch-kernels.sh).
#     In the background meanwhile: the 7.x kernels fetched into the sid
#     chroot, then the debug kernel built there (vm/build-debug-kernel.sh,
#     under nice), twheel in its tree as drivers/misc/twheel (=m, and its
#     objects once more =y), and selftests/ built in that tree (stage 8).
#  2. host tests: the wheel core's unit tests and bounded differential
#     fuzz (tests/core); the scenario benchmark's judge (bench/scenarios
#     judge-test).
#  3. style: checkpatch --strict over kmod/, uapi/, lib/ (scripts/style.sh);
#     the memory model: litmus/run.sh, herd7 with the kernel's LKMM over
#     the litmus tests of the module's lockless patterns (litmus/*.litmus),
#     each answer the one its "Result:" expects, and one line
#       lkmm: tests=N allowed_as_expected=N
#     Stages 2 and 3, and the Debian packages of stage 4, run in the
#     background, one after another, beside the builds of stages 4 and
#     6, which mostly keep one core busy; their tests are counted, and
#     their times printed, in a stage of their own once stage 6 is
#     done, before stage 5 and the VMs.
#  4. packages: the README's library example compiled as it stands
#     (tests/readme-example.sh), the examples built, the Debian packages
#     built and checked by lintian (scripts/build-debs.sh), and for
#     arm64, when an arm64 line is checked, the three arch packages
#     cross-built in a Debian 12 chroot (build-debs.sh --arch arm64),
#     every ELF file in them an AArch64 one, with one line
#       deb: arch=arm64 packages=3 elf_files=N lintian_warnings=0
#  5. the Debian server VM test (tests/server: the packages installed,
#     rebooted, the kernel upgraded, removed, under systemd), only when
#     its image is in the cache (make server-test builds it, ~50 min):
#     otherwise one skipped test, "server: skipped (reason)";
#     TWHEEL_SERVER=no skips it on purpose.
#  6. builds: the selftests as a kselftest target, selftests/ dropped
#     into a copy of the kselftest framework as drivers/twheel and
#     installed by its Makefile (`make -C tools/testing/selftests
#     TARGETS=drivers/twheel install INSTALL_PATH=... LDFLAGS=-static`),
#     and for arm64, when an arm64 line boots, the same cross-built
#     (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-, Debian's arm64
#     liburing); the library's tests (tests/lib), the tools' tests (tests/tools),
#     the stress programs, and those three again cross-built static for
#     arm64 when an arm64 line boots (scripts/cross-build.sh: an arm64
#     VM runs the same programs as an amd64 one, but the examples); the
#     language bindings that the plan runs
#     (bindings/NAME): each one's own `make check` on the host (lint,
#     host tests, packaging), its VM files built (again for an arm64 VM:
#     Go's with GOARCH=arm64, Node's addon with ARCH=arm64), and the host half of
#     its install check (`make install-check`: the package installed as
#     a new user installs it, in a fresh project, and its README example
#     run here, without the module, where it must show the documented
#     error or fallback).
#  7. one VM per kernel (vm/run.sh), two at a time, the longest first
#     (see "lanes" below): each line of vm/kernels (Debian 5.10, 6.1,
#     6.12, 7.2, 7.3-rc; 6.12-arm64 and 6.12-arm64-16k under
#     qemu-system-aarch64; 6.1-arm64 and 7.2-arm64, flagged
#     build-only, get the module built, W=1 and sparse, and no VM), each
#     KERNEL@icount line of tests/stress/plan
#     (under QEMU -icount, for the CPU-stall figures), the debug kernel.
#     A VM whose guest kernel warned of a single-step #DB in kernel mode
#     (QEMU's, see launch_vm) boots once more, and the check says so.
#     Each runs the selftests through the installed run_kselftest.sh
#     (vm/kselftest.sh: each program with the timeout of
#     selftests/settings), then tests/lib and tests/tools, then the
#     stress programs, examples and bindings' tests that
#     tests/stress/plan gives it; their summary lines (ledger:,
#     fuzz-abi:, failslab:, memcg:, scale:, flood:, stall:, ..., and
#     "binding: lang=L kernel=K passed=N failed=N" per binding) are
#     repeated, the binding lines again at the end, and one line
#       kselftest-runner: kernel=NAME passed=N failed=N
#     counts the tests run by the kselftest runner, and uring_test's
#       uring: kernel=NAME reads=N iou_wrk_threads=N cmds=N
#     says what went through io_uring there, and examples/bpf-refresh's
#       bpf-refresh: peers=N silent=S reported=S live_reported=0 early=0
#         service_cpu_ns_per_packet=C
#     what the BPF program kept alive, examples/orders-pg's
#       fleet: orders=N instances=3 killed=1 partitioned=1 restarted=1
#         lost=0 early=0 twice=0 after_paid=0 p99_late_ms=X worst_late_ms=Y bound_ms=Z
#     what its fleet on PostgreSQL went through, and for each attack of
#     tests/stress/security whose program ran there
#       security: item=N name=NAME kernel=K held=yes|no|skip
#     and, per binding, the install check's VM half (the installed
#     README example against the module)
#       install: lang=L from=ARTIFACT fresh=yes example=ok no_module=documented
#     (all repeated at the end, the install line once per language).
#  8. in-tree: the debug kernel's build of twheel in its tree, "in-tree:
#     config=m built=yes|no" and "in-tree: config=y built=yes|no"; then
#     selftests/ copied into that tree as
#     tools/testing/selftests/drivers/twheel and built there (`make
#     headers`, then `make -C tools/testing/selftests
#     TARGETS=drivers/twheel`), "in-tree: kselftest
#     TARGETS=drivers/twheel built=yes|no".
#
# Each TAP line "ok N name" / "not ok N name" / "ok N name # SKIP why"
# is one test (a selftest's, nested under "# " by the kselftest runner,
# too; the runner's own line per program is not). A program that
# crashed, hung, exited non-zero without a "not ok" line, or printed no
# TAP is one failure under its name (exit code 4 without TAP,
# kselftest's skip, is one skip). Each kernel adds
# "module builds", "no W=1 warnings", "sparse clean", "module loads",
# "module unloads", "kernel log clean", "VM run completes", and on the
# debug kernel "kmemleak clean" and a check that KASAN, kmemleak and
# lockdep announced themselves at boot; then one line
#   kernel: NAME release=UNAME_R built=yes|no warnings=N passed=N failed=N
# (warnings: W=1 and sparse together). One kernel's failure does not stop
# the others. The last line is exactly "N passed, N failed, N skipped";
# the exit status is non-zero if any test failed. Environment:
# TWHEEL_KERNELS (default: every line of vm/kernels, the @icount lines,
# then debug), TWHEEL_CHECK_LANES (2; 1 runs every VM in one lane),
# TWHEEL_SERVER, TWHEEL_CACHE, TWHEEL_CHECK_OUT (logs), and those of
# vm/run.sh.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
out=${TWHEEL_CHECK_OUT:-}
lines=$(awk '!/^#/ && NF >= 5 { print $1 }' "$top/vm/kernels")
# shellcheck disable=SC2086 # a list of words
plan=$top/tests/stress/plan.sh
icount_lines=$("$plan" kernels | grep '@icount$' || true)
# shellcheck disable=SC2086 # a list of words
kernels=$(echo ${TWHEEL_KERNELS:-$lines $icount_lines debug})
passed=0 failed=0 skipped=0
failures=()
timings=()
start_all=$(date +%s)

if [ -z "$out" ]; then
	out=$cache/check
	rm -rf "$out"
fi
mkdir -p "$out"
rm -f "$out/binding-lines" "$out/install-lines" "$out/uring-lines" "$out/bpf-refresh-lines" "$out/fleet-lines" "$out/security-lines"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/progress.sh
. "$top/scripts/progress.sh"

# DESCRIBE functions of the stages (scripts/progress.sh).
progress_setup() {
	local done total
	done=$(grep -c '^Setting up ' "$out/setup.log" || true)
	total=$(sed -nE 's/^([0-9]+) upgraded, ([0-9]+) newly installed.*/\1 \2/p' "$out/setup.log" |
		awk '{ n += $1 + $2 } END { print n + 0 }')
	echo "packages set up: ${done:-0} of ${total:-?}"
}
progress_fetch() { echo "$(du -sm "$cache/apt" "$cache/kernels" 2>/dev/null | awk '{ n += $1 } END { print n }') MiB fetched and unpacked"; }
progress_tap() { echo "$(grep -cE '^(not )?ok [0-9]+ ' "$progress_log" || true) tests done"; }
progress_debug() {
	local tree
	tree=$(ls -td "$cache"/chroot/sid/twheel/debug-kernel/*/linux 2>/dev/null | head -n 1)
	echo "$(tail -n 1 "$out/background.log" 2>/dev/null | cut -c1-80); $(find "$tree" -name '*.o' 2>/dev/null | wc -l) objects built"
}
progress_server() { grep -E '^server: ' "$out/server.log" 2>/dev/null | tail -n 1 | cut -c1-100; }

pass() { passed=$((passed + 1)); }
skip() { skipped=$((skipped + 1)); }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "FAIL: $1"; }
# expect NAME COMMAND...: one test, passed if COMMAND succeeds.
expect() { local name=$1; shift; if "$@"; then pass; else fail "$name"; fi; }

# Sets cpu to the CPU seconds (user + sys) this shell's waited-for
# children used so far: on a shared machine, what a stage costs, where
# its wall time also says what else was running.
cpu_now() {
	local f=$out/.times.$BASHPID
	times >"$f"
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
		printf "%d", n }' "$f")
}

stage_start=0 stage_cpu=0
stage() { stage_name=$1; stage_start=$(date +%s); cpu_now; stage_cpu=$cpu; echo "== $1"; }
stage_done() {
	local s=$(( $(date +%s) - stage_start ))
	cpu_now
	timings+=("$(printf '%5d s  %5d s CPU  %s' "$s" $((cpu - stage_cpu)) "$stage_name")")
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

toolchain() { awk -v k="$1" '!/^#/ && $1 == k { print $4 }' "$top/vm/kernels"; }
# kernel_arch KERNEL: the Debian architecture of its flavour (amd64 for
# debug); build_only KERNEL: true if its line is flagged build-only.
kernel_arch() { awk -v k="${1%@icount}" '!/^#/ && $1 == k { a = $5 } END { sub(/-.*/, "", a); print a ? a : "amd64" }' "$top/vm/kernels"; }
build_only() { awk -v k="$1" '!/^#/ && $1 == k && $6 == "build-only" { f = 1 } END { exit !f }' "$top/vm/kernels"; }
in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
# arch_bindings ARCH: the bindings the plan runs on the kernels of ARCH.
arch_bindings() {
	local k b list=''
	for k in $kernels; do
		[ "$(kernel_arch "$k")" = "$1" ] || continue
		for b in $("$plan" bindings "$k"); do in_list "$b" "$list" || list="$list $b"; done
	done
	echo "$list"
}


host_lines='' chroot_lines=''
for k in $kernels; do
	b=${k%@icount}
	case $(toolchain "$b") in
	host) in_list "$b" "$host_lines" || host_lines="$host_lines $b" ;;
	chroot) in_list "$b" "$chroot_lines" || chroot_lines="$chroot_lines $b" ;;
	"") [ "$k" = debug ] || { echo "check: unknown kernel $k (see vm/kernels)" >&2; exit 2; } ;;
	esac
done

stage "setup (host packages)"
run_progress setup progress_setup "$top/scripts/setup.sh" check >"$out/setup.log" 2>&1 ||
	{ cat "$out/setup.log"; fail "setup: scripts/setup.sh"; }
stage_done

# linux-source first: the kselftest headers and checkpatch come from it.
stage "fetch linux-source and kernels built on the host:$host_lines"
# shellcheck disable=SC2086
run_progress fetch progress_fetch "$top/vm/fetch-kernels.sh" source $host_lines >"$out/fetch.log" 2>&1 ||
	{ tail -n 20 "$out/fetch.log"; fail "setup: vm/fetch-kernels.sh source$host_lines (see $out/fetch.log)"; }
stage_done

# in_tree_kselftest TREE: selftests/ dropped into the kernel tree TREE
# (the debug kernel's, in the sid chroot, with twheel's uapi header in
# it) as tools/testing/selftests/drivers/twheel and built there as in any
# kernel tree (liburing-dev, which uring_test links, installed in the
# chroot first): `make headers` for usr/include, then the kselftest
# Makefile, with the compiler the kernel was built with (as CC and
# HOSTCC: the sid chroot has no plain gcc, and kbuild rebuilds a host
# tool whose command changed). It holds the tree's lock, so that no
# rebuild of it runs meanwhile; the kernel's .config and objects are not
# touched. True if every selftests/*_test.c
# became a program there.
in_tree_kselftest() {
	local tree=$1 top_dir inside dst cc c
	top_dir=$(dirname "$tree")
	inside=${tree#"$cache/chroot/sid"}
	dst=$tree/tools/testing/selftests/drivers/twheel
	cc=$(cat "$top_dir/cc")
	(
		flock 9
		rm -rf "$dst" && mkdir -p "$dst" && cp -a "$top/selftests/." "$dst/" &&
			"$top/vm/chroot.sh" install liburing-dev &&
			"$top/vm/chroot.sh" run nice -n 10 make -C "$inside" CC="$cc" HOSTCC="$cc" headers &&
			"$top/vm/chroot.sh" run nice -n 10 make -C "$inside/tools/testing/selftests" \
				TARGETS=drivers/twheel CC="$cc" clean all
	) 9>"$top_dir/lock" || return 1
	for c in "$top"/selftests/*_test.c; do
		c=$(basename "$c" .c)
		[ -x "$dst/$c" ] || { echo "in-tree kselftest: $c was not built"; return 1; }
	done
}

# In the background, in its own process group (ended if the check is):
# the chroot's kernels, then the debug kernel. Each step logs its time.
background() {
	local k s c
	for k in $chroot_lines; do
		s=$(date +%s) c=$cpu
		"$top/vm/fetch-kernels.sh" "$k" || echo "fetch $k: failed"
		cpu_now
		printf '%5d s  %5d s CPU  fetch %s into the chroot (background)\n' \
			$(( $(date +%s) - s )) $((cpu - c)) "$k" >>"$out/background-times"
	done
	if in_list debug "$kernels"; then
		s=$(date +%s) c=$cpu
		"$top/vm/build-debug-kernel.sh" >"$out/debug-kernel.tree" && mv "$out/debug-kernel.tree" "$out/debug-kernel.status"
		cpu_now
		printf '%5d s  %5d s CPU  build the debug kernel (background)\n' \
			$(( $(date +%s) - s )) $((cpu - c)) >>"$out/background-times"
		[ -f "$out/debug-kernel.status" ] || return 0
		s=$(date +%s) c=$cpu
		b=no
		in_tree_kselftest "$(cat "$out/debug-kernel.status")" >"$out/in-tree-kselftest.log" 2>&1 && b=yes
		echo "$b" >"$out/in-tree-kselftest.status"
		cpu_now
		printf '%5d s  %5d s CPU  selftests/ built in the debug kernel'"'"'s tree (background)\n' \
			$(( $(date +%s) - s )) $((cpu - c)) >>"$out/background-times"
	fi
}
: >"$out/background-times"
rm -f "$out/debug-kernel.status" "$out/in-tree-kselftest.status"
set -m
cpu=0
background >"$out/background.log" 2>&1 &
bg_pid=$!
set +m
trap 'kill -- -$bg_pid 2>/dev/null || true' EXIT

# For each other architecture of a kernel line checked, its packages
# (libtwheel1, libtwheel-dev, twheel-tools; twheel-dkms is arch all),
# cross-built in the Debian 12 chroot (scripts/build-debs.sh --arch).
deb_arches=''
for k in $kernels; do
	a=$(kernel_arch "$k")
	[ "$a" = amd64 ] || in_list "$a" "$deb_arches" || deb_arches="$deb_arches $a"
done

# The checks that need nothing the VMs need (stages 2 and 3, and the
# Debian packages of stage 4), in the background, one after another,
# beside the builds of stages 4 and 6, which mostly keep one core busy:
# each writes its log, its exit status (LOG.rc) and its wall and CPU
# time (host-only-times); they are counted once those builds are done,
# before the server VM and the VMs, in the stage "host tests, style,
# memory model, Debian packages".
host_only_step() {
	local name=$1 log=$2 s c rc=0
	shift 2
	s=$(date +%s) c=$cpu
	"$@" >"$log" 2>&1 || rc=$?
	echo "$rc" >"$log.rc"
	cpu_now
	printf '%5d s  %5d s CPU  %s (beside the builds)\n' \
		$(( $(date +%s) - s )) $((cpu - c)) "$name" >>"$out/host-only-times"
}
host_only() {
	host_only_step "host tests (tests/core)" "$out/host.log" make -C "$top/tests/core" test
	host_only_step "the scenario judge (bench/scenarios judge-test)" "$out/judge.log" \
		make -C "$top/bench/scenarios" judge-test
	host_only_step "style (scripts/style.sh)" "$out/style.log" "$top/scripts/style.sh"
	host_only_step "memory model (litmus/run.sh)" "$out/lkmm.log" "$top/litmus/run.sh"
	host_only_step "Debian packages (scripts/build-debs.sh)" "$out/deb.log" debs
	for a in $deb_arches; do
		host_only_step "Debian packages for $a (scripts/build-debs.sh --arch $a)" "$out/deb-$a.log" \
			"$top/scripts/build-debs.sh" --arch "$a" "$out/deb-$a"
	done
}
# The Debian packages: their build dependencies installed, then built.
debs() { "$top/scripts/setup.sh" deb && "$top/scripts/build-debs.sh" "$out/deb"; }
: >"$out/host-only-times"
rm -f "$out"/*.log.rc
set -m
cpu=0
host_only >/dev/null 2>&1 </dev/null &
host_pid=$!
set +m
trap 'kill -- -$bg_pid -$host_pid 2>/dev/null || true' EXIT

stage "README example, examples (host)"
p0=$passed f0=$failed s0=$skipped
rc=0
{ make -C "$top" lib && "$top/tests/readme-example.sh"; } >"$out/readme.log" 2>&1 || rc=$?
count_tap readme "$out/readme.log"
[ "$tap_lines" = 0 ] && fail "readme: tests/readme-example.sh printed no TAP (exit $rc, see $out/readme.log)"
# Built here, run in the VMs that tests/stress/plan gives them.
expect "examples: build (see $out/examples-build.log)" make -C "$top/examples" >"$out/examples-build.log" 2>&1
# The fleet on PostgreSQL (examples/orders-pg/fleet), for each kernel
# whose plan runs it: the Go program, its VM script and that kernel's
# veth.ko, copied into its VM as /opt/orders-pg (vm_opts).
for k in $kernels; do
	"$plan" progs "$k" 2>/dev/null | grep -qx examples/orders-pg/fleet || continue
	rm -rf "${out:?}/fleet-$k"
	expect "examples: the fleet's VM files for $k (see $out/fleet-$k.log)" \
		make -C "$top/examples/orders-pg" vm-files KERNEL="$k" DIR="$out/fleet-$k/orders-pg" >"$out/fleet-$k.log" 2>&1
done
echo "examples: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped"
stage_done


# The selftests the kernel's way: selftests/ dropped into a copy of the
# kselftest framework (from linux-source, vm/fetch-kernels.sh) as
# drivers/twheel, built and installed by its top Makefile, static (the
# VM has no shared libraries), <linux/twheel.h> from uapi/ (in a kernel
# tree, `make headers` puts it in usr/include). The install is copied
# into each VM and run there by its run_kselftest.sh (vm/kselftest.sh).
# The library's and the tools' tests are static programs of their own.
stage "build selftests (kselftest install), tests/lib, tests/tools"
# ksft_dir ARCH: the kselftest install for the VMs of ARCH.
ksft_dir() { if [ "$1" = amd64 ]; then echo "$out/kselftest"; else echo "$out/kselftest-$1"; fi; }
# kselftest_install ARCH: selftests/ built and installed into ksft_dir
# ARCH; for another architecture than amd64 with Debian's cross compiler
# (ARCH and CROSS_COMPILE, as in a kernel tree) and that architecture's
# liburing from vm/fetch-kernels.sh's userland/ARCH.
kselftest_install() {
	local a=$1 tree=$out/kselftest-tree ksft log=$out/selftests-build.log n target name
	local cross=() inc="-isystem $top/uapi" ldflags=-static u=$cache/userland/$1/root triplet
	ksft=$(ksft_dir "$a")
	if [ "$a" != amd64 ]; then
		tree=$out/kselftest-tree-$a log=$out/selftests-build-$a.log
		case $a in arm64) triplet=aarch64-linux-gnu ;; esac
		cross=(ARCH="$a" CROSS_COMPILE="$triplet-")
		inc="$inc -isystem $u/usr/include"
		ldflags="$ldflags -L$u/usr/lib/$triplet"
	fi
	rm -rf "$tree" "$ksft"
	mkdir -p "$tree"
	if ! { cp -a "$cache/linux-source/tree/." "$tree/" &&
		mkdir -p "$tree/tools/testing/selftests/drivers/twheel" &&
		cp -a "$top/selftests/." "$tree/tools/testing/selftests/drivers/twheel/" &&
		make -C "$tree/tools/testing/selftests" TARGETS=drivers/twheel clean &&
		nice -n 10 make -C "$tree/tools/testing/selftests" TARGETS=drivers/twheel install \
			INSTALL_PATH="$ksft" LDFLAGS="$ldflags" KHDR_INCLUDES="$inc" ${cross[@]+"${cross[@]}"}; } \
		>"$log" 2>&1; then
		tail -n 20 "$log"
		fail "selftests ($a): kselftest build and install (see $log)"
	else
		n=0
		while IFS=: read -r target name; do
			n=$((n + 1))
			[ -x "$ksft/$target/$name" ] || fail "selftests ($a): $target/$name listed but not installed"
		done <"$ksft/kselftest-list.txt"
		echo "selftests: $n programs installed in $ksft"
		[ "$n" != 0 ] || fail "selftests ($a): kselftest-list.txt lists no program"
	fi
}
progs=()
kselftest_install amd64
# Each other architecture of a kernel the check boots.
vm_arches=''
for k in $kernels; do
	a=$(kernel_arch "$k")
	[ "$a" = amd64 ] || build_only "$k" || in_list "$a" "$vm_arches" || vm_arches="$vm_arches $a"
done
for a in $vm_arches; do kselftest_install "$a"; done
for d in tests/lib tests/tools; do
	if ! make -C "$top/$d" >>"$out/selftests-build.log" 2>&1; then
		tail -n 20 "$out/selftests-build.log"
		fail "$d: build (see $out/selftests-build.log)"
	elif ! make -s -C "$top/$d" list-progs >"$out/list" 2>>"$out/selftests-build.log"; then
		fail "$d: 'make -s -C $d list-progs' failed"
	else
		while IFS= read -r p; do
			if [ -f "$p" ]; then progs+=("$p"); else fail "$d: listed program $p does not exist"; fi
		done <"$out/list"
	fi
done
rm -f "$out/list"
echo "tests/lib, tests/tools: ${#progs[@]} programs"
stage_done

stage "build stress tests"
stressdir=$top/tests/stress
if ! make -C "$stressdir" >"$out/stress-build.log" 2>&1; then
	tail -n 20 "$out/stress-build.log"
	fail "stress: build (see $out/stress-build.log)"
fi
# For the VMs of another architecture, the same programs cross-built
# (scripts/cross-build.sh: libtwheel, tests/lib, tests/tools,
# tests/stress), into $out/cross-ARCH/bin.
for a in $vm_arches; do
	"$top/scripts/cross-build.sh" "$a" "$out/cross-$a" >"$out/cross-$a.log" 2>&1 ||
		{ tail -n 20 "$out/cross-$a.log"; fail "cross-build ($a): scripts/cross-build.sh (see $out/cross-$a.log)"; }
	grep '^cross-build: ' "$out/cross-$a.log" || true
done
stage_done

# The language bindings the plan runs in VMs: their host checks (each
# binding's own `make check`: vet and lint, its host tests, packaging),
# then what their VM tests need (`make vm-files`), into $out/bindings/NAME
# with a two-line program binding-NAME that runs its vm-test.sh there.
stage "bindings (host checks, VM files)"
bindings=$("$plan" bindings)
mkdir -p "$out/bindings"
for b in $bindings; do
	rm -rf "${out:?}/bindings/$b"
	if run_progress "bindings/$b check" '' make -C "$top/bindings/$b" check >"$out/bindings/$b-check.log" 2>&1; then
		pass
	else
		tail -n 10 "$out/bindings/$b-check.log"
		fail "binding $b: host checks (make -C bindings/$b check, see $out/bindings/$b-check.log)"
	fi
	if make -C "$top/bindings/$b" vm-files DIR="$out/bindings/$b" >"$out/bindings/$b-vm-files.log" 2>&1 &&
		[ -f "$out/bindings/$b/vm-test.sh" ]; then
		pass
		printf '#!/bin/sh\n# The %s binding'"'"'s tests (tests/stress/plan: bindings/%s).\nexec sh /opt/%s/vm-test.sh\n' \
			"$b" "$b" "$b" >"$out/bindings/binding-$b"
		chmod +x "$out/bindings/binding-$b"
	else
		fail "binding $b: VM files (make -C bindings/$b vm-files, see $out/bindings/$b-vm-files.log)"
	fi
	# The install check's host half: the package as a new user installs
	# it, in a fresh project, and its README example here, without the
	# module (install-host: the line the VM half completes).
	if [ -d "$out/bindings/$b" ] &&
		make -C "$top/bindings/$b" install-check INSTALL_OUT="$out/bindings/$b/install-host" \
			>"$out/bindings/$b-install.log" 2>&1; then
		pass
		echo "install-host: $(cat "$out/bindings/$b/install-host")"
	else
		tail -n 10 "$out/bindings/$b-install.log"
		rm -f "$out/bindings/$b/install-host"
		fail "binding $b: install check without the module (make -C bindings/$b install-check, see $out/bindings/$b-install.log)"
	fi
done
# For the VMs of another architecture, the bindings whose tests can run
# there, into $out/bindings-ARCH/NAME, which cross_progs gives those VMs:
# Go's, cross-built (GOARCH, no cgo); Python's (pure Python) and Java's
# (the jar carries linux-aarch64), run by Debian's python3 and JRE for
# ARCH; Node's, its addon cross-built (ARCH), run by the official Node
# build of the machine's version (vm/run.sh --lang, vm/langroot.sh
# --arch, vm/node-arch.sh).
for a in $vm_arches; do
	for b in $(arch_bindings "$a"); do
		rm -rf "${out:?}/bindings-$a/$b"
		mkdir -p "$out/bindings-$a"
		if GOARCH=$a make -C "$top/bindings/$b" vm-files ARCH="$a" DIR="$out/bindings-$a/$b" \
				>"$out/bindings/$b-vm-files-$a.log" 2>&1 &&
			[ -f "$out/bindings-$a/$b/vm-test.sh" ]; then
			pass
		else
			fail "binding $b: VM files for $a (GOARCH=$a make -C bindings/$b vm-files ARCH=$a, see $out/bindings/$b-vm-files-$a.log)"
		fi
	done
done
stage_done

# What host_only did: host tests and the scenario judge (TAP), style
# (TAP), the memory model (one line per litmus test).
stage "host tests, style, memory model, Debian packages (run beside the builds)"
progress_log=$out/host.log
run_progress "host tests, style, memory model, Debian packages" progress_tap tail --pid="$host_pid" -f /dev/null
wait "$host_pid" 2>/dev/null || true
# step_tap NAME WHAT: the TAP of host_only's step NAME ($out/NAME.log,
# its exit status in NAME.log.rc), WHAT in the failure messages: a
# failure if it printed no TAP, or exited non-zero with no test failing.
step_tap() {
	local name=$1 what=$2 log=$out/$1.log rc
	rc=$(cat "$log.rc" 2>/dev/null) || rc=none
	count_tap "$name" "$log"
	if [ "$tap_lines" = 0 ]; then
		fail "$name: $what printed no TAP (exit $rc, see $log)"
	elif [ "$rc" != 0 ] && [ "$tap_failed" = 0 ]; then
		fail "$name: $what exited $rc (see $log)"
	fi
}
p0=$passed f0=$failed s0=$skipped
step_tap host tests/core
# The scenario benchmark's judge of expiries: what its "wrong" counts.
step_tap judge "bench/scenarios judge-test"
echo "host: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped"
p0=$passed f0=$failed
rc=$(cat "$out/style.log.rc" 2>/dev/null) || rc=none
count_tap style "$out/style.log"
[ "$tap_lines" = 0 ] && fail "style: scripts/style.sh printed no TAP (exit $rc, see $out/style.log)"
grep '^#' "$out/style.log" | grep -v '^# total:' || true
echo "style: $((passed - p0)) passed, $((failed - f0)) failed"
# The litmus tests of the module's lockless patterns against the kernel's
# memory model (litmus/run.sh: herd7 in the sid chroot): each answer
# herd7 gives that is not the one the test expects is a failure.
lkmm_line=''
while IFS= read -r line; do
	case $line in
	*' ok') pass ;;
	*) fail "$line" ;;
	esac
done < <(grep -E '^lkmm: test=' "$out/lkmm.log" || true)
lkmm_line=$(grep -E '^lkmm: tests=' "$out/lkmm.log" || true)
if [ -z "$lkmm_line" ]; then
	tail -n 10 "$out/lkmm.log"
	fail "lkmm: litmus/run.sh printed no summary (exit $(cat "$out/lkmm.log.rc" 2>/dev/null || echo none), see $out/lkmm.log)"
else
	echo "$lkmm_line"
fi
# dpkg-buildpackage, then lintian: its errors fail the build; for the
# other architectures, the cross-builds.
p0=$passed f0=$failed
if [ "$(cat "$out/deb.log.rc" 2>/dev/null)" = 0 ]; then
	pass
	n=0
	for p in twheel-dkms libtwheel1 libtwheel-dev twheel-tools; do
		ls "$out/deb/${p}_"*.deb >/dev/null 2>&1 && n=$((n + 1))
	done
	expect "deb: the four packages (twheel-dkms, libtwheel1, libtwheel-dev, twheel-tools; $n built)" [ "$n" = 4 ]
	n=$(grep -c '^W: ' "$out/deb.log") || true
	expect "deb: lintian has no warnings ($n, see $out/deb.log)" [ "$n" = 0 ]
else
	tail -n 20 "$out/deb.log"
	fail "deb: packages build and lintian has no errors (see $out/deb.log)"
fi
for a in $deb_arches; do
	if [ "$(cat "$out/deb-$a.log.rc" 2>/dev/null)" = 0 ]; then
		pass
		n=0
		for p in libtwheel1 libtwheel-dev twheel-tools; do
			ls "$out/deb-$a/${p}_"*"_$a.deb" >/dev/null 2>&1 && n=$((n + 1))
		done
		expect "deb ($a): the three packages (libtwheel1, libtwheel-dev, twheel-tools; $n built)" [ "$n" = 3 ]
		w=$(grep -c '^W: ' "$out/deb-$a.log") || true
		expect "deb ($a): lintian has no warnings ($w, see $out/deb-$a.log)" [ "$w" = 0 ]
		echo "deb: arch=$a packages=$n $(sed -n 's/^make deb: \([0-9]*\) ELF files, all .*/elf_files=\1/p' "$out/deb-$a.log") lintian_warnings=$w"
	else
		tail -n 20 "$out/deb-$a.log"
		fail "deb ($a): packages cross-build, their ELF files are $a's and lintian has no errors (see $out/deb-$a.log)"
	fi
done
echo "deb: $((passed - p0)) passed, $((failed - f0)) failed"
cat "$out/host-only-times"
stage_done

# The server test (make server-test: the packages installed, rebooted,
# upgraded to another kernel and removed on a Debian 12 server VM under
# systemd) runs when its image is in the cache: building the image takes
# 50 min, more than CI's budget, so a machine without it reports one
# skipped test. TWHEEL_SERVER=no skips it on a machine that has it.
stage "server VM (Debian 12, systemd, DKMS), if its image is cached"
p0=$passed f0=$failed s0=$skipped
rc=0
if [ "${TWHEEL_SERVER:-yes}" = no ]; then
	echo "server: skipped (TWHEEL_SERVER=no)"
	skip
elif ! ls "$out/deb"/twheel-dkms_*.deb >/dev/null 2>&1; then
	fail "server: no packages to install (the deb stage failed)"
else
	# The bindings as its users install them, only for a run that happens.
	if "$top/tests/server/build-image.sh" --cached >/dev/null; then
		"$top/tests/server/langs.sh" "$out/server-langs" >"$out/server-langs.log" 2>&1 ||
			echo "server: the bindings did not build (see $out/server-langs.log)"
	fi
	run_progress "server VM" progress_server \
		"$top/tests/server/run.sh" --if-cached --debs "$out/deb" --langs "$out/server-langs" \
		--out "$out/server" >"$out/server.log" 2>&1 || rc=$?
	if [ "$rc" = 4 ]; then
		grep '^server: skipped' "$out/server.log" || echo "server: skipped (no cached image)"
		skip
	else
		grep -E '^server: |^idle-server: conns=|^orders: total=|^restart: ids=' "$out/server.log" || true
		while IFS= read -r line; do
			case $line in
			*' ok'|*' ok '*) pass ;;
			*) fail "$line" ;;
			esac
		done < <(grep -E '^server: [^ ]+ (ok|FAIL)' "$out/server.log" || true)
		grep -qE '^server: [^ ]+ (ok|FAIL)' "$out/server.log" ||
			fail "server: tests/server/run.sh printed no step (exit $rc, see $out/server.log)"
		[ "$rc" = 0 ] || grep -q '^server: [^ ]* FAIL' "$out/server.log" ||
			fail "server: tests/server/run.sh exited $rc (see $out/server.log)"
	fi
fi
echo "server VM: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped"
stage_done

# stress_progs KERNEL: sets plan_progs to the programs tests/stress/plan
# gives KERNEL, its bindings' programs last (in this shell, so that a
# missing one counts as failed).
stress_progs() {
	local p
	plan_progs=()
	while IFS= read -r p; do
		if [ -x "$top/$p" ]; then plan_progs+=("$top/$p"); else fail "plan: $p was not built"; fi
	done < <("$plan" progs "$1")
	while IFS= read -r p; do
		if [ -x "$out/bindings/binding-$p" ]; then
			plan_progs+=("$out/bindings/binding-$p")
		else
			fail "$1: binding $p: its VM files were not built"
		fi
	done < <("$plan" bindings "$1")
}

# vm_opts KERNEL: sets opts to the guest memory and command line that
# tests/stress/plan gives KERNEL, and limits. A program may take up to
# 2700 s: the kselftest runner is one program of vm/run.sh that runs all
# the selftests, each stopped by the runner at the timeout of
# selftests/settings.
vm_opts() {
	local k=$1 vars b a dir=$out/bindings
	vars=$("$plan" vars "$k")
	opts=(--mem "$("$plan" mem "$k")" --prog-timeout 2700 --timeout 3000)
	case $k in *@icount) opts+=(--icount) ;; esac
	if [ -n "$vars" ]; then opts+=(--append "$vars"); fi
	"$plan" flags "$k" | grep -qx lang && opts+=(--lang)
	a=$(kernel_arch "$k")
	[ "$a" = amd64 ] || dir=$out/bindings-$a
	for b in $("$plan" bindings "$k"); do
		[ -d "$dir/$b" ] && opts+=(--copy "$dir/$b")
	done
	[ -d "$out/fleet-$k/orders-pg" ] && opts+=(--copy "$out/fleet-$k/orders-pg")
	return 0
}

# install_results KERNEL RESULTS: each binding of the plan on KERNEL
# whose install check passed on the host prints, from its VM run, one
# "install: lang=L from=A fresh=yes example=ok no_module=documented";
# anything else fails. The lines go to install-lines for the summary.
install_results() {
	local k=$1 res=$2 b line
	# The install check is a user's amd64 machine's (its host half ran
	# here, with the amd64 toolchain).
	[ "$(kernel_arch "$k")" = amd64 ] || return 0
	for b in $("$plan" bindings "$k"); do
		b=${b#bindings/}
		[ -f "$out/bindings/$b/install-host" ] || continue
		line=$(grep -E "^install: lang=$b " "$res" | head -n 1)
		echo "${line:-install: lang=$b example=missing}" >>"$out/install-lines"
		case $line in
		*" fresh=yes example=ok no_module=documented") pass ;;
		*) fail "$k: install check of $b in the VM: ${line:-no install line (see $res)}" ;;
		esac
	done
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

# Warnings in a build log: compiler (W=1) or sparse.
warnings_in() {
	local n
	n=$(grep -cE '(warning|error):' "$1" 2>/dev/null) || true
	echo "${n:-0}"
}

# sparse ran (a CHECK line per file) and said nothing.
sparse_clean() { [ "$1" = 0 ] && grep -q '^  CHECK ' "$2"; }

# kselftest_results KERNEL: count what the kselftest runner printed
# (vm/kselftest.sh's section of $res): for each program of the install's
# kselftest-list.txt, its own TAP, nested under "# " between the
# runner's "# selftests: TARGET: NAME" and its result line "ok N
# selftests: TARGET: NAME" (or "not ok ... # exit=N", "# TIMEOUT S
# seconds", "# SKIP"). The result lines themselves are not tests: a
# program that failed without a "not ok" of its own, or printed no TAP,
# is one failure, as any program is. Adds the kselftest-runner: line.
kselftest_results() {
	local k=$1 target name line section p0=$passed f0=$failed ksft
	ksft=$(ksft_dir "$(kernel_arch "$k")")
	while IFS=: read -r target name; do
		section=$dir/$name.log
		awk -v h="# selftests: $target: $name" '
			$0 == h { on = 1; next }
			on && /^(not )?ok [0-9]+ selftests: / { exit }
			on { sub(/^# ?/, ""); print }' "$dir/kselftest.sh.log" >"$section"
		count_tap "$k: $name" "$section"
		line=$(grep -E "^(not )?ok [0-9]+ selftests: $target: $name( |\$)" "$dir/kselftest.sh.log" || true)
		case $line in
		"") fail "$k: $name: no result from the kselftest runner (crashed, hung or never ran)" ;;
		"ok "*"# SKIP"*) [ "$tap_lines" = 0 ] && skip ;;
		"ok "*) [ "$tap_lines" = 0 ] && fail "$k: $name: no TAP output" ;;
		*) [ "$tap_failed" = 0 ] && fail "$k: $name: ${line##*# } (the kselftest runner)" ;;
		esac
	done <"$ksft/kselftest-list.txt"
	kselftest_lines+=("kselftest-runner: kernel=$k passed=$((passed - p0)) failed=$((failed - f0))")
	echo "${kselftest_lines[-1]}"
	# uring_test's summary (the reads and ring commands that completed,
	# the io-wq workers seen), repeated at the end per kernel.
	[ -f "$dir/uring_test.log" ] &&
		sed -n "s/^# \(uring: \)kernel=[^ ]*/\1kernel=$k/p" "$dir/uring_test.log" |
		tee -a "$out/uring-lines"
	return 0
}
kselftest_lines=()

# cross_progs KERNEL ARCH: each program of the array all (built for
# amd64) replaced by its cross-build for ARCH, by name; the kselftest
# runner and a binding's two-line script stay (shell, their files come
# per ARCH); one that has none (an example) is dropped and fails.
cross_progs() {
	local k=$1 a=$2 p n bin=$out/cross-$2/bin mapped=()
	for p in ${all[@]+"${all[@]}"}; do
		n=$(basename "$p")
		if [ "$p" = "$top/vm/kselftest.sh" ] || [ "$p" = "$out/bindings/binding-${n#binding-}" ]; then
			# Shell scripts; a binding's runs its vm-test.sh of
			# bindings-ARCH (vm_opts).
			mapped+=("$p")
		elif [ -x "$bin/$n" ]; then
			mapped+=("$bin/$n")
		else
			fail "$k: $n has no $a build (scripts/cross-build.sh builds tests/lib, tests/tools and tests/stress)"
		fi
	done
	all=(${mapped[@]+"${mapped[@]}"})
}

# prepare_kernel KERNEL: writes what KERNEL's VM runs, one word per line,
# into $out/KERNEL/progs (the kselftest runner with the selftests'
# install, the library's and tools' tests, then the plan's programs) and
# $out/KERNEL/opts (vm/run.sh's options): in this shell, so that a
# program missing from the plan counts as failed, for launch_vm to read
# in whichever lane runs it. A kernel of another architecture than amd64
# runs the same programs cross-built (cross_progs); a build-only one gets
# $out/KERNEL/build-only and no VM.
prepare_kernel() {
	local k=$1 dir=$out/$1 opts a ksft
	local all=() copy=()
	a=$(kernel_arch "$k")
	ksft=$(ksft_dir "$a")
	rm -rf "$dir" "$dir.leaked-db"
	mkdir -p "$dir"
	if build_only "$k"; then
		touch "$dir/build-only" "$dir/progs" "$dir/opts"
		return 0
	fi
	# Without an install (its build failed, counted there) the rest runs.
	if [ -f "$ksft/kselftest-list.txt" ]; then
		all=("$top/vm/kselftest.sh")
		copy=(--copy "$ksft")
	fi
	all+=(${progs[@]+"${progs[@]}"})
	case $k in *@icount) all=() copy=() ;; esac
	stress_progs "$k"
	all+=(${plan_progs[@]+"${plan_progs[@]}"})
	[ "$a" = amd64 ] || cross_progs "$k" "$a"
	vm_opts "$k"
	opts+=(${copy[@]+"${copy[@]}"})
	printf '%s\n' ${all[@]+"${all[@]}"} >"$dir/progs"
	printf '%s\n' "${opts[@]}" >"$dir/opts"
}

# launch_vm KERNEL: one VM for KERNEL, all its programs in one boot;
# returns vm/run.sh's exit status. A build-only kernel: its module built
# into $out/KERNEL by vm/build-module.sh, as vm/run.sh does, no VM.
launch_vm() {
	local k=$1 dir=$out/$1 rc=0 all=() opts=()
	if [ -f "$dir/build-only" ]; then
		nice -n 10 "$top/vm/build-module.sh" "$k" "$dir" >"$dir/build-module.txt" 2>"$dir/run.log" || rc=$?
		return "$rc"
	fi
	mapfile -t all <"$dir/progs"
	mapfile -t opts <"$dir/opts"
	progress_vm_out=$dir
	run_progress "VM $k" progress_vm \
		"$top/vm/run.sh" "${opts[@]}" --out "$dir" "${k%@icount}" ${all[@]+"${all[@]}"} >"$dir/run.log" 2>&1 || rc=$?
	# An x86 guest under TCG has been seen (once in 6.12@icount, CI of
	# 2026-12-06) to take a single-step #DB in kernel mode and then a
	# general protection fault, mid-stall, on one online vCPU. Nothing in
	# the guest sets TF in the kernel, and this QEMU has no GDB stub: the
	# kernel's own comment on that warning (exc_debug_kernel(),
	# arch/x86/kernel/traps.c) names the emulator as its known source. Such
	# a boot runs once more; the first one's files stay in
	# $out/KERNEL.leaked-db and eval_kernel says so. A second one fails.
	if [ ! -e "$dir.leaked-db" ] && leaked_db "$dir/kernel-log-problems.txt"; then
		rm -rf "$dir.leaked-db"
		cp -a "$dir" "$dir.leaked-db"
		rc=0
		run_progress "VM $k (again)" progress_vm \
			"$top/vm/run.sh" "${opts[@]}" --out "$dir" "${k%@icount}" ${all[@]+"${all[@]}"} >"$dir/run.log" 2>&1 || rc=$?
	fi
	return "$rc"
}

# leaked_db FILE: true if the kernel log problems in FILE (vm/run.sh's
# kernel-log-problems.txt) hold the warning of a single-step #DB taken
# in kernel mode, which no kernel of ours asks for.
leaked_db() {
	[ -s "$1" ] && grep -q 'WARNING: .* at arch/x86/kernel/traps.c:[0-9]* exc_debug_kernel' "$1"
}

# security_results KERNEL DIR: one "security:" line per item of
# tests/stress/security whose program ran on KERNEL, from the TAP line of
# its test in DIR/PROGRAM.log; repeated at the end.
security_results() {
	local k=$1 dir=$2 item name prog tap line held
	while IFS=$'\t' read -r item name prog tap; do
		case $item in '#'* | '') continue ;; esac
		[ -s "$dir/$prog.log" ] || continue
		line=$(grep -E '^(not )?ok [0-9]+ ' "$dir/$prog.log" | grep -F -- " $tap" | head -n 1)
		case $line in
		"") held="no reason=the-test-did-not-run" ;;
		"not ok"*) held=no ;;
		*'# SKIP'* | *'# skip'*) held="skip reason=$(echo "${line#*"$tap"}" | sed 's/^[: ]*//; s/^# *[Ss][Kk][Ii][Pp] *//; s/ /-/g')" ;;
		*) held=yes ;;
		esac
		echo "security: item=$item name=$name kernel=$k held=$held"
	done <"$top/tests/stress/security" | tee -a "$out/security-lines"
}

# eval_kernel KERNEL: counts the tests of KERNEL's VM run from its
# results, in this shell.
eval_kernel() {
	local k=$1 dir=$out/$1 res rc p name section exit_line code release built=no w s
	local p0=$passed f0=$failed s0=$skipped
	local all=()
	mapfile -t all <"$dir/progs"
	rc=$(cat "$dir/run.rc" 2>/dev/null) || rc=2
	if [ -d "$dir.leaked-db" ]; then
		echo "$k: its first boot took a single-step #DB in kernel mode (QEMU's, see launch_vm), ran again; the first boot's kernel log problems:"
		head -n 10 "$dir.leaked-db/kernel-log-problems.txt" | sed 's/^/    /'
	fi
	[ "$rc" = 2 ] && { tail -n 20 "$dir/run.log"; fail "$k: harness could not run (see $dir/run.log)"; }
	res=$dir/results.txt
	touch "$res"
	[ -f "$dir/twheel.ko" ] && built=yes
	expect "$k: module builds" [ "$built" = yes ]
	w=$(warnings_in "$dir/build.log")
	s=$(warnings_in "$dir/sparse.log")
	if [ "$built" = yes ]; then
		expect "$k: no W=1 warnings ($w, see $dir/build.log)" [ "$w" = 0 ]
		expect "$k: sparse clean ($s, see $dir/sparse.log)" sparse_clean "$s" "$dir/sparse.log"
	fi
	# A build-only kernel has no VM run: its tests end here.
	if [ ! -f "$dir/build-only" ]; then
		for p in ${all[@]+"${all[@]}"}; do
			name=$(basename "$p")
			section=$dir/$name.log
			awk -v b="twheel-vm: begin $name" -v e="twheel-vm: end $name exit=" \
				'$0 == b { on = 1; next } on && index($0, e) == 1 { on = 0 } on' "$res" >"$section"
			exit_line=$(grep "^twheel-vm: end $name exit=" "$res" || true)
			code=$(echo "$exit_line" | sed -n 's/.* exit=\([0-9]*\).*/\1/p')
			if [ "$name" = kselftest.sh ]; then
				kselftest_results "$k"
				# 1: a program failed, counted above.
				[ -n "$exit_line" ] && [ "$code" != 0 ] && [ "$code" != 1 ] &&
					fail "$k: kselftest runner: exit $code ($exit_line)"
				continue
			fi
			count_tap "$k: $name" "$section"
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
		security_results "$k" "$dir"
		echo "$k: summary lines of the stress tests:"
		grep -E '^(ledger|fuzz-abi|failslab|memcg|scale|flood|stall|peruser|lateness|touchrace|contain): |^idle-server: conns=|^orders: total=|^restart: ids=|^bpf-refresh: peers=|^fleet: orders=' "$res" || true
		grep -E '^fleet: orders=' "$res" >>"$out/fleet-lines" || true
		grep -E '^bpf-refresh: peers=' "$res" >>"$out/bpf-refresh-lines" || true
		grep -E '^binding: ' "$res" | sed "s/ kernel=[^ ]*/ kernel=$k/" >>"$out/binding-lines" || true
		grep -E '^binding: ' "$res" || true
		install_results "$k" "$res"
	fi
	release=$(sed -n 's/^twheel-vm: kernel \([^ ]*\) .*/\1/p' "$res" | head -n 1)
	[ -n "$release" ] || release=$(sed -n 's/.* release=\([^ ]*\) .*/\1/p' "$dir/build-module.txt" 2>/dev/null)
	echo "$k: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped; logs in $dir"
	kernel_lines+=("kernel: $k release=${release:-unknown} built=$built warnings=$((w + s)) passed=$((passed - p0)) failed=$((failed - f0))")
	echo "${kernel_lines[-1]}"
}
kernel_lines=()

debug_missing() {
	tail -n 20 "$out/background.log"
	fail "debug: kernel builds (see $out/background.log)"
	kernel_lines+=("kernel: debug release=unknown built=no warnings=0 passed=0 failed=1")
}

# The VMs run in lanes (TWHEEL_CHECK_LANES, 2) side by side, each taking
# the next kernel from one queue when its VM is done: the longest first,
# by the seconds each took last time ($cache/vm-seconds; kernels never
# timed first, in the order of $kernels), the debug kernel once the
# background job has built it. Two lanes overlap the guests' idle time,
# the tests waiting for deadlines, which is most of a run. The tests
# allow for that: the timing programs assert order (nothing early, lost
# or twice), not speed, and stall and flood, which judge how long a
# path keeps a CPU, run under -icount, where guest time counts
# instructions and host load cannot change it. TWHEEL_CHECK_LANES=1
# runs one VM at a time.
lanes=${TWHEEL_CHECK_LANES:-2}
vm_seconds=$cache/vm-seconds
queue=$out/vm-queue
for k in $kernels; do prepare_kernel "$k"; done
touch "$vm_seconds"
for k in $kernels; do
	t=$(awk -v k="$k" '$1 == k { print $2 }' "$vm_seconds")
	echo "${t:-999999} $k"
done | sort -s -k1,1nr | cut -d' ' -f2 >"$queue"
: >"$out/lane-times"

# next_kernel: prints the kernel a lane runs next, or nothing when the
# queue is empty. The debug kernel waits for the background job, unless
# another kernel can go first.
next_kernel() {
	local k pick
	while :; do
		pick=$( (
			flock 9
			ready=yes
			kill -0 "$bg_pid" 2>/dev/null && ready=no
			while IFS= read -r k; do
				if [ "$k" != debug ] || [ "$ready" = yes ]; then
					grep -vxF "$k" "$queue" >"$queue.new" || true
					mv "$queue.new" "$queue"
					echo "$k"
					exit 0
				fi
			done <"$queue"
			[ -s "$queue" ] && echo wait
			exit 0
		) 9>"$queue.lock")
		[ "$pick" = wait ] || { echo "$pick"; return; }
		run_progress "debug kernel" progress_debug tail --pid="$bg_pid" -f /dev/null >/dev/null
	done
}

# lane N: runs VMs until the queue is empty; each one's wall and CPU
# time into $out/lane-times, its seconds into $cache/vm-seconds.
lane() {
	local n=$1 k s c t rc
	while k=$(next_kernel) && [ -n "$k" ]; do
		if [ "$k" = debug ] && [ ! -f "$out/debug-kernel.status" ]; then
			echo none >"$out/$k/run.rc"
			continue
		fi
		s=$(date +%s)
		cpu_now
		c=$cpu
		rc=0
		launch_vm "$k" || rc=$?
		cpu_now
		t=$(( $(date +%s) - s ))
		printf '%5d s  %5d s CPU  VM %s (lane %d)\n' "$t" $((cpu - c)) "$k" "$n" >>"$out/lane-times"
		echo "$rc" >"$out/$k/run.rc"
		(
			flock 9
			{ grep -v "^$k " "$vm_seconds" || true; echo "$k $t"; } >"$vm_seconds.new"
			mv "$vm_seconds.new" "$vm_seconds"
		) 9>"$vm_seconds.lock"
	done
}

stage "VMs in $lanes lanes, the longest first: $(echo $(cat "$queue"))"
lane_pids=()
set -m
for n in $(seq 1 "$lanes"); do
	lane "$n" &
	lane_pids+=($!)
done
set +m
trap 'kill -- -$bg_pid -$host_pid ${lane_pids[*]/#/-} 2>/dev/null || true' EXIT

# lanes_alive: true while a lane runs.
lanes_alive() {
	local p
	for p in "${lane_pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
	return 1
}

# The results in the order of $kernels, each as soon as its VM is done.
for k in $kernels; do
	while [ ! -f "$out/$k/run.rc" ] && lanes_alive; do sleep 5; done
	if [ "$(cat "$out/$k/run.rc" 2>/dev/null)" = none ]; then
		debug_missing
		continue
	fi
	echo "== VM $k ($(sed -n "s/^ *\([0-9]*\) s .* VM $k (\(lane [0-9]*\))$/\1 s, \2/p" "$out/lane-times"))"
	eval_kernel "$k"
done
for p in "${lane_pids[@]}"; do wait "$p" || true; done
stage_done
wait "$bg_pid" 2>/dev/null || true

# twheel in the debug kernel's tree, =m (the kernel's own build) and =y,
# and its selftests as that tree's kselftest target drivers/twheel.
in_tree_lines=()
if in_list debug "$kernels" && [ -f "$out/debug-kernel.status" ]; then
	dk=$(dirname "$(cat "$out/debug-kernel.status")")
	for c in m y; do
		b=$(sed -n 's/^built=//p' "$dk/in-tree-$c.status" 2>/dev/null)
		in_tree_lines+=("in-tree: config=$c built=${b:-no}")
		expect "in-tree: CONFIG_TWHEEL=$c builds in the debug kernel's tree (see $dk/in-tree-$c.status)" \
			[ "$b" = yes ]
	done
	b=$(cat "$out/in-tree-kselftest.status" 2>/dev/null) || b=no
	in_tree_lines+=("in-tree: kselftest TARGETS=drivers/twheel built=$b")
	expect "in-tree: make -C tools/testing/selftests TARGETS=drivers/twheel builds in the debug kernel's tree (see $out/in-tree-kselftest.log)" \
		[ "$b" = yes ]
fi

echo
echo "== summary (logs in $out)"
printf '%s\n' "${timings[@]}"
cat "$out/host-only-times" "$out/background-times" "$out/lane-times"
cpu_now
printf '%5d s  %5d s CPU  total\n' \
	$(( $(date +%s) - start_all )) "$cpu"
printf '%s\n' "${kernel_lines[@]}"
printf '%s\n' ${kselftest_lines[@]+"${kselftest_lines[@]}"}
printf '%s\n' ${in_tree_lines[@]+"${in_tree_lines[@]}"}
[ -z "$lkmm_line" ] || echo "$lkmm_line"
[ -s "$out/binding-lines" ] && cat "$out/binding-lines"
# One install line per language: a failing one if any kernel failed it.
[ -s "$out/install-lines" ] && awk '{ l = $2 } !(l in line) || !/example=ok no_module=documented$/ { line[l] = $0 }
	END { for (l in line) print line[l] }' "$out/install-lines" | sort
[ -s "$out/uring-lines" ] && cat "$out/uring-lines"
[ -s "$out/bpf-refresh-lines" ] && cat "$out/bpf-refresh-lines"
[ -s "$out/fleet-lines" ] && cat "$out/fleet-lines"
[ -s "$out/security-lines" ] && cat "$out/security-lines"
if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
