// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The IOException of a failed wheel call, with the errno the kernel gave,
 * for every failure that is neither a missing id (NoSuchElementException)
 * nor bad input (IllegalArgumentException): ENOSPC when a cap is reached,
 * EEXIST for an add of a live id, ENOENT or EACCES from opening the
 * device, and so on.
 */
package org.twheel;

import java.io.IOException;

/** A wheel call failed with {@link #errno()}. */
public class TwheelException extends IOException {
    private static final long serialVersionUID = 1L;

    private final int errno;

    /**
     * @param message what failed, with the errno's name and text
     * @param errno   the positive errno
     */
    public TwheelException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    /** The positive errno of the failure, as in {@code <errno.h>} (e.g. 28 for ENOSPC). */
    public int errno() {
        return errno;
    }
}
