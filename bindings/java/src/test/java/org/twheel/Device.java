// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The tests' one question about the machine: is there a /dev/twheel to
 * test against? Without it (the host, where the module cannot load) the
 * device tests are skipped, not failed.
 */
package org.twheel;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

final class Device {
    private Device() {
    }

    static boolean present() {
        return Files.exists(Path.of(Wheel.DEVICE));
    }

    static void assumePresent() {
        assumeTrue(present(), "no " + Wheel.DEVICE + " (the twheel module is not loaded here)");
    }
}
