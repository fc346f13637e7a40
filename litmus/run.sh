#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The litmus tests of twheel's lockless patterns, run by herd7 against
# the Linux kernel memory model (LKMM), as tools/memory-model runs its
# own. Each NAME.litmus states one pattern of kmod/ (the due mark and
# its wakeup, the counts published before the mark is cleared, setup's
# and TOUCH_REGISTER's publication, the touch stamps), its comment says
# where in the code, and its "Result:" line what the model must answer:
# Never for what the code relies on, Sometimes for the variants it
# avoids or the races the uapi allows. TCG emulates arm64 with x86's
# stronger ordering, so a green VM run cannot show these; the model can.
#
#   litmus/run.sh
#
# herd7 (Debian's herdtools7, which needs a newer glibc than Debian 12's)
# runs in the sid chroot of vm/chroot.sh, installed there on first use;
# the model (linux-kernel.cat and its files) comes from the cached
# linux-source (vm/fetch-kernels.sh source). Prints one line per test,
#   lkmm: test=NAME expected=Never|Sometimes herd=Never|Sometimes|Always ok|FAIL
# then
#   lkmm: tests=N allowed_as_expected=N
# and exits 1 if any answer is not the expected one.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
model=$cache/linux-source/tree/tools/memory-model
root=$cache/chroot/sid
work=/twheel/lkmm

die() { echo "litmus/run.sh: $*" >&2; exit 2; }

[ -f "$model/linux-kernel.cat" ] || "$top/vm/fetch-kernels.sh" source >&2 ||
	die "no memory model in $model"
"$top/vm/chroot.sh" install herdtools7 >"$cache/chroot/herdtools7.log" 2>&1 ||
	{ tail -n 20 "$cache/chroot/herdtools7.log" >&2; die "herdtools7 did not install in the chroot"; }

# Into the chroot afresh, where herd7 can read them.
exec 9>"$cache/chroot/lkmm.lock"
flock 9
rm -rf "$root$work"
mkdir -p "$root$work"
cp "$model"/linux-kernel.* "$model"/lock.cat "$here"/*.litmus "$root$work/"

tests=0 good=0
for f in "$here"/*.litmus; do
	name=$(basename "$f" .litmus)
	want=$(sed -n 's/^ \* Result: *\([A-Za-z]*\).*/\1/p' "$f" | head -n 1)
	got=$("$top/vm/chroot.sh" run herd7 -I "$work" -conf "$work/linux-kernel.cfg" \
		"$work/$name.litmus" 2>&1 | sed -n "s/^Observation $name \\([A-Za-z]*\\) .*/\\1/p")
	tests=$((tests + 1))
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		good=$((good + 1))
		verdict=ok
	else
		verdict=FAIL
	fi
	echo "lkmm: test=$name expected=${want:-none} herd=${got:-error} $verdict"
done
echo "lkmm: tests=$tests allowed_as_expected=$good"
[ "$tests" -gt 0 ] && [ "$good" = "$tests" ]
