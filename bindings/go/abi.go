// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The ABI of /dev/twheel as Go sees it: every struct and flag of
// uapi/linux/twheel.h (its commands are in abi_linux.go), and nothing
// else. Each raw struct has the header's fields in the header's order and
// size (the uapi tag names the C field), so a pointer to one is what the
// kernel reads; abi_test.go parses the header and fails when the two part.
// A change of the ABI is an edit of this file, and of abi_linux.go for a
// command. This file has no build constraint: the encoders (op.go) build
// on every system, so that the package's API does too (unsupported.go).

package twheel

import "unsafe"

// The device each Open creates a wheel on.
const devicePath = "/dev/twheel"

// Bounds of the ABI, from the header.
const (
	tickMinNS       = 100000        // TWHEEL_TICK_MIN_NS
	tickMaxNS       = 3600000000000 // TWHEEL_TICK_MAX_NS
	maxTimeoutTicks = 1 << 32       // TWHEEL_MAX_TIMEOUT_TICKS
	maxTimeoutNS    = 1 << 62       // TWHEEL_MAX_TIMEOUT_NS
	touchMaxSlots   = 1 << 24       // TWHEEL_TOUCH_MAX_SLOTS
	dumpEnd         = ^uint64(0)    // TWHEEL_DUMP_END
	setupfTouch     = 1 << 0        // TWHEEL_SETUPF_TOUCH
	setupfTouchUser = 1 << 1        // TWHEEL_SETUPF_TOUCH_USER
	opfTimeout      = 1 << 0        // TWHEEL_OPF_TIMEOUT
	opfAddIfAbsent  = 1 << 1        // TWHEEL_OPF_ADD_IF_ABSENT
	opfAbstime      = 1 << 2        // TWHEEL_OPF_ABSTIME
	opfTouch        = 1 << 3        // TWHEEL_OPF_TOUCH
	slotNone        = 0xffffffff    // TWHEEL_SLOT_NONE
	nsLimitfSet     = 1 << 0        // TWHEEL_NS_LIMITF_SET
	iocMagic        = 0xF7          // TWHEEL_IOC_MAGIC
	opAdd           = 1             // TWHEEL_OP_ADD
	opRefresh       = 2             // TWHEEL_OP_REFRESH
	opCancel        = 3             // TWHEEL_OP_CANCEL
	opQuery         = 4             // TWHEEL_OP_QUERY
	maxCount        = 1<<31 - 1     // INT_MAX: the most ops, ids or entries per call
)

// struct twheel_setup_args
type rawSetup struct {
	tickNS           uint64 `uapi:"tick_ns"`
	defaultTimeoutNS uint64 `uapi:"default_timeout_ns"`
	clockid          uint32 `uapi:"clockid"`
	maxEntries       uint32 `uapi:"max_entries"`
	flags            uint32 `uapi:"flags"`
	touchSlots       uint32 `uapi:"touch_slots"`
}

// struct twheel_op
type rawOp struct {
	id          uint64 `uapi:"id"`
	timeoutNS   uint64 `uapi:"timeout_ns"`
	deadlineNS  uint64 `uapi:"deadline_ns"`
	remainingNS uint64 `uapi:"remaining_ns"`
	op          uint32 `uapi:"op"`
	flags       uint32 `uapi:"flags"`
	result      int32  `uapi:"result"`
	slot        uint32 `uapi:"slot"`
}

// The header's user pointers are __u64. They are unsafe.Pointer here (the
// Linux build is for 64-bit targets only: abi_linux.go checks it), so that
// the garbage collector keeps what they point to alive and a stack copy
// moves them with it.

// struct twheel_batch_args
type rawBatch struct {
	ops   unsafe.Pointer `uapi:"ops"`
	count uint32         `uapi:"count"`
	flags uint32         `uapi:"flags"`
}

// struct twheel_event; Event has the same layout (see below).
type rawEvent struct {
	id         uint64 `uapi:"id"`
	deadlineNS uint64 `uapi:"deadline_ns"`
	expiredNS  uint64 `uapi:"expired_ns"`
}

// struct twheel_refresh_args
type rawRefresh struct {
	ids       unsafe.Pointer `uapi:"ids"`
	failed    unsafe.Pointer `uapi:"failed"`
	timeoutNS uint64         `uapi:"timeout_ns"`
	count     uint32         `uapi:"count"`
	flags     uint32         `uapi:"flags"`
	nrFailed  uint32         `uapi:"nr_failed"`
	pad       uint32         `uapi:"pad"`
}

// struct twheel_dump_entry
type rawDumpEntry struct {
	id         uint64 `uapi:"id"`
	deadlineNS uint64 `uapi:"deadline_ns"`
	slot       uint32 `uapi:"slot"`
	pad        uint32 `uapi:"pad"`
}

// struct twheel_dump_args
type rawDump struct {
	entries unsafe.Pointer `uapi:"entries"`
	cursor  uint64         `uapi:"cursor"`
	count   uint32         `uapi:"count"`
	flags   uint32         `uapi:"flags"`
}

// struct twheel_uring_cmd, the command area of an io_uring ring command.
// The binding submits no ring commands; the layout is mirrored so that
// the header check covers every struct of the uapi.
type rawUringCmd struct {
	_ uint64 `uapi:"arg"`
	_ uint64 `uapi:"pad"`
}

// struct twheel_touch_register_args, the argument of
// TWHEEL_IOC_TOUCH_REGISTER. The binding registers no tables (its touch
// table is the wheel's own, mapped); the layout is mirrored so that the
// header check covers every struct of the uapi.
type rawTouchRegister struct {
	_ uint64 `uapi:"addr"`
	_ uint32 `uapi:"slots"`
	_ uint32 `uapi:"flags"`
}

// struct twheel_ns_limit_args, the argument of TWHEEL_IOC_NS_LIMIT, a
// user namespace's entry limit: a container runtime's call, not a
// wheel's; mirrored so that the header check covers every struct of the
// uapi.
type rawNsLimit struct {
	_ int32  `uapi:"pid"`
	_ uint32 `uapi:"flags"`
	_ uint64 `uapi:"limit"`
	_ uint64 `uapi:"entries"`
}

// ReadEvents reads straight into the caller's []Event: it must stay the
// kernel's record, field for field. A mismatch does not compile.
var (
	_ [unsafe.Sizeof(Event{}) - unsafe.Sizeof(rawEvent{})]struct{}
	_ [unsafe.Sizeof(rawEvent{}) - unsafe.Sizeof(Event{})]struct{}
	_ [unsafe.Offsetof(Event{}.ID) - unsafe.Offsetof(rawEvent{}.id)]struct{}
	_ [unsafe.Offsetof(rawEvent{}.id) - unsafe.Offsetof(Event{}.ID)]struct{}
	_ [unsafe.Offsetof(Event{}.Deadline) - unsafe.Offsetof(rawEvent{}.deadlineNS)]struct{}
	_ [unsafe.Offsetof(rawEvent{}.deadlineNS) - unsafe.Offsetof(Event{}.Deadline)]struct{}
	_ [unsafe.Offsetof(Event{}.Expired) - unsafe.Offsetof(rawEvent{}.expiredNS)]struct{}
	_ [unsafe.Offsetof(rawEvent{}.expiredNS) - unsafe.Offsetof(Event{}.Expired)]struct{}
)
