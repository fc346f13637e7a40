#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The README promises the glibc the JNI library runs on; the linker
# decides what it needs. Measure it (the highest GLIBC_x version among
# the library's version needs, readelf -V: what the dynamic loader
# checks at load time) and fail unless the README's first "glibc X.Y or
# newer" is that version: above it, a new libc call has quietly raised
# the requirement; below it, the README turns away systems that would work.
#   glibc-check.sh README LIB.so...   (the highest of the libraries counts)
set -eu

readme=$1
shift
stated=$(grep -o 'glibc [0-9][0-9.]* or newer' "$readme" | head -n 1 | cut -d' ' -f2)
if [ -z "$stated" ]; then
	echo "glibc-check.sh: $readme states no 'glibc X.Y or newer'" >&2
	exit 1
fi
highest=
for so in "$@"; do
	needed=$(readelf -W -V "$so" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
	echo "glibc-check.sh: $so needs GLIBC_$needed"
	highest=$(printf '%s\n%s\n' "$highest" "$needed" | sort -V | tail -n 1)
done
if [ "$highest" != "$stated" ]; then
	echo "glibc-check.sh: the libraries need glibc $highest, $readme states $stated" >&2
	exit 1
fi
echo "glibc-check.sh: glibc $highest, as $readme states"
