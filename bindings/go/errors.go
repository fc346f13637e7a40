// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Errors: every failure is an *Error naming the operation and the id (or
// slot) it was about, and wrapping what went wrong: the syscall.Errno the
// kernel answered, os.ErrClosed after Close, or a context's error. Tests
// use errors.Is with the sentinels below, or with the errno itself.

//go:build linux

package twheel

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sentinels for errors.Is. Each matches the *Error values that wrap its
// errno; errors.Is(err, syscall.ENOENT) and the like work as well.
var (
	// ErrNotFound: the id is not live (REFRESH, CANCEL or QUERY; ENOENT).
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
)

// errnoSentinel maps an errno to its sentinel, and to a message a log
// reader understands without the ABI at hand.
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

// Error is the error of every operation of this package.
type Error struct {
	// Op is the operation: "open", "setup", "add", "refresh", "cancel",
	// "query", "batch", "refresh-ids", "read", "dump", "touch", "close".
	Op string
	// ID is the id the operation was about, if HasID.
	ID    uint64
	HasID bool
	// Slot is the touch slot, if HasSlot.
	Slot    uint32
	HasSlot bool
	// Err is a syscall.Errno, os.ErrClosed, or a context's error.
	Err error
	// Detail says more when this package refused the input itself.
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
	var errno syscall.Errno
	switch {
	case errors.As(e.Err, &errno):
		msg := errno.Error()
		if m, ok := errnoSentinel[errno]; ok {
			msg = m.msg
		}
		s += ": " + msg + " (" + unix.ErrnoName(errno) + ")"
	case e.Err != nil:
		s += ": " + e.Err.Error()
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap gives the errno (or os.ErrClosed, or the context's error).
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of the wrapped errno.
func (e *Error) Is(target error) bool {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return false
	}
	m, ok := errnoSentinel[errno]
	return ok && m.err != nil && m.err == target
}

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
	return &Error{Op: op, Err: unix.EINVAL, Detail: detail}
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
