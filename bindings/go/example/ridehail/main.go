// SPDX-License-Identifier: LGPL-2.1 OR MIT

// ridehail: a dispatch service's "driver offline" detection, in the demo's
// time scale (examples/heartbeat/heartbeat.c): drivers report their position every
// ~500 ms and are taken offline after 2 s without a report (in production:
// every few seconds, offline after 10 min, a million drivers).
//
// The fleet's connections are served by a few goroutines (shards), as a
// server's event loops would: every 5 ms each shard refreshes all its
// drivers that reported in that time with one Wheel.RefreshIDs, several
// shards on the one Wheel at once. One goroutine sits in
// Wheel.ReadEvents and takes each driver whose deadline passed offline.
// No timer per driver, no scan of the fleet. Some drivers go silent at
// random times: each must be taken offline no earlier than its last
// report + the timeout, and soon after; no driver that kept reporting may
// be.
//
// Last line, for scripts (the demo's fields):
//
//	demo: lang=go scenario=ridehail tracked=N offline=N expected_offline=N
//	      early=N p50_ms=X p99_ms=X max_ms=X timeout_ms=T refreshes_per_s=R
//
// Exit status 0 only if every silent driver and no other went offline,
// none early.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"twheel.dev/twheel"
)

const idBase = 0x1000000000 // driver ids look like user ids

type driver struct {
	lastReport atomic.Uint64 // wheel time of the last report sent
	nextReport time.Time     // when the next report is due; its shard's alone
	silentAt   time.Time     // stops reporting then; zero never
	offline    atomic.Bool
}

type fleet struct {
	w        *twheel.Wheel
	drivers  []driver
	timeout  time.Duration
	interval time.Duration

	mu        sync.Mutex
	latencies []float64 // ms past last report + timeout, per offline driver
	early     int
	wrong     int
	lost      atomic.Int64 // refreshes that found the driver gone
	refreshes atomic.Int64
}

// jitter is the next report interval: the nominal one, +-20 %.
func (f *fleet) jitter(rng *rand.Rand) time.Duration {
	return f.interval*8/10 + time.Duration(rng.Int63n(int64(f.interval*4/10+1)))
}

// serve is one shard: drivers first, first+shards, ... Every 5 ms it
// refreshes those whose report came, with one RefreshIDs.
func (f *fleet) serve(ctx context.Context, first, shards int, rng *rand.Rand) error {
	step := time.NewTicker(5 * time.Millisecond)
	defer step.Stop()
	var ids, failed []uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-step.C:
		}
		now := time.Now()
		ids = ids[:0]
		for i := first; i < len(f.drivers); i += shards {
			d := &f.drivers[i]
			if now.Before(d.nextReport) || (!d.silentAt.IsZero() && now.After(d.silentAt)) {
				continue
			}
			ids = append(ids, idBase+uint64(i))
			d.nextReport = now.Add(f.jitter(rng))
		}
		if len(ids) == 0 {
			continue
		}
		// Stamped before the refresh: the deadline it gives is later.
		stamp := uint64(f.w.Now())
		for _, id := range ids {
			f.drivers[id-idBase].lastReport.Store(stamp)
		}
		var err error
		if failed, err = f.w.RefreshIDs(ids, twheel.RefreshSpec{}, failed[:0]); err != nil {
			return err
		}
		f.refreshes.Add(int64(len(ids)))
		f.lost.Add(int64(len(failed)))
		for _, id := range failed {
			fmt.Fprintf(os.Stderr, "ridehail: driver %d reported but had expired\n", id-idBase)
		}
	}
}

// watch takes drivers offline as the wheel reports them.
func (f *fleet) watch(ctx context.Context) error {
	buf := make([]twheel.Event, 256)
	for {
		n, err := f.w.ReadEvents(ctx, buf)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
		now := f.w.Now()
		f.mu.Lock()
		for _, ev := range buf[:n] {
			k := int(ev.ID - idBase)
			if ev.ID < idBase || k >= len(f.drivers) {
				f.wrong++
				continue
			}
			d := &f.drivers[k]
			if d.silentAt.IsZero() || d.offline.Swap(true) {
				fmt.Fprintf(os.Stderr, "ridehail: driver %d taken offline while reporting\n", k)
				f.wrong++
				continue
			}
			late := now.Sub(twheel.Instant(d.lastReport.Load()).Add(f.timeout))
			if late < 0 {
				f.early++
			}
			f.latencies = append(f.latencies, float64(late)/1e6)
		}
		f.mu.Unlock()
	}
}

func pct(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	i := (len(v)*p + 99) / 100
	return v[max(i-1, 0)]
}

func main() {
	n := flag.Int("n", 5000, "drivers")
	silent := flag.Int("s", 500, "drivers that go silent")
	timeout := flag.Duration("t", 2*time.Second, "offline after this long without a report")
	interval := flag.Duration("i", 500*time.Millisecond, "report interval")
	tick := flag.Duration("T", 10*time.Millisecond, "the wheel's tick")
	duration := flag.Duration("d", 12*time.Second, "length of the run")
	flag.Parse()
	if *silent > *n || *interval >= *timeout || *duration <= *timeout+2*time.Second {
		fmt.Fprintln(os.Stderr, "ridehail: need silent <= drivers, interval < timeout, duration > timeout + 2s")
		os.Exit(2)
	}

	w, err := twheel.Open(twheel.Options{Tick: *tick, DefaultTimeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ridehail:", err)
		os.Exit(1)
	}
	defer w.Close()
	f := &fleet{w: w, drivers: make([]driver, *n), timeout: *timeout, interval: *interval}
	rng := rand.New(rand.NewSource(0x5eed))
	start := time.Now()
	for k := 0; k < *silent; {
		d := &f.drivers[rng.Intn(*n)]
		if !d.silentAt.IsZero() {
			continue
		}
		span := *duration - *timeout - 2*time.Second
		d.silentAt = start.Add(time.Second + time.Duration(rng.Int63n(int64(span))))
		k++
	}
	// Every driver comes online at once: one batch of adds.
	var b twheel.Batch
	now := uint64(w.Now())
	for i := range f.drivers {
		f.drivers[i].lastReport.Store(now)
		f.drivers[i].nextReport = start.Add(time.Duration(rng.Int63n(int64(*interval))))
		b.Add(idBase+uint64(i), 0)
	}
	if _, err := w.Batch(&b); err != nil {
		fmt.Fprintln(os.Stderr, "ridehail:", err)
		os.Exit(1)
	}
	for i := range f.drivers {
		if _, err := b.Result(i); err != nil {
			fmt.Fprintln(os.Stderr, "ridehail:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("ridehail: %d drivers, a report every ~%v each, offline after %v of silence (tick %v); %d will go silent\n",
		*n, *interval, *timeout, *tick, *silent)

	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	const shards = 4
	errs := make(chan error, shards+1)
	for k := 0; k < shards; k++ {
		go func(k int) { errs <- f.serve(ctx, k, shards, rand.New(rand.NewSource(int64(k)+1))) }(k)
	}
	go func() { errs <- f.watch(ctx) }()
	for k := 0; k < shards+1; k++ {
		if err := <-errs; err != nil {
			fmt.Fprintln(os.Stderr, "ridehail:", err)
			os.Exit(1)
		}
	}

	secs := duration.Seconds()
	sort.Float64s(f.latencies)
	offline := len(f.latencies)
	p50, p99, maxMs := pct(f.latencies, 50), pct(f.latencies, 99), 0.0
	if offline > 0 {
		maxMs = f.latencies[offline-1]
	}
	rate := float64(f.refreshes.Load()) / secs
	fmt.Printf("ridehail: %.1f s, %d refreshes (%.0f/s), RefreshIDs every 5 ms from %d shards, one reader goroutine, no timer per driver\n",
		secs, f.refreshes.Load(), rate, shards)
	fmt.Printf("ridehail: %d of %d silent drivers taken offline, %d early, %d reporting ones wrongly, %d reports found the driver gone\n",
		offline, *silent, f.early, f.wrong, f.lost.Load())
	fmt.Printf("ridehail: offline after last report + timeout: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", p50, p99, maxMs)
	ok := offline == *silent && f.early == 0 && f.wrong == 0 && f.lost.Load() == 0
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	fmt.Println("ridehail:", verdict)
	fmt.Printf("demo: lang=go scenario=ridehail tracked=%d offline=%d expected_offline=%d early=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f timeout_ms=%d refreshes_per_s=%.0f\n",
		*n, offline, *silent, f.early, p50, p99, maxMs, timeout.Milliseconds(), rate)
	if !ok {
		os.Exit(1)
	}
}
