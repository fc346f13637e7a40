// SPDX-License-Identifier: GPL-2.0
/*
 * nslimit: the containers that one user makes cannot take each other's
 * share of that user's entry limit, nor the user's own.
 *
 * As root, lower the module's max_user_entries to N, then make CONTAINERS
 * (65) containers as a rootful runtime makes them: each a process that
 * root forks, which makes a user namespace whose uid 0 root maps to a
 * host uid of its own (as from /etc/subuid) and becomes that uid 0. Every
 * namespace's entries count against root's N, its creator's. Then:
 *  - without limits, container 0 takes all of root's N, and host root
 *    itself is refused: the attack is real here;
 *  - root sets a limit of L = N / (CONTAINERS + 1) on each namespace
 *    (TWHEEL_IOC_NS_LIMIT with a pid in it); each container then gets
 *    exactly L and ENOSPC after, whatever order they come in, and host
 *    root still has exactly the N - CONTAINERS * L left;
 *  - a read gives each namespace's limit and entries, and so does the
 *    fdinfo of a wheel in it (ns_limit:, ns_entries:);
 *  - a container's root, with every capability in its own namespace,
 *    can neither raise nor read its own limit (EPERM), but sets the
 *    limit of a namespace it makes inside, which holds;
 *  - a limit lowered below what a namespace holds refuses new entries;
 *    cleared, the namespace adds past its old limit;
 *  - bad arguments: EINVAL (a pid of the initial namespace, pid 0, bad
 *    flags, a limit with a read), ESRCH (no such pid);
 *  - limits go with their namespaces: once every container has exited,
 *    the module holds none (module parameter ns_limits).
 * Module parameters and the device's mode are restored after, also on
 * SIGTERM.
 *
 *   nslimit [CONTAINERS]	(default 65; run as root)
 *
 * Prints TAP and "nslimit: containers=C limit=L held=yes|no|skip".
 */
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define HOST_UID	400000		/* container i's uid 0 is HOST_UID + i */
#define NESTED_HOST_UID	499000		/* the nested namespace's uid 0 */
#define PER_CONTAINER	100		/* L */
#define MAX_CONTAINERS	200
#define HOUR_NS		(3600 * NSEC_PER_SEC)

struct cmd {
	char op;		/* 'o'pen, 'a'dd, 'c'lose, 'l'imit, 'f'dinfo, 'n'ested, e'x'it */
	uint64_t count;		/* 'a': ids to add */
	int pid;		/* 'l': whose namespace; 0: this agent's own */
	uint32_t flags;		/* 'l' */
	uint64_t limit;		/* 'l' */
};

struct reply {
	long long ok;		/* ids added; the pid of the agent ('n': the nested one's) */
	int err;		/* first failure, -errno */
	uint64_t limit, entries;	/* 'l'; 'f': its wheel's ns_limit: and ns_entries: */
};

struct agent {
	pid_t pid;
	int to, from;
};

/* TWHEEL_IOC_NS_LIMIT on @fd; 0 or -errno, @a filled. */
static int ns_limit(int fd, struct twheel_ns_limit_args *a, pid_t pid, uint32_t flags,
		    uint64_t limit)
{
	memset(a, 0, sizeof(*a));
	a->pid = pid;
	a->flags = flags;
	a->limit = limit;
	return ioctl(fd, TWHEEL_IOC_NS_LIMIT, a) ? -errno : 0;
}

/* uid and gid 0 of @pid's new namespace are @host_id of its parent's. 0 or -errno. */
static int agent_map(pid_t pid, unsigned int host_id)
{
	char path[64], map[64];
	int err;

	snprintf(map, sizeof(map), "0 %u 1\n", host_id);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	err = write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	return err ?: write_file(path, map);
}

/* In a new namespace, once mapped: become its root, as a runtime's init does. */
static int become_root(void)
{
	return setresgid(0, 0, 0) || setresuid(0, 0, 0) ? -errno : 0;
}

static void __attribute__((noreturn)) agent_loop(int in, int out, const int nested[2][2])
{
	struct twheel_op *ops = NULL;
	uint64_t next_id = 1;
	int fd = -1;
	struct cmd c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * Becoming the namespace's root changed the uid: that leaves the
	 * process non-dumpable, its /proc files the host root's, and its
	 * own root could not map the namespace it makes inside.
	 */
	prctl(PR_SET_DUMPABLE, 1);
	while (read(in, &c, sizeof(c)) == sizeof(c)) {
		struct reply r = { 0, 0, 0, 0 };
		struct twheel_ns_limit_args a = { 0 };

		switch (c.op) {
		case 'o':
			fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
			r.err = fd < 0 ? fd : 0;
			break;
		case 'a':
			ops = realloc(ops, c.count * sizeof(*ops));
			r.ok = fill_ids(fd, ops, c.count, &next_id, HOUR_NS, &r.err);
			break;
		case 'c':
			r.err = close(fd) ? -errno : 0;
			fd = -1;
			break;
		case 'l': {
			int dfd = fd >= 0 ? fd : dev_open(O_RDONLY | O_CLOEXEC);

			r.err = dfd < 0 ? dfd : ns_limit(dfd, &a, c.pid ?: getpid(), c.flags, c.limit);
			r.limit = a.limit;
			r.entries = a.entries;
			if (dfd >= 0 && dfd != fd)
				close(dfd);
			break;
		}
		case 'f':
			r.limit = fdinfo_get(fd, "ns_limit");
			r.entries = fdinfo_get(fd, "ns_entries");
			break;
		case 'n': {
			/* A namespace inside this one, its uid 0 this one's, as a nested runtime makes it. */
			int made[2], go[2], e = 0;
			char ok;
			pid_t p;

			if (!nested || pipe(made) || pipe(go)) {
				r.err = -EINVAL;
				break;
			}
			p = fork();
			if (!p) {
				e = unshare(CLONE_NEWUSER) ? -errno : 0;
				if (write(made[1], &e, sizeof(e)) != sizeof(e) || e ||
				    read(go[0], &ok, 1) != 1 || become_root())
					_exit(1);
				agent_loop(nested[0][0], nested[1][1], NULL);
			}
			if (p < 0 || read(made[0], &e, sizeof(e)) != sizeof(e))
				e = -EPIPE;
			/* This namespace's uid 0 maps to its own creator's view: 0 here. */
			e = e ?: agent_map(p, 0);
			if (write(go[1], "g", 1) != 1 && !e)
				e = -EPIPE;
			close(made[0]);
			close(made[1]);
			close(go[0]);
			close(go[1]);
			r.err = e;
			r.ok = p;
			break;
		}
		case 'x':
			_exit(0);
		}
		if (write(out, &r, sizeof(r)) != sizeof(r))
			_exit(21);
	}
	_exit(0);
}

static struct reply agent_do(struct agent *a, char op, uint64_t count, int pid, uint32_t flags,
			     uint64_t limit)
{
	struct cmd c = { op, count, pid, flags, limit };
	struct reply r = { 0, -EPIPE, 0, 0 };

	if (write(a->to, &c, sizeof(c)) != sizeof(c) || read(a->from, &r, sizeof(r)) != sizeof(r))
		return (struct reply){ 0, -EPIPE, 0, 0 };
	return r;
}

static struct reply agent_add(struct agent *a, uint64_t count)
{
	return agent_do(a, 'a', count, 0, 0, 0);
}

/*
 * A container: root forks it, it makes a user namespace, root maps its
 * uid 0 to @host_uid, it becomes that uid 0 and serves commands. With
 * @nested, the pipes of the agent its 'n' makes. 0 or -errno.
 */
static int container_start(struct agent *a, unsigned int host_uid, const int nested[2][2])
{
	int down[2], up[2], made[2], go[2], err = 0;
	char ok;

	memset(a, 0, sizeof(*a));
	if (pipe(down) || pipe(up) || pipe(made) || pipe(go))
		return -errno;
	a->pid = fork();
	if (a->pid < 0)
		return -errno;
	if (!a->pid) {
		close(down[1]);
		close(up[0]);
		err = unshare(CLONE_NEWUSER) ? -errno : 0;
		if (write(made[1], &err, sizeof(err)) != sizeof(err) || err ||
		    read(go[0], &ok, 1) != 1 || become_root())
			_exit(1);
		agent_loop(down[0], up[1], nested);
	}
	close(down[0]);
	close(up[1]);
	a->to = down[1];
	a->from = up[0];
	if (read(made[0], &err, sizeof(err)) != sizeof(err))
		err = -EPIPE;
	err = err ?: agent_map(a->pid, host_uid);
	if (write(go[1], "g", 1) != 1 && !err)
		err = -EPIPE;
	close(made[0]);
	close(made[1]);
	close(go[0]);
	close(go[1]);
	return err;
}

static void agent_end(struct agent *a)
{
	struct cmd c = { 'x', 0, 0, 0, 0 };

	if (a->pid <= 0)
		return;
	if (write(a->to, &c, sizeof(c)) != sizeof(c))
		kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	close(a->to);
	close(a->from);
	a->pid = 0;
}

/* Adds up to @count ids on @fd (root's own wheel): how many went in, and the first failure. */
static long long root_add(int fd, uint64_t count, int *err, uint64_t *next_id)
{
	struct twheel_op *ops = calloc(count ?: 1, sizeof(*ops));
	long long added = fill_ids(fd, ops, count, next_id, HOUR_NS, err);

	free(ops);
	return added;
}

static struct agent box[MAX_CONTAINERS], nested_agent;

/* The tests' names, for their skips. */
static const char *const tests[11] = {
	"without limits, container 0 takes all of root's",
	"root sets a limit",
	"each container gets exactly",
	"root still has exactly its own share",
	"a read gives a namespace's limit",
	"a container's root can neither raise",
	"container 0's root sets",
	"the nested namespace's entries count in container 0's limit",
	"lowered to",
	"EINVAL for the initial namespace",
	"once the containers are gone the module holds no limit",
};

int main(int argc, char **argv)
{
	int containers = arg_or_env(argc, argv, "TWHEEL_NSLIMIT_CONTAINERS", 65);
	uint64_t l = PER_CONTAINER, n = l * (containers + 1), next_id = 1;
	int nested[2][2], i, fd, err, held = 1, ok, every, e1, e2, e3, e4, e5;
	struct twheel_ns_limit_args a;
	long long got, limits;
	struct reply r, r2;
	struct stat st;
	pid_t gone;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (stat(TWHEEL_DEVICE, &st))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	if (containers < 2 || containers > MAX_CONTAINERS)
		ksft_exit_fail_msg("containers: 2 to %d\n", MAX_CONTAINERS);
	if (!module_param("max_user_entries", 0))
		ksft_exit_skip("no module parameter max_user_entries\n");
	if (pipe(nested[0]) || pipe(nested[1]))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	ksft_set_plan(11);
	err = container_start(&box[0], HOST_UID, (const int (*)[2])nested);
	if (err == -EINVAL || err == -EPERM || err == -ENOSPC) {
		agent_end(&box[0]);
		for (i = 0; i < 11; i++)
			ksft_test_result_skip("%s: no user namespaces here (%s)\n", tests[i],
					      strerror(-err));
		printf("nslimit: containers=%d limit=%llu held=skip\n", containers,
		       (unsigned long long)l);
		ksft_finished();
	}
	err = users_setup(n);
	if (err)
		ksft_exit_fail_msg("max_user_entries %llu, device mode 0666: %s\n",
				   (unsigned long long)n, strerror(-err));
	for (i = 1; i < containers && !err; i++)
		err = container_start(&box[i], HOST_UID + i, NULL);
	if (err)
		ksft_exit_fail_msg("container %d: %s\n", i - 1, strerror(-err));
	fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
	if (fd < 0)
		ksft_exit_fail_msg("root's wheel: %s\n", strerror(-fd));
	for (i = 0; i < containers; i++)
		if (agent_do(&box[i], 'o', 0, 0, 0, 0).err)
			ksft_exit_fail_msg("container %d: no wheel\n", i);

	/* The attack, without limits: one container leaves root nothing. */
	r = agent_add(&box[0], n + 1);
	got = root_add(fd, 1, &err, &next_id);
	ok = r.ok == (long long)n && r.err == -ENOSPC && got == 0 && err == -ENOSPC;
	ksft_test_result(ok, "without limits, container 0 takes all of root's %llu (%lld, then %d), and root gets %lld (%d)\n",
			 (unsigned long long)n, r.ok, r.err, got, err);
	held &= ok;
	agent_do(&box[0], 'c', 0, 0, 0, 0);
	agent_do(&box[0], 'o', 0, 0, 0, 0);

	/* Root divides its share: L each, the rest its own. */
	every = 1;
	for (i = 0; i < containers; i++) {
		err = ns_limit(fd, &a, box[i].pid, TWHEEL_NS_LIMITF_SET, l);
		every &= !err && a.limit == l && a.entries == 0;
	}
	limits = module_param("ns_limits", -1);
	ksft_test_result(every && limits == containers,
			 "root sets a limit of %llu on each of the %d namespaces (module holds %lld)\n",
			 (unsigned long long)l, containers, limits);
	held &= every && limits == containers;

	r = agent_add(&box[0], n + 1);
	got = root_add(fd, l / 2, &err, &next_id);
	every = r.ok == (long long)l && r.err == -ENOSPC;
	for (i = 1; i < containers; i++) {
		r2 = agent_add(&box[i], n + 1);
		if (r2.ok != (long long)l || r2.err != -ENOSPC) {
			ksft_print_msg("container %d got %lld, then %d\n", i, r2.ok, r2.err);
			every = 0;
		}
	}
	ok = every && got == (long long)(l / 2) && !err;
	ksft_test_result(ok, "each container gets exactly %llu, then ENOSPC; root, in between, adds %lld of %llu\n",
			 (unsigned long long)l, got, (unsigned long long)(l / 2));
	held &= ok;
	got = root_add(fd, n, &err, &next_id);
	ok = got == (long long)(n - containers * l - l / 2) && err == -ENOSPC;
	ksft_test_result(ok, "root still has exactly its own share: %lld more (of %llu), then %d\n",
			 got, (unsigned long long)(n - containers * l - l / 2), err);
	held &= ok;

	err = ns_limit(fd, &a, box[containers - 1].pid, 0, 0);
	r = agent_do(&box[containers - 1], 'f', 0, 0, 0, 0);
	ok = !err && a.limit == l && a.entries == l && r.limit == l && r.entries == l &&
	     fdinfo_get(fd, "ns_entries") == -1;
	ksft_test_result(ok, "a read gives a namespace's limit %llu and entries %llu (%d); its wheel's fdinfo %lld and %lld; root's wheel has no such line\n",
			 (unsigned long long)a.limit, (unsigned long long)a.entries, err,
			 (long long)r.limit, (long long)r.entries);
	held &= ok;

	/* A container's root: every capability in its namespace, none over its parent. */
	r = agent_do(&box[0], 'l', 0, 0, TWHEEL_NS_LIMITF_SET, 10 * l);
	r2 = agent_do(&box[0], 'l', 0, 0, 0, 0);
	ok = r.err == -EPERM && r2.err == -EPERM;
	ksft_test_result(ok, "a container's root can neither raise (%d) nor read (%d) its own limit\n",
			 r.err, r2.err);
	held &= ok;

	/* ... but divides its own share among the namespaces it makes. */
	r = agent_do(&box[1], 'c', 0, 0, 0, 0);		/* room in root's level for what follows */
	r = agent_do(&box[0], 'c', 0, 0, 0, 0);
	nested_agent.to = nested[0][1];
	nested_agent.from = nested[1][0];
	r = agent_do(&box[0], 'n', 0, 0, 0, 0);
	nested_agent.pid = r.ok;
	err = r.err;
	r = agent_do(&box[0], 'l', 0, nested_agent.pid, TWHEEL_NS_LIMITF_SET, l / 4);
	/* Without the nested agent, nothing would answer. */
	r2 = err ? (struct reply){ 0, err, 0, 0 } : agent_do(&nested_agent, 'o', 0, 0, 0, 0);
	r2 = r2.err ? r2 : agent_add(&nested_agent, l);
	ok = !err && !r.err && r.limit == l / 4 && r2.ok == (long long)(l / 4) && r2.err == -ENOSPC;
	ksft_test_result(ok, "container 0's root sets %llu on a namespace it made (%d, %d): that one gets %lld, then %d\n",
			 (unsigned long long)(l / 4), err, r.err, r2.ok, r2.err);
	held &= ok;
	r = agent_do(&box[0], 'o', 0, 0, 0, 0);
	r = agent_add(&box[0], l);
	ok = r.ok == (long long)(l - l / 4) && r.err == -ENOSPC;
	ksft_test_result(ok, "the nested namespace's entries count in container 0's limit: it adds %lld, then %d\n",
			 r.ok, r.err);
	held &= ok;
	if (!err)
		agent_end(&nested_agent);

	/* Lowered below what it holds, then cleared. */
	e1 = ns_limit(fd, &a, box[2].pid, TWHEEL_NS_LIMITF_SET, l / 2);
	r = agent_add(&box[2], 1);
	/* The nested namespace's limit may be held or dropped by now: count from here. */
	limits = module_param("ns_limits", -1);
	e2 = ns_limit(fd, &a, box[2].pid, TWHEEL_NS_LIMITF_SET, 0);
	limits -= module_param("ns_limits", -1);
	r2 = agent_add(&box[2], l);	/* box[1]'s share is free */
	ok = !e1 && r.err == -ENOSPC && !e2 && a.limit == 0 && limits >= 1 &&
	     r2.ok == (long long)l && !r2.err;
	ksft_test_result(ok, "lowered to %llu below its %llu, a namespace is refused (%d); cleared (%d, %lld limits fewer), it adds %lld more\n",
			 (unsigned long long)(l / 2), (unsigned long long)l, r.err, e2, limits, r2.ok);
	held &= ok;

	/* Bad arguments. */
	gone = fork();
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	e1 = ns_limit(fd, &a, getpid(), 0, 0);
	e2 = ns_limit(fd, &a, 0, 0, 0);
	e3 = ns_limit(fd, &a, box[3].pid, 1U << 1, 0);
	e4 = ns_limit(fd, &a, box[3].pid, 0, 5);
	e5 = ns_limit(fd, &a, gone, 0, 0);
	ok = e1 == -EINVAL && e2 == -EINVAL && e3 == -EINVAL && e4 == -EINVAL && e5 == -ESRCH;
	ksft_test_result(ok, "EINVAL for the initial namespace (%d), pid 0 (%d), bad flags (%d), a limit with a read (%d); ESRCH for a gone pid (%d)\n",
			 e1, e2, e3, e4, e5);
	held &= ok;

	/* Limits go with their namespaces (their creds are freed after an RCU grace period). */
	for (i = 0; i < containers; i++)
		agent_end(&box[i]);
	for (i = 0; i < 500; i++) {
		ns_limit(fd, &a, getpid(), 0, 0);
		limits = module_param("ns_limits", -1);
		if (!limits)
			break;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	ok = limits == 0;
	ksft_test_result(ok, "once the containers are gone the module holds no limit (%lld)\n", limits);
	held &= ok;
	close(fd);
	users_setup_restore();
	printf("nslimit: containers=%d limit=%llu held=%s\n", containers, (unsigned long long)l,
	       held ? "yes" : "no");
	ksft_finished();
}
