# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The ABI of /dev/twheel as Python sees it: uapi/linux/twheel.h, mirrored.

Every constant, structure and ioctl number the binding sends to the kernel
is defined here and nowhere else, under its C name, so that a change of the
header is one edit of this file; tests/test_uapi.py compiles a C program
against the header and checks each size, offset and value below against
it. The structures are ctypes ones (for the argument blocks that carry
pointers); the arrays the kernel reads or fills in bulk (ops, ids, events,
dump entries) are packed with struct formats derived from those same
ctypes definitions, never written out by hand.
"""

from __future__ import annotations

import array
import ctypes
import platform
import struct
from collections.abc import Iterator

TWHEEL_DEVICE = "/dev/twheel"

TWHEEL_TICK_MIN_NS = 100_000
TWHEEL_TICK_MAX_NS = 3_600_000_000_000
TWHEEL_MAX_TIMEOUT_TICKS = 1 << 32
TWHEEL_MAX_TIMEOUT_NS = 1 << 62

TWHEEL_SETUPF_TOUCH = 1 << 0
TWHEEL_SETUPF_TOUCH_USER = 1 << 1
TWHEEL_TOUCH_MAX_SLOTS = 1 << 24

TWHEEL_OP_ADD = 1
TWHEEL_OP_REFRESH = 2
TWHEEL_OP_CANCEL = 3
TWHEEL_OP_QUERY = 4

TWHEEL_OPF_TIMEOUT = 1 << 0
TWHEEL_OPF_ADD_IF_ABSENT = 1 << 1
TWHEEL_OPF_ABSTIME = 1 << 2
TWHEEL_OPF_TOUCH = 1 << 3

TWHEEL_SLOT_NONE = 0xFFFF_FFFF
TWHEEL_DUMP_END = (1 << 64) - 1

TWHEEL_NS_LIMITF_SET = 1 << 0

TWHEEL_IOC_MAGIC = 0xF7

# The C names this module mirrors, for the header check: every TWHEEL_
# name the header defines must be one of them.
MIRRORED = (
    "TWHEEL_DEVICE", "TWHEEL_TICK_MIN_NS", "TWHEEL_TICK_MAX_NS",
    "TWHEEL_MAX_TIMEOUT_TICKS", "TWHEEL_MAX_TIMEOUT_NS", "TWHEEL_SETUPF_TOUCH",
    "TWHEEL_SETUPF_TOUCH_USER", "TWHEEL_TOUCH_MAX_SLOTS", "TWHEEL_OP_ADD", "TWHEEL_OP_REFRESH",
    "TWHEEL_OP_CANCEL", "TWHEEL_OP_QUERY", "TWHEEL_OPF_TIMEOUT",
    "TWHEEL_OPF_ADD_IF_ABSENT", "TWHEEL_OPF_ABSTIME", "TWHEEL_OPF_TOUCH",
    "TWHEEL_SLOT_NONE", "TWHEEL_DUMP_END", "TWHEEL_IOC_MAGIC",
    "TWHEEL_IOC_SETUP", "TWHEEL_IOC_OP", "TWHEEL_IOC_BATCH", "TWHEEL_IOC_DUMP",
    "TWHEEL_IOC_REFRESH", "TWHEEL_IOC_TOUCH_REGISTER", "TWHEEL_NS_LIMITF_SET",
    "TWHEEL_IOC_NS_LIMIT",
)

u64 = ctypes.c_uint64
u32 = ctypes.c_uint32
s32 = ctypes.c_int32


class twheel_setup_args(ctypes.Structure):
    _fields_ = [
        ("tick_ns", u64),
        ("default_timeout_ns", u64),
        ("clockid", u32),
        ("max_entries", u32),
        ("flags", u32),
        ("touch_slots", u32),
    ]


class twheel_op(ctypes.Structure):
    _fields_ = [
        ("id", u64),
        ("timeout_ns", u64),
        ("deadline_ns", u64),
        ("remaining_ns", u64),
        ("op", u32),
        ("flags", u32),
        ("result", s32),
        ("slot", u32),
    ]


class twheel_batch_args(ctypes.Structure):
    _fields_ = [
        ("ops", u64),
        ("count", u32),
        ("flags", u32),
    ]


class twheel_event(ctypes.Structure):
    _fields_ = [
        ("id", u64),
        ("deadline_ns", u64),
        ("expired_ns", u64),
    ]


class twheel_refresh_args(ctypes.Structure):
    _fields_ = [
        ("ids", u64),
        ("failed", u64),
        ("timeout_ns", u64),
        ("count", u32),
        ("flags", u32),
        ("nr_failed", u32),
        ("pad", u32),
    ]


class twheel_dump_entry(ctypes.Structure):
    _fields_ = [
        ("id", u64),
        ("deadline_ns", u64),
        ("slot", u32),
        ("pad", u32),
    ]


class twheel_dump_args(ctypes.Structure):
    _fields_ = [
        ("entries", u64),
        ("cursor", u64),
        ("count", u32),
        ("flags", u32),
    ]


class twheel_uring_cmd(ctypes.Structure):
    """The command area of an io_uring ring command.

    The package submits no ring commands; the layout is mirrored so that
    the header check covers every struct of the uapi.
    """

    _fields_ = [
        ("arg", u64),
        ("pad", u64),
    ]


class twheel_touch_register_args(ctypes.Structure):
    """The argument of TWHEEL_IOC_TOUCH_REGISTER.

    The package registers no tables (its touch table is the wheel's own,
    mapped); the layout is mirrored so that the header check covers every
    struct of the uapi.
    """

    _fields_ = [
        ("addr", u64),
        ("slots", u32),
        ("flags", u32),
    ]


class twheel_ns_limit_args(ctypes.Structure):
    """The argument of TWHEEL_IOC_NS_LIMIT.

    A user namespace's entry limit is a container runtime's call, not a
    wheel's: the package makes none; the layout is mirrored so that the
    header check covers every struct of the uapi.
    """

    _fields_ = [
        ("pid", s32),
        ("flags", u32),
        ("limit", u64),
        ("entries", u64),
    ]


STRUCTS: tuple[type[ctypes.Structure], ...] = (
    twheel_setup_args, twheel_op, twheel_batch_args, twheel_event,
    twheel_refresh_args, twheel_dump_entry, twheel_dump_args,
    twheel_uring_cmd, twheel_touch_register_args, twheel_ns_limit_args,
)

_CODES: dict[object, str] = {u64: "Q", u32: "I", s32: "i"}


def packing(cls: type[ctypes.Structure]) -> struct.Struct:
    """The struct format of @cls, field for field, native byte order.

    The uapi has no implicit padding (every __u64 sits on an 8-byte
    offset), so standard sizes with no alignment ("=") give exactly the C
    layout; the assertion keeps it that way.
    """
    fmt = "=" + "".join(_CODES[field[1]] for field in cls._fields_)
    packed = struct.Struct(fmt)
    assert packed.size == ctypes.sizeof(cls), cls.__name__
    return packed


OP = packing(twheel_op)
EVENT = packing(twheel_event)
DUMP_ENTRY = packing(twheel_dump_entry)
# The array.array type of __u64 (ids and failed ids of TWHEEL_IOC_REFRESH).
ID_TYPECODE = "Q"
assert array.array(ID_TYPECODE).itemsize == ctypes.sizeof(u64)


def pack_op(buf: bytearray, offset: int, code: int, ident: int, timeout_ns: int,
            flags: int, slot: int) -> None:
    """Write the input fields of a struct twheel_op at @offset; out fields 0."""
    OP.pack_into(buf, offset, ident, timeout_ns, 0, 0, code, flags, 0, slot)


# The two out times of a struct twheel_op, which lie side by side.
_OP_TIMES = struct.Struct("=QQ")
_OP_TIMES_AT: int = getattr(twheel_op, "deadline_ns").offset
assert getattr(twheel_op, "remaining_ns").offset == _OP_TIMES_AT + 8


def unpack_op_times(buf: bytearray) -> tuple[int, int]:
    """(deadline_ns, remaining_ns) of the struct twheel_op in @buf."""
    deadline, remaining = _OP_TIMES.unpack_from(buf, _OP_TIMES_AT)
    return deadline, remaining


def unpack_ops_out(buf: bytearray) -> Iterator[tuple[int, int, int]]:
    """(deadline_ns, remaining_ns, result) of each struct twheel_op in @buf."""
    for _id, _timeout, deadline, remaining, _op, _flags, result, _slot in OP.iter_unpack(buf):
        yield deadline, remaining, result


def unpack_events(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(id, deadline_ns, expired_ns) of each struct twheel_event in @data."""
    return EVENT.iter_unpack(data)


def unpack_dump(buf: bytearray, count: int) -> Iterator[tuple[int, int, int]]:
    """(id, deadline_ns, slot) of the first @count struct twheel_dump_entry."""
    for entry_id, deadline, slot, _pad in DUMP_ENTRY.iter_unpack(
            memoryview(buf)[:count * DUMP_ENTRY.size]):
        yield entry_id, deadline, slot


def _ioc_layout() -> tuple[int, int, int]:
    """(_IOC_WRITE, _IOC_READ, size bits) of this machine.

    asm-generic/ioctl.h holds for x86, arm, arm64, riscv, s390 and most
    others; powerpc, mips, sparc and alpha have a 13-bit size and a 3-bit
    direction with other values.
    """
    if platform.machine().startswith(("ppc", "powerpc", "mips", "sparc", "alpha")):
        return 4, 2, 13
    return 1, 2, 14


_IOC_WRITE, _IOC_READ, _IOC_SIZEBITS = _ioc_layout()


def _ioc(direction: int, nr: int, cls: type[ctypes.Structure]) -> int:
    size = ctypes.sizeof(cls)
    assert size < 1 << _IOC_SIZEBITS
    return (direction << (16 + _IOC_SIZEBITS)) | (size << 16) | (TWHEEL_IOC_MAGIC << 8) | nr


TWHEEL_IOC_SETUP = _ioc(_IOC_WRITE, 0, twheel_setup_args)
TWHEEL_IOC_OP = _ioc(_IOC_READ | _IOC_WRITE, 1, twheel_op)
TWHEEL_IOC_BATCH = _ioc(_IOC_WRITE, 2, twheel_batch_args)
TWHEEL_IOC_DUMP = _ioc(_IOC_READ | _IOC_WRITE, 3, twheel_dump_args)
TWHEEL_IOC_REFRESH = _ioc(_IOC_READ | _IOC_WRITE, 4, twheel_refresh_args)
TWHEEL_IOC_TOUCH_REGISTER = _ioc(_IOC_WRITE, 5, twheel_touch_register_args)
TWHEEL_IOC_NS_LIMIT = _ioc(_IOC_READ | _IOC_WRITE, 6, twheel_ns_limit_args)
