#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: build the Debian packages twheel-dkms, libtwheel1,
# libtwheel-dev and twheel-tools with dpkg-buildpackage -b -us -uc, in a copy of the tree
# under OUTDIR (default out/deb), where the .debs land too, so the work
# tree stays clean. debian/changelog is written first from VERSION, the
# one place the release is kept, dated by the last commit so that two
# builds of one commit are alike. Then lintian, if installed: its errors
# fail the build, its warnings are printed.
#
# Needs dpkg-dev, debhelper, dh-dkms, fakeroot (and lintian):
# `scripts/setup.sh deb` installs them.
#
#   scripts/build-debs.sh [--arch arm64] [OUTDIR]
#
# --arch arm64 (`make deb-arm64`, default OUTDIR out/deb-arm64):
# libtwheel1, libtwheel-dev and twheel-tools for arm64 servers,
# cross-built with `dpkg-buildpackage -aarm64 -B` (twheel-dkms is
# architecture all: the amd64 build's serves both) in a Debian 12 chroot
# of the cache (vm/chroot.sh --suite bookworm) with arm64 added to its
# dpkg, so that the packages depend on Debian 12's arm64 libc, and this
# machine's dpkg stays as it is. Each ELF file in them must be an
# aarch64 one (readelf).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
arch=
if [ "${1:-}" = --arch ]; then
	arch=${2:-}
	shift 2
	[ "$arch" = arm64 ] || { echo "build-debs.sh: --arch must be arm64" >&2; exit 2; }
fi
outdir=${1:-$top/out/deb${arch:+-$arch}}
version=$(cat "$top/VERSION")
src=$outdir/twheel-$version

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
rm -rf "$src" "$outdir"/*.deb "$outdir"/*.ddeb "$outdir"/*.changes "$outdir"/*.buildinfo
mkdir -p "$src"

# The tracked and new files, not build products nor out/ itself.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 tar -c) | tar -x -C "$src"
	commit=$(git -C "$top" log -1 --format=%h)
	date=$(git -C "$top" log -1 --format=%cD)
	what="commit $commit"
	git -C "$top" diff --quiet HEAD || what="$what with uncommitted changes"
else
	tar -C "$top" --exclude=./out --exclude=./.git -c . | tar -x -C "$src"
	date=$(date -R)
	what="a tree without git"
fi
maint=$(sed -n 's/^Maintainer: //p' "$top/debian/control")
cat >"$src/debian/changelog" <<EOC
twheel ($version) unstable; urgency=medium

  * Release $version, built from $what.

 -- $maint  $date
EOC

if [ -z "$arch" ]; then
	(cd "$src" && dpkg-buildpackage -b -us -uc) >"$outdir/build.log" 2>&1 || {
		tail -n 30 "$outdir/build.log" >&2
		echo "make deb: dpkg-buildpackage failed (log: $outdir/build.log)" >&2
		exit 1
	}
else
	chroot_sh() { "$top/vm/chroot.sh" --suite bookworm "$@"; }
	# The chroot's /twheel/deb-ARCH, as the host sees it.
	inside=/twheel/deb-$arch
	host_side=${TWHEEL_CACHE:-/var/tmp/twheel-cache}/chroot/bookworm$inside
	{
		chroot_sh ensure &&
			chroot_sh run sh -c "dpkg --print-foreign-architectures | grep -qx $arch ||
				{ dpkg --add-architecture $arch && apt-get update -q; }" &&
			chroot_sh install build-essential "crossbuild-essential-$arch" debhelper dh-dkms \
				fakeroot "libc6-dev:$arch" &&
			rm -rf "$host_side" && mkdir -p "$host_side" && cp -a "$src" "$host_side/" &&
			chroot_sh run sh -c "cd $inside/${src##*/} && dpkg-buildpackage -a$arch -B -us -uc" &&
			cp "$host_side"/*.deb "$host_side"/*.changes "$host_side"/*.buildinfo "$outdir/"
	} >"$outdir/build.log" 2>&1 || {
		tail -n 30 "$outdir/build.log" >&2
		echo "make deb: the $arch cross-build failed (log: $outdir/build.log)" >&2
		exit 1
	}
	# Every ELF file of the packages is one for the target.
	rm -rf "$outdir/contents"
	for d in "$outdir"/*.deb; do dpkg-deb -x "$d" "$outdir/contents"; done
	bad=0 elves=0
	while IFS= read -r -d '' f; do
		m=$(readelf -h "$f" 2>/dev/null | sed -n 's/^ *Machine: *//p')
		[ -n "$m" ] || continue
		elves=$((elves + 1))
		case $m in *AArch64*) ;; *) echo "make deb: $f is for $m" >&2; bad=1 ;; esac
	done < <(find "$outdir/contents" -type f -print0)
	[ "$bad" = 0 ] && [ "$elves" -gt 0 ] || { echo "make deb: the $arch packages hold $elves ELF files, not all AArch64" >&2; exit 1; }
	echo "make deb: $elves ELF files, all AArch64"
fi
ls -1 "$outdir"/*.deb
if command -v lintian >/dev/null; then
	lintian -I $( [ "$(id -u)" = 0 ] && echo --allow-root ) "$outdir"/*.changes >"$outdir/lintian.log" 2>&1 || true
	cat "$outdir/lintian.log"
	if grep -q '^E: ' "$outdir/lintian.log"; then
		echo "make deb: lintian reports errors" >&2
		exit 1
	fi
	echo "make deb: lintian: $(grep -c '^E: ' "$outdir/lintian.log" || true) errors, $(grep -c '^W: ' "$outdir/lintian.log" || true) warnings"
else
	echo "make deb: lintian not installed, not run"
fi
