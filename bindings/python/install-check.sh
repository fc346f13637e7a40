#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The package as a new user gets it, on a host without the module (make
# install-check runs it):
#   sh install-check.sh PYTHON DIST README OUT
# Each artifact of DIST (the wheel, then the sdist, which pip builds with
# hatchling from PyPI) is installed with pip into a venv of its own, made
# by PYTHON -m venv in a new temporary directory, without the system's
# site-packages; the README's "From Python" example then runs there with
# python -I, from that directory, so that nothing of the source tree is on
# any path. It must stop with the line the README documents for a host
# without the module (readme_example.py --no-module). One line to OUT and
# stdout:
#   lang=python from=WHEEL,SDIST fresh=yes|no no_module=documented|wrong
# Exit status 1 unless fresh=yes and no_module=documented.
set -eu

python=$1 dist=$2 readme=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
device=/dev/twheel

if [ -e "$device" ]; then
	echo "install-check: $device exists here; the check wants a host without the module" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/twheel-python-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
"$python" "$here/readme_example.py" "$readme" >"$tmp/run/readme.py"
# (No documented line, and no output can match it.)
"$python" "$here/readme_example.py" --no-module "$readme" >"$tmp/expected" || :
expected=$(head -n 1 "$tmp/expected")

from= fresh=yes no_module=documented
for artifact in "$dist"/twheel-*.whl "$dist"/twheel-*.tar.gz; do
	if [ ! -f "$artifact" ]; then
		echo "install-check: no $artifact" >&2
		exit 1
	fi
	name=$(basename "$artifact")
	from=${from:+$from,}$name
	venv=$tmp/venv-$name
	"$python" -m venv "$venv"
	(cd "$tmp" && env -u PYTHONPATH "$venv/bin/pip" install -q --disable-pip-version-check \
		"$artifact")
	# Fresh: a venv, twheel imported from its own site-packages, and no
	# other site-packages nor anything of the tree on its path.
	if ! (cd "$tmp/run" && "$venv/bin/python" -I -c '
import sys, sysconfig, twheel
tree, site = sys.argv[1] + "/", sysconfig.get_path("purelib") + "/"
others = [p for p in sys.path if p.startswith(tree) or (
    p.endswith(("site-packages", "dist-packages")) and p + "/" != site)]
assert sys.prefix != sys.base_prefix, "not a venv"
assert twheel.__file__.startswith(site), twheel.__file__
assert not others, others
print("# " + sys.argv[2] + ": twheel from " + twheel.__file__)
' "$tree" "$name"); then
		fresh=no
	fi
	if (cd "$tmp/run" && "$venv/bin/python" -I readme.py) >"$tmp/stdout" 2>"$tmp/stderr"; then
		echo "# $name: the README example exited 0 without the module"
		no_module=wrong
	elif [ -z "$expected" ] || [ "$(tail -n 1 "$tmp/stderr")" != "$expected" ]; then
		echo "# $name: the README example ended otherwise than documented:"
		sed 's/^/#   /' "$tmp/stdout" "$tmp/stderr"
		no_module=wrong
	else
		echo "# $name: $(tail -n 1 "$tmp/stderr")"
	fi
done

line="lang=python from=$from fresh=$fresh no_module=$no_module"
mkdir -p "$(dirname "$out")"
echo "$line" >"$out"
echo "$line"
[ "$fresh" = yes ] && [ "$no_module" = documented ]
