// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The wheel was closed before or during the call: what a reader blocked
 * in Wheel.read gets when another thread closes the wheel, and what every
 * call after close gets. Its errno is EBADF.
 */
package org.twheel;

/** The wheel is closed. */
public final class ClosedWheelException extends TwheelException {
    private static final long serialVersionUID = 1L;

    ClosedWheelException(String what) {
        super(what + ": the wheel is closed", Errno.EBADF);
    }
}
