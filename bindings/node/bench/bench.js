// SPDX-License-Identifier: MIT
//
// What a refresh costs a Node process that keeps n connection deadlines
// (30 s each), n = 10^5 and 10^6, and what each id costs in memory: twheel
// against what a Node user would write instead. Run in the VM, as root,
// with --expose-gc (vm-bench.sh); reported, not asserted.
//
//   twheel-refresh   refreshIds() of 256 ids per call (TWHEEL_IOC_REFRESH)
//   twheel-batch     batch() of 256 refresh ops per call (TWHEEL_IOC_BATCH)
//   twheel-touch     touch(slot) per refresh: a clock read and an Atomics.store
//   twheel-single    refresh(id) per refresh: one TWHEEL_IOC_OP per id
//   settimeout       clearTimeout() + setTimeout() per refresh, a Timeout per id
//   timeout-refresh  timeout.refresh() per refresh, a Timeout per id
//
// Each impl runs in a child process of its own (so that memory figures do
// not mix), on one stream of STREAM refreshes of random ids among n.
//   cpu_ns_per_refresh: process.cpuUsage() (user + system, GC threads
//     included) over the stream, which holds the module's work its calls
//     do (the module has no thread: its expiry and touch work runs in the
//     calls that use a wheel), plus the CPU time meanwhile of the kworkers
//     (/proc/PID/schedstat of every kworker/*, as bench/device/bench.h's
//     kthreads_ns()), where the kernel runs what it defers.
//     For twheel-touch the stream's ids are due at one deadline past its
//     end, and the process looks at the wheel from then on, every 20 ms
//     until every id was looked at: each look (a read(2) of one event, which
//     first does what the wheel's timer marked due) makes the module look
//     at the slots of the ids due and re-arm the touched ones, the work
//     the stores stand for; the re-arms' share of the looks' CPU time is
//     added (the looks that expire untouched ids are expiry, which no
//     figure counts), as bench/devbench.c does.
//   bytes_per_id: after gc(), the growth of the V8 heap (heapUsed) plus
//     the kernel memory charged to the process's memory cgroup (memory.stat
//     "kernel": the module's entries, its index and the touch table's pages
//     are all charged there) while the n ids are added, over n. The RSS
//     growth is printed beside it on a '#' line.
// Output: binding-bench: lang=node impl=I n=N cpu_ns_per_refresh=C bytes_per_id=B
//   node --expose-gc bench/bench.js [N...]        every impl at each N
//   node --expose-gc bench/bench.js --impl I N    one impl (the children)
'use strict';
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { Wheel } = require('..');
const { C } = require('../lib/codec');

const TIMEOUT_MS = 30000;
const STREAM = 1000000;
const CHUNK = 256;
const IMPLS = ['twheel-refresh', 'twheel-batch', 'twheel-touch', 'twheel-single', 'settimeout',
  'timeout-refresh'];

// Every kworker's run time.
function kthreadsNs() {
  let sum = 0n;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[1-9]/.test(pid))
      continue;
    try {
      const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8');
      if (!comm.startsWith('kworker/'))
        continue;
      sum += BigInt(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that exited meanwhile.
    }
  }
  return sum;
}

function cpuNs() {
  const u = process.cpuUsage();
  return BigInt(u.user + u.system) * 1000n;
}

// The kernel memory charged to this process's cgroup, in bytes, or 0.
function kernelBytes() {
  try {
    const cg = fs.readFileSync('/proc/self/cgroup', 'utf8').match(/^0::(.*)$/m)[1];
    const stat = fs.readFileSync(`/sys/fs/cgroup${cg}/memory.stat`, 'utf8');
    return Number(stat.match(/^kernel (\d+)$/m)[1]);
  } catch {
    return 0;
  }
}

function memory() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss, kernel: kernelBytes() };
}

function fdinfo(w, field) {
  const m = fs.readFileSync(`/proc/self/fdinfo/${w.fd}`, 'utf8').match(new RegExp(`^${field}:\\s*(\\d+)`, 'm'));
  return m ? Number(m[1]) : 0;
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// Look at the wheel as an event loop's poll would, and return the CPU
// time it took: a read(2) of one event on the non-blocking fd, which first
// expires, re-arms and cascades what the wheel's timer marked due (Node
// has no poll(2) of its own; the one event it may take is an untouched
// id's, which nobody needs).
const oneEvent = Buffer.alloc(C.EVENT_SIZE);
function look(w) {
  const t = cpuNs();
  try {
    fs.readSync(w.fd, oneEvent, 0, oneEvent.length, null);
  } catch (e) {
    if (e.code !== 'EAGAIN')
      throw e;
  }
  return cpuNs() - t;
}

// The stream: STREAM ids among n, the same for every impl.
function stream(n) {
  const ids = new Uint32Array(STREAM);
  let x = 2463534242;
  for (let i = 0; i < STREAM; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    ids[i] = (x >>> 0) % n;
  }
  return ids;
}

function run(impl, n) {
  const ids = stream(n);
  const noop = () => {};
  let setup, refresh, prepare = () => {}, extra = () => 0n;
  let wheel = null, timers = null;

  if (impl.startsWith('twheel')) {
    const touch = impl === 'twheel-touch';
    setup = () => {
      wheel = new Wheel({ tickMs: 1, timeoutMs: TIMEOUT_MS, touchSlots: touch ? n : 0 });
      for (let i = 0; i < n; i += 65536) {
        const ops = [];
        for (let j = i; j < Math.min(n, i + 65536); j++)
          ops.push(touch ? { op: 'add', id: j, slot: j } : { op: 'add', id: j });
        wheel.batch(ops);
      }
    };
    if (impl === 'twheel-refresh') {
      const big = BigUint64Array.from(ids, BigInt);
      refresh = () => {
        for (let i = 0; i < STREAM; i += CHUNK)
          wheel.refreshIds(big.subarray(i, i + CHUNK));
      };
    } else if (impl === 'twheel-single') {
      refresh = () => {
        for (let i = 0; i < STREAM; i++)
          wheel.refresh(ids[i]);
      };
    } else if (impl === 'twheel-batch') {
      refresh = () => {
        const ops = new Array(CHUNK);
        for (let i = 0; i < STREAM; i += CHUNK) {
          const k = Math.min(CHUNK, STREAM - i);
          ops.length = k;
          for (let j = 0; j < k; j++)
            ops[j] = { op: 'refresh', id: ids[i + j] };
          wheel.batch(ops);
        }
      };
    } else {
      // The stream's ids all due shortly past its end (see the top): its
      // length estimated from a sample, with ample margin, as the timeout
      // of one refreshIds() just before it.
      let deadlineNs;
      const all = BigUint64Array.from({ length: n }, (_, i) => BigInt(i));
      prepare = () => {
        const t = wheel.now();
        for (let i = 0; i < STREAM / 100; i++)
          wheel.touchAt(ids[i], 0);
        const timeoutNs = 3n * (wheel.now() - t) * 100n + 2000000000n;
        deadlineNs = wheel.now() + timeoutNs;
        wheel.refreshIds(all, { timeoutNs });
      };
      refresh = () => {
        for (let i = 0; i < STREAM; i++)
          wheel.touch(ids[i]);
        if (wheel.now() >= deadlineNs)
          console.log(`# binding-bench: impl=${impl} n=${n}: the stream outlasted its deadline`);
      };
      // The module's share: look until past the deadline every id was looked at.
      extra = () => {
        const touched = new Set(ids).size;
        // The heap settled first: a collection inside a look would count as its CPU.
        globalThis.gc();
        const kw0 = kthreadsNs();
        let looks = 0n;
        // From the deadline on, every 20 ms until every id was looked at.
        if (wheel.now() < deadlineNs)
          sleep(Math.ceil(Number(deadlineNs - wheel.now()) / 1e6));
        for (;;) {
          looks += look(wheel);
          if (fdinfo(wheel, 'touch_rearms') + fdinfo(wheel, 'expired_total') >= n ||
              wheel.now() >= deadlineNs + 60000000000n)
            break;
          sleep(20);
        }
        const kw = looks + kthreadsNs() - kw0;
        const rearms = fdinfo(wheel, 'touch_rearms'), expired = fdinfo(wheel, 'expired_total');
        console.log(`# binding-bench: impl=${impl} n=${n} touched=${touched} rearms=${rearms} ` +
          `expired=${expired} module_ns=${kw} looks_ns=${looks}`);
        return rearms + expired ? kw * BigInt(rearms) / BigInt(rearms + expired) : 0n;
      };
    }
  } else {
    setup = () => {
      timers = new Array(n);
      for (let i = 0; i < n; i++)
        timers[i] = setTimeout(noop, TIMEOUT_MS);
    };
    refresh = impl === 'settimeout' ? () => {
      for (let i = 0; i < STREAM; i++) {
        const id = ids[i];
        clearTimeout(timers[id]);
        timers[id] = setTimeout(noop, TIMEOUT_MS);
      }
    } : () => {
      for (let i = 0; i < STREAM; i++)
        timers[ids[i]].refresh();
    };
  }

  const m0 = memory();
  setup();
  const m1 = memory();
  prepare();
  const bytes = (m1.heap - m0.heap + m1.kernel - m0.kernel) / n;
  const cpu0 = cpuNs(), kw0 = kthreadsNs(), t0 = process.hrtime.bigint();
  refresh();
  const cpu = cpuNs() - cpu0, kw = kthreadsNs() - kw0, wall = process.hrtime.bigint() - t0;
  const module = extra();
  console.log(`# binding-bench: impl=${impl} n=${n} process_ns=${Number(cpu) / STREAM} ` +
    `module_ns=${Number(kw + module) / STREAM} wall_ns=${Number(wall) / STREAM} ` +
    `heap_bytes=${(m1.heap - m0.heap) / n} kernel_bytes=${(m1.kernel - m0.kernel) / n} ` +
    `rss_bytes=${(m1.rss - m0.rss) / n}`);
  console.log(`binding-bench: lang=node impl=${impl} n=${n} ` +
    `cpu_ns_per_refresh=${Math.round(Number(cpu + kw + module) / STREAM)} bytes_per_id=${Math.round(bytes)}`);
  if (wheel)
    wheel.close();
  for (const t of timers || [])
    clearTimeout(t);
}

if (typeof globalThis.gc !== 'function') {
  console.error('bench: run with node --expose-gc');
  process.exit(2);
}
if (process.argv[2] === '--impl') {
  run(process.argv[3], Number(process.argv[4]));
} else {
  const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [100000, 1000000];
  let failed = 0;
  for (const n of sizes)
    for (const impl of IMPLS) {
      const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--impl', impl, String(n)],
        { stdio: 'inherit' });
      if (r.status !== 0) {
        console.log(`# binding-bench: impl=${impl} n=${n} failed: exit ${r.status}`);
        failed++;
      }
    }
  process.exitCode = failed ? 1 : 0;
}
