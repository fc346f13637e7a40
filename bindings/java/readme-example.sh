#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The README's Java example is what a new user copies first: take the
# first ```java block under "## From Java" of the main README (README=FILE:
# another, a draft) exactly as it stands, and compile it against the built
# jar with -Xlint:all -Werror into OUTDIR/classes, where the VM's tests run
# it (ExamplesTest). With --extract, only write the block to FILE (for
# install-check.sh, which builds it in a project of its own).
#   readme-example.sh OUTDIR
#   readme-example.sh --extract FILE
set -eu

here=$(cd "$(dirname "$0")" && pwd)
readme=${README:-$here/../../README.md}
version=$(cat "$here/../../VERSION")

extract() {
	awk '/^## From Java/ { sec = 1; next }
	     sec && /^## / { exit }
	     sec && !code && /^```java$/ { code = 1; next }
	     code && /^```$/ { exit }
	     code' "$readme" >"$1"
	grep -q 'public class Offline' "$1" || {
		echo "readme-example.sh: no java block with class Offline under '## From Java' in $readme" >&2
		exit 1
	}
}

if [ "$1" = --extract ]; then
	extract "$2"
	exit 0
fi
out=$1
rm -rf "$out"
mkdir -p "$out/classes"
extract "$out/Offline.java"
javac --release 17 -Xlint:all -Werror -cp "$here/target/twheel-$version.jar" -d "$out/classes" "$out/Offline.java"
echo "readme-example.sh: $readme's example compiles ($out/classes)"
