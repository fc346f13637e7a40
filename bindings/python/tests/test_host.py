# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""What needs no device (host): the exceptions, the encoding of ops, bad
arguments refused before any system call, and the import off Linux.

The Wheel's arguments are checked against a device path that does not
exist: a ValueError or TypeError there was raised before open(2), which
would have answered Unavailable. The refusals of open(2) that the test
cannot cause as root (EACCES, EPERM) come from a replaced os.open.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, NoReturn

import pytest

import twheel
from twheel import Op, OpCode, _errors, _uapi, _wheel

NOWHERE = "/nonexistent/twheel"
U64_MAX = 2**64 - 1


@pytest.mark.parametrize("err, cls, builtin", [
    (errno.ENOENT, twheel.NotFound, FileNotFoundError),
    (errno.EEXIST, twheel.Exists, FileExistsError),
    (errno.ENOSPC, twheel.NoSpace, OSError),
    (errno.ENOMEM, twheel.NoMemory, OSError),
    (errno.EINVAL, twheel.InvalidArgument, OSError),
    (errno.EFAULT, twheel.Error, OSError),
])
def test_each_errno_maps_to_its_class(err: int, cls: type[Exception], builtin: type[Exception]) -> None:
    e = _errors.error(err, "add id 42")
    assert type(e) is cls
    assert isinstance(e, twheel.Error) and isinstance(e, builtin)
    assert e.errno == err
    assert "add id 42" in str(e) and e.strerror is not None and "add id 42" in e.strerror


def test_closed_is_an_ebadf_error_and_a_value_error() -> None:
    e = _errors.closed("refresh")
    assert isinstance(e, twheel.Error) and isinstance(e, ValueError)
    assert e.errno == errno.EBADF and "refresh" in str(e)


def test_open_of_a_missing_device_is_a_file_not_found_error_not_a_missing_id() -> None:
    with pytest.raises(FileNotFoundError) as info:
        twheel.Wheel(twheel.MSEC, twheel.SEC, device=NOWHERE)
    e = info.value
    assert type(e) is twheel.DeviceNotFound and isinstance(e, twheel.Unavailable)
    assert not isinstance(e, twheel.NotFound)
    assert e.errno == errno.ENOENT and NOWHERE in str(e) and "is the module loaded?" in str(e)


def _refuse_open(monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    def refused(path: str, flags: int, mode: int = 0o777) -> NoReturn:
        raise OSError(err, os.strerror(err), path)
    monkeypatch.setattr(os, "open", refused)


@pytest.mark.parametrize("err, hint", [(errno.EACCES, "group twheel"),
                                       (errno.EPERM, "device cgroup")])
def test_except_permission_error_catches_a_refused_open(monkeypatch: pytest.MonkeyPatch,
                                                        err: int, hint: str) -> None:
    _refuse_open(monkeypatch, err)
    try:
        twheel.Wheel(twheel.MSEC, twheel.SEC)
    except PermissionError as e:
        assert type(e) is twheel.PermissionDenied and isinstance(e, twheel.Unavailable)
        assert e.errno == err and _uapi.TWHEEL_DEVICE in str(e) and hint in str(e)
    else:
        pytest.fail("open() of a refused device raised nothing")


@pytest.mark.parametrize("err", [errno.ENODEV, errno.ENXIO, errno.EIO])
def test_other_open_errors_are_unavailable_alone(monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    _refuse_open(monkeypatch, err)
    with pytest.raises(twheel.Unavailable) as info:
        twheel.Wheel(twheel.MSEC, twheel.SEC)
    assert type(info.value) is twheel.Unavailable and info.value.errno == err


def test_tracebacks_name_the_errors_as_the_package_exports_them() -> None:
    for name in ("Error", "NotFound", "Exists", "NoSpace", "NoMemory", "InvalidArgument",
                 "Unavailable", "DeviceNotFound", "PermissionDenied", "Unsupported", "Closed"):
        cls = getattr(twheel, name)
        assert f"{cls.__module__}.{cls.__qualname__}" == f"twheel.{name}"


def test_the_clocks_are_linuxs() -> None:
    if sys.platform != "linux":
        pytest.skip("the time module numbers clocks its own way here")
    assert (twheel.CLOCK_MONOTONIC, twheel.CLOCK_BOOTTIME) == \
        (time.CLOCK_MONOTONIC, time.CLOCK_BOOTTIME)


# Another system, as far as one can be played on Linux: its platform name
# and the pieces of the standard library it lacks, taken away before the
# package is imported (the modules that look at sys.platform themselves
# are imported first, as they are on that system).
_ELSEWHERE = """
import array, asyncio, collections, ctypes, enum, errno, math, mmap, operator, os
import platform, select, struct, sys, threading, time, warnings
sys.platform = {platform!r}
for name in {missing!r}:
    delattr(time, name)
if {no_fcntl!r}:
    sys.modules["fcntl"] = None
import twheel
try:
    twheel.open(tick_ns=10 * twheel.MSEC, default_timeout_ns=twheel.SEC,
                clock=twheel.CLOCK_BOOTTIME)
except twheel.Unavailable as e:
    assert isinstance(e, twheel.Unsupported) and isinstance(e, NotImplementedError), type(e)
    assert e.errno == errno.ENOSYS, e.errno
    print(type(e).__name__, e.strerror)
"""


@pytest.mark.parametrize("platform, missing, no_fcntl", [
    ("darwin", ["CLOCK_BOOTTIME"], False),
    ("win32", ["CLOCK_BOOTTIME", "CLOCK_MONOTONIC", "clock_gettime_ns"], True),
])
def test_off_linux_the_package_imports_and_open_says_it_needs_linux(
        platform: str, missing: list[str], no_fcntl: bool) -> None:
    code = _ELSEWHERE.format(platform=platform, missing=missing, no_fcntl=no_fcntl)
    env = dict(os.environ, PYTHONPATH=str(Path(twheel.__file__).resolve().parents[1]))
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == \
        f"Unsupported twheel: open /dev/twheel: twheel needs Linux, this is {platform}\n"


@pytest.mark.parametrize("kwargs, exc", [
    ({"tick_ns": twheel.TICK_MIN_NS - 1}, ValueError),
    ({"tick_ns": 0}, ValueError),
    ({"tick_ns": twheel.TICK_MAX_NS + 1}, ValueError),
    ({"tick_ns": 0.001}, TypeError),
    ({"tick_ns": "1ms"}, TypeError),
    ({"default_timeout_ns": -1}, ValueError),
    ({"default_timeout_ns": twheel.MSEC * 2**32 + 1}, ValueError),
    ({"default_timeout_ns": 1.5}, TypeError),
    ({"clock": 0}, ValueError),
    ({"clock": None}, TypeError),
    ({"cap": -1}, ValueError),
    ({"cap": 2**32}, ValueError),
    ({"touch_slots": twheel.TOUCH_MAX_SLOTS + 1}, ValueError),
    ({"touch_slots": -1}, ValueError),
    ({"cap": 10, "touch_slots": 11}, ValueError),
])
def test_bad_setup_arguments_are_refused_before_open(kwargs: dict[str, Any], exc: type[Exception]) -> None:
    args: dict[str, Any] = {"tick_ns": twheel.MSEC, "default_timeout_ns": twheel.SEC}
    args.update(kwargs)
    with pytest.raises(exc):
        twheel.Wheel(args.pop("tick_ns"), args.pop("default_timeout_ns"), device=NOWHERE, **args)


def test_longest_default_timeout_is_accepted_up_to_open() -> None:
    with pytest.raises(twheel.Unavailable):
        twheel.Wheel(twheel.MSEC, twheel.MSEC * 2**32, device=NOWHERE)
    with pytest.raises(twheel.Unavailable):
        twheel.Wheel(twheel.TICK_MAX_NS, twheel.MAX_TIMEOUT_NS, device=NOWHERE)
    with pytest.raises(ValueError):
        twheel.Wheel(twheel.TICK_MAX_NS, twheel.MAX_TIMEOUT_NS + 1, device=NOWHERE)


MAX_TIMEOUT = 2**32 * twheel.MSEC


def encoded(op: Op, touch_slots: int = 16) -> tuple[int, int, int, int]:
    """What batch() would send of @op on a 1 ms wheel with @touch_slots slots."""
    return _wheel.encode(*op, max_timeout_ns=MAX_TIMEOUT, touch_slots=touch_slots)


@pytest.mark.parametrize("bad, exc", [
    (-1, ValueError), (2**64, ValueError), (-(2**70), ValueError),
    (1.0, TypeError), ("7", TypeError), (None, TypeError),
])
def test_bad_ids_are_refused(bad: Any, exc: type[Exception]) -> None:
    for make in (Op.add, Op.refresh, Op.cancel, Op.query):
        with pytest.raises(exc, match="id"):
            encoded(make(bad))


def test_extreme_ids_are_valid() -> None:
    assert encoded(Op.add(0))[0] == 0 and encoded(Op.cancel(U64_MAX))[0] == U64_MAX


@pytest.mark.parametrize("op", [
    Op.add(1, -1),
    Op.add(1, MAX_TIMEOUT + 1),
    Op.add(1, deadline_ns=-5),
    Op.add(1, deadline_ns=2**64),
    Op.add(1, 10, deadline_ns=10),
    Op.refresh(1, 10, deadline_ns=10),
    Op(OpCode.CANCEL, 1, timeout_ns=5),
    Op(OpCode.QUERY, 1, deadline_ns=5),
    Op(OpCode.ADD, 1, add_if_absent=True),
    Op(OpCode.CANCEL, 1, slot=0),
    Op.add(1, slot=-1),
    Op.add(1, slot=16),
    Op.add(1, slot=2**32),
    Op(9, 1),
    Op(0, 1),
], ids=repr)
def test_inconsistent_ops_are_value_errors(op: Op) -> None:
    with pytest.raises(ValueError):
        encoded(op)


def test_a_slot_on_a_wheel_without_a_table_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no touch table"):
        encoded(Op.add(1, slot=0), touch_slots=0)


@pytest.mark.parametrize("op", [Op.add(1, 0.5), Op.add(1, deadline_ns=1.5),  # type: ignore[arg-type]
                                Op.add(1, slot=1.0), Op(1.0, 1)], ids=repr)  # type: ignore[arg-type]
def test_values_of_the_wrong_type_are_type_errors(op: Op) -> None:
    with pytest.raises(TypeError):
        encoded(op)


@pytest.mark.parametrize("op, fields", [
    (Op.add(5), (0, 0, 0)),
    (Op.add(5, 7), (7, _uapi.TWHEEL_OPF_TIMEOUT, 0)),
    (Op.add(5, 0), (0, _uapi.TWHEEL_OPF_TIMEOUT, 0)),
    (Op.add(5, MAX_TIMEOUT), (MAX_TIMEOUT, _uapi.TWHEEL_OPF_TIMEOUT, 0)),
    (Op.add(5, deadline_ns=99), (99, _uapi.TWHEEL_OPF_ABSTIME, 0)),
    (Op.add(5, slot=3), (0, _uapi.TWHEEL_OPF_TOUCH, 3)),
    (Op.refresh(5, add_if_absent=True), (0, _uapi.TWHEEL_OPF_ADD_IF_ABSENT, 0)),
    (Op.refresh(5, 8, add_if_absent=True, slot=twheel.SLOT_NONE),
     (8, _uapi.TWHEEL_OPF_TIMEOUT | _uapi.TWHEEL_OPF_ADD_IF_ABSENT | _uapi.TWHEEL_OPF_TOUCH,
      twheel.SLOT_NONE)),
    (Op.refresh(5, deadline_ns=U64_MAX), (U64_MAX, _uapi.TWHEEL_OPF_ABSTIME, 0)),
    (Op.cancel(5), (0, 0, 0)),
    (Op.query(5), (0, 0, 0)),
], ids=repr)
def test_ops_encode_as_libtwheel_prepares_them(op: Op, fields: tuple[int, int, int]) -> None:
    ident, value, flags, slot = encoded(op)
    assert (ident, value, flags, slot) == (5, *fields)
    buf = bytearray(_uapi.OP.size)
    _uapi.pack_op(buf, 0, op.code, ident, value, flags, slot)
    raw = _uapi.twheel_op.from_buffer_copy(buf)
    assert (raw.op, raw.id, raw.timeout_ns, raw.flags, raw.slot) == (op.code, 5, value, flags, slot)


def test_op_names_name_the_operation() -> None:
    assert [op.name for op in (Op.add(1), Op.refresh(1), Op.cancel(1), Op.query(1))] == \
        ["add", "refresh", "cancel", "query"]


def test_event_lateness_is_expiry_minus_deadline() -> None:
    assert twheel.Event(1, 100, 130).lateness_ns == 30


def test_op_results_say_ok() -> None:
    op = Op.add(1)
    assert twheel.OpResult(op, None, 5, 4).ok
    assert not twheel.OpResult(op, _errors.error(errno.EEXIST, "add id 1"), 0, 0).ok


def test_the_package_version_is_the_projects() -> None:
    here = Path(__file__).resolve().parents[1]
    version = here.parents[1] / "VERSION"
    if not version.exists():
        pytest.skip("no VERSION (an sdist)")
    with open(here / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["version"] == version.read_text().strip()
