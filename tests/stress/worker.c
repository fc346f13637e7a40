// SPDX-License-Identifier: GPL-2.0
/*
 * worker: a wheel's expiry runs in its owner's cgroup, and never holds
 * that cgroup up when it is stopped or frozen.
 *
 * A child in a cgroup v2 group G sets up two wheels. Then, as root:
 *  - the wheels' worker is one kernel thread (twheel/N), in G; a user
 *    cannot signal it (it is root's), and with max_user_workers at 1 a
 *    wheel set up from a second group fails with ENOSPC;
 *  - SIGTERM to it (what systemd sends every task of a unit it stops)
 *    moves it to the root cgroup, and the wheel goes on expiring there;
 *    the child's next ioctl takes the wheel into a worker in G again, and
 *    the orphan, with no wheel left, goes away;
 *  - with its worker signalled out first (as twheel(4) says: cgroup v2's
 *    freezer waits for no kernel thread, and for ever for one in the
 *    group), writing 1 to G's cgroup.freeze makes G frozen, and after
 *    the thaw a call brings the wheels back;
 *  - a stop as systemd does it, SIGTERM to every task of G, while the
 *    wheel lives on in another process (its fd passed out, as to the fd
 *    store): G empties, the wheel still expires, and its new holder's
 *    read takes it;
 *  - with the module's cgroup_workers at 0, a new child's wheels have
 *    their worker in the root cgroup;
 *  - the last close stops the worker, and G can be removed.
 * No event is early or lost meanwhile: ids due at a known time are read
 * back, each once, at or after their deadline. Before 5.16 the kernel's
 * cgroup_attach_task_all() leaves cgroup v2 out, and the worker stays in
 * the root cgroup (twheel(4)): there the program skips.
 *
 *   worker		(run as root)
 *
 * Prints TAP and "worker: in_cgroup=yes|no orphans=yes|no stop=yes|no";
 * SKIP (exit 4) without cgroup v2.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define PF_KTHREAD	0x00200000
#define WAIT_NS		(10 * NSEC_PER_SEC)	/* for a slow guest */
#define HOUR_NS		(3600 * NSEC_PER_SEC)
#define IDS		100

static char group[128];

static void cg_path(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", group, file);
}

/* The value of @key in G's flat keyed file @file (cgroup.events), or -1. */
static long long cg_key(const char *file, const char *key)
{
	char p[256], buf[1024], *s;
	size_t len = strlen(key);

	cg_path(p, sizeof(p), file);
	if (read_file(p, buf, sizeof(buf)) <= 0)
		return -1;
	for (s = buf; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (!strncmp(s, key, len) && s[len] == ' ')
			return strtoll(s + len + 1, NULL, 10);
	return -1;
}

/* Task @pid is a kernel thread named twheel/...; its cgroup v2 path in @cg. */
static bool is_worker(int pid, char *cg, size_t len)
{
	char path[64], buf[512], *s;
	unsigned long long flags;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0 || strncmp(strchr(buf, '(') ?: "", "(twheel/", 8))
		return false;
	s = strrchr(buf, ')');
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %llu", &flags) != 1 ||
	    !(flags & PF_KTHREAD))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0 || !(s = strstr(buf, "0::")))
		return false;
	snprintf(cg, len, "%.*s", (int)strcspn(s + 3, "\n"), s + 3);
	return true;
}

/* The workers in G: how many, and the pid of one in *@pid. */
static int workers_in_group(int *pid)
{
	const char *rel = group + strlen(CG_ROOT);
	DIR *d = opendir("/proc");
	struct dirent *de;
	char cg[256];
	int n = 0;

	while (d && (de = readdir(d))) {
		int p = atoi(de->d_name);

		if (p > 0 && is_worker(p, cg, sizeof(cg)) && !strcmp(cg, rel)) {
			n++;
			*pid = p;
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* Whether kernel thread @pid exists and is in the root cgroup. */
static bool worker_in_root(int pid)
{
	char cg[256];

	return is_worker(pid, cg, sizeof(cg)) && !strcmp(cg, "/");
}

static bool worker_gone(int pid)
{
	char cg[256];

	return !is_worker(pid, cg, sizeof(cg));
}

/* Wait until @cond(@arg) holds, for WAIT_NS at most. */
static bool wait_for(bool (*cond)(int), int arg)
{
	uint64_t until = mono_ns() + WAIT_NS;

	while (!cond(arg)) {
		if (mono_ns() > until)
			return false;
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	return true;
}

static bool group_frozen(int want)
{
	return cg_key("cgroup.events", "frozen") == want;
}

static bool group_empty(int unused)
{
	(void)unused;
	return cg_key("cgroup.events", "populated") == 0;
}

static bool group_has_worker(int unused)
{
	int pid;

	(void)unused;
	return workers_in_group(&pid) == 1;
}

/* In a process of uid 4205: kill(@pid, SIGTERM), 0 or -errno. */
static int user_kill(int pid)
{
	int st, err = 0;
	pid_t p = fork();

	if (!p)
		_exit(setuid(4205) ? 100 : kill(pid, SIGTERM) ? errno : 0);
	waitpid(p, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 100)
		return -ECHILD;
	err = WEXITSTATUS(st);
	return -err;
}

/*
 * With max_user_workers at 1 (the child's worker is root's one), set up
 * a wheel from a second group: the -errno of wheel_new(), or 0.
 */
static int second_group_setup(void)
{
	unsigned long long saved = module_param("max_user_workers", 0);
	char g2[160], p[192], me[32];
	int st, ret;
	pid_t pid;

	snprintf(g2, sizeof(g2), "%s-2", group);
	if (!saved || mkdir(g2, 0755) || module_param_set("max_user_workers", 1))
		return -ECHILD;
	pid = fork();
	if (!pid) {
		int fd;

		snprintf(p, sizeof(p), "%s/cgroup.procs", g2);
		snprintf(me, sizeof(me), "%d", getpid());
		if (write_file(p, me))
			_exit(100);
		fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
		_exit(fd < 0 ? -fd : 0);
	}
	waitpid(pid, &st, 0);
	module_param_set("max_user_workers", saved);
	ret = WIFEXITED(st) && WEXITSTATUS(st) != 100 ? -WEXITSTATUS(st) : -ECHILD;
	rmdir(g2);
	return ret;
}

/* ---- the child in G: its commands, one at a time ---- */

enum { C_ADD, C_QUERY, C_SEND, C_EXIT };

struct cmd {
	int op;
	uint64_t id, timeout_ns;
};

static int child_fd[2], child_sock;

static void child_loop(int in, int out)
{
	struct cmd c;

	while (read(in, &c, sizeof(c)) == sizeof(c)) {
		int r = 0;

		switch (c.op) {
		case C_ADD:
			r = twheel_add(child_fd[0], c.id, c.timeout_ns);
			break;
		case C_QUERY:
			/* A call into each wheel (ENOENT or not): each is adopted on its own. */
			twheel_query(child_fd[0], c.id, NULL, NULL);
			twheel_query(child_fd[1], c.id, NULL, NULL);
			break;
		case C_SEND:
			r = send_fd(child_sock, child_fd[0]);
			break;
		case C_EXIT:
			_exit(0);
		}
		if (write(out, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
	_exit(0);
}

static int to_child, from_child;
static pid_t child;

static int child_do(int op, uint64_t id, uint64_t timeout_ns)
{
	struct cmd c = { op, id, timeout_ns };
	int r = -EPIPE;

	if (write(to_child, &c, sizeof(c)) != sizeof(c) || read(from_child, &r, sizeof(r)) != sizeof(r))
		return -EPIPE;
	return r;
}

/*
 * A worker reaches the root cgroup a moment before it marks its wheels
 * orphaned, and only a call into a wheel marked so takes it back: call
 * until one does, rather than once.
 */
static bool query_takes_wheels(int unused)
{
	(void)unused;
	child_do(C_QUERY, 1, 0);
	return group_has_worker(0);
}

/* The same for the wheel held by this process, in @held_fd. */
static int held_fd = -1;

static bool query_until_gone(int pid)
{
	twheel_query(held_fd, 0, NULL, NULL);
	return worker_gone(pid);
}

/* Fork the child: into G, two wheels set up there. 0 or -errno. */
static int child_start(int sock)
{
	int down[2], up[2], r = 0;

	if (pipe(down) || pipe(up))
		return -errno;
	child = fork();
	if (child < 0)
		return -errno;
	if (!child) {
		char p[256], me[32];
		int i;

		close(down[1]);
		close(up[0]);
		child_sock = sock;
		cg_path(p, sizeof(p), "cgroup.procs");
		snprintf(me, sizeof(me), "%d", getpid());
		r = write_file(p, me);
		for (i = 0; i < 2 && !r; i++) {
			child_fd[i] = wheel_new(O_CLOEXEC | O_NONBLOCK, NSEC_PER_MSEC, HOUR_NS, 0);
			r = child_fd[i] < 0 ? child_fd[i] : 0;
		}
		if (write(up[1], &r, sizeof(r)) != sizeof(r) || r ||
		    write(up[1], &child_fd[0], sizeof(child_fd[0])) != sizeof(child_fd[0]))
			_exit(1);
		child_loop(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	to_child = down[1];
	from_child = up[0];
	if (read(from_child, &r, sizeof(r)) != sizeof(r) ||
	    (!r && read(from_child, &child_fd[0], sizeof(child_fd[0])) != sizeof(child_fd[0])))
		r = -EPIPE;
	return r;
}

/* fdinfo of the child's first wheel, as root reads it. */
static long long child_fdinfo(const char *key)
{
	char path[64], buf[2048], *s;
	size_t len = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", child, child_fd[0]);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (s = buf; s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (!strncmp(s, key, len) && s[len] == ':')
			return strtoll(s + len + 1, NULL, 10);
	return -1;
}

static bool child_waiting(int n)
{
	return child_fdinfo("events_waiting") >= n;
}

/* The ids the child added, each due no earlier than @due_ns, and whether read. */
struct expect {
	uint64_t first;
	int n;
	uint64_t due_ns;
	int read, bad;
};

/*
 * Read @fd until every id of @ex[0..@nex) came once, for WAIT_NS at most:
 * an id read twice, early or not expected counts as bad. True if all
 * came, none bad.
 */
static bool read_back(int fd, struct expect *ex, int nex)
{
	static struct twheel_event ev[256];
	static char seen[4096];
	uint64_t until = mono_ns() + WAIT_NS;
	int want = 0, got = 0, bad = 0, r, i, j;

	for (j = 0; j < nex; j++)
		want += ex[j].n;
	memset(seen, 0, sizeof(seen));
	while (got < want && mono_ns() < until) {
		r = twheel_read_events(fd, ev, 256);
		if (r == -EAGAIN) {
			sleep_ns(10 * NSEC_PER_MSEC);
			continue;
		}
		if (r < 0)
			break;
		for (i = 0; i < r; i++) {
			uint64_t id = ev[i].id;

			for (j = 0; j < nex; j++)
				if (id >= ex[j].first && id < ex[j].first + ex[j].n)
					break;
			if (j == nex || id >= sizeof(seen) || seen[id]++ ||
			    ev[i].deadline_ns < ex[j].due_ns || ev[i].expired_ns < ev[i].deadline_ns) {
				bad++;
				continue;
			}
			ex[j].read++;
			got++;
		}
	}
	return got == want && !bad;
}

int main(void)
{
	int sv[2], w1 = 0, w2 = 0, w3 = 0, n, ok, in_cgroup, orphans = 1, stop;
	struct expect ex[3];
	char buf[256];

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (access(TWHEEL_DEVICE, F_OK))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL);
	}
	snprintf(group, sizeof(group), CG_ROOT "/twheel-worker-%d", getpid());
	if (access(CG_ROOT "/cgroup.controllers", F_OK) || mkdir(group, 0755))
		ksft_exit_skip("no cgroup v2\n");
	{
		struct utsname u;
		int major = 0, minor = 0;

		uname(&u);
		sscanf(u.release, "%d.%d", &major, &minor);
		if (major < 5 || (major == 5 && minor < 16))
			ksft_exit_skip("kernel %s: cgroup_attach_task_all() leaves cgroup v2 out before 5.16\n",
				       u.release);
	}
	ksft_set_plan(10);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || child_start(sv[1]))
		ksft_exit_fail_msg("the child could not set up its wheels in %s\n", group);

	n = workers_in_group(&w1);
	in_cgroup = n == 1;
	ksft_test_result(in_cgroup, "the child's two wheels have one worker, in its cgroup (%d there)\n",
			 n);
	/* Without it the rest would signal pid 0, this very process group. */
	if (!in_cgroup) {
		kill(child, SIGKILL);
		ksft_exit_fail_msg("no worker in %s\n", group);
	}
	n = user_kill(w1);
	ksft_test_result(n == -EPERM && workers_in_group(&w2) == 1 && w2 == w1,
			 "a user's SIGTERM to worker %d fails (%s); it stays\n", w1, strerror(-n));
	n = second_group_setup();
	ksft_test_result(n == -ENOSPC,
			 "with max_user_workers=1, a wheel set up from another group fails (%s)\n",
			 strerror(-n));

	/* SIGTERM: the worker leaves; the wheel expires on, no call into it. */
	ex[0] = (struct expect){ 1000, 1, mono_ns(), 0, 0 };
	ex[1] = (struct expect){ 0, IDS, mono_ns() + 300 * NSEC_PER_MSEC, 0, 0 };
	child_do(C_ADD, 1000, 0);
	for (n = 0; n < IDS; n++)
		child_do(C_ADD, n, 300 * NSEC_PER_MSEC);
	kill(w1, SIGTERM);
	ok = in_cgroup && wait_for(worker_in_root, w1) && workers_in_group(&w2) == 0 &&
	     wait_for(child_waiting, IDS + 1);
	ksft_test_result(ok, "SIGTERM moves worker %d to the root cgroup; its wheel expires on (%lld waiting)\n",
			 w1, child_fdinfo("events_waiting"));
	orphans &= ok;

	ok = wait_for(query_takes_wheels, 0) && workers_in_group(&w2) == 1 && w2 != w1 &&
	     wait_for(worker_gone, w1);
	ksft_test_result(ok, "the child's next ioctls take its wheels into worker %d in its cgroup; %d, left with none, stops\n",
			 w2, w1);
	orphans &= ok;

	/* Freeze, the worker sent away first: the group becomes frozen. */
	kill(w2, SIGTERM);
	cg_path(buf, sizeof(buf), "cgroup.freeze");
	ok = wait_for(worker_in_root, w2) && !write_file(buf, "1") && wait_for(group_frozen, 1);
	write_file(buf, "0");
	ok &= wait_for(group_frozen, 0);
	ok &= wait_for(query_takes_wheels, 0) && workers_in_group(&w3) == 1 && w3 != w2 &&
	      wait_for(worker_gone, w2);
	ksft_test_result(ok, "with worker %d signalled to the root cgroup, cgroup.freeze completes; after the thaw calls bring the wheels back (%d)\n",
			 w2, w3);
	orphans &= ok;

	/*
	 * A stop while the wheel lives on: the child hands its first wheel
	 * over, then every task of the group gets SIGTERM.
	 */
	ex[2] = (struct expect){ 2000, IDS, mono_ns() + 500 * NSEC_PER_MSEC, 0, 0 };
	for (n = 0; n < IDS; n++)
		child_do(C_ADD, 2000 + n, 500 * NSEC_PER_MSEC);
	child_do(C_SEND, 0, 0);
	held_fd = recv_fd(sv[0]);
	kill(child, SIGTERM);
	kill(w3, SIGTERM);
	waitpid(child, NULL, 0);
	ok = held_fd >= 0 && wait_for(group_empty, 0) && worker_in_root(w3);
	ksft_test_result(ok, "SIGTERM to every task of the group empties it, the wheel living on in fd %d\n",
			 held_fd);
	stop = ok;

	fcntl(held_fd, F_SETFL, O_NONBLOCK);
	ok = read_back(held_fd, ex, 3) && wait_for(query_until_gone, w3);
	ksft_test_result(ok, "its new holder reads every id once, none early (%d + %d + %d of 1 + %d + %d), and takes the wheel: worker %d stops\n",
			 ex[0].read, ex[1].read, ex[2].read, IDS, IDS, w3);
	stop &= ok;

	close(held_fd);

	/* Without cgroup workers: the new child's wheels run in the root cgroup. */
	ok = !module_param_set("cgroup_workers", 0) && !child_start(sv[1]);
	n = workers_in_group(&w1);
	ksft_test_result(ok && n == 0, "with cgroup_workers=0 the wheels of a child in the group have no worker there (%d)\n",
			 n);
	module_param_set("cgroup_workers", 1);
	child_do(C_EXIT, 0, 0);
	waitpid(child, NULL, 0);

	close(sv[0]);
	close(sv[1]);
	for (n = 0, ok = 0; n < 100 && !ok; n++) {
		ok = !rmdir(group);
		if (!ok)
			sleep_ns(50 * NSEC_PER_MSEC);
	}
	ksft_test_result(ok, "the group can be removed after the last close\n");

	printf("worker: in_cgroup=%s orphans=%s stop=%s\n", in_cgroup ? "yes" : "no",
	       orphans ? "yes" : "no", stop ? "yes" : "no");
	ksft_finished();
}
