#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the small debug kernel the VM tests boot as "debug": Debian's
# linux-source-6.12 configured as tinyconfig plus vm/debug.config (KASAN,
# lockdep, kmemleak, UBSAN, DEBUG_OBJECTS_TIMERS, fault injection, and
# what a busybox initramfs needs) plus selftests/config (what the tests
# say they need, kselftest style). The tree lives outside the repo, in
# $TWHEEL_CACHE/debug-kernel, and is reused while the source package
# version and the fragments are unchanged (a stamp holds their hash); a
# changed fragment reconfigures and rebuilds incrementally. `make modules`
# runs so that out-of-tree builds find Module.symvers.
# Prints the path of the built tree on stdout; progress goes to stderr.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
jobs=${TWHEEL_JOBS:-2}
fragments="$here/debug.config"
[ -f "$here/../selftests/config" ] && fragments="$fragments $(cd "$here/../selftests" && pwd)/config"
tarball=/usr/src/linux-source-6.12.tar.xz
top=$cache/debug-kernel
tree=$top/linux

[ -r "$tarball" ] || { echo "$tarball missing: run scripts/setup.sh" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
# shellcheck disable=SC2086
hash=$( { echo "$srcver"; cat $fragments; } | sha256sum | cut -d' ' -f1)

mkdir -p "$top"
# One builder at a time: check and demo may run side by side.
exec 9>"$top/lock"
flock 9

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

start=$(date +%s)
if [ "$(cat "$top/source" 2>/dev/null)" != "$srcver" ] || [ ! -f "$tree/Makefile" ]; then
	echo "debug kernel: unpacking linux-source-6.12 $srcver into $tree" >&2
	rm -rf "$tree" "$top/source" "$top/stamp"
	mkdir -p "$tree"
	tar -xf "$tarball" -C "$tree" --strip-components=1
	echo "$srcver" >"$top/source"
fi
echo "debug kernel: building in $tree with -j$jobs (~5 min when cold)" >&2
rm -f "$top/stamp"
{
	make -C "$tree" tinyconfig
	# shellcheck disable=SC2086
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" $fragments
	make -C "$tree" olddefconfig
} >"$top/config.log" 2>&1 || { cat "$top/config.log" >&2; exit 1; }
verify_config || { echo "debug kernel: config fragment not applied, see above" >&2; exit 1; }
make -C "$tree" -s -j"$jobs" bzImage modules >&2
verify_config || { echo "debug kernel: .config changed during the build" >&2; exit 1; }
echo "$hash" >"$top/stamp"
echo "debug kernel: built in $(( $(date +%s) - start )) s" >&2
echo "$tree"
