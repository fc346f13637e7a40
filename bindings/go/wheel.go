// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The Wheel: one open /dev/twheel, set up, with its operations. The
// descriptor is an *os.File in non-blocking mode, so that the runtime's
// poller owns it: ReadEvents parks its goroutine rather than a thread,
// and every ioctl runs inside RawConn.Control, which holds a reference on
// the descriptor for the length of the call, so Close racing any call
// closes the descriptor only after that call is out of the kernel and a
// call after Close fails with ErrClosed instead of reaching whatever file
// reused the number. The options and the single-op methods, the same on
// every system, are api.go's.

//go:build linux

package twheel

import (
	"iter"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Wheel is a timing wheel in the kernel. All its methods are safe for
// concurrent use; ops from several goroutines are applied in some order,
// each as if alone.
type Wheel struct {
	f       *os.File
	rc      syscall.RawConn
	clock   Clock
	opts    Options
	closed  chan struct{}
	closing sync.Once
	readers chan struct{} // one token: the goroutine that may wait in read(2)
	table   *table        // nil without a touch table
	mono    monoClock
	fd      int // the number of f's descriptor: os.File.Fd would make it blocking
	spare   atomic.Pointer[ioctlCall]
}

// Open creates a wheel: it opens /dev/twheel and sets it up with @o.
// Where the device is missing or refused, the error is ErrUnavailable:
// also fs.ErrNotExist when the module is not loaded (ENOENT, or ENODEV or
// ENXIO from a device node without its driver), fs.ErrPermission when
// the process may not open it (EACCES, EPERM); its message says what to
// check. Options that the package or the kernel refuse are ErrInvalid.
func Open(o Options) (*Wheel, error) { return openAt(devicePath, o) }

// openAt is Open of the device at @path: the tests give it other files.
func openAt(path string, o Options) (*Wheel, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	clockid, _ := o.Clock.clockid() // checked
	setup := rawSetup{
		tickNS:           uint64(o.Tick),
		defaultTimeoutNS: uint64(o.DefaultTimeout),
		clockid:          uint32(clockid),
		maxEntries:       o.Cap,
		touchSlots:       o.TouchSlots,
	}
	if o.TouchSlots != 0 {
		setup.flags = setupfTouch
	}
	fd, err := retry(func() (int, error) {
		return unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, openError(path, err)
	}
	if _, err := rawIoctl(uintptr(fd), iocSetup, unsafe.Pointer(&setup)); err != nil {
		unix.Close(fd)
		return nil, callError("setup", err)
	}
	w := &Wheel{clock: o.Clock, opts: o, closed: make(chan struct{}),
		readers: make(chan struct{}, 1), fd: fd}
	if o.TouchSlots != 0 {
		if w.table, err = mapTable(fd, o.TouchSlots); err != nil {
			unix.Close(fd)
			return nil, callError("setup", err)
		}
	}
	// Non-blocking, so os.NewFile registers it with the poller.
	w.f = os.NewFile(uintptr(fd), path)
	if w.rc, err = w.f.SyscallConn(); err != nil {
		w.f.Close()
		return nil, callError("open", err)
	}
	w.mono = newMonoClock()
	return w, nil
}

// Close closes the wheel; the kernel frees it once no other descriptor
// (a dup, a child's copy) refers to it. A ReadEvents blocked meanwhile
// returns ErrClosed; so does every method called after. Close of a closed
// Wheel is ErrClosed.
func (w *Wheel) Close() error {
	if w.unopened() {
		return errUnopened("close")
	}
	err := error(os.ErrClosed)
	w.closing.Do(func() {
		close(w.closed)
		if w.table != nil {
			w.table.close()
		}
		err = w.f.Close()
	})
	return callError("close", err)
}

// Fd is the number of the wheel's descriptor, for /proc/self/fdinfo or
// to pass it on (SCM_RIGHTS, the systemd fd store), until Close. It stays
// the Wheel's: do not close it, read it or change its flags (it is
// non-blocking, as the poller needs; os.File.Fd would make it blocking,
// which is why this is not that).
func (w *Wheel) Fd() int { return w.fd }

// Do applies one op.
func (w *Wheel) Do(op Op) (Result, error) {
	var enc rawOp
	if err := op.encode(&enc); err != nil {
		return Result{}, err
	}
	if w.unopened() {
		return Result{}, opError(op.Kind.String(), op.ID, os.ErrInvalid)
	}
	c := w.call()
	defer w.done(c)
	r := &c.op
	*r = enc
	if _, err := w.control(c, iocOp, unsafe.Pointer(r)); err != nil {
		// The op's own answer is in its result field too; a failure
		// of the call itself (ErrClosed, EFAULT) is not.
		if r.result != 0 {
			err = resultErr(r.result)
		}
		return Result{}, opError(op.Kind.String(), op.ID, err)
	}
	res, err := decodeResult(r)
	if err != nil {
		return Result{}, opError(op.Kind.String(), op.ID, err)
	}
	return res, nil
}

// Batch applies the ops of @b in order with one TWHEEL_IOC_BATCH (more
// only if a signal to the process cuts the call short: the rest is sent
// again), each as if alone; Result(i) has each op's answer, and a failing
// op does not stop the batch. It returns how many ops were applied:
// b.Len(), unless the call itself failed (ErrClosed, or an op the
// encoder refused, in which case none was).
func (w *Wheel) Batch(b *Batch) (int, error) {
	b.applied = 0
	if b.err != nil {
		return 0, b.err
	}
	for b.applied < len(b.ops) {
		rest := b.ops[b.applied:]
		args := rawBatch{ops: unsafe.Pointer(&rest[0]), count: uint32(min(len(rest), maxCount))}
		n, err := w.ioctl(iocBatch, unsafe.Pointer(&args))
		if err != nil {
			return b.applied, callError("batch", err)
		}
		b.applied += n
	}
	return b.applied, nil
}

// RefreshIDs refreshes every id of @ids as @spec says, with one
// TWHEEL_IOC_REFRESH (8 bytes per id in, only failures out): the compact
// form of a batch of refreshes. It appends the ids that were not
// refreshed (not live; with AddIfAbsent, not added for want of room) to
// @failed, in order, and returns it; pass failed[:0] of a reused buffer
// to allocate nothing.
func (w *Wheel) RefreshIDs(ids []uint64, spec RefreshSpec, failed []uint64) ([]uint64, error) {
	flags, ns, err := spec.encode()
	if err != nil {
		return failed, err
	}
	args := rawRefresh{flags: flags, timeoutNS: ns}
	if len(ids) == 0 {
		return failed, nil
	}
	base := len(failed)
	failed = growLen(failed, len(ids))
	nfailed := 0
	for done := 0; done < len(ids); {
		rest := ids[done:]
		args.ids = unsafe.Pointer(&rest[0])
		args.failed = unsafe.Pointer(&failed[base+nfailed])
		args.count = uint32(min(len(rest), maxCount))
		args.nrFailed = 0
		n, err := w.ioctl(iocRefresh, unsafe.Pointer(&args))
		if err != nil {
			return failed[:base+nfailed], callError("refresh-ids", err)
		}
		done += n
		nfailed += int(args.nrFailed)
	}
	return failed[:base+nfailed], nil
}

// growLen extends @s by @n elements, reallocating only if its capacity
// is short.
func growLen(s []uint64, n int) []uint64 {
	if cap(s)-len(s) < n {
		t := make([]uint64, len(s), len(s)+n)
		copy(t, s)
		s = t
	}
	return s[:len(s)+n]
}

// dumpChunk is how many entries one TWHEEL_IOC_DUMP call asks for.
const dumpChunk = 256

// Dump lists the live ids (not expired ones waiting to be read), each
// exactly once if it stays live for the whole dump, in an order fixed for
// the wheel's life; ids added or removed meanwhile may be listed or not.
// The kernel locks the wheel only briefly at a time, so a dump of
// millions neither stalls the wheel nor the CPU. An error ends the
// sequence with (DumpEntry{}, err).
//
//	for e, err := range w.Dump() {
//		if err != nil { ... }
//		save(e.ID, e.Deadline)
//	}
func (w *Wheel) Dump() iter.Seq2[DumpEntry, error] {
	return func(yield func(DumpEntry, error) bool) {
		buf := make([]rawDumpEntry, dumpChunk)
		args := rawDump{entries: unsafe.Pointer(&buf[0]), count: dumpChunk}
		for args.cursor != dumpEnd {
			n, err := w.ioctl(iocDump, unsafe.Pointer(&args))
			if err != nil {
				yield(DumpEntry{}, callError("dump", err))
				return
			}
			for _, e := range buf[:n] {
				if !yield(DumpEntry{ID: e.id, Deadline: Instant(e.deadlineNS), Slot: e.slot}, nil) {
					return
				}
			}
		}
	}
}

// ioctlCall is one ioctl as RawConn.Control runs it. Control's func
// escapes, so a closure made at each call would be allocated, with the
// results it sets and the argument it points to: three or four objects
// per op, more CPU than the system call's own entry. A call object whose
// method value is bound once, and which holds a single op's argument
// itself, is reused instead: each Wheel keeps one spare, so a goroutine
// issuing ops one after another allocates nothing, and goroutines that
// collide allocate one each.
type ioctlCall struct {
	req uintptr
	arg unsafe.Pointer
	n   int
	err error
	op  rawOp // Do's argument
	run func(fd uintptr)
}

func (c *ioctlCall) ioctl(fd uintptr) { c.n, c.err = rawIoctl(fd, c.req, c.arg) }

// call takes the Wheel's spare call object, or makes one.
func (w *Wheel) call() *ioctlCall {
	if c := w.spare.Swap(nil); c != nil {
		return c
	}
	c := new(ioctlCall)
	c.run = c.ioctl
	return c
}

// done gives @c back as the spare, holding on to no memory of the caller.
func (w *Wheel) done(c *ioctlCall) {
	*c = ioctlCall{run: c.run}
	w.spare.Store(c)
}

// control issues @req with @arg through @c on the wheel's descriptor,
// retrying on EINTR; it returns the ioctl's non-negative result.
func (w *Wheel) control(c *ioctlCall, req uintptr, arg unsafe.Pointer) (int, error) {
	c.req, c.arg = req, arg
	if err := w.rc.Control(c.run); err != nil {
		return 0, w.closedErr(err)
	}
	return c.n, c.err
}

// ioctl is control with a call object of its own.
func (w *Wheel) ioctl(req uintptr, arg unsafe.Pointer) (int, error) {
	if w.unopened() {
		return 0, os.ErrInvalid
	}
	c := w.call()
	n, err := w.control(c, req, arg)
	w.done(c)
	return n, err
}

// unopened: a nil *Wheel or a Wheel{} not made by Open, which every
// method refuses with an error, as os.File's do.
func (w *Wheel) unopened() bool { return w == nil || w.f == nil }

func errUnopened(op string) error {
	return &Error{Op: op, Err: os.ErrInvalid, Detail: "Wheel not made by Open"}
}

// closedErr is os.ErrClosed for any error of the *os.File after Close.
func (w *Wheel) closedErr(err error) error {
	select {
	case <-w.closed:
		return os.ErrClosed
	default:
		return err
	}
}

func rawIoctl(fd, req uintptr, arg unsafe.Pointer) (int, error) {
	for {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
		runtime.KeepAlive(arg)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(r), nil
	}
}

// retry calls @f until it fails with something other than EINTR.
func retry(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
