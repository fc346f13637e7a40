#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU with twheel.ko loaded and run test programs in
# it; the harness behind `make check` and `make demo`, and usable by hand:
#
#   vm/run.sh [options] KERNEL [PROG...] [-- CMD...]
#
# KERNEL is a line of vm/kernels (5.10, 6.1, 6.12, 7.2, 7.3-rc, and the
# arm64 lines, booted under qemu-system-aarch64 with arm64 PROGs: Debian's
# kernel, fetched into $TWHEEL_CACHE/kernels/KERNEL) or debug (the kernel
# of vm/build-debug-kernel.sh). Each PROG is a host file (a static
# binary or a busybox sh script) copied into the VM and run in order, in
# /tmp, with a timeout;
# the words after -- are run as one `sh -c` command line. The module is
# built for KERNEL by vm/build-module.sh (W=1, then sparse) in a copy of
# the tree, so the repo stays clean.
#
# Results: the VM writes each program's output to its second serial port,
# between "twheel-vm: begin NAME" and "twheel-vm: end NAME exit=N", then
# the kmemleak report (where the kernel has kmemleak), the rmmod result,
# and last "twheel-vm: done". No "done" is not a pass. The kernel log
# (first serial port) is then searched for BUG/WARNING/KASAN/UBSAN/leak/
# oops lines. A kernel that dies while booting, before /init prints
# anything (so before the module is loaded), is booted once more, its
# first log kept as kernel-boot-1.log; a second such death fails as any
# run without "done" does. Exit status: 0 all good, 1 a test or check
# failed, 2 the harness could not run (usage, build). Compiler and
# sparse warnings are printed, not failures here; scripts/check.sh counts
# them.
set -eu

usage() {
	cat >&2 <<EOF
usage: vm/run.sh [options] KERNEL [PROG...] [-- CMD...]
  KERNEL             $(awk '!/^#/ && NF >= 5 { printf "%s | ", $1 }' "$here/kernels")debug
  --mem SIZE         guest memory (default \$TWHEEL_VM_MEM or 1G)
  --cpus N           guest CPUs (default \$TWHEEL_VM_CPUS or 2)
  --timeout SECS     whole VM run (default \$TWHEEL_VM_TIMEOUT or 1200)
  --prog-timeout S   each program (default \$TWHEEL_PROG_TIMEOUT or 300)
  --append ARGS      extra kernel command line
  --accel A          tcg or kvm (default \$TWHEEL_ACCEL or tcg)
  --icount           guest time = instructions executed, 1 ns each (tcg only):
                     timings independent of the host's load (benchmarks)
  --qemu-opt OPT     one more QEMU argument (repeatable), e.g. a TCG plugin
  --out DIR          results and logs (default \$TWHEEL_CACHE/out/KERNEL)
  --src DIR          tree with Kbuild, kmod/, uapi/ (default \$TWHEEL_SRC or this repo)
  --lang             the Debian root of vm/langroot.sh at /debian in the guest
                     (Python, Java, Node, Redis, PostgreSQL; on arm64 Python,
                     Java and Node),
                     entered with in-debian CMD
  --copy DIR         copy the host directory DIR into the guest as
                     /opt/NAME, NAME its last component (repeatable)
  --shell            console on this terminal, a shell after the tests
EOF
	exit 2
}

die() { echo "vm/run.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
mem=${TWHEEL_VM_MEM:-1G}
cpus=${TWHEEL_VM_CPUS:-2}
vm_timeout=${TWHEEL_VM_TIMEOUT:-1200}
prog_timeout=${TWHEEL_PROG_TIMEOUT:-300}
accel=${TWHEEL_ACCEL:-tcg}
append=
out=
src=${TWHEEL_SRC:-$(dirname "$here")}
shell=0
lang=0
copies=()
icount=()
qemu_extra=()

while [ $# -gt 0 ]; do
	case $1 in
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--timeout) vm_timeout=$2; shift 2 ;;
	--prog-timeout) prog_timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--icount) icount=(--icount); shift ;;
	--qemu-opt) qemu_extra+=("$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--src) src=$2; shift 2 ;;
	--lang) lang=1; shift ;;
	--copy) copies+=("$2"); shift 2 ;;
	--shell) shell=1; shift ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
kernel=$1; shift
progs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do progs+=("$1"); shift; done
[ $# -gt 0 ] && shift
cmd="$*"

arch=amd64
if [ "$kernel" = debug ]; then
	image=$("$here/build-debug-kernel.sh")/arch/x86/boot/bzImage || die "debug kernel build failed"
	append="kasan_multi_shot printk.time=1${append:+ $append}"
elif awk -v k="$kernel" '!/^#/ && NF >= 5 && $1 == k { f = 1 } END { exit !f }' "$here/kernels"; then
	"$here/fetch-kernels.sh" "$kernel" || die "could not fetch kernel $kernel"
	image=$cache/kernels/$kernel/vmlinuz
	# shellcheck disable=SC1090,SC1091 # written by fetch-kernels.sh
	arch=$(. "$cache/kernels/$kernel/env" && echo "${arch:-amd64}")
else
	usage
fi
# What differs by architecture: the console (the first serial port), the
# port the results come out of (the PC's second serial port; -M virt has
# one UART, so a virtio console there, built into Debian's arm64
# kernels), and the busybox of the guest (Debian's busybox-static of its
# architecture, vm/fetch-kernels.sh's userland/).
case $arch in
amd64)
	busybox=/bin/busybox console=ttyS0 results_tty=ttyS1
	results_port() { echo -serial "file:$1"; } ;;
arm64)
	busybox=$cache/userland/arm64/root/bin/busybox console=ttyAMA0 results_tty=hvc0
	results_port() { echo -device virtio-serial-pci -chardev "file,id=results,path=$1" -device virtconsole,chardev=results; } ;;
esac
cmdline="console=$console rdinit=/init panic=-1"
case $accel in tcg|kvm) ;; *) die "--accel must be tcg or kvm" ;; esac

out=${out:-$cache/out/$kernel}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/initramfs"
rm -f "$out"/{twheel.ko,build.log,sparse.log,build-module.txt,kernel.log,kernel-boot-1.log,results.raw,results.txt,kernel-log-problems.txt,initramfs.cpio}
echo "vm/run.sh: $kernel: $image, output in $out"

"$here/build-module.sh" --src "$src" "$kernel" "$out" >"$out/build-module.txt" || {
	cat "$out/build-module.txt"
	die "twheel.ko failed to build for $kernel (logs: $out/build.log, $out/sparse.log)"
}
cat "$out/build-module.txt"
if grep -qE '(warning|error):' "$out/build.log" "$out/sparse.log"; then
	echo "vm/run.sh: $kernel: the module build (W=1) or sparse warns:" >&2
	grep -hE '(warning|error):' "$out/build.log" "$out/sparse.log" | head -n 10 >&2
fi

# The initramfs: static busybox, the module, the programs, /init.
root=$out/initramfs
mkdir -p "$root"/{bin,proc,sys,dev,tmp,tests}
cp "$busybox" "$root/bin/busybox"
# The applets of the host's busybox: Debian 12's busybox-static, the
# package and version the userland of another architecture comes from.
for applet in $(/bin/busybox --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$out/twheel.ko" "$root/twheel.ko"
: >"$root/tests/list"
for p in ${progs[@]+"${progs[@]}"}; do
	[ -f "$p" ] || die "no such program: $p"
	if [ "$(head -c 4 "$p")" = $'\x7fELF' ] && readelf -l "$p" | grep -q 'program interpreter'; then
		die "$p is dynamically linked; VM programs must be static (-static)"
	fi
	cp "$p" "$root/tests/"
	chmod +x "$root/tests/$(basename "$p")"
	basename "$p" >>"$root/tests/list"
done
if [ -n "$cmd" ]; then
	printf '#!/bin/sh\n%s\n' "$cmd" >"$root/tests/cmd"
	chmod +x "$root/tests/cmd"
	echo cmd >>"$root/tests/list"
fi
for d in ${copies[@]+"${copies[@]}"}; do
	[ -d "$d" ] || die "--copy $d: not a directory"
	mkdir -p "$root/opt"
	cp -a "$d" "$root/opt/$(basename "$(cd "$d" && pwd)")"
done
printf 'prog_timeout=%s\nshell=%s\nresults_tty=%s\n' "$prog_timeout" "$shell" "$results_tty" >"$root/config"
cp "$here/init" "$root/init"
chmod +x "$root/init"
# The kernel unpacks concatenated archives in turn: the Debian root first.
: >"$out/initramfs.cpio"
if [ "$lang" = 1 ]; then
	langroot=$("$here/langroot.sh" --arch "$arch") || die "the language root did not build (vm/langroot.sh --arch $arch)"
	cat "$langroot" >"$out/initramfs.cpio"
fi
(cd "$root" && find . | cpio --quiet -o -H newc -R 0:0) >>"$out/initramfs.cpio"

# By hand (--shell) the console is this terminal and there is no timeout.
if [ "$shell" = 1 ]; then
	console=(-serial mon:stdio)
	limit=()
else
	console=(-serial "file:$out/kernel.log")
	limit=(--timeout "$vm_timeout")
fi
start=$(date +%s)
rc=0
# shellcheck source=scripts/progress.sh
. "$here/../scripts/progress.sh"
progress_vm_out=$out
watch=(run_progress "VM $kernel" progress_vm)
[ "$shell" = 1 ] && watch=()
# A kernel that dies while booting, before /init has said a word (an
# Oops under TCG's cross-modifying code, seen on 7.2 and 7.3-rc in
# sched_clock_cpu's static branch), never loaded the module: boot once
# more, keeping the first kernel log as kernel-boot-1.log.
for boot in 1 2; do
	rc=0
	# shellcheck disable=SC2046 # the port's words hold no blanks
	${watch[@]+"${watch[@]}"} "$here/qemu.sh" --arch "$arch" --accel "$accel" ${icount[@]+"${icount[@]}"} \
		--cpus "$cpus" --mem "$mem" ${limit[@]+"${limit[@]}"} \
		--kernel "$image" --initrd "$out/initramfs.cpio" --append "$cmdline${append:+ $append}" -- \
		"${console[@]}" $(results_port "$out/results.raw") \
		${qemu_extra[@]+"${qemu_extra[@]}"} || rc=$?
	[ "$shell" = 0 ] && [ "$boot" = 1 ] && ! grep -qa 'twheel-vm: ' "$out/results.raw" &&
		grep -qaE 'Oops|Kernel panic' "$out/kernel.log" || break
	echo "vm/run.sh: $kernel: the kernel died while booting, before /init ran" \
		"($(grep -aE -m 1 'Oops|Kernel panic' "$out/kernel.log" | tr -d '\r' | cut -c1-100));" \
		"booting once more (first log: $out/kernel-boot-1.log)" >&2
	mv "$out/kernel.log" "$out/kernel-boot-1.log"
	rm -f "$out/results.raw"
done
echo "vm/run.sh: $kernel: VM ran $(( $(date +%s) - start )) s"
[ "$rc" = 124 ] && echo "vm/run.sh: $kernel: VM killed after the ${vm_timeout} s timeout" >&2
[ "$rc" != 0 ] && [ "$rc" != 124 ] && echo "vm/run.sh: $kernel: qemu exited with $rc" >&2

tr -d '\r' <"$out/results.raw" >"$out/results.txt"
failed=0
# Each line on stdin is a failure reported by the VM.
fail_lines() {
	local lines
	lines=$(cat)
	[ -z "$lines" ] && return 0
	echo "$lines" | sed "s|^twheel-vm:|vm/run.sh: $kernel: FAIL:|" >&2
	failed=1
}
if ! grep -qx 'twheel-vm: done' "$out/results.txt"; then
	echo "vm/run.sh: $kernel: FAIL: no completion marker: the VM did not finish the tests" >&2
	failed=1
fi
fail_lines < <(grep '^twheel-vm: end .* exit=' "$out/results.txt" | grep -Ev ' exit=(0|4)( |$)')
fail_lines < <(grep -E '^twheel-vm: (insmod|rmmod) exit=[^0]' "$out/results.txt")
fail_lines < <(grep -E '^twheel-vm: kmemleak .*leaks=[^0]' "$out/results.txt")
if [ "$shell" = 0 ]; then
	grep -E 'BUG:|WARNING:|KASAN|UBSAN|unreferenced object|Oops|Call Trace' \
		"$out/kernel.log" >"$out/kernel-log-problems.txt" || true
	if [ -s "$out/kernel-log-problems.txt" ]; then
		echo "vm/run.sh: $kernel: FAIL: kernel log has problems:" >&2
		head -n 20 "$out/kernel-log-problems.txt" >&2
		failed=1
	fi
fi
echo "vm/run.sh: $kernel: results $out/results.txt, kernel log $out/kernel.log"
[ "$failed" = 0 ] && echo "vm/run.sh: $kernel: all good"
exit "$failed"
