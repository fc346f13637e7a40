// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Examples for the package documentation. Most need /dev/twheel, so they
// are compiled by go test but not run (no Output comment). Those with an
// Output print the same with the device (the VM) and without it (a host
// without the module, another system): ExampleOpen takes another timer
// when Open is ErrUnavailable, and ExampleInstant needs no wheel. The file
// has no build constraint: the examples compile on every system, against
// unsupported.go's API there.

package twheel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"twheel.dev/twheel"
)

// An IM gateway: every connection is offline after 30 s without a
// packet. Each packet refreshes its id; one goroutine reads who went
// offline.
func Example() {
	w, err := twheel.Open(twheel.Options{Tick: 100 * time.Millisecond, DefaultTimeout: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	const conn = 42
	if _, err := w.Add(conn, 0); err != nil {
		log.Fatal(err)
	}
	// On every packet of conn. ErrNotFound: it expired just before, and
	// the reader below has its event.
	if _, err := w.Refresh(conn, 0); err != nil && !errors.Is(err, twheel.ErrNotFound) {
		log.Fatal(err)
	}

	events := make([]twheel.Event, 256)
	for {
		n, err := w.ReadEvents(context.Background(), events)
		if err != nil {
			log.Fatal(err)
		}
		for _, ev := range events[:n] {
			fmt.Println("offline:", ev.ID)
		}
	}
}

// A program that also runs where there is no wheel (a container without
// /dev/twheel, a developer's laptop, macOS): ErrUnavailable from Open
// selects another timer, here a time.Timer per id. Either way, id 1 goes
// offline 50 ms after it was last heard from.
func ExampleOpen() {
	const id, timeout = 1, 50 * time.Millisecond
	offline := make(chan uint64, 1)

	w, err := twheel.Open(twheel.Options{Tick: time.Millisecond, DefaultTimeout: timeout})
	switch {
	case err == nil:
		defer w.Close()
		if _, err := w.Add(id, 0); err != nil {
			fmt.Println(err)
			return
		}
		go func() {
			events := make([]twheel.Event, 1)
			if n, err := w.ReadEvents(context.Background(), events); err == nil && n == 1 {
				offline <- events[0].ID
			}
		}()
	case errors.Is(err, twheel.ErrUnavailable):
		// Not Linux, no module, or no access: err says which (log it).
		time.AfterFunc(timeout, func() { offline <- id })
	default:
		fmt.Println(err)
		return
	}

	select {
	case id := <-offline:
		fmt.Println("offline:", id)
	case <-time.After(10 * time.Second):
		fmt.Println("nothing went offline")
	}
	// Output: offline: 1
}

// An Instant is nanoseconds of the wheel's clock: the distance between two
// is a time.Duration, and arithmetic clamps to the clock's range rather
// than wrapping.
func ExampleInstant() {
	ev := twheel.Event{ID: 7, Deadline: twheel.Instant(90 * time.Second),
		Expired: twheel.Instant(90*time.Second + 3*time.Millisecond)}
	fmt.Println("id", ev.ID, "due at", ev.Deadline, "expired", ev.Expired.Sub(ev.Deadline), "late")
	fmt.Println(ev.Expired.After(ev.Deadline), ev.Deadline.Add(-2*time.Minute))
	// Output:
	// id 7 due at 1m30s expired 3ms late
	// true 0s
}

// Many ops in one system call, each with its own answer.
func ExampleBatch() {
	w, err := twheel.Open(twheel.Options{Tick: time.Millisecond, DefaultTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	var b twheel.Batch
	b.Add(1, 0)
	b.Add(1, 0) // ErrExists
	b.Push(twheel.Op{Kind: twheel.OpRefresh, ID: 2, AddIfAbsent: true, Timeout: 10 * time.Second})
	if _, err := w.Batch(&b); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < b.Len(); i++ {
		res, err := b.Result(i)
		fmt.Println(i, res.Remaining, err)
	}
}

// Refreshing many ids at once: 8 bytes per id in, only failures out.
func ExampleWheel_RefreshIDs() {
	w, err := twheel.Open(twheel.Options{Tick: time.Millisecond, DefaultTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	seen := []uint64{7, 8, 9} // the ids heard from since the last flush
	failed, err := w.RefreshIDs(seen, twheel.RefreshSpec{AddIfAbsent: true}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("not refreshed:", failed)
}

// Restoring "due at T" kept as wall time, as after a restart: the wheel's
// clock is not the wall clock, so the distance is carried over.
func ExampleWheel_AddAt() {
	w, err := twheel.Open(twheel.Options{Tick: time.Second, DefaultTimeout: 30 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	order, due := uint64(1001), time.Now().Add(17*time.Minute) // from the database
	if _, err := w.AddAt(order, w.Now().Add(time.Until(due))); err != nil {
		log.Fatal(err)
	}
}

// Saving every live id and its deadline, say before a planned restart.
func ExampleWheel_Dump() {
	w, err := twheel.Open(twheel.Options{Tick: time.Second, DefaultTimeout: 30 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	for e, err := range w.Dump() {
		if err != nil {
			log.Fatal(err)
		}
		left := e.Deadline.Sub(w.Now())
		fmt.Println(e.ID, "due in", left)
	}
}

// Refresh without a system call: bind each id to a slot of the touch
// table, then store the time into the slot on every packet.
func ExampleWheel_Touch() {
	w, err := twheel.Open(twheel.Options{Tick: 10 * time.Millisecond, DefaultTimeout: 30 * time.Second,
		TouchSlots: 1 << 16})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	const conn, slot = 42, 7
	if _, err := w.Do(twheel.Op{Kind: twheel.OpAdd, ID: conn, Bind: true, Slot: slot}); err != nil {
		log.Fatal(err)
	}
	// On every packet of conn: a clock read and a store.
	if err := w.Touch(slot); err != nil {
		log.Fatal(err)
	}
}
