# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The Wheel: one /dev/twheel descriptor, its ops, its events, its table.

Each method is one system call (ioctl, read or poll) or none (touch is a
clock read and a store), as in libtwheel, and follows its semantics: the
clock is read the way twheel_touch() reads it, a dump walks the cursor
until TWHEEL_DUMP_END, a batch that a signal cut short is resubmitted from
where the kernel stopped (nothing past the count it returned was applied).

Times are int nanoseconds on the wheel's clock, as the kernel has them:
every deadline lies on the tick grid and compares exactly with
time.clock_gettime_ns(wheel.clock); a float of seconds would lose that
past 104 days of uptime. The one exception is the wait of read_events(),
a timeout in seconds as for queue.Queue.get() and select.

Descriptor life: every system call on the fd runs between _enter() and
_leave(), which count the calls in flight; close() marks the wheel
closed, wakes the waiting readers (an eventfd for threads, the event
loops' callbacks for tasks) and the fd is closed by whoever leaves last,
so no call can ever reach a descriptor number the process reused.
"""

from __future__ import annotations

import array
import asyncio
import collections
import ctypes
import enum
import errno
import math
import mmap
import operator
import os
import select
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import NamedTuple

from . import _uapi
from ._errors import Closed, closed, error, unavailable, unsupported

if sys.platform == "linux":
    # Only a Wheel uses these, and there is none but on Linux (Wheel()
    # raises Unsupported first), so the package imports on any system:
    # Windows has no fcntl, nor time.clock_gettime_ns.
    import fcntl
    from time import clock_gettime_ns as _clock_ns

# The wheel's clocks, as the kernel numbers them (<linux/time.h>, what
# TWHEEL_IOC_SETUP takes), equal to the time module's on Linux, where it
# reads them: written out, not read from time, which has no
# CLOCK_BOOTTIME elsewhere and other numbers on macOS.
CLOCK_MONOTONIC = 1
CLOCK_BOOTTIME = 7

#: Nanoseconds in a millisecond and in a second, for readable timeouts.
MSEC = 1_000_000
SEC = 1_000_000_000

TICK_MIN_NS = _uapi.TWHEEL_TICK_MIN_NS
TICK_MAX_NS = _uapi.TWHEEL_TICK_MAX_NS
MAX_TIMEOUT_NS = _uapi.TWHEEL_MAX_TIMEOUT_NS
TOUCH_MAX_SLOTS = _uapi.TWHEEL_TOUCH_MAX_SLOTS
#: The slot argument that unbinds an id from its touch slot.
SLOT_NONE = _uapi.TWHEEL_SLOT_NONE

_U64_END = 1 << 64
_INT_MAX = (1 << 31) - 1
# Largest record count of one read: its byte count stays within an int.
_READ_MAX = _INT_MAX // _uapi.EVENT.size
_DUMP_COUNT_MAX = 1 << 20


def _int(value: object, what: str) -> int:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"twheel: {what} must be an int, not {type(value).__name__}") from None


def _ranged(value: object, low: int, high: int, what: str) -> int:
    """@value as an int in low..high, else TypeError or ValueError."""
    v = _int(value, what)
    if not low <= v <= high:
        raise ValueError(f"twheel: {what} {v} is outside {low}..{high}")
    return v


def _u64(value: object, what: str) -> int:
    return _ranged(value, 0, _U64_END - 1, what)


class OpCode(enum.IntEnum):
    """enum twheel_op_code."""

    ADD = _uapi.TWHEEL_OP_ADD
    REFRESH = _uapi.TWHEEL_OP_REFRESH
    CANCEL = _uapi.TWHEEL_OP_CANCEL
    QUERY = _uapi.TWHEEL_OP_QUERY


class Op(NamedTuple):
    """One operation of a batch; build it with Op.add(), Op.refresh(), ...

    timeout_ns (relative) and deadline_ns (absolute, on the wheel's clock)
    exclude each other; with neither the wheel's default timeout applies.
    slot binds the id to a touch slot (SLOT_NONE unbinds); None leaves an
    ADD unbound and a REFRESH's binding as it was. An Op is a plain record:
    batch() checks it, with the wheel's limits, before the system call.
    """

    code: int
    id: int
    timeout_ns: int | None = None
    deadline_ns: int | None = None
    add_if_absent: bool = False
    slot: int | None = None

    @property
    def name(self) -> str:
        return _NAMES.get(self.code, "op")

    @classmethod
    def add(cls, id: int, timeout_ns: int | None = None, *, deadline_ns: int | None = None,
            slot: int | None = None) -> Op:
        return cls(OpCode.ADD, id, timeout_ns, deadline_ns, False, slot)

    @classmethod
    def refresh(cls, id: int, timeout_ns: int | None = None, *, deadline_ns: int | None = None,
                add_if_absent: bool = False, slot: int | None = None) -> Op:
        return cls(OpCode.REFRESH, id, timeout_ns, deadline_ns, add_if_absent, slot)

    @classmethod
    def cancel(cls, id: int) -> Op:
        return cls(OpCode.CANCEL, id)

    @classmethod
    def query(cls, id: int) -> Op:
        return cls(OpCode.QUERY, id)


_NAMES = {int(c): c.name.lower() for c in OpCode}
_ADD = _uapi.TWHEEL_OP_ADD
_REFRESH = _uapi.TWHEEL_OP_REFRESH
_CANCEL = _uapi.TWHEEL_OP_CANCEL
_QUERY = _uapi.TWHEEL_OP_QUERY


def encode(code: int, ident: object, timeout_ns: object, deadline_ns: object, add_if_absent: object,
           slot: object, max_timeout_ns: int, touch_slots: int) -> tuple[int, int, int, int]:
    """(id, timeout_ns field, flags, slot field) of the struct twheel_op of
    an op, as libtwheel's twheel_prep_*() fill it, for a wheel whose
    longest timeout is @max_timeout_ns and whose table has @touch_slots
    slots; ValueError or TypeError if the kernel would refuse it. The
    common case (an int id, nothing else or an int timeout) is checked
    with a few comparisons: this runs once per op."""
    if type(code) is not int and type(code) is not OpCode:
        code = _int(code, "op code")
    name = _NAMES.get(code)
    if name is None:
        raise ValueError(f"twheel: {code} is not an op code")
    if type(ident) is not int or not 0 <= ident < _U64_END:
        ident = _u64(ident, f"{name} id")
    flags = value = slot_field = 0
    if timeout_ns is None and deadline_ns is None and slot is None and not add_if_absent:
        return ident, 0, 0, 0
    if code != _ADD and code != _REFRESH:
        raise ValueError(f"twheel: {name} takes no timeout, deadline, slot or add_if_absent")
    if deadline_ns is not None:
        if timeout_ns is not None:
            raise ValueError(f"twheel: {name} id {ident}: a timeout or a deadline, not both")
        value = _u64(deadline_ns, f"{name} deadline_ns")
        flags = _uapi.TWHEEL_OPF_ABSTIME
    elif timeout_ns is not None:
        if type(timeout_ns) is int and 0 <= timeout_ns <= max_timeout_ns:
            value = timeout_ns
        else:
            value = _ranged(timeout_ns, 0, max_timeout_ns, f"{name} timeout_ns")
        flags = _uapi.TWHEEL_OPF_TIMEOUT
    if add_if_absent:
        if code != _REFRESH:
            raise ValueError("twheel: add_if_absent is for refresh only")
        flags |= _uapi.TWHEEL_OPF_ADD_IF_ABSENT
    if slot is not None:
        if not touch_slots:
            raise ValueError(f"twheel: {name} slot: the wheel has no touch table")
        slot_field = _int(slot, f"{name} slot")
        if slot_field != SLOT_NONE and not 0 <= slot_field < touch_slots:
            raise ValueError(f"twheel: {name} slot {slot_field} is outside the table's "
                             f"0..{touch_slots - 1} (or SLOT_NONE)")
        flags |= _uapi.TWHEEL_OPF_TOUCH
    return ident, value, flags, slot_field


class OpResult(NamedTuple):
    """What one op of a batch did: error is None or the exception (not raised)."""

    op: Op
    error: Exception | None
    deadline_ns: int
    remaining_ns: int

    @property
    def ok(self) -> bool:
        return self.error is None


class Deadline(NamedTuple):
    """A live id's deadline and the time left until it, as query() returns them."""

    deadline_ns: int
    remaining_ns: int


class Event(NamedTuple):
    """One expiry (struct twheel_event): the id is no longer live."""

    id: int
    deadline_ns: int
    expired_ns: int

    @property
    def lateness_ns(self) -> int:
        """How long after its deadline the wheel processed the expiry (>= 0)."""
        return self.expired_ns - self.deadline_ns


class DumpEntry(NamedTuple):
    """One live id as dump() lists it; slot is None when the id is unbound."""

    id: int
    deadline_ns: int
    slot: int | None


class _NoTable:
    """Stands in for the touch table of a wheel without one, or closed."""

    def __setitem__(self, slot: int, value: int) -> None:
        raise IndexError(slot)


def _ioctl(fd: int, request: int, arg: bytearray | ctypes.Structure) -> int:
    """ioctl(2), retried after a signal as PEP 475 does for other calls.

    fcntl.ioctl() alone does not retry: a BATCH or REFRESH that a signal
    interrupts before applying anything fails with EINTR, and resending
    it is what the caller wants (the handler has run meanwhile; if it
    raised, that exception goes up instead).
    """
    while True:
        try:
            ret: int = fcntl.ioctl(fd, request, arg, True)
            return ret
        except InterruptedError:
            continue


def _addr(buf: bytearray) -> int:
    """The address of @buf's memory, for a pointer field (a __u64).

    It stays valid while @buf lives and is not resized, which no caller
    does while the kernel uses it.
    """
    return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))


class Wheel:
    """A timing wheel: one open of /dev/twheel, set up once.

    Use it as a context manager, or close() it. Methods may be called from
    any thread; the asyncio ones from any running event loop.
    """

    def __init__(self, tick_ns: int, default_timeout_ns: int, *, clock: int = CLOCK_MONOTONIC,
                 cap: int = 0, touch_slots: int = 0, device: str = _uapi.TWHEEL_DEVICE) -> None:
        self._fd = -1
        self._wake = -1
        self._closed = True
        self._tick_ns = _ranged(tick_ns, TICK_MIN_NS, TICK_MAX_NS, "tick_ns")
        self._max_timeout_ns = min(_uapi.TWHEEL_MAX_TIMEOUT_TICKS * self._tick_ns, MAX_TIMEOUT_NS)
        self._default_timeout_ns = _ranged(default_timeout_ns, 0, self._max_timeout_ns,
                                           "default_timeout_ns")
        self._clock = _int(clock, "clock")
        if self._clock not in (CLOCK_MONOTONIC, CLOCK_BOOTTIME):
            raise ValueError("twheel: clock must be CLOCK_MONOTONIC or CLOCK_BOOTTIME")
        self._cap = _ranged(cap, 0, (1 << 32) - 1, "cap")
        self._touch_slots = _ranged(touch_slots, 0, TOUCH_MAX_SLOTS, "touch_slots")
        if self._cap and self._touch_slots > self._cap:
            raise ValueError(f"twheel: touch_slots {self._touch_slots} above the cap {self._cap}")
        self._lock = threading.Lock()
        self._users = 0
        self._pending: collections.deque[Event] = collections.deque()
        self._waiters: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        self._slots: memoryview | _NoTable = _NoTable()
        self._map: mmap.mmap | None = None

        if sys.platform != "linux":
            raise unsupported(device, sys.platform)
        try:
            fd = os.open(device, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError as e:
            raise unavailable(e.errno or 0, device) from None
        self._fd = fd
        try:
            args = _uapi.twheel_setup_args(
                tick_ns=self._tick_ns, default_timeout_ns=self._default_timeout_ns,
                clockid=self._clock, max_entries=self._cap,
                flags=_uapi.TWHEEL_SETUPF_TOUCH if self._touch_slots else 0,
                touch_slots=self._touch_slots)
            try:
                _ioctl(fd, _uapi.TWHEEL_IOC_SETUP, args)
            except OSError as e:
                raise error(e.errno or 0, "setup") from None
            if self._touch_slots:
                try:
                    self._map = mmap.mmap(fd, self._touch_slots * 8, mmap.MAP_SHARED,
                                          mmap.PROT_READ | mmap.PROT_WRITE)
                except OSError as e:
                    raise error(e.errno or 0, "mmap of the touch table") from None
                self._slots = memoryview(self._map).cast("Q")
            self._wake = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        except BaseException:
            self._drop_table()
            self._release()
            raise
        self._closed = False

    # ---- settings and life ----

    @property
    def tick_ns(self) -> int:
        return self._tick_ns

    @property
    def default_timeout_ns(self) -> int:
        return self._default_timeout_ns

    @property
    def max_timeout_ns(self) -> int:
        """The longest timeout the wheel takes: 2^32 ticks, at most 2^62 ns."""
        return self._max_timeout_ns

    @property
    def clock(self) -> int:
        return self._clock

    @property
    def cap(self) -> int:
        """The cap given at setup; 0 is the module's max_entries_per_wheel."""
        return self._cap

    @property
    def touch_slots(self) -> int:
        return self._touch_slots

    @property
    def closed(self) -> bool:
        return self._closed

    def fileno(self) -> int:
        if self._closed:
            raise closed("fileno")
        return self._fd

    def now(self) -> int:
        """The present on the wheel's clock, in ns: compare deadlines with it."""
        return _clock_ns(self._clock)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"fd={self._fd}"
        return (f"<twheel.Wheel {state} tick_ns={self._tick_ns} "
                f"default_timeout_ns={self._default_timeout_ns} clock={self._clock}>")

    def __enter__(self) -> Wheel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_closed", True):
            return
        warnings.warn(f"unclosed {self!r}", ResourceWarning, source=self)
        self.close()

    def close(self) -> None:
        """Close the wheel: its ids and unread events go with it (unless
        another process holds the fd). Readers waiting in read_events()
        get Closed, events() iterations end. Closing twice is allowed."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loops = list(self._waiters)
            idle = self._users == 0
            if not idle:
                # Under the lock: the last to leave closes the eventfd.
                os.eventfd_write(self._wake, 1)
        self._drop_table()
        self._pending.clear()
        for loop in loops:
            try:
                loop.call_soon_threadsafe(self._wake_loop, loop)
            except RuntimeError:
                pass  # that loop is closed: nothing of it waits any more
        if idle:
            self._release()

    def _drop_table(self) -> None:
        slots = self._slots
        self._slots = _NoTable()
        if isinstance(slots, memoryview):
            slots.release()
        if self._map is not None:
            self._map.close()
            self._map = None

    def _release(self) -> None:
        for fd in (self._fd, self._wake):
            if fd >= 0:
                os.close(fd)
        self._fd = self._wake = -1

    def _enter(self, what: str) -> None:
        with self._lock:
            if self._closed:
                raise closed(what)
            self._users += 1

    def _leave(self) -> None:
        with self._lock:
            self._users -= 1
            last = self._closed and self._users == 0
        if last:
            self._release()

    # ---- operations ----

    def _submit(self, code: int, ident: object, timeout_ns: object = None, deadline_ns: object = None,
                add_if_absent: object = False, slot: object = None) -> tuple[int, int]:
        """TWHEEL_IOC_OP: (deadline_ns, remaining_ns), or raise its error."""
        ident, value, flags, slot_field = encode(code, ident, timeout_ns, deadline_ns, add_if_absent,
                                                 slot, self._max_timeout_ns, self._touch_slots)
        buf = bytearray(_uapi.OP.size)
        _uapi.pack_op(buf, 0, code, ident, value, flags, slot_field)
        # _enter() and _leave(), inlined: this is the path of every op.
        lock = self._lock
        with lock:
            if self._closed:
                raise closed(_NAMES[code])
            self._users += 1
        try:
            _ioctl(self._fd, _uapi.TWHEEL_IOC_OP, buf)
        except OSError as e:
            raise error(e.errno or 0, f"{_NAMES[code]} id {ident}") from None
        finally:
            with lock:
                self._users -= 1
                last = self._closed and self._users == 0
            if last:
                self._release()
        return _uapi.unpack_op_times(buf)

    def add(self, id: int, timeout_ns: int | None = None, *, deadline_ns: int | None = None,
            slot: int | None = None) -> int:
        """Make @id live, due after @timeout_ns (default: the wheel's) or at
        @deadline_ns; bind it to touch slot @slot. Returns its deadline.
        Exists if it is live already."""
        return self._submit(_ADD, id, timeout_ns, deadline_ns, False, slot)[0]

    def refresh(self, id: int, timeout_ns: int | None = None, *, deadline_ns: int | None = None,
                add_if_absent: bool = False, slot: int | None = None) -> int:
        """Move a live id's deadline to now + @timeout_ns (default: the
        wheel's, not the id's previous one) or to @deadline_ns, later or
        earlier. Returns the new deadline. NotFound if it is not live,
        unless @add_if_absent."""
        return self._submit(_REFRESH, id, timeout_ns, deadline_ns, add_if_absent, slot)[0]

    def cancel(self, id: int) -> int:
        """Remove a live id; its event never comes. Returns the deadline it
        had. NotFound if it is not live."""
        return self._submit(_CANCEL, id)[0]

    def query(self, id: int) -> Deadline:
        """A live id's deadline and the time left. NotFound if not live."""
        return Deadline(*self._submit(_QUERY, id))

    def batch(self, ops: Iterable[Op]) -> list[OpResult]:
        """Apply @ops in order, each as if alone, with one system call (more
        only if a signal cuts it short); one OpResult per op, in order. A
        failing op does not stop the batch: its result carries the error."""
        todo = list(ops)
        size = _uapi.OP.size
        buf = bytearray(len(todo) * size)
        pack = _uapi.pack_op
        max_timeout, slots = self._max_timeout_ns, self._touch_slots
        for i, op in enumerate(todo):
            if not isinstance(op, Op):
                raise TypeError(f"twheel: batch takes Op values, not {type(op).__name__}")
            code, ident, timeout_ns, deadline_ns, add_if_absent, slot = op
            ident, value, flags, slot_field = encode(code, ident, timeout_ns, deadline_ns,
                                                     add_if_absent, slot, max_timeout, slots)
            pack(buf, i * size, code, ident, value, flags, slot_field)
        if todo:
            self._batch(buf, len(todo))
        results = []
        for op, (deadline, remaining, result) in zip(todo, _uapi.unpack_ops_out(buf)):
            err = error(-result, f"{op.name} id {op.id}") if result else None
            results.append(OpResult(op, err, deadline, remaining))
        return results

    def _batch(self, buf: bytearray, count: int) -> None:
        """TWHEEL_IOC_BATCH of the @count ops in @buf until all are applied:
        a signal may stop the kernel early, having applied only the count
        it returns."""
        addr = _addr(buf)
        done = 0
        what = f"batch of {count} ops"
        self._enter(what)
        try:
            while done < count:
                args = _uapi.twheel_batch_args(ops=addr + done * _uapi.OP.size,
                                               count=min(count - done, _INT_MAX))
                try:
                    done += _ioctl(self._fd, _uapi.TWHEEL_IOC_BATCH, args)
                except OSError as e:
                    raise error(e.errno or 0, what) from None
        finally:
            self._leave()

    def refresh_many(self, ids: Iterable[int], timeout_ns: int | None = None, *,
                     deadline_ns: int | None = None, add_if_absent: bool = False) -> list[int]:
        """Refresh every id of @ids to one timeout (default: the wheel's) or
        one deadline, with TWHEEL_IOC_REFRESH: 8 bytes per id in, only the
        failures out. Returns the ids not refreshed (not live; with
        @add_if_absent, not added for want of room), in order. An
        array.array('Q') of ids is sent as it is, without a copy."""
        flags = _uapi.TWHEEL_OPF_ADD_IF_ABSENT if add_if_absent else 0
        value = 0
        if timeout_ns is not None and deadline_ns is not None:
            raise ValueError("twheel: refresh_many: a timeout or a deadline, not both")
        if timeout_ns is not None:
            value = _ranged(timeout_ns, 0, self._max_timeout_ns, "refresh_many timeout_ns")
            flags |= _uapi.TWHEEL_OPF_TIMEOUT
        elif deadline_ns is not None:
            value = _u64(deadline_ns, "refresh_many deadline_ns")
            flags |= _uapi.TWHEEL_OPF_ABSTIME
        arr = _id_array(ids)
        count = len(arr)
        if not count:
            return []
        failed = array.array(_uapi.ID_TYPECODE, bytes(count * 8))
        ids_addr = arr.buffer_info()[0]
        failed_addr = failed.buffer_info()[0]
        done = nr_failed = 0
        what = f"refresh_many of {count} ids"
        self._enter(what)
        try:
            while done < count:
                args = _uapi.twheel_refresh_args(
                    ids=ids_addr + done * 8, failed=failed_addr + nr_failed * 8,
                    timeout_ns=value, count=min(count - done, _INT_MAX), flags=flags)
                try:
                    done += _ioctl(self._fd, _uapi.TWHEEL_IOC_REFRESH, args)
                except OSError as e:
                    raise error(e.errno or 0, what) from None
                nr_failed += args.nr_failed
        finally:
            self._leave()
        return failed[:nr_failed].tolist()

    def dump(self, chunk: int = 1024) -> Iterator[DumpEntry]:
        """Iterate over the live ids (not expired ones waiting to be read),
        @chunk per system call, in the wheel's fixed order. Every id live
        from the first call to the last is listed exactly once."""
        count = _ranged(chunk, 1, _INT_MAX, "dump chunk")
        if self._closed:
            raise closed("dump")
        return self._dump(count)

    def _dump(self, count: int) -> Iterator[DumpEntry]:
        cursor = 0
        while cursor != _uapi.TWHEEL_DUMP_END:
            buf = bytearray(count * _uapi.DUMP_ENTRY.size)
            args = _uapi.twheel_dump_args(entries=_addr(buf), cursor=cursor, count=count)
            self._enter("dump")
            try:
                n = _ioctl(self._fd, _uapi.TWHEEL_IOC_DUMP, args)
            except OSError as e:
                # Ids sharing one hash position come in one call: make room.
                if e.errno == errno.EOVERFLOW and count < _DUMP_COUNT_MAX:
                    count *= 2
                    continue
                raise error(e.errno or 0, "dump") from None
            finally:
                self._leave()
            cursor = args.cursor
            for entry_id, deadline, slot in _uapi.unpack_dump(buf, n):
                yield DumpEntry(entry_id, deadline, None if slot == SLOT_NONE else slot)

    # ---- the touch table ----

    def touch(self, slot: int) -> None:
        """Refresh the id bound to @slot: the wheel's clock read as
        twheel_touch() reads it (clock_gettime, the vDSO), stored into the
        slot. No system call."""
        try:
            if slot < 0:
                raise IndexError(slot)
            self._slots[slot] = _clock_ns(self._clock)
        except (IndexError, TypeError, ValueError):
            raise self._touch_error(slot) from None

    def touch_at(self, slot: int, now_ns: int) -> None:
        """Store @now_ns, a time on the wheel's clock, into @slot."""
        _u64(now_ns, "touch_at now_ns")
        try:
            if slot < 0:
                raise IndexError(slot)
            self._slots[slot] = now_ns
        except (IndexError, TypeError, ValueError):
            raise self._touch_error(slot) from None

    def _touch_error(self, slot: object) -> Exception:
        if self._closed:
            return closed("touch")
        if not self._touch_slots:
            return ValueError("twheel: touch: the wheel has no touch table")
        if not isinstance(slot, int):
            return TypeError(f"twheel: touch slot must be an int, not {type(slot).__name__}")
        return ValueError(f"twheel: touch slot {slot} is outside 0..{self._touch_slots - 1}")

    # ---- events ----

    def _take(self, max_events: int) -> list[Event]:
        """Events already read from the fd and not yet handed out."""
        out: list[Event] = []
        pending = self._pending
        while pending and len(out) < max_events:
            try:
                out.append(pending.popleft())
            except IndexError:
                break
        return out

    def _read(self, max_events: int) -> list[Event]:
        """One non-blocking read(2) of up to @max_events; caller is entered."""
        try:
            data = os.read(self._fd, max_events * _uapi.EVENT.size)
        except BlockingIOError:
            return []
        except OSError as e:
            raise error(e.errno or 0, "read") from None
        return list(map(Event._make, _uapi.unpack_events(data)))

    def read_events(self, max_events: int = 256, timeout: float | None = None) -> list[Event]:
        """Up to @max_events expiries, in deadline order. Waits for at least
        one for up to @timeout seconds (None: as long as it takes; 0: not at
        all) and returns [] if none came. Each expiry is returned once, to
        one reader, however many threads and tasks read. Closed if the wheel
        is closed, also while waiting."""
        count = _ranged(max_events, 1, _READ_MAX, "max_events")
        if timeout is not None and not isinstance(timeout, (int, float)):
            raise TypeError(f"twheel: read_events timeout must be seconds or None, "
                            f"not {type(timeout).__name__}")
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"twheel: read_events timeout {timeout!r} must be >= 0 or None")
        end = None if timeout is None or timeout == math.inf else time.monotonic() + timeout
        self._enter("read")
        try:
            poller: select.poll | None = None
            while True:
                got = self._take(count) or self._read(count)
                if got:
                    return got
                ms = -1
                if end is not None:
                    left = end - time.monotonic()
                    if left <= 0:
                        return []
                    ms = min(math.ceil(left * 1000), _INT_MAX)
                if poller is None:
                    poller = select.poll()
                    poller.register(self._fd, select.POLLIN)
                    poller.register(self._wake, select.POLLIN)
                poller.poll(ms)
                if self._closed:
                    raise closed("read")
        finally:
            self._leave()

    async def read_events_async(self, max_events: int = 256) -> list[Event]:
        """read_events() for asyncio: waits in the running loop (add_reader)
        for at least one event. Cancelling the awaiting task loses nothing:
        an event read from the fd is returned, or left for the next reader."""
        count = _ranged(max_events, 1, _READ_MAX, "max_events")
        while True:
            self._enter("read")
            try:
                got = self._take(count) or self._read(count)
            finally:
                self._leave()
            if got:
                return got
            await self._readable("read")

    def events(self, batch: int = 64) -> AsyncIterator[Event]:
        """Every expiry, one at a time, for `async for`: reads up to @batch
        per system call and keeps what it has not yet handed out for the
        next reader, so breaking out of the loop or cancelling its task
        loses nothing. The iteration ends when the wheel is closed."""
        count = _ranged(batch, 1, _READ_MAX, "events batch")
        return self._events(count)

    async def _events(self, count: int) -> AsyncIterator[Event]:
        while True:
            try:
                self._enter("events")
            except Closed:
                return
            try:
                got = self._take(1) or self._read(count)
            finally:
                self._leave()
            if got:
                # What comes after the first waits for us or another task;
                # wake this loop's other readers to share it.
                if len(got) > 1:
                    self._pending.extend(got[1:])
                    self._wake_loop(asyncio.get_running_loop())
                yield got[0]
                continue
            try:
                await self._readable("events")
            except Closed:
                return

    async def _readable(self, what: str) -> None:
        """Wait until the fd may be readable, or the wheel is closed (then
        raise Closed). Reads nothing, so a cancellation here loses nothing.
        One add_reader per loop serves all the loop's waiting tasks."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._closed:
                raise closed(what)
            self._users += 1
            waiters = self._waiters.setdefault(loop, [])
            waiters.append(fut)
            first = len(waiters) == 1
        try:
            if first:
                loop.add_reader(self._fd, self._wake_loop, loop)
            await fut
        finally:
            last = False
            with self._lock:
                waiters = self._waiters.get(loop, [])
                if fut in waiters:
                    waiters.remove(fut)
                    if not waiters:
                        del self._waiters[loop]
                        last = True
            if last:
                loop.remove_reader(self._fd)
            self._leave()
        if self._closed:
            raise closed(what)

    def _wake_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """In @loop's thread: wake every task of it waiting in _readable()."""
        with self._lock:
            waiters = self._waiters.pop(loop, None)
        if waiters is None:
            return
        loop.remove_reader(self._fd)
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)


def _id_array(ids: Iterable[int]) -> array.array[int]:
    """@ids as an array of __u64; ValueError or TypeError naming a bad id."""
    if isinstance(ids, array.array) and ids.typecode == _uapi.ID_TYPECODE:
        return ids
    if not isinstance(ids, (list, tuple, range)):
        ids = list(ids)
    try:
        return array.array(_uapi.ID_TYPECODE, ids)
    except (OverflowError, TypeError):
        pass
    for i in ids:
        _u64(i, "refresh_many id")
    raise TypeError("twheel: refresh_many takes an iterable of ints")
