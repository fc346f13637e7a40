// SPDX-License-Identifier: GPL-2.0
/*
 * One fd, one wheel: wheels are isolated from one another; dup, fork and
 * SCM_RIGHTS share a wheel (which outlives its creator); O_CLOEXEC
 * closes it across exec; each expiry is read exactly once across all
 * readers, whichever process added it; closing the fd while another
 * thread waits in read, poll or epoll_wait neither hangs nor crashes,
 * and a dup keeps the wheel waking epoll; an open wheel pins the module.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(NSEC_PER_SEC)
#define EXEC_ENV	"TWHEEL_SHARE_TEST_EXEC"

/*
 * Re-executed by cloexec_wheel_is_closed_across_exec() with EXEC_ENV set
 * to "CLOEXEC_FD PLAIN_FD": check both before the harness starts, and
 * exit 0 if the first is closed and the second is still the wheel.
 */
static void __attribute__((constructor)) exec_check(void)
{
	const char *s = getenv(EXEC_ENV);
	int cfd, pfd;

	if (!s)
		return;
	if (sscanf(s, "%d %d", &cfd, &pfd) != 2)
		_exit(10);
	if (fcntl(cfd, F_GETFD) != -1 || errno != EBADF)
		_exit(11);
	if (dev_query(pfd, 1, NULL, NULL) != 0)
		_exit(12);
	_exit(0);
}

FIXTURE(wheel) {
	int fd;
};

FIXTURE_SETUP(wheel)
{
	self->fd = wheel_new(0, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(wheel)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The live counts are read before the id of the fixture's wheel can
 * expire: if that took longer, start over on fresh wheels with twice its
 * timeout. b's ids are due 1.2 s after it, so that they outlive it and
 * its lateness (LATE_SLACK_NS at most).
 */
TEST_F(wheel, two_wheels_are_isolated)
{
	struct twheel_event ev[4];
	long long live_a, live_b;
	uint64_t start, t;
	int b;

	for (t = 300 * NSEC_PER_MSEC; ; t *= 2) {
		b = wheel_new(0, 5 * TICK_NS, DFLT_NS, 0);
		ASSERT_LE(0, b);
		start = mono_ns();
		ASSERT_EQ(0, dev_add(self->fd, 1, t));
		EXPECT_EQ(-ENOENT, dev_query(b, 1, NULL, NULL));
		EXPECT_EQ(-ENOENT, dev_cancel(b, 1));
		ASSERT_EQ(0, dev_add(b, 1, t + 1200 * NSEC_PER_MSEC));
		ASSERT_EQ(0, dev_add(b, 2, t + 1200 * NSEC_PER_MSEC));
		live_a = fdinfo_get(self->fd, "live");
		live_b = fdinfo_get(b, "live");
		if (mono_ns() - start < t)
			break;
		ASSERT_GT(2 * NSEC_PER_SEC, t)
			TH_LOG("3 adds and 2 reads of fdinfo took over %llu ms",
			       (unsigned long long)(t / NSEC_PER_MSEC));
		close(b);
		close(self->fd);
		self->fd = wheel_new(0, TICK_NS, DFLT_NS, 0);
		ASSERT_LE(0, self->fd);
	}
	EXPECT_EQ(1, live_a);
	EXPECT_EQ(2, live_b);
	EXPECT_EQ((long long)5 * TICK_NS, fdinfo_get(b, "tick_ns"));
	ASSERT_EQ(1, dev_read_events(self->fd, ev, 4));
	EXPECT_EQ(1, ev[0].id);
	EXPECT_EQ(0, dev_query(b, 1, NULL, NULL));
	EXPECT_EQ(2, drain_until(b, ev, 4, mono_ns() + t + 1200 * NSEC_PER_MSEC +
				 LATE_SLACK_NS));
	EXPECT_EQ(0, drain_until(self->fd, ev, 1, mono_ns() + 20 * NSEC_PER_MSEC));
	close(b);
}

TEST_F(wheel, dup_shares_the_wheel)
{
	struct twheel_event ev;
	int d = dup(self->fd);

	ASSERT_LE(0, d);
	/* Long enough to be live through the next two calls on a slow VM. */
	ASSERT_EQ(0, dev_add(self->fd, 3, 2 * NSEC_PER_SEC));
	EXPECT_EQ(0, dev_query(d, 3, NULL, NULL));
	EXPECT_EQ(-EEXIST, dev_add(d, 3, 0));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(1, dev_read_events(d, &ev, 1));
	EXPECT_EQ(3, ev.id);
	close(d);
}

TEST_F(wheel, fork_shares_the_wheel)
{
	struct twheel_event ev;
	int status;
	pid_t pid;

	ASSERT_EQ(0, dev_add(self->fd, 1, 5 * NSEC_PER_SEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ok = dev_query(self->fd, 1, NULL, NULL) == 0 &&
			 dev_add(self->fd, 2, 1500 * NSEC_PER_MSEC) == 0;
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* The child's exit closed its fd; the wheel lives on. */
	EXPECT_EQ(0, dev_query(self->fd, 2, NULL, NULL));
	ASSERT_EQ(1, dev_read_events(self->fd, &ev, 1));
	EXPECT_EQ(2, ev.id);
}

#define NR_SHARED	2000

/*
 * Read in small gulps, counting each id in @seen and every read one in
 * @seen[NR_SHARED], until the two readers together have read as many
 * as were added, or @until. The wait is for what a slow machine takes
 * (the debug kernel under a loaded host needed more than a second for
 * the 2000), not a window the events must fit: a lost or doubled event
 * still fails the counts, a late one does not.
 */
static int count_reads(int fd, atomic_uint *seen, uint64_t until)
{
	struct twheel_event ev[7];
	int n = 0, j;

	while (atomic_load(&seen[NR_SHARED]) < NR_SHARED && mono_ns() < until) {
		/* A gulp, or 100 ms without one: then look at the count again. */
		uint64_t stop = mono_ns() + 100 * NSEC_PER_MSEC;

		n = drain_until(fd, ev, 7, stop < until ? stop : until);
		if (n < 0)
			break;
		for (j = 0; j < n; j++) {
			if (ev[j].id < NR_SHARED)
				atomic_fetch_add(&seen[ev[j].id], 1);
			atomic_fetch_add(&seen[NR_SHARED], 1);
		}
	}
	return n < 0 ? n : 0;
}

/* Add ids [first, first + n) in one batch; how many failed. */
static unsigned int add_ids(int fd, struct twheel_op *ops, unsigned int first,
			    unsigned int n)
{
	unsigned int i, bad = 0;

	for (i = first; i < first + n; i++)
		dev_prep_add(&ops[i], i, 20 * NSEC_PER_MSEC +
			     (i % 100) * NSEC_PER_MSEC);
	if (dev_batch(fd, ops + first, n) != (int)n)
		return n;
	for (i = first; i < first + n; i++)
		bad += ops[i].result != 0;
	return bad;
}

TEST_F(wheel, expiry_is_read_once_across_processes)
{
	struct twheel_op *ops = calloc(NR_SHARED, sizeof(*ops));
	struct twheel_event ev;
	atomic_uint *seen;
	unsigned int i, bad = 0, total = 0, failed;
	int status, fd, ret;
	pid_t pid;

	ASSERT_NE(NULL, ops);
	seen = mmap(NULL, (NR_SHARED + 1) * sizeof(*seen), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, seen);
	/* Non-blocking: a read never sleeps on events the other side took. */
	fd = wheel_new(O_NONBLOCK, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, fd);

	/* After the fork each side adds half of the ids; both read. */
	pid = fork();
	ASSERT_LE(0, pid);
	failed = add_ids(fd, ops, pid ? 0 : NR_SHARED / 2, NR_SHARED / 2);
	ret = count_reads(fd, seen, mono_ns() + 30 * NSEC_PER_SEC);
	if (!pid)
		_exit(failed ? 2 : ret < 0);
	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, ret);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("1 read failed, 2 adds failed");
	for (i = 0; i < NR_SHARED; i++) {
		bad += seen[i] != 1;
		total += seen[i];
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(NR_SHARED, total);
	/* Nothing is left to read once every id was read once. */
	EXPECT_EQ(-EAGAIN, dev_read_events(fd, &ev, 1));
	close(fd);
	munmap(seen, (NR_SHARED + 1) * sizeof(*seen));
	free(ops);
}

/*
 * The child's id must still be live when the parent looks at it: if the
 * fork, the pass, the wait and the look took longer than its timeout,
 * start over with twice the timeout.
 */
TEST(scm_rights_wheel_outlives_its_creator)
{
	struct twheel_event ev;
	uint64_t d = 0, start, t;
	int sv[2], status, fd, ret;
	long long live;
	pid_t pid;

	for (t = 300 * NSEC_PER_MSEC; ; t *= 2) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
		start = mono_ns();
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int w = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);

			if (w < 0 || dev_add(w, 9, t) || send_fd(sv[1], w))
				_exit(1);
			close(w);
			_exit(0);
		}
		close(sv[1]);
		fd = recv_fd(sv[0]);
		ASSERT_LE(0, fd);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
		ret = dev_query(fd, 9, &d, NULL);
		live = fdinfo_get(fd, "live");
		if (mono_ns() - start < t)
			break;
		ASSERT_GT(2 * NSEC_PER_SEC, t)
			TH_LOG("a fork, an add, a pass and a wait took over %llu ms",
			       (unsigned long long)(t / NSEC_PER_MSEC));
		close(fd);
		close(sv[0]);
	}
	/* Creator gone, its fd closed: ours holds the wheel. */
	EXPECT_EQ(0, ret);
	EXPECT_EQ(1, live);
	ASSERT_EQ(1, dev_read_events(fd, &ev, 1));
	EXPECT_EQ(9, ev.id);
	EXPECT_EQ(d, ev.deadline_ns);
	close(fd);
	close(sv[0]);
}

TEST(cloexec_wheel_is_closed_across_exec)
{
	int cfd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	int pfd = wheel_new(0, TICK_NS, DFLT_NS, 0);
	int status;
	pid_t pid;

	ASSERT_LE(0, cfd);
	ASSERT_LE(0, pfd);
	ASSERT_EQ(0, dev_add(cfd, 1, 10 * NSEC_PER_SEC));
	ASSERT_EQ(0, dev_add(pfd, 1, 10 * NSEC_PER_SEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char env[64], *argv[] = { "share_test", NULL };
		char *envp[] = { env, NULL };

		snprintf(env, sizeof(env), EXEC_ENV "=%d %d", cfd, pfd);
		execve("/proc/self/exe", argv, envp);
		_exit(20);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("10 bad env, 11 cloexec fd open, 12 plain fd not the wheel, 20 exec");
	/* The exec'd child's exit did not free our wheels. */
	EXPECT_EQ(0, dev_query(cfd, 1, NULL, NULL));
	EXPECT_EQ(0, dev_query(pfd, 1, NULL, NULL));
	close(cfd);
	close(pfd);
}

/* A thread blocked in read, poll or epoll_wait on a wheel. */
struct blocked {
	int fd;
	int ep;
	int ms;			/* poll and epoll_wait timeout */
	int ret;
	int err;
	unsigned int revents;
	struct twheel_event ev;
	volatile pid_t tid;	/* set by the thread just before it blocks */
};

static void *blocked_read(void *arg)
{
	struct blocked *b = arg;

	b->tid = syscall(SYS_gettid);
	b->ret = read(b->fd, &b->ev, sizeof(b->ev));
	b->err = errno;
	return NULL;
}

static void *blocked_poll(void *arg)
{
	struct blocked *b = arg;
	struct pollfd p = { .fd = b->fd, .events = POLLIN };

	b->tid = syscall(SYS_gettid);
	b->ret = poll(&p, 1, b->ms);
	b->err = errno;
	b->revents = p.revents;
	return NULL;
}

static void *blocked_epoll(void *arg)
{
	struct blocked *b = arg;
	struct epoll_event e = { 0 };

	b->tid = syscall(SYS_gettid);
	b->ret = epoll_wait(b->ep, &e, 1, b->ms);
	b->err = errno;
	b->revents = e.events;
	return NULL;
}

/* An epoll set watching @fd for EPOLLIN, or -1. */
static int epoll_on(int fd)
{
	struct epoll_event e = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e)) {
		close(ep);
		return -1;
	}
	return ep;
}

/*
 * Block a thread in @wait on the wheel, then add @id due in @timeout_ns
 * and close the fixture's fd under it; returns the thread. The thread is
 * in its wait once it sleeps (state S, waited for 10 s at most), however
 * slowly it got there: it gives its tid just before the call, and nothing
 * in between sleeps. The id is added after that, so that it cannot expire
 * before the thread blocks, and just before the close.
 */
static pthread_t close_under(struct __test_metadata *_metadata,
			     FIXTURE_DATA(wheel) *self, struct blocked *b,
			     void *(*wait)(void *), uint64_t id,
			     uint64_t timeout_ns)
{
	uint64_t until = mono_ns() + 10 * NSEC_PER_SEC;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, wait, b));
	while ((!b->tid || task_state(b->tid) != 'S') && mono_ns() < until)
		sleep_ns(NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_add(self->fd, id, timeout_ns));
	close(self->fd);
	self->fd = -1;
	return t;
}

TEST_F(wheel, close_while_other_thread_reads)
{
	struct blocked b = { .fd = self->fd };
	pthread_t t = close_under(_metadata, self, &b, blocked_read, 4,
				  150 * NSEC_PER_MSEC);

	/* The reader holds its own reference: the expiry still reaches it. */
	ASSERT_TRUE(join_within(t, 150 * NSEC_PER_MSEC + 3 * NSEC_PER_SEC))
		TH_LOG("read still blocked after close and expiry");
	EXPECT_EQ(sizeof(b.ev), b.ret) TH_LOG("read: %s", strerror(b.err));
	EXPECT_EQ(4, b.ev.id);
}

TEST_F(wheel, close_while_other_thread_polls)
{
	struct blocked b = { .fd = self->fd, .ms = 10000 };
	pthread_t t = close_under(_metadata, self, &b, blocked_poll, 12,
				  200 * NSEC_PER_MSEC);

	/*
	 * poll's wait entry holds the file: the expiry wakes it, and it then
	 * finds the fd closed (POLLNVAL) or the event.
	 */
	ASSERT_TRUE(join_within(t, 5 * NSEC_PER_SEC))
		TH_LOG("poll still blocked after close and expiry");
	EXPECT_EQ(1, b.ret) TH_LOG("poll: %s", strerror(b.err));
	EXPECT_TRUE(b.revents == POLLNVAL || b.revents & POLLIN)
		TH_LOG("revents %#x", b.revents);
}

TEST_F(wheel, close_while_other_thread_waits_in_epoll)
{
	struct blocked b = {
		.fd = self->fd, .ep = epoll_on(self->fd), .ms = 3000,
	};
	pthread_t t;

	ASSERT_LE(0, b.ep);
	t = close_under(_metadata, self, &b, blocked_epoll, 4, NSEC_PER_SEC);
	/*
	 * The last close freed the wheel and took it out of the epoll set:
	 * epoll_wait ends at its own timeout, with no event, without a hang
	 * (and without a use after free, which a debug kernel would catch).
	 * The id is due a second after the close, so that a stalled VM
	 * cannot let it fire first, and long before epoll_wait's timeout,
	 * so that a wheel the close left alive would wake it.
	 */
	ASSERT_TRUE(join_within(t, 6 * NSEC_PER_SEC))
		TH_LOG("epoll_wait still blocked after its timeout");
	EXPECT_EQ(0, b.ret)
		TH_LOG("epoll_wait: %d, %s", b.ret, strerror(b.err));
	close(b.ep);
}

TEST_F(wheel, epoll_wakes_after_close_of_one_of_two_fds)
{
	struct blocked b = {
		.fd = self->fd, .ep = epoll_on(self->fd), .ms = 1500,
	};
	int d = dup(self->fd);
	pthread_t t;

	ASSERT_LE(0, b.ep);
	ASSERT_LE(0, d);
	t = close_under(_metadata, self, &b, blocked_epoll, 14,
			200 * NSEC_PER_MSEC);
	/* The dup keeps the file, and so the wheel, in the set. */
	ASSERT_TRUE(join_within(t, 5 * NSEC_PER_SEC))
		TH_LOG("epoll_wait still blocked");
	EXPECT_EQ(1, b.ret)
		TH_LOG("epoll_wait: %d, %s", b.ret, strerror(b.err));
	EXPECT_TRUE(b.revents & EPOLLIN) TH_LOG("events %#x", b.revents);
	close(d);
	close(b.ep);
}

TEST(open_wheel_pins_the_module)
{
	long long r0, r;
	int fd, d;
	FILE *f = fopen("/sys/module/twheel/refcnt", "r");

	if (!f)
		SKIP(return, "no /sys/module/twheel/refcnt (module built in?)");
	ASSERT_EQ(1, fscanf(f, "%lld", &r0));
	fclose(f);
	fd = dev_open(0);
	ASSERT_LE(0, fd);
	d = dup(fd);
	f = fopen("/sys/module/twheel/refcnt", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%lld", &r));
	fclose(f);
	EXPECT_EQ(r0 + 1, r);
	close(fd);
	close(d);
	f = fopen("/sys/module/twheel/refcnt", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%lld", &r));
	fclose(f);
	EXPECT_EQ(r0, r);
}

TEST_HARNESS_MAIN
