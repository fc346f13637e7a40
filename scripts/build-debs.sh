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
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-$top/out/deb}
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

(cd "$src" && dpkg-buildpackage -b -us -uc) >"$outdir/build.log" 2>&1 || {
	tail -n 30 "$outdir/build.log" >&2
	echo "make deb: dpkg-buildpackage failed (log: $outdir/build.log)" >&2
	exit 1
}
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
