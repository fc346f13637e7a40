/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A wheel's time: its clock and ticks, the users' clock of its time
 * namespace, the timer, and the catching up that expires what is due.
 * See clock.c.
 */
#ifndef TWHEEL_CLOCK_H
#define TWHEEL_CLOCK_H

#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/types.h>

struct tw_entry;
struct twheel_ctx;

/**
 * twheel_ctx_now() - the kernel's present on the wheel's clock
 * @ctx:	a wheel that is set up.
 *
 * Return: the time now on ctx->clockid.
 */
ktime_t twheel_ctx_now(const struct twheel_ctx *ctx);

/**
 * twheel_clock_setup() - start the wheel's clock, at setup
 * @ctx:	the wheel, its clockid and tick_ns set, not yet published.
 *
 * Tick 0 begins now; the users' clock is that of the calling task's time
 * namespace, fixed from now on; the timer is set up on ctx->clockid.
 * Under ctx->lock.
 */
void twheel_clock_setup(struct twheel_ctx *ctx);

/**
 * twheel_to_user() - the kernel's time as the wheel's users read it
 * @ctx:	the wheel.
 * @ns:		a time on ctx->clockid since setup (so never below 0 on the
 *		users' clock either).
 *
 * Return: @ns on the clock of the time namespace that set the wheel up.
 */
u64 twheel_to_user(const struct twheel_ctx *ctx, u64 ns);

/**
 * twheel_from_user() - the kernel's time for a time on the users' clock
 * @ctx:	the wheel.
 * @ns:		any value.
 *
 * Return: @ns on ctx->clockid, saturated at 0 and U64_MAX rather than
 * wrapped, so that none passes for a time on the other side.
 */
u64 twheel_from_user(const struct twheel_ctx *ctx, u64 ns);

/**
 * twheel_tick_to_ns() - when a tick ends
 * @ctx:	the wheel.
 * @tick:	the tick.
 *
 * Return: the absolute time on the wheel's clock at which @tick ends.
 */
u64 twheel_tick_to_ns(const struct twheel_ctx *ctx, u64 tick);

/**
 * twheel_user_deadline() - an entry's deadline as the users read it
 * @ctx:	the wheel.
 * @e:		one of its entries.
 *
 * Return: the end of @e's tick, on the users' clock.
 */
u64 twheel_user_deadline(const struct twheel_ctx *ctx, const struct tw_entry *e);

/**
 * twheel_deadline_tick() - the tick of a relative deadline
 * @ctx:	the wheel.
 * @now:	the present, on the wheel's clock.
 * @timeout_ns:	the timeout.
 *
 * Return: the first tick ending at or after @now + @timeout_ns: never early.
 */
u64 twheel_deadline_tick(const struct twheel_ctx *ctx, ktime_t now, u64 timeout_ns);

/**
 * twheel_abs_tick() - the tick of an absolute deadline
 * @ctx:	the wheel.
 * @now:	the present, on the wheel's clock.
 * @deadline_ns: the deadline, on the wheel's clock.
 *
 * Return: the first tick ending at or after @deadline_ns, or after @now
 * if that is past.
 */
u64 twheel_abs_tick(const struct twheel_ctx *ctx, ktime_t now, u64 deadline_ns);

/**
 * twheel_present() - the present, for placing deadlines
 * @ctx:	the wheel.
 *
 * However far the wheel's clock lags it (nobody has caught up since a
 * long suspend on CLOCK_BOOTTIME, or looked for hours), a deadline
 * placed from it is kept exactly: the core never clamps one early (see
 * "Hops" in wheel.c). An
 * idle wheel's clock is moved up to it first, so that new deadlines land
 * on their level. Under ctx->lock.
 *
 * Return: the time now on the wheel's clock.
 */
ktime_t twheel_present(struct twheel_ctx *ctx);

/**
 * twheel_arm() - arm the timer for the wheel's next event
 * @ctx:	the wheel.
 *
 * Only if that is earlier than what it is armed for. An event that moved
 * later (a cancel, a refresh) is left armed: the work then finds less to
 * do and re-arms. Under ctx->lock.
 */
void twheel_arm(struct twheel_ctx *ctx);

/* Chunks of expiry for a caller that catches up until nothing is due. */
#define TWHEEL_CATCH_UP_ALL	UINT_MAX

/**
 * twheel_catch_up() - expire and cascade what is due, as the caller's work
 * @ctx:	the wheel.
 * @chunks:	how many chunks of TWHEEL_ADVANCE_BUDGET entries at most.
 *
 * If the timer marked the wheel due, do the work, a chunk at a time under
 * ctx->lock with a chance to reschedule between chunks, until nothing is
 * due, @chunks ran, or a signal is pending (then the waitqueue is woken,
 * so that a waiter goes on); re-arm the timer when nothing is left. Wakes
 * nobody for the events it adds: every waiter was woken by the timer that
 * marked the wheel due, or sees the mark before it sleeps, and none takes
 * the wheel for caught up before the mark is clear (twheel_due() in
 * dev.h). Costs a load when nothing is due. Process context, without
 * ctx->lock.
 *
 * Return: true if nothing is left due.
 */
bool twheel_catch_up(struct twheel_ctx *ctx, unsigned int chunks);

#endif /* TWHEEL_CLOCK_H */
