// SPDX-License-Identifier: MIT
//
// Loads the addon that node-gyp built (build/Release/twheel.node) and
// says how to build it when it is missing.
'use strict';
const path = require('node:path');

const file = path.join(__dirname, '..', 'build', 'Release', 'twheel.node');
try {
  module.exports = require(file);
} catch (err) {
  if (err.code !== 'MODULE_NOT_FOUND')
    throw err;
  const e = new Error(`twheel: the native addon ${file} is not built: run \`npm rebuild twheel\` ` +
    '(it needs a C and a C++ compiler, make and python3: apt-get install build-essential python3)');
  e.code = 'ERR_TWHEEL_NOT_BUILT';
  throw e;
}
