// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces: a wheel's times are on the clocks of the time
 * namespace of the task that set it up, as its clock_gettime(2) and vDSO
 * read them. Each test runs in a new time namespace whose monotonic and
 * boottime clocks are offset from the host's (behind or ahead, one
 * variant each), on both clocks: absolute deadlines near the namespace's
 * present are never early, touch stamps the vDSO gives keep ids alive,
 * and every time the wheel reports (OP and DUMP deadlines, events) is the
 * namespace's, within a tick and the scheduler's slack. A wheel keeps the
 * clock it was set up on when a process of another namespace uses it.
 *
 * Needs CONFIG_TIME_NS and CAP_SYS_ADMIN (skips with the reason without).
 * The kernel refuses offsets that would make a clock negative, so "behind"
 * is 1000 s or, on a machine up for less, its uptime less two seconds.
 */
#include <sched.h>

#include "kselftest_harness.h"
#include "twheel_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(10 * NSEC_PER_SEC)
#define OFFSET_S	1000
/*
 * How late an event may be read here. Lateness is read_test's and
 * tests/stress/lateness's to judge; this test looks for clock confusions,
 * each off by the namespace's offset, 2 s at least, so a host that stops
 * the VM for a few hundred ms must fail nothing.
 */
#define LATE_NS		(LATE_SLACK_NS > NSEC_PER_SEC ? LATE_SLACK_NS : NSEC_PER_SEC)

static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };

FIXTURE(timens) {
	int64_t offset_ns;	/* what the namespace adds to both clocks */
	int host_ns;		/* the time namespace the test started in */
	int wheel_ns;		/* the new one, which the test is in */
	int host_wheel;		/* a wheel set up before entering it */
};

FIXTURE_VARIANT(timens) {
	int sign;
};

FIXTURE_VARIANT_ADD(timens, behind) {
	.sign = -1,
};

FIXTURE_VARIANT_ADD(timens, ahead) {
	.sign = 1,
};

FIXTURE_SETUP(timens)
{
	int64_t secs = OFFSET_S;
	char buf[128];
	uint64_t host, mine;
	int ret;

	self->host_ns = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
	if (self->host_ns < 0)
		SKIP(return, "no time namespaces (/proc/self/ns/time: %s)", strerror(errno));
	if (unshare(CLONE_NEWTIME))
		SKIP(return, "unshare(CLONE_NEWTIME): %s (CONFIG_TIME_NS, CAP_SYS_ADMIN)",
		     strerror(errno));
	if (variant->sign < 0) {
		/* Both clocks must stay >= 0 in the namespace. */
		int64_t up = mono_ns() / NSEC_PER_SEC - 2;

		if (up < secs)
			secs = up;
		if (secs < 2)
			SKIP(return, "up for %llu s only: no room for an offset behind",
			     (unsigned long long)(mono_ns() / NSEC_PER_SEC));
	}
	secs *= variant->sign;
	self->offset_ns = secs * (int64_t)NSEC_PER_SEC;
	snprintf(buf, sizeof(buf), "monotonic %lld 0\nboottime %lld 0\n", (long long)secs,
		 (long long)secs);
	ret = write_file("/proc/self/timens_offsets", buf);
	ASSERT_EQ(0, ret) TH_LOG("timens_offsets: %s", strerror(-ret));

	self->host_wheel = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->host_wheel);

	self->wheel_ns = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->wheel_ns);
	host = mono_ns();
	ASSERT_EQ(0, setns(self->wheel_ns, CLONE_NEWTIME)) TH_LOG("setns: %s", strerror(errno));
	mine = mono_ns();
	/* The vDSO reads the namespace's clock now. */
	ASSERT_GT(NSEC_PER_SEC, llabs((long long)(mine - host - self->offset_ns)));
	printf("# in a time namespace %+lld s from the host's clocks\n", (long long)secs);
}

FIXTURE_TEARDOWN(timens)
{
	close(self->host_wheel);
	close(self->wheel_ns);
	close(self->host_ns);
}

/* A wheel on @clk, set up here. */
static int wheel_on(clockid_t clk, uint32_t flags, uint32_t slots)
{
	struct twheel_setup_args sa = {
		.tick_ns = TICK_NS, .default_timeout_ns = DFLT_NS, .clockid = clk,
		.flags = flags, .touch_slots = slots,
	};
	int fd = dev_open(O_CLOEXEC), ret;

	if (fd < 0)
		return fd;
	ret = dev_setup_params(fd, &sa);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * Read @id's event (waiting 10 s at most) and check it against @deadline
 * and the clock @clk here: never early, at most a tick and the slack late.
 */
static void expect_event(struct __test_metadata *_metadata, int fd, clockid_t clk, uint64_t id,
			 uint64_t deadline)
{
	struct twheel_event ev;
	uint64_t now;

	memset(&ev, JUNK, sizeof(ev));
	ASSERT_EQ(1, drain_until(fd, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
	now = clock_ns(clk);
	EXPECT_EQ(id, ev.id);
	EXPECT_EQ(deadline, ev.deadline_ns);
	EXPECT_LE(ev.deadline_ns, ev.expired_ns);
	EXPECT_LE(ev.deadline_ns, now) TH_LOG("clock %d: read %lld ns before its deadline", clk,
					       (long long)(ev.deadline_ns - now));
	EXPECT_LE(ev.expired_ns, now);
	EXPECT_GE(ev.deadline_ns + TICK_NS + LATE_NS, ev.expired_ns);
}

/*
 * Absolute deadlines near the namespace's present: never early, on the
 * grid after them. The ADD and the REFRESH put deadlines seconds ahead,
 * which a stalled VM cannot reach before the next op: a clock confusion
 * is off by the offset, 2 s at least, however far ahead they are, in the
 * deadline or (on a wheel that keeps the host's clock throughout) in
 * remaining_ns, which is bounded on both sides for that. The
 * compact REFRESH's deadline, which the test waits for, is exact only if
 * it and the QUERY ran before it: if not, start over on a fresh wheel
 * with that deadline twice as far.
 */
TEST_F(timens, abstime_deadlines_are_on_the_namespace_clock)
{
	const uint64_t far = 5 * NSEC_PER_SEC;
	uint64_t t, now, dl = 0, ahead, id = 1;
	unsigned int c, nf = ~0u;
	struct twheel_op op;
	int fd, ret, qret;

	for (c = 0; c < 2; c++) {
		for (ahead = 400 * NSEC_PER_MSEC; ; ahead *= 2) {
			fd = wheel_on(clocks[c], 0, 0);
			ASSERT_LE(0, fd);
			EXPECT_EQ(self->offset_ns, fdinfo_get(fd, "clock_offset_ns"));

			t = clock_ns(clocks[c]) + far;
			dev_prep_add_at(&op, id, t);
			ASSERT_EQ(0, dev_submit_op(fd, &op));
			now = clock_ns(clocks[c]);
			EXPECT_LE(t, op.deadline_ns) TH_LOG("clock %d: %lld ns early", clocks[c],
							    (long long)(t - op.deadline_ns));
			EXPECT_GT(t + TICK_NS, op.deadline_ns);
			EXPECT_LT(0, op.remaining_ns);
			if (t > now)
				EXPECT_LE(t - now, op.remaining_ns);
			EXPECT_GE(far + TICK_NS, op.remaining_ns);

			t = clock_ns(clocks[c]) + far + NSEC_PER_SEC;
			dev_prep_refresh_at(&op, id, t, 0);
			ASSERT_EQ(0, dev_submit_op(fd, &op));
			now = clock_ns(clocks[c]);
			EXPECT_LE(t, op.deadline_ns);
			EXPECT_GT(t + TICK_NS, op.deadline_ns);
			if (t > now)
				EXPECT_LE(t - now, op.remaining_ns);
			EXPECT_GE(far + NSEC_PER_SEC + TICK_NS, op.remaining_ns);

			/* The compact REFRESH with one absolute deadline. */
			t = clock_ns(clocks[c]) + ahead;
			ret = dev_refresh_ids(fd, &id, 1, t, TWHEEL_OPF_ABSTIME, NULL, &nf);
			qret = dev_query(fd, id, &dl, NULL);
			if (clock_ns(clocks[c]) < t)
				break;
			ASSERT_GT(2 * NSEC_PER_SEC, ahead)
				TH_LOG("clock %d: a REFRESH and a QUERY took over %llu ms",
				       clocks[c], (unsigned long long)(ahead / NSEC_PER_MSEC));
			close(fd);
		}
		ASSERT_EQ(1, ret);
		EXPECT_EQ(0, nf);
		ASSERT_EQ(0, qret);
		EXPECT_LE(t, dl);
		EXPECT_GT(t + TICK_NS, dl);
		expect_event(_metadata, fd, clocks[c], id, dl);

		/* A deadline the namespace's clock has passed fires at the next tick. */
		t = clock_ns(clocks[c]);
		dev_prep_add_at(&op, id + 1, t - NSEC_PER_SEC);
		ASSERT_EQ(0, dev_submit_op(fd, &op));
		EXPECT_LE(t, op.deadline_ns);
		EXPECT_GE(clock_ns(clocks[c]) + TICK_NS, op.deadline_ns);
		expect_event(_metadata, fd, clocks[c], id + 1, op.deadline_ns);
		close(fd);
	}
}

/*
 * What the wheel reports after a relative timeout: OP, QUERY, DUMP, read.
 * The QUERY and the DUMP must come before the id can expire: if they
 * ended after, start over on a fresh wheel with twice the timeout.
 */
TEST_F(timens, reported_times_are_on_the_namespace_clock)
{
	struct twheel_dump_entry de[2];
	uint64_t before, after, dl = 0, rem = 0, cursor, tout;
	struct twheel_op op;
	unsigned int c;
	int fd, qret, n;

	for (c = 0; c < 2; c++) {
		for (tout = 200 * NSEC_PER_MSEC; ; tout *= 2) {
			fd = wheel_on(clocks[c], 0, 0);
			ASSERT_LE(0, fd);
			before = clock_ns(clocks[c]);
			dev_prep_add(&op, 7, tout);
			ASSERT_EQ(0, dev_submit_op(fd, &op));
			after = clock_ns(clocks[c]);
			qret = dev_query(fd, 7, &dl, &rem);
			cursor = 0;
			n = dev_dump(fd, de, 2, &cursor);
			if (clock_ns(clocks[c]) < before + tout)
				break;
			ASSERT_GT(2 * NSEC_PER_SEC, tout)
				TH_LOG("clock %d: an ADD, a QUERY and a DUMP took over %llu ms",
				       clocks[c], (unsigned long long)(tout / NSEC_PER_MSEC));
			close(fd);
		}
		EXPECT_LE(before + tout, op.deadline_ns)
			TH_LOG("clock %d: deadline %lld ns off the namespace's", clocks[c],
			       (long long)(op.deadline_ns - before - tout));
		EXPECT_GT(after + tout + TICK_NS, op.deadline_ns);
		EXPECT_GE(tout + TICK_NS, op.remaining_ns);

		ASSERT_EQ(0, qret);
		EXPECT_EQ(op.deadline_ns, dl);
		EXPECT_GE(tout + TICK_NS, rem);
		ASSERT_EQ(1, n);
		EXPECT_EQ(7, de[0].id);
		EXPECT_EQ(op.deadline_ns, de[0].deadline_ns);
		expect_event(_metadata, fd, clocks[c], 7, op.deadline_ns);
		close(fd);
	}
}

/*
 * An id touched every 10 ms with the vDSO's time, timeout 1 s: never
 * expires while touched, then expires one timeout after the last stamp.
 * A round in which the toucher itself was held up for most of a timeout
 * (a stalled VM) proves nothing and is run again.
 */
TEST_F(timens, touch_stamps_from_the_vdso_count)
{
	const uint64_t timeout = NSEC_PER_SEC;
	struct dev_touch touch;
	struct twheel_event ev;
	struct twheel_op op;
	uint64_t end, last, prev, gap;
	unsigned int c, round;
	int fd, ret;

	for (c = 0; c < 2; c++) {
		for (round = 0; round < 3; round++) {
			fd = wheel_on(clocks[c], TWHEEL_SETUPF_TOUCH, 4);
			ASSERT_LE(0, fd);
			ASSERT_EQ(0, dev_touch_map(fd, 4, clocks[c], &touch));
			ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
			dev_prep_add(&op, 9, timeout);
			dev_prep_bind(&op, 0);
			ASSERT_EQ(0, dev_submit_op(fd, &op));
			prev = clock_ns(clocks[c]);
			end = prev + 3 * timeout / 2;
			gap = 0;
			do {
				dev_touch(&touch, 0);
				last = touch.slots[0];
				if (last - prev > gap)
					gap = last - prev;
				prev = last;
				ret = dev_read_events(fd, &ev, 1);
				if (ret != -EAGAIN)
					break;
				sleep_ns(10 * NSEC_PER_MSEC);
			} while (last < end);
			if (gap > timeout / 2) {
				printf("# clock %d: the toucher was held up %llu ms: again\n",
				       clocks[c], (unsigned long long)(gap / NSEC_PER_MSEC));
				dev_touch_unmap(&touch);
				close(fd);
				continue;
			}
			EXPECT_EQ(-EAGAIN, ret)
				TH_LOG("clock %d: id expired while touched (deadline %llu, last stamp %llu)",
				       clocks[c], (unsigned long long)ev.deadline_ns,
				       (unsigned long long)last);
			EXPECT_LE(1, fdinfo_get(fd, "touch_rearms"));
			if (ret == -EAGAIN) {
				ASSERT_EQ(1, drain_until(fd, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
				EXPECT_LE(last + timeout, ev.deadline_ns);
				EXPECT_GT(last + timeout + TICK_NS, ev.deadline_ns);
				EXPECT_LE(ev.deadline_ns, ev.expired_ns);
				EXPECT_LE(ev.expired_ns, clock_ns(clocks[c]));
				EXPECT_GE(ev.deadline_ns + TICK_NS + LATE_NS, ev.expired_ns);
			}
			dev_touch_unmap(&touch);
			close(fd);
			break;
		}
		EXPECT_GT(3, round) TH_LOG("clock %d: the toucher was held up in every round",
					    clocks[c]);
	}
}

/*
 * Stamps that a conversion between the clocks could wrap (0, 1, the
 * offset, its negation, U64_MAX and near it) are numbers like any other
 * on the namespace's clock: one before the arming is no touch (the id
 * expires one timeout after its ADD), one after it counts once, as the
 * present (one timeout more); none makes an event early or keeps an id
 * alive longer.
 */
TEST_F(timens, stamps_near_the_ends_neither_wrap_nor_make_anything_early)
{
	const uint64_t timeout = 200 * NSEC_PER_MSEC;
	const uint64_t vals[] = {
		0, 1, (uint64_t)self->offset_ns, -(uint64_t)self->offset_ns, UINT64_MAX,
		UINT64_MAX - (uint64_t)llabs(self->offset_ns),
	};
	const unsigned int n = sizeof(vals) / sizeof(vals[0]);
	struct twheel_event ev[8];
	struct dev_touch touch;
	struct twheel_op op;
	uint64_t t0, t1, lo, hi;
	unsigned int i;
	int fd, got;

	fd = wheel_on(CLOCK_MONOTONIC, TWHEEL_SETUPF_TOUCH, n);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_map(fd, n, CLOCK_MONOTONIC, &touch));
	t0 = mono_ns();
	for (i = 0; i < n; i++) {
		dev_prep_add(&op, i, timeout);
		dev_prep_bind(&op, i);
		ASSERT_EQ(0, dev_submit_op(fd, &op));
		dev_touch_at(&touch, i, vals[i]);
	}
	t1 = mono_ns();
	got = drain_until(fd, ev, n, mono_ns() + 2 * timeout + 10 * NSEC_PER_SEC);
	ASSERT_EQ(n, got);
	for (i = 0; i < n; i++) {
		uint64_t v = vals[ev[i].id];
		bool counts = v > t1;

		ASSERT_GT(n, ev[i].id);
		ASSERT_TRUE(counts || v < t0) TH_LOG("stamp %#llx within the adds", (unsigned long long)v);
		lo = t0 + (counts ? 2 : 1) * timeout;
		hi = t1 + (counts ? 2 * timeout + TICK_NS + LATE_NS : timeout) + TICK_NS;
		EXPECT_LE(lo, ev[i].deadline_ns) TH_LOG("stamp %#llx: %lld ns early",
							(unsigned long long)v,
							(long long)(lo - ev[i].deadline_ns));
		EXPECT_GE(hi, ev[i].deadline_ns) TH_LOG("stamp %#llx: kept %lld ns too long",
							(unsigned long long)v,
							(long long)(ev[i].deadline_ns - hi));
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
	}
	dev_touch_unmap(&touch);
	close(fd);
}

/*
 * The rule for shared wheels: times are on the clock of the namespace
 * the wheel was set up in, whoever uses it. A wheel set up on the host's
 * clock keeps it in here; one set up in here keeps this namespace's
 * clock for a process of the host's namespace.
 */
TEST_F(timens, a_wheel_keeps_the_clock_it_was_set_up_on)
{
	struct twheel_event ev;
	uint64_t before, after;
	struct twheel_op op;
	int fd;

	EXPECT_EQ(0, fdinfo_get(self->host_wheel, "clock_offset_ns"));
	before = mono_ns() - self->offset_ns;
	dev_prep_add(&op, 1, 100 * NSEC_PER_MSEC);
	ASSERT_EQ(0, dev_submit_op(self->host_wheel, &op));
	after = mono_ns() - self->offset_ns;
	EXPECT_LE(before + 100 * NSEC_PER_MSEC, op.deadline_ns);
	EXPECT_GT(after + 100 * NSEC_PER_MSEC + TICK_NS, op.deadline_ns);
	ASSERT_EQ(1, drain_until(self->host_wheel, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
	EXPECT_EQ(op.deadline_ns, ev.deadline_ns);
	EXPECT_LE(ev.expired_ns, mono_ns() - self->offset_ns);

	fd = wheel_on(CLOCK_MONOTONIC, 0, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(self->offset_ns, fdinfo_get(fd, "clock_offset_ns"));
	ASSERT_EQ(0, setns(self->host_ns, CLONE_NEWTIME)) TH_LOG("setns: %s", strerror(errno));
	before = mono_ns() + self->offset_ns;
	dev_prep_add(&op, 2, 100 * NSEC_PER_MSEC);
	EXPECT_EQ(0, dev_submit_op(fd, &op));
	after = mono_ns() + self->offset_ns;
	EXPECT_LE(before + 100 * NSEC_PER_MSEC, op.deadline_ns);
	EXPECT_GT(after + 100 * NSEC_PER_MSEC + TICK_NS, op.deadline_ns);
	/* Read from the host's namespace too: still the wheel's clock. */
	ASSERT_EQ(1, drain_until(fd, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
	EXPECT_EQ(op.deadline_ns, ev.deadline_ns);
	EXPECT_LE(ev.deadline_ns, ev.expired_ns);
	EXPECT_LE(ev.expired_ns, mono_ns() + self->offset_ns);
	ASSERT_EQ(0, setns(self->wheel_ns, CLONE_NEWTIME));
	close(fd);
}

TEST_HARNESS_MAIN
