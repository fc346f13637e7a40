# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""An asyncio TCP server that marks a client offline after 30 s without a
message, with one twheel Wheel instead of a timer per client.

Each client connects, says "HELLO <id>", then sends a line now and then;
every line refreshes its id in the wheel (by default a store into the
wheel's touch table, no system call; --mode refresh sends an ioctl), and
`async for ev in wheel.events()` reports the ones that went quiet, in the
same event loop as the sockets. The clients are simulated in the same
process over loopback: each sends a heartbeat every ~10 s (+-20 %), and a
chosen few go silent at random times, keeping their connection open. Each
silent client must be reported no earlier than its last message + 30 s,
and none that kept sending may be.

Demo scale, as demo/heartbeat.c does: time runs SCALE = 10 times faster,
so 30 s is 3 s, the heartbeat 10 s is 1 s, and the run's 3 minutes are
18 s; the tick is 10 ms. Last line, for scripts:

    offline-server: clients=N silent=N reported=N early=N live_reported=N
        lateness_p50_ms=X lateness_p99_ms=X timeout_ms=T scale=10 mode=M

lateness: how long after last message + timeout the server learnt of it.
Exit status 0 only if every silent client and no other was reported,
none early.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys

import twheel

SCALE = 10
TIMEOUT_NS = 30 * twheel.SEC // SCALE
HEARTBEAT_S = 10 / SCALE
DURATION_S = 180 / SCALE
TICK_NS = 10 * twheel.MSEC


class Server:
    """The server's side: one wheel, one id (and touch slot) per client."""

    def __init__(self, wheel: twheel.Wheel, touch: bool) -> None:
        self.wheel = wheel
        self.touch = touch
        self.last_seen: dict[int, int] = {}    # wheel clock, last message read
        self.reported: dict[int, tuple[int, twheel.Event]] = {}
        self.writers: dict[int, asyncio.StreamWriter] = {}
        self.handlers: set[asyncio.Task[None]] = set()
        self.max_gap = 0

    def seen(self, cid: int) -> None:
        # Taken before the refresh: the deadline is never before it + timeout.
        now = self.wheel.now()
        self.max_gap = max(self.max_gap, now - self.last_seen[cid])
        self.last_seen[cid] = now
        if self.touch:
            self.wheel.touch(cid)
        else:
            self.wheel.refresh(cid)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        task.add_done_callback(self.handlers.discard)
        hello = (await reader.readline()).split()
        if len(hello) != 2 or hello[0] != b"HELLO":
            writer.close()
            return
        cid = int(hello[1])
        self.writers[cid] = writer
        self.last_seen[cid] = self.wheel.now()
        self.wheel.add(cid, slot=cid if self.touch else None)
        try:
            while await reader.readline():
                self.seen(cid)
        finally:
            try:
                self.wheel.cancel(cid)     # it left: nothing to report
            except twheel.NotFound:
                pass                       # it was reported
            writer.close()

    async def watch(self) -> None:
        async for ev in self.wheel.events():
            self.reported[ev.id] = (self.wheel.now(), ev)
            writer = self.writers.pop(ev.id, None)
            if writer:
                writer.close()             # mark_offline(): drop the client


async def client(cid: int, port: int, silent_at: float | None, end: float, rnd: random.Random) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"HELLO %d\n" % cid)
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(HEARTBEAT_S * rnd.uniform(0.8, 1.2))
        now = loop.time()
        if now >= end:
            break
        if silent_at is not None and now >= silent_at:
            # Silent, connected, until the server drops it or the run ends.
            try:
                await asyncio.wait_for(reader.read(), end - now)
            except asyncio.TimeoutError:
                pass
            break
        writer.write(b"PING\n")
        await writer.drain()
    writer.close()


def percentile(values: list[float], p: int) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[max(0, (len(values) * p + 99) // 100 - 1)]


async def run(clients: int, silent: int, touch: bool, seed: int) -> int:
    rnd = random.Random(seed)
    wheel = twheel.open(TICK_NS, TIMEOUT_NS, touch_slots=clients if touch else 0)
    server = Server(wheel, touch)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    watcher = asyncio.create_task(server.watch())
    loop = asyncio.get_running_loop()
    start = loop.time()
    end = start + DURATION_S
    # Silent ones stop early enough to be reported before the end.
    quiet = set(rnd.sample(range(clients), silent))
    latest = DURATION_S - TIMEOUT_NS / twheel.SEC - 2
    silent_at = {cid: start + 1 + rnd.uniform(0, latest - 1) for cid in quiet}
    print(f"offline-server: {clients} clients on 127.0.0.1:{port}, a message every "
          f"~{HEARTBEAT_S * 1000:.0f} ms, offline after {TIMEOUT_NS // twheel.MSEC} ms "
          f"({SCALE}x faster than 10 s and 30 s); {silent} will go silent", flush=True)
    sims = [asyncio.create_task(client(cid, port, silent_at.get(cid), end, random.Random(rnd.random())))
            for cid in range(clients)]
    await asyncio.gather(*sims)
    listener.close()
    await asyncio.gather(*server.handlers)
    await listener.wait_closed()
    wheel.close()
    await watcher

    timeout = TIMEOUT_NS
    early = live = 0
    lateness: list[float] = []
    for cid, (at, ev) in server.reported.items():
        last = server.last_seen[cid]
        if cid not in quiet:
            live += 1
            print(f"offline-server: client {cid} reported while sending", file=sys.stderr)
        elif at < last + timeout or ev.deadline_ns < last + timeout:
            early += 1
            print(f"offline-server: client {cid} reported early", file=sys.stderr)
        else:
            lateness.append((at - last - timeout) / twheel.MSEC)
    reported = len(server.reported)
    ok = reported == silent == len(lateness) and not early and not live
    # A gap near the timeout says the loop could not keep the simulation's
    # pace (a loaded machine), not that the wheel was wrong.
    print(f"offline-server: {loop.time() - start:.1f} s; longest gap between two messages of a "
          f"client {server.max_gap / twheel.MSEC:.0f} ms; {'PASS' if ok else 'FAIL'}")
    print(f"offline-server: clients={clients} silent={silent} reported={reported} "
          f"early={early} live_reported={live} lateness_p50_ms={percentile(lateness, 50):.1f} "
          f"lateness_p99_ms={percentile(lateness, 99):.1f} timeout_ms={timeout // twheel.MSEC} "
          f"scale={SCALE} mode={'touch' if touch else 'refresh'}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description="an asyncio server that marks silent clients offline")
    parser.add_argument("-n", "--clients", type=int, default=100)
    parser.add_argument("-s", "--silent", type=int, default=10)
    parser.add_argument("--mode", choices=("touch", "refresh"), default="touch")
    parser.add_argument("--seed", type=int, default=0x5EED)
    args = parser.parse_args()
    if not 0 <= args.silent <= args.clients:
        parser.error("need 0 <= silent <= clients")
    return asyncio.run(run(args.clients, args.silent, args.mode == "touch", args.seed))


if __name__ == "__main__":
    sys.exit(main())
