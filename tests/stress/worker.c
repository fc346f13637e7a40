// SPDX-License-Identifier: GPL-2.0
/*
 * worker: a wheel has no task of the module's, so a unit that set wheels
 * up is stopped, frozen and charged as if it had none (review #27 item 1).
 *
 * The module once ran each owner's expiry in a kernel thread that joined
 * the owner's cgroups. A wheel whose fd outlived the unit (passed on with
 * SCM_RIGHTS, or to systemd's fd store) kept that thread, and so the
 * group, populated: cgroup.kill and systemd skip kernel threads, so rmdir
 * failed with EBUSY, and the v2 freezer never reported the group frozen.
 * This program tries that as a user's service and its manager would, as
 * root, in groups of its own under /sys/fs/cgroup:
 *  - a unit: two processes of uid 4205 in group G, one wheel plain and
 *    one with a touch table, ids added, some bound to slots and stamped;
 *    one process blocked in read(2) on the plain wheel; the touch wheel's
 *    fd passed (SCM_RIGHTS) to this process, outside G, as to an fd
 *    store. G holds the unit's two processes and nothing else.
 *  - the stop, as systemd and runc make it: 1 into G's cgroup.kill (Linux
 *    5.14 on), or else SIGKILL to every pid of G's cgroup.procs until none
 *    is left. G must empty (cgroup.events: populated 0) and rmdir G
 *    succeed within WAIT_NS.
 *  - the wheel lives on with its holder: ids due before and after the
 *    stop, ids whose slots were stamped, and ids the holder adds itself
 *    are read back, each once, none lost, none with a deadline before
 *    the time it was added (or stamped) plus its timeout, none expired
 *    before its deadline.
 *  - the v2 freezer: a group F whose process is blocked in read(2) on
 *    its wheel is frozen (frozen 1) within WAIT_NS and stays frozen past
 *    the id's deadline, nothing read; after the thaw the read returns the
 *    event, expired after the thaw (by the reader: nobody else looks).
 *  - expiry is the caller's work: a process in group R has MASS ids due
 *    at one deadline. A second past it none has expired (nobody looked;
 *    fdinfo says due 1); its poll(2) does the whole expiry on its own
 *    CPU time, which R's cpu.stat usage_usec shows, while a sibling group
 *    S holding a sleeping process grows by less than 5 ms; then it reads
 *    every id once, none early.
 *  - nor a kworker's: aio's IOCB_CMD_POLL polls again from a kworker
 *    when woken; it completes, but the expiry is still due after it (no
 *    id expired, fdinfo due 1), and the submitter's read does it.
 * No kernel thread named twheel* may exist at any time: every wait above
 * looks through /proc. With the old workers G would never empty (EBUSY)
 * and F never freeze, the mass expiry would be done a second after its
 * deadline by nobody's poll, and the looks would find the threads.
 *
 *   worker		(run as root)
 *
 * MASS is 200k ids, 20k on a debug kernel. Groups, children and the
 * module's entry limits are cleaned up and restored at exit, also on
 * SIGTERM. Prints TAP and "worker: threads=N unit_stop=yes|no
 * freeze=yes|no charged=yes|no stop_by=cgroup.kill|sigkill"; SKIP (exit
 * 4) without cgroup v2.
 */
#include <dirent.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define PF_KTHREAD	0x00200000
#define UID_UNIT	4205
#define TICK_NS		(10 * NSEC_PER_MSEC)
#define HOUR_NS		(3600 * NSEC_PER_SEC)
#define IDS		100		/* ids of each kind */
#define SLOTS		64		/* the touch table, one id bound to each */
#define A_NS		(100 * NSEC_PER_MSEC)	/* due while the unit runs */
#define B_NS		(2 * NSEC_PER_SEC)	/* due after its stop */
#define C_NS		(500 * NSEC_PER_MSEC)	/* bound to slots, stamped */
#define STAMP_AFTER_NS	(200 * NSEC_PER_MSEC)	/* after the adds */
#define D_NS		(300 * NSEC_PER_MSEC)	/* the holder's own */
#define FREEZE_DUE_NS	(3 * NSEC_PER_SEC)
#define FROZEN_PAST_NS	(300 * NSEC_PER_MSEC)
#define BATCH		4096
#define S_MAX_US	5000		/* what a sleeping group may grow by */

/* How long a group may take to empty, freeze or go: a slow guest. */
#define WAIT_NS		(debug_kernel() ? 10 * NSEC_PER_SEC : 5 * NSEC_PER_SEC)
#define MASS		(debug_kernel() ? 20000 : 200000)
/* From the mass's first add to its deadline: the adds must end before. */
#define MASS_DUE_NS	(debug_kernel() ? 15 * NSEC_PER_SEC : 4 * NSEC_PER_SEC)

enum { G, F, R, S, NR_GROUPS };
static const char *const group_name[NR_GROUPS] = { "G", "F", "R", "S" };
static char group[NR_GROUPS][128];
static pid_t kids[8];
static int nr_kids;
static pid_t main_pid;
static mode_t saved_mode;
static int mode_changed;

/* ---- /proc and cgroup files ---- */

/* State letter, flags and name of task @pid; false if it is gone. */
static bool proc_stat(pid_t pid, char *state, unsigned long long *flags, char *comm, size_t len)
{
	char path[64], buf[512], *s, *e;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	s = strchr(buf, '(');
	e = strrchr(buf, ')');
	if (!s || !e || sscanf(e + 2, "%c %*d %*d %*d %*d %*d %llu", state, flags) != 2)
		return false;
	snprintf(comm, len, "%.*s", (int)(e - s - 1), s + 1);
	return true;
}

static int threads_max, looks;
static char thread_seen[64];

/*
 * One look through /proc for kernel threads named twheel* (the old
 * workers were twheel/N): how many there are, the largest count kept.
 */
static int look_for_threads(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		unsigned long long flags;
		char state, comm[32];
		int pid = atoi(de->d_name);

		if (pid > 0 && proc_stat(pid, &state, &flags, comm, sizeof(comm)) &&
		    flags & PF_KTHREAD && !strncmp(comm, "twheel", 6)) {
			if (!n++)
				snprintf(thread_seen, sizeof(thread_seen), "%d %s", pid, comm);
		}
	}
	if (d)
		closedir(d);
	looks++;
	if (n > threads_max)
		threads_max = n;
	return n;
}

static void cg_path(char *buf, size_t len, int g, const char *file)
{
	snprintf(buf, len, "%s/%s", group[g], file);
}

static int cg_write(int g, const char *file, const char *s)
{
	char p[256];

	cg_path(p, sizeof(p), g, file);
	return write_file(p, s);
}

static bool cg_has(int g, const char *file)
{
	char p[256];

	cg_path(p, sizeof(p), g, file);
	return !access(p, F_OK);
}

/* The value of @key in group @g's flat keyed @file, or -1. */
static long long cg_key(int g, const char *file, const char *key)
{
	char p[256];

	cg_path(p, sizeof(p), g, file);
	return file_key(p, key, ' ');
}

/* Move the calling process into group @g; 0 or -errno. */
static int cg_join(int g)
{
	char me[32];

	snprintf(me, sizeof(me), "%d", getpid());
	return cg_write(g, "cgroup.procs", me);
}

/* SIGKILL to every pid of @g's cgroup.procs, as systemd stops a unit; how many. */
static int cg_sigkill(int g)
{
	char p[256], buf[4096], *s;
	int n = 0;

	cg_path(p, sizeof(p), g, "cgroup.procs");
	if (read_file(p, buf, sizeof(buf)) <= 0)
		return 0;
	for (s = buf; *s; s += strcspn(s, "\n"), s += !!*s) {
		pid_t pid = atoi(s);

		if (pid > 0 && !kill(pid, SIGKILL))
			n++;
	}
	return n;
}

/*
 * Whether every task of @g (cgroup.threads) is @a or @b, both there: two
 * processes of one thread each. Its tasks, one line, into @buf.
 */
static bool cg_holds_only(int g, pid_t a, pid_t b, char *buf, size_t len)
{
	char p[256], tids[512], *s;
	int n = 0, seen_a = 0, seen_b = 0;

	cg_path(p, sizeof(p), g, "cgroup.threads");
	if (read_file(p, tids, sizeof(tids)) < 0)
		tids[0] = 0;
	for (s = tids; *s; s += strcspn(s, "\n"), s += !!*s) {
		pid_t t = atoi(s);

		n++;
		seen_a += t == a;
		seen_b += t == b;
	}
	for (s = tids; *s; s++)
		if (*s == '\n')
			*s = ' ';
	snprintf(buf, len, "%s", tids);
	return n == 2 && seen_a == 1 && seen_b == 1;
}

/* The value of "@key:" in /proc/@pid/fdinfo/@fd, or -1. */
static long long proc_fdinfo(pid_t pid, int fd, const char *key)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	return file_key(path, key, ':');
}

/* ---- waiting ---- */

/* What a wait waits for: @key of @g's cgroup.events equal to @val, say. */
struct want {
	int g;
	const char *key;
	long long val;
	pid_t pid;
	bool sigkill;	/* the stop without cgroup.kill: SIGKILL each look */
};

static bool events_are(const struct want *w)
{
	if (w->sigkill)
		cg_sigkill(w->g);
	return cg_key(w->g, "cgroup.events", w->key) == w->val;
}

/*
 * Task @w->pid sleeps in read(2) (syscall 0; in anything, where the
 * kernel has no /proc/PID/syscall).
 */
static bool blocked_in_read(const struct want *w)
{
	char path[64], buf[128], state, comm[32];
	unsigned long long flags;

	if (!proc_stat(w->pid, &state, &flags, comm, sizeof(comm)) || state != 'S')
		return false;
	snprintf(path, sizeof(path), "/proc/%d/syscall", w->pid);
	return read_file(path, buf, sizeof(buf)) <= 0 || !strncmp(buf, "0 ", 2);
}

static bool sleeping(const struct want *w)
{
	char state, comm[32];
	unsigned long long flags;

	return proc_stat(w->pid, &state, &flags, comm, sizeof(comm)) && state == 'S';
}

/* Until @cond(@w) holds, for @ns at most, looking for threads meanwhile. */
static bool wait_for(bool (*cond)(const struct want *), const struct want *w, uint64_t ns)
{
	uint64_t until = mono_ns() + ns;

	for (;;) {
		look_for_threads();
		if (cond(w))
			return true;
		if (mono_ns() > until)
			return false;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
}

/* Sleep until @t (monotonic), looking for threads every 50 ms. */
static void sleep_until(uint64_t t)
{
	uint64_t now;

	while ((now = mono_ns()) < t) {
		look_for_threads();
		sleep_ns(t - now < 50 * NSEC_PER_MSEC ? t - now : 50 * NSEC_PER_MSEC);
	}
}

/* ---- cleaning up ---- */

static void add_kid(pid_t pid)
{
	if (pid > 0 && nr_kids < (int)(sizeof(kids) / sizeof(kids[0])))
		kids[nr_kids++] = pid;
}

static void cleanup(void)
{
	int g, i;

	if (getpid() != main_pid)
		return;
	entry_limits_restore();
	if (mode_changed)
		chmod(TWHEEL_DEVICE, saved_mode);
	mode_changed = 0;
	/* Only those not reaped yet: a reaped one's pid may be another's now. */
	for (i = 0; i < nr_kids; i++)
		if (!waitpid(kids[i], NULL, WNOHANG))
			kill(kids[i], SIGKILL);
	for (g = 0; g < NR_GROUPS; g++) {
		uint64_t until = mono_ns() + 2 * NSEC_PER_SEC;

		if (access(group[g], F_OK))
			continue;
		cg_write(g, "cgroup.freeze", "0");
		while (cg_sigkill(g) && mono_ns() < until)
			sleep_ns(10 * NSEC_PER_MSEC);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		while (rmdir(group[g]) && errno == EBUSY && mono_ns() < until)
			sleep_ns(10 * NSEC_PER_MSEC);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the unit, in G ---- */

/* What the unit tells its fd store, with the fd. */
struct unit_report {
	int err;		/* 0, or -errno of step @what */
	char what[32];
	pid_t reader;		/* its second process, blocked in read(2) */
	uint64_t t_a, t_b, t_l;	/* just before each kind was added */
	uint64_t stamp;		/* stored into every slot */
};

enum { ID_A = 1000, ID_B = 2000, ID_C = 3000, ID_D = 4000, ID_LIVE = 5000 };

/* Add @n ids from @first to @fd with @timeout_ns; 0 or -errno. */
static int add_ids(int fd, uint64_t first, int n, uint64_t timeout_ns)
{
	int i, r;

	for (i = 0; i < n; i++) {
		r = twheel_add(fd, first + i, timeout_ns);
		if (r)
			return r;
	}
	return 0;
}

static void unit_reader(int fd)
{
	struct twheel_event ev[64];

	for (;;) {
		int r = twheel_read_events(fd, ev, 64);

		if (r < 0 && r != -EINTR)
			_exit(1);
	}
}

/* Add the ids bound to the slots of @fd's table; 0 or -errno. */
static int add_bound(int fd)
{
	struct twheel_op op;
	int i, r;

	for (i = 0; i < SLOTS; i++) {
		twheel_prep_add(&op, ID_C + i, C_NS);
		twheel_prep_bind(&op, i);
		r = twheel_submit_op(fd, &op);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The unit's wheels, set up by its first process, in G as uid UID_UNIT:
 * a plain one, which a second process reads, and a touch wheel, into
 * *@wheel and *@touch; when it added what, into @rep. 0, or -errno with
 * the step in @rep->what.
 */
static int unit_setup(struct unit_report *rep, int *wheel, struct twheel_touch *touch)
{
	struct twheel_setup_args sa = {
		.tick_ns = TICK_NS, .default_timeout_ns = HOUR_NS,
		.clockid = CLOCK_MONOTONIC, .flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = SLOTS,
	};
	int plain, fd, r;

#define UNIT_STEP(call, name) do {					\
		snprintf(rep->what, sizeof(rep->what), "%s", name);	\
		r = (call);						\
		if (r < 0)						\
			return r;					\
	} while (0)
	UNIT_STEP(cg_join(G), "join");
	UNIT_STEP(setresgid(UID_UNIT, UID_UNIT, UID_UNIT) ||
		  setresuid(UID_UNIT, UID_UNIT, UID_UNIT) ? -errno : 0, "setresuid");
	UNIT_STEP(plain = twheel_open(O_CLOEXEC), "open");
	UNIT_STEP(twheel_setup(plain, TICK_NS, HOUR_NS, CLOCK_MONOTONIC, 0), "setup");
	UNIT_STEP(*wheel = fd = twheel_open(O_CLOEXEC | O_NONBLOCK), "open touch");
	UNIT_STEP(twheel_setup_params(fd, &sa), "setup touch");
	UNIT_STEP(twheel_touch_map(fd, SLOTS, CLOCK_MONOTONIC, touch), "mmap");
	UNIT_STEP(add_ids(plain, 0, IDS, A_NS), "add");
	UNIT_STEP(twheel_add(plain, ID_LIVE, HOUR_NS), "add");
	rep->reader = fork();
	if (!rep->reader)
		unit_reader(plain);
	UNIT_STEP(rep->reader < 0 ? -errno : 0, "fork");
	rep->t_a = mono_ns();
	UNIT_STEP(add_ids(fd, ID_A, IDS, A_NS), "add A");
	rep->t_b = mono_ns();
	UNIT_STEP(add_ids(fd, ID_B, IDS, B_NS), "add B");
	rep->t_l = mono_ns();
	UNIT_STEP(twheel_add(fd, ID_LIVE, HOUR_NS), "add live");
	UNIT_STEP(add_bound(fd), "add bound");
#undef UNIT_STEP
	return 0;
}

/*
 * The unit's first process: its wheels; a while after the bound ids were
 * added, a stamp into each slot; then the report and the touch wheel's
 * fd to @sock, as to an fd store. It waits to be stopped.
 */
static void unit_main(int sock)
{
	struct unit_report rep = { 0 };
	struct twheel_touch touch;
	int wheel = -1, i;

	rep.err = unit_setup(&rep, &wheel, &touch);
	if (!rep.err) {
		sleep_ns(STAMP_AFTER_NS);
		rep.stamp = mono_ns();
		for (i = 0; i < SLOTS; i++)
			twheel_touch_at(&touch, i, rep.stamp);
	}
	if (write(sock, &rep, sizeof(rep)) != sizeof(rep) || rep.err || send_fd(sock, wheel))
		_exit(1);
	for (;;)
		pause();
}

/* ---- the holder's read-back ---- */

/* Ids [first, first + n), none due before @earliest. */
struct expect {
	uint64_t first;
	int n;
	uint64_t earliest;
	int read;
};

/*
 * Read @fd until every id of @ex[0..@nex) came, until @until at most: an
 * id read twice, unexpected, with a deadline before its kind's earliest
 * or expired before its deadline counts as bad. The bad count.
 */
static int read_back(int fd, struct expect *ex, int nex, uint64_t until)
{
	static struct twheel_event ev[256];
	static char seen[8192];
	int want = 0, got = 0, bad = 0, r, i, j;

	for (j = 0; j < nex; j++)
		want += ex[j].n;
	while (got < want && mono_ns() < until) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now;

		look_for_threads();
		poll(&p, 1, 50);
		r = twheel_read_events(fd, ev, 256);
		now = mono_ns();
		if (r == -EAGAIN || r == -EINTR)
			continue;
		if (r < 0) {
			ksft_print_msg("read: %s\n", strerror(-r));
			break;
		}
		for (i = 0; i < r; i++) {
			uint64_t id = ev[i].id;

			for (j = 0; j < nex; j++)
				if (id >= ex[j].first && id < ex[j].first + ex[j].n)
					break;
			if (j == nex || id >= sizeof(seen) || seen[id]++ ||
			    ev[i].deadline_ns < ex[j].earliest ||
			    ev[i].expired_ns < ev[i].deadline_ns || ev[i].expired_ns > now) {
				if (bad++ < 5)
					ksft_print_msg("bad event: id %llu deadline %llu expired %llu read at %llu\n",
						       (unsigned long long)id,
						       (unsigned long long)ev[i].deadline_ns,
						       (unsigned long long)ev[i].expired_ns,
						       (unsigned long long)now);
				continue;
			}
			ex[j].read++;
			got++;
		}
	}
	return bad;
}

/* ---- the mass expiry, in R ---- */

struct mass_report {
	int err;		/* 0, or -errno of the adds */
	int fd;
	uint64_t deadline, added;
	int revents;
	long long expired;	/* expired before the poll, per fdinfo */
	long long waiting;	/* events waiting after the poll */
	uint64_t poll_cpu_ns;	/* the poll's own CPU time */
	uint64_t got, bad;
};

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void mass_send(int out, const struct mass_report *rep)
{
	if (write(out, rep, sizeof(*rep)) != sizeof(*rep))
		_exit(1);
}

static char mass_command(int in)
{
	char c;

	return read(in, &c, 1) == 1 ? c : 0;
}

/*
 * The reader in R: MASS ids added with one deadline, then on command a
 * poll that does the expiry, then a read of everything. Never returns.
 */
static void mass_main(int in, int out)
{
	struct twheel_op *ops = calloc(BATCH, sizeof(*ops));
	struct twheel_event *ev = calloc(BATCH, sizeof(*ev));
	char *seen = calloc(MASS, 1);
	struct mass_report rep = { 0 };
	struct pollfd p;
	uint64_t c0, i;
	int fd, r, k, j;

	rep.err = !ops || !ev || !seen ? -ENOMEM : cg_join(R);
	fd = rep.err ? rep.err : twheel_open(O_CLOEXEC | O_NONBLOCK);
	rep.err = fd < 0 ? fd : twheel_setup(fd, TICK_NS, HOUR_NS, CLOCK_MONOTONIC, 0);
	rep.fd = fd;
	rep.deadline = mono_ns() + MASS_DUE_NS;
	for (i = 0; !rep.err && i < (uint64_t)MASS; i += k) {
		k = MASS - i < BATCH ? MASS - i : BATCH;
		for (j = 0; j < k; j++)
			twheel_prep_add_at(&ops[j], i + j, rep.deadline);
		r = twheel_batch(fd, ops, k);
		if (r != k)
			rep.err = r < 0 ? r : -EIO;
		for (j = 0; !rep.err && j < k; j++)
			rep.err = ops[j].result;
	}
	rep.added = mono_ns();
	mass_send(out, &rep);

	if (mass_command(in) != 'p')
		_exit(0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	rep.expired = fdinfo_get(fd, "expired_total");
	c0 = thread_cpu_ns();
	r = poll(&p, 1, 0);
	rep.poll_cpu_ns = thread_cpu_ns() - c0;
	rep.revents = r == 1 ? p.revents : 0;
	rep.waiting = fdinfo_get(fd, "events_waiting");
	mass_send(out, &rep);

	if (mass_command(in) != 'r')
		_exit(0);
	while ((r = twheel_read_events(fd, ev, BATCH)) > 0) {
		for (j = 0; j < r; j++) {
			uint64_t id = ev[j].id;

			/*
			 * Due at the deadline; an id added after it (a guest
			 * stalled past it while adding) at most a tick after
			 * its add, so before the adds' end and a tick.
			 */
			if (id >= (uint64_t)MASS || seen[id]++ ||
			    ev[j].deadline_ns < rep.deadline ||
			    ev[j].deadline_ns >= (rep.added > rep.deadline ? rep.added : rep.deadline) +
						 TICK_NS ||
			    ev[j].expired_ns < ev[j].deadline_ns)
				rep.bad++;
			else
				rep.got++;
		}
	}
	mass_send(out, &rep);
	mass_command(in);
	_exit(0);
}

/* ---- the tests ---- */

static struct unit_report unit;
static pid_t unit_pid;
static int held = -1;		/* the touch wheel, as the fd store holds it */

/* Test 1: the unit sets up its wheels and hands one out. 1 if it did. */
static int test_unit(void)
{
	struct want w = { .g = G };
	char tasks[512];
	int sv[2], n, ok;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		ksft_exit_fail_msg("socketpair: %s\n", strerror(errno));
	unit_pid = fork();
	if (!unit_pid) {
		close(sv[0]);
		unit_main(sv[1]);
	}
	add_kid(unit_pid);
	close(sv[1]);
	if (read(sv[0], &unit, sizeof(unit)) != sizeof(unit) || unit.err)
		ksft_exit_fail_msg("the unit failed (%s): %s\n", unit.what, strerror(-unit.err));
	add_kid(unit.reader);
	held = recv_fd(sv[0]);
	close(sv[0]);
	if (held < 0)
		ksft_exit_fail_msg("the unit's wheel never came\n");
	w.pid = unit.reader;
	ok = wait_for(blocked_in_read, &w, WAIT_NS);
	n = look_for_threads();
	ok = cg_holds_only(G, unit_pid, unit.reader, tasks, sizeof(tasks)) && !n && ok;
	ksft_test_result(ok, "the unit's group holds its two processes and no task of the module (tasks %s; %d twheel threads%s%s)\n",
			 tasks, n, n ? ": " : "", n ? thread_seen : "");
	return ok;
}

static const char *stop_by;

/* Test 2: the stop. 1 if the group emptied and went. */
static int test_stop(void)
{
	struct want w = { .g = G, .key = "populated", .val = 0 };
	uint64_t t0 = mono_ns(), empty_ms = 0, gone_ms = 0;
	bool empty, gone = false;
	int st = 0, r, ok;

	w.sigkill = !cg_has(G, "cgroup.kill");
	stop_by = w.sigkill ? "sigkill" : "cgroup.kill";
	if (!w.sigkill && (r = cg_write(G, "cgroup.kill", "1")))
		ksft_print_msg("cgroup.kill: %s\n", strerror(-r));
	empty = wait_for(events_are, &w, WAIT_NS);
	empty_ms = (mono_ns() - t0) / NSEC_PER_MSEC;
	if (!empty) {
		kill(unit_pid, SIGKILL);
		kill(unit.reader, SIGKILL);
	}
	/* The reader is this process's now (a subreaper), its parent gone. */
	waitpid(unit_pid, &st, 0);
	waitpid(unit.reader, NULL, 0);
	if (empty) {
		uint64_t until = mono_ns() + WAIT_NS;

		while (!(gone = !rmdir(group[G])) && errno == EBUSY && mono_ns() < until) {
			look_for_threads();
			sleep_ns(10 * NSEC_PER_MSEC);
		}
		if (!gone)
			ksft_print_msg("rmdir %s: %s\n", group[G], strerror(errno));
		gone_ms = (mono_ns() - t0) / NSEC_PER_MSEC;
	} else {
		char tasks[512];

		cg_holds_only(G, 0, 0, tasks, sizeof(tasks));
		ksft_print_msg("%s still holds tasks %s\n", group[G], tasks);
	}
	ok = empty && gone && fcntl(held, F_GETFD) >= 0 && WIFSIGNALED(st) &&
	     WTERMSIG(st) == SIGKILL;
	ksft_test_result(ok, "a stopped unit's group empties and is removed while its wheel lives on outside (%s: %s after %llu ms, %s after %llu ms)\n",
			 w.sigkill ? "SIGKILL to each pid of cgroup.procs, no cgroup.kill before 5.14" :
			 "cgroup.kill", empty ? "empty" : "still populated", (unsigned long long)empty_ms,
			 gone ? "removed" : "not removed", (unsigned long long)gone_ms);
	return ok;
}

/* Test 3: the holder reads the wheel. 1 if all came once, none early. */
static int test_holder(void)
{
	struct expect ex[] = {
		{ ID_A, IDS, unit.t_a + A_NS, 0 },
		{ ID_B, IDS, unit.t_b + B_NS, 0 },
		{ ID_C, SLOTS, unit.stamp + C_NS, 0 },
		{ ID_D, IDS, 0, 0 },
	};
	uint64_t live_deadline = 0, until;
	struct twheel_event extra;
	int bad, r, live, ok;

	ex[3].earliest = mono_ns() + D_NS;
	r = add_ids(held, ID_D, IDS, D_NS);
	until = (ex[1].earliest > ex[3].earliest ? ex[1].earliest : ex[3].earliest) + WAIT_NS;
	bad = r ? -1 : read_back(held, ex, 4, until);
	/* Nothing more is due: another read finds nothing. */
	sleep_ns(2 * TICK_NS);
	r = twheel_read_events(held, &extra, 1);
	live = twheel_query(held, ID_LIVE, &live_deadline, NULL);
	ok = !bad && ex[0].read == IDS && ex[1].read == IDS && ex[2].read == SLOTS &&
	     ex[3].read == IDS && r == -EAGAIN && !live && live_deadline >= unit.t_l + HOUR_NS;
	ksft_test_result(ok, "the wheel's holder outside reads every id once, none early (%d + %d + %d touched + %d of its own, of %d + %d + %d + %d; %d bad; an hour's id %s)\n",
			 ex[0].read, ex[1].read, ex[2].read, ex[3].read, IDS, IDS, SLOTS, IDS, bad,
			 live ? "gone" : "still there");
	close(held);
	return ok;
}

/* Test 4: the freezer. 1 if the group froze and the read came after. */
static int test_freeze(void)
{
	struct want w = { .g = F, .key = "frozen", .val = 1 };
	struct {
		uint64_t t_add;
		int r;
		struct twheel_event ev;
	} res;
	struct pollfd p;
	uint64_t t0, froze_ms = 0, t_thaw = 0;
	bool frozen, stayed = false, thawed = false, came = false;
	int up[2], ok;
	pid_t pid;

	if (pipe2(up, O_CLOEXEC))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork();
	if (!pid) {
		int fd;

		close(up[0]);
		memset(&res, 0, sizeof(res));
		fd = cg_join(F) ? -1 : twheel_open(O_CLOEXEC);
		if (fd < 0 || twheel_setup(fd, TICK_NS, HOUR_NS, CLOCK_MONOTONIC, 0))
			_exit(1);
		res.t_add = mono_ns();
		if (twheel_add(fd, 7, FREEZE_DUE_NS) ||
		    write(up[1], &res.t_add, sizeof(res.t_add)) != sizeof(res.t_add))
			_exit(1);
		res.r = twheel_read_events(fd, &res.ev, 1);
		_exit(write(up[1], &res, sizeof(res)) != sizeof(res));
	}
	add_kid(pid);
	close(up[1]);
	if (read(up[0], &res.t_add, sizeof(res.t_add)) != sizeof(res.t_add))
		ksft_exit_fail_msg("the reader in %s could not set up its wheel\n", group[F]);
	w.pid = pid;
	if (!wait_for(blocked_in_read, &w, WAIT_NS))
		ksft_print_msg("the reader never blocked in read(2)\n");

	t0 = mono_ns();
	cg_write(F, "cgroup.freeze", "1");
	frozen = wait_for(events_are, &w, WAIT_NS);
	froze_ms = (mono_ns() - t0) / NSEC_PER_MSEC;
	if (frozen) {
		/* The deadline passes, the timer wakes the reader: it stays frozen. */
		sleep_until(res.t_add + FREEZE_DUE_NS + FROZEN_PAST_NS);
		p = (struct pollfd){ .fd = up[0], .events = POLLIN };
		stayed = cg_key(F, "cgroup.events", "frozen") == 1 && poll(&p, 1, 0) == 0 &&
			 mono_ns() >= res.t_add + FREEZE_DUE_NS;
	}
	t_thaw = mono_ns();
	cg_write(F, "cgroup.freeze", "0");
	w.val = 0;
	thawed = wait_for(events_are, &w, WAIT_NS);
	p = (struct pollfd){ .fd = up[0], .events = POLLIN };
	if (poll(&p, 1, WAIT_NS / NSEC_PER_MSEC) == 1 &&
	    read(up[0], &res, sizeof(res)) == sizeof(res))
		came = res.r == 1 && res.ev.id == 7 &&
		       res.ev.deadline_ns >= res.t_add + FREEZE_DUE_NS &&
		       res.ev.expired_ns >= res.ev.deadline_ns && res.ev.expired_ns >= t_thaw;
	close(up[0]);
	waitpid(pid, NULL, 0);
	rmdir(group[F]);
	ok = frozen && stayed && thawed && came;
	ksft_test_result(ok, "a group whose task is blocked reading a wheel freezes, and the read returns its event after the thaw (frozen after %llu ms%s, %s%s)\n",
			 (unsigned long long)froze_ms, frozen ? "" : ": never",
			 stayed ? "still frozen past the deadline" : "did not stay frozen",
			 came ? ", the event expired after the thaw" : ", no good event after the thaw");
	return ok;
}

static int mass_in, mass_out;

static bool mass_recv(struct mass_report *rep)
{
	struct pollfd p = { .fd = mass_in, .events = POLLIN };

	/* The whole expiry on a slow guest may take long: look meanwhile. */
	for (;;) {
		int r = poll(&p, 1, 50);

		look_for_threads();
		if (r == 1)
			return read(mass_in, rep, sizeof(*rep)) == sizeof(*rep);
		if (r < 0 && errno != EINTR)
			return false;
	}
}

/* Tests 5 to 7: the mass expiry. 1 if it was the poller's, charged to R. */
static int test_mass(void)
{
	struct want w = { .key = "populated", .val = 1 };
	long long r0, r1, r2, s1, s2, expired, waiting, live, due;
	struct mass_report rep = { 0 };
	int down[2], up[2], ok_wait, ok_charged, ok_read, stalled;
	pid_t sleeper, reader;

	sleeper = fork();
	if (!sleeper)
		_exit(cg_join(S) ? 1 : pause());
	add_kid(sleeper);
	w.g = S;
	w.pid = sleeper;
	if (!wait_for(events_are, &w, WAIT_NS) || !wait_for(sleeping, &w, WAIT_NS))
		ksft_exit_fail_msg("the sleeper never reached %s\n", group[S]);

	if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	reader = fork();
	if (!reader) {
		close(down[1]);
		close(up[0]);
		mass_main(down[0], up[1]);
	}
	add_kid(reader);
	close(down[0]);
	close(up[1]);
	mass_in = up[0];
	mass_out = down[1];
	if (!mass_recv(&rep) || rep.err)
		ksft_exit_fail_msg("the reader in %s could not add %d ids: %s\n", group[R], MASS,
				   strerror(-rep.err));
	ksft_print_msg("%d ids added in %llu ms, due %llu ms after the first add\n", MASS,
		       (unsigned long long)((rep.added - rep.deadline + MASS_DUE_NS) / NSEC_PER_MSEC),
		       (unsigned long long)(MASS_DUE_NS / NSEC_PER_MSEC));

	/* Nobody looks at the wheel for a second past its deadline. */
	r0 = cg_key(R, "cpu.stat", "usage_usec");
	sleep_until(rep.deadline + NSEC_PER_SEC);
	expired = proc_fdinfo(reader, rep.fd, "expired_total");
	waiting = proc_fdinfo(reader, rep.fd, "events_waiting");
	live = proc_fdinfo(reader, rep.fd, "live");
	due = proc_fdinfo(reader, rep.fd, "due");
	r1 = cg_key(R, "cpu.stat", "usage_usec");
	s1 = cg_key(S, "cpu.stat", "usage_usec");
	ok_wait = rep.added < rep.deadline && !expired && !waiting && live == MASS && due == 1;
	stalled = rep.added >= rep.deadline;
	if (stalled) {
		/*
		 * The clock proves the guest stalled: the adds outlasted the
		 * deadline, so their own commands did a chunk of the expiry
		 * each, as they must. Nothing here can be judged.
		 */
		ksft_test_result_skip("a mass expiry waits for a task to look at the wheel: the adds ended %llu ms after the deadline\n",
				      (unsigned long long)((rep.added - rep.deadline) / NSEC_PER_MSEC));
		ok_wait = 1;
	} else {
		ksft_test_result(ok_wait, "a mass expiry waits for a task to look at the wheel (a second past the deadline of %d ids: %lld expired, %lld waiting, %lld live, due %lld; %s +%lld us meanwhile)\n",
				 MASS, expired, waiting, live, due, group_name[R], r1 - r0);
	}

	/* Its poll does the work, on its own time, in its own group. */
	w.pid = reader;
	if (write(mass_out, "p", 1) != 1 || !mass_recv(&rep) || !wait_for(sleeping, &w, WAIT_NS))
		ksft_exit_fail_msg("the reader in %s did not poll\n", group[R]);
	r2 = cg_key(R, "cpu.stat", "usage_usec");
	s2 = cg_key(S, "cpu.stat", "usage_usec");
	ok_charged = rep.revents & POLLIN && !rep.expired && rep.waiting == MASS &&
		     r1 >= 0 && s1 >= 0 &&
		     rep.poll_cpu_ns >= NSEC_PER_MSEC &&
		     (r2 - r1) * 1000 >= (long long)rep.poll_cpu_ns * 9 / 10 &&
		     s2 - s1 < S_MAX_US && r2 - r1 > s2 - s1;
	if (stalled) {
		ksft_test_result_skip("the task that polls does the mass expiry, charged to its group: the adds ended past the deadline\n");
		ok_charged = 1;
	} else {
		ksft_test_result(ok_charged, "the task that polls does the mass expiry, charged to its group (%lld expired before its poll, %lld waiting after; the poll took %llu us of its CPU; %s +%lld us, %s +%lld us)\n",
				 rep.expired, rep.waiting, (unsigned long long)(rep.poll_cpu_ns / 1000),
				 group_name[R], r2 - r1, group_name[S], s2 - s1);
	}

	if (write(mass_out, "r", 1) != 1 || !mass_recv(&rep))
		ksft_exit_fail_msg("the reader in %s did not read\n", group[R]);
	ok_read = rep.got == (uint64_t)MASS && !rep.bad;
	ksft_test_result(ok_read, "every id of the mass expiry is read once, none early (%llu of %d, %llu bad)\n",
			 (unsigned long long)rep.got, MASS, (unsigned long long)rep.bad);

	close(mass_out);
	close(mass_in);
	waitpid(reader, NULL, 0);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	rmdir(group[R]);
	rmdir(group[S]);
	return ok_wait && ok_charged && ok_read;
}

/*
 * aio's IOCB_CMD_POLL, once woken, polls again from a kworker: a kernel
 * thread of the root cgroup. The wheel's work must not go there: the
 * aio poll completes, but the expiry is still due afterwards, and the
 * submitter's read does it. Returns true if held.
 */
#define AIO_IDS		20000
static int test_aio_poll(void)
{
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_POLL, .aio_buf = POLLIN };
	struct iocb *cbs[1] = { &cb };
	struct timespec ts = { .tv_sec = 10 };
	long long expired = -1, due = -1;
	struct io_event ev = { 0 };
	aio_context_t actx = 0;
	uint64_t deadline;
	int fd, got = 0, n, r = -1;
	bool ok = false;
	static struct twheel_event evs[1024];
	static uint64_t ids[AIO_IDS];
	unsigned int nf = 0;

	fd = twheel_open(O_NONBLOCK);
	if (fd < 0 || twheel_setup(fd, TICK_NS, 0, CLOCK_MONOTONIC, 0))
		goto out;
	/* All due at one deadline, added in one call: one tick's work. */
	for (n = 0; n < AIO_IDS; n++)
		ids[n] = n + 1;
	deadline = mono_ns() + 300 * NSEC_PER_MSEC;
	if (twheel_refresh_ids(fd, ids, AIO_IDS, deadline,
			       TWHEEL_OPF_ABSTIME | TWHEEL_OPF_ADD_IF_ABSENT, NULL, &nf) != AIO_IDS ||
	    nf)
		goto out;
	if (syscall(SYS_io_setup, 1, &actx)) {
		if (errno == ENOSYS) {
			ksft_test_result_skip("an aio poll's completion in a kworker does none of the wheel's work: no aio in this kernel\n");
			close(fd);
			return 1;
		}
		goto out;
	}
	cb.aio_fildes = fd;
	if (mono_ns() >= deadline) {
		/* Proven stalled: the submitter's own first poll would do the work. */
		ksft_test_result_skip("an aio poll's completion in a kworker does none of the wheel's work: the adds ended %llu ms after the deadline\n",
				      (unsigned long long)((mono_ns() - deadline) / NSEC_PER_MSEC));
		syscall(SYS_io_destroy, actx);
		close(fd);
		return 1;
	}
	if (syscall(SYS_io_submit, actx, 1, cbs) != 1)
		goto out_aio;
	r = syscall(SYS_io_getevents, actx, 1, 1, &ev, &ts);
	expired = fdinfo_get(fd, "expired_total");
	due = fdinfo_get(fd, "due");
	/* Then the submitter reads: every id, none early. */
	while ((n = twheel_read_events(fd, evs, 1024)) > 0)
		for (int i = 0; i < n; i++)
			got += evs[i].expired_ns >= evs[i].deadline_ns &&
			       evs[i].deadline_ns >= deadline;
	ok = r == 1 && (ev.res & POLLIN) && expired == 0 && due == 1 && got == AIO_IDS;
out_aio:
	syscall(SYS_io_destroy, actx);
out:
	ksft_test_result(ok, "an aio poll's completion in a kworker does none of the wheel's work (completed %d, res %#llx; then %lld expired, due %lld; the submitter's read took %d of %d, none early)\n",
			 r, (unsigned long long)ev.res, expired, due, got, AIO_IDS);
	if (fd >= 0)
		close(fd);
	return ok;
}

int main(void)
{
	int unit_ok, stop_ok, holder_ok, freeze_ok, mass_ok, aio_ok, g;
	struct stat st;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (stat(TWHEEL_DEVICE, &st))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL);
	}
	if (access(CG_ROOT "/cgroup.controllers", F_OK))
		ksft_exit_skip("no cgroup v2\n");
	main_pid = getpid();
	atexit(cleanup);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	for (g = 0; g < NR_GROUPS; g++) {
		snprintf(group[g], sizeof(group[g]), CG_ROOT "/twheel-worker-%d-%s", main_pid,
			 group_name[g]);
		if (mkdir(group[g], 0755))
			ksft_exit_skip("cannot make %s: %s\n", group[g], strerror(errno));
	}
	if (!cg_has(R, "cpu.stat") || !cg_has(F, "cgroup.freeze"))
		ksft_exit_skip("no cpu.stat or cgroup.freeze in cgroup v2\n");
	/* The unit's reader outlives its parent: this process reaps it. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		ksft_exit_fail_msg("PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
	if (entry_limits_raise(MASS + 4 * IDS + SLOTS + 1000))
		ksft_exit_fail_msg("cannot raise the entry limits\n");
	/* The unit is a user's. */
	saved_mode = st.st_mode & 07777;
	mode_changed = 1;
	chmod(TWHEEL_DEVICE, 0666);
	ksft_set_plan(9);

	unit_ok = test_unit();
	chmod(TWHEEL_DEVICE, saved_mode);
	mode_changed = 0;
	stop_ok = test_stop();
	holder_ok = test_holder();
	freeze_ok = test_freeze();
	mass_ok = test_mass();
	aio_ok = test_aio_poll();

	look_for_threads();
	ksft_test_result(!threads_max, "no kernel thread of the module at any of %d looks (%d at most%s%s)\n",
			 looks, threads_max, threads_max ? ", e.g. " : "", threads_max ? thread_seen : "");

	printf("worker: threads=%d unit_stop=%s freeze=%s charged=%s stop_by=%s\n", threads_max,
	       unit_ok && stop_ok && holder_ok ? "yes" : "no", freeze_ok ? "yes" : "no",
	       mass_ok && aio_ok ? "yes" : "no", stop_by);
	ksft_finished();
}
