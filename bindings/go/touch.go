// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The touch table: refresh without a system call. A wheel opened with
// TouchSlots maps its table of __u64 slots; an id bound to a slot is kept
// alive by storing the present time on the wheel's clock into it (an
// aligned 64-bit atomic store), and the kernel looks at the slot when
// the id's deadline comes (or a level of its wheel before).
//
// The mapping is never unmapped while a Wheel can still store into it:
// Close replaces it in place (mmap MAP_FIXED) with private anonymous
// memory, which releases the kernel's wheel at once and turns a Touch
// racing Close into a harmless store, and the placeholder is unmapped only
// when the garbage collector finds the table unreachable.

//go:build linux

package twheel

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// table is the touch table: @slots over the mapping (or, in tests, over
// any []uint64).
type table struct {
	slots  []uint64
	closed atomic.Bool
	mem    unsafe.Pointer // the mapping, nil if the slots are not mapped
	length uintptr
}

// mapTable maps the table of @nr slots of the wheel on @fd.
func mapTable(fd int, nr uint32) (*table, error) {
	length := uintptr(nr) * 8
	mem, err := unix.MmapPtr(fd, 0, nil, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	t := &table{slots: unsafe.Slice((*uint64)(mem), nr), mem: mem, length: length}
	runtime.SetFinalizer(t, (*table).unmap)
	return t, nil
}

// close swaps the shared mapping for private memory of the same size.
func (t *table) close() {
	t.closed.Store(true)
	if t.mem != nil {
		// If this fails the shared mapping simply stays until unmap:
		// the kernel frees the wheel then.
		unix.MmapPtr(-1, 0, t.mem, t.length, unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
	}
}

func (t *table) unmap() {
	unix.MunmapPtr(t.mem, t.length)
}

// store writes @stamp into @slot.
func (t *table) store(slot uint32, stamp uint64) error {
	if t.closed.Load() {
		return errClosedTouch(slot)
	}
	if uint64(slot) >= uint64(len(t.slots)) {
		return &Error{Op: "touch", Slot: slot, HasSlot: true, Err: unix.EINVAL,
			Detail: "slot outside the table"}
	}
	atomic.StoreUint64(&t.slots[slot], stamp)
	runtime.KeepAlive(t)
	return nil
}

// load reads @slot.
func (t *table) load(slot uint32) (uint64, error) {
	if t.closed.Load() {
		return 0, errClosedTouch(slot)
	}
	if uint64(slot) >= uint64(len(t.slots)) {
		return 0, &Error{Op: "touch", Slot: slot, HasSlot: true, Err: unix.EINVAL,
			Detail: "slot outside the table"}
	}
	v := atomic.LoadUint64(&t.slots[slot])
	runtime.KeepAlive(t)
	return v, nil
}

func errClosedTouch(slot uint32) error {
	return &Error{Op: "touch", Slot: slot, HasSlot: true, Err: ErrClosed}
}

// Touch refreshes the id bound to @slot: it stores the present time on the
// wheel's clock into the slot. No system call: on a Monotonic wheel the
// time is the Go runtime's own monotonic clock (the vDSO, ~20 ns) offset
// to CLOCK_MONOTONIC, which may read a little late but never early (see
// monoClock); a Boottime wheel reads its clock with clock_gettime(2), a
// system call (x/sys/unix does not use the vDSO). The id is re-armed to
// that time plus its timeout when its deadline comes.
func (w *Wheel) Touch(slot uint32) error {
	if w.unopened() {
		return errUnopened("touch")
	}
	if w.table == nil {
		return errNoTable(slot)
	}
	var now uint64
	if w.clock == Monotonic {
		now = w.mono.now()
	} else {
		now = uint64(w.clock.Now())
	}
	return w.table.store(slot, now)
}

// TouchAt stores @at into @slot: a touch at that time. A time from the
// future counts as the present, once; 0 is no touch.
func (w *Wheel) TouchAt(slot uint32, at Instant) error {
	if w.unopened() {
		return errUnopened("touch")
	}
	if w.table == nil {
		return errNoTable(slot)
	}
	return w.table.store(slot, uint64(at))
}

// Stamp reads the time last stored into @slot. After an id's expiry, a
// stamp later than the event's Deadline shows a touch that came too late.
func (w *Wheel) Stamp(slot uint32) (Instant, error) {
	if w.unopened() {
		return 0, errUnopened("touch")
	}
	if w.table == nil {
		return 0, errNoTable(slot)
	}
	v, err := w.table.load(slot)
	return Instant(v), err
}

func errNoTable(slot uint32) error {
	return &Error{Op: "touch", Slot: slot, HasSlot: true, Err: unix.ENODEV,
		Detail: "the wheel has no touch table (Options.TouchSlots)"}
}

// monoClock reads CLOCK_MONOTONIC without a system call: one clock_gettime
// at Open, then time.Since, which the runtime answers from the same clock
// through the vDSO. The base is taken as base + time since @t0 where @t0
// was read before the system call: the kernel's reading came after @t0,
// so the sum is never below the true time, and above it by at most the
// length of that one call (a microsecond or so, a few under emulation).
// A stamp a little late keeps its id alive that much longer; one early
// could be taken for a touch before the deadline was set, and lose it.
type monoClock struct {
	t0   time.Time
	base uint64
}

func newMonoClock() monoClock {
	t0 := time.Now()
	return monoClock{t0: t0, base: uint64(Monotonic.Now())}
}

func (m *monoClock) now() uint64 {
	return m.base + uint64(time.Since(m.t0))
}
