// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The Timer contract run against TwheelTimer: the same tests that
 * HashedWheelTimer passes. Needs /dev/twheel (skipped without it).
 */
package org.twheel;

import io.netty.util.Timer;
import org.junit.jupiter.api.BeforeAll;

import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

class TwheelTimerContractTest extends TimerContract {
    @BeforeAll
    static void device() {
        Device.assumePresent();
    }

    @Override
    Timer create(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection, long maxPendingTimeouts, Executor taskExecutor) {
        return new TwheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection,
                maxPendingTimeouts, taskExecutor);
    }

    @Override
    long pendingTimeouts(Timer timer) {
        return ((TwheelTimer) timer).pendingTimeouts();
    }
}
