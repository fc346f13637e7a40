// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * JniCost: wall ns per call of the binding's smallest steps, to tell the
 * JNI and JVM share of a figure from the system call's (under software
 * emulation they differ most): System.nanoTime(), a JNI clock read,
 * Wheel.contains (one ioctl), Wheel.refresh (one ioctl), and
 * TwheelTimer's cancel + newTimeout (two).
 */
package org.twheel.bench;

import io.netty.util.Timeout;
import org.twheel.TwheelTimer;
import org.twheel.Wheel;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

public final class JniCost {
    interface Step {
        void run(int i) throws Exception;
    }

    static void time(String what, int n, Step s) throws Exception {
        for (int i = 0; i < n; i++)
            s.run(i);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++)
            s.run(i);
        System.out.printf("# jnicost: %s ns=%.0f%n", what, (System.nanoTime() - t0) / (double) n);
    }

    public static void main(String[] args) throws Exception {
        int n = 50_000;
        long[] sink = new long[1];
        time("nanotime", n, i -> sink[0] += System.nanoTime());
        time("jni-clock", n, i -> sink[0] += Wheel.Clock.MONOTONIC.now());
        try (Wheel w = Wheel.open(Duration.ofMillis(1), Duration.ofMinutes(5))) {
            for (int i = 0; i < 1000; i++)
                w.add(i);
            time("contains", n, i -> w.contains(i % 1000));
            time("refresh", n, i -> w.refresh(i % 1000));
        }
        TwheelTimer timer = new TwheelTimer();
        Timeout[] held = new Timeout[1000];
        for (int i = 0; i < held.length; i++)
            held[i] = timer.newTimeout(t -> { }, 5, TimeUnit.MINUTES);
        time("timer-cancel-new", n, i -> {
            held[i % 1000].cancel();
            held[i % 1000] = timer.newTimeout(t -> { }, 5, TimeUnit.MINUTES);
        });
        timer.stop();
        System.out.println("# jnicost: done " + sink[0] % 2);
    }
}
