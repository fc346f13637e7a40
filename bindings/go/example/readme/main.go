// SPDX-License-Identifier: LGPL-2.1 OR MIT
// The program of the "From Go" section of README.md, which shows it from
// "package main" on; readme-test.sh checks the two agree and builds it.

package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"twheel.dev/twheel"
)

func main() {
	w, err := twheel.Open(twheel.Options{Tick: 10 * time.Millisecond, DefaultTimeout: time.Second})
	if err != nil {
		log.Fatal(err) // twheel.ErrUnavailable: no module loaded, no access, or not Linux
	}
	defer w.Close()
	// Many ops in one system call: a Batch, or RefreshIDs for a loop
	// turn's refreshes (w.Touch(slot) needs none at all).
	var b twheel.Batch
	b.Add(1, 0)             // user 1: offline after the default timeout
	b.Add(2, 3*time.Second) // user 2: after 3 s
	if _, err := w.Batch(&b); err != nil {
		log.Fatal(err)
	}
	// Messages from users 2..: one call re-arms them all, to 3 s from now.
	if failed, err := w.RefreshIDs([]uint64{2}, twheel.RefreshSpec{Timeout: 3 * time.Second}, nil); err != nil || len(failed) > 0 {
		log.Fatalf("refresh: %v, not live: %v", err, failed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	events := make([]twheel.Event, 64)
	for {
		n, err := w.ReadEvents(ctx, events) // parks the goroutine, not a thread
		if err != nil {
			break // ctx ended: user 1 is offline, user 2 not yet
		}
		for _, ev := range events[:n] {
			fmt.Printf("user %d offline, %v late\n", ev.ID, ev.Expired.Sub(ev.Deadline))
		}
	}
}
