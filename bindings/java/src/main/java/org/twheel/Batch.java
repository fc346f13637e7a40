// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * A batch of ops for Wheel.submit: struct twheel_op records, built as
 * six longs each in a Java array and copied in one bulk copy into the
 * direct buffer that TWHEEL_IOC_BATCH reads and writes back in place
 * (and back again after), so a batch of thousands costs one system
 * call, and an op a few array stores rather than eight checked buffer
 * accesses. Build it, submit it, read each op's result, clear() and
 * reuse.
 */
package org.twheel;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.time.Duration;
import java.util.Objects;

/** Up to {@link #capacity()} ops, applied in order by {@link Wheel#submit(Batch)}, each with its own result. */
public final class Batch {
    static final int RECORD = 48;
    /* struct twheel_op as longs: id, timeout_ns, deadline_ns, remaining_ns, op and flags, result and slot. */
    private static final int LONGS = RECORD / 8;
    private static final int ID = 0;
    private static final int TIMEOUT = 1;
    private static final int DEADLINE = 2;
    private static final int REMAINING = 3;
    private static final int OP_FLAGS = 4;
    private static final int RESULT_SLOT = 5;
    /* Where the first of two u32 fields sits in their u64: the low half on a little-endian machine. */
    private static final boolean LE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    final ByteBuffer buf;
    private final LongBuffer longs;
    private final long[] rec;
    private int size;
    int applied;

    /** Room for {@code capacity} ops (48 bytes each). */
    public Batch(int capacity) {
        if (capacity < 1 || capacity > Integer.MAX_VALUE / RECORD)
            throw new IllegalArgumentException("capacity not in 1.." + Integer.MAX_VALUE / RECORD + ": " + capacity);
        buf = ByteBuffer.allocateDirect(capacity * RECORD).order(ByteOrder.nativeOrder());
        longs = buf.asLongBuffer();
        rec = new long[capacity * LONGS];
    }

    /* Two u32 fields, the first at the lower address, as the long that holds them. */
    private static long pair(int first, int second) {
        return LE ? (first & 0xffffffffL) | (long) second << 32 : (long) first << 32 | (second & 0xffffffffL);
    }

    private static int first(long pair) {
        return (int) (LE ? pair : pair >>> 32);
    }

    private static int second(long pair) {
        return (int) (LE ? pair >>> 32 : pair);
    }

    /* The records built so far into the buffer, for the kernel. */
    void store() {
        longs.put(0, rec, 0, size * LONGS);
    }

    /* The first n records back from the buffer, with the kernel's results. */
    void load(int n) {
        longs.get(0, rec, 0, n * LONGS);
    }

    /** Most ops the batch holds. */
    public int capacity() {
        return buf.capacity() / RECORD;
    }

    /** Ops in the batch. */
    public int size() {
        return size;
    }

    /** Ops of the last submit that the kernel applied (all of them unless submit threw). */
    public int applied() {
        return applied;
    }

    /** Empties the batch for reuse. */
    public Batch clear() {
        size = 0;
        applied = 0;
        return this;
    }

    private Batch put(int code, long id, long timeout, int flags) {
        if (size == capacity())
            throw new IllegalStateException("batch full: " + size + " ops");
        int o = size * LONGS;
        rec[o + ID] = id;
        rec[o + TIMEOUT] = timeout;
        rec[o + DEADLINE] = 0;
        rec[o + REMAINING] = 0;
        rec[o + OP_FLAGS] = pair(code, flags);
        rec[o + RESULT_SLOT] = 0;
        size++;
        return this;
    }

    /** ADD with the wheel's default timeout. */
    public Batch add(long id) {
        return put(Wheel.OP_ADD, id, 0, 0);
    }

    /** ADD due after {@code timeout}. */
    public Batch add(long id, Duration timeout) {
        return put(Wheel.OP_ADD, id, Wheel.nanos(timeout, "timeout"), Wheel.OPF_TIMEOUT);
    }

    /** ADD due at {@code deadlineNs} on the wheel's clock. */
    public Batch addAt(long id, long deadlineNs) {
        return put(Wheel.OP_ADD, id, Wheel.deadline(deadlineNs), Wheel.OPF_ABSTIME);
    }

    /** REFRESH to the default timeout. */
    public Batch refresh(long id) {
        return put(Wheel.OP_REFRESH, id, 0, 0);
    }

    /** REFRESH to {@code timeout}. */
    public Batch refresh(long id, Duration timeout) {
        return put(Wheel.OP_REFRESH, id, Wheel.nanos(timeout, "timeout"), Wheel.OPF_TIMEOUT);
    }

    /** REFRESH to {@code deadlineNs}. */
    public Batch refreshAt(long id, long deadlineNs) {
        return put(Wheel.OP_REFRESH, id, Wheel.deadline(deadlineNs), Wheel.OPF_ABSTIME);
    }

    /** REFRESH to {@code timeout}, adding the id if it is not live. */
    public Batch refreshOrAdd(long id, Duration timeout) {
        return put(Wheel.OP_REFRESH, id, Wheel.nanos(timeout, "timeout"), Wheel.OPF_TIMEOUT | Wheel.OPF_ADD_IF_ABSENT);
    }

    /** CANCEL. */
    public Batch cancel(long id) {
        return put(Wheel.OP_CANCEL, id, 0, 0);
    }

    /** QUERY: {@link #deadlineNs(int)} and {@link #remainingNs(int)} answer it. */
    public Batch query(long id) {
        return put(Wheel.OP_QUERY, id, 0, 0);
    }

    /** Binds the id of the last op (an ADD or REFRESH) to touch slot {@code slot}, or unbinds it ({@link Wheel#NO_SLOT}). */
    public Batch bind(int slot) {
        if (size == 0)
            throw new IllegalStateException("bind: no op to bind");
        int o = (size - 1) * LONGS;
        int code = first(rec[o + OP_FLAGS]);
        if (code != Wheel.OP_ADD && code != Wheel.OP_REFRESH)
            throw new IllegalStateException("bind: only an add or refresh binds a slot");
        rec[o + OP_FLAGS] = pair(code, second(rec[o + OP_FLAGS]) | Wheel.OPF_TOUCH);
        rec[o + RESULT_SLOT] = pair(first(rec[o + RESULT_SLOT]), Wheel.slot(slot));
        return this;
    }

    private int at(int i) {
        return Objects.checkIndex(i, size) * LONGS;
    }

    /* The op code of op {@code i} (Wheel.OP_*). */
    int code(int i) {
        return first(rec[at(i) + OP_FLAGS]);
    }

    /** The id of op {@code i}. */
    public long id(int i) {
        return rec[at(i) + ID];
    }

    /** 0 if op {@code i} succeeded, else its positive errno: ENOENT (2) for a missing id, EEXIST (17), ENOSPC (28), ... */
    public int errno(int i) {
        return -first(rec[at(i) + RESULT_SLOT]);
    }

    /** The id's deadline after op {@code i} (for a cancel, the one it had); 0 if it failed. */
    public long deadlineNs(int i) {
        return rec[at(i) + DEADLINE];
    }

    /** The deadline minus the time of op {@code i}, 0 if past or failed. */
    public long remainingNs(int i) {
        return rec[at(i) + REMAINING];
    }

    /** Throws what the single-op call would have thrown for op {@code i}'s result, if it failed. */
    public void check(int i) throws IOException {
        int err = -errno(i);
        if (err != 0)
            throw Errno.fail(err, "op " + i + " of the batch (id " + id(i) + ")", true);
    }
}
