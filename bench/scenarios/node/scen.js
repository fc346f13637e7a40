// SPDX-License-Identifier: GPL-2.0
/*
 * scen.js: the Node.js ways of the scenario benchmark, one per argument,
 * each a driver of the protocol in ../scen.h (scenctl starts it):
 *
 *   null        the replay alone: the floor the Node ways are measured from
 *   settimeout  setTimeout per id, timeout.refresh() on refresh, clearTimeout
 *               on cancel; the Timeouts in a Map by id
 *   settimeout-lazy  setTimeout per id as an idle detector is written
 *               (Netty's IdleStateHandler): a refresh stores the time; the
 *               Timeout, when it fires, expires the id if that is a timeout
 *               old, else sets a new one for what is left
 *   twheel      /dev/twheel through the Node binding (the twheel package's
 *               Wheel), as scen-c's twheel-batch: each turn's refreshes in
 *               one wheel.refreshIds (addIfAbsent), adds and cancels in one
 *               wheel.batch; expiries as its 'expired' events, which the
 *               event loop delivers from the wheel's fd
 *   twheel-touch  the same with a touch table, as scen-c's twheel-touch:
 *               an add binds the id to its slot ({ slot }), a refresh is
 *               wheel.touch(), no system call (the warm-up's ids, past the
 *               table, take twheel's path)
 *
 * twheel's ways take the schedule's tick: one precision for the row (Node's
 * own timers have none but their millisecond). The replay runs on the
 * event loop, as a server's packets would: each turn applies the events
 * that are due and sets a timer for the next ones, at least the
 * schedule's gathering wait away (and at least Node's 1 ms). Before that
 * V8 is warmed up on ids
 * outside the schedule's, as a long-running server's code is compiled
 * by the time it holds its millions of ids. At the end it says its live
 * heap after a full collection (node --expose-gc; scen.h).
 */
'use strict';

const fs = require('fs');

const ADD = 0, REFRESH = 1, CANCEL = 2, MARK = 3;

function mono() {
	return Number(process.hrtime.bigint());
}

/* ---- expiries to fd 3 ---- */

const WARM_BASE = 1 << 29;
const out = Buffer.alloc(16 * 4096);
let outLen = 0;

function flush() {
	let off = 0;
	while (off < outLen)
		off += fs.writeSync(3, out, off, outLen - off);
	outLen = 0;
}

function report(id) {
	const now = mono();
	/* A warm-up id (the warm-up outlasted its timeout): not the schedule's. */
	if (id >= WARM_BASE)
		return;
	if (outLen === out.length)
		flush();
	out.writeUInt32LE(id, outLen);
	out.writeUInt32LE(0, outLen + 4);
	out.writeUInt32LE(now % 0x100000000, outLen + 8);
	out.writeUInt32LE(Math.floor(now / 0x100000000), outLen + 12);
	outLen += 16;
}

/* ---- the schedule (scen.h) ---- */

const b = fs.readFileSync(process.argv[3]);
if (b.readBigUInt64LE(0) !== 0x324e454353n)
	throw new Error(process.argv[3] + ': not a schedule');
const nrIds = Number(b.readBigUInt64LE(24));
const nrEvents = Number(b.readBigUInt64LE(32));
const timeoutMs = Number(b.readBigUInt64LE(40)) / 1e6;
const tickNs = b.readBigUInt64LE(48);
const endUs = Number(b.readBigUInt64LE(56));
const gatherMs = Number(b.readBigUInt64LE(88)) / 1e6;
const ev = new Uint32Array(b.buffer, b.byteOffset + 96, 2 * nrEvents);

/* ---- the ways ---- */

function setTimeoutWay() {
	const timers = new Map();
	const fire = (id) => {
		timers.delete(id);
		report(id);
	};
	return (op, id) => {
		const t = timers.get(id);
		if (op === CANCEL) {
			if (t) {
				clearTimeout(t);
				timers.delete(id);
			}
		} else if (t) {
			t.refresh();
		} else {
			timers.set(id, setTimeout(fire, timeoutMs, id));
		}
	};
}

/*
 * IdleStateHandler's way: one Timeout per id, set once; a refresh stores
 * the time. When it fires, an id whose last arm is a timeout old expires;
 * any other gets a new Timeout for what is left.
 */
function setTimeoutLazyWay() {
	const { performance } = require('perf_hooks');
	const timers = new Map();
	const fire = (id) => {
		const e = timers.get(id);
		if (!e)
			return;
		const left = e.last + timeoutMs - performance.now();
		if (left > 0) {
			e.t = setTimeout(fire, Math.ceil(left), id);
			return;
		}
		timers.delete(id);
		report(id);
	};
	return (op, id) => {
		const e = timers.get(id);
		if (op === CANCEL) {
			if (e) {
				clearTimeout(e.t);
				timers.delete(id);
			}
		} else if (e) {
			e.last = performance.now();
		} else {
			timers.set(id, { t: setTimeout(fire, timeoutMs, id), last: performance.now() });
		}
	};
}

/* twheel's tick: the row's, or the module's finest where the row's is finer. */
const TWHEEL_TICK_NS = tickNs > 100000n ? tickNs : 100000n;
const BATCH = 4096;

/*
 * A turn's events in order, as runs: a run of refreshes goes in one
 * refreshIds, a run of adds and cancels in one batch, so an id's events
 * reach the wheel in the schedule's order. The apply function's turn()
 * sends what is gathered. With a touch table each id has the slot of its
 * number: an add binds it, a refresh is a touch.
 */
function twheelWay(touch) {
	const { Wheel } = require('twheel');
	const wheel = new Wheel({
		tickNs: TWHEEL_TICK_NS, timeoutNs: b.readBigUInt64LE(40),
		touchSlots: touch ? nrIds : 0,
	});
	wheel.on('expired', (events) => {
		for (const e of events)
			report(e.id);
	});
	let ops = [], ids = [];
	const sendOps = () => {
		if (!ops.length)
			return;
		/* A cancel of an id that expired meanwhile is ENOENT: nothing to do. */
		for (const r of wheel.batch(ops))
			if (r.errno && r.code !== 'ENOENT')
				throw new Error(`twheel: ${r.op} of ${r.id}: ${r.code}`);
		ops = [];
	};
	const sendIds = () => {
		if (!ids.length)
			return;
		const failed = wheel.refreshIds(ids, { addIfAbsent: true });
		if (failed.length)
			throw new Error(`twheel: ${failed.length} refreshes neither refreshed nor added`);
		ids = [];
	};
	const apply = (op, id) => {
		const slot = touch && id < nrIds;
		if (op === REFRESH && slot) {
			wheel.touch(id);
			return;
		}
		if (op === REFRESH) {
			sendOps();
			if (ids.push(id) === BATCH)
				sendIds();
			return;
		}
		sendIds();
		const o = op !== ADD ? { op: 'cancel', id } : slot ? { op: 'add', id, slot: id } : { op: 'add', id };
		if (ops.push(o) === BATCH)
			sendOps();
	};
	apply.turn = () => {
		sendOps();
		sendIds();
	};
	return apply;
}

const ways = {
	null: () => () => {},
	settimeout: setTimeoutWay,
	'settimeout-lazy': setTimeoutLazyWay,
	twheel: () => twheelWay(false),
	'twheel-touch': () => twheelWay(true),
};

if (process.argv.length !== 4 || !ways[process.argv[2]]) {
	process.stderr.write('usage: node scen.js null|settimeout|settimeout-lazy|twheel|twheel-touch SCHEDULE (scenctl runs it; see scen.h)\n');
	process.exit(2);
}
const apply = ways[process.argv[2]]();
const turn = apply.turn || (() => {});

/* ---- the protocol and the loop ---- */

/* Three rounds of add, refresh and cancel of 50,000 ids the schedule never uses. */
for (let round = 0; round < 3; round++)
	for (const op of [ADD, REFRESH, CANCEL]) {
		for (let id = WARM_BASE; id < WARM_BASE + 50000; id++)
			apply(op, id);
		turn();
	}

process.stdout.write('ready\n');
const line = Buffer.alloc(64);
const got = fs.readSync(0, line, 0, line.length, null);
const t0 = Number(line.toString('utf8', 0, got).trim().split(' ')[1]);
const end = t0 + endUs * 1000;
let i = 0, lag = 0, applied = 0;
const n = nrEvents;

function step() {
	const now = mono(), first = i;
	while (i < n && t0 + ev[2 * i] * 1000 <= now) {
		const op = ev[2 * i + 1] >>> 30, id = ev[2 * i + 1] & 0x3fffffff;
		if (op === MARK) {
			turn();
			flush();
			fs.writeSync(1, 'mark ' + id + '\n');
		} else {
			apply(op, id);
			applied++;
		}
		i++;
	}
	turn();
	/* The turn's first event was applied this late, its last by now. */
	if (i > first) {
		const done = mono(), late = done - t0 - ev[2 * first] * 1000;
		lag = Math.max(lag, late);
		if (late > 10e6)
			fs.writeSync(1, 'late ' + ev[2 * first] + ' ' + ev[2 * (i - 1)] + ' ' + done + '\n');
	}
	flush();
	if (i === n && now >= end) {
		/* The window is sampled: what the heap keeps after a full collection (scen.h). */
		const got = fs.readSync(0, line, 0, line.length, null);
		if (line.toString('utf8', 0, got).trim() !== 'sampled')
			throw new Error('no sampled');
		global.gc();
		const m = process.memoryUsage();
		fs.writeSync(1, 'heap ' + m.heapUsed + ' ' + m.heapTotal + '\n');
		/* The harness reads the cgroup's memory while this process holds it all (scen.h). */
		const got2 = fs.readSync(0, line, 0, line.length, null);
		if (line.toString('utf8', 0, got2).trim() !== 'measured')
			throw new Error('no measured');
		fs.writeSync(1, 'done applied=' + applied + ' lag_max_ns=' + lag + '\n');
		process.exit(0);
	}
	const next = i < n ? t0 + ev[2 * i] * 1000 : end;
	setTimeout(step, Math.max(1, gatherMs, (next - mono()) / 1e6));
}

setTimeout(step, Math.max(0, (t0 - mono()) / 1e6));
