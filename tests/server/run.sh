#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make server-test`: the Debian packages installed on a Debian 12 server
# as a person would, proven across reboots and a kernel upgrade. Takes a
# copy of the cached image (build-image.sh), puts the .debs and the test
# steps into it, then follows the plan (tests/server/plan): steps in the
# image's chroot on the host, and boots of the image under QEMU with its
# own kernel, initramfs and systemd, steps run in the guest.
#
#   tests/server/run.sh [--debs DIR] [--langs DIR] [--plan FILE] [--out DIR]
#                 [--accel tcg|kvm] [--if-cached]
#
# --langs: what tests/server/langs.sh built (default out/server-langs),
# the language bindings that the steps langs-install and langs use.
#
# --if-cached: if the image is not built yet, do not build it (~10 min
# on an idle machine, more under load): print "server: skipped (reason)"
# and exit 4, kselftest's skip (for make check's time budget).
#
# Prints each step's lines ("server: NAME ok|FAIL detail", and whatever
# summary lines a step adds) and ends with "N passed, N failed". Logs in
# --out (default $TWHEEL_CACHE/server/out): NAME.log per step,
# console-N.log and results-N.txt per boot. Exit status 0 if all passed,
# 1 if a step failed, 2 if the harness could not run. Environment:
# TWHEEL_CACHE, TWHEEL_ACCEL (tcg), TWHEEL_SERVER_MEM (2G),
# TWHEEL_SERVER_CPUS (2), TWHEEL_SERVER_BOOT_TIMEOUT (seconds per boot,
# 1500).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

debs=$top/out/deb
langs=$top/out/server-langs
plan=$here/plan
out=$sdir/out
accel=${TWHEEL_ACCEL:-tcg}
mem=${TWHEEL_SERVER_MEM:-2G}
cpus=${TWHEEL_SERVER_CPUS:-2}
boot_timeout=${TWHEEL_SERVER_BOOT_TIMEOUT:-1500}
T=/var/lib/twheel-server-test
if_cached=0

die() { echo "tests/server/run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=$2; shift 2 ;;
	--langs) langs=$2; shift 2 ;;
	--plan) plan=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--if-cached) if_cached=1; shift ;;
	*) die "usage: tests/server/run.sh [--debs DIR] [--langs DIR] [--plan FILE] [--out DIR] [--accel tcg|kvm] [--if-cached]" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "run as root (loop mounts, chroot)"
case $accel in tcg|kvm) ;; *) die "--accel: tcg or kvm" ;; esac
for p in twheel-dkms libtwheel1 libtwheel-dev; do
	ls "$debs"/${p}_*.deb >/dev/null 2>&1 || die "no $debs/${p}_*.deb: run make deb"
done
debs=$(cd "$debs" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.log "$out"/*.txt "$out"/*.raw
rm -rf "$out/boot"

if [ "$if_cached" = 1 ] && ! "$here/build-image.sh" --cached >/dev/null; then
	echo "server: skipped (the Debian 12 image is not cached: make server-test builds it)"
	exit 4
fi
base=$("$here/build-image.sh") || die "no image (see $sdir/build.log)"
image=$sdir/work.img
exec 8>"$sdir/run.lock"
flock -n 8 || die "another tests/server/run.sh is running"
t0=$(date +%s)
cp --sparse=always "$base" "$image"
echo "tests/server/run.sh: $(basename "$base") copied to $image in $(( $(date +%s) - t0 )) s" >&2

passed=0 failed=0
# report NAME EXIT FILE: print a step's stdout (FILE) and count its
# result lines; a step that exited non-zero without a FAIL line, or
# printed no result at all, is one failure.
report() {
	local name=$1 rc=$2 f=$3 p f0=$failed
	cat "$f"
	p=$(grep -cE "^server: $name ok( |$)" "$f" || true)
	passed=$((passed + p))
	failed=$((failed + $(grep -cE "^server: $name FAIL( |$)" "$f" || true)))
	if [ "$failed" = "$f0" ] && { [ "$rc" != 0 ] || [ "$p" = 0 ]; }; then
		echo "server: $name FAIL exit $rc without a result line (log: $out/$name.log)"
		failed=$((failed + 1))
	fi
}

# Put the debs, the steps, the README's library example, the language
# bindings (if built) and the runner into the image; VERSION goes to the
# steps.
prepare() {
	mkdir -p "$mnt/root/twheel-debs" "$mnt$T" "$mnt/usr/local/lib/twheel-server-test"
	cp "$debs"/twheel-dkms_*.deb "$debs"/libtwheel1_*.deb "$debs"/libtwheel-dev_*.deb "$mnt/root/twheel-debs/"
	cp "$here"/steps/* "$mnt$T/"
	cp -r "$top/examples" "$mnt$T/"
	if [ -d "$langs" ]; then cp -r "$langs" "$mnt$T/langs"; fi
	"$top/tests/readme-example.sh" --extract >"$mnt$T/readme-example.c"
	echo "VERSION=$(cat "$top/VERSION")" >"$mnt$T/env"
	install -m 755 "$here/guest/runner" "$mnt/usr/local/lib/twheel-server-test/"
	install -m 644 "$here/guest/twheel-server-test.service" "$mnt/etc/systemd/system/"
	ln -sf ../twheel-server-test.service \
		"$mnt/etc/systemd/system/multi-user.target.wants/twheel-server-test.service"
}

# chroot_steps STEP...: each in the chroot, stdout to $out/NAME.out.
chroot_steps() {
	local item name script rc
	for item; do
		name=${item%%=*} script=${item#*=}
		rc=0
		chroot_sh "STEP=$name T=$T bash -eu $T/$script.sh" \
			>"$out/$name.out" 2>"$out/$name.log" </dev/null || rc=$?
		echo "$rc" >"$out/$name.rc"
	done
}

# boot_prepare N STEP...: queue the steps, copy out the default kernel.
boot_prepare() {
	local n=$1
	shift
	printf '%s\n' "$@" >"$mnt$T/queue"
	rm -f "$mnt$T/done"
	rm -rf "$mnt$T/log"
	mkdir -p "$out/boot/$n"
	cp -L "$mnt/vmlinuz" "$out/boot/$n/vmlinuz"
	cp -L "$mnt/initrd.img" "$out/boot/$n/initrd.img"
	readlink "$mnt/vmlinuz" | sed 's|.*vmlinuz-||' >"$out/boot/$n/kernel"
}

# boot_collect: copy the guest's step logs out.
boot_collect() {
	[ -d "$mnt$T/log" ] || return 0
	local f
	for f in "$mnt$T/log"/*.log; do
		[ -e "$f" ] && cp "$f" "$out/"
	done
	return 0
}
export -f prepare chroot_steps boot_prepare boot_collect
export T debs langs here top out

in_image "$image" prepare || die "could not prepare the image"

nboot=0
while read -r where steps; do
	case $where in ''|'#'*) continue ;; esac
	# shellcheck disable=SC2086 # steps are words
	set -- $steps
	case $where in
	chroot)
		echo "tests/server/run.sh: chroot: $*" >&2
		start=$(date +%s)
		in_image "$image" chroot_steps "$@" || true
		echo "tests/server/run.sh: chroot: $(( $(date +%s) - start )) s" >&2
		for item; do
			name=${item%%=*}
			report "$name" "$(cat "$out/$name.rc" 2>/dev/null || echo 2)" "$out/$name.out"
		done ;;
	boot)
		nboot=$((nboot + 1))
		in_image "$image" boot_prepare "$nboot" "$@" || die "could not prepare boot $nboot"
		kernel=$(cat "$out/boot/$nboot/kernel")
		echo "tests/server/run.sh: boot $nboot: $kernel: $*" >&2
		start=$(date +%s)
		rc=0
		"$top/vm/qemu.sh" --accel "$accel" --cpus "$cpus" --mem "$mem" \
			--timeout "$boot_timeout" --reboot \
			--kernel "$out/boot/$nboot/vmlinuz" --initrd "$out/boot/$nboot/initrd.img" \
			--append "root=/dev/vda ro console=ttyS0 panic=-1" -- \
			-nic none -drive "file=$image,format=raw,if=virtio" \
			-serial "file:$out/console-$nboot.log" -serial "file:$out/results-$nboot.raw" \
			</dev/null >/dev/null 2>"$out/qemu-$nboot.log" || rc=$?
		echo "tests/server/run.sh: boot $nboot: QEMU ran $(( $(date +%s) - start )) s, exit $rc" >&2
		tr -d '\r' <"$out/results-$nboot.raw" >"$out/results-$nboot.txt"
		in_image "$image" boot_collect || true
		res=$out/results-$nboot.txt
		grep -qx 'twheel-server: done' "$res" ||
			echo "tests/server/run.sh: boot $nboot did not finish (timeout ${boot_timeout} s?); see $out/console-$nboot.log" >&2
		for item; do
			[ "$item" = @reboot ] && continue
			name=${item%%=*}
			awk -v b="twheel-server: begin $name" -v e="twheel-server: end $name exit=" \
				'$0 == b { on = 1; next } on && index($0, e) == 1 { on = 0 } on' "$res" >"$out/$name.out"
			code=$(sed -n "s/^twheel-server: end $name exit=\([0-9]*\).*/\1/p" "$res")
			if [ -z "$code" ]; then
				echo "server: $name FAIL did not run to its end in the guest (see $out/console-$nboot.log)"
				failed=$((failed + 1))
			else
				report "$name" "$code" "$out/$name.out"
			fi
		done ;;
	*) die "$plan: unknown line '$where $steps'" ;;
	esac
done <"$plan"

echo "tests/server/run.sh: $(( $(date +%s) - t0 )) s in all" >&2
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
