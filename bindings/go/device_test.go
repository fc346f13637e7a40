// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The package against the real device, in the VM: the selftests'
// semantics where they apply to a binding. Ops and their deadline rule,
// bad input (an error, never a panic), expiry never early and delivered
// exactly once to several goroutines, refresh moving the deadline, touch
// re-arms, dump, batch results, a context ending a wait, and Close while
// goroutines read. Timing checks allow a slow VM (lateSlack) but fail on
// an early, lost or repeated event. Every test skips where /dev/twheel
// does not exist (the host).

//go:build linux

package twheel

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	tick = 2 * time.Millisecond
	dflt = 100 * time.Millisecond
)

// lateSlack is how late, beyond one tick, an expiry may be read in an
// emulated VM on a loaded host; never-early checks get none. A debug
// kernel (the one with /proc/lockdep) is several times slower.
func lateSlack() time.Duration {
	if _, err := os.Stat("/proc/lockdep"); err == nil {
		return time.Second
	}
	return 200 * time.Millisecond
}

func needDevice(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(devicePath); err != nil {
		t.Skipf("%s: %v (the module is not loaded here)", devicePath, err)
	}
}

func open(t *testing.T, o Options) *Wheel {
	t.Helper()
	needDevice(t)
	if o.Tick == 0 {
		o.Tick = tick
	}
	w, err := Open(o)
	if err != nil {
		t.Fatalf("Open(%+v): %v", o, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func openDefault(t *testing.T) *Wheel {
	return open(t, Options{DefaultTimeout: dflt})
}

// readN reads events until @n came or @wait passed.
func readN(t *testing.T, w *Wheel, n int, wait time.Duration) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var got []Event
	buf := make([]Event, 64)
	for len(got) < n {
		k, err := w.ReadEvents(ctx, buf)
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("ReadEvents: %v", err)
		}
		got = append(got, buf[:k]...)
	}
	return got
}

// checkDeadline: an op with @timeout issued between @before and @after.
func checkDeadline(t *testing.T, res Result, before, after Instant, timeout time.Duration) {
	t.Helper()
	if res.Deadline < before.Add(timeout) {
		t.Errorf("deadline %v early: before %v + %v", res.Deadline, before, timeout)
	}
	if res.Deadline > after.Add(timeout+tick) {
		t.Errorf("deadline %v late: after %v + %v + tick", res.Deadline, after, timeout)
	}
	if res.Remaining > res.Deadline.Sub(before) || res.Remaining < res.Deadline.Sub(after) {
		t.Errorf("remaining %v outside [%v, %v]", res.Remaining, res.Deadline.Sub(after), res.Deadline.Sub(before))
	}
}

// checkTimely: never early, at most a tick plus slack late, read after both.
func checkTimely(t *testing.T, ev Event, readAt Instant) {
	t.Helper()
	if ev.Expired < ev.Deadline {
		t.Errorf("id %d expired %v early", ev.ID, ev.Deadline.Sub(ev.Expired))
	}
	if ev.Expired > ev.Deadline.Add(tick+lateSlack()) {
		t.Errorf("id %d expired %v late", ev.ID, ev.Expired.Sub(ev.Deadline))
	}
	if readAt < ev.Expired {
		t.Errorf("id %d read at %v before its expiry %v", ev.ID, readAt, ev.Expired)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	needDevice(t)
	for _, o := range []Options{
		{Tick: 0},
		{Tick: tickMinNS - 1},
		{Tick: tickMaxNS + 1},
		{Tick: time.Millisecond, DefaultTimeout: time.Millisecond * (maxTimeoutTicks + 1)},
		{Tick: time.Millisecond, TouchSlots: touchMaxSlots + 1},
		{Tick: time.Millisecond, Cap: 4, TouchSlots: 5},
	} {
		w, err := Open(o)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "setup") {
			t.Errorf("Open(%+v): %v, want ErrInvalid", o, err)
		}
		if w != nil {
			w.Close()
		}
	}
}

func TestAddSetsDeadlineFromTimeout(t *testing.T) {
	w := openDefault(t)
	timeout := 50*time.Millisecond + 12345
	before := w.Now()
	res, err := w.Add(7, timeout)
	after := w.Now()
	if err != nil {
		t.Fatal(err)
	}
	checkDeadline(t, res, before, after, timeout)
}

func TestAddWithoutTimeoutUsesDefault(t *testing.T) {
	w := openDefault(t)
	before := w.Now()
	res, err := w.Add(7, 0)
	after := w.Now()
	if err != nil {
		t.Fatal(err)
	}
	checkDeadline(t, res, before, after, dflt)
}

func TestAddLiveIdIsErrExists(t *testing.T) {
	w := openDefault(t)
	first, err := w.Add(9, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Add(9, 10*time.Second)
	if !errors.Is(err, ErrExists) || !errors.Is(err, syscall.EEXIST) || !strings.Contains(err.Error(), "add id 9") {
		t.Errorf("second add: %v", err)
	}
	if q, err := w.Query(9); err != nil || q.Deadline != first.Deadline {
		t.Errorf("first entry changed: %+v, %v", q, err)
	}
}

func TestExtremeIdsAreValid(t *testing.T) {
	w := openDefault(t)
	for _, id := range []uint64{0, ^uint64(0), 1 << 63} {
		if _, err := w.Add(id, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Query(id); err != nil {
			t.Error(err)
		}
		if _, err := w.Cancel(id); err != nil {
			t.Error(err)
		}
		if _, err := w.Query(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("query after cancel: %v", err)
		}
	}
}

func TestRefreshMovesTheDeadlineBothWays(t *testing.T) {
	w := openDefault(t)
	// Minutes: the id may not expire between the calls, however slow the VM.
	if _, err := w.Add(5, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, timeout := range []time.Duration{2 * time.Minute, 30 * time.Second} {
		before := w.Now()
		res, err := w.Refresh(5, timeout)
		after := w.Now()
		if err != nil {
			t.Fatal(err)
		}
		checkDeadline(t, res, before, after, timeout)
		if q, err := w.Query(5); err != nil || q.Deadline != res.Deadline {
			t.Errorf("query: %+v, %v; refresh gave %v", q, err, res.Deadline)
		}
	}
	// Without a timeout: the wheel's default, not the previous one.
	before := w.Now()
	res, err := w.Refresh(5, 0)
	checkDeadline(t, res, before, w.Now(), dflt)
	if err != nil {
		t.Fatal(err)
	}
}

func TestRefreshOfAbsentIdIsErrNotFoundAndAddsNothing(t *testing.T) {
	w := openDefault(t)
	if _, err := w.Refresh(3, time.Second); !errors.Is(err, ErrNotFound) {
		t.Errorf("refresh: %v", err)
	}
	if _, err := w.Query(3); !errors.Is(err, ErrNotFound) {
		t.Errorf("query: %v", err)
	}
}

func TestRefreshOrAddAddsAndRefreshes(t *testing.T) {
	// Minutes: the id may not expire between the calls, however slow the VM.
	w := open(t, Options{DefaultTimeout: time.Minute})
	before := w.Now()
	res, err := w.RefreshOrAdd(3, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	checkDeadline(t, res, before, w.Now(), 2*time.Minute)
	before = w.Now()
	res, err = w.RefreshOrAdd(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkDeadline(t, res, before, w.Now(), time.Minute)
	if _, err := w.Add(3, 0); !errors.Is(err, ErrExists) {
		t.Errorf("add: %v", err)
	}
}

func TestCancelReturnsTheDeadlineAndTheIdNeverFires(t *testing.T) {
	w := openDefault(t)
	added, err := w.Add(11, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Cancel(11)
	// The id may only have expired if the test stalled past its deadline.
	if now := w.Now(); errors.Is(err, ErrNotFound) && now >= added.Deadline {
		t.Skipf("the test stalled: cancelled %v after the deadline", now.Sub(added.Deadline))
	}
	if err != nil || res.Deadline != added.Deadline {
		t.Fatalf("cancel: %+v, %v; add gave %v", res, err, added.Deadline)
	}
	if _, err := w.Cancel(11); !errors.Is(err, ErrNotFound) {
		t.Errorf("second cancel: %v", err)
	}
	if evs := readN(t, w, 1, 150*time.Millisecond); len(evs) != 0 {
		t.Errorf("cancelled id fired: %+v", evs)
	}
}

func TestBadInputIsAnErrorNeverAPanic(t *testing.T) {
	w := openDefault(t)
	if _, err := w.Add(1, time.Minute); err != nil {
		t.Fatal(err)
	}
	bad := []Op{
		{Kind: OpAdd, ID: 2, Timeout: -time.Second},
		{Kind: OpAdd, ID: 2, Timeout: tick * (maxTimeoutTicks + 1)},
		{Kind: OpAdd, ID: 2, AddIfAbsent: true},
		{Kind: OpAdd, ID: 2, Bind: true, Slot: 0},
		{Kind: OpRefresh, ID: 1, Timeout: time.Second, Abs: true},
		{Kind: OpCancel, ID: 1, Abs: true},
		{Kind: OpQuery, ID: 1, Bind: true},
		{Kind: 0, ID: 1},
		{Kind: 5, ID: 1},
		{Kind: OpAdd, ID: 2, Abs: true, Deadline: w.Now().Add(tick*maxTimeoutTicks + time.Hour)},
	}
	for _, op := range bad {
		_, err := w.Do(op)
		var e *Error
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || !e.HasID || e.ID != op.ID {
			t.Errorf("%+v: %v, want ErrInvalid naming the id", op, err)
		}
	}
	if _, err := w.Query(2); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused add added: %v", err)
	}
	if _, err := w.Query(1); err != nil {
		t.Errorf("a refused op changed id 1: %v", err)
	}
	if _, err := w.ReadEvents(context.Background(), nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("read into nothing: %v", err)
	}
	if err := w.Touch(0); err == nil {
		t.Error("touch without a table succeeded")
	}
}

func TestAddAtCapIsErrFull(t *testing.T) {
	w := open(t, Options{DefaultTimeout: time.Minute, Cap: 4})
	for id := uint64(0); id < 4; id++ {
		if _, err := w.Add(id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Add(4, 0); !errors.Is(err, ErrFull) {
		t.Errorf("add past the cap: %v", err)
	}
}

func TestAbsoluteDeadlines(t *testing.T) {
	w := openDefault(t)
	// A minute: id 1 may not expire before its refresh, however slow the VM.
	at := w.Now().Add(time.Minute + 123)
	res, err := w.AddAt(1, at)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deadline < at || res.Deadline > at.Add(tick) {
		t.Errorf("deadline %v for %v: not rounded up to the next tick", res.Deadline, at)
	}
	later := at.Add(time.Second)
	if res, err = w.RefreshAt(1, later); err != nil || res.Deadline < later || res.Deadline > later.Add(tick) {
		t.Errorf("refresh at %v: %+v, %v", later, res, err)
	}
	// A deadline already past fires at the next tick.
	before := w.Now()
	if res, err = w.AddAt(2, before.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if res.Deadline < before || res.Deadline > w.Now().Add(tick) {
		t.Errorf("past deadline became %v (now %v)", res.Deadline, before)
	}
	evs := readN(t, w, 1, time.Second+lateSlack())
	if len(evs) != 1 || evs[0].ID != 2 || evs[0].Deadline != res.Deadline {
		t.Errorf("events %+v", evs)
	}
}

func TestEventsAreNeverEarlyNorLate(t *testing.T) {
	const n = 400
	w := openDefault(t)
	rng := rand.New(rand.NewSource(0x1234567))
	deadline := map[uint64]Instant{}
	for id := uint64(0); id < n; id++ {
		res, err := w.Add(id, time.Duration(rng.Int63n(int64(300*time.Millisecond)))+1)
		if err != nil {
			t.Fatal(err)
		}
		deadline[id] = res.Deadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buf := make([]Event, n)
	var last Instant
	for got := 0; got < n; {
		k, err := w.ReadEvents(ctx, buf)
		readAt := w.Now()
		if err != nil {
			t.Fatalf("after %d events: %v", got, err)
		}
		for _, ev := range buf[:k] {
			d, ok := deadline[ev.ID]
			if !ok {
				t.Fatalf("unknown or repeated id %d", ev.ID)
			}
			delete(deadline, ev.ID)
			if ev.Deadline != d {
				t.Errorf("id %d: event deadline %v, add gave %v", ev.ID, ev.Deadline, d)
			}
			if ev.Deadline < last {
				t.Errorf("id %d out of deadline order", ev.ID)
			}
			last = ev.Deadline
			checkTimely(t, ev, readAt)
		}
		got += k
	}
}

func TestEachExpiryIsDeliveredOnceToManyReaders(t *testing.T) {
	const n, readers = 2000, 4
	w := openDefault(t)
	var b Batch
	for id := uint64(0); id < n; id++ {
		b.Add(id, time.Duration(id%300)*time.Millisecond+1)
	}
	if k, err := w.Batch(&b); k != n || err != nil {
		t.Fatalf("batch: %d, %v", k, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second+lateSlack())
	defer cancel()
	var mu sync.Mutex
	seen := make([]int, n)
	total := 0
	var wg sync.WaitGroup
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]Event, 1+r*7)
			for {
				k, err := w.ReadEvents(ctx, buf)
				if err != nil {
					// Canceled: the last event came.
					if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("reader: %v", err)
					}
					return
				}
				mu.Lock()
				for _, ev := range buf[:k] {
					seen[ev.ID]++
					total++
				}
				done := total >= n
				mu.Unlock()
				if done {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	for id, c := range seen {
		if c != 1 {
			t.Errorf("id %d delivered %d times", id, c)
		}
	}
	if evs := readN(t, w, 1, 50*time.Millisecond); len(evs) != 0 {
		t.Errorf("more events after all: %+v", evs)
	}
}

func TestRefreshedIdDoesNotFire(t *testing.T) {
	w := openDefault(t)
	last, err := w.Add(1, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(400 * time.Millisecond); time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
		res, err := w.Refresh(1, 200*time.Millisecond)
		// The id may only have expired if the test stalled past its deadline.
		if now := w.Now(); errors.Is(err, ErrNotFound) && now >= last.Deadline {
			t.Skipf("the test stalled: refreshed %v after the deadline", now.Sub(last.Deadline))
		}
		if err != nil {
			t.Fatalf("refresh: %v (the id expired while refreshed)", err)
		}
		last = res
	}
	evs := readN(t, w, 1, 200*time.Millisecond+tick+lateSlack())
	if len(evs) != 1 || evs[0].Deadline != last.Deadline {
		t.Errorf("events %+v, last refresh gave %v", evs, last.Deadline)
	}
}

func TestExpiredIdIsNoLongerLive(t *testing.T) {
	w := openDefault(t)
	first, err := w.Add(1, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	evs := readN(t, w, 1, time.Second)
	if len(evs) != 1 || evs[0].ID != 1 || evs[0].Deadline != first.Deadline {
		t.Fatalf("events %+v", evs)
	}
	if _, err := w.Refresh(1, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("refresh after expiry: %v", err)
	}
	if _, err := w.Cancel(1); !errors.Is(err, ErrNotFound) {
		t.Errorf("cancel after expiry: %v", err)
	}
	if _, err := w.Add(1, 10*time.Millisecond); err != nil {
		t.Fatalf("re-add: %v", err)
	}
	if evs = readN(t, w, 1, time.Second); len(evs) != 1 || evs[0].Deadline <= first.Deadline {
		t.Errorf("re-added id: %+v", evs)
	}
}

func TestContextEndsAWaitAndLosesNothing(t *testing.T) {
	w := openDefault(t)
	// A minute: the id may not expire before the read is cancelled.
	if _, err := w.Add(1, time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := w.ReadEvents(ctx, make([]Event, 4))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled read: %v", err)
		}
	case <-time.After(time.Second + lateSlack()):
		t.Fatal("cancel did not end the read")
	}
	if _, err := w.Query(1); err != nil {
		t.Errorf("the cancelled read took the id: %v", err)
	}
	if _, err := w.Refresh(1, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The cleared deadline lets the next read wait and get the event.
	if evs := readN(t, w, 1, time.Second+lateSlack()); len(evs) != 1 || evs[0].ID != 1 {
		t.Errorf("events after the cancel: %+v", evs)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := w.ReadEvents(ctx, make([]Event, 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("read with a done context: %v", err)
	}
}

// Cancelling some of several blocked readers ends exactly those, whether
// they wait in the poller or for their turn, and the others still read.
func TestCancelOfOneReaderLeavesTheOthers(t *testing.T) {
	w := openDefault(t)
	type result struct {
		n   int
		err error
	}
	start := func(ctx context.Context) chan result {
		ch := make(chan result, 1)
		go func() {
			n, err := w.ReadEvents(ctx, make([]Event, 4))
			ch <- result{n, err}
		}()
		return ch
	}
	keep := start(context.Background())
	var cancels []context.CancelFunc
	var chans []chan result
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		chans = append(chans, start(ctx))
	}
	time.Sleep(50 * time.Millisecond)
	for i, cancel := range cancels {
		cancel()
		select {
		case r := <-chans[i]:
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("reader %d: %+v", i, r)
			}
		case <-time.After(time.Second + lateSlack()):
			t.Fatalf("reader %d not ended by its cancel", i)
		}
	}
	if _, err := w.Add(7, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-keep:
		if r.err != nil || r.n != 1 {
			t.Errorf("remaining reader: %+v", r)
		}
	case <-time.After(time.Second + lateSlack()):
		t.Fatal("the remaining reader never got the event")
	}
}

func TestCloseWhileReadingEndsEveryReader(t *testing.T) {
	needDevice(t)
	w, err := Open(Options{Tick: tick, DefaultTimeout: time.Minute, TouchSlots: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add(1, 0); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			_, err := w.ReadEvents(context.Background(), make([]Event, 1))
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for i := 0; i < 3; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("reader: %v", err)
			}
		case <-time.After(time.Second + lateSlack()):
			t.Fatal("a reader survived Close")
		}
	}
	// Everything after Close is ErrClosed, and nothing panics.
	checks := map[string]error{}
	_, checks["add"] = w.Add(2, 0)
	_, checks["query"] = w.Query(1)
	var b Batch
	b.Add(3, 0)
	_, checks["batch"] = w.Batch(&b)
	_, checks["refresh-ids"] = w.RefreshIDs([]uint64{1}, RefreshSpec{}, nil)
	_, checks["read"] = w.ReadEvents(context.Background(), make([]Event, 1))
	checks["touch"] = w.Touch(0)
	checks["touch-at"] = w.TouchAt(1, 5)
	_, checks["stamp"] = w.Stamp(0)
	checks["close"] = w.Close()
	for _, err := range w.Dump() {
		checks["dump"] = err
	}
	for op, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after close: %v", op, err)
		}
	}
}

func TestBatchGivesEachOpItsResult(t *testing.T) {
	w := openDefault(t)
	var b Batch
	b.Add(1, time.Second)
	b.Add(1, time.Second)
	b.Refresh(2, 0)
	b.Push(Op{Kind: OpRefresh, ID: 2, AddIfAbsent: true})
	b.Query(1)
	b.Cancel(1)
	b.Cancel(1)
	b.Push(Op{Kind: OpAdd, ID: 3, AddIfAbsent: true})
	want := []error{nil, ErrExists, ErrNotFound, nil, nil, nil, ErrNotFound, ErrInvalid}
	n, err := w.Batch(&b)
	if err != nil || n != len(want) || b.Applied() != n {
		t.Fatalf("batch: %d, %v", n, err)
	}
	add, _ := b.Result(0)
	for i, we := range want {
		res, err := b.Result(i)
		if (we == nil) != (err == nil) || (we != nil && !errors.Is(err, we)) {
			t.Errorf("op %d: %v, want %v", i, err, we)
		}
		if err != nil && res != (Result{}) {
			t.Errorf("op %d failed with a result %+v", i, res)
		}
	}
	if q, _ := b.Result(4); q.Deadline != add.Deadline {
		t.Errorf("query in the batch: %v, add gave %v", q.Deadline, add.Deadline)
	}
	// A batch is reusable: the same ops again.
	if n, err = w.Batch(&b); err != nil || n != len(want) {
		t.Fatalf("batch again: %d, %v", n, err)
	}
	if _, err := b.Result(0); err != nil {
		t.Errorf("re-add after the cancel: %v", err)
	}
}

func TestLargeBatchAppliesEveryOp(t *testing.T) {
	const n = 100000
	// An hour: the batch and the dump took over a minute on a loaded debug VM.
	w := open(t, Options{DefaultTimeout: time.Hour})
	var b Batch
	for id := uint64(0); id < n; id++ {
		b.Add(id, 0)
	}
	if k, err := w.Batch(&b); k != n || err != nil {
		t.Fatalf("batch: %d, %v", k, err)
	}
	for i := 0; i < n; i++ {
		if _, err := b.Result(i); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	count := 0
	for _, err := range w.Dump() {
		if err != nil {
			t.Fatal(err)
		}
		count++
	}
	if count != n {
		t.Errorf("dump lists %d of %d", count, n)
	}
}

func TestRefreshIDsReportsFailuresInOrder(t *testing.T) {
	// Minutes: no id may expire between the calls, however slow the VM.
	w := open(t, Options{DefaultTimeout: time.Minute})
	var ids []uint64
	for id := uint64(0); id < 10; id++ {
		ids = append(ids, id)
		if id%2 == 0 {
			if _, err := w.Add(id, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
	}
	buf := make([]uint64, 0, 16)
	before := w.Now()
	failed, err := w.RefreshIDs(ids, RefreshSpec{Timeout: 2 * time.Minute}, buf)
	after := w.Now()
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 3, 5, 7, 9}; !equal(failed, want) {
		t.Errorf("failed %v, want %v", failed, want)
	}
	if &failed[0] != &buf[:1][0] {
		t.Error("a large enough buffer was not reused")
	}
	for id := uint64(0); id < 10; id += 2 {
		q, err := w.Query(id)
		if err != nil {
			t.Fatal(err)
		}
		if q.Deadline < before.Add(2*time.Minute) || q.Deadline > after.Add(2*time.Minute+tick) {
			t.Errorf("id %d: deadline %v, refreshed by 2m between %v and %v", id, q.Deadline, before, after)
		}
	}
	if _, err := w.Query(1); !errors.Is(err, ErrNotFound) {
		t.Errorf("refresh added id 1: %v", err)
	}
	// Appending to what the buffer holds, and adding the absent ones.
	failed, err = w.RefreshIDs(ids, RefreshSpec{AddIfAbsent: true}, []uint64{42})
	if err != nil || !equal(failed, []uint64{42}) {
		t.Errorf("add if absent: %v, %v", failed, err)
	}
	at := w.Now().Add(3 * time.Minute)
	if failed, err = w.RefreshIDs(ids[:3], RefreshSpec{Deadline: at, Abs: true}, nil); err != nil || len(failed) != 0 {
		t.Errorf("absolute: %v, %v", failed, err)
	}
	if q, _ := w.Query(2); q.Deadline < at || q.Deadline > at.Add(tick) {
		t.Errorf("absolute deadline %v for %v", q.Deadline, at)
	}
	if _, err = w.RefreshIDs(ids, RefreshSpec{Timeout: -1}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative timeout: %v", err)
	}
}

func TestRefreshIDsAtTheCapReportsWhatDidNotFit(t *testing.T) {
	w := open(t, Options{DefaultTimeout: time.Minute, Cap: 4})
	failed, err := w.RefreshIDs([]uint64{10, 11, 12, 13, 14, 15}, RefreshSpec{AddIfAbsent: true}, nil)
	if err != nil || !equal(failed, []uint64{14, 15}) {
		t.Errorf("failed %v, %v", failed, err)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDumpListsEveryLiveIdOnce(t *testing.T) {
	const n = 1000 // several calls of dumpChunk
	w := open(t, Options{DefaultTimeout: time.Minute})
	deadline := map[uint64]Instant{}
	// Deadlines a minute and more away: none may pass before the dump,
	// however slow the machine.
	for id := uint64(0); id < n; id++ {
		res, err := w.Add(id*7919, time.Minute+time.Duration(id)*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		deadline[id*7919] = res.Deadline
	}
	if _, err := w.Add(1<<40, 1); err != nil {
		t.Fatal(err)
	}
	if evs := readN(t, w, 1, 10*time.Second); len(evs) != 1 || evs[0].ID != 1<<40 {
		t.Fatalf("the short id did not expire: %v", evs)
	}
	if _, err := w.Add(1<<41, 1); err != nil { // expired, waiting: not listed
		t.Fatal(err)
	}
	// Until it expired (no longer live), not for a fixed time.
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if _, err := w.Query(1 << 41); errors.Is(err, ErrNotFound) {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("an id with a 1 ns timeout still live after 10 s")
		}
	}
	for e, err := range w.Dump() {
		if err != nil {
			t.Fatal(err)
		}
		d, ok := deadline[e.ID]
		if !ok {
			t.Fatalf("id %d listed twice, or not live", e.ID)
		}
		if e.Deadline != d || e.Slot != NoSlot {
			t.Errorf("id %d: %+v, add gave %v", e.ID, e, d)
		}
		delete(deadline, e.ID)
	}
	if len(deadline) != 0 {
		t.Errorf("%d ids not listed", len(deadline))
	}
	// Leaving the loop early is fine.
	for range w.Dump() {
		break
	}
}

func touchWheel(t *testing.T, timeout time.Duration) *Wheel {
	return open(t, Options{DefaultTimeout: timeout, TouchSlots: 8})
}

// stalledPastTouch: @ev came at the deadline its id was armed with,
// though its slot was touched with @stamp (the clock read @touched after
// the store). Only a stall allows it: the kernel looked before the store,
// or so late that @stamp + @timeout had passed too.
func stalledPastTouch(ev Event, stamp, touched Instant, timeout time.Duration) bool {
	return touched >= ev.Expired || ev.Expired >= stamp.Add(timeout)
}

func TestTouchRearmsToTouchTimePlusTimeout(t *testing.T) {
	const timeout = 150 * time.Millisecond
	w := touchWheel(t, timeout)
	added, err := w.Do(Op{Kind: OpAdd, ID: 1, Bind: true, Slot: 3})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	before := w.Now()
	if err := w.Touch(3); err != nil {
		t.Fatal(err)
	}
	touched := w.Now()
	stamp, err := w.Stamp(3)
	if err != nil || stamp < before || stamp > touched.Add(10*time.Millisecond) {
		t.Fatalf("stamp %v (before %v), %v", stamp, before, err)
	}
	evs := readN(t, w, 1, 2*timeout+lateSlack())
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	if evs[0].Deadline == added.Deadline && stalledPastTouch(evs[0], stamp, touched, timeout) {
		t.Skipf("the test stalled: touched at %v, deadline %v, expired at %v", touched, added.Deadline, evs[0].Expired)
	}
	if evs[0].Deadline <= added.Deadline || evs[0].Deadline < stamp.Add(timeout) {
		t.Errorf("deadline %v: added %v, touched at %v + %v", evs[0].Deadline, added.Deadline, stamp, timeout)
	}
	checkTimely(t, evs[0], w.Now())
}

func TestTouchedIdStaysLiveOverManyTimeouts(t *testing.T) {
	const timeout = 100 * time.Millisecond
	w := touchWheel(t, timeout)
	// The longest time without a touch (from before one to after the
	// next), from the arming to the query: only that long a stall lets
	// the id expire.
	var gap time.Duration
	prev := w.Now()
	if _, err := w.Do(Op{Kind: OpAdd, ID: 1, Bind: true, Slot: 0}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(6 * timeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		before := w.Now()
		if err := w.Touch(0); err != nil {
			t.Fatal(err)
		}
		gap, prev = max(gap, w.Now().Sub(prev)), before
	}
	_, err := w.Query(1)
	if gap = max(gap, w.Now().Sub(prev)); errors.Is(err, ErrNotFound) && gap >= timeout-tick {
		t.Skipf("the test stalled for %v: the touched id expired", gap)
	}
	if err != nil {
		t.Fatalf("touched id expired: %v (at most %v without a touch)", err, gap)
	}
	last, _ := w.Stamp(0)
	evs := readN(t, w, 1, 3*timeout+lateSlack())
	if len(evs) != 1 || evs[0].Deadline < last.Add(timeout) {
		t.Errorf("events %+v, last touch %v", evs, last)
	}
}

func TestUntouchedBoundIdExpiresOnTime(t *testing.T) {
	w := touchWheel(t, 50*time.Millisecond)
	added, err := w.Do(Op{Kind: OpAdd, ID: 9, Bind: true, Slot: 7})
	if err != nil {
		t.Fatal(err)
	}
	evs := readN(t, w, 1, time.Second)
	if len(evs) != 1 || evs[0].Deadline != added.Deadline {
		t.Errorf("events %+v, add gave %v", evs, added.Deadline)
	}
}

func TestTouchAtAStampBeforeArmingIsNoTouch(t *testing.T) {
	w := touchWheel(t, 50*time.Millisecond)
	old := w.Now()
	added, err := w.Do(Op{Kind: OpAdd, ID: 9, Bind: true, Slot: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.TouchAt(1, old); err != nil {
		t.Fatal(err)
	}
	evs := readN(t, w, 1, time.Second)
	if len(evs) != 1 || evs[0].Deadline != added.Deadline {
		t.Errorf("events %+v, add gave %v", evs, added.Deadline)
	}
}

func TestTouchOutsideTheTableIsErrInvalid(t *testing.T) {
	w := touchWheel(t, time.Second)
	for _, slot := range []uint32{8, NoSlot} {
		if err := w.Touch(slot); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "slot "+strconv.Itoa(int(slot))) {
			t.Errorf("touch slot %d: %v", slot, err)
		}
	}
	if _, err := w.Do(Op{Kind: OpAdd, ID: 1, Bind: true, Slot: 8}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bind outside the table: %v", err)
	}
}

func TestDumpShowsTheSlot(t *testing.T) {
	w := touchWheel(t, time.Minute)
	if _, err := w.Do(Op{Kind: OpAdd, ID: 5, Bind: true, Slot: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add(6, 0); err != nil {
		t.Fatal(err)
	}
	slots := map[uint64]uint32{}
	for e, err := range w.Dump() {
		if err != nil {
			t.Fatal(err)
		}
		slots[e.ID] = e.Slot
	}
	if len(slots) != 2 || slots[5] != 2 || slots[6] != NoSlot {
		t.Errorf("slots %v", slots)
	}
}

func TestBoottimeWheelExpiresAndIsTouchedOnBoottime(t *testing.T) {
	w := open(t, Options{DefaultTimeout: 30 * time.Millisecond, Clock: Boottime, TouchSlots: 1})
	added, err := w.Do(Op{Kind: OpAdd, ID: 1, Bind: true, Slot: 0})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Touch(0); err != nil {
		t.Fatal(err)
	}
	touched := Boottime.Now()
	stamp, _ := w.Stamp(0)
	if stamp < added.Deadline.Add(-30*time.Millisecond-tick) || stamp > touched {
		t.Errorf("stamp %v is not boottime (deadline %v)", stamp, added.Deadline)
	}
	evs := readN(t, w, 1, time.Second)
	if len(evs) == 1 && evs[0].Deadline == added.Deadline && evs[0].Deadline < stamp.Add(30*time.Millisecond) &&
		stalledPastTouch(evs[0], stamp, touched, 30*time.Millisecond) {
		t.Skipf("the test stalled: touched at %v, deadline %v, expired at %v", touched, added.Deadline, evs[0].Expired)
	}
	if len(evs) != 1 || evs[0].Expired > Boottime.Now() || evs[0].Deadline < stamp.Add(30*time.Millisecond) {
		t.Errorf("events %+v, touched at %v", evs, stamp)
	}
}

func TestTwoWheelsAreIsolated(t *testing.T) {
	a, b := openDefault(t), openDefault(t)
	if _, err := a.Add(1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Query(1); !errors.Is(err, ErrNotFound) {
		t.Errorf("b sees a's id: %v", err)
	}
	if _, err := b.Add(1, time.Minute); err != nil {
		t.Errorf("b cannot add a's id: %v", err)
	}
	if evs := readN(t, b, 1, dflt+lateSlack()); len(evs) != 0 {
		t.Errorf("b read a's expiry: %+v", evs)
	}
}

// A goroutine parked in ReadEvents holds no thread: 100 wheels with a
// reader each leave the process's thread count where it was, give or
// take the runtime's own.
func TestBlockedReadersCostNoThreads(t *testing.T) {
	const n = 100
	needDevice(t)
	threads := func() int {
		b, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				k, _ := strconv.Atoi(strings.TrimSpace(v))
				return k
			}
		}
		return -1
	}
	before := threads()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		w := openDefault(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.ReadEvents(ctx, make([]Event, 1))
		}()
	}
	time.Sleep(200 * time.Millisecond)
	during := threads()
	cancel()
	wg.Wait()
	if during-before > 10 {
		t.Errorf("%d blocked readers took %d threads (%d before)", n, during-before, before)
	}
}
