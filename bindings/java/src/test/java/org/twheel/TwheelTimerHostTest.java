// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * TwheelTimer's answers to a machine that may lack the module, which run
 * on the host: orHashedWheelTimer falls back to a working
 * HashedWheelTimer and says why once per JVM (in a JVM of its own, the
 * only way to see "once per JVM"); isAvailable() is found once for all
 * threads; and a worker whose read fails leaves a timer that refuses new
 * timeouts as a stopped one does, its pending ones returned by stop()
 * (through the Ops seam: no wheel's read fails on demand). In the VM,
 * with the module, the first two check the other branch: a TwheelTimer
 * and no log line.
 */
package org.twheel;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.concurrent.ImmediateExecutor;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TwheelTimerHostTest {
    static final String FALLBACK_LOG = "TwheelTimer is not available here";

    /*
     * The child JVM: Netty's logging on java.util.logging (stderr), three
     * timers from orHashedWheelTimer, a timeout on the first that must run.
     */
    public static final class FallbackMain {
        public static void main(String[] args) throws Exception {
            InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
            Timer a = TwheelTimer.orHashedWheelTimer(10, MILLISECONDS);
            Timer b = TwheelTimer.orHashedWheelTimer();
            Timer c = TwheelTimer.orHashedWheelTimer(Executors.defaultThreadFactory(), 10, MILLISECONDS, 64, false,
                    16, ImmediateExecutor.INSTANCE);
            CountDownLatch ran = new CountDownLatch(1);
            a.newTimeout(t -> ran.countDown(), 20, MILLISECONDS);
            boolean fired = ran.await(TimerContract.WAIT_S, TimeUnit.SECONDS);
            System.out.println("timers=" + a.getClass().getName() + "," + b.getClass().getName() + ","
                    + c.getClass().getName() + " fired=" + fired);
            a.stop();
            b.stop();
            c.stop();
        }
    }

    @Test
    void orHashedWheelTimerFallsBackToAWorkingTimerAndLogsOncePerJvm() throws Exception {
        String out = ExamplesTest.run("", FallbackMain.class.getName());
        long logged = out.lines().filter(l -> l.contains(FALLBACK_LOG)).count();
        if (Device.present()) {
            String tw = TwheelTimer.class.getName();
            assertTrue(out.contains("timers=" + tw + "," + tw + "," + tw + " fired=true"), out);
            assertEquals(0, logged, out);
            return;
        }
        String hw = HashedWheelTimer.class.getName();
        assertTrue(out.contains("timers=" + hw + "," + hw + "," + hw + " fired=true"), out);
        assertEquals(1, logged, out);
        /* The line says why, as Wheel.open would have: the device and its errno. */
        String line = out.lines().filter(l -> l.contains(FALLBACK_LOG)).findFirst().orElseThrow();
        assertTrue(line.contains("INFO") && line.contains("ENOENT") && line.contains(Wheel.DEVICE), line);
    }

    @Test
    void isAvailableIsFoundOnceForEveryThread() throws Exception {
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        Set<Object> answers = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Thread> all = new ArrayList<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Object none = new Object();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int k = 0; k < 50; k++) {
                        Throwable why = TwheelTimer.unavailabilityCause();
                        assertEquals(why == null, TwheelTimer.isAvailable());
                        assertEquals(why == null, Wheel.isAvailable());
                        synchronized (answers) {
                            answers.add(why == null ? none : why);
                        }
                    }
                } catch (Throwable e) {
                    error.compareAndSet(null, e);
                }
            });
            t.start();
            all.add(t);
        }
        for (Thread t : all)
            t.join();
        if (error.get() != null)
            throw new AssertionError(error.get());
        /* One answer, the same object every time: one probe for all 400 calls and all threads. */
        assertEquals(1, answers.size(), "distinct answers of 400 calls");
        assertEquals(1, Wheel.availabilityProbes());
        assertEquals(Device.present(), TwheelTimer.isAvailable());
        if (!Device.present())
            assertSame(Wheel.unavailabilityCause(), TwheelTimer.unavailabilityCause());
    }

    /* A wheel in the timer's terms whose read waits until told to fail, as a read(2) with EIO would. */
    static final class FailingReadOps implements TwheelTimer.Ops {
        final CountDownLatch fail = new CountDownLatch(1);
        final Set<Long> live = ConcurrentHashMap.newKeySet();
        /* The ids of the worker's batches. */
        final Set<Long> submitted = ConcurrentHashMap.newKeySet();
        final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public long add(long id, long timeoutNs) {
            return live.add(id) ? timeoutNs : -Errno.EEXIST;
        }

        @Override
        public long cancel(long id) {
            return live.remove(id) ? 0 : -Errno.ENOENT;
        }

        @Override
        public void submit(Batch batch) {
            for (int i = 0; i < batch.size(); i++)
                submitted.add(batch.id(i));
        }

        @Override
        public long now() {
            return System.nanoTime();
        }

        @Override
        public int read(Expirations ev, long timeoutNs) throws IOException {
            try {
                fail.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new TwheelException("read: EIO (Input/output error)", 5);
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    @Test
    void aDeadWorkerRefusesNewTimeoutsAndStopReturnsThePendingOnes() throws Exception {
        FailingReadOps ops = new FailingReadOps();
        AtomicReference<Thread> worker = new AtomicReference<>();
        TwheelTimer timer = new TwheelTimer(r -> {
            Thread t = new Thread(r, "twheel-timer-test");
            worker.set(t);
            return t;
        }, 10, MILLISECONDS, 512, false, -1, ImmediateExecutor.INSTANCE, tickNs -> ops);
        AtomicBoolean ran = new AtomicBoolean();
        Timeout pending = timer.newTimeout(t -> ran.set(true), 1, HOURS);
        ops.fail.countDown();
        worker.get().join(TimeUnit.SECONDS.toMillis(TimerContract.WAIT_S));
        assertFalse(worker.get().isAlive(), "the worker outlived its read's failure");

        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> timer.newTimeout(t -> ran.set(true), 1, MILLISECONDS));
        assertInstanceOf(TwheelException.class, e.getCause());
        assertEquals(1, timer.pendingTimeouts(), "the refused timeout is not counted");
        /* The pending one went (or not) in the worker's batch; the refused one went nowhere. */
        assertTrue(ops.live.isEmpty() && ops.submitted.size() <= 1, "the refused timeout reached the wheel");

        assertEquals(Set.of(pending), timer.stop());
        assertTrue(pending.isCancelled());
        assertFalse(ran.get());
        assertTrue(ops.closed.get());
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> ran.set(true), 1, MILLISECONDS));
    }
}
