// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The touch table through its ByteBuffer: a store into a bound id's slot
 * keeps it alive with no system call, as the kernel's look at its
 * deadline finds; the view shares the mapping in native order; slots
 * outside the table are refused. Skipped without /dev/twheel.
 */
package org.twheel;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteOrder;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TouchTableTest {
    static final long MS = 1_000_000;

    /* The stamp of touch() is the wheel's present, read without JNI on a monotonic wheel. */
    @Test
    void aTouchStampsThePresentOnTheWheelsClock() throws Exception {
        Device.assumePresent();
        for (Wheel.Clock clock : Wheel.Clock.values()) {
            try (Wheel w = Wheel.open(new Wheel.Config().tick(Duration.ofMillis(5)).timeout(Duration.ofSeconds(1))
                    .clock(clock).touchSlots(4))) {
                TouchTable t = w.touchTable();
                long before = w.now();
                t.touch(2);
                long after = w.now();
                long stamp = t.stamp(2);
                assertTrue(before <= stamp && stamp <= after,
                        clock + ": stamp " + stamp + " not within [" + before + ", " + after + "]");
            }
        }
    }

    @Test
    void aTouchKeepsItsIdAliveForOneTimeoutMore() throws Exception {
        Device.assumePresent();
        Duration timeout = Duration.ofMillis(300);
        /*
         * The touch counts only if it is stored before the kernel looks
         * at the id's deadline; a VM that stalls past it shows as an event
         * whose deadline precedes the stamp, and that round is tried again.
         */
        for (int round = 0; round < 5; round++) {
            try (Wheel w = Wheel.open(new Wheel.Config().tick(Duration.ofMillis(5)).timeout(timeout).touchSlots(16))) {
                TouchTable t = w.touchTable();
                long armed = w.add(7, timeout, 3);
                /* A touch within the deadline's own tick would round to the same deadline. */
                Thread.sleep(50);
                t.touch(3);
                long touched = w.now();
                long stamp = t.stamp(3);
                Expirations ev = new Expirations(4);
                assertEquals(1, w.read(ev, Duration.ofSeconds(TimerContract.WAIT_S)), "the id expired at last");
                assertEquals(7, ev.id(0));
                assertTrue(ev.expiredNs(0) >= ev.deadlineNs(0));
                /*
                 * Not re-armed: the kernel looked before the store, or so
                 * late that stamp + timeout had passed too.
                 */
                if (ev.deadlineNs(0) == armed
                        && (touched >= ev.expiredNs(0) || ev.expiredNs(0) >= stamp + timeout.toNanos()))
                    continue;
                assertTrue(ev.deadlineNs(0) >= stamp + timeout.toNanos(),
                        "the touch did not re-arm: deadline " + ev.deadlineNs(0) + ", stamp " + stamp);
                assertEquals(1, w.stats().get("touch_rearms"));
                return;
            }
        }
        throw new AssertionError("the touch was late in every round: the VM stalls > 300 ms");
    }

    @Test
    void theBufferIsTheTableInNativeOrder() throws IOException {
        Device.assumePresent();
        try (Wheel w = Wheel.open(new Wheel.Config().touchSlots(4))) {
            TouchTable t = w.touchTable();
            assertSame(t, w.touchTable());
            assertEquals(4, t.slots());
            t.touchAt(2, 12345);
            assertEquals(ByteOrder.nativeOrder(), t.buffer().order());
            assertEquals(12345, t.buffer().getLong(16));
            t.buffer().putLong(8, 777);
            assertEquals(777, t.stamp(1));
            assertThrows(IndexOutOfBoundsException.class, () -> t.touch(4));
            assertThrows(IndexOutOfBoundsException.class, () -> t.touch(-1));
            assertThrows(IllegalArgumentException.class, () -> w.add(1, Duration.ofSeconds(1), 4),
                    "binding a slot outside the table");
            w.add(1, Duration.ofSeconds(60), 0);
            assertEquals(0, w.dump().get(0).slot());
        }
    }
}
