/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device layer's one object, struct twheel_ctx (a wheel, the private
 * data of one open file), its lock rules, and what main.c calls to bring
 * /dev/twheel up and down. dev.c is the file interface; ops.c, events.c,
 * clock.c and touch.c work on the context as described here.
 *
 * Locking:
 *  - ctx->setup_lock (mutex) serialises SETUP, which holds it across the
 *    touch table's allocation. Nothing but another SETUP of the same
 *    wheel waits for it; it nests outside ctx->lock.
 *  - ctx->lock (mutex) protects the wheel and every field marked so; it
 *    is taken in process context only (ioctl, read, poll, catching up,
 *    release), and
 *    never held across a user copy, an allocation, or anything that
 *    waits for another task: callers drop it to allocate entries
 *    (twheel_pool_fill(), ops.c) and index tables
 *    (twheel_index_prepare()), and a reader takes its events off the
 *    list under it and copies them out after (events.c).
 *  - Fields marked "published" are written under ctx->lock with
 *    WRITE_ONCE() and read without it (poll, readers deciding whether to
 *    sleep, fdinfo). The pair only keeps each load untorn and once; it
 *    orders nothing: a reader that acts on a count (events_waiting)
 *    reads the due mark first with twheel_due()'s acquire, which orders
 *    the count after the release that cleared the mark. On a 32-bit
 *    kernel a u64 may still tear; the counts a decision reads stay
 *    below the u32 cap on entries, the others are statistics.
 */
#ifndef TWHEEL_DEV_H
#define TWHEEL_DEV_H

#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "touch.h"
#include "wheel.h"

struct twheel_user;

/**
 * struct twheel_ctx - one wheel, the private data of one open file
 * @setup_lock:	see "Locking" above.
 * @lock:		see "Locking" above.
 * @wqh:		readers and pollers wait here for events.
 * @timer:		fires at the wheel's next event; marks it @due and
 *			wakes @wqh.
 * @due:		the timer fired and nobody has caught up since (see
 *			"Who expires" in clock.c). Set by the timer, cleared
 *			under @lock, read without it.
 * @user:		whom the entries are charged to; fixed at open.
 * @serial:		names the wheel in fdinfo and tracepoints; fixed at open.
 * @is_setup:		set once by setup (release store, acquire loads);
 *			the fields up to @touch are fixed then, but for
 *			the pages of a registered table, set once later
 *			(see struct twheel_touch_table).
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
 * @events_taken:	events readers took off the list and are copying out:
 *			freed once copied, given back if not. Under @lock.
 * @events_waiting:	wheel.nr_expired, published.
 * @live:		wheel.nr_live, published.
 * @dying:		release has begun; nothing may re-arm. Under @lock.
 * @armed:		@timer was armed for tick @armed_tick, and nobody
 *			has caught up since. Under @lock.
 * @armed_tick:		see @armed.
 * @expired_total:	events ever moved to the expired list. Published.
 * @ticks_run:		chunks of catching up that advanced the clock.
 *			Published.
 * @ticks_caught_up:	ticks between the one the timer was armed for
 *			and the one processed when it ran late. Published.
 * @touch_rearms:	ids a touch kept alive. Published.
 * @touch_timeout_max_ns: the longest of the default timeout and those an
 *			id was armed with, which sets wheel.lazy_ahead
 *			(twheel_touch_reach()). Under @lock.
 * @lateness_last_ns:	expiry time minus deadline of the earliest event of
 *			the latest chunk that expired any. Published.
 * @lateness_max_ns:	the largest of those. Published.
 * @wheel:		the core's state. Under @lock.
 */
struct twheel_ctx {
	struct mutex setup_lock;	/* one SETUP at a time; outside @lock */
	struct mutex lock;		/* the wheel and the fields so marked */
	wait_queue_head_t wqh;
	struct hrtimer timer;
	bool due;
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
	u64 events_taken;
	u64 events_waiting;
	u64 live;
	bool dying;
	bool armed;
	u64 armed_tick;
	u64 expired_total;
	u64 ticks_run;
	u64 ticks_caught_up;
	u64 touch_rearms;
	u64 touch_timeout_max_ns;
	u64 lateness_last_ns;
	u64 lateness_max_ns;
	struct tw_wheel wheel;
};

static inline bool twheel_ready(struct twheel_ctx *ctx)
{
	/* Pairs with the release in setup: the settings are seen complete. */
	return smp_load_acquire(&ctx->is_setup);
}

/**
 * twheel_due() - whether expiry work waits, for a lockless look
 * @ctx:	the wheel.
 *
 * Return: true if the timer marked the wheel due and nobody finished
 * catching up since; if false, the published counts (events_waiting)
 * read after it are those of the last catching up, or newer.
 */
static inline bool twheel_due(struct twheel_ctx *ctx)
{
	/*
	 * Pairs with the release that clears the mark in
	 * twheel_catch_up_chunk(): a clear mark is seen with the counts
	 * published before it (litmus/due-clear-publish.litmus; with
	 * READ_ONCE() instead, arm64 may reorder the two loads:
	 * due-clear-publish-once.litmus).
	 */
	return smp_load_acquire(&ctx->due);
}

/*
 * What the wheel's cap counts: live ids, events waiting, and events a
 * reader is copying out. Under ctx->lock.
 */
static inline u64 twheel_entries_held(const struct twheel_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	return ctx->wheel.nr_live + ctx->wheel.nr_expired + ctx->events_taken;
}

/* Publish the counts that lockless readers look at. Under ctx->lock. */
static inline void twheel_publish(struct twheel_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	WRITE_ONCE(ctx->events_waiting, ctx->wheel.nr_expired);
	WRITE_ONCE(ctx->live, ctx->wheel.nr_live);
}

/**
 * twheel_alloc_entry() - a new entry for @ctx's wheel, not yet live
 * @ctx:	the wheel.
 * @nowait:	for a caller that must not sleep (an io_uring command
 *		issued inline): no reclaim, fail instead.
 *
 * Charged to the memory cgroup of the caller, not to the caps. Process
 * context, without ctx->lock: it may reclaim.
 *
 * Return: the entry, or NULL when memory runs out (or would have to be
 * reclaimed, with @nowait).
 */
struct tw_entry *twheel_alloc_entry(struct twheel_ctx *ctx, bool nowait);

/**
 * twheel_free_entry() - free an entry of @ctx's wheel
 * @ctx:	the wheel.
 * @e:		the entry, no longer in the wheel; the caller has uncharged
 *		it from the caps or will.
 */
void twheel_free_entry(struct twheel_ctx *ctx, struct tw_entry *e);

int twheel_dev_init(void);
void twheel_dev_exit(void);

/*
 * Command @cmd (a TWHEEL_IOC_*) on the wheel of @file with the argument
 * at @uarg: what ioctl(2) returns, but -ENOIOCTLCMD for a command it
 * does not know. With @nowait (io_uring's inline issue), -EAGAIN before
 * anything is applied where the command would have to sleep for memory
 * (reclaim, a large index table, a touch table's pages), so that io_uring
 * issues it again from a worker that may; a BATCH or REFRESH whose later
 * chunk would have to sleep stops before it with the count applied, as
 * a signal stops one. Process context, in the caller's mm (uring.c's
 * too).
 */
long twheel_command(struct file *file, unsigned int cmd, void __user *uarg, bool nowait);

#endif /* TWHEEL_DEV_H */
