#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A PROG of vm/run.sh (busybox sh, in the guest): runs a kselftest
# install (what `make -C tools/testing/selftests TARGETS=... install
# INSTALL_PATH=DIR` leaves in DIR), copied into the guest with --copy DIR,
# through its own run_kselftest.sh: each program with the timeout of its
# target's settings file, the program's TAP nested under "# ", then one
# "ok N selftests: TARGET: PROGRAM" (or "not ok ... # exit=N", "# TIMEOUT
# S seconds", "# SKIP") line per program. scripts/check.sh runs the
# selftests so, in every VM:
#   vm/run.sh --copy DIR KERNEL vm/kselftest.sh
# The runner writes the programs' output to /dev/stdout, which a bare
# devtmpfs has not: the usual links to /proc/self/fd are made where
# missing. It calls /usr/bin/timeout as GNU's, with --foreground and 124
# for a program it stopped; busybox's timeout knows neither, so where no
# GNU timeout is, a stand-in on busybox's is put there first.
set -eu

set -- /opt/*/run_kselftest.sh
[ $# = 1 ] && [ -x "$1" ] || {
	echo "kselftest.sh: want one kselftest install under /opt (vm/run.sh --copy DIR), found: $*" >&2
	exit 1
}

for n in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${n#*:}" ] || ln -s "/proc/self/fd/${n%%:*}" "/dev/${n#*:}"
done
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

if ! /usr/bin/timeout --foreground 5 true 2>/dev/null; then
	mkdir -p /usr/bin
	cat >/usr/bin/timeout <<'EOF'
#!/bin/sh
# GNU timeout as kselftest's runner calls it, on busybox's: --foreground
# dropped (busybox runs the program in the foreground anyway), and a
# program stopped at the limit (SIGTERM) answers 124 as under GNU's.
[ "$1" = --foreground ] && shift
/bin/busybox timeout "$@"
rc=$?
[ $rc = 143 ] && rc=124
exit $rc
EOF
	chmod +x /usr/bin/timeout
fi
exec "$1"
