// SPDX-License-Identifier: MIT
//
// The seed's offline check in Node: "a user with no packet for 30 s is
// offline", for many connections, done two ways side by side in one event
// loop on the same simulated heartbeats, so both must find the same
// silences:
//   twheel  one Wheel; each loop step's due heartbeats go in one
//           refreshIds() call, offline users arrive as 'expired' events;
//   ring    the seed's ring of 31 Sets with a Map uid -> slot, moved one
//           slot per setInterval tick, a refresh moving the uid to the slot
//           just behind the cursor (two slips of the seed's code fixed:
//           `slotIndex && ...` skipped slot 0, and `currentSlotIndex - 1`
//           was -1, a slot never scanned, whenever the cursor was at 0).
// Scaled as examples/heartbeat/heartbeat.c scales the seed: 5000 connections instead of
// 100k (1/20), a 2 s timeout and heartbeats every ~500 ms instead of 30 s
// and ~7.5 s (time 1/15), 12 s in all; 500 connections go silent at random
// times and each must be reported once, never before its last heartbeat
// + timeout, and no live one ever; a run whose own loop fell behind (sent
// a heartbeat later than the timeout) says so and fails, as the C demo
// does. One line per way, then PASS or FAIL:
//   heartbeat: impl=I connections=N silent=N reported=N early=0
//              live_reported=0 p50_ms=X p99_ms=X
//   node examples/heartbeat.js [conns [silent]]
'use strict';
const { Wheel } = require('..');

const CONNS = Number(process.argv[2] || 5000);
const SILENT = Number(process.argv[3] || 500);
const TIMEOUT_MS = 2000;
const INTERVAL_MS = 500;
const TICK_MS = 10;
const DURATION_MS = 12000;
const STEP_MS = 5;
// The ring: 31 slots, one per 1/30 of the timeout (rounded up, so that
// 30 slots are never shorter than the timeout).
const SLOTS = 31;
const SLOT_MS = Math.ceil(TIMEOUT_MS / (SLOTS - 1));

// xorshift32: the same connections and silences on every run.
let seed = 0x5eed;
function rnd(n) {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
}

// ms on CLOCK_MONOTONIC, the wheel's clock.
const now = () => Number(process.hrtime.bigint()) / 1e6;
// hbs: each heartbeat's [sent, the refresh had returned by].
const conns = Array.from({ length: CONNS }, () => ({ lastHb: 0, nextHb: 0, silentAt: 0, hbs: [] }));

// One detector's tally. A report at `at` of a connection is early if a
// heartbeat reached the detector less than the timeout before; of a live
// connection (not yet silent at `at`), it is a false report if early, and
// otherwise means the simulation itself sent that connection's heartbeat
// late (the loop fell behind), which the detector was right to report.
function tally(impl) {
  return { impl, reported: new Set(), early: 0, live: 0, twice: 0, stalled: 0, late: [] };
}
function report(t, uid, at, early, seen) {
  const c = conns[uid];
  if (early)
    t.early++;
  if (!c.silentAt || at < c.silentAt) {
    if (early)
      t.live++;
    else
      t.stalled++;
    return;
  }
  if (t.reported.has(uid)) {
    t.twice++;
    return;
  }
  t.reported.add(uid);
  t.late.push(seen - (c.lastHb + TIMEOUT_MS));
}

// Whether the wheel's expiry at e (ms) came before the timeout had passed
// since a heartbeat it had been given: the last one whose refresh had
// returned by then (a refresh still in flight at e may rightly find the
// id expired).
function earlyAt(c, e) {
  for (let i = c.hbs.length - 1; i >= 0; i--)
    if (c.hbs[i][1] <= e)
      return e < c.hbs[i][0] + TIMEOUT_MS;
  return false;
}

// twheel: ids are the connection numbers.
const wheel = new Wheel({ tickMs: TICK_MS, timeoutMs: TIMEOUT_MS });
const tw = tally('twheel');
let lost = 0, behind = 0;
wheel.on('expired', (events) => {
  const seen = now();
  for (const ev of events) {
    const e = Number(ev.expiredNs) / 1e6;
    report(tw, ev.id, e, earlyAt(conns[ev.id], e), seen);
  }
});

// The seed's ring.
const ring = { slots: Array.from({ length: SLOTS }, () => new Set()), where: new Map(), cur: 1 };
const rg = tally('ring');
function doAction(uid) {
  const old = ring.where.get(uid);
  if (old !== undefined)
    ring.slots[old].delete(uid);
  const slot = (ring.cur + SLOTS - 1) % SLOTS;
  ring.slots[slot].add(uid);
  ring.where.set(uid, slot);
}

// Every connection opens now: one refreshIds() adds them all.
const all = conns.map((_, uid) => uid);
const t0 = now();
wheel.refreshIds(all, { addIfAbsent: true });
all.forEach(doAction);
const start = now();
for (const c of conns) {
  c.lastHb = t0;
  c.hbs.push([t0, start]);
  c.nextHb = start + rnd(INTERVAL_MS);
}
for (let n = 0; n < SILENT;) {
  const c = conns[rnd(CONNS)];
  if (c.silentAt)
    continue;
  c.silentAt = start + 1000 + rnd(DURATION_MS - TIMEOUT_MS - 3000);
  n++;
}
const ringTimer = setInterval(() => {
  const set = ring.slots[ring.cur], at = now();
  for (const uid of set) {
    ring.where.delete(uid);
    report(rg, uid, at, at < conns[uid].lastHb + TIMEOUT_MS, at);
  }
  set.clear();
  ring.cur = (ring.cur + 1) % SLOTS;
}, SLOT_MS);

// The connections: each step, the heartbeats due by then reach both. A
// heartbeat waits in a bucket per step, so a step costs what is due.
let refreshes = 0;
const buckets = new Map();
const bucketOf = (t) => Math.floor((t - start) / STEP_MS);
let done = -1;
function schedule(uid) {
  const c = conns[uid];
  if (c.silentAt && c.silentAt <= c.nextHb)
    return;
  // One already due goes out at the next step (the loop is catching up).
  const b = Math.max(bucketOf(c.nextHb), done + 1);
  const list = buckets.get(b);
  if (list)
    list.push(uid);
  else
    buckets.set(b, [uid]);
}
conns.forEach((_, uid) => schedule(uid));
const stepTimer = setInterval(() => {
  // Taken before the refresh: the deadline is at least this + timeout.
  const sent = now();
  const due = [];
  for (const last = bucketOf(sent); done < last; done++) {
    const list = buckets.get(done + 1);
    if (!list)
      continue;
    buckets.delete(done + 1);
    // Silent means no packet from silentAt on, however late the loop is.
    for (const uid of list)
      if (!conns[uid].silentAt || sent < conns[uid].silentAt)
        due.push(uid);
  }
  if (!due.length)
    return;
  // A heartbeat of a connection reported offline brings it back, in the
  // ring (doAction) as in the wheel (addIfAbsent).
  const failed = new Set(wheel.refreshIds(due, { addIfAbsent: true }));
  const returned = now();
  lost += failed.size;
  for (const uid of due) {
    const c = conns[uid];
    doAction(uid);
    if (sent - c.lastHb > TIMEOUT_MS)
      behind++;
    if (!failed.has(uid)) {
      c.lastHb = sent;
      c.hbs.push([sent, returned]);
    }
    c.nextHb += INTERVAL_MS * 8 / 10 + rnd(INTERVAL_MS * 4 / 10 + 1);
    schedule(uid);
  }
  refreshes += due.length;
}, STEP_MS);

function pct(v, p) {
  if (!v.length)
    return 0;
  const s = [...v].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(s.length * p / 100) - 1)];
}

setTimeout(() => {
  clearInterval(stepTimer);
  clearInterval(ringTimer);
  wheel.close();
  console.log(`heartbeat: ${CONNS} connections (the seed's 100k / 20), offline after ${TIMEOUT_MS} ms ` +
    `(30 s / 15), heartbeats every ~${INTERVAL_MS} ms, ${SILENT} go silent; ${refreshes} refreshes ` +
    `in ${DURATION_MS / 1000} s, ${lost} refused`);
  let ok = lost === 0;
  for (const t of [tw, rg]) {
    console.log(`heartbeat: impl=${t.impl} connections=${CONNS} silent=${SILENT} ` +
      `reported=${t.reported.size} early=${t.early} live_reported=${t.live} ` +
      `p50_ms=${pct(t.late, 50).toFixed(1)} p99_ms=${pct(t.late, 99).toFixed(1)}`);
    ok = ok && t.reported.size === SILENT && t.early === 0 && t.live === 0 && t.twice === 0;
    if (t.twice)
      console.log(`heartbeat: impl=${t.impl} reported ${t.twice} silent connections twice`);
  }
  const same = [...tw.reported].every((uid) => rg.reported.has(uid));
  console.log(`heartbeat: both found the same silences: ${same ? 'yes' : 'no'}`);
  // A run whose loop fell behind did not test what it means to.
  if (behind)
    console.log(`heartbeat: the event loop fell behind: ${behind} heartbeats went out more than ` +
      `${TIMEOUT_MS} ms after the previous one (reported rightly: twheel ${tw.stalled}, ring ` +
      `${rg.stalled}); the machine is too slow for this scale`);
  ok = ok && same && behind === 0;
  console.log(`heartbeat: ${ok ? 'PASS' : 'FAIL'}`);
  process.exitCode = ok ? 0 : 1;
}, DURATION_MS);
