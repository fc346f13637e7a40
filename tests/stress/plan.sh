#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The one reader of ./plan (which stress programs and examples run on
# which kernel, in what guest memory, with what on the kernel command
# line): scripts/check.sh and `make -C tests/stress check` ask it.
#
#   plan.sh kernels         every KERNEL[@icount] of the plan, in order
#   plan.sh mem KERNEL      its guest memory (2G if the plan says none)
#   plan.sh progs KERNEL    its programs, one a line, as paths from the
#                           top of the tree (tests/stress/NAME for a bare
#                           NAME, the path as written for one with a "/")
#   plan.sh bindings KERNEL the bindings whose tests run there (NAME of
#                           each bindings/NAME word), one a line
#   plan.sh bindings        those of every kernel, each once
#   plan.sh flags KERNEL    its +FLAG words, without the +, one a line
#   plan.sh vars KERNEL     its NAME=VALUE words, on one line
set -eu

here=$(cd "$(dirname "$0")" && pwd)

lines() { grep -Ev '^[[:space:]]*(#|$)' "$here/plan"; }
line() { lines | awk -v k="$1" '$1 == k'; }

case ${1:-} in
kernels) lines | awk '{ print $1 }' ;;
mem) line "$2" | awk '{ print $2 } END { if (!NR) print "2G" }' ;;
progs)
	line "$2" | awk '{ for (i = 3; i <= NF; i++) if ($i !~ /=/ && $i !~ /^(\+|bindings\/)/)
		print ($i ~ /\// ? $i : "tests/stress/" $i) }' ;;
bindings)
	if [ $# -ge 2 ]; then line "$2"; else lines; fi |
		awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^bindings\/[^\/]+$/ && !seen[$i]++)
			print substr($i, 10) }' ;;
flags) line "$2" | awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^\+/) print substr($i, 2) }' ;;
vars) line "$2" | awk '{ s = ""; for (i = 3; i <= NF; i++) if ($i ~ /=/)
		s = s (s == "" ? "" : " ") $i; print s }' ;;
*) sed -n 's/^#   plan.sh/plan.sh/p' "$0" >&2; exit 2 ;;
esac
