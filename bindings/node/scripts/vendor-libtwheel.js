// SPDX-License-Identifier: MIT
//
// Copies what the addon is built from out of the twheel tree into the
// package, so that the packed tarball builds with nothing but a compiler:
// libtwheel (lib/twheel.c, lib/twheel.h) and the uapi header it includes
// go to deps/libtwheel/, verbatim, each with its own SPDX line; LICENSE
// is the MIT text (LICENSES/preferred/MIT, the package's licence) with
// the copyright line of debian/copyright. `npm pack` runs it (prepack),
// and so does the Makefile before every build of the addon in the tree:
// there is one way the addon is built. A file whose content is unchanged
// is left alone, so that make does not rebuild the addon for nothing.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const pkg = path.join(__dirname, '..');
const tree = path.join(pkg, '..', '..');
const files = {
  'lib/twheel.c': 'deps/libtwheel/twheel.c',
  'lib/twheel.h': 'deps/libtwheel/twheel.h',
  'uapi/linux/twheel.h': 'deps/libtwheel/uapi/linux/twheel.h',
};

function fail(what) {
  process.stderr.write(`vendor-libtwheel: ${what}\n`);
  process.exit(1);
}

function put(rel, content) {
  const file = path.join(pkg, rel);
  if (fs.existsSync(file) && fs.readFileSync(file).equals(content))
    return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

for (const from of Object.keys(files)) {
  const file = path.join(tree, from);
  if (!fs.existsSync(file))
    fail(`${file} not found: run this in the twheel tree (bindings/node), where npm pack runs it`);
  const content = fs.readFileSync(file);
  // Copied whole, its licence travels with it; one without would not be ours to ship.
  if (!/^(\/\/|\/\*) SPDX-License-Identifier: /.test(content.toString('utf8', 0, 120)))
    fail(`${file} has no SPDX line`);
  put(files[from], content);
}

const mit = fs.readFileSync(path.join(tree, 'LICENSES', 'preferred', 'MIT'), 'utf8');
const text = mit.slice(mit.indexOf('License-Text:') + 'License-Text:'.length).trimStart();
const holder = /^Copyright: (.+)$/m.exec(fs.readFileSync(path.join(tree, 'debian', 'copyright'), 'utf8'));
if (!text.startsWith('MIT License') || !holder)
  fail('LICENSES/preferred/MIT or the Copyright line of debian/copyright is not as expected');
put('LICENSE', Buffer.from(text.replace('<year> <copyright holders>', holder[1]) + `
The files under deps/libtwheel/ are libtwheel's sources (LGPL-2.1 OR MIT)
and the module's uapi header ((GPL-2.0 WITH Linux-syscall-note) OR MIT),
copied from the twheel tree; each names its licence in its SPDX line, and
each may be used under the MIT licence above.
`));
