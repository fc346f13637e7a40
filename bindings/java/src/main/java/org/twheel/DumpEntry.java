// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * One live id as Wheel.dump lists it.
 */
package org.twheel;

/**
 * A live id.
 *
 * @param id         the id
 * @param deadlineNs its deadline on the wheel's clock, on the tick grid
 * @param slot       its touch slot, or {@link Wheel#NO_SLOT}
 */
public record DumpEntry(long id, long deadlineNs, int slot) {
}
