// SPDX-License-Identifier: GPL-2.0
/*
 * lifetimes: the life and death of wheels, fds and the module.
 *
 * rmmod is refused while a wheel is open and works after the last close
 * (then the module is loaded back from /twheel.ko, where vm/run.sh puts
 * it); close() races threads blocked in read, poll and epoll_wait and a
 * thread in the middle of a big batch, and a signal ends a blocked read
 * and stops a batch between chunks with an honest count; a wheel is
 * closed with its timer armed and its work queued; a wheel passed by
 * SCM_RIGHTS outlives its creator; after fork both sides use one wheel
 * and every event is read exactly once; an O_CLOEXEC wheel is gone in an
 * exec'ed image while a plain one still works there. Kernel-side damage
 * shows in the kernel log, which the harness scans.
 *
 *   lifetimes			(run as root, inside the test VM)
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define KO_PATH		"/twheel.ko"
#define BIG_BATCH	(64 * 1024)

static void on_signal(int sig)
{
	(void)sig;
}

static int wheel(void)
{
	int fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, 100 * NSEC_PER_MSEC, 0);

	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", TWHEEL_DEVICE, strerror(-fd));
	return fd;
}

/* ---- module unload ---- */

static int delete_module(const char *name, unsigned int flags)
{
	return syscall(SYS_delete_module, name, flags) ? -errno : 0;
}

static int wait_for_device(int present)
{
	int i;

	for (i = 0; i < 300; i++) {
		if ((access(TWHEEL_DEVICE, F_OK) == 0) == present)
			return 1;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	return 0;
}

static void test_rmmod(void)
{
	int fd, ret, ko;

	ko = open(KO_PATH, O_RDONLY | O_CLOEXEC);
	if (ko < 0 || access("/sys/module/twheel", F_OK)) {
		ksft_test_result_skip("rmmod refused while a wheel is open: no " KO_PATH " to load back\n");
		ksft_test_result_skip("rmmod works after the last close: no " KO_PATH "\n");
		ksft_test_result_skip("module loads back and works: no " KO_PATH "\n");
		if (ko >= 0)
			close(ko);
		return;
	}
	fd = wheel();
	twheel_add(fd, 1, 3600 * NSEC_PER_SEC);
	ret = delete_module("twheel", O_NONBLOCK);
	ksft_test_result(ret == -EWOULDBLOCK || ret == -EBUSY,
			 "rmmod refused while a wheel is open (%s)\n",
			 ret ? strerror(-ret) : "it unloaded!");
	if (!ret) {
		/* Unloaded under an open fd: do not touch it again. */
		ksft_test_result_fail("rmmod works after the last close (module already gone)\n");
	} else {
		close(fd);
		ret = delete_module("twheel", O_NONBLOCK);
		ksft_test_result(!ret && wait_for_device(0),
				 "rmmod works after the last close (%s)\n",
				 ret ? strerror(-ret) : "ok");
	}
	ret = syscall(SYS_finit_module, ko, "", 0) ? -errno : 0;
	close(ko);
	fd = ret == 0 && wait_for_device(1) ? wheel_new(O_CLOEXEC, NSEC_PER_MSEC, NSEC_PER_MSEC,
							0) : -1;
	ksft_test_result(fd >= 0 && twheel_add(fd, 7, TWHEEL_TIMEOUT_DEFAULT) == 0,
			 "module loads back and works (finit_module: %s)\n", ret ? strerror(-ret) : "ok");
	if (fd >= 0)
		close(fd);
}

/* ---- close racing blocked callers ---- */

struct blocked {
	int fd, mode;		/* 0 read, 1 poll, 2 epoll_wait */
	int epfd;
	long ret;
	int err, revents;
	struct twheel_event ev;
};

static void *blocked_main(void *arg)
{
	struct blocked *b = arg;

	if (b->mode == 0) {
		b->ret = read(b->fd, &b->ev, sizeof(b->ev));
	} else if (b->mode == 1) {
		struct pollfd p = { .fd = b->fd, .events = POLLIN };

		b->ret = poll(&p, 1, 10000);
		b->revents = p.revents;
	} else {
		struct epoll_event ee = { 0 };

		b->ret = epoll_wait(b->epfd, &ee, 1, 1500);
		b->revents = ee.events;
	}
	b->err = errno;
	return NULL;
}

static void start_blocked(struct blocked *b, pthread_t *th)
{
	pthread_create(th, NULL, blocked_main, b);
	sleep_ns(50 * NSEC_PER_MSEC);	/* let it block */
}

static void test_close_races(void)
{
	struct epoll_event ee = { .events = EPOLLIN };
	struct blocked b;
	pthread_t th;
	int ended, fd2;

	/* read: the file lives on while read sleeps; the event still comes. */
	memset(&b, 0, sizeof(b));
	b.fd = wheel();
	twheel_add(b.fd, 11, 200 * NSEC_PER_MSEC);
	start_blocked(&b, &th);
	close(b.fd);
	ended = join_within(th, 5 * NSEC_PER_SEC);
	ksft_test_result(ended && b.ret == sizeof(b.ev) && b.ev.id == 11,
			 "close racing a blocked read: the read still gets its event\n");
	if (!ended)
		return;

	/* poll: wakes on the event and finds the fd closed (or the event). */
	memset(&b, 0, sizeof(b));
	b.mode = 1;
	b.fd = wheel();
	twheel_add(b.fd, 12, 200 * NSEC_PER_MSEC);
	start_blocked(&b, &th);
	close(b.fd);
	ended = join_within(th, 5 * NSEC_PER_SEC);
	ksft_test_result(ended && b.ret == 1 && (b.revents == POLLNVAL || b.revents & POLLIN),
			 "close racing a blocked poll: poll returns (revents %#x)\n", b.revents);
	if (!ended)
		return;

	/* epoll, last reference closed: the wheel goes, epoll_wait times out. */
	memset(&b, 0, sizeof(b));
	b.mode = 2;
	b.fd = wheel();
	b.epfd = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(b.epfd, EPOLL_CTL_ADD, b.fd, &ee);
	twheel_add(b.fd, 13, 300 * NSEC_PER_MSEC);
	start_blocked(&b, &th);
	close(b.fd);
	ended = join_within(th, 5 * NSEC_PER_SEC);
	ksft_test_result(ended && b.ret == 0,
			 "close of the last reference under epoll_wait: the wheel goes quietly (ret %ld)\n",
			 b.ret);
	close(b.epfd);
	if (!ended)
		return;

	/* epoll, a dup keeps the file: the event wakes the waiter. */
	memset(&b, 0, sizeof(b));
	b.mode = 2;
	b.fd = wheel();
	fd2 = dup(b.fd);
	b.epfd = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(b.epfd, EPOLL_CTL_ADD, b.fd, &ee);
	twheel_add(b.fd, 14, 200 * NSEC_PER_MSEC);
	start_blocked(&b, &th);
	close(b.fd);
	ended = join_within(th, 5 * NSEC_PER_SEC);
	ksft_test_result(ended && b.ret == 1 && (b.revents & EPOLLIN),
			 "close of one fd under epoll_wait while a dup lives: the event wakes it\n");
	close(fd2);
	close(b.epfd);

	/* A signal ends a blocked read. */
	memset(&b, 0, sizeof(b));
	b.fd = wheel();
	start_blocked(&b, &th);
	pthread_kill(th, SIGUSR1);
	ended = join_within(th, 5 * NSEC_PER_SEC);
	ksft_test_result(ended && b.ret == -1 && b.err == EINTR,
			 "a signal ends a blocked read with EINTR\n");
	close(b.fd);
}

/* ---- big batches ---- */

struct batcher {
	int fd;
	struct twheel_op *ops;
	long ret;
};

static void *batch_main(void *arg)
{
	struct batcher *bt = arg;

	bt->ret = twheel_batch(bt->fd, bt->ops, BIG_BATCH);
	return NULL;
}

static struct twheel_op *big_ops(uint64_t base)
{
	struct twheel_op *ops = malloc(BIG_BATCH * sizeof(*ops));
	uint32_t i;

	for (i = 0; i < BIG_BATCH; i++) {
		op_init(&ops[i], TWHEEL_OP_ADD, base + i, TWHEEL_OPF_TIMEOUT,
			(i % 50) * NSEC_PER_MSEC);
		ops[i].result = 0x5a5a5a5a;	/* must stay unless applied */
	}
	return ops;
}

static void test_batches(void)
{
	struct batcher bt;
	pthread_t th;
	uint32_t i, bad = 0;
	int ended;

	/* close() while another thread is deep in a batch on the fd. */
	bt.fd = wheel();
	bt.ops = big_ops(1000000);
	pthread_create(&th, NULL, batch_main, &bt);
	sleep_ns(20 * NSEC_PER_MSEC);
	close(bt.fd);
	ended = join_within(th, 300 * NSEC_PER_SEC);
	ksft_test_result(ended && bt.ret == BIG_BATCH,
			 "close racing a %d-op batch: the batch completes (%s, ret %ld)\n",
			 BIG_BATCH, ended ? "ended" : "still running after 300 s", bt.ret);
	if (!ended)
		return;

	/* A signal stops a batch between chunks; the count is honest. */
	bt.fd = wheel();
	for (i = 0; i < BIG_BATCH; i++)
		bt.ops[i].result = 0x5a5a5a5a;
	pthread_create(&th, NULL, batch_main, &bt);
	sleep_ns(20 * NSEC_PER_MSEC);
	pthread_kill(th, SIGUSR1);
	ended = join_within(th, 300 * NSEC_PER_SEC);
	for (i = 0; ended && bt.ret > 0 && i < BIG_BATCH; i++)
		if ((i < bt.ret) != (bt.ops[i].result != 0x5a5a5a5a))
			bad++;
	ksft_print_msg("signalled batch applied %ld of %d ops\n", bt.ret, BIG_BATCH);
	ksft_test_result(ended && bt.ret > 0 && bt.ret <= BIG_BATCH && !bad,
			 "a signal stops a batch between chunks, ops past the count untouched\n");
	close(bt.fd);
	free(bt.ops);

	/* Close with the timer armed and the work queued or running. */
	for (i = 0; i < 20; i++) {
		int fd = wheel(), j;
		struct twheel_op ops[256];

		for (j = 0; j < 256; j++)
			op_init(&ops[j], TWHEEL_OP_ADD, j, TWHEEL_OPF_TIMEOUT,
				(j % 3) * NSEC_PER_MSEC);
		twheel_batch(fd, ops, 256);
		sleep_ns((i % 4) * NSEC_PER_MSEC);
		close(fd);
	}
	ksft_test_result(1, "close with the timer armed and the work pending, 20 times\n");
}

/* ---- sharing ---- */

static void test_scm_rights(void)
{
	int sv[2], fd = -1, status, ok = 0;
	struct twheel_event ev;
	struct pollfd p;
	pid_t pid;

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid = fork();
	if (pid == 0) {
		int w = wheel();

		_exit(twheel_add(w, 42, 300 * NSEC_PER_MSEC) || send_fd(sv[1], w));
	}
	fd = recv_fd(sv[0]);
	waitpid(pid, &status, 0);
	close(sv[0]);
	close(sv[1]);
	if (fd >= 0) {
		p.fd = fd;
		p.events = POLLIN;
		ok = WIFEXITED(status) && !WEXITSTATUS(status) && poll(&p, 1, 5000) == 1 &&
		     read(fd, &ev, sizeof(ev)) == sizeof(ev) && ev.id == 42;
		close(fd);
	}
	ksft_test_result(ok, "a wheel passed by SCM_RIGHTS outlives its creator and delivers\n");
}

#define FORK_IDS 2000

/* Read events of @fd until @quiet_ms pass without one; ids into @seen. */
static int drain_ids(int fd, uint8_t *seen, int quiet_ms, uint64_t until)
{
	struct twheel_event ev[64];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int dups = 0;
	ssize_t n, i;

	while (mono_ns() < until || poll(&p, 1, quiet_ms) == 1) {
		if (poll(&p, 1, 10) != 1)
			continue;
		n = read(fd, ev, sizeof(ev));
		for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++) {
			if (ev[i].id >= FORK_IDS || seen[ev[i].id]++)
				dups++;
		}
	}
	return dups;
}

static void test_fork(void)
{
	static uint8_t seen[FORK_IDS], theirs[FORK_IDS];
	int fd = wheel(), pfd[2], status, dups, i, lost = 0, ok_add = 1, n_mine, n_theirs;
	uint64_t until;
	pid_t pid;

	if (pipe(pfd))
		exit(1);
	/* Shared by both sides: a read never sleeps on events the other took. */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	until = mono_ns() + 400 * NSEC_PER_MSEC;
	pid = fork();
	if (pid == 0) {
		for (i = FORK_IDS / 2; i < FORK_IDS; i++)
			ok_add &= !twheel_add(fd, i, (i % 200) * NSEC_PER_MSEC);
		dups = drain_ids(fd, seen, 500, until);
		if (write(pfd[1], seen, FORK_IDS) != FORK_IDS)
			_exit(3);
		_exit(dups ? 1 : ok_add ? 0 : 2);
	}
	for (i = 0; i < FORK_IDS / 2; i++)
		ok_add &= !twheel_add(fd, i, (i % 200) * NSEC_PER_MSEC);
	dups = drain_ids(fd, seen, 500, until);
	if (read(pfd[0], theirs, FORK_IDS) != FORK_IDS)
		lost = -1;
	waitpid(pid, &status, 0);
	for (i = 0; i < FORK_IDS; i++) {
		if (seen[i] + theirs[i] == 0)
			lost++;
		else if (seen[i] + theirs[i] > 1)
			dups++;
	}
	for (i = 0, n_mine = 0, n_theirs = 0; i < FORK_IDS; i++) {
		n_mine += seen[i];
		n_theirs += theirs[i];
	}
	ksft_print_msg("fork: parent read %d events, child read %d\n", n_mine, n_theirs);
	ksft_test_result(ok_add && !dups && !lost && WIFEXITED(status) && !WEXITSTATUS(status),
			 "fork, both sides add and read: each of %d events read exactly once (lost %d, dup %d)\n",
			 FORK_IDS, lost, dups);
	close(pfd[0]);
	close(pfd[1]);
	close(fd);
}

/* In the exec'ed image: is fd @fd a working wheel (1) or gone (0)? */
static int exec_check(int fd, int expect_open)
{
	char path[64], target[256] = "";
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0)
		target[n] = 0;
	if (!expect_open)
		return fcntl(fd, F_GETFD) == -1 && errno == EBADF ? 0 : 1;
	/* A live set-up wheel: QUERY of an unknown id is ENOENT. */
	return strcmp(target, TWHEEL_DEVICE) == 0 &&
	       twheel_query(fd, 999, NULL, NULL) == -ENOENT ? 0 : 1;
}

static int run_exec(int fd, int expect_open)
{
	char fdarg[16], exparg[4];
	int status;
	pid_t pid;

	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	snprintf(exparg, sizeof(exparg), "%d", expect_open);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "lifetimes", "--exec-check", fdarg, exparg, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_cloexec(void)
{
	int fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, NSEC_PER_MSEC, 0);
	int plain = wheel_new(0, NSEC_PER_MSEC, NSEC_PER_MSEC, 0);

	ksft_test_result(fd >= 0 && run_exec(fd, 0), "an O_CLOEXEC wheel is gone after exec\n");
	ksft_test_result(plain >= 0 && run_exec(plain, 1),
			 "a wheel without O_CLOEXEC works after exec\n");
	close(fd);
	close(plain);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc == 4 && !strcmp(argv[1], "--exec-check"))
		return exec_check(atoi(argv[2]), atoi(argv[3]));
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	ksft_print_header();
	if (access(TWHEEL_DEVICE, F_OK))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	ksft_set_plan(15);
	test_rmmod();
	test_close_races();
	test_batches();
	test_scm_rights();
	test_fork();
	test_cloexec();
	/* A test that hung returned early: its followers count as failed. */
	while (ksft_test_num() < 15)
		ksft_test_result_fail("not run: an earlier test hung\n");
	ksft_finished();
}
