// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * NativeProbe: what a JVM gets from the jar's loader, for
 * aarch64-test.sh, which runs it in an aarch64 JVM under qemu-user. It
 * loads the library as an application does (NativeLoader, from the jar:
 * copied out and loaded), makes two JNI calls (the clock, then an open of
 * /dev/twheel, whose error text comes from the library) and prints
 *   os.arch=A
 *   library=linux-A            the jar's directory NativeLoader chose
 *   source=URL                 where it loaded it from
 *   clock=ok                   a JNI call returned CLOCK_MONOTONIC's time
 *   open=EXCEPTION errno=N     or open=ok where the module is loaded
 * Exit status 1 if the library does not load (the error on stderr).
 */
package org.twheel;

import java.io.IOException;

public final class NativeProbe {
    private NativeProbe() {
    }

    public static void main(String[] args) {
        System.out.println("os.arch=" + System.getProperty("os.arch"));
        String resource = NativeLoader.RESOURCE;
        System.out.println("library=" + (resource == null ? "none" : resource.split("/")[2]));
        long before = System.nanoTime();
        long now;
        try {
            now = Wheel.Clock.MONOTONIC.now();
        } catch (UnsatisfiedLinkError e) {
            e.printStackTrace();
            System.exit(1);
            return;
        }
        System.out.println("source=" + NativeLoader.source());
        /* System.nanoTime() reads the same clock: a wrong ABI would not land between. */
        System.out.println("clock=" + (now >= before && now <= System.nanoTime() ? "ok" : "wrong " + now));
        try {
            Wheel.open(new Wheel.Config()).close();
            System.out.println("open=ok");
        } catch (TwheelException e) {
            System.out.println("open=" + e + " errno=" + e.errno());
        } catch (IOException e) {
            System.out.println("open=" + e);
        }
    }
}
