// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The examples as a user runs them, each in its own JVM: the README's
 * "From Java" example exactly as the README has it (compiled from the
 * README by the Makefile), and the heartbeat example, a consumer project
 * built against the installed jar. Their places come from system
 * properties that vm-test.sh sets (twheel.readme.classes,
 * twheel.example.jar); without them, or without the device, skipped.
 */
package org.twheel;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ExamplesTest {
    /* What a JVM prints when it dies in its own start-up, before any class of the program ran. */
    static final String VM_INIT_FAILED = "Error occurred during initialization of VM";

    /*
     * Runs @main with @extra on the class path; returns its output, asserting exit status 0.
     * A child JVM that dies in its own initialisation (seen once in an emulated arm64 guest:
     * a NullPointerException in System.initPhase1, before the class path was read) is started
     * once more, and says so; any other failure, or a second one, fails the test.
     */
    static String run(String extra, String main, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-cp", extra + File.pathSeparator + System.getProperty("java.class.path"),
                main));
        cmd.addAll(List.of(args));
        for (int attempt = 1; ; attempt++) {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(TimerContract.WAIT_S * 2, TimeUnit.SECONDS), main + " did not end");
            for (String line : out.split("\n"))
                System.out.println("# " + main + ": " + line);
            if (attempt == 1 && p.exitValue() != 0 && out.contains(VM_INIT_FAILED)) {
                System.out.println("# " + main + ": the JVM died in its start-up; starting it once more");
                continue;
            }
            assertEquals(0, p.exitValue(), main + " failed:\n" + out);
            return out;
        }
    }

    static String property(String name) {
        String v = System.getProperty(name);
        assumeTrue(v != null, "-D" + name + " not set (vm-test.sh sets it)");
        Device.assumePresent();
        return v;
    }

    @Test
    void readmeExampleRunsAsItStands() throws Exception {
        String[] lines = run(property("twheel.readme.classes"), "Offline").strip().split("\n");
        /* Users 1 and 3 share a deadline: either may come first. */
        assertEquals(3, lines.length);
        assertEquals(java.util.Set.of("user 1 offline", "user 3 offline"), java.util.Set.of(lines[0], lines[1]));
        assertEquals("user 2 offline", lines[2]);
    }

    @Test
    void heartbeatExampleReportsEverySilentConnectionOnly() throws Exception {
        String out = run(property("twheel.example.jar"), "example.Heartbeat");
        assertTrue(out.contains("heartbeat: tracked=2000 offline=200 expected_offline=200 early=0 false=0"), out);
    }
}
