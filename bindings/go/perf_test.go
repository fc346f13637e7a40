// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The cost of the binding's own work around a system call, on the host:
// a Batch's encoding and results, and the call wrapper, on a descriptor
// of /dev/null (its ioctl fails at once with ENOTTY, so what is measured
// is the Go side). The tests hold the hot paths to no allocation; the
// benchmarks give their cost (go test -bench, or instruction counts with
// valgrind --tool=callgrind and GODEBUG=asyncpreemptoff=1).

//go:build linux

package twheel

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nullWheel is a Wheel whose descriptor is /dev/null.
func nullWheel(tb testing.TB) *Wheel {
	fd, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		tb.Fatal(err)
	}
	w := &Wheel{closed: make(chan struct{}), readers: make(chan struct{}, 1), fd: fd}
	w.f = os.NewFile(uintptr(fd), "/dev/null")
	if w.rc, err = w.f.SyscallConn(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	return w
}

// refreshBatch fills @b with @n refreshes, as the kernel would answer
// them, and reads every result.
func refreshBatch(tb testing.TB, b *Batch, n int) {
	b.Reset()
	for k := 0; k < n; k++ {
		b.Refresh(uint64(k), 0)
	}
	b.applied = b.Len()
	for k := 0; k < b.Len(); k++ {
		if _, err := b.Result(k); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestReusedBatchAllocatesNothing(t *testing.T) {
	var b Batch
	if a := testing.AllocsPerRun(10, func() { refreshBatch(t, &b, 256) }); a != 0 {
		t.Errorf("%.1f allocations per batch of 256", a)
	}
}

func TestCallAllocatesNothing(t *testing.T) {
	w := nullWheel(t)
	var args rawBatch
	a := testing.AllocsPerRun(100, func() {
		if _, err := w.ioctl(iocBatch, unsafe.Pointer(&args)); !errors.Is(err, unix.ENOTTY) {
			t.Fatal(err)
		}
	})
	if a != 0 {
		t.Errorf("%.1f allocations per call", a)
	}
}

func BenchmarkBatchOfRefreshes(b *testing.B) {
	var bt Batch
	b.ReportAllocs()
	for i := 0; i < b.N; i += 256 {
		refreshBatch(b, &bt, 256)
	}
}

func BenchmarkCall(b *testing.B) {
	w := nullWheel(b)
	var args rawBatch
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.ioctl(iocBatch, unsafe.Pointer(&args))
	}
}
