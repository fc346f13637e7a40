# SPDX-License-Identifier: GPL-2.0
# Step (chroot): the administrator installs the three packages with apt;
# DKMS builds the module for the installed kernel, which has its headers.
# Then alice, who runs the service, is put in group twheel.
. "$T/lib.sh"

kver=$(default_kernel)
[ -d "/usr/src/linux-headers-$kver" ] || fail "no headers for $kver in the image"
cd /root/twheel-debs
apt-get install -y ./twheel-dkms_*.deb ./libtwheel1_*.deb ./libtwheel-dev_*.deb >&2 ||
	fail "apt-get install ./twheel-dkms_*.deb ./libtwheel1_*.deb ./libtwheel-dev_*.deb failed"
adduser alice twheel >&2 || fail "adduser alice twheel failed (no group twheel?)"
status=$(dkms status twheel)
echo "dkms status: $status" >&2
echo "$status" | grep -q "^twheel/$VERSION, $kver, x86_64: installed" ||
	fail "dkms did not install twheel/$VERSION for $kver: '$status'"
ko=$(find "/lib/modules/$kver" -name 'twheel.ko*')
[ -n "$ko" ] || fail "no twheel.ko under /lib/modules/$kver"
v=$(modinfo -F version "$ko")
[ "$v" = "$VERSION" ] || fail "$ko has version '$v', not $VERSION"
signer=$(modinfo -F signer "$ko")
[ -n "$signer" ] || fail "$ko is not signed (DKMS signs with /var/lib/dkms/mok.key)"
ok "apt installed twheel-dkms, libtwheel1, libtwheel-dev $VERSION; dkms built ${ko#/lib/modules/} (version $v, signed by '$signer'); alice added to group twheel"
