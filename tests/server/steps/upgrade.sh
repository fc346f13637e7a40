# SPDX-License-Identifier: GPL-2.0
# Step (chroot): the administrator installs Debian's 6.12 kernel with its
# headers (bookworm-security); DKMS builds the module for it by itself.
. "$T/lib.sh"

k2=$(cat /etc/twheel-server-kernel2)
apt-get install -y "linux-image-$k2" "linux-headers-$k2" >&2 ||
	fail "apt-get install linux-image-$k2 linux-headers-$k2 failed"
status=$(dkms status twheel -k "$k2")
echo "dkms status: $(dkms status twheel)" >&2
echo "$status" | grep -q "^twheel/$VERSION, $k2, x86_64: installed" ||
	fail "dkms did not build twheel/$VERSION for $k2: '$status'"
ko=$(find "/lib/modules/$k2" -name 'twheel.ko*')
[ -n "$ko" ] || fail "no twheel.ko under /lib/modules/$k2"
[ "$(default_kernel)" = "$k2" ] || fail "the default kernel is $(default_kernel), not $k2"
signer=$(modinfo -F signer "$ko")
[ -n "$signer" ] || fail "$ko is not signed (DKMS signs with /var/lib/dkms/mok.key)"
ok "apt installed linux-image-$k2 and its headers; dkms built ${ko#/lib/modules/} by itself (signed by '$signer'); $k2 boots next"
