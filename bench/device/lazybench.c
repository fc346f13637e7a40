// SPDX-License-Identifier: GPL-2.0
/*
 * lazybench: what the kernel spends on ids that are refreshed through the
 * touch table all the time. n ids are bound to n slots; the process
 * stamps every slot rate times a second for a run of seconds, and never
 * makes a system call for them. The kernel looks at an id's slot when
 * its deadline comes, or when its wheel moves the id down a level before
 * then, finds it touched, and re-arms it one timeout on: the claim is
 * one look per id per timeout, whatever the touch rate, and a module
 * that costs next to no CPU.
 *
 * The module has no thread: that work is done by whoever looks at the
 * wheel. Here, as in a server, an event-loop thread of the process waits
 * in poll(2) on the wheel's fd (and reads what expires, which nothing
 * should); the wheel's timer wakes it each tick something is due, and
 * its poll does the looks and re-arms before it sleeps again.
 *
 * Run inside the VM (`make -C bench/device lazy`, `make -C bench/device lazy-icount`):
 *   lazybench [N [RATE [SECONDS [TIMEOUT_S [TICK_MS]]]]]
 * default 1000000 ids, 10 touches a second each, 60 s, a 30 s timeout,
 * a 10 ms tick; also LAZY_N, LAZY_RATE, LAZY_SECONDS, LAZY_TIMEOUT,
 * LAZY_TICK_MS from the kernel command line.
 *
 * The ids are added with deadlines spread over one timeout (as ids of a
 * running server would be), then touched in passes: each pass reads
 * the clock once per 64 slots and stores it into every slot, and passes
 * start rate times a second. The module's CPU time is that of the
 * polling thread (its thread CPU clock: the module's work, and a poll(2)
 * a wake) and the kworkers' (kthreads_ns(), bench.h) over the run; the
 * process's is the rest of its time, the stamping thread's. The looks
 * are the wheel's fdinfo counters touch_rearms (a touched id re-armed)
 * and expired_total (an id not touched in time: none is expected), as of
 * the poller's last look, at most a tick old.
 *
 * Output, once a second and at the end:
 *   # lazybench: t=S rearms=R module_ns=K passes=P
 *   lazybench: n=N rate=R seconds=S timeout_s=T tick_ms=M rearms_per_s=X
 *	looks_per_id_per_timeout=Y module_cpu_pct=Z module_ns_per_look=W
 *	process_cpu_pct=P touch_rate_achieved=A expired=E
 */
#include <pthread.h>
#include <sys/mman.h>

#include "bench.h"

#define STAMP_EVERY	64	/* slots stamped per clock read */
#define ADD_MARGIN_NS	(20 * NSEC_PER_SEC)	/* room to add the ids */

static struct twheel_touch touch;

/* One pass: every slot stamped with the present. */
static void touch_pass(uint32_t n)
{
	uint32_t i, j;

	for (i = 0; i < n; i += STAMP_EVERY) {
		uint32_t end = n - i < STAMP_EVERY ? n : i + STAMP_EVERY;
		uint64_t now = clock_ns(CLOCK_MONOTONIC);

		for (j = i; j < end; j++)
			twheel_touch_at(&touch, j, now);
	}
}

/* n ids bound to slots 0..n-1, due uniformly over (@start, @start + timeout]. */
static void add_ids(int fd, uint32_t n, uint64_t start, uint64_t timeout_ns)
{
	static struct twheel_op ops[256];
	uint32_t i, j;

	for (i = 0; i < n; i += 256) {
		uint32_t k = n - i < 256 ? n - i : 256;

		for (j = 0; j < k; j++) {
			twheel_prep_add_at(&ops[j], i + j,
					   start + timeout_ns / n * (i + j) + 1);
			twheel_prep_bind(&ops[j], i + j);
		}
		if (twheel_batch(fd, ops, k) != (int)k)
			die("TWHEEL_IOC_BATCH");
		for (j = 0; j < k; j++)
			if (ops[j].result)
				die("add");
	}
}

/* The event loop: poll(2) on the wheel and @stop_fd, reading what expires. */
struct poller {
	int fd, stop_fd;
	pthread_t th;
	clockid_t cpu;		/* its thread CPU clock */
};

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	struct twheel_event ev[64];

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = p->fd, .events = POLLIN },
			{ .fd = p->stop_fd, .events = POLLIN },
		};

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			die("poll");
		if (pfd[1].revents)
			return NULL;
		if (pfd[0].revents & POLLIN)
			while (read(p->fd, ev, sizeof(ev)) > 0)
				;
	}
}

/* The poller's CPU time so far, in ns. */
static uint64_t poller_ns(const struct poller *p)
{
	struct timespec ts;

	if (clock_gettime(p->cpu, &ts))
		die("clock_gettime of the poller");
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static long long counter(int fd, const char *key)
{
	long long v = fdinfo_get(fd, key);

	if (v < 0)
		die(key);
	return v;
}

int main(int argc, char **argv)
{
	uint32_t n = arg_or_env(argc, argv, "LAZY_N", 1000000);
	uint64_t rate = arg_or_env(argc > 1 ? argc - 1 : 0, argv + 1, "LAZY_RATE", 10);
	uint64_t secs = arg_or_env(argc > 2 ? argc - 2 : 0, argv + 2, "LAZY_SECONDS", 60);
	uint64_t tmo_s = arg_or_env(argc > 3 ? argc - 3 : 0, argv + 3, "LAZY_TIMEOUT", 30);
	uint64_t tick_ms = arg_or_env(argc > 4 ? argc - 4 : 0, argv + 4, "LAZY_TICK_MS", 10);
	uint64_t timeout_ns = tmo_s * NSEC_PER_SEC, period = NSEC_PER_SEC / rate;
	struct twheel_setup_args sa = {
		.tick_ns = tick_ms * NSEC_PER_MSEC, .default_timeout_ns = timeout_ns,
		.clockid = CLOCK_MONOTONIC, .flags = TWHEEL_SETUPF_TOUCH, .touch_slots = n,
	};
	uint64_t t0, next, kw0, cpu0, pl0, kw, cpu, idle, start, passes = 0, late = 0, sec = 1;
	long long rearms0, expired0, ticks0, rearms, expired;
	int fd = twheel_open(O_CLOEXEC | O_NONBLOCK), stop[2];
	struct poller pl = { .fd = fd };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fd < 0 || twheel_setup_params(fd, &sa) ||
	    twheel_touch_map(fd, n, CLOCK_MONOTONIC, &touch))
		die("touch wheel");
	if (pipe2(stop, O_CLOEXEC))
		die("pipe2");
	pl.stop_fd = stop[0];
	errno = pthread_create(&pl.th, NULL, poller_main, &pl);
	if (errno)
		die("pthread_create");
	errno = pthread_getcpuclockid(pl.th, &pl.cpu);
	if (errno)
		die("pthread_getcpuclockid");
	idle = kthreads_idle_ns();
	printf("# lazybench: kworker threads idle: %llu ns in 1 s\n", (unsigned long long)idle);
	/* Fault the table in, then bind: what a slot held before binding never counts. */
	memset(touch.slots, 0, touch.map_len);
	/*
	 * The first deadlines come ADD_MARGIN after the adds begin; until
	 * then the ids are touched but not measured, so the run measures a
	 * wheel in its steady state from its first second.
	 */
	start = mono_ns() + ADD_MARGIN_NS;
	add_ids(fd, n, start, timeout_ns);
	if (mono_ns() + period >= start)
		die("adding the ids took longer than ADD_MARGIN_NS");
	do
		touch_pass(n);
	while (mono_ns() + period < start);

	rearms0 = counter(fd, "touch_rearms");
	expired0 = counter(fd, "expired_total");
	ticks0 = counter(fd, "ticks_run");
	kw0 = kthreads_ns();
	pl0 = poller_ns(&pl);
	cpu0 = cpu_ns();
	t0 = next = mono_ns();
	while (next - t0 < secs * NSEC_PER_SEC) {
		struct timespec ts;

		touch_pass(n);
		passes++;
		next += period;
		if (mono_ns() > next)
			late++;		/* the pass overran its period */
		ts.tv_sec = next / NSEC_PER_SEC;
		ts.tv_nsec = next % NSEC_PER_SEC;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (next - t0 >= sec * NSEC_PER_SEC) {
			printf("# lazybench: t=%llu rearms=%lld module_ns=%llu passes=%llu\n",
			       (unsigned long long)sec, counter(fd, "touch_rearms") - rearms0,
			       (unsigned long long)(poller_ns(&pl) - pl0 + kthreads_ns() - kw0),
			       (unsigned long long)passes);
			sec++;
		}
	}
	/* The process's time less the poller's: the stamping thread's. */
	cpu = cpu_ns() - cpu0;
	kw = poller_ns(&pl) - pl0;
	cpu = cpu > kw ? cpu - kw : 0;
	kw += kthreads_ns() - kw0;
	rearms = counter(fd, "touch_rearms") - rearms0;
	expired = counter(fd, "expired_total") - expired0;
	secs = (mono_ns() - t0) / NSEC_PER_SEC;

	printf("# lazybench: catch-up chunks (ticks_run) %lld, passes late %llu of %llu, idle kworkers ns/s %llu\n",
	       counter(fd, "ticks_run") - ticks0, (unsigned long long)late,
	       (unsigned long long)passes, (unsigned long long)idle);
	if (write(stop[1], "", 1) != 1 || pthread_join(pl.th, NULL))
		die("stop the poller");
	printf("lazybench: n=%u rate=%llu seconds=%llu timeout_s=%llu tick_ms=%llu "
	       "rearms_per_s=%.0f looks_per_id_per_timeout=%.3f module_cpu_pct=%.3f "
	       "module_ns_per_look=%.0f process_cpu_pct=%.1f touch_rate_achieved=%.2f "
	       "expired=%lld\n",
	       n, (unsigned long long)rate, (unsigned long long)secs,
	       (unsigned long long)tmo_s, (unsigned long long)tick_ms,
	       (double)rearms / secs,
	       (double)(rearms + expired) / ((double)n * secs / tmo_s),
	       100.0 * kw / (secs * NSEC_PER_SEC),
	       rearms + expired ? (double)kw / (rearms + expired) : 0.0,
	       100.0 * cpu / (secs * NSEC_PER_SEC),
	       (double)passes / secs, expired);
	return expired ? 1 : 0;
}
