#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What the npm tarball carries (make pack): the package, LICENSE, and
# libtwheel's sources with the uapi header in deps/libtwheel/, each still
# with its SPDX line, so that it builds with nothing but a compiler; and
# no build output, node_modules or tests. install-check.sh installs it.
#   scripts/pack-test.sh TARBALL
set -eu

tarball=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tar xzf "$tarball" -C "$tmp"
tar tzf "$tarball" >"$tmp/contents"
for f in package.json index.js index.d.ts binding.gyp src/twheel_node.cc scripts/build.js \
	LICENSE deps/libtwheel/twheel.c deps/libtwheel/twheel.h deps/libtwheel/uapi/linux/twheel.h; do
	grep -qx "package/$f" "$tmp/contents" || { echo "pack-test: $f missing from $tarball" >&2; exit 1; }
done
for f in "$tmp"/package/deps/libtwheel/twheel.c "$tmp"/package/deps/libtwheel/twheel.h \
	"$tmp"/package/deps/libtwheel/uapi/linux/twheel.h; do
	head -n 1 "$f" | grep -q 'SPDX-License-Identifier: .*MIT' ||
		{ echo "pack-test: ${f#"$tmp"/} has lost its SPDX line" >&2; exit 1; }
done
grep -q '^Permission is hereby granted' "$tmp/package/LICENSE" ||
	{ echo "pack-test: LICENSE is not the MIT text" >&2; exit 1; }
if grep -qE '^package/(build|node_modules|test)/' "$tmp/contents"; then
	echo "pack-test: $tarball carries build output, node_modules or tests" >&2
	exit 1
fi
echo "pack-test: $(basename "$tarball"): $(wc -l <"$tmp/contents") files, LICENSE and deps/libtwheel/ in"
