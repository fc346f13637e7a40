// SPDX-License-Identifier: MIT
//
// Host tests: what needs no /dev/twheel. Argument checks (TypeError and
// RangeError with Node's codes, before any system call), the encoders
// against the uapi's layout, the errors' shape, the clock process.hrtime
// reads, and a native handle that never opened (or was closed) answering
// EBADF instead of crashing.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const { spawnSync } = require('node:child_process');
const native = require('../lib/native');
const codec = require('../lib/codec');
const { systemError, closedError } = require('../lib/errors');
const { Wheel, constants: C } = require('..');

const throwsCode = (fn, type, code) => assert.throws(fn, (e) => e instanceof type && e.code === code);

test('host: struct layouts are the uapi\'s', () => {
  assert.equal(C.OP_SIZE, 48);
  assert.deepEqual([C.OP_ID, C.OP_TIMEOUT_NS, C.OP_DEADLINE_NS, C.OP_REMAINING_NS, C.OP_OP,
    C.OP_FLAGS, C.OP_RESULT, C.OP_SLOT], [0, 8, 16, 24, 32, 36, 40, 44]);
  assert.equal(C.EVENT_SIZE, 24);
  assert.deepEqual([C.EVENT_ID, C.EVENT_DEADLINE_NS, C.EVENT_EXPIRED_NS], [0, 8, 16]);
  assert.equal(C.DUMP_SIZE, 24);
  assert.deepEqual([C.DUMP_ID, C.DUMP_DEADLINE_NS, C.DUMP_SLOT], [0, 8, 16]);
  assert.equal(C.DUMP_END, (1n << 64n) - 1n);
});

test('host: ids as BigInt or safe Number, unsafe Numbers are a RangeError', () => {
  assert.equal(codec.toId(0, false), 0n);
  assert.equal(codec.toId(Number.MAX_SAFE_INTEGER, false), 2n ** 53n - 1n);
  assert.equal(codec.toId(2n ** 64n - 1n, true), 2n ** 64n - 1n);
  assert.equal(codec.toId(42n, false), 42n);
  throwsCode(() => codec.toId(2 ** 53, false), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(2 ** 53, true), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(2n ** 53n, false), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(2n ** 64n, true), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(-1, true), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(-1n, true), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(1.5, true), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId(NaN, true), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toId('1', true), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => codec.toId(undefined, true), TypeError, 'ERR_INVALID_ARG_TYPE');
  assert.equal(codec.idOut(7n, false), 7);
  assert.equal(codec.idOut(7n, true), 7n);
});

test('host: ms become ns rounded up, never shortened', () => {
  assert.equal(codec.msToNs(0, 'x'), 0n);
  assert.equal(codec.msToNs(1, 'x'), 1000000n);
  assert.equal(codec.msToNs(0.1, 'x'), 100000n);
  assert.equal(codec.msToNs(1.0000001, 'x'), 1000001n);
  assert.equal(codec.msToNs(30000, 'x'), 30000000000n);
  throwsCode(() => codec.msToNs(-1, 'x'), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.msToNs(Infinity, 'x'), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.msToNs(1n, 'x'), TypeError, 'ERR_INVALID_ARG_TYPE');
  assert.equal(codec.toNs(5, 'x'), 5n);
  throwsCode(() => codec.toNs(0.5, 'x'), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.toNs(2n ** 64n, 'x'), RangeError, 'ERR_OUT_OF_RANGE');
});

test('host: bad Wheel options throw before any system call', () => {
  throwsCode(() => new Wheel(), TypeError, 'ERR_MISSING_OPTION');
  throwsCode(() => new Wheel(null), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => new Wheel({ timeoutMs: '1' }), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, tickMs: 0.01 }), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, tickNs: 3600000000001n }), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, tickMs: 1, tickNs: 1000000n }), TypeError,
    'ERR_INCOMPATIBLE_OPTION_PAIR');
  // 2^32 ticks of 1 ms is the longest timeout of a 1 ms wheel.
  throwsCode(() => new Wheel({ tickMs: 1, timeoutNs: 2n ** 32n * 1000000n + 1n }), RangeError,
    'ERR_OUT_OF_RANGE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, clock: 'realtime' }), TypeError, 'ERR_INVALID_ARG_VALUE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, cap: -1 }), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, touchSlots: C.TOUCH_MAX_SLOTS + 1 }), RangeError,
    'ERR_OUT_OF_RANGE');
  throwsCode(() => new Wheel({ timeoutMs: 1000, bigint: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE');
});

test('host: op options give the uapi\'s flags, bad ones throw', () => {
  const w = codec.setupOptions({ timeoutMs: 1000, touchSlots: 8 });
  assert.equal(w.tickNs, 10000000n);
  assert.equal(w.maxTimeoutNs, 10000000n * 2n ** 32n);
  assert.deepEqual(codec.opFields({}, C.OP_ADD, w), { timeout: 0n, flags: 0, slot: 0 });
  assert.deepEqual(codec.opFields({ timeoutMs: 5 }, C.OP_ADD, w),
    { timeout: 5000000n, flags: C.OPF_TIMEOUT, slot: 0 });
  assert.deepEqual(codec.opFields({ deadlineNs: 123n }, C.OP_ADD, w),
    { timeout: 123n, flags: C.OPF_ABSTIME, slot: 0 });
  assert.deepEqual(codec.opFields({ addIfAbsent: true, slot: 7 }, C.OP_REFRESH, w),
    { timeout: 0n, flags: C.OPF_ADD_IF_ABSENT | C.OPF_TOUCH, slot: 7 });
  assert.deepEqual(codec.opFields({ slot: null }, C.OP_ADD, w),
    { timeout: 0n, flags: C.OPF_TOUCH, slot: C.SLOT_NONE });
  throwsCode(() => codec.opFields({ addIfAbsent: true }, C.OP_ADD, w), TypeError, 'ERR_INVALID_ARG_VALUE');
  throwsCode(() => codec.opFields({ addIfAbsent: 1 }, C.OP_REFRESH, w), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => codec.opFields({ slot: 8 }, C.OP_ADD, w), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.opFields({ slot: 1 }, C.OP_ADD, codec.setupOptions({ timeoutMs: 1 })),
    TypeError, 'ERR_INVALID_ARG_VALUE');
  throwsCode(() => codec.opFields({ timeoutMs: 1, deadlineNs: 1n }, C.OP_ADD, w), TypeError,
    'ERR_INCOMPATIBLE_OPTION_PAIR');
  throwsCode(() => codec.opFields({ timeoutNs: w.maxTimeoutNs + 1n }, C.OP_ADD, w), RangeError,
    'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.opFields({ slot: 1 }, C.OP_REFRESH, w, false), TypeError, 'ERR_INVALID_ARG_VALUE');
});

test('host: an encoded op has each field at its uapi offset, little-endian', () => {
  const a = new codec.OpArray(2);
  a.set(1, C.OP_REFRESH, 2n ** 64n - 2n, 30000000000n, C.OPF_TIMEOUT | C.OPF_TOUCH, 5);
  const v = new DataView(a.buffer, C.OP_SIZE);
  assert.equal(v.getBigUint64(C.OP_ID, true), 2n ** 64n - 2n);
  assert.equal(v.getBigUint64(C.OP_TIMEOUT_NS, true), 30000000000n);
  assert.equal(v.getUint32(C.OP_OP, true), C.OP_REFRESH);
  assert.equal(v.getUint32(C.OP_FLAGS, true), C.OPF_TIMEOUT | C.OPF_TOUCH);
  assert.equal(v.getUint32(C.OP_SLOT, true), 5);
  assert.equal(new Uint8Array(a.buffer, 0, C.OP_SIZE).every((b) => b === 0), true);
  v.setInt32(C.OP_RESULT, -2, true);
  v.setBigUint64(C.OP_DEADLINE_NS, 99n, true);
  v.setBigUint64(C.OP_REMAINING_NS, 9n, true);
  assert.equal(a.result(1), -2);
  assert.equal(a.deadline(1), 99n);
  assert.equal(a.remaining(1), 9n);
  a.reserve(100);
  assert.ok(a.capacity >= 100);
});

test('host: a batch op encodes as set() of its opFields(), every field over old bytes', () => {
  const w = codec.setupOptions({ timeoutMs: 1000, touchSlots: 8 });
  const big = codec.setupOptions({ timeoutMs: 1000, touchSlots: 8, bigint: true });
  const cases = [
    [w, { op: 'add', id: 0 }, 0], [w, { op: 'add', id: -0 }, 0],
    [w, { op: 'add', id: 2 ** 32 + 7, slot: 3 }, 2 ** 32 + 7],
    [w, { op: 'add', id: Number.MAX_SAFE_INTEGER, slot: null }, Number.MAX_SAFE_INTEGER],
    [w, { op: 'refresh', id: 5, timeoutMs: 5 }, 5],
    [w, { op: 'refresh', id: 5n, addIfAbsent: true, slot: 7 }, 5],
    [w, { op: 'add', id: 6, deadlineNs: 123n }, 6],
    [w, { op: 'cancel', id: 9 }, 9], [w, { op: 'query', id: 2n ** 53n - 1n }, Number.MAX_SAFE_INTEGER],
    [big, { op: 'add', id: 1, slot: 1 }, 1n], [big, { op: 'cancel', id: 2n ** 64n - 1n }, 2n ** 64n - 1n],
  ];
  for (const [wheel, o, id] of cases) {
    const code = codec.opCode(o.op);
    const f = code === C.OP_ADD || code === C.OP_REFRESH ? codec.opFields(o, code, wheel) :
      { timeout: 0n, flags: 0, slot: 0 };
    const want = new codec.OpArray(2), got = new codec.OpArray(2);
    want.set(1, code, codec.toId(o.id, wheel.bigint), f.timeout, f.flags, f.slot);
    new Uint8Array(got.buffer).fill(0xa5);
    assert.ok(Object.is(codec.encodeOp(got, 1, o, code, wheel), id), `${o.op} ${o.id}`);
    assert.deepEqual(got.bytes.subarray(C.OP_SIZE), want.bytes.subarray(C.OP_SIZE), `${o.op} ${o.id}`);
  }
  const bad = (o, wheel, type, code) => throwsCode(() => codec.encodeOp(new codec.OpArray(1), 0, o,
    codec.opCode(o.op), wheel), type, code);
  bad({ op: 'add', id: 2 ** 53 }, w, RangeError, 'ERR_OUT_OF_RANGE');
  bad({ op: 'add', id: 1.5 }, w, RangeError, 'ERR_OUT_OF_RANGE');
  bad({ op: 'add', id: '1' }, w, TypeError, 'ERR_INVALID_ARG_TYPE');
  bad({ op: 'add', id: 2n ** 53n }, w, RangeError, 'ERR_OUT_OF_RANGE');
  bad({ op: 'add', id: 1, slot: 8 }, w, RangeError, 'ERR_OUT_OF_RANGE');
  bad({ op: 'add', id: 1, slot: 1 }, codec.setupOptions({ timeoutMs: 1 }), TypeError, 'ERR_INVALID_ARG_VALUE');
  bad({ op: 'add', id: 1, addIfAbsent: true }, w, TypeError, 'ERR_INVALID_ARG_VALUE');
  bad({ op: 'cancel', id: 1, slot: 1 }, w, TypeError, 'ERR_INVALID_ARG_VALUE');
  bad({ op: 'query', id: 1, timeoutMs: 1 }, w, TypeError, 'ERR_INVALID_ARG_VALUE');
  assert.equal(codec.opCode('constructor'), undefined);
  assert.equal(codec.opCode('__proto__'), undefined);
  assert.equal(codec.opCode(Symbol('add')), undefined);
  assert.equal(codec.opCode(new String('cancel')), C.OP_CANCEL);
  assert.equal(Object.isFrozen(C), true);
});

test('host: refreshIds\' ids encode exactly, unsafe ones are a RangeError', () => {
  const scratch = new codec.IdArray();
  const ids = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, 12345678901234, 7n];
  assert.deepEqual([...codec.encodeIds(ids, false, scratch)],
    [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 12345678901234n, 7n]);
  assert.equal(codec.encodeIds([5], false, scratch).length, 1);
  const typed = new BigUint64Array([3n, 2n ** 53n - 1n]);
  assert.equal(codec.encodeIds(typed, false, scratch), typed);
  assert.deepEqual([...codec.encodeIds([2n ** 64n - 1n], true, scratch)], [2n ** 64n - 1n]);
  throwsCode(() => codec.encodeIds([1, 2 ** 53], false, scratch), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.encodeIds([1, -1], true, scratch), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.encodeIds([0.5], true, scratch), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.encodeIds(['1'], true, scratch), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => codec.encodeIds(new BigUint64Array([2n ** 53n]), false, scratch), RangeError,
    'ERR_OUT_OF_RANGE');
  throwsCode(() => codec.encodeIds(new Set([1]), false, scratch), TypeError, 'ERR_INVALID_ARG_TYPE');
});

test('host: events and dump entries decode from the uapi\'s records', () => {
  const ev = new ArrayBuffer(2 * C.EVENT_SIZE), d = new DataView(ev);
  d.setBigUint64(C.EVENT_SIZE + C.EVENT_ID, 77n, true);
  d.setBigUint64(C.EVENT_SIZE + C.EVENT_DEADLINE_NS, 1000n, true);
  d.setBigUint64(C.EVENT_SIZE + C.EVENT_EXPIRED_NS, 1001n, true);
  const [, e] = codec.decodeEvents(new BigUint64Array(ev), 2, false);
  assert.deepEqual(e, { id: 77, deadlineNs: 1000n, expiredNs: 1001n });
  assert.equal(codec.decodeEvents(new BigUint64Array(ev), 2, true)[1].id, 77n);

  const du = new ArrayBuffer(2 * C.DUMP_SIZE), dv = new DataView(du);
  dv.setBigUint64(C.DUMP_ID, 5n, true);
  dv.setUint32(C.DUMP_SLOT, C.SLOT_NONE, true);
  dv.setBigUint64(C.DUMP_SIZE + C.DUMP_ID, 6n, true);
  dv.setBigUint64(C.DUMP_SIZE + C.DUMP_DEADLINE_NS, 60n, true);
  dv.setUint32(C.DUMP_SIZE + C.DUMP_SLOT, 3, true);
  assert.deepEqual(codec.decodeDump(new BigUint64Array(du), new Uint32Array(du), 2, false),
    [{ id: 5, deadlineNs: 0n, slot: null }, { id: 6, deadlineNs: 60n, slot: 3 }]);
});

test('host: system errors carry code, negative errno, syscall, op and id', () => {
  const e = systemError(-2, 'ioctl', 'refresh', { id: 42 });
  assert.ok(e instanceof Error);
  assert.equal(e.code, 'ENOENT');
  assert.equal(e.errno, -2);
  assert.equal(e.syscall, 'ioctl');
  assert.equal(e.id, 42);
  assert.equal(e.message, 'ENOENT: no such id in the wheel, refresh 42');
  assert.equal(systemError(-17, 'ioctl', 'add', { id: 1n }).message, 'EEXIST: id already in the wheel, add 1');
  const bad = systemError(-77, 'ioctl', 'batch');
  assert.equal(bad.code, 'EBADFD');
  assert.match(bad.message, /^EBADFD: file descriptor in bad state, batch$/);
  const open = systemError(-2, 'open', 'open', { path: '/dev/twheel' });
  assert.equal(open.message, "ENOENT: no such file or directory, open '/dev/twheel'");
  const closed = closedError('cancel', 9);
  assert.deepEqual([closed.code, closed.errno, closed.message], ['EBADF', -9, 'EBADF: wheel is closed, cancel 9']);
});

test('host: no device is an ENOENT Error naming the device', { skip: fs.existsSync(C.DEVICE) && 'the device exists' }, () => {
  assert.throws(() => new Wheel({ timeoutMs: 1000 }),
    (e) => e.code === 'ENOENT' && e.syscall === 'open' && e.path === '/dev/twheel' && e.errno === -2);
});

test('host: process.hrtime.bigint() reads CLOCK_MONOTONIC, the clock of the native now()', () => {
  const h = new native.Handle();
  for (let i = 0; i < 100; i++) {
    const a = process.hrtime.bigint(), n = h.now(), b = process.hrtime.bigint();
    assert.ok(a <= n && n <= b, `${a} <= ${n} <= ${b}`);
  }
});

test('host: a handle that is not open answers EBADF and never crashes', () => {
  const h = new native.Handle();
  const out = new BigUint64Array(2);
  assert.equal(h.op(C.OP_ADD, 1n, 0n, 0, 0, out), -9);
  assert.equal(h.batch(new Uint8Array(C.OP_SIZE), 1), -9);
  assert.equal(h.read(new Uint8Array(C.EVENT_SIZE)), -9);
  assert.equal(h.dump(new Uint8Array(C.DUMP_SIZE), 1, new BigUint64Array(1)), -9);
  assert.equal(h.mapTouch(1), -9);
  assert.equal(h.poll(true), -9);
  h.touch(0);
  h.ref(false);
  assert.equal(h.close(), 0);
  assert.equal(h.close(), 0);
  assert.equal(h.fd, -1);
});

test('host: the package\'s version is the tree\'s VERSION', { skip: !fs.existsSync(path.join(__dirname, '../../../VERSION')) && 'not in the twheel tree' }, () => {
  const version = fs.readFileSync(path.join(__dirname, '../../../VERSION'), 'utf8').trim();
  assert.equal(require('../package.json').version, version);
});

// scripts/build.js, the install script, run from a copy in a scratch
// package (so that nothing it could start touches this one) with PATH
// holding only what a test puts there.
function installScript(tools) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'twheel-build-'));
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.copyFileSync(path.join(__dirname, '..', 'scripts', 'build.js'), path.join(dir, 'scripts', 'build.js'));
  fs.symlinkSync(process.execPath, path.join(dir, 'bin', 'node'));
  for (const [name, body] of Object.entries(tools))
    fs.writeFileSync(path.join(dir, 'bin', name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  try {
    const env = { PATH: path.join(dir, 'bin') };
    return spawnSync(process.execPath, [path.join(dir, 'scripts', 'build.js')], { env, encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('host: an install without a compiler, make or python3 says in one line what to install', () => {
  const r = installScript({});
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'twheel: building the addon needs a C compiler (cc), a C++ compiler (g++), make, ' +
    'python3 (for node-gyp), not found: apt-get install gcc g++ make python3\n');
});

test('host: an install without the kernel\'s uapi headers names linux-libc-dev', () => {
  // A compiler whose preprocessor finds libc's headers and not <linux/...>.
  const cc = 'while read -r l; do case $l in *linux/*) exit 1 ;; esac; done; exit 0';
  const r = installScript({ cc, 'g++': 'exit 0', make: 'exit 0', python3: 'exit 0' });
  assert.equal(r.status, 1);
  assert.equal(r.stderr, "twheel: building the addon needs the kernel's uapi headers (<linux/types.h>), " +
    'not found: apt-get install linux-libc-dev\n');
});
