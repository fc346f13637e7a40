// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The part of the API that is the same on every system: the options of a
// wheel and their checks, the single-op methods (each one a Do), and the
// types RefreshIDs, Dump and ReadEvents take and give. The Wheel itself
// and the calls that reach the device are wheel.go's, events.go's and
// touch.go's on Linux, unsupported.go's elsewhere.

package twheel

import "time"

// Options are the settings of a wheel, fixed at Open.
type Options struct {
	// Tick is the wheel's precision, 100µs to 1h: deadlines are rounded
	// up to a multiple of it counted from Open. Required.
	Tick time.Duration
	// DefaultTimeout is the timeout of every op that gives none
	// (Timeout 0). At most 2^32 ticks; 0 fires at the next tick.
	DefaultTimeout time.Duration
	// Clock is Monotonic (the zero value) or Boottime.
	Clock Clock
	// Cap bounds live ids plus events not yet read; ops past it fail
	// with ErrFull. 0 selects the module's max_entries_per_wheel.
	Cap uint32
	// TouchSlots, if not 0, gives the wheel a touch table of that many
	// slots (at most 2^24 and at most Cap): see Touch.
	TouchSlots uint32
}

// check refuses, as ErrInvalid, what Open refuses before any system call;
// the kernel checks the rest (the tick's range, the timeout's length).
func (o *Options) check() error {
	if err := o.Clock.check(); err != nil {
		return invalid("setup", err.Error())
	}
	if o.Tick < 0 || o.DefaultTimeout < 0 {
		return invalid("setup", "negative tick or default timeout")
	}
	return nil
}

// Options returns the options the wheel was opened with.
func (w *Wheel) Options() Options { return w.opts }

// Now is the present time on the wheel's clock: Clock.Now of its clock.
func (w *Wheel) Now() Instant { return w.clock.Now() }

// Add makes @id live with its deadline @timeout from now (0: the wheel's
// default); ErrExists if it is live already.
func (w *Wheel) Add(id uint64, timeout time.Duration) (Result, error) {
	return w.Do(Op{Kind: OpAdd, ID: id, Timeout: timeout})
}

// AddAt makes @id live with the absolute deadline @at on the wheel's clock.
func (w *Wheel) AddAt(id uint64, at Instant) (Result, error) {
	return w.Do(Op{Kind: OpAdd, ID: id, Deadline: at, Abs: true})
}

// Refresh moves the deadline of the live @id to @timeout from now (0: the
// wheel's default, not the id's previous timeout); ErrNotFound if @id is
// not live: it expired, was cancelled or was never added.
func (w *Wheel) Refresh(id uint64, timeout time.Duration) (Result, error) {
	return w.Do(Op{Kind: OpRefresh, ID: id, Timeout: timeout})
}

// RefreshAt moves the deadline of the live @id to @at.
func (w *Wheel) RefreshAt(id uint64, at Instant) (Result, error) {
	return w.Do(Op{Kind: OpRefresh, ID: id, Deadline: at, Abs: true})
}

// RefreshOrAdd refreshes @id, or adds it if it is not live.
func (w *Wheel) RefreshOrAdd(id uint64, timeout time.Duration) (Result, error) {
	return w.Do(Op{Kind: OpRefresh, ID: id, Timeout: timeout, AddIfAbsent: true})
}

// Cancel removes the live @id; its expiry is never reported. The Result
// has the deadline it had.
func (w *Wheel) Cancel(id uint64) (Result, error) {
	return w.Do(Op{Kind: OpCancel, ID: id})
}

// Query returns the deadline of the live @id and the time left.
func (w *Wheel) Query(id uint64) (Result, error) {
	return w.Do(Op{Kind: OpQuery, ID: id})
}

// RefreshSpec says how RefreshIDs re-arms its ids: to Timeout from now (0:
// the wheel's default), or with Abs to the absolute Deadline; with
// AddIfAbsent an id that is not live is added.
type RefreshSpec struct {
	Timeout     time.Duration
	Deadline    Instant
	Abs         bool
	AddIfAbsent bool
}

// encode gives the flags and timeout_ns of a TWHEEL_IOC_REFRESH as @s
// says, or refuses what the ABI cannot carry.
func (s *RefreshSpec) encode() (flags uint32, ns uint64, err error) {
	switch {
	case s.Timeout < 0:
		return 0, 0, invalid("refresh-ids", "negative timeout "+s.Timeout.String())
	case s.Abs && s.Timeout != 0:
		return 0, 0, invalid("refresh-ids", "both a timeout and an absolute deadline")
	case s.Abs:
		flags, ns = opfAbstime, uint64(s.Deadline)
	case s.Timeout > 0:
		flags, ns = opfTimeout, uint64(s.Timeout)
	}
	if s.AddIfAbsent {
		flags |= opfAddIfAbsent
	}
	return flags, ns, nil
}

// DumpEntry is one live id, as Dump lists it.
type DumpEntry struct {
	ID       uint64
	Deadline Instant
	// Slot is the id's touch slot, or NoSlot.
	Slot uint32
}

// Event is one expiry: @ID's deadline passed, and it is no longer live.
// Its layout is the kernel's struct twheel_event (abi.go checks it).
type Event struct {
	ID uint64
	// Deadline is the id's deadline, on the tick grid.
	Deadline Instant
	// Expired is when the wheel processed the tick that passed it; never
	// before Deadline. Expired-Deadline is the event's lateness.
	Expired Instant
}
