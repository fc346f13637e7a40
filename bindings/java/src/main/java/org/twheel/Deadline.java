// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * What Wheel.query answers for a live id.
 */
package org.twheel;

/**
 * A live id's deadline.
 *
 * @param deadlineNs  the deadline on the wheel's clock, on the tick grid
 * @param remainingNs the deadline minus the time of the query, 0 if past
 */
public record Deadline(long deadlineNs, long remainingNs) {
}
