// SPDX-License-Identifier: GPL-2.0
/*
 * touchbench: what a refresh through the touch table costs the process,
 * against the cheapest system call, natively on the host.
 *
 * The helper is libtwheel's twheel_touch(): a vDSO clock_gettime() and
 * one store into the table. Here the table is 8 MiB of shared anonymous
 * memory (2^20 slots, the table of a wheel of a million ids) rather than
 * a wheel's: the helper cannot tell the difference, and the host need not
 * load the module. Slots are picked at random, as packets of a million
 * connections would pick them, so each store misses the nearer caches.
 *
 * The null system call is getppid(2) through syscall(2), lmbench's "null
 * syscall"; an ioctl that fails with ENOTTY on /dev/null (the baseline of
 * bench/device/devbench in the VM: fd lookup and ioctl dispatch) is printed too.
 *
 * Each figure is the median of REPS timings of a loop, in thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID, which leaves out time preempted on a shared
 * machine); the parts of the helper are printed on '#' lines:
 *   touchbench: helper_ns=X null_syscall_ns=Y
 *   # touchbench: rng_ns=.. clock_ns=.. store_ns=.. enotty_ioctl_ns=.. ...
 * rng is the loop that picks slots, alone; clock the vDSO read alone;
 * store a random store with a fixed stamp (twheel_touch_at()).
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "twheel_test.h"

#define SLOTS		(1U << 20)	/* 8 MiB of slots */
#define TOUCHES		10000000L
#define SYSCALLS	1000000L
#define REPS		7

static struct twheel_touch touch;
static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* xorshift64: a few cycles, so the loop measures the touch, not the pick. */
static inline uint32_t pick(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s & (SLOTS - 1);
}

static double run_rng(void)
{
	uint64_t s = 88172645463325252ULL, acc = 0, t = cpu_ns();
	long i;

	for (i = 0; i < TOUCHES; i++)
		acc += pick(&s);
	t = cpu_ns() - t;
	sink = acc;
	return (double)t / TOUCHES;
}

static double run_clock(void)
{
	uint64_t acc = 0, t = cpu_ns();
	long i;

	for (i = 0; i < TOUCHES; i++)
		acc += clock_ns(CLOCK_MONOTONIC);
	t = cpu_ns() - t;
	sink = acc;
	return (double)t / TOUCHES;
}

static double run_store(void)
{
	uint64_t s = 88172645463325252ULL, t = cpu_ns();
	long i;

	for (i = 0; i < TOUCHES; i++)
		twheel_touch_at(&touch, pick(&s), i);
	return (double)(cpu_ns() - t) / TOUCHES;
}

static double run_helper(void)
{
	uint64_t s = 88172645463325252ULL, t = cpu_ns();
	long i;

	for (i = 0; i < TOUCHES; i++)
		twheel_touch(&touch, pick(&s));
	return (double)(cpu_ns() - t) / TOUCHES;
}

static double run_getppid(void)
{
	uint64_t t = cpu_ns();
	long i;

	for (i = 0; i < SYSCALLS; i++)
		syscall(SYS_getppid);
	return (double)(cpu_ns() - t) / SYSCALLS;
}

static int devnull;

static double run_enotty(void)
{
	uint64_t t = cpu_ns();
	long i;

	for (i = 0; i < SYSCALLS; i++)
		ioctl(devnull, _IO(TWHEEL_IOC_MAGIC, 0x7f), 0);
	return (double)(cpu_ns() - t) / SYSCALLS;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct figure {
	const char *name;
	double (*run)(void);
	double v[REPS];
};

int main(void)
{
	struct figure fig[] = {
		{ .name = "rng", .run = run_rng },
		{ .name = "clock", .run = run_clock },
		{ .name = "store", .run = run_store },
		{ .name = "helper", .run = run_helper },
		{ .name = "null_syscall", .run = run_getppid },
		{ .name = "enotty_ioctl", .run = run_enotty },
	};
	const unsigned int nfig = sizeof(fig) / sizeof(fig[0]);
	unsigned int i, r;
	uint64_t wall = mono_ns();

	touch.slots = mmap(NULL, SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (touch.slots == MAP_FAILED || devnull < 0) {
		perror("touchbench: setup");
		return 1;
	}
	touch.nr_slots = SLOTS;
	touch.clockid = CLOCK_MONOTONIC;
	touch.map_len = SLOTS * sizeof(uint64_t);
	/* Fault the table in: a server's table is touched all the time. */
	memset(touch.slots, 0, touch.map_len);

	/* Interleaved, so a burst of load on the machine hits every figure. */
	for (r = 0; r < REPS; r++)
		for (i = 0; i < nfig; i++)
			fig[i].v[r] = fig[i].run();
	for (i = 0; i < nfig; i++)
		qsort(fig[i].v, REPS, sizeof(double), cmp_double);

	printf("touchbench: helper_ns=%.1f null_syscall_ns=%.1f\n",
	       fig[3].v[REPS / 2], fig[4].v[REPS / 2]);
	printf("# touchbench:");
	for (i = 0; i < nfig; i++)
		printf(" %s_ns=%.1f", fig[i].name, fig[i].v[REPS / 2]);
	printf("\n# touchbench: min..max of %d:", REPS);
	for (i = 0; i < nfig; i++)
		printf(" %s=%.1f..%.1f", fig[i].name, fig[i].v[0], fig[i].v[REPS - 1]);
	printf("\n# touchbench: wall %.1f s\n", (mono_ns() - wall) / 1e9);
	return 0;
}
