// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Loads libtwheel-jni.so from the jar, the way Netty's native transports
 * load theirs: the library sits in the jar at
 * META-INF/native/linux-x86_64/, is copied to a private temporary file
 * (the JVM can only load a file), loaded, and the file deleted at once
 * (Linux keeps a loaded library mapped). Where the class path is a
 * directory (the build's own tests) it is loaded in place.
 *
 * System properties: twheel.native.path (load this file instead),
 * twheel.native.workdir (where the copy goes; default java.io.tmpdir,
 * which must allow executable mappings: not "noexec"),
 * twheel.native.deleteAfterLoading (default true).
 */
package org.twheel;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

final class NativeLoader {
    static final String RESOURCE = "META-INF/native/linux-x86_64/libtwheel-jni.so";

    private static Throwable failure;
    private static boolean loaded;

    private NativeLoader() {
    }

    /** Loads the library once; throws the same UnsatisfiedLinkError on every call if it failed. */
    static synchronized void ensure() {
        if (loaded)
            return;
        if (failure == null) {
            try {
                load();
                loaded = true;
                return;
            } catch (IOException | RuntimeException | UnsatisfiedLinkError e) {
                failure = e;
            }
        }
        UnsatisfiedLinkError e = new UnsatisfiedLinkError("twheel: cannot load libtwheel-jni: " + failure.getMessage());
        e.initCause(failure);
        throw e;
    }

    private static void load() throws IOException {
        String path = System.getProperty("twheel.native.path");
        if (path != null) {
            System.load(Path.of(path).toAbsolutePath().toString());
            return;
        }
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64")))
            throw new UnsatisfiedLinkError("twheel is for Linux on x86-64, not " + os + " on " + arch);
        URL url = NativeLoader.class.getClassLoader().getResource(RESOURCE);
        if (url == null)
            throw new UnsatisfiedLinkError(RESOURCE + " is not on the class path");
        if (url.getProtocol().equals("file")) {
            try {
                System.load(Path.of(url.toURI()).toString());
                return;
            } catch (URISyntaxException e) {
                throw new IOException(url + ": " + e.getMessage(), e);
            }
        }
        Path dir = Path.of(System.getProperty("twheel.native.workdir", System.getProperty("java.io.tmpdir")));
        Path copy = Files.createTempFile(dir, "libtwheel-jni", ".so",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            try (InputStream in = url.openStream()) {
                Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
            }
            try {
                System.load(copy.toString());
            } catch (UnsatisfiedLinkError e) {
                UnsatisfiedLinkError why = new UnsatisfiedLinkError(e.getMessage() + " (is " + dir
                        + " mounted noexec? set -Dtwheel.native.workdir to a directory that is not)");
                why.initCause(e);
                throw why;
            }
        } finally {
            if (Boolean.parseBoolean(System.getProperty("twheel.native.deleteAfterLoading", "true")))
                Files.deleteIfExists(copy);
            else
                copy.toFile().deleteOnExit();
        }
    }
}
