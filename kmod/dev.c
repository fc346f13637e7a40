// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel: one timing wheel per open file.
 *
 * The device layer turns the uapi (uapi/linux/twheel.h) into calls of
 * the wheel core (wheel.c) and owns everything the core must not know:
 * user memory, time, the timer, waking readers, caps and accounting.
 * This file is the file interface: open and release, the ioctls, which
 * copy their arguments in and their results out around the operations
 * of ops.c, mmap of the touch table (touch.c), fdinfo, and registration.
 * read(2) and poll(2) are in events.c, the clock, the timer and the
 * catching up that expires what is due in clock.c; the context they
 * share and its lock rules are in dev.h.
 *
 * Expired entries wait on the wheel's expired list, each in its own
 * memory, until read(2) copies them out and frees them: the caps on
 * entries cover live ids and undelivered events together, and nothing
 * is ever dropped. Entries are charged to the wheel's user and the
 * module (account.c); memory to the memory cgroup of the task whose call
 * allocates it, without the wheel's lock (struct twheel_pool in ops.c):
 * reclaim for one sharer at its memory cgroup's limit delays nobody else.
 * Expiry allocates nothing.
 *
 * Nothing a user can drive keeps a CPU for long: catching up yields
 * every TWHEEL_ADVANCE_BUDGET entries (index chain steps counted in), a batch,
 * a read and a release every chunk, and the id index is keyed and bounds
 * its chains (wheel.c), so chosen ids cost what random ones do.
 */
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include <linux/twheel.h>

#include "account.h"
#include "clock.h"
#include "compat.h"
#include "dev.h"
#include "events.h"
#include "ops.h"
#include "touch.h"
#include "uring.h"
#include "wheel.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* Entries release frees between two chances to reschedule. */
#define TWHEEL_FREE_CHUNK	1024

static unsigned int twheel_max_entries_per_wheel = 1U << 24;
module_param_named(max_entries_per_wheel, twheel_max_entries_per_wheel, uint, 0644);
MODULE_PARM_DESC(max_entries_per_wheel,
		 "Largest cap a wheel may set, and the cap of a wheel that sets 0 (default 16M)");

/* Entries of wheels without a touch table, and of wheels with one. */
static struct kmem_cache *twheel_entry_cache;
static struct kmem_cache *twheel_touch_entry_cache;
/* Names wheels in fdinfo and tracepoints. */
static atomic64_t twheel_serial = ATOMIC64_INIT(0);

struct tw_entry *twheel_alloc_entry(struct twheel_ctx *ctx, bool nowait)
{
	void *p;

	/* It may reclaim: the work and the wheel's other users must not wait. */
	lockdep_assert_not_held(&ctx->lock);
	/* At the memcg limit: ENOMEM to the caller, not the group's OOM killer. */
	p = kmem_cache_alloc(ctx->cache, nowait ? GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN
					      : GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);

	if (p && ctx->touch.slots) {
		struct twheel_touch_entry *te = p;

		te->slot = TWHEEL_SLOT_NONE;
		return &te->e;
	}
	return p;
}

void twheel_free_entry(struct twheel_ctx *ctx, struct tw_entry *e)
{
	kmem_cache_free(ctx->cache, ctx->touch.slots ? (void *)twheel_touch_entry(e) : e);
}

/* What a touch table costs against the entry caps. */
static long twheel_touch_charge(u32 slots)
{
	return DIV_ROUND_UP((unsigned long)twheel_touch_pages(slots) << PAGE_SHIFT,
			    TWHEEL_ENTRY_COST);
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
	mutex_init(&ctx->setup_lock);
	mutex_init(&ctx->lock);
	init_waitqueue_head(&ctx->wqh);
	get_random_bytes(&key, sizeof(key));
	tw_init(&ctx->wheel, 0, &key);
	memzero_explicit(&key, sizeof(key));
	file->private_data = ctx;
	/* read_iter never sleeps under IOCB_NOWAIT: io_uring may read inline. */
	file->f_mode |= FMODE_NOWAIT;
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
	 * Nothing calls into the wheel any more (the last reference is gone;
	 * epoll let go of it before): no one re-arms the timer. Cancel it,
	 * and wait for a callback running on another CPU.
	 */
	mutex_lock(&ctx->lock);
	ctx->dying = true;
	mutex_unlock(&ctx->lock);
	if (twheel_ready(ctx))
		hrtimer_cancel(&ctx->timer);

	/* Nobody else can reach the wheel now: free it without the lock. */
	tw_destroy(&ctx->wheel, twheel_reap_entry, &reaper);
	twheel_uncharge(ctx->user, reaper.freed);
	if (ctx->touch.slots) {
		twheel_uncharge(ctx->user, twheel_touch_charge(ctx->touch.slots));
		twheel_touch_free(&ctx->touch);
	}
	twheel_user_put(ctx->user);
	mutex_destroy(&ctx->lock);
	mutex_destroy(&ctx->setup_lock);
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
	if (args.flags & ~(TWHEEL_SETUPF_TOUCH | TWHEEL_SETUPF_TOUCH_USER) ||
	    (args.flags & TWHEEL_SETUPF_TOUCH && args.flags & TWHEEL_SETUPF_TOUCH_USER))
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
	if (args.flags & (TWHEEL_SETUPF_TOUCH | TWHEEL_SETUPF_TOUCH_USER)) {
		if (!args.touch_slots || args.touch_slots > TWHEEL_TOUCH_MAX_SLOTS ||
		    args.touch_slots > max_entries)
			return -EINVAL;
	} else if (args.touch_slots) {
		return -EINVAL;
	}

	/*
	 * Setups of one wheel one at a time, and nothing else waits for
	 * that: the table's allocation (thousands of pages) happens under
	 * setup_lock, never under ctx->lock.
	 */
	if (mutex_lock_interruptible(&ctx->setup_lock))
		return -ERESTARTSYS;
	if (ctx->is_setup) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/*
	 * A registered table gets its pages from REGISTER, and counts
	 * against the caps from now on all the same.
	 */
	if (args.touch_slots) {
		ret = twheel_charge(ctx->user, twheel_touch_charge(args.touch_slots));
		if (ret)
			goto out_unlock;
		if (args.flags & TWHEEL_SETUPF_TOUCH_USER) {
			touch.slots = args.touch_slots;
			touch.user = true;
		} else {
			ret = twheel_touch_init(&touch, args.touch_slots);
			if (ret)
				goto err_uncharge;
		}
	}
	mutex_lock(&ctx->lock);
	ctx->clockid = args.clockid;
	ctx->tick_ns = args.tick_ns;
	ctx->default_timeout_ns = args.default_timeout_ns;
	ctx->max_timeout_ns = max_timeout;
	ctx->max_entries = max_entries;
	twheel_clock_setup(ctx);
	if (touch.slots) {
		ctx->touch = touch;
		ctx->cache = twheel_touch_entry_cache;
		ctx->wheel.lazy = twheel_touch_lazy;
		twheel_touch_reach(ctx, ctx->default_timeout_ns);
	}
	/*
	 * Publish the settings before the flag: lockless readers acquire it
	 * (litmus/setup-publish.litmus).
	 */
	smp_store_release(&ctx->is_setup, true);
	mutex_unlock(&ctx->lock);
	mutex_unlock(&ctx->setup_lock);
	return 0;

err_uncharge:
	if (args.touch_slots)
		twheel_uncharge(ctx->user, twheel_touch_charge(args.touch_slots));
out_unlock:
	mutex_unlock(&ctx->setup_lock);
	return ret;
}

static long twheel_ioctl_touch_register(struct twheel_ctx *ctx,
					struct twheel_touch_register_args __user *uargs)
{
	struct twheel_touch_register_args args;
	struct twheel_touch_table pinned = {};
	int ret = 0;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if (args.flags || !ctx->touch.user || args.slots != ctx->touch.slots)
		return -EINVAL;
	/* Spare a pin that would be undone; the lock decides below. */
	if (twheel_touch_registered(&ctx->touch))
		return -EBUSY;
	/* Out of the lock: pinning faults the pages in, and may migrate them. */
	ret = twheel_touch_pin(&pinned, args.addr, args.slots);
	if (ret)
		return ret;
	mutex_lock(&ctx->lock);
	if (ctx->touch.pages)
		ret = -EBUSY;
	else
		twheel_touch_install(&ctx->touch, &pinned);
	mutex_unlock(&ctx->lock);
	if (pinned.pages)
		twheel_touch_free(&pinned);
	return ret;
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

static long twheel_ioctl_op(struct twheel_ctx *ctx, struct twheel_op __user *uop,
			    bool nowait)
{
	struct twheel_op op;
	const u8 *raw = (const u8 *)&op;
	int ret;

	BUILD_BUG_ON(sizeof(op) > PAGE_SIZE);
	if (copy_from_user(&op, uop, sizeof(op)))
		return -EFAULT;
	/* The result must be writable before the operation is applied. */
	if (twheel_probe_user(uop, sizeof(op), raw[0], raw[sizeof(op) - 1]))
		return -EFAULT;
	ret = twheel_apply(ctx, &op, 1, nowait);
	if (ret)
		return ret;
	/* Only the out fields; fails only if another thread unmapped them. */
	if (copy_to_user(&uop->deadline_ns, &op.deadline_ns,
			 sizeof(op.deadline_ns) + sizeof(op.remaining_ns)) ||
	    put_user(op.result, &uop->result))
		return -EFAULT;
	return op.result;
}

static long twheel_ioctl_batch(struct twheel_ctx *ctx,
			       struct twheel_batch_args __user *uargs, bool nowait)
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
		/* Nothing of the chunk applied: what came before is the count. */
		if (twheel_apply(ctx, ops, n, nowait))
			return done ?: -EAGAIN;
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

static long twheel_ioctl_refresh(struct twheel_ctx *ctx,
				 struct twheel_refresh_args __user *uargs, bool nowait)
{
	u64 ids[TWHEEL_REFRESH_CHUNK], failed[TWHEEL_REFRESH_CHUNK];
	struct twheel_refresh_args args;
	u64 __user *uids, *ufailed;
	struct twheel_op tmpl;
	u32 done = 0, nr_failed = 0;
	long ret, nf;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	/* nr_failed is output only: whatever it holds on input is ignored. */
	if (args.pad || args.count > INT_MAX)
		return -EINVAL;
	ret = twheel_refresh_prepare(ctx, args.flags, args.timeout_ns, &tmpl);
	if (ret)
		return ret;
	/*
	 * The count of failures must be writable before anything is applied:
	 * written back as it was, so that a call that fails changes nothing.
	 */
	if (put_user(args.nr_failed, &uargs->nr_failed))
		return -EFAULT;
	uids = u64_to_user_ptr(args.ids);
	ufailed = u64_to_user_ptr(args.failed);

	while (done < args.count) {
		u32 n = min_t(u32, args.count - done, TWHEEL_REFRESH_CHUNK);

		ret = -EFAULT;
		if (copy_from_user(ids, uids + done, n * sizeof(*ids)))
			break;
		if (ufailed && twheel_probe_user(ufailed + nr_failed, n * sizeof(*failed), 0, 0))
			break;
		nf = twheel_apply_refresh(ctx, &tmpl, ids, n, failed, nowait);
		/* Nothing of the chunk applied: what came before is the count. */
		if (nf < 0) {
			ret = nf;
			break;
		}
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

static long twheel_ioctl_dump(struct twheel_ctx *ctx, struct twheel_dump_args __user *uargs)
{
	struct twheel_dump_entry out[TWHEEL_DUMP_CHUNK];
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

		ret = twheel_dump_chunk(ctx, &next, out, after, room);
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
 * TWHEEL_IOC_NS_LIMIT: the user namespace of a process by pid, as kill(2)
 * finds it; the rest is account.c's.
 */
static long twheel_ioctl_ns_limit(struct twheel_ns_limit_args __user *uargs)
{
	struct twheel_ns_limit_args args;
	struct user_namespace *ns;
	struct task_struct *task;
	unsigned long limit;
	struct pid *pid;
	long entries;
	int ret;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if (args.flags & ~TWHEEL_NS_LIMITF_SET || args.pid <= 0 ||
	    (!(args.flags & TWHEEL_NS_LIMITF_SET) && args.limit) ||
	    args.limit > LONG_MAX)
		return -EINVAL;
	pid = find_get_pid(args.pid);
	task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!task)
		return -ESRCH;
	rcu_read_lock();
	ns = get_user_ns(__task_cred(task)->user_ns);
	rcu_read_unlock();
	put_task_struct(task);

	limit = args.limit;
	ret = twheel_ns_limit(ns, args.flags & TWHEEL_NS_LIMITF_SET, &limit, &entries);
	put_user_ns(ns);
	if (ret)
		return ret;
	args.limit = limit;
	args.entries = entries;
	if (copy_to_user(uargs, &args, sizeof(args)))
		return -EFAULT;
	return 0;
}

/*
 * The commands that may change the wheel (SETUP, OP, BATCH, REFRESH,
 * TOUCH_REGISTER) need a descriptor open for writing, as write(2) does:
 * on one opened O_RDONLY they fail with EBADF before anything else is
 * looked at. OP and BATCH
 * count as writing whatever their ops are: a read-only descriptor can
 * never set its wheel up, so there is no read-only wheel to query. DUMP,
 * read(2), poll(2), mmap(2) and fdinfo only read. NS_LIMIT is not about
 * the wheel: any descriptor will do, its caller's capabilities decide.
 *
 * Every command, from ioctl(2) or as an io_uring command (uring.c), comes
 * in here: one entry, so that both validate and apply alike. Each first
 * does one chunk of the expiry that is due, if any (clock.c), so that it
 * works on the wheel of the present: an id whose deadline has passed is
 * gone by the time a command looks for it, as soon as the command's
 * chunk reaches it. Process context, in the caller's mm.
 */
long twheel_command(struct file *file, unsigned int cmd, void __user *uarg, bool nowait)
{
	struct twheel_ctx *ctx = file->private_data;
	bool writer = file->f_mode & FMODE_WRITE;

	twheel_catch_up(ctx, 1);
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
		return twheel_ioctl_op(ctx, uarg, nowait);
	case TWHEEL_IOC_BATCH:
		if (!writer)
			return -EBADF;
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_batch(ctx, uarg, nowait);
	case TWHEEL_IOC_DUMP:
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_dump(ctx, uarg);
	case TWHEEL_IOC_REFRESH:
		if (!writer)
			return -EBADF;
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_refresh(ctx, uarg, nowait);
	case TWHEEL_IOC_TOUCH_REGISTER:
		if (!writer)
			return -EBADF;
		if (!twheel_ready(ctx))
			return -EBADFD;
		return twheel_ioctl_touch_register(ctx, uarg);
	case TWHEEL_IOC_NS_LIMIT:
		return twheel_ioctl_ns_limit(uarg);
	default:
		/* The VFS answers ENOTTY for it, as for every driver. */
		return -ENOIOCTLCMD;
	}
}

static long twheel_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return twheel_command(file, cmd, (void __user *)arg, false);
}

static int twheel_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct twheel_ctx *ctx = file->private_data;

	if (!twheel_ready(ctx))
		return -EBADFD;
	/* A registered table is mapped already: it is the process's memory. */
	if (!ctx->touch.slots || ctx->touch.user)
		return -ENODEV;
	return twheel_touch_mmap(&ctx->touch, vma);
}

#ifdef CONFIG_PROC_FS
/* Lockless: settings are fixed after setup, counts are published. */
static void twheel_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_user *owner = twheel_user_top_within(ctx->user, seq_user_ns(m));
	unsigned long ns_limit;
	long ns_entries;

	seq_printf(m, "wheel:\t%llu\n", ctx->serial);
	seq_printf(m, "uid:\t%u\n",
		   from_kuid_munged(seq_user_ns(m), twheel_user_uid(ctx->user)));
	seq_printf(m, "user_entries:\t%ld\n", twheel_user_entries(ctx->user));
	seq_printf(m, "owner_uid:\t%u\n",
		   from_kuid_munged(seq_user_ns(m), twheel_user_uid(owner)));
	seq_printf(m, "owner_entries:\t%ld\n", twheel_user_entries(owner));
	ns_entries = twheel_user_ns_entries(ctx->user, &ns_limit);
	if (ns_entries >= 0) {
		seq_printf(m, "ns_entries:\t%ld\n", ns_entries);
		seq_printf(m, "ns_limit:\t%lu\n", ns_limit);
	}
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
	seq_printf(m, "touch_user:\t%d\n", ctx->touch.user);
	seq_printf(m, "touch_registered:\t%d\n",
		   ctx->touch.user && twheel_touch_registered(&ctx->touch));
	seq_printf(m, "touch_rearms:\t%llu\n", READ_ONCE(ctx->touch_rearms));
	seq_printf(m, "due:\t%d\n", READ_ONCE(ctx->due));
}
#endif

static const struct file_operations twheel_fops = {
	.owner		= THIS_MODULE,
	.open		= twheel_dev_open,
	.release	= twheel_release,
	.read_iter	= twheel_read_iter,
	.poll		= twheel_poll,
	.mmap		= twheel_mmap,
	.unlocked_ioctl	= twheel_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	twheel_uring_cmd_fop(twheel_uring_cmd)
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
	kmem_cache_destroy(twheel_touch_entry_cache);
	kmem_cache_destroy(twheel_entry_cache);
	twheel_account_exit();
}
