#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing twheel needs on a Debian 12 machine
# (a fresh CI machine starts with nothing). Idempotent and fast when all
# is there: it asks dpkg first and runs `apt-get update` only when a
# package is missing. Run as root (or through sudo). Called by `make
# check`, `make demo` and `make setup`.
set -eu

# The 6.12 kernel, headers and source come in versioned packages
# (linux-image-6.12.N+deb12-amd64). Prefer the N of linux-source-6.12, so
# the debug kernel and the Debian 6.12 kernel are the same release; else
# the newest N for which both image and headers exist. Prints the
# "6.12.N+deb12" part; derived from apt's lists, so it follows the mirror.
deb612_abi() {
	local src n
	src=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
		src=$(apt-cache policy linux-source-6.12 | awk '/Candidate:/ { print $2 }')
	n=${src%%-*}+deb12
	if has_pair "$n"; then
		echo "$n"
		return
	fi
	apt-cache pkgnames linux-image-6.12. |
		sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12\)-amd64$/\1/p' |
		sort -rV | while read -r n; do
			if has_pair "$n"; then echo "$n"; break; fi
		done
}

has_pair() {
	installed "linux-image-$1-amd64" "linux-headers-$1-amd64" ||
		{ apt-cache show "linux-image-$1-amd64" && apt-cache show "linux-headers-$1-amd64"; } >/dev/null 2>&1
}

installed() {
	local p
	for p; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || return 1
	done
}

packages() {
	local abi
	abi=$(deb612_abi)
	echo build-essential bc bison flex libelf-dev libssl-dev cpio kmod  # kernel and module builds
	echo linux-source-6.12                              # source of the debug kernel (vm/)
	echo linux-image-amd64 linux-headers-amd64          # Debian 6.1 kernel to boot and build against
	[ -n "$abi" ] && echo "linux-image-$abi-amd64 linux-headers-$abi-amd64"  # Debian 6.12
	echo qemu-system-x86 busybox-static                 # the test VM and its initramfs
	echo clang libclang-rt-14-dev                       # sanitizers and fuzzing of the wheel core (tests/core)
	echo libuv1-dev libevent-dev pkg-config             # event-loop comparisons in benchmarks and demo
	echo sparse                                         # `make C=1` static checks of the module
	echo xz-utils zstd python3                          # unpack kernel source, helper scripts
}

missing() {
	local p
	for p in $(packages); do
		installed "$p" || echo "$p"
	done
}

[ "$(id -u)" = 0 ] || exec sudo -E "$0" "$@"
export DEBIAN_FRONTEND=noninteractive

need=$(missing)
if [ -z "$need" ]; then
	echo "setup: all packages installed"
	exit 0
fi
echo "setup: missing:" $need
apt-get update -q
# Again: after the update the 6.12 pair may be known for the first time.
need=$(missing)
echo "setup: installing:" $need
apt-get install -y -q --no-install-recommends $need
[ -n "$(deb612_abi)" ] || { echo "setup: no linux-image/headers 6.12 pair found" >&2; exit 1; }
echo "setup: done"
