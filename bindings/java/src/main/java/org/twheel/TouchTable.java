// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The touch table of a wheel: its slots mapped from the fd as one direct
 * ByteBuffer. Storing the present time on the wheel's clock into the slot
 * an id is bound to refreshes the id, with no system call: the kernel
 * reads the slot only when the id's deadline comes (see "Touch table" in
 * <linux/twheel.h>). Stores are release stores through a VarHandle view
 * of the buffer, so what a thread did before a touch is visible to
 * anyone who sees the touch's effect.
 *
 * The mapping lives as long as the buffer (and any view of it) is
 * reachable, not as long as the wheel is open: a store after close lands
 * in memory that is still mapped and does nothing.
 */
package org.twheel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/** A wheel's touch table: {@link #slots()} 64-bit time stamps shared with the kernel. */
public final class TouchTable {
    private static final VarHandle SLOT = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buf;
    private final int slots;
    private final Wheel.Clock clock;

    TouchTable(ByteBuffer buf, int slots, Wheel.Clock clock) {
        this.buf = buf;
        this.slots = slots;
        this.clock = clock;
    }

    /** Number of slots. */
    public int slots() {
        return slots;
    }

    /** Refreshes the id bound to {@code slot}: the wheel's clock read and one release store. */
    public void touch(int slot) {
        touchAt(slot, Wheel.nNow(clock.id));
    }

    /** Stores {@code nowNs}, a time read from the wheel's clock, into {@code slot}. */
    public void touchAt(int slot, long nowNs) {
        SLOT.setRelease(buf, Objects.checkIndex(slot, slots) * 8, nowNs);
    }

    /** The stamp {@code slot} holds now. */
    public long stamp(int slot) {
        return (long) SLOT.getAcquire(buf, Objects.checkIndex(slot, slots) * 8);
    }

    /**
     * The table itself, a view in native byte order over the mapping
     * (slot {@code i} at byte {@code 8 * i}), for callers that store with
     * their own VarHandle. It keeps the mapping alive while reachable.
     */
    public ByteBuffer buffer() {
        return buf.duplicate().order(ByteOrder.nativeOrder());
    }
}
