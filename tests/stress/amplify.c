// SPDX-License-Identifier: GPL-2.0
/*
 * amplify: the kernel CPU a user causes is charged to its own cgroup.
 *
 * A touch costs its user one store and the kernel one look and re-arm
 * per deadline: the expiry work does the rest. A child in a cgroup v2
 * group sets up WHEELS wheels of SLOTS touch-bound ids each, with a
 * 100 ms timeout, while a thread of it stores a fresh stamp into every
 * slot four times a timeout (and the child adds again any id that
 * expired all the same); then, with the group's cpu.max at 20% of one
 * CPU, it goes on so for SECONDS. (The review's scenario had 16384 ids a
 * wheel and a storer that never slept; 4096 ids take less time to set up
 * in a TCG guest, and a storer that sleeps makes the case sharper.)
 * Measured over that window:
 *
 *  - user_cpu_ms: the child's own CPU (getrusage, user and system);
 *  - kernel_work_ms: the CPU of kernel threads outside the child's group
 *    (/proc/PID/schedstat, or utime + stime of /proc/PID/stat, of every
 *    PF_KTHREAD task whose /proc/PID/cgroup is not the group), less what
 *    the same threads used in a quiet window of the same length before
 *    the wheels existed: the work the wheels caused that nobody's limit
 *    covers;
 *  - cgroup_cpu_ms: usage_usec of the group's cpu.stat, everything the
 *    group was charged (the child, and the wheels' work where it runs in
 *    the group).
 *
 * Passes if kernel_work_ms is at most twice user_cpu_ms, and the wheels
 * did re-arm ids (fdinfo touch_rearms), so that the run is no vacuous one.
 * A guest whose host stops it charges the stop to whatever ran: a group
 * charged more than twice what its cpu.max allows says so, and the run
 * skips (QEMU's -icount, where guest time counts instructions, has none).
 *
 *   amplify [SECONDS]		(SECONDS: $TWHEEL_STRESS_SECS, else 5; run as root)
 *				(SLOTS: $TWHEEL_AMPLIFY_SLOTS, else 4096)
 *
 * Prints TAP and "amplify: user_cpu_ms=U kernel_work_ms=K ratio=R"; SKIP
 * (exit 4) without cgroup v2's cpu controller.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define WHEELS		16
/* Ids per wheel: at most the scenario's 16384, by default what a TCG guest keeps alive. */
#define MAX_SLOTS	16384
#define SLOTS		4096
#define TICK_NS		NSEC_PER_MSEC
#define TIMEOUT_NS	(100 * NSEC_PER_MSEC)
/*
 * cpu.max: 20% of one CPU, in periods short against the timeout, so
 * that a throttled storer still stamps each slot within every timeout.
 */
#define QUOTA		"2000 10000"
#define QUOTA_SHARE	0.2
#define MAX_THREADS	8192
#define PF_KTHREAD	0x00200000

static char group[128];
static uint32_t slots;

/* ---- kernel threads' CPU, by cgroup ---- */

struct kthreads {
	int n;
	int pid[MAX_THREADS];
	uint64_t ns[MAX_THREADS];
};

/* CPU time of task @pid in ns, or -1; *@kthread and *@in_group set. */
static long long task_cpu(int pid, int *kthread, int *in_group)
{
	char path[64], buf[1024], *s;
	unsigned long long utime, stime, flags, run;
	const char *rel = group + strlen(CG_ROOT);

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	s = strrchr(buf, ')');
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %llu %*u %*u %*u %*u %llu %llu",
			 &flags, &utime, &stime) != 3)
		return -1;
	*kthread = !!(flags & PF_KTHREAD);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	*in_group = read_file(path, buf, sizeof(buf)) > 0 && (s = strstr(buf, "0::")) &&
		    !strncmp(s + 3, rel, strlen(rel)) && s[3 + strlen(rel)] == '\n';
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (read_file(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%llu", &run) == 1)
		return run;
	return (utime + stime) * (NSEC_PER_SEC / sysconf(_SC_CLK_TCK));
}

/* Record the CPU of every kernel thread outside the group. */
static void kthreads_snap(struct kthreads *k)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	k->n = 0;
	while (d && (de = readdir(d)) && k->n < MAX_THREADS) {
		int pid = atoi(de->d_name), kthread, in_group;
		long long ns;

		if (pid <= 0)
			continue;
		ns = task_cpu(pid, &kthread, &in_group);
		if (ns < 0 || !kthread || in_group)
			continue;
		k->pid[k->n] = pid;
		k->ns[k->n++] = ns;
	}
	if (d)
		closedir(d);
}

/*
 * CPU the kernel threads outside the group used since @before, in ns: a
 * thread new since then counts from 0, one that moved into the group or
 * went away counts for nothing.
 */
static uint64_t kthreads_since(const struct kthreads *before)
{
	static struct kthreads now;
	uint64_t sum = 0;
	int i, j;

	kthreads_snap(&now);
	for (i = 0; i < now.n; i++) {
		uint64_t base = 0;

		for (j = 0; j < before->n; j++)
			if (before->pid[j] == now.pid[i])
				base = before->ns[j];
		if (now.ns[i] > base)
			sum += now.ns[i] - base;
	}
	return sum;
}

/* ---- the group ---- */

static long long cg_usage_us(void)
{
	char p[256], buf[1024], *s;

	snprintf(p, sizeof(p), "%s/cpu.stat", group);
	if (read_file(p, buf, sizeof(buf)) <= 0 || !(s = strstr(buf, "usage_usec ")))
		return -1;
	return strtoll(s + 11, NULL, 10);
}

static int group_limit(const char *max)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/cpu.max", group);
	return write_file(p, max);
}

/* cgroup v2 with the cpu controller for children, and a group with cpu.max. */
static bool group_make(void)
{
	char buf[256];

	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL);
	}
	if (read_file(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 || !strstr(buf, "cpu"))
		return false;
	write_file(CG_ROOT "/cgroup.subtree_control", "+cpu");
	snprintf(group, sizeof(group), CG_ROOT "/twheel-amplify-%d", getpid());
	return !mkdir(group, 0755) && !group_limit(QUOTA);
}

/* Remove the group once the child's wheels and their work have left it. */
static void group_remove(void)
{
	int i;

	for (i = 0; i < 100 && rmdir(group); i++)
		sleep_ns(50 * NSEC_PER_MSEC);
	if (i == 100)
		ksft_print_msg("rmdir %s: %s\n", group, strerror(errno));
}

/* ---- the child: wheels in the group, and stamps ---- */

struct report {
	int err;		/* setup failure, -errno */
	uint64_t cpu_ns;	/* own CPU over the storing window */
	uint64_t rearms;	/* fdinfo touch_rearms, summed over the window */
	uint64_t sweeps;	/* passes over all slots of all wheels */
	uint64_t readds;	/* ids that expired and were added again */
};

static uint64_t rusage_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static uint64_t rearms(const int *fds)
{
	uint64_t sum = 0;
	int w;

	for (w = 0; w < WHEELS; w++)
		sum += fdinfo_get(fds[w], "touch_rearms");
	return sum;
}

/* The child's tables, and how many of them are mapped: the storer's work. */
static struct twheel_touch tables[WHEELS];
static atomic_int mapped, storing = 1;
static atomic_ullong sweeps;

/*
 * Store a fresh stamp into every slot of every mapped table four times a
 * timeout, until told to stop: what keeps the ids alive, for as little of
 * the child's CPU as it can.
 */
static void *storer(void *arg)
{
	(void)arg;
	while (atomic_load_explicit(&storing, memory_order_relaxed)) {
		int w, n = atomic_load(&mapped);
		uint64_t now = mono_ns();
		uint32_t i;

		for (w = 0; w < n; w++)
			for (i = 0; i < slots; i++)
				twheel_touch_at(&tables[w], i, now);
		atomic_fetch_add(&sweeps, 1);
		sleep_ns(TIMEOUT_NS / 4);
	}
	return NULL;
}

/*
 * Add again, bound to their slots, the ids of @fd that expired anyway (a
 * stall of the guest longer than the timeout outlives any stamp): the
 * load stays what it was, at the cost of the child's own system calls.
 */
static uint64_t readd(int fd, struct twheel_op *ops)
{
	static struct twheel_event ev[256];
	uint64_t n = 0;
	int got, i;

	while ((got = twheel_read_events(fd, ev, 256)) > 0) {
		for (i = 0; i < got; i++) {
			twheel_prep_add(&ops[i], ev[i].id, TWHEEL_TIMEOUT_DEFAULT);
			twheel_prep_bind(&ops[i], ev[i].id);
		}
		twheel_batch(fd, ops, got);
		n += got;
	}
	return n;
}

/*
 * In the group, with the storer running from the start (so that no id
 * expires untouched while the others are added): set up the wheels, map
 * their tables and add an id bound to each slot; say ready, and go on
 * storing for @secs.
 */
static void child(int to_parent, uint64_t secs)
{
	static struct twheel_op ops[MAX_SLOTS];
	struct twheel_setup_args sa = {
		.tick_ns = TICK_NS, .default_timeout_ns = TIMEOUT_NS,
		.clockid = CLOCK_MONOTONIC, .flags = TWHEEL_SETUPF_TOUCH, 
	};
	struct report r = { 0, 0, 0, 0, 0 };
	int fds[WHEELS], w, ret = 0;
	uint64_t start, r0, s0, until;
	char p[256], me[32];
	pthread_t t;
	uint32_t i;

	sa.touch_slots = slots;
	snprintf(p, sizeof(p), "%s/cgroup.procs", group);
	snprintf(me, sizeof(me), "%d", getpid());
	if (write_file(p, me) || pthread_create(&t, NULL, storer, NULL))
		ret = -EPERM;
	for (i = 0; i < slots; i++) {
		twheel_prep_add(&ops[i], i, TWHEEL_TIMEOUT_DEFAULT);
		twheel_prep_bind(&ops[i], i);
	}
	for (w = 0; w < WHEELS && !ret; w++) {
		fds[w] = twheel_open(O_CLOEXEC | O_NONBLOCK);
		ret = fds[w] < 0 ? fds[w] : twheel_setup_params(fds[w], &sa);
		if (!ret)
			ret = twheel_touch_map(fds[w], slots, CLOCK_MONOTONIC, &tables[w]);
		if (ret)
			break;
		atomic_fetch_add(&mapped, 1);
		if (twheel_batch(fds[w], ops, slots) != (int)slots)
			ret = -EIO;
	}
	r.err = ret;
	start = rusage_ns();
	r0 = ret ? 0 : rearms(fds);
	s0 = atomic_load(&sweeps);
	if (write(to_parent, &r, sizeof(r)) != sizeof(r) || ret)
		_exit(ret ? 0 : 1);

	until = mono_ns() + secs * NSEC_PER_SEC;
	while (mono_ns() < until) {
		for (w = 0; w < WHEELS; w++)
			r.readds += readd(fds[w], ops);
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	r.cpu_ns = rusage_ns() - start;
	r.rearms = rearms(fds) - r0;
	r.sweeps = atomic_load(&sweeps) - s0;
	if (write(to_parent, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_STRESS_SECS", 5), quiet_ns, work_ns;
	static struct kthreads quiet, busy;
	int up[2], status, ok;
	long long cg0, cg1;
	struct report r;
	double ratio;
	pid_t pid;

	ksft_print_header();
	slots = getenv("TWHEEL_AMPLIFY_SLOTS") ? strtoul(getenv("TWHEEL_AMPLIFY_SLOTS"), NULL, 0) : SLOTS;
	if (!slots || slots > MAX_SLOTS)
		ksft_exit_fail_msg("TWHEEL_AMPLIFY_SLOTS must be 1 to %d\n", MAX_SLOTS);
	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (access(TWHEEL_DEVICE, F_OK))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	if (!group_make())
		ksft_exit_skip("no cgroup v2 cpu controller, or no group with cpu.max\n");
	ksft_set_plan(3);

	/* What kernel threads outside the group do anyway, over as long. */
	kthreads_snap(&quiet);
	sleep_ns(secs * NSEC_PER_SEC);
	quiet_ns = kthreads_since(&quiet);

	/* Setup in the group at full speed; the limit holds from the window on. */
	if (pipe(up) || group_limit("max"))
		ksft_exit_fail_msg("pipe or cpu.max: %s\n", strerror(errno));
	pid = fork();
	if (!pid) {
		close(up[0]);
		child(up[1], secs);
	}
	close(up[1]);
	if (read(up[0], &r, sizeof(r)) != sizeof(r) || r.err) {
		ksft_test_result_fail("the child set up %d wheels of %d touch-bound ids: %s\n",
				      WHEELS, slots, strerror(r.err ? -r.err : EPIPE));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		group_remove();
		ksft_exit_fail();
	}
	ksft_test_result_pass("the child set up %d wheels of %d touch-bound ids in %s (cpu.max %s)\n",
			      WHEELS, slots, group, QUOTA);
	group_limit(QUOTA);
	kthreads_snap(&busy);
	cg0 = cg_usage_us();
	if (read(up[0], &r, sizeof(r)) != sizeof(r))
		r.cpu_ns = 0;
	work_ns = kthreads_since(&busy);
	cg1 = cg_usage_us();
	waitpid(pid, &status, 0);
	group_remove();

	if (cg1 - cg0 > 2 * QUOTA_SHARE * secs * 1000000)
		ksft_exit_skip("the group was charged %lld ms in %llu s under a cpu.max of %s: the guest's clock was disturbed\n",
			       (cg1 - cg0) / 1000, (unsigned long long)secs, QUOTA);
	work_ns = work_ns > quiet_ns ? work_ns - quiet_ns : 0;
	ratio = r.cpu_ns ? (double)work_ns / r.cpu_ns : 0;
	ksft_print_msg("%llu s: %llu sweeps of %d stamps, %llu re-arms, %llu ids added again; kernel threads outside the group %llu ms (%llu ms of it in the quiet window before); the group charged %lld ms\n",
		       (unsigned long long)secs, (unsigned long long)r.sweeps, WHEELS * slots,
		       (unsigned long long)r.rearms, (unsigned long long)r.readds,
		       (unsigned long long)((work_ns + quiet_ns) / NSEC_PER_MSEC),
		       (unsigned long long)(quiet_ns / NSEC_PER_MSEC), (cg1 - cg0) / 1000);
	ksft_test_result(r.cpu_ns && r.rearms >= slots,
			 "the stamps kept ids alive: %llu re-arms\n", (unsigned long long)r.rearms);
	ok = r.cpu_ns && ratio <= 2.0;
	ksft_test_result(ok, "kernel work outside the group %.2f times the child's CPU (at most 2)\n",
			 ratio);
	printf("amplify: user_cpu_ms=%llu kernel_work_ms=%llu ratio=%.2f\n",
	       (unsigned long long)(r.cpu_ns / NSEC_PER_MSEC),
	       (unsigned long long)(work_ns / NSEC_PER_MSEC), ratio);
	printf("amplify: wheels=%d ids=%d timeout_ms=%llu secs=%llu rearms=%llu cgroup_cpu_ms=%lld\n",
	       WHEELS, WHEELS * slots, (unsigned long long)(TIMEOUT_NS / NSEC_PER_MSEC),
	       (unsigned long long)secs, (unsigned long long)r.rearms, (cg1 - cg0) / 1000);
	ksft_finished();
}
