#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Node.js for another architecture, the same version as the machine's:
#
#   vm/node-arch.sh ARCH      print a directory with bin/node and include/node
#
# Debian 12 has Node 18 and the Node binding needs 20, which the machine
# has for amd64 (the one vm/langroot.sh copies into the amd64 root). For
# ARCH (arm64) this is the official Node.js build of that version as the
# npm registry serves it, the package node-linux-ARCH (bin/node, linked
# against glibc and libstdc++ only, and the headers node-gyp builds an
# addon against), fetched with `npm pack`, which checks it against the
# registry's integrity, into $TWHEEL_CACHE/node-ARCH/VERSION. Its
# bin/node goes into the arm64 language root; its include/node is the
# --nodedir of the addon cross-built for it (bindings/node's vm-files).
set -eu

[ $# -eq 1 ] || { echo "usage: vm/node-arch.sh ARCH" >&2; exit 2; }
arch=$1
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
die() { echo "node-arch: $*" >&2; exit 1; }

case $arch in
arm64) machine=AArch64 ;;
*) die "ARCH: arm64, not '$arch' (amd64 is the machine's own Node)" ;;
esac
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	die "no node and npm on PATH: the machine's Node 20 names the version"
fi
version=$(node --version)
version=${version#v}
dir=$cache/node-$arch/$version
mkdir -p "$cache/node-$arch"
exec 9>"$cache/node-$arch/lock"
flock 9
if [ ! -x "$dir/bin/node" ]; then
	new=$dir.new
	rm -rf "$new" && mkdir -p "$new"
	(cd "$new" && npm pack --cache "${NPM_CACHE:-$cache/npm}" --prefer-offline --no-audit --no-fund \
		"node-linux-$arch@$version" >pack.log 2>&1) ||
		{ tail -n 20 "$new/pack.log" >&2; die "npm pack node-linux-$arch@$version failed"; }
	tar -xzf "$new/node-linux-$arch-$version.tgz" -C "$new" --strip-components=1 package/bin/node package/include
	rm -f "$new/node-linux-$arch-$version.tgz" "$new/pack.log"
	readelf -h "$new/bin/node" | grep -q "Machine: *$machine" || die "node-linux-$arch@$version: bin/node is not for $machine"
	[ -f "$new/include/node/node_api.h" ] || die "node-linux-$arch@$version: no include/node/node_api.h"
	rm -rf "$dir"
	mv "$new" "$dir"
fi
echo "$dir"
