// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Operations on ids: Op, the one description of an ADD, REFRESH, CANCEL or
// QUERY that the single-op methods and Batch share, and its encoding into
// the kernel's struct twheel_op. The encoder refuses only what the ABI
// cannot carry (a negative timeout, a timeout and a deadline at once);
// every other rule is the kernel's to enforce, so the two never disagree.
// None of this calls the kernel: it is the same on every system.

package twheel

import (
	"time"
)

// Kind is what an Op does.
type Kind uint32

const (
	// OpAdd makes an id live; ErrExists if it is live already.
	OpAdd Kind = opAdd
	// OpRefresh moves a live id's deadline, later or earlier; ErrNotFound
	// if it is not live, unless AddIfAbsent.
	OpRefresh Kind = opRefresh
	// OpCancel removes a live id: its expiry is never reported.
	OpCancel Kind = opCancel
	// OpQuery reads a live id's deadline and the time left.
	OpQuery Kind = opQuery
)

func (k Kind) String() string {
	switch k {
	case OpAdd:
		return "add"
	case OpRefresh:
		return "refresh"
	case OpCancel:
		return "cancel"
	case OpQuery:
		return "query"
	}
	return "op"
}

// NoSlot, as an Op's Slot with Bind, unbinds the id from its touch slot.
const NoSlot uint32 = slotNone

// Op is one operation on one id.
type Op struct {
	Kind Kind
	// ID is the caller's id; every value, 0 and ^0 included, is valid.
	ID uint64
	// Timeout (OpAdd, OpRefresh) is the time from now to the deadline,
	// rounded up to the tick grid. Zero selects the wheel's default
	// timeout; any positive duration, even 1ns, is at least the next
	// tick. Negative is ErrInvalid.
	Timeout time.Duration
	// Deadline (OpAdd, OpRefresh, with Abs) is the absolute deadline on
	// the wheel's clock, rounded up to the tick grid; one already past
	// fires at the next tick. Timeout must then be 0.
	Deadline Instant
	Abs      bool
	// AddIfAbsent (OpRefresh) adds the id when it is not live.
	AddIfAbsent bool
	// Bind (OpAdd, OpRefresh, on a wheel with a touch table) binds the id
	// to touch slot Slot, or unbinds it if Slot is NoSlot. Without it, an
	// add leaves the id unbound and a refresh leaves its binding alone.
	Bind bool
	Slot uint32
}

// Result is what the kernel answered to a successful op.
type Result struct {
	// Deadline is the id's deadline after the op (for OpCancel, the one
	// it had), on the tick grid.
	Deadline Instant
	// Remaining is Deadline minus the time of the op, 0 if that is past.
	Remaining time.Duration
}

// encode fills @r from @op; the out fields are zeroed. A refusal is an
// *Error naming the op and its id.
func (op *Op) encode(r *rawOp) error {
	*r = rawOp{id: op.ID, op: uint32(op.Kind)}
	switch {
	case op.Timeout < 0:
		return op.invalid("negative timeout " + op.Timeout.String())
	case op.Abs && op.Timeout != 0:
		return op.invalid("both a timeout and an absolute deadline")
	case op.Abs:
		r.flags |= opfAbstime
		r.timeoutNS = uint64(op.Deadline)
	case op.Timeout > 0:
		r.flags |= opfTimeout
		r.timeoutNS = uint64(op.Timeout)
	}
	if op.AddIfAbsent {
		r.flags |= opfAddIfAbsent
	}
	if op.Bind {
		r.flags |= opfTouch
		r.slot = op.Slot
	}
	return nil
}

func (op *Op) invalid(detail string) *Error {
	e := invalid(op.Kind.String(), detail)
	e.ID, e.HasID = op.ID, true
	return e
}

// decode reads the answer of the kernel to the op in @r.
func decodeResult(r *rawOp) (Result, error) {
	if err := resultErr(r.result); err != nil {
		return Result{}, err
	}
	rem := time.Duration(maxInt64)
	if r.remainingNS <= maxInt64 {
		rem = time.Duration(r.remainingNS)
	}
	return Result{Deadline: Instant(r.deadlineNS), Remaining: rem}, nil
}

// Batch is a list of ops for Wheel.Batch, which applies them in order in
// one system call, each with its own result. The zero value is an empty
// batch; Reset empties it for reuse without freeing its memory. A Batch
// is not safe for concurrent use.
//
// The ops are kept encoded, as the kernel reads them, and an op's Kind is
// its op field: pushing an op is a copy into the array, and a Result is
// read from it with no allocation unless it is an error.
type Batch struct {
	ops     []rawOp
	applied int
	err     error // the first op the encoder refused
}

// Push appends @op. An op the encoder refuses (a negative timeout) makes
// Wheel.Batch fail as a whole, before any system call, with its error.
func (b *Batch) Push(op Op) {
	var r rawOp
	if err := op.encode(&r); err != nil && b.err == nil {
		e := err.(*Error)
		e.Op = "batch " + e.Op
		b.err = e
	}
	b.ops = append(b.ops, r)
}

// timed appends op @kind of @id with @timeout: Push's encoding of an op
// with no deadline, slot or flag but the timeout, without building the Op.
func (b *Batch) timed(kind Kind, id uint64, timeout time.Duration) {
	if timeout < 0 {
		b.Push(Op{Kind: kind, ID: id, Timeout: timeout})
		return
	}
	r := rawOp{id: id, op: uint32(kind)}
	if timeout > 0 {
		r.flags, r.timeoutNS = opfTimeout, uint64(timeout)
	}
	b.ops = append(b.ops, r)
}

// Add appends an OpAdd of @id with @timeout (0: the wheel's default).
func (b *Batch) Add(id uint64, timeout time.Duration) { b.timed(OpAdd, id, timeout) }

// Refresh appends an OpRefresh of @id with @timeout (0: the default).
func (b *Batch) Refresh(id uint64, timeout time.Duration) { b.timed(OpRefresh, id, timeout) }

// Cancel appends an OpCancel of @id.
func (b *Batch) Cancel(id uint64) { b.timed(OpCancel, id, 0) }

// Query appends an OpQuery of @id.
func (b *Batch) Query(id uint64) { b.timed(OpQuery, id, 0) }

// Len is the number of ops in the batch.
func (b *Batch) Len() int { return len(b.ops) }

// Applied is how many ops the last Wheel.Batch applied.
func (b *Batch) Applied() int { return b.applied }

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	b.ops, b.applied, b.err = b.ops[:0], 0, nil
}

// Result is the answer to op @i of the last Wheel.Batch: its Result, or
// its error (ErrNotFound, ErrExists, ...). An op the batch did not reach
// (i >= Applied) or an index out of range is ErrInvalid.
func (b *Batch) Result(i int) (Result, error) {
	if i < 0 || i >= len(b.ops) {
		return Result{}, invalid("batch result", "index out of range")
	}
	r := &b.ops[i]
	if i >= b.applied {
		e := invalid("batch "+Kind(r.op).String(), "op not applied")
		e.ID, e.HasID = r.id, true
		return Result{}, e
	}
	res, err := decodeResult(r)
	if err != nil {
		return res, opError("batch "+Kind(r.op).String(), r.id, err)
	}
	return res, nil
}
