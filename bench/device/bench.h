/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the device benchmarks (devbench, lazybench) measure CPU time with:
 * the process's own, and the module's expiry and touch work, which runs in
 * its twheel/N kernel threads (kmod/worker.c) rather than in the process.
 * Built on tests/common/twheel_test.h; header-only, like it.
 */
#ifndef TWHEEL_BENCH_H
#define TWHEEL_BENCH_H

#include <dirent.h>
#include <sys/resource.h>

#include "twheel_test.h"

static inline void die(const char *what)
{
	perror(what);
	exit(1);
}

/* User + system time of the process, in ns. */
static inline uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		die("getrusage");
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/*
 * CPU time, in ns, of the kernel threads where the module's deferred work
 * runs: its workers, "twheel/N" (kmod/worker.c: the expiry, cascades and
 * touch re-arms of every wheel), and, as bench/scenarios/scenctl.c's
 * kthreads_ns() does, the kworkers of every kind, where the kernel runs
 * what it defers (and the module's work ran before it had threads of its
 * own). scenctl's "twheel" is narrowed to the workers' "twheel/", so that
 * no process named twheel* counts. The first field of /proc/PID/schedstat:
 * the scheduler's exact run time, not tick samples.
 * In the test VM nothing else of note runs in the kworkers, which the
 * benchmarks check by measuring an idle second (kthreads_idle_ns()).
 *
 * A thread that exits takes its time with it. A twheel/N thread stops
 * with the last wheel it serves, so read this while the wheel measured is
 * open (before its close(), after its setup, which makes the thread);
 * idle kworkers are reaped after five minutes, longer than any interval
 * measured here. What this leaves out: the hrtimer callback, which runs
 * in hard IRQ and only wakes the worker.
 */
static inline uint64_t kthreads_ns(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	uint64_t sum = 0;

	if (!d)
		die("/proc");
	while ((de = readdir(d))) {
		char path[300], buf[128];

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (read_file(path, buf, sizeof(buf)) <= 0 ||
		    (strncmp(buf, "kworker/", 8) && strncmp(buf, "twheel/", 7)))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", de->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0)
			sum += strtoull(buf, NULL, 10);
	}
	closedir(d);
	return sum;
}

/* Those threads' CPU time over an idle second: the noise in kthreads_ns(). */
static inline uint64_t kthreads_idle_ns(void)
{
	uint64_t kt = kthreads_ns();

	sleep_ns(NSEC_PER_SEC);
	return kthreads_ns() - kt;
}

#endif /* TWHEEL_BENCH_H */
