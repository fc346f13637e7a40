// SPDX-License-Identifier: GPL-2.0
/*
 * Scen: the JVM ways of the scenario benchmark, one per argument, each a
 * driver of the protocol in ../scen.h (scenctl starts it):
 *
 *   null        the replay alone: the floor the JVM ways are measured from
 *   netty       Netty 4.1's HashedWheelTimer: a Timeout per id; a refresh
 *               cancels it and takes a new one (the row's tick; 512
 *               buckets, the default)
 *   netty-lazy  HashedWheelTimer as Netty's IdleStateHandler uses it: a
 *               refresh stores the time; the Timeout, when it runs,
 *               expires the id if that is a timeout old, else takes a new
 *               Timeout for what is left
 *   kafka       Kafka's hierarchical wheel, SystemTimer behind its reaper
 *               thread (SystemTimerReaper, as the broker's purgatories run
 *               it; the row's tick in whole ms, at least Kafka's 1 ms, 20
 *               buckets a level: Kafka's default; the timeout and a tick, as
 *               a task runs up to a tick early); a refresh cancels the
 *               TimerTask and adds a new one
 *   stpe        the JDK's ScheduledThreadPoolExecutor, one thread,
 *               setRemoveOnCancelPolicy(true): a ScheduledFuture per id,
 *               cancelled and scheduled again on refresh
 *   delayqueue  the JDK's DelayQueue and a taker thread: a refresh puts a
 *               new element and records the id's latest deadline; the
 *               taker drops elements that are no longer the latest (remove()
 *               is a linear scan: nobody calls it per refresh on a million)
 *   twheel      /dev/twheel through the Java binding's id API (org.twheel
 *               Wheel), as scen-c's twheel-batch: each turn's refreshes in
 *               one Wheel.refreshAll (addIfAbsent), adds and cancels in one
 *               Wheel.submit of a Batch; expiries on Wheel.listen's thread
 *   twheel-touch  the same with a touch table, as scen-c's twheel-touch: an
 *               add binds the id to its slot (Batch.bind), a refresh is
 *               TouchTable.touch, no system call (the warm-up's ids, past
 *               the table, take twheel's path)
 *   twheel-netty  the netty way with the binding's TwheelTimer in place of
 *               HashedWheelTimer, the same code otherwise: the drop-in
 *
 * Every way keeps the handle of each id in a ConcurrentHashMap, as a
 * server does to find it again on a refresh or a cancel; expiries run on
 * the timer's own thread and are handed to the main thread's output.
 * Every way with a tick (Netty's, Kafka's, twheel's) takes the
 * schedule's: one precision for the row. The main thread replays the
 * schedule: each turn applies the events that are due, then parks at
 * least the schedule's gathering wait. Before that the JIT
 * is warmed up on ids outside the schedule's (warm()), as a long-running
 * server's code is compiled by the time it holds its millions of ids.
 * The run's JVM has a fixed heap (run.sh: -Xms = -Xmx, touched at start),
 * as a server's is set up; at the end it says its live heap after
 * System.gc() (scen.h).
 */
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.apache.kafka.server.util.timer.TimerTask;
import org.twheel.Batch;
import org.twheel.TouchTable;
import org.twheel.TwheelTimer;
import org.twheel.Wheel;

public final class Scen {
    static final int ADD = 0, REFRESH = 1, CANCEL = 2, MARK = 3;
    static final long LATE_NS = 10_000_000L;

    /* The schedule's header (scen.h) and events. */
    static long nrIds, timeoutNs, tickNs, endUs, gatherNs;
    static int[] ev;

    /**
     * One way: apply an event at the time the loop read; turn() once the
     * loop turn's events are applied (and before a mark), for a way that
     * gathers them.
     */
    interface Way {
        void apply(int op, long id, long now) throws Exception;

        default void turn() throws Exception {
        }
    }

    /* ---- expiries to fd 3: from any thread, written by the main one ---- */

    static final ByteBuffer out = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    static FileChannel fd3;

    static void report(long id) {
        long now = System.nanoTime();
        /* A warm-up id (warm() outlasted its timeout): not the schedule's. */
        if (id >= WARM_BASE)
            return;
        synchronized (out) {
            if (out.remaining() < 16)
                flush();
            out.putLong(id).putLong(now);
        }
    }

    static void flush() {
        synchronized (out) {
            out.flip();
            try {
                while (out.hasRemaining())
                    fd3.write(out);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            out.clear();
        }
    }

    /* ---- the ways ---- */

    static Way netty(Timer timer) {
        ConcurrentHashMap<Long, Timeout> map = new ConcurrentHashMap<>();
        return (op, id, now) -> {
            Timeout old = op == CANCEL ? map.remove(id) : map.get(id);
            if (old != null)
                old.cancel();
            if (op == CANCEL)
                return;
            map.put(id, timer.newTimeout(t -> {
                report(id);
                map.remove(id, t);
            }, timeoutNs, TimeUnit.NANOSECONDS));
        };
    }

    /*
     * IdleStateHandler's way: one Timeout per id, taken once; a refresh
     * stores the time. When it runs, an id whose last arm is a timeout
     * old expires; any other takes a new Timeout for what is left. One
     * that finds its id cancelled, or re-added with a task of its own,
     * does nothing.
     */
    static final class Idle implements io.netty.util.TimerTask {
        final long id;
        final Timer timer;
        final ConcurrentHashMap<Long, Idle> map;
        volatile long last;
        volatile Timeout timeout;

        Idle(long id, Timer timer, ConcurrentHashMap<Long, Idle> map) {
            this.id = id;
            this.timer = timer;
            this.map = map;
            last = System.nanoTime();
        }

        @Override
        public void run(Timeout t) {
            if (map.get(id) != this)
                return;
            long left = last + timeoutNs - System.nanoTime();
            if (left > 0)
                timeout = timer.newTimeout(this, left, TimeUnit.NANOSECONDS);
            else if (map.remove(id, this))
                report(id);
        }
    }

    static Way nettyLazy(Timer timer) {
        ConcurrentHashMap<Long, Idle> map = new ConcurrentHashMap<>();
        return (op, id, now) -> {
            if (op == CANCEL) {
                Idle old = map.remove(id);
                if (old != null)
                    old.timeout.cancel();
                return;
            }
            Idle e = map.get(id);
            if (e != null) {
                e.last = System.nanoTime();
                return;
            }
            e = new Idle(id, timer, map);
            map.put(id, e);
            e.timeout = timer.newTimeout(e, timeoutNs, TimeUnit.NANOSECONDS);
        };
    }

    static final class KafkaTask extends TimerTask {
        final long id;
        final ConcurrentHashMap<Long, KafkaTask> map;

        KafkaTask(long id, long delayMs, ConcurrentHashMap<Long, KafkaTask> map) {
            super(delayMs);
            this.id = id;
            this.map = map;
        }

        @Override
        public void run() {
            report(id);
            map.remove(id, this);
        }
    }

    static Way kafka() {
        long tickMs = Math.max(1, tickNs / 1_000_000L);
        SystemTimerReaper timer = new SystemTimerReaper("scen-reaper",
                new SystemTimer("scen", tickMs, 20, TimeUnit.NANOSECONDS.toMillis(System.nanoTime())));
        ConcurrentHashMap<Long, KafkaTask> map = new ConcurrentHashMap<>();
        /* A task runs once its bucket, its deadline rounded down to the tick, is due: up to a tick early, so a tick more. */
        long delayMs = timeoutNs / 1_000_000L + tickMs;
        return (op, id, now) -> {
            KafkaTask old = op == CANCEL ? map.remove(id) : map.get(id);
            if (old != null)
                old.cancel();
            if (op == CANCEL)
                return;
            KafkaTask t = new KafkaTask(id, delayMs, map);
            map.put(id, t);
            timer.add(t);
        };
    }

    static final class StpeTask implements Runnable {
        final long id;
        final ConcurrentHashMap<Long, StpeTask> map;
        volatile ScheduledFuture<?> future;

        StpeTask(long id, ConcurrentHashMap<Long, StpeTask> map) {
            this.id = id;
            this.map = map;
        }

        @Override
        public void run() {
            report(id);
            map.remove(id, this);
        }
    }

    static Way stpe() {
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1);
        ex.setRemoveOnCancelPolicy(true);
        ConcurrentHashMap<Long, StpeTask> map = new ConcurrentHashMap<>();
        return (op, id, now) -> {
            StpeTask old = op == CANCEL ? map.remove(id) : map.get(id);
            if (old != null)
                old.future.cancel(false);
            if (op == CANCEL)
                return;
            StpeTask t = new StpeTask(id, map);
            map.put(id, t);
            t.future = ex.schedule(t, timeoutNs, TimeUnit.NANOSECONDS);
        };
    }

    static final class Item implements Delayed {
        final long id, deadline;

        Item(long id, long deadline) {
            this.id = id;
            this.deadline = deadline;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(deadline, ((Item) o).deadline);
        }
    }

    static Way delayqueue() {
        DelayQueue<Item> q = new DelayQueue<>();
        ConcurrentHashMap<Long, Long> latest = new ConcurrentHashMap<>();
        Thread taker = new Thread(() -> {
            try {
                for (;;) {
                    Item it = q.take();
                    if (latest.remove(it.id, it.deadline))
                        report(it.id);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "scen-taker");
        taker.setDaemon(true);
        taker.start();
        return (op, id, now) -> {
            if (op == CANCEL) {
                latest.remove(id);
                return;
            }
            long dl = now + timeoutNs;
            latest.put(id, dl);
            q.put(new Item(id, dl));
        };
    }

    static final int BATCH = 4096, ENOENT = 2;

    /*
     * A turn's events in order, as runs: a run of refreshes goes in one
     * refreshAll, a run of adds and cancels in one submit, so an id's
     * events reach the wheel in the schedule's order. With a touch table
     * each id has the slot of its number: an add binds it, a refresh is
     * a touch.
     */
    static final class TwheelWay implements Way {
        final Wheel wheel;
        final TouchTable table;
        final Batch batch = new Batch(BATCH);
        final long[] ids = new long[BATCH];
        int nids;

        TwheelWay(boolean touch) throws IOException {
            /* The row's tick, or the module's finest where the row's is finer. */
            Wheel.Config c = new Wheel.Config().tick(Duration.ofNanos(Math.max(tickNs, 100_000L)))
                    .timeout(Duration.ofNanos(timeoutNs));
            wheel = Wheel.open(touch ? c.touchSlots((int) nrIds) : c);
            table = touch ? wheel.touchTable() : null;
            wheel.listen((id, deadlineNs, expiredNs) -> report(id));
        }

        @Override
        public void apply(int op, long id, long now) throws IOException {
            boolean slot = table != null && id < nrIds;
            if (op == REFRESH && slot) {
                table.touch((int) id);
                return;
            }
            if (op == REFRESH) {
                sendOps();
                ids[nids++] = id;
                if (nids == BATCH)
                    sendIds();
                return;
            }
            sendIds();
            if (op == ADD && slot)
                batch.add(id).bind((int) id);
            else if (op == ADD)
                batch.add(id);
            else
                batch.cancel(id);
            if (batch.size() == BATCH)
                sendOps();
        }

        @Override
        public void turn() throws IOException {
            sendOps();
            sendIds();
        }

        void sendOps() throws IOException {
            if (batch.size() == 0)
                return;
            wheel.submit(batch);
            /* A cancel of an id that expired meanwhile is ENOENT: nothing to do; any other failure breaks the run. */
            for (int i = 0; i < batch.size(); i++)
                if (batch.errno(i) != 0 && batch.errno(i) != ENOENT)
                    batch.check(i);
            batch.clear();
        }

        void sendIds() throws IOException {
            if (nids == 0)
                return;
            int failed = wheel.refreshAll(ids, 0, nids, null, true, null);
            if (failed != 0)
                throw new IOException("twheel: " + failed + " refreshes neither refreshed nor added");
            nids = 0;
        }
    }

    /* Three rounds of add, refresh and cancel of WARM ids the schedule never uses. */
    static final int WARM = 50_000;
    static final long WARM_BASE = 1 << 29;

    static void warm(Way w) throws Exception {
        for (int round = 0; round < 3; round++)
            for (int op : new int[] { ADD, REFRESH, CANCEL }) {
                for (long id = WARM_BASE; id < WARM_BASE + WARM; id++)
                    w.apply(op, id, System.nanoTime());
                w.turn();
            }
    }

    static Way way(String name) throws IOException {
        switch (name) {
        case "null": return (op, id, now) -> { };
        case "netty": return netty(new HashedWheelTimer(tickNs, TimeUnit.NANOSECONDS));
        case "netty-lazy": return nettyLazy(new HashedWheelTimer(tickNs, TimeUnit.NANOSECONDS));
        case "twheel-netty": return netty(new TwheelTimer(tickNs, TimeUnit.NANOSECONDS));
        case "twheel": return new TwheelWay(false);
        case "twheel-touch": return new TwheelWay(true);
        case "kafka": return kafka();
        case "stpe": return stpe();
        case "delayqueue": return delayqueue();
        default: return null;
        }
    }

    /* ---- the protocol and the loop ---- */

    static void load(String path) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(Paths.get(path))).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getLong(0) != 0x324e454353L)
            throw new IOException(path + ": not a schedule");
        nrIds = b.getLong(24);
        long nrEvents = b.getLong(32);
        timeoutNs = b.getLong(40);
        tickNs = b.getLong(48);
        endUs = b.getLong(56);
        gatherNs = b.getLong(88);
        ev = new int[(int) (2 * nrEvents)];
        b.position(96);
        b.asIntBuffer().get(ev);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Scen WAY SCHEDULE (scenctl runs it; see scen.h)");
            System.exit(2);
        }
        load(args[1]);
        Way w = way(args[0]);
        if (w == null) {
            System.err.println("Scen: no way " + args[0]);
            System.exit(2);
        }
        fd3 = new FileOutputStream("/proc/self/fd/3").getChannel();
        warm(w);
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String go = in.readLine();
        long t0 = Long.parseUnsignedLong(go.substring(3).trim());
        long end = t0 + endUs * 1000L, lag = 0, applied = 0;
        int i = 0, n = ev.length / 2;

        while (System.nanoTime() < t0)
            LockSupport.parkNanos(t0 - System.nanoTime());
        for (;;) {
            long now = System.nanoTime();
            int first = i;
            while (i < n && t0 + (ev[2 * i] & 0xffffffffL) * 1000L <= now) {
                int idOp = ev[2 * i + 1], op = idOp >>> 30;
                long id = idOp & ((1 << 30) - 1);
                if (op == MARK) {
                    w.turn();
                    flush();
                    System.out.println("mark " + id);
                    System.out.flush();
                } else {
                    w.apply(op, id, now);
                    applied++;
                }
                i++;
            }
            w.turn();
            /* The turn's first event was applied this late, its last by now. */
            if (i > first) {
                long done = System.nanoTime(), late = done - t0 - (ev[2 * first] & 0xffffffffL) * 1000L;
                lag = Math.max(lag, late);
                if (late > LATE_NS) {
                    System.out.println("late " + (ev[2 * first] & 0xffffffffL) + " "
                                       + (ev[2 * (i - 1)] & 0xffffffffL) + " " + done);
                    System.out.flush();
                }
            }
            flush();
            if (i == n && now >= end)
                break;
            long next = i < n ? t0 + (ev[2 * i] & 0xffffffffL) * 1000L : end;
            LockSupport.parkNanos(Math.max(next - System.nanoTime(), gatherNs));
        }
        /* The window is sampled: what the heap keeps after a full collection (scen.h). */
        if (!"sampled".equals(in.readLine()))
            throw new IOException("no sampled");
        System.gc();
        java.lang.management.MemoryUsage heap = java.lang.management.ManagementFactory.getMemoryMXBean()
                .getHeapMemoryUsage();
        System.out.println("heap " + heap.getUsed() + " " + heap.getCommitted());
        if (!"measured".equals(in.readLine()))
            throw new IOException("no measured");
        System.out.println("done applied=" + applied + " lag_max_ns=" + lag);
        System.out.flush();
        System.exit(0);
    }
}
