# SPDX-License-Identifier: GPL-2.0
#
# Sourced by every step of the server test, in the chroot or in the
# booted guest. A step's stdout is its report: one or more lines
# "server: NAME ok|FAIL detail" (ok and fail below), and other summary
# lines if it has any; its stderr goes to its log. $STEP is the step's
# name in the plan, $T the test's directory in the image; $T/env has
# VERSION (the release the packages were built from).
. "$T/env"

ok() { echo "server: $STEP ok $*"; }
fail() { echo "server: $STEP FAIL $*"; exit 1; }

# The kernel Debian boots by default: what /vmlinuz points to (Debian
# keeps it on the newest installed kernel, as GRUB's first entry).
default_kernel() {
	readlink /vmlinuz | sed 's|.*vmlinuz-||'
}
