// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The errnos of the kernel's answers: which sentinel each one is, with a
// message a log reader understands without the ABI at hand, and the ones
// that make the device unavailable at open(2), with what to check.

//go:build linux

package twheel

import (
	"errors"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// errInvalidArg is what invalid wraps: the kernel's own EINVAL.
var errInvalidArg error = unix.EINVAL

// errnoSentinel maps an errno of an op to its sentinel and message.
var errnoSentinel = map[syscall.Errno]struct {
	err error
	msg string
}{
	unix.ENOENT: {ErrNotFound, "not live"},
	unix.EEXIST: {ErrExists, "already live"},
	unix.ENOSPC: {ErrFull, "wheel full (cap or entry limit reached)"},
	unix.EINVAL: {ErrInvalid, "invalid argument"},
	unix.EBADFD: {ErrNotSetUp, "wheel not set up"},
	unix.ENOTTY: {errors.ErrUnsupported, "command unknown to the loaded module"},
	unix.EBADF:  {nil, "descriptor not open for writing"},
}

// unavailable maps an errno of the open(2) of the device that means there
// is no wheel to be had (ErrUnavailable) to whether it is also
// fs.ErrNotExist (ENOENT is by itself; ENODEV and ENXIO, a device node
// without its driver, are made so) and to what the user should check.
var unavailable = map[syscall.Errno]struct {
	notExist bool
	hint     string
}{
	unix.ENOENT: {true, hintModule},
	unix.ENODEV: {true, hintModule},
	unix.ENXIO:  {true, hintModule},
	unix.EACCES: {false, hintGroup},
	unix.EPERM:  {false, hintGroup},
}

const (
	hintModule = "is the twheel module loaded? (modprobe twheel)"
	hintGroup  = "is the user in group twheel?"
)

// openError is the error of the open(2) of the device at @path: an
// unavailable device says what to check.
func openError(path string, err error) error {
	e := &Error{Op: "open", Err: err, Detail: path}
	if errno, ok := err.(syscall.Errno); ok {
		if u, ok := unavailable[errno]; ok {
			e.Detail += ": " + u.hint
		}
	}
	return e
}

// errnoMessage is the message of @e's errno, "not live (ENOENT)", if it
// wraps one. An errno of "open" keeps the system's text, "no such file
// or directory (ENOENT)": the ops' messages are about ids.
func (e *Error) errnoMessage() (string, bool) {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return "", false
	}
	msg := errno.Error()
	if m, ok := errnoSentinel[errno]; ok && e.Op != "open" {
		msg = m.msg
	}
	return msg + " (" + unix.ErrnoName(errno) + ")", true
}

// errnoIs: the sentinel of @e's errno is @target.
func (e *Error) errnoIs(target error) bool {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return false
	}
	if e.Op == "open" {
		u, ok := unavailable[errno]
		return ok && (target == ErrUnavailable || (u.notExist && target == fs.ErrNotExist))
	}
	m, ok := errnoSentinel[errno]
	return ok && m.err != nil && m.err == target
}

// resultErr turns an op's result field (0 or -errno) into an error. A
// value outside -4095..0 would be the module's bug: it is reported as EIO
// rather than as an errno that no one sent.
func resultErr(result int32) error {
	switch {
	case result == 0:
		return nil
	case result > 0 || result < -4095:
		return unix.EIO
	}
	return syscall.Errno(-result)
}
