// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * What the benchmark (org.twheel.bench) may read of a TwheelTimer's
 * worker: test code, in the package that can see it.
 */
package org.twheel;

/** A look into a TwheelTimer for BindingBench. */
public final class TimerProbe {
    private TimerProbe() {
    }

    /** Timeouts whose kernel entry expires before their deadline, each owing an expiry and a re-arm. */
    public static int owedRearms(TwheelTimer timer) {
        return timer.flush.owed();
    }

    /** What the worker sent and read so far, one line (racy: for a benchmark's report). */
    public static String counts(TwheelTimer timer) {
        TwheelTimer.Flush f = timer.flush;
        return "batches=" + f.runs + " adds=" + f.sent[0] + " refreshes=" + f.sent[1] + " cancels=" + f.sent[2]
                + " rearms=" + f.rearms + " lazy_takes=" + f.lazyTakes + " expiries_read=" + f.reads;
    }
}
