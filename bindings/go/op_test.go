// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The encoders on the host: Op to struct twheel_op, the answer back to a
// Result or an error, and a Batch's bookkeeping, including a fuzz target
// that holds the encoder to its rules for any input.

//go:build linux

package twheel

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

func TestEncodeOp(t *testing.T) {
	cases := []struct {
		name  string
		op    Op
		flags uint32
		ns    uint64
		slot  uint32
	}{
		{"default timeout", Op{Kind: OpAdd, ID: 7}, 0, 0, 0},
		{"timeout", Op{Kind: OpAdd, ID: 7, Timeout: time.Second}, opfTimeout, 1e9, 0},
		{"one ns", Op{Kind: OpRefresh, ID: 7, Timeout: 1}, opfTimeout, 1, 0},
		{"deadline", Op{Kind: OpAdd, ID: 7, Deadline: 123, Abs: true}, opfAbstime, 123, 0},
		{"deadline zero", Op{Kind: OpRefresh, ID: 7, Abs: true}, opfAbstime, 0, 0},
		{"add if absent", Op{Kind: OpRefresh, ID: 1, AddIfAbsent: true}, opfAddIfAbsent, 0, 0},
		{"bind", Op{Kind: OpAdd, ID: 1, Bind: true, Slot: 9}, opfTouch, 0, 9},
		{"unbind", Op{Kind: OpRefresh, ID: 1, Bind: true, Slot: NoSlot}, opfTouch, 0, slotNone},
		{"slot without bind is dropped", Op{Kind: OpAdd, ID: 1, Slot: 9}, 0, 0, 0},
		{"everything", Op{Kind: OpRefresh, ID: ^uint64(0), Deadline: 5, Abs: true, AddIfAbsent: true,
			Bind: true, Slot: 3}, opfAbstime | opfAddIfAbsent | opfTouch, 5, 3},
	}
	for _, c := range cases {
		r := rawOp{result: -1, deadlineNS: 1, remainingNS: 1}
		if err := c.op.encode(&r); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := rawOp{id: c.op.ID, op: uint32(c.op.Kind), flags: c.flags, timeoutNS: c.ns, slot: c.slot}
		if r != want {
			t.Errorf("%s: encoded %+v, want %+v", c.name, r, want)
		}
	}
}

func TestEncodeRefusesWhatTheABICannotCarry(t *testing.T) {
	for _, op := range []Op{
		{Kind: OpAdd, ID: 3, Timeout: -1},
		{Kind: OpRefresh, ID: 3, Timeout: minDuration},
		{Kind: OpAdd, ID: 3, Timeout: time.Second, Abs: true},
	} {
		var r rawOp
		err := op.encode(&r)
		if !errors.Is(err, ErrInvalid) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%+v: %v, want ErrInvalid", op, err)
		}
	}
}

func TestDecodeResult(t *testing.T) {
	res, err := decodeResult(&rawOp{deadlineNS: 10, remainingNS: 4})
	if err != nil || res != (Result{Deadline: 10, Remaining: 4}) {
		t.Errorf("got %+v, %v", res, err)
	}
	res, err = decodeResult(&rawOp{remainingNS: ^uint64(0)})
	if err != nil || res.Remaining != maxDuration {
		t.Errorf("huge remaining: %+v, %v", res, err)
	}
	for result, want := range map[int32]error{-2: ErrNotFound, -17: ErrExists, -28: ErrFull,
		-22: ErrInvalid, -77: ErrNotSetUp} {
		if res, err := decodeResult(&rawOp{result: result, deadlineNS: 5}); res != (Result{}) ||
			err != syscall.Errno(-result) || !errors.Is(opError("query", 1, err), want) {
			t.Errorf("result %d: %v, want %v", result, err, want)
		}
	}
	for _, result := range []int32{1, -4096, -1 << 31} {
		if _, err := decodeResult(&rawOp{result: result}); !errors.Is(err, syscall.EIO) {
			t.Errorf("result %d: %v, want EIO", result, err)
		}
	}
}

func TestBatchKeepsOrderAndResults(t *testing.T) {
	var b Batch
	b.Add(1, 0)
	b.Refresh(2, time.Millisecond)
	b.Cancel(3)
	b.Query(4)
	if b.Len() != 4 {
		t.Fatalf("Len %d", b.Len())
	}
	kinds := []Kind{OpAdd, OpRefresh, OpCancel, OpQuery}
	for i, r := range b.ops {
		if r.id != uint64(i+1) || Kind(r.op) != kinds[i] {
			t.Errorf("op %d: %+v", i, r)
		}
	}
	// As the kernel would answer, two of them applied.
	b.ops[0].deadlineNS = 100
	b.ops[1].result = -2
	b.applied = 2
	if res, err := b.Result(0); err != nil || res.Deadline != 100 {
		t.Errorf("op 0: %+v, %v", res, err)
	}
	_, err := b.Result(1)
	var e *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &e) || e.ID != 2 || !e.HasID || e.Op != "batch refresh" {
		t.Errorf("op 1: %v", err)
	}
	if _, err := b.Result(2); !errors.Is(err, ErrInvalid) {
		t.Errorf("op not applied: %v", err)
	}
	for _, i := range []int{-1, 4} {
		if _, err := b.Result(i); !errors.Is(err, ErrInvalid) {
			t.Errorf("index %d: %v", i, err)
		}
	}
	b.Reset()
	if b.Len() != 0 || b.Applied() != 0 || cap(b.ops) < 4 {
		t.Errorf("Reset: len %d applied %d cap %d", b.Len(), b.Applied(), cap(b.ops))
	}
}

func TestBatchWithRefusedOpFailsWhole(t *testing.T) {
	var b Batch
	b.Add(1, 0)
	b.Add(2, -time.Second)
	b.Add(3, -time.Second)
	var w Wheel // never reached: the batch fails before any call
	n, err := w.Batch(&b)
	var e *Error
	if n != 0 || !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || e.ID != 2 {
		t.Errorf("got %d, %v", n, err)
	}
}

// FuzzEncodeOp: for any op, the encoder either refuses it with ErrInvalid
// (exactly the inputs the ABI cannot carry) or sets only defined flags,
// the field each one names, and zero out fields.
func FuzzEncodeOp(f *testing.F) {
	f.Add(uint32(1), uint64(0), int64(0), uint64(0), false, false, false, uint32(0))
	f.Add(uint32(2), ^uint64(0), int64(-1), uint64(1), true, true, true, ^uint32(0))
	f.Add(uint32(9), uint64(5), int64(1)<<62, uint64(0), false, true, false, uint32(7))
	f.Fuzz(func(t *testing.T, kind uint32, id uint64, timeout int64, deadline uint64,
		abs, addIfAbsent, bind bool, slot uint32) {
		op := Op{Kind: Kind(kind), ID: id, Timeout: time.Duration(timeout), Deadline: Instant(deadline),
			Abs: abs, AddIfAbsent: addIfAbsent, Bind: bind, Slot: slot}
		r := rawOp{result: 99, deadlineNS: 99, remainingNS: 99}
		err := op.encode(&r)
		refuse := timeout < 0 || (abs && timeout != 0)
		if refuse != (err != nil) {
			t.Fatalf("%+v: error %v", op, err)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%+v: %v is not ErrInvalid", op, err)
			}
			return
		}
		if r.id != id || r.op != kind || r.result != 0 || r.deadlineNS != 0 || r.remainingNS != 0 {
			t.Fatalf("%+v: %+v", op, r)
		}
		if r.flags&^(opfTimeout|opfAddIfAbsent|opfAbstime|opfTouch) != 0 {
			t.Fatalf("%+v: undefined flags %#x", op, r.flags)
		}
		if (r.flags&opfTimeout != 0) != (!abs && timeout > 0) || (r.flags&opfAbstime != 0) != abs ||
			(r.flags&opfAddIfAbsent != 0) != addIfAbsent || (r.flags&opfTouch != 0) != bind {
			t.Fatalf("%+v: flags %#x", op, r.flags)
		}
		switch {
		case abs && r.timeoutNS != deadline, !abs && r.timeoutNS != uint64(max(timeout, 0)):
			t.Fatalf("%+v: timeout_ns %d", op, r.timeoutNS)
		}
		if (bind && r.slot != slot) || (!bind && r.slot != 0) {
			t.Fatalf("%+v: slot %d", op, r.slot)
		}
		// Whatever the kernel writes back decodes without panicking.
		r.result, r.deadlineNS, r.remainingNS = int32(id), deadline, uint64(timeout)
		if res, err := decodeResult(&r); err == nil && res.Remaining < 0 {
			t.Fatalf("negative remaining %v", res.Remaining)
		}
	})
}
