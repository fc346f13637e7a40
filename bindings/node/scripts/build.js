// SPDX-License-Identifier: MIT
//
// The package's install script: node-gyp rebuild of the addon against the
// headers of the Node that runs it. Those ship with every Node (Debian's
// nodejs and the official builds have PREFIX/include/node), so node-gyp is
// given that directory (--nodedir) and never downloads headers. The
// node-gyp used is npm's own when npm runs this ($npm_config_node_gyp),
// else the package's devDependency.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const prefix = path.dirname(path.dirname(process.execPath));
const args = ['rebuild'];
if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')))
  args.push(`--nodedir=${prefix}`);
const gyp = process.env.npm_config_node_gyp || require.resolve('node-gyp/bin/node-gyp.js');
const r = spawnSync(process.execPath, [gyp, ...args], { stdio: 'inherit', cwd: path.join(__dirname, '..') });
process.exit(r.status === null ? 1 : r.status);
