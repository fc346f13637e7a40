// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * JMH: the latency of one refresh of a random id among 10^5, for each
 * way BindingBench compares (twheel needs /dev/twheel: in the VM,
 * `make bench JMH=1`). BindingBench gives the CPU and memory figures;
 * this gives JMH's per-op time with its warm-up and error bars.
 */
package org.twheel.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RefreshBenchmark {
    @Param({ "twheel", "twheel-timer", "hashedwheeltimer", "kafka-systemtimer", "scheduledthreadpoolexecutor" })
    public String impl;

    @Param({ "100000" })
    public int n;

    private BindingBench.Way way;
    private final long[] one = new long[1];

    @Setup(Level.Trial)
    public void setup() throws Exception {
        Object[] held = new Object[n];
        switch (impl) {
        case "twheel":
            way = new BindingBench.WheelOps(held, false);
            break;
        case "twheel-timer":
            way = new BindingBench.NettyTimer(held, new org.twheel.TwheelTimer(), impl);
            break;
        case "hashedwheeltimer":
            way = new BindingBench.NettyTimer(held, new io.netty.util.HashedWheelTimer(), impl);
            break;
        case "kafka-systemtimer":
            way = new BindingBench.Kafka(held);
            break;
        default:
            way = new BindingBench.Stpe(held);
        }
        way.addAll(n);
    }

    @Benchmark
    public void refresh() throws Exception {
        one[0] = ThreadLocalRandom.current().nextInt(n);
        way.refresh(one, 0, 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        way.close();
    }
}
