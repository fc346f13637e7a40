// SPDX-License-Identifier: GPL-2.0
/*
 * TWHEEL_IOC_OP: ADD, REFRESH, CANCEL and QUERY on one id at a time;
 * the out fields, the deadline rule (now + timeout rounded up to the
 * tick grid, never early), every EINVAL rule of struct twheel_op, EEXIST,
 * ENOENT, ENOSPC at the wheel's cap, and what "no longer live" means
 * once an id expired.
 */
#include <sys/mman.h>

#include "twheel_util.h"
#include "kselftest_harness.h"
#include "twheel_harness.h"

#define TICK_NS		(3 * NSEC_PER_MSEC)
#define DFLT_NS		(100 * NSEC_PER_MSEC)
#define CAP		16
#define MAX_TIMEOUT_NS	(TWHEEL_MAX_TIMEOUT_TICKS * TICK_NS)

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

static int op1(struct __test_metadata *_metadata, int fd, uint32_t code,
	       uint64_t id, uint32_t flags, uint64_t timeout_ns)
{
	struct twheel_op op;

	op_init(&op, code, id, flags, timeout_ns);
	return run_op(_metadata, fd, &op);
}

/* Deadline @d of an op issued between @before and @after with @t. */
static void check_deadline(struct __test_metadata *_metadata,
			   const struct twheel_op *op, uint64_t before,
			   uint64_t after, uint64_t t)
{
	EXPECT_LE(before + t, op->deadline_ns) TH_LOG("early deadline");
	EXPECT_GE(after + t + TICK_NS, op->deadline_ns) TH_LOG("late deadline");
	/* A machine slower than @t may return after the deadline. */
	if (op->deadline_ns > after)
		EXPECT_LE(op->deadline_ns - after, op->remaining_ns);
	EXPECT_GE(op->deadline_ns - before, op->remaining_ns);
}

TEST_F(wheel, add_sets_deadline_from_timeout)
{
	struct twheel_op op;
	uint64_t before, after, t = 50 * NSEC_PER_MSEC + 12345;

	op_init(&op, TWHEEL_OP_ADD, 7, TWHEEL_OPF_TIMEOUT, t);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, t);
}

TEST_F(wheel, add_without_timeout_uses_default)
{
	struct twheel_op op;
	uint64_t before, after;

	op_init(&op, TWHEEL_OP_ADD, 7, 0, 0);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, DFLT_NS);
}

TEST_F(wheel, deadlines_are_on_the_tick_grid)
{
	static const uint64_t t[] = {
		0, 1, TICK_NS - 1, TICK_NS, TICK_NS + 1, 7777777, 123456789,
	};
	struct twheel_op op;
	uint64_t first = 0;
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		op_init(&op, TWHEEL_OP_ADD, i, TWHEEL_OPF_TIMEOUT, t[i]);
		ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
		if (!i)
			first = op.deadline_ns;
		EXPECT_EQ(0, (op.deadline_ns - first) % TICK_NS)
			TH_LOG("timeout %llu: deadline %llu off the grid of %llu",
			       (unsigned long long)t[i],
			       (unsigned long long)op.deadline_ns,
			       (unsigned long long)first);
	}
}

TEST(tick_grid_counts_from_setup)
{
	const uint64_t tick = 7 * NSEC_PER_MSEC;
	uint64_t t0, t1, off;
	struct twheel_op op;
	int fd = dev_open(0);

	ASSERT_LE(0, fd);
	t0 = mono_ns();
	ASSERT_EQ(0, dev_setup(fd, tick, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	t1 = mono_ns();
	dev_prep_add(&op, 1, 12345678);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	/* deadline = setup time + k * tick, setup time within [t0, t1]. */
	off = (op.deadline_ns - t0) % tick;
	EXPECT_GE(t1 - t0, off) TH_LOG("deadline %llu ns past the grid from setup",
				       (unsigned long long)off);
	close(fd);
}

TEST_F(wheel, timeout_zero_deadline_is_next_tick)
{
	struct twheel_op op;
	uint64_t before, after;

	op_init(&op, TWHEEL_OP_ADD, 1, TWHEEL_OPF_TIMEOUT, 0);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	EXPECT_LE(before, op.deadline_ns);
	EXPECT_GE(after + TICK_NS, op.deadline_ns);
}

TEST_F(wheel, add_live_id_is_eexist)
{
	struct twheel_op op;
	uint64_t d;

	op_init(&op, TWHEEL_OP_ADD, 9, TWHEEL_OPF_TIMEOUT, NSEC_PER_SEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	d = op.deadline_ns;
	op_init(&op, TWHEEL_OP_ADD, 9, TWHEEL_OPF_TIMEOUT, 10 * NSEC_PER_SEC);
	EXPECT_EQ(EEXIST, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(-EEXIST, op.result);
	EXPECT_EQ(-EEXIST, dev_add(self->fd, 9, DEV_TIMEOUT_DEFAULT));
	/* The first entry is untouched. */
	op_init(&op, TWHEEL_OP_QUERY, 9, 0, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(d, op.deadline_ns);
}

TEST_F(wheel, ids_zero_and_max_are_valid)
{
	uint64_t ids[] = { 0, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63 };
	uint64_t d, r;
	unsigned int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, dev_add(self->fd, ids[i], DEV_TIMEOUT_DEFAULT));
	for (i = 0; i < 4; i++) {
		d = r = JUNK64;
		EXPECT_EQ(0, dev_query(self->fd, ids[i], &d, &r));
		EXPECT_NE(JUNK64, d);
		EXPECT_GE(DFLT_NS + TICK_NS, r);
		EXPECT_EQ(0, dev_refresh(self->fd, ids[i], NSEC_PER_SEC, 0));
		EXPECT_EQ(-EEXIST, dev_add(self->fd, ids[i], 0));
	}
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, dev_cancel(self->fd, ids[i]));
		EXPECT_EQ(-ENOENT, dev_query(self->fd, ids[i], NULL, NULL));
	}
}

TEST_F(wheel, refresh_moves_deadline_later)
{
	struct twheel_op op;
	uint64_t before, after, d;

	ASSERT_EQ(0, op1(_metadata, self->fd, TWHEEL_OP_ADD, 5,
			 TWHEEL_OPF_TIMEOUT, 2 * NSEC_PER_SEC));
	op_init(&op, TWHEEL_OP_REFRESH, 5, TWHEEL_OPF_TIMEOUT, 5 * NSEC_PER_SEC);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, 5 * NSEC_PER_SEC);
	d = op.deadline_ns;
	op_init(&op, TWHEEL_OP_QUERY, 5, 0, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(d, op.deadline_ns);
}

TEST_F(wheel, refresh_moves_deadline_earlier)
{
	struct twheel_op op;
	uint64_t before, after;

	ASSERT_EQ(0, op1(_metadata, self->fd, TWHEEL_OP_ADD, 5,
			 TWHEEL_OPF_TIMEOUT, 50 * NSEC_PER_SEC));
	op_init(&op, TWHEEL_OP_REFRESH, 5, TWHEEL_OPF_TIMEOUT, 20 * NSEC_PER_MSEC);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, 20 * NSEC_PER_MSEC);
}

TEST_F(wheel, refresh_without_timeout_uses_default_not_previous)
{
	struct twheel_op op;
	uint64_t before, after;

	ASSERT_EQ(0, op1(_metadata, self->fd, TWHEEL_OP_ADD, 5,
			 TWHEEL_OPF_TIMEOUT, 30 * NSEC_PER_SEC));
	op_init(&op, TWHEEL_OP_REFRESH, 5, 0, 0);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, DFLT_NS);
}

TEST_F(wheel, refresh_absent_is_enoent)
{
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 3, 0, 0));
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 3,
			      TWHEEL_OPF_TIMEOUT, NSEC_PER_SEC));
	EXPECT_EQ(-ENOENT, dev_refresh(self->fd, 3, DEV_TIMEOUT_DEFAULT, 0));
	/* And it did not add the id. */
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 3, NULL, NULL));
}

TEST_F(wheel, refresh_add_if_absent_adds)
{
	struct twheel_op op;
	uint64_t before, after;

	op_init(&op, TWHEEL_OP_REFRESH, 3,
		TWHEEL_OPF_ADD_IF_ABSENT | TWHEEL_OPF_TIMEOUT, NSEC_PER_SEC);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, NSEC_PER_SEC);
	EXPECT_EQ(0, dev_query(self->fd, 3, NULL, NULL));
	EXPECT_EQ(-EEXIST, dev_add(self->fd, 3, DEV_TIMEOUT_DEFAULT));
}

TEST_F(wheel, refresh_add_if_absent_refreshes_live)
{
	struct twheel_op op;
	uint64_t before, after;

	ASSERT_EQ(0, dev_add(self->fd, 3, 10 * NSEC_PER_SEC));
	op_init(&op, TWHEEL_OP_REFRESH, 3, TWHEEL_OPF_ADD_IF_ABSENT, 0);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, DFLT_NS);
}

TEST_F(wheel, cancel_returns_old_deadline_and_removes)
{
	struct twheel_op op;
	uint64_t d, before, after;

	op_init(&op, TWHEEL_OP_ADD, 11, TWHEEL_OPF_TIMEOUT, NSEC_PER_SEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	d = op.deadline_ns;
	op_init(&op, TWHEEL_OP_CANCEL, 11, 0, 0);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	EXPECT_EQ(d, op.deadline_ns);
	EXPECT_LE(d - after, op.remaining_ns);
	EXPECT_GE(d - before, op.remaining_ns);
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 11, 0, 0));
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_CANCEL, 11, 0, 0));
	EXPECT_EQ(0, dev_add(self->fd, 11, DEV_TIMEOUT_DEFAULT));
}

TEST_F(wheel, cancel_absent_is_enoent)
{
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_CANCEL, 4, 0, 0));
	EXPECT_EQ(-ENOENT, dev_cancel(self->fd, 4));
}

/*
 * An id cancelled before its deadline never fires. If the cancel came
 * after the deadline (a machine slower than the timeout), the id was
 * rightly gone: again on a new wheel, with a timeout twice as long.
 */
TEST_F(wheel, cancelled_id_never_fires)
{
	struct twheel_event ev;
	uint64_t t, start;
	int ret;

	for (t = 10 * NSEC_PER_MSEC; ; t *= 2) {
		start = mono_ns();
		ASSERT_EQ(0, dev_add(self->fd, 4, t));
		ret = dev_cancel(self->fd, 4);
		if (ret != -ENOENT || mono_ns() - start < t)
			break;
		ASSERT_GT(2 * NSEC_PER_SEC, t) TH_LOG("an add and a cancel took over 2 s");
		close(self->fd);
		self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, CAP);
		ASSERT_LE(0, self->fd);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, drain_until(self->fd, &ev, 1,
				 mono_ns() + t + TICK_NS + LATE_SLACK_NS));
}

TEST_F(wheel, query_returns_deadline_and_remaining)
{
	struct twheel_op op;
	uint64_t d, before, after;

	op_init(&op, TWHEEL_OP_ADD, 2, TWHEEL_OPF_TIMEOUT, 500 * NSEC_PER_MSEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	d = op.deadline_ns;
	op_init(&op, TWHEEL_OP_QUERY, 2, 0, 0);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	EXPECT_EQ(d, op.deadline_ns);
	EXPECT_LE(d - after, op.remaining_ns);
	EXPECT_GE(d - before, op.remaining_ns);
}

TEST_F(wheel, query_remaining_decreases)
{
	uint64_t d1 = 0, d2 = 0, r1 = 0, r2 = 0;

	ASSERT_EQ(0, dev_add(self->fd, 2, NSEC_PER_SEC));
	ASSERT_EQ(0, dev_query(self->fd, 2, &d1, &r1));
	sleep_ns(20 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_query(self->fd, 2, &d2, &r2));
	EXPECT_EQ(d1, d2);
	EXPECT_GE(r1 - 20 * NSEC_PER_MSEC, r2);
	EXPECT_LT(0, r2);
}

TEST_F(wheel, query_absent_is_enoent)
{
	uint64_t d = JUNK64, r = JUNK64;

	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 4, 0, 0));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 4, &d, &r));
	EXPECT_EQ(JUNK64, d);	/* dev_query() leaves outputs alone on error */
	EXPECT_EQ(JUNK64, r);
}

TEST_F(wheel, unknown_op_code_is_einval)
{
	static const uint32_t codes[] = { 0, 5, 6, 0x100, 0x80000001, UINT32_MAX };
	unsigned int i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		EXPECT_EQ(EINVAL, op1(_metadata, self->fd, codes[i], 1, 0, 0))
			TH_LOG("op %u", codes[i]);
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 1, 0, 0));
}

/* Every op flag the uapi header defines; any other bit is unknown. */
#define KNOWN_OPF	(TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ADD_IF_ABSENT | \
			 TWHEEL_OPF_ABSTIME | TWHEEL_OPF_TOUCH)

TEST_F(wheel, unknown_flag_is_einval)
{
	uint32_t code, bit;

	for (code = TWHEEL_OP_ADD; code <= TWHEEL_OP_QUERY; code++)
		for (bit = 0; bit < 32; bit++) {
			if (KNOWN_OPF & (1U << bit))
				continue;
			EXPECT_EQ(EINVAL, op1(_metadata, self->fd, code, 1,
					      1U << bit, 0))
				TH_LOG("op %u flags 0x%x", code, 1U << bit);
		}
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 1, 0, 0));
}

TEST_F(wheel, pad_nonzero_is_einval)
{
	uint32_t code;
	struct twheel_op op;

	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	for (code = TWHEEL_OP_ADD; code <= TWHEEL_OP_QUERY; code++) {
		op_init(&op, code, code == TWHEEL_OP_ADD ? 2 : 1, 0, 0);
		op.slot = 1;
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op))
			TH_LOG("op %u", code);
	}
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 2, NULL, NULL));
	EXPECT_EQ(0, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, timeout_flag_on_cancel_or_query_is_einval)
{
	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_CANCEL, 1,
			      TWHEEL_OPF_TIMEOUT, 0));
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 1,
			      TWHEEL_OPF_TIMEOUT, 0));
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_CANCEL, 1,
			      TWHEEL_OPF_TIMEOUT, NSEC_PER_SEC));
	EXPECT_EQ(0, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, add_if_absent_outside_refresh_is_einval)
{
	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_ADD, 2,
			      TWHEEL_OPF_ADD_IF_ABSENT, 0));
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_CANCEL, 1,
			      TWHEEL_OPF_ADD_IF_ABSENT, 0));
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 1,
			      TWHEEL_OPF_ADD_IF_ABSENT, 0));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 2, NULL, NULL));
	EXPECT_EQ(0, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(wheel, timeout_without_flag_is_einval)
{
	uint32_t code;

	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	for (code = TWHEEL_OP_ADD; code <= TWHEEL_OP_QUERY; code++)
		EXPECT_EQ(EINVAL, op1(_metadata, self->fd, code,
				      code == TWHEEL_OP_ADD ? 2 : 1, 0, 1))
			TH_LOG("op %u", code);
	EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 1,
			      TWHEEL_OPF_ADD_IF_ABSENT, NSEC_PER_SEC));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 2, NULL, NULL));
}

TEST_F(wheel, max_timeout_is_accepted)
{
	struct twheel_op op;
	uint64_t before, after;

	op_init(&op, TWHEEL_OP_ADD, 1, TWHEEL_OPF_TIMEOUT, MAX_TIMEOUT_NS);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_deadline(_metadata, &op, before, after, MAX_TIMEOUT_NS);
	op_init(&op, TWHEEL_OP_REFRESH, 1, TWHEEL_OPF_TIMEOUT, MAX_TIMEOUT_NS);
	EXPECT_EQ(0, run_op(_metadata, self->fd, &op));
}

/*
 * The same after the wheel sat idle: an idle wheel runs no timer, so
 * its clock may lag; a deadline must still count from now.
 */
TEST_F(wheel, max_timeout_after_idle_is_not_early)
{
	struct twheel_op op;
	uint64_t before;

	sleep_ns(300 * NSEC_PER_MSEC);
	op_init(&op, TWHEEL_OP_ADD, 1, TWHEEL_OPF_TIMEOUT, MAX_TIMEOUT_NS);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_LE(before + MAX_TIMEOUT_NS, op.deadline_ns)
		TH_LOG("deadline %llu ns early",
		       (unsigned long long)(before + MAX_TIMEOUT_NS - op.deadline_ns));
	sleep_ns(300 * NSEC_PER_MSEC);
	op_init(&op, TWHEEL_OP_REFRESH, 1, TWHEEL_OPF_TIMEOUT, MAX_TIMEOUT_NS);
	before = mono_ns();
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_LE(before + MAX_TIMEOUT_NS, op.deadline_ns)
		TH_LOG("refresh deadline %llu ns early",
		       (unsigned long long)(before + MAX_TIMEOUT_NS - op.deadline_ns));
}

TEST_F(wheel, timeout_above_max_is_einval)
{
	static const uint64_t t[] = { MAX_TIMEOUT_NS + 1, UINT64_MAX / 2,
				      UINT64_MAX };
	unsigned int i;

	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_ADD, 2,
				      TWHEEL_OPF_TIMEOUT, t[i]));
		EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 1,
				      TWHEEL_OPF_TIMEOUT, t[i]));
		EXPECT_EQ(EINVAL, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 3,
				      TWHEEL_OPF_TIMEOUT |
				      TWHEEL_OPF_ADD_IF_ABSENT, t[i]));
	}
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 2, NULL, NULL));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 3, NULL, NULL));
}

TEST(timeout_above_max_ns_is_einval_at_large_tick)
{
	int fd = wheel_new(0, TWHEEL_TICK_MAX_NS, NSEC_PER_SEC, 0);
	struct twheel_op op;

	ASSERT_LE(0, fd);
	op_init(&op, TWHEEL_OP_ADD, 1, TWHEEL_OPF_TIMEOUT,
		TWHEEL_MAX_TIMEOUT_NS + 1);
	EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	op_init(&op, TWHEEL_OP_ADD, 1, TWHEEL_OPF_TIMEOUT, TWHEEL_MAX_TIMEOUT_NS);
	EXPECT_EQ(0, run_op(_metadata, fd, &op));
	EXPECT_LE(TWHEEL_MAX_TIMEOUT_NS, op.remaining_ns);
	close(fd);
}

TEST_F(wheel, op_bad_pointer_is_efault)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	ASSERT_NE(MAP_FAILED, page);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_OP, NULL));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_OP, page));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-EFAULT, dev_submit_op(self->fd, page));
	munmap(page, 4096);
}

TEST_F(wheel, add_at_cap_is_enospc)
{
	unsigned int i;

	for (i = 0; i < CAP; i++)
		ASSERT_EQ(0, dev_add(self->fd, i, NSEC_PER_SEC));
	EXPECT_EQ(ENOSPC, op1(_metadata, self->fd, TWHEEL_OP_ADD, CAP, 0, 0));
	EXPECT_EQ(ENOSPC, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, CAP,
			      TWHEEL_OPF_ADD_IF_ABSENT, 0));
	/* A refresh of a live id needs no room; EEXIST still wins on add. */
	EXPECT_EQ(0, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 0, 0, 0));
	EXPECT_EQ(0, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 1,
			 TWHEEL_OPF_ADD_IF_ABSENT, 0));
	EXPECT_EQ(0, dev_cancel(self->fd, 0));
	EXPECT_EQ(0, dev_add(self->fd, CAP, NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, dev_add(self->fd, CAP + 1, NSEC_PER_SEC));
}

TEST_F(wheel, undelivered_events_count_against_cap)
{
	struct twheel_event ev[CAP];
	unsigned int i;

	for (i = 0; i < CAP; i++)
		ASSERT_EQ(0, dev_add(self->fd, i, 0));
	ASSERT_EQ(CAP, wait_waiting(self->fd, CAP));
	/* All expired, none read: the cap is still full. */
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 0, NULL, NULL));
	EXPECT_EQ(-ENOSPC, dev_add(self->fd, 100, NSEC_PER_SEC));
	ASSERT_EQ(1, dev_read_events(self->fd, ev, 1));
	EXPECT_EQ(0, dev_add(self->fd, 100, NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, dev_add(self->fd, 101, NSEC_PER_SEC));
	ASSERT_EQ(CAP - 1, drain_until(self->fd, ev, CAP - 1,
				       mono_ns() + LATE_SLACK_NS));
	for (i = 0; i < CAP - 1; i++)
		EXPECT_EQ(0, dev_add(self->fd, 200 + i, NSEC_PER_SEC));
}

TEST_F(wheel, expired_id_is_no_longer_live)
{
	struct twheel_event ev[2];
	struct twheel_op op;
	uint64_t d;

	op_init(&op, TWHEEL_OP_ADD, 8, TWHEEL_OPF_TIMEOUT, 10 * NSEC_PER_MSEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	d = op.deadline_ns;
	ASSERT_EQ(1, wait_waiting(self->fd, 1));
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_REFRESH, 8, 0, 0));
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_QUERY, 8, 0, 0));
	EXPECT_EQ(ENOENT, op1(_metadata, self->fd, TWHEEL_OP_CANCEL, 8, 0, 0));
	/* A new entry, whose event is distinct from the old one. */
	op_init(&op, TWHEEL_OP_ADD, 8, TWHEEL_OPF_TIMEOUT, NSEC_PER_SEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	ASSERT_EQ(1, dev_read_events(self->fd, ev, 2));
	EXPECT_EQ(8, ev[0].id);
	EXPECT_EQ(d, ev[0].deadline_ns);
	EXPECT_EQ(0, dev_query(self->fd, 8, NULL, NULL));
}

TEST_HARNESS_MAIN
