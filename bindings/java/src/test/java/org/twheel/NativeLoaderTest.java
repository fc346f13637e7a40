// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Which library NativeLoader picks for a JVM's os.name and os.arch, what
 * a JVM it has none for is told, and that the build put a library for
 * each platform on the class path, each built for its machine (the ELF
 * header's e_machine): the jar the tests' classes become carries them.
 */
package org.twheel;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NativeLoaderTest {
    private static final int EM_X86_64 = 62;
    private static final int EM_AARCH64 = 183;

    @Test
    void aarch64GetsTheLinuxAarch64Library() {
        assertEquals("META-INF/native/linux-aarch64/libtwheel-jni.so", NativeLoader.resource("Linux", "aarch64"));
    }

    @Test
    void amd64AndX86_64GetTheLinuxX86_64Library() {
        assertEquals("META-INF/native/linux-x86_64/libtwheel-jni.so", NativeLoader.resource("Linux", "amd64"));
        assertEquals("META-INF/native/linux-x86_64/libtwheel-jni.so", NativeLoader.resource("Linux", "x86_64"));
    }

    @Test
    void otherArchesAndSystemsGetNone() {
        assertNull(NativeLoader.resource("Linux", "riscv64"));
        assertNull(NativeLoader.resource("Linux", "arm"));
        assertNull(NativeLoader.resource("Mac OS X", "aarch64"));
    }

    @Test
    void anUnsupportedArchIsToldItsArchAndWhatTheJarCarries() {
        assertEquals("twheel has no native library for Linux on riscv64 (os.name, os.arch); "
                + "the jar carries linux-aarch64, linux-x86_64", NativeLoader.unsupported("Linux", "riscv64"));
    }

    @Test
    void eachLibraryIsBuiltForItsMachine() throws IOException {
        assertEquals(EM_X86_64, machine(NativeLoader.resource("Linux", "amd64")));
        assertEquals(EM_AARCH64, machine(NativeLoader.resource("Linux", "aarch64")));
    }

    /** e_machine of a 64-bit little-endian ELF file on the class path. */
    private static int machine(String resource) throws IOException {
        try (InputStream in = NativeLoaderTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertNotNull(in, resource);
            ByteBuffer h = ByteBuffer.wrap(in.readNBytes(20)).order(ByteOrder.LITTLE_ENDIAN);
            assertTrue(h.getInt(0) == 0x464c457f && h.get(4) == 2 && h.get(5) == 1, resource + " is not a 64-bit LSB ELF file");
            return h.getShort(18);
        }
    }
}
