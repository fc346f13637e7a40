// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Loads libtwheel-jni.so from the jar, the way Netty's native transports
 * load theirs: the jar carries one library per platform, at
 * META-INF/native/linux-x86_64/ and META-INF/native/linux-aarch64/ (the
 * same sources, cross-built: pom.xml); the one for the JVM's os.arch is
 * copied to a private temporary file (the JVM can only load a file),
 * loaded, and the file deleted at once (Linux keeps a loaded library
 * mapped). Where the class path is a directory (the build's own tests)
 * it is loaded in place.
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
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeSet;

final class NativeLoader {
    /** The os.arch values a Linux JVM reports, to the jar's directory of the library built for them. */
    private static final Map<String, String> PLATFORMS = Map.of(
            "amd64", "linux-x86_64",
            "x86_64", "linux-x86_64",
            "aarch64", "linux-aarch64");

    /** The library for this JVM's os.name and os.arch, or null if the jar has none for them. */
    static final String RESOURCE = resource(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));

    private static Throwable failure;
    private static boolean loaded;
    private static String source;

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

    /** Where the library was loaded from (a file or the resource's URL), or null before it is. */
    static synchronized String source() {
        return source;
    }

    /** The resource of the library for a JVM with these os.name and os.arch, or null if there is none. */
    static String resource(String os, String arch) {
        String dir = os.toLowerCase(Locale.ROOT).startsWith("linux") ? PLATFORMS.get(arch) : null;
        return dir == null ? null : library(dir);
    }

    private static String library(String dir) {
        return "META-INF/native/" + dir + "/libtwheel-jni.so";
    }

    /** Why a JVM with these os.name and os.arch gets no library: what it is, and what the jar has. */
    static String unsupported(String os, String arch) {
        StringJoiner carried = new StringJoiner(", ");
        ClassLoader cl = NativeLoader.class.getClassLoader();
        /* What is on the class path, not what the build meant to put there. */
        for (String dir : new TreeSet<>(PLATFORMS.values()))
            if (cl.getResource(library(dir)) != null)
                carried.add(dir);
        return "twheel has no native library for " + os + " on " + arch + " (os.name, os.arch); the jar carries "
                + (carried.length() == 0 ? "none" : carried.toString());
    }

    private static void load() throws IOException {
        String path = System.getProperty("twheel.native.path");
        if (path != null) {
            String file = Path.of(path).toAbsolutePath().toString();
            System.load(file);
            source = file;
            return;
        }
        if (RESOURCE == null)
            throw new UnsatisfiedLinkError(unsupported(System.getProperty("os.name", ""), System.getProperty("os.arch", "")));
        URL url = NativeLoader.class.getClassLoader().getResource(RESOURCE);
        if (url == null)
            throw new UnsatisfiedLinkError(RESOURCE + " is not on the class path");
        if (url.getProtocol().equals("file")) {
            try {
                System.load(Path.of(url.toURI()).toString());
                source = url.toString();
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
                source = url.toString();
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
