// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Heartbeat: an IM gateway's offline detection (the seeds' case, at the
 * scale of examples/heartbeat/heartbeat.c) written as a Netty application writes it,
 * on TwheelTimer: each connection holds a Timeout; every heartbeat
 * cancels it and schedules a new one; the task marks the connection
 * offline. Switching from HashedWheelTimer is the one line marked below.
 *
 * Connections send a heartbeat every interval (+-20 %); a chosen subset
 * goes silent at random times, and each must be reported offline no
 * earlier than its last heartbeat + timeout, and soon after; no
 * connection that kept sending may be reported.
 *
 *   java -cp ... example.Heartbeat [CONNS [SILENT]]   (default 2000 200)
 *
 * Last line: heartbeat: tracked=N offline=N expected_offline=N early=N
 * false=N p50_ms=X p99_ms=X max_ms=X timeout_ms=T refreshes_per_s=R;
 * exit status 0 only if every silent connection and no other was
 * reported, none early.
 */
package example;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import org.twheel.TwheelTimer;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public final class Heartbeat {
    static final long TIMEOUT_MS = 2000;
    static final long INTERVAL_MS = 500;
    static final long DURATION_MS = 8000;
    static final long STEP_MS = 5;

    static final class Connection implements TimerTask {
        volatile long lastHeartbeat;
        long nextHeartbeat;
        long silentAt;
        volatile long offlineAt;
        Timeout timeout;

        @Override
        public void run(Timeout t) {
            offlineAt = System.nanoTime();
            OFFLINE.incrementAndGet();
        }
    }

    static final AtomicInteger OFFLINE = new AtomicInteger();

    public static void main(String[] args) throws Exception {
        int conns = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int silent = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        Random rnd = new Random(42);
        long ms = TimeUnit.MILLISECONDS.toNanos(1);

        // The one line a Netty application changes: was new HashedWheelTimer(10, TimeUnit.MILLISECONDS).
        // Where the module is missing this is that HashedWheelTimer, and Netty's log says why.
        Timer timer = TwheelTimer.orHashedWheelTimer(10, TimeUnit.MILLISECONDS);

        long t0 = System.nanoTime();
        Connection[] c = new Connection[conns];
        for (int i = 0; i < conns; i++) {
            c[i] = new Connection();
            c[i].lastHeartbeat = t0;
            c[i].nextHeartbeat = t0 + rnd.nextInt((int) INTERVAL_MS) * ms;
            c[i].timeout = timer.newTimeout(c[i], TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        for (int n = 0; n < silent; ) {
            Connection s = c[rnd.nextInt(conns)];
            if (s.silentAt != 0)
                continue;
            s.silentAt = t0 + (1000 + rnd.nextInt((int) (DURATION_MS - TIMEOUT_MS - 2000))) * ms;
            n++;
        }
        long refreshes = 0;
        long end = t0 + DURATION_MS * ms;
        for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
            for (Connection x : c) {
                if (x.nextHeartbeat > now || (x.silentAt != 0 && now >= x.silentAt))
                    continue;
                x.timeout.cancel();
                x.lastHeartbeat = now;
                x.timeout = timer.newTimeout(x, TIMEOUT_MS, TimeUnit.MILLISECONDS);
                x.nextHeartbeat = now + (INTERVAL_MS * 8 / 10 + rnd.nextInt((int) (INTERVAL_MS * 4 / 10 + 1))) * ms;
                refreshes++;
            }
            Thread.sleep(STEP_MS);
        }
        long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (OFFLINE.get() < silent && System.nanoTime() < wait)
            Thread.sleep(STEP_MS);
        timer.stop();

        int offline = 0, early = 0, wrong = 0;
        double[] lat = new double[conns];
        for (Connection x : c) {
            if (x.offlineAt == 0)
                continue;
            if (x.silentAt == 0) {
                wrong++;
                continue;
            }
            long due = x.lastHeartbeat + TIMEOUT_MS * ms;
            if (x.offlineAt < due)
                early++;
            lat[offline++] = (x.offlineAt - due) / 1e6;
        }
        Arrays.sort(lat, 0, offline);
        System.out.printf("heartbeat: tracked=%d offline=%d expected_offline=%d early=%d false=%d p50_ms=%.1f "
                + "p99_ms=%.1f max_ms=%.1f timeout_ms=%d refreshes_per_s=%.0f%n", conns, offline, silent, early, wrong,
                offline > 0 ? lat[offline / 2] : 0, offline > 0 ? lat[offline * 99 / 100] : 0,
                offline > 0 ? lat[offline - 1] : 0, TIMEOUT_MS, refreshes / (DURATION_MS / 1000.0));
        System.exit(offline == silent && early == 0 && wrong == 0 ? 0 : 1);
    }
}
