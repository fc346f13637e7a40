// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Closing a wheel under its users: a blocked reader wakes with
 * ClosedWheelException, threads in the middle of ops, batches, refreshes
 * and dumps end with it or complete, every call after close throws it,
 * a touch table stays safe to store into, and a wheel nobody closed is
 * closed when it is collected. None of it may crash the JVM.
 */
package org.twheel;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WheelCloseTest {
    static final long WAIT_MS = TimeUnit.SECONDS.toMillis(TimerContract.WAIT_S);

    @BeforeEach
    void device() {
        Device.assumePresent();
    }

    @Test
    void closeWakesABlockedReader() throws Exception {
        Wheel w = Wheel.open(Duration.ofMillis(1), Duration.ofHours(1));
        AtomicReference<Throwable> got = new AtomicReference<>();
        CountDownLatch reading = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            reading.countDown();
            try {
                w.read(new Expirations(16), null);
            } catch (Throwable e) {
                got.set(e);
            }
        });
        reader.start();
        reading.await();
        /* Nothing can wake it but close: give it time to block in poll. */
        reader.join(200);
        assertTrue(reader.isAlive(), "read returned with nothing to read");
        w.close();
        reader.join(WAIT_MS);
        assertFalse(reader.isAlive(), "close did not wake the reader");
        assertTrue(got.get() instanceof ClosedWheelException, String.valueOf(got.get()));
    }

    @Test
    void closeUnderConcurrentCallsEndsEachCleanly() throws Exception {
        Wheel w = Wheel.open(Duration.ofMillis(1), Duration.ofSeconds(10));
        List<Thread> threads = new ArrayList<>();
        List<Throwable> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch started = new CountDownLatch(5);
        Runnable[] loops = {
            () -> {
                for (long i = 0;; i++) {
                    long id = i % 1000;
                    call(() -> w.refreshOrAdd(id, Duration.ofMillis(id % 50)));
                }
            },
            () -> {
                for (long i = 0;; i++) {
                    long id = i % 1000;
                    call(() -> w.cancel(id));
                }
            },
            () -> {
                Batch b = new Batch(256);
                for (long i = 0;; i++) {
                    b.clear();
                    for (int k = 0; k < 256; k++)
                        b.refreshOrAdd(i * 256 + k, Duration.ofMillis(k));
                    call(() -> w.submit(b));
                }
            },
            () -> { long[] ids = new long[4096]; for (;;) { call(() -> w.refreshAll(ids, 0, ids.length, null, true, null)); } },
            () -> { Expirations ev = new Expirations(64); for (;;) { call(() -> w.read(ev, null)); } },
        };
        for (Runnable loop : loops) {
            Thread t = new Thread(() -> {
                started.countDown();
                try {
                    loop.run();
                } catch (Closed e) {
                    return;
                } catch (Throwable e) {
                    wrong.add(e);
                }
            });
            threads.add(t);
            t.start();
        }
        started.await();
        Thread.sleep(300);
        w.close();
        for (Thread t : threads) {
            t.join(WAIT_MS);
            assertFalse(t.isAlive(), t + " still running after close");
        }
        assertTrue(wrong.isEmpty(), "not ClosedWheelException: " + wrong);
    }

    /* A loop's way out: the call threw ClosedWheelException. */
    static final class Closed extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    interface Call {
        void run() throws IOException;
    }

    static void call(Call c) {
        try {
            c.run();
        } catch (ClosedWheelException e) {
            throw new Closed();
        } catch (java.util.NoSuchElementException e) {
            return;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void everyCallAfterCloseThrowsClosedWheelException() throws IOException {
        Wheel w = Wheel.open(new Wheel.Config().touchSlots(4));
        w.close();
        w.close();
        assertEquals(Errno.EBADF, assertThrows(ClosedWheelException.class, () -> w.add(1)).errno());
        assertThrows(ClosedWheelException.class, () -> w.refresh(1));
        assertThrows(ClosedWheelException.class, () -> w.cancel(1));
        assertThrows(ClosedWheelException.class, () -> w.query(1));
        assertThrows(ClosedWheelException.class, () -> w.contains(1));
        assertThrows(ClosedWheelException.class, () -> w.submit(new Batch(1).add(1)));
        assertThrows(ClosedWheelException.class, () -> w.refreshAll(1, 2));
        assertThrows(ClosedWheelException.class, () -> w.read(new Expirations(1), null));
        assertThrows(ClosedWheelException.class, () -> w.dump());
        assertThrows(ClosedWheelException.class, () -> w.stats());
        assertThrows(ClosedWheelException.class, () -> w.touchTable());
    }

    @Test
    void touchTableStaysSafeAfterClose() throws IOException {
        Wheel w = Wheel.open(new Wheel.Config().touchSlots(8));
        TouchTable t = w.touchTable();
        w.add(3, Duration.ofSeconds(1), 3);
        w.close();
        t.touch(3);
        t.buffer().putLong(0, 42);
        assertTrue(t.stamp(3) > 0);
    }

    @Test
    void unclosedWheelsAreClosedWhenCollected() throws Exception {
        long before = openFds();
        for (int i = 0; i < 200; i++)
            Wheel.open(Duration.ofMillis(1), Duration.ofSeconds(1)).add(i);
        assertTrue(openFds() >= before + 200, "the wheels are open");
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (openFds() > before + 20 && System.nanoTime() < end) {
            System.gc();
            Thread.sleep(50);
        }
        assertTrue(openFds() <= before + 20, "fds of collected wheels stayed open: " + (openFds() - before));
    }

    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
