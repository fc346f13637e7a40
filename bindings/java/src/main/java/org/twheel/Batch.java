// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * A batch of ops for Wheel.submit: struct twheel_op records, written
 * straight into a direct buffer that TWHEEL_IOC_BATCH reads and writes
 * back in place, so a batch of thousands costs one system call and no
 * copy. Build it, submit it, read each op's result, clear() and reuse.
 */
package org.twheel;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Objects;

/** Up to {@link #capacity()} ops, applied in order by {@link Wheel#submit(Batch)}, each with its own result. */
public final class Batch {
    static final int RECORD = 48;
    private static final int ID = 0;
    private static final int TIMEOUT = 8;
    private static final int DEADLINE = 16;
    private static final int REMAINING = 24;
    private static final int OP = 32;
    private static final int FLAGS = 36;
    private static final int RESULT = 40;
    private static final int SLOT = 44;

    final ByteBuffer buf;
    private int size;
    int applied;

    /** Room for {@code capacity} ops (48 bytes each). */
    public Batch(int capacity) {
        if (capacity < 1 || capacity > Integer.MAX_VALUE / RECORD)
            throw new IllegalArgumentException("capacity not in 1.." + Integer.MAX_VALUE / RECORD + ": " + capacity);
        buf = ByteBuffer.allocateDirect(capacity * RECORD).order(ByteOrder.nativeOrder());
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
        int o = size * RECORD;
        buf.putLong(o + ID, id).putLong(o + TIMEOUT, timeout).putLong(o + DEADLINE, 0).putLong(o + REMAINING, 0)
                .putInt(o + OP, code).putInt(o + FLAGS, flags).putInt(o + RESULT, 0).putInt(o + SLOT, 0);
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
        int o = (size - 1) * RECORD;
        int code = buf.getInt(o + OP);
        if (code != Wheel.OP_ADD && code != Wheel.OP_REFRESH)
            throw new IllegalStateException("bind: only an add or refresh binds a slot");
        buf.putInt(o + FLAGS, buf.getInt(o + FLAGS) | Wheel.OPF_TOUCH).putInt(o + SLOT, Wheel.slot(slot));
        return this;
    }

    private int at(int i) {
        return Objects.checkIndex(i, size) * RECORD;
    }

    /* The op code of op {@code i} (Wheel.OP_*). */
    int code(int i) {
        return buf.getInt(at(i) + OP);
    }

    /** The id of op {@code i}. */
    public long id(int i) {
        return buf.getLong(at(i) + ID);
    }

    /** 0 if op {@code i} succeeded, else its positive errno: ENOENT (2) for a missing id, EEXIST (17), ENOSPC (28), ... */
    public int errno(int i) {
        return -buf.getInt(at(i) + RESULT);
    }

    /** The id's deadline after op {@code i} (for a cancel, the one it had); 0 if it failed. */
    public long deadlineNs(int i) {
        return buf.getLong(at(i) + DEADLINE);
    }

    /** The deadline minus the time of op {@code i}, 0 if past or failed. */
    public long remainingNs(int i) {
        return buf.getLong(at(i) + REMAINING);
    }

    /** Throws what the single-op call would have thrown for op {@code i}'s result, if it failed. */
    public void check(int i) throws IOException {
        int err = -errno(i);
        if (err != 0)
            throw Errno.fail(err, "op " + i + " of the batch (id " + id(i) + ")", true);
    }
}
