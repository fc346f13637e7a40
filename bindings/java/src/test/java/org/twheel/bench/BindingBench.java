// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * BindingBench: what keeping n ids with a 5 min timeout costs from Java,
 * twheel side by side with the JVM's usual answers, in one run (in the
 * VM: vm-bench.sh). For each n (10^5, 10^6) and each way, n ids are
 * added, then a stream of refreshes of random ids is sent, each the
 * way's own idiom:
 *
 *   twheel              Wheel.refresh(id): one TWHEEL_IOC_OP
 *   twheel-refresh-ids  Wheel.refreshAll of 256 ids: one TWHEEL_IOC_REFRESH
 *   twheel-touch        TouchTable.touch(slot): a clock read and a release
 *                       store; the module's later look at each id counted
 *                       (the ids are due at one deadline 20 s + 50 us an id
 *                       ahead, so that the looks begin after the stream),
 *                       which the wheel's delivery thread (Wheel.listen)
 *                       does when the wheel's timer wakes it
 *   twheel-timer        TwheelTimer: timeout.cancel() + newTimeout(); the
 *                       re-arms it defers are counted (TimerWithRearms)
 *   hashedwheeltimer    Netty's HashedWheelTimer, default tick: the same
 *   kafka-systemtimer   Kafka's SystemTimer (its hierarchical wheel, with
 *                       the SystemTimerReaper thread that advances it):
 *                       task.cancel() + add(new task)
 *   scheduledthreadpoolexecutor  with setRemoveOnCancelPolicy(true):
 *                       future.cancel() + schedule()
 *   delayqueue          DelayQueue: remove(element) + add(new element)
 *
 * Printed, one line per way and n:
 *   binding-bench: lang=java impl=I n=N cpu_ns_per_refresh=C bytes_per_id=B
 * cpu_ns_per_refresh: the CPU time over the stream of every Java thread
 * (ThreadMXBean: the caller's, the timer threads that tick, reap or read)
 * and of the collector (its MXBeans; serial GC, so that is CPU time),
 * which is the process's less its JIT compiler's (the module's work is in
 * it: the module has no thread, its expiry and touch-table work runs in
 * the calls of the threads that use a wheel, their reads above all),
 * plus the CPU time in the same span of the kworkers, where the kernel
 * runs what it defers (their /proc/PID/schedstat, as
 * bench/device/bench.h's kthreads_ns() counts it), per refresh. For
 * twheel-touch the delivery thread's time after the stream (and the
 * kworkers') is measured until the module has looked at every id, and
 * charged, as devbench does, in the share of the looks that re-armed a
 * touched id.
 * bytes_per_id: after adding the n ids, the growth of the Java heap
 * after a full GC (the way's own objects; the caller's table of n
 * references to them and the shared task are allocated before and not
 * counted), plus the module's: the twheel_entry / twheel_touch_entry
 * slab caches (/proc/slabinfo or /sys/kernel/slab), VmallocUsed (its id
 * index), and the touch table's pages. Reported, not asserted.
 *
 *   java -XX:+UseSerialGC -Xmx2g -cp ... org.twheel.bench.BindingBench [N...]
 * System properties: bench.impls (which ways, comma-separated; default
 * all), bench.idle (first print those threads' idle noise), bench.stream
 * (refreshes per way, default 200000), bench.budget
 * (seconds per way before the stream is cut short, default 10:
 * DelayQueue's remove is O(n)), bench.timeout_ms (every timeout,
 * default 300000), bench.paced=RATE,SECONDS (instead of the stream,
 * the timers' steady state at RATE refreshes a second: runPaced). vm-bench.sh runs each way and n in a JVM
 * of its own, so that no way inherits another's garbage or compiled code.
 */
package org.twheel.bench;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.twheel.Batch;
import org.twheel.TimerProbe;
import org.twheel.TouchTable;
import org.twheel.TwheelTimer;
import org.twheel.Wheel;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

public final class BindingBench {
    /* Long enough that nothing expires while a slow VM adds and refreshes 10^6 ids. */
    static final long TIMEOUT_MS = Long.getLong("bench.timeout_ms", 300_000);
    static final Duration TIMEOUT = Duration.ofMillis(TIMEOUT_MS);
    static final Duration TICK = Duration.ofMillis(1);
    static final int CHUNK = 256;
    static final TimerTask NETTY_TASK = t -> { };
    static final Runnable JDK_TASK = () -> { };

    /** One way of keeping n ids. */
    abstract static class Way {
        final Object[] held;

        Way(Object[] held) {
            this.held = held;
        }

        abstract String name();

        abstract void addAll(int n) throws Exception;

        /** Refreshes ids[off..off+len). */
        abstract void refresh(long[] ids, int off, int len) throws Exception;

        /** Module memory beyond slab and vmalloc (the touch table). */
        long extraBytes() {
            return 0;
        }

        /** The module's time to charge after the stream, for work the stream deferred; 0 by default. */
        long deferredModuleNs() throws Exception {
            return 0;
        }

        /** CPU time, of any thread, after the stream, for work the stream deferred; 0 by default. */
        long laterNs(long[] stream, int done) throws Exception {
            return 0;
        }

        void close() throws Exception {
        }
    }

    static final class WheelOps extends Way {
        final Wheel w;
        final boolean batched;

        WheelOps(Object[] held, boolean batched) throws IOException {
            super(held);
            this.batched = batched;
            w = Wheel.open(TICK, TIMEOUT);
        }

        @Override
        String name() {
            return batched ? "twheel-refresh-ids" : "twheel";
        }

        @Override
        void addAll(int n) throws IOException {
            Batch b = new Batch(4096);
            for (int i = 0; i < n; i++) {
                b.add(i);
                if (b.size() == b.capacity() || i == n - 1) {
                    w.submit(b);
                    b.clear();
                }
            }
        }

        @Override
        void refresh(long[] ids, int off, int len) throws IOException {
            if (batched) {
                if (w.refreshAll(ids, off, len, null, false, null) != 0)
                    throw new IllegalStateException("ids not live");
                return;
            }
            for (int i = off; i < off + len; i++)
                w.refresh(ids[i]);
        }

        @Override
        void close() {
            w.close();
        }
    }

    static final class Touch extends Way {
        final Wheel w;
        final TouchTable t;
        final int n;
        /*
         * The binding's delivery thread, as a server has one: blocked in
         * read(2), woken by the wheel's timer for each tick due, it does
         * the module's work then (the looks at the slots, the re-arms,
         * the cascades) and takes the expirations of the ids the stream
         * left untouched.
         */
        final Thread reader;
        /*
         * Every id is due at one deadline, far enough ahead that adding
         * them and the stream end before it even in a slow VM (20 s and
         * 50 us an id): the module then looks at each id once.
         */
        final long deadline;
        long kw0;

        Touch(Object[] held, int n) throws IOException {
            super(held);
            this.n = n;
            w = Wheel.open(new Wheel.Config().tick(TICK).timeout(TIMEOUT).touchSlots(n));
            t = w.touchTable();
            deadline = w.now() + TimeUnit.SECONDS.toNanos(20) + n * 50_000L;
            reader = w.listen((id, deadlineNs, expiredNs) -> { });
        }

        @Override
        String name() {
            return "twheel-touch";
        }

        @Override
        void addAll(int n) throws IOException {
            Batch b = new Batch(4096);
            for (int i = 0; i < n; i++) {
                b.addAt(i, deadline).bind(i);
                if (b.size() == b.capacity() || i == n - 1) {
                    w.submit(b);
                    b.clear();
                }
            }
            kw0 = kthreadsNs();
        }

        @Override
        void refresh(long[] ids, int off, int len) {
            for (int i = off; i < off + len; i++)
                t.touch((int) ids[i]);
        }

        @Override
        long extraBytes() {
            return ((long) n * 8 + 4095) / 4096 * 4096;
        }

        @Override
        long deferredModuleNs() throws Exception {
            if (w.now() > deadline)
                System.out.println("# binding-bench: impl=twheel-touch n=" + n + ": the stream outlasted the deadline");
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long r0 = mx.getThreadCpuTime(reader.getId());
            long end = System.nanoTime() + (deadline - w.now()) + TimeUnit.SECONDS.toNanos(60);
            /* The counts as of the reader's last look: it looks at every tick the timer marks due. */
            Map<String, Long> s = w.stats();
            while (s.get("touch_rearms") + s.get("expired_total") < n && System.nanoTime() < end) {
                Thread.sleep(50);
                s = w.stats();
            }
            long kw = mx.getThreadCpuTime(reader.getId()) - r0 + kthreadsNs() - kw0;
            long rearms = s.get("touch_rearms");
            long looks = rearms + s.get("expired_total");
            System.out.printf("# binding-bench: impl=twheel-touch n=%d looks=%d rearms=%d module_ns=%d%n", n, looks,
                    rearms, kw);
            return looks == 0 ? 0 : kw * rearms / looks;
        }

        @Override
        void close() {
            w.close();
        }
    }

    static class NettyTimer extends Way {
        final io.netty.util.Timer timer;
        final String name;

        NettyTimer(Object[] held, io.netty.util.Timer timer, String name) {
            super(held);
            this.timer = timer;
            this.name = name;
        }

        @Override
        String name() {
            return name;
        }

        @Override
        void addAll(int n) throws Exception {
            for (int i = 0; i < n; i++)
                held[i] = timer.newTimeout(NETTY_TASK, TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }

        @Override
        void refresh(long[] ids, int off, int len) {
            for (int k = off; k < off + len; k++) {
                int i = (int) ids[k];
                ((Timeout) held[i]).cancel();
                held[i] = timer.newTimeout(NETTY_TASK, TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        void close() {
            timer.stop();
        }
    }

    /*
     * TwheelTimer leaves a refreshed timeout's kernel entry where it was
     * when that is no later than the new deadline and in the later half of
     * its span, and re-arms it when it expires: the stream's refreshes
     * defer that work. So the ids are first due 60 s and 100 us an id
     * ahead; after the stream each expires once, and the work of that span
     * (the timer's thread, whose reads do the module's work, and the
     * kworkers') is charged in the share of the ids the warm-up and the
     * stream refreshed, which it re-armed (the others expired); and the
     * re-arms still owed after that span (ids the stream left armed just
     * before their new deadline) at the span's cost per expiry.
     */
    static final class TimerWithRearms extends NettyTimer {
        static final String THREAD = "twheel-timer-bench";
        final long firstMs;
        final int n;
        long addedNs;

        TimerWithRearms(Object[] held, int n) {
            super(held, new TwheelTimer(r -> new Thread(r, THREAD)), "twheel-timer");
            this.n = n;
            /* Later than twheel-touch's: the timer's thread applies the adds, and ten full GCs follow. */
            firstMs = 60_000 + n / 10;
        }

        @Override
        void addAll(int n) throws Exception {
            for (int i = 0; i < n; i++)
                held[i] = timer.newTimeout(NETTY_TASK, firstMs, TimeUnit.MILLISECONDS);
            addedNs = System.nanoTime();
            while (wheelInfo().getOrDefault("live", 0L) < n)
                Thread.sleep(10);
        }

        /* The CPU time of the timer's thread (the module's work too: its reads do it) and of the kworkers. */
        static long spentNs(ThreadMXBean mx, long worker) throws IOException {
            return mx.getThreadCpuTime(worker) + kthreadsNs();
        }

        @Override
        long laterNs(long[] stream, int done) throws Exception {
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long worker = -1;
            for (Thread t : Thread.getAllStackTraces().keySet())
                if (t.getName().equals(THREAD))
                    worker = t.getId();
            Map<String, Long> info = wheelInfo();
            System.out.println("# binding-bench: impl=twheel-timer n=" + n + " stream done: " + info);
            /* Left armed at an earlier deadline than their own by the stream: each re-armed when that passes. */
            Thread.sleep(300);
            int owed = TimerProbe.owedRearms((TwheelTimer) timer);
            long firstDue = addedNs + TimeUnit.MILLISECONDS.toNanos(firstMs);
            if (System.nanoTime() > firstDue - TimeUnit.SECONDS.toNanos(2))
                System.out.println("# binding-bench: impl=twheel-timer n=" + n + ": the stream outlasted the first deadlines");
            long e0 = info.get("expired_total");
            long w0 = spentNs(mx, worker), s0 = System.nanoTime();
            /*
             * Past every first deadline (a tick's worth and a second more), and every expiry read and
             * re-armed: the counts are as of the timer thread's last read, which the wheel's timer wakes.
             */
            while (System.nanoTime() < firstDue + TimeUnit.SECONDS.toNanos(1) || wheelInfo().get("events_waiting") > 0)
                Thread.sleep(50);
            Thread.sleep(300);
            long span = System.nanoTime() - s0;
            long w1 = spentNs(mx, worker);
            /* The idle rate of the same threads, now that nothing is due for minutes: taken out of the span. */
            long t0 = System.nanoTime();
            Thread.sleep(2000);
            double idlePerNs = (double) (spentNs(mx, worker) - w1) / (System.nanoTime() - t0);
            long spent = Math.max(0, w1 - w0 - (long) (idlePerNs * span));
            long e = wheelInfo().get("expired_total") - e0;
            java.util.BitSet refreshed = new java.util.BitSet(n);
            /* The warm-up refreshed stream[0, stream.length / 4), the stream [0, done). */
            for (int i = 0; i < Math.max(done, stream.length / 4); i++)
                refreshed.set((int) stream[i]);
            long ids = refreshed.cardinality();
            int owedAfter = TimerProbe.owedRearms((TwheelTimer) timer);
            double perExpiry = (double) spent / Math.max(1, e);
            System.out.printf("# binding-bench: impl=twheel-timer n=%d expired=%d refreshed_ids=%d owed_rearms=%d"
                    + " owed_after=%d later_ns=%d idle_ns=%.0f ns_per_expiry=%.0f after: %s%n", n, e, ids, owed,
                    owedAfter, spent, idlePerNs * span, perExpiry, wheelInfo());
            /*
             * Charged: the window's work in the share of its expiries that
             * were re-arms (the ids the stream refreshed; the others
             * expired), and the re-arms still owed after it (deadlines
             * beyond the window), each at the window's cost per expiry.
             */
            return (e == 0 ? 0 : spent * Math.min(ids, e) / e) + (long) (owedAfter * perExpiry);
        }
    }

    /* live, events_waiting and expired_total of the process's one wheel, from its fdinfo. */
    static Map<String, Long> wheelInfo() throws IOException {
        Map<String, Long> m = new java.util.TreeMap<>();
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of("/proc/self/fdinfo"))) {
            for (Path p : d) {
                try {
                    List<String> lines = Files.readAllLines(p);
                    if (lines.stream().noneMatch(l -> l.startsWith("tick_ns:")))
                        continue;
                    for (String line : lines) {
                        String[] kv = line.split(":\\s*", 2);
                        if (List.of("live", "events_waiting", "expired_total").contains(kv[0]))
                            m.put(kv[0], Long.parseLong(kv[1].trim()));
                    }
                } catch (IOException | NumberFormatException gone) {
                    continue;
                }
            }
        }
        return m;
    }

    static final class KafkaTask extends org.apache.kafka.server.util.timer.TimerTask {
        KafkaTask() {
            super(TIMEOUT_MS);
        }

        @Override
        public void run() {
        }
    }

    static final class Kafka extends Way {
        final SystemTimerReaper timer = new SystemTimerReaper("bench-reaper", new SystemTimer("bench"));

        Kafka(Object[] held) {
            super(held);
        }

        @Override
        String name() {
            return "kafka-systemtimer";
        }

        @Override
        void addAll(int n) {
            for (int i = 0; i < n; i++) {
                KafkaTask t = new KafkaTask();
                held[i] = t;
                timer.add(t);
            }
        }

        @Override
        void refresh(long[] ids, int off, int len) {
            for (int k = off; k < off + len; k++) {
                int i = (int) ids[k];
                ((KafkaTask) held[i]).cancel();
                KafkaTask t = new KafkaTask();
                held[i] = t;
                timer.add(t);
            }
        }

        @Override
        void close() throws Exception {
            timer.close();
        }
    }

    static final class Stpe extends Way {
        final ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1);

        Stpe(Object[] held) {
            super(held);
            ex.setRemoveOnCancelPolicy(true);
        }

        @Override
        String name() {
            return "scheduledthreadpoolexecutor";
        }

        @Override
        void addAll(int n) {
            for (int i = 0; i < n; i++)
                held[i] = ex.schedule(JDK_TASK, TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }

        @Override
        void refresh(long[] ids, int off, int len) {
            for (int k = off; k < off + len; k++) {
                int i = (int) ids[k];
                ((ScheduledFuture<?>) held[i]).cancel(false);
                held[i] = ex.schedule(JDK_TASK, TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        void close() {
            ex.shutdownNow();
        }
    }

    static final class Due implements Delayed {
        final long id;
        final long deadline;

        Due(long id, long deadline) {
            this.id = id;
            this.deadline = deadline;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(deadline, ((Due) o).deadline);
        }
    }

    static final class Queue extends Way {
        final DelayQueue<Due> q = new DelayQueue<>();

        Queue(Object[] held) {
            super(held);
        }

        @Override
        String name() {
            return "delayqueue";
        }

        @Override
        void addAll(int n) {
            long d = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            for (int i = 0; i < n; i++) {
                Due e = new Due(i, d + i);
                held[i] = e;
                q.add(e);
            }
        }

        @Override
        void refresh(long[] ids, int off, int len) {
            for (int k = off; k < off + len; k++) {
                int i = (int) ids[k];
                q.remove(held[i]);
                Due e = new Due(i, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS));
                held[i] = e;
                q.add(e);
            }
        }
    }

    // ---- measuring ----

    /*
     * CPU time of every Java thread (the caller's, and the timer's own that
     * tick, reap or read) plus the collector's time: the process's CPU time
     * less that of the JIT compiler, a start-up cost that would otherwise
     * land on whichever way ran while it compiled.
     */
    static long processCpuNs() {
        ThreadMXBean t = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long id : t.getAllThreadIds())
            sum += Math.max(0, t.getThreadCpuTime(id));
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
            sum += TimeUnit.MILLISECONDS.toNanos(Math.max(0, gc.getCollectionTime()));
        return sum;
    }

    /* The run time (schedstat) of every kworker, where the kernel runs what it defers. */
    static long kthreadsNs() throws IOException {
        long sum = 0;
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of("/proc"), "[1-9]*")) {
            for (Path p : d) {
                try {
                    String comm = Files.readString(p.resolve("comm"));
                    if (!comm.startsWith("kworker/"))
                        continue;
                    sum += Long.parseLong(Files.readString(p.resolve("schedstat")).split(" ")[0]);
                } catch (IOException | NumberFormatException gone) {
                    continue;
                }
            }
        }
        return sum;
    }

    /* The heap's live bytes: full collections until what they leave stops shrinking. */
    static long heapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            /* Let the Cleaner and reference handler threads drop what the last GC found. */
            Thread.sleep(100);
            long now = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            if (now >= used - 4096)
                return Math.min(now, used);
            used = now;
        }
        return used;
    }

    /* Bytes of one slab cache, or 0 if this kernel shows it nowhere. */
    static long slabBytes(String cache) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/slabinfo"))) {
                String[] f = line.trim().split("\\s+");
                /* name active num objsize perslab pagesperslab : tunables a b c : slabdata active num shared */
                if (f[0].equals(cache) && f.length >= 16)
                    return Long.parseLong(f[14]) * Long.parseLong(f[5]) * 4096;
            }
        } catch (IOException | RuntimeException noSlabinfo) {
            /* fall through to sysfs */
        }
        try {
            Path s = Path.of("/sys/kernel/slab", cache);
            long slabs = Long.parseLong(Files.readString(s.resolve("slabs")).trim().split(" ")[0]);
            long order = Long.parseLong(Files.readString(s.resolve("order")).trim());
            return slabs * (4096L << order);
        } catch (IOException | RuntimeException none) {
            return 0;
        }
    }

    static long meminfo(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo")))
                if (line.startsWith(field))
                    return Long.parseLong(line.substring(field.length()).trim().split(" ")[0]) * 1024;
        } catch (IOException | RuntimeException none) {
            return 0;
        }
        return 0;
    }

    static long moduleBytes() {
        return slabBytes("twheel_entry") + slabBytes("twheel_touch_entry") + meminfo("VmallocUsed:");
    }

    interface Maker {
        Way make(Object[] held, int n) throws Exception;
    }

    /* bench.impls: the ways to run, comma-separated; empty: all. */
    static String only;

    /* Whether bench.impls names impl (or is empty). */
    static boolean picked(String impl) {
        return only.isEmpty() || List.of(only.split(",")).contains(impl);
    }

    static void run(String impl, Maker maker, int n, long[] stream, int streamLen, long budgetNs) throws Exception {
        if (!picked(impl))
            return;
        Object[] held = new Object[n];
        long heap0 = heapAfterGc();
        long mod0 = moduleBytes();
        Way way = maker.make(held, n);
        try {
            way.addAll(n);
            long bytes = heapAfterGc() - heap0 + moduleBytes() - mod0 + way.extraBytes();
            /* Warm up the JIT on the first quarter of the stream. */
            long warm = System.nanoTime() + budgetNs / 4;
            for (int i = 0; i + CHUNK <= streamLen / 4 && System.nanoTime() < warm; i += CHUNK)
                way.refresh(stream, i, CHUNK);
            long kw0 = kthreadsNs();
            long cpu0 = processCpuNs();
            long wall0 = System.nanoTime();
            int done = 0;
            while (done < streamLen) {
                int k = Math.min(CHUNK, streamLen - done);
                way.refresh(stream, done, k);
                done += k;
                if (System.nanoTime() - wall0 > budgetNs)
                    break;
            }
            long cpu = processCpuNs() - cpu0;
            long wall = System.nanoTime() - wall0;
            long kw = kthreadsNs() - kw0;
            long deferred = way.deferredModuleNs();
            if (deferred > 0)
                kw = deferred;
            cpu += way.laterNs(stream, done);
            System.out.printf("binding-bench: lang=java impl=%s n=%d cpu_ns_per_refresh=%.0f bytes_per_id=%.0f%n", impl,
                    n, (double) (cpu + kw) / done, (double) bytes / n);
            System.out.printf("# binding-bench: impl=%s n=%d refreshes=%d process_ns=%.0f module_ns=%.0f wall_ns=%.0f%n",
                    impl, n, done, (double) cpu / done, (double) kw / done, (double) wall / done);
            System.out.flush();
        } finally {
            way.close();
        }
    }

    /*
     * bench.paced=RATE,SECONDS: the n ids refreshed at random at RATE
     * refreshes a second for SECONDS, in chunks of CHUNK paced by sleeps,
     * with the timeout of bench.timeout_ms: a steady state, in which ids
     * left alone for a timeout expire and the ways do the work they defer
     * (TwheelTimer's re-arms, the wheels' ticks). Measured from one
     * timeout after the start (all ids are added at once, so the first
     * period is not a steady one) to the end; one line per way and n:
     *   binding-bench: lang=java impl=I n=N rate=R cpu_ns_per_refresh=C behind=0|1
     * behind=1: the loop could not keep the rate (over 1 s behind).
     */
    static void runPaced(String impl, Maker maker, int n, long rate, long seconds) throws Exception {
        if (!picked(impl))
            return;
        Object[] held = new Object[n];
        Way way = maker.make(held, n);
        try {
            way.addAll(n);
            Random rnd = new Random(88172645463325252L);
            long[] ids = new long[CHUNK];
            long periodNs = CHUNK * 1_000_000_000L / rate;
            long start = System.nanoTime();
            long measureFrom = start + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            long next = start, cpu0 = -1, kw0 = 0, wall0 = 0, done = 0, lag = 0, caller0 = 0;
            Map<String, long[]> tasks0 = Map.of();
            for (long now = start; now < end; now = System.nanoTime()) {
                if (cpu0 < 0 && now >= measureFrom) {
                    tasks0 = taskTimes();
                    caller0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
                    cpu0 = processCpuNs();
                    kw0 = kthreadsNs();
                    wall0 = now;
                    done = 0;
                }
                for (int k = 0; k < CHUNK; k++)
                    ids[k] = rnd.nextInt(n);
                way.refresh(ids, 0, CHUNK);
                done += CHUNK;
                next += periodNs;
                long sleep = next - System.nanoTime();
                if (sleep > 0)
                    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                else
                    lag = Math.max(lag, -sleep);
            }
            long cpu = processCpuNs() - cpu0;
            long kw = kthreadsNs() - kw0;
            long wall = System.nanoTime() - wall0;
            System.out.println("# binding-bench: impl=" + impl + " n=" + n + " user/sys ns per refresh by thread:"
                    + taskSplit(tasks0, taskTimes(), done));
            long caller = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - caller0;
            if (way instanceof NettyTimer && ((NettyTimer) way).timer instanceof TwheelTimer)
                System.out.println("# binding-bench: impl=" + impl + " n=" + n + " whole run: "
                        + TimerProbe.counts((TwheelTimer) ((NettyTimer) way).timer));
            System.out.printf("# binding-bench: impl=%s n=%d caller_ns=%.0f others_ns=%.0f%n", impl, n,
                    (double) caller / done, (double) (cpu - caller) / done);
            System.out.printf("binding-bench: lang=java impl=%s n=%d rate=%d cpu_ns_per_refresh=%.0f behind=%d%n", impl,
                    n, rate, (double) (cpu + kw) / done, lag > 1_000_000_000L ? 1 : 0);
            System.out.printf("# binding-bench: impl=%s n=%d rate=%d timeout_ms=%d refreshes=%d process_ns=%.0f"
                    + " module_ns=%.0f wall_s=%.1f lag_max_ms=%d%n", impl, n, rate, TIMEOUT_MS, done,
                    (double) cpu / done, (double) kw / done, wall / 1e9, lag / 1_000_000);
            System.out.flush();
        } finally {
            way.close();
        }
    }

    /*
     * utime and stime (clock ticks) of the process's threads from
     * /proc/self/task, summed by name (digits as N): where a way's CPU
     * goes, the JVM's and the kernel's side of each thread.
     */
    static Map<String, long[]> taskTimes() throws IOException {
        Map<String, long[]> m = new java.util.TreeMap<>();
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path p : d) {
                try {
                    String name = Files.readString(p.resolve("comm")).trim().replaceAll("[0-9]+", "N");
                    String st = Files.readString(p.resolve("stat"));
                    String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
                    long[] v = m.computeIfAbsent(name, k -> new long[4]);
                    v[0] += Long.parseLong(f[11]);
                    v[1] += Long.parseLong(f[12]);
                    for (String line : Files.readAllLines(p.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:"))
                            v[2] += Long.parseLong(line.substring(24).trim());
                        else if (line.startsWith("nonvoluntary_ctxt_switches:"))
                            v[3] += Long.parseLong(line.substring(27).trim());
                    }
                } catch (IOException | RuntimeException gone) {
                    continue;
                }
            }
        }
        return m;
    }

    /* Per thread name, user and system ns per refresh, and context switches (voluntary+not) in all, between two taskTimes(). */
    static String taskSplit(Map<String, long[]> a, Map<String, long[]> b, long done) {
        long nsPerTick = 1_000_000_000L / 100; /* USER_HZ */
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, long[]> e : b.entrySet()) {
            long[] x = a.getOrDefault(e.getKey(), new long[4]);
            long[] y = e.getValue();
            long u = (y[0] - x[0]) * nsPerTick, k = (y[1] - x[1]) * nsPerTick;
            if (u + k > 0 || y[2] + y[3] > x[2] + x[3])
                sb.append(String.format(" %s=%.0f/%.0f,cs=%d+%d", e.getKey().replace(' ', '_'), (double) u / done,
                        (double) k / done, y[2] - x[2], y[3] - x[3]));
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        List<Integer> sizes = args.length > 0 ? java.util.Arrays.stream(args).map(Integer::valueOf).toList()
                : List.of(100_000, 1_000_000);
        int streamLen = Integer.parseInt(System.getProperty("bench.stream", "200000"));
        long budgetNs = TimeUnit.SECONDS.toNanos(Long.parseLong(System.getProperty("bench.budget", "10")));
        if (Boolean.getBoolean("bench.idle")) {
            long idle = kthreadsNs();
            Thread.sleep(1000);
            System.out.printf("# binding-bench: kworker threads idle: %d ns in 1 s; %s %s, %d CPUs%n",
                    kthreadsNs() - idle, System.getProperty("java.vm.name"), System.getProperty("java.version"),
                    Runtime.getRuntime().availableProcessors());
        }
        String paced = System.getProperty("bench.paced");
        if (paced != null) {
            String[] rs = paced.split(",");
            only = System.getProperty("bench.impls", "");
            for (int n : sizes) {
                long rate = Long.parseLong(rs[0]), seconds = Long.parseLong(rs[1]);
                runPaced("twheel-timer", (h, k) -> new NettyTimer(h, new TwheelTimer(), "twheel-timer"), n, rate,
                        seconds);
                runPaced("hashedwheeltimer", (h, k) -> new NettyTimer(h, new HashedWheelTimer(), "hashedwheeltimer"),
                        n, rate, seconds);
                runPaced("kafka-systemtimer", (h, k) -> new Kafka(h), n, rate, seconds);
            }
            return;
        }
        for (int n : sizes) {
            Random rnd = new Random(88172645463325252L);
            long[] stream = new long[streamLen];
            for (int i = 0; i < streamLen; i++)
                stream[i] = rnd.nextInt(n);
            only = System.getProperty("bench.impls", "");
            run("twheel", (h, k) -> new WheelOps(h, false), n, stream, streamLen, budgetNs);
            run("twheel-refresh-ids", (h, k) -> new WheelOps(h, true), n, stream, streamLen, budgetNs);
            run("twheel-touch", Touch::new, n, stream, streamLen, budgetNs);
            run("twheel-timer", TimerWithRearms::new, n, stream, streamLen, budgetNs);
            run("hashedwheeltimer", (h, k) -> new NettyTimer(h, new HashedWheelTimer(), "hashedwheeltimer"), n, stream,
                    streamLen, budgetNs);
            run("kafka-systemtimer", (h, k) -> new Kafka(h), n, stream, streamLen, budgetNs);
            run("scheduledthreadpoolexecutor", (h, k) -> new Stpe(h), n, stream, streamLen, budgetNs);
            run("delayqueue", (h, k) -> new Queue(h), n, stream, streamLen, budgetNs);
        }
    }
}
