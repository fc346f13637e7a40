# SPDX-License-Identifier: GPL-2.0
# Step (chroot): the administrator installs the runtimes of a service
# written in Python, Java or Node.js from Debian (downloaded into the
# image's apt cache by build-image.sh), and alice installs the bindings
# into her home the way each README says: the wheel with pip into a
# venv, the npm tarball with npm install (node-gyp builds the addon
# against the installed libtwheel-dev; node-addon-api from the npm cache
# langs.sh filled, no network), the jar on the class path; the Go
# service is its static binary. In the chroot because npm builds C++.
. "$T/lib.sh"

L=$T/langs
[ -d "$L/go" ] || fail "no $L: tests/server/run.sh --langs DIR (make server-langs) puts the bindings there"
apt-get install -y --no-download python3-venv openjdk-17-jre-headless nodejs npm libnode-dev >&2 ||
	fail "apt-get install python3-venv openjdk-17-jre-headless nodejs npm libnode-dev failed (not in the image's apt cache?)"
app=/home/alice/langs
rm -rf "$app"
mkdir -p "$app"
cp -r "$L"/. "$app"/
chown -R alice: "$app"
as_alice() { su - alice -c "$1" >&2; }

as_alice "python3 -m venv ~/langs/venv && ~/langs/venv/bin/pip install --no-index --disable-pip-version-check ~/langs/python/twheel-$VERSION-py3-none-any.whl" ||
	fail "python: pip install of the wheel into a venv failed"
py=$(su - alice -c "~/langs/venv/bin/python -c 'import importlib.metadata as m; print(m.version(\"twheel\"))'")
[ "$py" = "$VERSION" ] || fail "python: the venv has twheel '$py', not $VERSION"
as_alice "mkdir -p ~/langs/app && cd ~/langs/app && printf '{ \"name\": \"app\", \"version\": \"1.0.0\", \"private\": true }\n' >package.json &&
	npm --cache ~/langs/node/npm-cache --offline --no-audit --no-fund install ~/langs/node/twheel-$VERSION.tgz" ||
	fail "node: npm install of twheel-$VERSION.tgz failed"
[ -f "$app/app/node_modules/twheel/build/Release/twheel.node" ] ||
	fail "node: npm install built no twheel.node"
cp "$app/node/readme-example.js" "$app/app/"
chown alice: "$app/app/readme-example.js"
ok "python3 $(python3 -c 'import sys; print(sys.version.split()[0])'): pip installed twheel $py in a venv; node $(node --version): npm installed twheel-$VERSION.tgz and built its addon against libtwheel $(pkg-config --modversion libtwheel); $(java -version 2>&1 | head -n 1); Go binary $(stat -c %s "$app/go/readme") bytes"
