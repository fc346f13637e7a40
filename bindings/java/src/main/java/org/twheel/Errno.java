// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The errnos the wheel's calls answer, with the values of Linux's generic
 * <asm-generic/errno-base.h> and <asm-generic/errno.h> (x86-64 and every
 * architecture this library is built for), and the one place where an
 * errno becomes the exception the API promises.
 */
package org.twheel;

import java.io.IOException;
import java.util.NoSuchElementException;

final class Errno {
    static final int ENOENT = 2;
    static final int EINTR = 4;
    static final int EBADF = 9;
    static final int EAGAIN = 11;
    static final int ENOMEM = 12;
    static final int EEXIST = 17;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;

    private Errno() {
    }

    /** "ENOSPC (No space left on device)" for a positive errno. */
    static String describe(int errno) {
        NativeLoader.ensure();
        return Wheel.nStrerror(errno);
    }

    /**
     * The exception for {@code -err} (a negative errno) from call
     * {@code what}: thrown here if unchecked, returned to be thrown if an
     * IOException. ENOENT means a missing id only where {@code idCall}.
     */
    static IOException fail(int err, String what, boolean idCall) {
        int errno = -err;

        if (errno == ENOENT && idCall)
            throw new NoSuchElementException(what + ": not in the wheel");
        if (errno == EINVAL)
            throw new IllegalArgumentException(what + ": rejected, " + describe(errno));
        if (errno == EBADF)
            return new ClosedWheelException(what);
        return new TwheelException(what + ": " + describe(errno), errno);
    }
}
