// SPDX-License-Identifier: MIT
//
// Where libtwheel's headers and static library are, for binding.gyp:
//   node scripts/find-libtwheel.js include   the include directories
//   node scripts/find-libtwheel.js lib       the path of libtwheel.a
// From the twheel source tree named by $TWHEEL_TREE (its lib/ built),
// else from pkg-config's libtwheel (the libtwheel-dev package, or a
// `make install`), else from the usual system directories. Fails with a
// message naming what to install when nothing is found.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

function fromTree(tree) {
  return {
    include: [path.join(tree, 'lib'), path.join(tree, 'uapi')],
    lib: path.join(tree, 'lib', 'libtwheel.a'),
  };
}

function fromPkgConfig() {
  try {
    const run = (...args) => execFileSync('pkg-config', args, { encoding: 'utf8' }).trim();
    const include = run('--cflags-only-I', 'libtwheel').split(/\s+/).filter(Boolean)
      .map((f) => f.replace(/^-I/, ''));
    const libdir = run('--variable=libdir', 'libtwheel');
    const includedir = run('--variable=includedir', 'libtwheel');
    return { include: include.length ? include : [includedir], lib: path.join(libdir, 'libtwheel.a') };
  } catch {
    return null;
  }
}

function fromSystem() {
  const libs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib', '/usr/local/lib']
    .map((d) => path.join(d, 'libtwheel.a'));
  const lib = libs.find((f) => fs.existsSync(f));
  const inc = ['/usr/local/include', '/usr/include'].find((d) => fs.existsSync(path.join(d, 'twheel.h')));
  return lib && inc ? { include: [inc], lib } : null;
}

function find() {
  if (process.env.TWHEEL_TREE)
    return fromTree(path.resolve(process.env.TWHEEL_TREE));
  const found = fromPkgConfig();
  if (found && fs.existsSync(found.lib))
    return found;
  return fromSystem();
}

const what = process.argv[2];
const found = find();
const missing = !found ? 'libtwheel' :
  [found.lib, ...found.include.map((d) => path.join(d, 'linux', 'twheel.h'))]
    .filter((f) => !fs.existsSync(f))
    // <linux/twheel.h> sits in one of the include directories, not all.
    .filter((f) => !f.endsWith('twheel.h') || !found.include.some((d) => fs.existsSync(path.join(d, 'linux', 'twheel.h'))));
if (missing.length) {
  process.stderr.write(`twheel: libtwheel's headers and libtwheel.a not found (${missing}): ` +
    'install libtwheel-dev (or `make install` in the twheel tree), or set TWHEEL_TREE to a ' +
    'twheel source tree whose lib/ is built\n');
  process.exit(1);
}
process.stdout.write((what === 'lib' ? [found.lib] : found.include).join(' ') + '\n');
