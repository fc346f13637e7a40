#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The npm tarball as a new user gets it, on a host without the module
# (make install-check):
#   scripts/install-check.sh TARBALL README OUT NPM_CACHE
# A new project in a new temporary directory, `npm install TARBALL` there
# with nothing of the tree and no libtwheel on any path (the addon builds
# from the package's own deps/libtwheel/), then the README's "From
# Node.js" example run there with node. It must fail with the line the
# README documents for a host without the module (the first line of the
# plain block after the example), which Node prints in the uncaught
# error's report. One line to OUT and stdout:
#   lang=node from=TARBALL fresh=yes|no no_module=documented|wrong
# fresh=yes: the package resolves inside the project, and both objects
# of the addon were compiled from its deps/libtwheel/ headers and from no
# file of the tree. Exit status 1 unless fresh=yes and no_module=documented.
set -eu

tarball=$(realpath "$1") readme=$2 out=$3 cache=$4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
device=/dev/twheel

if [ -e "$device" ]; then
	echo "install-check: $device exists here; the check wants a host without the module" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/twheel-node-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
app=$tmp/app
mkdir "$app"
sh "$here/readme-example.sh" "$readme" >"$app/readme.js"
# (No documented line: no output can match it.)
expected=$(sh "$here/readme-example.sh" --no-module "$readme" || :)

# As a user's shell would have it, less anything that could lead the
# build or Node to the tree or to an installed libtwheel.
clean_env() {
	env -u NODE_PATH -u CPATH -u C_INCLUDE_PATH -u CPLUS_INCLUDE_PATH \
		-u LIBRARY_PATH -u PKG_CONFIG_PATH "$@"
}

# The install script approved, as npm 11.16 and later ask of a user
# (npm install-scripts approve twheel) and npm 12 requires.
printf '{ "name": "install-check", "version": "0.0.0", "private": true,\n  "allowScripts": { "file:%s": true } }\n' \
	"$tarball" >"$app/package.json"
if ! (cd "$app" && clean_env nice -n 10 npm --cache "$cache" --prefer-offline --no-audit --no-fund \
	install "$tarball") >"$tmp/npm.log" 2>&1; then
	sed 's/^/# /' "$tmp/npm.log"
	echo "install-check: npm install of $tarball failed" >&2
	exit 1
fi

fresh=yes
pkg=$app/node_modules/twheel
resolved=$(cd "$app" && clean_env node -p "require.resolve('twheel')")
if [ "$resolved" != "$pkg/index.js" ]; then
	echo "# twheel resolves to $resolved, not to the project's $pkg"
	fresh=no
fi
# gyp's dependency files (-MMD: every header outside the system's
# directories), one per object: each must name the package's own copies,
# which come first on the include path, and nothing of the tree.
deps=$pkg/build/Release/.deps/Release/obj.target/twheel
for d in "$deps/src/twheel_node.o.d" "$deps/deps/libtwheel/twheel.o.d"; do
	if ! grep -q ' \.\./deps/libtwheel/twheel\.h' "$d" ||
		! grep -q ' \.\./deps/libtwheel/uapi/linux/twheel\.h' "$d"; then
		echo "# ${d#"$pkg"/} does not show the package's deps/libtwheel/ headers"
		fresh=no
	elif grep -qF "$top/" "$d"; then
		echo "# ${d#"$pkg"/} names files of the tree $top"
		fresh=no
	fi
done

no_module=documented
if (cd "$app" && clean_env node readme.js) >"$tmp/stdout" 2>"$tmp/stderr"; then
	echo "# the README example exited 0 without the module"
	no_module=wrong
elif [ -z "$expected" ] || ! grep -qxF "$expected" "$tmp/stderr"; then
	echo "# the README example ended otherwise than documented (${expected:-no documented line}):"
	sed 's/^/#   /' "$tmp/stdout" "$tmp/stderr"
	no_module=wrong
else
	echo "# $(basename "$tarball"): $expected"
fi

line="lang=node from=$(basename "$tarball") fresh=$fresh no_module=$no_module"
mkdir -p "$(dirname "$out")"
echo "$line" >"$out"
echo "$line"
[ "$fresh" = yes ] && [ "$no_module" = documented ]
