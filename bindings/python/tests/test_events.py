# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Expiry through read_events(), from threads: never early, in deadline
order, exactly once however many threads read, a refresh moving the
deadline, the wait and its timeout, and close() waking a blocked reader.
Mirrors selftests/read_test.c and share_test.c where they apply. Waits
allow for a slow VM (seconds); what is asserted about the answer (never
early, none lost, none twice) is exact.
"""

from __future__ import annotations

import collections
import errno
import os
import threading
import time

import pytest

import twheel

MS = twheel.MSEC
# Longest the tests wait for an event that must come (a loaded TCG guest).
PATIENCE = 30.0


def read_all(wheel: twheel.Wheel, n: int, max_events: int = 256) -> list[twheel.Event]:
    """Events until @n came or PATIENCE ran out."""
    got: list[twheel.Event] = []
    end = time.monotonic() + PATIENCE
    while len(got) < n and time.monotonic() < end:
        got += wheel.read_events(max_events, timeout=end - time.monotonic())
    return got


def test_timeout_zero_fires_at_the_next_tick(wheel: twheel.Wheel) -> None:
    deadline = wheel.add(1, 0)
    (event,) = read_all(wheel, 1)
    assert event == twheel.Event(1, deadline, event.expired_ns)
    assert event.expired_ns >= deadline and event.lateness_ns >= 0


def test_events_are_never_early(wheel: twheel.Wheel) -> None:
    earliest = {}
    for i in range(50):
        timeout = i * 5 * MS
        earliest[i] = wheel.now() + timeout
        wheel.add(i, timeout)
    got: list[twheel.Event] = []
    end = time.monotonic() + PATIENCE
    while len(got) < 50 and time.monotonic() < end:
        events = wheel.read_events(timeout=end - time.monotonic())
        read_at = wheel.now()
        for e in events:
            assert e.deadline_ns >= earliest[e.id], f"id {e.id} due early"
            assert e.expired_ns >= e.deadline_ns, f"id {e.id} expired before its deadline"
            assert read_at >= e.deadline_ns, f"id {e.id} read before its deadline"
        got += events
    assert sorted(e.id for e in got) == list(range(50))


def test_events_come_in_deadline_order(wheel: twheel.Wheel) -> None:
    for i in range(100):
        wheel.add(i, (i * 7919 % 100) * 2 * MS)
    got = read_all(wheel, 100)
    assert len(got) == 100
    deadlines = [e.deadline_ns for e in got]
    assert deadlines == sorted(deadlines)


def test_extreme_ids_expire_as_themselves(wheel: twheel.Wheel) -> None:
    wheel.add(0, 0)
    wheel.add(2**64 - 1, 0)
    assert sorted(e.id for e in read_all(wheel, 2)) == [0, 2**64 - 1]


def test_max_events_bounds_each_read(wheel: twheel.Wheel) -> None:
    for i in range(10):
        wheel.add(i, 0)
    got: list[twheel.Event] = []
    end = time.monotonic() + PATIENCE
    while len(got) < 10 and time.monotonic() < end:
        batch = wheel.read_events(3, timeout=1)
        assert len(batch) <= 3
        got += batch
    assert sorted(e.id for e in got) == list(range(10))


def test_read_without_events_returns_nothing_at_once(wheel: twheel.Wheel) -> None:
    wheel.add(1)
    start = time.monotonic()
    assert wheel.read_events(timeout=0) == []
    assert time.monotonic() - start < PATIENCE


def test_read_waits_its_whole_timeout(wheel: twheel.Wheel) -> None:
    start = time.monotonic()
    assert wheel.read_events(timeout=0.2) == []
    assert time.monotonic() - start >= 0.2


def test_blocking_read_wakes_on_expiry(wheel: twheel.Wheel) -> None:
    got: list[twheel.Event] = []
    reader = threading.Thread(target=lambda: got.extend(wheel.read_events()))
    deadline = wheel.add(5, 100 * MS)
    reader.start()
    reader.join(PATIENCE)
    assert not reader.is_alive(), "read_events() still blocked after the expiry"
    assert [e.id for e in got] == [5] and got[0].deadline_ns == deadline
    assert wheel.now() >= deadline


def test_refresh_moves_the_deadline_and_the_old_one_never_fires(wheel: twheel.Wheel) -> None:
    old = wheel.add(6, 200 * MS)
    time.sleep(0.1)
    refreshed = wheel.now()
    try:
        new = wheel.refresh(6, 300 * MS)
    except twheel.NotFound:
        # Only a stall past the old deadline lets the id expire first.
        assert wheel.now() >= old, "id 6 expired before its deadline"
        pytest.skip("the test stalled past the old deadline before the refresh")
    (event,) = read_all(wheel, 1)
    assert wheel.now() >= refreshed + 300 * MS
    assert event.id == 6 and event.deadline_ns == new >= refreshed + 300 * MS


def test_each_expiry_is_read_once_by_many_threads(wheel: twheel.Wheel) -> None:
    n = 3000
    seen: list[list[twheel.Event]] = [[] for _ in range(4)]
    total = collections.Counter[int]()
    lock = threading.Lock()
    end = time.monotonic() + PATIENCE

    def reader(mine: list[twheel.Event]) -> None:
        while time.monotonic() < end:
            with lock:
                if sum(total.values()) >= n:
                    return
            events = wheel.read_events(7, timeout=0.05)
            mine += events
            with lock:
                total.update(e.id for e in events)

    threads = [threading.Thread(target=reader, args=(mine,)) for mine in seen]
    for t in threads:
        t.start()
    wheel.batch(twheel.Op.add(i, (i % 300) * MS) for i in range(n))
    for t in threads:
        t.join(PATIENCE + 5)
    assert not any(t.is_alive() for t in threads)
    assert sorted(total) == list(range(n)), "an expiry was lost"
    assert max(total.values()) == 1, "an expiry was read twice"


def test_close_wakes_a_blocked_reader_with_closed(wheel: twheel.Wheel) -> None:
    fd = wheel.fileno()
    raised: list[BaseException] = []

    def reader() -> None:
        try:
            wheel.read_events()
        except BaseException as e:
            raised.append(e)

    t = threading.Thread(target=reader)
    t.start()
    wheel.add(1, 60 * twheel.SEC)  # no expiry to end the read first
    time.sleep(0.2)
    wheel.close()
    t.join(PATIENCE)
    assert not t.is_alive(), "a reader stayed blocked after close()"
    assert len(raised) == 1 and isinstance(raised[0], twheel.Closed)
    with pytest.raises(OSError) as gone:
        os.fstat(fd)
    assert gone.value.errno == errno.EBADF


def test_ops_from_threads_while_another_reads(wheel: twheel.Wheel) -> None:
    stop = threading.Event()
    got: list[twheel.Event] = []

    def reader() -> None:
        while not stop.is_set():
            got.extend(wheel.read_events(timeout=0.05))

    def writer(base: int) -> None:
        for i in range(200):
            wheel.add(base + i, 0)

    t = threading.Thread(target=reader)
    t.start()
    writers = [threading.Thread(target=writer, args=(k * 1000,)) for k in range(3)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    end = time.monotonic() + PATIENCE
    while len(got) < 600 and time.monotonic() < end:
        time.sleep(0.01)
    stop.set()
    t.join()
    assert sorted(e.id for e in got) == sorted(k * 1000 + i for k in range(3) for i in range(200))
    assert wheel.now() >= max(e.deadline_ns for e in got)
