// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * How TwheelTimer's worker applies the queued ops, seen in the kernel's
 * wheel (its fdinfo and DUMP): a refresh (cancel, then newTimeout) takes
 * over the cancelled timeout's kernel entry, so that n refreshes leave
 * the n entries there were and no more, each left at its deadline when
 * the new one is later and re-armed when that passes; a timeout
 * cancelled before the worker's batch never reaches the kernel; and the
 * refreshed timeouts
 * still run, once, never before their delay. Skipped without /dev/twheel.
 */
package org.twheel;

import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class TwheelTimerBatchTest {
    static final int N = 1000;

    /* The kernel's deadline of each id of the timer's wheel, less the worker's wake id. */
    static Map<Long, Long> kernelDeadlines(TwheelTimer timer) throws IOException {
        Map<Long, Long> d = new HashMap<>();
        for (DumpEntry e : ((TwheelTimer.WheelOps) timer.wheel).w.dump())
            if (e.id() != TwheelTimer.WAKE_ID)
                d.put(e.id(), e.deadlineNs());
        return d;
    }

    /*
     * Until the worker has applied all that was queued: three batches after
     * now, the ids a batch freed and left having waited their one batch
     * more and been cancelled.
     */
    static void settle(TwheelTimer timer) throws Exception {
        long end = System.nanoTime() + SECONDS.toNanos(TimerContract.WAIT_S);
        long want = timer.flush.runs + 3;
        while (timer.flush.runs < want && System.nanoTime() < end)
            Thread.sleep(5);
        assertTrue(timer.flush.runs >= want, "the worker ran no batch in " + TimerContract.WAIT_S + " s");
    }

    /* The kernel ids once the worker has applied all that was queued. */
    static Set<Long> settled(TwheelTimer timer) throws Exception {
        settle(timer);
        return new HashSet<>(kernelDeadlines(timer).keySet());
    }

    /*
     * One task for N refreshed timeouts, made before their loop (no
     * lambda's first call slows it): it counts runs, and runs before
     * delayNs from start().
     */
    static final class Refreshed {
        final AtomicInteger early = new AtomicInteger();
        final AtomicInteger runs = new AtomicInteger();
        final CountDownLatch all = new CountDownLatch(N);
        final long delayNs;
        volatile long start;
        final TimerTask task;

        Refreshed(long delayNs) {
            this.delayNs = delayNs;
            task = x -> {
                if (System.nanoTime() - start < delayNs)
                    early.incrementAndGet();
                runs.incrementAndGet();
                all.countDown();
            };
        }

        void start() {
            start = System.nanoTime();
        }

        /* Each of the N ran once, none before its delay, and none is pending. */
        void assertRanOnceNotEarly(TwheelTimer timer) throws InterruptedException {
            assertTrue(all.await(TimerContract.WAIT_S, SECONDS), runs.get() + " of " + N + " refreshed timeouts ran");
            Thread.sleep(100);
            assertEquals(N, runs.get(), "runs");
            assertEquals(0, early.get(), "runs before the delay");
            assertEquals(0, timer.pendingTimeouts());
        }
    }

    @Test
    void aRefreshTakesOverTheCancelledEntryAndStillRunsOnce() throws Exception {
        Device.assumePresent();
        TwheelTimer timer = new TwheelTimer(50, MILLISECONDS);
        try {
            long delayNs = MILLISECONDS.toNanos(1500);
            Refreshed r = new Refreshed(delayNs);
            Timeout[] t = new Timeout[N];
            for (int i = 0; i < N; i++)
                t[i] = timer.newTimeout(x -> { throw new AssertionError("a cancelled timeout ran"); }, 1, TimeUnit.HOURS);
            Set<Long> before = settled(timer);
            assertEquals(N, before.size(), "kernel entries after " + N + " newTimeouts");

            r.start();
            for (int i = 0; i < N; i++) {
                assertTrue(t[i].cancel());
                t[i] = timer.newTimeout(r.task, delayNs, TimeUnit.NANOSECONDS);
            }
            Set<Long> after = settled(timer);
            assertEquals(N, after.size(), "kernel entries after " + N + " refreshes");
            /*
             * Each refreshed timeout took its cancelled one's id, unless the
             * VM stopped the loop between a cancel and its newTimeout for two
             * ticks (100 ms), when that id is cancelled and a new one added.
             */
            after.retainAll(before);
            assertTrue(after.size() >= N - 10, after.size() + " of " + N
                    + " refreshed timeouts kept their cancelled ones' kernel entries");
            r.assertRanOnceNotEarly(timer);
        } finally {
            timer.stop();
        }
    }

    /*
     * N timeouts of firstMs, each then refreshed (cancel, newTimeout) to
     * laterMs: how many kernel entries kept their deadline, and whether
     * the adds and refreshes all came within 1 s (the clock's word); and
     * checks that each refreshed timeout ran once, never before laterMs.
     */
    static int[] keptAfterRefresh(long firstMs, long laterMs) throws Exception {
        TwheelTimer timer = new TwheelTimer(50, MILLISECONDS);
        try {
            Wheel w = ((TwheelTimer.WheelOps) timer.wheel).w;
            long laterNs = MILLISECONDS.toNanos(laterMs);
            Refreshed r = new Refreshed(laterNs);
            long added = w.now();
            Timeout[] t = new Timeout[N];
            for (int i = 0; i < N; i++)
                t[i] = timer.newTimeout(x -> { throw new AssertionError("a cancelled timeout ran"); }, firstMs,
                        MILLISECONDS);
            settle(timer);
            Map<Long, Long> before = kernelDeadlines(timer);
            assertEquals(N, before.size(), "kernel entries after " + N + " newTimeouts");

            r.start();
            for (int i = 0; i < N; i++) {
                assertTrue(t[i].cancel());
                t[i] = timer.newTimeout(r.task, laterNs, TimeUnit.NANOSECONDS);
            }
            settle(timer);
            Map<Long, Long> after = kernelDeadlines(timer);
            boolean fast = w.now() - added < MILLISECONDS.toNanos(1000);
            int kept = 0;
            for (Map.Entry<Long, Long> e : after.entrySet())
                if (e.getValue().equals(before.get(e.getKey())))
                    kept++;
            assertEquals(N, after.size(), "kernel entries after " + N + " refreshes");
            r.assertRanOnceNotEarly(timer);
            return new int[] { kept, fast ? 1 : 0 };
        } finally {
            timer.stop();
        }
    }

    @Test
    void aRefreshToADeadlineJustLaterKeepsTheKernelEntryAndRunsAtTheNewOne() throws Exception {
        Device.assumePresent();
        /*
         * 6 s, in the later half of 7 s when refreshed within 1 s of the
         * adds: left as it is, and re-armed at 7 s when it expires.
         */
        int[] r = keptAfterRefresh(6000, 7000);
        assumeTrue(r[1] == 1, "the VM took over 1 s to add and refresh " + N + " timeouts");
        /* Slack, as above, for a VM pause of two ticks between a cancel and its newTimeout. */
        assertTrue(r[0] >= N - 10, r[0] + " of " + N + " refreshed timeouts left their kernel entry as it was");
    }

    @Test
    void aRefreshToADeadlineFarLaterMovesTheKernelEntry() throws Exception {
        Device.assumePresent();
        /* 2 s is in the first half of 10 s from whenever the refresh comes: REFRESHed to 10 s. */
        int[] r = keptAfterRefresh(2000, 10000);
        assertEquals(0, r[0], r[0] + " of " + N + " refreshed timeouts left their kernel entry as it was");
    }

    @Test
    void aTimeoutCancelledBeforeTheBatchNeverReachesTheKernel() throws Exception {
        Device.assumePresent();
        TwheelTimer timer = new TwheelTimer(50, MILLISECONDS);
        try {
            Timeout keep = timer.newTimeout(x -> { }, 1, TimeUnit.HOURS);
            assertEquals(1, settled(timer).size());
            /*
             * Queued (a delay of two ticks or more) and cancelled at once: a
             * batch that runs meanwhile may catch one between its newTimeout
             * and its cancel, and no more.
             */
            long runs = timer.flush.runs;
            long ids = timer.nextId.get();
            for (int i = 0; i < N; i++)
                assertTrue(timer.newTimeout(x -> { throw new AssertionError("a cancelled timeout ran"); }, 1,
                        TimeUnit.HOURS).cancel());
            long batches = timer.flush.runs - runs;
            assertEquals(1, settled(timer).size(), "kernel ids after " + N + " cancelled newTimeouts");
            long taken = timer.nextId.get() - ids;
            assertTrue(taken <= batches + 1, taken + " kernel ids taken by " + N + " timeouts cancelled at once, in "
                    + batches + " batches");
            assertEquals(Set.of(keep), timer.stop());
        } finally {
            timer.stop();
        }
    }
}
