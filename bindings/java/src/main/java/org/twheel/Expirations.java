// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * A reusable buffer of expirations for Wheel.read: struct twheel_event
 * records as read(2) writes them, in a direct buffer the kernel fills
 * in place, read back without copying or allocating.
 */
package org.twheel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/** Room for {@link #capacity()} expirations, of which the last read filled {@link #size()}. */
public final class Expirations {
    static final int RECORD = 24;

    final ByteBuffer buf;
    int size;

    /** Room for {@code capacity} expirations (24 bytes each). */
    public Expirations(int capacity) {
        if (capacity < 1 || capacity > Integer.MAX_VALUE / RECORD)
            throw new IllegalArgumentException("capacity not in 1.." + Integer.MAX_VALUE / RECORD + ": " + capacity);
        buf = ByteBuffer.allocateDirect(capacity * RECORD).order(ByteOrder.nativeOrder());
    }

    /** How many expirations one read may return. */
    public int capacity() {
        return buf.capacity() / RECORD;
    }

    /** How many the last read returned. */
    public int size() {
        return size;
    }

    /** The id of expiration {@code i}; it is no longer in the wheel. */
    public long id(int i) {
        return buf.getLong(Objects.checkIndex(i, size) * RECORD);
    }

    /** Its deadline on the wheel's clock, on the tick grid. */
    public long deadlineNs(int i) {
        return buf.getLong(Objects.checkIndex(i, size) * RECORD + 8);
    }

    /** When the wheel processed it: never before {@link #deadlineNs(int)}. */
    public long expiredNs(int i) {
        return buf.getLong(Objects.checkIndex(i, size) * RECORD + 16);
    }
}
