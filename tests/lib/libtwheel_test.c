// SPDX-License-Identifier: GPL-2.0
/*
 * libtwheel itself (lib/twheel.h), against the device: every function
 * answers with a value >= 0 or a negative errno, leaving errno as the
 * system call left it; what each writes back (out fields, counts, the
 * failures of a compact refresh, the dump cursor, the touch mapping, the
 * registered touch table) and
 * what it leaves alone on error; the checks made before any system call
 * (twheel_open()'s flags, twheel_setup()'s clock, twheel_touch_map()'s
 * slots and clock); twheel_now(); the prep helpers; the dump loop to
 * TWHEEL_DUMP_END; twheel_touch() and twheel_touch_at(); the io_uring SQE
 * helpers of <twheel_uring.h>, filled and submitted. What the kernel
 * answers is the selftests' business (selftests/), here only that the
 * library hands it on.
 */
#include <sys/mman.h>
#include <sys/utsname.h>
#include <liburing.h>

#include "twheel_test.h"
#include "kselftest_harness.h"
#include "twheel_uring.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(20 * NSEC_PER_SEC)
#define SLOTS		64

/* A CLOCK_MONOTONIC wheel opened and set up through the library, or -errno. */
static int lib_wheel(int oflags)
{
	int fd = twheel_open(oflags), ret;

	if (fd < 0)
		return fd;
	ret = twheel_setup(fd, TICK_NS, DFLT_NS, CLOCK_MONOTONIC, 0);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

/* ---- open and setup ---- */

TEST(open_returns_a_wheel_with_the_flags)
{
	int fd = twheel_open(O_CLOEXEC | O_NONBLOCK);

	ASSERT_LE(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	close(fd);
}

TEST(open_rejects_other_flags)
{
	errno = 0;
	EXPECT_EQ(-EINVAL, twheel_open(O_APPEND));
	EXPECT_EQ(-EINVAL, twheel_open(O_CLOEXEC | O_TRUNC));
	/* Refused before any system call: errno is not touched. */
	EXPECT_EQ(0, errno);
}

FIXTURE(fresh) {
	int fd;
};

FIXTURE_SETUP(fresh)
{
	self->fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", TWHEEL_DEVICE, strerror(-self->fd));
}

FIXTURE_TEARDOWN(fresh)
{
	close(self->fd);
}

TEST_F(fresh, setup_succeeds)
{
	ASSERT_EQ(0, twheel_setup(self->fd, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	EXPECT_EQ((long long)TICK_NS, fdinfo_get(self->fd, "tick_ns"));
}

TEST_F(fresh, setup_params_passes_the_struct_as_is)
{
	struct twheel_setup_args args = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = NSEC_PER_SEC,
		.clockid = CLOCK_BOOTTIME,
		.max_entries = 100,
		.flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = 10,
	};

	ASSERT_EQ(0, twheel_setup_params(self->fd, &args));
	EXPECT_EQ(100, fdinfo_get(self->fd, "max_entries"));
	EXPECT_EQ(10, fdinfo_get(self->fd, "touch_slots"));
}

TEST_F(fresh, setup_errors_are_negative_errno)
{
	struct twheel_setup_args args = {
		.tick_ns = TWHEEL_TICK_MIN_NS - 1,
		.default_timeout_ns = NSEC_PER_SEC,
		.clockid = CLOCK_MONOTONIC,
	};

	errno = 0;
	EXPECT_EQ(-EINVAL, twheel_setup_params(self->fd, &args));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, twheel_setup(self->fd, 0, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	ASSERT_EQ(0, twheel_setup(self->fd, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	EXPECT_EQ(-EBUSY, twheel_setup(self->fd, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
}

TEST_F(fresh, setup_rejects_a_negative_clock)
{
	errno = 0;
	EXPECT_EQ(-EINVAL, twheel_setup(self->fd, TICK_NS, NSEC_PER_SEC, -1, 0));
	EXPECT_EQ(0, errno);
	EXPECT_EQ(-1, fdinfo_get(self->fd, "tick_ns"));
	EXPECT_EQ(0, twheel_setup(self->fd, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
}

TEST_F(fresh, every_call_before_setup_is_ebadfd)
{
	struct twheel_dump_entry e;
	struct twheel_event ev;
	struct twheel_op op;
	uint64_t id = 1, cursor = 0;

	EXPECT_EQ(-EBADFD, twheel_add(self->fd, 1, TWHEEL_TIMEOUT_DEFAULT));
	EXPECT_EQ(-EBADFD, twheel_refresh(self->fd, 1, TWHEEL_TIMEOUT_DEFAULT,
					  TWHEEL_OPF_ADD_IF_ABSENT));
	EXPECT_EQ(-EBADFD, twheel_cancel(self->fd, 1));
	EXPECT_EQ(-EBADFD, twheel_query(self->fd, 1, NULL, NULL));
	twheel_prep_add(&op, 1, TWHEEL_TIMEOUT_DEFAULT);
	EXPECT_EQ(-EBADFD, twheel_submit_op(self->fd, &op));
	EXPECT_EQ(-EBADFD, twheel_batch(self->fd, &op, 1));
	EXPECT_EQ(-EBADFD, twheel_refresh_ids(self->fd, &id, 1, TWHEEL_TIMEOUT_DEFAULT, 0,
					      NULL, NULL));
	EXPECT_EQ(-EBADFD, twheel_read_events(self->fd, &ev, 1));
	EXPECT_EQ(-EBADFD, twheel_dump(self->fd, &e, 1, &cursor));
	EXPECT_EQ(-EBADFD, twheel_touch_register(self->fd, &id, 1));
}

/* ---- single operations ---- */

FIXTURE(wheel) {
	int fd;
};

FIXTURE_SETUP(wheel)
{
	self->fd = lib_wheel(O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

TEST_F(wheel, ops_return_zero_or_negative_errno)
{
	EXPECT_EQ(0, twheel_add(self->fd, 1, NSEC_PER_SEC));
	errno = 0;
	EXPECT_EQ(-EEXIST, twheel_add(self->fd, 1, NSEC_PER_SEC));
	/* errno is what the system call left, never the answer itself. */
	EXPECT_EQ(EEXIST, errno);
	EXPECT_EQ(0, twheel_refresh(self->fd, 1, 2 * NSEC_PER_SEC, 0));
	EXPECT_EQ(-ENOENT, twheel_refresh(self->fd, 2, NSEC_PER_SEC, 0));
	EXPECT_EQ(0, twheel_refresh(self->fd, 2, NSEC_PER_SEC, TWHEEL_OPF_ADD_IF_ABSENT));
	EXPECT_EQ(0, twheel_cancel(self->fd, 2));
	EXPECT_EQ(-ENOENT, twheel_cancel(self->fd, 2));
	EXPECT_EQ(0, twheel_query(self->fd, 1, NULL, NULL));
	EXPECT_EQ(-ENOENT, twheel_query(self->fd, 2, NULL, NULL));
	EXPECT_EQ(-EINVAL, twheel_add(self->fd, 3, TWHEEL_MAX_TIMEOUT_NS + 1));
}

TEST_F(wheel, timeouts_are_relative_or_the_default)
{
	uint64_t before, d, r;

	before = mono_ns();
	ASSERT_EQ(0, twheel_add(self->fd, 1, NSEC_PER_SEC));
	ASSERT_EQ(0, twheel_query(self->fd, 1, &d, &r));
	EXPECT_LE(before + NSEC_PER_SEC, d);
	EXPECT_GE(mono_ns() + NSEC_PER_SEC + TICK_NS, d);
	before = mono_ns();
	ASSERT_EQ(0, twheel_refresh(self->fd, 1, TWHEEL_TIMEOUT_DEFAULT, 0));
	ASSERT_EQ(0, twheel_query(self->fd, 1, &d, &r));
	EXPECT_LE(before + DFLT_NS, d);
	EXPECT_GE(DFLT_NS + TICK_NS, r);
	EXPECT_LT(DFLT_NS - NSEC_PER_SEC, r);
}

TEST_F(wheel, query_writes_deadline_and_remaining)
{
	struct twheel_op op;
	uint64_t d = JUNK64, r = JUNK64, before, after;

	twheel_prep_add(&op, 4, NSEC_PER_SEC);
	ASSERT_EQ(0, twheel_submit_op(self->fd, &op));
	before = mono_ns();
	ASSERT_EQ(0, twheel_query(self->fd, 4, &d, &r));
	after = mono_ns();
	EXPECT_EQ(op.deadline_ns, d);
	EXPECT_LE(d - after, r);
	EXPECT_GE(d - before, r);
	d = JUNK64;
	EXPECT_EQ(0, twheel_query(self->fd, 4, &d, NULL));
	EXPECT_EQ(op.deadline_ns, d);
	r = JUNK64;
	EXPECT_EQ(0, twheel_query(self->fd, 4, NULL, &r));
	EXPECT_NE(JUNK64, r);
}

TEST_F(wheel, query_leaves_outputs_alone_on_error)
{
	uint64_t d = JUNK64, r = JUNK64;

	EXPECT_EQ(-ENOENT, twheel_query(self->fd, 4, &d, &r));
	EXPECT_EQ(JUNK64, d);
	EXPECT_EQ(JUNK64, r);
}

TEST_F(wheel, submit_op_returns_the_result_and_writes_the_op)
{
	struct twheel_op op;

	twheel_prep_add(&op, 5, NSEC_PER_SEC);
	op.result = (int32_t)JUNK64;
	op.deadline_ns = JUNK64;
	ASSERT_EQ(0, twheel_submit_op(self->fd, &op));
	EXPECT_EQ(0, op.result);
	EXPECT_NE(JUNK64, op.deadline_ns);
	twheel_prep_add(&op, 5, NSEC_PER_SEC);
	EXPECT_EQ(-EEXIST, twheel_submit_op(self->fd, &op));
	EXPECT_EQ(-EEXIST, op.result);
}

TEST_F(wheel, submit_op_bad_pointer_is_efault)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, page);
	EXPECT_EQ(-EFAULT, twheel_submit_op(self->fd, page));
	EXPECT_EQ(-EFAULT, twheel_submit_op(self->fd, NULL));
	munmap(page, 4096);
}

/* ---- many at once ---- */

TEST_F(wheel, batch_returns_the_count_applied)
{
	struct twheel_op ops[3];

	twheel_prep_add(&ops[0], 1, TWHEEL_TIMEOUT_DEFAULT);
	twheel_prep_add(&ops[1], 1, TWHEEL_TIMEOUT_DEFAULT);
	twheel_prep_query(&ops[2], 1);
	ASSERT_EQ(3, twheel_batch(self->fd, ops, 3));
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(-EEXIST, ops[1].result);
	EXPECT_EQ(0, ops[2].result);
	EXPECT_EQ(ops[0].deadline_ns, ops[2].deadline_ns);
	EXPECT_EQ(0, twheel_batch(self->fd, NULL, 0));
	EXPECT_EQ(-EFAULT, twheel_batch(self->fd, NULL, 3));
	EXPECT_EQ(-EINVAL, twheel_batch(self->fd, ops, UINT32_MAX));
}

TEST_F(wheel, refresh_ids_reports_the_failures_in_order)
{
	uint64_t ids[6] = { 10, 11, 12, 13, 14, 15 }, failed[6];
	unsigned int nf = JUNK;
	int i;

	for (i = 0; i < 6; i += 2)
		ASSERT_EQ(0, twheel_add(self->fd, ids[i], NSEC_PER_SEC));
	memset(failed, JUNK, sizeof(failed));
	ASSERT_EQ(6, twheel_refresh_ids(self->fd, ids, 6, 5 * NSEC_PER_SEC, 0, failed, &nf));
	ASSERT_EQ(3, nf);
	EXPECT_EQ(11, failed[0]);
	EXPECT_EQ(13, failed[1]);
	EXPECT_EQ(15, failed[2]);
	EXPECT_EQ(JUNK64, failed[3]);
	/* Counted only, or not at all. */
	nf = JUNK;
	EXPECT_EQ(6, twheel_refresh_ids(self->fd, ids, 6, NSEC_PER_SEC, 0, NULL, &nf));
	EXPECT_EQ(3, nf);
	EXPECT_EQ(6, twheel_refresh_ids(self->fd, ids, 6, NSEC_PER_SEC, 0, NULL, NULL));
}

TEST_F(wheel, refresh_ids_timeout_default_and_deadline)
{
	uint64_t ids[2] = { 1, 2 }, d, r, deadline;
	unsigned int nf;

	ASSERT_EQ(0, twheel_add(self->fd, 1, NSEC_PER_SEC));
	ASSERT_EQ(0, twheel_add(self->fd, 2, NSEC_PER_SEC));
	/* A relative timeout: the library sets TWHEEL_OPF_TIMEOUT. */
	ASSERT_EQ(2, twheel_refresh_ids(self->fd, ids, 2, 7 * NSEC_PER_SEC, 0, NULL, &nf));
	ASSERT_EQ(0, twheel_query(self->fd, 1, &d, &r));
	EXPECT_LT(6 * NSEC_PER_SEC, r);
	EXPECT_GE(7 * NSEC_PER_SEC + TICK_NS, r);
	ASSERT_EQ(2, twheel_refresh_ids(self->fd, ids, 2, TWHEEL_TIMEOUT_DEFAULT, 0, NULL, &nf));
	ASSERT_EQ(0, twheel_query(self->fd, 2, &d, &r));
	EXPECT_LT(DFLT_NS - NSEC_PER_SEC, r);
	EXPECT_GE(DFLT_NS + TICK_NS, r);
	/* With TWHEEL_OPF_ABSTIME the value is the deadline itself. */
	deadline = mono_ns() + 3 * NSEC_PER_SEC;
	ASSERT_EQ(2, twheel_refresh_ids(self->fd, ids, 2, deadline, TWHEEL_OPF_ABSTIME, NULL, &nf));
	ASSERT_EQ(0, twheel_query(self->fd, 1, &d, NULL));
	EXPECT_LE(deadline, d);
	EXPECT_GT(deadline + TICK_NS, d);
}

TEST_F(wheel, refresh_ids_leaves_nr_failed_alone_on_error)
{
	uint64_t id = 1;
	unsigned int nf = JUNK;

	EXPECT_EQ(-EFAULT, twheel_refresh_ids(self->fd, (uint64_t *)8, 4, NSEC_PER_SEC, 0,
					      NULL, &nf));
	EXPECT_EQ(JUNK, nf);
	EXPECT_EQ(-EINVAL, twheel_refresh_ids(self->fd, &id, 1, NSEC_PER_SEC, 1U << 31,
					      NULL, &nf));
	EXPECT_EQ(JUNK, nf);
}

/* ---- events ---- */

TEST_F(wheel, read_events_counts_records)
{
	struct twheel_event ev[4];
	int i;

	EXPECT_EQ(-EAGAIN, twheel_read_events(self->fd, ev, 4));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, twheel_add(self->fd, 100 + i, 0));
	ASSERT_EQ(3, wait_waiting(self->fd, 3));
	memset(ev, JUNK, sizeof(ev));
	EXPECT_EQ(2, twheel_read_events(self->fd, ev, 2));
	EXPECT_EQ(JUNK64, ev[2].id);
	EXPECT_EQ(1, twheel_read_events(self->fd, ev, 4));
	EXPECT_LE(ev[0].deadline_ns, ev[0].expired_ns);
	EXPECT_EQ(-EAGAIN, twheel_read_events(self->fd, ev, 4));
	EXPECT_EQ(-EINVAL, twheel_read_events(self->fd, ev, 0));
}

TEST(now_reads_the_clock)
{
	uint64_t before, now;

	before = mono_ns();
	now = twheel_now(CLOCK_MONOTONIC);
	EXPECT_LE(before, now);
	EXPECT_GE(mono_ns(), now);
	before = clock_ns(CLOCK_BOOTTIME);
	now = twheel_now(CLOCK_BOOTTIME);
	EXPECT_LE(before, now);
	EXPECT_GE(clock_ns(CLOCK_BOOTTIME), now);
	/* A clock that cannot be read is 0. */
	EXPECT_EQ(0, twheel_now((clockid_t)0x7ffffff0));
}

/* ---- dump ---- */

TEST_F(wheel, dump_moves_the_cursor_on_success_only)
{
	struct twheel_dump_entry e[4];
	uint64_t cursor = 1ULL << 63;
	int i;

	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, twheel_add(self->fd, i, NSEC_PER_SEC));
	EXPECT_EQ(-EINVAL, twheel_dump(self->fd, e, 4, &cursor));
	EXPECT_EQ(1ULL << 63, cursor);
	cursor = 0;
	EXPECT_EQ(-EINVAL, twheel_dump(self->fd, e, 0, &cursor));
	EXPECT_EQ(0, cursor);
	EXPECT_EQ(-EFAULT, twheel_dump(self->fd, NULL, 4, &cursor));
	EXPECT_EQ(0, cursor);
	EXPECT_EQ(4, twheel_dump(self->fd, e, 4, &cursor));
	EXPECT_NE(0, cursor);
	EXPECT_NE(TWHEEL_DUMP_END, cursor);
}

/* The loop of lib/twheel.h: call again with the cursor until TWHEEL_DUMP_END. */
TEST_F(wheel, dump_loop_lists_every_id_once)
{
	enum { N = 1000 };
	static unsigned char seen[N];
	struct twheel_dump_entry e[7];
	uint64_t cursor = 0;
	unsigned int listed = 0, twice = 0, calls = 0;
	int i, n;

	/* Ids spread over the u64 space, index in the top bits; none expires. */
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, twheel_add(self->fd, (uint64_t)i << 44 | 0x5a5, DFLT_NS));
	while (cursor != TWHEEL_DUMP_END && calls++ < 10 * N) {
		n = twheel_dump(self->fd, e, 7, &cursor);
		ASSERT_LE(0, n);
		ASSERT_GE(7, n);
		for (i = 0; i < n; i++) {
			uint64_t k = e[i].id >> 44;

			ASSERT_EQ(0x5a5, e[i].id & 0xfffffffffffULL);
			ASSERT_GT(N, k);
			twice += seen[k]++ != 0;
			listed++;
		}
	}
	EXPECT_EQ(TWHEEL_DUMP_END, cursor);
	EXPECT_EQ(N, listed);
	EXPECT_EQ(0, twice);
}

/* ---- the touch table ---- */

FIXTURE(touch) {
	int fd;
	struct twheel_touch t;
};

/*
 * A wheel with a table of SLOTS slots on @clk, set up through the library:
 * @flags TWHEEL_SETUPF_TOUCH or TWHEEL_SETUPF_TOUCH_USER.
 */
static int lib_touch_wheel(clockid_t clk, uint32_t flags)
{
	struct twheel_setup_args args = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = DFLT_NS,
		.clockid = clk,
		.flags = flags,
		.touch_slots = SLOTS,
	};
	int fd = twheel_open(O_CLOEXEC), ret;

	if (fd < 0)
		return fd;
	ret = twheel_setup_params(fd, &args);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

FIXTURE_SETUP(touch)
{
	self->fd = lib_touch_wheel(CLOCK_MONOTONIC, TWHEEL_SETUPF_TOUCH);
	ASSERT_LE(0, self->fd) TH_LOG("touch wheel: %s", strerror(-self->fd));
	memset(&self->t, 0, sizeof(self->t));
}

FIXTURE_TEARDOWN(touch)
{
	if (self->t.slots)
		twheel_touch_unmap(&self->t);
	close(self->fd);
}

TEST_F(touch, map_fills_the_touch_struct)
{
	unsigned int i, nonzero = 0;

	ASSERT_EQ(0, twheel_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &self->t));
	EXPECT_NE(NULL, self->t.slots);
	EXPECT_EQ(SLOTS, self->t.nr_slots);
	EXPECT_EQ(CLOCK_MONOTONIC, self->t.clockid);
	EXPECT_EQ(SLOTS * sizeof(uint64_t), self->t.map_len);
	for (i = 0; i < SLOTS; i++)
		nonzero += self->t.slots[i] != 0;
	EXPECT_EQ(0, nonzero);
}

TEST_F(touch, map_refuses_no_slots)
{
	struct twheel_touch t = { .slots = (uint64_t *)&t };

	EXPECT_EQ(-EINVAL, twheel_touch_map(self->fd, 0, CLOCK_MONOTONIC, &t));
	EXPECT_EQ((uint64_t *)&t, t.slots);
}

/* Stamps on a clock that is not the wheel's would all be "from the future". */
TEST_F(touch, map_refuses_other_clocks)
{
	static const clockid_t bad[] = { CLOCK_REALTIME, CLOCK_MONOTONIC_RAW, CLOCK_TAI, -1 };
	struct twheel_touch t = { .slots = (uint64_t *)&t };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(-EINVAL, twheel_touch_map(self->fd, SLOTS, bad[i], &t))
			TH_LOG("clock %d", bad[i]);
		EXPECT_EQ(0, errno);
		EXPECT_EQ((uint64_t *)&t, t.slots);
	}
}

TEST(map_of_a_wheel_without_table_is_enodev)
{
	struct twheel_touch t = { .slots = (uint64_t *)&t };
	int fd = lib_wheel(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENODEV, twheel_touch_map(fd, 1, CLOCK_MONOTONIC, &t));
	EXPECT_EQ((uint64_t *)&t, t.slots);
	close(fd);
}

TEST_F(touch, touch_stores_the_present_time_and_touch_at_the_given_one)
{
	uint64_t before, after;

	ASSERT_EQ(0, twheel_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &self->t));
	before = mono_ns();
	twheel_touch(&self->t, 3);
	after = mono_ns();
	EXPECT_LE(before, self->t.slots[3]);
	EXPECT_GE(after, self->t.slots[3]);
	twheel_touch_at(&self->t, SLOTS - 1, 42);
	EXPECT_EQ(42, self->t.slots[SLOTS - 1]);
	EXPECT_EQ(0, self->t.slots[4]);
}

TEST(touch_on_a_boottime_table_stores_boottime)
{
	struct twheel_touch t;
	uint64_t before, after;
	int fd = lib_touch_wheel(CLOCK_BOOTTIME, TWHEEL_SETUPF_TOUCH);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, twheel_touch_map(fd, SLOTS, CLOCK_BOOTTIME, &t));
	before = twheel_now(CLOCK_BOOTTIME);
	twheel_touch(&t, 0);
	after = twheel_now(CLOCK_BOOTTIME);
	EXPECT_LE(before, t.slots[0]);
	EXPECT_GE(after, t.slots[0]);
	EXPECT_EQ(0, twheel_touch_unmap(&t));
	close(fd);
}

TEST_F(touch, unmap_clears_the_slots)
{
	struct twheel_touch t2;

	ASSERT_EQ(0, twheel_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &self->t));
	ASSERT_EQ(0, twheel_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &t2));
	twheel_touch_at(&t2, 1, 7);
	EXPECT_EQ(7, self->t.slots[1]);
	EXPECT_EQ(0, twheel_touch_unmap(&t2));
	EXPECT_EQ(NULL, t2.slots);
	EXPECT_EQ(7, self->t.slots[1]);
}

/* ---- the registered touch table ---- */

FIXTURE(touch_user) {
	int fd;
	uint64_t *table;	/* one page of shared anonymous memory, SLOTS slots */
};

FIXTURE_SETUP(touch_user)
{
	self->fd = lib_touch_wheel(CLOCK_MONOTONIC, TWHEEL_SETUPF_TOUCH_USER);
	ASSERT_LE(0, self->fd) TH_LOG("touch-user wheel: %s", strerror(-self->fd));
	self->table = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->table);
}

FIXTURE_TEARDOWN(touch_user)
{
	close(self->fd);
	munmap(self->table, getpagesize());
}

/* Bind @id to @slot with an ADD through the library: 0 or -errno. */
static int lib_add_bound(int fd, uint64_t id, uint32_t slot)
{
	struct twheel_op op;

	twheel_prep_add(&op, id, DFLT_NS);
	twheel_prep_bind(&op, slot);
	return twheel_submit_op(fd, &op);
}

TEST_F(touch_user, register_hands_on_the_table_and_binding_follows)
{
	EXPECT_EQ(1, fdinfo_get(self->fd, "touch_user"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_registered"));
	/* No table yet to bind to. */
	EXPECT_EQ(-EINVAL, lib_add_bound(self->fd, 1, 3));
	errno = 0;
	ASSERT_EQ(0, twheel_touch_register(self->fd, self->table, SLOTS));
	EXPECT_EQ(0, errno);
	EXPECT_EQ(1, fdinfo_get(self->fd, "touch_registered"));
	EXPECT_EQ(0, lib_add_bound(self->fd, 1, 3));
	/* The library's own store works on it, with the stamp given. */
	twheel_touch_at(&(struct twheel_touch){ .slots = self->table, .nr_slots = SLOTS,
						.clockid = CLOCK_MONOTONIC }, 3, 42);
	EXPECT_EQ(42, self->table[3]);
	EXPECT_EQ(-EBUSY, twheel_touch_register(self->fd, self->table, SLOTS));
}

TEST_F(touch_user, register_errors_are_negative_errno)
{
	errno = 0;
	EXPECT_EQ(-EINVAL, twheel_touch_register(self->fd, self->table, SLOTS - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, twheel_touch_register(self->fd, self->table, SLOTS + 1));
	EXPECT_EQ(-EINVAL, twheel_touch_register(self->fd, self->table + 1, SLOTS));
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_registered"));
	ASSERT_EQ(0, munmap(self->table, getpagesize()));
	EXPECT_EQ(-EFAULT, twheel_touch_register(self->fd, self->table, SLOTS));
	self->table = mmap(self->table, getpagesize(), PROT_READ,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->table);
	EXPECT_EQ(-EFAULT, twheel_touch_register(self->fd, self->table, SLOTS));
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_registered"));
}

TEST(register_needs_a_wheel_set_up_for_it)
{
	uint64_t *table = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int plain = lib_wheel(O_CLOEXEC);
	int mapped = lib_touch_wheel(CLOCK_MONOTONIC, TWHEEL_SETUPF_TOUCH);

	ASSERT_NE(MAP_FAILED, table);
	ASSERT_LE(0, plain);
	ASSERT_LE(0, mapped);
	EXPECT_EQ(-EINVAL, twheel_touch_register(plain, table, SLOTS));
	EXPECT_EQ(-EINVAL, twheel_touch_register(mapped, table, SLOTS));
	close(plain);
	close(mapped);
	munmap(table, getpagesize());
}

/* A wheel opened O_RDONLY: EBADF before any other check, as the header says. */
TEST(register_on_a_read_only_wheel_is_ebadf)
{
	uint64_t slot;
	int fd = open(TWHEEL_DEVICE, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADF, twheel_touch_register(fd, &slot, 1));
	close(fd);
}

/* mmap(2) of a wheel whose table is the process's answers ENODEV. */
TEST_F(touch_user, map_of_a_registered_table_wheel_is_enodev)
{
	struct twheel_touch t = { .slots = (uint64_t *)&t };

	ASSERT_EQ(0, twheel_touch_register(self->fd, self->table, SLOTS));
	EXPECT_EQ(-ENODEV, twheel_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &t));
	EXPECT_EQ((uint64_t *)&t, t.slots);
}

/* ---- the prep helpers (no device) ---- */

TEST(prep_helpers_fill_ops)
{
	struct twheel_op op;

	memset(&op, JUNK, sizeof(op));
	twheel_prep_add(&op, 5, TWHEEL_TIMEOUT_DEFAULT);
	EXPECT_EQ(TWHEEL_OP_ADD, op.op);
	EXPECT_EQ(5, op.id);
	EXPECT_EQ(0, op.flags);
	EXPECT_EQ(0, op.timeout_ns);
	EXPECT_EQ(0, op.slot);
	twheel_prep_refresh(&op, 6, 0, TWHEEL_OPF_ADD_IF_ABSENT);
	EXPECT_EQ(TWHEEL_OP_REFRESH, op.op);
	EXPECT_EQ(TWHEEL_OPF_ADD_IF_ABSENT | TWHEEL_OPF_TIMEOUT, op.flags);
	EXPECT_EQ(0, op.timeout_ns);
	twheel_prep_cancel(&op, 7);
	EXPECT_EQ(TWHEEL_OP_CANCEL, op.op);
	EXPECT_EQ(0, op.flags);
	twheel_prep_query(&op, 8);
	EXPECT_EQ(TWHEEL_OP_QUERY, op.op);
	EXPECT_EQ(8, op.id);
}

TEST(prep_helpers_clear_every_other_field)
{
	struct twheel_op op;

	memset(&op, JUNK, sizeof(op));
	twheel_prep_op(&op, TWHEEL_OP_ADD, 9, 123, 0);
	EXPECT_EQ(TWHEEL_OPF_TIMEOUT, op.flags);
	EXPECT_EQ(123, op.timeout_ns);
	EXPECT_EQ(0, op.deadline_ns);
	EXPECT_EQ(0, op.remaining_ns);
	EXPECT_EQ(0, op.result);
	EXPECT_EQ(0, op.slot);
}

TEST(prep_at_and_bind_fill_ops)
{
	struct twheel_op op;

	memset(&op, JUNK, sizeof(op));
	twheel_prep_add_at(&op, 1, 4242);
	EXPECT_EQ(TWHEEL_OP_ADD, op.op);
	EXPECT_EQ(TWHEEL_OPF_ABSTIME, op.flags);
	EXPECT_EQ(4242, op.timeout_ns);
	EXPECT_EQ(0, op.slot);
	twheel_prep_refresh_at(&op, 2, 4343, TWHEEL_OPF_ADD_IF_ABSENT);
	EXPECT_EQ(TWHEEL_OP_REFRESH, op.op);
	EXPECT_EQ(TWHEEL_OPF_ABSTIME | TWHEEL_OPF_ADD_IF_ABSENT, op.flags);
	EXPECT_EQ(4343, op.timeout_ns);
	twheel_prep_bind(&op, 17);
	EXPECT_EQ(TWHEEL_OPF_ABSTIME | TWHEEL_OPF_ADD_IF_ABSENT | TWHEEL_OPF_TOUCH, op.flags);
	EXPECT_EQ(17, op.slot);
	twheel_prep_add(&op, 3, NSEC_PER_SEC);
	twheel_prep_bind(&op, TWHEEL_SLOT_NONE);
	EXPECT_EQ(TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_TOUCH, op.flags);
	EXPECT_EQ(TWHEEL_SLOT_NONE, op.slot);
}

/* ---- <twheel_uring.h> ---- */

TEST(uring_prep_fills_the_sqe_and_nothing_else)
{
	struct twheel_batch_args args;
	struct twheel_uring_cmd area;
	struct io_uring_sqe sqe, zero;

	memset(&sqe, JUNK, sizeof(sqe));
	twheel_prep_uring_batch(&sqe, 7, &args);
	memcpy(&area, sqe.cmd, sizeof(area));
	EXPECT_EQ(IORING_OP_URING_CMD, sqe.opcode);
	EXPECT_EQ(7, sqe.fd);
	EXPECT_EQ(TWHEEL_IOC_BATCH, sqe.cmd_op);
	EXPECT_EQ((uintptr_t)&args, area.arg);
	EXPECT_EQ(0, area.pad);
	/* Every other byte of the 64 is 0: flags, user_data, the rest. */
	sqe.opcode = 0;
	sqe.fd = 0;
	sqe.cmd_op = 0;
	memset(sqe.cmd, 0, sizeof(area));
	memset(&zero, 0, sizeof(zero));
	EXPECT_EQ(0, memcmp(&sqe, &zero, sizeof(sqe)));
}

/* Submit the one SQE filled and wait for its CQE: its res, or the ring's -errno. */
static int ring_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_submit(ring);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* An SQE of a ring the tests never fill. */
static struct io_uring_sqe *sqe_of(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		abort();
	return sqe;
}

/* Kernels with ring commands, 5.19 and later. */
static bool has_ring_commands(void)
{
	struct utsname u;
	int major, minor;

	return !uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major > 5 || (major == 5 && minor >= 19));
}

TEST_F(wheel, uring_prep_op_batch_refresh_complete_as_the_library_calls)
{
	uint64_t ids[2] = { 41, 42 }, failed[2];
	struct twheel_refresh_args rargs = {
		.ids = (uintptr_t)ids, .failed = (uintptr_t)failed, .count = 2,
		.flags = TWHEEL_OPF_TIMEOUT, .timeout_ns = 5 * NSEC_PER_SEC,
	};
	struct twheel_batch_args bargs;
	struct twheel_op op, ops[2];
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret)
		SKIP(return, "no io_uring: %s", strerror(-ret));
	if (!has_ring_commands()) {
		twheel_prep_add(&op, 40, 5 * NSEC_PER_SEC);
		twheel_prep_uring_op(sqe_of(&ring), self->fd, &op);
		EXPECT_EQ(-EINVAL, ring_one(&ring));
		io_uring_queue_exit(&ring);
		SKIP(return, "ring commands need 5.19; this kernel fails them with EINVAL");
	}
	twheel_prep_add(&op, 40, 5 * NSEC_PER_SEC);
	twheel_prep_uring_op(sqe_of(&ring), self->fd, &op);
	EXPECT_EQ(0, ring_one(&ring));
	EXPECT_EQ(0, op.result);
	EXPECT_NE(0, op.deadline_ns);
	twheel_prep_add(&op, 40, 5 * NSEC_PER_SEC);
	twheel_prep_uring_op(sqe_of(&ring), self->fd, &op);
	EXPECT_EQ(-EEXIST, ring_one(&ring));
	EXPECT_EQ(-EEXIST, op.result);

	twheel_prep_add(&ops[0], 41, 5 * NSEC_PER_SEC);
	twheel_prep_query(&ops[1], 40);
	bargs = (struct twheel_batch_args){ .ops = (uintptr_t)ops, .count = 2 };
	twheel_prep_uring_batch(sqe_of(&ring), self->fd, &bargs);
	EXPECT_EQ(2, ring_one(&ring));
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(0, ops[1].result);

	/* 41 is live, 42 is not: one failure, 42, as twheel_refresh_ids() says. */
	twheel_prep_uring_refresh(sqe_of(&ring), self->fd, &rargs);
	EXPECT_EQ(2, ring_one(&ring));
	EXPECT_EQ(1, rargs.nr_failed);
	EXPECT_EQ(42, failed[0]);
	io_uring_queue_exit(&ring);
}

/* TOUCH_REGISTER as a ring command (run from an io-wq worker) registers. */
TEST_F(touch_user, uring_cmd_registers_the_table)
{
	struct twheel_touch_register_args args = {
		.addr = (uintptr_t)self->table, .slots = SLOTS,
	};
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret)
		SKIP(return, "no io_uring: %s", strerror(-ret));
	twheel_prep_uring_cmd(sqe_of(&ring), self->fd, TWHEEL_IOC_TOUCH_REGISTER, &args);
	if (!has_ring_commands()) {
		EXPECT_EQ(-EINVAL, ring_one(&ring));
		EXPECT_EQ(0, fdinfo_get(self->fd, "touch_registered"));
		io_uring_queue_exit(&ring);
		SKIP(return, "ring commands need 5.19; this kernel fails them with EINVAL");
	}
	EXPECT_EQ(0, ring_one(&ring));
	EXPECT_EQ(1, fdinfo_get(self->fd, "touch_registered"));
	twheel_prep_uring_cmd(sqe_of(&ring), self->fd, TWHEEL_IOC_TOUCH_REGISTER, &args);
	EXPECT_EQ(-EBUSY, ring_one(&ring));
	io_uring_queue_exit(&ring);
}

TEST_HARNESS_MAIN
