# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Many ids per system call: batch() with one result per op, in order,
failures not stopping it; refresh_many() reporting exactly the ids it did
not refresh; dump() listing every live id once with its deadline and
slot. Mirrors selftests/batch_test.c, refresh_test.c and dump_test.c
where they apply.
"""

from __future__ import annotations

import array
import collections
import errno
import select
import time

import twheel
from conftest import TICK, TIMEOUT, needs_device
from twheel import Op

MS = twheel.MSEC
# A timeout no id reaches during a test, however slow the VM.
LONG = 60 * twheel.SEC


def test_ops_apply_in_order_each_with_its_result(wheel: twheel.Wheel) -> None:
    ops = [Op.add(1, LONG), Op.add(1), Op.refresh(1, 2 * LONG), Op.query(1),
           Op.cancel(2), Op.refresh(2, LONG, add_if_absent=True), Op.cancel(1), Op.query(1),
           Op.add(3, deadline_ns=wheel.now() + LONG)]
    results = wheel.batch(ops)
    assert [r.op for r in results] == ops
    assert [r.ok for r in results] == [True, False, True, True, False, True, True, False, True]
    assert isinstance(results[1].error, twheel.Exists) and "add id 1" in str(results[1].error)
    assert isinstance(results[4].error, twheel.NotFound)
    assert results[4].error.errno == errno.ENOENT and "cancel id 2" in str(results[4].error)
    assert isinstance(results[7].error, twheel.NotFound)
    assert results[3].deadline_ns == results[2].deadline_ns == results[6].deadline_ns
    assert results[2].deadline_ns > results[0].deadline_ns
    assert results[1].deadline_ns == results[1].remaining_ns == 0
    assert sorted(e.id for e in wheel.dump()) == [2, 3]


def test_an_empty_batch_does_nothing(wheel: twheel.Wheel) -> None:
    assert wheel.batch([]) == []


def test_a_batch_past_the_cap_fails_per_op() -> None:
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT, cap=3) as w:
        results = w.batch(Op.add(i) for i in range(5))
        assert [r.ok for r in results] == [True, True, True, False, False]
        assert all(isinstance(r.error, twheel.NoSpace) for r in results[3:])


def test_a_large_batch_applies_every_op(wheel: twheel.Wheel) -> None:
    n = 30_000
    results = wheel.batch(Op.add(i, 600 * twheel.SEC) for i in range(n))
    assert len(results) == n and all(r.ok for r in results)
    assert sum(1 for _ in wheel.dump(4096)) == n


def test_refresh_many_moves_live_ids_and_returns_the_absent_in_order(wheel: twheel.Wheel) -> None:
    for i in range(0, 20, 2):
        wheel.add(i, LONG)
    before = wheel.now()
    failed = wheel.refresh_many(list(range(20)), 2 * LONG)
    assert failed == list(range(1, 20, 2))
    for i in range(0, 20, 2):
        assert wheel.query(i).deadline_ns >= before + 2 * LONG


def test_refresh_many_defaults_deadlines_and_add_if_absent() -> None:
    needs_device()
    # A default of a minute, and id 1 from an hour down to it: no id
    # expires during the test, however slow the VM.
    with twheel.Wheel(TICK, LONG) as wheel:
        wheel.add(1, 60 * LONG)
        before = wheel.now()
        assert wheel.refresh_many([1, 2]) == [2]
        after = wheel.now()
        assert before + LONG <= wheel.query(1).deadline_ns <= after + LONG + TICK
        at = wheel.now() + 2 * LONG
        assert wheel.refresh_many(array.array("Q", [1, 2, 3]), deadline_ns=at, add_if_absent=True) == []
        assert {e.id: e.deadline_ns >= at for e in wheel.dump()} == {1: True, 2: True, 3: True}


def test_refresh_many_at_the_cap_returns_what_did_not_fit() -> None:
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT, cap=4) as w:
        w.add(0, LONG)  # expired and unread, it would still count against the cap
        assert w.refresh_many(range(8), add_if_absent=True) == [4, 5, 6, 7]


def test_refresh_many_of_nothing_returns_nothing(wheel: twheel.Wheel) -> None:
    assert wheel.refresh_many([]) == []


def test_refreshed_ids_expire_at_their_new_deadline(wheel: twheel.Wheel) -> None:
    for i in range(5):
        wheel.add(i, LONG)
    refreshed = wheel.now()
    assert wheel.refresh_many(range(5), 300 * MS) == []
    got: list[twheel.Event] = []
    end = time.monotonic() + 30
    while len(got) < 5 and time.monotonic() < end:
        got += wheel.read_events(timeout=end - time.monotonic())
    assert sorted(e.id for e in got) == list(range(5))
    assert all(e.deadline_ns >= refreshed + 300 * MS for e in got)


def test_dump_of_an_empty_wheel_is_empty(wheel: twheel.Wheel) -> None:
    assert list(wheel.dump()) == []


def test_dump_lists_each_live_id_once_whatever_the_chunk(touch_wheel: twheel.Wheel) -> None:
    w = touch_wheel
    n = 5000
    deadlines = {r.op.id: r.deadline_ns for r in w.batch(
        Op.add(i, (600 + i % 50) * twheel.SEC, slot=i % 16 if i % 3 == 0 else None)
        for i in range(n))}
    for chunk in (1, 7, 1024, 100_000):
        entries = list(w.dump(chunk))
        counts = collections.Counter(e.id for e in entries)
        assert sorted(counts) == list(range(n)) and max(counts.values()) == 1, chunk
        for e in entries:
            assert e.deadline_ns == deadlines[e.id]
            assert e.slot == (e.id % 16 if e.id % 3 == 0 else None)


def test_dump_is_lazy_and_fixed_in_order(wheel: twheel.Wheel) -> None:
    wheel.batch(Op.add(i) for i in range(300))
    first = [e.id for e in wheel.dump(10)]
    it = wheel.dump(10)
    assert [next(it).id for _ in range(5)] == first[:5]
    assert [e.id for e in wheel.dump(64)] == first


def test_dump_shows_the_deadline_after_refresh(wheel: twheel.Wheel) -> None:
    wheel.add(1, LONG)
    new = wheel.refresh(1, 2 * LONG)
    assert list(wheel.dump()) == [twheel.DumpEntry(1, new, None)]


def test_expired_ids_waiting_to_be_read_are_not_listed(wheel: twheel.Wheel) -> None:
    wheel.add(1, 0)
    wheel.add(2, LONG)
    assert select.select([wheel], [], [], 30)[0], "id 1 did not expire"
    assert [e.id for e in wheel.dump()] == [2]
    assert [e.id for e in wheel.read_events(timeout=30)] == [1]
