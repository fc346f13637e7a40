#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the small debug kernel the VM tests boot as "debug": Debian's
# linux-source of the line marked "debug" in vm/kernels (7.2), fetched
# into the cache by vm/fetch-kernels.sh, configured as tinyconfig plus
# vm/debug.config (KASAN, lockdep, kmemleak, UBSAN, DEBUG_OBJECTS_TIMERS,
# fault injection, and what a busybox initramfs needs) plus
# selftests/config (what the tests say they need, kselftest style),
# with twheel itself in the tree: kmod/ copied in as drivers/misc/twheel/
# and uapi/linux/twheel.h as include/uapi/linux/twheel.h, hooked into
# drivers/misc's Kconfig and Makefile, CONFIG_TWHEEL=m (the selftests'
# config says so). Then twheel's objects are compiled once more with
# CONFIG_TWHEEL=y, and the config put back: a module that drops into a
# kernel tree must build either way. Results in the tree's top
# directory: in-tree-m.status and in-tree-y.status (built=yes|no).
# It is built in the sid chroot (vm/chroot.sh) with the compiler Debian
# builds that line with (the debug line's headers name it: gcc-16), so
# the sanitizers get that compiler's checks and the module builds and
# sparse runs for it as for Debian's 7.2. The tree lives in the chroot,
# /twheel/debug-kernel/CONFIG/linux, and is reused while the source version,
# the compiler, the fragments and twheel's own files are unchanged (a
# stamp holds their hash); a change reconfigures and rebuilds
# incrementally.
# `make modules` runs so that out-of-tree builds find Module.symvers.
# Runs under nice. Prints the host path of the built tree on stdout;
# progress goes to stderr. TWHEEL_JOBS: make -j (default 2).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
jobs=${TWHEEL_JOBS:-2}
fragments="$here/debug.config"
[ -f "$here/../selftests/config" ] && fragments="$fragments $(cd "$here/../selftests" && pwd)/config"

line=$(awk '!/^#/ && $6 == "debug" { print $1 }' "$here/kernels")
[ -n "$line" ] || { echo "no line marked debug in vm/kernels" >&2; exit 1; }
"$here/fetch-kernels.sh" source "$line" >&2
# shellcheck disable=SC1090,SC1091,SC2154 # written by fetch-kernels.sh
srcver=$(. "$cache/linux-source/env" && echo "$version")
# shellcheck disable=SC1090,SC1091,SC2154
tarball=$cache/linux-source/$(. "$cache/linux-source/env" && echo "$tarball")
# shellcheck disable=SC1090,SC1091,SC2154
headers=$(. "$cache/kernels/$line/env" && echo "$headers")
cc=$(grep -o 'gcc-[0-9]*' "$cache/chroot/sid$headers/.kernelvariables" | head -n 1)
[ -n "$cc" ] || { echo "no gcc-N in $headers/.kernelvariables" >&2; exit 1; }
ccver=$("$here/chroot.sh" run "$cc" --version | head -n 1)
src=$(cd "$here/.." && pwd)
# One tree per kernel configuration (source, compiler, fragments), so
# trees under test that configure it differently do not rebuild it back
# and forth; twheel's own files only rebuild twheel in it.
# shellcheck disable=SC2086
config_hash=$( { echo "$srcver"; echo "$ccver"; cat $fragments; } | sha256sum | cut -c1-12)
hash=$( { echo "$config_hash"; cat "$src"/kmod/* "$src/uapi/linux/twheel.h"; } |
	sha256sum | cut -d' ' -f1)
top=$cache/chroot/sid/twheel/debug-kernel/$config_hash
tree=$top/linux
inside=/twheel/debug-kernel/$config_hash/linux

mkdir -p "$top"
# One builder at a time: check and demo may run side by side.
exec 9>"$top/lock"
flock 9
touch "$top"
# Trees of configurations unused for a week go (a build takes ~1 GiB).
find "$cache/chroot/sid/twheel/debug-kernel" -mindepth 1 -maxdepth 1 -type d \
	! -name "$config_hash" -mtime +7 -exec rm -rf {} + 2>/dev/null || true

# Every CONFIG_X=v line of the fragments must be in .config as written;
# every "# CONFIG_X is not set" must not be enabled.
verify_config() {
	local bad=0 line opt
	# shellcheck disable=SC2086
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$tree/.config" || {
				echo "debug kernel: $line did not survive: $(grep "^${line%%=*}=" "$tree/.config" || echo unset)" >&2
				bad=1
			} ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			if grep -q "^$opt=" "$tree/.config"; then
				echo "debug kernel: $opt should be unset" >&2
				bad=1
			fi ;;
		esac
	done < <(cat $fragments)
	return $bad
}

if [ "$(cat "$top/stamp" 2>/dev/null)" = "$hash" ] && [ -f "$tree/arch/x86/boot/bzImage" ]; then
	echo "$tree"
	exit 0
fi

kmake() { "$here/chroot.sh" run nice -n 19 make -C "$inside" CC="$cc" HOSTCC="$cc" "$@"; }

start=$(date +%s)
if [ "$(cat "$top/source" 2>/dev/null)" != "$srcver" ] || [ ! -f "$tree/Makefile" ]; then
	echo "debug kernel: unpacking $(basename "$tarball") $srcver into $tree" >&2
	rm -rf "$tree" "$top/source" "$top/stamp"
	mkdir -p "$tree"
	tar -xf "$tarball" -C "$tree" --strip-components=1
	echo "$srcver" >"$top/source"
fi
# twheel in the tree, as drivers/misc/twheel/: the same files as out of tree.
rm -rf "$tree/drivers/misc/twheel"
mkdir -p "$tree/drivers/misc/twheel"
find "$src/kmod" -maxdepth 1 -type f \( -name '*.[ch]' -o -name Kbuild -o -name Kconfig \) \
	! -name '*.mod.c' -exec cp {} "$tree/drivers/misc/twheel/" \;
cp "$src/uapi/linux/twheel.h" "$tree/include/uapi/linux/twheel.h"
grep -q '^obj-$(CONFIG_TWHEEL)' "$tree/drivers/misc/Makefile" ||
	echo 'obj-$(CONFIG_TWHEEL)		+= twheel/' >>"$tree/drivers/misc/Makefile"
grep -q 'drivers/misc/twheel/Kconfig' "$tree/drivers/misc/Kconfig" ||
	sed -i '$i source "drivers/misc/twheel/Kconfig"' "$tree/drivers/misc/Kconfig"
echo "debug kernel: building in $tree with $cc -j$jobs" >&2
rm -f "$top/stamp" "$top/in-tree-m.status" "$top/in-tree-y.status"
{
	kmake tinyconfig
	# shellcheck disable=SC2086
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" $fragments
	kmake olddefconfig
} >"$top/config.log" 2>&1 || { cat "$top/config.log" >&2; exit 1; }
verify_config || { echo "debug kernel: config fragment not applied, see above" >&2; exit 1; }
kmake -s -j"$jobs" bzImage modules >&2
verify_config || { echo "debug kernel: .config changed during the build" >&2; exit 1; }
if [ -f "$tree/drivers/misc/twheel/twheel.ko" ]; then echo built=yes; else echo built=no; fi \
	>"$top/in-tree-m.status"
# The same files built in (=y): compiled, not linked into this kernel.
cp "$tree/.config" "$top/config-m"
{
	"$tree/scripts/config" --file "$tree/.config" --set-val TWHEEL y
	kmake olddefconfig
	grep -qx 'CONFIG_TWHEEL=y' "$tree/.config" && kmake -s -j"$jobs" drivers/misc/twheel/
} >"$top/in-tree-y.log" 2>&1 && [ -f "$tree/drivers/misc/twheel/built-in.a" ] &&
	echo built=yes >"$top/in-tree-y.status" || echo built=no >"$top/in-tree-y.status"
cp "$top/config-m" "$tree/.config"
kmake olddefconfig >>"$top/config.log" 2>&1
verify_config || { echo "debug kernel: the =m config did not come back" >&2; exit 1; }
echo "$cc" >"$top/cc"
echo "$hash" >"$top/stamp"
# CPU time as well as wall time: on a shared machine the first says what
# the build costs, the second mostly what else was running.
times >"$top/times"
cpu=$(tail -n 1 "$top/times" | awk '{ print $1 " user, " $2 " sys" }')
echo "debug kernel: built in $(( $(date +%s) - start )) s ($cpu of CPU)" >&2
echo "$tree"
