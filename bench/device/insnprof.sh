#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions per operation, per kernel function, from two profiles of
# bench/device/insnprof.c: one of a run that did the operation N times and one
# of the same run that did it 0 times (bench/device/opprof.c; `make -C bench/device
# profile` runs both).
#
#   bench/device/insnprof.sh SYMS BASE.prof RUN.prof N
#
# SYMS: the guest's text symbols, "ADDRESS TYPE NAME [MODULE]" lines as
# /proc/kallsyms has them (the kernel booted with nokaslr, so every run
# has the same addresses). Prints "INSNS_PER_OP SHARE FUNCTION" for each
# function with at least 0.5 instruction an operation, dearest first, and
# the total; user space is one line, [user].
set -eu

[ $# = 4 ] || { echo "usage: $0 SYMS BASE.prof RUN.prof N" >&2; exit 2; }
syms=$1 base=$2 run=$3 n=$4

# Instructions per function of one profile: "FUNCTION COUNT" lines.
per_function() {
	{
		awk 'NF >= 3 && ($2 == "t" || $2 == "T") { print $1, "S", $3 }' "$syms"
		awk '{ print $1, "C", $2 }' "$1"
	} | LC_ALL=C sort -k1,1 -k2,2r |
		awk '$2 == "S" { cur = $3; next }
		     { f = $1 < "ffff800000000000" ? "[user]" : (cur == "" ? "[unknown]" : cur)
		       sum[f] += $3 }
		     END { for (f in sum) printf "%s %.0f\n", f, sum[f] }'
}

join -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(per_function "$base" | LC_ALL=C sort) \
	<(per_function "$run" | LC_ALL=C sort) |
	awk -v n="$n" '{ d = ($3 - $2) / n }
		       $1 == "[user]" { user = d; next }
		       { kernel += d; if (d >= 0.5 || d <= -0.5) printf "%.1f %s\n", d, $1 }
		       END { printf "%.1f [kernel total]\n%.1f [user]\n", kernel, user }' |
	sort -rn | awk '/\[kernel total\]/ { t = $1 } { line[NR] = $0; v[NR] = $1 }
		END { for (i = 1; i <= NR; i++) printf "%8.1f %5.1f%%  %s\n", v[i],
		      t ? 100 * v[i] / t : 0, substr(line[i], index(line[i], " ") + 1) }'
