/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a wheel's expiry work runs: kernel threads in the cgroups of the
 * wheels' owners, one per owner and cgroup. See worker.c.
 */
#ifndef TWHEEL_WORKER_H
#define TWHEEL_WORKER_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct twheel_user;
struct twheel_worker;

/**
 * struct twheel_job - the work of one wheel, as its worker sees it
 * @run:	does a bounded chunk of the work; returns true if there is
 *		more. Process context, in the worker thread.
 * @lock:	protects @worker; IRQ-safe (twheel_job_kick() runs in hard
 *		IRQ). Nests outside the worker's lock.
 * @worker:	the worker that runs the job; NULL before
 *		twheel_job_attach() and after twheel_job_stop().
 * @due:	on @worker's list of jobs to run, or empty. Under the
 *		worker's lock.
 * @link:	on @worker's list of all its jobs. Under the worker's lock.
 * @orphaned:	@worker left the owner's cgroups (see "Orphans" in
 *		worker.c): the next caller takes the job into its own. Written
 *		under the worker's lock, read without it.
 */
struct twheel_job {
	bool (*run)(struct twheel_job *job);
	spinlock_t lock;		/* @worker */
	struct twheel_worker *worker;
	struct list_head due;
	struct list_head link;
	bool orphaned;
};

/* Module exit: every wheel, hence every worker, is gone. */
void twheel_worker_exit(void);

void twheel_job_init(struct twheel_job *job, bool (*run)(struct twheel_job *job));

/*
 * Give @job, of a wheel charged to @user, the worker of @user's owner in
 * the calling task's cgroup, made (and moved into those cgroups) if there
 * is none: 0, -ENOSPC past max_user_workers, -ENOMEM, or what joining
 * the cgroups failed with. Process context, may sleep for an RCU grace
 * period (the cgroup write lock).
 */
int twheel_job_attach(struct twheel_job *job, struct twheel_user *user);

/* Have @job run soon, if it has a worker. Any context, hard IRQ included. */
void twheel_job_kick(struct twheel_job *job);

/*
 * If @job's worker left for the root cgroups, move @job to the worker of
 * the caller's cgroup; if that fails, it stays where it runs. Process
 * context; costs a load when there is nothing to do.
 */
void twheel_job_adopt(struct twheel_job *job, struct twheel_user *user);

/*
 * Take @job off its worker and wait until the worker is not running it;
 * nothing runs it afterwards, and twheel_job_kick() does nothing.
 * Process context.
 */
void twheel_job_stop(struct twheel_job *job);

#endif /* TWHEEL_WORKER_H */
