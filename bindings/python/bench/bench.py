# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""What keeping n deadlines costs an asyncio program: twheel against
loop.call_later, at n = 10^5 and 10^6 ids (run it in the test VM: make
bench). Reported, not asserted.

Every implementation runs in a process of its own (clean memory), in a
running event loop, and is measured the same way:

  bytes_per_id        the growth, while n ids are set up, of the process's
                      resident memory (VmRSS: Python's objects, the loop's
                      heap, a touch table's pages once faulted in) plus the
                      module's kernel memory (the slabs of its entry caches
                      from /proc/slabinfo, or the Slab total where the cache
                      is merged away, and VmallocUsed for the id index, as
                      stress/scale.c measures it), divided by n.
  cpu_ns_per_refresh  user + system CPU of the process (getrusage) over a
                      stream of STREAM refreshes of random ids among n
                      (with the module's work its calls do: the module has
                      no thread, its expiry and touch work runs in the
                      calls that use a wheel), plus the kworkers' time
                      meanwhile (their /proc/PID/schedstat run time, as
                      bench/device/bench.h kthreads_ns() does), where the
                      kernel runs what it defers, divided by STREAM.
                      The loop runs between chunks of CHUNK refreshes, as a
                      server's would between packets. Before the stream
                      every id of a wheel is refreshed once, unmeasured:
                      the module's id index grows a few buckets per
                      operation after a mass add, and a server that has
                      run a while has no such growth left to pay for.

  call-later          a dict id -> asyncio.TimerHandle; a refresh is
                      handle.cancel() and a new loop.call_later() (what an
                      asyncio user writes; the loop drops cancelled handles
                      from its heap as it goes).
  twheel              Wheel.refresh(id), one ioctl per refresh.
  twheel-batch        Wheel.batch() of CHUNK Op.refresh ops.
  twheel-refresh-many Wheel.refresh_many() of CHUNK ids (TWHEEL_IOC_REFRESH).
  twheel-touch        Wheel.touch(slot), a store into the touch table; the
                      ids are due at one deadline past the stream's end, and
                      the process then looks at the wheel (a poll that does
                      not wait, as the loop's selector would) from the
                      deadline on, every 20 ms until the module has looked
                      at every slot, and adds the looks' CPU time (the
                      thread's, around each poll) and the kworkers' for the
                      re-arms (their share of the looks; the looks that
                      expire untouched ids are expiry, which no figure
                      counts), as bench/devbench.c.

Output, per implementation and n:
  binding-bench: lang=python impl=I n=N cpu_ns_per_refresh=C bytes_per_id=B
and '#' lines with the parts.

    python3 bench.py [N...]          (default 100000 1000000)
"""

from __future__ import annotations

import array
import asyncio
import os
import random
import resource
import select
import subprocess
import sys
import time
from collections.abc import Callable

import twheel

STREAM = 100_000
CHUNK = 256
TIMEOUT_NS = 3600 * twheel.SEC
TICK_NS = twheel.MSEC
IMPLS = ("call-later", "twheel", "twheel-batch", "twheel-refresh-many", "twheel-touch")
SLAB_CACHES = ("twheel_entry", "twheel_touch_entry")


def cpu_ns() -> int:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def kthreads_ns() -> int:
    """Run time of every kworker (where the kernel runs what it defers)."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if not f.read().startswith("kworker/"):
                    continue
            with open(f"/proc/{pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            continue
    return total


def _field(path: str, name: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


def rss_bytes() -> int:
    return _field("/proc/self/status", "VmRSS") * 1024


def kernel_bytes() -> tuple[int, str]:
    """The module's memory now: its entry caches' slabs and VmallocUsed."""
    vmalloc = _field("/proc/meminfo", "VmallocUsed") * 1024
    slabs = 0
    found = 0
    try:
        with open("/proc/slabinfo") as f:
            for line in f:
                words = line.split()
                if words and words[0] in SLAB_CACHES:
                    # name active num objsize perslab pagesperslab : tunables
                    # l b s : slabdata active_slabs num_slabs sharedavail
                    slabs += int(words[14]) * int(words[5]) * 4096
                    found += 1
    except OSError:
        pass
    if not found:
        return _field("/proc/meminfo", "Slab") * 1024 + vmalloc, "Slab total"
    return slabs + vmalloc, "slabinfo"


def fdinfo(fd: int, name: str) -> int:
    return _field(f"/proc/self/fdinfo/{fd}", name)


def look_ns(poller: select.poll) -> int:
    """Look at the wheel registered in @poller with a poll(2) that does not
    wait: what its timer marked due is expired, re-armed or cascaded now,
    by this thread. The CPU time that took this thread, in ns."""
    t = time.thread_time_ns()
    poller.poll(0)
    return time.thread_time_ns() - t


class Bench:
    def __init__(self, impl: str, n: int) -> None:
        self.impl = impl
        self.n = n
        rnd = random.Random(0x5EED ^ n)
        self.stream = array.array("Q", (rnd.randrange(n) for _ in range(STREAM)))
        self.stream_end = 0     # cpu_ns() at the stream's end, if stream_run set it

    def report(self, cpu: int, mem: int, parts: str) -> None:
        print(f"binding-bench: lang=python impl={self.impl} n={self.n} "
              f"cpu_ns_per_refresh={cpu / STREAM:.0f} bytes_per_id={mem / self.n:.0f}")
        print(f"# {self.impl} n={self.n}: {parts}", flush=True)

    async def run(self) -> None:
        rss0 = rss_bytes()
        k0, how = kernel_bytes()
        keep = await self.setup()
        await self.settle(keep)
        rss1 = rss_bytes()
        k1, _ = kernel_bytes()
        mem = rss1 - rss0 + k1 - k0
        mem_parts = (f"rss {(rss1 - rss0) / self.n:.1f} B/id, kernel {(k1 - k0) / self.n:.1f} B/id "
                     f"({how} + VmallocUsed)")
        kw0 = kthreads_ns()
        c0 = cpu_ns()
        self.stream_end = 0
        extra, parts = await self.stream_run(keep)
        cpu = (self.stream_end or cpu_ns()) - c0
        kw = kthreads_ns() - kw0
        self.close(keep)
        total = cpu + (kw if extra is None else extra)
        self.report(total, mem, f"{mem_parts}; process {cpu / STREAM:.0f} ns, module "
                    f"{(total - cpu) / STREAM:.0f} ns per refresh{parts}")

    async def setup(self) -> object:
        raise NotImplementedError

    def close(self, keep: object) -> None:
        """After the measuring."""

    async def settle(self, keep: object) -> None:
        """What follows the setup before anything is measured."""

    async def stream_run(self, keep: object) -> tuple[int | None, str]:
        """Send the stream, leaving the wheel open; the module's CPU after
        it if any (then it replaces the kworkers' time meanwhile, and the
        process's time counts until the stream's end, self.stream_end), and
        more to say."""
        raise NotImplementedError

    async def chunks(self, each: Callable[[array.array[int]], None]) -> None:
        stream = self.stream
        for i in range(0, STREAM, CHUNK):
            each(stream[i:i + CHUNK])
            await asyncio.sleep(0)


class CallLater(Bench):
    async def setup(self) -> object:
        loop = asyncio.get_running_loop()
        timeout = TIMEOUT_NS / twheel.SEC
        handles: dict[int, asyncio.TimerHandle] = {}
        for i in range(self.n):
            handles[i] = loop.call_later(timeout, expired, i)
            if i % CHUNK == 0:
                await asyncio.sleep(0)
        return handles

    async def stream_run(self, keep: object) -> tuple[int | None, str]:
        assert isinstance(keep, dict)
        handles: dict[int, asyncio.TimerHandle] = keep
        loop = asyncio.get_running_loop()
        timeout = TIMEOUT_NS / twheel.SEC

        def each(ids: array.array[int]) -> None:
            for i in ids:
                handles[i].cancel()
                handles[i] = loop.call_later(timeout, expired, i)

        await self.chunks(each)
        return None, ""


class WheelBench(Bench):
    def __init__(self, impl: str, n: int) -> None:
        super().__init__(impl, n)
        self.touch = impl == "twheel-touch"
        self.deadline = 0

    async def setup(self) -> object:
        wheel = twheel.Wheel(TICK_NS, TIMEOUT_NS, cap=self.n, touch_slots=self.n if self.touch else 0)
        step = 1024 if self.touch else 65536
        for start in range(0, self.n, step):
            ids = range(start, min(start + step, self.n))
            if self.touch:
                bad: list[object] = [r.error for r in wheel.batch(twheel.Op.add(i, slot=i) for i in ids)
                                     if r.error]
            else:
                bad = list(wheel.refresh_many(ids, add_if_absent=True))
            if bad:
                raise SystemExit(f"bench: {len(bad)} adds failed, the first: {bad[0]}")
            await asyncio.sleep(0)
        if self.touch:
            for slot in range(0, self.n, 512):
                wheel.touch_at(slot, 0)     # fault the table in; 0 is no touch
        return wheel

    async def settle(self, keep: object) -> None:
        assert isinstance(keep, twheel.Wheel)
        wheel: twheel.Wheel = keep
        start = time.monotonic_ns()
        self.refresh_all(wheel, None)
        if not self.touch:
            return
        # Every id due at one deadline past the stream's end: time a sample
        # of the stream and the pass above, then leave ample margin.
        took = time.monotonic_ns() - start
        t0 = time.monotonic_ns()
        for i in range(STREAM // 100):
            wheel.touch_at(self.stream[i], 0)
        estimate = (time.monotonic_ns() - t0) * 100
        self.deadline = wheel.now() + 2 * took + 3 * estimate + 5 * twheel.SEC
        self.refresh_all(wheel, self.deadline)

    def close(self, keep: object) -> None:
        assert isinstance(keep, twheel.Wheel)
        keep.close()

    def refresh_all(self, wheel: twheel.Wheel, deadline: int | None) -> None:
        for start in range(0, self.n, 65536):
            if wheel.refresh_many(range(start, min(start + 65536, self.n)), deadline_ns=deadline):
                raise SystemExit("bench: an id was gone before the stream")

    async def stream_run(self, keep: object) -> tuple[int | None, str]:
        assert isinstance(keep, twheel.Wheel)
        wheel: twheel.Wheel = keep
        if self.touch:
            return await self.touch_run(wheel)

        def single(ids: array.array[int]) -> None:
            for i in ids:
                wheel.refresh(i)

        def batch(ids: array.array[int]) -> None:
            wheel.batch([twheel.Op.refresh(i) for i in ids])

        def many(ids: array.array[int]) -> None:
            if wheel.refresh_many(ids):
                raise SystemExit("bench: a refresh found its id gone")

        await self.chunks({"twheel": single, "twheel-batch": batch,
                           "twheel-refresh-many": many}[self.impl])
        return None, ""

    async def touch_run(self, wheel: twheel.Wheel) -> tuple[int | None, str]:
        touch = wheel.touch

        def each(ids: array.array[int]) -> None:
            for slot in ids:
                touch(slot)

        await self.chunks(each)
        self.stream_end = cpu_ns()
        if wheel.now() >= self.deadline:
            raise SystemExit("bench: the touch stream outlasted its deadline")
        touched = len(set(self.stream))
        kw0 = kthreads_ns()
        fd = wheel.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        looks_cpu = 0
        limit = time.monotonic() + (self.deadline - wheel.now()) / 1e9 + 120
        # From the deadline on, every 20 ms until every id was looked at.
        await asyncio.sleep(max(0, self.deadline - wheel.now()) / 1e9)
        while time.monotonic() < limit:
            looks_cpu += look_ns(poller)
            looks = fdinfo(fd, "touch_rearms") + fdinfo(fd, "expired_total")
            if looks >= self.n:
                break
            await asyncio.sleep(0.02)
        kw = looks_cpu + kthreads_ns() - kw0
        rearms = fdinfo(fd, "touch_rearms")
        expired = fdinfo(fd, "expired_total")
        share = kw * rearms // max(1, rearms + expired)
        return share, (f"; looks {rearms + expired} of {self.n}, re-arms {rearms} "
                       f"(touched {touched}), {kw / max(1, rearms + expired):.0f} ns per look")


def expired(i: int) -> None:
    raise SystemExit(f"bench: id {i} expired during the benchmark")


def one(impl: str, n: int) -> None:
    bench: Bench = CallLater(impl, n) if impl == "call-later" else WheelBench(impl, n)
    asyncio.run(bench.run())


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        one(sys.argv[2], int(sys.argv[3]))
        return 0
    sizes = [int(a) for a in sys.argv[1:]] or [100_000, 1_000_000]
    k0 = kthreads_ns()
    time.sleep(1)
    print(f"# binding-bench: kworker threads idle: {kthreads_ns() - k0} ns in 1 s; "
          f"stream {STREAM} refreshes in chunks of {CHUNK}", flush=True)
    failed = 0
    for n in sizes:
        for impl in IMPLS:
            rc = subprocess.run([sys.executable, __file__, "--one", impl, str(n)]).returncode
            if rc:
                print(f"# binding-bench: impl={impl} n={n} failed ({rc})", flush=True)
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
