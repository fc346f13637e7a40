// SPDX-License-Identifier: GPL-2.0
/*
 * The events side of a wheel, part of the device layer: read(2),
 * readv(2) and io_uring's reads (read_iter) take the oldest expired
 * entries off the list, copy them out as struct twheel_event records and
 * free them, and poll(2) says whether any wait. Both first catch up with
 * what the timer marked due (clock.c), so a reader or a poller is woken
 * by the timer itself and does the wheel's expiry work, in its own
 * context, until events wait. Readers need no lock of their own: each takes its events
 * under ctx->lock and copies them out after, so that the events one
 * reader took are delivered to that reader only, and the oldest first
 * to each reader.
 */
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
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

/* Events copied out at a time by read(2) (on the stack). */
#define TWHEEL_READ_CHUNK	16

/*
 * Take up to @max of the oldest events off the list, their records into
 * @ev and their entries into @taken: from now on no other reader gets
 * them and poll(2) no longer counts them, but they stay charged, and
 * count against the wheel's cap, until twheel_settle_events().
 */
static unsigned int twheel_take_events(struct twheel_ctx *ctx, struct twheel_event *ev,
				       struct tw_entry **taken, unsigned int max)
{
	struct tw_entry *e;
	unsigned int n;

	mutex_lock(&ctx->lock);
	for (n = 0; n < max && (e = tw_pop_expired(&ctx->wheel)); n++) {
		ev[n].id = e->id;
		ev[n].deadline_ns = twheel_user_deadline(ctx, e);
		ev[n].expired_ns = twheel_to_user(ctx, e->stamp);
		taken[n] = e;
	}
	ctx->events_taken += n;
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	return n;
}

/*
 * Settle @n taken events of which the first @done were delivered: free
 * those, and give the others back, first in line, for the next read.
 */
static void twheel_settle_events(struct twheel_ctx *ctx, struct tw_entry **taken,
				 unsigned int done, unsigned int n)
{
	unsigned int i;

	mutex_lock(&ctx->lock);
	for (i = n; i > done; i--)
		tw_unpop_expired(&ctx->wheel, taken[i - 1]);
	ctx->events_taken -= n;
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	if (done < n)
		twheel_wake_readers(ctx);
	for (i = 0; i < done; i++)
		twheel_free_entry(ctx, taken[i]);
	if (done)
		twheel_uncharge(ctx->user, done);
}

/*
 * A read that must not block (O_NONBLOCK, or IOCB_NOWAIT: io_uring's
 * inline attempt, preadv2's RWF_NOWAIT) answers EAGAIN instead of waiting
 * for events, so that io_uring waits for EPOLLIN and retries rather than
 * handing the read to a worker thread. Events are taken off the list
 * before they are copied out, as eventfd and timerfd take their counts,
 * so a reader whose copy stalls (its buffer behind userfaultfd, say)
 * holds only its own events: poll(2) says EPOLLIN exactly while events
 * are there for the taking, and any other read takes them at once. The
 * only wait left on the non-blocking path is for ctx->lock, which is
 * never held across a user copy, an allocation or another task; the
 * index shrink that a read may ask for (an allocation) is left to a
 * read that may block, or to the next operation. Catching up is CPU work
 * of the wheel's own, not a wait: a non-blocking read does it too, until
 * nothing is due.
 */
ssize_t twheel_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_event ev[TWHEEL_READ_CHUNK];
	struct tw_entry *taken[TWHEEL_READ_CHUNK];
	size_t max = iov_iter_count(to) / sizeof(*ev), done = 0;
	bool nowait = file->f_flags & O_NONBLOCK || iocb->ki_flags & IOCB_NOWAIT;
	unsigned int n;
	ssize_t ret;

	if (!max)
		return -EINVAL;
	if (!twheel_ready(ctx))
		return -EBADFD;

	/* Another reader may take what was there between the look and the take. */
	for (;;) {
		twheel_catch_up(ctx, TWHEEL_CATCH_UP_ALL);
		n = twheel_take_events(ctx, ev, taken, min_t(size_t, max, TWHEEL_READ_CHUNK));
		if (n)
			break;
		/* What a signal left due, its waiters were woken for. */
		if (nowait)
			return -EAGAIN;
		/*
		 * The mark first, with its acquire: a catching up by another
		 * task between two plain loads of the count and then the mark
		 * would leave this reader asleep with events waiting, and
		 * catching up wakes nobody. A clear mark is seen with the count
		 * it was cleared after (twheel_due()).
		 */
		ret = wait_event_interruptible(ctx->wqh, twheel_due(ctx) ||
					       READ_ONCE(ctx->events_waiting));
		if (ret)
			return ret;
	}

	ret = 0;
	for (;;) {
		size_t left = n * sizeof(*ev) - copy_to_iter(ev, n * sizeof(*ev), to);
		/*
		 * On a fault, the records copied whole are delivered; the rest,
		 * the one cut by the fault included, go back to the list.
		 */
		unsigned int copied = n - DIV_ROUND_UP(left, sizeof(*ev));

		twheel_settle_events(ctx, taken, copied, n);
		done += copied;
		if (left) {
			ret = -EFAULT;
			break;
		}
		/* A huge read yields, and a signal ends it with what it has. */
		if (done == max || signal_pending(current))
			break;
		cond_resched();
		n = twheel_take_events(ctx, ev, taken,
				       min_t(size_t, max - done, TWHEEL_READ_CHUNK));
		if (!n && READ_ONCE(ctx->due)) {
			/* The timer fired again while this read copied: go on. */
			twheel_catch_up(ctx, TWHEEL_CATCH_UP_ALL);
			n = twheel_take_events(ctx, ev, taken,
					       min_t(size_t, max - done, TWHEEL_READ_CHUNK));
		}
		if (!n)
			break;
	}

	/* Reading may leave the index far too big for what is left: shrink it. */
	if (!nowait) {
		mutex_lock(&ctx->lock);
		twheel_index_prepare(ctx);
		mutex_unlock(&ctx->lock);
	}
	trace_twheel_read(ctx->serial, done, READ_ONCE(ctx->events_waiting));
	return done ? done * sizeof(*ev) : ret;
}

/*
 * Queued on ctx->wqh, then caught up: a timer that fires after that wakes
 * the caller, which polls again (see "Ordering of the due mark" in
 * clock.c). Catching up wakes nobody, so an edge-triggered epoll hears of
 * a tick's events once, from the timer, and not again from its own poll.
 * A signal may cut the catching up short; then the wheel is still due,
 * and its waiters, this caller too, are woken to go on.
 *
 * A kernel thread that polls does none of the work: aio's IOCB_CMD_POLL
 * polls again from a kworker when woken, and the wheel's work must not
 * leave the cgroups of the tasks that use it for the root's. It is told
 * EPOLLIN while the wheel is due, so that the aio poll completes and its
 * submitter's read does the work (and may find that nothing expired: the
 * one case of EPOLLIN before a read that answers EAGAIN).
 */
__poll_t twheel_poll(struct file *file, struct poll_table_struct *wait)
{
	struct twheel_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->wqh, wait);
	if (current->flags & PF_KTHREAD) {
		if (twheel_due(ctx))
			return EPOLLIN | EPOLLRDNORM;
	} else {
		twheel_catch_up(ctx, TWHEEL_CATCH_UP_ALL);
	}
	return READ_ONCE(ctx->events_waiting) ? EPOLLIN | EPOLLRDNORM : 0;
}

void twheel_wake_readers(struct twheel_ctx *ctx)
{
	wake_up_interruptible_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}
