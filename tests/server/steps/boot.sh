# SPDX-License-Identifier: GPL-2.0
# Step (guest): after the boot, the module was loaded by systemd from
# modules-load.d, and udev gave /dev/twheel to group twheel, mode 0660.
. "$T/lib.sh"

# Whether systemd-modules-load loaded twheel in this boot: its journal
# says so (by identifier: its lines may lose their unit, it exits so
# fast), or else the module's first kernel line falls within its run.
loaded_at_boot() {
	local start end t
	grep -qx twheel /usr/lib/modules-load.d/twheel.conf || return 1
	[ "$(systemctl show -P Result systemd-modules-load.service)" = success ] || return 1
	journalctl -b -t systemd-modules-load --no-pager >&2 || true
	journalctl -b -t systemd-modules-load --no-pager | grep -q "Inserted module 'twheel'" && return 0
	start=$(systemctl show -P ExecMainStartTimestampMonotonic systemd-modules-load.service)
	end=$(systemctl show -P ExecMainExitTimestampMonotonic systemd-modules-load.service)
	t=$(dmesg | sed -n 's/^\[ *\([0-9]*\)\.\([0-9]*\)\] twheel: .*/\1\2/p' | head -n 1)
	echo "systemd-modules-load ran from $start to $end us; first twheel line at ${t:-none} us" >&2
	[ -n "$t" ] && [ "$t" -ge "$start" ] && [ "$t" -le "$end" ]
}

kver=$(uname -r)
[ "$kver" = "$(default_kernel)" ] || fail "booted $kver, but the default kernel is $(default_kernel)"
grep -q '^twheel ' /proc/modules || fail "$kver: twheel is not loaded after boot"
loaded_at_boot || fail "$kver: twheel is loaded, but systemd-modules-load did not load it"
v=$(cat /sys/module/twheel/version)
[ "$v" = "$VERSION" ] || fail "$kver: the loaded module is version '$v', not $VERSION"
[ -c /dev/twheel ] || fail "$kver: no /dev/twheel"
perm=$(stat -c '%U:%G %a' /dev/twheel)
[ "$perm" = "root:twheel 660" ] || fail "$kver: /dev/twheel is '$perm', not 'root:twheel 660'"
problems=$(dmesg | grep -E 'BUG:|WARNING:|Oops|Call Trace' || true)
[ -z "$problems" ] || fail "$kver: kernel log: $(echo "$problems" | head -n 1)"
ok "$kver: twheel $v loaded at boot by systemd-modules-load; /dev/twheel $perm"
