// SPDX-License-Identifier: GPL-2.0
/*
 * Two readers of one wheel, one of them stalled in its copy-out: its
 * buffer is a page registered with userfaultfd(2) that nobody fills, so
 * it holds the wheel's read lock for as long as the test likes. Another
 * read with O_NONBLOCK must fail with EAGAIN at once rather than wait for
 * it; a blocking read waits, and a signal during that wait restarts it
 * under SA_RESTART (it then returns events) or fails it with EINTR
 * without, as any wait of a read(2) does.
 */
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(10 * NSEC_PER_SEC)
#define NR_IDS		40
#define STALLED_RECS	16
#define PAGE		4096

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

/*
 * Poked at @tid: once it sleeps (in the read under test), SIGUSR1; then,
 * if @resolve, 300 ms later the stalled reader's page, so that it ends.
 */
struct poker {
	pthread_t target;
	pid_t tid;
	int uffd;
	void *page;
	bool resolve;
	volatile bool in_read;
	char state_at_resolve;
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
	if (p->resolve) {
		sleep_ns(300 * NSEC_PER_MSEC);
		p->state_at_resolve = task_state(p->tid);
		resolve_page(p->uffd, p->page);
	}
	return NULL;
}

FIXTURE(stalled) {
	int fd, uffd;
	void *page;
	pthread_t reader;
	struct stalled s;
	bool started;
};

FIXTURE_SETUP(stalled)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg msg;
	int i;

	self->started = false;
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
	if (!self->started)
		return;
	resolve_page(self->uffd, self->page);
	EXPECT_TRUE(join_within(self->reader, 10 * NSEC_PER_SEC));
	/* The stalled read got its records once the page was there. */
	EXPECT_EQ(STALLED_RECS * sizeof(struct twheel_event), self->s.ret)
		TH_LOG("stalled read: %zd, %s", self->s.ret, strerror(self->s.err));
	close(self->fd);
	close(self->uffd);
	munmap(self->page, PAGE);
}

/* Nonblocking: EAGAIN at once; a poker's signal after 3 s says it slept. */
TEST_F(stalled, nonblocking_read_never_waits_for_another_readers_copy)
{
	struct poker p = { .target = pthread_self(), .tid = syscall(SYS_gettid) };
	struct twheel_event ev[4];
	pthread_t t;
	uint64_t t0, took;
	ssize_t ret;
	int err;

	catch_sigusr1(0);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, pthread_create(&t, NULL, poke, &p));
	p.in_read = true;
	t0 = mono_ns();
	ret = read(self->fd, ev, sizeof(ev));
	err = errno;
	took = mono_ns() - t0;
	p.in_read = false;
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EAGAIN, err) TH_LOG("read: %zd, %s after %llu ms", ret, strerror(err),
				      (unsigned long long)(took / NSEC_PER_MSEC));
	EXPECT_EQ(0, signals_seen) TH_LOG("the read slept until a signal came");
	/* The poker never finds it asleep; give it up after its own deadline. */
	pthread_cancel(t);
	pthread_join(t, NULL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
}

/* Blocking, no SA_RESTART: the signal ends the wait with EINTR. */
TEST_F(stalled, wait_for_another_reader_without_sa_restart_is_eintr)
{
	struct poker p = { .target = pthread_self(), .tid = syscall(SYS_gettid) };
	struct twheel_event ev[4];
	pthread_t t;
	ssize_t ret;
	int err;

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
	/* Nothing was taken: every event but the stalled reader's waits. */
	EXPECT_EQ(NR_IDS, fdinfo_get(self->fd, "events_waiting"));
}

/* Blocking, SA_RESTART: the signal is handled, the read goes on and gets events. */
TEST_F(stalled, wait_for_another_reader_restarts_with_sa_restart)
{
	struct poker p = {
		.target = pthread_self(), .tid = syscall(SYS_gettid),
		.uffd = self->uffd, .page = self->page, .resolve = true,
	};
	struct twheel_event ev[4];
	pthread_t t;
	ssize_t ret;
	int err, i, j;

	catch_sigusr1(SA_RESTART);
	ASSERT_EQ(0, pthread_create(&t, NULL, poke, &p));
	p.in_read = true;
	ret = read(self->fd, ev, sizeof(ev));
	err = errno;
	p.in_read = false;
	pthread_join(t, NULL);
	EXPECT_EQ(1, signals_seen);
	/* Still waiting after the signal, until the other reader let go. */
	EXPECT_EQ('S', p.state_at_resolve);
	ASSERT_EQ(sizeof(ev), ret) TH_LOG("read: %zd, %s", ret, strerror(err));
	/* The lock came after the stalled copy: each event went to one reader. */
	for (i = 0; i < 4; i++)
		for (j = 0; j < STALLED_RECS; j++)
			EXPECT_NE(((struct twheel_event *)self->page)[j].id, ev[i].id);
	EXPECT_EQ(NR_IDS - STALLED_RECS - 4, fdinfo_get(self->fd, "events_waiting"));
}

TEST_HARNESS_MAIN
