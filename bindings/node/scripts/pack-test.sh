#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The npm tarball tested as a user gets it (make pack): libtwheel built
# and installed from a copy of the tree into a scratch prefix, as
# libtwheel-dev puts it on a server; a fresh npm project; `npm install` of
# the tarball, which builds the addon from source (node-gyp, the running
# Node's headers, node-addon-api from the npm cache); then the package
# loaded and a wheel opened (ENOENT where the module is not loaded).
#   scripts/pack-test.sh TARBALL NPM_CACHE
set -eu

tarball=$(realpath "$1")
cache=$2
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tar tzf "$tarball" >"$tmp/contents"
for f in package/package.json package/index.js package/index.d.ts package/binding.gyp \
	package/src/twheel_node.cc package/scripts/build.js; do
	grep -qx "$f" "$tmp/contents" || { echo "pack-test: $f missing from $tarball" >&2; exit 1; }
done
if grep -qE '^package/(build|node_modules|test)/' "$tmp/contents"; then
	echo "pack-test: $tarball carries build output, node_modules or tests" >&2
	exit 1
fi

mkdir -p "$tmp/src"
cp -r "$top/lib" "$top/uapi" "$top/man" "$top/VERSION" "$tmp/src/"
make -s -C "$tmp/src/lib" clean
nice -n 10 make -s -C "$tmp/src/lib" install PREFIX="$tmp/usr" DESTDIR=/ >/dev/null

mkdir "$tmp/app"
cd "$tmp/app"
printf '{ "name": "pack-test", "version": "0.0.0", "private": true }\n' >package.json
env -u TWHEEL_TREE PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig" nice -n 10 \
	npm --cache "$cache" --prefer-offline --no-audit --no-fund install "$tarball" >"$tmp/npm.log" 2>&1 || {
	cat "$tmp/npm.log" >&2
	echo "pack-test: npm install of $tarball failed" >&2
	exit 1
}
node -e "
const { Wheel } = require('twheel');
try {
  const w = new Wheel({ timeoutMs: 1000 });
  w.add(1);
  w.close();
  console.log('pack-test: npm install built and loaded twheel; a wheel opened');
} catch (e) {
  if (e.code !== 'ENOENT' && e.code !== 'EACCES')
    throw e;
  console.log('pack-test: npm install built and loaded twheel; no device here (' + e.code + ')');
}"
