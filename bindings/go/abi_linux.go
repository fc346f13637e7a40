// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The part of the ABI only the Linux build needs: the command numbers
// (abi.go has the structs and flags) and the width of a user pointer.

//go:build linux

package twheel

import "unsafe"

// The commands, as <asm-generic/ioctl.h> encodes _IOW and _IOWR (the
// architectures of ioc_generic.go).
var (
	iocSetup   = iocW(0, unsafe.Sizeof(rawSetup{}))
	iocOp      = iocWR(1, unsafe.Sizeof(rawOp{}))
	iocBatch   = iocW(2, unsafe.Sizeof(rawBatch{}))
	iocDump    = iocWR(3, unsafe.Sizeof(rawDump{}))
	iocRefresh = iocWR(4, unsafe.Sizeof(rawRefresh{}))
	// Mirrored for the header check, as rawTouchRegister.
	iocTouchRegister = iocW(5, unsafe.Sizeof(rawTouchRegister{}))
	// Mirrored for the header check, as rawNsLimit.
	iocNsLimit = iocWR(6, unsafe.Sizeof(rawNsLimit{}))
)

// User pointers are 64-bit: the raw structs' unsafe.Pointer fields are
// the header's __u64 only then. A mismatch does not compile.
var _ [unsafe.Sizeof(unsafe.Pointer(nil)) - 8]struct{}
