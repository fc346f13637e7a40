#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's library example is what a new user copies first: compile
# it exactly as it stands in README.md (the first ```c block under "## The
# library") with -std=c11 -Wall -Werror against the tree's lib/ and
# uapi/, and link it with lib/libtwheel.a; and check that <twheel.h>
# alone compiles under -std=c11. TAP on stdout; exit 1 if a test failed.
# Needs lib/ built (make lib); `make readme-test` does both.
#   tests/readme-example.sh            run the tests
#   tests/readme-example.sh --extract  print the example (the server test
#                                      builds and runs it on the server)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
extract() {
	awk '/^## The library/ { lib = 1; next }
	     lib && /^## / { exit }
	     lib && !code && /^```c$/ { code = 1; next }
	     code && /^```$/ { exit }
	     code' "$top/README.md"
}
if [ "${1:-}" = --extract ]; then
	extract
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
flags="-std=c11 -Wall -Werror -I$top/lib -I$top/uapi"
failed=0
t=0
check() {
	local name=$1
	shift
	t=$((t + 1))
	if "$@" >"$tmp/out" 2>&1; then
		echo "ok $t $name"
	else
		echo "not ok $t $name"
		sed 's/^/# /' "$tmp/out"
		failed=1
	fi
}

echo "TAP version 13"
echo "1..3"
extract >"$tmp/example.c"
check "README library example is a non-empty C block" test -s "$tmp/example.c"
check "README library example compiles and links with -std=c11 -Wall -Werror" \
	$cc $flags -o "$tmp/example" "$tmp/example.c" "$top/lib/libtwheel.a"
printf '#include <twheel.h>\n' >"$tmp/alone.c"
check "<twheel.h> alone compiles with -std=c11 -Wall -Werror -pedantic" \
	$cc $flags -pedantic -c -o "$tmp/alone.o" "$tmp/alone.c"
exit $failed
