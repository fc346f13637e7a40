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
# openjdk-17-jre-headless and its Depends for arm64, unpacked by
# vm/extract-root.sh (apt-get download on private lists, dpkg-deb -x, no
# maintainer scripts). Needs qemu-user and debian-archive-keyring.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
jar=$(realpath "$1")
tests=$(realpath "$2")
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}/java
root=$cache/arm64-sysroot
java=$root/usr/lib/jvm/java-17-openjdk-arm64/bin/java
documented='org.twheel.TwheelException: open /dev/twheel: ENOENT (No such file or directory)'

die() { echo "aarch64-test.sh: $*" >&2; exit 1; }
command -v qemu-aarch64 >/dev/null || die "no qemu-aarch64: install qemu-user (scripts/setup.sh bindings)"
grep -qF "$documented" "$here/../../README.md" || die "the main README does not document '$documented'"

# The JVM finds its home from the host path of its binary, so the
# sysroot's absolute links (conf/ and jvm.cfg into /etc) would resolve on
# the host: make them relative, once, under the root's lock.
"$here/../../vm/extract-root.sh" arm64 "$root" openjdk-17-jre-headless
(
	flock 9
	find "$root" -type l -lname '/*' | while read -r l; do
		ln -sfnr "$root$(readlink "$l")" "$l"
	done
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
