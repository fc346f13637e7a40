# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Expiry through asyncio: `async for ev in wheel.events()` and
read_events_async(), each expiry exactly once across tasks, threads and
event loops, and no event lost when a reading task is cancelled or leaves
its loop early: what was read from the fd is delivered or kept for the
next reader. close() ends the iterations and fails the waits.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import os
import random
import select
import threading
import time

import pytest

import twheel

MS = twheel.MSEC
PATIENCE = 30.0


def add_spread(wheel: twheel.Wheel, n: int, spread_ms: int) -> None:
    results = wheel.batch(twheel.Op.add(i, (i % spread_ms) * MS) for i in range(n))
    assert all(r.ok for r in results)


def assert_once(ids: list[int], n: int) -> None:
    counts = collections.Counter(ids)
    assert sorted(counts) == list(range(n)), f"lost: {sorted(set(range(n)) - set(counts))[:10]}"
    assert max(counts.values()) == 1, "an expiry was delivered twice"


@pytest.mark.asyncio
async def test_async_for_delivers_every_event_never_early(wheel: twheel.Wheel) -> None:
    add_spread(wheel, 50, 100)
    got: list[twheel.Event] = []

    async def consume() -> None:
        async for ev in wheel.events():
            assert wheel.now() >= ev.deadline_ns
            got.append(ev)
            if len(got) == 50:
                return

    await asyncio.wait_for(consume(), PATIENCE)
    assert_once([e.id for e in got], 50)


@pytest.mark.asyncio
async def test_read_events_async_waits_for_the_expiry(wheel: twheel.Wheel) -> None:
    deadline = wheel.add(3, 100 * MS)
    events = await asyncio.wait_for(wheel.read_events_async(), PATIENCE)
    assert [e.id for e in events] == [3] and events[0].deadline_ns == deadline
    assert wheel.now() >= deadline


@pytest.mark.asyncio
async def test_each_expiry_is_read_once_by_many_tasks(wheel: twheel.Wheel) -> None:
    n = 2000
    ids: list[int] = []
    done = asyncio.Event()

    async def iterate() -> None:
        async for ev in wheel.events(batch=16):
            ids.append(ev.id)
            if len(ids) >= n:
                done.set()

    async def read() -> None:
        while True:
            ids.extend(e.id for e in await wheel.read_events_async(5))
            if len(ids) >= n:
                done.set()

    tasks = [asyncio.create_task(iterate()) for _ in range(4)]
    tasks += [asyncio.create_task(read()) for _ in range(2)]
    add_spread(wheel, n, 300)
    try:
        await asyncio.wait_for(done.wait(), PATIENCE)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert_once(ids, n)
    assert wheel.read_events(timeout=0.2) == []


@pytest.mark.asyncio
async def test_threads_and_tasks_together_read_each_expiry_once(wheel: twheel.Wheel) -> None:
    n = 2000
    ids: list[int] = []
    lock = threading.Lock()
    end = time.monotonic() + PATIENCE

    def thread_reader() -> None:
        while time.monotonic() < end:
            with lock:
                if len(ids) >= n:
                    return
            events = wheel.read_events(9, timeout=0.05)
            with lock:
                ids.extend(e.id for e in events)

    async def task_reader() -> None:
        async for ev in wheel.events(batch=8):
            with lock:
                ids.append(ev.id)

    threads = [threading.Thread(target=thread_reader) for _ in range(2)]
    tasks = [asyncio.create_task(task_reader()) for _ in range(2)]
    for t in threads:
        t.start()
    add_spread(wheel, n, 300)
    while time.monotonic() < end:
        with lock:
            if len(ids) >= n:
                break
        await asyncio.sleep(0.01)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for t in threads:
        t.join(PATIENCE)
    assert_once(ids, n)


@pytest.mark.asyncio
async def test_cancelled_read_events_async_loses_nothing(wheel: twheel.Wheel) -> None:
    n = 400
    ids: list[int] = []
    rnd = random.Random(18)
    add_spread(wheel, n, 400)
    end = time.monotonic() + PATIENCE
    while len(ids) < n and time.monotonic() < end:
        task = asyncio.create_task(wheel.read_events_async(3))
        await asyncio.sleep(rnd.choice((0, 0, 0.001, 0.003)))
        task.cancel()
        try:
            ids.extend(e.id for e in await task)
        except asyncio.CancelledError:
            pass
    assert_once(ids, n)


@pytest.mark.asyncio
async def test_cancelled_async_for_loses_nothing(wheel: twheel.Wheel) -> None:
    n = 400
    ids: list[int] = []
    rnd = random.Random(19)

    async def consume() -> None:
        async for ev in wheel.events(batch=32):
            ids.append(ev.id)
            if rnd.random() < 0.2:
                await asyncio.sleep(0)

    add_spread(wheel, n, 400)
    end = time.monotonic() + PATIENCE
    while len(ids) < n and time.monotonic() < end:
        task = asyncio.create_task(consume())
        await asyncio.sleep(rnd.choice((0, 0.001, 0.002, 0.005)))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert_once(ids, n)


@pytest.mark.asyncio
async def test_leaving_async_for_early_keeps_the_rest_for_the_next_reader(wheel: twheel.Wheel) -> None:
    # One deadline for all ten: they expire in one tick, readable together.
    # One batch, so that they share it even if it is past by then.
    deadline = wheel.now() + 20 * MS
    results = wheel.batch(twheel.Op.add(i, deadline_ns=deadline) for i in range(10))
    assert all(r.ok for r in results) and len({r.deadline_ns for r in results}) == 1
    assert select.select([wheel], [], [], PATIENCE)[0]
    first = None
    async for ev in wheel.events(batch=64):
        first = ev
        break
    assert first is not None
    rest = wheel.read_events(timeout=0)
    assert sorted([first.id] + [e.id for e in rest]) == list(range(10))


@pytest.mark.asyncio
async def test_close_ends_async_for_and_fails_read_events_async(wheel: twheel.Wheel) -> None:
    fd = wheel.fileno()
    seen: list[twheel.Event] = []

    async def iterate() -> str:
        async for ev in wheel.events():
            seen.append(ev)
        return "ended"

    iterating = asyncio.create_task(iterate())
    reading = asyncio.create_task(wheel.read_events_async())
    await asyncio.sleep(0.05)
    threading.Timer(0.05, wheel.close).start()
    assert await asyncio.wait_for(iterating, PATIENCE) == "ended"
    with pytest.raises(twheel.Closed):
        await asyncio.wait_for(reading, PATIENCE)
    assert seen == []
    with pytest.raises(OSError) as gone:
        os.fstat(fd)
    assert gone.value.errno == errno.EBADF


def test_two_event_loops_in_two_threads_share_the_expiries(wheel: twheel.Wheel) -> None:
    n = 1000
    ids: list[list[int]] = [[], []]
    stop = threading.Event()

    async def loop_reader(mine: list[int]) -> None:
        async def consume() -> None:
            async for ev in wheel.events(batch=4):
                mine.append(ev.id)
        task = asyncio.create_task(consume())
        while not stop.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    threads = [threading.Thread(target=asyncio.run, args=(loop_reader(m),)) for m in ids]
    for t in threads:
        t.start()
    add_spread(wheel, n, 200)
    end = time.monotonic() + PATIENCE
    while len(ids[0]) + len(ids[1]) < n and time.monotonic() < end:
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join(PATIENCE)
    assert_once(ids[0] + ids[1], n)
