// SPDX-License-Identifier: LGPL-2.1 OR MIT

// gobench: what keeping n deadlines costs a Go service, side by side in one
// run: twheel (one Refresh per refresh, a Batch of refreshes, RefreshIDs,
// and stores into the touch table) against what a Go programmer writes
// instead: a time.AfterFunc per id re-armed with Reset (the seeds'
// per-driver timer), go-zero's TimingWheel (core/collection, the seeds'
// ring), and a map with a container/heap. Run in the VM (it needs
// /dev/twheel for the twheel lines; the others also run on the host).
//
// For each n (10^5 and 10^6 by default), each implementation adds ids
// 0..n-1 with a ride-hailing timeout (10 min: nothing expires while it
// runs), then re-arms a stream of random ids among them.
//
//	cpu_ns_per_refresh: the process's user + system time over the stream
//	    (getrusage: the Go runtime's timer and GC work, go-zero's own
//	    goroutine and the ioctls alike, with the module's work they do:
//	    the module has no thread, its expiry and touch work runs in the
//	    calls that use a wheel), divided by the stream's length; for
//	    twheel, plus the kworkers' time meanwhile (their schedstat run
//	    time, as bench/device/bench.h's kthreads_ns() counts it), where
//	    the kernel runs what it defers. The touch table's cost is mostly
//	    after the stream: the kernel looks at each slot when the process
//	    looks at the wheel after its id's deadline (the Go runtime's
//	    netpoller does, as it polls the descriptor that Open registered
//	    with it, or the bench's own poll(2) that does not wait, every
//	    20 ms from the deadline on), so the touch figure waits until every
//	    id was looked at and counts the share of the process's CPU time
//	    over the wait (and the kworkers') that went to re-arms (devbench's
//	    rule); the Go runtime's own while idle is in it.
//	bytes_per_id: the growth, over the n adds, of the memory charged to
//	    the process's memory cgroup (memory.current of a cgroup the
//	    benchmark moves itself into: the Go heap's pages and the kernel's
//	    entries, index and touch table alike), measured after a GC that
//	    returns free pages to the kernel, divided by n. Without a memory
//	    cgroup (not root, no cgroup2) it is the growth of RSS plus the
//	    kernel's Slab (/proc/meminfo), and the '#' line says so.
//
// Output: `binding-bench: lang=go impl=I n=N cpu_ns_per_refresh=C
// bytes_per_id=B`, one per implementation and n, and '#' lines with the
// parts. Reported, not asserted.
package main

import (
	"container/heap"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zeromicro/go-zero/core/collection"
	"golang.org/x/sys/unix"
	"twheel.dev/twheel"
)

const (
	timeout = 10 * time.Minute
	tick    = time.Millisecond
	chunk   = 256 // ops per Batch or RefreshIDs call
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gobench: "+format+"\n", args...)
	os.Exit(1)
}

// cpuNS is the process's user + system time.
func cpuNS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		die("getrusage: %v", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// kthreadsNS sums the run time of the kworkers of every kind, where the
// kernel runs what it defers (bench/device/bench.h's kthreads_ns()).
func kthreadsNS() int64 {
	dirs, _ := filepath.Glob("/proc/[1-9]*")
	var sum int64
	for _, d := range dirs {
		comm, err := os.ReadFile(d + "/comm")
		if err != nil {
			continue
		}
		if !strings.HasPrefix(string(comm), "kworker/") {
			continue
		}
		if st, err := os.ReadFile(d + "/schedstat"); err == nil {
			if f := strings.Fields(string(st)); len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				sum += v
			}
		}
	}
	return sum
}

// memory reads what the process is charged for.
type memory struct {
	cgroup string // memory.current of our own cgroup, or "" for RSS + Slab
}

const cgRoot = "/sys/fs/cgroup"

func newMemory() *memory {
	ctl, err := os.ReadFile(cgRoot + "/cgroup.controllers")
	if err != nil || !strings.Contains(string(ctl), "memory") {
		return &memory{}
	}
	os.WriteFile(cgRoot+"/cgroup.subtree_control", []byte("+memory"), 0)
	dir := cgRoot + "/twheel-gobench"
	os.Mkdir(dir, 0o755)
	if os.WriteFile(dir+"/cgroup.procs", []byte(strconv.Itoa(os.Getpid())), 0) != nil {
		return &memory{}
	}
	if _, err := os.ReadFile(dir + "/memory.current"); err != nil {
		return &memory{}
	}
	return &memory{cgroup: dir}
}

func (m *memory) how() string {
	if m.cgroup != "" {
		return "memcg"
	}
	return "rss+slab"
}

// leave moves the process back to the root cgroup and removes its own.
func (m *memory) leave() {
	if m.cgroup != "" {
		os.WriteFile(cgRoot+"/cgroup.procs", []byte(strconv.Itoa(os.Getpid())), 0)
		os.Remove(m.cgroup)
	}
}

func readInt(path string, field int) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) <= field {
		return 0
	}
	v, _ := strconv.ParseInt(f[field], 10, 64)
	return v
}

func meminfo(key string) int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// now returns the charged bytes and the live Go heap, after a full GC that
// gives free pages back.
func (m *memory) now() (charged, heapLive int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if m.cgroup != "" {
		charged = readInt(m.cgroup+"/memory.current", 0)
	} else {
		charged = readInt("/proc/self/statm", 1)*int64(os.Getpagesize()) + meminfo("Slab")
	}
	return charged, int64(ms.HeapAlloc)
}

// run is one implementation at one n: setup adds the n ids (an error
// there skips the figure, with a '#' line saying why), stream re-arms
// ids[i] for each i, teardown frees; extraCPU, if set, is CPU spent after
// the stream on its behalf (the module's looks at a touch table), measured
// after it, instead of the kworkers' time over the stream.
type run struct {
	name     string
	setup    func(n int) error
	stream   func(ids []uint64)
	extraCPU func() int64
	teardown func()
}

func measure(m *memory, r run, n int, ids []uint64) {
	c0, h0 := m.now()
	if err := r.setup(n); err != nil {
		fmt.Printf("# gobench: impl=%s n=%d skipped: %v\n", r.name, n, err)
		r.teardown()
		return
	}
	c1, h1 := m.now()
	wall := time.Now()
	cpu, kw := cpuNS(), kthreadsNS()
	r.stream(ids)
	cpu = cpuNS() - cpu
	wallNS := time.Since(wall).Nanoseconds()
	module := kthreadsNS() - kw
	if r.extraCPU != nil {
		module = r.extraCPU()
	} else if !strings.HasPrefix(r.name, "twheel") {
		module = 0
	}
	r.teardown()
	s := float64(len(ids))
	fmt.Printf("binding-bench: lang=go impl=%s n=%d cpu_ns_per_refresh=%.0f bytes_per_id=%.1f\n",
		r.name, n, float64(cpu+module)/s, float64(c1-c0)/float64(n))
	fmt.Printf("# gobench: impl=%s n=%d process_ns=%.1f module_ns=%.1f wall_ns=%.1f heap_bytes_per_id=%.1f mem=%s\n",
		r.name, n, float64(cpu)/s, float64(module)/s, float64(wallNS)/s, float64(h1-h0)/float64(n), m.how())
}

func openWheel(o twheel.Options) *twheel.Wheel {
	o.Tick = tick
	o.DefaultTimeout = timeout
	w, err := twheel.Open(o)
	if err != nil {
		die("%v", err)
	}
	return w
}

// addAll adds ids 0..n-1 to @w as @op says, in batches.
func addAll(w *twheel.Wheel, n int, op func(id uint64) twheel.Op) error {
	var b twheel.Batch
	for i := 0; i < n; i += 4096 {
		b.Reset()
		for id := i; id < min(n, i+4096); id++ {
			b.Push(op(uint64(id)))
		}
		if _, err := w.Batch(&b); err != nil {
			return err
		}
		for k := 0; k < b.Len(); k++ {
			if _, err := b.Result(k); err != nil {
				return err
			}
		}
	}
	return nil
}

func twheelBatch() run {
	var w *twheel.Wheel
	return run{
		name: "twheel-batch",
		setup: func(n int) error {
			w = openWheel(twheel.Options{})
			return addAll(w, n, func(id uint64) twheel.Op { return twheel.Op{Kind: twheel.OpAdd, ID: id} })
		},
		stream: func(ids []uint64) {
			var b twheel.Batch
			for i := 0; i < len(ids); i += chunk {
				b.Reset()
				for _, id := range ids[i:min(len(ids), i+chunk)] {
					b.Refresh(id, 0)
				}
				if _, err := w.Batch(&b); err != nil {
					die("refresh: %v", err)
				}
				for k := 0; k < b.Len(); k++ {
					if _, err := b.Result(k); err != nil {
						die("refresh: %v", err)
					}
				}
			}
		},
		teardown: func() { w.Close() },
	}
}

// twheelRefresh: one Refresh, one ioctl, per refresh: the single op that
// the batch and the touch table amortise, for its cost beside theirs.
func twheelRefresh() run {
	var w *twheel.Wheel
	return run{
		name: "twheel-refresh",
		setup: func(n int) error {
			w = openWheel(twheel.Options{})
			return addAll(w, n, func(id uint64) twheel.Op { return twheel.Op{Kind: twheel.OpAdd, ID: id} })
		},
		stream: func(ids []uint64) {
			for _, id := range ids {
				if _, err := w.Refresh(id, 0); err != nil {
					die("refresh: %v", err)
				}
			}
		},
		teardown: func() { w.Close() },
	}
}

func twheelRefreshIDs() run {
	var w *twheel.Wheel
	return run{
		name: "twheel-refresh-ids",
		setup: func(n int) error {
			w = openWheel(twheel.Options{})
			return addAll(w, n, func(id uint64) twheel.Op { return twheel.Op{Kind: twheel.OpAdd, ID: id} })
		},
		stream: func(ids []uint64) {
			failed := make([]uint64, 0, chunk)
			for i := 0; i < len(ids); i += chunk {
				var err error
				failed, err = w.RefreshIDs(ids[i:min(len(ids), i+chunk)], twheel.RefreshSpec{}, failed[:0])
				if err != nil || len(failed) != 0 {
					die("refresh-ids: %v, %d failed", err, len(failed))
				}
			}
		},
		teardown: func() { w.Close() },
	}
}

// fdinfo reads one counter of the wheel's /proc/self/fdinfo.
func fdinfo(w *twheel.Wheel, key string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", w.Fd()))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":\t"); ok {
			k, _ := strconv.ParseInt(v, 10, 64)
			return k
		}
	}
	return -1
}

// look polls the wheel's descriptor without waiting, as an event loop
// does: what the wheel's timer marked due is expired, re-armed or
// cascaded, by this call if nobody did it before.
func look(w *twheel.Wheel) {
	unix.Poll([]unix.PollFd{{Fd: int32(w.Fd()), Events: unix.POLLIN}}, 0)
}

// twheelTouch: the stream is a Touch per refresh. The ids are due at one
// deadline just past the stream's end; the kernel then looks at each slot
// once, when the process looks at the wheel, re-arming the touched ids
// and expiring the others, and the re-arms' share of that work is the
// touches' (devbench's rule).
func twheelTouch(streamLen int) run {
	var w *twheel.Wheel
	var deadline twheel.Instant
	var n int
	return run{
		name: "twheel-touch",
		setup: func(k int) error {
			n = k
			w = openWheel(twheel.Options{TouchSlots: uint32(n)})
			// Past the adds and the stream at a slow 10 µs per op, and
			// the measuring between.
			deadline = w.Now().Add(time.Duration(n+streamLen)*10*time.Microsecond + 10*time.Second)
			return addAll(w, n, func(id uint64) twheel.Op {
				return twheel.Op{Kind: twheel.OpAdd, ID: id, Deadline: deadline, Abs: true, Bind: true, Slot: uint32(id)}
			})
		},
		stream: func(ids []uint64) {
			for _, id := range ids {
				if err := w.Touch(uint32(id)); err != nil {
					die("touch: %v", err)
				}
			}
			if w.Now() >= deadline {
				die("touch stream outlasted its deadline")
			}
		},
		extraCPU: func() int64 {
			kw, cpu := kthreadsNS(), cpuNS()
			var rearms, expired int64
			// From the deadline on, look every 20 ms until every id was looked at.
			time.Sleep(deadline.Sub(w.Now()))
			for end := time.Now().Add(5 * time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				look(w)
				rearms, expired = fdinfo(w, "touch_rearms"), fdinfo(w, "expired_total")
				if rearms+expired >= int64(n) {
					break
				}
			}
			cpu = cpuNS() - cpu
			kw = cpu + kthreadsNS() - kw
			fmt.Printf("# gobench: impl=twheel-touch n=%d looks=%d rearms=%d module_ns_per_look=%.0f wait_process_ns=%d\n",
				n, rearms+expired, rearms, float64(kw)/float64(max(rearms+expired, 1)), cpu)
			return kw * rearms / max(rearms+expired, 1)
		},
		teardown: func() { w.Close() },
	}
}

func afterFunc() run {
	var timers []*time.Timer
	return run{
		name: "afterfunc",
		setup: func(n int) error {
			timers = make([]*time.Timer, n)
			for i := range timers {
				id := uint64(i)
				timers[i] = time.AfterFunc(timeout, func() { die("id %d expired", id) })
			}
			return nil
		},
		stream: func(ids []uint64) {
			for _, id := range ids {
				timers[id].Reset(timeout)
			}
		},
		teardown: func() {
			for _, t := range timers {
				t.Stop()
			}
			timers = nil
		},
	}
}

// goZero: go-zero's TimingWheel with a one-second slot and 600 slots, one
// revolution per ride-hailing timeout, as the seeds' ring has it.
func goZero() run {
	var tw *collection.TimingWheel
	return run{
		name: "go-zero",
		setup: func(n int) error {
			var err error
			tw, err = collection.NewTimingWheel(time.Second, 600, func(key, _ any) { die("id %v expired", key) })
			if err != nil {
				return err
			}
			for id := 0; id < n; id++ {
				if err := tw.SetTimer(uint64(id), nil, timeout); err != nil {
					return err
				}
			}
			return nil
		},
		stream: func(ids []uint64) {
			for _, id := range ids {
				if err := tw.MoveTimer(id, timeout); err != nil {
					die("go-zero: %v", err)
				}
			}
		},
		teardown: func() {
			if tw != nil {
				tw.Stop()
			}
			tw = nil
		},
	}
}

// deadlines is a map of ids to their entries in a min-heap of deadlines.
type entry struct {
	id       uint64
	deadline time.Duration // since start, on the monotonic clock
	index    int
}

type deadlineHeap []*entry

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *deadlineHeap) Push(x any) { e := x.(*entry); e.index = len(*h); *h = append(*h, e) }
func (h *deadlineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func mapHeap() run {
	var byID map[uint64]*entry
	var h deadlineHeap
	start := time.Now()
	return run{
		name: "heap",
		setup: func(n int) error {
			byID = make(map[uint64]*entry)
			h = nil
			for id := 0; id < n; id++ {
				e := &entry{id: uint64(id), deadline: time.Since(start) + timeout}
				byID[e.id] = e
				heap.Push(&h, e)
			}
			return nil
		},
		stream: func(ids []uint64) {
			for _, id := range ids {
				e := byID[id]
				e.deadline = time.Since(start) + timeout
				heap.Fix(&h, e.index)
			}
		},
		teardown: func() { byID, h = nil, nil },
	}
}

func main() {
	sizes := flag.String("n", "100000,1000000", "numbers of ids, comma-separated")
	streamLen := flag.Int("stream", 200000, "refreshes per figure")
	only := flag.String("impl", "", "run only these implementations (comma-separated)")
	flag.Parse()

	m := newMemory()
	defer m.leave()
	_, device := os.Stat("/dev/twheel")
	rng := rand.New(rand.NewSource(88172645463325252))
	ids := make([]uint64, *streamLen)
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			die("bad -n %q", s)
		}
		for i := range ids {
			ids[i] = uint64(rng.Int63n(int64(n)))
		}
		for _, r := range []run{twheelRefresh(), twheelBatch(), twheelRefreshIDs(), twheelTouch(*streamLen), afterFunc(), goZero(), mapHeap()} {
			if *only != "" && !strings.Contains(","+*only+",", ","+r.name+",") {
				continue
			}
			if strings.HasPrefix(r.name, "twheel") && device != nil {
				fmt.Printf("# gobench: impl=%s skipped: no /dev/twheel\n", r.name)
				continue
			}
			measure(m, r, n, ids)
		}
	}
}
