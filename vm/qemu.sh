#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's one QEMU launcher: the test VMs (vm/run.sh) and the
# Debian server VM (tests/server/run.sh) boot through it, so what depends
# on the accelerator is decided once: the CPU model, and the kernel
# command line words software emulation needs.
#
#   vm/qemu.sh [--arch amd64|arm64] [--accel tcg|kvm] [--icount] [--cpus N]
#              [--mem SIZE] [--timeout SECS] [--reboot] --kernel IMAGE
#              [--initrd FILE] [--append CMDLINE] [-- QEMU-ARG...]
#
# --arch: the guest's Debian architecture, amd64 (default: a PC,
# qemu-system-x86_64) or arm64 (qemu-system-aarch64 -M virt, no default
# network card: its boot ROM is not installed, and no test uses one).
# --accel: default $TWHEEL_ACCEL, else tcg (KVM where the host has it).
# --icount: guest time counts instructions (TCG only): timings that do
# not depend on the host's load. --timeout: kill QEMU after SECS (exit
# status 124). --reboot: a reboot of the guest restarts it (the server
# test reboots its systems); without it QEMU ends when the guest
# reboots or powers off. The QEMU-ARGs (consoles, disks, plugins) go
# last. No display, no monitor.
#
# TWHEEL_TCG_THREAD=single runs every vCPU on one host thread (QEMU's
# -accel tcg,thread=single; unset, QEMU's choice: one thread per vCPU,
# or one under --icount). A JVM crashes in its compiled code under one
# thread per vCPU (SIGSEGV or SIGILL in JIT code; most likely code it
# patches on one vCPU while another runs it) and not under one thread:
# the scenario benchmark's Java ways need single.
set -eu

accel=${TWHEEL_ACCEL:-tcg}
arch=amd64 icount=0 cpus=2 mem=1G timeout='' kernel='' initrd='' append='' reboot=-no-reboot

die() { echo "vm/qemu.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--icount) icount=1; shift ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--reboot) reboot=''; shift ;;
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--) shift; break ;;
	*) die "unknown option $1" ;;
	esac
done
[ -n "$kernel" ] || die "--kernel IMAGE is required"

case $arch in
amd64) qemu=(qemu-system-x86_64) tcg_cpu=qemu64 ;;
# -cpu max: every feature TCG emulates, LSE atomics and the 16K and 64K
# page granules among them (Debian's arm64-16k kernel needs the latter).
# pauth-impdef=on: pointer authentication, which Debian's kernels use in
# every function (pac-ret), with QEMU's cheap implementation-defined
# algorithm instead of emulating QARMA: the selftests run several times
# faster (scale_test's million adds: 6 s instead of 40 s).
arm64) qemu=(qemu-system-aarch64 -M virt -nic none) tcg_cpu=max,pauth-impdef=on ;;
*) die "--arch must be amd64 or arm64" ;;
esac

case $accel in
tcg)
	cpu=$tcg_cpu
	case ${TWHEEL_TCG_THREAD:-} in
	'') ;;	# QEMU's choice: multi, single under -icount
	multi|single) accel="tcg,thread=$TWHEEL_TCG_THREAD" ;;
	*) die "TWHEEL_TCG_THREAD must be multi or single" ;;
	esac
	# Under TCG the guest's TSC is the host's (or icount): right, but a
	# loaded host stalls a vCPU between the watchdog's HPET and TSC
	# reads, the watchdog marks the TSC unstable some 30 s in, and the
	# static keys it then flips are patched with int3 while the other
	# vCPU runs, which TCG does not always survive (an "Oops: int3" in
	# sched_clock_cpu). Trust the TSC from boot. (arm64's generic timer
	# has no such watchdog.)
	if [ "$arch" = amd64 ]; then append="$append tsc=reliable"; fi ;;
kvm)
	cpu=host
	[ "$icount" = 0 ] || die "--icount needs --accel tcg" ;;
*) die "--accel must be tcg or kvm" ;;
esac
extra=()
[ "$icount" = 1 ] && extra+=(-icount shift=0,sleep=off)
[ -n "$initrd" ] && extra+=(-initrd "$initrd")
[ -n "$reboot" ] && extra+=("$reboot")
limit=()
[ -n "$timeout" ] && limit=(timeout "$timeout")

exec ${limit[@]+"${limit[@]}"} "${qemu[@]}" \
	-accel "$accel" -cpu "$cpu" -smp "$cpus" -m "$mem" \
	-nographic -monitor none \
	-kernel "$kernel" -append "${append# }" \
	${extra[@]+"${extra[@]}"} "$@"
