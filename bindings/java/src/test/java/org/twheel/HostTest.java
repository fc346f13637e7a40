// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * What holds without the device: the native library loads from the jar
 * (or the build's classes), bad input is refused before any system call,
 * and where the module is absent both APIs say so with the errno.
 */
package org.twheel;

import org.junit.jupiter.api.Test;

import java.io.UncheckedIOException;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class HostTest {
    @Test
    void nativeLibraryIsInTheJarAndLoads() {
        assertNotNull(Wheel.class.getClassLoader().getResource(NativeLoader.RESOURCE));
        long a = System.nanoTime();
        long now = Wheel.Clock.MONOTONIC.now();
        long b = System.nanoTime();
        /* System.nanoTime() reads CLOCK_MONOTONIC on Linux, as Wheel.Clock says. */
        assertTrue(now >= a - 1_000_000 && now <= b + 1_000_000, "CLOCK_MONOTONIC " + now + " not in [" + a + ", " + b + "]");
        assertTrue(Wheel.Clock.BOOTTIME.now() >= now);
    }

    /* TouchTable.touch() stamps CLOCK_MONOTONIC wheels with System.nanoTime(): HotSpot's is that clock. */
    @Test
    void nanoTimeIsTheMonotonicClockTouchesStamp() {
        assertTrue(TouchTable.NanoTime.IS_MONOTONIC, "System.nanoTime() is not CLOCK_MONOTONIC here");
    }

    @Test
    void errnoTextNamesTheErrno() {
        assertTrue(Errno.describe(Errno.ENOSPC).startsWith("ENOSPC ("), Errno.describe(Errno.ENOSPC));
    }

    @Test
    void withoutTheModuleOpenFailsWithEnoent() {
        assumeFalse(Device.present(), "the module is loaded here");
        Throwable cause = Wheel.unavailabilityCause();
        TwheelException e = assertInstanceOf(TwheelException.class, cause);
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().contains(Wheel.DEVICE), e.getMessage());
        assertFalse(TwheelTimer.isAvailable());
        UncheckedIOException u = assertThrows(UncheckedIOException.class, TwheelTimer::new);
        assertInstanceOf(TwheelException.class, u.getCause());
    }

    @Test
    void badConfigIsRefusedBeforeTheDevice() {
        assertThrows(IllegalArgumentException.class, () -> Wheel.open(Duration.ofMillis(-1), Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> Wheel.open(Duration.ofMillis(1), Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class,
                () -> Wheel.open(Duration.ofMillis(1), Duration.ofSeconds(Long.MAX_VALUE)));
        assertThrows(IllegalArgumentException.class, () -> new Wheel.Config().maxEntries(-1));
        assertThrows(IllegalArgumentException.class, () -> new Wheel.Config().touchSlots(Wheel.TOUCH_MAX_SLOTS + 1));
        assertThrows(NullPointerException.class, () -> new Wheel.Config().tick(null));
    }

    @Test
    void batchKeepsWithinItsCapacity() {
        Batch b = new Batch(2).add(1).cancel(2);
        assertThrows(IllegalStateException.class, () -> b.add(3));
        assertThrows(IllegalStateException.class, () -> b.bind(0), "bind of a cancel");
        assertThrows(IndexOutOfBoundsException.class, () -> b.errno(2));
        assertThrows(IllegalStateException.class, () -> new Batch(1).bind(0), "bind with no op");
        assertThrows(IllegalArgumentException.class, () -> new Batch(1).add(1, Duration.ofMillis(-5)));
        assertThrows(IllegalArgumentException.class, () -> new Batch(1).addAt(1, -5));
        assertThrows(IllegalArgumentException.class, () -> new Batch(0));
        assertEquals(0, b.clear().size());
    }

    @Test
    void expirationsKeepWithinWhatWasRead() {
        Expirations ev = new Expirations(4);
        assertEquals(4, ev.capacity());
        assertEquals(0, ev.size());
        assertThrows(IndexOutOfBoundsException.class, () -> ev.id(0));
        assertThrows(IllegalArgumentException.class, () -> new Expirations(0));
    }
}
