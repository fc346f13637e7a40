// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The callback of Wheel.listen: one call per expired id, on the wheel's
 * delivery thread, in the order read(2) returns them (deadline order).
 */
package org.twheel;

/** Receives the wheel's expirations, one id at a time. */
@FunctionalInterface
public interface ExpiryListener {
    /**
     * The deadline of {@code id} passed; it is no longer in the wheel.
     *
     * @param id         the id
     * @param deadlineNs its deadline on the wheel's clock, on the tick grid
     * @param expiredNs  when the wheel processed it; never before the deadline
     */
    void expired(long id, long deadlineNs, long expiredNs);
}
