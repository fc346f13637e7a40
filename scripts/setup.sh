#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing twheel needs on a Debian 12 machine
# (a fresh CI machine starts with nothing), then fetch the test kernels
# into the project's cache (vm/fetch-kernels.sh). Kernels are never
# installed on the host: its /boot, /usr/src and what it boots next stay
# as they were. Idempotent and fast when all is there: it asks dpkg
# first and runs `apt-get update` only when a package is missing. Run as
# root (or through sudo). Called by `make check`, `make demo` and `make
# setup`.
#
#   scripts/setup.sh [--no-kernels | --charts | NAME...]
#
# NAME: the kernels to fetch (lines of vm/kernels, "source"); default all.
# --charts: also gnuplot, for `make charts`; no kernels.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)

# One list per purpose; nothing here is unused.
packages() {
	# gcc and make: the module for the Debian 11 and 12 kernels (built
	# on the host), libtwheel, the selftests, stress and host tests;
	# libelf1 for Debian's prebuilt objtool in those kernels' kbuild.
	echo build-essential libelf1
	# `make C=2` (sparse) of the module for the kernels built on the host.
	echo sparse
	# checkpatch.pl of `make style` (it comes from the cached linux-source).
	echo perl
	# The test VM and its initramfs (vm/run.sh).
	echo qemu-system-x86 busybox-static cpio
	# vm/fetch-kernels.sh and vm/chroot.sh: Debian's signing keys for the
	# private package lists, the sid chroot for the 7.x kernels, and xz
	# for the linux-source tarball.
	echo debian-archive-keyring debootstrap xz-utils
	# Sanitizers and libFuzzer for the wheel core's tests (tests/core).
	echo clang libclang-rt-14-dev
	# `make bench-core`: the core against libuv's and libevent's timers.
	echo libuv1-dev libevent-dev pkg-config
	# `make bench-core`: uthash is the id map beside libuv's heap.
	echo uthash-dev
	# examples/orders keeps its orders in SQLite (linked statically).
	echo libsqlite3-dev
	# `make charts`: the PNGs of docs/ (only then: gnuplot is large).
	[ "$charts" = 0 ] || echo gnuplot-nox
}

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

missing() {
	local p
	for p in $(packages); do
		installed "$p" || echo "$p"
	done
}

[ "$(id -u)" = 0 ] || exec sudo -E "$0" "$@"
export DEBIAN_FRONTEND=noninteractive
charts=0
if [ "${1:-}" = --charts ]; then
	charts=1
	set -- --no-kernels
fi

need=$(missing)
# shellcheck disable=SC2086 # lists of words
if [ -z "$need" ]; then
	echo "setup: all packages installed"
else
	echo "setup: installing:" $need
	# Other builds on the machine may hold dpkg's lock for a while.
	apt-get -o DPkg::Lock::Timeout=900 update -q
	# shellcheck disable=SC2086 # a list of words
	apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $need
	echo "setup: packages done"
fi

[ "${1:-}" = --no-kernels ] && exit 0
"$top/vm/fetch-kernels.sh" "$@"
echo "setup: kernels in ${TWHEEL_CACHE:-/var/tmp/twheel-cache}/kernels"
