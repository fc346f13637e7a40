# SPDX-License-Identifier: GPL-2.0
# Step (guest): the administrator removes the packages; no module is left
# for any kernel (files and DKMS), nor what loads it at boot.
. "$T/lib.sh"

apt-get remove -y twheel-dkms libtwheel-dev libtwheel1 >&2 || fail "apt-get remove failed"
left=$(find /lib/modules /usr/lib/modules -name 'twheel.ko*' 2>/dev/null | sort -u)
[ -z "$left" ] || fail "left behind: $(echo $left)"
[ -z "$(dkms status twheel)" ] || fail "dkms still knows: $(dkms status twheel)"
for f in /usr/src/twheel-"$VERSION" /var/lib/dkms/twheel /usr/lib/modules-load.d/twheel.conf \
	/lib/udev/rules.d/60-twheel.rules /usr/lib/x86_64-linux-gnu/libtwheel.so.1 /usr/include/twheel.h; do
	[ ! -e "$f" ] || fail "left behind: $f"
done
ok "$(uname -r): apt removed the packages: no twheel.ko for any kernel, nothing in dkms, no modules-load.d entry"
