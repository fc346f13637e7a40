#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The README's Java example is what a new user copies first: take the
# first ```java block under "## From Java" of the main README exactly
# as it stands, and compile it against the built jar with -Xlint:all -Werror into
# OUTDIR/classes, where the VM's tests run it (ExamplesTest).
#   readme-example.sh OUTDIR
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=$1
readme=$here/../../README.md
version=$(cat "$here/../../VERSION")
rm -rf "$out"
mkdir -p "$out/classes"
awk '/^## From Java/ { sec = 1; next }
     sec && /^## / { exit }
     sec && !code && /^```java$/ { code = 1; next }
     code && /^```$/ { exit }
     code' "$readme" >"$out/Offline.java"
grep -q 'public class Offline' "$out/Offline.java" || {
	echo "readme-example.sh: no java block with class Offline under '## From Java' in $readme" >&2
	exit 1
}
javac --release 17 -Xlint:all -Werror -cp "$here/target/twheel-$version.jar" -d "$out/classes" "$out/Offline.java"
echo "readme-example.sh: $readme's example compiles ($out/classes)"
