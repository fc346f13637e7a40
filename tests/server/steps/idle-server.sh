# SPDX-License-Identifier: GPL-2.0
# Step (guest): the TCP idle-drop example (examples/idle-server) on the
# server: 1000 connections over loopback, 200 going silent, dropped
# through the touch table; none early, no live one dropped.
. "$T/lib.sh"

out=$(twheel-idle-server) && rc=0 || rc=$?
echo "$out" >&2
echo "$out" | grep '^idle-server: conns='
[ "$rc" = 0 ] || fail "the check failed: $(echo "$out" | grep '^idle-server: conns=')"
ok "$(uname -r): $(echo "$out" | grep '^idle-server: detection' | sed 's/^idle-server: //')"
