// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The Timer contract run against Netty's own HashedWheelTimer: whatever
 * TimerContract asserts, Netty does. Needs no device; runs on the host.
 */
package org.twheel;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timer;

import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

class HashedWheelTimerContractTest extends TimerContract {
    @Override
    Timer create(ThreadFactory threadFactory, long tickDuration, TimeUnit unit, int ticksPerWheel,
            boolean leakDetection, long maxPendingTimeouts, Executor taskExecutor) {
        return new HashedWheelTimer(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection,
                maxPendingTimeouts, taskExecutor);
    }

    @Override
    long pendingTimeouts(Timer timer) {
        return ((HashedWheelTimer) timer).pendingTimeouts();
    }
}
