/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the device benchmarks (devbench, lazybench) measure CPU time with:
 * the process's own, and the module's expiry work, which runs in the
 * kworkers of the twheel workqueue rather than in the process. Built on
 * tests/common/twheel_test.h; header-only, like it.
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
 * CPU time of every unbound kworker ("kworker/uN:M"), in ns, from the
 * first field of /proc/PID/schedstat (the scheduler's exact run time, not
 * tick samples). The module's expiry work runs there: its workqueue is
 * WQ_UNBOUND, whose workers are shared and carry no name of their own,
 * so all of them are counted. In the test VM nothing else of note runs
 * in them, which the benchmarks check by measuring an idle second
 * (kworker_idle_ns()). A worker that exits takes its time with it: idle
 * unbound workers are reaped after five minutes, longer than any interval
 * measured here. What this leaves out: the hrtimer callback, which runs
 * in hard IRQ and only queues the work.
 */
static inline uint64_t kworker_ns(void)
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
		if (read_file(path, buf, sizeof(buf)) <= 0 || strncmp(buf, "kworker/u", 9))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", de->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0)
			sum += strtoull(buf, NULL, 10);
	}
	closedir(d);
	return sum;
}

/* The unbound kworkers' CPU time over an idle second: the noise in kworker_ns(). */
static inline uint64_t kworker_idle_ns(void)
{
	uint64_t kw = kworker_ns();

	sleep_ns(NSEC_PER_SEC);
	return kworker_ns() - kw;
}

#endif /* TWHEEL_BENCH_H */
