# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""ADD, REFRESH, CANCEL and QUERY one id at a time, on the device: the
deadline rule (now + timeout rounded up to the tick, never early), absolute
deadlines, the errors as exceptions (class, errno, a message naming the op
and the id), bad arguments refused before the kernel sees them, the cap,
and a wheel that is closed. Mirrors selftests/op_test.c and
abstime_test.c where they apply.
"""

from __future__ import annotations

import errno
import os
from typing import Any, Callable

import pytest

import twheel
from conftest import TICK, TIMEOUT, needs_device

MS = twheel.MSEC
# A timeout no id reaches during a test, however slow the VM.
LONG = 60 * twheel.SEC
U64_MAX = 2**64 - 1


def test_add_sets_the_deadline_from_the_timeout(wheel: twheel.Wheel) -> None:
    before = wheel.now()
    deadline = wheel.add(1, LONG)
    after = wheel.now()
    assert before + LONG <= deadline <= after + LONG + TICK
    before = wheel.now()
    left = wheel.query(1)
    after = wheel.now()
    assert left.deadline_ns == deadline
    assert deadline - after <= left.remaining_ns <= deadline - before


def test_add_without_timeout_uses_the_default(wheel: twheel.Wheel) -> None:
    before = wheel.now()
    deadline = wheel.add(2)
    assert before + TIMEOUT <= deadline <= wheel.now() + TIMEOUT + TICK


def test_deadlines_are_on_one_tick_grid(wheel: twheel.Wheel) -> None:
    deadlines = [wheel.add(i, 10 * MS + i * 37_000) for i in range(20)]
    assert len({d % TICK for d in deadlines}) == 1


def test_add_of_a_live_id_is_exists(wheel: twheel.Wheel) -> None:
    first = wheel.add(7, LONG)
    with pytest.raises(twheel.Exists) as info:
        wheel.add(7, 10 * MS)
    assert isinstance(info.value, FileExistsError)
    assert info.value.errno == errno.EEXIST
    assert "add id 7" in str(info.value)
    assert wheel.query(7).deadline_ns == first


def test_ids_zero_and_max_are_valid(wheel: twheel.Wheel) -> None:
    wheel.add(0, LONG)
    wheel.add(U64_MAX, LONG)
    assert wheel.cancel(0) > 0 and wheel.cancel(U64_MAX) > 0


def test_refresh_moves_the_deadline_later_and_earlier(wheel: twheel.Wheel) -> None:
    first = wheel.add(3, LONG)
    later = wheel.refresh(3, 2 * LONG)
    assert later >= first + LONG - TICK
    earlier = wheel.refresh(3, LONG // 2)
    assert earlier < later
    assert wheel.query(3).deadline_ns == earlier


def test_refresh_without_timeout_uses_the_default_not_the_previous(wheel: twheel.Wheel) -> None:
    wheel.add(4, LONG)
    before = wheel.now()
    assert before + TIMEOUT <= wheel.refresh(4) <= wheel.now() + TIMEOUT + TICK


def test_refresh_of_an_absent_id_is_not_found(wheel: twheel.Wheel) -> None:
    with pytest.raises(twheel.NotFound) as info:
        wheel.refresh(5)
    assert isinstance(info.value, FileNotFoundError) and info.value.errno == errno.ENOENT
    assert "refresh id 5" in str(info.value)


def test_refresh_add_if_absent_adds_and_refreshes(wheel: twheel.Wheel) -> None:
    added = wheel.refresh(6, LONG, add_if_absent=True)
    assert wheel.query(6).deadline_ns == added
    assert wheel.refresh(6, 2 * LONG, add_if_absent=True) > added


def test_cancel_returns_the_old_deadline_and_removes(wheel: twheel.Wheel) -> None:
    deadline = wheel.add(8, 30 * MS)
    try:
        assert wheel.cancel(8) == deadline
    except twheel.NotFound:
        # Only a stall past the deadline lets the id expire first.
        assert wheel.now() >= deadline, "id 8 expired before its deadline"
        pytest.skip("the test stalled past the deadline before the cancel")
    with pytest.raises(twheel.NotFound, match="cancel id 8"):
        wheel.cancel(8)
    with pytest.raises(twheel.NotFound, match="query id 8"):
        wheel.query(8)
    assert wheel.read_events(timeout=0.3) == []


def test_query_remaining_decreases(wheel: twheel.Wheel) -> None:
    wheel.add(9, 10 * twheel.SEC)
    first = wheel.query(9).remaining_ns
    wheel.add(10, 5 * MS)
    wheel.read_events(timeout=5)
    assert wheel.query(9).remaining_ns < first


def test_add_at_a_future_deadline_rounds_it_up_to_the_grid(wheel: twheel.Wheel) -> None:
    want = wheel.now() + LONG + 123
    got = wheel.add(11, deadline_ns=want)
    assert want <= got < want + TICK
    assert wheel.refresh(11, deadline_ns=want + 50 * MS) >= want + 50 * MS


def test_add_at_a_past_deadline_fires_at_the_next_tick(wheel: twheel.Wheel) -> None:
    before = wheel.now()
    got = wheel.add(12, deadline_ns=before - twheel.SEC)
    assert before <= got <= wheel.now() + TICK
    (event,) = wheel.read_events(timeout=10)
    assert event.id == 12 and event.deadline_ns == got


def test_deadline_beyond_the_longest_timeout_is_invalid_argument(wheel: twheel.Wheel) -> None:
    far = wheel.now() + wheel.max_timeout_ns + 3600 * twheel.SEC  # past it however slow the VM
    with pytest.raises(twheel.InvalidArgument, match="add id 13"):
        wheel.add(13, deadline_ns=far)
    with pytest.raises(twheel.NotFound):
        wheel.query(13)


def test_longest_timeout_is_accepted(wheel: twheel.Wheel) -> None:
    assert wheel.add(14, wheel.max_timeout_ns) > wheel.now()


def test_a_full_wheel_is_no_space() -> None:
    needs_device()
    with twheel.Wheel(TICK, LONG, cap=2) as w:
        w.add(1)
        w.add(2)
        with pytest.raises(twheel.NoSpace) as info:
            w.add(3)
        assert info.value.errno == errno.ENOSPC and "add id 3" in str(info.value)


def test_an_expired_id_is_no_longer_live(wheel: twheel.Wheel) -> None:
    wheel.add(15, 0)
    assert [e.id for e in wheel.read_events(timeout=10)] == [15]
    with pytest.raises(twheel.NotFound):
        wheel.refresh(15)
    wheel.add(15, TIMEOUT)


BAD_CALLS: list[tuple[str, Callable[[twheel.Wheel], Any], type[Exception]]] = [
    ("negative id", lambda w: w.add(-1), ValueError),
    ("id of 2**64", lambda w: w.refresh(2**64), ValueError),
    ("float id", lambda w: w.cancel(1.0), TypeError),  # type: ignore[arg-type]
    ("str id", lambda w: w.query("1"), TypeError),  # type: ignore[arg-type]
    ("negative timeout", lambda w: w.add(1, -1), ValueError),
    ("timeout past the longest", lambda w: w.add(1, w.max_timeout_ns + 1), ValueError),
    ("float timeout", lambda w: w.refresh(1, 0.5, add_if_absent=True), TypeError),  # type: ignore[arg-type]
    ("timeout and deadline", lambda w: w.add(1, 5, deadline_ns=5), ValueError),
    ("negative deadline", lambda w: w.add(1, deadline_ns=-1), ValueError),
    ("slot without a table", lambda w: w.add(1, slot=0), ValueError),
    ("batch of a non-op", lambda w: w.batch([twheel.Op.add(1), (1, 2)]), TypeError),  # type: ignore[list-item]
    ("refresh_many of a negative id", lambda w: w.refresh_many([1, -2]), ValueError),
    ("refresh_many of a float", lambda w: w.refresh_many([1, 2.0]), TypeError),  # type: ignore[list-item]
    ("refresh_many timeout and deadline",
     lambda w: w.refresh_many([1], 5, deadline_ns=5), ValueError),
    ("read of no events", lambda w: w.read_events(0), ValueError),
    ("read with a negative wait", lambda w: w.read_events(timeout=-1), ValueError),
    ("read with a wait of text", lambda w: w.read_events(timeout="1"), TypeError),  # type: ignore[arg-type]
    ("dump chunk of 0", lambda w: w.dump(0), ValueError),
    ("touch without a table", lambda w: w.touch(0), ValueError),
]


@pytest.mark.parametrize("call, exc", [(c, e) for _, c, e in BAD_CALLS],
                         ids=[n for n, _, _ in BAD_CALLS])
def test_bad_arguments_never_reach_the_kernel(wheel: twheel.Wheel, call: Callable[[twheel.Wheel], Any],
                                              exc: type[Exception]) -> None:
    # The kernel would answer InvalidArgument (an OSError, no ValueError)
    # or act: a ValueError or TypeError, and nothing live, says it did not.
    with pytest.raises(exc) as info:
        call(wheel)
    assert not isinstance(info.value, OSError)
    assert list(wheel.dump()) == []


def test_every_method_of_a_closed_wheel_raises_closed() -> None:
    needs_device()
    w = twheel.Wheel(TICK, TIMEOUT, touch_slots=4)
    fd = w.fileno()
    w.close()
    w.close()
    assert w.closed
    calls: list[Callable[[], Any]] = [
        lambda: w.add(1), lambda: w.refresh(1), lambda: w.cancel(1), lambda: w.query(1),
        lambda: w.batch([twheel.Op.add(1)]), lambda: w.refresh_many([1]),
        lambda: list(w.dump()), lambda: w.read_events(timeout=0), w.fileno,
        lambda: w.touch(0), lambda: w.touch_at(0, 1),
    ]
    for call in calls:
        with pytest.raises(twheel.Closed) as info:
            call()
        assert isinstance(info.value, ValueError) and info.value.errno == errno.EBADF
    with pytest.raises(OSError) as gone:
        os.fstat(fd)
    assert gone.value.errno == errno.EBADF


def test_the_context_manager_closes_the_wheel() -> None:
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT) as w:
        w.add(1)
    assert w.closed
    with pytest.raises(twheel.Closed):
        w.add(1)


def test_two_wheels_are_isolated() -> None:
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT) as a, twheel.Wheel(TICK, TIMEOUT) as b:
        a.add(1, 0)
        with pytest.raises(twheel.NotFound):
            b.query(1)
        assert [e.id for e in a.read_events(timeout=10)] == [1]
        assert b.read_events(timeout=0) == []


def test_a_boottime_wheel_keeps_boottime_deadlines() -> None:
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT, clock=twheel.CLOCK_BOOTTIME) as w:
        before = w.now()
        deadline = w.add(1, 20 * MS)
        assert before + 20 * MS <= deadline <= w.now() + 20 * MS + TICK
        (event,) = w.read_events(timeout=10)
        assert event.deadline_ns == deadline and w.now() >= deadline
