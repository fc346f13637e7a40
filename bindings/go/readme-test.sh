#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The README's Go example is what a Go user copies first: take the first
# ```go block of its "## From Go" section, check that it is the program
# in example/readme/main.go (from its first blank line on: less its SPDX
# header), and build it as it stands, in a module of its own that requires
# twheel.dev/twheel from this tree. TAP on stdout; exit 1 on failure.
#   ./readme-test.sh README.md example/readme/main.go
set -eu

readme=$1
program=$2
here=$(cd "$(dirname "$0")" && pwd)
go=${GO:-go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk '/^## From Go/ { sec = 1; next }
     sec && /^## / { exit }
     sec && !code && /^```go$/ { code = 1; next }
     code && /^```$/ { exit }
     code' "$readme" >"$tmp/main.go"

failed=0
t=0
check() {
	name=$1
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
check "README Go example is a non-empty go block" test -s "$tmp/main.go"
mkdir "$tmp/want"
awk 'body { print } /^$/ { body = 1 }' "$program" >"$tmp/want/main.go"
check "README Go example is $program" diff -u "$tmp/want/main.go" "$tmp/main.go"
cat >"$tmp/go.mod" <<EOM
module example.com/readme

go 1.23

require twheel.dev/twheel v1.0.0

replace twheel.dev/twheel => $here
EOM
cp "$here/go.sum" "$tmp/go.sum"
check "README Go example builds and vets as it stands" \
	sh -c "cd '$tmp' && $go mod tidy && $go vet . && $go build -o /dev/null ."
exit $failed
