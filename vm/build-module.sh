#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build twheel.ko for one kernel of vm/kernels (or the debug kernel) with
# W=1, then run sparse over it (C=2: every file, nothing recompiled), the
# way the kernel line's own toolchain does it: the host's gcc and sparse
# for "host" lines, the sid chroot's (vm/chroot.sh) for "chroot" lines
# and the debug kernel.
#
#   vm/build-module.sh [--src DIR] NAME OUTDIR
#
# Writes OUTDIR/twheel.ko, OUTDIR/build.log, OUTDIR/sparse.log, and
# prints "build-module: NAME release=R warnings=N sparse=N", N being the
# "warning:" and "error:" lines of each log, or sparse=failed if sparse
# did not run. The build happens in a copy of the tree (Kbuild, VERSION,
# kmod/, uapi/), so the repo stays clean. Exit status 1 if the module did
# not build.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
src=${TWHEEL_SRC:-$(dirname "$here")}
[ "${1:-}" = --src ] && { src=$2; shift 2; }
[ $# = 2 ] || { sed -n '/^#   vm/p' "$0" >&2; exit 2; }
name=$1
out=$2
chroot_dir=$cache/chroot/sid

die() { echo "build-module: $name: $*" >&2; exit 1; }

if [ "$name" = debug ]; then
	tree=$("$here/build-debug-kernel.sh") || die "the debug kernel did not build"
	toolchain=chroot
	kdir=${tree#"$chroot_dir"}
	release=$(cat "$tree/include/config/kernel.release")
	cc=$(cat "$tree/../cc")
	cross=
else
	"$here/fetch-kernels.sh" "$name"
	# shellcheck disable=SC1090 # written by fetch-kernels.sh
	. "$cache/kernels/$name/env"
	# shellcheck disable=SC2154 # set by the env file
	kdir=$headers
	cc=
	# Debian 11's headers name gcc-10; the host's gcc builds them. Another
	# architecture's headers name gcc-N, which with CROSS_COMPILE (as a
	# Debian cross-build sets it) is the cross compiler Debian builds
	# that kernel with.
	[ "$toolchain" = host ] && kdir=$cache/kernels/$name/$headers cc=gcc
	# shellcheck disable=SC2154 # set by the env file
	cross=${cross_compile:-}
	[ -z "$cross" ] || cc=
	# The tools these headers' own packages depend on (pahole, ...).
	if [ "$toolchain" = host ]; then
		"$here/../scripts/setup.sh" kernel-deps "$name" >&2 || die "could not install what its build needs"
	fi
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/twheel.ko" "$out/build.log" "$out/sparse.log"
if [ "$toolchain" = chroot ]; then
	build=$chroot_dir/twheel/build/$name
	inside=/twheel/build/$name
	kmake() { "$here/chroot.sh" run make -C "$kdir" M="$inside" ${cc:+CC=$cc} ${cross:+CROSS_COMPILE=$cross} "$@"; }
else
	build=$cache/build/$name
	kmake() { make -C "$kdir" M="$build" ${cc:+CC=$cc} ${cross:+CROSS_COMPILE=$cross} "$@"; }
fi

mkdir -p "$(dirname "$build")"
exec 9>"$build.lock"
flock 9
rm -rf "$build"
mkdir -p "$build"
cp -a "$src/Kbuild" "$src/kmod" "$src/uapi" "$build/"
# The release number, where the tree keeps it in one file for the module.
[ ! -f "$src/VERSION" ] || cp -a "$src/VERSION" "$build/"
find "$build" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	-o -name '.*.cmd' -o -name Module.symvers -o -name modules.order \) -delete

count() { grep -cE '(warning|error):' "$1" || true; }

kmake W=1 modules >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	die "twheel.ko failed to build (log: $out/build.log)"
}
cp "$build/kmod/twheel.ko" "$out/twheel.ko"
# C=2 checks every file again without recompiling; W=1 as above, or
# kbuild would see changed flags and rebuild. A kernel that finds its
# sparse too old turns it off (no CHECK lines): sparse=failed.
kmake W=1 C=2 modules >"$out/sparse.log" 2>&1 || true
warnings=$(count "$out/build.log")
sparse=$(count "$out/sparse.log")
grep -q '^  CHECK ' "$out/sparse.log" || sparse=failed
echo "build-module: $name release=$release warnings=$warnings sparse=$sparse"
