// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * TwheelTimer: Netty's io.netty.util.Timer on a /dev/twheel wheel, a
 * drop-in for HashedWheelTimer with its constructors and its semantics
 * (netty-common 4.1): replace `new HashedWheelTimer(...)` by
 * `new TwheelTimer(...)` with the same arguments.
 *
 * Each timeout is an id of a private wheel, added with its delay; the
 * timer's thread (from the ThreadFactory, started on first use as
 * Netty's) blocks in read(2) of the wheel and expires what it reads. So
 * where HashedWheelTimer's thread wakes every tick and walks a bucket,
 * this one sleeps until a timeout is due, and a cancel removes the id
 * from the kernel's wheel at once (one ioctl), not at the next tick.
 *
 * Netty's contract, kept as HashedWheelTimer keeps it (the tests run the
 * same contract against both):
 *  - a task runs at most once, never before its delay, on the timer's
 *    thread unless a taskExecutor was given; its exceptions are logged;
 *  - cancel() returns true only for the first cancel of a timeout that
 *    has not expired; a timeout that expires and is cancelled at the same
 *    moment either runs or reports cancelled, never both;
 *  - maxPendingTimeouts > 0 caps pending timeouts with
 *    RejectedExecutionException (so does a full wheel: ENOSPC);
 *  - stop() cancels and returns the timeouts that had neither expired nor
 *    been cancelled; after it, newTimeout throws IllegalStateException;
 *    stop() from the timer's own thread throws IllegalStateException.
 * Differences that only make it stricter: the tick may be as fine as
 * 100 us (Netty raises anything below 1 ms to 1 ms), a tick above the
 * wheel's 1 h is used as 1 h; ticksPerWheel is checked as Netty checks it
 * and has no other use (the kernel's wheel is hierarchical: no size to
 * choose). Delays beyond the wheel's longest timeout (2^32 ticks) are
 * re-armed when that passes, so they are never early either.
 *
 * Where the module may be missing, TwheelTimer.orHashedWheelTimer(...),
 * with the same arguments, makes a HashedWheelTimer instead and logs why,
 * once per JVM, through Netty's own logger (InternalLoggerFactory, which
 * Netty points at SLF4J, Log4j 2 or java.util.logging, whichever the
 * application has): a Netty user finds the line where Netty's own
 * warnings go, with no logging library added by this jar.
 *
 * A worker whose read(2) fails (an errno no wheel should give) cannot
 * expire anything again: the timer then acts as a stopped one for new
 * work (newTimeout throws IllegalStateException, with the read's error as
 * the cause), while the timeouts already pending stay pending, so that
 * stop() cancels and returns them as Netty's stop() returns every
 * timeout that did not run: the one place where the application learns
 * which tasks will not run, and can reschedule them elsewhere.
 */
package org.twheel;

import io.netty.util.HashedWheelTimer;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import io.netty.util.concurrent.ImmediateExecutor;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.netty.util.internal.ObjectUtil.checkNotNull;
import static io.netty.util.internal.ObjectUtil.checkPositive;

/** A {@link Timer} whose timeouts live in the kernel's timing wheel (/dev/twheel). */
public final class TwheelTimer implements Timer {
    private static final InternalLogger logger = InternalLoggerFactory.getInstance(TwheelTimer.class);
    private static final ResourceLeakDetector<TwheelTimer> leakDetector =
            ResourceLeakDetectorFactory.instance().newResourceLeakDetector(TwheelTimer.class, 1);
    /* Each timer holds a thread and a wheel: as for HashedWheelTimer, many is a mistake. */
    private static final AtomicInteger INSTANCE_COUNTER = new AtomicInteger();
    private static final AtomicBoolean WARNED_TOO_MANY_INSTANCES = new AtomicBoolean();
    private static final int INSTANCE_COUNT_LIMIT = 64;
    private static final int ST_INIT = 0;
    private static final int ST_STARTED = 1;
    private static final int ST_SHUTDOWN = 2;
    private static final long TICK_MIN_NS = Wheel.TICK_MIN.toNanos();
    private static final long TICK_MAX_NS = Wheel.TICK_MAX.toNanos();
    private static final long MAX_TIMEOUT_NS = 1L << 62;
    private static final int READ_BATCH = 1024;

    /* Whether orHashedWheelTimer has said why it fell back: once per JVM, not per timer. */
    private static final AtomicBoolean LOGGED_FALLBACK = new AtomicBoolean();

    private final AtomicInteger state = new AtomicInteger(ST_INIT);
    private final Ops wheel;
    /* Why the worker stopped reading, or null while it reads: set once, by the worker. */
    private volatile Throwable workerFailure;
    private final Thread workerThread;
    private final ResourceLeakTracker<TwheelTimer> leak;
    private final long tickNs;
    private final long maxTimeoutNs;
    private final long maxPendingTimeouts;
    private final Executor taskExecutor;
    private final ConcurrentHashMap<Long, TwheelTimeout> live = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong();
    private final AtomicLong pendingTimeouts = new AtomicLong();
    /* Deadlines are kept as Netty keeps them: ns since the timer was made, saturating. */
    private final long startTime = System.nanoTime();

    /** A timer with the default thread factory, tick (100 ms) and ticks per wheel (512). */
    public TwheelTimer() {
        this(Executors.defaultThreadFactory());
    }

    /** A timer with this tick. */
    public TwheelTimer(long tickDuration, TimeUnit unit) {
        this(Executors.defaultThreadFactory(), tickDuration, unit);
    }

    /** A timer with this tick; {@code ticksPerWheel} is checked as Netty checks it. */
    public TwheelTimer(long tickDuration, TimeUnit unit, int ticksPerWheel) {
        this(Executors.defaultThreadFactory(), tickDuration, unit, ticksPerWheel);
    }

    /** A timer whose thread comes from {@code threadFactory}, with a 100 ms tick. */
    public TwheelTimer(ThreadFactory threadFactory) {
        this(threadFactory, 100, TimeUnit.MILLISECONDS);
    }

    /** A timer whose thread comes from {@code threadFactory}, with this tick. */
    public TwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit) {
        this(threadFactory, tickDuration, unit, 512);
    }

    /** As {@link #TwheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)}, leak detection on. */
    public TwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, true);
    }

    /** As {@link #TwheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)}, no cap. */
    public TwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection, -1);
    }

    /** As {@link #TwheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)}, tasks on the timer's thread. */
    public TwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection, long maxPendingTimeouts) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection, maxPendingTimeouts,
                ImmediateExecutor.INSTANCE);
    }

    /**
     * Creates a timer and opens its wheel.
     *
     * @param threadFactory      makes the thread that reads the wheel (and runs the tasks, by default)
     * @param tickDuration       the precision: deadlines are rounded up to it
     * @param unit               the unit of {@code tickDuration}
     * @param ticksPerWheel      HashedWheelTimer's wheel size: checked, otherwise unused
     * @param leakDetection      track the timer with Netty's leak detector (always if the thread is not a daemon)
     * @param maxPendingTimeouts more pending timeouts than this are rejected; 0 or less: no cap
     * @param taskExecutor       runs the tasks; the caller shuts it down
     * @throws NullPointerException     {@code threadFactory}, {@code unit} or {@code taskExecutor} is null
     * @throws IllegalArgumentException {@code tickDuration} or {@code ticksPerWheel} is not positive, or too large
     * @throws UncheckedIOException     no wheel could be opened (see {@link #unavailabilityCause()})
     */
    public TwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection, long maxPendingTimeouts, Executor taskExecutor) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection, maxPendingTimeouts, taskExecutor,
                WheelOps::open);
    }

    /* The full constructor, with where the wheel comes from: a test's Ops on a host without the module. */
    TwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection, long maxPendingTimeouts, Executor taskExecutor, Opener opener) {
        checkNotNull(threadFactory, "threadFactory");
        checkNotNull(unit, "unit");
        checkPositive(tickDuration, "tickDuration");
        checkPositive(ticksPerWheel, "ticksPerWheel");
        this.taskExecutor = checkNotNull(taskExecutor, "taskExecutor");
        if (ticksPerWheel > 1 << 30)
            throw new IllegalArgumentException("ticksPerWheel may not be greater than 2^30: " + ticksPerWheel);
        long wheelLength = Integer.highestOneBit(ticksPerWheel - 1) << 1;
        if (wheelLength == 0)
            wheelLength = 1;
        long duration = unit.toNanos(tickDuration);
        if (duration >= Long.MAX_VALUE / wheelLength)
            throw new IllegalArgumentException(String.format(
                    "tickDuration: %d (expected: 0 < tickDuration in nanos < %d",
                    tickDuration, Long.MAX_VALUE / wheelLength));
        if (duration < TICK_MIN_NS) {
            logger.warn("Configured tickDuration {} smaller than {}, using 100us.", tickDuration, TICK_MIN_NS);
            duration = TICK_MIN_NS;
        }
        tickNs = Math.min(duration, TICK_MAX_NS);
        maxTimeoutNs = tickNs >= MAX_TIMEOUT_NS >>> 32 ? MAX_TIMEOUT_NS : tickNs << 32;
        this.maxPendingTimeouts = maxPendingTimeouts;
        wheel = opener.open(tickNs);
        workerThread = threadFactory.newThread(this::work);
        leak = leakDetection || !workerThread.isDaemon() ? leakDetector.track(this) : null;
        if (INSTANCE_COUNTER.incrementAndGet() > INSTANCE_COUNT_LIMIT
                && WARNED_TOO_MANY_INSTANCES.compareAndSet(false, true))
            logger.error("You are creating too many TwheelTimer instances. TwheelTimer is a shared resource "
                    + "that must be reused across the JVM, so that only a few instances are created.");
    }

    /**
     * Why no TwheelTimer can be made here (no module, no permission, no
     * native library), or null: {@link Wheel#unavailabilityCause()}, found
     * once per JVM.
     */
    public static Throwable unavailabilityCause() {
        return Wheel.unavailabilityCause();
    }

    /**
     * Whether a TwheelTimer can be made here, found once per JVM on the
     * first call (as Netty's {@code Epoll.isAvailable()}) and then only
     * read: a module loaded later is seen by the next JVM.
     * {@link #orHashedWheelTimer()} is the one-line way to act on it.
     */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)} with {@link #TwheelTimer()}'s defaults. */
    public static Timer orHashedWheelTimer() {
        return orHashedWheelTimer(Executors.defaultThreadFactory());
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)} with this tick. */
    public static Timer orHashedWheelTimer(long tickDuration, TimeUnit unit) {
        return orHashedWheelTimer(Executors.defaultThreadFactory(), tickDuration, unit);
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)} with this tick and wheel size. */
    public static Timer orHashedWheelTimer(long tickDuration, TimeUnit unit, int ticksPerWheel) {
        return orHashedWheelTimer(Executors.defaultThreadFactory(), tickDuration, unit, ticksPerWheel);
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)} with a 100 ms tick. */
    public static Timer orHashedWheelTimer(ThreadFactory threadFactory) {
        return orHashedWheelTimer(threadFactory, 100, TimeUnit.MILLISECONDS);
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)} with 512 ticks per wheel. */
    public static Timer orHashedWheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit) {
        return orHashedWheelTimer(threadFactory, tickDuration, unit, 512);
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)}, leak detection on. */
    public static Timer orHashedWheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
            int ticksPerWheel) {
        return orHashedWheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, true);
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)}, no cap. */
    public static Timer orHashedWheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
            int ticksPerWheel, boolean leakDetection) {
        return orHashedWheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection, -1);
    }

    /** {@link #orHashedWheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)}, tasks on the timer's thread. */
    public static Timer orHashedWheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
            int ticksPerWheel, boolean leakDetection, long maxPendingTimeouts) {
        return orHashedWheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection,
                maxPendingTimeouts, ImmediateExecutor.INSTANCE);
    }

    /**
     * A TwheelTimer where one can be made ({@link #isAvailable()}), else a
     * {@link HashedWheelTimer} with the same arguments: the one line for an
     * application that must also start where the module is missing. The
     * first fallback in the JVM logs why (at INFO, through Netty's
     * {@link InternalLoggerFactory}, as {@code io.netty.util.HashedWheelTimer}
     * logs), later ones say nothing. A wheel that cannot be opened although
     * the device is there (EMFILE, a per-user cap) falls back the same way.
     *
     * @throws NullPointerException     {@code threadFactory}, {@code unit} or {@code taskExecutor} is null
     * @throws IllegalArgumentException {@code tickDuration} or {@code ticksPerWheel} is not positive, or too large
     * @see #TwheelTimer(ThreadFactory, long, TimeUnit, int, boolean, long, Executor)
     */
    public static Timer orHashedWheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
            int ticksPerWheel, boolean leakDetection, long maxPendingTimeouts, Executor taskExecutor) {
        Throwable why = unavailabilityCause();
        if (why == null) {
            try {
                return new TwheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection,
                        maxPendingTimeouts, taskExecutor);
            } catch (UncheckedIOException e) {
                why = e.getCause();
            }
        }
        Timer t = new HashedWheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection,
                maxPendingTimeouts, taskExecutor);
        if (LOGGED_FALLBACK.compareAndSet(false, true))
            logger.info("TwheelTimer is not available here ({}): using io.netty.util.HashedWheelTimer instead.",
                    why.toString());
        return t;
    }

    /**
     * Starts the timer's thread; {@link #newTimeout} does it on demand.
     *
     * @throws IllegalStateException the timer was stopped
     */
    public void start() {
        switch (state.get()) {
        case ST_INIT:
            if (state.compareAndSet(ST_INIT, ST_STARTED))
                workerThread.start();
            break;
        case ST_STARTED:
            break;
        default:
            throw new IllegalStateException("cannot be started once stopped");
        }
    }

    @Override
    public Set<Timeout> stop() {
        if (Thread.currentThread() == workerThread)
            throw new IllegalStateException("TwheelTimer.stop() cannot be called from TimerTask");
        if (!state.compareAndSet(ST_STARTED, ST_SHUTDOWN)) {
            if (state.getAndSet(ST_SHUTDOWN) != ST_SHUTDOWN)
                release();
            return Collections.emptySet();
        }
        try {
            wheel.close();
            boolean interrupted = false;
            while (workerThread.isAlive()) {
                workerThread.interrupt();
                try {
                    workerThread.join(100);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted)
                Thread.currentThread().interrupt();
        } finally {
            release();
        }
        Set<Timeout> cancelled = new HashSet<>();
        for (TwheelTimeout t : live.values())
            if (t.cancel())
                cancelled.add(t);
        return cancelled;
    }

    private void release() {
        wheel.close();
        INSTANCE_COUNTER.decrementAndGet();
        if (leak != null)
            leak.close(this);
    }

    /**
     * Schedules {@code task} to run once after {@code delay} (a negative
     * delay: at the next tick).
     *
     * @throws NullPointerException       {@code task} or {@code unit} is null
     * @throws IllegalStateException      the timer was stopped
     * @throws RejectedExecutionException maxPendingTimeouts, or the wheel's cap, is reached
     */
    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        checkNotNull(task, "task");
        checkNotNull(unit, "unit");
        long pending = pendingTimeouts.incrementAndGet();
        if (maxPendingTimeouts > 0 && pending > maxPendingTimeouts) {
            pendingTimeouts.decrementAndGet();
            throw new RejectedExecutionException("Number of pending timeouts (" + pending
                    + ") is greater than or equal to maximum allowed pending timeouts (" + maxPendingTimeouts + ")");
        }
        try {
            start();
            Throwable dead = workerFailure;
            if (dead != null)
                throw new IllegalStateException("TwheelTimer's worker has stopped: " + dead, dead);
        } catch (IllegalStateException e) {
            pendingTimeouts.decrementAndGet();
            throw e;
        }
        long delayNs = Math.max(0, unit.toNanos(delay));
        long deadline = System.nanoTime() - startTime + delayNs;
        if (delayNs > 0 && deadline < 0)
            deadline = Long.MAX_VALUE;
        TwheelTimeout t = new TwheelTimeout(this, task, nextId.getAndIncrement(), deadline);
        live.put(t.id, t);
        long r = wheel.add(t.id, Math.min(delayNs, maxTimeoutNs));
        if (r < 0) {
            live.remove(t.id);
            pendingTimeouts.decrementAndGet();
            int errno = (int) -r;
            if (errno == Errno.EBADF)
                throw new IllegalStateException("cannot be started once stopped");
            if (errno == Errno.ENOSPC || errno == Errno.ENOMEM)
                throw new RejectedExecutionException("twheel: " + Errno.describe(errno));
            throw new IllegalStateException("twheel: add: " + Errno.describe(errno));
        }
        return t;
    }

    /** The number of timeouts that have neither expired nor been cancelled. */
    public long pendingTimeouts() {
        return pendingTimeouts.get();
    }

    /* The timer's thread: read what the wheel expired, expire it. Context: workerThread. */
    private void work() {
        Expirations ev = new Expirations(READ_BATCH);
        while (state.get() == ST_STARTED) {
            int n;
            try {
                n = wheel.read(ev);
            } catch (ClosedWheelException e) {
                break;
            } catch (IOException | RuntimeException e) {
                workerFailure = e;
                logger.error("TwheelTimer: reading the wheel failed; no timeout will expire, newTimeout refuses "
                        + "new ones, stop() returns the pending ones", e);
                break;
            }
            for (int i = 0; i < n; i++) {
                TwheelTimeout t = live.get(ev.id(i));
                if (t != null)
                    t.due();
            }
        }
    }

    /* What the timer does with its wheel; an interface so that a test can make the read fail. */
    interface Ops {
        /** Adds {@code id} due in {@code timeoutNs}: the deadline, or -errno. */
        long add(long id, long timeoutNs);

        /** Cancels {@code id}: its deadline, or -errno (ENOENT once it expired). */
        long cancel(long id);

        /** Waits for expirations and reads them into {@code ev}: how many. */
        int read(Expirations ev) throws IOException;

        void close();
    }

    /* Opens the timer's wheel with this tick, or throws UncheckedIOException. */
    interface Opener {
        Ops open(long tickNs);
    }

    /* The timer's Ops on a wheel of /dev/twheel. */
    private static final class WheelOps implements Ops {
        private final Wheel w;

        private WheelOps(Wheel w) {
            this.w = w;
        }

        static Ops open(long tickNs) {
            try {
                return new WheelOps(Wheel.open(new Wheel.Config().tick(Duration.ofNanos(tickNs))
                        .timeout(Duration.ofNanos(tickNs))));
            } catch (IOException e) {
                throw new UncheckedIOException("TwheelTimer: " + e.getMessage(), e);
            }
        }

        @Override
        public long add(long id, long timeoutNs) {
            return w.rawOp(Wheel.OP_ADD, id, timeoutNs, Wheel.OPF_TIMEOUT);
        }

        @Override
        public long cancel(long id) {
            return w.rawOp(Wheel.OP_CANCEL, id, 0, 0);
        }

        @Override
        public int read(Expirations ev) throws IOException {
            return w.read(ev, null);
        }

        @Override
        public void close() {
            w.close();
        }
    }

    private static final class TwheelTimeout implements Timeout, Runnable {
        private static final int ST_INIT = 0;
        private static final int ST_CANCELLED = 1;
        private static final int ST_EXPIRED = 2;

        private final TwheelTimer timer;
        private final TimerTask task;
        private final long id;
        private final long deadline;
        private final AtomicInteger state = new AtomicInteger(ST_INIT);

        TwheelTimeout(TwheelTimer timer, TimerTask task, long id, long deadline) {
            this.timer = timer;
            this.task = task;
            this.id = id;
            this.deadline = deadline;
        }

        @Override
        public Timer timer() {
            return timer;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return state.get() == ST_EXPIRED;
        }

        @Override
        public boolean isCancelled() {
            return state.get() == ST_CANCELLED;
        }

        @Override
        public boolean cancel() {
            if (!state.compareAndSet(ST_INIT, ST_CANCELLED))
                return false;
            timer.live.remove(id, this);
            timer.pendingTimeouts.decrementAndGet();
            /* ENOENT: expired in the kernel, not read yet; the read will find it gone. */
            timer.wheel.cancel(id);
            return true;
        }

        /* The wheel expired the id. Context: the timer's thread. */
        void due() {
            long left = deadline - (System.nanoTime() - timer.startTime);
            if (left > 0) {
                /* A delay longer than the wheel's longest timeout: arm the rest. */
                timer.wheel.add(id, Math.min(left, timer.maxTimeoutNs));
                /* A cancel that raced with the re-arm may have missed the new entry. */
                if (state.get() != ST_INIT)
                    timer.wheel.cancel(id);
                return;
            }
            if (!state.compareAndSet(ST_INIT, ST_EXPIRED))
                return;
            timer.live.remove(id, this);
            timer.pendingTimeouts.decrementAndGet();
            try {
                timer.taskExecutor.execute(this);
            } catch (Throwable t) {
                logger.warn("An exception was thrown while submit TimerTask for execution.", t);
            }
        }

        @Override
        public void run() {
            try {
                task.run(this);
            } catch (Throwable t) {
                logger.warn("An exception was thrown by TimerTask.", t);
            }
        }

        @Override
        public String toString() {
            long remaining = deadline - (System.nanoTime() - timer.startTime);
            StringBuilder buf = new StringBuilder(96).append("TwheelTimeout(deadline: ");
            if (remaining > 0)
                buf.append(remaining).append(" ns later");
            else if (remaining < 0)
                buf.append(-remaining).append(" ns ago");
            else
                buf.append("now");
            if (isCancelled())
                buf.append(", cancelled");
            return buf.append(", task: ").append(task).append(')').toString();
        }
    }
}
