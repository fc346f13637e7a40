// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The package on a system other than Linux: every call that would reach
// the device is errors.ErrUnsupported and ErrUnavailable, never a panic,
// and input is refused as the Linux build refuses it. Built by `make
// cross` (go vet for other systems) and run there under js/wasm.

//go:build !linux

package twheel

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func checkNeedsLinux(t *testing.T, what string, err error) {
	t.Helper()
	var e *Error
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) {
		t.Errorf("%s: %v, want an *Error that is ErrUnsupported and ErrUnavailable", what, err)
		return
	}
	for _, not := range []error{ErrNotFound, ErrExists, ErrFull, ErrInvalid, ErrNotSetUp, ErrClosed} {
		if errors.Is(err, not) {
			t.Errorf("%s: %v is also %v", what, err, not)
		}
	}
	if !strings.HasSuffix(err.Error(), ": twheel needs Linux, this is "+runtime.GOOS) {
		t.Errorf("%s: message %q", what, err)
	}
}

func TestEveryCallThatWouldReachTheDeviceNeedsLinux(t *testing.T) {
	w, err := Open(Options{Tick: time.Millisecond, DefaultTimeout: time.Second})
	if w != nil {
		t.Fatal("Open gave a Wheel")
	}
	checkNeedsLinux(t, "open", err)
	if want := "twheel: open: twheel needs Linux, this is " + runtime.GOOS; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	for _, w := range []*Wheel{nil, {}} {
		checks := map[string]error{}
		_, checks["add"] = w.Add(1, 0)
		_, checks["add-at"] = w.AddAt(1, 5)
		_, checks["refresh"] = w.Refresh(1, time.Second)
		_, checks["refresh-at"] = w.RefreshAt(1, 5)
		_, checks["refresh-or-add"] = w.RefreshOrAdd(1, 0)
		_, checks["cancel"] = w.Cancel(1)
		_, checks["query"] = w.Query(1)
		_, checks["do"] = w.Do(Op{Kind: OpAdd, ID: 1, Bind: true, Slot: 3})
		var b Batch
		b.Add(1, 0)
		var n int
		n, checks["batch"] = w.Batch(&b)
		if n != 0 || b.Applied() != 0 {
			t.Errorf("batch applied %d", n)
		}
		if _, err := b.Result(0); !errors.Is(err, ErrInvalid) {
			t.Errorf("result of an op not applied: %v", err)
		}
		failed := []uint64{9}
		failed, checks["refresh-ids"] = w.RefreshIDs([]uint64{1, 2}, RefreshSpec{}, failed)
		if len(failed) != 1 || failed[0] != 9 {
			t.Errorf("refresh-ids changed failed: %v", failed)
		}
		_, checks["read"] = w.ReadEvents(context.Background(), make([]Event, 1))
		entries := 0
		for _, err := range w.Dump() {
			entries++
			checks["dump"] = err
		}
		if entries != 1 {
			t.Errorf("dump yielded %d times", entries)
		}
		checks["touch"] = w.Touch(0)
		checks["touch-at"] = w.TouchAt(1, 5)
		_, checks["stamp"] = w.Stamp(2)
		checks["close"] = w.Close()
		for what, err := range checks {
			checkNeedsLinux(t, what, err)
		}
	}
	var w0 Wheel
	if w0.Fd() != -1 || w0.Now() != 0 || w0.Options() != (Options{}) || Monotonic.Now() != 0 {
		t.Errorf("Fd %d, Now %v, Options %+v", w0.Fd(), w0.Now(), w0.Options())
	}
}

func TestInputIsRefusedAsOnLinux(t *testing.T) {
	for _, o := range []Options{{Tick: time.Millisecond, Clock: Clock(9)}, {Tick: -1}, {DefaultTimeout: -1}} {
		if _, err := Open(o); !errors.Is(err, ErrInvalid) || errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Open(%+v): %v, want ErrInvalid", o, err)
		}
	}
	var w Wheel
	_, err := w.Add(2, -time.Second)
	var e *Error
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || e.ID != 2 ||
		err.Error() != "twheel: add id 2: invalid argument: negative timeout -1s" {
		t.Errorf("negative timeout: %v", err)
	}
	var b Batch
	b.Add(1, 0)
	b.Refresh(3, -time.Second)
	if n, err := w.Batch(&b); n != 0 || !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || e.ID != 3 {
		t.Errorf("batch with a refused op: %d, %v", n, err)
	}
	b.Reset()
	if n, err := w.Batch(&b); n != 0 || err != nil {
		t.Errorf("empty batch: %d, %v", n, err)
	}
	if _, err := w.RefreshIDs([]uint64{1}, RefreshSpec{Abs: true, Timeout: 1}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("refresh-ids, timeout and deadline: %v", err)
	}
	if _, err := w.RefreshIDs(nil, RefreshSpec{}, nil); err != nil {
		t.Errorf("refresh-ids of nothing: %v", err)
	}
}
