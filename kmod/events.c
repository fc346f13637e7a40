// SPDX-License-Identifier: GPL-2.0
/*
 * The events side of a wheel, part of the device layer: read(2),
 * readv(2) and io_uring's reads (read_iter) copy the oldest expired
 * entries out as struct twheel_event records and free them, poll(2)
 * says whether any wait, and the expiry job (clock.c) wakes both.
 * Readers are serialised by ctx->read_lock, held across the copy to user
 * memory (see "Locking" in dev.h), so that the events one reader copied
 * are taken off the list by that reader only.
 */
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/wait.h>

#include <linux/twheel.h>

#include "account.h"
#include "clock.h"
#include "dev.h"
#include "events.h"
#include "ops.h"
#include "trace.h"
#include "wheel.h"
#include "worker.h"

/* Events copied out at a time by read(2) (on the stack). */
#define TWHEEL_READ_CHUNK	16

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

/*
 * A read that must not block (O_NONBLOCK, or IOCB_NOWAIT: io_uring's
 * inline attempt, preadv2's RWF_NOWAIT) answers EAGAIN instead of waiting
 * for events or for another reader, so that io_uring waits for EPOLLIN
 * and retries rather than handing the read to a worker thread. The waits
 * left on that path are for ctx->lock, never held across a user copy or
 * an allocation, and, once the events are taken, the allocation of a
 * smaller index when reading has left the index far too big for the ids
 * that remain (GFP_KERNEL, as any op's may be).
 */
ssize_t twheel_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_event ev[TWHEEL_READ_CHUNK];
	size_t max = iov_iter_count(to) / sizeof(*ev), done = 0;
	bool nowait = file->f_flags & O_NONBLOCK || iocb->ki_flags & IOCB_NOWAIT;
	ssize_t ret;

	if (!max)
		return -EINVAL;
	if (!twheel_ready(ctx))
		return -EBADFD;
	twheel_job_adopt(&ctx->job, ctx->user);

	for (;;) {
		if (!READ_ONCE(ctx->events_waiting)) {
			if (nowait)
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
		if (nowait) {
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
		left = n * sizeof(*ev) - copy_to_iter(ev, n * sizeof(*ev), to);
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

__poll_t twheel_poll(struct file *file, struct poll_table_struct *wait)
{
	struct twheel_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->wqh, wait);
	return READ_ONCE(ctx->events_waiting) ? EPOLLIN | EPOLLRDNORM : 0;
}

void twheel_wake_readers(struct twheel_ctx *ctx)
{
	wake_up_interruptible_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}
