// SPDX-License-Identifier: GPL-2.0
/*
 * peruser: one user cannot take what the module allows everybody.
 *
 * As root, lower the module's max_user_entries to a small N. Then, each
 * in a child that dropped to its own unprivileged uid:
 *  - user A fills its limit across two wheels: N/2 ids that expire at
 *    once and wait unread in the first (undelivered events count), the
 *    rest live in the second; the add past N fails with ENOSPC on either
 *    wheel, though neither wheel is near its own cap;
 *  - user B still adds;
 *  - root reads both users' counts in the fdinfo of their wheels
 *    (uid:, user_entries:);
 *  - the global cap is still a last net: with max_entries_total set just
 *    above what A and B hold and max_user_entries back up, user C gets
 *    exactly what is left, then ENOSPC;
 *  - A's count drops when it closes a wheel and when it reads its
 *    events, and A can add again up to N;
 *  - one person's many uids are one user: user D ("alice") holds N/4 ids
 *    on the host and makes a user namespace in which root maps NS_UIDS
 *    uids of a subordinate range (as newuidmap does from /etc/subuid);
 *    processes with each of those uids, together, get exactly the rest
 *    of D's N, then ENOSPC, while B, outside, still adds; their wheels'
 *    fdinfo names D as the owner (owner_uid:, owner_entries:) as root
 *    sees it, while inside the namespace it shows no level above the
 *    namespace's own users, so that a tenant never reads the total of
 *    every namespace D made; closing them gives D's entries back.
 * Module parameters, the device's mode and the sysctl that lets users
 * make user namespaces (Debian's kernel.unprivileged_userns_clone) are
 * restored after, also on SIGTERM.
 *
 *   peruser [N]		(default 1000; run as root)
 *
 * Prints TAP and "peruser: limit=N a_held=yes|no b_ok=yes|no
 * ns_held=yes|no|skip" (skip: no user namespaces in this kernel).
 */
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define UID_A		4201
#define UID_B		4202
#define UID_C		4203
#define UID_D		4204		/* owns the user namespace */
#define NS_UIDS		4		/* uids 0.. in it, mapped from NS_HOST_UID.. */
#define NS_HOST_UID	300000
#define USERNS_CLONE	"/proc/sys/kernel/unprivileged_userns_clone"
#define MAX_WHEELS	4
#define HOUR_NS		(3600 * NSEC_PER_SEC)

/* What the run changes, and puts back at exit and on SIGTERM. */
static unsigned long long saved_user, saved_total;
static int params_saved;
static mode_t saved_mode;
static int mode_changed;
static int userns_clone_changed;
static pid_t ns_keeper;

static void restore(void)
{
	if (params_saved) {
		module_param_set("max_user_entries", saved_user);
		module_param_set("max_entries_total", saved_total);
	}
	if (mode_changed)
		chmod(TWHEEL_DEVICE, saved_mode);
	if (userns_clone_changed)
		write_file(USERNS_CLONE, "0");
	params_saved = mode_changed = userns_clone_changed = 0;
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * An agent: a child with its own uid that runs the parent's commands on
 * its wheels, one at a time, and answers each.
 */
struct cmd {
	char op;		/* 'o'pen, 'a'dd, 'w'ait, 'r'ead, 'c'lose, 'p'id, 'f'dinfo, e'x'it */
	int wheel;		/* index of the agent's wheel */
	uint64_t count;		/* ids to add; events to wait for */
	uint64_t timeout_ns;
};

struct reply {
	long long ok;		/* ids added, events read, the fd opened, the pid */
	int err;		/* first failure, -errno */
	long long uid, owner;	/* 'f': uid: and owner_uid: of the wheel's own fdinfo */
};

struct agent {
	pid_t pid;
	int to, from;
	int fd[MAX_WHEELS];	/* the agent's fd numbers, for its fdinfo */
};

static void agent_loop(int in, int out, uid_t uid)
{
	int fds[MAX_WHEELS], nfd = 0;
	struct twheel_op *ops = NULL;
	struct twheel_event ev[256];
	uint64_t next_id = 1;
	struct cmd c;

	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		_exit(20);
	/*
	 * A change of uid makes the process non-dumpable, and before 5.14
	 * that leaves /proc/self/fdinfo root's, 0500: the agent could not
	 * read its own wheels' counts (5.10 answered -1).
	 */
	prctl(PR_SET_DUMPABLE, 1);
	while (read(in, &c, sizeof(c)) == sizeof(c)) {
		struct reply r = { 0, 0, 0, 0 };
		uint64_t i;

		switch (c.op) {
		case 'o':
			r.ok = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
			if (r.ok < 0)
				r.err = r.ok;
			else
				fds[nfd++] = r.ok;
			break;
		case 'a':
			ops = realloc(ops, c.count * sizeof(*ops));
			r.ok = fill_ids(fds[c.wheel], ops, c.count, &next_id, c.timeout_ns, &r.err);
			break;
		case 'w':
			for (i = 0; i < 1000; i++) {
				/* Expired by whoever looks: a poll that does not wait. */
				dev_look(fds[c.wheel]);
				if (fdinfo_get(fds[c.wheel], "events_waiting") >= (long long)c.count)
					break;
				sleep_ns(10 * NSEC_PER_MSEC);
			}
			r.ok = fdinfo_get(fds[c.wheel], "events_waiting");
			break;
		case 'r': {
			int fl = fcntl(fds[c.wheel], F_GETFL), n;

			fcntl(fds[c.wheel], F_SETFL, fl | O_NONBLOCK);
			while ((n = twheel_read_events(fds[c.wheel], ev, 256)) > 0)
				r.ok += n;
			fcntl(fds[c.wheel], F_SETFL, fl);
			break;
		}
		case 'c':
			r.err = close(fds[c.wheel]) ? -errno : 0;
			break;
		case 'p':
			r.ok = getpid();
			break;
		case 'f':
			r.ok = fdinfo_get(fds[c.wheel], "owner_entries");
			r.uid = fdinfo_get(fds[c.wheel], "uid");
			r.owner = fdinfo_get(fds[c.wheel], "owner_uid");
			break;
		case 'x':
			_exit(0);
		}
		if (write(out, &r, sizeof(r)) != sizeof(r))
			_exit(21);
	}
	_exit(0);
}

static int agent_start(struct agent *a, uid_t uid)
{
	int down[2], up[2];

	memset(a, 0, sizeof(*a));
	if (pipe(down) || pipe(up))
		return -1;
	a->pid = fork();
	if (a->pid < 0)
		return -1;
	if (!a->pid) {
		close(down[1]);
		close(up[0]);
		agent_loop(down[0], up[1], uid);
	}
	close(down[0]);
	close(up[1]);
	a->to = down[1];
	a->from = up[0];
	return 0;
}

static struct reply agent_do(struct agent *a, char op, int wheel, uint64_t count,
			     uint64_t timeout_ns)
{
	struct cmd c = { op, wheel, count, timeout_ns };
	struct reply r = { 0, -EPIPE, 0, 0 };

	if (write(a->to, &c, sizeof(c)) != sizeof(c) || read(a->from, &r, sizeof(r)) != sizeof(r))
		return (struct reply){ 0, -EPIPE, 0, 0 };
	if (op == 'o' && !r.err)
		a->fd[wheel] = r.ok;
	return r;
}

static void agent_end(struct agent *a)
{
	struct cmd c = { 'x', 0, 0, 0 };

	if (!a->pid)
		return;
	if (write(a->to, &c, sizeof(c)) != sizeof(c))
		kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	close(a->to);
	close(a->from);
	a->pid = 0;
}

/* A numeric field of another process's fdinfo, as root sees it; or -1. */
static long long fdinfo_of(pid_t pid, int fd, const char *field)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	return file_key(path, field, ':');
}

/*
 * NS_UIDS agents with the uids 0.. of a user namespace that UID_D makes,
 * mapped by root from NS_HOST_UID on. A keeper process becomes UID_D,
 * makes the namespace, waits for the maps and forks the agents, each of
 * which takes its uid inside; their pids are asked for once they run.
 * 0, or -errno (-EINVAL: the kernel has no user namespaces).
 */
static int userns_agents_start(struct agent *ag)
{
	int down[NS_UIDS][2], up[NS_UIDS][2], made[2], mapped[2], i, err = 0;
	char path[64], map[64];
	pid_t keeper;

	memset(ag, 0, NS_UIDS * sizeof(*ag));
	if (pipe(made) || pipe(mapped))
		return -errno;
	for (i = 0; i < NS_UIDS; i++)
		if (pipe(down[i]) || pipe(up[i]))
			return -errno;
	keeper = fork();
	if (keeper < 0)
		return -errno;
	if (!keeper) {
		char go;

		for (i = 0; i < NS_UIDS; i++) {
			close(down[i][1]);
			close(up[i][0]);
		}
		if (setgroups(0, NULL) || setgid(UID_D) || setuid(UID_D))
			_exit(20);
		prctl(PR_SET_DUMPABLE, 1);
		err = unshare(CLONE_NEWUSER) ? -errno : 0;
		if (write(made[1], &err, sizeof(err)) != sizeof(err) || err ||
		    read(mapped[0], &go, 1) != 1)
			_exit(0);
		for (i = 0; i < NS_UIDS; i++) {
			if (fork() == 0)
				agent_loop(down[i][0], up[i][1], i);
			close(down[i][0]);
			close(up[i][1]);
		}
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	for (i = 0; i < NS_UIDS; i++) {
		close(down[i][0]);
		close(up[i][1]);
		ag[i].to = down[i][1];
		ag[i].from = up[i][0];
	}
	if (read(made[0], &err, sizeof(err)) != sizeof(err))
		err = -EPIPE;
	if (!err) {
		snprintf(map, sizeof(map), "0 %d %d\n", NS_HOST_UID, NS_UIDS);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", keeper);
		err = write_file(path, map);
		snprintf(path, sizeof(path), "/proc/%d/gid_map", keeper);
		err = err ?: write_file(path, map);
	}
	if (write(mapped[1], "m", 1) != 1 && !err)
		err = -EPIPE;
	for (i = 0; i < NS_UIDS && !err; i++) {
		struct reply r = agent_do(&ag[i], 'p', 0, 0, 0);

		ag[i].pid = r.ok;
		err = r.err;
	}
	close(made[0]);
	close(made[1]);
	close(mapped[0]);
	close(mapped[1]);
	ns_keeper = keeper;
	if (err) {
		for (i = 0; i < NS_UIDS; i++) {
			close(ag[i].to);
			close(ag[i].from);
			ag[i].pid = 0;
		}
		waitpid(keeper, NULL, 0);
		ns_keeper = 0;
	}
	return err;
}

/* The tests of userns_run(), named in its skips. */
static const char *const ns_tests[5] = {
	"the uids of D's namespace together get what D's limit leaves",
	"root reads the namespace's uid 0",
	"inside, fdinfo shows uid",
	"user B, outside, still adds",
	"closing the namespace's wheels gives D back its entries",
};

/*
 * D holds N/4 ids; the uids of D's namespace add N/2 each, in turn:
 * together they must get exactly the rest of D's N. Returns 1 if every
 * check held, 0 if not, -1 if the kernel makes no user namespaces.
 */
static int userns_run(struct agent *b, uint64_t n)
{
	uint64_t quarter = n / 4, got = 0;
	long long per[NS_UIDS], ruid, rowner, rown, ruser, left;
	struct agent d, ns[NS_UIDS];
	int i, ret, all_nospc = 1, ok[5];
	struct reply r;

	/* Debian's kernels let users make user namespaces only with this set. */
	if (read_ll(USERNS_CLONE) == 0) {
		write_file(USERNS_CLONE, "1");
		userns_clone_changed = 1;
	}
	agent_start(&d, UID_D);
	agent_do(&d, 'o', 0, 0, 0);
	r = agent_do(&d, 'a', 0, quarter, HOUR_NS);
	ret = userns_agents_start(ns);
	if (ret) {
		for (i = 0; i < 5; i++)
			ksft_test_result_skip("%s: no user namespace of %d uids owned by D: %s\n",
					      ns_tests[i], NS_UIDS, strerror(-ret));
		agent_end(&d);
		return ret == -EINVAL || ret == -EPERM || ret == -ENOSPC ? -1 : 0;
	}

	for (i = 0; i < NS_UIDS; i++) {
		agent_do(&ns[i], 'o', 0, 0, 0);
		r = agent_do(&ns[i], 'a', 0, n / 2, HOUR_NS);
		per[i] = r.ok;
		got += r.ok;
		if (r.ok < (long long)(n / 2) && r.err != -ENOSPC)
			all_nospc = 0;
	}
	r = agent_do(&ns[0], 'a', 0, 1, HOUR_NS);
	ksft_print_msg("D holds %llu on the host; its namespace's uids 0..%d got %lld, %lld, %lld, %lld of %llu each, then %d\n",
		       (unsigned long long)quarter, NS_UIDS - 1, per[0], per[1], per[2], per[3],
		       (unsigned long long)n / 2, r.err);
	ok[0] = got == n - quarter && all_nospc && r.err == -ENOSPC;
	ksft_test_result(ok[0],
			 "the %d uids of D's namespace together get what D's limit leaves (%llu of %llu), then ENOSPC\n",
			 NS_UIDS, (unsigned long long)got, (unsigned long long)(n - quarter));

	ruid = fdinfo_of(ns[0].pid, ns[0].fd[0], "uid");
	ruser = fdinfo_of(ns[0].pid, ns[0].fd[0], "user_entries");
	rowner = fdinfo_of(ns[0].pid, ns[0].fd[0], "owner_uid");
	rown = fdinfo_of(ns[0].pid, ns[0].fd[0], "owner_entries");
	ok[1] = ruid == NS_HOST_UID && ruser == per[0] && rowner == UID_D && rown == (long long)n;
	ksft_test_result(ok[1],
			 "root reads the namespace's uid 0 as %lld with %lld entries, its owner as %lld with %lld\n",
			 ruid, ruser, rowner, rown);
	/* A tenant sees its own usage, never D's total over every namespace D made. */
	r = agent_do(&ns[0], 'f', 0, 0, 0);
	ok[2] = r.uid == 0 && r.owner == 0 && r.ok == per[0];
	ksft_test_result(ok[2],
			 "inside, fdinfo shows uid %lld, as its owner uid %lld with %lld entries: its own %lld, not D's %llu\n",
			 r.uid, r.owner, r.ok, per[0], (unsigned long long)n);

	r = agent_do(b, 'a', 0, 10, HOUR_NS);
	ok[3] = r.ok == 10 && !r.err;
	ksft_test_result(ok[3], "user B, outside, still adds (%lld of 10) while D is at its limit\n",
			 r.ok);

	for (i = 0; i < NS_UIDS; i++) {
		agent_do(&ns[i], 'c', 0, 0, 0);
		agent_do(&ns[i], 'x', 0, 0, 0);
		close(ns[i].to);
		close(ns[i].from);
	}
	waitpid(ns_keeper, NULL, 0);
	ns_keeper = 0;
	left = fdinfo_of(d.pid, d.fd[0], "user_entries");
	ok[4] = left == (long long)quarter;
	ksft_test_result(ok[4], "closing the namespace's wheels gives D back its entries (%lld left)\n",
			 left);
	agent_end(&d);
	return ok[0] && ok[1] && ok[2] && ok[3] && ok[4];
}

int main(int argc, char **argv)
{
	uint64_t n = arg_or_env(argc, argv, "TWHEEL_PERUSER_LIMIT", 1000), half = n / 2;
	struct agent a, b, c;
	struct reply r1, r2, r3, rb, rc;
	struct stat st;
	int a_held, b_ok, ns_held, seen, changed;
	long long ua1, ua2, ub;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (stat(TWHEEL_DEVICE, &st))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	saved_user = module_param("max_user_entries", 0);
	saved_total = module_param("max_entries_total", 0);
	if (!saved_user || !saved_total)
		ksft_exit_skip("no module parameters max_user_entries and max_entries_total\n");
	ksft_set_plan(14);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	atexit(restore);
	params_saved = 1;
	/* Other users must be able to open the device for this test. */
	if ((st.st_mode & 0666) != 0666) {
		saved_mode = st.st_mode & 07777;
		mode_changed = 1;
		chmod(TWHEEL_DEVICE, 0666);
		ksft_print_msg("device mode %o, set to 0666 for the test\n", saved_mode);
	}
	module_param_set("max_user_entries", n);

	/* A: N/2 waiting events in wheel 0, the rest live in wheel 1. */
	agent_start(&a, UID_A);
	agent_start(&b, UID_B);
	agent_do(&a, 'o', 0, 0, 0);
	agent_do(&a, 'o', 1, 0, 0);
	r1 = agent_do(&a, 'a', 0, half, 0);
	seen = agent_do(&a, 'w', 0, half, 0).ok;
	r2 = agent_do(&a, 'a', 1, n, HOUR_NS);
	r3 = agent_do(&a, 'a', 0, 1, HOUR_NS);
	ksft_print_msg("A: %lld added to wheel 0 (%d waiting), %lld of %llu to wheel 1 (then %d), one more to wheel 0: %d\n",
		       r1.ok, seen, r2.ok, (unsigned long long)n, r2.err, r3.err);
	ua1 = fdinfo_of(a.pid, a.fd[0], "user_entries");
	ua2 = fdinfo_of(a.pid, a.fd[1], "user_entries");
	ksft_print_msg("root reads A's wheels: uid %lld and %lld, user_entries %lld and %lld\n",
		       fdinfo_of(a.pid, a.fd[0], "uid"), fdinfo_of(a.pid, a.fd[1], "uid"), ua1, ua2);
	a_held = r1.ok == (long long)half && !r1.err && seen == (long long)half &&
		 r2.ok == (long long)(n - half) && r2.err == -ENOSPC && r3.err == -ENOSPC &&
		 ua1 == (long long)n && ua2 == (long long)n &&
		 fdinfo_of(a.pid, a.fd[0], "uid") == UID_A;
	ksft_test_result(a_held,
			 "user A holds exactly its limit of %llu across two wheels, waiting events included, then ENOSPC\n",
			 (unsigned long long)n);

	agent_do(&b, 'o', 0, 0, 0);
	rb = agent_do(&b, 'a', 0, 10, HOUR_NS);
	ub = fdinfo_of(b.pid, b.fd[0], "user_entries");
	ksft_print_msg("B: added %lld of 10 (%d); root reads uid %lld, user_entries %lld\n", rb.ok, rb.err,
		       fdinfo_of(b.pid, b.fd[0], "uid"), ub);
	b_ok = rb.ok == 10 && !rb.err && ub == 10 && fdinfo_of(b.pid, b.fd[0], "uid") == UID_B;
	ksft_test_result(b_ok, "user B adds while A is at its limit; root sees B's own count\n");
	ksft_test_result(fdinfo_of(a.pid, a.fd[1], "user_entries") == (long long)n,
			 "A's count is untouched by B's\n");

	/* The global net: room for 5 more entries in the module, whoever asks. */
	module_param_set("max_user_entries", saved_user);
	module_param_set("max_entries_total", n + 10 + 5);
	agent_start(&c, UID_C);
	agent_do(&c, 'o', 0, 0, 0);
	rc = agent_do(&c, 'a', 0, 20, HOUR_NS);
	ksft_print_msg("C, with max_entries_total = %llu: added %lld of 20, then %d\n",
		       (unsigned long long)n + 15, rc.ok, rc.err);
	ksft_test_result(rc.ok == 5 && rc.err == -ENOSPC,
			 "max_entries_total still caps all users together\n");
	agent_end(&c);
	module_param_set("max_entries_total", saved_total);
	module_param_set("max_user_entries", n);

	/* A's count drops as its entries go. */
	r1 = agent_do(&a, 'c', 1, 0, 0);
	ua1 = fdinfo_of(a.pid, a.fd[0], "user_entries");
	ksft_test_result(!r1.err && ua1 == (long long)half,
			 "closing a wheel gives its entries back to the user (%lld left)\n", ua1);
	r1 = agent_do(&a, 'r', 0, 0, 0);
	ua1 = fdinfo_of(a.pid, a.fd[0], "user_entries");
	ksft_test_result(r1.ok == (long long)half && ua1 == 0,
			 "reading the events gives them back (%lld read, %lld left)\n", r1.ok, ua1);
	r1 = agent_do(&a, 'a', 0, n + 1, HOUR_NS);
	ksft_test_result(r1.ok == (long long)n && r1.err == -ENOSPC,
			 "A can add up to its limit again (%lld, then %d)\n", r1.ok, r1.err);
	r1 = agent_do(&a, 'c', 0, 0, 0);
	ub = fdinfo_of(b.pid, b.fd[0], "user_entries");
	ksft_test_result(!r1.err && ub == 10, "A's close leaves B's count alone (%lld)\n", ub);
	ns_held = userns_run(&b, n);
	agent_end(&a);
	agent_end(&b);
	changed = mode_changed;
	restore();
	ksft_test_result(module_param("max_user_entries", 0) == saved_user &&
			 module_param("max_entries_total", 0) == saved_total &&
			 !stat(TWHEEL_DEVICE, &st) && (!changed || (st.st_mode & 07777) == saved_mode),
			 "module parameters%s restored\n", changed ? " and the device's mode" : "");

	printf("peruser: limit=%llu a_held=%s b_ok=%s ns_held=%s\n", (unsigned long long)n,
	       a_held ? "yes" : "no", b_ok ? "yes" : "no",
	       ns_held < 0 ? "skip" : ns_held ? "yes" : "no");
	ksft_finished();
}
