// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The touch table's logic against a plain []uint64 (no device): bounds,
// stores seen by loads, stores from many goroutines (run under -race),
// use after close, and the monotonic clock that Touch stamps with.

//go:build linux

package twheel

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

func TestTableStoresAndBounds(t *testing.T) {
	tb := &table{slots: make([]uint64, 4)}
	for slot := uint32(0); slot < 4; slot++ {
		if err := tb.store(slot, uint64(slot)*10+1); err != nil {
			t.Fatal(err)
		}
	}
	for slot := uint32(0); slot < 4; slot++ {
		if v, err := tb.load(slot); err != nil || v != uint64(slot)*10+1 {
			t.Errorf("slot %d: %d, %v", slot, v, err)
		}
	}
	for _, slot := range []uint32{4, NoSlot} {
		if err := tb.store(slot, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("store slot %d: %v", slot, err)
		}
		if _, err := tb.load(slot); !errors.Is(err, ErrInvalid) {
			t.Errorf("load slot %d: %v", slot, err)
		}
	}
	tb.close()
	if err := tb.store(0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("store after close: %v", err)
	}
	if _, err := tb.load(0); !errors.Is(err, ErrClosed) {
		t.Errorf("load after close: %v", err)
	}
}

func TestTableConcurrentStores(t *testing.T) {
	const goroutines, rounds = 8, 2000
	tb := &table{slots: make([]uint64, 16)}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				slot := uint32(i % 16)
				if err := tb.store(slot, uint64(g)<<32|uint64(i+1)); err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
				}
				if v, err := tb.load(slot); err == nil && v == 0 {
					t.Error("slot read back 0 after a store")
				} else if err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
				}
			}
		}()
	}
	// Close racing the stores: each either lands or is ErrClosed.
	time.Sleep(time.Millisecond)
	tb.close()
	wg.Wait()
}

func TestMonoClockIsNeverEarly(t *testing.T) {
	// newMonoClock is late by what its own clock reads took: bounded here.
	start := uint64(Monotonic.Now())
	m := newMonoClock()
	late := uint64(Monotonic.Now()) - start
	for i := 0; i < 1000; i++ {
		before := uint64(Monotonic.Now())
		got := m.now()
		after := uint64(Monotonic.Now())
		if got < before {
			t.Fatalf("stamp %d is %d ns before the clock", got, before-got)
		}
		// Late by at most the time newMonoClock took.
		if got > after+late {
			t.Fatalf("stamp %d is %v after the clock", got, time.Duration(got-after))
		}
	}
}

func TestInstantArithmeticClamps(t *testing.T) {
	if got := Instant(5).Add(-10); got != 0 {
		t.Errorf("5-10 = %d", got)
	}
	if got := Instant(5).Add(minDuration); got != 0 {
		t.Errorf("5+min = %d", got)
	}
	if got := (^Instant(0) - 1).Add(5); got != ^Instant(0) {
		t.Errorf("max-1+5 = %d", got)
	}
	if got := Instant(10).Add(-3); got != 7 {
		t.Errorf("10-3 = %d", got)
	}
	if got := Instant(3).Sub(10); got != -7 {
		t.Errorf("3-10 = %v", got)
	}
	if got := (^Instant(0)).Sub(0); got != maxDuration {
		t.Errorf("max-0 = %v", got)
	}
	if got := Instant(0).Sub(^Instant(0)); got != minDuration {
		t.Errorf("0-max = %v", got)
	}
	if !Instant(1).Before(2) || !Instant(2).After(1) {
		t.Error("Before/After")
	}
	if s := Instant(time.Second + 5).String(); s != "1.000000005s" {
		t.Errorf("String %q", s)
	}
}

func TestClocks(t *testing.T) {
	if Monotonic.Now() == 0 || Boottime.Now() == 0 {
		t.Error("a clock reads 0")
	}
	if Clock(7).Now() != 0 {
		t.Error("an invalid clock reads non-zero")
	}
	if _, err := Open(Options{Tick: time.Millisecond, Clock: Clock(9)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open with a bad clock: %v", err)
	}
	if _, err := Open(Options{Tick: -time.Millisecond}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open with a negative tick: %v", err)
	}
}

func TestUnopenedWheelIsAnErrorNeverAPanic(t *testing.T) {
	for _, w := range []*Wheel{nil, {}} {
		if _, err := w.Add(1, 0); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("add: %v", err)
		}
		var b Batch
		b.Add(1, 0)
		if _, err := w.Batch(&b); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("batch: %v", err)
		}
		if _, err := w.RefreshIDs([]uint64{1}, RefreshSpec{}, nil); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("refresh-ids: %v", err)
		}
		if _, err := w.ReadEvents(context.Background(), make([]Event, 1)); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("read: %v", err)
		}
		for _, err := range w.Dump() {
			if !errors.Is(err, os.ErrInvalid) {
				t.Errorf("dump: %v", err)
			}
		}
		if err := w.Touch(0); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("touch: %v", err)
		}
		if err := w.Close(); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("close: %v", err)
		}
	}
}
