#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The jar's linux-aarch64 library in an aarch64 JVM, as far as a test
# can go without an arm64 kernel: Debian 12's OpenJDK 17 for arm64, run
# by qemu-user (qemu-aarch64 -L SYSROOT, no binfmt), runs NativeProbe
# from the tests jar, which loads the library from JAR through
# NativeLoader as an application does, calls the clock through JNI and
# opens /dev/twheel. That proves the library is an aarch64 ELF that
# links against arm64 glibc and that its JNI symbols resolve; without
# the module the open must fail with the exception the main README
# documents. One line, and exit status 1 unless loaded=yes and
# no_module=documented (or skipped, on a host with the module):
#   aarch64: library=linux-aarch64 loaded=yes jvm=JAVA_VERSION_LINE no_module=documented
#   aarch64-test.sh JAR TESTS_JAR
#
# The sysroot, $TWHEEL_CACHE/java/arm64-sysroot, is built once and
# reused (no network then; remove it to take newer packages):
# openjdk-17-jre-headless and its Depends as apt resolves them for arm64
# in bookworm (no hand-kept list), fetched with apt-get download on
# private lists in $TWHEEL_CACHE/java/arm64-apt (as vm/fetch-kernels.sh
# does: the host's sources, dpkg architectures and installed packages
# are neither read nor changed; the lists are dropped once the sysroot
# is whole), unpacked with dpkg-deb -x, no maintainer scripts run. Needs
# qemu-user and debian-archive-keyring.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
jar=$(realpath "$1")
tests=$(realpath "$2")
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}/java
root=$cache/arm64-sysroot
apt=$cache/arm64-apt
mirror=${TWHEEL_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
java=$root/usr/lib/jvm/java-17-openjdk-arm64/bin/java
documented='org.twheel.TwheelException: open /dev/twheel: ENOENT (No such file or directory)'

die() { echo "aarch64-test.sh: $*" >&2; exit 1; }
command -v qemu-aarch64 >/dev/null || die "no qemu-aarch64: install qemu-user (scripts/setup.sh bindings)"
grep -qF "$documented" "$here/../../README.md" || die "the main README does not document '$documented'"

arm64_apt() {
	local cmd=$1
	shift
	"$cmd" -q -o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts="$apt/none" \
		-o Dir::Etc::preferences="$apt/none/preferences" -o Dir::Etc::preferencesparts="$apt/none" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status=/dev/null \
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin \
		-o APT::Architecture=arm64 -o APT::Architectures=arm64 -o APT::Sandbox::User=root \
		-o Debug::NoLocking=1 "$@"
}

# Into a new directory, renamed into place when whole: an interrupted
# build leaves nothing that looks like a sysroot.
build_sysroot() {
	local new=$root.new debs=$apt/debs pkgs deb l
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/none"
	echo "deb [signed-by=$keyring] $mirror bookworm main" >"$apt/sources.list"
	echo "deb [signed-by=$keyring] ${mirror%/debian}/debian-security bookworm-security main" >>"$apt/sources.list"
	echo "aarch64-test.sh: building $root (about 70 MB from $mirror)" >&2
	arm64_apt apt-get update >"$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; die "apt-get update failed"; }
	pkgs=$(arm64_apt apt-get install -s --no-install-recommends openjdk-17-jre-headless |
		sed -nE 's/^Inst ([^ ]+) \(([^ ]+) .*/\1=\2/p')
	[ -n "$pkgs" ] || die "apt resolves no packages for openjdk-17-jre-headless:arm64"
	rm -rf "$new" "$debs" && mkdir -p "$new" "$debs"
	# shellcheck disable=SC2086 # a list of words
	(cd "$debs" && arm64_apt apt-get download $pkgs >"$apt/download.log" 2>&1) ||
		{ cat "$apt/download.log" >&2; die "apt-get download failed"; }
	for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$new"; done
	# The JVM finds its home from the host path of its binary, so the
	# sysroot's absolute links (conf/ and jvm.cfg into /etc) would
	# resolve on the host: make them relative.
	find "$new" -type l -lname '/*' | while read -r l; do
		ln -sfnr "$new$(readlink "$l")" "$l"
	done
	echo "$pkgs" >"$new/packages"
	rm -rf "$debs" "$root" "$apt/lists" "$apt/cache"
	mv "$new" "$root"
}

mkdir -p "$cache"
(
	flock 9
	[ -f "$root/packages" ] || build_sysroot
) 9>"$root.lock"
[ -x "$java" ] || die "$java is missing: rm -rf $root and run again"

tmp=$(mktemp -d /tmp/twheel-aarch64.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# The surefire flags (pom.xml); the serial GC starts fewer threads to emulate.
rc=0
timeout 180 qemu-aarch64 -L "$root" "$java" -showversion -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
	-Djava.io.tmpdir="$tmp" -cp "$jar:$tests" org.twheel.NativeProbe >"$tmp/out" 2>"$tmp/err" || rc=$?
field() { sed -n "s/^$1=//p" "$tmp/out"; }
jvm=$(grep -m 1 ' version "' "$tmp/err" || echo unknown)
library=$(field library)
loaded=no
[ $rc = 0 ] && [ "$(field os.arch)" = aarch64 ] && [ "$library" = linux-aarch64 ] && [ "$(field clock)" = ok ] &&
	[ "$(field source)" = "jar:file:$jar!/META-INF/native/$library/libtwheel-jni.so" ] && loaded=yes
if [ -e /dev/twheel ]; then
	# The module is loaded here, and qemu-user translates none of its
	# ioctls (ENOSYS): there is no documented answer to check.
	no_module="skipped (/dev/twheel exists)"
elif [ "$(field open)" = "$documented errno=2" ]; then
	no_module=documented
elif [ -z "$(field open)" ]; then
	no_module=untried
else
	no_module=wrong
fi
echo "aarch64: library=${library:-none} loaded=$loaded jvm=$jvm no_module=$no_module"
if [ $loaded != yes ] || [ "$no_module" = wrong ] || [ "$no_module" = untried ]; then
	echo "aarch64-test.sh: qemu-aarch64 java exited $rc; its output:" >&2
	cat "$tmp/out" "$tmp/err" >&2
	exit 1
fi
