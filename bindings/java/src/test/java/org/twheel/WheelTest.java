// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The id API against the device: single ops, batches, refresh of many
 * ids, absolute deadlines, dump, reads and the listener, caps and the
 * exceptions each failure maps to. Skipped without /dev/twheel.
 */
package org.twheel;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class WheelTest {
    static final Duration TICK = Duration.ofMillis(5);
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final long MS = 1_000_000;
    /* A timeout no id reaches during a test, however slow the VM. */
    static final Duration LONG = Duration.ofSeconds(60);

    Wheel wheel;

    @BeforeEach
    void open() throws IOException {
        Device.assumePresent();
        wheel = Wheel.open(TICK, TIMEOUT);
    }

    @AfterEach
    void close() {
        if (wheel != null)
            wheel.close();
    }

    /* Reads until @n expirations came, checking each is never early. */
    List<Long> readAll(int n) throws IOException {
        Expirations ev = new Expirations(64);
        List<Long> ids = new java.util.ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(TimerContract.WAIT_S);
        while (ids.size() < n) {
            assertTrue(System.nanoTime() < end, "only " + ids.size() + " of " + n + " expirations came");
            int k = wheel.read(ev, Duration.ofSeconds(1));
            for (int i = 0; i < k; i++) {
                assertTrue(ev.expiredNs(i) >= ev.deadlineNs(i), "expired before its deadline");
                assertTrue(wheel.now() >= ev.deadlineNs(i), "read before its deadline");
                ids.add(ev.id(i));
            }
        }
        return ids;
    }

    @Test
    void addGivesADeadlineNeverEarlyAndQuerySeesIt() throws IOException {
        long before = wheel.now();
        long d = wheel.add(1, LONG);
        assertTrue(d >= before + LONG.toNanos(), "deadline " + d + " before now + 60 s");
        long q0 = wheel.now();
        Deadline q = wheel.query(1);
        long q1 = wheel.now();
        assertEquals(d, q.deadlineNs());
        assertTrue(q.remainingNs() >= d - q1 && q.remainingNs() <= d - q0, "remaining " + q.remainingNs());
        assertTrue(wheel.contains(1));
        assertFalse(wheel.contains(2));
    }

    @Test
    void defaultTimeoutApplies() throws IOException {
        long before = wheel.now();
        assertTrue(wheel.add(7) >= before + TIMEOUT.toNanos());
        assertTrue(wheel.refresh(7) >= before + TIMEOUT.toNanos());
    }

    @Test
    void addOfALiveIdIsEexist() throws IOException {
        wheel.add(1);
        TwheelException e = assertThrows(TwheelException.class, () -> wheel.add(1));
        assertEquals(Errno.EEXIST, e.errno());
        assertTrue(e.getMessage().contains("id 1") && e.getMessage().contains("EEXIST"), e.getMessage());
    }

    @Test
    void opsOnAMissingIdThrowNoSuchElementException() {
        assertThrows(NoSuchElementException.class, () -> wheel.refresh(5));
        assertThrows(NoSuchElementException.class, () -> wheel.refresh(5, Duration.ofSeconds(1)));
        assertThrows(NoSuchElementException.class, () -> wheel.cancel(5));
        assertThrows(NoSuchElementException.class, () -> wheel.query(5));
    }

    @Test
    void refreshOrAddAddsAMissingId() throws IOException {
        wheel.refreshOrAdd(9, LONG);
        assertTrue(wheel.contains(9));
        long before = wheel.now();
        wheel.refreshOrAdd(9, LONG.multipliedBy(2));
        assertTrue(wheel.query(9).deadlineNs() >= before + LONG.multipliedBy(2).toNanos());
    }

    @Test
    void everyLongIsAnId() throws IOException {
        long[] ids = { 0, -1, Long.MIN_VALUE, Long.MAX_VALUE };
        for (long id : ids)
            wheel.add(id);
        Set<Long> dumped = new HashSet<>();
        wheel.dump(e -> dumped.add(e.id()));
        assertEquals(Set.of(0L, -1L, Long.MIN_VALUE, Long.MAX_VALUE), dumped);
    }

    @Test
    void cancelReturnsTheDeadlineAndTheIdNeverExpires() throws IOException {
        long d = wheel.add(1, Duration.ofMillis(30));
        try {
            assertEquals(d, wheel.cancel(1));
        } catch (NoSuchElementException e) {
            /* Only a stall past the deadline lets the id expire first. */
            assertTrue(wheel.now() >= d, "id 1 expired before its deadline");
            assumeTrue(false, "the test stalled past the deadline before the cancel");
        }
        wheel.add(2, Duration.ofMillis(120));
        assertEquals(List.of(2L), readAll(1));
        assertEquals(0, wheel.read(new Expirations(4), Duration.ZERO));
    }

    @Test
    void expirationsComeInDeadlineOrder() throws IOException {
        long[] delays = { 150, 30, 120, 60, 90 };
        Map<Long, Long> deadline = new HashMap<>();
        for (int i = 0; i < delays.length; i++)
            deadline.put((long) i, wheel.add(i, Duration.ofMillis(delays[i])));
        /* The order of the deadlines given, not of the delays: a stall between two adds may swap them. */
        List<Long> got = readAll(delays.length);
        assertEquals(deadline.keySet(), new HashSet<>(got));
        for (int i = 1; i < got.size(); i++)
            assertTrue(deadline.get(got.get(i - 1)) <= deadline.get(got.get(i)), "not in deadline order: " + got);
        assertFalse(wheel.contains(0), "an expired id is no longer live");
    }

    @Test
    void readWaitsNoLongerThanItsTimeout() throws IOException {
        Expirations ev = new Expirations(4);
        assertEquals(0, wheel.read(ev, Duration.ZERO));
        long t0 = System.nanoTime();
        assertEquals(0, wheel.read(ev, Duration.ofMillis(50)));
        assertTrue(System.nanoTime() - t0 >= 50 * MS, "returned before its timeout");
    }

    @Test
    void absoluteDeadlinesAreKeptOnTheTickGrid() throws IOException {
        /* A minute: id 1 may not expire before its refresh, however slow the VM. */
        long at = wheel.now() + LONG.toNanos();
        long d = wheel.addAt(1, at);
        assertTrue(d >= at && d < at + TICK.toNanos(), "deadline " + d + " for " + at);
        long sooner = wheel.now() + 120 * MS;
        long d1 = wheel.refreshAt(1, sooner);
        assertTrue(d1 >= sooner && d1 < sooner + TICK.toNanos(), "deadline " + d1 + " for " + sooner);
        long before = wheel.now();
        long d2 = wheel.addAt(2, 0);
        assertTrue(d2 >= before && d2 <= wheel.now() + TICK.toNanos(), "a past deadline is the next tick");
        /* Id 2 first, unless the test stalled past id 1's deadline before adding it. */
        List<Long> got = readAll(2);
        if (d1 == d2)
            assertEquals(Set.of(1L, 2L), new HashSet<>(got));
        else
            assertEquals(d2 < d1 ? List.of(2L, 1L) : List.of(1L, 2L), got, "not in deadline order");
    }

    @Test
    void batchGivesEachOpItsOwnResult() throws IOException {
        Batch b = new Batch(8).add(1, Duration.ofSeconds(10)).add(1).refresh(2).query(1).cancel(1).query(1);
        assertEquals(6, wheel.submit(b));
        assertEquals(6, b.applied());
        assertArrayEquals(new int[] { 0, Errno.EEXIST, Errno.ENOENT, 0, 0, Errno.ENOENT },
                new int[] { b.errno(0), b.errno(1), b.errno(2), b.errno(3), b.errno(4), b.errno(5) });
        assertEquals(b.deadlineNs(0), b.deadlineNs(3));
        assertTrue(b.remainingNs(3) > 9_000 * MS);
        assertEquals(b.deadlineNs(0), b.deadlineNs(4));
        b.check(0);
        assertThrows(TwheelException.class, () -> b.check(1));
        assertThrows(NoSuchElementException.class, () -> b.check(2));
    }

    @Test
    void largeBatchesApplyEveryOp() throws IOException {
        int n = 20_000;
        Batch b = new Batch(n);
        for (int i = 0; i < n; i++)
            b.add(i, Duration.ofSeconds(600 + i % 20)); /* no expiry however slow the batch */
        assertEquals(n, wheel.submit(b));
        for (int i = 0; i < n; i++)
            assertEquals(0, b.errno(i));
        assertEquals(n, wheel.stats().get("live"));
    }

    @Test
    void refreshAllReturnsTheIdsNotLive() throws IOException {
        Batch b = new Batch(100);
        for (int i = 0; i < 100; i++)
            b.add(i);
        wheel.submit(b);
        long[] ids = new long[1100];
        for (int i = 0; i < ids.length; i++)
            ids[i] = i % 110;
        long[] failed = new long[ids.length];
        long refreshed = wheel.now();
        int nf = wheel.refreshAll(ids, 0, ids.length, Duration.ofSeconds(20), false, failed);
        assertEquals(100, nf);
        for (int i = 0; i < nf; i++)
            assertEquals(100 + i % 10, failed[i]);
        long before = wheel.now();
        assertArrayEquals(new long[] { 500 }, wheel.refreshAll(1, 500, 2));
        assertTrue(wheel.query(1).deadlineNs() >= before + TIMEOUT.toNanos(), "the default timeout applies");
        assertTrue(wheel.query(5).deadlineNs() >= refreshed + 20_000 * MS);
    }

    @Test
    void refreshAllCanAddTheMissingOnes() throws IOException {
        long[] ids = { 10, 11, 12 };
        long before = wheel.now();
        assertEquals(0, wheel.refreshAll(ids, 0, 3, null, true, null));
        for (long id : ids)
            assertTrue(wheel.query(id).deadlineNs() >= before + TIMEOUT.toNanos(), "the default timeout applies");
    }

    @Test
    void dumpListsEveryLiveIdOnceWithItsDeadline() throws IOException {
        int n = 5000;
        Map<Long, Long> added = new HashMap<>();
        Batch b = new Batch(n);
        for (int i = 0; i < n; i++)
            b.add(i * 7919L, Duration.ofSeconds(60 + i % 50)); /* no expiry however slow the dump */
        wheel.submit(b);
        for (int i = 0; i < n; i++)
            added.put(b.id(i), b.deadlineNs(i));
        Map<Long, Long> dumped = new HashMap<>();
        wheel.dump(e -> assertTrue(dumped.put(e.id(), e.deadlineNs()) == null, "id listed twice: " + e.id()));
        assertEquals(added, dumped);
        assertEquals(Wheel.NO_SLOT, wheel.dump().get(0).slot());
    }

    @Test
    void listenDeliversEveryExpirationOnce() throws Exception {
        int n = 500;
        Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
        CountDownLatch all = new CountDownLatch(n);
        AtomicInteger early = new AtomicInteger();
        Thread t = wheel.listen((id, deadline, expired) -> {
            if (expired < deadline || wheel.now() < deadline)
                early.incrementAndGet();
            if (seen.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet() == 1)
                all.countDown();
        });
        Batch b = new Batch(n);
        for (int i = 0; i < n; i++)
            b.add(i, Duration.ofMillis(i % 100));
        wheel.submit(b);
        assertTrue(all.await(TimerContract.WAIT_S, TimeUnit.SECONDS), "all expirations delivered");
        wheel.close();
        t.join(TimeUnit.SECONDS.toMillis(TimerContract.WAIT_S));
        assertFalse(t.isAlive(), "delivery ends when the wheel is closed");
        assertEquals(0, early.get());
        for (AtomicInteger c : seen.values())
            assertEquals(1, c.get());
    }

    @Test
    void listenerExceptionsDoNotStopDelivery() throws Exception {
        CountDownLatch second = new CountDownLatch(1);
        AtomicInteger reported = new AtomicInteger();
        wheel.listen((id, d, e) -> {
            if (id == 1)
                throw new IllegalStateException("thrown on purpose by the test");
            second.countDown();
        }, r -> {
            Thread th = new Thread(r, "listener-test");
            th.setDaemon(true);
            th.setUncaughtExceptionHandler((x, e) -> reported.incrementAndGet());
            return th;
        });
        wheel.add(1, Duration.ofMillis(10));
        wheel.add(2, Duration.ofMillis(60));
        assertTrue(second.await(TimerContract.WAIT_S, TimeUnit.SECONDS));
        assertEquals(1, reported.get());
    }

    @Test
    void badInputIsIllegalArgumentException() throws IOException {
        assertThrows(IllegalArgumentException.class, () -> wheel.add(1, Duration.ofMillis(-1)));
        /* 2^32 ticks of 5 ms is 248 days: longer is EINVAL from the kernel. */
        assertThrows(IllegalArgumentException.class, () -> wheel.add(1, Duration.ofDays(300)));
        assertThrows(IllegalArgumentException.class, () -> wheel.add(1, Duration.ofSeconds(1), 0),
                "a slot on a wheel without a touch table");
        assertThrows(IllegalArgumentException.class, () -> Wheel.open(Duration.ofNanos(50_000), TIMEOUT),
                "a tick below 100 us");
        assertThrows(IllegalStateException.class, () -> wheel.touchTable());
        assertFalse(wheel.contains(1));
    }

    @Test
    void theCapIsEnospc() throws IOException {
        try (Wheel small = Wheel.open(new Wheel.Config().maxEntries(10))) {
            for (int i = 0; i < 10; i++)
                small.add(i);
            TwheelException e = assertThrows(TwheelException.class, () -> small.add(10));
            assertEquals(Errno.ENOSPC, e.errno());
        }
    }

    @Test
    void statsShowTheWheel() throws IOException {
        wheel.add(1);
        wheel.add(2);
        Map<String, Long> s = wheel.stats();
        assertEquals(2, s.get("live"));
        assertEquals(TICK.toNanos(), s.get("tick_ns"));
        assertEquals(TIMEOUT.toNanos(), s.get("default_timeout_ns"));
    }

    @Test
    void boottimeWheelsUseBoottime() throws IOException {
        try (Wheel w = Wheel.open(new Wheel.Config().clock(Wheel.Clock.BOOTTIME))) {
            long before = Wheel.Clock.BOOTTIME.now();
            assertTrue(w.add(1, Duration.ofSeconds(1)) >= before + 1_000 * MS);
            assertEquals(Wheel.Clock.BOOTTIME, w.clock());
        }
    }
}
