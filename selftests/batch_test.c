// SPDX-License-Identifier: GPL-2.0
/*
 * TWHEEL_IOC_BATCH: ops applied in order each with its own result, a
 * failing op not stopping the batch, the count returned, count 0, the
 * count and flags limits, and EFAULT for ops that cannot be read, with
 * the count done so far when the array is cut short by an unmapped page.
 */
#include <limits.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/mman.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(NSEC_PER_SEC)
#define CAP		64

FIXTURE(wheel) {
	int fd;
};

FIXTURE_SETUP(wheel)
{
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, CAP);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

static int batch_errno(int fd, struct twheel_op *ops, uint32_t count,
		       uint32_t flags, int *ret)
{
	struct twheel_batch_args args = {
		.ops = (uintptr_t)ops,
		.count = count,
		.flags = flags,
	};

	errno = 0;
	*ret = ioctl(fd, TWHEEL_IOC_BATCH, &args);
	return *ret < 0 ? errno : 0;
}

/* Fill @ops with junk outputs, as op_init() does. */
static void junk_outputs(struct twheel_op *ops, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		ops[i].result = (int32_t)JUNK64;
		ops[i].deadline_ns = JUNK64;
		ops[i].remaining_ns = JUNK64;
	}
}

TEST_F(wheel, ops_apply_in_order)
{
	struct twheel_op ops[5];
	uint64_t before, after;
	int ret;

	dev_prep_add(&ops[0], 1, 100 * NSEC_PER_MSEC);
	dev_prep_refresh(&ops[1], 1, 5 * NSEC_PER_SEC, 0);
	dev_prep_query(&ops[2], 1);
	dev_prep_cancel(&ops[3], 1);
	dev_prep_query(&ops[4], 1);
	junk_outputs(ops, 5);
	before = mono_ns();
	ASSERT_EQ(0, batch_errno(self->fd, ops, 5, 0, &ret));
	after = mono_ns();
	ASSERT_EQ(5, ret);
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(0, ops[1].result);
	EXPECT_EQ(0, ops[2].result);
	EXPECT_EQ(0, ops[3].result);
	EXPECT_EQ(-ENOENT, ops[4].result);
	EXPECT_LE(before + 100 * NSEC_PER_MSEC, ops[0].deadline_ns);
	EXPECT_LE(before + 5 * NSEC_PER_SEC, ops[1].deadline_ns);
	EXPECT_GE(after + 5 * NSEC_PER_SEC + TICK_NS, ops[1].deadline_ns);
	EXPECT_EQ(ops[1].deadline_ns, ops[2].deadline_ns);
	EXPECT_EQ(ops[1].deadline_ns, ops[3].deadline_ns);
	EXPECT_EQ(0, ops[4].deadline_ns);
	EXPECT_EQ(0, ops[4].remaining_ns);
}

TEST_F(wheel, failing_ops_do_not_stop_the_batch)
{
	struct twheel_op ops[8];
	int i, ret;

	dev_prep_add(&ops[0], 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_add(&ops[1], 1, DEV_TIMEOUT_DEFAULT);	/* EEXIST */
	dev_prep_add(&ops[2], 2, DEV_TIMEOUT_DEFAULT);
	ops[2].op = 77;						/* EINVAL */
	dev_prep_refresh(&ops[3], 3, DEV_TIMEOUT_DEFAULT, 0); /* ENOENT */
	dev_prep_add(&ops[4], 4, DEV_TIMEOUT_DEFAULT);
	ops[4].slot = 1;						/* EINVAL */
	dev_prep_cancel(&ops[5], 5);				/* ENOENT */
	dev_prep_query(&ops[6], 1);
	ops[6].timeout_ns = 1;					/* EINVAL */
	dev_prep_add(&ops[7], 2, DEV_TIMEOUT_DEFAULT);
	junk_outputs(ops, 8);
	ASSERT_EQ(0, batch_errno(self->fd, ops, 8, 0, &ret));
	ASSERT_EQ(8, ret);
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(-EEXIST, ops[1].result);
	EXPECT_EQ(-EINVAL, ops[2].result);
	EXPECT_EQ(-ENOENT, ops[3].result);
	EXPECT_EQ(-EINVAL, ops[4].result);
	EXPECT_EQ(-ENOENT, ops[5].result);
	EXPECT_EQ(-EINVAL, ops[6].result);
	EXPECT_EQ(0, ops[7].result);
	for (i = 1; i < 7; i++) {
		EXPECT_EQ(0, ops[i].deadline_ns) TH_LOG("op %d", i);
		EXPECT_EQ(0, ops[i].remaining_ns) TH_LOG("op %d", i);
	}
	EXPECT_NE(0, ops[7].deadline_ns);
	EXPECT_EQ(0, dev_query(self->fd, 2, NULL, NULL));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 4, NULL, NULL));
	EXPECT_EQ(2, fdinfo_get(self->fd, "live"));
}

TEST_F(wheel, count_zero_returns_zero)
{
	struct twheel_op op;
	int ret;

	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	EXPECT_EQ(0, batch_errno(self->fd, &op, 0, 0, &ret));
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, batch_errno(self->fd, NULL, 0, 0, &ret));
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, dev_batch(self->fd, NULL, 0));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, null_ops_is_efault)
{
	int ret;

	EXPECT_EQ(EFAULT, batch_errno(self->fd, NULL, 1, 0, &ret));
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(-EFAULT, dev_batch(self->fd, NULL, 3));
}

TEST_F(wheel, unmapped_ops_is_efault)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	int ret;

	ASSERT_NE(MAP_FAILED, page);
	EXPECT_EQ(EFAULT, batch_errno(self->fd, page, 2, 0, &ret));
	EXPECT_EQ(-1, ret);
	munmap(page, 4096);
}

TEST_F(wheel, kernel_address_ops_is_efault)
{
	int ret;

	EXPECT_EQ(EFAULT, batch_errno(self->fd, (void *)0xffffffffff600000UL,
				      1, 0, &ret));
	EXPECT_EQ(EFAULT, batch_errno(self->fd, (void *)0xffff888000000000UL,
				      1, 0, &ret));
}

/*
 * An array running into an unmapped page: the batch reports how far it
 * got (the kernel may read in chunks, so any count up to the readable
 * part is right, or EFAULT if it got nowhere), and exactly the ops
 * before that count were applied.
 */
TEST_F(wheel, ops_cut_by_unmapped_page_return_count_done)
{
	long psz = sysconf(_SC_PAGESIZE);
	const unsigned int fit = 60, count = fit + 40;
	struct twheel_op *ops;
	unsigned int i, done;
	char *map;
	int ret, err;

	map = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + psz, psz, PROT_NONE));
	ASSERT_LE(fit * sizeof(*ops), psz);
	ops = (struct twheel_op *)(map + psz) - fit;
	for (i = 0; i < fit; i++)
		dev_prep_add(&ops[i], 100 + i, DEV_TIMEOUT_DEFAULT);
	junk_outputs(ops, fit);
	err = batch_errno(self->fd, ops, count, 0, &ret);
	if (err) {
		EXPECT_EQ(EFAULT, err);
		EXPECT_EQ(-1, ret);
		done = 0;
	} else {
		EXPECT_LT(0, ret);
		EXPECT_GE(fit, ret);
		done = ret;
	}
	ksft_print_msg("%u of %u readable ops applied\n", done, fit);
	for (i = 0; i < fit; i++) {
		if (i < done)
			EXPECT_EQ(0, ops[i].result) TH_LOG("op %u", i);
		EXPECT_EQ(i < done ? 0 : -ENOENT,
			  dev_query(self->fd, 100 + i, NULL, NULL))
			TH_LOG("op %u of %u done", i, done);
	}
	EXPECT_EQ(done, fdinfo_get(self->fd, "live"));
	munmap(map, 2 * psz);
}

TEST_F(wheel, flags_nonzero_is_einval)
{
	struct twheel_op op;
	unsigned int bit;
	int ret;

	for (bit = 0; bit < 32; bit++) {
		dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
		EXPECT_EQ(EINVAL, batch_errno(self->fd, &op, 1, 1U << bit, &ret))
			TH_LOG("flags 0x%x", 1U << bit);
	}
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, count_above_int_max_is_einval)
{
	struct twheel_op op;
	int ret;

	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	EXPECT_EQ(EINVAL, batch_errno(self->fd, &op, (uint32_t)INT_MAX + 1,
				      0, &ret));
	EXPECT_EQ(EINVAL, batch_errno(self->fd, &op, UINT32_MAX, 0, &ret));
	EXPECT_EQ(-EINVAL, dev_batch(self->fd, &op, UINT32_MAX));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, bad_args_pointer_is_efault)
{
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_BATCH, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(wheel, batch_past_cap_gets_enospc_per_op)
{
	struct twheel_op ops[CAP + 4];
	unsigned int i;
	int ret;

	for (i = 0; i < CAP + 4; i++)
		dev_prep_add(&ops[i], i, DEV_TIMEOUT_DEFAULT);
	junk_outputs(ops, CAP + 4);
	ASSERT_EQ(0, batch_errno(self->fd, ops, CAP + 4, 0, &ret));
	ASSERT_EQ(CAP + 4, ret);
	for (i = 0; i < CAP + 4; i++)
		EXPECT_EQ(i < CAP ? 0 : -ENOSPC, ops[i].result) TH_LOG("op %u", i);
	/* Room made inside the batch is usable later in the same batch. */
	dev_prep_cancel(&ops[0], 0);
	dev_prep_add(&ops[1], CAP, DEV_TIMEOUT_DEFAULT);
	dev_prep_add(&ops[2], CAP + 1, DEV_TIMEOUT_DEFAULT);
	junk_outputs(ops, 3);
	ASSERT_EQ(3, dev_batch(self->fd, ops, 3));
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(0, ops[1].result);
	EXPECT_EQ(-ENOSPC, ops[2].result);
}

TEST_F(wheel, batch_deadline_matches_single_op_rule)
{
	struct twheel_op ops[3];
	uint64_t before, after;

	dev_prep_add(&ops[0], 1, 0);
	dev_prep_add(&ops[1], 2, DEV_TIMEOUT_DEFAULT);
	dev_prep_refresh(&ops[2], 3, 333 * NSEC_PER_MSEC,
			 TWHEEL_OPF_ADD_IF_ABSENT);
	junk_outputs(ops, 3);
	before = mono_ns();
	ASSERT_EQ(3, dev_batch(self->fd, ops, 3));
	after = mono_ns();
	EXPECT_LE(before, ops[0].deadline_ns);
	EXPECT_GE(after + TICK_NS, ops[0].deadline_ns);
	EXPECT_LE(before + DFLT_NS, ops[1].deadline_ns);
	EXPECT_GE(after + DFLT_NS + TICK_NS, ops[1].deadline_ns);
	EXPECT_LE(before + 333 * NSEC_PER_MSEC, ops[2].deadline_ns);
	EXPECT_GE(after + 333 * NSEC_PER_MSEC + TICK_NS, ops[2].deadline_ns);
	EXPECT_EQ(0, (ops[1].deadline_ns - ops[0].deadline_ns) % TICK_NS);
	EXPECT_EQ(0, (ops[2].deadline_ns - ops[0].deadline_ns) % TICK_NS);
	EXPECT_GE(ops[1].deadline_ns - before, ops[1].remaining_ns);
	EXPECT_LE(ops[1].deadline_ns - after, ops[1].remaining_ns);
}

TEST(large_batch_applies_every_op)
{
	const unsigned int n = debug_kernel() ? 10000 : 100000;
	struct twheel_op *ops = calloc(n, sizeof(*ops));
	unsigned int i, bad = 0;
	int fd;

	ASSERT_NE(NULL, ops);
	fd = wheel_new(O_CLOEXEC, TICK_NS, 60 * NSEC_PER_SEC, 0);
	ASSERT_LE(0, fd);
	for (i = 0; i < n; i++)
		dev_prep_add(&ops[i], (uint64_t)i * 0x9e3779b97f4a7c15ULL,
			     DEV_TIMEOUT_DEFAULT);
	junk_outputs(ops, n);
	ASSERT_EQ(n, dev_batch(fd, ops, n));
	for (i = 0; i < n; i++)
		bad += ops[i].result != 0;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(n, fdinfo_get(fd, "live"));
	for (i = 0; i < n; i++)
		dev_prep_cancel(&ops[i], (uint64_t)i * 0x9e3779b97f4a7c15ULL);
	junk_outputs(ops, n);
	ASSERT_EQ(n, dev_batch(fd, ops, n));
	for (i = 0, bad = 0; i < n; i++)
		bad += ops[i].result != 0;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, fdinfo_get(fd, "live"));
	close(fd);
	free(ops);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * A signal during a long batch: the batch stops and returns how far it
 * got (or EINTR if nowhere), and exactly those ops were applied. The
 * batch is long enough (a million adds) that a signal 10 ms in lands
 * inside it even on fast hardware; if it does not, there is nothing to
 * check and the test says so.
 */
TEST(signal_stops_batch_with_count_done)
{
	const unsigned int n = 1U << 20;
	struct twheel_op *ops = calloc(n, sizeof(*ops));
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 10000 } };
	unsigned int i, bad = 0;
	int fd, ret;

	ASSERT_NE(NULL, ops);
	fd = wheel_new(O_CLOEXEC, TICK_NS, 60 * NSEC_PER_SEC, 0);
	ASSERT_LE(0, fd);
	for (i = 0; i < n; i++)
		dev_prep_add(&ops[i], i, DEV_TIMEOUT_DEFAULT);
	junk_outputs(ops, n);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	ret = dev_batch(fd, ops, n);
	if (ret == -EINTR)
		ret = 0;
	ASSERT_LE(0, ret) TH_LOG("batch: %s", strerror(-ret));
	ASSERT_GE(n, ret);
	if (ret == (int)n)
		SKIP(goto out, "the batch finished before the signal came");
	ksft_print_msg("signal stopped the batch after %d of %u ops\n", ret, n);
	for (i = 0; i < (unsigned int)ret; i++)
		bad += ops[i].result != 0;
	EXPECT_EQ(0, bad);
	/* Nothing past the count: no result written, no id added. */
	for (i = ret, bad = 0; i < n; i++)
		bad += ops[i].result != (int32_t)JUNK64;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(ret, fdinfo_get(fd, "live"));
out:
	close(fd);
	free(ops);
}

TEST_HARNESS_MAIN
