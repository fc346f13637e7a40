/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gap watchers: busy threads, one pinned to each CPU asked for, that spin
 * reading the clock and note the longest time between two readings (a
 * "gap") while a test drives a path of the kernel. Used by tests/stress/flood.c
 * and tests/stress/stall.c to show that nothing a user drives keeps a runnable
 * thread off its CPU for long.
 *
 * What a gap is: the watcher did not run for that long. Either another
 * task had its CPU (the driving thread, a kworker: the scheduler let it
 * run, or it ran in the kernel without a point to be preempted at), or
 * the CPU was busy in interrupts, or, under QEMU, the host did not run
 * the vCPU at all. To tell these apart each gap is split with the
 * watcher's own scheduler statistics (/proc/thread-self/schedstat,
 * run_delay): the part spent runnable on the runqueue is the guest's
 * doing ("runq"); the rest is interrupts or host steal, which a loaded
 * host adds at random. A stretch the kernel cannot be preempted in
 * shows up as runq time in every repetition; host steal does not.
 *
 * The watcher touches only memory it already touched (its stack and its
 * struct) while it watches, so it takes no page faults; between windows
 * it sleeps, so it does not slow what the test does outside them.
 */
#ifndef TWHEEL_STRESS_GAP_H
#define TWHEEL_STRESS_GAP_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "twheel_test.h"

/*
 * Gaps from this long are split with schedstat. Its run_delay is read
 * only then, so a gap's runq part also holds the waits of the shorter
 * gaps since the last reading: it is capped at the gap's length, and the
 * threshold is low enough that those waits stay small, and high enough
 * that the readings (a system call, slow under TCG) are rare.
 */
#define GAP_NOTE_NS	(250 * 1000ULL)
/* Gaps counted in gap_result.gaps. */
#define GAP_COUNT_NS	NSEC_PER_MSEC

enum { GAP_PARKED, GAP_WATCH, GAP_QUIT };

/**
 * struct gap_watch - one busy thread
 * @cpu:	the CPU it is pinned to.
 * @state:	GAP_* asked by the test; @seen is the state the thread is in.
 * @max_gap_ns:	longest gap of the window.
 * @max_gap_runq_ns: the runq part of that gap.
 * @max_runq_ns: largest runq part of any gap of the window.
 * @gaps:	gaps of at least GAP_COUNT_NS in the window.
 * @run_ns:	CPU time the watcher got in the window.
 */
struct gap_watch {
	pthread_t thread;
	int cpu;
	int schedstat_fd;
	atomic_int state;
	atomic_int seen;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t max_gap_ns;
	uint64_t max_gap_runq_ns;
	uint64_t max_runq_ns;
	uint64_t gaps;
	uint64_t run_ns;
};

/* The watcher's run time and run_delay (ns) from its schedstat. */
static inline int gap_schedstat(int fd, uint64_t *run, uint64_t *delay)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long r, d;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &r, &d) != 2)
		return -1;
	*run = r;
	*delay = d;
	return 0;
}

static inline void gap_spin(struct gap_watch *w)
{
	uint64_t last, t, run0 = 0, run = 0, delay0 = 0, delay;

	w->max_gap_ns = w->max_gap_runq_ns = w->max_runq_ns = w->gaps = 0;
	gap_schedstat(w->schedstat_fd, &run0, &delay0);
	delay = delay0;
	last = mono_ns();
	while (atomic_load_explicit(&w->state, memory_order_relaxed) == GAP_WATCH) {
		t = mono_ns();
		if (t - last >= GAP_NOTE_NS) {
			uint64_t before = delay, runq;

			gap_schedstat(w->schedstat_fd, &run, &delay);
			runq = delay - before;
			if (runq > t - last)
				runq = t - last;
			w->gaps += t - last >= GAP_COUNT_NS;
			if (t - last > w->max_gap_ns) {
				w->max_gap_ns = t - last;
				w->max_gap_runq_ns = runq;
			}
			if (runq > w->max_runq_ns)
				w->max_runq_ns = runq;
			/* The schedstat read is the watcher's own time: not a gap. */
			t = mono_ns();
		}
		last = t;
	}
	gap_schedstat(w->schedstat_fd, &run, &delay);
	w->run_ns = run - run0;
}

static inline void *gap_thread(void *arg)
{
	struct gap_watch *w = arg;
	cpu_set_t set;
	int state;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	w->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	for (;;) {
		pthread_mutex_lock(&w->lock);
		atomic_store(&w->seen, GAP_PARKED);
		pthread_cond_broadcast(&w->cond);
		while ((state = atomic_load(&w->state)) == GAP_PARKED)
			pthread_cond_wait(&w->cond, &w->lock);
		atomic_store(&w->seen, state);
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		if (state == GAP_QUIT)
			break;
		gap_spin(w);
	}
	close(w->schedstat_fd);
	return NULL;
}

static inline void gap_set(struct gap_watch *w, int state)
{
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->state, state);
	pthread_cond_broadcast(&w->cond);
	/* Wait until the thread is in the state, so windows are exact. */
	while (atomic_load(&w->seen) != state)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

/* Start a parked watcher on each of the @n CPUs in @cpus; 0 or -1. */
static inline int gap_start(struct gap_watch *ws, const int *cpus, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct gap_watch *w = &ws[i];

		memset(w, 0, sizeof(*w));
		w->cpu = cpus[i];
		atomic_init(&w->state, GAP_PARKED);
		atomic_init(&w->seen, -1);
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->cond, NULL);
		if (pthread_create(&w->thread, NULL, gap_thread, w))
			return -1;
		gap_set(w, GAP_PARKED);
	}
	return 0;
}

static inline void gap_stop(struct gap_watch *ws, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		gap_set(&ws[i], GAP_QUIT);
		pthread_join(ws[i].thread, NULL);
	}
}

/* Open a window on every watcher: they spin from now on. */
static inline void gap_open(struct gap_watch *ws, int n)
{
	int i;

	for (i = 0; i < n; i++)
		gap_set(&ws[i], GAP_WATCH);
}

/* What a closed window found, over all its watchers. */
struct gap_result {
	uint64_t max_gap_ns;		/* longest gap */
	uint64_t max_gap_runq_ns;	/* its runq part */
	uint64_t max_runq_ns;		/* largest runq part of any gap */
	uint64_t gaps;			/* gaps of GAP_COUNT_NS or more */
	uint64_t run_ns;		/* CPU time the watchers got */
};

static inline void gap_close(struct gap_watch *ws, int n, struct gap_result *r)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n; i++) {
		gap_set(&ws[i], GAP_PARKED);
		if (ws[i].max_gap_ns > r->max_gap_ns) {
			r->max_gap_ns = ws[i].max_gap_ns;
			r->max_gap_runq_ns = ws[i].max_gap_runq_ns;
		}
		if (ws[i].max_runq_ns > r->max_runq_ns)
			r->max_runq_ns = ws[i].max_runq_ns;
		r->gaps += ws[i].gaps;
		r->run_ns += ws[i].run_ns;
	}
}

/* The online CPUs this process may run on, into @cpus; how many. */
static inline int gap_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (i = 0; i < CPU_SETSIZE && n < max; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	return n;
}

#endif /* TWHEEL_STRESS_GAP_H */
