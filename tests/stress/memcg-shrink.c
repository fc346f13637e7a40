// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-shrink: the id index's shrink is charged to the wheel's owner.
 *
 * After a mass expiry the id index is far too big; the table it shrinks
 * to must be allocated by the owner's next read or operation, in the
 * owner's memory cgroup, and never by the expiry itself, which allocates
 * nothing (kmod/dev.c): it runs in whichever task looks at the wheel
 * (poll, read, any command), which may be another process sharing it.
 *
 * A child fills a wheel in group g1 with N ids: N_KEEP live for an hour,
 * the rest due on one tick a few seconds later; the index grows to a
 * table of 4N to 16N bytes (8 bytes a bucket, 2 ids a bucket, or down to
 * 1/2 when a long chain made it grow early: kmod/wheel.c). The
 * child then moves to group g2 (charges made so far stay in g1) and
 * looks at the wheel (a poll(2) that does not wait) until the ids have
 * expired: the expiry is done in those polls, in g2. Its first call
 * after, a read of one event, shrinks the index to fit N_KEEP at a load
 * of 1/4 to 1/2: g2's memory.current must grow by that table, 16 to 32
 * bytes an id kept, and did not while the polls expired the ids. The
 * old table is then moved into the new one, 64 buckets per index
 * operation (a batch of queries), and freed: g1, which paid for it, must
 * drop by its size.
 *
 *   memcg-shrink [N]		(default 2M ids; 256K on a debug kernel)
 *
 * Raises the module's max_user_entries and max_entries_total to N if
 * they are lower (with 1-2 GiB of guest memory they are), and restores
 * them after, also on SIGTERM.
 * Prints TAP and "memcg: shrink_charged=yes|no"; SKIP (exit 4) without
 * the memory controller.
 */
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

/* Charge batching and the child's own small allocations. */
#define SLACK		(512 * 1024LL)
/*
 * What an emptied group may still show: each CPU keeps up to 64 pages
 * charged in its memcg stock until something drains it.
 */
#define STOCK_SLACK	(256 * 1024LL * sysconf(_SC_NPROCESSORS_ONLN) + SLACK)

static char g1[128], g2[128];
/* The module's limits as found, put back at exit and on SIGTERM. */
static unsigned long long saved_user, saved_total;
static int params_raised;

static void restore(void)
{
	if (params_raised) {
		module_param_set("max_user_entries", saved_user);
		module_param_set("max_entries_total", saved_total);
	}
	params_raised = 0;
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static long long cg_current(const char *group)
{
	char p[192];

	snprintf(p, sizeof(p), "%s/memory.current", group);
	return read_ll(p);
}

static int cg_join(const char *group)
{
	char p[192], me[32];

	snprintf(p, sizeof(p), "%s/cgroup.procs", group);
	snprintf(me, sizeof(me), "%d", getpid());
	return write_file(p, me);
}

/* fdinfo's events_waiting, read into the stack: no allocation in g2. */
static long long waiting(int fd)
{
	char path[64], buf[1024], *s;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	s = strstr(buf, "\nevents_waiting:");
	return s ? strtoll(s + strlen("\nevents_waiting:"), NULL, 10) : -1;
}

/* What the child saw, in bytes of memory.current. */
struct report {
	int err;		/* 0, or where it failed (a line number) */
	int late;		/* the adds ended after the deadline: try again */
	int op_err;		/* an add's result, if one failed */
	long long keep, n;
	long long g1_full;	/* g1 with all ids in */
	long long g2_moved;	/* g2 right after the move */
	long long g2_expired;	/* g2 once the child's polls expired them */
	long long g2_shrunk;	/* g2 after the first read */
	long long g1_read;	/* g1 after reading every event */
	long long g1_moved;	/* g1 after the old table is freed */
	double expire_s;
};

#define FAIL(r)	do { (r)->err = __LINE__; return; } while (0)

static void child(struct report *r, long long n, long long keep, int margin)
{
	long long queries = n / 64 * 2 + 4096, i;
	size_t ops_n = n - keep > queries ? n - keep : queries;
	struct twheel_op *ops = calloc(ops_n, sizeof(*ops));
	struct twheel_event *ev = calloc(65536, sizeof(*ev));
	uint64_t t, add_ns, deadline;
	int fd;

	r->n = n;
	r->keep = keep;
	/*
	 * Nothing but the index may be charged to g2: no transparent huge
	 * page (2 MiB at once) for a heap that grows, and no stdio there.
	 */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (!ops || !ev || cg_join(g1))
		FAIL(r);
	/* Every page the child will use is touched here, in g1. */
	memset(ops, 0, ops_n * sizeof(*ops));
	memset(ev, 0, 65536 * sizeof(*ev));
	fd = wheel_new(O_CLOEXEC, 10 * NSEC_PER_MSEC, 3600 * NSEC_PER_SEC, 0);
	if (fd < 0)
		FAIL(r);

	for (i = 0; i < keep; i++)
		op_init(&ops[i], TWHEEL_OP_ADD, i, 0, 0);
	t = mono_ns();
	if (twheel_batch(fd, ops, keep) != keep)
		FAIL(r);
	add_ns = mono_ns() - t;
	/*
	 * One common deadline, after the adds are done: their time guessed
	 * from the first ones' (an underestimate: the index is bigger now)
	 * times @margin.
	 */
	deadline = mono_ns() + margin * add_ns * ((n - keep) / keep + 1) + 2 * NSEC_PER_SEC;
	for (i = 0; i < n - keep; i++)
		op_init(&ops[i], TWHEEL_OP_ADD, keep + i, TWHEEL_OPF_ABSTIME, deadline);
	if (twheel_batch(fd, ops, n - keep) != n - keep)
		FAIL(r);
	for (i = 0; i < n - keep; i++) {
		if (ops[i].result) {
			r->op_err = ops[i].result;
			FAIL(r);
		}
	}
	if (mono_ns() >= deadline) {
		r->late = 1;
		FAIL(r);
	}
	for (i = 0; i < queries; i++)
		op_init(&ops[i], TWHEEL_OP_QUERY, i, 0, 0);
	r->g1_full = cg_current(g1);

	if (cg_join(g2))
		FAIL(r);
	r->g2_moved = cg_current(g2);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		/* The look that expires what is due; poll(2) of one fd allocates nothing. */
		poll(&p, 1, 0);
		if (waiting(fd) >= n - keep)
			break;
		if (mono_ns() > deadline + 600 * NSEC_PER_SEC)
			FAIL(r);
		sleep_ns(50 * NSEC_PER_MSEC);
	}
	r->expire_s = (mono_ns() - deadline) / 1e9;
	r->g2_expired = cg_current(g2);

	if (twheel_read_events(fd, ev, 1) != 1)
		FAIL(r);
	r->g2_shrunk = cg_current(g2);

	for (i = 1; i < n - keep;) {
		int b = twheel_read_events(fd, ev, 65536);

		if (b <= 0)
			FAIL(r);
		i += b;
	}
	r->g1_read = cg_current(g1);
	if (twheel_batch(fd, ops, queries) != queries)
		FAIL(r);
	r->g1_moved = cg_current(g1);
	close(fd);
}

static int run_child(struct report *r, long long n, long long keep, int margin)
{
	int pfd[2], status = -1;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->err = -1;
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (!pid) {
		struct report mine = { 0 };

		close(pfd[0]);
		child(&mine, n, keep, margin);
		_exit(write(pfd[1], &mine, sizeof(mine)) != sizeof(mine));
	}
	close(pfd[1]);
	if (read(pfd[0], r, sizeof(*r)) != sizeof(*r))
		r->err = -1;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return status;
}

int main(int argc, char **argv)
{
	long long def = debug_kernel() ? 256000 : 2000000;
	long long n = arg_or_env(argc, argv, "TWHEEL_SHRINK_IDS", def);
	/* Below 1/16 of n: under 1/8 of the grown table's buckets (n/2 to n). */
	long long keep = n * 6 / 100;
	long long lo, hi, grew, dropped, g1_base, g2_base;
	struct report r;
	int status = 0, charged, freed, margin, ok, i;

	ksft_print_header();
	if (!memcg_ready())
		ksft_exit_skip("no cgroup v2 memory controller\n");
	snprintf(g1, sizeof(g1), CG_ROOT "/twheel-shrink1-%d", getpid());
	snprintf(g2, sizeof(g2), CG_ROOT "/twheel-shrink2-%d", getpid());
	if (mkdir(g1, 0755) || mkdir(g2, 0755))
		ksft_exit_skip("cannot create cgroups\n");
	ksft_set_plan(5);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	atexit(restore);
	saved_user = module_param("max_user_entries", 0);
	saved_total = module_param("max_entries_total", 0);
	params_raised = 1;
	if (saved_user < (unsigned long long)n + 65536)
		module_param_set("max_user_entries", n + 65536);
	if (saved_total < (unsigned long long)n + 65536)
		module_param_set("max_entries_total", n + 65536);
	g1_base = cg_current(g1);
	g2_base = cg_current(g2);

	/* A loaded host may make the adds outlast the deadline: widen it. */
	for (margin = 3; margin <= 27; margin *= 3) {
		status = run_child(&r, n, keep, margin);
		if (!r.late)
			break;
		ksft_print_msg("the adds outlasted their deadline; again with a margin of %d\n",
			       margin * 3);
	}
	ok = WIFEXITED(status) && !WEXITSTATUS(status) && !r.err;
	ksft_test_result(ok, "child filled, expired and read %lld ids%s\n", n,
			 ok ? "" : " (it failed; see its line and errno below)");
	if (!ok)
		ksft_print_msg("child failed at line %d of memcg-shrink.c, errno %s\n", r.err,
			       strerror(-r.op_err));
	ksft_print_msg("g1 with %lld ids: %lld KiB; g2: %lld KiB after the move, %lld KiB once the child's polls expired %lld ids (%.1f s after their deadline)\n",
		       n, r.g1_full >> 10, r.g2_moved >> 10, r.g2_expired >> 10, n - keep,
		       r.expire_s);
	ksft_test_result(ok && r.g2_expired - r.g2_moved <= SLACK,
			 "the expiry (in the owner's own polls) charged nothing to its group (%+lld KiB)\n",
			 (r.g2_expired - r.g2_moved) / 1024);

	grew = r.g2_shrunk - r.g2_expired;
	lo = 16 * keep;
	hi = 32 * keep + SLACK;
	charged = ok && grew >= lo * 9 / 10 && grew <= hi;
	ksft_print_msg("the first read after the expiry: g2 %+lld KiB; a table for %lld ids is %lld to %lld KiB\n",
		       grew / 1024, keep, lo / 1024, (32 * keep) / 1024);
	ksft_test_result(charged, "the shrunk index is charged to the owner's group at its next call\n");

	dropped = r.g1_read - r.g1_moved;
	freed = ok && dropped >= 4 * n * 9 / 10 && dropped <= 16 * n + SLACK;
	ksft_print_msg("the old table moved and freed: g1 %+lld KiB (a table for %lld ids is %lld to %lld KiB)\n",
		       -dropped / 1024, n, 4 * n / 1024, 16 * n / 1024);
	ksft_test_result(freed, "the old table is uncharged from the group that paid for it\n");

	for (i = 0; i < 100 && (cg_current(g1) > g1_base + STOCK_SLACK ||
				cg_current(g2) > g2_base + STOCK_SLACK); i++)
		sleep_ns(50 * NSEC_PER_MSEC);
	ksft_test_result(cg_current(g1) <= g1_base + STOCK_SLACK &&
			 cg_current(g2) <= g2_base + STOCK_SLACK,
			 "both groups back to their baseline after close and exit (%lld and %lld KiB)\n",
			 cg_current(g1) >> 10, cg_current(g2) >> 10);
	rmdir(g1);
	rmdir(g2);
	restore();
	printf("memcg: shrink_charged=%s\n", charged ? "yes" : "no");
	ksft_finished();
}
