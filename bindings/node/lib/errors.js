// SPDX-License-Identifier: MIT
//
// The errors the package throws, shaped as Node's own: system errors are
// Errors with code ('ENOENT'), errno (negative, as Node's), syscall and a
// message naming the operation and the id; bad arguments are TypeErrors
// and RangeErrors with Node's ERR_* codes, thrown before any system call.
'use strict';
const { inspect } = require('node:util');
const native = require('./native');

// What an errno means for an operation on one id, where strerror's text
// ("No such file or directory") would mislead.
const ID_TEXT = {
  ENOENT: 'no such id in the wheel',
  EEXIST: 'id already in the wheel',
  ENOSPC: "wheel full (its cap, its user's limit or the module's)",
};

// errno: negative, as libtwheel returns it. subject: { id } for an
// operation on one id, { path } for the device.
function systemError(errno, syscall, op, subject = {}, caller = systemError) {
  const [code, text] = native.errnoInfo(-errno);
  const { id, path } = subject;
  const desc = id !== undefined && ID_TEXT[code] ? ID_TEXT[code] :
    text.charAt(0).toLowerCase() + text.slice(1);
  const what = id !== undefined ? ` ${id}` : path !== undefined ? ` '${path}'` : '';
  const err = new Error(`${code}: ${desc}, ${op}${what}`);
  err.errno = errno;
  err.code = code;
  err.syscall = syscall;
  err.op = op;
  if (id !== undefined)
    err.id = id;
  if (path !== undefined)
    err.path = path;
  Error.captureStackTrace(err, caller);
  return err;
}

// The wheel was closed: EBADF, as for an fs operation on a closed fd.
function closedError(op, id, caller = closedError) {
  const err = new Error(`EBADF: wheel is closed, ${op}${id !== undefined ? ` ${id}` : ''}`);
  err.errno = -9;
  err.code = 'EBADF';
  err.syscall = op === 'read' ? 'read' : 'ioctl';
  err.op = op;
  if (id !== undefined)
    err.id = id;
  Error.captureStackTrace(err, caller);
  return err;
}

function received(value) {
  if (value === null || value === undefined)
    return ` Received ${value}`;
  if (typeof value === 'function')
    return ` Received function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object')
    return ` Received ${inspect(value, { depth: 0 })}`;
  return ` Received type ${typeof value} (${inspect(value).slice(0, 28)})`;
}

function invalidType(name, expected, value) {
  const err = new TypeError(`The "${name}" argument must be ${expected}.${received(value)}`);
  err.code = 'ERR_INVALID_ARG_TYPE';
  return err;
}

function outOfRange(name, range, value) {
  const err = new RangeError(`The value of "${name}" is out of range. It must be ${range}. ` +
    `Received ${typeof value === 'bigint' ? `${value}n` : inspect(value)}`);
  err.code = 'ERR_OUT_OF_RANGE';
  return err;
}

function invalidValue(name, value, reason) {
  const err = new TypeError(`The argument '${name}' ${reason}. Received ${inspect(value)}`);
  err.code = 'ERR_INVALID_ARG_VALUE';
  return err;
}

function incompatible(a, b) {
  const err = new TypeError(`Option "${a}" cannot be used in combination with option "${b}"`);
  err.code = 'ERR_INCOMPATIBLE_OPTION_PAIR';
  return err;
}

module.exports = { systemError, closedError, invalidType, outOfRange, invalidValue, incompatible };
