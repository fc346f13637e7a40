# SPDX-License-Identifier: GPL-2.0
# Step (guest): the wheel kept in systemd's fd store. The example daemon
# (examples/fdstore) runs as its unit, with a test drop-in: 100,000 ids,
# 40 % due within 30 s, a shutdown that lingers 2 s. Then, as an
# operator would:
#  1. systemctl restart after 8 s: the new process must get the same
#     wheel; every id is still live with its deadline or expired and
#     read exactly once (by the old process or the new one), none lost;
#  2. SIGKILL, and Restart=on-failure brings it back: the same again;
#  3. systemctl stop + start: the store is emptied, a new wheel.
# twheel-fdstore check judges, with a dump of the daemon's wheel taken
# by pidfd_getfd(2).
. "$T/lib.sh"

unit=twheel-fdstore-example.service
state=/var/lib/twheel-fdstore-example
mkdir -p "/etc/systemd/system/$unit.d"
cat >"/etc/systemd/system/$unit.d/test.conf" <<EOC
[Service]
ExecStart=
ExecStart=/usr/local/bin/twheel-fdstore daemon --populate 100000 --window 30 --linger 2000
EOC
systemctl daemon-reload
systemctl stop "$unit" 2>/dev/null || true
rm -rf "/var/lib/private/twheel-fdstore-example"

mainpid() { systemctl show -p MainPID --value "$unit"; }
# judge NAME [SUFFIX]: run the check on the running daemon; its lines to
# the log, its restart: summary (with SUFFIX) to the report.
judge() {
	local out rc=0
	out=$(twheel-fdstore check --state "$state" --pid "$(mainpid)") || rc=$?
	echo "$out" >&2
	echo "$out" | grep '^restart: ids=' | sed "s/\$/${2:-}/"
	[ "$rc" = 0 ] || fail "$1: the check failed: $(echo "$out" | grep '^restart: ' | tr '\n' ' ')"
}

t0=$(date +%s)
systemctl start "$unit" || fail "systemctl start $unit failed: $(systemctl status "$unit" 2>&1 | tail -n 5)"
pid1=$(mainpid)
sleep 8
systemctl restart "$unit" || fail "systemctl restart failed"
pid2=$(mainpid)
[ "$pid2" != "$pid1" ] && [ "$pid2" != 0 ] || fail "no new process after the restart ($pid1 -> $pid2)"
judge "systemctl restart"

kill -KILL "$pid2"
for _ in $(seq 60); do
	pid3=$(mainpid)
	[ "$pid3" != 0 ] && [ "$pid3" != "$pid2" ] && systemctl is-active -q "$unit" && break
	sleep 1
done
[ "$pid3" != 0 ] && [ "$pid3" != "$pid2" ] || fail "Restart=on-failure did not bring it back after SIGKILL"
judge "SIGKILL, Restart=on-failure" " (after SIGKILL, restarted by Restart=on-failure)"

systemctl stop "$unit"
systemctl start "$unit" || fail "start after stop failed"
last=$(grep '^start ' "$state/log" | tail -n 1)
systemctl stop "$unit"
first_wheel=$(grep '^start ' "$state/log" | head -n 1 | sed 's/.* wheel=\([0-9]*\).*/\1/')
case $last in
*"adopted=0"*) ;;
*) fail "after stop + start the daemon still got a stored wheel: $last" ;;
esac
echo "$last" | grep -q " wheel=$first_wheel " && fail "after stop + start: the same wheel $first_wheel"
ok "$(uname -r): restart and SIGKILL kept the wheel (${pid1} -> ${pid2} -> ${pid3}), stop emptied the store; $(( $(date +%s) - t0 )) s"
