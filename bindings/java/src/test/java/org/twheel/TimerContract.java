// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Netty's contract for io.netty.util.Timer, as HashedWheelTimer's Javadoc
 * and code (netty-common 4.1) define it, written once and run against
 * HashedWheelTimer itself (HashedWheelTimerContractTest: proof that the
 * tests describe Netty) and against TwheelTimer (TwheelTimerContractTest:
 * proof that it is a drop-in). Each test is one promise. Timing checks
 * allow for a slow VM in how long they wait, never in what they accept:
 * a task is never early, never runs twice, never runs after a successful
 * cancel.
 */
package org.twheel;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import io.netty.util.concurrent.ImmediateExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

abstract class TimerContract {
    /* Long enough for any VM to get there; only a broken timer waits this long. */
    static final long WAIT_S = 60;
    static final long TICK_MS = 10;

    private final List<Timer> timers = new ArrayList<>();
    private final List<ExecutorService> executors = new ArrayList<>();

    /** The timer under test, from HashedWheelTimer's fullest constructor's arguments. */
    abstract Timer create(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection, long maxPendingTimeouts, Executor taskExecutor);

    /** The timer's pendingTimeouts(), which both classes have but Timer does not declare. */
    abstract long pendingTimeouts(Timer timer);

    Timer timer(ThreadFactory tf, long maxPending, Executor ex) {
        Timer t = create(tf, TICK_MS, MILLISECONDS, 512, false, maxPending, ex);
        timers.add(t);
        return t;
    }

    Timer timer() {
        return timer(Executors.defaultThreadFactory(), -1, ImmediateExecutor.INSTANCE);
    }

    @AfterEach
    void stopAll() {
        for (Timer t : timers)
            t.stop();
        for (ExecutorService e : executors)
            e.shutdownNow();
    }

    static void await(CountDownLatch latch, String what) throws InterruptedException {
        assertTrue(latch.await(WAIT_S, TimeUnit.SECONDS), what + " within " + WAIT_S + " s");
    }

    /* A timeout after all others: when it has run, every earlier deadline has been processed. */
    static void barrier(Timer timer, long delayMs) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        timer.newTimeout(t -> done.countDown(), delayMs, MILLISECONDS);
        await(done, "barrier timeout ran");
    }

    @Test
    void taskRunsOnceAndNeverBeforeItsDelay() throws Exception {
        Timer timer = timer();
        AtomicInteger runs = new AtomicInteger();
        AtomicLong ranAt = new AtomicLong();
        CountDownLatch ran = new CountDownLatch(1);
        long start = System.nanoTime();
        timer.newTimeout(t -> {
            ranAt.set(System.nanoTime());
            runs.incrementAndGet();
            ran.countDown();
        }, 150, MILLISECONDS);
        await(ran, "task ran");
        assertTrue(ranAt.get() - start >= MILLISECONDS.toNanos(150),
                "ran " + (ranAt.get() - start) + " ns after newTimeout, before its 150 ms");
        barrier(timer, 100);
        assertEquals(1, runs.get(), "runs");
    }

    @Test
    void taskGetsItsOwnTimeoutExpired() throws Exception {
        Timer timer = timer();
        AtomicReference<Timeout> seen = new AtomicReference<>();
        AtomicReference<String> state = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        TimerTask task = t -> {
            seen.set(t);
            state.set("expired=" + t.isExpired() + " cancelled=" + t.isCancelled());
            ran.countDown();
        };
        Timeout timeout = timer.newTimeout(task, 20, MILLISECONDS);
        await(ran, "task ran");
        assertSame(timeout, seen.get());
        assertEquals("expired=true cancelled=false", state.get());
        assertSame(task, timeout.task());
        assertSame(timer, timeout.timer());
    }

    @Test
    void pendingTimeoutIsNeitherExpiredNorCancelled() {
        Timeout t = timer().newTimeout(x -> { }, 1, HOURS);
        assertFalse(t.isExpired());
        assertFalse(t.isCancelled());
    }

    @Test
    void cancelBeforeExpiryKeepsTheTaskFromRunning() throws Exception {
        Timer timer = timer();
        AtomicInteger runs = new AtomicInteger();
        long start = System.nanoTime();
        Timeout t = timer.newTimeout(x -> runs.incrementAndGet(), 100, MILLISECONDS);
        boolean cancelled = t.cancel();
        /* Only a stall past the delay lets the task expire first. */
        assumeTrue(cancelled || System.nanoTime() - start < MILLISECONDS.toNanos(100),
                "the test stalled past the delay before the cancel");
        assertTrue(cancelled);
        assertTrue(t.isCancelled());
        assertFalse(t.isExpired());
        barrier(timer, 300);
        assertEquals(0, runs.get(), "a cancelled task ran");
    }

    @Test
    void cancelAfterExpiryReturnsFalse() throws Exception {
        Timer timer = timer();
        CountDownLatch ran = new CountDownLatch(1);
        Timeout t = timer.newTimeout(x -> ran.countDown(), 10, MILLISECONDS);
        await(ran, "task ran");
        assertFalse(t.cancel());
        assertFalse(t.isCancelled());
        assertTrue(t.isExpired());
    }

    @Test
    void secondCancelReturnsFalse() {
        Timeout t = timer().newTimeout(x -> { }, 1, HOURS);
        assertTrue(t.cancel());
        assertFalse(t.cancel());
        assertTrue(t.isCancelled());
    }

    @Test
    void tasksRunInDeadlineOrder() throws Exception {
        Timer timer = timer();
        long[] delays = { 250, 50, 200, 100, 150 };
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch all = new CountDownLatch(delays.length);
        /* Each deadline is in [lo, hi]: a stall between two calls may swap the delays' order. */
        long[] lo = new long[delays.length], hi = new long[delays.length];
        for (int i = 0; i < delays.length; i++) {
            int k = i;
            lo[i] = System.nanoTime() + MILLISECONDS.toNanos(delays[i]);
            timer.newTimeout(t -> {
                order.add(k);
                all.countDown();
            }, delays[i], MILLISECONDS);
            hi[i] = System.nanoTime() + MILLISECONDS.toNanos(delays[i]);
        }
        await(all, "all tasks ran");
        assertEquals(Set.of(0, 1, 2, 3, 4), new HashSet<>(order));
        /* Within a tick the order is free; a task due a tick before another runs first. */
        for (int i = 0; i < order.size(); i++)
            for (int j = i + 1; j < order.size(); j++)
                assertTrue(lo[order.get(i)] <= hi[order.get(j)] + MILLISECONDS.toNanos(TICK_MS),
                        "delay " + delays[order.get(i)] + " ran before " + delays[order.get(j)] + ": " + order);
    }

    @Test
    void negativeDelayRunsSoon() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        timer().newTimeout(t -> ran.countDown(), -1, TimeUnit.SECONDS);
        await(ran, "task with a negative delay ran");
    }

    @Test
    void taskExceptionIsLoggedNotPropagated() throws Exception {
        Timer timer = timer();
        CountDownLatch next = new CountDownLatch(1);
        timer.newTimeout(t -> {
            throw new IllegalStateException("thrown on purpose by the test");
        }, 10, MILLISECONDS);
        timer.newTimeout(t -> next.countDown(), 50, MILLISECONDS);
        await(next, "the task after a throwing one ran");
    }

    @Test
    void defaultTasksRunOnTheTimersThread() throws Exception {
        Timer timer = timer(r -> new Thread(r, "contract-timer"), -1, ImmediateExecutor.INSTANCE);
        AtomicReference<String> thread = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> {
            thread.set(Thread.currentThread().getName());
            ran.countDown();
        }, 10, MILLISECONDS);
        await(ran, "task ran");
        assertEquals("contract-timer", thread.get());
    }

    @Test
    void tasksRunOnTheGivenExecutor() throws Exception {
        ExecutorService ex = Executors.newSingleThreadExecutor(r -> new Thread(r, "contract-executor"));
        executors.add(ex);
        Timer timer = timer(r -> new Thread(r, "contract-timer"), -1, ex);
        AtomicReference<String> thread = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> {
            thread.set(Thread.currentThread().getName());
            ran.countDown();
        }, 10, MILLISECONDS);
        await(ran, "task ran");
        assertEquals("contract-executor", thread.get());
    }

    @Test
    void maxPendingTimeoutsRejectsTheNextOne() {
        Timer timer = timer(Executors.defaultThreadFactory(), 2, ImmediateExecutor.INSTANCE);
        timer.newTimeout(t -> { }, 1, HOURS);
        timer.newTimeout(t -> { }, 1, HOURS);
        assertThrows(RejectedExecutionException.class, () -> timer.newTimeout(t -> { }, 1, HOURS));
        assertEquals(2, pendingTimeouts(timer));
    }

    @Test
    void cancelledAndExpiredTimeoutsLeaveThePendingCount() throws Exception {
        Timer timer = timer(Executors.defaultThreadFactory(), 1, ImmediateExecutor.INSTANCE);
        timer.newTimeout(t -> { }, 1, HOURS).cancel();
        /* HashedWheelTimer counts a cancel out at its next tick. */
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        Timeout next = null;
        while (next == null && System.nanoTime() < end) {
            try {
                next = timer.newTimeout(t -> { }, 10, MILLISECONDS);
            } catch (RejectedExecutionException e) {
                Thread.sleep(TICK_MS);
            }
        }
        assertTrue(next != null, "a cancelled timeout still counted as pending");
        barrier2(timer, end);
        assertEquals(0, pendingTimeouts(timer));
    }

    /* Wait, with the timer capped at one pending timeout, until a new one is accepted and has run. */
    private static void barrier2(Timer timer, long end) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        while (System.nanoTime() < end) {
            try {
                timer.newTimeout(t -> done.countDown(), 10, MILLISECONDS);
                break;
            } catch (RejectedExecutionException e) {
                Thread.sleep(TICK_MS);
            }
        }
        await(done, "a timeout after the expired one ran");
    }

    @Test
    void stopCancelsAndReturnsTheUnexpiredTimeouts() {
        Timer timer = timer();
        Timeout a = timer.newTimeout(t -> { }, 1, HOURS);
        Timeout b = timer.newTimeout(t -> { }, 2, HOURS);
        Timeout c = timer.newTimeout(t -> { }, 3, HOURS);
        assertTrue(b.cancel());
        Set<Timeout> left = timer.stop();
        assertEquals(Set.of(a, c), new HashSet<>(left));
        assertTrue(a.isCancelled());
        assertTrue(c.isCancelled());
    }

    @Test
    void stopLeavesExpiredTimeoutsOut() throws Exception {
        Timer timer = timer();
        CountDownLatch ran = new CountDownLatch(1);
        Timeout done = timer.newTimeout(t -> ran.countDown(), 10, MILLISECONDS);
        Timeout pending = timer.newTimeout(t -> { }, 1, HOURS);
        await(ran, "task ran");
        assertEquals(Set.of(pending), new HashSet<>(timer.stop()));
        assertTrue(done.isExpired());
    }

    @Test
    void newTimeoutAfterStopThrowsIllegalStateException() {
        Timer timer = timer();
        timer.newTimeout(t -> { }, 1, HOURS);
        timer.stop();
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> { }, 1, MILLISECONDS));
    }

    @Test
    void stopBeforeStartReturnsNothingAndStopsForGood() {
        Timer timer = timer();
        assertTrue(timer.stop().isEmpty());
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> { }, 1, MILLISECONDS));
    }

    @Test
    void secondStopReturnsNothing() {
        Timer timer = timer();
        timer.newTimeout(t -> { }, 1, HOURS);
        assertEquals(1, timer.stop().size());
        assertTrue(timer.stop().isEmpty());
    }

    @Test
    void stopFromATaskThrowsIllegalStateException() throws Exception {
        Timer timer = timer();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> {
            try {
                timer.stop();
            } catch (Throwable e) {
                thrown.set(e);
            }
            ran.countDown();
        }, 10, MILLISECONDS);
        await(ran, "task ran");
        assertInstanceOf(IllegalStateException.class, thrown.get());
    }

    @Test
    void nullTaskOrUnitThrowsNullPointerException() {
        Timer timer = timer();
        assertThrows(NullPointerException.class, () -> timer.newTimeout(null, 1, MILLISECONDS));
        assertThrows(NullPointerException.class, () -> timer.newTimeout(t -> { }, 1, null));
    }

    @Test
    void constructorRejectsBadArguments() {
        ThreadFactory tf = Executors.defaultThreadFactory();
        Executor ex = ImmediateExecutor.INSTANCE;
        assertThrows(IllegalArgumentException.class, () -> create(tf, 0, MILLISECONDS, 512, false, -1, ex));
        assertThrows(IllegalArgumentException.class, () -> create(tf, -1, MILLISECONDS, 512, false, -1, ex));
        assertThrows(IllegalArgumentException.class, () -> create(tf, 10, MILLISECONDS, 0, false, -1, ex));
        assertThrows(IllegalArgumentException.class,
                () -> create(tf, Long.MAX_VALUE / 100, TimeUnit.NANOSECONDS, 512, false, -1, ex));
        assertThrows(NullPointerException.class, () -> create(null, 10, MILLISECONDS, 512, false, -1, ex));
        assertThrows(NullPointerException.class, () -> create(tf, 10, null, 512, false, -1, ex));
        assertThrows(NullPointerException.class, () -> create(tf, 10, MILLISECONDS, 512, false, -1, null));
    }

    @Test
    void manyTimeoutsEachRunExactlyOnceNeverEarly() throws Exception {
        Timer timer = timer();
        int n = 5000;
        AtomicInteger[] runs = new AtomicInteger[n];
        AtomicInteger early = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            AtomicInteger r = runs[i] = new AtomicInteger();
            long delayMs = ThreadLocalRandom.current().nextLong(300);
            long due = System.nanoTime() + MILLISECONDS.toNanos(delayMs);
            timer.newTimeout(t -> {
                if (System.nanoTime() < due)
                    early.incrementAndGet();
                r.incrementAndGet();
                all.countDown();
            }, delayMs, MILLISECONDS);
        }
        await(all, n + " tasks ran");
        barrier(timer, 50);
        assertEquals(0, early.get(), "tasks run early");
        for (int i = 0; i < n; i++)
            assertEquals(1, runs[i].get(), "runs of timeout " + i);
    }

    @Test
    void cancelRacingExpiryRunsOrCancelsNeverBoth() throws Exception {
        Timer timer = timer();
        int n = 2000;
        Timeout[] ts = new Timeout[n];
        AtomicInteger[] runs = new AtomicInteger[n];
        boolean[] cancelled = new boolean[n];
        for (int i = 0; i < n; i++) {
            AtomicInteger r = runs[i] = new AtomicInteger();
            ts[i] = timer.newTimeout(t -> r.incrementAndGet(), ThreadLocalRandom.current().nextLong(40), MILLISECONDS);
        }
        /* Cancel them in order while they expire: some before, some during, some after. */
        for (int i = 0; i < n; i++)
            cancelled[i] = ts[i].cancel();
        barrier(timer, 100);
        Set<Integer> bad = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < n; i++) {
            boolean ran = runs[i].get() == 1;
            if (runs[i].get() > 1 || ran == cancelled[i] || ts[i].isExpired() == cancelled[i]
                    || ts[i].isCancelled() != cancelled[i])
                bad.add(i);
        }
        assertTrue(bad.isEmpty(), "timeouts both or neither run and cancelled: " + bad);
    }

    @Test
    void stopReturnsTimeoutsThatNoLongerRun() throws Exception {
        Timer timer = timer();
        AtomicInteger runs = new AtomicInteger();
        for (int i = 0; i < 100; i++)
            timer.newTimeout(t -> runs.incrementAndGet(), 200, MILLISECONDS);
        Set<Timeout> left = timer.stop();
        Thread.sleep(400);
        assertEquals(100, left.size() + runs.get(), "returned by stop or run, exactly once each");
        assertNull(left.stream().filter(Timeout::isExpired).findAny().orElse(null));
    }
}
