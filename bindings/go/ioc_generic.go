// SPDX-License-Identifier: LGPL-2.1 OR MIT

// ioctl command numbers in the layout of <asm-generic/ioctl.h>: 2 bits of
// direction, 14 of size, 8 of type, 8 of number. The 64-bit architectures
// listed use it; powerpc, mips and sparc encode commands otherwise and
// would need a file of their own.

//go:build linux && (amd64 || arm64 || riscv64 || loong64 || s390x)

package twheel

const (
	iocWrite = 1
	iocRead  = 2
)

func ioc(dir, nr, size uintptr) uintptr {
	return dir<<30 | size<<16 | iocMagic<<8 | nr
}

func iocW(nr, size uintptr) uintptr  { return ioc(iocWrite, nr, size) }
func iocWR(nr, size uintptr) uintptr { return ioc(iocRead|iocWrite, nr, size) }
