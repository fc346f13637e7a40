// SPDX-License-Identifier: GPL-2.0
/*
 * A wheel's time: its clock, its ticks, the time namespace of its users,
 * and the timer and job that expire what is due.
 *
 * Time: ticks are counted from the moment of setup (ctx->epoch) on the
 * wheel's clock; tick k ends at epoch + k * tick_ns. Inside, every time
 * is the kernel's (the host's) reading of the clock; the times users
 * exchange with the wheel (absolute deadlines and touch stamps in;
 * deadlines and expiry times out, tracepoints included) are on the clock
 * of the time namespace of the task that set the wheel up, as its
 * clock_gettime(2) and vDSO read it, and are converted at the boundary
 * (twheel_to_user(), twheel_from_user()). One wheel, one clock: the
 * expiry work, which reads touch stamps, has no caller to ask, and a
 * wheel passed to another namespace keeps the clock it was set up on
 * (fdinfo shows the offset as clock_offset_ns). One hrtimer per
 * wheel is armed, absolute, for the tick of the wheel's next event (see
 * tw_next_event()), and not at all while nothing is due: an idle wheel
 * costs nothing and the tick cannot drift. The timer callback (hard IRQ)
 * only kicks ctx->job; the job advances the wheel in process context, in
 * a kernel thread in the owner's cgroups that is charged and throttled as
 * the owner is (worker.c): at most TWHEEL_ADVANCE_BUDGET entries at a
 * time, catching up every tick missed since, and re-arms the timer.
 */
#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/time_namespace.h>

#include "clock.h"
#include "dev.h"
#include "events.h"
#include "trace.h"
#include "wheel.h"
#include "worker.h"

/*
 * Work per run before the job yields the CPU and requeues: entries
 * moved, and index chain steps (see tw_advance()).
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

/* Hard IRQ context: no wheel work here, only hand it to process context. */
static enum hrtimer_restart twheel_timer_fn(struct hrtimer *timer)
{
	struct twheel_ctx *ctx = container_of(timer, struct twheel_ctx, timer);

	twheel_job_kick(&ctx->job);
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
 * entries. Returns true when done up to @now; sets *@wake if events were
 * added. Under ctx->lock, process context.
 */
static bool twheel_advance(struct twheel_ctx *ctx, ktime_t now, bool *wake)
{
	struct tw_wheel *w = &ctx->wheel;
	struct tw_entry *last = tw_last_expired(w), *e;
	u64 before = w->nr_expired, late;
	bool done;

	lockdep_assert_held(&ctx->lock);
	done = tw_advance(w, twheel_ns_to_tick(ctx, now), TWHEEL_ADVANCE_BUDGET,
			  ktime_to_ns(now));
	WRITE_ONCE(ctx->ticks_run, ctx->ticks_run + 1);
	*wake = w->nr_expired != before;
	if (*wake) {
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

bool twheel_run(struct twheel_job *job)
{
	struct twheel_ctx *ctx = container_of(job, struct twheel_ctx, job);
	bool done, wake;
	u64 now_tick;
	ktime_t now;

	mutex_lock(&ctx->lock);
	if (ctx->dying) {
		mutex_unlock(&ctx->lock);
		return false;
	}
	now = twheel_ctx_now(ctx);
	now_tick = twheel_ns_to_tick(ctx, now);
	if (ctx->armed && tw_after(now_tick, ctx->armed_tick))
		WRITE_ONCE(ctx->ticks_caught_up,
			   ctx->ticks_caught_up + now_tick - ctx->armed_tick);
	ctx->armed = false;
	done = twheel_advance(ctx, now, &wake);
	if (done)
		twheel_arm(ctx);
	mutex_unlock(&ctx->lock);

	if (wake)
		twheel_wake_readers(ctx);
	return !done;
}
