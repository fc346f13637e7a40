#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build twheel's userspace for another architecture than the host's
# (arm64), static, with Debian's cross compiler: libtwheel (static and
# shared), twheel-stat, the library's and tools' tests and the stress
# programs, ready to copy into an arm64 VM (vm/run.sh 6.12-arm64 PROG).
# The module and the selftests have their own cross-builds
# (vm/build-module.sh for an arm64 line of vm/kernels; scripts/check.sh
# for the kselftest install).
#
#   scripts/cross-build.sh [ARCH [OUT]]     default arm64, out/ARCH
#
# The tree's build directories are never touched: the sources (lib/,
# uapi/, tools/, tests/, selftests/, VERSION, as git sees them, or the
# whole tree outside git) are copied into OUT/src and built there by
# their own Makefiles with CC, AR and flags for ARCH. liburing, which
# fuzz-abi, failslab and tests/lib link, is Debian 12's for ARCH, from
# the cache's userland/ARCH (vm/fetch-kernels.sh fetches it with an
# ARCH kernel line). Needs gcc-aarch64-linux-gnu (scripts/setup.sh
# arm64). Writes OUT/bin/* and OUT/lib/*, and prints
#   cross-build: arch=ARCH programs=N static=N warnings=N
# and fails unless every program is a static ARCH executable.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
arch=${1:-arm64}
out=${2:-$top/out/$arch}

die() { echo "cross-build: $*" >&2; exit 1; }

case $arch in
arm64) triplet=aarch64-linux-gnu line=6.12-arm64 machine=AArch64 ;;
*) die "no cross-build for $arch (arm64)" ;;
esac
command -v "$triplet-gcc" >/dev/null || die "no $triplet-gcc: scripts/setup.sh arm64"
userland=$cache/userland/$arch/root
[ -f "$userland/usr/lib/$triplet/liburing.a" ] || "$top/vm/fetch-kernels.sh" "$line" >&2 ||
	die "no liburing for $arch in $userland"

mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src
rm -rf "$src" "$out/bin" "$out/lib"
mkdir -p "$src" "$out/bin" "$out/lib"
dirs='lib uapi tools tests/common tests/lib tests/tools tests/stress selftests'
# shellcheck disable=SC2086 # a list of directories
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -co --exclude-standard -z -- VERSION $dirs | xargs -0 tar -c) | tar -x -C "$src"
else
	(cd "$top" && tar -c VERSION $dirs) | tar -x -C "$src"
fi
# Outside git the copy has whatever the host's builds left there, which
# make would find up to date: every ELF file (objects by any suffix,
# programs, libraries) and archive goes, and the dependency files.
find "$src" -type f -name '*.d' -delete
find "$src" -type f -exec sh -c '
	for f; do
		case $(head -c 7 "$f" | od -An -tx1 | tr -d " \n") in
		7f454c46*|213c617263683e) rm -f "$f" ;;
		esac
	done' sh {} +

# Static programs: -static and liburing in CFLAGS too, since the tests'
# Makefiles compile and link in one command without LDFLAGS.
flags="-O2 -g -isystem $userland/usr/include"
cross=(CC="$triplet-gcc" AR="$triplet-ar")
log=$out/build.log
{
	make -C "$src/lib" "${cross[@]}" CFLAGS="$flags" &&
		make -C "$src/tools" "${cross[@]}" CFLAGS="$flags" LDFLAGS=-static &&
		for d in tests/lib tests/tools tests/stress; do
			make -C "$src/$d" "${cross[@]}" CFLAGS="$flags -L$userland/usr/lib/$triplet" || exit 1
		done
} >"$log" 2>&1 || { tail -n 20 "$log" >&2; die "the build failed (log: $log)"; }

cp -a "$src"/lib/libtwheel.a "$src"/lib/libtwheel.so* "$out/lib/"
cp "$src/tools/twheel-stat" "$out/bin/"
for d in tests/lib tests/tools tests/stress; do
	while IFS= read -r p; do cp "$p" "$out/bin/"; done < <(make -s -C "$src/$d" list-progs "${cross[@]}" CFLAGS="$flags -L$userland/usr/lib/$triplet")
done
n=0 static=0
for p in "$out"/bin/*; do
	n=$((n + 1))
	# The cross binutils' readelf, not file(1), which the check does not install.
	"$triplet-readelf" -h "$p" 2>/dev/null | grep -q "Machine: *$machine" &&
		! "$triplet-readelf" -l "$p" 2>/dev/null | grep -q INTERP && static=$((static + 1))
done
echo "cross-build: arch=$arch programs=$n static=$static warnings=$(grep -c 'warning:' "$log" || true)"
[ "$static" = "$n" ] || die "$((n - static)) of $n programs are not static $arch executables"
