// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Expiry events: ReadEvents waits in the runtime's poller, so a goroutine
// blocked in it costs no thread, and a context ends the wait.
//
// Several goroutines may call ReadEvents at once. One of them at a time
// (the holder of w.readers) reads and, if nothing waits, parks in the
// poller; the others wait for the token in a select that their context
// and Close also end. The token is what makes cancellation race-free: a
// context's cancel ends the wait by moving the descriptor's read deadline
// into the past, and that deadline is shared by every reader of the
// file, so only the holder may set it, and it puts it back before giving
// the token on. Each event is read by exactly one read(2), hence
// delivered to exactly one caller, and an event read is always returned:
// a cancel that arrives after read(2) succeeded does not discard it.

//go:build linux

package twheel

import (
	"context"
	"errors"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// eventSize is the size of one record of read(2).
const eventSize = int(unsafe.Sizeof(rawEvent{}))

// aLongTimeAgo is a read deadline in the past: it wakes a parked reader.
var aLongTimeAgo = time.Unix(1, 0)

// ReadEvents waits until at least one event is ready, then fills @buf
// with as many as are waiting, in deadline order, and returns how many.
// Each event is delivered exactly once, to one caller, however many
// goroutines (or processes sharing the descriptor) read. It returns
// ctx.Err() (wrapped) when @ctx is done first, ErrClosed when the wheel
// is closed, and ErrInvalid for an empty @buf.
func (w *Wheel) ReadEvents(ctx context.Context, buf []Event) (int, error) {
	if w.unopened() {
		return 0, errUnopened("read")
	}
	if len(buf) == 0 {
		return 0, invalid("read", "empty buffer")
	}
	if err := ctx.Err(); err != nil {
		return 0, callError("read", err)
	}
	select {
	case w.readers <- struct{}{}:
	case <-ctx.Done():
		return 0, callError("read", ctx.Err())
	case <-w.closed:
		return 0, callError("read", os.ErrClosed)
	}
	defer func() { <-w.readers }()

	var fired chan struct{}
	stop := func() bool { return true }
	if ctx.Done() != nil {
		fired = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			w.f.SetReadDeadline(aLongTimeAgo)
			close(fired)
		})
	}
	n, err := w.read(ctx, buf)
	if !stop() {
		// The cancel ran, or runs: wait for it, then clear the deadline
		// before the next holder reads.
		<-fired
		w.f.SetReadDeadline(time.Time{})
	}
	if n > 0 {
		return n, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
		err = ctx.Err()
	}
	return 0, callError("read", err)
}

// read is one read(2) of up to len(buf) records, parked in the poller
// while nothing waits (EAGAIN).
func (w *Wheel) read(ctx context.Context, buf []Event) (int, error) {
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), min(len(buf), maxCount/eventSize)*eventSize)
	var n int
	var rerr error
	err := w.rc.Read(func(fd uintptr) bool {
		if ctx.Err() != nil {
			rerr = ctx.Err()
			return true
		}
		for {
			r, err := readRaw(fd, bytes)
			switch err {
			case nil:
				n = r / eventSize
				return true
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			}
			rerr = err
			return true
		}
	})
	if err != nil {
		return 0, w.closedErr(err)
	}
	return n, rerr
}

// readRaw is read(2) of the wheel's descriptor as a raw system call: one
// the scheduler is not told of, as it is not of a system call that cannot
// block. This one cannot: the descriptor is non-blocking, so a read with
// nothing due answers EAGAIN at once and allocates nothing; the wheel's
// lock is held only for a chunk of work at a time; and the expiry work a
// read may do first (catching up with due ticks) goes by chunks that a
// signal cuts short, the runtime's preemption signal too. Entering it as
// a blocking call (unix.Read) wakes the runtime's monitor thread (sysmon)
// from the sleep it takes while every P is idle, and it then polls every
// 20 µs until they all are again: in a program that waits between ticks
// that cost ~0.4 ms of CPU per read on our bench host, tens of times the
// read itself.
func readRaw(fd uintptr, b []byte) (int, error) {
	r, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	runtime.KeepAlive(b)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
