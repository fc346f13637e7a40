#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The package as a new user gets it: a fresh module (go mod init, an
# empty module cache) that takes twheel.dev/twheel with `go get` from the
# file proxy `make proxy` wrote (x/sys from the modules already
# downloaded, no network), holding the README's "From Go" program; built
# static, as a user ships it, then run here, where there is no module:
# it must fail with the message the README documents for that case.
#   ./install-check.sh README PROXY VERSION GO_CACHE OUTFILE
# Writes "lang=go from=twheel.dev/twheel@VERSION fresh=yes
# no_module=documented|wrong" to OUTFILE and stdout, and the program as
# install-example beside OUTFILE, for vm-test.sh to run against the
# module. Exit 1 unless documented.
set -eu

readme=$1
proxy=$2
version=$3
gocache=$4
outfile=$5
go=${GO:-go}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "$(dirname "$outfile")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

section() {
	awk '/^## From Go/ { sec = 1; next } sec && /^## / { exit } sec' "$readme"
}
mkdir "$tmp/app"
section | awk '!code && /^```go$/ { code = 1; next } code && /^```$/ { exit } code' >"$tmp/app/main.go"
# The documented failure: the `twheel: open: ...` of the section's text,
# its lines joined as Markdown joins them.
want=$(section | awk '/^```/ { code = !code; next } !code' | tr '\n' ' ' |
	sed -n 's/.*`\(twheel: open: [^`]*\)`.*/\1/p')
[ -n "$want" ] || { echo "install-check: no \`twheel: open: ...\` message in $readme's From Go" >&2; exit 1; }
if [ -e /dev/twheel ]; then
	echo "install-check: this host has /dev/twheel: the no-module case cannot be seen here" >&2
	exit 1
fi

(
	cd "$tmp/app"
	export GOMODCACHE="$tmp/mod" GOPROXY="file://$proxy,file://$gocache/mod/cache/download" \
		GONOSUMDB=twheel.dev GOFLAGS="-modcacherw -buildvcs=false" CGO_ENABLED=0
	$go mod init example.com/app
	# This machine cannot reach sum.golang.org: the app's go.sum starts
	# with the package's own hashes of x/sys (checked there when added),
	# as a user's go.sum that already has them does.
	grep '^golang.org/x/sys ' "$here/go.sum" >go.sum
	$go get "twheel.dev/twheel@$version"
	$go build -o "$dir/install-example" .
) >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }

rc=0
"$dir/install-example" >"$tmp/out" 2>&1 || rc=$?
# log.Fatal: the date, the error, exit 1.
if [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/out")" = 1 ] &&
	sed 's/^[0-9/]* [0-9:]* //' "$tmp/out" | grep -qxF "$want"; then
	result=documented
else
	result=wrong
	{
		echo "install-check: without the module the README example printed (exit $rc):"
		sed 's/^/  /' "$tmp/out"
		echo "install-check: the README documents: $want"
	} >&2
fi
line="lang=go from=twheel.dev/twheel@$version fresh=yes no_module=$result"
echo "$line" >"$outfile"
echo "$line"
[ "$result" = documented ]
