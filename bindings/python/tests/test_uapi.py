# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""twheel._uapi against uapi/linux/twheel.h itself (host).

A C program generated from the Python definitions is compiled against the
header and prints what C says of each of them: every struct's size, every
field's offset, size and signedness, every constant and ioctl number. All
must agree, and every TWHEEL_ name and struct the header defines must be
mirrored. Skips without a C compiler or without the header (an sdist
carries no uapi/; the tree's is found beside this folder, or named by
$TWHEEL_UAPI, the directory that holds linux/twheel.h).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from twheel import _uapi

UAPI = Path(os.environ.get("TWHEEL_UAPI", Path(__file__).resolve().parents[3] / "uapi"))
HEADER = UAPI / "linux" / "twheel.h"


def _program() -> str:
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <linux/twheel.h>",
             "int main(void)", "{"]
    for cls in _uapi.STRUCTS:
        name = cls.__name__
        lines.append(f'printf("size {name} %zu\\n", sizeof(struct {name}));')
        for field in cls._fields_:
            f = field[0]
            member = f"((struct {name} *)0)->{f}"
            lines.append(f'printf("field {name}.{f} %zu %zu %d\\n", offsetof(struct {name}, {f}), '
                         f"sizeof({member}), (__typeof__({member}))-1 < 0);")
    for const in _uapi.MIRRORED:
        if isinstance(getattr(_uapi, const), str):
            lines.append(f'printf("str {const} %s\\n", {const});')
        else:
            lines.append(f'printf("const {const} %llu\\n", (unsigned long long)({const}));')
    lines += ["return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_says(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc:
        pytest.skip("no C compiler")
    if not HEADER.exists():
        pytest.skip(f"no {HEADER}")
    tmp = tmp_path_factory.mktemp("uapi")
    (tmp / "layout.c").write_text(_program())
    subprocess.run([cc, "-std=gnu11", "-Wall", "-Werror", f"-I{UAPI}", "-o", str(tmp / "layout"),
                    str(tmp / "layout.c")], check=True)
    out = subprocess.run([str(tmp / "layout")], check=True, capture_output=True, text=True).stdout
    return [line.split(" ", 2) for line in out.splitlines()]


def test_struct_sizes_match_the_header(c_says: list[list[str]]) -> None:
    sizes = {name: int(value) for kind, name, value in c_says if kind == "size"}
    assert sizes == {cls.__name__: ctypes.sizeof(cls) for cls in _uapi.STRUCTS}


def test_field_offsets_sizes_and_signs_match_the_header(c_says: list[list[str]]) -> None:
    c_fields = {name: value.split() for kind, name, value in c_says if kind == "field"}
    for cls in _uapi.STRUCTS:
        for field in cls._fields_:
            f, ctype = field[0], field[1]
            offset, size, signed = c_fields[f"{cls.__name__}.{f}"]
            descr = getattr(cls, f)
            assert (descr.offset, descr.size) == (int(offset), int(size)), f"{cls.__name__}.{f}"
            assert (ctype is _uapi.s32) == (signed == "1"), f"{cls.__name__}.{f}"


def test_constants_and_ioctl_numbers_match_the_header(c_says: list[list[str]]) -> None:
    for kind, name, value in c_says:
        if kind == "const":
            assert getattr(_uapi, name) == int(value), name
        elif kind == "str":
            assert getattr(_uapi, name) == value, name


def test_every_name_of_the_header_is_mirrored() -> None:
    if not HEADER.exists():
        pytest.skip(f"no {HEADER}")
    text = HEADER.read_text()
    names = set(re.findall(r"^#define\s+(TWHEEL_\w+)", text, re.M))
    names |= set(re.findall(r"^\s*(TWHEEL_\w+)\s*=", text, re.M))
    assert names == set(_uapi.MIRRORED)
    structs = set(re.findall(r"^struct (twheel_\w+) \{", text, re.M))
    assert structs == {cls.__name__ for cls in _uapi.STRUCTS}


def test_bulk_formats_are_the_ctypes_layouts() -> None:
    for cls, packed in ((_uapi.twheel_op, _uapi.OP), (_uapi.twheel_event, _uapi.EVENT),
                        (_uapi.twheel_dump_entry, _uapi.DUMP_ENTRY)):
        assert packed.size == ctypes.sizeof(cls)


def test_pack_op_fills_the_fields_by_name() -> None:
    buf = bytearray(_uapi.OP.size)
    _uapi.pack_op(buf, 0, _uapi.TWHEEL_OP_REFRESH, 2**64 - 1, 123, _uapi.TWHEEL_OPF_TOUCH, 7)
    op = _uapi.twheel_op.from_buffer(buf)
    assert (op.id, op.timeout_ns, op.deadline_ns, op.remaining_ns) == (2**64 - 1, 123, 0, 0)
    assert (op.op, op.flags, op.result, op.slot) == (2, _uapi.TWHEEL_OPF_TOUCH, 0, 7)
    op.deadline_ns, op.remaining_ns, op.result = 5, 6, -17
    del op
    assert _uapi.unpack_op_times(buf) == (5, 6)
    assert list(_uapi.unpack_ops_out(buf + buf)) == [(5, 6, -17)] * 2


def test_events_and_dump_entries_unpack_by_name() -> None:
    events = (_uapi.twheel_event * 2)(_uapi.twheel_event(1, 10, 11),
                                      _uapi.twheel_event(2**64 - 1, 20, 25))
    assert list(_uapi.unpack_events(bytes(events))) == [(1, 10, 11), (2**64 - 1, 20, 25)]
    entries = (_uapi.twheel_dump_entry * 3)(_uapi.twheel_dump_entry(4, 40, _uapi.TWHEEL_SLOT_NONE),
                                            _uapi.twheel_dump_entry(5, 50, 3))
    buf = bytearray(entries)
    assert list(_uapi.unpack_dump(buf, 2)) == [(4, 40, _uapi.TWHEEL_SLOT_NONE), (5, 50, 3)]
