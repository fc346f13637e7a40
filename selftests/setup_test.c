// SPDX-License-Identifier: GPL-2.0
/*
 * TWHEEL_IOC_SETUP: which arguments are accepted and which fail with
 * EINVAL, that setup happens once (EBUSY), that nothing else works on a
 * wheel before it (EBADFD), and the open(2) flags of the device.
 */
#include <poll.h>
#include <sys/epoll.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(1 * NSEC_PER_MSEC)

FIXTURE(fresh) {
	int fd;
	struct twheel_setup_args args;
};

FIXTURE_SETUP(fresh)
{
	self->fd = dev_open(O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", TWHEEL_DEVICE,
				      strerror(-self->fd));
	memset(&self->args, 0, sizeof(self->args));
	self->args.tick_ns = TICK_NS;
	self->args.default_timeout_ns = 100 * NSEC_PER_MSEC;
	self->args.clockid = CLOCK_MONOTONIC;
}

FIXTURE_TEARDOWN(fresh)
{
	close(self->fd);
}

static int setup_errno(int fd, struct twheel_setup_args *a)
{
	errno = 0;
	if (ioctl(fd, TWHEEL_IOC_SETUP, a) == 0)
		return 0;
	return errno;
}

TEST_F(fresh, valid_setup_succeeds)
{
	ASSERT_EQ(0, ioctl(self->fd, TWHEEL_IOC_SETUP, &self->args));
}

TEST_F(fresh, tick_below_min_is_einval)
{
	self->args.tick_ns = TWHEEL_TICK_MIN_NS - 1;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
	ASSERT_EQ(-EINVAL, dev_setup_params(self->fd, &self->args));
}

TEST_F(fresh, tick_zero_is_einval)
{
	self->args.tick_ns = 0;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, tick_min_is_accepted)
{
	self->args.tick_ns = TWHEEL_TICK_MIN_NS;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, tick_above_max_is_einval)
{
	self->args.tick_ns = TWHEEL_TICK_MAX_NS + 1;
	self->args.default_timeout_ns = NSEC_PER_SEC;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, tick_max_is_accepted)
{
	self->args.tick_ns = TWHEEL_TICK_MAX_NS;
	self->args.default_timeout_ns = NSEC_PER_SEC;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, default_timeout_max_is_accepted)
{
	self->args.default_timeout_ns = TWHEEL_MAX_TIMEOUT_TICKS * TICK_NS;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, default_timeout_above_max_is_einval)
{
	self->args.default_timeout_ns = TWHEEL_MAX_TIMEOUT_TICKS * TICK_NS + 1;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, default_timeout_max_ns_is_accepted_at_large_tick)
{
	/* 2^32 ticks of 1 h would overflow: the ns bound applies. */
	self->args.tick_ns = TWHEEL_TICK_MAX_NS;
	self->args.default_timeout_ns = TWHEEL_MAX_TIMEOUT_NS;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, default_timeout_above_max_ns_is_einval)
{
	self->args.tick_ns = TWHEEL_TICK_MAX_NS;
	self->args.default_timeout_ns = TWHEEL_MAX_TIMEOUT_NS + 1;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
	self->args.default_timeout_ns = UINT64_MAX;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, default_timeout_zero_is_accepted)
{
	self->args.default_timeout_ns = 0;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, clock_boottime_is_accepted)
{
	self->args.clockid = CLOCK_BOOTTIME;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, clock_realtime_is_einval)
{
	self->args.clockid = CLOCK_REALTIME;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, clock_other_is_einval)
{
	static const uint32_t bad[] = {
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
		CLOCK_MONOTONIC_COARSE, CLOCK_REALTIME_ALARM,
		CLOCK_BOOTTIME_ALARM, CLOCK_TAI, 12, 0x7fffffff, 0xffffffff,
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		self->args.clockid = bad[i];
		EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args))
			TH_LOG("clockid %u", bad[i]);
	}
}

TEST_F(fresh, unknown_flags_are_einval)
{
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		if (TWHEEL_SETUPF_TOUCH & (1U << bit))
			continue;
		self->args.flags = 1U << bit;
		EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args))
			TH_LOG("flags 0x%x", self->args.flags);
	}
}

TEST_F(fresh, touch_slots_without_touch_flag_is_einval)
{
	self->args.touch_slots = 1;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
	self->args.touch_slots = 0x80000000;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, max_entries_above_param_is_einval)
{
	unsigned long long cap = module_param("max_entries_per_wheel", 1U << 24);

	if (cap >= UINT32_MAX)
		SKIP(return, "max_entries_per_wheel %llu: no larger u32", cap);
	self->args.max_entries = cap + 1;
	EXPECT_EQ(EINVAL, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, max_entries_at_param_is_accepted)
{
	unsigned long long cap = module_param("max_entries_per_wheel", 1U << 24);

	self->args.max_entries = cap;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
	EXPECT_EQ((long long)cap, fdinfo_get(self->fd, "max_entries"));
}

TEST_F(fresh, max_entries_zero_selects_param)
{
	unsigned long long cap = module_param("max_entries_per_wheel", 1U << 24);

	self->args.max_entries = 0;
	ASSERT_EQ(0, setup_errno(self->fd, &self->args));
	EXPECT_EQ((long long)cap, fdinfo_get(self->fd, "max_entries"));
}

TEST_F(fresh, failed_setup_leaves_wheel_unset)
{
	self->args.touch_slots = 1;
	ASSERT_EQ(EINVAL, setup_errno(self->fd, &self->args));
	EXPECT_EQ(-EBADFD, dev_add(self->fd, 1, DEV_TIMEOUT_DEFAULT));
	self->args.touch_slots = 0;
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, second_setup_is_ebusy)
{
	ASSERT_EQ(0, setup_errno(self->fd, &self->args));
	EXPECT_EQ(EBUSY, setup_errno(self->fd, &self->args));
	self->args.tick_ns = 2 * TICK_NS;
	EXPECT_EQ(EBUSY, setup_errno(self->fd, &self->args));
	EXPECT_EQ((long long)TICK_NS, fdinfo_get(self->fd, "tick_ns"));
}

TEST_F(fresh, setup_bad_pointer_is_efault)
{
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_SETUP, NULL));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_SETUP, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* The failed copies set nothing up. */
	EXPECT_EQ(0, setup_errno(self->fd, &self->args));
}

TEST_F(fresh, op_before_setup_is_ebadfd)
{
	struct twheel_op op;

	op_init(&op, TWHEEL_OP_ADD, 1, 0, 0);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_OP, &op));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-EBADFD, dev_add(self->fd, 1, DEV_TIMEOUT_DEFAULT));
	EXPECT_EQ(-EBADFD, dev_refresh(self->fd, 1, DEV_TIMEOUT_DEFAULT,
				       TWHEEL_OPF_ADD_IF_ABSENT));
	EXPECT_EQ(-EBADFD, dev_cancel(self->fd, 1));
	EXPECT_EQ(-EBADFD, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(fresh, batch_before_setup_is_ebadfd)
{
	struct twheel_op op;

	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	EXPECT_EQ(-EBADFD, dev_batch(self->fd, &op, 1));
}

TEST_F(fresh, read_before_setup_is_ebadfd)
{
	struct twheel_event ev;

	errno = 0;
	EXPECT_EQ(-1, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(EBADFD, errno);
}

TEST_F(fresh, read_before_setup_nonblock_is_ebadfd)
{
	struct twheel_event ev;
	int fd = dev_open(O_NONBLOCK);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, dev_read_events(fd, &ev, 1));
	close(fd);
}

TEST_F(fresh, poll_before_setup_reports_nothing)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN | POLLOUT };

	EXPECT_EQ(0, poll(&pfd, 1, 50));
	EXPECT_EQ(0, pfd.revents);
}

TEST_F(fresh, epoll_before_setup_reports_nothing)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 50));
	close(ep);
}

TEST_F(fresh, unknown_ioctl_is_enotty)
{
	unsigned long bad[] = {
		_IO(TWHEEL_IOC_MAGIC, 3),
		_IOWR(TWHEEL_IOC_MAGIC, 0, struct twheel_setup_args),
		_IOW(TWHEEL_IOC_MAGIC, 1, struct twheel_op),
		_IOW(TWHEEL_IOC_MAGIC, 0, uint64_t),
		_IOW(TWHEEL_IOC_MAGIC + 1, 0, struct twheel_setup_args),
		_IOWR(TWHEEL_IOC_MAGIC, 2, struct twheel_batch_args),
		_IO('T', 0x1b),
	};
	unsigned int i;
	char buf[64];

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(buf, 0, sizeof(buf));
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->fd, bad[i], buf))
			TH_LOG("cmd 0x%lx", bad[i]);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd 0x%lx", bad[i]);
	}
	ASSERT_EQ(0, setup_errno(self->fd, &self->args));
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, _IO(TWHEEL_IOC_MAGIC, 3), buf));
	EXPECT_EQ(ENOTTY, errno);
}

TEST(open_flags_are_honoured)
{
	int fd = dev_open(O_CLOEXEC | O_NONBLOCK);

	ASSERT_LE(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	close(fd);
	fd = dev_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fcntl(fd, F_GETFD));
	EXPECT_FALSE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
}

TEST(each_open_is_a_new_wheel)
{
	int a = dev_open(0), b = dev_open(0);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, dev_setup(a, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	/* b is not set up even though a is. */
	EXPECT_EQ(-EBADFD, dev_add(b, 1, DEV_TIMEOUT_DEFAULT));
	EXPECT_EQ(0, dev_setup(b, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
