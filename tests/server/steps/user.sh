# SPDX-License-Identifier: GPL-2.0
# Step (guest): alice, in group twheel, builds the user check (user-check.c) and
# the README's library example with pkg-config against the installed
# library and runs them; bob, not in the group, cannot open the device.
. "$T/lib.sh"

cp "$T/user-check.c" "$T/readme-example.c" /home/alice/
chown alice: /home/alice/user-check.c /home/alice/readme-example.c
cflags='-std=c11 -Wall -Werror -O2'
out=$(su - alice -c "cc $cflags -o user-check user-check.c \$(pkg-config --cflags --libs libtwheel) &&
	./user-check") && rc=0 || rc=$?
echo "$out" >&2
hb=$(echo "$out" | grep '^user-check:' || true)
[ "$rc" = 0 ] || fail "alice: user-check exit $rc: ${hb:-no output (build failed?)}"
ex=$(su - alice -c "cc $cflags -o readme-example readme-example.c \$(pkg-config --cflags --libs libtwheel) &&
	./readme-example") && rc=0 || rc=$?
echo "$ex" >&2
[ "$rc" = 0 ] && [ "$ex" = "offline: 7" ] ||
	fail "alice: the README example (exit $rc) printed '$ex', not 'offline: 7'"
pc=$(pkg-config --modversion libtwheel)
[ "$pc" = "$VERSION" ] || fail "pkg-config says libtwheel $pc, not $VERSION"
install -m 755 /home/alice/user-check /usr/local/bin/twheel-user-check
ok "$(uname -r): alice (group twheel) built with pkg-config (libtwheel $pc) and ran it: ${hb#user-check: }; README example: $ex"
