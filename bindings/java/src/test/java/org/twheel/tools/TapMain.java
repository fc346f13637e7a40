// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * TapMain: runs the JUnit 5 tests of org.twheel found on the class path
 * with the JUnit Platform's launcher (from junit-platform-console-
 * standalone in the VM) and prints kselftest-style TAP as each test ends:
 *   ok N Class.method
 *   not ok N Class.method        (then the failure as '#' lines)
 *   ok N Class.method # SKIP reason
 * then the plan, and last
 *   binding: lang=java kernel=RELEASE passed=N failed=N
 * Exit status 1 if a test failed (or none ran), else 0. A skipped or
 * aborted class (no device on the host) prints each of its tests as
 * skipped, so every test is one line wherever it runs.
 */
package org.twheel.tools;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.ClassNameFilter;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.io.StringWriter;
import java.util.HashSet;
import java.util.Set;

public final class TapMain implements TestExecutionListener {
    private TestPlan plan;
    private final Set<String> reported = new HashSet<>();
    private int n;
    private int passed;
    private int failed;
    private int skipped;

    private TapMain() {
    }

    public static void main(String[] args) {
        String pkg = args.length > 0 ? args[0] : "org.twheel";
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(DiscoverySelectors.selectPackage(pkg))
                .filters(ClassNameFilter.includeClassNamePatterns(ClassNameFilter.STANDARD_INCLUDE_PATTERN))
                .build();
        Launcher launcher = LauncherFactory.create();
        TapMain tap = new TapMain();
        long t0 = System.nanoTime();
        System.out.println("TAP version 13");
        launcher.execute(request, tap);
        System.out.println("1.." + tap.n);
        System.out.printf("# java: %d tests in %.1f s (JVM up %.1f s), %d skipped; %s %s%n", tap.n,
                (System.nanoTime() - t0) / 1e9, ManagementFactory.getRuntimeMXBean().getUptime() / 1e3, tap.skipped,
                System.getProperty("java.vm.name"), System.getProperty("java.version"));
        System.out.println("binding: lang=java kernel=" + System.getProperty("os.version") + " passed=" + tap.passed
                + " failed=" + tap.failed);
        System.exit(tap.failed > 0 || tap.n == 0 ? 1 : 0);
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
    }

    private static String name(TestIdentifier id) {
        if (id.getSource().orElse(null) instanceof MethodSource) {
            MethodSource m = (MethodSource) id.getSource().get();
            String cls = m.getClassName();
            return cls.substring(cls.lastIndexOf('.') + 1) + "." + m.getMethodName();
        }
        return id.getDisplayName();
    }

    private void line(TestIdentifier id, String status, String detail) {
        if (!reported.add(id.getUniqueId()))
            return;
        n++;
        System.out.println(status + " " + n + " " + name(id) + (detail == null ? "" : detail));
        System.out.flush();
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ');
    }

    /* The tests under a container that did not run, each as a skip. */
    private void skipTests(TestIdentifier container, String why) {
        for (TestIdentifier d : plan.getDescendants(container))
            if (d.isTest() && !reported.contains(d.getUniqueId())) {
                skipped++;
                line(d, "ok", " # SKIP " + oneLine(why));
            }
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            skipped++;
            line(id, "ok", " # SKIP " + oneLine(reason));
        } else {
            skipTests(id, reason);
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        Throwable t = result.getThrowable().orElse(null);
        if (!id.isTest()) {
            if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                skipTests(id, t == null ? "aborted" : t.getMessage());
            } else if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                failed++;
                line(id, "not ok", null);
                comment(t);
            }
            return;
        }
        switch (result.getStatus()) {
        case SUCCESSFUL:
            passed++;
            line(id, "ok", null);
            break;
        case ABORTED:
            skipped++;
            line(id, "ok", " # SKIP " + oneLine(t == null ? "aborted" : t.getMessage()));
            break;
        default:
            failed++;
            line(id, "not ok", null);
            comment(t);
        }
    }

    private static void comment(Throwable t) {
        if (t == null)
            return;
        StringWriter sw = new StringWriter();
        t.printStackTrace(new PrintWriter(sw));
        String[] lines = sw.toString().split("\n");
        for (int i = 0; i < lines.length && i < 30; i++)
            System.out.println("# " + lines[i]);
    }
}
