#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the Debian 12 server image of `make server-test`, once: a raw ext4
# disk image made with debootstrap from the host's Debian mirror, booted
# later under QEMU with its own kernel, initramfs and systemd. Prints the
# image's path. Cached as $TWHEEL_CACHE/server/base-KEY.img, KEY a hash of
# the code that makes it (build() below and lib.sh's chroot functions, not
# the comments), so a change to what goes in makes a new one; the build
# takes ~10 min on an idle machine and needs the network (the mirror).
#
# What a freshly installed small server has, and no more: the standard
# system (debootstrap's default variant), systemd as init, Debian's
# bookworm kernel (linux-image-amd64, 6.1) with its headers, a compiler
# and pkg-config for building against the library, two users (alice,
# bob). Downloaded, not installed, so the test does not depend on the
# mirror still serving them: dkms, the newest Debian 6.12 kernel with its
# headers (bookworm-security) that the test upgrades to, and the language
# runtimes an administrator installs for a service written in Python,
# Java or Node.js (python3-venv, openjdk-17-jre-headless; nodejs, npm and
# libnode-dev, which npm's node-gyp builds addons against).
#
#   tests/server/build-image.sh           build if needed; print the path
#   tests/server/build-image.sh --cached  print the path if built, else exit 1
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

build() {
	debootstrap --include=systemd-sysv,udev,dbus,kmod,initramfs-tools,ca-certificates \
		"$suite" "$mnt" "$mirror"
	cat >"$mnt/etc/apt/sources.list" <<-EOS
	deb $mirror $suite main
	deb $mirror $suite-updates main
	deb $security $suite-security main
	EOS
	echo twheel-server >"$mnt/etc/hostname"
	echo 'LABEL=twheel-root / ext4 errors=remount-ro 0 1' >"$mnt/etc/fstab"
	chroot_sh '
		apt-get update -q
		apt-get dist-upgrade -y -q
		apt-get install -y -q linux-image-amd64 linux-headers-amd64 build-essential pkg-config libsqlite3-dev
		# The 6.12 kernel to upgrade to: the newest image/headers pair.
		abi=$(apt-cache pkgnames linux-image-6.12. |
			sed -n "s/^linux-image-\(6\.12\.[0-9]*+deb12\)-amd64$/\1/p" | sort -rV |
			while read -r n; do
				apt-cache show "linux-headers-$n-amd64" >/dev/null 2>&1 && { echo "$n"; break; }
			done)
		[ -n "$abi" ] || { echo "no linux-image-6.12.*+deb12-amd64 with headers" >&2; exit 1; }
		echo "$abi-amd64" >/etc/twheel-server-kernel2
		apt-get install -d -y -q dkms "linux-image-$abi-amd64" "linux-headers-$abi-amd64"
		apt-get install -d -y -q python3-venv openjdk-17-jre-headless nodejs npm libnode-dev
		useradd -m -s /bin/bash alice
		useradd -m -s /bin/bash bob
		passwd -d root
		# Nothing that runs by itself in the background while tests run.
		systemctl disable apt-daily.timer apt-daily-upgrade.timer man-db.timer \
			e2scrub_all.timer fstrim.timer 2>/dev/null || true
	'
}

key=$({ declare -f build in_image chroot_sh; echo "$suite"; } | sha256sum | cut -c1-12)
image=$sdir/base-$key.img
if [ -f "$image" ]; then
	echo "$image"
	exit 0
fi
[ "${1:-}" = --cached ] && exit 1
[ "$(id -u)" = 0 ] || { echo "tests/server/build-image.sh: run as root" >&2; exit 2; }

mirror=$(host_mirror "$suite")
security=$(host_mirror "$suite-security")
[ -n "$mirror" ] && [ -n "$security" ] || {
	echo "tests/server/build-image.sh: the host's apt sources name no $suite and $suite-security main" >&2
	exit 2
}

mkdir -p "$sdir"
exec 9>"$sdir/build.lock"
flock 9
if [ -f "$image" ]; then echo "$image"; exit 0; fi
echo "tests/server/build-image.sh: building $image from $mirror (log: $sdir/build.log)" >&2
rm -f "$sdir"/base-*.img "$sdir"/base-*.img.tmp
tmp=$image.tmp
truncate -s 8G "$tmp"
mkfs.ext4 -q -F -L twheel-root "$tmp"
export -f build
export suite mirror security
in_image "$tmp" build >"$sdir/build.log" 2>&1 || {
	tail -n 30 "$sdir/build.log" >&2
	echo "tests/server/build-image.sh: the image build failed (log: $sdir/build.log)" >&2
	exit 1
}
mv "$tmp" "$image"
echo "$image"
