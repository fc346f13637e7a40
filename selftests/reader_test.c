// SPDX-License-Identifier: GPL-2.0
/*
 * Two readers of one wheel, one of them stalled in its copy-out: its
 * buffer is a page registered with userfaultfd(2) that nobody fills, so
 * its copy lasts for as long as the test likes. The stalled reader holds
 * only the events it took: another read, blocking or not, gets the rest
 * at once; poll(2) and epoll say readable exactly while there are events
 * for the taking, never while a read would answer EAGAIN; once the rest
 * is read, a blocking read waits for the next event and a signal during
 * that wait restarts it under SA_RESTART or fails it with EINTR without,
 * as any wait of a read(2) does. Each event goes to one reader only.
 */
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(10 * NSEC_PER_SEC)
#define NR_IDS		40
#define STALLED_RECS	16
/* The page size: 4 KiB, or 16 or 64 KiB on some arm64 kernels. */
#define PAGE		((size_t)sysconf(_SC_PAGESIZE))

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

/* SIGUSR1 with or without SA_RESTART. */
static void catch_sigusr1(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* A userfaultfd that also catches the kernel's own faults (copy_to_user). */
static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -errno;
	}
	return fd;
}

struct stalled {
	int fd;
	void *buf;
	ssize_t ret;
	int err;
};

static void *stalled_read(void *arg)
{
	struct stalled *s = arg;

	s->ret = read(s->fd, s->buf, STALLED_RECS * sizeof(struct twheel_event));
	s->err = errno;
	return NULL;
}

/* Poked at @tid: once it sleeps (in the read under test), SIGUSR1. */
struct poker {
	pthread_t target;
	pid_t tid;
	volatile bool in_read;
};

static void resolve_page(int uffd, void *page)
{
	struct uffdio_zeropage z = {
		.range = { .start = (uintptr_t)page, .len = PAGE },
	};

	ioctl(uffd, UFFDIO_ZEROPAGE, &z);
}

static void *poke(void *arg)
{
	struct poker *p = arg;
	uint64_t until = mono_ns() + 10 * NSEC_PER_SEC;

	while ((!p->in_read || task_state(p->tid) != 'S') && mono_ns() < until)
		sleep_ns(NSEC_PER_MSEC);
	/* Asleep for a moment: in the read's wait, not on its way there. */
	sleep_ns(50 * NSEC_PER_MSEC);
	pthread_kill(p->target, SIGUSR1);
	return NULL;
}

FIXTURE(stalled) {
	int fd, uffd;
	void *page;
	pthread_t reader;
	struct stalled s;
	bool started;
	uint64_t ids[NR_IDS];
	int nr_ids;
};

FIXTURE_SETUP(stalled)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg msg;
	int i;

	self->started = false;
	self->nr_ids = 0;
	self->uffd = uffd_open();
	if (self->uffd < 0)
		SKIP(return, "userfaultfd(2) is not available: %s", strerror(-self->uffd));
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
	for (i = 0; i < NR_IDS; i++)
		ASSERT_EQ(0, dev_add(self->fd, i, 0));
	ASSERT_EQ(NR_IDS, wait_waiting(self->fd, NR_IDS));

	self->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	reg.range.start = (uintptr_t)self->page;
	reg.range.len = PAGE;
	ASSERT_EQ(0, ioctl(self->uffd, UFFDIO_REGISTER, &reg)) TH_LOG("%s", strerror(errno));

	self->s.fd = self->fd;
	self->s.buf = self->page;
	ASSERT_EQ(0, pthread_create(&self->reader, NULL, stalled_read, &self->s));
	self->started = true;
	/* The fault reported: the reader is inside its copy, holding the lock. */
	pfd.fd = self->uffd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("the stalled read never faulted");
	ASSERT_EQ(sizeof(msg), read(self->uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
}

FIXTURE_TEARDOWN(stalled)
{
	int i, j;

	if (!self->started)
		return;
	resolve_page(self->uffd, self->page);
	EXPECT_TRUE(join_within(self->reader, 10 * NSEC_PER_SEC));
	/* The stalled read got its records once the page was there. */
	EXPECT_EQ(STALLED_RECS * sizeof(struct twheel_event), self->s.ret)
		TH_LOG("stalled read: %zd, %s", self->s.ret, strerror(self->s.err));
	/* Each event went to one reader: none of the others' is among its own. */
	for (i = 0; i < self->nr_ids; i++)
		for (j = 0; j < STALLED_RECS; j++)
			EXPECT_NE(((struct twheel_event *)self->page)[j].id, self->ids[i]);
	close(self->fd);
	close(self->uffd);
	munmap(self->page, PAGE);
}

/* Read, without blocking, every event there is into @ids at @n; returns the new count. */
static int read_all_nonblocking(int fd, uint64_t *ids, int n)
{
	struct twheel_event ev[8];
	ssize_t ret;
	int i;

	while ((ret = read(fd, ev, sizeof(ev))) > 0)
		for (i = 0; i < ret / (ssize_t)sizeof(*ev); i++)
			ids[n++] = ev[i].id;
	return n;
}

/* Nonblocking: the events the stalled reader did not take, at once. */
TEST_F(stalled, nonblocking_read_takes_what_another_readers_copy_left)
{
	struct twheel_event ev[4];
	uint64_t t0, took;
	ssize_t ret;
	int i;

	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	t0 = mono_ns();
	ret = read(self->fd, ev, sizeof(ev));
	took = mono_ns() - t0;
	ASSERT_EQ(sizeof(ev), ret) TH_LOG("read: %zd, %s after %llu ms", ret, strerror(errno),
					  (unsigned long long)(took / NSEC_PER_MSEC));
	for (i = 0; i < 4; i++)
		self->ids[self->nr_ids++] = ev[i].id;
	EXPECT_EQ(NR_IDS - STALLED_RECS - 4, fdinfo_get(self->fd, "events_waiting"));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
}

/* Blocking: no wait for the other reader's copy either. */
TEST_F(stalled, blocking_read_never_waits_for_another_readers_copy)
{
	struct twheel_event ev[4];
	ssize_t ret;
	int i;

	alarm(5);
	ret = read(self->fd, ev, sizeof(ev));
	alarm(0);
	ASSERT_EQ(sizeof(ev), ret) TH_LOG("read: %zd, %s", ret, strerror(errno));
	for (i = 0; i < 4; i++)
		self->ids[self->nr_ids++] = ev[i].id;
}

/*
 * Readiness never lies: poll and epoll (level-triggered) say readable
 * while events wait and a read gets them; once all but the stalled
 * reader's are read, neither says readable and a read answers EAGAIN,
 * so an epoll loop sleeps instead of spinning on the stalled copy.
 */
TEST_F(stalled, readable_exactly_while_a_read_gets_events)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct epoll_event ee = { .events = EPOLLIN }, out;
	struct twheel_event ev[1];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ee));
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLIN, pfd.revents & POLLIN);
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, 0));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	self->nr_ids = read_all_nonblocking(self->fd, self->ids, self->nr_ids);
	EXPECT_EQ(NR_IDS - STALLED_RECS, self->nr_ids);
	EXPECT_EQ(0, poll(&pfd, 1, 0)) TH_LOG("poll says readable, revents %#x", pfd.revents);
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 100)) TH_LOG("epoll says readable");
	EXPECT_EQ(-1, read(self->fd, ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
	close(ep);
}

/* All but the stalled reader's read: a blocking read waits; no SA_RESTART: EINTR. */
TEST_F(stalled, wait_for_events_without_sa_restart_is_eintr)
{
	struct poker p = { .target = pthread_self(), .tid = syscall(SYS_gettid) };
	struct twheel_event ev[4];
	pthread_t t;
	ssize_t ret;
	int err;

	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	self->nr_ids = read_all_nonblocking(self->fd, self->ids, self->nr_ids);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
	catch_sigusr1(0);
	ASSERT_EQ(0, pthread_create(&t, NULL, poke, &p));
	p.in_read = true;
	ret = read(self->fd, ev, sizeof(ev));
	err = errno;
	p.in_read = false;
	pthread_join(t, NULL);
	EXPECT_EQ(1, signals_seen);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err) TH_LOG("read: %zd, %s", ret, strerror(err));
}

/*
 * SA_RESTART: the signal is handled and the read waits on, until the
 * next event, due 1.5 s after the poke, comes.
 */
TEST_F(stalled, wait_for_events_restarts_with_sa_restart)
{
	struct poker p = { .target = pthread_self(), .tid = syscall(SYS_gettid) };
	struct twheel_event ev[4];
	pthread_t t;
	ssize_t ret;
	int err;

	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	self->nr_ids = read_all_nonblocking(self->fd, self->ids, self->nr_ids);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
	ASSERT_EQ(0, dev_add(self->fd, NR_IDS, 1500 * NSEC_PER_MSEC));
	catch_sigusr1(SA_RESTART);
	ASSERT_EQ(0, pthread_create(&t, NULL, poke, &p));
	p.in_read = true;
	ret = read(self->fd, ev, sizeof(ev));
	err = errno;
	p.in_read = false;
	pthread_join(t, NULL);
	EXPECT_EQ(1, signals_seen);
	ASSERT_EQ(sizeof(*ev), ret) TH_LOG("read: %zd, %s", ret, strerror(err));
	EXPECT_EQ(NR_IDS, ev[0].id);
}

TEST_HARNESS_MAIN
