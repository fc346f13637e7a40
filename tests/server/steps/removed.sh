# SPDX-License-Identifier: GPL-2.0
# Step (guest): the boot after the removal has no module and no device.
. "$T/lib.sh"

! grep -q '^twheel ' /proc/modules || fail "$(uname -r): twheel is loaded after the removal and a reboot"
[ ! -e /dev/twheel ] || fail "$(uname -r): /dev/twheel exists"
out=$(modprobe twheel 2>&1) && fail "$(uname -r): modprobe twheel still works"
ok "$(uname -r): after the reboot nothing loaded it and modprobe finds none: ${out#modprobe: }"
