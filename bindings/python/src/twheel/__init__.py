# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""twheel: millions of deadlines behind one file descriptor, from Python.

A pure-Python binding of /dev/twheel (the twheel kernel module): open a
Wheel, add ids with timeouts, refresh and cancel them, and read back one
Event per id whose deadline passed, from a thread or an asyncio loop.
Times are int nanoseconds on the wheel's clock (MSEC and SEC help write
them). See README.md, twheel(4) and <linux/twheel.h>.

The package imports on any system; a wheel opens only on Linux with the
module loaded, and open() says why not with an Unavailable: DeviceNotFound
(also a FileNotFoundError), PermissionDenied (a PermissionError) or, off
Linux, Unsupported (a NotImplementedError).
"""

from ._errors import (Closed, DeviceNotFound, Error, Exists, InvalidArgument, NoMemory,
                      NoSpace, NotFound, PermissionDenied, Unavailable, Unsupported)
from ._wheel import (CLOCK_BOOTTIME, CLOCK_MONOTONIC, MAX_TIMEOUT_NS, MSEC, SEC,
                     SLOT_NONE, TICK_MAX_NS, TICK_MIN_NS, TOUCH_MAX_SLOTS, Deadline,
                     DumpEntry, Event, Op, OpCode, OpResult, Wheel)

__all__ = [
    "CLOCK_BOOTTIME", "CLOCK_MONOTONIC", "MAX_TIMEOUT_NS", "MSEC", "SEC", "SLOT_NONE",
    "TICK_MAX_NS", "TICK_MIN_NS", "TOUCH_MAX_SLOTS",
    "Closed", "Deadline", "DeviceNotFound", "DumpEntry", "Error", "Event", "Exists",
    "InvalidArgument", "NoMemory", "NoSpace", "NotFound", "Op", "OpCode", "OpResult",
    "PermissionDenied", "Unavailable", "Unsupported", "Wheel", "open",
]


def open(tick_ns: int, default_timeout_ns: int, *, clock: int = CLOCK_MONOTONIC,
         cap: int = 0, touch_slots: int = 0) -> Wheel:
    """Open a new wheel on /dev/twheel and set it up: its precision
    @tick_ns (100 us to 1 h), the timeout of ops that carry none, its
    clock (CLOCK_MONOTONIC, or CLOCK_BOOTTIME to count suspend), a cap on
    live ids plus unread events (0: the module's max_entries_per_wheel)
    and the slots of its touch table (0: none)."""
    return Wheel(tick_ns, default_timeout_ns, clock=clock, cap=cap, touch_slots=touch_slots)
