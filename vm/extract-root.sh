#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian 12 root of another architecture, unpacked only:
#
#   vm/extract-root.sh ARCH DIR PACKAGE...
#
# PACKAGE... and their Depends, as apt resolves them for ARCH in bookworm
# (and bookworm-security), no list kept by hand, fetched with apt-get
# download on private lists in $TWHEEL_CACHE/apt-ARCH (as
# vm/fetch-kernels.sh does: the host's sources, dpkg architectures and
# installed packages are neither read nor changed; the lists are dropped
# once the root is whole) and unpacked with dpkg-deb -x into DIR.new,
# renamed to DIR when whole, so that an interrupted build leaves nothing
# that looks like a root. No maintainer script runs: nothing of ARCH
# runs on this host (no binfmt, no qemu-user needed). Essential packages
# are not anyone's Depends: name those the root needs (coreutils for
# env, dash for sh). DIR/packages lists what went in; a DIR that has it
# is whole, and left as it is. Needs debian-archive-keyring.
set -eu

[ $# -ge 3 ] || { echo "usage: vm/extract-root.sh ARCH DIR PACKAGE..." >&2; exit 2; }
arch=$1 root=$2
shift 2
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
apt=$cache/apt-$arch
mirror=${TWHEEL_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "extract-root: $*" >&2; exit 1; }
[ -f "$keyring" ] || die "no $keyring: run scripts/setup.sh"

arch_apt() {
	local cmd=$1
	shift
	"$cmd" -q -o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts="$apt/none" \
		-o Dir::Etc::preferences="$apt/none/preferences" -o Dir::Etc::preferencesparts="$apt/none" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status=/dev/null \
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin \
		-o APT::Architecture="$arch" -o APT::Architectures="$arch" -o APT::Sandbox::User=root \
		-o Debug::NoLocking=1 "$@"
}

build() {
	local new=$root.new debs=$apt/debs pkgs deb
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/none"
	echo "deb [signed-by=$keyring] $mirror bookworm main" >"$apt/sources.list"
	echo "deb [signed-by=$keyring] ${mirror%/debian}/debian-security bookworm-security main" >>"$apt/sources.list"
	echo "extract-root: $arch root of $* into $root, from $mirror" >&2
	arch_apt apt-get update >"$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; die "apt-get update failed"; }
	pkgs=$(arch_apt apt-get install -s --no-install-recommends "$@" |
		sed -nE 's/^Inst ([^ ]+) \(([^ ]+) .*/\1=\2/p')
	[ -n "$pkgs" ] || die "apt resolves no packages for $* on $arch"
	rm -rf "$new" "$debs" && mkdir -p "$new" "$debs"
	# shellcheck disable=SC2086 # a list of words
	(cd "$debs" && arch_apt apt-get download $pkgs >"$apt/download.log" 2>&1) ||
		{ cat "$apt/download.log" >&2; die "apt-get download failed"; }
	for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$new"; done
	echo "$pkgs" >"$new/packages"
	rm -rf "$debs" "$root" "$apt/lists" "$apt/cache"
	mv "$new" "$root"
	echo "extract-root: $(echo "$pkgs" | wc -l) packages, $(du -sm "$root" | cut -f1) MiB in $root" >&2
}

mkdir -p "$(dirname "$root")"
(
	flock 9
	[ -f "$root/packages" ] || build "$@"
) 9>"$root.lock"
