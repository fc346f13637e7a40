#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian 12 root that language tests and the scenario benchmarks run
# in inside the test VM (vm/run.sh --lang): the busybox initramfs has no
# runtime, so this root is packed next to it at /debian and programs run
# chrooted there (in-debian, vm/init). Built once with debootstrap
# (minbase) into the cache and packed as a cpio whose paths all begin
# with debian/; a new one is made when the package list, this script or
# the host's Node changes (the key is a hash of the three).
#
#   vm/langroot.sh [--arch A]            build if needed; print the cpio's path
#   vm/langroot.sh [--arch A] --cached   print the path if built, else exit 1
#
# A is amd64 (the default) or arm64. The arm64 root, for the arm64 VMs,
# holds Python, the JRE and Node (the Python, Java and Node bindings'
# tests): it is unpacked from Debian's arm64 packages by
# vm/extract-root.sh, since debootstrap would run arm64 programs on this
# host. The scenario benchmarks run on amd64 only (no Redis there).
#
# Node 20 is not in Debian 12 (which has 18): the machine's own Node 20,
# the one the bindings are built against, is copied in as
# /usr/local/bin/node; for arm64, the official build of that same version
# (vm/node-arch.sh). Docs, man pages and locales are dropped: the root
# lives in guest RAM.
set -eu

# What the programs need, and why:
#  python3, python3-pytest, python3-pytest-asyncio: the Python binding's
#    tests (Debian's pytest, no pip at test time);
#  python3-venv: installing the binding's wheel as a user would;
#  openjdk-17-jre-headless: the Java binding's tests and the JVM peers of
#    the scenario benchmarks (Netty, Kafka, the JDK's own queues);
#  redis-server: the Redis peers of the scenario benchmarks;
#  ca-certificates: what the JRE's package expects to find;
#  libstdc++6: the host's Node binary links it (and the arm64 one);
#  postgresql-15, iproute2: the database of examples/orders-pg's fleet,
#    and the network namespaces and veth pairs that make its hosts (its
#    JIT's LLVM and LLVM's z3, which the fleet turns off, are dropped:
#    120 MiB of guest RAM).
# For arm64, the same less Redis, and coreutils and dash: in-debian's env
# and sh, which debootstrap installs as essential and vm/extract-root.sh
# does not.
packages="python3 python3-pytest python3-pytest-asyncio python3-venv openjdk-17-jre-headless redis-server ca-certificates libstdc++6 postgresql-15 iproute2"
packages_arm64="python3 python3-pytest python3-pytest-asyncio python3-venv openjdk-17-jre-headless libstdc++6 coreutils dash"

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
mirror=${TWHEEL_MIRROR:-http://deb.debian.org/debian}
node=$(command -v node || true)

die() { echo "langroot: $*" >&2; exit 1; }

arch=amd64
if [ "${1:-}" = --arch ]; then
	arch=${2:-}
	shift 2 || die "--arch needs amd64 or arm64"
fi
case $arch in
amd64)
	[ -n "$node" ] || die "no node on PATH (the machine's Node 20 is copied into the root)"
	key=$({ echo "$packages"; cat "$0"; "$node" --version; } | sha256sum | cut -c1-12) ;;
arm64)
	packages=$packages_arm64
	[ -n "$node" ] || die "no node on PATH (the arm64 root gets the official build of its version)"
	key=arm64-$({ echo "$packages"; cat "$0" "$here/extract-root.sh" "$here/node-arch.sh"; "$node" --version; } |
		sha256sum | cut -c1-12) ;;
*) die "--arch: amd64 or arm64, not '$arch'" ;;
esac
dir=$cache/langroot/$key
cpio=$dir/root.cpio

if [ "${1:-}" = --cached ]; then
	[ -f "$cpio" ] && { echo "$cpio"; exit 0; }
	exit 1
fi

mkdir -p "$cache/langroot"
exec 9>"$cache/langroot/lock"
flock 9
[ -f "$cpio" ] && { echo "$cpio"; exit 0; }

start=$(date +%s)
new=$dir.new
rm -rf "$new"
mkdir -p "$new/stage" "$cache/debootstrap"
root=$new/stage/debian
if [ "$arch" = arm64 ]; then
	# shellcheck disable=SC2086 # a list of words
	"$here/extract-root.sh" arm64 "$root" $packages >"$new/extract.log" 2>&1 || {
		tail -n 30 "$new/extract.log" >&2
		die "the arm64 root did not build (log: $new/extract.log)"
	}
	rm -f "$root.lock" "$root/packages"
	# What update-alternatives, a maintainer script, would have linked.
	ln -s ../lib/jvm/java-17-openjdk-arm64/bin/java "$root/usr/bin/java"
	nodedir=$("$here/node-arch.sh" arm64) || die "no Node for arm64 (vm/node-arch.sh arm64)"
	install -D -m 755 "$nodedir/bin/node" "$root/usr/local/bin/node"
else
	command -v debootstrap >/dev/null || die "debootstrap missing: run scripts/setup.sh"
	echo "langroot: debootstrapping Debian 12 with: $packages" >&2
	# Progress every 30 s: debootstrap is silent while it unpacks.
	(
		while sleep 30; do
			echo "langroot: debootstrap running for $(( $(date +%s) - start )) s," \
				"$(du -sm "$root" 2>/dev/null | cut -f1) MiB so far" >&2
		done
	) &
	ticker=$!
	trap 'kill $ticker 2>/dev/null || true' EXIT
	debootstrap --variant=minbase --cache-dir="$cache/debootstrap" \
		--include="${packages// /,}" bookworm "$root" "$mirror" >"$new/debootstrap.log" 2>&1 || {
		tail -n 30 "$new/debootstrap.log" >&2
		die "debootstrap failed (log: $new/debootstrap.log)"
	}
	kill $ticker 2>/dev/null || true
	install -m 755 "$node" "$root/usr/local/bin/node"
	# The cluster its package made, and the JIT's LLVM (postgres loads
	# llvmjit.so only with jit = on).
	rm -rf "$root"/var/lib/postgresql/15/main "$root"/etc/postgresql/15/main \
		"$root"/usr/lib/postgresql/15/lib/llvmjit* "$root"/usr/lib/postgresql/15/lib/bitcode \
		"$root"/usr/lib/x86_64-linux-gnu/libLLVM-*.so* "$root"/usr/lib/x86_64-linux-gnu/libz3.so*
fi
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
	"$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} + 2>/dev/null || true
(cd "$new/stage" && find debian | cpio --quiet -o -H newc -R 0:0) >"$new/root.cpio"
rm -rf "$new/stage"
rm -rf "$dir"
mv "$new" "$dir"
echo "langroot: $(du -m "$cpio" | cut -f1) MiB in $cpio, built in $(( $(date +%s) - start )) s" >&2
echo "$cpio"
