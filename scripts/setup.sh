#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The one place that installs what twheel's builds and tests need on a
# Debian 12 machine (a fresh CI machine starts with nothing), by
# purpose, and fetches the test kernels into the project's cache
# (vm/fetch-kernels.sh). Kernels are never installed on the host: its
# /boot, /usr/src and what it boots next stay as they were. Idempotent
# and fast when all is there: it asks dpkg first and runs `apt-get
# update` only when a package is missing. Run as root (or through sudo).
#
#   scripts/setup.sh                    what `make check` needs, and every kernel
#   scripts/setup.sh PURPOSE...         the packages of those purposes (below)
#   scripts/setup.sh kernels [NAME...]  fetch kernels (lines of vm/kernels,
#                                       "source"; default all)
#   scripts/setup.sh kernel-deps NAME...
#
# kernel-deps: what the fetched kernels NAME built on the host (their
# linux-headers and linux-kbuild packages) depend on, read from the
# packages themselves (kernels/NAME/host-depends, vm/fetch-kernels.sh):
# pahole for a kernel with BTF, its gcc-N, the libraries of its kbuild
# binaries. A dependency Debian 12 cannot give is named, not fatal: the
# build says whether it needed it. vm/build-module.sh calls this before
# every host build, so a new kernel line that needs a new tool gets it on
# a fresh machine.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}

# packages PURPOSE: one list per purpose, each package with its reason;
# nothing here is unused.
packages() {
	case $1 in
	build)
		# gcc and make: libtwheel, the tools, the selftests, stress and
		# host tests, and the module for the kernels built on the host;
		# libelf1 for Debian's prebuilt objtool in those kernels' kbuild;
		# sparse for `make C=2` of those builds; rsync, with which the
		# kselftest framework's `make install` copies the selftests;
		# liburing-dev for the programs that drive the device through
		# io_uring (selftests/uring_test, tests/lib), linked statically.
		echo build-essential libelf1 sparse rsync liburing-dev ;;
	vm)
		# The test VM and its initramfs (vm/run.sh); vm/fetch-kernels.sh,
		# vm/chroot.sh and vm/langroot.sh: Debian's signing keys for the
		# private package lists, debootstrap for the sid chroot of the
		# 7.x kernels and the language root, xz for linux-source.
		echo qemu-system-x86 busybox-static cpio debian-archive-keyring debootstrap xz-utils ;;
	arm64)
		# The arm64 kernel lines of vm/kernels: their module and the
		# selftests cross-built with Debian's cross compiler (the
		# headers' own gcc-12-aarch64-linux-gnu comes as a kernel-dep),
		# booted under qemu-system-aarch64 (vm/qemu.sh --arch arm64).
		echo gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm ;;
	style)
		# checkpatch.pl of `make style` (it comes from the cached linux-source).
		echo perl ;;
	core)
		# Sanitizers and libFuzzer for the wheel core's tests (tests/core);
		# bench/core: libuv's and libevent's timers, uthash as the id map
		# beside libuv's heap.
		echo clang libclang-rt-14-dev libuv1-dev libevent-dev pkg-config uthash-dev ;;
	examples)
		# examples/orders keeps its orders in SQLite (linked statically);
		# examples/bpf-refresh: its BPF program built with clang -target
		# bpf, loaded with libbpf, linked statically with libelf and zlib.
		echo libsqlite3-dev clang libbpf-dev libelf-dev zlib1g-dev ;;
	python)
		# bindings/python: Debian's python3 with its pytest and
		# pytest-asyncio for the host tests (the versions the VM's Debian
		# root has), python3-venv for the cache's venv of mypy and build
		# from PyPI.
		echo python3 python3-venv python3-pytest python3-pytest-asyncio ;;
	deb)
		# `make deb`: Debian's package tools, and lintian to check them;
		# debootstrap and its keyring for the Debian 12 chroot where the
		# arm64 packages are cross-built (`make deb-arm64`), and readelf
		# (binutils) to check them.
		echo dpkg-dev debhelper dh-dkms fakeroot lintian build-essential debootstrap debian-archive-keyring binutils ;;
	server)
		# `make server-test`: debootstrap for the image, QEMU to boot it,
		# mkfs.ext4 and mount (loop) to make and open its disk.
		echo debootstrap qemu-system-x86 e2fsprogs util-linux mount ;;
	bindings)
		# The bindings' builds fetch from the registries (the Go module
		# proxy, npm, PyPI, Maven Central) over TLS; the Node addon is
		# built by node-gyp (make, g++, python3) from the libtwheel
		# sources its package carries, and cross-built for the arm64 VM
		# (g++-aarch64-linux-gnu); the Java jar's linux-aarch64 JNI
		# library is cross-built (gcc-aarch64-linux-gnu; libc6-dev-arm64-cross
		# is only its Recommends, so named) and loaded by an arm64 JVM
		# under qemu-user (qemu-aarch64 -L, no binfmt), from a sysroot of
		# Debian's arm64 packages on private lists (debian-archive-keyring).
		echo ca-certificates build-essential python3 gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user debian-archive-keyring ;;
	charts)
		# `make charts`: the PNGs of docs/ (only then: gnuplot is large).
		echo gnuplot-nox ;;
	scenarios)
		# `make bench-scenarios`: the Redis peers' C client (hiredis,
		# linked statically), the VM's language root, and what the
		# bindings' builds need (the Java jar carries its arm64 JNI
		# library, cross-built).
		echo libhiredis-dev
		packages vm
		packages bindings ;;
	check) for p in build vm arm64 style core examples python deb bindings; do packages "$p"; done ;;
	demo) for p in build vm; do packages "$p"; done ;;
	*)
		echo "setup: no purpose '$1' (build vm arm64 style core examples python deb bindings server charts scenarios check demo)" >&2
		exit 2 ;;
	esac
}

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# apt_install PKG...: install those not installed yet.
apt_install() {
	local p need=''
	for p; do
		installed "$p" || case " $need " in *" $p "*) ;; *) need="$need $p" ;; esac
	done
	if [ -z "$need" ]; then
		echo "setup: all packages installed"
		return 0
	fi
	echo "setup: installing:$need"
	# Other builds on the machine may hold dpkg's lock for a while.
	apt-get -o DPkg::Lock::Timeout=900 update -q
	# shellcheck disable=SC2086 # a list of words
	apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $need
	echo "setup: packages done"
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

case ${1:-} in
kernels)
	shift
	"$top/vm/fetch-kernels.sh" "$@"
	echo "setup: kernels in $cache/kernels" ;;
kernel-deps)
	shift
	kernel_deps "$@" ;;
'')
	# shellcheck disable=SC2046 # a list of words
	apt_install $(packages check)
	"$top/vm/fetch-kernels.sh"
	echo "setup: kernels in $cache/kernels" ;;
*)
	all=''
	for purpose; do all="$all $(packages "$purpose" | tr '\n' ' ')"; done
	# shellcheck disable=SC2086 # a list of words
	apt_install $all ;;
esac
