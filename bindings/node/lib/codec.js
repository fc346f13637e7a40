// SPDX-License-Identifier: MIT
//
// Argument checks and the encoders between JS values and the uapi's
// structs (struct twheel_op, twheel_event, twheel_dump_entry), whose sizes
// and offsets come from <linux/twheel.h> through the addon, so that no
// layout is written twice. Everything here runs before any system call
// and needs no device: the host tests exercise it all.
//
// Ids: a __u64. A BigInt covers all of it; a Number is exact only up to
// Number.MAX_SAFE_INTEGER (2^53 - 1), so a Number id must be a safe
// integer. A wheel made with { bigint: false } (the default) hands ids
// back as Numbers and so takes only ids up to 2^53 - 1, whichever type
// they come in; with { bigint: true } it takes any __u64 and hands back
// BigInts. Times are ns on the wheel's clock as BigInts (they pass 2^53 ns
// after 104 days of uptime); durations may also be given in ms as Numbers.
'use strict';
// A copy of the addon's constants, frozen: the addon's object, its 36
// properties set one by one, is in V8's dictionary mode, where every
// C.NAME on a hot path (a touch, an op of a batch) is a hash lookup; an
// object literal's are fast properties.
const C = Object.freeze({ ...require('./native').constants });
const { invalidType, outOfRange, invalidValue, incompatible } = require('./errors');

const U32_MAX = 0xffffffff;
const U64_MAX = (1n << 64n) - 1n;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const INT_MAX = 0x7fffffff;

// Indices of each field in 64- and 32-bit views of one struct.
function fields(size, offsets) {
  for (const off of Object.values(offsets))
    if (off % 4 || size % 8)
      throw new Error('twheel: unexpected struct layout in <linux/twheel.h>');
  const f = { size, u64: {}, u32: {} };
  for (const [k, off] of Object.entries(offsets)) {
    f.u64[k] = off / 8;
    f.u32[k] = off / 4;
  }
  return f;
}
const OP = fields(C.OP_SIZE, {
  id: C.OP_ID, timeout: C.OP_TIMEOUT_NS, deadline: C.OP_DEADLINE_NS,
  remaining: C.OP_REMAINING_NS, op: C.OP_OP, flags: C.OP_FLAGS, result: C.OP_RESULT, slot: C.OP_SLOT,
});
const EVENT = fields(C.EVENT_SIZE, { id: C.EVENT_ID, deadline: C.EVENT_DEADLINE_NS, expired: C.EVENT_EXPIRED_NS });
const DUMP = fields(C.DUMP_SIZE, { id: C.DUMP_ID, deadline: C.DUMP_DEADLINE_NS, slot: C.DUMP_SLOT });

const OP_CODES = { add: C.OP_ADD, refresh: C.OP_REFRESH, cancel: C.OP_CANCEL, query: C.OP_QUERY };

// An id as a BigInt, checked against what the wheel hands back exactly.
function toId(value, bigint, name = 'id') {
  if (typeof value === 'bigint') {
    if (value < 0n || value > (bigint ? U64_MAX : SAFE_MAX))
      throw outOfRange(name, bigint ? '>= 0n and <= 2n ** 64n - 1n' :
        '>= 0 and <= 2 ** 53 - 1 on a wheel made with { bigint: false }; use { bigint: true } for ' +
        'larger ids', value);
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0)
      throw outOfRange(name, 'an integer >= 0 and <= 2 ** 53 - 1 (a Number is exact only that ' +
        'far; pass larger ids as BigInts)', value);
    return BigInt(value);
  }
  throw invalidType(name, 'of type bigint or number', value);
}

// An id as the wheel hands it back.
function idOut(big, bigint) {
  return bigint ? big : Number(big);
}

// A __u64 count of ns: a BigInt, or a Number that is a safe integer.
function toNs(value, name, max = U64_MAX) {
  let v;
  if (typeof value === 'bigint')
    v = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value))
    v = BigInt(value);
  else if (typeof value === 'number')
    throw outOfRange(name, 'an integer (ns)', value);
  else
    throw invalidType(name, 'of type bigint or number', value);
  if (v < 0n || v > max)
    throw outOfRange(name, `>= 0 and <= ${max}`, value);
  return v;
}

// Milliseconds (a finite Number >= 0, fractions allowed) as ns, rounded up:
// a duration is never shortened.
function msToNs(value, name) {
  if (typeof value !== 'number')
    throw invalidType(name, 'of type number', value);
  if (!Number.isFinite(value) || value < 0)
    throw outOfRange(name, 'a finite number >= 0', value);
  const whole = Math.trunc(value);
  if (!Number.isSafeInteger(whole))
    throw outOfRange(name, '<= 2 ** 53 - 1', value);
  // The fraction in ps first, so that 0.1 ms is 100000 ns, not 100001.
  return BigInt(whole) * 1000000n + BigInt(Math.ceil(Math.round((value - whole) * 1e9) / 1000));
}

function toU32(value, name, min = 0, max = U32_MAX) {
  if (typeof value !== 'number')
    throw invalidType(name, 'of type number', value);
  if (!Number.isInteger(value) || value < min || value > max)
    throw outOfRange(name, `an integer >= ${min} and <= ${max}`, value);
  return value;
}

function toOptions(value, name = 'options') {
  if (value === undefined)
    return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidType(name, 'of type object', value);
  return value;
}

// A duration from { <base>Ms, <base>Ns }: ns, or undefined if neither.
const KEYS = { tick: ['tickMs', 'tickNs'], timeout: ['timeoutMs', 'timeoutNs'] };
function duration(opts, base, max) {
  const [msKey, nsKey] = KEYS[base];
  const ms = opts[msKey], ns = opts[nsKey];
  if (ms === undefined && ns === undefined)
    return undefined;
  if (ms !== undefined && ns !== undefined)
    throw incompatible(msKey, nsKey);
  const v = ms !== undefined ? msToNs(ms, msKey) : toNs(ns, nsKey);
  if (max !== undefined && v > max)
    throw outOfRange(ms !== undefined ? msKey : nsKey,
      `<= ${ms !== undefined ? `${max / 1000000n} ms` : `${max} ns`}`, ms !== undefined ? ms : ns);
  return v;
}

// The setup of a wheel from the options of new Wheel(); see index.d.ts.
function setupOptions(options) {
  const opts = toOptions(options);
  const tick = duration(opts, 'tick') ?? 10000000n;
  if (tick < C.TICK_MIN_NS || tick > C.TICK_MAX_NS)
    throw outOfRange(opts.tickNs !== undefined ? 'tickNs' : 'tickMs',
      `between ${C.TICK_MIN_NS} and ${C.TICK_MAX_NS} ns (100 us to 1 h)`, opts.tickNs ?? opts.tickMs);
  const maxTimeout = maxTimeoutNs(tick);
  const timeout = duration(opts, 'timeout', maxTimeout);
  if (timeout === undefined) {
    const err = new TypeError('The "timeoutMs" or "timeoutNs" option is required (the wheel\'s default timeout)');
    err.code = 'ERR_MISSING_OPTION';
    throw err;
  }
  const clock = opts.clock ?? 'monotonic';
  if (clock !== 'monotonic' && clock !== 'boottime')
    throw invalidValue('options.clock', clock, "must be 'monotonic' or 'boottime'");
  const cap = opts.cap === undefined ? 0 : toU32(opts.cap, 'options.cap');
  const touchSlots = opts.touchSlots === undefined ? 0 :
    toU32(opts.touchSlots, 'options.touchSlots', 0, C.TOUCH_MAX_SLOTS);
  if (opts.bigint !== undefined && typeof opts.bigint !== 'boolean')
    throw invalidType('options.bigint', 'of type boolean', opts.bigint);
  return {
    tickNs: tick, timeoutNs: timeout, maxTimeoutNs: maxTimeout, clock,
    clockid: clock === 'boottime' ? C.CLOCK_BOOTTIME : C.CLOCK_MONOTONIC,
    cap, touchSlots, bigint: opts.bigint === true,
  };
}

// The longest timeout a wheel of this tick takes.
function maxTimeoutNs(tickNs) {
  const byTicks = tickNs * C.MAX_TIMEOUT_TICKS;
  return byTicks < C.MAX_TIMEOUT_NS ? byTicks : C.MAX_TIMEOUT_NS;
}

// The timeout, deadline, slot and flags of one ADD or REFRESH (or of a
// compact refresh: no slot). wheel: the result of setupOptions().
// Returns { timeout: BigInt ns (0n if none), flags, slot }.
function opFields(opts, code, wheel, allowSlot = true) {
  let flags = 0, timeout = 0n, slot = 0;
  const rel = duration(opts, 'timeout', wheel.maxTimeoutNs);
  if (opts.deadlineNs !== undefined) {
    if (rel !== undefined)
      throw incompatible(opts.timeoutMs !== undefined ? 'timeoutMs' : 'timeoutNs', 'deadlineNs');
    timeout = toNs(opts.deadlineNs, 'deadlineNs');
    flags |= C.OPF_ABSTIME;
  } else if (rel !== undefined) {
    timeout = rel;
    flags |= C.OPF_TIMEOUT;
  }
  if (opts.addIfAbsent !== undefined) {
    if (typeof opts.addIfAbsent !== 'boolean')
      throw invalidType('addIfAbsent', 'of type boolean', opts.addIfAbsent);
    if (code !== C.OP_REFRESH && opts.addIfAbsent)
      throw invalidValue('addIfAbsent', opts.addIfAbsent, 'is valid for refresh only');
    if (opts.addIfAbsent)
      flags |= C.OPF_ADD_IF_ABSENT;
  }
  if (opts.slot !== undefined) {
    if (!allowSlot)
      throw invalidValue('slot', opts.slot, 'is not taken by refreshIds()');
    if (opts.slot === null) {
      slot = C.SLOT_NONE;
    } else {
      if (wheel.touchSlots === 0)
        throw invalidValue('slot', opts.slot, 'needs a wheel made with touchSlots');
      slot = toU32(opts.slot, 'slot', 0, wheel.touchSlots - 1);
    }
    flags |= C.OPF_TOUCH;
  }
  return { timeout, flags, slot };
}

// A scratch array of struct twheel_op, grown on demand.
class OpArray {
  constructor(n = 0) {
    this.alloc(n);
  }

  alloc(n) {
    this.capacity = n;
    this.buffer = new ArrayBuffer(n * OP.size);
    this.bytes = new Uint8Array(this.buffer);
    this.u64 = new BigUint64Array(this.buffer);
    this.u32 = new Uint32Array(this.buffer);
    this.i32 = new Int32Array(this.buffer);
  }

  reserve(n) {
    if (n > this.capacity)
      this.alloc(Math.max(n, this.capacity * 2));
  }

  set(i, code, id, timeout, flags, slot) {
    this.u64[i * (OP.size / 8) + OP.u64.id] = id;
    this.setFields(i, code, timeout, flags, slot);
  }

  // An id that is a safe-integer Number, as two 32-bit words (no BigInt;
  // little-endian, as encodeIds()).
  setNumberId(i, id) {
    const w = i * (OP.size / 4) + OP.u32.id;
    this.u32[w] = id % 4294967296;
    this.u32[w + 1] = id / 4294967296;
  }

  // All but the id; a zero timeout, deadline and remaining as 32-bit words.
  setFields(i, code, timeout, flags, slot) {
    const w = i * (OP.size / 4);
    if (timeout === 0n) {
      this.u32[w + OP.u32.timeout] = 0;
      this.u32[w + OP.u32.timeout + 1] = 0;
    } else {
      this.u64[i * (OP.size / 8) + OP.u64.timeout] = timeout;
    }
    this.u32[w + OP.u32.deadline] = 0;
    this.u32[w + OP.u32.deadline + 1] = 0;
    this.u32[w + OP.u32.remaining] = 0;
    this.u32[w + OP.u32.remaining + 1] = 0;
    this.u32[w + OP.u32.op] = code;
    this.u32[w + OP.u32.flags] = flags;
    this.i32[w + OP.u32.result] = 0;
    this.u32[w + OP.u32.slot] = slot;
  }

  result(i) {
    return this.i32[i * (OP.size / 4) + OP.u32.result];
  }

  deadline(i) {
    return this.u64[i * (OP.size / 8) + OP.u64.deadline];
  }

  remaining(i) {
    return this.u64[i * (OP.size / 8) + OP.u64.remaining];
  }
}

// The code of an op name ('add', 'refresh', 'cancel', 'query'), or
// undefined: an own key of OP_CODES only, not Object.prototype's.
function opCode(name) {
  switch (name) {
  case 'add': return C.OP_ADD;
  case 'refresh': return C.OP_REFRESH;
  case 'cancel': return C.OP_CANCEL;
  case 'query': return C.OP_QUERY;
  }
  return typeof name !== 'symbol' && Object.hasOwn(OP_CODES, name) ? OP_CODES[name] : undefined;
}

// One op of Wheel#batch(), o ({ op, id, ...options }, op's code already
// checked), checked as toId() and opFields() check it, into the i-th
// struct of a (an OpArray). Returns its id as the wheel hands it back.
// The common ops (a safe-integer Number id; no timeout, deadline or
// addIfAbsent) make no BigInt and no object.
function encodeOp(a, i, o, code, wheel) {
  const v = o.id;
  let id;
  if (typeof v === 'number' && v >= 0 && v <= Number.MAX_SAFE_INTEGER && v % 1 === 0) {
    a.setNumberId(i, v);
    // As toId() and idOut() hand it back: a BigInt on a { bigint: true }
    // wheel, and -0 as 0.
    id = wheel.bigint ? BigInt(v) : v === 0 ? 0 : v;
  } else {
    const big = toId(v, wheel.bigint, `ops[${i}].id`);
    a.u64[i * (OP.size / 8) + OP.u64.id] = big;
    id = idOut(big, wheel.bigint);
  }
  const plain = o.timeoutMs === undefined && o.timeoutNs === undefined &&
    o.deadlineNs === undefined && o.addIfAbsent === undefined;
  if (code !== C.OP_ADD && code !== C.OP_REFRESH) {
    if (!plain || o.slot !== undefined)
      throw invalidValue(`ops[${i}]`, o, `takes only op and id for ${o.op}`);
    a.setFields(i, code, 0n, 0, 0);
  } else if (!plain) {
    const f = opFields(o, code, wheel);
    a.setFields(i, code, f.timeout, f.flags, f.slot);
  } else if (o.slot === undefined) {
    a.setFields(i, code, 0n, 0, 0);
  } else if (o.slot === null) {
    a.setFields(i, code, 0n, C.OPF_TOUCH, C.SLOT_NONE);
  } else {
    if (wheel.touchSlots === 0)
      throw invalidValue('slot', o.slot, 'needs a wheel made with touchSlots');
    a.setFields(i, code, 0n, C.OPF_TOUCH, toU32(o.slot, 'slot', 0, wheel.touchSlots - 1));
  }
  return id;
}

// A scratch array of ids for encodeIds(), grown on demand.
class IdArray {
  constructor() {
    this.u64 = new BigUint64Array(0);
    this.u32 = new Uint32Array(0);
  }

  reserve(n) {
    if (n > this.u64.length) {
      this.u64 = new BigUint64Array(Math.max(n, this.u64.length * 2));
      this.u32 = new Uint32Array(this.u64.buffer);
    }
  }
}

// Ids (an Array, or a BigUint64Array used as it is) as a BigUint64Array
// for TWHEEL_IOC_REFRESH, checked as toId() checks them. The hot path
// makes no BigInt: a safe-integer Number goes in as two 32-bit words, and
// a BigUint64Array's ids are checked by their high words (2^53 and more
// have one of 2^21 or more; little-endian, as x86-64 and arm64 Linux).
function encodeIds(ids, bigint, scratch) {
  if (ids instanceof BigUint64Array) {
    if (!bigint) {
      const words = new Uint32Array(ids.buffer, ids.byteOffset, ids.length * 2);
      for (let i = 0; i < ids.length; i++)
        if (words[2 * i + 1] >= 0x200000)
          toId(ids[i], false, `ids[${i}]`);
    }
    return ids;
  }
  if (!Array.isArray(ids))
    throw invalidType('ids', 'an array or a BigUint64Array', ids);
  if (ids.length > INT_MAX)
    throw outOfRange('ids.length', `<= ${INT_MAX}`, ids.length);
  scratch.reserve(ids.length);
  const u64 = scratch.u64, words = scratch.u32;
  for (let i = 0; i < ids.length; i++) {
    const v = ids[i];
    if (typeof v === 'number' && v >= 0 && v <= Number.MAX_SAFE_INTEGER && v % 1 === 0) {
      words[2 * i] = v % 4294967296;
      words[2 * i + 1] = v / 4294967296;
    } else {
      u64[i] = toId(v, bigint, `ids[${i}]`);
    }
  }
  return u64.subarray(0, ids.length);
}

// Events read into u64 (a BigUint64Array over struct twheel_event[n]).
function decodeEvents(u64, n, bigint) {
  const out = new Array(n), step = EVENT.size / 8;
  for (let i = 0; i < n; i++) {
    const b = i * step;
    out[i] = {
      id: idOut(u64[b + EVENT.u64.id], bigint),
      deadlineNs: u64[b + EVENT.u64.deadline],
      expiredNs: u64[b + EVENT.u64.expired],
    };
  }
  return out;
}

// Dump entries in u64/u32 views over struct twheel_dump_entry[n].
function decodeDump(u64, u32, n, bigint) {
  const out = new Array(n), s64 = DUMP.size / 8, s32 = DUMP.size / 4;
  for (let i = 0; i < n; i++) {
    const slot = u32[i * s32 + DUMP.u32.slot];
    out[i] = {
      id: idOut(u64[i * s64 + DUMP.u64.id], bigint),
      deadlineNs: u64[i * s64 + DUMP.u64.deadline],
      slot: slot === C.SLOT_NONE ? null : slot,
    };
  }
  return out;
}

module.exports = {
  C, OP, EVENT, DUMP, OP_CODES, U64_MAX, SAFE_MAX, INT_MAX,
  toId, idOut, toNs, msToNs, toU32, toOptions, duration, setupOptions, maxTimeoutNs, opFields,
  opCode, encodeOp, OpArray, IdArray, encodeIds, decodeEvents, decodeDump,
};
