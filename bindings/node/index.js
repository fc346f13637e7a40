// SPDX-License-Identifier: MIT
//
// twheel for Node.js: a Wheel is one /dev/twheel fd, set up at
// construction, whose expirations arrive in the event loop through a libuv
// poll handle on the fd (no thread, no timer), as 'expired' events (one
// per read, an array of events) and as an async iterator. See README.md
// and index.d.ts for the API; lib/codec.js for ids, times and the structs.
//
// Delivery: the wheel reads the fd only while someone consumes, so events
// wait in the kernel (nothing lost, nothing buffered here) otherwise. Each
// event read is emitted once to every 'expired' listener (EventEmitter's
// rule) and queued once for the async iterators, which share the queue:
// each event goes to exactly one of them. The poll handle keeps the event
// loop alive only while someone consumes and the wheel is ref()'d.
'use strict';
const { EventEmitter } = require('node:events');
const native = require('./lib/native');
const codec = require('./lib/codec');
const { systemError, closedError, invalidType, invalidValue, outOfRange } = require('./lib/errors');

const { C, OP, EVENT, DUMP, OP_CODES } = codec;
// Events per read(2): 24 KiB. A readable fd is read at most READS_PER_TURN
// times per loop turn, so that a backlog of millions does not starve the
// loop's other I/O; the poll is level-triggered and calls back again.
const READ_EVENTS = 1024;
const READS_PER_TURN = 16;
const OP_NAMES = Object.fromEntries(Object.entries(OP_CODES).map(([k, v]) => [v, k]));

class Wheel extends EventEmitter {
  #h;
  #setup;
  #closed = false;
  #polling = false;
  #refed = true;
  #table = null;
  #out = new BigUint64Array(2);
  #ops = new codec.OpArray(64);
  #idScratch = new codec.IdArray();
  #failed = new BigUint64Array(0);
  #nrFailed = new Uint32Array(1);
  #events = new BigUint64Array(READ_EVENTS * (EVENT.size / 8));
  #eventBytes = new Uint8Array(this.#events.buffer);
  #queue = [];
  #head = 0;
  #waiters = [];
  #iterators = 0;

  constructor(options) {
    super();
    const s = codec.setupOptions(options);
    const h = new native.Handle();
    const fail = h.open(s.tickNs, s.timeoutNs, s.clockid, s.cap, s.touchSlots);
    if (fail !== undefined)
      throw systemError(fail[0], fail[1], fail[1] === 'open' ? 'open' : 'setup',
        fail[1] === 'open' ? { path: C.DEVICE } : {}, Wheel);
    if (s.touchSlots) {
      const ab = h.mapTouch(s.touchSlots);
      if (typeof ab === 'number') {
        h.close();
        throw systemError(ab, 'mmap', 'touch table', {}, Wheel);
      }
      this.#table = new BigUint64Array(ab, 0, s.touchSlots);
    }
    h.onreadable = (status) => this.#onReadable(status);
    this.#h = h;
    this.#setup = s;
  }

  get tickNs() { return this.#setup.tickNs; }
  get timeoutNs() { return this.#setup.timeoutNs; }
  get clock() { return this.#setup.clock; }
  get cap() { return this.#setup.cap; }
  get touchSlots() { return this.#setup.touchSlots; }
  get bigint() { return this.#setup.bigint; }
  get closed() { return this.#closed; }
  // The fd, for /proc/self/fdinfo or to pass on; -1 once closed.
  get fd() { return this.#h.fd; }
  // The touch table (a BigUint64Array over the mapping), or null.
  get touchTable() { return this.#table; }

  #check(op, id, caller) {
    if (this.#closed)
      throw closedError(op, id, caller);
  }

  #single(code, id, opts, caller) {
    const name = OP_NAMES[code];
    const big = codec.toId(id, this.#setup.bigint);
    const o = codec.toOptions(opts);
    const f = code === C.OP_ADD || code === C.OP_REFRESH ? codec.opFields(o, code, this.#setup) :
      { timeout: 0n, flags: 0, slot: 0 };
    this.#check(name, id, caller);
    const r = this.#h.op(code, big, f.timeout, f.flags, f.slot, this.#out);
    if (r < 0)
      throw systemError(r, 'ioctl', name, { id }, caller);
    return this.#out;
  }

  // Make id live; returns its deadline (ns on the wheel's clock).
  add(id, options) {
    return this.#single(C.OP_ADD, id, options, this.add)[0];
  }

  // Move a live id's deadline (or add it, with addIfAbsent); its deadline.
  refresh(id, options) {
    return this.#single(C.OP_REFRESH, id, options, this.refresh)[0];
  }

  // Remove a live id; the deadline it had.
  cancel(id) {
    return this.#single(C.OP_CANCEL, id, undefined, this.cancel)[0];
  }

  // A live id's deadline and time left.
  query(id) {
    const out = this.#single(C.OP_QUERY, id, undefined, this.query);
    return { deadlineNs: out[0], remainingNs: out[1] };
  }

  // Many operations, one system call; each gets its own result.
  batch(ops) {
    if (!Array.isArray(ops))
      throw invalidType('ops', 'an array', ops);
    if (ops.length > codec.INT_MAX)
      throw outOfRange('ops.length', `<= ${codec.INT_MAX}`, ops.length);
    const n = ops.length, a = this.#ops, ids = new Array(n);
    a.reserve(n);
    for (let i = 0; i < n; i++) {
      const o = ops[i];
      if (o === null || typeof o !== 'object')
        throw invalidType(`ops[${i}]`, 'of type object', o);
      const code = codec.opCode(o.op);
      if (code === undefined)
        throw invalidValue(`ops[${i}].op`, o.op, "must be 'add', 'refresh', 'cancel' or 'query'");
      ids[i] = codec.encodeOp(a, i, o, code, this.#setup);
    }
    this.#check('batch', undefined, this.batch);
    // A short count (a signal) leaves the rest unapplied: send it again.
    for (let done = 0; done < n;) {
      const r = this.#h.batch(done ? a.bytes.subarray(done * OP.size) : a.bytes, n - done);
      if (r < 0) {
        const err = systemError(r, 'ioctl', 'batch', {}, this.batch);
        err.applied = done;
        throw err;
      }
      done += r;
    }
    const results = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = a.result(i);
      results[i] = {
        op: ops[i].op, id: ids[i],
        code: r ? native.errnoInfo(-r)[0] : null, errno: r,
        deadlineNs: a.deadline(i), remainingNs: a.remaining(i),
      };
    }
    return results;
  }

  // The compact refresh (TWHEEL_IOC_REFRESH): every id to one timeout or
  // deadline, 8 bytes per id in, failures only out. Returns the ids not
  // refreshed (not live; with addIfAbsent, not added).
  refreshIds(ids, options) {
    const o = codec.toOptions(options);
    const f = codec.opFields(o, C.OP_REFRESH, this.#setup, false);
    const bigint = this.#setup.bigint;
    const src = codec.encodeIds(ids, bigint, this.#idScratch);
    const n = src.length;
    if (n > codec.INT_MAX)
      throw outOfRange('ids.length', `<= ${codec.INT_MAX}`, n);
    this.#check('refreshIds', undefined, this.refreshIds);
    if (this.#failed.length < n)
      this.#failed = new BigUint64Array(Math.max(n, this.#failed.length * 2));
    const timeout = f.flags & (C.OPF_TIMEOUT | C.OPF_ABSTIME) ? f.timeout : C.TIMEOUT_DEFAULT;
    const flags = f.flags & ~C.OPF_TIMEOUT;
    const failed = [];
    for (let done = 0; done < n;) {
      const r = this.#h.refreshIds(src.subarray(done), n - done, this.#failed, timeout, flags,
        this.#nrFailed);
      if (r < 0) {
        const err = systemError(r, 'ioctl', 'refreshIds', {}, this.refreshIds);
        err.applied = done;
        throw err;
      }
      for (let i = 0; i < this.#nrFailed[0]; i++)
        failed.push(codec.idOut(this.#failed[i], bigint));
      done += r;
    }
    return failed;
  }

  // The live ids, { id, deadlineNs, slot }, a chunk per system call.
  * dump(options) {
    const o = codec.toOptions(options);
    const chunk = o.chunk === undefined ? 1024 : codec.toU32(o.chunk, 'options.chunk', 1, 1 << 20);
    const buf = new ArrayBuffer(chunk * DUMP.size);
    const u64 = new BigUint64Array(buf), u32 = new Uint32Array(buf), bytes = new Uint8Array(buf);
    const cursor = new BigUint64Array(1);
    while (cursor[0] !== C.DUMP_END) {
      this.#check('dump', undefined, this.dump);
      const n = this.#h.dump(bytes, chunk, cursor);
      if (n < 0)
        throw systemError(n, 'ioctl', 'dump', {});
      yield* codec.decodeDump(u64, u32, n, this.#setup.bigint);
    }
  }

  // The events waiting now, without blocking (at most max); [] if none.
  readEvents(max = READ_EVENTS) {
    codec.toU32(max, 'max', 1, READ_EVENTS);
    this.#check('read', undefined, this.readEvents);
    const n = this.#h.read(this.#eventBytes.subarray(0, max * EVENT.size));
    if (n < 0)
      throw systemError(n, 'read', 'read', {}, this.readEvents);
    return codec.decodeEvents(this.#events, n, this.#setup.bigint);
  }

  // The wheel's clock now, ns: what deadlines and expiredNs compare with.
  now() {
    this.#check('now', undefined, this.now);
    // libuv's uv_hrtime(), behind process.hrtime, reads CLOCK_MONOTONIC.
    return this.#setup.clockid === C.CLOCK_MONOTONIC ? process.hrtime.bigint() : this.#h.now();
  }

  #slot(slot) {
    if (this.#table === null)
      throw invalidValue('slot', slot, 'needs a wheel made with touchSlots');
    if (typeof slot !== 'number')
      throw invalidType('slot', 'of type number', slot);
    throw outOfRange('slot', `an integer >= 0 and < ${this.#table.length}`, slot);
  }

  // Refresh the id bound to slot: the wheel's clock now, stored there.
  touch(slot) {
    const table = this.#table;
    if (table === null || typeof slot !== 'number' || !(slot >= 0 && slot < table.length) || slot % 1 !== 0)
      this.#slot(slot);
    this.#check('touch', undefined, this.touch);
    if (this.#setup.clockid === C.CLOCK_MONOTONIC)
      Atomics.store(table, slot, process.hrtime.bigint());
    else
      this.#h.touch(slot);
  }

  // Store a time of the caller's into slot (ns on the wheel's clock).
  touchAt(slot, ns) {
    const table = this.#table;
    if (table === null || typeof slot !== 'number' || !(slot >= 0 && slot < table.length) || slot % 1 !== 0)
      this.#slot(slot);
    const v = codec.toNs(ns, 'ns');
    this.#check('touch', undefined, this.touchAt);
    Atomics.store(table, slot, v);
  }

  ref() {
    this.#refed = true;
    if (!this.#closed)
      this.#h.ref(true);
    return this;
  }

  unref() {
    this.#refed = false;
    if (!this.#closed)
      this.#h.ref(false);
    return this;
  }

  hasRef() {
    return this.#refed;
  }

  // Stop the poll handle and close the fd; the wheel and its ids are
  // freed. Safe from an 'expired' listener and more than once. Waiting
  // iterators end after the events already read.
  close() {
    if (this.#closed)
      return;
    this.#closed = true;
    this.#polling = false;
    const r = this.#h.close();
    for (const w of this.#waiters.splice(0))
      w({ value: undefined, done: true });
    process.nextTick(() => {
      if (r < 0)
        this.emit('error', systemError(r, 'close', 'close', {}));
      this.emit('close');
    });
  }

  // A listener added or removed for 'expired' starts or stops the reading
  // (once() and prependOnceListener() go through these too).
  addListener(event, listener) {
    super.addListener(event, listener);
    return this.#listeners(event);
  }

  on(event, listener) {
    super.on(event, listener);
    return this.#listeners(event);
  }

  prependListener(event, listener) {
    super.prependListener(event, listener);
    return this.#listeners(event);
  }

  removeListener(event, listener) {
    super.removeListener(event, listener);
    return this.#listeners(event);
  }

  off(event, listener) {
    super.off(event, listener);
    return this.#listeners(event);
  }

  removeAllListeners(event) {
    super.removeAllListeners(...arguments);
    return this.#listeners(arguments.length ? event : 'expired');
  }

  #listeners(event) {
    if (event === 'expired')
      this.#update();
    return this;
  }

  // The expirations one at a time; see "Delivery" at the top.
  events() {
    const wheel = this;
    let done = false;
    this.#iterators++;
    const finish = () => {
      if (!done) {
        done = true;
        wheel.#iterators--;
        wheel.#update();
      }
      return { value: undefined, done: true };
    };
    return {
      next() {
        if (done)
          return Promise.resolve({ value: undefined, done: true });
        if (wheel.#head < wheel.#queue.length)
          return Promise.resolve({ value: wheel.#shift(), done: false });
        if (wheel.#closed)
          return Promise.resolve(finish());
        return new Promise((resolve) => {
          wheel.#waiters.push((r) => resolve(r.done ? finish() : r));
          wheel.#update();
        });
      },
      return() {
        return Promise.resolve(finish());
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  [Symbol.asyncIterator]() {
    return this.events();
  }

  #shift() {
    const ev = this.#queue[this.#head];
    this.#queue[this.#head++] = undefined;
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    }
    return ev;
  }

  // Whether to read the fd: a listener, or an iterator waiting on an empty queue.
  #wanted() {
    return !this.#closed && (this.listenerCount('expired') > 0 ||
      (this.#waiters.length > 0 && this.#head === this.#queue.length));
  }

  #update() {
    const want = this.#wanted();
    if (want === this.#polling)
      return;
    const r = this.#h.poll(want);
    if (r < 0) {
      process.nextTick(() => this.emit('error', systemError(r, 'epoll_ctl', 'poll', {})));
      return;
    }
    this.#polling = want;
  }

  #onReadable(status) {
    if (this.#closed)
      return;
    if (status < 0) {
      this.emit('error', systemError(status, 'epoll_wait', 'poll', {}));
      return;
    }
    for (let round = 0; round < READS_PER_TURN && this.#wanted(); round++) {
      const n = this.#h.read(this.#eventBytes);
      if (n < 0) {
        this.emit('error', systemError(n, 'read', 'read', {}));
        break;
      }
      if (n === 0)
        break;
      const events = codec.decodeEvents(this.#events, n, this.#setup.bigint);
      if (this.#iterators > 0) {
        for (const ev of events)
          this.#queue.push(ev);
        while (this.#waiters.length && this.#head < this.#queue.length)
          this.#waiters.shift()({ value: this.#shift(), done: false });
      }
      if (this.listenerCount('expired') > 0)
        this.emit('expired', events);
      if (this.#closed)
        return;
      if (n < READ_EVENTS)
        break;
    }
    this.#update();
  }
}

module.exports = { Wheel, constants: C };
