// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The touch table of a wheel: its slots mapped from the fd as one direct
 * ByteBuffer. Storing the present time on the wheel's clock into the slot
 * an id is bound to refreshes the id, with no system call: the kernel
 * reads the slot when the id's deadline comes, or a level of its wheel
 * before (see "Touch table" in <linux/twheel.h>). Stores are release
 * stores through a VarHandle view of the buffer, so what a thread did
 * before a touch is visible to anyone who sees the touch's effect.
 *
 * The mapping lives as long as the buffer (and any view of it) is
 * reachable, not as long as the wheel is open: a store after close lands
 * in memory that is still mapped and does nothing.
 *
 * The present time of a CLOCK_MONOTONIC wheel is System.nanoTime(), with
 * no call into the library: HotSpot reads that very clock for it on
 * Linux (clock_gettime(CLOCK_MONOTONIC), in the vDSO). That is checked
 * once per JVM, a clock_gettime(2) through JNI falling between two
 * nanoTime() reads; a JVM where it does not, and a CLOCK_BOOTTIME
 * wheel, read the clock through JNI on every touch.
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
    /* The wheel's clock is System.nanoTime()'s. */
    private final boolean nanoTimeClock;

    TouchTable(ByteBuffer buf, int slots, Wheel.Clock clock) {
        this.buf = buf;
        this.slots = slots;
        this.clock = clock;
        this.nanoTimeClock = clock == Wheel.Clock.MONOTONIC && NanoTime.IS_MONOTONIC;
    }

    /* Whether System.nanoTime() reads CLOCK_MONOTONIC itself, found once per JVM. */
    static final class NanoTime {
        static final boolean IS_MONOTONIC = check();

        private static boolean check() {
            /* The same clock: its reading through JNI lies between two of nanoTime's. A preemption may part them: try again. */
            for (int i = 0; i < 8; i++) {
                long before = System.nanoTime();
                long mono = Wheel.nNow(Wheel.Clock.MONOTONIC.id);
                long after = System.nanoTime();
                if (before <= mono && mono <= after)
                    return true;
            }
            return false;
        }
    }

    /** Number of slots. */
    public int slots() {
        return slots;
    }

    /** Refreshes the id bound to {@code slot}: the wheel's clock read and one release store. */
    public void touch(int slot) {
        touchAt(slot, nanoTimeClock ? System.nanoTime() : Wheel.nNow(clock.id));
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
