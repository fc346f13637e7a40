// SPDX-License-Identifier: GPL-2.0

// scen-go: the Go ways of the scenario benchmark, one per argument, each a
// driver of the protocol in ../scen.h (scenctl starts it):
//
//	null       the replay alone: the floor the Go ways are measured from
//	afterfunc  time.AfterFunc per id, Reset on refresh, Stop on cancel; the
//	           timers in a map behind a mutex (their callbacks run on
//	           goroutines of their own and take expired ids out)
//	afterfunc-lazy  time.AfterFunc per id as an idle detector is written
//	           (Netty's IdleStateHandler): a refresh stores the time, the
//	           timer's callback expires the id if that is a timeout old,
//	           else re-arms the timer for what is left
//	gozero     go-zero's TimingWheel (core/collection), as seed 001 uses it:
//	           the row's tick and timeout/tick + 1 slots; SetTimer per arm for
//	           timeout + tick (its position is rounded down to the last
//	           tick: with the timeout alone it fires up to a tick early),
//	           RemoveTimer per cancel
//	twheel     /dev/twheel through the Go binding (twheel.dev/twheel), as
//	           scen-c's twheel-batch: each turn's refreshes in one
//	           Wheel.RefreshIDs (AddIfAbsent), adds and cancels in one
//	           Wheel.Batch; a goroutine parked in Wheel.ReadEvents reports
//	           the expiries
//	twheel-touch  the same with a touch table, as scen-c's twheel-touch: an
//	           add binds the id to its slot (Op.Bind), a refresh is
//	           Wheel.Touch, no system call
//
// Every way with a tick (go-zero's, twheel's) takes the schedule's: one
// precision for the row. The main goroutine replays the schedule: each
// turn applies the events that are due, then sleeps at least the
// schedule's gathering wait. Built static (CGO_ENABLED=0) for the test VM.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/zeromicro/go-zero/core/collection"
	"twheel.dev/twheel"
)

const (
	opAdd = iota
	opRefresh
	opCancel
	opMark
	lateNs = 10_000_000
)

// The schedule's header (scen.h) and events.
var (
	timeout, tick, gather time.Duration
	nrIDs, endUs          uint64
	ev                    []uint32
)

// CLOCK_MONOTONIC, the clock of the harness and of every other driver:
// one system call at start, then Go's own monotonic clock from there.
var baseTime, baseMono = time.Now(), monoSyscall()

func monoSyscall() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func mono() int64 { return baseMono + int64(time.Since(baseTime)) }

// Expiries to fd 3, from any goroutine; the main one writes them.
var (
	outMu sync.Mutex
	out   []byte
)

func report(id uint32) {
	now := mono()
	outMu.Lock()
	out = binary.LittleEndian.AppendUint64(out, uint64(id))
	out = binary.LittleEndian.AppendUint64(out, uint64(now))
	outMu.Unlock()
}

// flush writes the reports with raw write(2)s, as scen-c does with its
// own: the harness's pipe (1 MiB, drained by scenctl as it fills) takes
// them at once. A write through os.File enters the scheduler as a call
// that may block, and wakes the runtime's monitor thread when every P
// was idle (see the binding's readRaw): a cost of the harness, paid by
// the ways that report, not by the null way they are measured from.
func flush() {
	outMu.Lock()
	for off := 0; off < len(out); {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, 3,
			uintptr(unsafe.Pointer(&out[off])), uintptr(len(out)-off))
		switch errno {
		case 0:
			off += int(n)
		case syscall.EINTR:
		default:
			panic(fmt.Sprintf("write fd 3: %v", errno))
		}
	}
	out = out[:0]
	outMu.Unlock()
}

// Between the marks, where a twheel way's CPU goes (the "stats" line of
// scen.h): loop turns, the binding's calls that are one system call each,
// and ReadEvents' returns.
var nrTurns, nrIoctls, nrReads atomic.Uint64

// A way applies events one by one; turn, if not nil, is called once the
// loop turn's events are applied (and before a mark), for a way that
// gathers them.
type way struct {
	apply func(op int, id uint32)
	turn  func()
}

func afterFunc() way {
	// An id's timer, and how many of its firings are stale: Reset on a
	// timer that fired already (its callback started, and waits for mu)
	// returns false and runs the callback again at the new deadline, on
	// the same timer. The waiting callback is then the old deadline's
	// expiry: it reports, and leaves the id mapped to its re-armed timer.
	type entry struct {
		t     *time.Timer
		stale int
	}
	var mu sync.Mutex
	m := make(map[uint32]*entry)
	arm := func(id uint32) {
		e := &entry{}
		e.t = time.AfterFunc(timeout, func() {
			mu.Lock()
			if e.stale > 0 {
				e.stale--
			} else if m[id] == e {
				delete(m, id)
			}
			mu.Unlock()
			report(id)
		})
		m[id] = e
	}
	return way{apply: func(op int, id uint32) {
		mu.Lock()
		defer mu.Unlock()
		e := m[id]
		switch {
		case op == opCancel:
			if e != nil {
				e.t.Stop()
				delete(m, id)
			}
		case e == nil:
			// Absent, or expired and taken out: a new timer, as for a new id.
			arm(id)
		case !e.t.Reset(timeout):
			// Fired, its callback waiting: the timer runs once more, at the new deadline.
			e.stale++
		}
	}}
}

// afterFuncLazy is IdleStateHandler's way with time.AfterFunc: one timer
// per id, armed once; a refresh stores the time under the mutex. When the
// timer fires, an id whose last arm is a timeout old expires; any other
// has its timer re-armed for what is left. A callback that finds its id
// cancelled, or re-added with a timer of its own, does nothing.
func afterFuncLazy() way {
	type entry struct {
		t    *time.Timer
		last int64
	}
	var mu sync.Mutex
	m := make(map[uint32]*entry)
	return way{apply: func(op int, id uint32) {
		mu.Lock()
		defer mu.Unlock()
		e := m[id]
		switch {
		case op == opCancel:
			if e != nil {
				e.t.Stop()
				delete(m, id)
			}
		case e != nil:
			e.last = mono()
		default:
			e = &entry{last: mono()}
			e.t = time.AfterFunc(timeout, func() {
				mu.Lock()
				if m[id] != e {
					mu.Unlock()
					return
				}
				if left := time.Duration(e.last + int64(timeout) - mono()); left > 0 {
					e.t.Reset(left)
					mu.Unlock()
					return
				}
				delete(m, id)
				mu.Unlock()
				report(id)
			})
			m[id] = e
		}
	}}
}

func goZero() way {
	// timeout/tick slots and one more: timeout + tick within one turn.
	tw, err := collection.NewTimingWheel(tick, int(timeout/tick)+1, func(k, _ any) {
		report(k.(uint32))
	})
	if err != nil {
		panic(err)
	}
	return way{apply: func(op int, id uint32) {
		if op == opCancel {
			tw.RemoveTimer(id)
		} else {
			tw.SetTimer(id, struct{}{}, timeout+tick)
		}
	}}
}

// twheel's tick: the row's, or the module's finest where the row's is finer.
func twheelTick() time.Duration {
	return max(tick, 100*time.Microsecond)
}

// batchMax bounds the ops and ids gathered before they are sent.
const batchMax = 4096

// twheelWay gathers a turn's events in order, as runs: a run of
// refreshes goes in one RefreshIDs, a run of adds and cancels in one
// Batch, so an id's events reach the wheel in the schedule's order. With
// @touch each id has the touch slot of its number: an add binds it, a
// refresh is a touch.
func twheelWay(touch bool) way {
	o := twheel.Options{Tick: twheelTick(), DefaultTimeout: timeout}
	if touch {
		o.TouchSlots = uint32(nrIDs)
	}
	w, err := twheel.Open(o)
	if err != nil {
		panic(err)
	}
	go func() {
		buf := make([]twheel.Event, 1024)
		for {
			n, err := w.ReadEvents(context.Background(), buf)
			nrReads.Add(1)
			if err != nil {
				panic(err)
			}
			for _, e := range buf[:n] {
				report(uint32(e.ID))
			}
		}
	}()
	var b twheel.Batch
	ids := make([]uint64, 0, batchMax)
	var failed []uint64
	spec := twheel.RefreshSpec{AddIfAbsent: true}
	sendOps := func() {
		if b.Len() == 0 {
			return
		}
		nrIoctls.Add(1)
		if _, err := w.Batch(&b); err != nil {
			panic(err)
		}
		for i := range b.Len() {
			// A cancel of an id that expired meanwhile is ErrNotFound:
			// nothing to do. An add that fails is a broken run.
			if _, err := b.Result(i); err != nil && !errors.Is(err, twheel.ErrNotFound) {
				panic(err)
			}
		}
		b.Reset()
	}
	sendIDs := func() {
		if len(ids) == 0 {
			return
		}
		nrIoctls.Add(1)
		failed, err = w.RefreshIDs(ids, spec, failed[:0])
		if err != nil {
			panic(err)
		}
		if len(failed) > 0 {
			panic(fmt.Sprintf("twheel: %d refreshes neither refreshed nor added", len(failed)))
		}
		ids = ids[:0]
	}
	return way{
		apply: func(op int, id uint32) {
			switch {
			case op == opRefresh && touch:
				if err := w.Touch(id); err != nil {
					panic(err)
				}
				return
			case op == opRefresh:
				sendOps()
				if ids = append(ids, uint64(id)); len(ids) == batchMax {
					sendIDs()
				}
				return
			case op == opAdd && touch:
				b.Push(twheel.Op{Kind: twheel.OpAdd, ID: uint64(id), Bind: true, Slot: id})
			case op == opAdd:
				b.Add(uint64(id), 0)
			default:
				b.Cancel(uint64(id))
			}
			sendIDs()
			if b.Len() == batchMax {
				sendOps()
			}
		},
		turn: func() {
			sendOps()
			sendIDs()
		},
	}
}

func load(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	le := binary.LittleEndian
	if le.Uint64(b) != 0x324e454353 {
		panic(path + ": not a schedule")
	}
	nrIDs = le.Uint64(b[24:])
	n := le.Uint64(b[32:])
	timeout = time.Duration(le.Uint64(b[40:]))
	tick = time.Duration(le.Uint64(b[48:]))
	endUs = le.Uint64(b[56:])
	gather = time.Duration(le.Uint64(b[88:]))
	ev = make([]uint32, 2*n)
	for i := range ev {
		ev[i] = le.Uint32(b[96+4*i:])
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: scen-go WAY SCHEDULE (scenctl runs it; see scen.h)")
		os.Exit(2)
	}
	load(os.Args[2])
	var w way
	switch os.Args[1] {
	case "null":
		w = way{apply: func(int, uint32) {}}
	case "afterfunc":
		w = afterFunc()
	case "afterfunc-lazy":
		w = afterFuncLazy()
	case "gozero":
		w = goZero()
	case "twheel":
		w = twheelWay(false)
	case "twheel-touch":
		w = twheelWay(true)
	default:
		fmt.Fprintln(os.Stderr, "scen-go: no way", os.Args[1])
		os.Exit(2)
	}
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "go ") {
		panic("no go")
	}
	t0, _ := strconv.ParseInt(strings.TrimSpace(line[3:]), 10, 64)
	end := t0 + int64(endUs)*1000
	var lag, applied int64
	i, n := 0, len(ev)/2
	at := func(i int) int64 { return t0 + int64(ev[2*i])*1000 }

	time.Sleep(time.Duration(t0 - mono()))
	for {
		now := mono()
		first := i
		for ; i < n && at(i) <= now; i++ {
			op, id := int(ev[2*i+1]>>30), ev[2*i+1]&(1<<30-1)
			if op == opMark {
				if w.turn != nil {
					w.turn()
				}
				flush()
				if id == 2 {
					fmt.Printf("stats turns=%d ioctls=%d reads=%d\n", nrTurns.Load(), nrIoctls.Load(), nrReads.Load())
				}
				nrTurns.Store(0)
				nrIoctls.Store(0)
				nrReads.Store(0)
				fmt.Println("mark", id)
				continue
			}
			w.apply(op, id)
			applied++
		}
		if w.turn != nil {
			w.turn()
		}
		// The turn's first event was applied this late, its last by now.
		if i > first {
			done := mono()
			lag = max(lag, done-at(first))
			if done-at(first) > lateNs {
				fmt.Println("late", ev[2*first], ev[2*(i-1)], done)
			}
		}
		flush()
		if i == n && now >= end {
			break
		}
		next := end
		if i < n {
			next = at(i)
		}
		time.Sleep(max(time.Duration(next-mono()), gather))
		nrTurns.Add(1)
	}
	// The window is sampled: what the heap keeps after a full collection
	// (scen.h), and what the runtime holds from the kernel for it. The
	// collection returns the free heap to the kernel at once
	// (debug.FreeOSMemory), so that the heap held is what memory.current,
	// read next, holds of it: after a plain runtime.GC() the background
	// scavenger releases pages while the harness reads, and the bytes
	// beside the heap moved by megabytes between runs of one way.
	if line, err := in.ReadString('\n'); err != nil || line != "sampled\n" {
		panic("no sampled")
	}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("heap", ms.HeapAlloc, ms.HeapSys-ms.HeapReleased)
	if line, err := in.ReadString('\n'); err != nil || line != "measured\n" {
		panic("no measured")
	}
	fmt.Printf("done applied=%d lag_max_ns=%d\n", applied, lag)
}
