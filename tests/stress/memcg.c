// SPDX-License-Identifier: GPL-2.0
/*
 * memcg: twheel's memory is bounded and accounted.
 *
 * A child in a cgroup v2 group with a small memory.max adds ids in
 * batches until adds fail: they must fail with ENOMEM or ENOSPC, never
 * push the group past its limit, and hurt nobody outside it (the parent
 * and a wheel outside the group keep working). After the child closes its
 * wheel and exits, the group's memory.current must return to its baseline
 * (within 512 KiB of per-cpu stock), and a second run with a larger limit
 * must return to the same level, so that nothing grows run after run.
 * (The module's own caps, ENOSPC, are behaviour checks: selftests/cap_test.)
 *
 *   memcg [LIMIT_MIB]		(default 16; run as root)
 *
 * Prints TAP and "memcg: limit_bytes=N held=yes|no"; SKIP (exit 4)
 * without the memory controller.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define SLACK		(512 * 1024LL)
#define CHILD_BATCH	4096
#define HOUR_NS		(3600 * NSEC_PER_SEC)

static char group[128];

static void cg_path(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", group, file);
}

static long long cg_read(const char *file)
{
	char p[256];

	cg_path(p, sizeof(p), file);
	return read_ll(p);
}

/* A counter of a flat keyed file such as memory.events, or -1. */
static long long cg_key(const char *file, const char *key)
{
	char p[256];

	cg_path(p, sizeof(p), file);
	return file_key(p, key, ' ');
}

struct child_report {
	long long added;
	int err;		/* first failing op's -errno, or a batch's */
};

/*
 * Fork a child that joins the group and fills a wheel until it fails.
 * Returns its wait status; *rep gets what it saw. Once the group is full
 * any allocation the child makes may call the group's OOM killer on it,
 * so it allocates nothing after the adds start: its op array is touched
 * and its pipe buffer page allocated (by a first byte) beforehand, and it
 * closes the wheel, freeing the group, before it reports.
 */
static int run_child(struct child_report *rep)
{
	struct twheel_op *ops;
	int pfd[2], status;
	char hello;
	pid_t pid;

	memset(rep, 0, sizeof(*rep));
	rep->err = 1;
	if (pipe(pfd))
		return -1;
	ops = malloc(CHILD_BATCH * sizeof(*ops));
	pid = fork();
	if (pid == 0) {
		struct child_report r = { 0, 0 };
		char p[256], me[32];
		uint64_t id = 0;
		int fd, i;

		close(pfd[0]);
		memset(ops, 0, CHILD_BATCH * sizeof(*ops));
		if (write(pfd[1], "h", 1) != 1)
			_exit(11);
		cg_path(p, sizeof(p), "cgroup.procs");
		snprintf(me, sizeof(me), "%d", getpid());
		if (write_file(p, me))
			_exit(10);
		fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
		if (fd < 0) {
			r.err = fd;
		} else {
			while (!r.err) {
				long n;

				for (i = 0; i < CHILD_BATCH; i++)
					op_init(&ops[i], TWHEEL_OP_ADD, id++, 0, 0);
				n = twheel_batch(fd, ops, CHILD_BATCH);
				if (n < 0) {
					r.err = n;
					break;
				}
				for (i = 0; i < n && !r.err; i++) {
					if (ops[i].result)
						r.err = ops[i].result;
					else
						r.added++;
				}
			}
			close(fd);
		}
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
			_exit(11);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &hello, 1) != 1 || read(pfd[0], rep, sizeof(*rep)) != sizeof(*rep))
		rep->err = 1;	/* the child died before reporting */
	close(pfd[0]);
	waitpid(pid, &status, 0);
	free(ops);
	return status;
}

/* Wait until memory.current is within SLACK of @base; the last value read. */
static long long settle(long long base)
{
	long long cur = -1;
	int i;

	for (i = 0; i < 100; i++) {
		cur = cg_read("memory.current");
		if (cur >= 0 && cur <= base + SLACK)
			break;
		sleep_ns(50 * NSEC_PER_MSEC);
	}
	return cur;
}

/* A wheel that works: ids added with short timeouts all come back. */
static int wheel_works(int fd, int n)
{
	struct twheel_event ev[64];
	uint64_t until = mono_ns() + 10000 * NSEC_PER_MSEC;
	int i, got = 0;

	for (i = 0; i < n; i++)
		if (twheel_add(fd, 500000 + i, (i % 10) * NSEC_PER_MSEC))
			return 0;
	while (got < n && mono_ns() < until) {
		ssize_t r = read(fd, ev, sizeof(ev));

		if (r > 0)
			got += r / sizeof(ev[0]);
		else
			sleep_ns(5 * NSEC_PER_MSEC);
	}
	return got == n;
}

int main(int argc, char **argv)
{
	long long limit = (argc > 1 ? atoll(argv[1]) : 16) << 20, base, after1, after2, peak;
	struct child_report rep, rep2;
	char buf[256], val[32];
	int status, status2, outside, held = 1, ok;

	ksft_print_header();
	if (!memcg_ready())
		ksft_exit_skip("no cgroup v2 memory controller\n");
	snprintf(group, sizeof(group), CG_ROOT "/twheel-memcg-%d", getpid());
	if (mkdir(group, 0755))
		ksft_exit_skip("cannot create a cgroup\n");
	ksft_set_plan(7);

	outside = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
	twheel_add(outside, 1, HOUR_NS);
	snprintf(val, sizeof(val), "%lld", limit);
	cg_path(buf, sizeof(buf), "memory.max");
	write_file(buf, val);
	base = cg_read("memory.current");
	ksft_print_msg("group %s, memory.max %lld, baseline memory.current %lld\n", group, limit,
		       base);

	status = run_child(&rep);
	peak = cg_read("memory.peak");
	ksft_print_msg("child added %lld ids, then %s; memory.peak %lld, oom_kill %lld, exit status %#x\n",
		       rep.added, rep.err < 0 ? strerror(-rep.err) : "died", peak,
		       cg_key("memory.events", "oom_kill"), status);
	ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status) &&
			 (rep.err == -ENOMEM || rep.err == -ENOSPC) && rep.added > 0,
			 "adds in a %lld MiB group fail with ENOMEM or ENOSPC, no OOM kill\n", limit >> 20);
	ksft_test_result(peak < 0 || peak <= limit,
			 "the group never exceeded memory.max (peak %lld)\n", peak);
	held &= peak < 0 || peak <= limit;
	after1 = settle(base);
	ksft_test_result(after1 >= 0 && after1 <= base + SLACK,
			 "memory.current back to baseline after close and exit (%lld, baseline %lld)\n",
			 after1, base);
	held &= after1 >= 0 && after1 <= base + SLACK;
	ok = twheel_query(outside, 1, NULL, NULL) == 0 && wheel_works(outside, 1000);
	ksft_test_result(ok, "a wheel outside the group still works\n");
	held &= ok;

	/* Second, larger run: must come back to the same level, not grow. */
	snprintf(val, sizeof(val), "%lld", 4 * limit);
	write_file(buf, val);
	status2 = run_child(&rep2);
	after2 = settle(base);
	ksft_print_msg("second run (memory.max %lld): child added %lld ids, then %s; after exit memory.current %lld\n",
		       4 * limit, rep2.added, rep2.err < 0 ? strerror(-rep2.err) : "died", after2);
	ksft_test_result(WIFEXITED(status2) && !WEXITSTATUS(status2) &&
			 (rep2.err == -ENOMEM || rep2.err == -ENOSPC) && rep2.added > rep.added,
			 "a 4x larger group holds more ids (%lld > %lld) and fails cleanly too\n",
			 rep2.added, rep.added);
	ksft_test_result(after2 >= 0 && after2 <= base + SLACK && llabs(after2 - after1) <= SLACK,
			 "memory returns after the larger run too (%lld vs %lld)\n", after2, after1);
	held &= after2 >= 0 && after2 <= base + SLACK;
	ksft_test_result(kill(getppid(), 0) == 0 && wheel_works(outside, 100),
			 "the parent, init and the outside wheel are alive after both runs\n");
	close(outside);
	if (rmdir(group))
		ksft_print_msg("rmdir %s: %s\n", group, strerror(errno));

	printf("memcg: limit_bytes=%lld held=%s\n", limit, held ? "yes" : "no");
	ksft_finished();
}
