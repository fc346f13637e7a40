// SPDX-License-Identifier: MIT
//
// The package's install script: node-gyp rebuild of the addon against the
// headers of the Node that runs it. Those ship with every Node (Debian's
// nodejs and the official builds have PREFIX/include/node), so node-gyp is
// given that directory (--nodedir) and never downloads headers. Arguments
// go on to node-gyp: a cross build (the Makefile's vm-files for arm64)
// gives --arch and the --nodedir of the Node the addon is for. The
// node-gyp used is npm's own when npm runs this ($npm_config_node_gyp),
// else the package's devDependency.
//
// What node-gyp needs and npm does not bring (a C and a C++ compiler,
// make, Python, libc's and the kernel's headers) is looked for first: a
// missing one fails the install with one line naming the Debian package
// to install, where node-gyp would bury it under a page of gyp errors.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const pkg = path.join(__dirname, '..');

function onPath(cmd) {
  if (cmd.includes('/'))
    return fs.existsSync(cmd);
  return (process.env.PATH || '').split(':').some((dir) => {
    try {
      fs.accessSync(path.join(dir || '.', cmd), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

// The compilers as gyp's Makefiles call them: $CC (cc) and $CXX (g++),
// whose first word is the program ("ccache gcc" is ccache).
const cc = (process.env.CC || 'cc').trim().split(/\s+/);
const cxx = (process.env.CXX || 'g++').trim().split(/\s+/);

// [what, Debian package] for each thing the build needs and does not find.
function missing() {
  const out = [];
  if (!onPath(cc[0]))
    out.push([`a C compiler (${cc[0]})`, 'gcc']);
  if (!onPath(cxx[0]))
    out.push([`a C++ compiler (${cxx[0]})`, 'g++']);
  if (!onPath('make'))
    out.push(['make', 'make']);
  // node-gyp's own search, less its Windows launcher.
  const python = [process.env.npm_config_python, process.env.PYTHON, 'python3', 'python'];
  if (!python.some((p) => p && onPath(p)))
    out.push(['python3 (for node-gyp)', 'python3']);
  if (onPath(cc[0])) {
    const has = (header) => spawnSync(cc[0], [...cc.slice(1), '-E', '-x', 'c', '-o', '/dev/null', '-'],
      { input: `#include <${header}>\n`, stdio: ['pipe', 'ignore', 'ignore'] }).status === 0;
    if (!has('errno.h'))
      out.push(["libc's headers (<errno.h>)", 'libc6-dev']);
    else if (!has('linux/types.h') || !has('linux/ioctl.h'))
      out.push(["the kernel's uapi headers (<linux/types.h>)", 'linux-libc-dev']);
  }
  return out;
}

const lack = missing();
if (lack.length) {
  process.stderr.write(`twheel: building the addon needs ${lack.map(([what]) => what).join(', ')}, ` +
    `not found: apt-get install ${lack.map(([, deb]) => deb).join(' ')}\n`);
  process.exit(1);
}
if (!fs.existsSync(path.join(pkg, 'deps', 'libtwheel', 'twheel.c'))) {
  process.stderr.write('twheel: deps/libtwheel/ is missing: install the packed tarball (npm pack ' +
    'puts libtwheel there), or run `node scripts/vendor-libtwheel.js` in the twheel tree\n');
  process.exit(1);
}

const prefix = path.dirname(path.dirname(process.execPath));
const given = process.argv.slice(2);
const args = ['rebuild', ...given];
if (!given.some((a) => a.startsWith('--nodedir=')) &&
    fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')))
  args.push(`--nodedir=${prefix}`);
const gyp = process.env.npm_config_node_gyp || require.resolve('node-gyp/bin/node-gyp.js');
const r = spawnSync(process.execPath, [gyp, ...args], { stdio: 'inherit', cwd: pkg });
process.exit(r.status === null ? 1 : r.status);
