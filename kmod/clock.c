// SPDX-License-Identifier: GPL-2.0
/*
 * A wheel's time: its clock, its ticks, the time namespace of its users,
 * the timer, and the catching up that expires what is due.
 *
 * Time: ticks are counted from the moment of setup (ctx->epoch) on the
 * wheel's clock; tick k ends at epoch + k * tick_ns. Inside, every time
 * is the kernel's (the host's) reading of the clock; the times users
 * exchange with the wheel (absolute deadlines and touch stamps in;
 * deadlines and expiry times out, tracepoints included) are on the clock
 * of the time namespace of the task that set the wheel up, as its
 * clock_gettime(2) and vDSO read it, and are converted at the boundary
 * (twheel_to_user(), twheel_from_user()). One wheel, one clock: the
 * expiry work, which reads touch stamps, runs for whichever task looks
 * first, whatever its namespace, and a
 * wheel passed to another namespace keeps the clock it was set up on
 * (fdinfo shows the offset as clock_offset_ns). One hrtimer per
 * wheel is armed, absolute, for the tick of the wheel's next event (see
 * tw_next_event()), and not at all while nothing is due: an idle wheel
 * costs nothing and the tick cannot drift.
 *
 * Who expires. No thread of the module's: the timer callback (hard IRQ)
 * marks the wheel due (ctx->due) and wakes its waitqueue, and the tasks
 * that use the wheel do the work, in process context, charged to them:
 * a reader or poller catches up until events wait or nothing is due
 * (twheel_catch_up()), and every command first does one chunk of what is
 * due, so that it sees the wheel of the present. That is timerfd's way,
 * a count the reader collects, for a wheel's worth of work: what a
 * process's wheels cost is spent in its own system calls, in its own
 * cgroups, throttled and weighed with it, and nothing of the module's
 * outlives the process, joins a cgroup or holds one populated. Work runs
 * at most TWHEEL_ADVANCE_BUDGET entries at a time under ctx->lock,
 * catching up every tick missed since, with a chance to reschedule
 * between chunks; the timer is re-armed when nothing is left due. A
 * wheel nobody reads, polls or calls expires nothing: its ids wait in
 * their slots, charged as before, until someone looks (what a reader
 * sees is the same, only its expiry times say when the work ran).
 *
 * Ordering of the due mark. The timer sets ctx->due and then wakes
 * ctx->wqh; a waiter adds itself to ctx->wqh and then reads ctx->due.
 * Both take the waitqueue's lock (wake_up() always does, poll_wait() and
 * prepare_to_wait() to add): if the waker takes it first, its unlock
 * releases the store to the waiter's lock; if the waiter does, the waker
 * finds it queued. Either way no due mark is missed, as for wait_event()
 * itself. ctx->due is cleared under ctx->lock only when the last chunk
 * is done, with a release after its counts are published, and only
 * after the timer was cancelled at that chunk's start: no mark can come
 * between (nothing arms the timer but under ctx->lock), and whoever
 * finds the mark clear finds the events too. litmus/ states these
 * patterns for the kernel's memory model, run by herd7 in `make check`:
 * due-wakeup, due-clear-publish, due-rearm.
 */
#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/time_namespace.h>
#include <linux/wait.h>

#include "clock.h"
#include "dev.h"
#include "events.h"
#include "trace.h"
#include "wheel.h"

/*
 * Work per chunk of expiry, under ctx->lock, between two chances to
 * reschedule: entries moved, and index chain steps (see tw_advance()).
 */
#define TWHEEL_ADVANCE_BUDGET	4096

ktime_t twheel_ctx_now(const struct twheel_ctx *ctx)
{
	return ctx->clockid == CLOCK_BOOTTIME ? ktime_get_boottime() : ktime_get();
}

/* The offset of the calling task's time namespace on @clockid; 0 without CONFIG_TIME_NS. */
static s64 twheel_timens_offset(clockid_t clockid)
{
	struct timespec64 off = {};

	if (clockid == CLOCK_BOOTTIME)
		timens_add_boottime(&off);
	else
		timens_add_monotonic(&off);
	/*
	 * Not timespec64_to_ns(), which saturates every negative time on
	 * 5.10; the kernel keeps offsets within +-KTIME_SEC_MAX, so this
	 * cannot overflow.
	 */
	return off.tv_sec * NSEC_PER_SEC + off.tv_nsec;
}

u64 twheel_to_user(const struct twheel_ctx *ctx, u64 ns)
{
	return ns + ctx->clock_offset_ns;
}

u64 twheel_from_user(const struct twheel_ctx *ctx, u64 ns)
{
	s64 off = ctx->clock_offset_ns;

	if (off > 0 && ns < (u64)off)
		return 0;
	if (off < 0 && ns > U64_MAX + off)
		return U64_MAX;
	return ns - off;
}

u64 twheel_tick_to_ns(const struct twheel_ctx *ctx, u64 tick)
{
	return ktime_to_ns(ctx->epoch) + tick * ctx->tick_ns;
}

u64 twheel_user_deadline(const struct twheel_ctx *ctx, const struct tw_entry *e)
{
	return twheel_to_user(ctx, twheel_tick_to_ns(ctx, e->expires));
}

/* The last tick that has fully passed at @now. */
static u64 twheel_ns_to_tick(const struct twheel_ctx *ctx, ktime_t now)
{
	return div64_u64(ktime_to_ns(ktime_sub(now, ctx->epoch)), ctx->tick_ns);
}

u64 twheel_deadline_tick(const struct twheel_ctx *ctx, ktime_t now, u64 timeout_ns)
{
	u64 rel = ktime_to_ns(ktime_sub(now, ctx->epoch)) + timeout_ns;

	return div64_u64(rel + ctx->tick_ns - 1, ctx->tick_ns);
}

u64 twheel_abs_tick(const struct twheel_ctx *ctx, ktime_t now, u64 deadline_ns)
{
	u64 rel = max_t(u64, deadline_ns, ktime_to_ns(now)) - ktime_to_ns(ctx->epoch);

	return div64_u64(rel + ctx->tick_ns - 1, ctx->tick_ns);
}

ktime_t twheel_present(struct twheel_ctx *ctx)
{
	ktime_t now = twheel_ctx_now(ctx);

	lockdep_assert_held(&ctx->lock);
	tw_idle_to(&ctx->wheel, twheel_ns_to_tick(ctx, now));
	return now;
}

void twheel_arm(struct twheel_ctx *ctx)
{
	u64 tick;

	lockdep_assert_held(&ctx->lock);
	if (ctx->dying || !tw_next_event(&ctx->wheel, &tick))
		return;
	if (ctx->armed && !tw_after(ctx->armed_tick, tick))
		return;
	ctx->armed = true;
	ctx->armed_tick = tick;
	hrtimer_start(&ctx->timer, ns_to_ktime(twheel_tick_to_ns(ctx, tick)),
		      HRTIMER_MODE_ABS);
}

/*
 * Hard IRQ context: no wheel work here. Mark the wheel due and wake its
 * readers and pollers without a poll key: nothing may be readable yet,
 * so each must look (poll catches up), and io_uring's poll, trusting a
 * key's mask, would otherwise complete on it.
 */
static enum hrtimer_restart twheel_timer_fn(struct hrtimer *timer)
{
	struct twheel_ctx *ctx = container_of(timer, struct twheel_ctx, timer);

	/*
	 * No barrier of its own: wake_up's lock orders the mark for every
	 * waiter, queued before or after it (see "Ordering of the due
	 * mark"), and a mark that lands after a catching up's clear is for
	 * an arming made after that clear, under the hrtimer base's lock
	 * (litmus/due-rearm.litmus).
	 */
	WRITE_ONCE(ctx->due, true);
	wake_up_interruptible(&ctx->wqh);
	return HRTIMER_NORESTART;
}

void twheel_clock_setup(struct twheel_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	ctx->epoch = twheel_ctx_now(ctx);
	ctx->clock_offset_ns = twheel_timens_offset(ctx->clockid);
	hrtimer_setup(&ctx->timer, twheel_timer_fn, ctx->clockid, HRTIMER_MODE_ABS);
}

/*
 * Expire and cascade what is due at @now, at most TWHEEL_ADVANCE_BUDGET
 * entries. Returns true when done up to @now. Under ctx->lock, process
 * context.
 */
static bool twheel_advance(struct twheel_ctx *ctx, ktime_t now)
{
	struct tw_wheel *w = &ctx->wheel;
	struct tw_entry *last = tw_last_expired(w), *e;
	u64 before = w->nr_expired, late;
	bool done;

	lockdep_assert_held(&ctx->lock);
	done = tw_advance(w, twheel_ns_to_tick(ctx, now), TWHEEL_ADVANCE_BUDGET,
			  ktime_to_ns(now));
	WRITE_ONCE(ctx->ticks_run, ctx->ticks_run + 1);
	if (w->nr_expired != before) {
		/* The run's earliest event is its latest: deadline order. */
		e = last ? tw_next_expired(w, last) : tw_peek_expired(w);
		late = ktime_to_ns(now) - twheel_tick_to_ns(ctx, e->expires);
		WRITE_ONCE(ctx->lateness_last_ns, late);
		if (late > ctx->lateness_max_ns)
			WRITE_ONCE(ctx->lateness_max_ns, late);
		WRITE_ONCE(ctx->expired_total, ctx->expired_total + w->nr_expired - before);
		if (trace_twheel_expire_enabled()) {
			for (; e; e = tw_next_expired(w, e))
				trace_twheel_expire(ctx->serial, e->id,
						    twheel_user_deadline(ctx, e),
						    twheel_to_user(ctx, e->stamp));
		}
	}
	twheel_publish(ctx);
	return done;
}

/*
 * One chunk of what is due; true when nothing is left. ctx->due stays
 * set until the last chunk is done and its counts are published, so that
 * whoever finds it clear finds the events too (see "Who expires"). Under
 * ctx->lock.
 */
static bool twheel_catch_up_chunk(struct twheel_ctx *ctx)
{
	bool done;
	u64 now_tick;
	ktime_t now;

	lockdep_assert_held(&ctx->lock);
	if (ctx->dying || !READ_ONCE(ctx->due))
		return true;
	/*
	 * Nothing arms the timer but under ctx->lock: once it is cancelled
	 * (a callback running on another CPU waited for), no mark can come
	 * until twheel_arm() below, so clearing the mark loses none.
	 */
	hrtimer_cancel(&ctx->timer);
	now = twheel_ctx_now(ctx);
	now_tick = twheel_ns_to_tick(ctx, now);
	if (ctx->armed && tw_after(now_tick, ctx->armed_tick))
		WRITE_ONCE(ctx->ticks_caught_up,
			   ctx->ticks_caught_up + now_tick - ctx->armed_tick);
	ctx->armed = false;
	done = twheel_advance(ctx, now);
	if (done) {
		/* Pairs with the acquire in twheel_due(): counts before the mark. */
		smp_store_release(&ctx->due, false);
		twheel_arm(ctx);
	}
	return done;
}

bool twheel_catch_up(struct twheel_ctx *ctx, unsigned int chunks)
{
	bool done = true;

	/*
	 * Acquire: if another task cleared the mark, the counts it published
	 * are seen after (the caller reads events_waiting next).
	 */
	while (twheel_due(ctx)) {
		mutex_lock(&ctx->lock);
		done = twheel_catch_up_chunk(ctx);
		mutex_unlock(&ctx->lock);
		if (done || !--chunks)
			break;
		if (signal_pending(current)) {
			/*
			 * The caller has a signal to handle and takes what there
			 * is. Those who wait are told the wheel is still due,
			 * so that one of them goes on (an edge-triggered epoll
			 * gets no other edge for it).
			 */
			wake_up_interruptible(&ctx->wqh);
			break;
		}
		cond_resched();
	}
	return done;
}
