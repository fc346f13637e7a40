# SPDX-License-Identifier: GPL-2.0
#
# Shared by tests/server/build-image.sh and tests/server/run.sh (sourced, bash): where
# the image lives, which Debian mirror it comes from, and how to work in
# the image's chroot on the host.
#
# A chroot session runs in its own mount namespace (unshare -m): the loop
# mount of the image and the /proc, /sys and /dev mounts under it vanish
# with the session however it ends, and the loop device is freed with
# them, so a killed run leaves nothing mounted on the host.

cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
sdir=$cache/server
suite=bookworm

# The mirrors are the host's own (its apt sources), so the image comes
# from the registry the host installs from.
host_mirror() {
	apt-get indextargets --format '$(REPO_URI)' "Release: $1" 'Identifier: Packages' \
		'Component: main' 2>/dev/null | head -n 1
}

# in_image IMAGE CMD...: run CMD (a program, or a function exported with
# export -f) with IMAGE mounted at $mnt, with errexit on, in a private
# mount namespace. The exit status is CMD's.
in_image() {
	local image=$1 rc=0
	shift
	mkdir -p "$sdir/mnt.$$"
	unshare --mount --propagation private bash -u -c '
		export mnt=$1
		mount -o loop "$2" "$mnt" || exit 1
		shift 2
		set +e
		(set -e; "$@")
		rc=$?
		rm -f "$mnt/usr/sbin/policy-rc.d"
		exit $rc
	' in_image "$sdir/mnt.$$" "$image" "$@" || rc=$?
	rmdir "$sdir/mnt.$$" 2>/dev/null || true
	return $rc
}

# chroot_sh SCRIPT: run the bash SCRIPT (errexit on) in the chroot of the
# image that in_image mounted, with /proc, /sys and /dev mounted in it and
# services kept from starting (policy-rc.d), as in any chroot install.
chroot_sh() {
	if ! mountpoint -q "$mnt/proc"; then
		mount -t proc proc "$mnt/proc"
		mount -t sysfs sysfs "$mnt/sys"
		mount --rbind /dev "$mnt/dev"
	fi
	printf '#!/bin/sh\nexit 101\n' >"$mnt/usr/sbin/policy-rc.d"
	chmod 755 "$mnt/usr/sbin/policy-rc.d"
	LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		chroot "$mnt" /bin/bash -eu -c "$1"
}
export -f chroot_sh
