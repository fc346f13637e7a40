# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The exceptions of the binding: what the device answers, as OSErrors.

Everything the wheel refuses is a twheel.Error, an OSError whose errno is
the kernel's answer and whose message names the operation and the id. The
answers a caller handles one by one have their own class; where Python has
a builtin for the same meaning, the class derives from it too, so code
that already catches FileExistsError or FileNotFoundError keeps working.
Bad arguments are refused before any system call with ValueError or
TypeError, never with these.
"""

from __future__ import annotations

import errno
import os


class Error(OSError):
    """The wheel refused an operation; .errno says why."""


class NotFound(Error, FileNotFoundError):
    """ENOENT: the id is not live (never added, cancelled, or expired)."""


class Exists(Error, FileExistsError):
    """EEXIST: ADD of an id that is live."""


class NoSpace(Error):
    """ENOSPC: the wheel's cap, its user's limit or the module's is reached."""


class NoMemory(Error):
    """ENOMEM: the kernel (or the caller's memory cgroup) had no memory."""


class InvalidArgument(Error):
    """EINVAL from the kernel: a value it refused that the binding could not
    check beforehand (a deadline too far ahead, a slot past the table)."""


class Unavailable(Error):
    """Opening /dev/twheel failed: ENOENT (module not loaded), EACCES (not
    in the group twheel), ..."""


class Closed(Error, ValueError):
    """The wheel was closed (EBADF); as for a closed file, also a ValueError."""


_BY_ERRNO: dict[int, type[Error]] = {
    errno.ENOENT: NotFound,
    errno.EEXIST: Exists,
    errno.ENOSPC: NoSpace,
    errno.ENOMEM: NoMemory,
    errno.EINVAL: InvalidArgument,
}


def error(err: int, what: str) -> Error:
    """The exception for errno @err of the operation described by @what."""
    return _BY_ERRNO.get(err, Error)(err, f"twheel: {what}: {os.strerror(err)}")


def closed(what: str) -> Closed:
    return Closed(errno.EBADF, f"twheel: {what}: the wheel is closed")
