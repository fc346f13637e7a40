# SPDX-License-Identifier: GPL-2.0
# Step (guest): the order service of examples/orders as its systemd unit
# (Restart=on-failure), with a test drop-in: a 5 s timeout, a 10 ms tick.
# twheel-orders drive creates 600 orders over 20 s, pays most at random
# times, kills the service with SIGKILL half-way (systemctl kill), lets
# systemd restart it, and at the end checks the database: every order
# ended exactly once, paid or cancelled, none early, none lost.
. "$T/lib.sh"

unit=twheel-orders-example.service
db=/var/lib/twheel-orders-example/orders.db
sock=/run/twheel-orders-example/orders.sock
mkdir -p "/etc/systemd/system/$unit.d"
cat >"/etc/systemd/system/$unit.d/test.conf" <<EOC
[Service]
ExecStart=
ExecStart=/usr/local/bin/twheel-orders daemon --db $db --sock $sock -t 5000 -T 10
RestartSec=3
EOC
systemctl daemon-reload
systemctl stop "$unit" 2>/dev/null || true
rm -rf "/var/lib/private/twheel-orders-example"

t0=$(date +%s)
systemctl start "$unit" || fail "systemctl start $unit failed: $(systemctl status "$unit" 2>&1 | tail -n 5)"
out=$(twheel-orders drive --db "$db" --sock "$sock" -t 5000 -T 10 \
	--kill-cmd "systemctl kill --signal=SIGKILL $unit") && rc=0 || rc=$?
echo "$out" >&2
restarts=$(systemctl show -p NRestarts --value "$unit")
journalctl -u "$unit" --no-pager -o cat >&2 || true
systemctl stop "$unit"
echo "$out" | grep '^orders: total='
[ "$rc" = 0 ] || fail "the check failed: $(echo "$out" | grep -E '^orders: (total|wrong)=' | tr '\n' ' ')"
[ "$restarts" = 1 ] || fail "systemd restarted the service $restarts times, not once"
ok "$(uname -r): killed with SIGKILL, restarted by systemd, $(echo "$out" | grep '^orders: wrong=' | sed 's/^orders: //'); $(( $(date +%s) - t0 )) s"
