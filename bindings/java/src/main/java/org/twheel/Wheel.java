// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Wheel: one /dev/twheel wheel, its ids and their expirations, for Java.
 *
 * Each method is one system call (or none, for the touch table), through
 * libtwheel-jni; the ABI and its rules are those of <linux/twheel.h> and
 * twheel(4). Ids are plain longs chosen by the caller, every value valid;
 * times are nanoseconds on the wheel's clock (now()), timeouts relative
 * (Duration), deadlines absolute (long).
 *
 * Errors: a missing id is NoSuchElementException, bad input (a negative
 * timeout, one the wheel rejects, a slot outside the table)
 * IllegalArgumentException, a closed wheel ClosedWheelException, anything
 * else a TwheelException carrying the errno. Every method may be called
 * from any thread, close() included: a call racing with close() either
 * completes or throws ClosedWheelException, and a thread blocked in
 * read() is woken by it (libtwheel-jni guards the fd, see twheel_jni.c).
 */
package org.twheel;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A timing wheel of id deadlines behind one file descriptor.
 *
 * <pre>{@code
 * try (Wheel wheel = Wheel.open(Duration.ofMillis(10), Duration.ofSeconds(30))) {
 *     wheel.add(42);                       // due in 30 s
 *     wheel.refresh(42);                   // 30 s from now again
 *     wheel.listen((id, deadline, expired) -> System.out.println(id + " offline"));
 * }
 * }</pre>
 */
public final class Wheel implements Closeable {
    /** The device every wheel is opened from. */
    public static final String DEVICE = "/dev/twheel";
    /** Shortest tick the wheel takes (100 us). */
    public static final Duration TICK_MIN = Duration.ofNanos(100_000);
    /** Longest tick the wheel takes (1 h). */
    public static final Duration TICK_MAX = Duration.ofHours(1);
    /** Most slots a touch table may have. */
    public static final int TOUCH_MAX_SLOTS = 1 << 24;
    /** The slot of an id bound to none. */
    public static final int NO_SLOT = -1;

    static final int OP_ADD = 1;
    static final int OP_REFRESH = 2;
    static final int OP_CANCEL = 3;
    static final int OP_QUERY = 4;
    static final int OPF_TIMEOUT = 1;
    static final int OPF_ADD_IF_ABSENT = 1 << 1;
    static final int OPF_ABSTIME = 1 << 2;
    static final int OPF_TOUCH = 1 << 3;
    private static final long DUMP_END = -1L;
    private static final int DUMP_CHUNK = 1024;
    private static final Cleaner CLEANER = Cleaner.create();

    /** The clock a wheel's times are on. */
    public enum Clock {
        /** CLOCK_MONOTONIC: stops while the machine is suspended (System.nanoTime()'s clock on Linux). */
        MONOTONIC(1),
        /** CLOCK_BOOTTIME: counts time spent in suspend too. */
        BOOTTIME(7);

        final int id;

        Clock(int id) {
            this.id = id;
        }

        /** The time on this clock in ns, as clock_gettime(2) reads it. */
        public long now() {
            NativeLoader.ensure();
            return nNow(id);
        }
    }

    /** How a wheel is set up: {@code new Wheel.Config().tick(...).timeout(...)}. */
    public static final class Config {
        private Duration tick = Duration.ofMillis(1);
        private Duration timeout = Duration.ofSeconds(30);
        private Clock clock = Clock.MONOTONIC;
        private int maxEntries;
        private int touchSlots;

        /** The wheel's precision, {@link #TICK_MIN} to {@link #TICK_MAX}; default 1 ms. */
        public Config tick(Duration tick) {
            this.tick = Objects.requireNonNull(tick, "tick");
            return this;
        }

        /** The timeout of ops that carry none; default 30 s. */
        public Config timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** The wheel's clock; default {@link Clock#MONOTONIC}. */
        public Config clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Cap on live ids plus unread expirations; 0 (default) is the module's cap. */
        public Config maxEntries(int maxEntries) {
            if (maxEntries < 0)
                throw new IllegalArgumentException("maxEntries < 0: " + maxEntries);
            this.maxEntries = maxEntries;
            return this;
        }

        /** A touch table of this many slots (see {@link #touchTable()}); default 0, none. */
        public Config touchSlots(int touchSlots) {
            if (touchSlots < 0 || touchSlots > TOUCH_MAX_SLOTS)
                throw new IllegalArgumentException("touchSlots not in 0.." + TOUCH_MAX_SLOTS + ": " + touchSlots);
            this.touchSlots = touchSlots;
            return this;
        }
    }

    private final long h;
    private final Clock clock;
    private final int touchSlots;
    private TouchTable touch;

    private Wheel(long h, Config c) {
        this.h = h;
        this.clock = c.clock;
        this.touchSlots = c.touchSlots;
        CLEANER.register(this, () -> nFree(h));
    }

    /** Opens a wheel with this tick and default timeout, on {@link Clock#MONOTONIC}. */
    public static Wheel open(Duration tick, Duration timeout) throws IOException {
        return open(new Config().tick(tick).timeout(timeout));
    }

    /**
     * Opens and sets up a new wheel.
     *
     * @throws IllegalArgumentException the wheel rejects the config (tick, timeout or slots out of range)
     * @throws TwheelException          the device cannot be opened (ENOENT: the module is not loaded;
     *                                  EACCES: not in the group that may open it) or set up
     * @throws UnsatisfiedLinkError     the native library cannot be loaded
     */
    public static Wheel open(Config c) throws IOException {
        long tick = nanos(c.tick, "tick");
        long timeout = nanos(c.timeout, "timeout");
        NativeLoader.ensure();
        long h = nOpen();
        if (h < 0)
            throw new TwheelException("open " + DEVICE + ": " + Errno.describe((int) -h), (int) -h);
        Wheel w = new Wheel(h, c);
        int r = w.nSetup(h, tick, timeout, c.clock.id, c.maxEntries, c.touchSlots);
        if (r < 0) {
            w.close();
            throw Errno.fail(r, "setup (tick " + c.tick + ", timeout " + c.timeout + ", "
                    + c.touchSlots + " touch slots)", false);
        }
        return w;
    }

    /*
     * The answer of unavailabilityCause(), found by opening a wheel once,
     * when the first caller initialises this class: the JVM runs that
     * once and makes every other caller wait for it and see its result.
     */
    private static final class Availability {
        static final AtomicInteger PROBES = new AtomicInteger();
        static final Throwable CAUSE = probe();

        private static Throwable probe() {
            PROBES.incrementAndGet();
            try {
                open(new Config()).close();
                return null;
            } catch (IOException | RuntimeException | UnsatisfiedLinkError e) {
                return e;
            }
        }
    }

    /**
     * Why no wheel can be opened here (no native library, no device, no
     * permission), or null if one can: what {@link TwheelTimer#isAvailable()} asks.
     * Found once per JVM, by opening and closing a wheel on the first call;
     * every call returns that answer (the same Throwable), so a module
     * loaded, or a permission granted, later is seen by the next JVM.
     */
    public static Throwable unavailabilityCause() {
        return Availability.CAUSE;
    }

    /** How many times unavailabilityCause() has opened a wheel to find out: 1 once asked. */
    static int availabilityProbes() {
        return Availability.PROBES.get();
    }

    /** Whether {@link #open} can open a wheel here (found once per JVM, see {@link #unavailabilityCause()}). */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /** The wheel's clock. */
    public Clock clock() {
        return clock;
    }

    /** The time on the wheel's clock, in ns: deadlines and expiry times compare with it. */
    public long now() {
        return nNow(clock.id);
    }

    // ---- single ids ----

    /** Adds {@code id} with the default timeout; returns its deadline. {@code TwheelException} EEXIST if live. */
    public long add(long id) throws IOException {
        return op(OP_ADD, id, 0, 0, 0, "add");
    }

    /** Adds {@code id} due after {@code timeout}; returns its deadline. */
    public long add(long id, Duration timeout) throws IOException {
        return op(OP_ADD, id, nanos(timeout, "timeout"), OPF_TIMEOUT, 0, "add");
    }

    /** Adds {@code id} due after {@code timeout}, bound to touch slot {@code slot}; returns its deadline. */
    public long add(long id, Duration timeout, int slot) throws IOException {
        return op(OP_ADD, id, nanos(timeout, "timeout"), OPF_TIMEOUT | OPF_TOUCH, slot(slot), "add");
    }

    /** Adds {@code id} due at {@code deadlineNs} on the wheel's clock (past: the next tick); returns its deadline. */
    public long addAt(long id, long deadlineNs) throws IOException {
        return op(OP_ADD, id, deadline(deadlineNs), OPF_ABSTIME, 0, "add");
    }

    /** Moves a live id's deadline to now plus the default timeout; returns it. */
    public long refresh(long id) throws IOException {
        return op(OP_REFRESH, id, 0, 0, 0, "refresh");
    }

    /** Moves a live id's deadline to now plus {@code timeout}; returns it. */
    public long refresh(long id, Duration timeout) throws IOException {
        return op(OP_REFRESH, id, nanos(timeout, "timeout"), OPF_TIMEOUT, 0, "refresh");
    }

    /** Moves a live id's deadline to {@code deadlineNs}; returns it (on the tick grid). */
    public long refreshAt(long id, long deadlineNs) throws IOException {
        return op(OP_REFRESH, id, deadline(deadlineNs), OPF_ABSTIME, 0, "refresh");
    }

    /** Refreshes {@code id} to now plus {@code timeout}, adding it if it is not live; returns its deadline. */
    public long refreshOrAdd(long id, Duration timeout) throws IOException {
        return op(OP_REFRESH, id, nanos(timeout, "timeout"), OPF_TIMEOUT | OPF_ADD_IF_ABSENT, 0, "refresh");
    }

    /** Removes a live id, whose expiry will never be read; returns the deadline it had. */
    public long cancel(long id) throws IOException {
        return op(OP_CANCEL, id, 0, 0, 0, "cancel");
    }

    /** The deadline of a live id and the time left. */
    public Deadline query(long id) throws IOException {
        long[] out = new long[2];
        long r = nOp(h, OP_QUERY, id, 0, 0, 0, out);
        if (r < 0)
            throw Errno.fail((int) r, "query of id " + id, true);
        return new Deadline(out[0], out[1]);
    }

    /** Whether {@code id} is live (added, and neither expired nor cancelled). */
    public boolean contains(long id) throws IOException {
        long r = nOp(h, OP_QUERY, id, 0, 0, 0, null);
        if (r == -Errno.ENOENT)
            return false;
        if (r < 0)
            throw Errno.fail((int) r, "query of id " + id, true);
        return true;
    }

    private long op(int code, long id, long timeout, int flags, int slot, String what) throws IOException {
        long r = nOp(h, code, id, timeout, flags, slot, null);
        if (r < 0)
            throw Errno.fail((int) r, what + " of id " + id, true);
        return r;
    }

    /** One op without exceptions: the deadline, or -errno (TwheelTimer's hot path). */
    long rawOp(int code, long id, long timeout, int flags) {
        return nOp(h, code, id, timeout, flags, 0, null);
    }

    // ---- many ids ----

    /**
     * Applies every op of {@code batch} in order, each with its own result
     * ({@link Batch#errno(int)}); a failing op does not stop the others.
     * Returns how many were applied: all of them, unless this throws.
     *
     * @throws TwheelException the kernel stopped the batch part-way; {@link Batch#applied()}
     *                         says how far it got, and nothing past that was applied
     */
    public int submit(Batch batch) throws IOException {
        int n = batch.size();
        int done = 0;
        batch.applied = 0;
        batch.store();
        try {
            while (done < n) {
                int r = nBatch(h, batch.buf, done, n - done);
                if (r < 0)
                    throw Errno.fail(r, "batch (applied " + done + " of " + n + ")", false);
                done += r;
                batch.applied = done;
            }
        } finally {
            batch.load(done);
        }
        return done;
    }

    /**
     * Refreshes {@code len} ids from {@code ids[off]} with one timeout
     * ({@code null}: the default), and adds those not live if
     * {@code addIfAbsent}: the common batch, 8 bytes per id. The ids not
     * refreshed (not live; with addIfAbsent, not added for want of room)
     * are written to {@code failed} from index 0, which needs room for
     * {@code len}, or are only counted if it is null. Returns their number.
     */
    public int refreshAll(long[] ids, int off, int len, Duration timeout, boolean addIfAbsent, long[] failed)
            throws IOException {
        Objects.checkFromIndexSize(off, len, ids.length);
        if (failed != null && failed.length < len)
            throw new IllegalArgumentException("failed has room for " + failed.length + " ids, not " + len);
        /* libtwheel's TWHEEL_TIMEOUT_DEFAULT; it sets OPF_TIMEOUT for any other. */
        long t = timeout == null ? -1L : nanos(timeout, "timeout");
        int flags = addIfAbsent ? OPF_ADD_IF_ABSENT : 0;
        long[] room = failed != null ? failed : new long[Math.min(len, 512)];
        int[] nf = new int[1];
        int done = 0;
        int nfailed = 0;
        while (done < len) {
            int k = failed != null ? len - done : Math.min(len - done, room.length);
            int r = nRefresh(h, ids, off + done, k, t, flags, room, failed != null ? nfailed : 0, nf);
            if (r < 0)
                throw Errno.fail(r, "refresh of " + len + " ids (processed " + done + ")", false);
            done += r;
            nfailed += nf[0];
        }
        return nfailed;
    }

    /** {@link #refreshAll(long[], int, int, Duration, boolean, long[])} of every id with the default timeout; returns the ids not live. */
    public long[] refreshAll(long... ids) throws IOException {
        long[] failed = new long[ids.length];
        int n = refreshAll(ids, 0, ids.length, null, false, failed);
        return Arrays.copyOf(failed, n);
    }

    // ---- expirations ----

    /**
     * Reads expirations into {@code into} (as many as it holds and are
     * waiting, in deadline order), waiting up to {@code timeout} for the
     * first: {@code null} waits for ever, {@link Duration#ZERO} not at all.
     * Returns how many were read (also {@link Expirations#size()}), 0 if
     * none came in time. Each expiration is read exactly once, by one reader.
     * A waiting read ends with {@link #close()}, not with Thread.interrupt().
     *
     * @throws ClosedWheelException the wheel is closed, also while this waits
     */
    public int read(Expirations into, Duration timeout) throws IOException {
        return read(into, timeout == null ? -1 : nanos(timeout, "timeout"));
    }

    /* read with the wait in ns, less than 0 for ever: TwheelTimer's worker, which waits a tick at a time. */
    int read(Expirations into, long t) throws IOException {
        into.size = 0;
        int r = nRead(h, into.buf, into.capacity(), t);
        if (r < 0)
            throw Errno.fail(r, "read", false);
        into.size = r;
        return r;
    }

    /**
     * Delivers every expiration to {@code listener} on a new daemon thread
     * ("twheel-expiry"), read in batches, until the wheel is closed.
     * An exception from the listener goes to the thread's uncaught
     * exception handler and delivery goes on.
     */
    public Thread listen(ExpiryListener listener) {
        return listen(listener, r -> {
            Thread t = new Thread(r, "twheel-expiry");
            t.setDaemon(true);
            return t;
        });
    }

    /** {@link #listen(ExpiryListener)} on a thread of {@code factory}, started here. */
    public Thread listen(ExpiryListener listener, ThreadFactory factory) {
        Objects.requireNonNull(listener, "listener");
        Expirations ev = new Expirations(1024);
        Thread t = factory.newThread(() -> {
            try {
                for (;;) {
                    int n = read(ev, null);
                    for (int i = 0; i < n; i++) {
                        try {
                            listener.expired(ev.id(i), ev.deadlineNs(i), ev.expiredNs(i));
                        } catch (RuntimeException e) {
                            Thread self = Thread.currentThread();
                            self.getUncaughtExceptionHandler().uncaughtException(self, e);
                        }
                    }
                }
            } catch (ClosedWheelException e) {
                return;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        t.start();
        return t;
    }

    // ---- dump ----

    /**
     * Lists the live ids (not expirations waiting to be read) to
     * {@code visitor}, a bounded chunk per system call: every id live
     * throughout is listed exactly once, ids added or removed meanwhile
     * may be or not, none twice.
     */
    public void dump(Consumer<DumpEntry> visitor) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(DUMP_CHUNK * 24).order(ByteOrder.nativeOrder());
        long[] cursor = { 0 };
        while (cursor[0] != DUMP_END) {
            int n = nDump(h, buf, DUMP_CHUNK, cursor);
            if (n < 0)
                throw Errno.fail(n, "dump", false);
            for (int i = 0; i < n; i++) {
                int o = i * 24;
                visitor.accept(new DumpEntry(buf.getLong(o), buf.getLong(o + 8), buf.getInt(o + 16)));
            }
        }
    }

    /** {@link #dump(Consumer)} into a list. */
    public List<DumpEntry> dump() throws IOException {
        List<DumpEntry> all = new ArrayList<>();
        dump(all::add);
        return all;
    }

    // ---- touch table ----

    /**
     * The wheel's touch table (a wheel opened with {@link Config#touchSlots}),
     * mapped on first use. An id bound to a slot ({@link #add(long, Duration, int)},
     * {@link Batch#bind}) is refreshed by {@link TouchTable#touch}: a store,
     * no system call.
     */
    public synchronized TouchTable touchTable() throws IOException {
        if (touch != null)
            return touch;
        if (touchSlots == 0)
            throw new IllegalStateException("the wheel was opened without touch slots");
        long addr = nMapTouch(h, touchSlots, clock.id);
        if (addr < 0)
            throw Errno.fail((int) addr, "mmap of the touch table", false);
        long len = (long) touchSlots * 8;
        ByteBuffer buf = nBuffer(addr, len);
        CLEANER.register(buf, () -> nUnmap(addr, len));
        touch = new TouchTable(buf, touchSlots, clock);
        return touch;
    }

    // ---- the rest ----

    /**
     * The wheel's counters and settings from /proc/self/fdinfo (live,
     * events_waiting, expired_total, touch_rearms, tick_ns, ...).
     */
    public Map<String, Long> stats() throws IOException {
        String text = nFdinfo(h);
        if (text == null)
            throw new ClosedWheelException("stats");
        Map<String, Long> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int c = line.indexOf(':');
            if (c < 0)
                continue;
            try {
                m.put(line.substring(0, c).trim(), Long.parseLong(line.substring(c + 1).trim()));
            } catch (NumberFormatException notANumber) {
                continue;
            }
        }
        return m;
    }

    /**
     * Closes the wheel: its ids are gone, a blocked {@link #read} throws
     * {@link ClosedWheelException}, and so does every later call. A mapped
     * touch table stays valid memory until its buffer is unreachable.
     * Idempotent.
     */
    @Override
    public void close() {
        nClose(h);
    }

    static long nanos(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative())
            throw new IllegalArgumentException(what + " is negative: " + d);
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " is too long: " + d, e);
        }
    }

    static long deadline(long ns) {
        if (ns < 0)
            throw new IllegalArgumentException("deadline before the clock's origin: " + ns);
        return ns;
    }

    static int slot(int slot) {
        if (slot == NO_SLOT)
            return slot;
        if (slot < 0)
            throw new IllegalArgumentException("slot " + slot + " (expected 0.., or NO_SLOT)");
        return slot;
    }

    static native long nOpen();

    static native void nFree(long h);

    static native ByteBuffer nBuffer(long addr, long len);

    static native int nUnmap(long addr, long len);

    static native long nNow(int clockid);

    static native String nStrerror(int err);

    private native int nSetup(long h, long tickNs, long timeoutNs, int clockid, int maxEntries, int touchSlots);

    private native int nClose(long h);

    private native long nOp(long h, int code, long id, long timeoutNs, int flags, int slot, long[] out);

    private native int nBatch(long h, ByteBuffer ops, int from, int count);

    private native int nRefresh(long h, long[] ids, int off, int len, long timeoutNs, int flags,
            long[] failed, int failedOff, int[] nrFailed);

    private native int nRead(long h, ByteBuffer buf, int max, long timeoutNs);

    private native int nDump(long h, ByteBuffer buf, int max, long[] cursor);

    private native long nMapTouch(long h, int slots, int clockid);

    private native String nFdinfo(long h);
}
