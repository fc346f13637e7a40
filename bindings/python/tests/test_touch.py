# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The touch table from Python: touch() and touch_at() refresh bound ids
with one store into the mapped table, which the kernel reads only at the
id's deadline. A touch re-arms to stamp + timeout on the tick grid, never
earlier; untouched ids expire on time; 0 is no touch, a future stamp
counts as now and once; a slot's old stamp is not passed on to a new id;
bad slots are refused. Mirrors selftests/touch_test.c where it applies.
"""

from __future__ import annotations

import mmap
import os
import time
from collections.abc import Iterator

import pytest

import twheel
from conftest import TICK, needs_device

MS = twheel.MSEC
T = 300 * MS
PATIENCE = 30.0


@pytest.fixture
def tw() -> Iterator[twheel.Wheel]:
    """Tick 1 ms, default timeout T, 8 touch slots."""
    needs_device()
    with twheel.Wheel(TICK, T, touch_slots=8) as w:
        yield w


def grid_up(t: int, like: int) -> int:
    """The first point of the tick grid of deadline @like at or after @t."""
    return t + (like - t) % TICK


def next_event(w: twheel.Wheel) -> twheel.Event:
    events = w.read_events(1, timeout=PATIENCE)
    assert events, "no event came"
    return events[0]


def skip_if_stalled_past_touch(event: twheel.Event, first: int, stamp: int, touched: int,
                               timeout: int) -> None:
    """Called when a touch seems not to have counted: skip if @event came
    at @first, the deadline its id was armed with, though its slot was
    stamped @stamp (the clock read @touched after the store), and a stall
    allows it: the kernel looked before the store, or so late that @stamp
    + @timeout had passed too."""
    if event.deadline_ns == first and (touched >= event.expired_ns
                                       or event.expired_ns >= stamp + timeout):
        pytest.skip(f"the test stalled: stamped at {touched}, due at {first}, "
                    f"expired at {event.expired_ns}")


def test_touch_rearms_to_stamp_plus_timeout_exactly(tw: twheel.Wheel) -> None:
    first = tw.add(1, slot=0)
    stamp = tw.now()
    tw.touch_at(0, stamp)
    touched = tw.now()
    event = next_event(tw)
    if event.deadline_ns != grid_up(stamp + T, first):
        skip_if_stalled_past_touch(event, first, stamp, touched, T)
    assert event.id == 1 and event.deadline_ns == grid_up(stamp + T, first)
    assert tw.now() >= event.deadline_ns


def test_touched_id_stays_live_and_never_expires_early(tw: twheel.Wheel) -> None:
    touches = [tw.now()]  # the arming: stamps up to it are no touch
    tw.add(2, slot=1)
    events: list[twheel.Event] = []
    end = time.monotonic() + 3 * T / twheel.SEC
    while time.monotonic() < end:
        touches.append(tw.now())
        tw.touch(1)
        events += tw.read_events(timeout=0.02)
    if not events:
        events.append(next_event(tw))
    for e in events:
        last = max(t for t in touches if t <= e.deadline_ns)
        assert e.deadline_ns >= last + T, "expired less than a timeout after a touch"
    gaps = [b - a for a, b in zip(touches, touches[1:])]
    if max(gaps) < T - 4 * TICK:
        assert len(events) == 1 and events[0].deadline_ns >= touches[-1] + T, \
            "expired while touched"


def test_untouched_bound_id_expires_on_time(tw: twheel.Wheel) -> None:
    deadline = tw.add(3, 50 * MS, slot=2)
    event = next_event(tw)
    assert (event.id, event.deadline_ns) == (3, deadline)


def test_stamp_zero_is_no_touch(tw: twheel.Wheel) -> None:
    deadline = tw.add(4, 50 * MS, slot=3)
    tw.touch_at(3, 0)
    assert next_event(tw).deadline_ns == deadline


def test_stamp_from_the_future_counts_as_now_and_once(tw: twheel.Wheel) -> None:
    first = tw.add(5, 50 * MS, slot=4)
    future = tw.now() + 3600 * twheel.SEC
    tw.touch_at(4, future)
    touched = tw.now()
    event = next_event(tw)
    assert event.id == 5
    skip_if_stalled_past_touch(event, first, future, touched, 50 * MS)
    assert first + 50 * MS <= event.deadline_ns < future
    assert tw.read_events(timeout=0) == []


def test_a_reused_slot_does_not_pass_on_the_old_stamp(tw: twheel.Wheel) -> None:
    tw.touch_at(5, tw.now() + 3600 * twheel.SEC)
    deadline = tw.add(6, 50 * MS, slot=5)
    assert next_event(tw).deadline_ns == deadline


def test_an_ioctl_refresh_after_a_touch_wins(tw: twheel.Wheel) -> None:
    tw.add(7, 60 * twheel.SEC, slot=6)  # no expiry before the refresh
    tw.touch(6)
    refreshed = tw.refresh(7, 2 * T)
    assert next_event(tw).deadline_ns == refreshed


def test_unbinding_stops_the_touches(tw: twheel.Wheel) -> None:
    # A minute: no expiry before the dump; then a refresh, which keeps it
    # unbound, to a deadline the test waits for.
    tw.add(8, 60 * twheel.SEC, slot=7)
    deadline = tw.refresh(8, 60 * twheel.SEC, slot=twheel.SLOT_NONE)
    assert list(tw.dump()) == [twheel.DumpEntry(8, deadline, None)]
    deadline = tw.refresh(8, 50 * MS)
    tw.touch(7)
    assert next_event(tw).deadline_ns == deadline


def test_bad_slots_and_stamps_are_refused(tw: twheel.Wheel) -> None:
    for slot in (-1, 8, 2**32, 2**64):
        with pytest.raises(ValueError, match="slot"):
            tw.touch(slot)
        with pytest.raises(ValueError, match="slot"):
            tw.touch_at(slot, 1)
    with pytest.raises(TypeError):
        tw.touch(1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        tw.touch(None)  # type: ignore[arg-type]
    for stamp in (-1, 2**64):
        with pytest.raises(ValueError, match="now_ns"):
            tw.touch_at(0, stamp)
    with pytest.raises(ValueError, match="slot"):
        tw.add(1, slot=8)
    assert list(tw.dump()) == []


def test_a_boottime_table_takes_boottime_stamps() -> None:
    needs_device()
    with twheel.Wheel(TICK, T, clock=twheel.CLOCK_BOOTTIME, touch_slots=1) as w:
        first = w.add(1, slot=0)
        stamp = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        w.touch_at(0, stamp)
        touched = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        event = next_event(w)
        if event.deadline_ns != grid_up(stamp + T, first):
            skip_if_stalled_past_touch(event, first, stamp, touched, T)
        assert event.deadline_ns == grid_up(stamp + T, first)


def test_a_store_is_never_seen_torn_by_another_process(tw: twheel.Wheel) -> None:
    # The kernel reads a slot with one 64-bit load while touch() stores:
    # a child reading the same page through its own mapping, on another
    # CPU, must see only whole stamps.
    patterns = (0x0000_0000_FFFF_FFFF, 0xFFFF_FFFF_0000_0000)
    tw.touch_at(0, patterns[0])
    rounds = 50_000
    pid = os.fork()
    if pid == 0:
        view = memoryview(mmap.mmap(tw.fileno(), 8, mmap.MAP_SHARED, mmap.PROT_READ)).cast("Q")
        torn = sum(1 for _ in range(rounds) if view[0] not in patterns)
        os._exit(1 if torn else 0)
    for i in range(rounds):
        tw.touch_at(0, patterns[i & 1])
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "a reader saw a torn stamp"
