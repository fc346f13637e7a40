# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The exceptions of the binding: what the device answers, as OSErrors.

Everything the wheel refuses is a twheel.Error, an OSError whose errno is
the kernel's answer and whose message names the operation and the id. The
answers a caller handles one by one have their own class; where Python has
a builtin for the same meaning, the class derives from it too, so code
that already catches FileExistsError or FileNotFoundError keeps working.
The open of the device has classes of its own, all Unavailable, so that a
missing device never reads as a missing id (NotFound) and one except
clause takes every reason a host cannot have a wheel; each also derives
from the builtin of its errno, as Python's own open() would raise it.
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
    """Opening /dev/twheel failed: there is no wheel on this host for this
    process. The subclasses below name the usual reasons; ENODEV or ENXIO
    (a device node left without its module) and the rest are this class."""


class DeviceNotFound(Unavailable, FileNotFoundError):
    """ENOENT: no /dev/twheel, the module is not loaded."""


class PermissionDenied(Unavailable, PermissionError):
    """EACCES or EPERM: /dev/twheel is not open to this process (not in the
    group twheel, or a device cgroup refuses it)."""


class Unsupported(Unavailable, NotImplementedError):
    """ENOSYS: not Linux, so no twheel module can exist; the package
    imports anywhere, but a wheel opens only on Linux. A NotImplementedError
    too, as the standard library answers a feature the platform lacks."""


class Closed(Error, ValueError):
    """The wheel was closed (EBADF); as for a closed file, also a ValueError."""


_BY_ERRNO: dict[int, type[Error]] = {
    errno.ENOENT: NotFound,
    errno.EEXIST: Exists,
    errno.ENOSPC: NoSpace,
    errno.ENOMEM: NoMemory,
    errno.EINVAL: InvalidArgument,
}


# The open(2) of the device: its class and what to check, by errno.
_OPEN_BY_ERRNO: dict[int, tuple[type[Unavailable], str]] = {
    errno.ENOENT: (DeviceNotFound, "is the module loaded?"),
    errno.ENODEV: (Unavailable, "is the module loaded?"),
    errno.ENXIO: (Unavailable, "is the module loaded?"),
    errno.EACCES: (PermissionDenied, "is the user in the group twheel?"),
    errno.EPERM: (PermissionDenied, "does a device cgroup refuse it?"),
}


def error(err: int, what: str) -> Error:
    """The exception for errno @err of the operation described by @what."""
    return _BY_ERRNO.get(err, Error)(err, f"twheel: {what}: {os.strerror(err)}")


def unavailable(err: int, device: str) -> Unavailable:
    """The exception for errno @err of the open(2) of @device."""
    cls, hint = _OPEN_BY_ERRNO.get(err, (Unavailable, ""))
    return cls(err, f"twheel: open {device}: {os.strerror(err)}" + (f" ({hint})" if hint else ""))


def unsupported(device: str, platform: str) -> Unsupported:
    return Unsupported(errno.ENOSYS,
                       f"twheel: open {device}: twheel needs Linux, this is {platform}")


def closed(what: str) -> Closed:
    return Closed(errno.EBADF, f"twheel: {what}: the wheel is closed")


# Tracebacks name the classes as users spell them (twheel.DeviceNotFound,
# not twheel._errors.DeviceNotFound), which is also where pickle finds them.
for _cls in (Error, NotFound, Exists, NoSpace, NoMemory, InvalidArgument, Unavailable,
             DeviceNotFound, PermissionDenied, Unsupported, Closed):
    _cls.__module__ = "twheel"
del _cls
