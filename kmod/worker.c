// SPDX-License-Identifier: GPL-2.0
/*
 * Where expiry runs: kernel threads in their owners' cgroups.
 *
 * A wheel does work of its own: when its timer fires, what is due is
 * expired, cascaded, or re-armed from a touch. That work is the owner's,
 * yet no system call of the owner's pays for it: a store into a touch
 * table costs the user nanoseconds and the kernel a random-access re-arm
 * at each deadline, so a user under cpu.max could have the kernel spend
 * CPUs on its behalf that its limit never sees. Here that work runs in
 * kernel threads that join the cgroups, in every hierarchy, of the
 * process that set the wheel up (cgroup_attach_task_all(), as vhost's
 * workers did before 6.4): cgroup v2's cpu.max throttles the owner's
 * expiry with the owner, cpu.weight weighs it, cpu.stat counts it, a
 * cpuset keeps it on the owner's CPUs. A throttled owner's events come
 * late, never early.
 *
 * One thread serves every wheel that one owner set up from one cgroup.
 * The owner is the user at the top of the wheel's user chain (account.c),
 * so that all the uids of a container share; the cgroup is the setup
 * caller's cgroup v2 (on a system without it, all of an owner's wheels
 * share one thread, in the v1 groups of the first setup). Threads follow
 * cgroups, not wheels: 10,000 wheels of one service cost one thread, the
 * cgroup write lock that joining takes (an RCU grace period) is taken
 * once per thread, and at most max_user_workers threads count against
 * one owner. A thread is made at the first setup in its cgroup, runs at
 * nice 0 as kworkers do, and stops with its last wheel. Its ~20 KiB
 * (stack and task, allocated by kthreadd) are charged to no memory
 * cgroup; pids.current of its cgroup counts it.
 *
 * A worker runs the due wheels in turn, a bounded chunk each
 * (TWHEEL_ADVANCE_BUDGET entries, clock.c), yielding between chunks. The
 * hrtimer only queues its wheel and wakes the thread: O(1) in hard IRQ.
 *
 * Orphans. A kernel thread keeps its cgroup populated: a service manager
 * that stops a cgroup (systemd sends SIGTERM to each of its tasks, then
 * waits for it to empty) while a wheel lives on elsewhere (in the fd
 * store, passed on) would wait for the wheel's thread. So a worker that
 * gets SIGTERM or SIGKILL (only root may send them: it is root's thread)
 * moves itself to the root cgroups and becomes an orphan: it leaves the
 * registry, its wheels go on expiring where it now is, and the next
 * process that calls into one of them (an ioctl, a read) takes that wheel
 * into the worker of its own cgroup. Until then the wheel's CPU is
 * charged to nobody, by root's doing.
 *
 * Freezing. A worker is not freezable: the release of its last wheel
 * stops it (kthread_stop()), and a frozen thread would hold that release
 * up, in D state, until its group thawed, whoever released it (the fd
 * may have been passed to a process outside the group). So cgroup v1's
 * freezer and suspend leave it running: a frozen owner's wheels go on
 * expiring, and their events wait for it to thaw, as they wait for any
 * reader that does not read; the worker touches no device and no file.
 * cgroup v2's freezer ignores kernel threads and waits
 * for every other task, so a v2 cgroup with a worker in it never reports
 * frozen (the kernel does not look again when a kernel thread leaves):
 * signal its workers first, or load the module with cgroup_workers=0,
 * which runs every wheel in the root cgroup, charged to nobody.
 *
 * Before 5.16, cgroup_attach_task_all() skips cgroup v2 (the kernel
 * gained it for vhost then): a worker joins the owner's v1 hierarchies
 * only, and on a v2 system stays in the root cgroup, one CPU at most per
 * owner and cgroup. Nothing exported there moves a thread into a v2
 * cgroup, so that is what holds on the 5.10 line.
 *
 * Locking:
 *  - twheel_workers_lock (mutex) protects the registry (twheel_workers,
 *    worker->node, ->hashed) and ->nr_jobs. It is not held while a thread
 *    is made, joins cgroups or is stopped.
 *  - worker->lock (spinlock, IRQ-safe: the hrtimer kicks) protects the
 *    worker's lists of jobs, ->running and ->orphaned.
 *  - job->lock (spinlock, IRQ-safe) protects job->worker and nests
 *    outside worker->lock: kicking, moving or stopping a job finds its
 *    worker under it, so a worker is never stopped under a kick.
 */
#include <linux/cgroup.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "account.h"
#include "worker.h"

static bool twheel_cgroup_workers = true;
module_param_named(cgroup_workers, twheel_cgroup_workers, bool, 0644);
MODULE_PARM_DESC(cgroup_workers,
		 "Run expiry in kernel threads in the cgroups of each wheel's setup (default), or all in the root cgroup (0)");

/**
 * struct twheel_worker - a thread that runs the wheels one owner set up
 *	from one cgroup
 * @node:	in twheel_workers while @hashed.
 * @hashed:	new setups find it: not an orphan, not stopping.
 * @nr_jobs:	jobs attached.
 * @owner:	whom the thread counts against; referenced. Fixed.
 * @cgrp:	the cgroup v2 it was made in, referenced; a key, with @owner.
 *		Fixed.
 * @task:	the thread. Fixed.
 * @lock:	see "Locking".
 * @due:	jobs to run, in turn.
 * @jobs:	every job attached.
 * @running:	the job the thread runs now, or NULL.
 * @orphaned:	moved to the root cgroups (see "Orphans").
 * @idle:	twheel_job_stop() and moves wait here for @running to change.
 *
 * @node, @hashed and @nr_jobs are under twheel_workers_lock; @due, @jobs,
 * @running and @orphaned under @lock.
 */
struct twheel_worker {
	struct hlist_node node;
	bool hashed;
	unsigned int nr_jobs;
	struct twheel_user *owner;
	struct cgroup *cgrp;
	struct task_struct *task;
	spinlock_t lock;		/* @due, @jobs, @running, @orphaned */
	struct list_head due;
	struct list_head jobs;
	struct twheel_job *running;
	bool orphaned;
	wait_queue_head_t idle;
};

static DEFINE_HASHTABLE(twheel_workers, 6);
static DEFINE_MUTEX(twheel_workers_lock);
/* Names the threads; and how many there are, hashed or orphaned. */
static atomic_t twheel_worker_serial = ATOMIC_INIT(0);
static atomic_t twheel_nr_workers = ATOMIC_INIT(0);

#ifdef CONFIG_CGROUPS
/* The calling task's cgroup v2, referenced. */
static struct cgroup *twheel_cgroup_get(void)
{
	struct cgroup *cgrp;

	rcu_read_lock();
	cgrp = task_dfl_cgroup(current);
	cgroup_get(cgrp);
	rcu_read_unlock();
	return cgrp;
}

static void twheel_cgroup_hold(struct cgroup *cgrp)
{
	if (cgrp)
		cgroup_get(cgrp);
}

static void twheel_cgroup_put(struct cgroup *cgrp)
{
	if (cgrp)
		cgroup_put(cgrp);
}

/* @task's cgroup v2 is @cgrp. */
static bool twheel_cgroup_is(struct task_struct *task, struct cgroup *cgrp)
{
	bool is;

	rcu_read_lock();
	is = task_dfl_cgroup(task) == cgrp;
	rcu_read_unlock();
	return is;
}

/* @task is in every cgroup of the calling task already. */
static bool twheel_cgroup_same(struct task_struct *task)
{
	bool same;

	rcu_read_lock();
	same = task_css_set(current) == task_css_set(task);
	rcu_read_unlock();
	return same;
}
#else
static struct cgroup *twheel_cgroup_get(void) { return NULL; }
static void twheel_cgroup_hold(struct cgroup *cgrp) { }
static void twheel_cgroup_put(struct cgroup *cgrp) { }
static bool twheel_cgroup_same(struct task_struct *task) { return true; }
static bool twheel_cgroup_is(struct task_struct *task, struct cgroup *cgrp) { return true; }
#endif

static u32 twheel_worker_hash(const struct twheel_user *owner, const struct cgroup *cgrp)
{
	return hash_ptr(owner, 32) ^ hash_ptr(cgrp, 32);
}

/* Under twheel_workers_lock. */
static struct twheel_worker *twheel_worker_find(const struct twheel_user *owner,
						const struct cgroup *cgrp)
{
	struct twheel_worker *w;

	lockdep_assert_held(&twheel_workers_lock);
	hash_for_each_possible(twheel_workers, w, node, twheel_worker_hash(owner, cgrp))
		if (w->owner == owner && w->cgrp == cgrp)
			return w;
	return NULL;
}

/*
 * In the thread: leave the owner's cgroups for the root's, and the
 * registry, and mark the jobs for adoption (see "Orphans").
 */
static void twheel_worker_orphan(struct twheel_worker *w)
{
	struct twheel_job *job;
	int ret;

	/* init_task never leaves the root cgroups. */
	ret = cgroup_attach_task_all(&init_task, current);
	if (ret)
		pr_warn_once("%s could not leave its cgroups: %d\n", current->comm, ret);
	mutex_lock(&twheel_workers_lock);
	if (w->hashed) {
		hash_del(&w->node);
		w->hashed = false;
	}
	mutex_unlock(&twheel_workers_lock);
	spin_lock_irq(&w->lock);
	w->orphaned = true;
	list_for_each_entry(job, &w->jobs, link)
		WRITE_ONCE(job->orphaned, true);
	spin_unlock_irq(&w->lock);
}

static int twheel_worker_fn(void *arg)
{
	struct twheel_worker *w = arg;

	/* A service manager stopping the cgroup: see "Orphans". */
	allow_signal(SIGTERM);
	allow_signal(SIGKILL);
	for (;;) {
		struct twheel_job *job;
		bool more;

		if (signal_pending(current)) {
			flush_signals(current);
			if (!w->orphaned)
				twheel_worker_orphan(w);
		}

		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			break;
		}
		spin_lock_irq(&w->lock);
		job = list_first_entry_or_null(&w->due, struct twheel_job, due);
		if (job) {
			list_del_init(&job->due);
			w->running = job;
		}
		spin_unlock_irq(&w->lock);
		if (!job) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);

		more = job->run(job);
		/* Queued again before it is let go: a stopped job is not. */
		if (more)
			twheel_job_kick(job);
		spin_lock_irq(&w->lock);
		w->running = NULL;
		spin_unlock_irq(&w->lock);
		wake_up_all(&w->idle);
		cond_resched();
	}
	return 0;
}

/*
 * A worker for @owner in the calling task's cgroups, @cgrp its cgroup v2
 * (NULL: left in the root cgroup): counted against @owner, its thread
 * made and moved there and started.
 */
static struct twheel_worker *twheel_worker_create(struct twheel_user *owner,
						  struct cgroup *cgrp)
{
	struct twheel_worker *w;
	int ret;

	ret = twheel_user_add_worker(owner);
	if (ret)
		return ERR_PTR(ret);
	w = kzalloc_obj(*w, GFP_KERNEL_ACCOUNT);
	if (!w) {
		ret = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&w->lock);
	INIT_LIST_HEAD(&w->due);
	INIT_LIST_HEAD(&w->jobs);
	init_waitqueue_head(&w->idle);
	w->task = kthread_create(twheel_worker_fn, w, "twheel/%d",
				 atomic_inc_return(&twheel_worker_serial));
	if (IS_ERR(w->task)) {
		ret = PTR_ERR(w->task);
		goto err_free;
	}
	/* Joining takes the cgroup write lock: not to move nowhere. */
	if (cgrp && !twheel_cgroup_same(w->task)) {
		ret = cgroup_attach_task_all(current, w->task);
		if (ret)
			goto err_stop;
	}
	/*
	 * The caller may have moved since @cgrp was read: a worker hashed
	 * under @cgrp must run in it, or setups in @cgrp would run in the
	 * group the caller moved to. The caller reads its cgroup again.
	 * Before 5.16 joining leaves cgroup v2 alone, and the thread stays
	 * where kthreadd made it.
	 */
	if (cgrp && twheel_cgroup_joins_v2() && !twheel_cgroup_is(w->task, cgrp)) {
		ret = -EAGAIN;
		goto err_stop;
	}
	twheel_user_hold(owner);
	w->owner = owner;
	w->cgrp = cgrp;
	twheel_cgroup_hold(cgrp);
	atomic_inc(&twheel_nr_workers);
	wake_up_process(w->task);
	return w;

err_stop:
	/* Never woken, it never runs twheel_worker_fn(). */
	kthread_stop(w->task);
err_free:
	kfree(w);
err_count:
	twheel_user_del_worker(owner);
	return ERR_PTR(ret);
}

/* Stop the thread of @w, which has no job left, and free it. */
static void twheel_worker_destroy(struct twheel_worker *w)
{
	kthread_stop(w->task);
	atomic_dec(&twheel_nr_workers);
	twheel_cgroup_put(w->cgrp);
	twheel_user_del_worker(w->owner);
	twheel_user_put(w->owner);
	kfree(w);
}

/*
 * The worker of @owner in the calling task's cgroup (in the root cgroup
 * without cgroup_workers), with one job more counted.
 */
static struct twheel_worker *twheel_worker_get(struct twheel_user *owner)
{
	struct twheel_worker *w, *new;
	struct cgroup *cgrp;
	int tries = 0;

again:
	cgrp = READ_ONCE(twheel_cgroup_workers) ? twheel_cgroup_get() : NULL;
	mutex_lock(&twheel_workers_lock);
	w = twheel_worker_find(owner, cgrp);
	if (w)
		w->nr_jobs++;
	mutex_unlock(&twheel_workers_lock);
	if (w)
		goto put_cgroup;

	new = twheel_worker_create(owner, cgrp);
	/* Moved while its worker was made: a caller moving for ever fails. */
	if (PTR_ERR(new) == -EAGAIN && ++tries < 3) {
		twheel_cgroup_put(cgrp);
		goto again;
	}
	if (IS_ERR(new)) {
		w = new;
		goto put_cgroup;
	}
	/* Another setup in this cgroup may have made one meanwhile. */
	mutex_lock(&twheel_workers_lock);
	w = twheel_worker_find(owner, cgrp);
	if (w) {
		w->nr_jobs++;
	} else {
		hash_add(twheel_workers, &new->node, twheel_worker_hash(owner, cgrp));
		new->hashed = true;
		new->nr_jobs = 1;
		w = new;
		new = NULL;
	}
	mutex_unlock(&twheel_workers_lock);
	if (new)
		twheel_worker_destroy(new);
put_cgroup:
	twheel_cgroup_put(cgrp);
	return w;
}

/* Count one job less on @w; the last one stops it. */
static void twheel_worker_put(struct twheel_worker *w)
{
	bool last;

	mutex_lock(&twheel_workers_lock);
	last = !--w->nr_jobs;
	if (last && w->hashed) {
		hash_del(&w->node);
		w->hashed = false;
	}
	mutex_unlock(&twheel_workers_lock);
	if (last)
		twheel_worker_destroy(w);
}

void twheel_worker_exit(void)
{
	/* Every wheel holds a module reference: all workers are gone by now. */
	WARN_ON(atomic_read(&twheel_nr_workers));
}

void twheel_job_init(struct twheel_job *job, bool (*run)(struct twheel_job *job))
{
	job->run = run;
	spin_lock_init(&job->lock);
	job->worker = NULL;
	INIT_LIST_HEAD(&job->due);
	INIT_LIST_HEAD(&job->link);
	job->orphaned = false;
}

/* Under job->lock: give @job to @w, whose count it takes over. */
static void twheel_job_link(struct twheel_job *job, struct twheel_worker *w)
{
	lockdep_assert_held(&job->lock);
	job->worker = w;
	spin_lock(&w->lock);
	list_add_tail(&job->link, &w->jobs);
	/* @w may have become an orphan since it was found. */
	WRITE_ONCE(job->orphaned, w->orphaned);
	spin_unlock(&w->lock);
}

/* Under job->lock: take @job off its worker, which the caller then waits for. */
static struct twheel_worker *twheel_job_unlink(struct twheel_job *job)
{
	struct twheel_worker *w = job->worker;

	lockdep_assert_held(&job->lock);
	job->worker = NULL;
	if (w) {
		spin_lock(&w->lock);
		list_del_init(&job->due);
		list_del_init(&job->link);
		spin_unlock(&w->lock);
	}
	return w;
}

int twheel_job_attach(struct twheel_job *job, struct twheel_user *user)
{
	struct twheel_worker *w = twheel_worker_get(twheel_user_owner(user));

	if (IS_ERR(w))
		return PTR_ERR(w);
	spin_lock_irq(&job->lock);
	twheel_job_link(job, w);
	spin_unlock_irq(&job->lock);
	return 0;
}

void twheel_job_kick(struct twheel_job *job)
{
	struct twheel_worker *w;
	unsigned long flags;

	spin_lock_irqsave(&job->lock, flags);
	w = job->worker;
	if (w) {
		spin_lock(&w->lock);
		if (list_empty(&job->due))
			list_add_tail(&job->due, &w->due);
		spin_unlock(&w->lock);
		wake_up_process(w->task);
	}
	spin_unlock_irqrestore(&job->lock, flags);
}

void twheel_job_adopt(struct twheel_job *job, struct twheel_user *user)
{
	struct twheel_worker *old, *new;

	if (likely(!READ_ONCE(job->orphaned)))
		return;
	new = twheel_worker_get(twheel_user_owner(user));
	if (IS_ERR(new))
		return;
	spin_lock_irq(&job->lock);
	/* Stopped, or taken by another caller, meanwhile. */
	if (!job->worker || !READ_ONCE(job->orphaned)) {
		spin_unlock_irq(&job->lock);
		twheel_worker_put(new);
		return;
	}
	old = twheel_job_unlink(job);
	twheel_job_link(job, new);
	spin_unlock_irq(&job->lock);
	wait_event(old->idle, READ_ONCE(old->running) != job);
	/* Whatever was due on the orphan, and a look in any case. */
	twheel_job_kick(job);
	twheel_worker_put(old);
}

void twheel_job_stop(struct twheel_job *job)
{
	struct twheel_worker *w;

	spin_lock_irq(&job->lock);
	w = twheel_job_unlink(job);
	spin_unlock_irq(&job->lock);
	if (!w)
		return;
	wait_event(w->idle, READ_ONCE(w->running) != job);
	twheel_worker_put(w);
}
