// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Errors: every failure is an *Error naming the operation and the id (or
// slot) it was about, and wrapping what went wrong: the syscall.Errno the
// kernel answered, os.ErrClosed after Close, or a context's error. Tests
// use errors.Is with the sentinels below, or with the errno itself. Which
// errno is which sentinel, and its message, is errors_linux.go's; on
// another system no kernel answers (unsupported.go).

package twheel

import (
	"errors"
	"fmt"
	"os"
)

// Sentinels for errors.Is. Each matches the *Error values that wrap its
// errno; errors.Is(err, syscall.ENOENT) and the like work as well.
var (
	// ErrNotFound: the id is not live (REFRESH, CANCEL or QUERY; ENOENT).
	// A missing /dev/twheel is not ErrNotFound but ErrUnavailable.
	ErrNotFound = errors.New("twheel: id not live")
	// ErrExists: ADD of an id that is live (EEXIST).
	ErrExists = errors.New("twheel: id already live")
	// ErrFull: the wheel's cap, its user's limit or the module's was
	// reached (ENOSPC).
	ErrFull = errors.New("twheel: wheel full")
	// ErrInvalid: an argument the kernel or this package refuses: a
	// negative or too long timeout, a slot outside the table, flags that
	// do not go with the op (EINVAL).
	ErrInvalid = errors.New("twheel: invalid argument")
	// ErrNotSetUp: the descriptor's wheel was never set up (EBADFD).
	ErrNotSetUp = errors.New("twheel: wheel not set up")
	// ErrClosed is os.ErrClosed: the Wheel was closed.
	ErrClosed = os.ErrClosed
	// ErrUnavailable: the twheel device is missing or refused, so there
	// is no wheel to be had here. Open returns it when /dev/twheel does
	// not exist or has no driver behind it (ENOENT, ENODEV, ENXIO: the
	// module is not loaded; the error is fs.ErrNotExist too) and when the
	// process may not open it (EACCES, EPERM: its user is not in the
	// device's group, twheel with the Debian package; fs.ErrPermission
	// too). On a system other than Linux every call that would reach the
	// device returns it, with errors.ErrUnsupported.
	ErrUnavailable = errors.New("twheel: the twheel device is missing or refused")
)

// Error is the error of every operation of this package.
type Error struct {
	// Op is the operation: "open", "setup", "add", "refresh", "cancel",
	// "query", "batch", "refresh-ids", "read", "dump", "touch", "close".
	// The errnos of "open", the open(2) of /dev/twheel, are not those of
	// an op on an id: ENOENT there is ErrUnavailable, not ErrNotFound.
	Op string
	// ID is the id the operation was about, if HasID.
	ID    uint64
	HasID bool
	// Slot is the touch slot, if HasSlot.
	Slot    uint32
	HasSlot bool
	// Err is a syscall.Errno, os.ErrClosed, or a context's error; on a
	// system other than Linux, an error that is errors.ErrUnsupported
	// and ErrUnavailable.
	Err error
	// Detail says more: what this package refused in the input itself,
	// or, for "open", the device's path and what to check.
	Detail string
}

func (e *Error) Error() string {
	s := "twheel: " + e.Op
	if e.HasID {
		s += fmt.Sprintf(" id %d", e.ID)
	}
	if e.HasSlot {
		s += fmt.Sprintf(" slot %d", e.Slot)
	}
	if msg, ok := e.errnoMessage(); ok {
		s += ": " + msg
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap gives the errno (or os.ErrClosed, or the context's error).
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of the wrapped errno: ErrNotFound for ENOENT
// of an op, ErrUnavailable (and fs.ErrNotExist) for ENOENT of "open".
func (e *Error) Is(target error) bool { return e.errnoIs(target) }

// opError wraps @err as the error of @op on @id; nil stays nil.
func opError(op string, id uint64, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, ID: id, HasID: true, Err: err}
}

func callError(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Err: err}
}

// invalid is this package's own refusal of an input, before any call.
func invalid(op string, detail string) *Error {
	return &Error{Op: op, Err: errInvalidArg, Detail: detail}
}
