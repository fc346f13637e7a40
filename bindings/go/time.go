// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The wheel's time: a Clock (CLOCK_MONOTONIC or CLOCK_BOOTTIME) and an
// Instant on it. Deadlines are not time.Time: a wheel counts on one of
// those clocks, as clock_gettime(2) reads them in the caller's time
// namespace, and a time.Time's monotonic reading cannot be turned into
// one (it is private to the process) while its wall reading moves with
// settimeofday and NTP steps, which the wheel's clocks never do. Reading
// a clock is time_linux.go's.

package twheel

import (
	"fmt"
	"time"
)

// Clock is the clock a wheel counts on. The zero value is Monotonic.
type Clock int

const (
	// Monotonic is CLOCK_MONOTONIC: it stops while the machine is
	// suspended, so a deadline does not pass during a suspend.
	Monotonic Clock = iota
	// Boottime is CLOCK_BOOTTIME: time spent in suspend counts.
	Boottime
)

// check refuses a Clock that is neither Monotonic nor Boottime.
func (c Clock) check() error {
	switch c {
	case Monotonic, Boottime:
		return nil
	}
	return fmt.Errorf("clock %d is neither Monotonic nor Boottime", int(c))
}

func (c Clock) String() string {
	switch c {
	case Monotonic:
		return "Monotonic"
	case Boottime:
		return "Boottime"
	}
	return fmt.Sprintf("Clock(%d)", int(c))
}

// Instant is a time on a wheel's clock, in nanoseconds since the clock's
// origin (boot, on Linux; shifted by the time namespace's offset in a
// container that has one). It is what the kernel reports as a deadline
// or an expiry time, and what AddAt and RefreshAt take.
//
// To restore a deadline that was kept as wall time (a database's "due at
// T"), take the wall clock's distance to it now:
//
//	at := w.Now().Add(time.Until(due))
//
// A due time already past gives an Instant before now, which fires at the
// wheel's next tick.
type Instant uint64

// Add returns i+d, clamped to the range of Instant.
func (i Instant) Add(d time.Duration) Instant {
	if d < 0 {
		if Instant(-d) > i || d == minDuration {
			return 0
		}
		return i - Instant(-d)
	}
	if i+Instant(d) < i {
		return ^Instant(0)
	}
	return i + Instant(d)
}

// Sub returns i-u, clamped to the range of time.Duration.
func (i Instant) Sub(u Instant) time.Duration {
	if i >= u {
		if i-u > maxInt64 {
			return maxDuration
		}
		return time.Duration(i - u)
	}
	if u-i > maxInt64 {
		return minDuration
	}
	return -time.Duration(u - i)
}

// Before reports whether i is before u.
func (i Instant) Before(u Instant) bool { return i < u }

// After reports whether i is after u.
func (i Instant) After(u Instant) bool { return i > u }

// String shows i as a duration since the clock's origin, "1h2m3.000000004s".
func (i Instant) String() string {
	if i > maxInt64 {
		return fmt.Sprintf("%dns", uint64(i))
	}
	return time.Duration(i).String()
}

const (
	maxInt64    = 1<<63 - 1
	maxDuration = time.Duration(maxInt64)
	minDuration = -maxDuration - 1
)
