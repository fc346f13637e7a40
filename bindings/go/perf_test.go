// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The cost of the binding's own work around a system call, on the host:
// a Batch's encoding and results. The tests hold the hot paths to no
// allocation; the benchmarks give their cost (go test -bench, or
// instruction counts with valgrind --tool=callgrind and
// GODEBUG=asyncpreemptoff=1).

//go:build linux

package twheel

import "testing"

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

func BenchmarkBatchOfRefreshes(b *testing.B) {
	var bt Batch
	b.ReportAllocs()
	for i := 0; i < b.N; i += 256 {
		refreshBatch(b, &bt, 256)
	}
}
