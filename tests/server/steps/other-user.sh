# SPDX-License-Identifier: GPL-2.0
# Step (guest): bob, not in group twheel, gets EACCES opening /dev/twheel.
. "$T/lib.sh"

id -nG bob | grep -qw twheel && fail "bob is in group twheel"
out=$(su - bob -c /usr/local/bin/twheel-user-check\ open) && rc=0 || rc=$?
[ "$rc" = 3 ] || fail "bob: twheel_open() gave '$out' (exit $rc), not EACCES"
ok "$(uname -r): bob (not in group twheel): twheel_open() = ${out#open: }"
