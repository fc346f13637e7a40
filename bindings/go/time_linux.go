// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Reading a wheel's clock: clock_gettime(2) of CLOCK_MONOTONIC or
// CLOCK_BOOTTIME, as the kernel reads it for the wheel.

//go:build linux

package twheel

import "golang.org/x/sys/unix"

func (c Clock) clockid() (int32, error) {
	switch c {
	case Monotonic:
		return unix.CLOCK_MONOTONIC, nil
	case Boottime:
		return unix.CLOCK_BOOTTIME, nil
	}
	return 0, c.check()
}

// Now reads the clock with clock_gettime(2), exactly as the kernel does
// for the wheel: through x/sys/unix this is a system call (about 50 ns
// natively against 20 ns for the vDSO that C uses), several times that
// in a virtual machine without KVM. An invalid clock reads 0.
func (c Clock) Now() Instant {
	id, err := c.clockid()
	if err != nil {
		return 0
	}
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		return 0
	}
	return Instant(ts.Nano())
}
