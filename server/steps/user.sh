# SPDX-License-Identifier: GPL-2.0
# Step (guest): alice, in group twheel, builds the heartbeat check and
# the README's library example with pkg-config against the installed
# library and runs them; bob, not in the group, cannot open the device.
. "$T/lib.sh"

cp "$T/heartbeat.c" "$T/readme-example.c" /home/alice/
chown alice: /home/alice/heartbeat.c /home/alice/readme-example.c
cflags='-std=c11 -Wall -Werror -O2'
out=$(su - alice -c "cc $cflags -o heartbeat heartbeat.c \$(pkg-config --cflags --libs libtwheel) &&
	./heartbeat") && rc=0 || rc=$?
echo "$out" >&2
hb=$(echo "$out" | grep '^heartbeat:' || true)
[ "$rc" = 0 ] || fail "alice: heartbeat exit $rc: ${hb:-no output (build failed?)}"
ex=$(su - alice -c "cc $cflags -o readme-example readme-example.c \$(pkg-config --cflags --libs libtwheel) &&
	./readme-example") && rc=0 || rc=$?
echo "$ex" >&2
[ "$rc" = 0 ] && [ "$ex" = "offline: 7" ] ||
	fail "alice: the README example (exit $rc) printed '$ex', not 'offline: 7'"
pc=$(pkg-config --modversion libtwheel)
[ "$pc" = "$VERSION" ] || fail "pkg-config says libtwheel $pc, not $VERSION"
install -m 755 /home/alice/heartbeat /usr/local/bin/twheel-heartbeat
ok "$(uname -r): alice (group twheel) built with pkg-config (libtwheel $pc) and ran it: ${hb#heartbeat: }; README example: $ex"
