// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel: one timing wheel per open file.
 *
 * The device layer turns the uapi (uapi/linux/twheel.h) into calls of
 * the wheel core (wheel.c) and owns everything the core must not know:
 * user memory, time, the timer, waking readers, caps and accounting.
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
 *
 * Expired entries wait on the wheel's expired list, each in its own
 * memory, until read(2) copies them out and frees them: the caps on
 * entries cover live ids and undelivered events together, and nothing
 * is ever dropped. Entries are charged to the wheel's user and the
 * module (account.c); memory to the memory cgroup of the task whose call
 * allocates it, without the wheel's lock (struct twheel_pool): reclaim
 * for one sharer at its memory cgroup's limit delays nobody else. The
 * expiry job allocates nothing.
 *
 * Nothing a user can drive keeps a CPU for long: the job yields every
 * TWHEEL_ADVANCE_BUDGET entries (index chain steps counted in), a batch,
 * a read and a release every chunk, and the id index is keyed and bounds
 * its chains (wheel.c), so chosen ids cost what random ones do.
 *
 * Locking:
 *  - ctx->lock (mutex) protects the wheel and every field marked so; it
 *    is taken in process context only (ioctl, read, job, release), and
 *    never held across a user copy or an allocation: callers drop it to
 *    allocate entries (twheel_pool_fill()) and index tables
 *    (twheel_index_prepare()).
 *  - ctx->read_lock (mutex) serialises readers, so that events copied to
 *    one reader are taken off the list by that reader only. It nests
 *    outside ctx->lock and is held across copy_to_user(); ctx->lock never
 *    is. Since a copy may take as long as the reader's memory makes it,
 *    O_NONBLOCK readers only try it (EAGAIN if taken) and others wait
 *    for it interruptibly, restartably.
 *  - Fields marked "published" are written under ctx->lock with
 *    WRITE_ONCE() and read without it (poll, readers deciding whether to
 *    sleep, fdinfo).
 */
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <linux/twheel.h>

#include "account.h"
#include "compat.h"
#include "dev.h"
#include "touch.h"
#include "wheel.h"
#include "worker.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/*
 * Work per run before the job yields the CPU and requeues: entries
 * moved, and index chain steps (see tw_advance()).
 */
#define TWHEEL_ADVANCE_BUDGET	4096
/* Operations of a batch copied in and out at a time (on the stack). */
#define TWHEEL_BATCH_CHUNK	16
/* Ids of TWHEEL_IOC_REFRESH copied in at a time, and failures out (stack). */
#define TWHEEL_REFRESH_CHUNK	32
/* Events copied out at a time by read(2) (on the stack). */
#define TWHEEL_READ_CHUNK	16
/* Entries release frees between two chances to reschedule. */
#define TWHEEL_FREE_CHUNK	1024
/* Most entries one chunk of a batch or of a REFRESH can add: the larger chunk. */
#define TWHEEL_POOL_MAX		TWHEEL_REFRESH_CHUNK
/*
 * Ids a dump lists per lock hold (on the stack), and buckets it looks at
 * (or moves to the index's new key).
 */
#define TWHEEL_DUMP_CHUNK	16
#define TWHEEL_DUMP_BUDGET	256

#define TWHEEL_OPF_TIMES	(TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ABSTIME)

static unsigned int twheel_max_entries_per_wheel = 1U << 24;
module_param_named(max_entries_per_wheel, twheel_max_entries_per_wheel, uint, 0644);
MODULE_PARM_DESC(max_entries_per_wheel,
		 "Largest cap a wheel may set, and the cap of a wheel that sets 0 (default 16M)");

/* Entries of wheels without a touch table, and of wheels with one. */
static struct kmem_cache *twheel_entry_cache;
static struct kmem_cache *twheel_touch_entry_cache;
/* Names wheels in fdinfo and tracepoints. */
static atomic64_t twheel_serial = ATOMIC64_INIT(0);

/**
 * struct twheel_touch_entry - an entry of a wheel with a touch table
 * @e:		the core's entry.
 * @timeout_ns:	what a touch re-arms the id with: the timeout of its last
 *		ADD or REFRESH (the default if that carried a deadline).
 * @armed_ns:	when its deadline was last set; stamps up to it are no touch.
 * @seen:	the last stamp that counted, or the one in the slot when the
 *		id was bound to it: a stamp counts once, so neither a stale
 *		stamp of a slot's previous id nor a time from the future left
 *		in the slot keeps the id alive more than one timeout.
 * @slot:	its touch slot, or TWHEEL_SLOT_NONE.
 *
 * Every entry of such a wheel is one, bound or not. Under the wheel's lock.
 */
struct twheel_touch_entry {
	struct tw_entry e;
	u64 timeout_ns;
	u64 armed_ns;
	u64 seen;
	u32 slot;
};

/**
 * struct twheel_ctx - one wheel, the private data of one open file
 * @lock:		see "Locking" above.
 * @read_lock:		see "Locking" above.
 * @wqh:		readers and pollers wait here for events.
 * @timer:		fires at the wheel's next event; kicks @job.
 * @job:		advances the wheel in process context, in the worker
 *			of the owner's cgroup; attached at setup.
 * @user:		whom the entries are charged to; fixed at open.
 * @serial:		names the wheel in fdinfo and tracepoints; fixed at open.
 * @is_setup:		set once by setup (release store, acquire loads);
 *			the fields up to @touch are fixed then.
 * @clockid:		CLOCK_MONOTONIC or CLOCK_BOOTTIME.
 * @tick_ns:		length of a tick.
 * @default_timeout_ns:	timeout of operations that carry none.
 * @max_timeout_ns:	longest timeout accepted.
 * @max_entries:	cap on live ids plus undelivered events.
 * @epoch:		start of tick 0, on @clockid.
 * @clock_offset_ns:	what the time namespace of the task that set the
 *			wheel up adds to @clockid: the users' times are the
 *			kernel's plus this.
 * @cache:		where the wheel's entries come from.
 * @touch:		the touch table, if any.
 * @events_waiting:	wheel.nr_expired, published.
 * @live:		wheel.nr_live, published.
 * @dying:		release has begun; the job must not re-arm. Under @lock.
 * @armed:		@timer is armed for tick @armed_tick. Under @lock.
 * @armed_tick:		see @armed.
 * @expired_total:	events ever moved to the expired list. Published.
 * @ticks_run:		job runs that advanced the clock. Published.
 * @ticks_caught_up:	ticks between the one the timer was armed for
 *			and the one processed when it ran late. Published.
 * @touch_rearms:	ids a touch kept alive. Published.
 * @lateness_last_ns:	expiry time minus deadline of the earliest event of
 *			the latest expiry run. Published.
 * @lateness_max_ns:	the largest of those. Published.
 * @wheel:		the core's state. Under @lock.
 */
struct twheel_ctx {
	struct mutex lock;		/* the wheel and the fields so marked */
	struct mutex read_lock;		/* one reader at a time; outside @lock */
	wait_queue_head_t wqh;
	struct hrtimer timer;
	struct twheel_job job;
	struct twheel_user *user;
	u64 serial;
	bool is_setup;
	clockid_t clockid;
	u64 tick_ns;
	u64 default_timeout_ns;
	u64 max_timeout_ns;
	u32 max_entries;
	ktime_t epoch;
	s64 clock_offset_ns;
	struct kmem_cache *cache;
	struct twheel_touch_table touch;
	u64 events_waiting;
	u64 live;
	bool dying;
	bool armed;
	u64 armed_tick;
	u64 expired_total;
	u64 ticks_run;
	u64 ticks_caught_up;
	u64 touch_rearms;
	u64 lateness_last_ns;
	u64 lateness_max_ns;
	struct tw_wheel wheel;
};

static bool twheel_ready(struct twheel_ctx *ctx)
{
	/* Pairs with the release in setup: the settings are seen complete. */
	return smp_load_acquire(&ctx->is_setup);
}

static ktime_t twheel_ctx_now(const struct twheel_ctx *ctx)
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

/*
 * The kernel's time @ns as the wheel's users read their clock. Only for
 * times since setup, which the namespace's clock had reached then: never
 * below 0.
 */
static u64 twheel_to_user(const struct twheel_ctx *ctx, u64 ns)
{
	return ns + ctx->clock_offset_ns;
}

/*
 * The kernel's time for @ns, a time on the users' clock: any value,
 * saturated at 0 and U64_MAX rather than wrapped, so that none passes
 * for a time on the other side.
 */
static u64 twheel_from_user(const struct twheel_ctx *ctx, u64 ns)
{
	s64 off = ctx->clock_offset_ns;

	if (off > 0 && ns < (u64)off)
		return 0;
	if (off < 0 && ns > U64_MAX + off)
		return U64_MAX;
	return ns - off;
}

/* Absolute time on the wheel's clock at which tick @tick ends. */
static u64 twheel_tick_to_ns(const struct twheel_ctx *ctx, u64 tick)
{
	return ktime_to_ns(ctx->epoch) + tick * ctx->tick_ns;
}

/* The deadline of @e as the wheel's users read it. */
static u64 twheel_user_deadline(const struct twheel_ctx *ctx, const struct tw_entry *e)
{
	return twheel_to_user(ctx, twheel_tick_to_ns(ctx, e->expires));
}

/* The last tick that has fully passed at @now. */
static u64 twheel_ns_to_tick(const struct twheel_ctx *ctx, ktime_t now)
{
	return div64_u64(ktime_to_ns(ktime_sub(now, ctx->epoch)), ctx->tick_ns);
}

/* First tick ending at or after @now + @timeout_ns: never early. */
static u64 twheel_deadline_tick(const struct twheel_ctx *ctx, ktime_t now,
				u64 timeout_ns)
{
	u64 rel = ktime_to_ns(ktime_sub(now, ctx->epoch)) + timeout_ns;

	return div64_u64(rel + ctx->tick_ns - 1, ctx->tick_ns);
}

/* First tick ending at or after absolute @deadline_ns, or after @now if past. */
static u64 twheel_abs_tick(const struct twheel_ctx *ctx, ktime_t now, u64 deadline_ns)
{
	u64 rel = max_t(u64, deadline_ns, ktime_to_ns(now)) - ktime_to_ns(ctx->epoch);

	return div64_u64(rel + ctx->tick_ns - 1, ctx->tick_ns);
}

static struct twheel_touch_entry *twheel_touch_entry(struct tw_entry *e)
{
	return container_of(e, struct twheel_touch_entry, e);
}

static struct tw_entry *twheel_alloc_entry(struct twheel_ctx *ctx)
{
	void *p;

	/* It may reclaim: the work and the wheel's other users must not wait. */
	lockdep_assert_not_held(&ctx->lock);
	/* At the memcg limit: ENOMEM to the caller, not the group's OOM killer. */
	p = kmem_cache_alloc(ctx->cache, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);

	if (p && ctx->touch.slots) {
		struct twheel_touch_entry *te = p;

		te->slot = TWHEEL_SLOT_NONE;
		return &te->e;
	}
	return p;
}

/* Free @e, which the caller has uncharged or will. */
static void twheel_free_entry(struct twheel_ctx *ctx, struct tw_entry *e)
{
	kmem_cache_free(ctx->cache, ctx->touch.slots ? (void *)twheel_touch_entry(e) : e);
}

/**
 * struct twheel_pool - entries allocated for a chunk of operations
 * @nr:		how many are left.
 * @e:		the entries, not yet live, not charged to the caps.
 *
 * A call's own, on its stack: filled with ctx->lock dropped when an
 * operation is about to add an entry and none is left, for the adds the
 * rest of the chunk may make; what is left over is freed after the call
 * has dropped the lock. Calls that add nothing allocate nothing.
 */
struct twheel_pool {
	unsigned int nr;
	struct tw_entry *e[TWHEEL_POOL_MAX];
};

/*
 * Allocate up to @want entries (at most TWHEEL_POOL_MAX) into an empty
 * @pool, with ctx->lock dropped: the allocation may reclaim (a memory
 * cgroup at its limit), and no one should wait for that, the expiry work
 * least of all. Under ctx->lock, which it drops and retakes; the caller's
 * present is stale after it. Fewer, or none, when memory runs out.
 */
static void twheel_pool_fill(struct twheel_ctx *ctx, struct twheel_pool *pool,
			     unsigned int want)
{
	BUILD_BUG_ON(TWHEEL_BATCH_CHUNK > TWHEEL_POOL_MAX);
	lockdep_assert_held(&ctx->lock);
	want = min_t(unsigned int, want, TWHEEL_POOL_MAX);
	mutex_unlock(&ctx->lock);
	while (pool->nr < want) {
		struct tw_entry *e = twheel_alloc_entry(ctx);

		if (!e)
			break;
		pool->e[pool->nr++] = e;
	}
	mutex_lock(&ctx->lock);
}

/* Free what the call did not use. Without ctx->lock. */
static void twheel_pool_drain(struct twheel_ctx *ctx, struct twheel_pool *pool)
{
	while (pool->nr)
		twheel_free_entry(ctx, pool->e[--pool->nr]);
}

/* An ADD, or a REFRESH with ADD_IF_ABSENT: may need a new entry. */
static bool twheel_op_may_add(const struct twheel_op *op)
{
	return op->op == TWHEEL_OP_ADD ||
	       (op->op == TWHEEL_OP_REFRESH && op->flags & TWHEEL_OPF_ADD_IF_ABSENT);
}

/*
 * @op on @id, applied now, would add an entry and @pool has none left:
 * the id is not live and the wheel's cap has room. Under ctx->lock.
 */
static bool twheel_pool_short(struct twheel_ctx *ctx, const struct twheel_pool *pool,
			      const struct twheel_op *op, u64 id)
{
	struct tw_wheel *w = &ctx->wheel;

	lockdep_assert_held(&ctx->lock);
	return !pool->nr && twheel_op_may_add(op) &&
	       w->nr_live + w->nr_expired < ctx->max_entries && !tw_lookup(w, id);
}

/* What a touch table costs against the entry caps. */
static long twheel_touch_charge(u32 slots)
{
	return DIV_ROUND_UP((unsigned long)twheel_touch_pages(slots) << PAGE_SHIFT,
			    TWHEEL_ENTRY_COST);
}

/* Publish the counts that lockless readers look at. Under ctx->lock. */
static void twheel_publish(struct twheel_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	WRITE_ONCE(ctx->events_waiting, ctx->wheel.nr_expired);
	WRITE_ONCE(ctx->live, ctx->wheel.nr_live);
}

/*
 * Give the id index the table it asks for, allocated without the lock
 * (so neither the work nor other callers wait on it) and charged to the
 * caller, with a fresh secret key for it to take if a chain grew long.
 * Under ctx->lock, which it may drop and retake.
 */
static void twheel_index_prepare(struct twheel_ctx *ctx)
{
	unsigned int bits = tw_index_wanted(&ctx->wheel);
	struct tw_entry **table;
	hsiphash_key_t key;

	lockdep_assert_held(&ctx->lock);
	if (!bits)
		return;
	mutex_unlock(&ctx->lock);
	table = tw_index_alloc(bits);
	get_random_bytes(&key, sizeof(key));
	mutex_lock(&ctx->lock);
	/* Refused if another caller resized meanwhile; failure is harmless. */
	if (table && !tw_index_offer(&ctx->wheel, table, bits, &key))
		tw_index_free(table);
	memzero_explicit(&key, sizeof(key));
}

/*
 * After an op failed with ENOMEM: if the index still asks for a table
 * (its allocation failed, and without one it takes no more ids), try once
 * more for the ops that follow. Returns true if the lock was dropped, so
 * the caller's present is stale.
 */
static bool twheel_index_retry(struct twheel_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	if (!tw_index_wanted(&ctx->wheel))
		return false;
	twheel_index_prepare(ctx);
	return true;
}

/*
 * Arm the timer for the wheel's next event if that is earlier than what
 * it is armed for. An event that moved later (a cancel, a refresh) is
 * left armed: the work then finds less to do and re-arms.
 */
static void twheel_arm(struct twheel_ctx *ctx)
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

/*
 * The wheel's lazy hook when it has a touch table: the deadline of @e has
 * come; if its slot was stamped after its deadline was set, re-arm it as
 * a REFRESH at that time would have (a stamp from the future counts as
 * the present). One load from memory the kernel owns; the value is untrusted.
 */
static bool twheel_touch_lazy(struct tw_wheel *w, struct tw_entry *e, u64 now_ns,
			      u64 *expires)
{
	struct twheel_ctx *ctx = container_of(w, struct twheel_ctx, wheel);
	struct twheel_touch_entry *te = twheel_touch_entry(e);
	u64 touched, tick;

	lockdep_assert_held(&ctx->lock);
	if (te->slot == TWHEEL_SLOT_NONE)
		return false;
	touched = twheel_from_user(ctx, twheel_touch_read(&ctx->touch, te->slot));
	if (touched <= te->armed_ns || touched == te->seen)
		return false;
	te->seen = touched;
	/*
	 * @now_ns was read when the work began; a stamp stored since is no
	 * stamp from the future, and re-arming from @now_ns would make the
	 * id's deadline earlier than that touch's. Only a stamp past the
	 * clock read again here is clamped.
	 */
	if (touched > now_ns)
		touched = min_t(u64, touched, ktime_to_ns(twheel_ctx_now(ctx)));
	tick = twheel_deadline_tick(ctx, ns_to_ktime(touched), te->timeout_ns);
	if (!tw_after(tick, w->clk))
		return false;
	te->armed_ns = touched;
	*expires = tick;
	WRITE_ONCE(ctx->touch_rearms, ctx->touch_rearms + 1);
	trace_twheel_touch_rearm(ctx->serial, e->id, twheel_to_user(ctx, touched),
				 twheel_to_user(ctx, twheel_tick_to_ns(ctx, tick)));
	return true;
}

static void twheel_wake_readers(struct twheel_ctx *ctx)
{
	wake_up_interruptible_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}

/*
 * In the worker thread: expire and cascade what is due, then re-arm the
 * timer; true if the budget ran out first, so that the worker runs the
 * job again after the other wheels' turns.
 */
static bool twheel_run(struct twheel_job *job)
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

/*
 * The present on the wheel's clock, for placing deadlines. However far
 * the wheel's clock lags it (the work has not run since a long suspend
 * on CLOCK_BOOTTIME), a deadline placed from it is kept exactly: the core
 * never clamps one early (see "Hops" in wheel.c). An idle wheel's clock
 * is moved up to it first, so that new deadlines land on their level.
 * Under ctx->lock.
 */
static ktime_t twheel_present(struct twheel_ctx *ctx)
{
	ktime_t now = twheel_ctx_now(ctx);

	lockdep_assert_held(&ctx->lock);
	tw_idle_to(&ctx->wheel, twheel_ns_to_tick(ctx, now));
	return now;
}

static int twheel_dev_open(struct inode *inode, struct file *file)
{
	struct twheel_ctx *ctx;
	hsiphash_key_t key;

	ctx = kvzalloc_obj(*ctx, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!ctx)
		return -ENOMEM;
	ctx->user = twheel_user_get();
	if (!ctx->user) {
		kvfree(ctx);
		return -ENOMEM;
	}
	ctx->serial = atomic64_inc_return(&twheel_serial);
	ctx->cache = twheel_entry_cache;
	mutex_init(&ctx->lock);
	mutex_init(&ctx->read_lock);
	init_waitqueue_head(&ctx->wqh);
	twheel_job_init(&ctx->job, twheel_run);
	get_random_bytes(&key, sizeof(key));
	tw_init(&ctx->wheel, 0, &key);
	memzero_explicit(&key, sizeof(key));
	file->private_data = ctx;
	return stream_open(inode, file);
}

/* Frees what release finds, uncharging and yielding every so often. */
struct twheel_reaper {
	struct twheel_ctx *ctx;
	long freed;
};

static void twheel_reap_entry(struct tw_entry *e, void *arg)
{
	struct twheel_reaper *r = arg;

	twheel_free_entry(r->ctx, e);
	if (++r->freed == TWHEEL_FREE_CHUNK) {
		twheel_uncharge(r->ctx->user, r->freed);
		r->freed = 0;
		cond_resched();
	}
}

static int twheel_release(struct inode *inode, struct file *file)
{
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_reaper reaper = { .ctx = ctx };

	/*
	 * The job re-arms the timer and the timer kicks the job: stop the job
	 * from re-arming first, then neither can come back; the worker lets
	 * go of the job before the context goes.
	 */
	mutex_lock(&ctx->lock);
	ctx->dying = true;
	mutex_unlock(&ctx->lock);
	if (twheel_ready(ctx))
		hrtimer_cancel(&ctx->timer);
	twheel_job_stop(&ctx->job);

	/* Nobody else can reach the wheel now: free it without the lock. */
	tw_destroy(&ctx->wheel, twheel_reap_entry, &reaper);
	twheel_uncharge(ctx->user, reaper.freed);
	if (ctx->touch.slots) {
		twheel_uncharge(ctx->user, twheel_touch_charge(ctx->touch.slots));
		twheel_touch_free(&ctx->touch);
	}
	twheel_user_put(ctx->user);
	mutex_destroy(&ctx->read_lock);
	mutex_destroy(&ctx->lock);
	kvfree(ctx);
	return 0;
}

static long twheel_ioctl_setup(struct twheel_ctx *ctx,
			       struct twheel_setup_args __user *uargs)
{
	struct twheel_touch_table touch = {};
	struct twheel_setup_args args;
	u32 max_entries;
	u64 max_timeout;
	int ret = 0;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if (args.flags & ~TWHEEL_SETUPF_TOUCH)
		return -EINVAL;
	if (args.clockid != CLOCK_MONOTONIC && args.clockid != CLOCK_BOOTTIME)
		return -EINVAL;
	if (args.tick_ns < TWHEEL_TICK_MIN_NS || args.tick_ns > TWHEEL_TICK_MAX_NS)
		return -EINVAL;
	if (check_mul_overflow(args.tick_ns, TWHEEL_MAX_TIMEOUT_TICKS, &max_timeout) ||
	    max_timeout > TWHEEL_MAX_TIMEOUT_NS)
		max_timeout = TWHEEL_MAX_TIMEOUT_NS;
	if (args.default_timeout_ns > max_timeout)
		return -EINVAL;
	max_entries = READ_ONCE(twheel_max_entries_per_wheel);
	if (args.max_entries > max_entries)
		return -EINVAL;
	max_entries = args.max_entries ?: max_entries;
	if (args.flags & TWHEEL_SETUPF_TOUCH) {
		if (!args.touch_slots || args.touch_slots > TWHEEL_TOUCH_MAX_SLOTS ||
		    args.touch_slots > max_entries)
			return -EINVAL;
	} else if (args.touch_slots) {
		return -EINVAL;
	}

	/* Out of the lock: a table may be thousands of pages. */
	if (args.touch_slots) {
		ret = twheel_charge(ctx->user, twheel_touch_charge(args.touch_slots));
		if (ret)
			return ret;
		ret = twheel_touch_init(&touch, args.touch_slots);
		if (ret) {
			twheel_uncharge(ctx->user, twheel_touch_charge(args.touch_slots));
			return ret;
		}
	}

	mutex_lock(&ctx->lock);
	if (ctx->is_setup) {
		ret = -EBUSY;
		goto out;
	}
	/* The expiry job's worker: in the caller's cgroups, made if need be. */
	ret = twheel_job_attach(&ctx->job, ctx->user);
	if (ret)
		goto out;
	ctx->clockid = args.clockid;
	ctx->tick_ns = args.tick_ns;
	ctx->default_timeout_ns = args.default_timeout_ns;
	ctx->max_timeout_ns = max_timeout;
	ctx->max_entries = max_entries;
	ctx->epoch = twheel_ctx_now(ctx);
	ctx->clock_offset_ns = twheel_timens_offset(ctx->clockid);
	if (touch.slots) {
		ctx->touch = touch;
		touch.slots = 0;
		ctx->cache = twheel_touch_entry_cache;
		ctx->wheel.lazy = twheel_touch_lazy;
	}
	hrtimer_setup(&ctx->timer, twheel_timer_fn, ctx->clockid, HRTIMER_MODE_ABS);
	/* Publish the settings before the flag: lockless readers acquire it. */
	smp_store_release(&ctx->is_setup, true);
out:
	mutex_unlock(&ctx->lock);
	if (touch.slots) {
		twheel_touch_free(&touch);
		twheel_uncharge(ctx->user, twheel_touch_charge(args.touch_slots));
	}
	return ret;
}

/* Checks that need no lock: the op's code, flags, slot and timeout. */
static int twheel_op_check(const struct twheel_ctx *ctx, const struct twheel_op *op)
{
	u32 allowed;

	switch (op->op) {
	case TWHEEL_OP_ADD:
		allowed = TWHEEL_OPF_TIMES | TWHEEL_OPF_TOUCH;
		break;
	case TWHEEL_OP_REFRESH:
		allowed = TWHEEL_OPF_TIMES | TWHEEL_OPF_TOUCH | TWHEEL_OPF_ADD_IF_ABSENT;
		break;
	case TWHEEL_OP_CANCEL:
	case TWHEEL_OP_QUERY:
		allowed = 0;
		break;
	default:
		return -EINVAL;
	}
	if (op->flags & ~allowed)
		return -EINVAL;
	if (op->flags & TWHEEL_OPF_TOUCH) {
		if (!ctx->touch.slots ||
		    (op->slot >= ctx->touch.slots && op->slot != TWHEEL_SLOT_NONE))
			return -EINVAL;
	} else if (op->slot) {
		return -EINVAL;
	}
	/* An absolute deadline is checked against the present, under the lock. */
	if (op->flags & TWHEEL_OPF_TIMES) {
		if (!(op->flags & TWHEEL_OPF_ABSTIME) && op->timeout_ns > ctx->max_timeout_ns)
			return -EINVAL;
	} else if (op->timeout_ns) {
		return -EINVAL;
	}
	return 0;
}

/*
 * A new live entry for @id due at @tick, within the caps, taken from
 * @pool: -ENOMEM if the pool is empty (its filling failed).
 */
static int twheel_add_locked(struct twheel_ctx *ctx, struct twheel_pool *pool, u64 id,
			     u64 tick, struct tw_entry **out)
{
	struct tw_wheel *w = &ctx->wheel;
	struct tw_entry *e;
	int ret;

	lockdep_assert_held(&ctx->lock);
	if (w->nr_live + w->nr_expired >= ctx->max_entries)
		return -ENOSPC;
	ret = twheel_charge(ctx->user, 1);
	if (ret)
		return ret;
	if (!pool->nr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	e = pool->e[--pool->nr];
	e->id = id;
	ret = tw_add(w, e, tick);
	if (ret)
		goto err_unpool;
	*out = e;
	return 0;

err_unpool:
	pool->e[pool->nr++] = e;
err_uncharge:
	twheel_uncharge(ctx->user, 1);
	return ret;
}

/* A touch wheel's entry @e got a new deadline from @op at @now. */
static void twheel_touch_armed(struct twheel_ctx *ctx, struct tw_entry *e,
			       const struct twheel_op *op, ktime_t now, u64 timeout)
{
	struct twheel_touch_entry *te = twheel_touch_entry(e);

	te->timeout_ns = op->flags & TWHEEL_OPF_ABSTIME ? ctx->default_timeout_ns : timeout;
	/* Stamps up to now are no touch; nor what a slot holds at binding. */
	te->armed_ns = ktime_to_ns(now);
	if (op->flags & TWHEEL_OPF_TOUCH) {
		te->slot = op->slot;
		if (op->slot != TWHEEL_SLOT_NONE)
			te->seen = twheel_from_user(ctx, twheel_touch_read(&ctx->touch, op->slot));
	}
}

/*
 * Where an ADD or REFRESH like @op, applied at @now, puts its id: the
 * deadline's tick, and the timeout a touch re-arms it with. -EINVAL for
 * an absolute deadline further ahead than the longest timeout.
 */
static int twheel_op_tick(const struct twheel_ctx *ctx, const struct twheel_op *op,
			  ktime_t now, u64 *tick, u64 *timeout)
{
	if (op->flags & TWHEEL_OPF_ABSTIME) {
		u64 deadline = twheel_from_user(ctx, op->timeout_ns);

		if (deadline > ktime_to_ns(now) &&
		    deadline - ktime_to_ns(now) > ctx->max_timeout_ns)
			return -EINVAL;
		*tick = twheel_abs_tick(ctx, now, deadline);
		*timeout = ctx->default_timeout_ns;
	} else {
		*timeout = op->flags & TWHEEL_OPF_TIMEOUT ? op->timeout_ns
							  : ctx->default_timeout_ns;
		*tick = twheel_deadline_tick(ctx, now, *timeout);
	}
	return 0;
}

/*
 * REFRESH of @id to @tick, with the flags and slot of @op: re-arm it, or
 * add it if @op says so. 0 with the entry in *@out, or -ENOENT, or the
 * add's error. Under ctx->lock.
 */
static int twheel_refresh_locked(struct twheel_ctx *ctx, struct twheel_pool *pool,
				 const struct twheel_op *op, u64 id, u64 tick, u64 timeout,
				 ktime_t now, struct tw_entry **out)
{
	struct tw_entry *e = tw_lookup(&ctx->wheel, id);
	int ret;

	if (e) {
		tw_rearm(&ctx->wheel, e, tick);
	} else if (op->flags & TWHEEL_OPF_ADD_IF_ABSENT) {
		ret = twheel_add_locked(ctx, pool, id, tick, &e);
		if (ret)
			return ret;
	} else {
		return -ENOENT;
	}
	if (ctx->touch.slots)
		twheel_touch_armed(ctx, e, op, now, timeout);
	*out = e;
	return 0;
}

/* Apply one checked operation. Fills the op's out fields. */
static void twheel_op_locked(struct twheel_ctx *ctx, struct twheel_pool *pool,
			     struct twheel_op *op, ktime_t now)
{
	struct tw_wheel *w = &ctx->wheel;
	struct tw_entry *e = NULL;
	u64 timeout = 0, tick = 0, deadline;
	int ret;

	lockdep_assert_held(&ctx->lock);
	ret = twheel_op_tick(ctx, op, now, &tick, &timeout);
	if (ret)
		goto out;

	switch (op->op) {
	case TWHEEL_OP_ADD:
		if (tw_lookup(w, op->id)) {
			ret = -EEXIST;
			break;
		}
		ret = twheel_add_locked(ctx, pool, op->id, tick, &e);
		if (!ret && ctx->touch.slots)
			twheel_touch_armed(ctx, e, op, now, timeout);
		break;
	case TWHEEL_OP_REFRESH:
		ret = twheel_refresh_locked(ctx, pool, op, op->id, tick, timeout, now, &e);
		break;
	case TWHEEL_OP_CANCEL:
	case TWHEEL_OP_QUERY:
		e = tw_lookup(w, op->id);
		if (!e)
			ret = -ENOENT;
		break;
	}
out:
	op->deadline_ns = 0;
	op->remaining_ns = 0;
	op->result = ret;
	if (ret)
		return;

	deadline = twheel_tick_to_ns(ctx, e->expires);
	op->deadline_ns = twheel_to_user(ctx, deadline);
	if (deadline > ktime_to_ns(now))
		op->remaining_ns = deadline - ktime_to_ns(now);
	if (op->op == TWHEEL_OP_CANCEL) {
		tw_remove(w, e);
		twheel_free_entry(ctx, e);
		twheel_uncharge(ctx->user, 1);
	}
}

static void twheel_op_one(struct twheel_ctx *ctx, struct twheel_pool *pool,
			  struct twheel_op *op, ktime_t now)
{
	int ret = twheel_op_check(ctx, op);

	if (ret) {
		op->deadline_ns = 0;
		op->remaining_ns = 0;
		op->result = ret;
	} else {
		twheel_op_locked(ctx, pool, op, now);
	}
	trace_twheel_op(ctx->serial, op);
}

/*
 * Apply @n operations, each filling its out fields, under one lock hold
 * but where entries must be allocated (twheel_pool_fill()) or the index
 * asks for a table.
 */
static void twheel_apply(struct twheel_ctx *ctx, struct twheel_op *ops, unsigned int n)
{
	struct twheel_pool pool = {};
	bool placed = false;
	unsigned int i, j, may_add;
	ktime_t now;

	mutex_lock(&ctx->lock);
	twheel_index_prepare(ctx);
	now = twheel_present(ctx);
	for (i = 0; i < n; i++) {
		if (!twheel_op_check(ctx, &ops[i]) &&
		    twheel_pool_short(ctx, &pool, &ops[i], ops[i].id)) {
			for (j = i, may_add = 0; j < n; j++)
				may_add += twheel_op_may_add(&ops[j]);
			twheel_pool_fill(ctx, &pool, may_add);
			now = twheel_present(ctx);
		}
		twheel_op_one(ctx, &pool, &ops[i], now);
		placed |= !ops[i].result && (ops[i].op == TWHEEL_OP_ADD ||
					     ops[i].op == TWHEEL_OP_REFRESH);
		/* One failed allocation fails one op, not the rest of the chunk. */
		if (ops[i].result == -ENOMEM && i + 1 < n && twheel_index_retry(ctx))
			now = twheel_present(ctx);
	}
	/* Only a deadline placed can make the next event earlier. */
	if (placed)
		twheel_arm(ctx);
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	twheel_pool_drain(ctx, &pool);
}

/*
 * Learn that @len bytes at @p, within two pages, can be written, by
 * writing their first and last bytes: @val_first and @val_last, what the
 * caller read there (or anything, for room that is output only).
 */
static int twheel_probe_user(void __user *p, size_t len, u8 val_first, u8 val_last)
{
	u8 __user *b = p;

	if (put_user(val_first, b) || put_user(val_last, b + len - 1))
		return -EFAULT;
	return 0;
}

static long twheel_ioctl_op(struct twheel_ctx *ctx, struct twheel_op __user *uop)
{
	struct twheel_op op;
	const u8 *raw = (const u8 *)&op;

	BUILD_BUG_ON(sizeof(op) > PAGE_SIZE);
	if (copy_from_user(&op, uop, sizeof(op)))
		return -EFAULT;
	/* The result must be writable before the operation is applied. */
	if (twheel_probe_user(uop, sizeof(op), raw[0], raw[sizeof(op) - 1]))
		return -EFAULT;
	twheel_apply(ctx, &op, 1);
	/* Only the out fields; fails only if another thread unmapped them. */
	if (copy_to_user(&uop->deadline_ns, &op.deadline_ns,
			 sizeof(op.deadline_ns) + sizeof(op.remaining_ns)) ||
	    put_user(op.result, &uop->result))
		return -EFAULT;
	return op.result;
}

static long twheel_ioctl_batch(struct twheel_ctx *ctx,
			       struct twheel_batch_args __user *uargs)
{
	struct twheel_op ops[TWHEEL_BATCH_CHUNK];
	struct twheel_batch_args args;
	struct twheel_op __user *uops;
	size_t bytes;
	u32 done = 0;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if (args.flags || args.count > INT_MAX)
		return -EINVAL;
	if (check_mul_overflow((size_t)args.count, sizeof(*uops), &bytes))
		return -EINVAL;
	uops = u64_to_user_ptr(args.ops);

	while (done < args.count) {
		u32 n = min_t(u32, args.count - done, TWHEEL_BATCH_CHUNK);

		if (copy_from_user(ops, uops + done, n * sizeof(*ops)))
			return done ?: -EFAULT;
		/*
		 * Nothing past the returned count may be applied: write the
		 * chunk back unchanged to learn that its results can be
		 * written, before applying it.
		 */
		if (copy_to_user(uops + done, ops, n * sizeof(*ops)))
			return done ?: -EFAULT;
		twheel_apply(ctx, ops, n);
		done += n;
		/* Only another thread's munmap or mprotect can fail this now. */
		if (copy_to_user(uops + done - n, ops, n * sizeof(*ops)))
			return done;
		if (done < args.count) {
			if (signal_pending(current))
				break;
			cond_resched();
		}
	}
	return done;
}

/*
 * Apply @tmpl, a checked REFRESH, to each of @ids under one lock hold
 * (but where entries must be allocated or the index asks for a table):
 * one deadline for all of them, or for those after such a break. The ids
 * that fail go to @failed; returns how many did.
 */
static unsigned int twheel_apply_refresh(struct twheel_ctx *ctx, const struct twheel_op *tmpl,
					 const u64 *ids, unsigned int n, u64 *failed)
{
	struct twheel_pool pool = {};
	unsigned int i, nr_failed = 0;
	u64 tick, timeout;
	struct tw_entry *e;
	int bad, ret;
	ktime_t now;

	mutex_lock(&ctx->lock);
	twheel_index_prepare(ctx);
	now = twheel_present(ctx);
	bad = twheel_op_tick(ctx, tmpl, now, &tick, &timeout);
	for (i = 0; i < n; i++) {
		/* Every id left may be added: allocate for them all at once. */
		if (!bad && twheel_pool_short(ctx, &pool, tmpl, ids[i])) {
			twheel_pool_fill(ctx, &pool, n - i);
			now = twheel_present(ctx);
			bad = twheel_op_tick(ctx, tmpl, now, &tick, &timeout);
		}
		ret = bad ?: twheel_refresh_locked(ctx, &pool, tmpl, ids[i], tick, timeout, now,
						   &e);
		if (ret)
			failed[nr_failed++] = ids[i];
		/* One failed allocation fails one id, not the rest of the chunk. */
		if (ret == -ENOMEM && i + 1 < n && twheel_index_retry(ctx)) {
			now = twheel_present(ctx);
			bad = twheel_op_tick(ctx, tmpl, now, &tick, &timeout);
		}
		if (trace_twheel_op_enabled()) {
			struct twheel_op op = *tmpl;

			op.id = ids[i];
			op.result = ret;
			op.deadline_ns = ret ? 0 : twheel_user_deadline(ctx, e);
			trace_twheel_op(ctx->serial, &op);
		}
	}
	if (nr_failed < n)
		twheel_arm(ctx);
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	twheel_pool_drain(ctx, &pool);
	return nr_failed;
}

static long twheel_ioctl_refresh(struct twheel_ctx *ctx,
				 struct twheel_refresh_args __user *uargs)
{
	u64 ids[TWHEEL_REFRESH_CHUNK], failed[TWHEEL_REFRESH_CHUNK];
	struct twheel_refresh_args args;
	u64 __user *uids, *ufailed;
	struct twheel_op tmpl = {};
	u32 done = 0, nr_failed = 0;
	long ret;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	/* nr_failed is output only: whatever it holds on input is ignored. */
	if (args.pad || args.count > INT_MAX ||
	    args.flags & ~(TWHEEL_OPF_TIMES | TWHEEL_OPF_ADD_IF_ABSENT))
		return -EINVAL;
	tmpl.op = TWHEEL_OP_REFRESH;
	tmpl.flags = args.flags;
	tmpl.timeout_ns = args.timeout_ns;
	ret = twheel_op_check(ctx, &tmpl);
	if (ret)
		return ret;
	/*
	 * A deadline too far ahead fails the call, not each id: checked
	 * against the present once here, it can only come nearer later.
	 */
	if (tmpl.flags & TWHEEL_OPF_ABSTIME) {
		u64 tick, timeout;

		ret = twheel_op_tick(ctx, &tmpl, twheel_ctx_now(ctx), &tick, &timeout);
		if (ret)
			return ret;
	}
	/*
	 * The count of failures must be writable before anything is applied:
	 * written back as it was, so that a call that fails changes nothing.
	 */
	if (put_user(args.nr_failed, &uargs->nr_failed))
		return -EFAULT;
	uids = u64_to_user_ptr(args.ids);
	ufailed = u64_to_user_ptr(args.failed);

	while (done < args.count) {
		u32 n = min_t(u32, args.count - done, TWHEEL_REFRESH_CHUNK), nf;

		ret = -EFAULT;
		if (copy_from_user(ids, uids + done, n * sizeof(*ids)))
			break;
		if (ufailed && twheel_probe_user(ufailed + nr_failed, n * sizeof(*failed), 0, 0))
			break;
		nf = twheel_apply_refresh(ctx, &tmpl, ids, n, failed);
		done += n;
		ret = 0;
		/* Only another thread's munmap or mprotect can fail this now. */
		if (ufailed && nf &&
		    copy_to_user(ufailed + nr_failed, failed, nf * sizeof(*failed)))
			ret = -EFAULT;
		nr_failed += nf;
		if (ret || done == args.count || signal_pending(current))
			break;
		cond_resched();
	}
	/* For no ids, success and no failures; for ids, none applied: the error. */
	if (!done && args.count)
		return ret;
	if (put_user(nr_failed, &uargs->nr_failed))
		return -EFAULT;
	return done;
}

/* Fill @out, and where the dump goes on past each, from the core's entries. */
static void twheel_dump_fill(struct twheel_ctx *ctx, struct twheel_dump_entry *out,
			     u64 *after, struct tw_entry **found, unsigned int n)
{
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < n; i++) {
		out[i].id = found[i]->id;
		out[i].deadline_ns = twheel_user_deadline(ctx, found[i]);
		out[i].slot = ctx->touch.slots ? twheel_touch_entry(found[i])->slot
					       : TWHEEL_SLOT_NONE;
		out[i].pad = 0;
		after[i] = tw_dump_after(&ctx->wheel, found[i]);
	}
}

static long twheel_ioctl_dump(struct twheel_ctx *ctx, struct twheel_dump_args __user *uargs)
{
	struct twheel_dump_entry out[TWHEEL_DUMP_CHUNK];
	struct tw_entry *found[TWHEEL_DUMP_CHUNK];
	u64 after[TWHEEL_DUMP_CHUNK];
	struct twheel_dump_entry __user *uent;
	struct twheel_dump_args args;
	u32 done = 0;
	u64 pos;
	int ret = 0;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if (args.flags || !args.count || args.count > INT_MAX)
		return -EINVAL;
	uent = u64_to_user_ptr(args.entries);
	pos = args.cursor;

	while (done < args.count && pos != TW_DUMP_END) {
		u32 room = min_t(u32, args.count - done, TWHEEL_DUMP_CHUNK);
		u64 next = pos;
		size_t left;

		mutex_lock(&ctx->lock);
		ret = tw_dump(&ctx->wheel, &next, found, room, TWHEEL_DUMP_BUDGET);
		if (ret > 0)
			twheel_dump_fill(ctx, out, after, found, ret);
		mutex_unlock(&ctx->lock);
		/* A move to a new key that waits for room: the caller comes back. */
		if (ret == -EAGAIN) {
			ret = 0;
			break;
		}
		if (ret < 0)
			break;
		left = ret ? copy_to_user(uent + done, out, ret * sizeof(*out)) : 0;
		if (left) {
			/*
			 * Count the entries copied whole, never half a group of
			 * equal keys, and go on past the last of them only.
			 */
			int whole = ret - DIV_ROUND_UP(left, sizeof(*out));

			while (whole > 0 && after[whole - 1] == after[whole])
				whole--;
			if (whole > 0) {
				done += whole;
				pos = after[whole - 1];
			}
			ret = -EFAULT;
			break;
		}
		done += ret;
		pos = next;
		ret = 0;
		if (signal_pending(current))
			break;
		cond_resched();
	}
	if (ret && !done)
		return ret;
	if (put_user(pos, &uargs->cursor))
		return -EFAULT;
	return done;
}

/*
 * The commands that may change the wheel (SETUP, OP, BATCH, REFRESH) need
 * a descriptor open for writing, as write(2) does: on one opened O_RDONLY
 * they fail with EBADF before anything else is looked at. OP and BATCH
 * count as writing whatever their ops are: a read-only descriptor can
 * never set its wheel up, so there is no read-only wheel to query. DUMP,
 * read(2), poll(2), mmap(2) and fdinfo only read.
 */
static long twheel_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct twheel_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	bool writer = file->f_mode & FMODE_WRITE;

	twheel_job_adopt(&ctx->job, ctx->user);
	switch (cmd) {
	case TWHEEL_IOC_SETUP:
		if (!writer)
			return -EBADF;
		return twheel_ioctl_setup(ctx, uarg);
	case TWHEEL_IOC_OP:
		if (!writer)
			return -EBADF;
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_op(ctx, uarg);
	case TWHEEL_IOC_BATCH:
		if (!writer)
			return -EBADF;
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_batch(ctx, uarg);
	case TWHEEL_IOC_DUMP:
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_dump(ctx, uarg);
	case TWHEEL_IOC_REFRESH:
		if (!writer)
			return -EBADF;
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_refresh(ctx, uarg);
	default:
		/* The VFS answers ENOTTY for it, as for every driver. */
		return -ENOIOCTLCMD;
	}
}

/*
 * Copy up to @max of the oldest events into @ev without taking them off
 * the list: the caller holds ctx->read_lock, so they stay first until it
 * consumes them.
 */
static unsigned int twheel_peek_events(struct twheel_ctx *ctx,
				       struct twheel_event *ev, unsigned int max)
{
	struct tw_entry *e;
	unsigned int n = 0;

	lockdep_assert_held(&ctx->read_lock);
	mutex_lock(&ctx->lock);
	for (e = tw_peek_expired(&ctx->wheel); e && n < max;
	     e = tw_next_expired(&ctx->wheel, e)) {
		ev[n].id = e->id;
		ev[n].deadline_ns = twheel_user_deadline(ctx, e);
		ev[n].expired_ns = twheel_to_user(ctx, e->stamp);
		n++;
	}
	mutex_unlock(&ctx->lock);
	return n;
}

/* Free the @n oldest events, which the caller peeked and delivered. */
static void twheel_consume_events(struct twheel_ctx *ctx, unsigned int n)
{
	unsigned int i;

	lockdep_assert_held(&ctx->read_lock);
	mutex_lock(&ctx->lock);
	for (i = 0; i < n; i++)
		twheel_free_entry(ctx, tw_pop_expired(&ctx->wheel));
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	twheel_uncharge(ctx->user, n);
}

static ssize_t twheel_read(struct file *file, char __user *buf, size_t count,
			   loff_t *ppos)
{
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_event ev[TWHEEL_READ_CHUNK];
	size_t max = count / sizeof(*ev), done = 0;
	ssize_t ret;

	if (!max)
		return -EINVAL;
	if (!twheel_ready(ctx))
		return -EBADFD;
	twheel_job_adopt(&ctx->job, ctx->user);

	for (;;) {
		if (!READ_ONCE(ctx->events_waiting)) {
			if (file->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = wait_event_interruptible(ctx->wqh,
						       READ_ONCE(ctx->events_waiting));
			if (ret)
				return ret;
		}
		/*
		 * Another reader holds read_lock across its copy to user
		 * memory, which may fault for as long as that memory's owner
		 * likes (userfaultfd): a non-blocking read never waits for
		 * it, and a wait for it is restarted after a signal, as the
		 * wait for events is.
		 */
		if (file->f_flags & O_NONBLOCK) {
			if (!mutex_trylock(&ctx->read_lock))
				return -EAGAIN;
		} else if (mutex_lock_interruptible(&ctx->read_lock)) {
			return -ERESTARTSYS;
		}
		/* Another reader may have taken them while this one slept. */
		if (READ_ONCE(ctx->events_waiting))
			break;
		mutex_unlock(&ctx->read_lock);
	}

	ret = 0;
	while (done < max) {
		unsigned int n = twheel_peek_events(ctx, ev,
					min_t(size_t, max - done, TWHEEL_READ_CHUNK));
		size_t left;

		if (!n)
			break;
		left = copy_to_user(buf + done * sizeof(*ev), ev, n * sizeof(*ev));
		/*
		 * On a fault, the records copied whole are delivered; the rest,
		 * the one cut by the fault included, stay queued.
		 */
		n -= DIV_ROUND_UP(left, sizeof(*ev));
		if (n) {
			twheel_consume_events(ctx, n);
			done += n;
		}
		if (left) {
			ret = -EFAULT;
			break;
		}
		/* A huge read yields, and a signal ends it with what it has. */
		if (done < max) {
			if (signal_pending(current))
				break;
			cond_resched();
		}
	}
	mutex_unlock(&ctx->read_lock);

	/* Reading may leave the index far too big for what is left: shrink it. */
	mutex_lock(&ctx->lock);
	twheel_index_prepare(ctx);
	mutex_unlock(&ctx->lock);
	trace_twheel_read(ctx->serial, done, READ_ONCE(ctx->events_waiting));
	return done ? done * sizeof(*ev) : ret;
}

static int twheel_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct twheel_ctx *ctx = file->private_data;

	if (!twheel_ready(ctx))
		return -EBADFD;
	if (!ctx->touch.slots)
		return -ENODEV;
	return twheel_touch_mmap(&ctx->touch, vma);
}

static __poll_t twheel_poll(struct file *file, struct poll_table_struct *wait)
{
	struct twheel_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->wqh, wait);
	return READ_ONCE(ctx->events_waiting) ? EPOLLIN | EPOLLRDNORM : 0;
}

#ifdef CONFIG_PROC_FS
/* Lockless: settings are fixed after setup, counts are published. */
static void twheel_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_user *owner = twheel_user_owner(ctx->user);

	seq_printf(m, "wheel:\t%llu\n", ctx->serial);
	seq_printf(m, "uid:\t%u\n",
		   from_kuid_munged(seq_user_ns(m), twheel_user_uid(ctx->user)));
	seq_printf(m, "user_entries:\t%ld\n", twheel_user_entries(ctx->user));
	seq_printf(m, "owner_uid:\t%u\n",
		   from_kuid_munged(seq_user_ns(m), twheel_user_uid(owner)));
	seq_printf(m, "owner_entries:\t%ld\n", twheel_user_entries(owner));
	if (!twheel_ready(ctx)) {
		seq_puts(m, "setup:\tno\n");
		return;
	}
	seq_printf(m, "tick_ns:\t%llu\n", ctx->tick_ns);
	seq_printf(m, "default_timeout_ns:\t%llu\n", ctx->default_timeout_ns);
	seq_printf(m, "clockid:\t%d\n", ctx->clockid);
	seq_printf(m, "clock_offset_ns:\t%lld\n", ctx->clock_offset_ns);
	seq_printf(m, "max_entries:\t%u\n", ctx->max_entries);
	seq_printf(m, "live:\t%llu\n", READ_ONCE(ctx->live));
	seq_printf(m, "events_waiting:\t%llu\n", READ_ONCE(ctx->events_waiting));
	seq_printf(m, "expired_total:\t%llu\n", READ_ONCE(ctx->expired_total));
	seq_printf(m, "ticks_run:\t%llu\n", READ_ONCE(ctx->ticks_run));
	seq_printf(m, "ticks_caught_up:\t%llu\n", READ_ONCE(ctx->ticks_caught_up));
	seq_printf(m, "lateness_last_ns:\t%llu\n", READ_ONCE(ctx->lateness_last_ns));
	seq_printf(m, "lateness_max_ns:\t%llu\n", READ_ONCE(ctx->lateness_max_ns));
	seq_printf(m, "touch_slots:\t%u\n", ctx->touch.slots);
	seq_printf(m, "touch_rearms:\t%llu\n", READ_ONCE(ctx->touch_rearms));
}
#endif

static const struct file_operations twheel_fops = {
	.owner		= THIS_MODULE,
	.open		= twheel_dev_open,
	.release	= twheel_release,
	.read		= twheel_read,
	.poll		= twheel_poll,
	.mmap		= twheel_mmap,
	.unlocked_ioctl	= twheel_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
#ifdef CONFIG_PROC_FS
	.show_fdinfo	= twheel_show_fdinfo,
#endif
};

static struct miscdevice twheel_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "twheel",
	.fops	= &twheel_fops,
	/*
	 * Root only until the administrator opens it up (the Debian package's
	 * udev rule gives it to group twheel, mode 0660): loading a module
	 * should not hand a new kernel interface to every local account.
	 */
	.mode	= 0600,
};

int twheel_dev_init(void)
{
	int ret;

	ret = twheel_account_init();
	if (ret)
		return ret;
	twheel_entry_cache = kmem_cache_create("twheel_entry", sizeof(struct tw_entry),
					       0, SLAB_ACCOUNT, NULL);
	if (!twheel_entry_cache) {
		ret = -ENOMEM;
		goto err_account;
	}
	twheel_touch_entry_cache = kmem_cache_create("twheel_touch_entry",
						     sizeof(struct twheel_touch_entry),
						     0, SLAB_ACCOUNT, NULL);
	if (!twheel_touch_entry_cache) {
		ret = -ENOMEM;
		goto err_cache;
	}
	ret = misc_register(&twheel_misc);
	if (ret)
		goto err_touch_cache;
	return 0;

err_touch_cache:
	kmem_cache_destroy(twheel_touch_entry_cache);
err_cache:
	kmem_cache_destroy(twheel_entry_cache);
err_account:
	twheel_account_exit();
	return ret;
}

void twheel_dev_exit(void)
{
	misc_deregister(&twheel_misc);
	twheel_worker_exit();
	kmem_cache_destroy(twheel_touch_entry_cache);
	kmem_cache_destroy(twheel_entry_cache);
	twheel_account_exit();
}
