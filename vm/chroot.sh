#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian sid chroot in the cache ($TWHEEL_CACHE/chroot/sid) that
# builds the module for the kernel lines of vm/kernels marked "chroot"
# and the debug kernel: Debian's 7.x headers, kbuild and compiler
# (gcc-16) need glibc >= 2.38, newer than Debian 12's, and their config
# assumes gcc-16's flags. See vm/README.md. With --suite bookworm, a
# Debian 12 chroot beside it ($TWHEEL_CACHE/chroot/bookworm), where
# scripts/build-debs.sh cross-builds the arm64 packages with the arm64
# architecture added to dpkg there, not on the host.
#
#   vm/chroot.sh [--suite sid|bookworm] ensure
#                                  debootstrap it unless it is there
#   vm/chroot.sh [--suite S] install PKG...
#                                  apt-get install PKG (e.g. name=version)
#   vm/chroot.sh [--suite S] run CMD...
#                                  run CMD inside, as root, in a clean
#                                  environment, with /proc mounted
#
# Work the chroot does lives inside it, under /twheel (module builds,
# the debug kernel), so a new chroot starts from nothing. Mounts (/proc,
# which objtool needs) exist only in a private mount namespace of each
# `run`: nothing stays mounted in the cache.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
mirror=${TWHEEL_MIRROR:-http://deb.debian.org/debian}
suite=sid
if [ "${1:-}" = --suite ]; then
	suite=${2:-}
	shift 2
fi
root=$cache/chroot/$suite
# The sid chroot's files keep their names of before --suite.
tag=-$suite
[ "$suite" = sid ] && tag=
case $suite in
# What the chroot itself needs: make for kbuild, sparse for C=1, and
# what `make bzImage modules` of the debug kernel needs besides the
# compiler that Debian's 7.x headers pull in (gcc-N-for-host); liburing-dev
# for the selftests built in the debug kernel's tree (scripts/check.sh).
sid) base_pkgs=make,sparse,libc6-dev,bc,bison,flex,libelf-dev,libssl-dev,cpio,xz-utils,liburing-dev ;;
# Packages are installed by its user (scripts/build-debs.sh).
bookworm) base_pkgs="make" ;;
*) echo "chroot.sh: --suite must be sid or bookworm" >&2; exit 2 ;;
esac

die() { echo "chroot.sh: $*" >&2; exit 1; }

# in_root DIR CMD...: CMD in the chroot at DIR, with a /tmp of its own:
# each run's PIDs start at 1, so two builds side by side would otherwise
# clash on the names make gives its jobserver fifos there. PID 1 of the
# namespace stays sh, which waits for CMD: the kernel gives a namespace's
# init no default action for a signal from outside, so a CMD that were
# PID 1 would outlive a SIGTERM to its caller's process group (a make
# would kill its jobs and spin, holding the debug kernel's lock). As PID
# 2, CMD takes the signal; when it exits, sh does, and with it whatever
# is left in the namespace.
in_root() {
	local dir=$1
	shift
	unshare --mount --pid --fork --mount-proc="$dir/proc" \
		sh -c 'mount -t tmpfs -o mode=1777 tmpfs "$0/tmp" && "$@"' "$dir" \
		chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

run() {
	[ -f "$root/.twheel-ready" ] || die "no chroot at $root: vm/chroot.sh ensure"
	in_root "$root" "$@"
}

ensure() {
	local new=$root.new log=$cache/chroot/debootstrap$tag.log
	[ -f "$root/.twheel-ready" ] && return 0
	command -v debootstrap >/dev/null || die "debootstrap missing: run scripts/setup.sh"
	echo "chroot.sh: debootstrapping $suite into $root" >&2
	rm -rf "$new"
	mkdir -p "$new"
	debootstrap --variant=minbase --include="$base_pkgs" "$suite" "$new" "$mirror" >"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "debootstrap failed (log: $log)"; }
	if [ "$suite" = sid ]; then
		echo "deb $mirror experimental main" >"$new/etc/apt/sources.list.d/experimental.list"
	else
		# Debian 12's point releases and security fixes, as a server has.
		echo "deb $mirror $suite-updates main" >"$new/etc/apt/sources.list.d/updates.list"
		echo "deb ${mirror%/debian}/debian-security $suite-security main" >"$new/etc/apt/sources.list.d/security.list"
	fi
	# The host's apt settings that decide whether the mirror answers
	# (a snapshot mirror's expired Release files, a proxy) hold here too.
	apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
		>"$new/etc/apt/apt.conf.d/00twheel-host" || true
	in_root "$new" apt-get update -q >>"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "apt-get update in the chroot failed"; }
	mkdir -p "$new/twheel"
	touch "$new/.twheel-ready"
	rm -rf "$root"
	mv "$new" "$root"
}

# Debian's linux-kbuild-7.x lacks scripts/checker-valid.sh, without which
# `make C=1` turns sparse off with a warning: take it from linux-source.
kbuild_fixup() {
	local d src=$cache/linux-source/tree/scripts/checker-valid.sh
	for d in "$root"/usr/lib/linux-kbuild-*/scripts; do
		[ -d "$d" ] || continue
		[ -e "$d/checker-valid.sh" ] && continue
		[ -f "$src" ] || "$here/fetch-kernels.sh" source
		install -m 755 "$src" "$d/checker-valid.sh"
	done
}

install_pkgs() {
	ensure
	if ! run apt-get install -y -q --no-install-recommends "$@"; then
		run apt-get update -q
		run apt-get install -y -q --no-install-recommends "$@"
	fi
	kbuild_fixup
}

mkdir -p "$cache/chroot"
case ${1:-} in
ensure)
	exec 9>"$cache/chroot/lock$tag"
	flock 9
	ensure ;;
install)
	shift
	exec 9>"$cache/chroot/lock$tag"
	flock 9
	install_pkgs "$@" ;;
run)
	shift
	run "$@" ;;
*)
	sed -n '/^#   vm/p' "$0" >&2
	exit 2 ;;
esac
