// SPDX-License-Identifier: GPL-2.0
/*
 * TWHEEL_OPF_ABSTIME: ADD and REFRESH (with and without ADD_IF_ABSENT)
 * given a deadline on the wheel's clock instead of a timeout. A future
 * deadline is rounded up to the tick grid, exactly; one already past or
 * at the present fires at the next tick; one up to the longest timeout
 * ahead is taken, one further is EINVAL with the out fields zeroed and
 * nothing changed; CANCEL and QUERY refuse the flag. Events of ABSTIME
 * and relative ops come in deadline order and never early, on a
 * CLOCK_BOOTTIME wheel too. Uses dev_prep_add_at() and
 * dev_prep_refresh_at().
 */
#include "twheel_util.h"
#include "kselftest_harness.h"
#include "twheel_harness.h"

#define TICK_NS		(5 * NSEC_PER_MSEC)
#define DFLT_NS		(200 * NSEC_PER_MSEC)
#define CAP		64
#define MAX_TIMEOUT_NS	(TWHEEL_MAX_TIMEOUT_TICKS * TICK_NS)
/*
 * "Beyond the longest timeout" is this far beyond it from the moment the
 * test reads the clock, so that no stall of the VM between that read and
 * the kernel's can bring it back within range.
 */
#define BEYOND_NS	(10 * NSEC_PER_SEC)
/*
 * How late an event may come here: enough to catch a stuck wheel, not a
 * measure of lateness (read_test's business), since an emulated VM on a
 * loaded host runs the expiry work a second or more late at times.
 */
#define STUCK_NS	(5 * NSEC_PER_SEC)
/* An id the fixture uses to learn the tick grid, then cancels. */
#define PROBE_ID	0x5eedULL

FIXTURE(wheel) {
	int fd;
	uint64_t grid;		/* one point of the wheel's tick grid */
};

/* A point of @fd's tick grid: the deadline of an id added and cancelled. */
static uint64_t grid_point(struct __test_metadata *_metadata, int fd)
{
	struct twheel_op op;

	dev_prep_add(&op, PROBE_ID, NSEC_PER_SEC);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	ASSERT_EQ(0, dev_cancel(fd, PROBE_ID));
	return op.deadline_ns;
}

FIXTURE_SETUP(wheel)
{
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, CAP);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
	self->grid = grid_point(_metadata, self->fd);
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

/* An ABSTIME op with every out field junk. */
static void abs_op(struct twheel_op *op, uint32_t code, uint64_t id,
		   uint32_t flags, uint64_t deadline_ns)
{
	op_init(op, code, id, flags | TWHEEL_OPF_ABSTIME, deadline_ns);
}

/* The deadline @id has now, or 0 if it is not live. */
static uint64_t deadline_of(int fd, uint64_t id)
{
	uint64_t d = 0;

	return dev_query(fd, id, &d, NULL) ? 0 : d;
}

/*
 * A deadline already past (or at the present) put by an op issued
 * between @before and @after: the next tick, the first grid point at or
 * after the kernel's present, with remaining_ns counted from there.
 */
static void check_next_tick(struct __test_metadata *_metadata, uint64_t grid,
			    const struct twheel_op *op, uint64_t before, uint64_t after)
{
	EXPECT_LE(tick_grid_up(grid, TICK_NS, before), op->deadline_ns);
	EXPECT_GE(tick_grid_up(grid, TICK_NS, after), op->deadline_ns);
	EXPECT_EQ(tick_grid_up(grid, TICK_NS, op->deadline_ns), op->deadline_ns) TH_LOG("off the grid");
	EXPECT_GE(TICK_NS, op->remaining_ns);
	if (op->deadline_ns > after)
		EXPECT_LE(op->deadline_ns - after, op->remaining_ns);
}

/* Wait for the event of @id alone and check it against @deadline. */
static void expect_event(struct __test_metadata *_metadata, int fd, uint64_t id,
			 uint64_t deadline)
{
	struct twheel_event ev;

	memset(&ev, JUNK, sizeof(ev));
	ASSERT_EQ(1, drain_until(fd, &ev, 1, deadline + STUCK_NS));
	EXPECT_EQ(id, ev.id);
	EXPECT_EQ(deadline, ev.deadline_ns);
	EXPECT_LE(ev.deadline_ns, ev.expired_ns);
	EXPECT_LE(ev.deadline_ns, mono_ns());
}

/*
 * The deadline is seconds ahead, so that a stalled VM cannot let it pass
 * before the op (which would put the id at the next tick) nor let the id
 * expire before deadline_of().
 */
TEST_F(wheel, add_at_future_deadline_is_rounded_up_to_the_grid)
{
	uint64_t before, after, d, want;
	struct twheel_op op;

	before = mono_ns();
	d = before + 5 * NSEC_PER_SEC + 12345;
	want = tick_grid_up(self->grid, TICK_NS, d);
	dev_prep_add_at(&op, 1, d);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	EXPECT_EQ(want, op.deadline_ns);
	if (want > after)
		EXPECT_LE(want - after, op.remaining_ns);
	EXPECT_GE(want - before, op.remaining_ns);
	EXPECT_EQ(want, deadline_of(self->fd, 1));
}

/* A grid point seconds ahead: still ahead when the ops run on a stalled VM. */
TEST_F(wheel, add_at_grid_point_keeps_it)
{
	uint64_t d = tick_grid_up(self->grid, TICK_NS, mono_ns()) + 1000 * TICK_NS;
	struct twheel_op op;

	abs_op(&op, TWHEEL_OP_ADD, 1, 0, d);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(d, op.deadline_ns);
	/* One nanosecond later rounds up to the next grid point. */
	abs_op(&op, TWHEEL_OP_ADD, 2, 0, d + 1);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(d + TICK_NS, op.deadline_ns);
}

TEST_F(wheel, add_at_past_deadline_fires_at_next_tick)
{
	uint64_t before, after;
	struct twheel_op op;

	before = mono_ns();
	abs_op(&op, TWHEEL_OP_ADD, 3, 0, before - NSEC_PER_SEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_next_tick(_metadata, self->grid, &op, before, after);
	expect_event(_metadata, self->fd, 3, op.deadline_ns);
}

TEST_F(wheel, add_at_present_fires_at_next_tick)
{
	uint64_t before, after;
	struct twheel_op op;

	before = mono_ns();
	abs_op(&op, TWHEEL_OP_ADD, 4, 0, before);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_next_tick(_metadata, self->grid, &op, before, after);
	expect_event(_metadata, self->fd, 4, op.deadline_ns);
}

/* 0, 1 and a time before the wheel was set up are past deadlines too. */
TEST_F(wheel, add_at_time_zero_fires_at_next_tick)
{
	static const uint64_t past[] = { 0, 1, TICK_NS, 1000 * NSEC_PER_MSEC };
	uint64_t before, after;
	struct twheel_op op;
	unsigned int i;

	for (i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		before = mono_ns();
		if (past[i] >= before)
			continue;	/* booted less than a second ago */
		abs_op(&op, TWHEEL_OP_ADD, 10 + i, 0, past[i]);
		ASSERT_EQ(0, run_op(_metadata, self->fd, &op)) TH_LOG("deadline %llu",
			(unsigned long long)past[i]);
		after = mono_ns();
		check_next_tick(_metadata, self->grid, &op, before, after);
	}
}

/* In one batch every op sees the same present: all past deadlines share a tick. */
TEST_F(wheel, past_deadlines_in_one_batch_share_the_next_tick)
{
	struct twheel_op ops[5];
	struct twheel_event ev[5];
	uint64_t now = mono_ns(), seen = 0;
	int i, got;

	dev_prep_add_at(&ops[0], 0, 0);
	dev_prep_add_at(&ops[1], 1, now / 2);
	dev_prep_add_at(&ops[2], 2, now - NSEC_PER_MSEC);
	dev_prep_add_at(&ops[3], 3, now);
	dev_prep_refresh_at(&ops[4], 4, 1, TWHEEL_OPF_ADD_IF_ABSENT);
	ASSERT_EQ(5, dev_batch(self->fd, ops, 5));
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(0, ops[i].result);
		EXPECT_EQ(ops[0].deadline_ns, ops[i].deadline_ns);
	}
	EXPECT_LE(now, ops[0].deadline_ns);
	got = drain_until(self->fd, ev, 5,
			  ops[0].deadline_ns + STUCK_NS);
	ASSERT_EQ(5, got);
	for (i = 0; i < got; i++) {
		EXPECT_EQ(ops[0].deadline_ns, ev[i].deadline_ns);
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
		ASSERT_GT(5, ev[i].id);
		seen |= 1ULL << ev[i].id;
	}
	EXPECT_EQ(0x1fULL, seen);
}

TEST_F(wheel, add_at_longest_timeout_ahead_is_taken)
{
	uint64_t d = mono_ns() + MAX_TIMEOUT_NS;
	struct twheel_op op;

	/* The kernel reads the clock later: d is less than the maximum ahead. */
	abs_op(&op, TWHEEL_OP_ADD, 5, 0, d);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, d), op.deadline_ns);
	EXPECT_LT(MAX_TIMEOUT_NS - NSEC_PER_SEC, op.remaining_ns);
	EXPECT_GE(MAX_TIMEOUT_NS + TICK_NS, op.remaining_ns);
	EXPECT_EQ(op.deadline_ns, deadline_of(self->fd, 5));
}

TEST_F(wheel, add_at_beyond_longest_timeout_is_einval)
{
	static const uint64_t beyond[] = { BEYOND_NS, 3600 * NSEC_PER_SEC };
	struct twheel_op op;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		abs_op(&op, TWHEEL_OP_ADD, 6, 0, mono_ns() + MAX_TIMEOUT_NS + beyond[i]);
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
		EXPECT_EQ(-EINVAL, op.result);
	}
	abs_op(&op, TWHEEL_OP_ADD, 6, 0, UINT64_MAX);
	EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
	abs_op(&op, TWHEEL_OP_ADD, 6, TWHEEL_OPF_TIMEOUT, UINT64_MAX);
	EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 6, NULL, NULL));
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
}

/*
 * With a tick of an hour the bound is TWHEEL_MAX_TIMEOUT_NS, not
 * TWHEEL_MAX_TIMEOUT_TICKS ticks.
 */
TEST(add_at_bound_on_long_ticks_is_max_timeout_ns)
{
	int fd = wheel_new(O_CLOEXEC, TWHEEL_TICK_MAX_NS, 0, 0);
	struct twheel_op op;

	ASSERT_LE(0, fd);
	abs_op(&op, TWHEEL_OP_ADD, 1, 0, mono_ns() + TWHEEL_MAX_TIMEOUT_NS);
	EXPECT_EQ(0, run_op(_metadata, fd, &op));
	EXPECT_LE(TWHEEL_MAX_TIMEOUT_NS - 60 * NSEC_PER_SEC, op.remaining_ns);
	abs_op(&op, TWHEEL_OP_ADD, 2, 0, mono_ns() + TWHEEL_MAX_TIMEOUT_NS + BEYOND_NS);
	EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	close(fd);
}

/* The deadline is seconds ahead: still ahead when the op runs on a stalled VM. */
TEST_F(wheel, abstime_with_timeout_flag_is_still_a_deadline)
{
	uint64_t d = mono_ns() + 5 * NSEC_PER_SEC + 7;
	struct twheel_op op;

	abs_op(&op, TWHEEL_OP_ADD, 7, TWHEEL_OPF_TIMEOUT, d);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, d), op.deadline_ns);
}

TEST_F(wheel, add_at_live_id_is_eexist_and_keeps_deadline)
{
	struct twheel_op op;
	uint64_t d;

	ASSERT_EQ(0, dev_add(self->fd, 8, NSEC_PER_SEC));
	d = deadline_of(self->fd, 8);
	abs_op(&op, TWHEEL_OP_ADD, 8, 0, mono_ns() + 5 * NSEC_PER_SEC);
	EXPECT_EQ(EEXIST, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(d, deadline_of(self->fd, 8));
}

TEST_F(wheel, refresh_at_moves_deadline_both_ways)
{
	uint64_t d1, d2;
	struct twheel_op op;

	ASSERT_EQ(0, dev_add(self->fd, 9, NSEC_PER_SEC));
	d1 = mono_ns() + 5 * NSEC_PER_SEC + 1;
	dev_prep_refresh_at(&op, 9, d1, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, d1), op.deadline_ns);
	EXPECT_EQ(op.deadline_ns, deadline_of(self->fd, 9));
	d2 = mono_ns() + 500 * NSEC_PER_MSEC + 3;
	dev_prep_refresh_at(&op, 9, d2, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, d2), op.deadline_ns);
	EXPECT_EQ(op.deadline_ns, deadline_of(self->fd, 9));
}

TEST_F(wheel, refresh_at_past_deadline_fires_at_next_tick)
{
	uint64_t before, after;
	struct twheel_op op;

	ASSERT_EQ(0, dev_add(self->fd, 10, 10 * NSEC_PER_SEC));
	before = mono_ns();
	dev_prep_refresh_at(&op, 10, before - 5 * TICK_NS, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	after = mono_ns();
	check_next_tick(_metadata, self->grid, &op, before, after);
	expect_event(_metadata, self->fd, 10, op.deadline_ns);
}

TEST_F(wheel, refresh_at_beyond_longest_timeout_is_einval_and_keeps_deadline)
{
	struct twheel_op op;
	uint64_t d;

	ASSERT_EQ(0, dev_add(self->fd, 11, NSEC_PER_SEC));
	d = deadline_of(self->fd, 11);
	dev_prep_refresh_at(&op, 11, mono_ns() + MAX_TIMEOUT_NS + BEYOND_NS, 0);
	EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(d, deadline_of(self->fd, 11));
}

TEST_F(wheel, refresh_at_absent_id_is_enoent)
{
	struct twheel_op op;

	dev_prep_refresh_at(&op, 12, mono_ns() + NSEC_PER_SEC, 0);
	EXPECT_EQ(ENOENT, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
}

TEST_F(wheel, refresh_at_add_if_absent_adds_at_deadline)
{
	uint64_t d = mono_ns() + 700 * NSEC_PER_MSEC + 1;
	struct twheel_op op;

	dev_prep_refresh_at(&op, 13, d, TWHEEL_OPF_ADD_IF_ABSENT);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, d), op.deadline_ns);
	EXPECT_EQ(op.deadline_ns, deadline_of(self->fd, 13));
	/* And refreshes it when present. */
	d += NSEC_PER_SEC;
	dev_prep_refresh_at(&op, 13, d, TWHEEL_OPF_ADD_IF_ABSENT);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, d), deadline_of(self->fd, 13));
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
}

TEST_F(wheel, refresh_at_add_if_absent_beyond_longest_timeout_adds_nothing)
{
	struct twheel_op op;

	dev_prep_refresh_at(&op, 14, mono_ns() + MAX_TIMEOUT_NS + BEYOND_NS,
			    TWHEEL_OPF_ADD_IF_ABSENT);
	EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 14, NULL, NULL));
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
}

TEST_F(wheel, abstime_on_cancel_and_query_is_einval)
{
	static const uint32_t codes[] = { TWHEEL_OP_CANCEL, TWHEEL_OP_QUERY };
	uint64_t d, now;
	struct twheel_op op;
	unsigned int i;

	ASSERT_EQ(0, dev_add(self->fd, 15, NSEC_PER_SEC));
	d = deadline_of(self->fd, 15);
	for (i = 0; i < 2; i++) {
		now = mono_ns();
		abs_op(&op, codes[i], 15, 0, 0);
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
		abs_op(&op, codes[i], 15, 0, now + NSEC_PER_SEC);
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
	}
	EXPECT_EQ(d, deadline_of(self->fd, 15));
}

TEST_F(wheel, abstime_ops_in_a_batch_each_get_their_result)
{
	uint64_t now = mono_ns();
	struct twheel_op ops[5];

	dev_prep_add_at(&ops[0], 20, now + NSEC_PER_SEC + 1);
	dev_prep_add_at(&ops[1], 21, now + MAX_TIMEOUT_NS + BEYOND_NS);
	dev_prep_add(&ops[2], 22, NSEC_PER_SEC);
	dev_prep_refresh_at(&ops[3], 20, now + 2 * NSEC_PER_SEC + 1, 0);
	dev_prep_op(&ops[4], TWHEEL_OP_CANCEL, 22, DEV_TIMEOUT_DEFAULT,
		    TWHEEL_OPF_ABSTIME);
	ASSERT_EQ(5, dev_batch(self->fd, ops, 5));
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, now + NSEC_PER_SEC + 1), ops[0].deadline_ns);
	EXPECT_EQ(-EINVAL, ops[1].result);
	EXPECT_EQ(0, ops[1].deadline_ns);
	EXPECT_EQ(0, ops[1].remaining_ns);
	EXPECT_EQ(0, ops[2].result);
	EXPECT_EQ(0, ops[3].result);
	EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, now + 2 * NSEC_PER_SEC + 1), ops[3].deadline_ns);
	EXPECT_EQ(-EINVAL, ops[4].result);
	EXPECT_EQ(2, fdinfo_get(self->fd, "live"));
}

/*
 * Ids placed with deadlines and with timeouts, interleaved and added in
 * scrambled order, come back in deadline order, each with the deadline
 * its op returned, never before it nor before the deadline asked for.
 * The deadlines are exact only if the batch ran before them: if it ended
 * after @base, start over on a fresh wheel with @base twice as far.
 */
TEST_F(wheel, events_mixing_abstime_and_timeouts_come_in_deadline_order)
{
	enum { N = 40 };
	struct twheel_op ops[N];
	struct twheel_event ev[N];
	uint64_t asked[N], deadline[N], base, ahead, seen = 0;
	int i, got, ret;

	for (ahead = 300 * NSEC_PER_MSEC; ; ahead *= 2) {
		base = mono_ns() + ahead;
		for (i = 0; i < N; i++) {
			/* Slot j of a scrambled order; 3 ids per tick or so. */
			int j = (i * 17) % N;
			uint64_t now = mono_ns();

			asked[j] = base + (uint64_t)j * TICK_NS / 3 + j % 5;
			if (j % 2)
				dev_prep_add_at(&ops[i], j, asked[j]);
			else
				dev_prep_add(&ops[i], j, asked[j] > now ? asked[j] - now : 0);
		}
		ret = dev_batch(self->fd, ops, N);
		if (mono_ns() < base)
			break;
		ASSERT_GT(2 * NSEC_PER_SEC, ahead)
			TH_LOG("preparing and running a batch took over %llu ms",
			       (unsigned long long)(ahead / NSEC_PER_MSEC));
		close(self->fd);
		self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, CAP);
		ASSERT_LE(0, self->fd);
		self->grid = grid_point(_metadata, self->fd);
	}
	ASSERT_EQ(N, ret);
	for (i = 0; i < N; i++) {
		int j = ops[i].id;

		ASSERT_EQ(0, ops[i].result);
		deadline[j] = ops[i].deadline_ns;
		EXPECT_LE(asked[j], deadline[j]) TH_LOG("id %d early", j);
		if (j % 2)
			EXPECT_EQ(tick_grid_up(self->grid, TICK_NS, asked[j]), deadline[j]);
	}
	got = drain_until(self->fd, ev, N, base + N * TICK_NS + STUCK_NS);
	ASSERT_EQ(N, got);
	for (i = 0; i < N; i++) {
		int j = ev[i].id;

		ASSERT_GT(N, ev[i].id);
		EXPECT_EQ(0, seen & (1ULL << j));
		seen |= 1ULL << j;
		EXPECT_EQ(deadline[j], ev[i].deadline_ns);
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
		EXPECT_LE(asked[j], ev[i].expired_ns);
		EXPECT_GE(ev[i].deadline_ns + STUCK_NS, ev[i].expired_ns);
		if (i)
			EXPECT_LE(ev[i - 1].deadline_ns, ev[i].deadline_ns)
				TH_LOG("event %d (id %d) out of order", i, j);
	}
}

/*
 * A CLOCK_BOOTTIME wheel takes deadlines on CLOCK_BOOTTIME. The deadline
 * is exact only if the op ran before it: if it ended after, start over
 * on a fresh wheel with the deadline twice as far.
 */
TEST(boottime_wheel_takes_boottime_deadlines)
{
	uint64_t grid, d, boot, ahead;
	struct twheel_op op;
	struct twheel_event ev;
	int fd;

	for (ahead = 150 * NSEC_PER_MSEC; ; ahead *= 2) {
		fd = dev_open(O_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, dev_setup(fd, TICK_NS, DFLT_NS, CLOCK_BOOTTIME, CAP));
		grid = grid_point(_metadata, fd);
		d = clock_ns(CLOCK_BOOTTIME) + ahead + 11;
		dev_prep_add_at(&op, 1, d);
		ASSERT_EQ(0, run_op(_metadata, fd, &op));
		if (clock_ns(CLOCK_BOOTTIME) < d)
			break;
		ASSERT_GT(2 * NSEC_PER_SEC, ahead)
			TH_LOG("an add took over %llu ms",
			       (unsigned long long)(ahead / NSEC_PER_MSEC));
		close(fd);
	}
	EXPECT_EQ(tick_grid_up(grid, TICK_NS, d), op.deadline_ns);
	memset(&ev, JUNK, sizeof(ev));
	ASSERT_EQ(1, dev_read_events(fd, &ev, 1));
	boot = clock_ns(CLOCK_BOOTTIME);
	EXPECT_EQ(1, ev.id);
	EXPECT_EQ(op.deadline_ns, ev.deadline_ns);
	EXPECT_LE(d, ev.expired_ns);
	EXPECT_LE(ev.expired_ns, boot);
	EXPECT_GE(ev.deadline_ns + STUCK_NS, ev.expired_ns);

	abs_op(&op, TWHEEL_OP_ADD, 2, 0,
	       clock_ns(CLOCK_BOOTTIME) + MAX_TIMEOUT_NS + BEYOND_NS);
	EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	d = clock_ns(CLOCK_BOOTTIME) - NSEC_PER_SEC;
	abs_op(&op, TWHEEL_OP_ADD, 3, 0, d);
	ASSERT_EQ(0, run_op(_metadata, fd, &op));
	EXPECT_GE(TICK_NS, op.remaining_ns);
	close(fd);
}

TEST_HARNESS_MAIN
