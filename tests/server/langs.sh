#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the server test's users of the language bindings install, each the
# way its README says, built from this tree into OUT (default
# out/server-langs) for tests/server/run.sh --langs:
#   go/readme        the README's Go example, a static binary (CGO off): a
#                    Go service is deployed as its binary
#   python/          the wheel (python -m build) and the README's block
#   java/            the jar and the README's example compiled against it
#   node/            the npm tarball, the README's block, and an npm cache
#                    holding what `npm install` of the tarball fetches
#                    (node-addon-api), so the install in the image needs
#                    no network
#   tests/server/langs.sh [OUT]
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/out/server-langs}
version=$(cat "$top/VERSION")
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "${out:?}"/go "$out"/python "$out"/java "$out"/node
mkdir -p "$out/go" "$out/python" "$out/java" "$out/node"

# Go: the README's block is example/readme/main.go (readme-test.sh checks).
make -s -C "$top/bindings/go" vm-bins DIR="$out/go.tmp" >&2
cp "$out/go.tmp/readme" "$out/go/readme"
rm -rf "$out/go.tmp"

# Python: the wheel, installed with pip in the image.
make -s -C "$top/bindings/python" dist DIST="$out/python" >&2
python3 "$top/bindings/python/readme_example.py" "$top/README.md" >"$out/python/readme.py"

# Java: the jar and the README's class (readme-example.sh compiles it).
make -s -C "$top/bindings/java" vm-files DIR="$out/java.tmp" >&2
cp "$out/java.tmp/lib/twheel.jar" "$out/java/twheel-$version.jar"
cp -r "$out/java.tmp/readme" "$out/java/classes"
rm -rf "$out/java.tmp"

# Node: the tarball of `make pack`, and an npm cache with its dependency.
make -s -C "$top/bindings/node" pack OUT="$out/node" >&2
make -s -C "$top/bindings/node" readme-example.js >&2
cp "$top/bindings/node/readme-example.js" "$out/node/"
addon=$(sed -n 's/.*"node-addon-api": "\([^"]*\)".*/\1/p' "$top/bindings/node/package.json")
[ -n "$addon" ] || { echo "langs.sh: no node-addon-api version in package.json" >&2; exit 1; }
npm --cache "$out/node/npm-cache" --prefer-offline --no-audit --no-fund \
	cache add "node-addon-api@$addon" >&2
ls "$out"/go/readme "$out"/python/twheel-"$version"-py3-none-any.whl \
	"$out"/java/twheel-"$version".jar "$out"/node/twheel-"$version".tgz >/dev/null
echo "langs.sh: $out: go, python, java, node"
