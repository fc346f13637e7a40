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
#   scripts/setup.sh [--no-kernels | --charts | --kernel-deps NAME... | NAME...]
#
# NAME: the kernels to fetch (lines of vm/kernels, "source"); default all.
# --charts: also gnuplot, for `make charts`; no kernels.
# --kernel-deps: what the fetched kernels NAME built on the host (their
#   linux-headers and linux-kbuild packages) depend on, read from the
#   packages themselves (kernels/NAME/host-depends, vm/fetch-kernels.sh):
#   pahole for a kernel with BTF, its gcc-N, the libraries of its kbuild
#   binaries. A dependency Debian 12 cannot give is named, not fatal:
#   the build says whether it needed it. vm/build-module.sh calls this
#   before every host build, so a new kernel line that needs a new tool
#   gets it on a fresh machine.
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

# satisfiable GROUP: the first alternative of a Depends group ("a (>= 1)
# | b") that the host's apt can install in a version that satisfies it;
# nothing if none can.
satisfiable() {
	local alt name op ver cand
	while IFS= read -r alt; do
		name=$(echo "$alt" | sed -E 's/^ *([^ (]+).*/\1/')
		op=$(echo "$alt" | sed -nE 's/.*\(([<>=]+) *([^)]*)\).*/\1/p')
		ver=$(echo "$alt" | sed -nE 's/.*\(([<>=]+) *([^)]*)\).*/\2/p')
		cand=$(apt-cache policy "$name" 2>/dev/null | sed -n 's/^ *Candidate: //p')
		[ -n "$cand" ] && [ "$cand" != "(none)" ] || continue
		if [ -n "$op" ]; then
			case $op in '>') op='>>' ;; '<') op='<<' ;; esac
			dpkg --compare-versions "$cand" "$op" "$ver" || continue
		fi
		echo "$name"
		return 0
	done < <(echo "$1" | tr '|' '\n')
}

# kernel_deps NAME...: install what the host builds of kernels NAME need.
kernel_deps() {
	local k f group name need=''
	for k; do
		f=$cache/kernels/$k/host-depends
		[ -f "$f" ] || { echo "setup: no $f: fetch the kernel first (vm/fetch-kernels.sh $k)" >&2; return 1; }
		while IFS= read -r group; do
			name=$(satisfiable "$group")
			if [ -z "$name" ]; then
				echo "setup: kernel $k asks for '$group', which this host cannot install; building without it"
			elif ! installed "$name"; then
				need="$need $name"
			fi
		done <"$f"
	done
	[ -n "$need" ] || return 0
	echo "setup: installing for the kernels' builds:$need"
	# shellcheck disable=SC2086 # a list of words
	apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $need ||
		{ apt-get -o DPkg::Lock::Timeout=900 update -q &&
			apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $need; }
}

[ "$(id -u)" = 0 ] || exec sudo -E "$0" "$@"
export DEBIAN_FRONTEND=noninteractive
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
if [ "${1:-}" = --kernel-deps ]; then
	shift
	kernel_deps "$@"
	exit
fi
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
