/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the device benchmarks (devbench, lazybench, ringbench) measure CPU
 * time with: the process's and a thread's own, which hold the module's
 * work (the module has no thread: its expiry, cascades and a touch
 * table's re-arms run in the calls of the tasks that use a wheel,
 * kmod/clock.c: poll(2) and read(2) catch up with what the wheel's timer
 * marked due, each command does one chunk of it first), and the
 * kworkers', where the kernel runs what it defers.
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

/* CPU time of the calling thread, in ns: the scheduler's exact run time. */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * CPU time, in ns, of the kworkers of every kind, where the kernel runs
 * what it defers (bench/scenarios/scenctl.c's kthreads_ns() counts them
 * too). The module defers no work of its own to a thread: what its calls
 * leave to the kworkers, if anything, is counted here. The first field
 * of /proc/PID/schedstat: the scheduler's exact run time, not tick
 * samples. In the test VM nothing else of note runs in the kworkers,
 * which the benchmarks check by measuring an idle second
 * (kthreads_idle_ns()).
 *
 * A thread that exits takes its time with it; idle kworkers are reaped
 * after five minutes, longer than any interval measured here. What this
 * leaves out: the hrtimer callback, which runs in hard IRQ and only marks
 * the wheel due and wakes its waiters.
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
		if (read_file(path, buf, sizeof(buf)) <= 0 || strncmp(buf, "kworker/", 8))
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
