// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * TwheelTimer: Netty's io.netty.util.Timer on a /dev/twheel wheel, a
 * drop-in for HashedWheelTimer with its constructors and its semantics
 * (netty-common 4.1): replace `new HashedWheelTimer(...)` by
 * `new TwheelTimer(...)` with the same arguments.
 *
 * Each timeout is an id of a private wheel, due at an absolute deadline
 * on CLOCK_MONOTONIC (System.nanoTime()'s clock, the offset between the
 * two read once, so that a deadline is never early). As
 * HashedWheelTimer does, newTimeout and cancel only queue their work: the
 * timer's thread (from the ThreadFactory, started on first use as
 * Netty's) applies what was queued in one TWHEEL_IOC_BATCH per tick,
 * then reads what the wheel expired and expires it. A timeout cancelled
 * before its add was applied never reaches the kernel, and the kernel id
 * of one cancelled after is handed to the next timeout queued in place of
 * a CANCEL and an ADD. If that id is armed no later than the new
 * deadline and in the later half of its span it is left as it is, and
 * re-armed at the deadline if it expires first (a task never runs
 * early); else it is REFRESHed to it. So Netty's refresh (cancel, then
 * newTimeout with the same delay) costs the kernel at most one REFRESH
 * per half delay however often it comes, and one expiry and ADD more
 * when the refreshes stop. While nothing is
 * queued the thread does not tick: it sleeps in read(2) until a timeout
 * is due, and the first newTimeout or cancel after such a sleep wakes it
 * at the next tick with one ioctl (the add of an id of its own). A delay
 * shorter than two ticks, which a tick's wait could make late, is added
 * at once by the caller, as every timeout once was. A task therefore
 * runs no later than it would if each call went to the kernel itself.
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
import io.netty.util.internal.PlatformDependent;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
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
    /* Ops a worker applies per TWHEEL_IOC_BATCH. */
    private static final int FLUSH_BATCH = 1024;
    /* Ticks the worker keeps ticking after the last queued op, before it sleeps. */
    private static final int IDLE_TICKS = 2;
    /* The worker's own id, added to wake it: never one of nextId's. */
    static final long WAKE_ID = -1L;

    /* Whether orHashedWheelTimer has said why it fell back: once per JVM, not per timer. */
    private static final AtomicBoolean LOGGED_FALLBACK = new AtomicBoolean();

    private final AtomicInteger state = new AtomicInteger(ST_INIT);
    final Ops wheel; /* package-private: the device tests read its wheel's fdinfo */
    /* Why the worker stopped reading, or null while it reads: set once, by the worker. */
    private volatile Throwable workerFailure;
    private final Thread workerThread;
    private final ResourceLeakTracker<TwheelTimer> leak;
    private final long tickNs;
    private final long maxTimeoutNs;
    private final long maxPendingTimeouts;
    private final Executor taskExecutor;
    /*
     * Kernel ids. The worker's, from 1 (0 is a timeout's "none yet"), are
     * dense and reused, indexed by its Flush's tables; nextId counts the
     * ones it ever took (an AtomicLong only so that a test may read it).
     * Those of newTimeout's direct path, from DIRECT_BASE, are the callers'
     * and never reused, mapped in direct.
     */
    final AtomicLong nextId = new AtomicLong(1);
    static final long DIRECT_BASE = 1L << 48;
    private final AtomicLong nextDirectId = new AtomicLong(DIRECT_BASE);
    private final ConcurrentHashMap<Long, TwheelTimeout> direct = new ConcurrentHashMap<>();
    private final AtomicLong pendingTimeouts = new AtomicLong();
    /* Deadlines are kept as Netty keeps them: ns since the timer was made, saturating. */
    private final long startTime = System.nanoTime();
    /*
     * CLOCK_MONOTONIC minus System.nanoTime(), read with nanoTime first:
     * at least the true offset, so a kernel deadline made from it is never
     * before the Java one (0 on HotSpot, whose nanoTime is that clock).
     */
    private final long monoOffset;
    /* newTimeout's adds and cancel's removals, for the worker to apply. */
    private final Queue<TwheelTimeout> adds = PlatformDependent.newMpscQueue();
    private final Queue<TwheelTimeout> cancels = PlatformDependent.newMpscQueue();
    /* The worker waits in read(2) with no timeout: the next op must wake it. */
    private final AtomicBoolean sleeping = new AtomicBoolean();
    /* The worker's, read by stop() once the worker is gone. */
    final Flush flush = new Flush();
    /* The last batch found the wheel full (ENOSPC): newTimeout refuses until one fits. */
    private volatile boolean wheelFull;

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
        long java = System.nanoTime();
        monoOffset = wheel.now() - java;
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
        /* The worker is gone: what it had not applied is in adds and in its retry list. */
        Set<Timeout> cancelled = new HashSet<>();
        for (TwheelTimeout t : flush.byId)
            if (t != null && t.cancel())
                cancelled.add(t);
        for (TwheelTimeout t : direct.values())
            if (t.cancel())
                cancelled.add(t);
        for (TwheelTimeout t; (t = adds.poll()) != null; )
            if (t.cancel())
                cancelled.add(t);
        for (TwheelTimeout t : flush.retry)
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
        if (wheelFull) {
            pendingTimeouts.decrementAndGet();
            throw new RejectedExecutionException("twheel: " + Errno.describe(Errno.ENOSPC));
        }
        long delayNs = Math.max(0, unit.toNanos(delay));
        long now = System.nanoTime();
        long deadline = now - startTime + delayNs;
        if (delayNs > 0 && deadline < 0)
            deadline = Long.MAX_VALUE;
        /* Within the wheel's reach from whenever the worker applies it. */
        long due = now + monoOffset + Math.min(delayNs, maxTimeoutNs - tickNs);
        TwheelTimeout t = new TwheelTimeout(this, task, deadline, due);
        if (delayNs >= 2 * tickNs) {
            adds.offer(t);
            wake();
            return t;
        }
        /* Due within two ticks: a tick's wait for the worker could make it late. */
        t.kid = nextDirectId.getAndIncrement();
        direct.put(t.kid, t);
        long r = wheel.add(t.kid, delayNs);
        if (r < 0) {
            direct.remove(t.kid);
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

    /* After an op was queued: if the worker sleeps with no timeout, wake it at the next tick. */
    private void wake() {
        if (sleeping.get() && sleeping.compareAndSet(true, false))
            wheel.add(WAKE_ID, 0); /* EEXIST: a wake is on its way already */
    }

    /** The number of timeouts that have neither expired nor been cancelled. */
    public long pendingTimeouts() {
        return pendingTimeouts.get();
    }

    /*
     * The timer's thread: apply what was queued, then read what the wheel
     * expired (waiting a tick while ops come, else until something is
     * due) and expire it. Context: workerThread.
     */
    private void work() {
        Expirations ev = new Expirations(READ_BATCH);
        int idle = 0;
        while (state.get() == ST_STARTED) {
            int n;
            try {
                long waitNs = tickNs;
                if (flush.run())
                    idle = 0;
                else if (++idle > IDLE_TICKS) {
                    sleeping.set(true);
                    /* An op queued before the flag was seen has called no wake(): look again. */
                    if (adds.isEmpty() && cancels.isEmpty())
                        waitNs = -1;
                    else if (sleeping.compareAndSet(true, false))
                        continue;
                }
                n = wheel.read(ev, waitNs);
                sleeping.set(false);
            } catch (ClosedWheelException e) {
                break;
            } catch (IOException | RuntimeException e) {
                workerFailure = e;
                logger.error("TwheelTimer: reading the wheel failed; no timeout will expire, newTimeout refuses "
                        + "new ones, stop() returns the pending ones", e);
                break;
            }
            for (int i = 0; i < n; i++)
                flush.expired(ev.id(i));
        }
    }

    /*
     * The worker's application of the queues, in one batch (or more, 1024
     * ops each), and its map of kernel ids to timeouts.
     *
     * Each worker id has a slot: its timeout (byId), the deadline it was
     * last armed at in the kernel or UNARMED (kdue), and where it is (st):
     * free (not in the kernel, on the free stack), mapped to a timeout,
     * freed (its timeout cancelled, the id maybe still armed, waiting to
     * be taken or cancelled) or a zombie (its CANCEL found it expired: its
     * expiry, unread, frees it). Cancels are applied first: each frees its
     * timeout's id. Then re-arms (see below), then adds: each takes a
     * freed id if there is one, else a free or new one, which it ADDs. A
     * freed id armed no later than the new deadline, and in the later half
     * of the new timeout's span, is left as it is (so Netty's refresh,
     * cancel then newTimeout with the same delay, costs the kernel nothing
     * but one REFRESH per half delay, however often it comes); otherwise
     * it is REFRESHed to the deadline. Either way the kernel expires the
     * id no later than the deadline, and an id that expires before its
     * timeout's deadline (left as it was, then not refreshed again; or a
     * delay beyond the wheel's longest timeout) is re-armed, in the next
     * batch, at the deadline: a task never runs early. Freed ids not taken wait
     * one batch more (a cancel and its newTimeout may fall on either side
     * of a batch), then are CANCELled if armed: a cancel reaches the
     * kernel within two ticks, as HashedWheelTimer drops its cancelled
     * ones at a tick. Adds the wheel had no room for (ENOSPC, ENOMEM) are
     * kept and tried again at each tick: accepted timeouts are never
     * dropped; newTimeout refuses new ones meanwhile.
     *
     * Everything here is the worker's: its thread alone reads and writes it
     * (stop(), once the worker is gone). Direct ids are mapped in direct,
     * which newTimeout's callers add to.
     */
    final class Flush {
        private static final long UNARMED = Long.MIN_VALUE;
        private static final byte S_FREE = 0;
        private static final byte S_MAPPED = 1;
        private static final byte S_FREED = 2;
        private static final byte S_ZOMBIE = 3;
        private static final byte S_LOST = 4;
        private static final int OP_NONE = -1;

        private final Batch batch = new Batch(FLUSH_BATCH);
        /* The timeout of each op of batch (null for a cancel). */
        private final TwheelTimeout[] of = new TwheelTimeout[FLUSH_BATCH];
        final ArrayDeque<TwheelTimeout> retry = new ArrayDeque<>();
        /* Timeouts whose id expired before their deadline, to ADD again at it. */
        private final ArrayDeque<TwheelTimeout> rearm = new ArrayDeque<>();
        /* Indexed by worker id (see above). */
        TwheelTimeout[] byId = new TwheelTimeout[1024];
        private long[] kdue = new long[1024];
        private byte[] st = new byte[1024];
        private int[] free = new int[64];
        private int nfree;
        /* Freed ids: this batch's, and the last one's. */
        private int[] freed = new int[64];
        private int nfreed;
        private int[] older = new int[64];
        private int nolder;
        /* CLOCK_MONOTONIC at the start of this run. */
        private long nowMono;
        /* Batches run, and adds that took a freed id as it was armed: for the device tests. */
        volatile long runs;
        volatile long lazyTakes;
        /* Ops sent (ADD, REFRESH, CANCEL), re-arms among the ADDs, expiries read: for the benchmark. */
        final long[] sent = new long[3];
        long rearms;
        long reads;

        /* Whether there was anything to apply. */
        boolean run() throws IOException {
            boolean any = !retry.isEmpty() || !rearm.isEmpty();
            boolean full = false;
            long lazy = 0;
            TwheelTimeout t;
            /*
             * The adds queued by now, taken after the cancels queued by then:
             * a refresh's cancel is queued before its newTimeout, so each
             * add taken finds its cancel's id freed, not a new one.
             */
            int nadds = adds.size();
            nowMono = System.nanoTime() + monoOffset;
            while ((t = cancels.poll()) != null) {
                any = true;
                unmapCancelled(t);
            }
            while ((t = rearm.poll()) != null) {
                if (t.state == TwheelTimeout.ST_INIT && mapped(t)) {
                    rearms++;
                    full |= put(t, t.kid, Wheel.OP_ADD, rearmDue(t));
                }
            }
            for (int k = retry.size(); k > 0; k--) {
                int r = add(retry.poll());
                lazy += r & 1;
                full |= r > 1;
            }
            for (; nadds > 0 && (t = adds.poll()) != null; nadds--) {
                any = true;
                int r = add(t);
                lazy += r & 1;
                full |= r > 1;
            }
            while (nolder > 0) {
                int x = older[--nolder];
                if (kdue[x] == UNARMED)
                    release(x);
                else
                    full |= put(null, x, Wheel.OP_CANCEL, 0);
            }
            int[] a = older;
            older = freed;
            nolder = nfreed;
            freed = a;
            nfreed = 0;
            /* Carried ids: a batch must come to cancel them. */
            any |= nolder > 0;
            full |= apply();
            wheelFull = full;
            if (lazy > 0)
                lazyTakes += lazy;
            runs++;
            return any;
        }

        /*
         * Mapped ids armed in the kernel before their timeout's deadline
         * (by more than a tick), each owing an expiry and a re-arm: for the
         * benchmark, read once the worker is idle.
         */
        int owed() {
            int n = 0;
            for (int x = 1; x < byId.length; x++) {
                TwheelTimeout t = byId[x];
                if (t != null && kdue[x] != UNARMED && kdue[x] + tickNs < t.due)
                    n++;
            }
            return n;
        }

        /* The wheel expired id: expire its timeout, or re-arm it if its deadline is still ahead. */
        void expired(long id) {
            TwheelTimeout t;
            reads++;
            if (id >= DIRECT_BASE) {
                t = direct.get(id);
            } else if (id > 0 && id < byId.length) {
                int x = (int) id;
                kdue[x] = UNARMED;
                t = byId[x];
                if (t == null && st[x] == S_ZOMBIE)
                    release(x);
            } else {
                return; /* WAKE_ID */
            }
            if (t == null)
                return;
            if (t.state == TwheelTimeout.ST_INIT && t.left() > 0) {
                rearm.add(t);
                return;
            }
            unmap(t);
            t.expire();
        }

        /* The deadline to arm t at again: its own, or as far as the wheel reaches. */
        private long rearmDue(TwheelTimeout t) {
            long now = System.nanoTime();
            long left = t.deadline - (now - startTime);
            return now + monoOffset + Math.max(0, Math.min(left, maxTimeoutNs - tickNs));
        }

        private boolean mapped(TwheelTimeout t) {
            long kid = t.kid;
            if (kid >= DIRECT_BASE)
                return direct.get(kid) == t;
            return kid > 0 && byId[(int) kid] == t;
        }

        /* t's id is no longer in the kernel: free it. */
        private void unmap(TwheelTimeout t) {
            long kid = t.kid;
            if (kid >= DIRECT_BASE) {
                direct.remove(kid, t);
            } else if (kid > 0 && byId[(int) kid] == t) {
                byId[(int) kid] = null;
                release((int) kid);
            }
        }

        /* t was cancelled: its id, maybe still armed, is freed (a direct one is cancelled). */
        private void unmapCancelled(TwheelTimeout t) throws IOException {
            long kid = t.kid;
            if (kid >= DIRECT_BASE) {
                if (direct.remove(kid, t))
                    put(null, kid, Wheel.OP_CANCEL, 0);
            } else if (kid > 0 && byId[(int) kid] == t) {
                int x = (int) kid;
                byId[x] = null;
                st[x] = S_FREED;
                if (nfreed == freed.length)
                    freed = Arrays.copyOf(freed, 2 * nfreed);
                freed[nfreed++] = x;
            }
        }

        /* Worker id x is not in the kernel and has no timeout: it may be taken again. */
        private void release(int x) {
            st[x] = S_FREE;
            kdue[x] = UNARMED;
            if (nfree == free.length)
                free = Arrays.copyOf(free, 2 * nfree);
            free[nfree++] = x;
        }

        /* A worker id that is not in the kernel. */
        private int takeUnarmed() {
            if (nfree > 0)
                return free[--nfree];
            long id = nextId.getAndIncrement();
            if (id >= Integer.MAX_VALUE - 8)
                throw new IllegalStateException("TwheelTimer: out of kernel ids");
            int x = (int) id;
            if (x >= byId.length) {
                int len = (int) Math.min(Integer.MAX_VALUE - 8L, 2L * byId.length);
                byId = Arrays.copyOf(byId, len);
                kdue = Arrays.copyOf(kdue, len);
                st = Arrays.copyOf(st, len);
            }
            kdue[x] = UNARMED;
            return x;
        }

        /* Maps t to a worker id and queues what the kernel must do: bit 0 a lazy take, 2 a full wheel. */
        private int add(TwheelTimeout t) throws IOException {
            /* Cancelled before it got here: it never reaches the kernel. */
            if (t.state != TwheelTimeout.ST_INIT)
                return 0;
            int x;
            if (nolder > 0)
                x = older[--nolder];
            else if (nfreed > 0)
                x = freed[--nfreed];
            else
                x = takeUnarmed();
            long d = Math.max(0, t.due);
            long k = kdue[x];
            int code;
            if (k == UNARMED)
                code = Wheel.OP_ADD;
            else if (k <= d && k - nowMono > (d - nowMono) / 2)
                code = OP_NONE;
            else
                code = Wheel.OP_REFRESH;
            /* Before the op: an expiry read after it finds t. A cancel from now on frees x. */
            byId[x] = t;
            st[x] = S_MAPPED;
            t.kid = x;
            if (code == OP_NONE)
                return 1;
            return put(t, x, code, d) ? 2 : 0;
        }

        /* Queues one op on kernel id kid (of t; null for a cancel); applies a full batch. */
        private boolean put(TwheelTimeout t, long kid, int code, long due) throws IOException {
            of[batch.size()] = t;
            if (code == Wheel.OP_ADD) {
                batch.addAt(kid, due);
                sent[0]++;
            } else if (code == Wheel.OP_REFRESH) {
                batch.refreshAt(kid, due);
                sent[1]++;
            } else {
                batch.cancel(kid);
                sent[2]++;
            }
            if (kid < DIRECT_BASE && t != null)
                kdue[(int) kid] = due;
            return batch.size() == FLUSH_BATCH && apply();
        }

        /* Applies the batch: whether an add found the wheel full. */
        private boolean apply() throws IOException {
            int n = batch.size();
            boolean full = false;
            if (n == 0)
                return false;
            wheel.submit(batch);
            for (int i = 0; i < n; i++) {
                TwheelTimeout t = of[i];
                of[i] = null;
                int err = batch.errno(i);
                long kid = batch.id(i);
                boolean mine = kid < DIRECT_BASE;
                if (t == null) {
                    /* A cancel's ENOENT: it expired first, and its expiry, still to be read, frees it. */
                    if (mine && err == 0)
                        release((int) kid);
                    else if (mine)
                        st[(int) kid] = S_ZOMBIE;
                    continue;
                }
                if (err == 0)
                    continue;
                /* Expired before the refresh: its expiry, still to be read, re-arms t. */
                if (err == Errno.ENOENT && batch.code(i) == Wheel.OP_REFRESH)
                    continue;
                /* An ADD failed: the id is not t's in the kernel. */
                if (!mine) {
                    direct.remove(kid, t);
                } else if (byId[(int) kid] == t) {
                    byId[(int) kid] = null;
                    if (err == Errno.ENOSPC || err == Errno.ENOMEM)
                        release((int) kid);
                    else
                        st[(int) kid] = S_LOST; /* in an unknown state: never taken again */
                }
                t.kid = 0;
                retry.add(t);
                if (err == Errno.ENOSPC || err == Errno.ENOMEM)
                    full = true;
                else
                    logger.error("TwheelTimer: the wheel refused a timeout ({}): it stays pending until stop(): {}",
                            Errno.describe(err), t);
            }
            batch.clear();
            return full;
        }
    }

    /* What the timer does with its wheel; an interface so that a test can make the read fail. */
    interface Ops {
        /** Adds {@code id} due in {@code timeoutNs}: the deadline, or -errno. */
        long add(long id, long timeoutNs);

        /** Cancels {@code id}: its deadline, or -errno (ENOENT once it expired). */
        long cancel(long id);

        /** Applies every op of {@code batch}, each with its own result. */
        void submit(Batch batch) throws IOException;

        /** Waits up to {@code timeoutNs} (less than 0: for ever) for expirations, reads them into {@code ev}: how many. */
        int read(Expirations ev, long timeoutNs) throws IOException;

        /** The time on the wheel's clock, CLOCK_MONOTONIC. */
        long now();

        void close();
    }

    /* Opens the timer's wheel with this tick, or throws UncheckedIOException. */
    interface Opener {
        Ops open(long tickNs);
    }

    /* The timer's Ops on a wheel of /dev/twheel. */
    static final class WheelOps implements Ops {
        final Wheel w;

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
        public void submit(Batch batch) throws IOException {
            w.submit(batch);
        }

        @Override
        public int read(Expirations ev, long timeoutNs) throws IOException {
            return w.read(ev, timeoutNs);
        }

        @Override
        public long now() {
            return Wheel.nNow(Wheel.Clock.MONOTONIC.id);
        }

        @Override
        public void close() {
            w.close();
        }
    }

    private static final class TwheelTimeout implements Timeout, Runnable {
        static final int ST_INIT = 0;
        static final int ST_CANCELLED = 1;
        static final int ST_EXPIRED = 2;

        private static final AtomicIntegerFieldUpdater<TwheelTimeout> STATE =
                AtomicIntegerFieldUpdater.newUpdater(TwheelTimeout.class, "state");

        private final TwheelTimer timer;
        private final TimerTask task;
        private final long deadline;
        /* The kernel's deadline, CLOCK_MONOTONIC: never before deadline. */
        final long due;
        volatile int state = ST_INIT;
        /*
         * Its id in the kernel, 0 before it has one: set by the worker as it
         * applies the add (by newTimeout for a short delay, before the
         * timeout is returned), read by the worker when the cancel queued
         * below reaches it. No other thread reads it.
         */
        long kid;

        TwheelTimeout(TwheelTimer timer, TimerTask task, long deadline, long due) {
            this.timer = timer;
            this.task = task;
            this.deadline = deadline;
            this.due = due;
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
            return state == ST_EXPIRED;
        }

        @Override
        public boolean isCancelled() {
            return state == ST_CANCELLED;
        }

        @Override
        public boolean cancel() {
            if (!STATE.compareAndSet(this, ST_INIT, ST_CANCELLED))
                return false;
            timer.pendingTimeouts.decrementAndGet();
            /* The worker frees its kernel id, if it has one, at its next batch. */
            timer.cancels.offer(this);
            timer.wake();
            return true;
        }

        /* How long until its deadline, by System.nanoTime(). */
        long left() {
            return deadline - (System.nanoTime() - timer.startTime);
        }

        /* Due, and unmapped from its kernel id: runs unless cancelled meanwhile. Context: the timer's thread. */
        void expire() {
            if (!STATE.compareAndSet(this, ST_INIT, ST_EXPIRED))
                return;
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
