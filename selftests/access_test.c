// SPDX-License-Identifier: GPL-2.0
/*
 * What a descriptor may do, by the access mode it was opened with: the
 * commands that change a wheel (SETUP, OP, BATCH, REFRESH) fail with
 * EBADF on one opened O_RDONLY, as write(2) does, before any other check
 * and without writing anything back; so a wheel opened O_RDONLY is never
 * set up and its reads (DUMP, read(2), mmap(2)) answer EBADFD. A
 * descriptor opened O_WRONLY changes its wheel but cannot read(2) or
 * mmap(2) it, as any file.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "twheel_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(10 * NSEC_PER_SEC)

static const struct twheel_setup_args good_setup = {
	.tick_ns = TICK_NS,
	.default_timeout_ns = DFLT_NS,
	.clockid = CLOCK_MONOTONIC,
};

static int open_mode(int mode)
{
	return open(TWHEEL_DEVICE, mode | O_CLOEXEC);
}

static int ioctl_errno(int fd, unsigned long cmd, void *arg)
{
	errno = 0;
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

TEST(rdonly_setup_is_ebadf_and_leaves_the_wheel_unset)
{
	int fd = open_mode(O_RDONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_SETUP, (void *)&good_setup));
	/* Before the argument is even read: a bad pointer is EBADF too. */
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_SETUP, (void *)8));
	EXPECT_EQ(-1, fdinfo_get(fd, "tick_ns"));
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_SETUP, (void *)&good_setup));
	close(fd);
}

/* OP, BATCH and REFRESH are refused whole, and write nothing back. */
TEST(rdonly_changing_commands_are_ebadf_and_write_nothing)
{
	struct twheel_op op, ops[2], want[2];
	struct twheel_refresh_args ra, ra_want;
	struct twheel_batch_args ba;
	uint64_t ids[2] = { 1, 2 }, failed[2] = { JUNK64, JUNK64 };
	int fd = open_mode(O_RDONLY);

	ASSERT_LE(0, fd);
	op_init(&op, TWHEEL_OP_ADD, 1, 0, 0);
	want[0] = op;
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_OP, &op));
	EXPECT_EQ(0, memcmp(&op, &want[0], sizeof(op)));
	op_init(&op, TWHEEL_OP_QUERY, 1, 0, 0);
	want[0] = op;
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_OP, &op));
	EXPECT_EQ(0, memcmp(&op, &want[0], sizeof(op)));

	op_init(&ops[0], TWHEEL_OP_QUERY, 1, 0, 0);
	op_init(&ops[1], TWHEEL_OP_ADD, 2, 0, 0);
	memcpy(want, ops, sizeof(ops));
	ba = (struct twheel_batch_args){ .ops = (uintptr_t)ops, .count = 2 };
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_BATCH, &ba));
	EXPECT_EQ(0, memcmp(ops, want, sizeof(ops)));

	memset(&ra, 0, sizeof(ra));
	ra.ids = (uintptr_t)ids;
	ra.failed = (uintptr_t)failed;
	ra.count = 2;
	ra.flags = TWHEEL_OPF_ADD_IF_ABSENT;
	ra.nr_failed = JUNK;
	ra_want = ra;
	EXPECT_EQ(EBADF, ioctl_errno(fd, TWHEEL_IOC_REFRESH, &ra));
	EXPECT_EQ(0, memcmp(&ra, &ra_want, sizeof(ra)));
	EXPECT_EQ(JUNK64, failed[0]);
	close(fd);
}

/* What only reads answers as on any wheel not set up. */
TEST(rdonly_reads_answer_as_before_setup)
{
	struct twheel_dump_entry de[2];
	struct twheel_dump_args da = { .entries = (uintptr_t)de, .count = 2 };
	struct pollfd pfd = { .events = POLLIN };
	struct twheel_event ev;
	int fd = open_mode(O_RDONLY | O_NONBLOCK);
	void *p;

	ASSERT_LE(0, fd);
	EXPECT_EQ(EBADFD, ioctl_errno(fd, TWHEEL_IOC_DUMP, &da));
	errno = 0;
	EXPECT_EQ(-1, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(EBADFD, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EBADFD, errno);
	pfd.fd = fd;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	/* An unknown command is still ENOTTY, whatever the mode. */
	EXPECT_EQ(ENOTTY, ioctl_errno(fd, _IO(TWHEEL_IOC_MAGIC, 99), NULL));
	close(fd);
}

/* Write-only: the wheel is the caller's to change, not to read. */
TEST(wronly_changes_the_wheel_but_cannot_read_it)
{
	struct twheel_setup_args sa = good_setup;
	struct twheel_dump_entry de[2];
	struct twheel_dump_args da = { .entries = (uintptr_t)de, .count = 2 };
	struct twheel_event ev;
	struct twheel_op op;
	int fd = open_mode(O_WRONLY);

	ASSERT_LE(0, fd);
	sa.flags = TWHEEL_SETUPF_TOUCH;
	sa.touch_slots = 8;
	ASSERT_EQ(0, ioctl_errno(fd, TWHEEL_IOC_SETUP, &sa));
	op_init(&op, TWHEEL_OP_ADD, 5, TWHEEL_OPF_TIMEOUT, 500 * NSEC_PER_MSEC);
	EXPECT_EQ(0, run_op(_metadata, fd, &op));
	op_init(&op, TWHEEL_OP_QUERY, 5, 0, 0);
	EXPECT_EQ(0, run_op(_metadata, fd, &op));
	EXPECT_EQ(1, ioctl(fd, TWHEEL_IOC_DUMP, &da));
	EXPECT_EQ(5, de[0].id);
	ASSERT_EQ(1, wait_waiting(fd, 1));
	errno = 0;
	EXPECT_EQ(-1, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(EACCES, errno);
	close(fd);
}

/* A read-write descriptor's copies keep its mode: dup and fork change nothing. */
TEST(rdwr_copies_keep_write_access)
{
	int fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0), dfd, st;
	pid_t pid;

	ASSERT_LE(0, fd);
	dfd = dup(fd);
	ASSERT_LE(0, dfd);
	EXPECT_EQ(0, dev_add(dfd, 1, DFLT_NS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(dev_add(fd, 2, DFLT_NS) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(2, fdinfo_get(fd, "live"));
	close(dfd);
	close(fd);
}

TEST_HARNESS_MAIN
