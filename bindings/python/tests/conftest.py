# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""What the tests share: the device fixtures and the TAP report.

Tests that need /dev/twheel take the `wheel` fixture (or call
`needs_device()`), and skip where the device is absent (the host); the
rest run anywhere. `--tap FILE` writes one kselftest-style TAP line per
test to FILE as the run goes (`ok N name`, `not ok N name`,
`ok N name # SKIP reason`), which vm-test.sh prints and counts: only
Debian's pytest is in the VM's root, so the plugin is this file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO

import pytest

import twheel

DEVICE = "/dev/twheel"
TICK = 1 * twheel.MSEC
TIMEOUT = 1 * twheel.SEC


def needs_device() -> None:
    if not os.path.exists(DEVICE):
        pytest.skip(f"no {DEVICE} (the module is not loaded here)")
    if not os.access(DEVICE, os.R_OK | os.W_OK):
        pytest.skip(f"{DEVICE} is not open to this user")


@pytest.fixture
def wheel() -> Iterator[twheel.Wheel]:
    """A wheel with a 1 ms tick and a 1 s default timeout."""
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT) as w:
        yield w


@pytest.fixture
def touch_wheel() -> Iterator[twheel.Wheel]:
    """A wheel with a 1 ms tick, a 1 s default timeout and 16 touch slots."""
    needs_device()
    with twheel.Wheel(TICK, TIMEOUT, touch_slots=16) as w:
        yield w


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tap", metavar="FILE", help="write a TAP line per test to FILE")


class _Tap:
    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.n = 0
        self.failed: set[str] = set()
        self.skipped: dict[str, str] = {}

    def line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.line("TAP version 13")
        self.line(f"1..{len(session.items)}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed.add(report.nodeid)
        elif report.skipped and report.nodeid not in self.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
            self.skipped[report.nodeid] = reason.removeprefix("Skipped: ")

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.n += 1
        name = nodeid.rpartition("/")[2]
        if nodeid in self.failed:
            self.line(f"not ok {self.n} {name}")
        elif nodeid in self.skipped:
            self.line(f"ok {self.n} {name} # SKIP {self.skipped[nodeid]}")
        else:
            self.line(f"ok {self.n} {name}")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("tap")
    if path:
        config.pluginmanager.register(_Tap(open(path, "w", encoding="utf-8")), "twheel-tap")
