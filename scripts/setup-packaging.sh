#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the packaging targets need on a Debian 12 host, per
# purpose (foldable into scripts/setup.sh's list):
#   deb      `make deb`: Debian's package tools, and lintian to check them
#   server   `make server-test`: debootstrap for the image, QEMU to boot
#            it, mkfs.ext4 and mount (loop) to make and open its disk
# Idempotent: asks dpkg first, runs apt-get only when a package is missing.
set -eu

packages() {
	case $1 in
	deb) echo dpkg-dev debhelper dh-dkms fakeroot lintian build-essential ;;
	server) echo debootstrap qemu-system-x86 e2fsprogs util-linux mount ;;
	*) echo "usage: scripts/setup-packaging.sh deb|server..." >&2; exit 2 ;;
	esac
}

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

[ $# -ge 1 ] || packages ""
need=
for purpose; do
	for p in $(packages "$purpose"); do
		installed "$p" || need="$need $p"
	done
done
[ -z "$need" ] && exit 0
[ "$(id -u)" = 0 ] || exec sudo -E "$0" "$@"
export DEBIAN_FRONTEND=noninteractive
echo "setup-packaging: installing:$need"
apt-get update -q
# shellcheck disable=SC2086 # one word per package
apt-get install -y -q --no-install-recommends $need
