// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The package on a system other than Linux: the same API, so that a
// program that uses a wheel where there is one builds everywhere, but no
// wheel. Open fails, and so does every call that would reach the device,
// with an *Error that is errors.ErrUnsupported and ErrUnavailable, as a
// Linux host without the module is ErrUnavailable; input that the Linux
// build refuses before any system call (a bad clock, a negative timeout)
// is ErrInvalid here too. A program picks its timer at start:
//
//	w, err := twheel.Open(o)
//	if errors.Is(err, twheel.ErrUnavailable) {
//		// not Linux, no module, or no access: err says which;
//		// time.AfterFunc, a heap, ...
//	}

//go:build !linux

package twheel

import (
	"context"
	"errors"
	"iter"
	"runtime"
)

// Wheel is a timing wheel in the Linux kernel; on this system, none can
// be opened, and every method that would reach it fails with
// errors.ErrUnsupported and ErrUnavailable.
type Wheel struct {
	clock Clock
	opts  Options
}

// needsLinux is what every call that would reach the device wraps.
type needsLinux struct{}

func (needsLinux) Error() string { return "twheel needs Linux, this is " + runtime.GOOS }

func (needsLinux) Unwrap() []error { return []error{errors.ErrUnsupported, ErrUnavailable} }

var errNeedsLinux error = needsLinux{}

// Open creates a wheel on Linux. Here it checks @o as Linux would
// (ErrInvalid), then fails with an *Error that is errors.ErrUnsupported
// and ErrUnavailable.
func Open(o Options) (*Wheel, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return nil, &Error{Op: "open", Err: errNeedsLinux}
}

// Close closes the wheel on Linux; here it fails: there is none.
func (w *Wheel) Close() error { return callError("close", errNeedsLinux) }

// Fd is the number of the wheel's descriptor on Linux; here it is -1.
func (w *Wheel) Fd() int { return -1 }

// Do applies one op on Linux. Here it checks @op as Linux would
// (ErrInvalid), then fails.
func (w *Wheel) Do(op Op) (Result, error) {
	var enc rawOp
	if err := op.encode(&enc); err != nil {
		return Result{}, err
	}
	return Result{}, opError(op.Kind.String(), op.ID, errNeedsLinux)
}

// Batch applies the ops of @b in one system call on Linux. Here it fails
// with the error of an op the encoder refused, as on Linux, or else,
// unless @b is empty, with errors.ErrUnsupported; no op is applied.
func (w *Wheel) Batch(b *Batch) (int, error) {
	b.applied = 0
	if b.err != nil {
		return 0, b.err
	}
	if len(b.ops) == 0 {
		return 0, nil
	}
	return 0, callError("batch", errNeedsLinux)
}

// RefreshIDs refreshes many ids in one system call on Linux. Here it
// checks @spec as Linux would (ErrInvalid), then, unless @ids is empty,
// fails; it returns @failed as it was given.
func (w *Wheel) RefreshIDs(ids []uint64, spec RefreshSpec, failed []uint64) ([]uint64, error) {
	if _, _, err := spec.encode(); err != nil {
		return failed, err
	}
	if len(ids) == 0 {
		return failed, nil
	}
	return failed, callError("refresh-ids", errNeedsLinux)
}

// Dump lists the live ids on Linux; here it yields its error and ends.
func (w *Wheel) Dump() iter.Seq2[DumpEntry, error] {
	return func(yield func(DumpEntry, error) bool) {
		yield(DumpEntry{}, callError("dump", errNeedsLinux))
	}
}

// ReadEvents waits for expiries on Linux; here it fails at once.
func (w *Wheel) ReadEvents(ctx context.Context, buf []Event) (int, error) {
	return 0, callError("read", errNeedsLinux)
}

// Touch refreshes the id bound to @slot on Linux; here it fails.
func (w *Wheel) Touch(slot uint32) error { return errNeedsLinuxTouch(slot) }

// TouchAt stores @at into @slot on Linux; here it fails.
func (w *Wheel) TouchAt(slot uint32, at Instant) error { return errNeedsLinuxTouch(slot) }

// Stamp reads @slot's last stamp on Linux; here it fails.
func (w *Wheel) Stamp(slot uint32) (Instant, error) { return 0, errNeedsLinuxTouch(slot) }

func errNeedsLinuxTouch(slot uint32) error {
	return &Error{Op: "touch", Slot: slot, HasSlot: true, Err: errNeedsLinux}
}

// Now reads 0: a wheel's clocks are Linux's CLOCK_MONOTONIC and
// CLOCK_BOOTTIME, and there is no wheel here to count on them.
func (c Clock) Now() Instant { return 0 }

// errInvalidArg is what invalid wraps: ErrInvalid's own error here, as
// there is no kernel whose EINVAL it would be.
var errInvalidArg = errors.New("invalid argument")

// errnoMessage: no errno has a message of this package's here.
func (e *Error) errnoMessage() (string, bool) { return "", false }

// errnoIs: the only sentinel here that an *Error is by itself is
// ErrInvalid, for this package's own refusal; ErrUnsupported and
// ErrUnavailable come from what it wraps.
func (e *Error) errnoIs(target error) bool {
	return target == ErrInvalid && e.Err == errInvalidArg
}

// resultErr: no kernel answers here, so no op is ever applied and no
// result read; one would be this.
func resultErr(result int32) error {
	if result == 0 {
		return nil
	}
	return errNeedsLinux
}
