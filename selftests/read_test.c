// SPDX-License-Identifier: GPL-2.0
/*
 * Expiry and read(2)/poll(2)/epoll: events come exactly once, in
 * deadline order, never early and at most about one tick late; read
 * returns whole records, blocks like timerfd (woken by an expiry,
 * interrupted by a signal) or fails with EAGAIN under O_NONBLOCK; poll
 * and epoll report EPOLLIN while events wait.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/time.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(50 * NSEC_PER_MSEC)
#define NR_IDS		400

FIXTURE(wheel) {
	int fd;
	struct twheel_event ev[NR_IDS + 1];
};

FIXTURE_SETUP(wheel)
{
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

/* Never early, at most one tick (plus VM slack) late, read after both. */
static void check_timely(struct __test_metadata *_metadata,
			 const struct twheel_event *ev, uint64_t tick,
			 uint64_t read_ns)
{
	EXPECT_LE(ev->deadline_ns, ev->expired_ns)
		TH_LOG("id %llu expired early", (unsigned long long)ev->id);
	EXPECT_GE(ev->deadline_ns + tick + LATE_SLACK_NS, ev->expired_ns)
		TH_LOG("id %llu expired %llu ns late", (unsigned long long)ev->id,
		       (unsigned long long)(ev->expired_ns - ev->deadline_ns));
	EXPECT_LE(ev->expired_ns, read_ns);
}

TEST_F(wheel, timeout_zero_fires_at_next_tick)
{
	uint64_t before, after;

	before = mono_ns();
	ASSERT_EQ(0, dev_add(self->fd, 42, 0));
	after = mono_ns();
	memset(self->ev, JUNK, sizeof(self->ev[0]));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 1));
	EXPECT_EQ(42, self->ev[0].id);
	EXPECT_LE(before, self->ev[0].deadline_ns);
	EXPECT_GE(after + TICK_NS, self->ev[0].deadline_ns);
	check_timely(_metadata, &self->ev[0], TICK_NS, mono_ns());
}

TEST_F(wheel, event_carries_the_deadline_of_the_op)
{
	struct twheel_op op;

	dev_prep_add(&op, 5, 20 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	memset(self->ev, JUNK, sizeof(self->ev[0]));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 1));
	EXPECT_EQ(5, self->ev[0].id);
	EXPECT_EQ(op.deadline_ns, self->ev[0].deadline_ns);
}

TEST_F(wheel, events_are_never_early_nor_late)
{
	uint64_t seed = 0x1234567, read_ns;
	int i, got = 0, ret;

	for (i = 0; i < NR_IDS; i++)
		ASSERT_EQ(0, dev_add(self->fd, i, (rnd_next(&seed) % 300) *
				     NSEC_PER_MSEC + rnd_next(&seed) % TICK_NS));
	while (got < NR_IDS) {
		ret = dev_read_events(self->fd, self->ev, NR_IDS);
		read_ns = mono_ns();
		ASSERT_LT(0, ret) TH_LOG("read: %s", strerror(-ret));
		for (i = 0; i < ret; i++)
			check_timely(_metadata, &self->ev[i], TICK_NS, read_ns);
		got += ret;
	}
	EXPECT_EQ(NR_IDS, got);
}

TEST(cascaded_deadlines_are_never_early)
{
	/* The smallest tick, so 600 ms spans three levels of the wheel. */
	const uint64_t tick = TWHEEL_TICK_MIN_NS;
	struct twheel_op op;
	static struct twheel_event ev[NR_IDS];
	static uint64_t deadline[NR_IDS];
	uint64_t seed = 99, read_ns;
	int fd, i, got = 0, ret;

	fd = wheel_new(O_CLOEXEC, tick, NSEC_PER_SEC, 0);
	ASSERT_LE(0, fd);
	for (i = 0; i < NR_IDS; i++) {
		dev_prep_add(&op, i, rnd_next(&seed) % (600 * NSEC_PER_MSEC));
		ASSERT_EQ(0, dev_submit_op(fd, &op));
		deadline[i] = op.deadline_ns;
	}
	while (got < NR_IDS) {
		ret = dev_read_events(fd, ev, NR_IDS);
		read_ns = mono_ns();
		ASSERT_LT(0, ret);
		for (i = 0; i < ret; i++) {
			ASSERT_GT(NR_IDS, ev[i].id);
			EXPECT_EQ(deadline[ev[i].id], ev[i].deadline_ns);
			check_timely(_metadata, &ev[i], tick, read_ns);
		}
		got += ret;
	}
	close(fd);
}

TEST_F(wheel, events_come_in_deadline_order)
{
	uint64_t seed = 7, last = 0;
	int i, got = 0, ret, n;

	for (i = 0; i < NR_IDS; i++)
		ASSERT_EQ(0, dev_add(self->fd, rnd_next(&seed),
				     (rnd_next(&seed) % 60) * NSEC_PER_MSEC));
	sleep_ns(60 * NSEC_PER_MSEC + 2 * TICK_NS + 50 * NSEC_PER_MSEC);
	/* Uneven read sizes, so order must hold across reads too. */
	for (n = 1; got < NR_IDS; n = n % 13 + 1) {
		ret = dev_read_events(self->fd, self->ev, n);
		ASSERT_LT(0, ret);
		ASSERT_GE(n, ret);
		for (i = 0; i < ret; i++) {
			EXPECT_LE(last, self->ev[i].deadline_ns)
				TH_LOG("event %d out of order", got + i);
			last = self->ev[i].deadline_ns;
		}
		got += ret;
	}
}

TEST_F(wheel, each_expiry_is_delivered_once)
{
	static unsigned char seen[NR_IDS];
	int fd, i, got, dup = 0;

	fd = wheel_new(O_NONBLOCK, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, fd);
	for (i = 0; i < NR_IDS; i++)
		ASSERT_EQ(0, dev_add(fd, i, (i % 50) * NSEC_PER_MSEC));
	got = drain_until(fd, self->ev, NR_IDS + 1,
			  mono_ns() + 50 * NSEC_PER_MSEC + LATE_SLACK_NS +
			  200 * NSEC_PER_MSEC);
	EXPECT_EQ(NR_IDS, got);
	for (i = 0; i < got; i++) {
		ASSERT_GT(NR_IDS, self->ev[i].id);
		dup += seen[self->ev[i].id]++ != 0;
	}
	EXPECT_EQ(0, dup);
	EXPECT_EQ(-EAGAIN, dev_read_events(fd, self->ev, 1));
	close(fd);
}

TEST_F(wheel, extreme_ids_expire_as_themselves)
{
	static const uint64_t ids[] = { 0, UINT64_MAX, 1ULL << 63 };
	int i, seen = 0;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, dev_add(self->fd, ids[i], (i + 1) * TICK_NS));
	ASSERT_EQ(3, drain_until(self->fd, self->ev, 3, mono_ns() +
				 4 * TICK_NS + LATE_SLACK_NS));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(ids[i], self->ev[i].id);
		seen++;
	}
	EXPECT_EQ(3, seen);
}

TEST_F(wheel, read_below_one_record_is_einval)
{
	static const size_t sizes[] = { 1, 8, 16, sizeof(struct twheel_event) - 1 };
	unsigned int i;

	ASSERT_EQ(0, dev_add(self->fd, 1, 0));
	ASSERT_EQ(1, wait_waiting(self->fd, 1));
	for (i = 0; i < 4; i++) {
		memset(self->ev, JUNK, sizeof(self->ev[0]));
		errno = 0;
		EXPECT_EQ(-1, read(self->fd, self->ev, sizes[i]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("size %zu", sizes[i]);
	}
	/* The event was not consumed. */
	EXPECT_EQ(1, dev_read_events(self->fd, self->ev, 1));
	EXPECT_EQ(1, self->ev[0].id);
}

TEST_F(wheel, read_zero_bytes_is_einval)
{
	errno = 0;
	EXPECT_EQ(-1, read(self->fd, self->ev, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(wheel, read_returns_whole_records_only)
{
	const size_t rec = sizeof(struct twheel_event);
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, dev_add(self->fd, i, 0));
	ASSERT_EQ(5, wait_waiting(self->fd, 5));
	EXPECT_EQ(2 * rec, read(self->fd, self->ev, 2 * rec + rec / 2));
	EXPECT_EQ(rec, read(self->fd, self->ev, 2 * rec - 1));
	EXPECT_EQ(2 * rec, read(self->fd, self->ev, 10 * rec + 3));
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
}

TEST_F(wheel, read_bad_buffer_is_efault_and_keeps_event)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	void *page = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	ASSERT_NE(MAP_FAILED, page);
	ASSERT_EQ(0, dev_add(self->fd, 3, 0));
	ASSERT_EQ(1, wait_waiting(self->fd, 1));
	errno = 0;
	EXPECT_EQ(-1, read(self->fd, page, sizeof(self->ev[0])));
	EXPECT_EQ(EFAULT, errno);
	munmap(page, psz);
	/* An event is never lost: a failed copy leaves it waiting. */
	EXPECT_EQ(1, dev_read_events(self->fd, self->ev, 1));
	EXPECT_EQ(3, self->ev[0].id);
}

/*
 * A buffer that runs into an unmapped page: the records copied whole come
 * back counted, the one cut by the fault comes again on the next read,
 * and nothing is lost or delivered twice.
 */
TEST_F(wheel, read_cut_by_fault_returns_whole_records_and_keeps_rest)
{
	const size_t rec = sizeof(struct twheel_event);
	const size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	struct twheel_event *ev;
	uint64_t seen = 0;
	uint8_t *map;
	ssize_t ret;
	int i, got;

	map = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + psz, psz, PROT_NONE));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, dev_add(self->fd, 100 + i, 0));
	ASSERT_EQ(8, wait_waiting(self->fd, 8));

	/* Room for 2 whole records and 10 bytes of a third before the hole. */
	ev = (struct twheel_event *)(map + psz - 2 * rec - 10);
	ret = read(self->fd, ev, 8 * rec);
	EXPECT_EQ((ssize_t)(2 * rec), ret);
	for (i = 0; i < 2 && ret > 0; i++)
		seen |= 1ULL << (ev[i].id - 100);
	EXPECT_EQ(6, fdinfo_get(self->fd, "events_waiting"));

	got = dev_read_events(self->fd, self->ev, 8);
	EXPECT_EQ(6, got);
	for (i = 0; i < got; i++) {
		EXPECT_EQ(0, seen & (1ULL << (self->ev[i].id - 100)));
		seen |= 1ULL << (self->ev[i].id - 100);
	}
	EXPECT_EQ(0xffULL, seen);
	munmap(map, 2 * psz);
}

TEST_F(wheel, nonblocking_read_without_event_is_eagain)
{
	int fd = wheel_new(O_NONBLOCK, TICK_NS, DFLT_NS, 0);

	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(-1, read(fd, self->ev, sizeof(self->ev[0])));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, dev_add(fd, 1, NSEC_PER_SEC));
	EXPECT_EQ(-EAGAIN, dev_read_events(fd, self->ev, 1));
	close(fd);
}

TEST_F(wheel, nonblock_set_by_fcntl_is_honoured)
{
	int fl = fcntl(self->fd, F_GETFL);

	ASSERT_LE(0, fl);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-EAGAIN, dev_read_events(self->fd, self->ev, 1));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl));
	ASSERT_EQ(0, dev_add(self->fd, 1, 20 * NSEC_PER_MSEC));
	EXPECT_EQ(1, dev_read_events(self->fd, self->ev, 1));
}

TEST_F(wheel, blocking_read_waits_for_expiry)
{
	struct twheel_op op;
	uint64_t t;

	dev_prep_add(&op, 77, 100 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 4));
	t = mono_ns();
	EXPECT_EQ(77, self->ev[0].id);
	EXPECT_LE(op.deadline_ns, t);
	EXPECT_GE(op.deadline_ns + TICK_NS + LATE_SLACK_NS, t);
}

static void on_signal(int sig)
{
	(void)sig;
}

/* SIGALRM in @usec, and every @every us after if @every is not 0. */
static void arm_signal(int flags, long usec, long every)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };
	struct itimerval it = { .it_value = { .tv_usec = usec },
				.it_interval = { .tv_usec = every } };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * A signal every 50 ms, so that one comes while the read sleeps however
 * late the read starts (one that came before it would leave the read to
 * sleep until the expiry).
 */
TEST_F(wheel, blocking_read_interrupted_by_signal_is_eintr)
{
	struct itimerval off = { 0 };
	uint64_t t = mono_ns();
	ssize_t r;
	int err;

	ASSERT_EQ(0, dev_add(self->fd, 1, 5 * NSEC_PER_SEC));
	arm_signal(0, 50000, 50000);
	errno = 0;
	r = read(self->fd, self->ev, sizeof(self->ev[0]));
	err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	EXPECT_EQ(-1, r);
	EXPECT_EQ(EINTR, err);
	EXPECT_GT(t + 4 * NSEC_PER_SEC, mono_ns());
	/* The id is still live: the signal took nothing. */
	EXPECT_EQ(0, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, blocking_read_restarts_with_sa_restart)
{
	struct twheel_op op;

	dev_prep_add(&op, 9, 200 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	arm_signal(SA_RESTART, 30000, 0);
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 1));
	EXPECT_EQ(9, self->ev[0].id);
	EXPECT_LE(op.deadline_ns, mono_ns());
}

TEST_F(wheel, poll_reports_pollin_while_events_wait)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN | POLLRDNORM };

	ASSERT_EQ(0, dev_add(self->fd, 1, 1 * NSEC_PER_SEC));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, dev_add(self->fd, 2, 30 * NSEC_PER_MSEC));
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_EQ(POLLIN | POLLRDNORM, pfd.revents);
	/* Level-triggered: still there until read. */
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 4));
	EXPECT_EQ(2, self->ev[0].id);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

TEST_F(wheel, poll_wakes_on_expiry)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct twheel_op op;
	uint64_t t;

	dev_prep_add(&op, 1, 100 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	t = mono_ns();
	EXPECT_TRUE(pfd.revents & POLLIN);
	EXPECT_LE(op.deadline_ns, t);
	EXPECT_GE(op.deadline_ns + TICK_NS + LATE_SLACK_NS, t);
}

TEST_F(wheel, epoll_reports_epollin_while_events_wait)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0xfeed };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct twheel_op op;
	uint64_t t;

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	dev_prep_add(&op, 1, 80 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	memset(&ev, 0, sizeof(ev));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	t = mono_ns();
	EXPECT_EQ(0xfeed, ev.data.u64);
	EXPECT_TRUE(ev.events & EPOLLIN);
	EXPECT_LE(op.deadline_ns, t);
	EXPECT_GE(op.deadline_ns + TICK_NS + LATE_SLACK_NS, t);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 2));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	close(ep);
}

TEST_F(wheel, epoll_edge_triggered_fires_per_new_expiry)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	ASSERT_EQ(0, dev_add(self->fd, 1, 20 * NSEC_PER_MSEC));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(0, dev_add(self->fd, 2, 20 * NSEC_PER_MSEC));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_EQ(2, drain_until(self->fd, self->ev, 2, mono_ns()
				 + LATE_SLACK_NS));
	close(ep);
}

TEST_F(wheel, refreshed_id_does_not_fire)
{
	uint64_t end = mono_ns() + 300 * NSEC_PER_MSEC;
	struct twheel_op op;

	/* Refreshed every ~10 ms, well inside the 200 ms timeout. */
	ASSERT_EQ(0, dev_add(self->fd, 1, 200 * NSEC_PER_MSEC));
	while (mono_ns() < end) {
		sleep_ns(10 * NSEC_PER_MSEC);
		ASSERT_EQ(0, dev_refresh(self->fd, 1, 200 * NSEC_PER_MSEC, 0));
	}
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
	dev_prep_query(&op, 1);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 2));
	EXPECT_EQ(op.deadline_ns, self->ev[0].deadline_ns);
}

TEST_F(wheel, cancel_after_expiry_is_enoent_and_event_stays)
{
	ASSERT_EQ(0, dev_add(self->fd, 1, 10 * NSEC_PER_MSEC));
	ASSERT_EQ(1, wait_waiting(self->fd, 1));
	EXPECT_EQ(-ENOENT, dev_cancel(self->fd, 1));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 2));
	EXPECT_EQ(1, self->ev[0].id);
	EXPECT_EQ(0, drain_until(self->fd, self->ev, 1,
				 mono_ns() + 50 * NSEC_PER_MSEC));
}

TEST_F(wheel, readded_id_fires_again)
{
	uint64_t d1;

	ASSERT_EQ(0, dev_add(self->fd, 1, 0));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 2));
	d1 = self->ev[0].deadline_ns;
	ASSERT_EQ(0, dev_add(self->fd, 1, 10 * NSEC_PER_MSEC));
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 2));
	EXPECT_EQ(1, self->ev[0].id);
	EXPECT_LT(d1, self->ev[0].deadline_ns);
}

TEST(boottime_wheel_expires_on_boottime)
{
	struct twheel_event ev;
	struct twheel_op op;
	int fd = dev_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_setup(fd, TICK_NS, DFLT_NS, CLOCK_BOOTTIME, 0));
	dev_prep_add(&op, 1, 30 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	ASSERT_EQ(1, dev_read_events(fd, &ev, 1));
	EXPECT_EQ(op.deadline_ns, ev.deadline_ns);
	EXPECT_LE(ev.deadline_ns, ev.expired_ns);
	EXPECT_LE(ev.expired_ns, clock_ns(CLOCK_BOOTTIME));
	close(fd);
}

TEST_HARNESS_MAIN
