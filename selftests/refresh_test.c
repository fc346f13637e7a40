// SPDX-License-Identifier: GPL-2.0
/*
 * TWHEEL_IOC_REFRESH, the compact batch: many ids refreshed to one
 * timeout or deadline, 8 bytes in per id, only the failures out. It must
 * do what as many REFRESH ops in a batch do, report every failure in
 * order, validate its arguments as BATCH does, and apply nothing it does
 * not count.
 */
#include <signal.h>
#include <sys/mman.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(20 * NSEC_PER_SEC)

FIXTURE(wheel) {
	int fd;
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

static long refresh(int fd, struct twheel_refresh_args *a)
{
	return ioctl(fd, TWHEEL_IOC_REFRESH, a) < 0 ? -errno : 0;
}

/* Live ids move to the one deadline; absent ones are the failures, in order. */
TEST_F(wheel, live_ids_move_absent_ones_are_reported_in_order)
{
	uint64_t ids[100], failed[100], dl;
	unsigned int i, nf = JUNK;
	uint64_t t0;
	int ret;

	for (i = 0; i < 100; i += 2)
		ASSERT_EQ(0, dev_add(self->fd, i, 5 * NSEC_PER_SEC));
	for (i = 0; i < 100; i++)
		ids[i] = 99 - i;
	memset(failed, JUNK, sizeof(failed));
	t0 = mono_ns();
	ret = dev_refresh_ids(self->fd, ids, 100, 10 * NSEC_PER_SEC, 0, failed, &nf);
	ASSERT_EQ(100, ret);
	ASSERT_EQ(50, nf);
	for (i = 0; i < 50; i++)
		EXPECT_EQ(99 - 2 * i, failed[i]) TH_LOG("failure %u", i);
	EXPECT_EQ(JUNK64, failed[50]);
	for (i = 0; i < 100; i += 2) {
		ASSERT_EQ(0, dev_query(self->fd, i, &dl, NULL));
		/* Never early, on the grid, from a time within the call. */
		EXPECT_LE(t0 + 10 * NSEC_PER_SEC, dl);
		EXPECT_GE(mono_ns() + 10 * NSEC_PER_SEC + TICK_NS, dl);
	}
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
	EXPECT_EQ(50, fdinfo_get(self->fd, "live"));
}

/* Without a failure buffer failures are only counted; the default timeout. */
TEST_F(wheel, failures_counted_without_a_buffer_default_timeout)
{
	uint64_t ids[3] = { 7, 8, 9 }, dl, rem;
	unsigned int nf = JUNK;

	ASSERT_EQ(0, dev_add(self->fd, 8, NSEC_PER_SEC));
	ASSERT_EQ(3, dev_refresh_ids(self->fd, ids, 3, DEV_TIMEOUT_DEFAULT, 0, NULL, &nf));
	EXPECT_EQ(2, nf);
	ASSERT_EQ(0, dev_query(self->fd, 8, &dl, &rem));
	EXPECT_LT(DFLT_NS - NSEC_PER_SEC, rem);
	EXPECT_GE(DFLT_NS + TICK_NS, rem);
}

/* ADD_IF_ABSENT adds what is missing; ABSTIME gives all one deadline. */
TEST_F(wheel, add_if_absent_and_abstime)
{
	uint64_t ids[4] = { 1, 2, 3, 4 }, dl, deadline = mono_ns() + 3 * NSEC_PER_SEC;
	unsigned int i, nf = JUNK;

	ASSERT_EQ(0, dev_add(self->fd, 2, NSEC_PER_SEC));
	ASSERT_EQ(4, dev_refresh_ids(self->fd, ids, 4, deadline,
				     TWHEEL_OPF_ABSTIME | TWHEEL_OPF_ADD_IF_ABSENT, NULL, &nf));
	EXPECT_EQ(0, nf);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, dev_query(self->fd, ids[i], &dl, NULL));
		EXPECT_LE(deadline, dl);
		EXPECT_GT(deadline + TICK_NS, dl);
	}
}

/* At the wheel's cap, ADD_IF_ABSENT's failures are the ids not added. */
TEST(add_if_absent_at_the_cap_reports_what_did_not_fit)
{
	uint64_t ids[10], failed[10];
	unsigned int i, nf;
	int fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 6);

	ASSERT_LE(0, fd);
	for (i = 0; i < 10; i++)
		ids[i] = 100 + i;
	ASSERT_EQ(10, dev_refresh_ids(fd, ids, 10, DEV_TIMEOUT_DEFAULT,
				      TWHEEL_OPF_ADD_IF_ABSENT, failed, &nf));
	ASSERT_EQ(4, nf);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(106 + i, failed[i]);
	EXPECT_EQ(6, fdinfo_get(fd, "live"));
	close(fd);
}

TEST_F(wheel, bad_arguments_are_einval_and_change_nothing)
{
	uint64_t ids[2] = { 1, 2 };
	struct twheel_refresh_args a;

	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	memset(&a, 0, sizeof(a));
	a.ids = (uintptr_t)ids;
	a.count = 2;
	a.pad = 1;
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	a.pad = 0;
	a.flags = TWHEEL_OPF_TOUCH;
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	a.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	a.flags = 0;
	a.timeout_ns = 5;	/* without TWHEEL_OPF_TIMEOUT */
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	a.flags = TWHEEL_OPF_TIMEOUT;
	a.timeout_ns = TWHEEL_MAX_TIMEOUT_NS + 1;
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	a.flags = 0;
	a.timeout_ns = 0;
	a.count = 0x80000000U;
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	/*
	 * A deadline beyond the longest timeout fails the call before any
	 * id is applied: the failed ids are those not live, and these are.
	 */
	a.count = 2;
	a.flags = TWHEEL_OPF_ABSTIME;
	a.timeout_ns = mono_ns() + (TICK_NS << 33);
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	EXPECT_EQ(0, a.nr_failed);
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
}

/*
 * nr_failed is output only: whatever it holds on input is ignored and
 * overwritten with the count; a call that fails leaves it as it was.
 */
TEST_F(wheel, nr_failed_on_input_is_ignored)
{
	uint64_t ids[3] = { 1, 2, 3 }, failed[3];
	struct twheel_refresh_args a;

	ASSERT_EQ(0, dev_add(self->fd, 2, NSEC_PER_SEC));
	memset(&a, 0, sizeof(a));
	a.ids = (uintptr_t)ids;
	a.failed = (uintptr_t)failed;
	a.count = 3;
	a.nr_failed = JUNK;
	EXPECT_EQ(0, refresh(self->fd, &a));
	EXPECT_EQ(2, a.nr_failed);
	EXPECT_EQ(1, failed[0]);
	EXPECT_EQ(3, failed[1]);
	a.nr_failed = 0xffffffffU;
	a.failed = 0;
	EXPECT_EQ(0, refresh(self->fd, &a));
	EXPECT_EQ(2, a.nr_failed);
	a.nr_failed = JUNK;
	a.pad = 1;
	EXPECT_EQ(-EINVAL, refresh(self->fd, &a));
	EXPECT_EQ(JUNK, a.nr_failed);
	a.pad = 0;
	a.ids = 8;
	EXPECT_EQ(-EFAULT, refresh(self->fd, &a));
	EXPECT_EQ(JUNK, a.nr_failed);
	/* No ids: none applied, and none failed. */
	a.ids = (uintptr_t)ids;
	a.count = 0;
	EXPECT_EQ(0, refresh(self->fd, &a));
	EXPECT_EQ(0, a.nr_failed);
}

TEST(before_setup_is_ebadfd)
{
	struct twheel_refresh_args a = { .count = 0 };
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, refresh(fd, &a));
	close(fd);
}

/* A read-only failure buffer: nothing of the chunk is applied. */
TEST_F(wheel, unwritable_failure_room_applies_nothing)
{
	uint64_t ids[4] = { 1, 2, 3, 4 }, dl_before, dl;
	uint64_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int nf = JUNK;

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	ASSERT_EQ(0, dev_query(self->fd, 1, &dl_before, NULL));
	EXPECT_EQ(-EFAULT, dev_refresh_ids(self->fd, ids, 4, 9 * NSEC_PER_SEC,
					   TWHEEL_OPF_ADD_IF_ABSENT, ro, &nf));
	ASSERT_EQ(0, dev_query(self->fd, 1, &dl, NULL));
	EXPECT_EQ(dl_before, dl);
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
	/* Unreadable ids: EFAULT, nothing applied either. */
	EXPECT_EQ(-EFAULT, dev_refresh_ids(self->fd, (uint64_t *)8, 4, 9 * NSEC_PER_SEC,
					   TWHEEL_OPF_ADD_IF_ABSENT, NULL, &nf));
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
	munmap(ro, 4096);
}

/* Ids cut by an unmapped page: the count says how far it got, exactly. */
TEST_F(wheel, ids_cut_by_unmapped_page_return_count_done)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = page / sizeof(uint64_t);
	uint64_t *ids = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int i, nf;
	int ret;

	ASSERT_NE(MAP_FAILED, ids);
	ASSERT_EQ(0, munmap((char *)ids + page, page));
	for (i = 0; i < n; i++)
		ids[i] = i;
	ret = dev_refresh_ids(self->fd, ids, n + 10, NSEC_PER_SEC,
			      TWHEEL_OPF_ADD_IF_ABSENT, NULL, &nf);
	ASSERT_LT(0, ret);
	ASSERT_GE(n, (unsigned int)ret);
	EXPECT_EQ(0, nf);
	EXPECT_EQ(ret, fdinfo_get(self->fd, "live"));
	munmap(ids, page);
}

/*
 * The events of refreshed ids come at the new deadline, never at the old
 * one. The adds and the refresh must finish before the old deadline for
 * the test to say anything; on a machine slower than that (a loaded debug
 * VM), it starts again on a new wheel with an old deadline twice as far.
 * Once they did finish in time, every id must still be there.
 */
TEST_F(wheel, refreshed_ids_expire_at_the_new_deadline)
{
	uint64_t ids[64], start, t0, old_ns, new_ns;
	struct twheel_event ev[64];
	unsigned int i, nf = ~0u;
	int got, ret = -1;

	for (old_ns = 20 * TICK_NS; ; old_ns *= 2) {
		new_ns = old_ns + 80 * TICK_NS;
		start = mono_ns();
		for (i = 0; i < 64; i++) {
			ids[i] = 1000 + i;
			ASSERT_EQ(0, dev_add(self->fd, ids[i], old_ns));
		}
		t0 = mono_ns();
		ret = dev_refresh_ids(self->fd, ids, 64, new_ns, 0, NULL, &nf);
		if (mono_ns() - start < old_ns)
			break;
		ASSERT_GT(2 * NSEC_PER_SEC, old_ns)
			TH_LOG("64 adds and a refresh took over %llu ms",
			       (unsigned long long)(old_ns / NSEC_PER_MSEC));
		close(self->fd);
		self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
		ASSERT_LE(0, self->fd);
	}
	ASSERT_EQ(64, ret);
	ASSERT_EQ(0, nf);
	got = drain_until(self->fd, ev, 64, mono_ns() + new_ns + LATE_SLACK_NS);
	ASSERT_EQ(64, got);
	for (i = 0; i < 64; i++) {
		EXPECT_LE(t0 + new_ns, ev[i].deadline_ns);
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
	}
}

TEST_HARNESS_MAIN
