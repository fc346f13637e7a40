#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make style`: checkpatch.pl --strict over kmod/, uapi/ and lib/, one
# TAP test per file. checkpatch.pl (with spelling.txt and
# const_structs.checkpatch beside it) comes from the linux-source of the
# debug line in the cache (vm/fetch-kernels.sh source), never from the
# repo. Exit status 1 if any file has a finding.
#
# Checkpatch types ignored, each only where the reason holds:
#   kmod/compat.h  LINUX_VERSION_CODE, CONSTANT_COMPARISON: the one file
#                  whose job is kernel-version checks, written as every
#                  out-of-tree compat header writes them
#                  (LINUX_VERSION_CODE < KERNEL_VERSION(x, y, z));
#                  DEPRECATED_API: it supplies the new interface with the
#                  old one on the kernels that lack the new.
#   uapi/          BIT_MACRO: BIT() is kernel-internal and the uapi
#                  header is included by userspace.
#   kmod/wheel.[ch] BIT_MACRO: also compiled on the host for the core's
#                  tests (tests/core/host.h has no BIT()).
#   kmod/trace.h   OPEN_ENDED_LINE, PARENTHESIS_ALIGNMENT: TRACE_EVENT()
#                  laid out as the kernel's own include/trace/events/*.h
#                  (TP_PROTO(, TP_STRUCT__entry( ... on lines of their own).
#   lib/           PREFER_KERNEL_TYPES: a userspace library, where the
#                  <stdint.h> types are the right ones.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
checkpatch=$cache/linux-source/tree/scripts/checkpatch.pl

[ -f "$checkpatch" ] || "$top/vm/fetch-kernels.sh" source
# shellcheck disable=SC1091,SC2154 # written by vm/fetch-kernels.sh
echo "# checkpatch.pl --strict of $(. "$cache/linux-source/env" && echo "$package $version")"

ignores() {
	case $1 in
	kmod/compat.h) echo LINUX_VERSION_CODE,CONSTANT_COMPARISON,DEPRECATED_API ;;
	uapi/*|kmod/wheel.[ch]) echo BIT_MACRO ;;
	kmod/trace.h) echo OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT ;;
	lib/*) echo PREFER_KERNEL_TYPES ;;
	esac
}

cd "$top"
n=0 bad=0
# The sources, not what a build left beside them (twheel.mod.c).
files=$(if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files 'kmod/*.[ch]' kmod/Kconfig kmod/Kbuild Kbuild 'uapi/linux/*.h' 'lib/*.[ch]'
else
	ls kmod/*.[ch] kmod/Kconfig kmod/Kbuild Kbuild uapi/linux/*.h lib/*.[ch] | grep -v '\.mod\.c$'
fi)
echo "1..$(echo "$files" | wc -l)"
for f in $files; do
	n=$((n + 1))
	ign=$(ignores "$f")
	if report=$(perl "$checkpatch" --no-tree --strict --show-types --terse --quiet \
		${ign:+--ignore "$ign"} -f "$f" 2>&1); then
		echo "ok $n $f"
	else
		printf '# %s\n' "${report//$'\n'/$'\n'# }"
		echo "not ok $n $f"
		bad=1
	fi
done
exit "$bad"
